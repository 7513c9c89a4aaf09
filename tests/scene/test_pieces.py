"""Tests for app.scene.pieces: settings, convexity test, convex decomposition, trees and the npz cache.

What is compared with what:

- ``DecomposeSettings``: every bad value raises ``ValueError`` whose message
  starts with the field's name; boundary values are accepted.
- ``is_convex``: known convex closed meshes (box, subdivided box, icosphere,
  hull of random points, box with inverted winding) against known concave ones
  (torus, ``assets/meshes/bowl.ply``, an L-shaped prism, two disjoint boxes)
  and open or inconsistently wound meshes (face removed, single triangle, one
  face of a box flipped); its closedness test equals ``OBBTree.closed``.
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
  torus, V-HACD, 4        [0.85, 2.5]   (2.121)        <= 1e-9       <= 0.05       >= 0.75
                                                       (0.0)         (0.0262)      (1.000)
  L prism, V-HACD, 4      [0.85, 1.6]   (1.249)        <= 1e-9       <= 0.05       >= 0.75
                                                       (0.0)         (0.0107)      (0.858)
  bowl, V-HACD, 6         [1.5, 5.0]    (3.813)        <= 1e-9       <= 0.05       >= 0.80
                          (thin shell: the pieces      (0.0)         (0.0297)      (1.000)
                          fill the cavity)
  torus, CoACD, 6         [0.9, 1.5]    (1.188)        <= 1e-9       <= 0.01       >= 0.90
                                                       (0.0)         (0.0)         (1.000)
  ======================  ===========================  ============  ============  ==========

  V-HACD runs with ``shrinkWrap`` off (app/scene/pieces.py says why), so its pieces
  are hulls of voxels and stick out of the mesh by up to about one voxel:
  (box volume / resolution)^(1/3), ~3% of the diagonal at 20000-30000 voxels.
  That is the d2 bound for V-HACD. Every decomposition's pieces are grown to
  hold the whole surface (``app.scene.surface_cover.cover_surface``), so d1 is 0 and the volume
  ratio is larger where the pieces had to grow over seams and misses (the
  torus in 4 V-HACD pieces: 1.669 before growing). The surface's coverage is
  also checked on 20000 uniform samples of the surface (distance to the
  union <= 1e-9 of the diagonal), for these cases and for the project's blob
  in 8 V-HACD pieces, which alone left vertices 11.7 mm outside every piece;
  ``cover_surface`` itself on an L prism given as two boxes that miss its surface by
  5 cm.

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
- Cache: second call cached, hulls (every field), piece trees, the tree over
  all pieces and the owners bitwise equal to the first call's; a cache hit
  calls no Qhull, no ``ConvexPolyhedron.from_points``, no OBB build and no
  decomposition (they are replaced by functions that fail); the entry is a
  pickle-free npz of ``meta``, ``floats`` and ``ints`` laid out as
  ``app/scene/pieces.py`` documents (checked here for the vertices without the
  module's helpers); ``OBBTree.from_arrays`` sets the same attributes as
  ``OBBTree.__init__`` with equal values and the trees give the same
  ``collide`` pairs; other settings / another mesh give another key and file.
  Corrupt or stale entries are rebuilt and then read back: broken files
  (truncated, random bytes, empty, a byte flipped at three places: the zip
  CRC), bad meta (pickled, missing, not JSON, wrong key / format / piece
  count / method / tree fit / row counts), bad members (missing, wrong
  dtype or shape) and, written as valid npz with consistent row counts so
  only the content checks can catch them: a NaN vertex, a vertex pushed out
  of its planes, a flat piece, triangle indices out of range, a flipped or
  missing triangle, a non-unit normal, a moved plane, polygon and edge
  indices out of range, offsets out of order, tree links that are not a
  tree, a box too small, axes not orthonormal or left-handed, a wrong
  radius, NaN in a box, a leaf order that repeats or goes negative. These
  tests answer the decomposition from the reference's hulls
  (``quick_decompose``), so a rebuild costs no V-HACD run. An unwritable
  cache folder or a failing write still returns the pieces and leaves
  nothing behind; ``cache=False`` writes nothing; ``cache_dir`` honours
  ``OBBCOLLIDE_CACHE``.
- Progress: a two-argument callback gets the decomposition stage (fraction
  None) and the hulls-and-trees stage with fractions rising to 1.

Every decomposition writes to a ``tmp_path`` cache folder, never the user's.
"""

