"""How deep the visible surfaces of a scene's bodies sink into each other, measured without the contact code.

A person sees a body's mesh (``body.vertices`` / ``body.faces`` under
``body.pose``) and a ground plane; the collision shapes (convex pieces, exact
spheres, a half-space) are only the engine's idea of them. This module
measures the overlap of what is seen with its own geometry: nothing of
``collision`` or ``app`` but the body's arrays, and its ``HalfSpace`` shape
to recognise a ground.

- The **depth of a point in a closed mesh** B: the distance from the point
  to B's surface when the point is inside B, else minus that distance. The
  distance is the exact point-triangle distance to B's nearest triangle
  (foot in the triangle's plane, else the nearest edge), found in a uniform
  grid of B's triangles, searched in growing shells until no unsearched cell
  can hold a nearer one: the same minimum as over every triangle. The side
  comes from the nearest feature's pseudonormal (Baerentzen and Aanaes 2005:
  the face normal, the sum of an edge's two face normals, the
  angle-weighted sum at a corner), or where that is undecided from the
  generalized winding number (van Oosterom and Strackee's solid angles of
  all of B's triangles, inside above 1/2). Brute-force versions of both
  (every triangle; the winding number for every point) are here too, and
  the tests hold them equal. The depth is 1-Lipschitz in the point.
- The **depth of mesh A in B**: the largest depth in B of a point of A's
  surface (not only of its vertices: a face or an edge of A can poke into B
  with every vertex of A outside), by branch and bound over A's triangles.
  A triangle with centroid c and radius R about c holds no point deeper than
  depth(c) + R (Lipschitz), nor farther from the triangle of B nearest to c
  than its farthest corner is (the distance to a triangle is convex; the
  depth of a point is at most its distance to any triangle of B): the
  second bound is tight on a flat contact, where the first never is.
  Triangles whose bound exceeds the best depth found by more than ``tol``
  (0.1 mm, or 1% of a depth past 1 cm) are cut into four at their edge
  midpoints and searched again, the rest are dropped, so the answer ``d``
  and the exact largest depth ``D`` satisfy ``d <= D <= d + tol``; ``d`` is
  the depth of a point of A's surface (returned with it).
- The **depth of a mesh below a ground** (the half-space ``n . x <= o`` of a
  plane body): the largest ``o - n . v`` over its vertices (exact: the depth
  is linear on each triangle). The plane's own points inside the mesh are
  never deeper than that (going down from one, the mesh's surface is crossed
  within that depth), so it is the pair's depth.
- The **interpenetration of a pair**: the larger of the depth of A in B and
  of B in A (0 when they only touch or are apart), over the pairs whose
  world AABBs come within 1 mm (a body and a ground: when the body reaches
  within 1 mm of its plane).

Open meshes (edges not shared by exactly two faces with opposite directions)
have no inside: a point's depth in one is undefined, so
:func:`depth_in_mesh` refuses one as B with ``ValueError``. An open mesh as A
(the searched surface) is fine; a pair of two open meshes cannot be measured
and :func:`interpenetration` raises. Plane bodies (a ``HalfSpace`` shape)
are measured as their half-space, the ground a person sees them as (the quad
drawn is only a picture of it). The example scenes have no other open mesh.
"""

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from obbcollide.shapes import HalfSpace

__all__ = ["Solid", "point_triangle_distances", "winding_numbers", "signed_depths", "depth_in_mesh",
           "PairDepth", "interpenetration", "scene_interpenetration"]

MAX_TRIANGLES = 4_000_000  # the search refuses to grow past this (a tolerance too fine for the contact)


# ----------------------------------------------------------------- point kernels


@njit(cache=True, inline="always")
def _segment_distance2(px, py, pz, ax, ay, az, bx, by, bz):
    """Squared distance from p to the segment ab, and the parameter t in [0, 1] of the nearest point."""
    ux, uy, uz = bx - ax, by - ay, bz - az
    den = ux * ux + uy * uy + uz * uz
    t = 0.0
    if den > 0.0:
        t = min(1.0, max(0.0, ((px - ax) * ux + (py - ay) * uy + (pz - az) * uz) / den))
    dx, dy, dz = ax + t * ux - px, ay + t * uy - py, az + t * uz - pz
    return dx * dx + dy * dy + dz * dz, t


