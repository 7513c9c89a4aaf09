"""Tests for app.pieces: settings, convexity test, convex decomposition, trees and the npz cache.

What is compared with what:

- ``DecomposeSettings``: every bad value raises ``ValueError`` whose message
  starts with the field's name; boundary values are accepted.
- ``is_convex``: known convex closed meshes (box, subdivided box, icosphere,
  hull of random points, box with inverted winding) against known concave ones
  (torus, ``assets/meshes/bowl.ply``, an L-shaped prism, two disjoint boxes)
  and open meshes (face removed, single triangle).
- Convex mesh, ``method="auto"``: one piece, method ``"hull"``, hull volume
  equal to trimesh's volume of the mesh (1e-9 relative), hull vertices equal
  (as a set of rows) to the extreme points scipy's Qhull finds.
- Concave meshes: V-HACD (torus, L prism, bowl) and CoACD (torus, once).
  Every piece is a closed, outward, convex surface (trimesh ``is_watertight``,
  ``is_winding_consistent``, ``is_convex``, volume > 0;
  ``ConvexPolyhedron.from_mesh`` accepts it) whose volume equals scipy's
  ``ConvexHull`` volume; there are at most ``max_pieces``. Coverage, with
  ``diag`` the mesh's bounding-box diagonal (values measured on this machine
  in brackets; V-HACD and CoACD are deterministic for a given input):

  ======================  ===========================  ============  ============  ==========
  case                    volume ratio sum(pieces)/V   d1 / diag     d2 / diag     interior
  ======================  ===========================  ============  ============  ==========
  torus, V-HACD, 4        [0.85, 2.0]   (1.669)        <= 0.03       <= 0.05       >= 0.75
                                                       (0.0131)      (0.0262)      (0.852)
  L prism, V-HACD, 4      [0.85, 1.6]   (1.230)        <= 0.05       <= 0.05       >= 0.75
                                                       (0.0189)      (0.0107)      (0.845)
  bowl, V-HACD, 6         [1.5, 5.0]    (3.799)        <= 0.03       <= 0.05       >= 0.80
                          (thin shell: the pieces      (0.0)         (0.0297)      (1.000)
                          fill the cavity)
  torus, CoACD, 6         [0.9, 1.5]    (1.138)        <= 0.01       <= 0.01       >= 0.90
                                                       (0.0001)      (0.0)         (1.000)
  ======================  ===========================  ============  ============  ==========

  V-HACD runs with ``shrinkWrap`` off (app/pieces.py says why), so its pieces
  are hulls of voxels and stick out of the mesh by up to about one voxel:
  (box volume / resolution)^(1/3), ~3% of the diagonal at 20000-30000 voxels.
  That is the d2 bound for V-HACD.

  d1: largest distance from a mesh vertex to the union of the pieces (the
  minimum over pieces of ``|p - closest_pt_point_convex(p, piece)|``, 0 inside
  a piece). d2: largest distance from a piece vertex to the solid mesh (0 when
  the generalized winding number says it is inside, else the distance to the
  nearest mesh triangle by ``trimesh.triangles.closest_point``). "interior":
  fraction of uniform samples inside the mesh (winding number > 1/2) that lie
  in some piece (scipy hull half-spaces). The winding number and surface
  distance helpers are themselves checked against a unit box.
- Trees: every piece tree and the combined tree pass ``validate()`` and are
  closed; ``owner`` has one entry per face of ``tree`` and the triangles with
  owner k are exactly piece k's hull triangles (as sets of coordinate triples).
- Cache: second call cached, same pieces byte for byte; the entry is a
  pickle-free npz with the documented members whose piece arrays hull to the
  returned pieces; other settings / another mesh give another key and file;
  corrupt or stale entries (truncated, random bytes, pickled meta, wrong key,
  wrong format, missing piece, NaN, 2-point piece, wrong shape, zero pieces,
  unknown method, flat piece) are rebuilt and then read back; an unwritable
  cache folder or a failing write still returns the pieces and leaves nothing
  behind; ``cache=False`` writes nothing; ``cache_dir`` honours
  ``OBBCOLLIDE_CACHE``.

Every decomposition writes to a ``tmp_path`` cache folder, never the user's.
"""