import json
import os
import sys
import zipfile

import numpy as np
import pytest
import trimesh
from scipy.spatial import ConvexHull

import obbcollide as co
from app.scene import decompose as D
from app.scene import pieces as P
from app.scene import pieces_cache as PC
from app.scene.surface_cover import cover_surface

ASSETS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "assets", "meshes")


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
    "box with one face flipped": lambda: trimesh.Trimesh(
        trimesh.creation.box().vertices,
        np.vstack([trimesh.creation.box().faces[:1, ::-1], trimesh.creation.box().faces[1:]]), process=False),
}


@pytest.mark.parametrize("name", list(CONVEX))
def test_is_convex_true(name):
    m = CONVEX[name]()
    assert P.is_convex(m.vertices, m.faces) is True


@pytest.mark.parametrize("name", list(NOT_CONVEX))
def test_is_convex_false(name):
    m = NOT_CONVEX[name]()
    assert P.is_convex(m.vertices, m.faces) is False


@pytest.mark.parametrize("name", list(CONVEX) + list(NOT_CONVEX))
def test_closed_agrees_with_obb_tree(name):
    """is_convex's closedness test against collision's (OBBTree.closed, a compiled kernel)."""
    m = {**CONVEX, **NOT_CONVEX}[name]()
    f = np.asarray(m.faces, np.int64)
    assert D._closed(f) == co.OBBTree(np.asarray(m.vertices, float), f).closed


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


def test_progress_stages_and_fractions(tmp_path):
    m = _l_prism(0)
    seen = []
    cp = P.convex_pieces(m.vertices, m.faces, P.DecomposeSettings(max_pieces=2, resolution=20000),
                         cache=str(tmp_path), progress=lambda stage, fraction: seen.append((stage, fraction)))
    assert all(isinstance(s, str) and (f is None or 0.0 <= f <= 1.0) for s, f in seen), seen
    assert any(s.startswith("vhacd: decomposing") and f is None for s, f in seen), seen
    trees = [f for s, f in seen if s.startswith("hulls and OBB trees")]
    assert trees[0] == 0.0 and trees[-1] == 1.0 and trees == sorted(trees) and len(trees) == len(cp) + 2
    seen.clear()
    assert P.convex_pieces(m.vertices, m.faces, P.DecomposeSettings(max_pieces=2, resolution=20000),
                           cache=str(tmp_path), progress=lambda stage, fraction: seen.append(stage)).cached
    assert seen == []  # a cache hit is too quick to report


def _fake_part(points):
    points = np.asarray(points, float)
    return points, np.zeros((1, 3), np.uint32)


def test_decompose_drops_unusable_parts_and_falls_back_to_hull(monkeypatch):
    """Parts with < 4 points or no volume are dropped (the one left is then grown to hold the
    surface: its points come first); none left means the hull."""
    import vhacdx

    m = _l_prism(0)
    good = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.2, 0.2, 0.2]], float)
    flat = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float)
    tiny = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    s = P.DecomposeSettings(method="vhacd", resolution=20000)
    monkeypatch.setattr(vhacdx, "compute_vhacd", lambda *a, **k: [_fake_part(flat), _fake_part(good),
                                                                   _fake_part(tiny)])
    pts, method = P.decompose(m.vertices, m.faces, s)
    assert method == "vhacd" and len(pts) == 1 and np.array_equal(pts[0][:len(good)], good)
    monkeypatch.setattr(vhacdx, "compute_vhacd", lambda *a, **k: [_fake_part(flat), _fake_part(tiny)])
    pts, method = P.decompose(m.vertices, m.faces, s)
    assert method == "hull" and len(pts) == 1 and np.array_equal(pts[0], m.vertices)


