"""Checks of stored hull and tree arrays, before a cache entry is trusted (compiled kernels).

:mod:`app.scene.pieces_cache` reads hulls and OBB trees back from disk without
rebuilding them; these kernels confirm that the arrays are ones a hull and a
tree build could have produced: a closed, outward, convex hull whose planes and
edges fit it, and a tree whose links partition its triangles and whose boxes
are rotations that enclose them (the invariants of ``OBBTree.validate`` and
``ConvexPolyhedron.from_mesh``, on raw arrays, in one pass).
"""

import numpy as np

from obbcollide._jit import njit

__all__ = ["entry_ok", "tree_ok", "hull_ok"]


@njit
def entry_ok(vertices, vs, triangles, ts, polygons, polygon_start, fs, normals, offsets, edges, es, nodes, links,
              ns, tri_index, all_faces, tree_nodes, tree_links, tree_tri_index, leaf_size, tol):
    """Every piece's hull (:func:`hull_ok`) and tree (:func:`tree_ok`), and the tree over all pieces.

    The ``*_start`` offsets are already known to be in order and to end at
    their array's length.
    """
    for k in range(vs.shape[0] - 1):
        v = vertices[vs[k]:vs[k + 1]]
        tri = triangles[ts[k]:ts[k + 1]]
        lo, hi = polygon_start[fs[k]], polygon_start[fs[k + 1]]
        loop_start = polygon_start[fs[k]:fs[k + 1] + 1] - lo
        if not hull_ok(v, tri, polygons[lo:hi], loop_start, normals[fs[k]:fs[k + 1]], offsets[fs[k]:fs[k + 1]],
                        edges[es[k]:es[k + 1]], tol):
            return False
        if not tree_ok(nodes[ns[k]:ns[k + 1]], links[ns[k]:ns[k + 1]], tri_index[ts[k]:ts[k + 1]], tri, v,
                        leaf_size, tol):
            return False
    return tree_ok(tree_nodes, tree_links, tree_tri_index, all_faces, vertices, leaf_size, tol)


@njit
def tree_ok(nodes, links, tri_index, faces, vertices, leaf_size, tol):
    """The invariants of ``OBBTree.validate`` on raw arrays, in one compiled pass.

    Links: the root spans all triangles, every inner node's two children
    (``child``, ``child + 1``, after it) split its range in two non-empty
    halves, every other node has exactly one parent, leaves hold at most
    ``leaf_size`` triangles; ``tri_index`` is a permutation; boxes: finite,
    half extents >= 0, axes orthonormal and right-handed (1e-9), bounding
    radius = |half extents|, every corner of every triangle of a node within
    ``tol`` of its box. ``faces`` index ``vertices`` (checked here too).
    """
    n = nodes.shape[0]
    m = tri_index.shape[0]
    nv = vertices.shape[0]
    if n < 1 or n > 2 * m - 1 or links.shape[0] != n or faces.shape[0] != m:
        return False
    for t in range(m):
        for c in range(3):
            if faces[t, c] < 0 or faces[t, c] >= nv:
                return False
    seen = np.zeros(m, dtype=np.bool_)
    for i in range(m):
        t = tri_index[i]
        if t < 0 or t >= m or seen[t]:
            return False
        seen[t] = True
    parents = np.zeros(n, dtype=np.int64)
    for node in range(n):
        ch, s, c = links[node, 0], links[node, 1], links[node, 2]
        if c < 1 or s < 0 or s > m - c:
            return False
        if node == 0 and (s != 0 or c != m):
            return False
        if ch == -1:
            if c > leaf_size:
                return False
        else:
            if ch <= node or ch >= n - 1:
                return False
            parents[ch] += 1
            parents[ch + 1] += 1
            c0 = links[ch, 2]
            if links[ch, 1] != s or c0 < 1 or c0 >= c or links[ch + 1, 1] != s + c0 or links[ch + 1, 2] != c - c0:
                return False
    for node in range(1, n):
        if parents[node] != 1:
            return False
    for node in range(n):
        for j in range(16):
            if not np.isfinite(nodes[node, j]):
                return False
        for i in range(3):
            if nodes[node, 12 + i] < 0.0:
                return False
            for j in range(3):
                d = 0.0
                for q in range(3):
                    d += nodes[node, 3 + 3 * i + q] * nodes[node, 3 + 3 * j + q]
                if abs(d - (1.0 if i == j else 0.0)) > 1e-9:
                    return False
        a = nodes[node, 3:12]
        det = (a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6])
               + a[2] * (a[3] * a[7] - a[4] * a[6]))
        if not det > 0.0:
            return False
        r = np.sqrt(nodes[node, 12] ** 2 + nodes[node, 13] ** 2 + nodes[node, 14] ** 2)
        if abs(nodes[node, 15] - r) > 1e-12 * r:
            return False
        s, c = links[node, 1], links[node, 2]
        for k in range(s, s + c):
            t = tri_index[k]
            for corner in range(3):
                p = faces[t, corner]
                for i in range(3):
                    d = 0.0
                    for q in range(3):
                        d += (vertices[p, q] - nodes[node, q]) * nodes[node, 3 + 3 * i + q]
                    if abs(d) - nodes[node, 12 + i] > tol:
                        return False
    return True


