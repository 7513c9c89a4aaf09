"""OBBTree construction: invariants, validate(), closedness, bad input.

Every tree is checked twice:

* ``OBBTree.validate()`` (the library's own invariant check) must pass, and it
  must be able to *fail*: a copy with a shrunk or shifted node box, or a
  duplicated leaf entry, has to raise ``AssertionError``.
* ``check_tree`` below, an independent vectorised numpy check that rebuilds each
  node's triangles from the caller's ``vertices[faces]`` (not from
  ``tree.triangles``) and asserts: every node box contains its triangles and is
  tight on them (extents = min/max projections), axes orthonormal and
  right-handed, the node ranges form a binary partition (root = everything,
  children split their parent, parents before children), leaves hold at most
  ``leaf_size`` triangles and internal nodes more, every face is in exactly one
  leaf, and ``triangles`` / ``tri_index`` agree with the input.

Meshes: icosphere, torus, box, capsule, a random-noise blob, an unmerged mesh
with duplicate vertices and zero-area triangles (repeated indices, collinear
corners, coincident corners, a duplicated face), a mesh of zero-area triangles
only, an open sphere, a single triangle, and a ~50k-triangle torus.

The ~50k mesh: ``validate()`` is a Python loop (~0.1 ms per node, ~10 s for the
100k nodes of a leaf_size=1 tree) and the ``"hull"`` fit builds one convex hull
per node (~30 s); to stay within the time budget the default run covers the
``vertex`` and ``area`` fits with both leaf sizes there with the numpy check,
and ``validate()`` on three of those four trees (not area/leaf_size=1, whose
numpy check still runs). With ``COLLISION_SLOW_TESTS=1`` the full matrix runs:
validate() on all four and the ``hull`` fit with both leaf sizes. The hull fit
is covered by every other mesh in the default run.
"""

import copy
import functools
import os

import numpy as np
import pytest
import trimesh

from obbcollide.obb_tree import FITS, OBBTree

SLOW = os.environ.get("COLLISION_SLOW_TESTS", "") not in ("", "0")
BOX_TOL = 1e-9  # relative to the mesh size: vertices may lie this far outside their node box


# ---------------------------------------------------------------------------
# Meshes (vertices, faces), built once
# ---------------------------------------------------------------------------


def _rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _vf(mesh):
    return np.array(mesh.vertices, dtype=float), np.array(mesh.faces, dtype=np.int64)


def _blob():
    rng = np.random.default_rng(11)
    v, f = _vf(trimesh.creation.icosphere(3))
    v = v * (1.0 + 0.4 * rng.random(len(v)))[:, None] + 0.05 * rng.normal(size=v.shape)
    return v, f


def _degenerate():
    """Unmerged icosphere (every corner its own vertex: ~6 coincident copies each)
    plus zero-area triangles: repeated indices, collinear corners, three
    coincident corners, and one face listed twice."""
    v, f = _vf(trimesh.creation.icosphere(2))
    v = v[f].reshape(-1, 3)
    f = np.arange(len(v)).reshape(-1, 3)
    n = len(v)
    extra_v = np.array([[0.2, 0.1, 0.0], [0.4, 0.3, 0.1], [0.6, 0.5, 0.2],  # collinear
                        [0.3, -0.2, 0.5], [0.3, -0.2, 0.5], [0.3, -0.2, 0.5]])  # coincident
    v = np.vstack([v, extra_v])
    extra_f = np.array([[0, 0, 1], [5, 7, 7], [n, n + 1, n + 2], [n + 2, n, n + 1],
                        [n + 3, n + 4, n + 5], [3, 4, 5], [9, 10, 11]])
    return v, np.vstack([f, extra_f])


def _all_degenerate():
    """Only zero-area triangles (collinear corners along a few lines): the area
    fit has no weight anywhere and must fall back."""
    rng = np.random.default_rng(5)
    verts, faces = [], []
    for k in range(40):
        p = rng.normal(size=3)
        d = rng.normal(size=3) * 0.1
        s = np.sort(rng.random(3))
        verts += [p + s[0] * d, p + s[1] * d, p + s[2] * d]
        faces.append([3 * k, 3 * k + 1, 3 * k + 2])
    return np.array(verts), np.array(faces)


def _open_sphere():
    v, f = _vf(trimesh.creation.icosphere(3))
    keep = v[f].mean(1)[:, 2] < 0.6  # remove a cap
    return v, f[keep]