@pytest.mark.parametrize("method, package", [("vhacd", "vhacdx"), ("coacd", "coacd")])
def test_a_missing_decomposer_is_named_with_how_to_install_it(method, package, monkeypatch):
    """``import`` raising ModuleNotFoundError (not installed) or another ImportError (a broken
    install): DecomposerMissing, an ImportError naming the method, the package and the pip command."""
    import importlib

    m = _l_prism(0)
    s = P.DecomposeSettings(method=method)
    monkeypatch.setitem(sys.modules, package, None)  # what Python does for a module it cannot find
    with pytest.raises(P.DecomposerMissing) as err:
        P.decompose(m.vertices, m.faces, s)
    assert isinstance(err.value, ImportError)
    assert str(err.value) == (f"{method} needs the Python package {package!r}, which is not installed "
                              f"(pip install {package})")
    monkeypatch.delitem(sys.modules, package)
    real = importlib.import_module

    def broken(name, *args):
        if name == package:
            raise ImportError("libgomp.so.1: cannot open shared object file")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(P.DecomposerMissing) as err:
        P.convex_pieces(m.vertices, m.faces, s, cache=False)
    assert "cannot be imported (libgomp.so.1" in str(err.value) and f"pip install {package}" in str(err.value)


# ------------------------------------------------- concave meshes: decompositions

