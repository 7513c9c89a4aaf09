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
(:func:`collision.contact_reduce.reduce_contacts`); on a curved region the
outline's corners need not hold the deepest point, which then joins them.

All of it is compiled: the tree query, the per-triangle patches and points,
the grouping. :func:`collide_convex_trimesh_pairs` runs it for many pieces
against one mesh in one call, the pieces read from the tables the other
batches use (:class:`collision.hull_batch.HullTable`,
:class:`collision.halfspace_batch.CoreTable`): a world with a static concave
mesh (a bowl, a terrain, a room) asks for dozens of pieces a step. Measured
in the bowl-pile scene, one call per piece from Python cost ~180 us each (the
argument checks, the tree query and the grouping in Python lists around the
compiled per-triangle kernel); the whole batch of ~50 pieces now costs
~2.4 ms.

The mesh is a surface: a triangle pushes the piece out on the side the piece
is on; whether the piece is inside a closed mesh is not asked.

Convention as in :mod:`collision.narrow_phase`: A is the convex shape, B the
mesh; normals from A to B, ``depths > 0`` penetration,
``points_a - points_b = depths * normal``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _vec as v
from ._jit import njit
from .contact_reduce import _reduce
from .epa import EPA_MAX_ITERATIONS, _penetration_query
from .gjk import GJK_MAX_ITERATIONS
from .halfspace_batch import CoreTable
from .hull_batch import _COL, HullTable, ManifoldBatch, batch_ids, batch_margins, batch_poses
from .hull_data import HullData
from .manifold import _FACE_B, KIND_NAMES, Manifold
from ._validate import MAX_COORD, as_array, as_indices, as_number, check_type
from .shapes import Capsule, Hull, Sphere, TriMesh, local_box
from .transform import checked_pose
from .tree_box_query import FAT_CAP, near_box_faces, near_box_faces_cached

__all__ = ["collide_convex_trimesh", "collide_convex_trimesh_pairs", "TriMeshManifolds", "POINT_KIND",
           "MESH_KIND_NAMES"]

# Face patches whose normals are this close (cosine) are one manifold: about 11 degrees.
SMOOTH_COS = 0.98
# The kind of a manifold made of edge and vertex contacts (no face patch): the index after
# collision.manifold's kinds.
POINT_KIND = len(KIND_NAMES)
MESH_KIND_NAMES = KIND_NAMES + ("point",)
_NO_NORMALS = np.zeros((0, 3))
_NO_LOOPS = np.zeros(1, np.int64)
_BOX_SHAPES = ((3,), (3, 3), (3,))  # a piece's box: centre, axes (rows), half extents
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
                           margin, near, count, normal, pa, pb, depth, kind):
    """Every candidate triangle against the piece: its face patch, else one GJK / EPA point.

    Writes per triangle ``count`` (0-4), ``normal``, ``pa``, ``pb`` (4, 3), ``depth`` (4,),
    ``kind`` (1 face patch, 2 single point, 0 none). The face patches come first; a triangle
    without one whose corners all lie within ``near`` / 2 of a patch's plane gets no point (the
    grouping drops a point within ``near`` of a patch's plane: :func:`_group_into`), which spares
    the GJK / EPA query of every neighbour on a flat floor.
    """
    rot = pose_a[:3, :3]
    trans = (pose_a[0, 3], pose_a[1, 3], pose_a[2, 3])
    c = (centre[0], centre[1], centre[2])
    buf_a = np.empty((_CLIP_CAP, 3))
    buf_b = np.empty((_CLIP_CAP, 3))
    eye = np.eye(4)
    no_simplex = np.zeros((0, 2), np.int32)
    nt = tris.shape[0]
    for i in range(nt):
        tri = tris[i]
        cnt, n = _triangle_patch(shape_kind, core, radius, hull_normals, face_start, face_verts, rot, trans, c,
                                 tri, margin, buf_a, buf_b, pa[i], pb[i], depth[i])
        count[i] = cnt
        kind[i] = 1 if cnt > 0 else 0
        if cnt > 0:
            v.store(normal, i, n)
    for i in range(nt):
        if kind[i] != 0:
            continue
        tri = tris[i]
        skip = False  # all three corners within near / 2 of a patch's plane: so is every point of it
        for p in range(nt):
            if kind[p] == 1:
                plane = v.row(normal, p)
                off = v.dot(plane, v.row(tris[p], 0))
                skip = True
                for c3 in range(3):
                    if abs(v.dot(plane, v.row(tri, c3)) - off) > 0.5 * near:
                        skip = False
                        break
                if skip:
                    break
        if skip:
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