MESHES = {
    "icosphere": lambda: _vf(trimesh.creation.icosphere(3)),
    "torus": lambda: _vf(trimesh.creation.torus(1.0, 0.3)),
    "box": lambda: _vf(trimesh.creation.box((1.0, 2.0, 3.0))),
    "capsule": lambda: _vf(trimesh.creation.capsule(height=1.0, radius=0.5, count=[24, 24])),
    "blob": _blob,
    "degenerate": _degenerate,
    "all_degenerate": _all_degenerate,
    "open_sphere": _open_sphere,
    "single_triangle": lambda: (np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0.5]]), np.array([[0, 1, 2]])),
}
CLOSED = {"icosphere": True, "torus": True, "box": True, "capsule": True, "blob": True,
          "open_sphere": False, "single_triangle": False, "all_degenerate": False}


@functools.lru_cache(maxsize=None)
def mesh(name):
    if name == "large":
        return _vf(trimesh.creation.torus(1.0, 0.3, major_sections=250, minor_sections=100))
    return MESHES[name]()


@functools.lru_cache(maxsize=None)
def tree(name, fit="vertex", leaf_size=1):
    v, f = mesh(name)
    return OBBTree(v, f, fit=fit, leaf_size=leaf_size)


# ---------------------------------------------------------------------------
# Independent check
# ---------------------------------------------------------------------------


def check_tree(t, vertices, faces, leaf_size):
    """Assert the tree's invariants with plain numpy (see the module docstring)."""
    m = len(faces)
    n = len(t.child)
    assert t.centers.shape == (n, 3) and t.axes.shape == (n, 3, 3) and t.half_extents.shape == (n, 3)
    assert t.start.shape == t.count.shape == (n,)
    assert np.all(np.isfinite(t.centers)) and np.all(np.isfinite(t.axes)) and np.all(np.isfinite(t.half_extents))
    assert np.all(t.half_extents >= 0.0)

    # Leaf order: tri_index is a permutation and triangles are the input faces.
    assert np.array_equal(np.sort(t.tri_index), np.arange(m))
    tri = vertices[faces][t.tri_index]
    assert np.array_equal(t.triangles, tri)

    # Topology: root is everything, children split parents, parents come first.
    assert t.start[0] == 0 and t.count[0] == m
    assert np.all(t.count >= 1) and np.all(t.start >= 0) and np.all(t.start + t.count <= m)
    inner = np.flatnonzero(t.child >= 0)
    leaves = np.flatnonzero(t.child < 0)
    c = t.child[inner]
    assert np.all(c > inner) and np.all(c + 1 < n)
    assert np.array_equal(t.start[c], t.start[inner])
    assert np.array_equal(t.start[c + 1], t.start[inner] + t.count[c])
    assert np.array_equal(t.count[c] + t.count[c + 1], t.count[inner])
    parents = np.zeros(n, dtype=np.int64)
    np.add.at(parents, c, 1)
    np.add.at(parents, c + 1, 1)
    assert parents[0] == 0 and np.all(parents[1:] == 1), "every non-root node has exactly one parent"
    assert np.all(t.count[leaves] <= leaf_size)
    assert np.all(t.count[inner] > leaf_size)
    seen = np.zeros(m, dtype=np.int64)
    for s, k in zip(t.start[leaves], t.count[leaves]):
        seen[t.tri_index[s:s + k]] += 1
    assert np.all(seen == 1), "every face in exactly one leaf"

    # Frames.
    gram = np.einsum("nij,nkj->nik", t.axes, t.axes)
    assert np.abs(gram - np.eye(3)).max() < 1e-9
    assert np.all(np.linalg.det(t.axes) > 0.0)

    # Every node box contains its triangles and is tight on them.
    scale = max(1.0, float(np.abs(vertices).max()))
    for lo_node in range(0, n, 20000):
        nodes = np.arange(lo_node, min(n, lo_node + 20000))
        cnt = t.count[nodes]
        node_of = np.repeat(nodes, cnt)
        first = np.cumsum(cnt) - cnt
        entry = np.arange(cnt.sum()) - np.repeat(first, cnt) + np.repeat(t.start[nodes], cnt)
        pts = tri[entry]  # (k, 3 corners, 3)
        local = np.einsum("kij,kcj->kci", t.axes[node_of], pts - t.centers[node_of][:, None, :])
        hi = np.maximum.reduceat(local.max(1), first, axis=0)
        lo = np.minimum.reduceat(local.min(1), first, axis=0)
        h = t.half_extents[nodes]
        assert np.all(hi <= h + BOX_TOL * scale), f"vertex outside its node box by {(hi - h).max():g}"
        assert np.all(lo >= -h - BOX_TOL * scale), f"vertex outside its node box by {(-h - lo).max():g}"
        # Tight: the extents are exactly the min/max projections.
        assert np.abs(hi - h).max() <= BOX_TOL * scale and np.abs(lo + h).max() <= BOX_TOL * scale