import json
import os
import zipfile

import numpy as np
import pytest
import trimesh
from scipy.spatial import ConvexHull

import collision as co
from app import pieces as P

ASSETS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "assets", "meshes")


# ---------------------------------------------------------------- meshes


def _torus():
    return trimesh.creation.torus(major_radius=1.0, minor_radius=0.35, major_sections=16, minor_sections=8)


def _l_prism(subdivide=3):
    """An L-shaped prism (the union of a 2x1x1 and a 1x1x2 box), built by hand, outward winding."""
    poly = np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]], float)
    n = len(poly)
    bottom = np.c_[poly[:, 0], np.zeros(n), poly[:, 1]]
    top = np.c_[poly[:, 0], np.ones(n), poly[:, 1]]
    faces = []
    for a, b, c in [[0, 1, 2], [0, 2, 3], [0, 3, 5], [3, 4, 5]]:
        faces += [[a, b, c], [c + n, b + n, a + n]]
    for i in range(n):
        j = (i + 1) % n
        faces += [[i, i + n, j], [j, i + n, j + n]]
    m = trimesh.Trimesh(np.vstack([bottom, top]), np.array(faces), process=False)
    if m.volume < 0:
        m.invert()
    for _ in range(subdivide):
        m = m.subdivide()
    assert m.is_watertight and m.is_winding_consistent and abs(m.volume - 3.0) < 1e-12
    return m


def _bowl():
    return trimesh.load(os.path.join(ASSETS, "bowl.ply"), process=False)


def _rows(a, decimals=12):
    """Rows of ``a`` as a set of tuples (for order-free comparison)."""
    return {tuple(r) for r in np.round(np.asarray(a, float), decimals)}


# ------------------------------------------------ independent geometry helpers


def winding_numbers(points, tris, chunk=32):
    """Generalized winding number of each point w.r.t. triangles (t, 3, 3) (van Oosterom-Strackee)."""
    points = np.asarray(points, float)
    out = np.empty(len(points))
    for s in range(0, len(points), chunk):
        r = tris[None] - points[s:s + chunk, None, None, :]  # (c, t, 3, 3)
        a, b, c = r[:, :, 0], r[:, :, 1], r[:, :, 2]
        la, lb, lc = (np.linalg.norm(x, axis=-1) for x in (a, b, c))
        num = np.einsum("...i,...i", a, np.cross(b, c))
        den = (la * lb * lc + np.einsum("...i,...i", a, b) * lc + np.einsum("...i,...i", b, c) * la
               + np.einsum("...i,...i", c, a) * lb)
        out[s:s + chunk] = 2.0 * np.arctan2(num, den).sum(1) / (4.0 * np.pi)
    return out


def surface_distances(points, tris):
    """Distance from each point to the nearest triangle (brute force, trimesh's numpy kernel)."""
    d = np.empty(len(points))
    for i, p in enumerate(np.asarray(points, float)):
        q = trimesh.triangles.closest_point(tris, np.repeat(p[None], len(tris), 0))
        d[i] = np.linalg.norm(q - p, axis=1).min()
    return d


def distance_to_solid(points, mesh):
    """0 inside the closed mesh, else the distance to its surface."""
    tris = mesh.vertices[mesh.faces]
    inside = winding_numbers(points, tris) > 0.5
    return np.where(inside, 0.0, surface_distances(points, tris))


def distance_to_union(points, hulls):
    """Distance from each point to the union of the convex pieces (0 inside one)."""
    d = np.full(len(points), np.inf)
    for h in hulls:
        q = co.closest_pt_point_convex(points, h.vertices)
        d = np.minimum(d, np.linalg.norm(q - points, axis=1))
    return d


def interior_coverage(mesh, hulls, n=2000, seed=0):
    """Fraction of uniform samples inside the mesh that lie inside some piece."""
    rng = np.random.default_rng(seed)
    lo, hi = mesh.bounds
    pts = rng.uniform(lo, hi, (n, 3))
    pts = pts[winding_numbers(pts, mesh.vertices[mesh.faces]) > 0.5]
    covered = np.zeros(len(pts), bool)
    for h in hulls:
        eq = ConvexHull(h.vertices).equations
        covered |= (pts @ eq[:, :3].T + eq[:, 3] <= 1e-12).all(1)
    return covered.mean(), len(pts)