@njit
def _plane_frame(n):
    """Two unit vectors ``u, w`` spanning the plane normal to the unit vector ``n``."""
    e = (1.0, 0.0, 0.0) if abs(n[0]) < 0.9 else (0.0, 1.0, 0.0)
    u = v.cross(n, e)
    u = v.scale(u, 1.0 / v.norm(u))
    return u, v.cross(n, u)


@njit
def _patch_corners(points, m, n, tol, out):
    """Corners of the convex polygon spanned by the coplanar contact points ``points[:m]`` (Andrew's
    monotone chain in the plane normal to ``n``; points on an edge or inside are dropped), written
    to ``out``; returns how many.

    Clipping one face against many small triangles leaves points all along the
    patch's edges; the depth is linear over a planar patch, so its corners hold
    the deepest point and the outline, and the four-point reduction picks among
    them only.
    """
    if m <= 2:
        for i in range(m):
            out[i] = i
        return m
    u, w = _plane_frame(n)
    qu, qw = np.empty(m), np.empty(m)
    for i in range(m):
        p = v.row(points, i)
        qu[i], qw[i] = v.dot(p, u), v.dot(p, w)
    by_w = np.argsort(qw, kind="mergesort")  # by u, then by w: two stable sorts
    order = by_w[np.argsort(qu[by_w], kind="mergesort")]
    tol2 = tol * tol
    hull = np.empty(2 * m, np.int64)
    c = 0
    for half in range(2):  # the lower chain left to right, then the upper one right to left
        top = 0
        for s in range(m):
            i = order[s] if half == 0 else order[m - 1 - s]
            while top >= 2:
                a, b = hull[c + top - 2], hull[c + top - 1]
                turn = (qu[b] - qu[a]) * (qw[i] - qw[a]) - (qw[b] - qw[a]) * (qu[i] - qu[a])
                if turn > tol2:
                    break
                top -= 1
            hull[c + top] = i
            top += 1
        c += top - 1  # each chain's last point starts the other
    if c == 0:
        out[0] = order[0]
        return 1
    for i in range(c):
        out[i] = hull[i]
    return c