@njit(cache=True)
def _triangle_query(p, tri):
    """Squared distance from the point p (3,) to the triangle tri (3, 3), and its nearest feature.

    The distance is to the triangle's plane when the foot of p lies strictly
    inside the triangle (all three barycentric coordinates > 1e-9), else to
    the nearest of its three edges (a foot on the boundary gives the same
    distance either way).

    Returns
    -------
    d2 : float
    kind : int
        0: the face's interior, 1: the inside of edge ``k`` (corners k, k + 1),
        2: corner ``k``.
    k : int
    t : float
        Along edge ``k`` (kind 1).
    s : float
        Kind 0: positive when p is in front of the face (its normal by the
        corners' order points at p), negative behind.
    """
    ax, ay, az = tri[0, 0], tri[0, 1], tri[0, 2]
    bx, by, bz = tri[1, 0], tri[1, 1], tri[1, 2]
    cx, cy, cz = tri[2, 0], tri[2, 1], tri[2, 2]
    px, py, pz = p[0], p[1], p[2]
    ux, uy, uz = bx - ax, by - ay, bz - az
    vx, vy, vz = cx - ax, cy - ay, cz - az
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    nn = nx * nx + ny * ny + nz * nz
    if nn > 0.0:
        wx, wy, wz = px - ax, py - ay, pz - az
        s = (wx * nx + wy * ny + wz * nz) / nn  # signed plane distance / |n|
        qx, qy, qz = wx - s * nx, wy - s * ny, wz - s * nz  # the foot, relative to a
        # barycentric coordinates of the foot: sub-triangle areas along n, over the whole
        beta = ((qy * vz - qz * vy) * nx + (qz * vx - qx * vz) * ny + (qx * vy - qy * vx) * nz) / nn
        gamma = ((uy * qz - uz * qy) * nx + (uz * qx - ux * qz) * ny + (ux * qy - uy * qx) * nz) / nn
        if beta > 1e-9 and gamma > 1e-9 and beta + gamma < 1.0 - 1e-9:
            return s * s * nn, 0, 0, 0.0, s
    best, t = _segment_distance2(px, py, pz, ax, ay, az, bx, by, bz)
    k = 0
    d, u = _segment_distance2(px, py, pz, bx, by, bz, cx, cy, cz)
    if d < best:
        best, k, t = d, 1, u
    d, u = _segment_distance2(px, py, pz, cx, cy, cz, ax, ay, az)
    if d < best:
        best, k, t = d, 2, u
    if t <= 0.0:
        return best, 2, k, 0.0, 0.0
    if t >= 1.0:
        return best, 2, (k + 1) % 3, 0.0, 0.0
    return best, 1, k, t, 0.0


@njit(cache=True, parallel=True)
def _distances(points, tris):
    out = np.empty(points.shape[0])
    for i in prange(points.shape[0]):
        best = np.inf
        for t in range(tris.shape[0]):
            best = min(best, _triangle_query(points[i], tris[t])[0])
        out[i] = np.sqrt(best)
    return out


@njit(cache=True, parallel=True)
def _windings(points, tris):
    out = np.empty(points.shape[0])
    for i in prange(points.shape[0]):
        px, py, pz = points[i, 0], points[i, 1], points[i, 2]
        total = 0.0
        for t in range(tris.shape[0]):
            ax, ay, az = tris[t, 0, 0] - px, tris[t, 0, 1] - py, tris[t, 0, 2] - pz
            bx, by, bz = tris[t, 1, 0] - px, tris[t, 1, 1] - py, tris[t, 1, 2] - pz
            cx, cy, cz = tris[t, 2, 0] - px, tris[t, 2, 1] - py, tris[t, 2, 2] - pz
            la = np.sqrt(ax * ax + ay * ay + az * az)
            lb = np.sqrt(bx * bx + by * by + bz * bz)
            lc = np.sqrt(cx * cx + cy * cy + cz * cz)
            num = ax * (by * cz - bz * cy) + ay * (bz * cx - bx * cz) + az * (bx * cy - by * cx)
            den = (la * lb * lc + (ax * bx + ay * by + az * bz) * lc + (bx * cx + by * cy + bz * cz) * la
                   + (cx * ax + cy * ay + cz * az) * lb)
            total += 2.0 * np.arctan2(num, den)
        out[i] = total / (4.0 * np.pi)
    return out