def test_reference_helpers_on_unit_box():
    """The winding number and distances used as references are right on a unit box."""
    box = trimesh.creation.box([1, 1, 1])
    tris = box.vertices[box.faces]
    pts = np.array([[0, 0, 0], [0.4, -0.3, 0.2], [2, 0, 0], [0, 0, -0.8], [1.5, 1.5, 0]])
    w = winding_numbers(pts, tris)
    np.testing.assert_allclose(w, [1, 1, 0, 0, 0], atol=1e-9)
    d = surface_distances(pts, tris)
    np.testing.assert_allclose(d, [0.5, 0.1, 1.5, 0.3, np.sqrt(2)], atol=1e-12)
    np.testing.assert_allclose(distance_to_solid(pts, box), [0, 0, 1.5, 0.3, np.sqrt(2)], atol=1e-12)
    hull = co.ConvexPolyhedron.from_points(box.vertices)
    np.testing.assert_allclose(distance_to_union(pts, [hull]), [0, 0, 1.5, 0.3, np.sqrt(2)], atol=1e-12)


# ---------------------------------------------------------------- settings

BAD_SETTINGS = [
    ("method", "VHACD"), ("method", ""), ("method", None), ("method", 1),
    ("max_pieces", 0), ("max_pieces", -3), ("max_pieces", 4.0), ("max_pieces", "4"), ("max_pieces", None),
    ("resolution", 999), ("resolution", 0), ("resolution", 20000.0), ("resolution", "20000"),
    ("threshold", 0), ("threshold", 0.0), ("threshold", -0.1), ("threshold", 1.0001),
    ("threshold", float("nan")), ("threshold", float("inf")), ("threshold", "0.1"), ("threshold", None),
    ("max_vertices", 3), ("max_vertices", 0), ("max_vertices", 8.0), ("max_vertices", "8"),
]


@pytest.mark.parametrize("field,value", BAD_SETTINGS, ids=[f"{f}={v!r}" for f, v in BAD_SETTINGS])
def test_settings_reject_bad_value_naming_field(field, value):
    with pytest.raises(ValueError, match=rf"^{field}:"):
        P.DecomposeSettings(**{field: value})


def test_settings_accept_boundaries_and_defaults():
    s = P.DecomposeSettings()
    assert (s.method, s.max_pieces, s.resolution, s.threshold, s.max_vertices) == ("auto", 16, 100_000, 0.05, 64)
    for m in P.METHODS:
        assert P.DecomposeSettings(method=m).method == m
    s = P.DecomposeSettings(max_pieces=1, resolution=1000, threshold=1.0, max_vertices=4)
    assert (s.max_pieces, s.resolution, s.threshold, s.max_vertices) == (1, 1000, 1.0, 4)
    assert P.DecomposeSettings(threshold=1).threshold == 1
    assert P.DecomposeSettings(threshold=1e-9).threshold == 1e-9


@pytest.mark.parametrize("field", ["max_pieces", "threshold"])
def test_settings_reject_bool(field):
    with pytest.raises(ValueError, match=rf"^{field}:"):
        P.DecomposeSettings(**{field: True})


# ---------------------------------------------------------------- is_convex


def _random_hull(seed=3):
    pts = np.random.default_rng(seed).normal(size=(60, 3))
    return trimesh.convex.convex_hull(pts)


def _drop_face(m):
    return trimesh.Trimesh(m.vertices, m.faces[1:], process=False)


CONVEX = {
    "box": lambda: trimesh.creation.box([2, 1, 0.5]),
    "subdivided box": lambda: trimesh.creation.box([1, 1, 1]).subdivide().subdivide(),
    "icosphere": lambda: trimesh.creation.icosphere(subdivisions=2),
    "hull of random points": _random_hull,
    "box with inverted winding": lambda: trimesh.Trimesh(trimesh.creation.box().vertices,
                                                          trimesh.creation.box().faces[:, ::-1], process=False),
}
NOT_CONVEX = {
    "torus": _torus,
    "bowl": _bowl,
    "L prism": _l_prism,
    "L prism (coarse)": lambda: _l_prism(0),
    "two disjoint boxes": lambda: trimesh.util.concatenate(
        [trimesh.creation.box(), trimesh.creation.box().apply_translation([3, 0, 0])]),
    "open box": lambda: _drop_face(trimesh.creation.box()),
    "open icosphere": lambda: _drop_face(trimesh.creation.icosphere(subdivisions=2)),
    "single triangle": lambda: trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]], process=False),
}


