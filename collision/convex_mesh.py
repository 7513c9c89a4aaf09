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
triangle normal. Only a piece beside the triangle (nothing clipped) or a
sphere gets the single GJK / EPA point. Triangles that lie in one plane
(a floor split in two) are merged into one manifold, reduced to four points
(:func:`collision.manifold.reduce_contacts`).

The mesh is a surface: a triangle pushes the piece out on the side the piece
is on; whether the piece is inside a closed mesh is not asked.

Convention as in :mod:`collision.narrow_phase`: A is the convex shape, B the
mesh; normals from A to B, ``depths > 0`` penetration,
``points_a - points_b = depths * normal``.
"""

import numpy as np

from .epa import convex_penetration
from .manifold import Manifold, reduce_contacts
from .shapes import Capsule, Hull, TriMesh, local_box
from .tree_box_query import triangles_near_box

__all__ = ["collide_convex_trimesh"]

_IDENTITY = np.eye(4)


def _clip_polygon(poly, normal, offset):
    """Sutherland-Hodgman step (RTCD 8.3.4): the part of ``poly (m, 3)`` with ``normal . x <= offset``."""
    out = []
    m = len(poly)
    for k in range(m):
        p, q = poly[k], poly[(k + 1) % m]
        dp, dq = float(normal @ p) - offset, float(normal @ q) - offset
        if dp <= 0.0:
            out.append(p)
        if (dp < 0.0 < dq) or (dq < 0.0 < dp):
            out.append(p + (dp / (dp - dq)) * (q - p))
    return np.array(out).reshape(-1, 3)


def _clip_to_prism(poly, tri, up):
    """``poly`` clipped to the infinite prism over triangle ``tri (3, 3)`` (side planes facing out)."""
    centre = tri.mean(0)
    for k in range(3):
        e0, e1 = tri[k], tri[(k + 1) % 3]
        side = np.cross(e1 - e0, up)
        if float(side @ (centre - e0)) > 0.0:
            side = -side
        poly = _clip_polygon(poly, side, float(side @ e0))
        if not len(poly):
            break
    return poly


def _supporting_feature(shape, pose, direction):
    """The world core points of the piece's feature furthest along ``direction``: a hull's
    face polygon, a capsule's segment, a sphere's centre."""
    r, t = pose[:3, :3], pose[:3, 3]
    if isinstance(shape, Hull):
        poly = shape.poly
        f = int(np.argmax((poly.normals @ r.T) @ direction))
        return poly.vertices[poly.polygons[f]] @ r.T + t
    return shape.core @ r.T + t


def _triangle_contact(shape, pose_a, centre, tri, face, margin):
    """Contact points of the piece (its box centre ``centre``, world) with one world triangle,
    as ``(normal, points_a, points_b, depths, ids, kind)``, or None.

    The face patch comes first: the piece's supporting feature, clipped to the
    triangle's prism, measured along the normal of the triangle's side the piece
    is on. Only when that finds nothing (the piece beside the triangle, or a
    sphere) does GJK / EPA give one point. Preferring the face keeps the shared
    edges of a tessellated floor from producing sideways "ghost" normals.
    """
    nt = np.cross(tri[1] - tri[0], tri[2] - tri[0])
    length = float(np.linalg.norm(nt))
    if length > 0.0:
        nt = nt / length
        if float(nt @ (centre - tri[0])) < 0.0:
            nt = -nt  # the triangle's side that faces the piece
        n = -nt  # from the piece into the triangle
        feature = _supporting_feature(shape, pose_a, n)
        if len(feature) == 2:  # a capsule's segment
            feature = _clip_segment(feature, tri, nt)
        else:
            feature = _clip_to_prism(feature, tri, nt)
        if len(feature):
            height = (feature - tri[0]) @ nt  # above the triangle's plane, on the piece's side
            depths = shape.radius - height
            keep = depths >= -margin
            if np.any(keep):
                feature, height, depths = feature[keep], height[keep], depths[keep]
                if len(depths) > 4:
                    keep = reduce_contacts(feature, depths, n)
                    feature, height, depths = feature[keep], height[keep], depths[keep]
                points_a = feature + shape.radius * n
                points_b = feature - height[:, None] * nt
                ids = 1024 * face + 1 + np.arange(len(depths))
                return n, points_a, points_b, depths, ids, "face_b"
    res = convex_penetration(shape.core, pose_a, tri, _IDENTITY, shape.radius, 0.0)
    if res.depth < -margin:
        return None
    return (res.normal, res.point_a[None], res.point_b[None], np.array([res.depth]),
            np.array([1024 * face], np.int64), "point")


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


def _clip_segment(seg, tri, up):
    """The part of segment ``seg (2, 3)`` inside the prism over ``tri``: (2, 3) or (0, 3)."""
    t0, t1 = 0.0, 1.0
    d = seg[1] - seg[0]
    centre = tri.mean(0)
    for k in range(3):
        e0, e1 = tri[k], tri[(k + 1) % 3]
        side = np.cross(e1 - e0, up)
        if float(side @ (centre - e0)) > 0.0:
            side = -side
        s0 = float(side @ (seg[0] - e0))
        ds = float(side @ d)
        if ds == 0.0:
            if s0 > 0.0:
                return np.zeros((0, 3))
            continue
        th = -s0 / ds
        if ds > 0.0:
            t1 = min(t1, th)
        else:
            t0 = max(t0, th)
        if t0 > t1:
            return np.zeros((0, 3))
    return seg[0] + np.outer([t0, t1], d)


def collide_convex_trimesh(shape, pose_a, mesh, pose_b, margin=0.0):
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
        One manifold per triangle (its face index as key), or per plane of
        coplanar triangles (the smallest face index as key), at most four
        points each; point ids are ``1024 * face + k``.
    """
    if not isinstance(mesh, TriMesh):
        raise ValueError(f"mesh: expected a TriMesh, got {type(mesh).__name__}")
    tree = mesh.tree
    c, axes, half = local_box(shape)
    r = pose_a[:3, :3]
    faces = triangles_near_box(tree, pose_b, r @ c + pose_a[:3, 3], axes @ r.T, half + margin)
    if not len(faces):
        return []
    tris = tree.vertices[tree.faces[faces]] @ pose_b[:3, :3].T + pose_b[:3, 3]
    scale = float(np.max(half)) + margin
    centre = r @ c + pose_a[:3, 3]
    tol = 1e-9 * max(1.0, scale)
    groups = {}
    points = []
    for face, tri in zip(faces.tolist(), tris):
        hit = _triangle_contact(shape, pose_a, centre, tri, face, margin)
        if hit is None:
            continue
        if hit[5] != "face_b":
            points.append((face, hit))
            continue
        n = hit[0]
        plane = float(n @ tri[0])  # face patches: n is the triangle's normal
        for key, g in groups.items():  # coplanar face patches share a manifold
            if float(n @ g["normal"]) > 1.0 - 1e-9 and abs(plane - g["plane"]) <= tol:
                g["parts"].append(hit)
                break
        else:
            groups[face] = {"normal": n, "plane": plane, "parts": [hit]}
    # Edge and vertex points: one whose triangle point lies in the plane of a face patch is that
    # patch's own edge seen from a neighbour (an internal edge of a tessellated surface); one that
    # repeats another (the shared edge seen from both sides) is kept once.
    kept = []
    for face, hit in points:
        pb, n = hit[2][0], hit[0]
        if any(abs(float(g["normal"] @ pb) - g["plane"]) <= 1e3 * tol for g in groups.values()):
            continue
        if any(np.linalg.norm(pb - h[2][0]) <= 1e3 * tol and float(n @ h[0]) > 1.0 - 1e-6 for _, h in kept):
            continue
        kept.append((face, hit))
    for face, hit in kept:
        groups[face] = {"normal": hit[0], "plane": None, "parts": [hit]}
    out = []
    for key, g in groups.items():
        parts = g["parts"]
        n = g["normal"]
        pa = np.concatenate([p[1] for p in parts])
        pb = np.concatenate([p[2] for p in parts])
        dep = np.concatenate([p[3] for p in parts])
        ids = np.concatenate([p[4] for p in parts])
        if len(dep) > 1:
            corners = _patch_corners(pb, n, 1e-9 * max(1.0, scale)) if g["plane"] is not None else \
                np.arange(len(dep))
            keep = corners[reduce_contacts(pb[corners], dep[corners], n)]
        else:
            keep = np.zeros(1, np.int64)
        out.append((key, Manifold(n, pa[keep], pb[keep], dep[keep], ids[keep], parts[0][5], len(parts),
                                  float(dep.max()))))
    return out