@njit(cache=True)
def _grid_fill(cell_lo, cell_hi, dims, counts_only, start, items):
    """Cells of every triangle (the cells its AABB overlaps): counts per cell, or the CSR lists."""
    fill = start[:-1].copy()
    for t in range(cell_lo.shape[0]):
        for i in range(cell_lo[t, 0], cell_hi[t, 0] + 1):
            for j in range(cell_lo[t, 1], cell_hi[t, 1] + 1):
                for k in range(cell_lo[t, 2], cell_hi[t, 2] + 1):
                    c = (i * dims[1] + j) * dims[2] + k
                    if counts_only:
                        start[c + 1] += 1
                    else:
                        items[fill[c]] = t
                        fill[c] += 1


@njit(cache=True, parallel=True)
def _grid_signed(points, tris, faces, vertex_normals, edge_normals, lo, h, dims, start, items):
    """Distance from each point to the nearest triangle and the side of the surface it is on.

    The grid's cells are searched in growing shells around the point's cell
    until no unsearched cell can hold a nearer triangle. The side is +1
    inside, -1 outside, 0 unknown (the point on the surface, or a zero dot
    product), from the nearest feature: the face's normal, an edge's or a
    corner's pseudonormal (Baerentzen and Aanaes, "Signed distance computation
    using the angle weighted pseudonormal", 2005: for a closed 2-manifold,
    ``(p - q) . n`` has the sign of the side for the nearest point q with n
    the face normal, the sum of the two faces' normals at an edge, or the
    angle-weighted sum of the normals at a corner).
    """
    n = points.shape[0]
    dist = np.empty(n)
    sides = np.zeros(n, dtype=np.int8)
    nearest = np.empty(n, dtype=np.int64)
    for q in prange(n):
        p = points[q]
        ci = np.empty(3, dtype=np.int64)
        for a in range(3):
            ci[a] = min(dims[a] - 1, max(0, int(np.floor((p[a] - lo[a]) / h))))
        best, tri, kind, k, t, s = np.inf, -1, 0, 0, 0.0, 0.0
        shell = 0
        while True:
            i0, i1 = max(0, ci[0] - shell), min(dims[0] - 1, ci[0] + shell)
            j0, j1 = max(0, ci[1] - shell), min(dims[1] - 1, ci[1] + shell)
            k0, k1 = max(0, ci[2] - shell), min(dims[2] - 1, ci[2] + shell)
            for i in range(i0, i1 + 1):
                for j in range(j0, j1 + 1):
                    for m in range(k0, k1 + 1):
                        if max(abs(i - ci[0]), abs(j - ci[1]), abs(m - ci[2])) != shell:
                            continue  # searched in an earlier shell
                        c = (i * dims[1] + j) * dims[2] + m
                        for e in range(start[c], start[c + 1]):
                            d2, kd, kk, tt, ss = _triangle_query(p, tris[items[e]])
                            if d2 < best:
                                best, tri, kind, k, t, s = d2, items[e], kd, kk, tt, ss
            # how far the point is from the unsearched cells (the grid's outside holds none)
            margin = np.inf
            box = (i0, i1, j0, j1, k0, k1)
            for a in range(3):
                low, high = box[2 * a], box[2 * a + 1]
                if low > 0:
                    margin = min(margin, p[a] - (lo[a] + low * h))
                if high < dims[a] - 1:
                    margin = min(margin, lo[a] + (high + 1) * h - p[a])
            if margin == np.inf or best <= margin * margin:
                break
            shell += 1
        dist[q] = np.sqrt(best)
        nearest[q] = tri
        if best > 0.0:
            if kind == 0:
                dot = s
            else:
                if kind == 1:
                    x = tris[tri, k] + t * (tris[tri, (k + 1) % 3] - tris[tri, k])
                    normal = edge_normals[tri, k]
                else:
                    x = tris[tri, k]
                    normal = vertex_normals[faces[tri, k]]
                dot = 0.0
                for a in range(3):
                    dot += (p[a] - x[a]) * normal[a]
            sides[q] = -1 if dot > 0.0 else (1 if dot < 0.0 else 0)
    return dist, sides, nearest