@pytest.mark.parametrize("name", list(CONVEX))
def test_is_convex_true(name):
    m = CONVEX[name]()
    assert P.is_convex(m.vertices, m.faces) is True


@pytest.mark.parametrize("name", list(NOT_CONVEX))
def test_is_convex_false(name):
    m = NOT_CONVEX[name]()
    assert P.is_convex(m.vertices, m.faces) is False


# ------------------------------------------------------- convex mesh: one hull


@pytest.mark.parametrize("name", ["box", "subdivided box", "icosphere", "hull of random points"])
def test_convex_mesh_auto_is_one_hull(name, tmp_path):
    m = CONVEX[name]()
    v, f = np.asarray(m.vertices), np.asarray(m.faces)
    cp = P.convex_pieces(v, f, P.DecomposeSettings(method="auto"), cache=str(tmp_path))
    assert len(cp) == 1 and cp.method == "hull" and not cp.cached
    hull = cp.hulls[0]
    assert P._hull_volume(hull) == pytest.approx(abs(m.volume), rel=1e-9)
    assert cp.volume == pytest.approx(abs(m.volume), rel=1e-9)
    expected = v[ConvexHull(v).vertices]
    assert len(hull.vertices) == len(expected)
    assert _rows(hull.vertices) == _rows(expected)
    if name == "subdivided box":  # face-interior points are not hull vertices
        assert len(v) > 8 and len(hull.vertices) == 8


def test_hull_method_on_concave_mesh_is_its_hull(tmp_path):
    m = _torus()
    pts, method = P.decompose(m.vertices, m.faces, P.DecomposeSettings(method="hull"))
    assert method == "hull" and len(pts) == 1
    cp = P.convex_pieces(m.vertices, m.faces, P.DecomposeSettings(method="hull"), cache=str(tmp_path))
    assert len(cp) == 1 and cp.method == "hull"
    assert cp.volume == pytest.approx(m.convex_hull.volume, rel=1e-9)
    assert _rows(cp.hulls[0].vertices) == _rows(m.convex_hull.vertices)


def test_auto_on_concave_mesh_uses_vhacd(tmp_path):
    m = _l_prism(0)
    msgs = []
    cp = P.convex_pieces(m.vertices, m.faces, P.DecomposeSettings(max_pieces=2, resolution=20000),
                         cache=str(tmp_path), progress=msgs.append)
    assert cp.method == "vhacd" and 1 <= len(cp) <= 2 and cp.seconds > 0
    assert any("vhacd" in s for s in msgs)


def _fake_part(points):
    points = np.asarray(points, float)
    return points, np.zeros((1, 3), np.uint32)


def test_decompose_drops_unusable_parts_and_falls_back_to_hull(monkeypatch):
    """Parts with < 4 points or no volume are dropped; none left means the hull."""
    import vhacdx

    m = _l_prism(0)
    good = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.2, 0.2, 0.2]], float)
    flat = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float)
    tiny = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    s = P.DecomposeSettings(method="vhacd", resolution=20000)
    monkeypatch.setattr(vhacdx, "compute_vhacd", lambda *a, **k: [_fake_part(flat), _fake_part(good),
                                                                   _fake_part(tiny)])
    pts, method = P.decompose(m.vertices, m.faces, s)
    assert method == "vhacd" and len(pts) == 1 and np.array_equal(pts[0], good)
    monkeypatch.setattr(vhacdx, "compute_vhacd", lambda *a, **k: [_fake_part(flat), _fake_part(tiny)])
    pts, method = P.decompose(m.vertices, m.faces, s)
    assert method == "hull" and len(pts) == 1 and np.array_equal(pts[0], m.vertices)


# ------------------------------------------------- concave meshes: decompositions