@njit
def _group_into(faces, tris, count, kind, normal, pa, pb, depth, tol, pair, at, o_pair, o_key, o_count, o_normal,
                o_pa, o_pb, o_depth, o_ids, o_kind, o_tests, o_sat):
    """The per-triangle contacts of one piece (from :func:`_convex_trimesh_kernel`) grouped into
    manifolds, written from row ``at`` of the outputs (room for one per triangle); returns how many.

    Edge and vertex points (``kind == 2``): one whose triangle point lies in the plane of a face
    patch is that patch's own edge seen from a neighbour (an internal edge of a tessellated
    surface); one that repeats another (the shared edge seen from both sides) is kept once.
    Contacts whose normals agree within ``SMOOTH_COS`` then share a manifold (the deepest one's
    normal, depths measured along it), face patches first, each group deepest first: a piece in a
    finely tessellated bowl gets one manifold of at most four points, not one per triangle. Its key
    is the smallest face index of its triangles.
    """
    k = faces.shape[0]
    near = 1e3 * tol
    patches = np.empty(k, np.int64)
    npatch = 0
    for i in range(k):
        if kind[i] == 1:
            patches[npatch] = i
            npatch += 1
    singles = np.empty(k, np.int64)
    nsingle = 0
    for i in range(k):
        if kind[i] != 2:
            continue
        q = v.row(pb[i], 0)
        n = v.row(normal, i)
        seen = False
        for s in range(npatch):
            p = patches[s]
            plane = v.row(normal, p)
            if abs(v.dot(plane, q) - v.dot(plane, v.row(tris[p], 0))) <= near:
                seen = True
                break
        if not seen:
            for s in range(nsingle):
                j = singles[s]
                if v.norm(v.sub(q, v.row(pb[j], 0))) <= near and v.dot(n, v.row(normal, j)) > 1.0 - 1e-6:
                    seen = True
                    break
        if not seen:
            singles[nsingle] = i
            nsingle += 1
    # the order the contacts are clustered in: face patches, then single points, each deepest first
    total = npatch + nsingle
    order = np.empty(total, np.int64)
    key = np.empty(npatch)
    for s in range(npatch):
        key[s] = -depth[patches[s], 0]
    by = np.argsort(key, kind="mergesort")
    for s in range(npatch):
        order[s] = patches[by[s]]
    key = np.empty(nsingle)
    for s in range(nsingle):
        key[s] = -depth[singles[s], 0]
    by = np.argsort(key, kind="mergesort")
    for s in range(nsingle):
        order[npatch + s] = singles[by[s]]
    first = np.empty(total, np.int64)  # each cluster's first (deepest) contact
    cluster = np.empty(total, np.int64)
    ncl = 0
    for s in range(total):
        i = order[s]
        c = -1
        for t in range(ncl):
            if v.dot(v.row(normal, i), v.row(normal, first[t])) >= SMOOTH_COS:
                c = t
                break
        if c < 0:
            c = ncl
            first[ncl] = i
            ncl += 1
        cluster[s] = c
    for t in range(ncl):
        n = v.row(normal, first[t])
        members, points, faces_only, low = 0, 0, True, faces[first[t]]
        for s in range(total):
            if cluster[s] == t:
                i = order[s]
                members += 1
                points += count[i]
                faces_only = faces_only and kind[i] == 1
                low = min(low, faces[i])
        qa, qb = np.empty((points, 3)), np.empty((points, 3))
        dep, ids = np.empty(points), np.empty(points, np.int64)
        r = 0
        for s in range(total):
            if cluster[s] != t:
                continue
            i = order[s]
            for j in range(count[i]):
                v.store(qa, r, v.row(pa[i], j))
                v.store(qb, r, v.row(pb[i], j))
                dep[r] = v.dot(v.sub(v.row(pa[i], j), v.row(pb[i], j)), n) if members > 1 else depth[i, j]
                ids[r] = 1024 * faces[i] + (1 + j if kind[i] == 1 else 0)
                r += 1
        sel = np.empty(points, np.int64)
        if points > 1:
            corners = np.empty(points, np.int64)
            if faces_only:
                nc = _patch_corners(qb, points, n, tol, corners)
                # the triangles of a curved region are not one plane: a point between two corners
                # of the outline may be deeper than both, and the deepest point stays a candidate
                deepest, best = 0, dep[corners[0]]
                for s in range(points):
                    if dep[s] > dep[deepest]:
                        deepest = s
                for s in range(nc):
                    best = max(best, dep[corners[s]])
                if dep[deepest] > best + tol:
                    corners[nc] = deepest
                    nc += 1
            else:
                nc = points
                for s in range(points):
                    corners[s] = s
            cq, cd = np.empty((nc, 3)), np.empty(nc)
            for s in range(nc):
                v.store(cq, s, v.row(qb, corners[s]))
                cd[s] = dep[corners[s]]
            kept = np.empty(nc, np.int64)
            m = _reduce(n, cq, cd, nc, 1e-18, kept)
            for s in range(m):
                sel[s] = corners[kept[s]]
        else:
            m = 1
            sel[0] = 0
        row = at + t
        o_pair[row], o_key[row], o_count[row] = pair, low, m
        v.store(o_normal, row, n)
        for s in range(m):
            v.store(o_pa[row], s, v.row(qa, sel[s]))
            v.store(o_pb[row], s, v.row(qb, sel[s]))
            o_depth[row, s] = dep[sel[s]]
            o_ids[row, s] = ids[sel[s]]
        o_kind[row] = _FACE_B if kind[first[t]] == 1 else POINT_KIND
        o_tests[row] = members
        o_sat[row] = dep.max()
    return ncl


@njit
def _grown(a, need):
    """``a`` itself when it has ``need`` rows, else a copy with room for at least that many (doubling)."""
    if a.shape[0] >= need:
        return a
    out = np.zeros((max(need, 2 * a.shape[0]),) + a.shape[1:], a.dtype)
    out[:a.shape[0]] = a
    return out