@njit(cache=True, parallel=True)
def _far_corner_distances(tris_a, tris_b, nearest):
    """For each triangle i of A: the largest distance from one of its corners to triangle
    ``nearest[i]`` of B (the distance to a triangle is convex, so this is its largest value
    over the whole triangle i)."""
    out = np.empty(tris_a.shape[0])
    for i in prange(tris_a.shape[0]):
        far = 0.0
        for k in range(3):
            far = max(far, _triangle_query(tris_a[i, k], tris_b[nearest[i]])[0])
        out[i] = np.sqrt(far)
    return out


def _pseudonormals(vertices, faces):
    """Angle-weighted corner normals (v, 3) and edge normals (m, 3, 3) (the sum of the unit
    normals of the two faces at edge k of face i: corners k, k + 1) of a closed mesh."""
    tris = vertices[faces]
    n = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    length = np.linalg.norm(n, axis=1)
    unit = np.divide(n, length[:, None], out=np.zeros_like(n), where=length[:, None] > 0)
    corner = np.zeros_like(vertices)
    for k in range(3):
        e1 = tris[:, (k + 1) % 3] - tris[:, k]
        e2 = tris[:, (k + 2) % 3] - tris[:, k]
        angle = np.arctan2(np.linalg.norm(np.cross(e1, e2), axis=1), np.einsum("ij,ij->i", e1, e2))
        np.add.at(corner, faces[:, k], angle[:, None] * unit)
    nv = len(vertices)
    keys = (faces * nv + np.roll(faces, -1, axis=1)).reshape(-1)  # directed edge k of face i at 3 i + k
    order = np.argsort(keys)
    twin_keys = (np.roll(faces, -1, axis=1) * nv + faces).reshape(-1)
    twin = order[np.searchsorted(keys[order], twin_keys)] // 3  # the face across each edge
    edge = unit[:, None, :] + unit[twin].reshape(len(faces), 3, 3)
    return corner, edge


class _Grid:
    """A uniform grid over triangles (t, 3, 3): each cell lists the triangles whose AABB overlaps it."""

    def __init__(self, tris):
        lo, hi = tris.reshape(-1, 3).min(0), tris.reshape(-1, 3).max(0)
        extent = np.maximum(hi - lo, 1e-12)
        # about one triangle per cell of the box (fewer cells along a flat mesh's thin side)
        self.h = max(1.5 * float(np.prod(extent) / max(len(tris), 1)) ** (1 / 3), float(extent.max()) / 256)
        self.lo = lo
        self.dims = np.maximum(1, np.ceil(extent / self.h).astype(np.int64))
        cell_lo = np.clip(np.floor((tris.min(1) - lo) / self.h).astype(np.int64), 0, self.dims - 1)
        cell_hi = np.clip(np.floor((tris.max(1) - lo) / self.h).astype(np.int64), 0, self.dims - 1)
        self.start = np.zeros(int(np.prod(self.dims)) + 1, dtype=np.int64)
        _grid_fill(cell_lo, cell_hi, self.dims, True, self.start, np.zeros(0, np.int64))
        np.cumsum(self.start, out=self.start)
        self.items = np.empty(int(self.start[-1]), dtype=np.int64)
        _grid_fill(cell_lo, cell_hi, self.dims, False, self.start, self.items)

    def signed(self, points, tris, faces, corner_normals, edge_normals):
        """(distances (p,), sides (p,) int8: +1 inside, -1 outside, 0 unknown, nearest triangles (p,))
        of the points to the closed mesh whose triangles the grid was built on (:func:`_grid_signed`)."""
        return _grid_signed(points, tris, faces, corner_normals, edge_normals, self.lo, self.h, self.dims,
                            self.start, self.items)