CASES = {
    # name: (mesh factory, settings, volume ratio bounds, d1/diag, d2/diag, interior coverage min)
    "torus-vhacd": (_torus, P.DecomposeSettings(method="vhacd", max_pieces=4, resolution=30000),
                    (0.85, 2.0), 0.03, 0.05, 0.75),
    "L-vhacd": (_l_prism, P.DecomposeSettings(method="vhacd", max_pieces=4, resolution=30000),
                (0.85, 1.6), 0.05, 0.05, 0.75),
    "bowl-vhacd": (_bowl, P.DecomposeSettings(method="vhacd", max_pieces=6, resolution=20000),
                   (1.5, 5.0), 0.03, 0.05, 0.80),
    "torus-coacd": (_torus, P.DecomposeSettings(method="coacd", max_pieces=6, threshold=0.1),
                    (0.9, 1.5), 0.01, 0.01, 0.90),
}


@pytest.fixture(scope="module", params=list(CASES))
def decomposed(request, tmp_path_factory):
    factory, settings, *bounds = CASES[request.param]
    m = factory()
    folder = tmp_path_factory.mktemp("cache-" + request.param)
    cp = P.convex_pieces(m.vertices, m.faces, settings, cache=str(folder))
    return request.param, m, settings, cp, bounds


def test_pieces_are_closed_convex_and_bounded_in_number(decomposed):
    name, m, settings, cp, _ = decomposed
    assert cp.method == settings.method and not cp.cached
    assert 1 <= len(cp) <= settings.max_pieces
    assert len(cp.trees) == len(cp.hulls)
    for h in cp.hulls:
        t = trimesh.Trimesh(h.vertices, h.triangles, process=False)
        assert t.is_watertight and t.is_winding_consistent and t.is_convex
        assert t.volume > 0  # outward
        co.ConvexPolyhedron.from_mesh(h.vertices, h.triangles)  # raises unless convex and closed
        assert t.volume == pytest.approx(ConvexHull(h.vertices).volume, rel=1e-9)
    assert cp.volume == pytest.approx(sum(ConvexHull(h.vertices).volume for h in cp.hulls), rel=1e-9)


def test_pieces_cover_the_mesh(decomposed):
    """Volume ratio, two one-sided distances and interior coverage within the module docstring's bounds."""
    name, m, settings, cp, (ratio_bounds, d1_max, d2_max, cover_min) = decomposed
    diag = float(np.linalg.norm(np.ptp(m.vertices, axis=0)))
    ratio = cp.volume / abs(m.volume)
    d1 = distance_to_union(np.asarray(m.vertices, float), cp.hulls).max() / diag
    d2 = distance_to_solid(np.vstack([h.vertices for h in cp.hulls]), m).max() / diag
    cover, n = interior_coverage(m, cp.hulls)
    print(f"\n{name}: {len(cp)} pieces, volume ratio {ratio:.3f}, d1/diag {d1:.4f}, d2/diag {d2:.4f}, "
          f"interior coverage {cover:.3f} of {n} samples, {cp.seconds:.2f} s")
    assert ratio_bounds[0] <= ratio <= ratio_bounds[1], ratio
    assert d1 <= d1_max, d1
    assert d2 <= d2_max, d2
    assert cover >= cover_min, cover


def test_trees_match_pieces(decomposed):
    _, _, _, cp, _ = decomposed
    for h, t in zip(cp.hulls, cp.trees):
        assert t.validate()
        assert t.closed
        assert _rows(t.vertices[t.faces].reshape(-1, 3)) == _rows(h.vertices)
        assert len(t.faces) == len(h.triangles)
    tree = cp.tree
    assert tree.validate()
    assert tree.closed
    assert cp.owner.shape == (len(tree.faces),) and cp.owner.dtype == np.int64
    assert set(np.unique(cp.owner)) == set(range(len(cp)))
    tri_set = lambda tris: {frozenset(map(tuple, t)) for t in np.asarray(tris)}  # noqa: E731
    for k, h in enumerate(cp.hulls):
        mine = tree.vertices[tree.faces[cp.owner == k]]
        assert len(mine) == len(h.triangles)
        assert tri_set(mine) == tri_set(h.vertices[h.triangles])