# ---------------------------------------------------------------------------
# validate() and the independent check
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("leaf_size", [1, 4])
@pytest.mark.parametrize("fit", FITS)
@pytest.mark.parametrize("name", sorted(MESHES))
def test_tree_invariants(name, fit, leaf_size):
    v, f = mesh(name)
    t = tree(name, fit, leaf_size)
    assert t.validate() is True
    check_tree(t, v, f, leaf_size)
    assert np.isfinite(t.total_volume()) and t.total_volume() >= 0.0
    assert t.depth == int(t.node_depths().max()) + 1
    if name == "single_triangle":
        assert t.node_count == 1 and t.depth == 1 and t.child[0] == -1


@pytest.mark.parametrize("leaf_size", [1, 4])
@pytest.mark.parametrize("fit", ["vertex", "area", pytest.param(
    "hull", marks=pytest.mark.skipif(not SLOW, reason="hull fit on 50k triangles takes ~30 s; "
                                     "set COLLISION_SLOW_TESTS=1"))])
def test_large_mesh_invariants(fit, leaf_size):
    v, f = mesh("large")
    assert 45000 <= len(f) <= 55000
    t = OBBTree(v, f, fit=fit, leaf_size=leaf_size)
    if SLOW or (fit, leaf_size) != ("area", 1):  # ~15 s of Python loop over 100k nodes
        assert t.validate() is True
    check_tree(t, v, f, leaf_size)
    assert np.isfinite(t.total_volume())
    assert t.depth < 64  # the query stacks start at 64 and grow, but a sane split keeps it shallow


def test_trimesh_input_equals_arrays():
    m = trimesh.creation.torus(1.0, 0.3)
    a = OBBTree(m)
    b = OBBTree(np.array(m.vertices), np.array(m.faces))
    for name in ("nodes", "links", "triangles", "tri_index", "faces", "vertices"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_packed_views_share_memory():
    """centers / axes / half_extents / child / start / count are views into nodes / links."""
    t = tree("torus", "area", 4)
    assert np.shares_memory(t.centers, t.nodes) and np.shares_memory(t.half_extents, t.nodes)
    assert np.shares_memory(t.axes, t.nodes) and np.shares_memory(t.child, t.links)
    assert np.array_equal(t.nodes[:, 3:12].reshape(-1, 3, 3), t.axes)


# ---------------------------------------------------------------------------
# validate() can fail
# ---------------------------------------------------------------------------


def _nodes_to_corrupt(t):
    """The root, an internal node and a leaf, each with a non-flat box."""
    inner = [i for i in np.flatnonzero(t.child >= 0) if i != 0]
    leaves = np.flatnonzero(t.child < 0)
    return [0, inner[len(inner) // 2], leaves[len(leaves) // 3]]


@pytest.mark.parametrize("fit", FITS)
@pytest.mark.parametrize("how", ["shrink_half_extents", "shift_center", "tilt_axes",
                                 "duplicate_leaf_entry", "break_partition"])
def test_validate_catches_corruption(fit, how):
    t = tree("blob", fit, 1)
    for node in _nodes_to_corrupt(t):
        bad = copy.deepcopy(t)
        h = bad.half_extents[node]
        if how == "shrink_half_extents":
            bad.half_extents[node] = h * 0.99
        elif how == "shift_center":
            bad.centers[node] = bad.centers[node] + 0.01 * h.max() * bad.axes[node][int(np.argmax(h))]
        elif how == "tilt_axes":  # no longer orthonormal
            bad.axes[node][0] = bad.axes[node][0] + 1e-4 * bad.axes[node][1]
        elif how == "duplicate_leaf_entry":
            leaf = node if bad.child[node] < 0 else np.flatnonzero(bad.child < 0)[0]
            other = (bad.start[leaf] + 1) % len(bad.tri_index)
            bad.tri_index[bad.start[leaf]] = bad.tri_index[other]
        elif how == "break_partition":
            if bad.child[node] < 0:
                node = 0
            bad.count[bad.child[node]] += 1  # the children now overlap
        with pytest.raises(AssertionError):
            bad.validate()
    assert t.validate() is True  # the original is untouched


def test_validate_tolerance_is_relative_and_small():
    """A vertex a hair outside (well below tol * size) passes; one clearly outside fails."""
    t = tree("icosphere", "vertex", 1)
    bad = copy.deepcopy(t)
    bad.half_extents[0] = bad.half_extents[0] - 1e-12
    assert bad.validate() is True
    bad.half_extents[0] = bad.half_extents[0] - 1e-7
    with pytest.raises(AssertionError):
        bad.validate()


# ---------------------------------------------------------------------------
# closed
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CLOSED))
def test_closed_matches_watertightness(name):
    assert tree(name).closed is CLOSED[name]


def test_closed_false_with_one_flipped_face():
    v, f = mesh("icosphere")
    f = f.copy()
    f[17] = f[17, ::-1]
    assert OBBTree(v, f).closed is False


def test_closed_true_when_all_faces_flipped():
    """Consistently oriented inward is still closed and consistent (parity does not care)."""
    v, f = mesh("torus")
    assert OBBTree(v, f[:, ::-1].copy()).closed is True


def test_closed_false_for_duplicate_face_and_unmerged_vertices():
    v, f = mesh("icosphere")
    assert OBBTree(v, np.vstack([f, f[:1]])).closed is False  # a face twice: an edge used 3 times
    assert tree("degenerate").closed is False  # topologically a soup of separate triangles


def test_closed_false_for_nonmanifold_edge():
    """Two closed tetrahedra sharing an edge: every directed edge has a reverse, but one
    edge is used by four faces."""
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, -1, 0], [0, 0, -1.0]])
    tet1 = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    assert OBBTree(v, tet1).closed is True
    tet2 = np.array([[0, 1, 4], [0, 5, 1], [0, 4, 5], [1, 5, 4]])
    assert OBBTree(v, tet2).closed is True
    assert OBBTree(v, np.vstack([tet1, tet2])).closed is False


