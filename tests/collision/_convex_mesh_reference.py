"""The Python twin of :func:`collision.convex_mesh.collide_convex_trimesh`'s grouping.

The library groups a piece's per-triangle contacts into manifolds in compiled
code. This is the same procedure written with Python lists and numpy (the
implementation the library had before it was compiled), kept for the tests to
compare the two: the candidate triangles from the tree query, the per-triangle
kernel, then the edge-point filter, the clustering by normal, the patch
outline and the four-point reduction.

The outline keeps or drops a point on a straight edge of the patch by the sign
of a cross product that is zero up to rounding, so both sides do their
products as the compiled code does, one multiplication and one addition at a
time in the same order (:func:`_dot`): numpy's matrix products may fuse them
(BLAS), which rounds differently and may pick another point of the same edge.
"""

import math

import numpy as np

from obbcollide.contact_reduce import reduce_contacts
from obbcollide.convex_mesh import SMOOTH_COS, _convex_trimesh_kernel
from obbcollide.hull_data import HullData
from obbcollide.manifold import Manifold
from obbcollide.shapes import Hull, Sphere, local_box
from obbcollide.tree_box_query import triangles_near_box

_NO_NORMALS = np.zeros((0, 3))
_NO_LOOPS = np.zeros(1, np.int64)


def _dot(a, b):
    """``a @ b`` over the last axis of length 3, as ``a0 b0 + a1 b1 + a2 b2`` in that order."""
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def _rotated(points, rot, t):
    """``points @ rot.T + t``, one product at a time."""
    return np.stack([_dot(points, rot[c]) + t[c] for c in range(3)], axis=-1)


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
    u = u * (1.0 / math.sqrt(_dot(u, u)))
    w = np.cross(normal, u)
    q = np.stack([_dot(points, u), _dot(points, w)], axis=1)
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


def collide_convex_trimesh_py(shape, pose_a, mesh, pose_b, margin=0.0):
    """As :func:`collision.convex_mesh.collide_convex_trimesh`, grouped in Python (poses (4, 4) float64)."""
    tree = mesh.tree
    c, axes, half = local_box(shape)
    r = pose_a[:3, :3]
    centre = _rotated(c, r, pose_a[:3, 3])
    faces = triangles_near_box(tree, pose_b, centre, _rotated(axes, r, np.zeros(3)), half + margin)
    if not len(faces):
        return []
    tris = np.ascontiguousarray(_rotated(tree.vertices[tree.faces[faces]], pose_b[:3, :3], pose_b[:3, 3]))
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
    scale = float(np.max(half)) + margin
    tol = 1e-9 * max(1.0, scale)
    # near = -1: every triangle without a face patch gets its GJK / EPA point (the library skips
    # those whose point the filter below would drop; equal results are what the tests check)
    _convex_trimesh_kernel(*args, np.ascontiguousarray(pose_a, dtype=np.float64), centre, tris, float(margin),
                           -1.0, count, normal, pa, pb, depth, kind)
    patches = np.flatnonzero(kind == 1)
    planes = [(normal[i], float(_dot(normal[i], tris[i, 0]))) for i in patches]
    # Edge and vertex points: one whose triangle point lies in the plane of a face patch is that
    # patch's own edge seen from a neighbour (an internal edge of a tessellated surface); one that
    # repeats another (the shared edge seen from both sides) is kept once.
    singles = []
    for i in np.flatnonzero(kind == 2):
        q, n = pb[i, 0], normal[i]
        if any(abs(float(_dot(nn, q)) - off) <= 1e3 * tol for nn, off in planes):
            continue
        if any(math.sqrt(_dot(q - pb[j, 0], q - pb[j, 0])) <= 1e3 * tol and float(_dot(n, normal[j])) > 1.0 - 1e-6
               for j in singles):
            continue
        singles.append(i)
    # Contacts whose normals agree within SMOOTH_COS share a manifold (the deepest one's normal,
    # depths measured along it), face patches first: a piece in a finely tessellated bowl gets one
    # manifold of at most four points, not one per triangle.
    clusters = []
    for group in (patches, np.asarray(singles, np.int64)):
        for i in group[np.argsort(-depth[group, 0], kind="stable")]:
            for cl in clusters:
                if float(_dot(normal[i], normal[cl[0]])) >= SMOOTH_COS:
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
        dep = _dot(qa - qb, n) if len(members) > 1 else np.array([depth[i, j] for i, j in sel])
        ids = np.array([1024 * int(faces[i]) + (1 + j if kind[i] == 1 else 0) for i, j in sel], np.int64)
        if len(dep) > 1:
            if all(kind[i] == 1 for i in members):
                corners = _patch_corners(qb, n, tol)
                # a curved region's deepest point may lie between two corners of its outline
                if dep.max() > dep[corners].max() + tol:
                    corners = np.append(corners, np.argmax(dep))
            else:
                corners = np.arange(len(dep))
            keep = corners[reduce_contacts(qb[corners], dep[corners], n)]
        else:
            keep = np.zeros(1, np.int64)
        key = int(min(faces[i] for i in members))
        out.append((key, Manifold(n, qa[keep], qb[keep], dep[keep], ids[keep],
                                  "face_b" if kind[members[0]] == 1 else "point", len(members), float(dep.max()))))
    return out
