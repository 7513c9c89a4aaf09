"""Contacts of a convex shape against a triangle mesh (a static concave body).

A convex piece resting in a bowl, on a terrain or in a room touches a few
triangles of a mesh that has no convex decomposition worth making. The mesh's
OBB tree finds the triangles within the contact margin of the piece's box
(:func:`collision.tree_box_query.triangles_near_box`); each is then a convex
shape of its own (three core points), for which GJK / EPA give a normal, a
depth and the deepest points (:func:`collision.epa.convex_penetration`).

A single point per triangle would let a box rock on a flat floor, and the
shared edges of a tessellated floor would give it sideways "ghost" normals.
So the face contact comes first: the piece's face that supports it against
the triangle's normal (a hull) or its segment (a capsule) is clipped to the
triangle's prism (Sutherland-Hodgman, RTCD 8.3.4) and every clipped point
below the triangle's plane (plus margin) is a contact, measured along the
triangle normal. Only a piece beside the triangle (nothing clipped) gets the
single GJK / EPA point. Contacts whose normals agree within ``SMOOTH_COS``
(a floor split in two, the bottom of a finely tessellated bowl) are merged
into one manifold: the outline of their points, reduced to four
(:func:`collision.contact_reduce.reduce_contacts`). The per-triangle work is one
compiled kernel.

The mesh is a surface: a triangle pushes the piece out on the side the piece
is on; whether the piece is inside a closed mesh is not asked.

Convention as in :mod:`collision.narrow_phase`: A is the convex shape, B the
mesh; normals from A to B, ``depths > 0`` penetration,
``points_a - points_b = depths * normal``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from . import _vec as v
from ._jit import njit
from .contact_reduce import _reduce, reduce_contacts
from .epa import EPA_MAX_ITERATIONS, _penetration_query
from .gjk import GJK_MAX_ITERATIONS
from .hull_data import HullData
from .manifold import Manifold
from ._validate import MAX_COORD, as_number, check_type
from .shapes import Capsule, Hull, Sphere, TriMesh, local_box
from .transform import checked_pose
from .tree_box_query import triangles_near_box

__all__ = ["collide_convex_trimesh"]

# Face patches whose normals are this close (cosine) are one manifold: about 11 degrees.
SMOOTH_COS = 0.98
_NO_NORMALS = np.zeros((0, 3))
_NO_LOOPS = np.zeros(1, np.int64)
_CLIP_CAP = 96  # polygon buffer of the clipper: a hull face of up to 90 corners, clipped by 3 planes


@njit
def _clip_buffer(src, n, dst, nx, ny, nz, off):
    """Sutherland-Hodgman step (RTCD 8.3.4): ``src[:n]`` clipped to ``n . x <= off`` into ``dst``;
    returns the new count."""
    m = 0
    for k in range(n):
        j = k + 1 if k + 1 < n else 0
        dp = nx * src[k, 0] + ny * src[k, 1] + nz * src[k, 2] - off
        dq = nx * src[j, 0] + ny * src[j, 1] + nz * src[j, 2] - off
        if dp <= 0.0:
            dst[m, 0], dst[m, 1], dst[m, 2] = src[k, 0], src[k, 1], src[k, 2]
            m += 1
        if (dp < 0.0 < dq) or (dq < 0.0 < dp):
            t = dp / (dp - dq)
            for a in range(3):
                dst[m, a] = src[k, a] + t * (src[j, a] - src[k, a])
            m += 1
    return m


@njit
def _side_plane(tri, k, up, inside):
    """Outward side plane of edge ``k`` of ``tri`` (normal ``side``, offset); ``inside`` is a
    point of the triangle (its centroid)."""
    e0 = v.row(tri, k)
    e1 = v.row(tri, (k + 1) % 3)
    side = v.cross(v.sub(e1, e0), up)
    if v.dot(side, v.sub(inside, e0)) > 0.0:
        side = v.scale(side, -1.0)
    return side, v.dot(side, e0)


@njit
def _triangle_patch(shape_kind, core, radius, hull_normals, face_start, face_verts, rot, trans, centre, tri,
                    margin, buf_a, buf_b, out_pa, out_pb, out_depth):
    """The face patch of the piece on one world triangle: up to 4 points written to the outputs;
    returns ``(count, normal)`` (count 0: nothing clipped within the margin, or a flat triangle)."""
    nt = v.cross(v.sub(v.row(tri, 1), v.row(tri, 0)), v.sub(v.row(tri, 2), v.row(tri, 0)))
    length = v.norm(nt)
    if length == 0.0:
        return 0, (0.0, 0.0, 0.0)
    nt = v.scale(nt, 1.0 / length)
    t0 = v.row(tri, 0)
    if v.dot(nt, v.sub(centre, t0)) < 0.0:
        nt = v.scale(nt, -1.0)  # the triangle's side that faces the piece
    n = v.scale(nt, -1.0)  # from the piece into the triangle
    tc = v.scale(v.add(v.add(t0, v.row(tri, 1)), v.row(tri, 2)), 1.0 / 3.0)  # orients the side planes
    # the piece's feature furthest along n, in world coordinates
    if shape_kind == 2:  # hull: the face whose normal is most along n
        best, f = -2.0, 0
        for i in range(hull_normals.shape[0]):
            d = v.dot(_rotate(rot, v.row(hull_normals, i)), n)
            if d > best:
                best, f = d, i
        cnt = 0
        for k in range(face_start[f], face_start[f + 1]):
            if cnt >= _CLIP_CAP // 2:
                break
            p = v.add(_rotate(rot, v.row(core, face_verts[k])), trans)
            v.store(buf_a, cnt, p)
            cnt += 1
    else:
        cnt = core.shape[0]
        for k in range(cnt):
            v.store(buf_a, k, v.add(_rotate(rot, v.row(core, k)), trans))
    if cnt == 2:  # a segment: clip its parameter range
        s0, s1 = 0.0, 1.0
        p0, d = v.row(buf_a, 0), v.sub(v.row(buf_a, 1), v.row(buf_a, 0))
        for k in range(3):
            side, off = _side_plane(tri, k, nt, tc)
            a0 = v.dot(side, p0) - off
            ds = v.dot(side, d)
            if ds == 0.0:
                if a0 > 0.0:
                    return 0, n
                continue
            th = -a0 / ds
            if ds > 0.0:
                s1 = min(s1, th)
            else:
                s0 = max(s0, th)
            if s0 > s1:
                return 0, n
        v.store(buf_b, 0, v.madd(p0, d, s0))
        v.store(buf_b, 1, v.madd(p0, d, s1))
        src = buf_b
    else:
        src, dst = buf_a, buf_b
        for k in range(3):
            side, off = _side_plane(tri, k, nt, tc)
            cnt = _clip_buffer(src, cnt, dst, side[0], side[1], side[2], off)
            src, dst = dst, src
            if cnt == 0:
                return 0, n
    # points below the triangle's plane within the margin
    m = 0
    depth = np.empty(cnt)
    keep = np.empty(cnt, np.int64)
    for k in range(cnt):
        h = v.dot(v.sub(v.row(src, k), t0), nt)
        d = radius - h
        if d >= -margin:
            depth[m] = d
            keep[m] = k
            m += 1
    if m == 0:
        return 0, n
    pts = np.empty((m, 3))
    for i in range(m):
        v.store(pts, i, v.row(src, keep[i]))
    sel = np.empty(m, np.int64)
    r = _reduce(n, pts, depth[:m], m, 1e-18, sel) if m > 4 else m
    for i in range(r):
        j = sel[i] if m > 4 else i
        p = v.row(pts, j)
        h = radius - depth[j]
        v.store(out_pa, i, v.madd(p, n, radius))
        v.store(out_pb, i, v.madd(p, nt, -h))
        out_depth[i] = depth[j]
    return r, n


@njit(inline="always")
def _rotate(rot, p):
    return (rot[0, 0] * p[0] + rot[0, 1] * p[1] + rot[0, 2] * p[2],
            rot[1, 0] * p[0] + rot[1, 1] * p[1] + rot[1, 2] * p[2],
            rot[2, 0] * p[0] + rot[2, 1] * p[1] + rot[2, 2] * p[2])


@njit
def _convex_trimesh_kernel(shape_kind, core, radius, hull_normals, face_start, face_verts, pose_a, centre, tris,
                           margin, count, normal, pa, pb, depth, kind):
    """Every candidate triangle against the piece: its face patch, else one GJK / EPA point.

    Writes per triangle ``count`` (0-4), ``normal``, ``pa``, ``pb`` (4, 3), ``depth`` (4,),
    ``kind`` (1 face patch, 2 single point, 0 none).
    """
    rot = pose_a[:3, :3]
    trans = (pose_a[0, 3], pose_a[1, 3], pose_a[2, 3])
    c = (centre[0], centre[1], centre[2])
    buf_a = np.empty((_CLIP_CAP, 3))
    buf_b = np.empty((_CLIP_CAP, 3))
    eye = np.eye(4)
    no_simplex = np.zeros((0, 2), np.int32)
    for i in range(tris.shape[0]):
        tri = tris[i]
        cnt, n = _triangle_patch(shape_kind, core, radius, hull_normals, face_start, face_verts, rot, trans, c,
                                 tri, margin, buf_a, buf_b, pa[i], pb[i], depth[i])
        if cnt > 0:
            count[i] = cnt
            kind[i] = 1
            v.store(normal, i, n)
            continue
        d, nw, pts, _, _ = _penetration_query(core, pose_a, tri, eye, radius, 0.0, no_simplex,
                                              GJK_MAX_ITERATIONS, EPA_MAX_ITERATIONS)
        if d < -margin:
            count[i] = 0
            kind[i] = 0
            continue
        count[i] = 1
        kind[i] = 2
        v.store(normal, i, (nw[0], nw[1], nw[2]))
        v.store(pa[i], 0, v.row(pts, 0))
        v.store(pb[i], 0, v.row(pts, 1))
        depth[i, 0] = d


def _patch_corners(points, normal, tol):
    """Indices of the corners of the convex polygon spanned by coplanar contact points
    (Andrew's monotone chain in the plane; points on an edge or inside are dropped).

    Clipping one face against many small triangles leaves points all along the
    patch's edges; the depth is linear over a planar patch, so its corners hold
    the deepest point and the outline, and the four-point reduction picks among
    them only.
    """
    if len(points) <= 2:
        return np.arange(len(points))
    u = np.cross(normal, [1.0, 0.0, 0.0] if abs(normal[0]) < 0.9 else [0.0, 1.0, 0.0])
    u /= np.linalg.norm(u)
    w = np.cross(normal, u)
    q = np.stack([points @ u, points @ w], axis=1)
    order = np.lexsort((q[:, 1], q[:, 0]))

    def chain(idx):
        out = []
        for i in idx:
            while len(out) >= 2:
                a, b = q[out[-2]], q[out[-1]]
                if (b[0] - a[0]) * (q[i, 1] - a[1]) - (b[1] - a[1]) * (q[i, 0] - a[0]) > tol * tol:
                    break
                out.pop()
            out.append(i)
        return out

    lower, upper = chain(order), chain(order[::-1])
    corners = lower[:-1] + upper[:-1]
    return np.asarray(corners if corners else order[:1], np.int64)


def collide_convex_trimesh(shape: Sphere | Capsule | Hull, pose_a: NDArray[np.float64], mesh: TriMesh,
                          pose_b: NDArray[np.float64], margin: float = 0.0) -> list[tuple[int, Manifold]]:
    """Contact manifolds of a convex shape against a triangle mesh.

    Parameters
    ----------
    shape : Sphere, Capsule or Hull
        Model frame of A.
    pose_a : (4, 4) float64
    mesh : TriMesh
        Model frame of B.
    pose_b : (4, 4) float64
    margin : float
        Keep speculative points whose gap is at most this.

    Returns
    -------
    list of (int, Manifold)
        One manifold per set of contacts whose normals agree within
        ``SMOOTH_COS`` (a plane of coplanar triangles, or a gently curved
        region); the smallest face index is its key. At most four points each; point ids are
        ``1024 * face + k``.
    """
    check_type(shape, "shape", Sphere, Capsule, Hull)
    check_type(mesh, "mesh", TriMesh)
    pose_a = checked_pose(pose_a, "pose_a")
    pose_b = checked_pose(pose_b, "pose_b")
    margin = as_number(margin, "margin", low=0.0, high=MAX_COORD)
    tree = mesh.tree
    c, axes, half = local_box(shape)
    r = pose_a[:3, :3]
    centre = r @ c + pose_a[:3, 3]
    faces = triangles_near_box(tree, pose_b, centre, axes @ r.T, half + margin)
    if not len(faces):
        return []
    tris = np.ascontiguousarray(tree.vertices[tree.faces[faces]] @ pose_b[:3, :3].T + pose_b[:3, 3])
    k = len(faces)
    count = np.zeros(k, np.int64)
    kind = np.zeros(k, np.int64)
    normal = np.zeros((k, 3))
    pa = np.zeros((k, 4, 3))
    pb = np.zeros((k, 4, 3))
    depth = np.zeros((k, 4))
    if isinstance(shape, Hull):
        h = HullData.from_polyhedron(shape.poly)
        args = (2, h.vertices, 0.0, h.normals, h.face_start, h.face_verts)
    else:
        args = (0 if isinstance(shape, Sphere) else 1, shape.core, float(shape.radius), _NO_NORMALS, _NO_LOOPS,
                _NO_LOOPS)
    _convex_trimesh_kernel(*args, np.ascontiguousarray(pose_a, dtype=np.float64), centre, tris, float(margin),
                           count, normal, pa, pb, depth, kind)
    scale = float(np.max(half)) + margin
    tol = 1e-9 * max(1.0, scale)
    patches = np.flatnonzero(kind == 1)
    planes = [(normal[i], float(normal[i] @ tris[i, 0])) for i in patches]
    # Edge and vertex points: one whose triangle point lies in the plane of a face patch is that
    # patch's own edge seen from a neighbour (an internal edge of a tessellated surface); one that
    # repeats another (the shared edge seen from both sides) is kept once.
    singles = []
    for i in np.flatnonzero(kind == 2):
        q, n = pb[i, 0], normal[i]
        if any(abs(float(nn @ q) - off) <= 1e3 * tol for nn, off in planes):
            continue
        if any(np.linalg.norm(q - pb[j, 0]) <= 1e3 * tol and float(n @ normal[j]) > 1.0 - 1e-6 for j in singles):
            continue
        singles.append(i)
    # Contacts whose normals agree within SMOOTH_COS share a manifold (the deepest one's normal,
    # depths measured along it), face patches first: a piece in a finely tessellated bowl gets one
    # manifold of at most four points, not one per triangle.
    clusters = []
    for group in (patches, np.asarray(singles, np.int64)):
        for i in group[np.argsort(-depth[group, 0], kind="stable")]:
            for cl in clusters:
                if float(normal[i] @ normal[cl[0]]) >= SMOOTH_COS:
                    cl.append(i)
                    break
            else:
                clusters.append([i])
    out = []
    for members in clusters:
        n = normal[members[0]]
        sel = [(i, j) for i in members for j in range(count[i])]
        qa = np.array([pa[i, j] for i, j in sel])
        qb = np.array([pb[i, j] for i, j in sel])
        dep = (qa - qb) @ n if len(members) > 1 else np.array([depth[i, j] for i, j in sel])
        ids = np.array([1024 * int(faces[i]) + (1 + j if kind[i] == 1 else 0) for i, j in sel], np.int64)
        if len(dep) > 1:
            corners = _patch_corners(qb, n, tol) if all(kind[i] == 1 for i in members) else np.arange(len(dep))
            keep = corners[reduce_contacts(qb[corners], dep[corners], n)]
        else:
            keep = np.zeros(1, np.int64)
        key = int(min(faces[i] for i in members))
        out.append((key, Manifold(n, qa[keep], qb[keep], dep[keep], ids[keep],
                                  "face_b" if kind[members[0]] == 1 else "point", len(members), float(dep.max()))))
    return out