@njit
def _convex_trimesh_pairs_kernel(points, normals, face_start, face_verts, ranges, radius, box_c, box_axes, box_half,
                                 poses, margins, nodes, links, triangles, tri_index, vertices, mfaces, mesh_pose,
                                 fat_rows, mesh_key, fat_key, fat_box, fat_count, fat_slots):
    """The manifolds of ``k`` convex pieces against one posed mesh, as rows (see
    :class:`TriMeshManifolds`; the arrays trimmed to the rows written).

    Piece ``t``'s core points are ``points[ranges[t, 0]:ranges[t, 1]]``; a hull also has its face
    normals, face loop starts and face loop vertices in the next three ranges of ``ranges[t]``
    (empty ranges: a sphere or capsule, whose core has one or two points). ``box_*[t]`` is its
    model-frame box (:func:`collision.shapes.local_box`).

    With ``fat_rows`` (k,) (empty: none), piece ``t`` finds its triangles through row ``fat_rows[t]``
    of the candidate cache ``fat_key ... fat_slots`` (:func:`collision.tree_box_query.near_box_faces_cached`,
    the mesh named ``mesh_key`` there): the same triangles, so the same rows.
    """
    k = ranges.shape[0]
    cap = max(16, k)
    o_pair, o_key, o_count = np.zeros(cap, np.int64), np.zeros(cap, np.int64), np.zeros(cap, np.int64)
    o_normal, o_pa, o_pb = np.zeros((cap, 3)), np.zeros((cap, 4, 3)), np.zeros((cap, 4, 3))
    o_depth, o_ids = np.zeros((cap, 4)), np.zeros((cap, 4), np.int64)
    o_kind, o_tests, o_sat = np.zeros(cap, np.int64), np.zeros(cap, np.int64), np.zeros(cap)
    scratch = np.empty(mfaces.shape[0], np.int64)
    centre, axes, half = np.empty(3), np.empty((3, 3)), np.empty(3)
    rb = mesh_pose[:3, :3]
    done = 0
    for t in range(k):
        pose = poses[t]
        margin = margins[t]
        for a in range(3):  # the piece's box in world coordinates, grown by the margin
            centre[a] = (pose[a, 0] * box_c[t, 0] + pose[a, 1] * box_c[t, 1] + pose[a, 2] * box_c[t, 2]
                         + pose[a, 3])
            half[a] = box_half[t, a] + margin
            for b in range(3):
                axes[a, b] = (box_axes[t, a, 0] * pose[b, 0] + box_axes[t, a, 1] * pose[b, 1]
                              + box_axes[t, a, 2] * pose[b, 2])
        if fat_rows.shape[0]:
            faces = near_box_faces_cached(nodes, links, triangles, tri_index, mesh_pose, centre, axes, half, scratch,
                                          mesh_key, fat_rows[t], fat_key, fat_box, fat_count, fat_slots)
        else:
            faces = near_box_faces(nodes, links, triangles, tri_index, mesh_pose, centre, axes, half, scratch)
        nt = faces.shape[0]
        if nt == 0:
            continue
        tris = np.empty((nt, 3, 3))
        for s in range(nt):
            for c in range(3):
                p = v.row(vertices, mfaces[faces[s], c])
                v.store(tris[s], c, v.add(_rotate(rb, p), (mesh_pose[0, 3], mesh_pose[1, 3], mesh_pose[2, 3])))
        count, kind = np.zeros(nt, np.int64), np.zeros(nt, np.int64)
        normal, pa, pb, depth = np.zeros((nt, 3)), np.zeros((nt, 4, 3)), np.zeros((nt, 4, 3)), np.zeros((nt, 4))
        p0, p1, n0, n1, s0, s1, f0, f1 = ranges[t]
        hull = n1 > n0
        scale = max(box_half[t, 0], box_half[t, 1], box_half[t, 2]) + margin
        tol = 1e-9 * max(1.0, scale)
        _convex_trimesh_kernel(2 if hull else 0, points[p0:p1], 0.0 if hull else radius[t], normals[n0:n1],
                               face_start[s0:s1], face_verts[f0:f1], pose, centre, tris, margin, 1e3 * tol, count,
                               normal, pa, pb, depth, kind)
        need = done + nt
        o_pair, o_key, o_count, o_kind, o_tests = (_grown(o_pair, need), _grown(o_key, need), _grown(o_count, need),
                                                   _grown(o_kind, need), _grown(o_tests, need))
        o_normal, o_pa, o_pb = _grown(o_normal, need), _grown(o_pa, need), _grown(o_pb, need)
        o_depth, o_ids, o_sat = _grown(o_depth, need), _grown(o_ids, need), _grown(o_sat, need)
        done += _group_into(faces, tris, count, kind, normal, pa, pb, depth, tol, t, done, o_pair, o_key, o_count,
                            o_normal, o_pa, o_pb, o_depth, o_ids, o_kind, o_tests, o_sat)
    return (o_pair[:done], o_key[:done], o_count[:done], o_normal[:done], o_pa[:done], o_pb[:done], o_depth[:done],
            o_ids[:done], o_kind[:done], o_tests[:done], o_sat[:done])