@njit
def hull_ok(v, tri, loops, loop_start, normals, offsets, edges, tol):
    """A stored convex hull is one: closed, outward, convex, with planes and edges that fit it.

    ``v`` finite (checked by the caller), at least 4 vertices all used by a
    triangle; triangles: indices in range, three distinct corners, every
    directed edge once and its reverse once (closed, consistently wound),
    positive volume (outward, not flat: > 1e-12 of the bounding cube);
    faces (at least 4): unit normals (1e-9), finite offsets, loops of at
    least 3 vertices in range lying on their plane, and every vertex on the
    inner side of every plane (convex), all within ``tol``; edges: sorted
    pairs of distinct vertices in range.
    """
    nv = v.shape[0]
    nt = tri.shape[0]
    nf = normals.shape[0]
    if nv < 4 or nt < 4 or nf < 4 or offsets.shape[0] != nf or loop_start.shape[0] != nf + 1:
        return False
    used = np.zeros(nv, dtype=np.bool_)
    keys = np.empty(3 * nt, dtype=np.int64)
    vol = 0.0
    for t in range(nt):
        a, b, c = tri[t, 0], tri[t, 1], tri[t, 2]
        if a < 0 or b < 0 or c < 0 or a >= nv or b >= nv or c >= nv or a == b or b == c or a == c:
            return False
        used[a] = used[b] = used[c] = True
        keys[3 * t] = a * nv + b
        keys[3 * t + 1] = b * nv + c
        keys[3 * t + 2] = c * nv + a
        vol += (v[a, 0] * (v[b, 1] * v[c, 2] - v[b, 2] * v[c, 1])
                - v[a, 1] * (v[b, 0] * v[c, 2] - v[b, 2] * v[c, 0])
                + v[a, 2] * (v[b, 0] * v[c, 1] - v[b, 1] * v[c, 0]))
    for i in range(nv):
        if not used[i]:
            return False
    keys.sort()
    for i in range(1, keys.shape[0]):
        if keys[i] == keys[i - 1]:
            return False
    for i in range(keys.shape[0]):
        r = (keys[i] % nv) * nv + keys[i] // nv
        j = np.searchsorted(keys, r)
        if j >= keys.shape[0] or keys[j] != r:
            return False
    ext = 0.0
    for q in range(3):
        lo, hi = v[0, q], v[0, q]
        for i in range(nv):
            lo = min(lo, v[i, q])
            hi = max(hi, v[i, q])
        ext = max(ext, hi - lo)
    if not vol / 6.0 > 1e-12 * ext * ext * ext:
        return False
    if loop_start[0] != 0 or loop_start[nf] != loops.shape[0]:
        return False
    for f in range(nf):
        nx, ny, nz, d = normals[f, 0], normals[f, 1], normals[f, 2], offsets[f]
        if not (np.isfinite(nx) and np.isfinite(ny) and np.isfinite(nz) and np.isfinite(d)):
            return False
        if abs(nx * nx + ny * ny + nz * nz - 1.0) > 1e-9:
            return False
        if loop_start[f + 1] - loop_start[f] < 3:
            return False
        for k in range(loop_start[f], loop_start[f + 1]):
            p = loops[k]
            if p < 0 or p >= nv:
                return False
            if abs(nx * v[p, 0] + ny * v[p, 1] + nz * v[p, 2] - d) > tol:
                return False
        for i in range(nv):
            if nx * v[i, 0] + ny * v[i, 1] + nz * v[i, 2] - d > tol:
                return False
    for e in range(edges.shape[0]):
        if edges[e, 0] < 0 or edges[e, 0] >= edges[e, 1] or edges[e, 1] >= nv:
            return False
    return edges.shape[0] >= 6