# ---------------------------------------------------------------------------
# Fits: total volume, tessellation independence of the area fit
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("fit", FITS)
def test_total_volume_finite_and_positive(fit):
    for name in ("icosphere", "torus", "capsule", "blob", "degenerate"):
        vol = tree(name, fit, 1).total_volume()
        assert np.isfinite(vol) and vol > 0.0, (name, vol)
    assert 0.0 <= tree("single_triangle", fit, 1).total_volume() < 1e-12  # a flat box


def _root_box(t):
    return t.centers[0].copy(), t.axes[0].copy(), t.half_extents[0].copy()


def _same_box(b1, b2, tol=1e-9):
    c1, a1, h1 = b1
    c2, a2, h2 = b2
    return (np.abs(c1 - c2).max() < tol and np.abs(h1 - h2).max() < tol
            and np.abs(np.abs(a1 @ a2.T) - np.eye(3)).max() < tol)  # same axes up to sign


def test_area_fit_root_box_is_tessellation_independent():
    """A rotated 1x2x3 box (distinct principal moments, so the axes are well defined),
    coarse (12 triangles) and with some faces subdivided twice: the area-weighted
    covariance is the surface's, so the root box is the same. The vertex fit, which
    weights every corner, is pulled towards the dense faces."""
    rng = np.random.default_rng(3)
    box = trimesh.creation.box((1.0, 2.0, 3.0))
    r = _rotation(rng)
    v = np.array(box.vertices) @ r.T + [0.3, -0.2, 0.7]
    f = np.array(box.faces)
    fine_v, fine_f = trimesh.remesh.subdivide(v, f, face_index=[0, 1, 4])
    fine_v, fine_f = trimesh.remesh.subdivide(fine_v, fine_f, face_index=np.arange(len(fine_f) - 10, len(fine_f)))
    assert len(fine_f) > 40
    coarse_area = _root_box(OBBTree(v, f, fit="area"))
    fine_area = _root_box(OBBTree(fine_v, fine_f, fit="area"))
    assert _same_box(coarse_area, fine_area), (coarse_area, fine_area)
    # The box is the rotated box itself: half extents 0.5, 1, 1.5 (descending variance first).
    assert np.allclose(np.sort(coarse_area[2]), [0.5, 1.0, 1.5], atol=1e-9)
    # Uniform subdivision too.
    uni_v, uni_f = trimesh.remesh.subdivide(v, f)
    assert _same_box(coarse_area, _root_box(OBBTree(uni_v, uni_f, fit="area")))
    # Sanity of the premise: the vertex fit does depend on the tessellation here.
    assert not _same_box(_root_box(OBBTree(v, f, fit="vertex")), _root_box(OBBTree(fine_v, fine_f, fit="vertex")))