@dataclass(frozen=True)
class TriMeshManifolds:
    """The manifolds of several convex pieces against one mesh, one row each.

    Attributes
    ----------
    pair : (m,) int64
        The piece (index into the batch's inputs) each row belongs to; a piece's rows are
        consecutive, in the order of the pieces.
    key : (m,) int64
        The smallest face index of the row's triangles (a piece's rows have distinct keys).
    batch : ManifoldBatch
        The manifolds (``kind``: ``face_b``, or :data:`POINT_KIND` for an edge or vertex contact).
    """

    pair: NDArray[np.int64]
    key: NDArray[np.int64]
    batch: ManifoldBatch

    def __len__(self) -> int:
        return len(self.pair)


# No candidate cache (_convex_trimesh_pairs_kernel's fat_rows ... fat_slots): the tree walked for every piece.
_NO_FAT = (np.zeros(0, np.int64), -1, np.zeros(0, np.int64), np.zeros((0, 2, 3)), np.zeros(0, np.int64),
           np.zeros((0, FAT_CAP), np.int64))


def _run(points, normals, face_start, face_verts, ranges, radius, boxes, poses, mesh, mesh_pose, margins):
    tree = mesh.tree
    out = _convex_trimesh_pairs_kernel(points, normals, face_start, face_verts, ranges, radius, *boxes, poses,
                                       margins, tree.nodes, tree.links, tree.triangles, tree.tri_index,
                                       tree.vertices, tree.faces, mesh_pose, *_NO_FAT)
    pair, key = out[:2]
    return TriMeshManifolds(pair, key, ManifoldBatch(*out[2:]))