def test_vhacd_more_pieces_still_fill_the_solid(tmp_path):
    """V-HACD 4 asked for 8 pieces of an L prism leaves it hollow (32% of the volume);
    convex_pieces must notice and retry with fewer pieces until they fill it."""
    m = _l_prism()
    cp = P.convex_pieces(m.vertices, m.faces, P.DecomposeSettings(method="vhacd", max_pieces=8,
                                                                   resolution=30000), cache=str(tmp_path))
    cover, _ = interior_coverage(m, cp.hulls)
    assert cp.volume / abs(m.volume) >= 0.85 and cover >= 0.75


# ---------------------------------------------------------------- cache

CACHE_SETTINGS = P.DecomposeSettings(method="vhacd", max_pieces=4, resolution=20000)


@pytest.fixture(scope="module")
def torus_mesh():
    m = _torus()
    return np.asarray(m.vertices, float), np.asarray(m.faces, np.int64)


@pytest.fixture(scope="module")
def reference(torus_mesh):
    """Uncached decomposition of the cache tests' mesh (V-HACD is deterministic)."""
    v, f = torus_mesh
    return P.convex_pieces(v, f, CACHE_SETTINGS, cache=False)


def _entry(folder, v, f, settings=CACHE_SETTINGS):
    return os.path.join(str(folder), P.cache_key(v, f, settings) + ".npz")


def _same_pieces(a, b):
    return len(a) == len(b) and a.method == b.method and all(
        x.vertices.tobytes() == y.vertices.tobytes() and np.array_equal(x.triangles, y.triangles)
        for x, y in zip(a.hulls, b.hulls))


def test_second_call_is_cached_and_identical(tmp_path, torus_mesh, reference):
    v, f = torus_mesh
    first = P.convex_pieces(v, f, CACHE_SETTINGS, cache=str(tmp_path))
    assert not first.cached and first.seconds > 0
    assert _same_pieces(first, reference)
    path = _entry(tmp_path, v, f)
    assert os.listdir(tmp_path) == [os.path.basename(path)]  # no temp file left behind
    second = P.convex_pieces(v, f, CACHE_SETTINGS, cache=str(tmp_path))
    assert second.cached and second.seconds == 0.0
    assert _same_pieces(first, second)
    assert np.array_equal(first.owner, second.owner)
    # The entry: pickle-free npz with meta and piece_<i>; each piece's hull is the returned hull.
    with np.load(path, allow_pickle=False) as z:
        names = set(z.files)
        meta = json.loads(str(z["meta"]))
        arrays = [np.array(z[f"piece_{i}"]) for i in range(len(first))]
    assert names == {"meta"} | {f"piece_{i}" for i in range(len(first))}
    assert meta["format"] == P.CACHE_FORMAT and meta["key"] == P.cache_key(v, f, CACHE_SETTINGS)
    assert meta["pieces"] == len(first) and meta["method"] == "vhacd"
    assert meta["settings"] == {"method": "vhacd", "max_pieces": 4, "resolution": 20000, "threshold": 0.05,
                                "max_vertices": 64}
    for a, h in zip(arrays, first.hulls):
        assert a.dtype == np.float64 and a.ndim == 2 and a.shape[1] == 3
        assert _rows(a[ConvexHull(a).vertices]) == _rows(h.vertices)


def test_other_settings_or_mesh_get_another_entry(tmp_path, torus_mesh):
    v, f = torus_mesh
    P.convex_pieces(v, f, CACHE_SETTINGS, cache=str(tmp_path))
    other = P.DecomposeSettings(method="vhacd", max_pieces=3, resolution=20000)
    cp = P.convex_pieces(v, f, other, cache=str(tmp_path))
    assert not cp.cached and len(cp) <= 3
    v2 = v.copy()
    v2[0, 0] = np.nextafter(v2[0, 0], np.inf)
    cp = P.convex_pieces(v2, f, CACHE_SETTINGS, cache=str(tmp_path))
    assert not cp.cached
    assert len(set(os.listdir(tmp_path))) == 3
    assert P.convex_pieces(v2, f, CACHE_SETTINGS, cache=str(tmp_path)).cached