def test_fits_differ_but_cover_the_same_triangles():
    """The three fits give different boxes yet each root box contains every vertex."""
    v, _ = mesh("blob")
    roots = [_root_box(tree("blob", fit, 1)) for fit in FITS]
    for c, a, h in roots:
        local = np.abs((v - c) @ a.T)
        assert np.all(local <= h + 1e-9 * np.abs(v).max())
    assert not _same_box(roots[0], roots[1])


# ---------------------------------------------------------------------------
# boxes_at_depth
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("leaf_size", [1, 4])
def test_boxes_at_depth(leaf_size):
    t = tree("torus", "vertex", leaf_size)
    # Independent depths by walking from the root.
    depth = np.full(t.node_count, -1)
    depth[0] = 0
    frontier = [0]
    while frontier:
        nxt = []
        for node in frontier:
            ch = t.child[node]
            if ch >= 0:
                depth[ch] = depth[ch + 1] = depth[node] + 1
                nxt += [ch, ch + 1]
        frontier = nxt
    assert np.all(depth >= 0)
    assert t.depth == depth.max() + 1
    leaf = t.child < 0
    for d in range(t.depth + 1):
        c, a, h = t.boxes_at_depth(d)
        sel = (depth == d) | ((depth < d) & leaf)
        assert len(c) == len(a) == len(h) == sel.sum()
        assert np.array_equal(c, t.centers[sel]) and np.array_equal(h, t.half_extents[sel])
        # The selected nodes cover every triangle exactly once.
        assert t.count[sel].sum() == len(t.faces)
    c, _, _ = t.boxes_at_depth(0)
    assert len(c) == 1
    c, _, _ = t.boxes_at_depth(t.depth - 1)
    assert len(c) == leaf.sum()


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------

_V = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
_F = np.array([[0, 1, 2], [0, 1, 3]])


@pytest.mark.parametrize("kwargs, name", [
    (dict(vertices=_V, faces=np.zeros((0, 3), dtype=np.int64)), "faces"),
    (dict(vertices=_V, faces=[]), "faces"),
    (dict(vertices=_V, faces=np.array([[0, 1, 4]])), "faces"),
    (dict(vertices=_V, faces=np.array([[0, -1, 2]])), "faces"),
    (dict(vertices=_V, faces=_F.astype(float)), "faces"),
    (dict(vertices=_V, faces=_F.astype(bool)), "faces"),
    (dict(vertices=_V, faces=np.array([[0, 1, 2, 3]])), "faces"),
    (dict(vertices=_V, faces=np.array([0, 1, 2])), "faces"),
    (dict(vertices=_V, faces=_F[None]), "faces"),
    (dict(vertices=_V, faces=None), "faces"),
    (dict(vertices=np.where(np.arange(12).reshape(4, 3) == 4, np.nan, _V), faces=_F), "vertices"),
    (dict(vertices=np.where(np.arange(12).reshape(4, 3) == 7, np.inf, _V), faces=_F), "vertices"),
    (dict(vertices=_V[:, :2], faces=_F), "vertices"),
    (dict(vertices=_V[:, :, None], faces=_F), "vertices"),
    (dict(vertices=_V[None], faces=_F), "vertices"),
    (dict(vertices=_V[0], faces=_F), "vertices"),
    (dict(vertices=[["a", "b", "c"]] * 4, faces=_F), "vertices"),
    (dict(vertices=_V, faces=_F, fit="obb"), "fit"),
    (dict(vertices=_V, faces=_F, fit=None), "fit"),
    (dict(vertices=_V, faces=_F, leaf_size=0), "leaf_size"),
    (dict(vertices=_V, faces=_F, leaf_size=-2), "leaf_size"),
], ids=["empty_faces", "empty_list_faces", "index_too_large", "negative_index", "float_faces",
        "bool_faces", "four_columns", "flat_faces", "3d_faces", "no_faces", "nan_vertex", "inf_vertex",
        "2d_vertices", "vertices_n31", "vertices_1n3", "single_vertex", "string_vertices", "bad_fit",
        "fit_none", "leaf_size_0", "leaf_size_negative"])
def test_bad_input_raises_value_error_naming_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        OBBTree(**kwargs)