def collide_convex_trimesh_pairs(cores: CoreTable, hulls: HullTable, core_ids: ArrayLike, hull_ids: ArrayLike,
                                 boxes: tuple[ArrayLike, ArrayLike, ArrayLike], poses: ArrayLike, mesh: TriMesh,
                                 mesh_pose: ArrayLike, margins: ArrayLike = 0.0,
                                 check: bool = True) -> TriMeshManifolds:
    """Contact manifolds of ``k`` convex pieces against one triangle mesh, in one compiled call.

    Each piece gets what :func:`collide_convex_trimesh` gives it, in the same order (the same
    kernels on the same inputs).

    Parameters
    ----------
    cores : CoreTable
        Holds each piece's core points and radius (a hull's core is its vertices).
    hulls : HullTable
        Holds each hull piece.
    core_ids : (k,) int64
    hull_ids : (k,) int64
        The piece's id in ``hulls``, or -1 for a sphere or capsule.
    boxes : tuple of (k, 3), (k, 3, 3), (k, 3) float64
        Each piece's model-frame box (:func:`collision.shapes.local_box`): centre, axes as rows,
        half extents.
    poses : (k, 4, 4) float64
        The pieces' rigid model-to-world transforms.
    mesh : TriMesh
    mesh_pose : (4, 4) float64
    margins : float or (k,) float64
        Keep speculative points whose gap is at most this, per piece.
    check : bool
        Check the arguments (ids in their tables, shapes, poses rigid and finite, margins);
        False: the caller vouches for them (the world, every step).

    Returns
    -------
    TriMeshManifolds
    """
    if check:
        check_type(mesh, "mesh", TriMesh)
        core_ids = batch_ids(core_ids, "core_ids", len(cores), "core")
        k = len(core_ids)
        hull_ids = as_indices(hull_ids, "hull_ids")
        if hull_ids.shape != (k,):
            raise ValueError(f"hull_ids: expected shape ({k},), got {hull_ids.shape}")
        bad = np.flatnonzero((hull_ids < -1) | (hull_ids >= len(hulls)))
        if len(bad):
            raise ValueError(f"hull_ids[{bad[0]}]: hull id {hull_ids[bad[0]]} not in the table (size {len(hulls)}) "
                             "nor -1")
        poses = batch_poses(poses, "poses", k)
        mesh_pose = checked_pose(mesh_pose, "mesh_pose")
        margins = batch_margins(margins, "margins", k)
        boxes = tuple(as_array(b, f"boxes[{c}]", shape) for c, (b, shape) in enumerate(zip(boxes, _BOX_SHAPES)))
        for c, b in enumerate(boxes):
            if b.shape[:1] != (k,):
                raise ValueError(f"boxes[{c}]: expected {k} rows, got shape {b.shape}")
    else:
        core_ids, hull_ids = np.asarray(core_ids, np.int64), np.asarray(hull_ids, np.int64)
        k = len(core_ids)
        margins = np.broadcast_to(np.asarray(margins, np.float64), (k,))
    cs = cores.starts
    ranges = np.zeros((k, 8), np.int64)
    ranges[:, 0], ranges[:, 1] = cs[core_ids], cs[core_ids + 1]
    h = hull_ids >= 0
    hs = hulls.starts
    for c, name in enumerate(("normals", "face_start", "face_verts")):
        col = _COL[name]
        ranges[h, 2 + 2 * c], ranges[h, 3 + 2 * c] = hs[hull_ids[h], col], hs[hull_ids[h] + 1, col]
    boxes = tuple(np.ascontiguousarray(b, np.float64) for b in boxes)
    return _run(cores.points, hulls.array("normals"), hulls.array("face_start"), hulls.array("face_verts"), ranges,
                np.ascontiguousarray(cores.radius[core_ids]), boxes, np.ascontiguousarray(poses, np.float64),
                mesh, np.ascontiguousarray(mesh_pose, np.float64), np.ascontiguousarray(margins, np.float64))


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
        ``1024 * face + k``; kind ``"face_b"`` (a face patch of the piece on the mesh's triangles)
        or ``"point"`` (an edge or vertex contact).
    """
    check_type(shape, "shape", Sphere, Capsule, Hull)
    check_type(mesh, "mesh", TriMesh)
    pose_a = checked_pose(pose_a, "pose_a")
    pose_b = checked_pose(pose_b, "pose_b")
    margin = as_number(margin, "margin", low=0.0, high=MAX_COORD)
    core = np.ascontiguousarray(shape.core, np.float64)
    ranges = np.zeros((1, 8), np.int64)
    ranges[0, 1] = len(core)
    if isinstance(shape, Hull):
        h = HullData.from_polyhedron(shape.poly)
        arrays = (h.normals, h.face_start, h.face_verts)
        ranges[0, 3::2] = [len(a) for a in arrays]
    else:
        arrays = (_NO_NORMALS, _NO_LOOPS, _NO_LOOPS)
    c, axes, half = local_box(shape)
    boxes = (np.asarray(c, np.float64)[None], np.asarray(axes, np.float64)[None], np.asarray(half, np.float64)[None])
    out = _run(core, *arrays, ranges, np.array([float(shape.radius)]), boxes, pose_a[None], mesh, pose_b,
               np.array([margin]))
    b = out.batch
    return [(int(out.key[r]), Manifold(b.normal[r].copy(), b.points_a[r, :c].copy(), b.points_b[r, :c].copy(),
                                       b.depths[r, :c].copy(), b.ids[r, :c].copy(), MESH_KIND_NAMES[int(b.kind[r])],
                                       int(b.tests[r]), float(b.sat_depth[r])))
            for r in range(len(out)) for c in (int(b.count[r]),)]