def test_cache_key_distinguishes_inputs(torus_mesh):
    v, f = torus_mesh
    base = P.cache_key(v, f, CACHE_SETTINGS)
    assert len(base) == 40 and all(c in "0123456789abcdef" for c in base)
    # Same arrays in other dtypes / layouts: same key.
    assert P.cache_key(v.tolist(), f.astype(np.int32), CACHE_SETTINGS) == base
    assert P.cache_key(np.asfortranarray(v), f.astype(np.uint32), CACHE_SETTINGS) == base
    keys = {base}
    for change in [dict(method="coacd"), dict(max_pieces=5), dict(resolution=20001), dict(threshold=0.06),
                   dict(max_vertices=32)]:
        fields = dict(method="vhacd", max_pieces=4, resolution=20000, threshold=0.05, max_vertices=64)
        fields.update(change)
        keys.add(P.cache_key(v, f, P.DecomposeSettings(**fields)))
    v2 = v.copy()
    v2[-1, 2] += 1e-12
    keys.add(P.cache_key(v2, f, CACHE_SETTINGS))
    keys.add(P.cache_key(v, f[::-1], CACHE_SETTINGS))
    keys.add(P.cache_key(v, f[:, [1, 2, 0]], CACHE_SETTINGS))
    keys.add(P.cache_key(v[:-1], f[:-1], CACHE_SETTINGS))
    assert len(keys) == 10


def test_equal_settings_same_key(torus_mesh):
    v, f = torus_mesh
    a, b = P.DecomposeSettings(threshold=1), P.DecomposeSettings(threshold=1.0)
    assert a == b
    assert P.cache_key(v, f, a) == P.cache_key(v, f, b)


def _rewrite(path, mutate):
    """Load the npz members, let ``mutate`` change the dict, save it back (no pickle unless asked)."""
    with np.load(path, allow_pickle=False) as z:
        members = {k: np.array(z[k]) for k in z.files}
    meta = json.loads(str(members["meta"]))
    mutate(members, meta)
    if "meta" in members and members["meta"].dtype != object:
        members["meta"] = np.array(json.dumps(meta))
    with open(path, "wb") as fh:
        np.savez(fh, **members)