CASES = {
    # name: (mesh factory, settings, volume ratio bounds, d1/diag, d2/diag, interior coverage min)
    "torus-vhacd": (_torus, P.DecomposeSettings(method="vhacd", max_pieces=4, resolution=30000),
                    (0.85, 2.5), 1e-9, 0.05, 0.75),
    "L-vhacd": (_l_prism, P.DecomposeSettings(method="vhacd", max_pieces=4, resolution=30000),
                (0.85, 1.6), 1e-9, 0.05, 0.75),
    "bowl-vhacd": (_bowl, P.DecomposeSettings(method="vhacd", max_pieces=6, resolution=20000),
                   (1.5, 5.0), 1e-9, 0.05, 0.80),
    "torus-coacd": (_torus, P.DecomposeSettings(method="coacd", max_pieces=6, threshold=0.1),
                    (0.9, 1.5), 1e-9, 0.01, 0.90),
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


def surface_samples(m, n=20000, seed=0):
    """The mesh's vertices and ``n`` uniform samples of its surface (n, 3)."""
    return np.vstack([m.vertices, trimesh.sample.sample_surface(m, n, seed=seed)[0]])


def test_pieces_cover_the_surface(decomposed):
    """Every point of the surface lies in a piece (cover_surface): nothing a person sees is left out of the
    collision shapes."""
    name, m, _, cp, _ = decomposed
    diag = float(np.linalg.norm(np.ptp(m.vertices, axis=0)))
    out = distance_to_union(surface_samples(m), cp.hulls).max()
    assert out <= 1e-9 * diag, (name, out / diag)


def test_vhacd_pieces_cover_the_blob(tmp_path):
    """The project's blob at the scale of the bowl_pile scene: V-HACD's 8 voxel hulls alone left
    vertices 11.7 mm (0.9% of the diagonal) outside every piece; grown, they hold the whole surface."""
    from app.scene.mesh_io import load_mesh

    m = load_mesh(os.path.join(ASSETS, "blob.ply"), scale=0.7)
    cp = P.convex_pieces(m.vertices, m.faces, P.DecomposeSettings(method="vhacd", max_pieces=8), cache=str(tmp_path))
    diag = float(np.linalg.norm(np.ptp(m.vertices, axis=0)))
    out = distance_to_union(surface_samples(m), cp.hulls).max()
    print(f"\nblob, V-HACD, {len(cp)} pieces: surface outside the pieces {out * 1000:.4f} mm ({cp.seconds:.1f} s)")
    assert out <= 1e-9 * diag


def test_cover_grows_pieces_that_miss_the_surface():
    """An L prism given as two boxes that stop 5 cm short of its faces and leave a 10 cm gap between
    them: the faces not inside one piece are added to the nearest piece, which then holds them; no
    piece is added and every added point is a point of the surface."""
    m = _l_prism(1)
    a = trimesh.creation.box(bounds=[[0.05, 0.05, 0.05], [1.9, 0.95, 0.95]]).vertices
    b = trimesh.creation.box(bounds=[[0.05, 0.05, 1.05], [0.95, 0.95, 1.95]]).vertices
    boxes = [co.ConvexPolyhedron.from_points(x) for x in (a, b)]
    assert distance_to_union(surface_samples(m, 2000), boxes).max() > 0.04
    grown = cover_surface(np.asarray(m.vertices, float), np.asarray(m.faces, np.int64), [a, b])
    assert len(grown) == 2 and len(grown[0]) > len(a) and len(grown[1]) > len(b)
    added = np.vstack([grown[0][len(a):], grown[1][len(b):]])
    assert surface_distances(added, m.vertices[m.faces]).max() < 1e-12
    hulls = [co.ConvexPolyhedron.from_points(x) for x in grown]
    assert distance_to_union(surface_samples(m, 5000), hulls).max() <= 1e-9 * 3
    same = cover_surface(np.asarray(m.vertices, float), np.asarray(m.faces, np.int64), grown)
    assert all(x is y for x, y in zip(same, grown))  # covered: nothing to add


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


@pytest.fixture(scope="module")
def reference_points(torus_mesh):
    """What ``P.decompose`` gives for the cache tests' mesh (deterministic): the pieces' point sets."""
    return P.decompose(*torus_mesh, CACHE_SETTINGS)


@pytest.fixture
def quick_decompose(monkeypatch, torus_mesh, reference_points):
    """``P.decompose`` answering the torus from the reference's point sets (no V-HACD run),
    for tests about the cache file, not about decomposing; calls are counted."""
    calls = []
    real = P.decompose
    torus_key = P.cache_key(*torus_mesh, CACHE_SETTINGS)

    def fake(v, f, settings=P.DecomposeSettings(), progress=None):
        calls.append(settings)
        if P.cache_key(v, f, settings) == torus_key:
            pts, method = reference_points
            return [p.copy() for p in pts], method
        return real(v, f, settings, progress)

    monkeypatch.setattr(P, "decompose", fake)
    return calls


def _entry(folder, v, f, settings=CACHE_SETTINGS):
    return os.path.join(str(folder), P.cache_key(v, f, settings) + ".npz")


def _same_pieces(a, b):
    return len(a) == len(b) and a.method == b.method and all(
        x.vertices.tobytes() == y.vertices.tobytes() and np.array_equal(x.triangles, y.triangles)
        for x, y in zip(a.hulls, b.hulls))


TREE_ARRAYS = ("vertices", "faces", "nodes", "links", "tri_index", "triangles", "centers", "axes", "half_extents",
               "child", "start", "count")


def _same_tree(a, b):
    """Every array attribute equal, bit for bit, and the same fit and leaf size."""
    return (a.fit == b.fit and a.leaf_size == b.leaf_size
            and all(getattr(a, k).dtype == getattr(b, k).dtype and getattr(a, k).tobytes() == getattr(b, k).tobytes()
                    for k in TREE_ARRAYS))


def _same_everything(a, b):
    """Hulls (all fields), piece trees, the tree over all pieces and the owners: bitwise equal."""
    if not _same_pieces(a, b) or not np.array_equal(a.owner, b.owner) or a.owner.dtype != b.owner.dtype:
        return False
    for x, y in zip(a.hulls, b.hulls):
        if not (np.array_equal(x.normals, y.normals) and np.array_equal(x.offsets, y.offsets)
                and np.array_equal(x.edges, y.edges) and len(x.polygons) == len(y.polygons)
                and all(np.array_equal(p, q) for p, q in zip(x.polygons, y.polygons))):
            return False
    return all(_same_tree(s, t) for s, t in zip(a.trees, b.trees)) and _same_tree(a.tree, b.tree)


def test_second_call_is_cached_and_identical(tmp_path, torus_mesh, reference):
    v, f = torus_mesh
    first = P.convex_pieces(v, f, CACHE_SETTINGS, cache=str(tmp_path))
    assert not first.cached and first.seconds > 0
    assert _same_everything(first, reference)
    path = _entry(tmp_path, v, f)
    assert os.listdir(tmp_path) == [os.path.basename(path)]  # no temp file left behind
    second = P.convex_pieces(v, f, CACHE_SETTINGS, cache=str(tmp_path))
    assert second.cached and second.seconds == 0.0
    assert _same_everything(first, second)
    assert second.volume == first.volume
    for t in second.trees + [second.tree]:
        assert t.validate() and t.closed
    # The entry: a pickle-free npz of three members.
    with np.load(path, allow_pickle=False) as z:
        names = set(z.files)
        meta = json.loads(str(z["meta"]))
        floats, ints = z["floats"], z["ints"]
    assert names == {"meta", "floats", "ints"}
    assert floats.dtype == np.float64 and ints.dtype == np.int64
    assert meta["format"] == P.CACHE_FORMAT and meta["key"] == P.cache_key(v, f, CACHE_SETTINGS)
    assert meta["pieces"] == len(first) and meta["method"] == "vhacd"
    assert meta["settings"] == {"method": "vhacd", "max_pieces": 4, "resolution": 20000, "threshold": 0.05,
                                "max_vertices": 64}
    assert meta["tree"] == {"fit": "vertex", "leaf_size": 1}
    # The documented layout, read here without the module's helpers: the first float
    # array is every hull's vertices, piece after piece.
    rows = meta["rows"]
    assert rows["vertices"] == sum(len(h.vertices) for h in first.hulls)
    stored = floats[:3 * rows["vertices"]].reshape(-1, 3)
    assert np.array_equal(stored, np.concatenate([h.vertices for h in first.hulls]))
    assert len(floats) == sum(rows[k] * w for k, w in PC._FLOATS.items())
    assert len(ints) == sum(rows[k] * w for k, w in PC._INTS.items())


def test_cache_hit_builds_no_hull_and_no_tree(tmp_path, torus_mesh, reference, monkeypatch):
    """A hit reads the hulls and trees: Qhull, ConvexPolyhedron.from_points and the OBB build are not called."""
    v, f = torus_mesh
    P.convex_pieces(v, f, CACHE_SETTINGS, cache=str(tmp_path))

    def forbidden(*a, **k):
        raise AssertionError("a cache hit must not rebuild")

    import obbcollide.convex
    import obbcollide.obb_tree
    monkeypatch.setattr(co.OBBTree, "__init__", forbidden)
    monkeypatch.setattr(co.ConvexPolyhedron, "from_points", forbidden)
    monkeypatch.setattr(obbcollide.convex, "ConvexHull", forbidden)
    monkeypatch.setattr(obbcollide.obb_tree, "_build_kernel", forbidden)
    monkeypatch.setattr(P, "decompose", forbidden)
    hit = P.convex_pieces(v, f, CACHE_SETTINGS, cache=str(tmp_path))
    assert hit.cached and _same_everything(hit, reference)


def test_tree_from_arrays_equals_a_built_tree():
    """OBBTree.from_arrays (how a cache hit makes its trees) sets what OBBTree.__init__ sets (same attribute
    names, equal values), and the trees answer queries alike; if OBBTree gains an attribute, this test
    names it."""
    rng = np.random.default_rng(5)
    hull = co.ConvexPolyhedron.from_points(rng.normal(size=(80, 3)))
    built = co.OBBTree(hull.vertices, hull.triangles)
    made = co.OBBTree.from_arrays(built.vertices, built.faces, built.nodes.copy(), built.links.copy(),
                                  built.tri_index.copy(), built.fit, built.leaf_size)
    assert set(vars(made)) == set(vars(built)), set(vars(made)) ^ set(vars(built))
    for name, value in vars(built).items():
        other = getattr(made, name)
        if isinstance(value, np.ndarray):
            assert other.dtype == value.dtype and np.array_equal(other, value), name
        elif isinstance(value, tuple):
            assert len(other) == len(value) and all(np.array_equal(x, y) for x, y in zip(other, value)), name
        else:
            assert other == value, name
    # the views are views of the packed arrays, as in a built tree
    assert np.shares_memory(made.centers, made.nodes) and np.shares_memory(made.child, made.links)
    assert made.validate() and made.closed and made.depth == built.depth
    tor = _torus()
    tt = co.OBBTree(np.asarray(tor.vertices), np.asarray(tor.faces))
    pose = np.eye(4)
    pose[:3, 3] = [1.0, 0.2, 0.1]
    a, b = co.collide(made, pose, tt, np.eye(4)), co.collide(built, pose, tt, np.eye(4))
    assert np.array_equal(a.pairs, b.pairs) and len(a.pairs) > 0


def test_cache_hit_time_is_reported(tmp_path, torus_mesh, quick_decompose):
    """Printed, not asserted (CI machines vary): test_cache_hit_builds_no_hull_and_no_tree is the check."""
    import time

    v, f = torus_mesh
    n = len(P.convex_pieces(v, f, CACHE_SETTINGS, cache=str(tmp_path)))
    P.convex_pieces(v, f, CACHE_SETTINGS, cache=str(tmp_path))  # warm: the check kernels loaded
    ts = []
    for _ in range(5):
        t = time.perf_counter()
        assert P.convex_pieces(v, f, CACHE_SETTINGS, cache=str(tmp_path)).cached
        ts.append(time.perf_counter() - t)
    print(f"\ncached load of the torus' {n} pieces: median {np.median(ts) * 1e3:.2f} ms")


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


# -- corrupt entries. Each mutation rewrites the entry as a valid npz (unless the
# point is a broken file), with the meta's row counts kept consistent, so only
# the check of the content can catch it.


def _members(path):
    with np.load(path, allow_pickle=False) as z:
        return {k: np.array(z[k]) for k in z.files}


def _save(path, members):
    with open(path, "wb") as fh:
        np.savez(fh, **members)


def _edit(mutate):
    """A corruption that unpacks the arrays, lets ``mutate(arrays, meta)`` change them, and packs them back."""
    def corrupt(path):
        mem = _members(path)
        meta = json.loads(str(mem["meta"]))
        arrays = {k: np.array(x) for k, x in PC._unpack(mem["floats"], mem["ints"], meta["rows"]).items()}
        mutate(arrays, meta)
        floats, ints, rows = PC._pack(arrays)
        meta["rows"] = rows
        _save(path, {"meta": np.array(json.dumps(meta)), "floats": floats, "ints": ints})
    return corrupt


def _set_meta(**kw):
    def corrupt(path):
        mem = _members(path)
        meta = json.loads(str(mem["meta"]))
        meta.update(kw)
        mem["meta"] = np.array(json.dumps(meta))
        _save(path, mem)
    return corrupt


def _member(name, value):
    def corrupt(path):
        mem = _members(path)
        if value is None:
            del mem[name]
        else:
            mem[name] = value(mem[name]) if callable(value) else value
        _save(path, mem)
    return corrupt


def _corrupt_truncate(path):
    data = open(path, "rb").read()
    open(path, "wb").write(data[: len(data) // 2])


def _corrupt_random(path):
    open(path, "wb").write(np.random.default_rng(1).bytes(4096))


def _corrupt_empty(path):
    open(path, "wb").close()


def _flip_byte(frac):
    def corrupt(path):
        data = bytearray(open(path, "rb").read())
        data[int(frac * (len(data) - 1))] ^= 0x10
        open(path, "wb").write(bytes(data))
    return corrupt


def _pickled_meta(path):
    mem = _members(path)
    mem["meta"] = np.array([json.loads(str(mem["meta"]))], dtype=object)
    _save(path, mem)


def _piece_rows(arrays, name, k=0):
    """Piece k's rows of an array cut by a ``*_start`` array."""
    start = {"vertices": "vertex_start", "triangles": "triangle_start", "normals": "face_start",
             "offsets": "face_start", "edges": "edge_start", "nodes": "node_start", "links": "node_start",
             "tri_index": "triangle_start"}[name]
    s = arrays[start]
    return slice(int(s[k]), int(s[k + 1]))


def _in_piece(name, change, k=0):
    def mutate(a, meta):
        sl = _piece_rows(a, name, k)
        a[name][sl] = change(a[name][sl].copy(), a)
    return _edit(mutate)


def _bulge(v, a):
    """Push one hull vertex outward 20% from the centroid: its planes no longer hold it."""
    c = v.mean(0)
    v[0] = c + 1.2 * (v[0] - c)
    return v


def _flat(v, a):
    v[:, 2] = 0.0
    return v


def _flip_triangle(t, a):
    t[0] = t[0, ::-1]
    return t


def _drop_triangle(a, meta):
    """Remove piece 0's first triangle (and its leaf) from every array: the hull is open."""
    a["triangles"] = a["triangles"][1:]
    a["triangle_start"][1:] -= 1
    a["tri_index"] = np.delete(a["tri_index"], 0)


def _swap_children(links, a):
    links[0, 0] = 0  # the root its own child
    return links


def _child_out_of_range(links, a):
    links[0, 0] = 10 ** 9
    return links


def _wrong_count(links, a):
    leaf = int(np.flatnonzero(links[:, 0] < 0)[0])
    links[leaf, 2] += 1
    return links


def _shrink_root(nodes, a):
    nodes[0, 12:15] *= 0.5
    return nodes


def _skew_axes(nodes, a):
    nodes[0, 3:6] *= 1.01
    return nodes


def _mirror_axes(nodes, a):
    nodes[0, 9:12] *= -1.0  # left-handed frame
    return nodes


def _bad_radius(nodes, a):
    nodes[0, 15] *= 0.5
    return nodes


def _repeat_leaf(ti, a):
    ti[1] = ti[0]
    return ti


def _negative_leaf(ti, a):
    ti[0] = -1
    return ti


def _tree_nodes(change):
    def mutate(a, meta):
        a["tree_nodes"] = change(a["tree_nodes"].copy(), a)
    return _edit(mutate)


def _set(name, index, value):
    def mutate(a, meta):
        a[name][index] = value
    return _edit(mutate)


CORRUPTIONS = {
    # the file
    "truncated": _corrupt_truncate,
    "random bytes": _corrupt_random,
    "empty file": _corrupt_empty,
    "byte flipped at 30%": _flip_byte(0.3),
    "byte flipped at 60%": _flip_byte(0.6),
    "byte flipped at 90%": _flip_byte(0.9),
    # the meta
    "pickled meta": _pickled_meta,
    "no meta": _member("meta", None),
    "meta not json": _member("meta", np.array("{not json")),
    "meta a list": _member("meta", np.array("[1, 2]")),
    "wrong key": _set_meta(key="0" * 40),
    "wrong format": _set_meta(format=P.CACHE_FORMAT + 1),
    "previous format": _set_meta(format=P.CACHE_FORMAT - 1),
    "format as string": _set_meta(format=str(P.CACHE_FORMAT)),
    "zero pieces": _set_meta(pieces=0),
    "one piece more": lambda path: _set_meta(pieces=json.loads(str(_members(path)["meta"]))["pieces"] + 1)(path),
    "unknown method": _set_meta(method="magic"),
    "method auto": _set_meta(method="auto"),
    "other tree fit": _set_meta(tree={"fit": "area", "leaf_size": 1}),
    "rows off by one": lambda path: _set_meta(rows=dict(json.loads(str(_members(path)["meta"]))["rows"],
                                                         vertices=json.loads(str(_members(path)["meta"]))["rows"]
                                                         ["vertices"] - 1))(path),
    # the members
    "no floats": _member("floats", None),
    "ints as float": _member("ints", lambda x: x.astype(np.float64)),
    "floats as float32": _member("floats", lambda x: x.astype(np.float32)),
    "floats 2-D": _member("floats", lambda x: x.reshape(1, -1)),
    "floats of strings": _member("floats", np.array(["a", "b"])),
    # the hulls
    "NaN vertex": _set("vertices", (1, 2), np.nan),
    "vertex outside its planes": _in_piece("vertices", _bulge),
    "flat piece": _in_piece("vertices", _flat),
    "triangle index out of range": _set("triangles", (0, 0), 10 ** 6),
    "negative triangle index": _set("triangles", (0, 1), -1),
    "triangle flipped": _in_piece("triangles", _flip_triangle),
    "triangle dropped (open hull)": _edit(_drop_triangle),
    "normal not unit": _set("normals", (0, 0), 2.0),
    "plane offset moved": _set("offsets", 0, 0.5),
    "polygon index out of range": _set("polygons", 0, 10 ** 6),
    "edge out of range": _set("edges", (0, 1), 10 ** 6),
    "vertex offsets out of order": _set("vertex_start", 1, 10 ** 6),
    # the trees
    "root its own child": _in_piece("links", _swap_children),
    "child out of range": _in_piece("links", _child_out_of_range),
    "leaf count wrong": _in_piece("links", _wrong_count),
    "box too small": _in_piece("nodes", _shrink_root),
    "axes not orthonormal": _in_piece("nodes", _skew_axes),
    "axes left-handed": _in_piece("nodes", _mirror_axes),
    "radius wrong": _in_piece("nodes", _bad_radius),
    "NaN in a box": _set("nodes", (0, 0), np.nan),
    "leaf order repeats a triangle": _in_piece("tri_index", _repeat_leaf),
    "negative leaf triangle": _in_piece("tri_index", _negative_leaf),
    "whole tree box too small": _tree_nodes(_shrink_root),
    "whole tree links broken": _set("tree_links", (0, 2), 1),
}


@pytest.mark.parametrize("corrupt", list(CORRUPTIONS.values()), ids=list(CORRUPTIONS))
def test_corrupt_entry_is_rebuilt(corrupt, tmp_path, torus_mesh, reference, quick_decompose):
    v, f = torus_mesh
    folder = str(tmp_path)
    P.convex_pieces(v, f, CACHE_SETTINGS, cache=folder)
    path = _entry(folder, v, f)
    assert P.convex_pieces(v, f, CACHE_SETTINGS, cache=folder).cached  # the intact entry is read
    before = open(path, "rb").read()
    corrupt(path)
    assert open(path, "rb").read() != before
    msgs = []
    rebuilt = P.convex_pieces(v, f, CACHE_SETTINGS, cache=folder, progress=msgs.append)
    assert not rebuilt.cached
    assert any("rebuild" in s for s in msgs)
    assert _same_everything(rebuilt, reference)
    # The entry is valid again, and the next call reads it.
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        assert meta["key"] == P.cache_key(v, f, CACHE_SETTINGS) and meta["format"] == P.CACHE_FORMAT
        assert zipfile.is_zipfile(path)
    again = P.convex_pieces(v, f, CACHE_SETTINGS, cache=folder)
    assert again.cached and _same_everything(again, reference)
    assert sorted(os.listdir(folder)) == [os.path.basename(path)]
    assert len(quick_decompose) == 2  # the first write and the rebuild


def test_pack_round_trip_and_rejects_bad_rows(reference):
    arrays = PC._entry_arrays(reference)
    floats, ints, rows = PC._pack(arrays)
    back = PC._unpack(floats, ints, rows)
    assert set(back) == set(arrays)
    for k, x in arrays.items():
        assert np.array_equal(back[k], x) and back[k].shape == np.asarray(x).shape, k
    for bad in [dict(rows, vertices=rows["vertices"] + 1), dict(rows, ints=3), dict(rows, edges=-1),
                dict(rows, edges=2.0), {k: v for k, v in rows.items() if k != "links"}]:
        if "ints" in bad:
            bad.pop("ints")
            assert PC._unpack(floats, ints[:-1], bad) is None
        else:
            assert PC._unpack(floats, ints, bad) is None


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