def point_triangle_distances(points, tris):
    """Distance from each point to the nearest triangle (brute force).

    Parameters
    ----------
    points : (p, 3) float
    tris : (t, 3, 3) float
        Triangles as corner coordinates.

    Returns
    -------
    (p,) float64
    """
    points = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    tris = np.ascontiguousarray(tris, dtype=np.float64).reshape(-1, 3, 3)
    return _distances(points, tris)


def winding_numbers(points, tris):
    """Generalized winding number of each point about the triangles (1 inside a closed outward
    mesh, 0 outside), by van Oosterom and Strackee's solid angle of each triangle.

    Parameters
    ----------
    points : (p, 3) float
    tris : (t, 3, 3) float

    Returns
    -------
    (p,) float64
    """
    points = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    tris = np.ascontiguousarray(tris, dtype=np.float64).reshape(-1, 3, 3)
    return _windings(points, tris)


# ----------------------------------------------------------------- solids


def _closed(faces):
    """Every directed edge once and its reverse once (closed, consistently wound)."""
    f = np.asarray(faces, dtype=np.int64)
    a = f.reshape(-1)
    b = f[:, [1, 2, 0]].reshape(-1)
    if len(f) < 4 or np.any(a == b):
        return False
    n = int(f.max()) + 1
    fwd = np.sort(a * n + b)
    if np.any(fwd[1:] == fwd[:-1]):
        return False
    return bool(np.array_equal(fwd, np.sort(b * n + a)))


@dataclass
class Solid:
    """A body's visible mesh in world coordinates, with what the depth search needs.

    Attributes
    ----------
    name : str
    tris : (t, 3, 3) float64
        World triangles.
    closed : bool
        Closed and consistently wound (has an inside).
    lo, hi : (3,) float64
        World AABB.
    faces : (t, 3) int64
        Corner indices of ``tris`` (outward winding when closed).
    grid : _Grid
        Over ``tris``, for the nearest-triangle search.
    corner_normals, edge_normals : (v, 3), (t, 3, 3) float64 or None
        When closed: the pseudonormals that tell the side of a point (:func:`_pseudonormals`).
    """

    name: str
    tris: np.ndarray
    closed: bool
    lo: np.ndarray
    hi: np.ndarray
    faces: np.ndarray = None
    grid: _Grid = None
    corner_normals: np.ndarray = None
    edge_normals: np.ndarray = None

    @classmethod
    def from_mesh(cls, name, vertices, faces, pose=None):
        """The mesh ``vertices (n, 3)``, ``faces (m, 3)`` placed by ``pose (4, 4)`` (model to world)."""
        v = np.asarray(vertices, dtype=np.float64)
        if pose is not None:
            pose = np.asarray(pose, dtype=np.float64)
            v = v @ pose[:3, :3].T + pose[:3, 3]
        f = np.asarray(faces, dtype=np.int64)
        closed = _closed(f)
        if closed and _signed_volume(v[f]) < 0:
            f = f[:, ::-1]  # inside out: the winding number would be -1
        f = np.ascontiguousarray(f)
        tris = np.ascontiguousarray(v[f])
        s = cls(name, tris, closed, tris.reshape(-1, 3).min(0), tris.reshape(-1, 3).max(0), f, grid=_Grid(tris))
        if closed:
            s.corner_normals, s.edge_normals = _pseudonormals(v, f)
        return s


def _signed_volume(tris):
    return float(np.einsum("ij,ij->i", tris[:, 0], np.cross(tris[:, 1], tris[:, 2])).sum()) / 6.0