def _corrupt_truncate(path):
    data = open(path, "rb").read()
    open(path, "wb").write(data[: len(data) // 2])


def _corrupt_random(path):
    open(path, "wb").write(np.random.default_rng(1).bytes(4096))


def _corrupt_empty(path):
    open(path, "wb").close()


def _set_meta(**kw):
    return lambda path: _rewrite(path, lambda mem, meta: meta.update(kw))


def _set_piece(i, value):
    def mutate(mem, meta):
        mem[f"piece_{i}"] = np.asarray(value)
    return lambda path: _rewrite(path, mutate)


def _missing_piece(path):
    def mutate(mem, meta):
        del mem[f"piece_{meta['pieces'] - 1}"]
    _rewrite(path, mutate)


def _nan_piece(path):
    def mutate(mem, meta):
        p = mem["piece_0"].copy()
        p[1, 2] = np.nan
        mem["piece_0"] = p
    _rewrite(path, mutate)


def _pickled_meta(path):
    def mutate(mem, meta):
        mem["meta"] = np.array([meta], dtype=object)
    _rewrite(path, mutate)


def _no_meta(path):
    _rewrite(path, lambda mem, meta: mem.pop("meta"))


def _meta_not_json(path):
    def mutate(mem, meta):
        mem["meta"] = np.array("{not json")
    with np.load(path, allow_pickle=False) as z:
        members = {k: np.array(z[k]) for k in z.files}
    mutate(members, None)
    with open(path, "wb") as fh:
        np.savez(fh, **members)


CORRUPTIONS = {
    "truncated": _corrupt_truncate,
    "random bytes": _corrupt_random,
    "empty file": _corrupt_empty,
    "pickled meta": _pickled_meta,
    "no meta": _no_meta,
    "meta not json": _meta_not_json,
    "wrong key": _set_meta(key="0" * 40),
    "wrong format": _set_meta(format=P.CACHE_FORMAT + 1),
    "format as string": _set_meta(format=str(P.CACHE_FORMAT)),
    "zero pieces": _set_meta(pieces=0),
    "unknown method": _set_meta(method="magic"),
    "missing piece": _missing_piece,
    "NaN in piece": _nan_piece,
    "piece with 2 points": _set_piece(0, [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]),
    "piece of shape (5, 2)": _set_piece(0, np.ones((5, 2))),
    "piece of strings": _set_piece(0, np.array([["a", "b", "c"]] * 4)),
    "flat piece": _set_piece(0, [[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]),
    "duplicate points piece": _set_piece(0, np.ones((6, 3))),
}


@pytest.mark.parametrize("corrupt", list(CORRUPTIONS.values()), ids=list(CORRUPTIONS))
def test_corrupt_entry_is_rebuilt(corrupt, tmp_path, torus_mesh, reference):
    v, f = torus_mesh
    folder = str(tmp_path)
    P.convex_pieces(v, f, CACHE_SETTINGS, cache=folder)
    path = _entry(folder, v, f)
    corrupt(path)
    msgs = []
    rebuilt = P.convex_pieces(v, f, CACHE_SETTINGS, cache=folder, progress=msgs.append)
    assert not rebuilt.cached
    assert any("rebuild" in s for s in msgs)
    assert _same_pieces(rebuilt, reference)
    # The entry is valid again, and the next call reads it.
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        assert meta["key"] == P.cache_key(v, f, CACHE_SETTINGS) and meta["format"] == P.CACHE_FORMAT
        assert zipfile.is_zipfile(path)
    again = P.convex_pieces(v, f, CACHE_SETTINGS, cache=folder)
    assert again.cached and _same_pieces(again, reference)
    assert sorted(os.listdir(folder)) == [os.path.basename(path)]


def test_unwritable_cache_folder_still_returns_pieces(tmp_path, torus_mesh, reference):
    v, f = torus_mesh
    blocker = tmp_path / "regular-file"
    blocker.write_text("not a folder")
    folder = str(blocker / "cache")
    for _ in range(2):
        cp = P.convex_pieces(v, f, CACHE_SETTINGS, cache=folder)
        assert not cp.cached and _same_pieces(cp, reference)
    assert sorted(os.listdir(tmp_path)) == ["regular-file"] and blocker.read_text() == "not a folder"


def test_failed_write_leaves_nothing(tmp_path, torus_mesh, reference, monkeypatch):
    v, f = torus_mesh

    def failing_savez(fh, **members):
        fh.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", failing_savez)
    cp = P.convex_pieces(v, f, CACHE_SETTINGS, cache=str(tmp_path / "c"))
    assert not cp.cached and _same_pieces(cp, reference)
    assert os.listdir(tmp_path / "c") == []


def test_cache_false_writes_nothing(tmp_path, torus_mesh, monkeypatch):
    v, f = torus_mesh
    for var, sub in [("OBBCOLLIDE_CACHE", "env"), ("XDG_CACHE_HOME", "xdg"), ("HOME", "home")]:
        (tmp_path / sub).mkdir()
        monkeypatch.setenv(var, str(tmp_path / sub))
    s = P.DecomposeSettings(method="hull")
    for _ in range(2):
        cp = P.convex_pieces(v, f, s, cache=False)
        assert not cp.cached
    assert [os.listdir(tmp_path / sub) for sub in ("env", "xdg", "home")] == [[], [], []]


def test_cache_dir_honours_env(tmp_path, torus_mesh, monkeypatch):
    v, f = torus_mesh
    target = tmp_path / "from-env" / "nested"
    monkeypatch.setenv("OBBCOLLIDE_CACHE", str(target))
    assert P.cache_dir() == str(target)
    s = P.DecomposeSettings(method="hull")
    assert not P.convex_pieces(v, f, s, cache=True).cached
    assert os.listdir(target) == [P.cache_key(v, f, s) + ".npz"]
    assert P.convex_pieces(v, f, s).cached  # cache=True is the default
    monkeypatch.delenv("OBBCOLLIDE_CACHE")
    import platformdirs

    expected = os.path.join(platformdirs.user_cache_dir("obbcollide"), "pieces")
    assert P.cache_dir() == expected
    monkeypatch.setenv("OBBCOLLIDE_CACHE", "")
    assert P.cache_dir() == expected