def signed_depths(points, solid):
    """Depth of each point in a closed solid: + distance to its surface inside, - distance outside.

    The nearest triangle comes from a grid search (exactly the brute-force
    minimum over all triangles: the search stops only when no unsearched
    cell can hold a nearer one), the side from its pseudonormal, or from the
    winding number where that is zero.

    Parameters
    ----------
    points : (p, 3) float
    solid : Solid
        Closed (else ``ValueError``).

    Returns
    -------
    (p,) float64
    """
    return _signed_depths(points, solid)[0]


def _signed_depths(points, solid):
    """:func:`signed_depths`, and the index of each point's nearest triangle of the solid."""
    if not solid.closed:
        raise ValueError(f"{solid.name}: an open mesh has no inside")
    points = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    d, side, nearest = solid.grid.signed(points, solid.tris, solid.faces, solid.corner_normals,
                                         solid.edge_normals)
    unknown = (side == 0) & (d > 0)  # a zero dot product: ask the winding number
    if unknown.any():
        side[unknown] = np.where(_windings(points[unknown], solid.tris) > 0.5, 1, -1)
    return side * d, nearest


def _box_distances(points, lo, hi):
    return np.linalg.norm(np.maximum(np.maximum(lo - points, points - hi), 0.0), axis=1)


def depth_in_mesh(tris_a, solid_b, tol=1e-4, rel_tol=0.01):
    """Largest depth in the closed solid B of a point of the surface ``tris_a`` (0 if none is inside).

    Branch and bound (module docstring): the answer ``d`` and the exact
    largest depth ``D`` satisfy ``d <= D <= d + max(tol, rel_tol d)`` (and
    ``d = 0`` when nothing of A is deeper than ``tol``).

    Parameters
    ----------
    tris_a : (t, 3, 3) float
        World triangles of A's surface.
    solid_b : Solid
    tol : float
        Metres.
    rel_tol : float
        Of the depth (a deep overlap needs no 0.1 mm precision).

    Returns
    -------
    depth : float
    point : (3,) float64 or None
        Where on A it is reached.
    """
    if not solid_b.closed:
        raise ValueError(f"{solid_b.name}: an open mesh has no inside")
    tris = np.asarray(tris_a, dtype=np.float64).reshape(-1, 3, 3)
    lo, hi = solid_b.lo, solid_b.hi
    keep = np.all(tris.min(1) <= hi, axis=1) & np.all(tris.max(1) >= lo, axis=1)
    tris = tris[keep]
    best, where = 0.0, None
    if len(tris):  # the corners first: a good early best prunes most of the search
        corners = np.unique(tris.reshape(-1, 3), axis=0)
        inside = np.all((corners >= lo) & (corners <= hi), axis=1)
        if inside.any():
            d = signed_depths(corners[inside], solid_b)
            k = int(np.argmax(d))
            if d[k] > best:
                best, where = float(d[k]), corners[inside][k]
    while len(tris):
        if len(tris) > MAX_TRIANGLES:
            raise RuntimeError(f"depth in {solid_b.name}: more than {MAX_TRIANGLES} triangles to search; "
                               f"tol {tol} is too fine")
        c = tris.mean(1)
        r = np.linalg.norm(tris - c[:, None], axis=2).max(1)
        away = _box_distances(c, lo, hi)
        bound = r - away  # c outside B's box: its depth is at most minus its distance to the box
        # the depth of c is needed where c is in B's box (no bound without it), and where the triangle
        # reaches into the box (the Lipschitz bound alone would cut a triangle lying along the box's
        # side down to the tolerance)
        inside = np.flatnonzero((away == 0.0) | (bound > best + max(tol, rel_tol * best)))
        if len(inside):
            d, nearest = _signed_depths(c[inside], solid_b)
            k = int(np.argmax(d))
            if d[k] > best:
                best, where = float(d[k]), c[inside[k]]
            # Lipschitz, and: no deeper than the distance to one triangle of B, whose largest value on
            # a triangle of A is at a corner (tight where one face of B is nearest to all of it)
            far = _far_corner_distances(np.ascontiguousarray(tris[inside]), solid_b.tris, nearest)
            bound[inside] = np.minimum(d + r[inside], far)
        tris = tris[bound > best + max(tol, rel_tol * best)]
        if len(tris):
            a, b, cc = tris[:, 0], tris[:, 1], tris[:, 2]
            ab, bc, ca = (a + b) / 2, (b + cc) / 2, (cc + a) / 2
            tris = np.concatenate([np.stack(t, 1) for t in ((a, ab, ca), (ab, b, bc), (ca, bc, cc), (ab, bc, ca))])
    return best, where


def _ground(body):
    """(normal, offset) in world of a body's half-space shape, or None."""
    for s in getattr(body, "shapes", None) or ():
        if isinstance(s, HalfSpace):
            r, t = body.pose[:3, :3], body.pose[:3, 3]
            n = r @ s.normal
            return n, float(s.offset + n @ t)
    return None


@dataclass
class PairDepth:
    """The interpenetration of two bodies' visible surfaces.

    Attributes
    ----------
    a, b : str
        Body names; ``depth`` is reached by a point of ``a``'s surface in ``b``.
    depth : float
        Metres (0: they only touch or are apart).
    point : (3,) float64 or None
        Where (world), on ``a``'s surface.
    """

    a: str
    b: str
    depth: float
    point: np.ndarray = None


def interpenetration(body_a, body_b, tol=1e-4, solids=None):
    """The :class:`PairDepth` of two bodies (module docstring), the deeper of the two directions.

    ``solids`` (optional dict ``id(body)`` -> :class:`Solid`) caches the bodies' world meshes.
    """
    solids = {} if solids is None else solids
    ga, gb = _ground(body_a), _ground(body_b)
    if ga is not None and gb is not None:
        return PairDepth(body_a.name, body_b.name, 0.0)  # two grounds: not a pair of solids
    if ga is not None or gb is not None:
        body, (n, o) = (body_b, ga) if ga is not None else (body_a, gb)
        s = _solid(body, solids)
        v = s.tris.reshape(-1, 3)
        d = o - v @ n
        k = int(np.argmax(d))
        return PairDepth(body.name, body_a.name if ga is not None else body_b.name, max(0.0, float(d[k])),
                         v[k] if d[k] > 0 else None)
    sa, sb = _solid(body_a, solids), _solid(body_b, solids)
    if not (sa.closed or sb.closed):
        raise ValueError(f"{sa.name}, {sb.name}: two open meshes have no inside to measure")
    best = PairDepth(body_a.name, body_b.name, 0.0)
    for x, y in ((sa, sb), (sb, sa)):
        if y.closed:
            d, p = depth_in_mesh(x.tris, y, tol)
            if d > best.depth:
                best = PairDepth(x.name, y.name, d, p)
    return best


def _solid(body, solids):
    if id(body) not in solids:
        solids[id(body)] = Solid.from_mesh(body.name, body.vertices, body.faces, body.pose)
    return solids[id(body)]


def scene_interpenetration(bodies, tol=1e-4, pad=1e-3):
    """Every pair of ``bodies`` that may touch and its :class:`PairDepth`, deepest first.

    A pair may touch when the world AABBs of the two visible meshes, grown
    by ``pad``, overlap; a body and a ground when the body reaches within
    ``pad`` of the ground's plane. (Pairs that only touch or lie within
    ``pad`` of each other are listed with depth 0: the list shows what rests
    on what.)

    Returns
    -------
    list of PairDepth
    """
    solids = {}
    grounds = [b for b in bodies if _ground(b) is not None]
    meshes = [b for b in bodies if _ground(b) is None]
    out = []
    for g in grounds:
        n, o = _ground(g)
        for b in meshes:
            if (_solid(b, solids).tris.reshape(-1, 3) @ n).min() <= o + pad:
                out.append(interpenetration(b, g, tol, solids))
    for i, a in enumerate(meshes):
        sa = _solid(a, solids)
        for b in meshes[i + 1:]:
            sb = _solid(b, solids)
            if np.all(sa.lo <= sb.hi + pad) and np.all(sb.lo <= sa.hi + pad):
                out.append(interpenetration(a, b, tol, solids))
    return sorted(out, key=lambda p: -p.depth)
