"""Reading mesh files into one clean triangle mesh (app/scene/mesh_io.py).

What is checked against what:

* Round trips: closed meshes (icosphere, box, torus: the torus is the
  non-convex one) are written by trimesh's exporters into ``tmp_path`` as OBJ,
  binary/ASCII STL, binary/ASCII PLY, OFF, GLB, glTF (separate buffers) and
  glTF (embedded buffers), and a binary STL is also written byte by byte by the
  test itself. The loaded mesh is compared with the original geometrically by
  helpers in this file: triangles matched one to one by centroid (scipy KD-tree)
  with corners equal within 1e-6 and the same winding, face count, vertex count
  (= distinct positions of the original), Euler characteristic, and volume and
  area from the divergence theorem / cross products computed here in numpy.
* Scenes: a GLB/glTF holding several geometries at node transforms (rotation,
  uniform scale, translation, a child node under a parent, a geometry used by
  two nodes) must load as the union of the triangles transformed by matrices
  the test multiplies itself.
* Clean-up: hand-written OBJ/STL files and hand-made arrays with known answers,
  and a hypothesis comparison of ``clean_mesh`` with a plain-Python reference
  (dict/set of exact coordinate tuples).
* ``scale``, bad input (each must raise ``MeshLoadError`` naming the file, never
  another exception; hypothesis feeds random bytes, bytes behind real magic
  headers, OBJ-like text and truncations; a file that happens to parse must give
  a valid clean mesh), ``file_digest`` against ``hashlib.sha256``, and a
  600k-face mesh with a progress callback (one-text and two-argument forms);
  a shuffled 333k-face soup with duplicate and degenerate faces cleaned
  exactly as a sort-based reference and, on a 20k-face sample, the
  plain-Python reference; its peak memory in a fresh process (VmHWM) at most
  6x the input arrays.
"""

import hashlib
import os
import struct

import numpy as np
import pytest
import trimesh
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.spatial import cKDTree

from app.scene.mesh_io import LARGE_MESH, MeshLoadError, clean_mesh, file_digest, load_mesh

ATOL = 1e-6
HYPO = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


# -- independent geometry helpers --------------------------------------------------------


def tris(v, f):
    return np.asarray(v, float)[np.asarray(f, np.int64)]


def volume(t):
    """Signed volume of a closed triangle set, divergence theorem."""
    return float(np.einsum("ij,ij->i", t[:, 0], np.cross(t[:, 1], t[:, 2])).sum() / 6.0)


def area(t):
    return float(np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1).sum() / 2.0)


def euler(v, f):
    f = np.asarray(f, np.int64)
    e = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
    n_edges = len({tuple(x) for x in e.tolist()})
    return len(v) - n_edges + len(f)


def n_positions(v):
    return len({tuple(p) for p in np.asarray(v, float).tolist()})


def transform(v, T):
    v = np.asarray(v, float)
    return v @ np.asarray(T, float)[:3, :3].T + np.asarray(T, float)[:3, 3]


def _corner_ids(pts):
    """An integer per point, equal exactly when the coordinates are equal (lexicographic sort)."""
    order = np.lexsort((pts[:, 2], pts[:, 1], pts[:, 0]))
    srt = pts[order]
    ids = np.empty(len(pts), np.int64)
    ids[order] = np.cumsum(np.r_[True, np.any(srt[1:] != srt[:-1], axis=1)]) - 1
    return ids


def _canonical(ids, oriented):
    """Rows of corner ids in canonical form: rotated to start at the smallest id
    (keeps the winding) or sorted (forgets it); then the rows sorted."""
    if oriented:
        k = ids.argmin(axis=1)
        ids = np.take_along_axis(ids, (k[:, None] + np.arange(3)) % 3, axis=1)
    else:
        ids = np.sort(ids, axis=1)
    return ids[np.lexsort(ids.T[::-1])]


def assert_same_triangles(a, b, atol=ATOL, oriented=True):
    """``a`` and ``b`` ((m, 3, 3)) hold the same triangles, one to one, corners within atol.

    With ``oriented`` the corner correspondence must be a cyclic rotation
    (same winding), not a reflection. ``atol=0``: exact coordinates (-0.0 ==
    0.0), compared as multisets of canonical triangles. ``atol>0``: triangles
    matched by nearest centroid (the meshes used with a tolerance have well
    separated centroids), then corner by corner.
    """
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    assert a.shape == b.shape, (a.shape, b.shape)
    if atol == 0:
        n = len(a)
        ids = _corner_ids(np.concatenate([a, b]).reshape(-1, 3)).reshape(-1, 3)
        bad = np.any(_canonical(ids[:n], oriented) != _canonical(ids[n:], oriented), axis=1)
        assert not bad.any(), f"{int(bad.sum())} of {n} canonical triangles differ"
        return
    dist, idx = cKDTree(b.mean(axis=1)).query(a.mean(axis=1))
    assert np.all(dist <= atol), f"max centroid distance {dist.max()}"
    assert len(np.unique(idx)) == len(idx), "two triangles matched the same one"
    bm = b[idx]
    d = np.linalg.norm(a[:, :, None, :] - bm[:, None, :, :], axis=3)  # (m, 3, 3)
    perm = d.argmin(axis=2)
    assert np.all(d.min(axis=2) <= atol), f"max corner distance {d.min(axis=2).max()}"
    assert np.all(np.sort(perm, axis=1) == [0, 1, 2]), "corners do not correspond one to one"
    if oriented:
        shift = (perm - perm[:, [0]]) % 3
        assert np.all(shift == [0, 1, 2]), f"{int(np.sum(np.any(shift != [0, 1, 2], axis=1)))} triangles flipped"


def assert_clean(v, f):
    """A valid clean mesh, checked from scratch."""
    v = np.asarray(v)
    f = np.asarray(f)
    assert v.ndim == 2 and v.shape[1] == 3 and len(v) > 0
    assert f.ndim == 2 and f.shape[1] == 3 and len(f) > 0
    assert f.dtype.kind in "iu"
    assert np.all(np.isfinite(v))
    assert f.min() >= 0 and f.max() < len(v)
    assert np.all((f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2]))
    assert n_positions(v) == len(v), "duplicate vertex positions"
    assert len(np.unique(f)) == len(v), "unreferenced vertices"
    assert len({tuple(sorted(x)) for x in f.tolist()}) == len(f), "duplicate faces"


def write_binary_stl(path, t):
    """Binary STL written here byte by byte (not by trimesh): a triangle soup."""
    t = np.asarray(t, np.float32)
    rec = np.zeros(len(t), dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("attr", "<u2")])
    rec["v"] = t
    with open(path, "wb") as fh:
        fh.write(b"written by test_mesh_io".ljust(80, b" "))
        fh.write(struct.pack("<I", len(t)))
        fh.write(rec.tobytes())


def write_text(path, text):
    path.write_text(text)
    return path


# -- shapes ------------------------------------------------------------------------------


def icosphere():
    return trimesh.creation.icosphere(subdivisions=2)


def box():
    m = trimesh.creation.box(extents=(1.0, 2.0, 3.0))
    m.apply_translation((0.25, -0.5, 1.0))
    return m


def torus():
    # non-convex (genus one): Euler characteristic 0
    return trimesh.creation.torus(major_radius=1.0, minor_radius=0.3)


SHAPES = {"icosphere": (icosphere, 2), "box": (box, 2), "torus": (torus, 0)}


def _export_gltf_files(mesh, path):
    files = trimesh.Scene(mesh).export(file_type="gltf")
    assert isinstance(files, dict) and "model.gltf" in files
    for name, data in files.items():
        (path.parent / name).write_bytes(data)
    return path.parent / "model.gltf"


def _export_gltf_embedded(mesh, path):
    from trimesh.exchange.gltf import export_gltf

    files = export_gltf(trimesh.Scene(mesh), embed_buffers=True)
    assert list(files) == ["model.gltf"]
    path.write_bytes(files["model.gltf"])
    return path


WRITERS = {
    # name: (file name, writer, first bytes the file must start with or None)
    "obj": ("m.obj", lambda m, p: m.export(p), None),
    "stl-binary": ("m.stl", lambda m, p: m.export(p, file_type="stl"), None),
    "stl-ascii": ("m.stl", lambda m, p: m.export(p, file_type="stl_ascii"), b"solid"),
    "ply-binary": ("m.ply", lambda m, p: m.export(p, encoding="binary"), b"ply\nformat binary"),
    "ply-ascii": ("m.ply", lambda m, p: m.export(p, encoding="ascii"), b"ply\nformat ascii"),
    "off": ("m.off", lambda m, p: m.export(p), b"OFF"),
    "glb": ("m.glb", lambda m, p: m.export(p), b"glTF"),
    "gltf": ("model.gltf", _export_gltf_files, None),
    "gltf-embedded": ("m.gltf", _export_gltf_embedded, None),
    "stl-by-hand": ("h.stl", lambda m, p: write_binary_stl(p, m.triangles), None),
}


def write(fmt, mesh, tmp_path):
    fname, writer, magic = WRITERS[fmt]
    p = tmp_path / fname
    out = writer(mesh, p)
    p = out if out is not None and not isinstance(out, (bytes, str, dict)) else p
    assert p.exists() and p.stat().st_size > 0
    if magic is not None:
        assert p.read_bytes().startswith(magic), p.read_bytes()[:30]
    if fmt == "stl-binary":
        assert not p.read_bytes()[80:].startswith(b"facet")
        assert p.stat().st_size == 84 + 50 * len(mesh.faces)
    return p


# -- 1. round trips ----------------------------------------------------------------------


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("fmt", list(WRITERS))
def test_round_trip(fmt, shape, tmp_path):
    make, chi = SHAPES[shape]
    mesh = make()
    v0, f0 = np.array(mesh.vertices), np.array(mesh.faces)
    t0 = tris(v0, f0)
    # the shapes are clean closed meshes to begin with (else the expectations below are wrong)
    assert_clean(v0, f0)
    assert euler(v0, f0) == chi
    path = write(fmt, mesh, tmp_path)

    m = load_mesh(path)

    assert isinstance(m, trimesh.Trimesh)
    assert_clean(m.vertices, m.faces)
    assert len(m.faces) == len(f0)
    assert len(m.vertices) == n_positions(v0)
    assert euler(m.vertices, m.faces) == chi
    t1 = tris(m.vertices, m.faces)
    assert_same_triangles(t1, t0, atol=ATOL, oriented=True)
    assert volume(t1) == pytest.approx(volume(t0), rel=1e-6)
    assert volume(t1) > 0
    assert area(t1) == pytest.approx(area(t0), rel=1e-6)


def test_round_trip_accepts_pathlib_and_str(tmp_path):
    p = write("off", box(), tmp_path)
    a = load_mesh(p)
    b = load_mesh(str(p))
    assert_same_triangles(tris(a.vertices, a.faces), tris(b.vertices, b.faces), atol=0)


def test_triangle_helper_detects_differences():
    """The comparison helper itself can fail (moved corner, flipped face, missing face)."""
    t = icosphere().triangles
    moved = t.copy()
    moved[5, 1] += 1e-4
    with pytest.raises(AssertionError):
        assert_same_triangles(moved, t)
    flipped = t.copy()
    flipped[7] = flipped[7, ::-1]
    with pytest.raises(AssertionError):
        assert_same_triangles(flipped, t)
    assert_same_triangles(flipped, t, oriented=False)
    with pytest.raises(AssertionError):
        assert_same_triangles(t[1:], t[:-1])
    # exact mode
    assert_same_triangles(t[::-1], t, atol=0)
    assert_same_triangles(np.roll(t, 1, axis=1), t, atol=0)
    with pytest.raises(AssertionError):
        assert_same_triangles(moved, t, atol=0)
    with pytest.raises(AssertionError):
        assert_same_triangles(flipped, t, atol=0)
    assert_same_triangles(flipped, t, atol=0, oriented=False)
    with pytest.raises(AssertionError):
        assert_same_triangles(np.concatenate([t[:1], t[:-1]]), t, atol=0, oriented=False)  # multiset
    # two different triangles with the same centroid
    p = np.array([[[1, 1, 1], [0, 0, 0], [1, -1, 0]]], float)
    q = np.array([[[0, 0, 0], [1, 0, 0], [1, 0, 1]]], float)
    with pytest.raises(AssertionError):
        assert_same_triangles(p, q, atol=0)
    assert_same_triangles(np.array([[[-0.0, 0, 0], [1, 0, 0], [0, 1, 0]]]),
                          np.array([[[0.0, 0, 0], [1, 0, 0], [0, 1, 0]]]), atol=0)


# -- 2. scenes ---------------------------------------------------------------------------


def _rot(angle, axis):
    return trimesh.transformations.rotation_matrix(angle, axis)


def _scene():
    """A scene of three geometries, a child node and an instanced geometry.

    Returns the scene and the expected world triangles, computed here from the
    local matrices (not from the scene graph).
    """
    a, b, c = box(), trimesh.creation.icosphere(1), torus()
    TA = _rot(0.7, [1, 2, 3])
    TA[:3, 3] = [5.0, 0.0, 0.0]
    TB = trimesh.transformations.scale_matrix(2.0)
    TB[:3, 3] = [0.0, -4.0, 1.0]
    TC = _rot(-1.1, [0, 0, 1])
    TC[:3, 3] = [0.0, 3.0, -2.0]
    TB_child = _rot(0.4, [0, 1, 0])
    TB_child[:3, 3] = [1.5, 0.0, 0.0]
    TA2 = np.eye(4)
    TA2[:3, 3] = [-6.0, 0.0, 0.0]

    s = trimesh.Scene()
    s.add_geometry(a, node_name="A", geom_name="ga", transform=TA)
    s.add_geometry(b, node_name="B", geom_name="gb", transform=TB)
    s.add_geometry(c, node_name="C", geom_name="gc", parent_node_name="B", transform=TB_child @ TC)
    # the same geometry "ga" under a second node
    s.graph.update(frame_from=s.graph.base_frame, frame_to="A2", geometry="ga", matrix=TA2)
    assert sorted(s.graph.nodes_geometry) == ["A", "A2", "B", "C"]
    assert sorted(s.geometry) == ["ga", "gb", "gc"]

    expected = np.concatenate([
        tris(transform(a.vertices, TA), a.faces),
        tris(transform(a.vertices, TA2), a.faces),
        tris(transform(b.vertices, TB), b.faces),
        tris(transform(c.vertices, TB @ TB_child @ TC), c.faces),
    ])
    return s, expected


@pytest.mark.parametrize("fmt", ["glb", "gltf", "gltf-embedded"])
def test_scene_is_flattened_with_node_transforms(fmt, tmp_path):
    s, expected = _scene()
    if fmt == "glb":
        path = tmp_path / "scene.glb"
        s.export(path)
    elif fmt == "gltf":
        for name, data in s.export(file_type="gltf").items():
            (tmp_path / name).write_bytes(data)
        path = tmp_path / "model.gltf"
    else:
        from trimesh.exchange.gltf import export_gltf

        path = tmp_path / "scene.gltf"
        path.write_bytes(export_gltf(s, embed_buffers=True)["model.gltf"])

    m = load_mesh(path)

    assert_clean(m.vertices, m.faces)
    t = tris(m.vertices, m.faces)
    assert len(t) == len(expected)
    # float32 in the file, transforms applied in float64: coordinates up to ~7
    assert_same_triangles(t, expected, atol=2e-6, oriented=True)
    # the parts are disjoint closed meshes: volumes add up
    assert volume(t) == pytest.approx(volume(expected), rel=1e-6)
    assert euler(m.vertices, m.faces) == 2 + 2 + 2 + 0


def test_scene_with_mixed_visuals_and_a_point_cloud(tmp_path):
    a = box()
    a.visual.face_colors = [255, 0, 0, 255]
    b = trimesh.creation.icosphere(1)
    b.apply_translation((4.0, 0.0, 0.0))
    b.visual = trimesh.visual.TextureVisuals(uv=np.random.default_rng(1).random((len(b.vertices), 2)))
    cloud = trimesh.PointCloud(np.random.default_rng(2).random((20, 3)) + 10.0)
    path = tmp_path / "mixed.glb"
    trimesh.Scene([a, b, cloud]).export(path)

    m = load_mesh(path)

    expected = np.concatenate([a.triangles, b.triangles])
    assert_same_triangles(tris(m.vertices, m.faces), expected, atol=1e-6)
    assert m.vertices.max() < 9.0  # no point of the cloud became a vertex


def test_a_face_past_the_vertices_is_named_as_such(tmp_path):
    """An OBJ whose face refers to a vertex it does not have: the message names the file and says so."""
    path = tmp_path / "short.obj"
    path.write_text("v 0 0 0\nv 1 0 0\nf 1 2 3\n")
    with pytest.raises(MeshLoadError) as err:
        load_mesh(path)
    assert str(err.value).startswith(f"{path}: cannot read a mesh: a face refers to a vertex the file does not have")


def test_scene_of_only_points_is_an_error(tmp_path):
    path = tmp_path / "points.glb"
    trimesh.Scene([trimesh.PointCloud(np.random.default_rng(3).random((20, 3)))]).export(path)
    with pytest.raises(MeshLoadError) as err:
        load_mesh(path)
    assert str(err.value).startswith(str(path))


# -- 3. clean-up -------------------------------------------------------------------------

TETRA_V = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
TETRA_F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])  # outward winding
TETRA_T = TETRA_V[TETRA_F]


def test_tetra_reference_is_outward():
    assert volume(TETRA_T) == pytest.approx(1.0 / 6.0)


def test_stl_triangle_soup_is_merged_into_a_connected_mesh(tmp_path):
    mesh = icosphere()
    path = tmp_path / "soup.stl"
    write_binary_stl(path, mesh.triangles)
    m = load_mesh(path)
    assert len(m.vertices) == n_positions(mesh.vertices) == 162  # not 3 * 320
    assert len(m.faces) == 320
    assert euler(m.vertices, m.faces) == 2  # one closed surface: the faces share vertices
    # every edge is shared by exactly two faces
    f = m.faces
    e = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
    _, counts = np.unique(e, axis=0, return_counts=True)
    assert np.all(counts == 2)


def test_obj_duplicate_vertex_lines_are_merged(tmp_path):
    lines = []
    for k, tri in enumerate(TETRA_T):
        lines += [f"v {float(x)!r} {float(y)!r} {float(z)!r}" for x, y, z in tri]
    lines += [f"f {3 * k + 1} {3 * k + 2} {3 * k + 3}" for k in range(4)]
    path = write_text(tmp_path / "dup.obj", "\n".join(lines) + "\n")
    m = load_mesh(path)
    assert len(m.vertices) == 4
    assert len(m.faces) == 4
    assert_same_triangles(tris(m.vertices, m.faces), TETRA_T, atol=0)


def _tetra_obj(extra_v=(), extra_f=()):
    lines = [f"v {float(x)!r} {float(y)!r} {float(z)!r}" for x, y, z in TETRA_V]
    lines += [f"v {float(x)!r} {float(y)!r} {float(z)!r}" for x, y, z in extra_v]
    lines += ["f " + " ".join(str(i + 1) for i in face) for face in TETRA_F]
    lines += ["f " + " ".join(str(i + 1) for i in face) for face in extra_f]
    return "\n".join(lines) + "\n"


def test_obj_degenerate_faces_are_dropped(tmp_path):
    # vertex 5 (index 4) is a copy of vertex 2 (index 1): face (0, 1, 4) is degenerate after merging
    text = _tetra_obj(extra_v=[TETRA_V[1]], extra_f=[(0, 0, 1), (2, 3, 3), (0, 1, 4), (1, 1, 1)])
    m = load_mesh(write_text(tmp_path / "degen.obj", text))
    assert len(m.faces) == 4
    assert len(m.vertices) == 4
    assert_same_triangles(tris(m.vertices, m.faces), TETRA_T, atol=0)


def test_obj_duplicate_faces_in_any_order_or_orientation_are_dropped(tmp_path):
    a, b, c = TETRA_F[3]
    text = _tetra_obj(extra_f=[(a, b, c), (b, c, a), (c, b, a), (a, c, b), tuple(TETRA_F[0])])
    m = load_mesh(write_text(tmp_path / "dupf.obj", text))
    assert len(m.faces) == 4
    assert_same_triangles(tris(m.vertices, m.faces), TETRA_T, atol=0, oriented=False)


def test_obj_unreferenced_vertices_are_dropped(tmp_path):
    text = _tetra_obj(extra_v=[(9.0, 9.0, 9.0), (-3.0, 2.0, 1.0), (float("1e6"), 0.0, 0.0)])
    m = load_mesh(write_text(tmp_path / "unref.obj", text))
    assert len(m.vertices) == 4
    assert np.abs(m.vertices).max() == 1.0
    assert_same_triangles(tris(m.vertices, m.faces), TETRA_T, atol=0)


def test_obj_negative_relative_indices(tmp_path):
    text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\n"
    m = load_mesh(write_text(tmp_path / "rel.obj", text))
    assert_same_triangles(tris(m.vertices, m.faces), [[[0, 0, 0], [1, 0, 0], [0, 1, 0]]], atol=0)


def test_clean_mesh_known_answer():
    v = np.array([
        [0.0, 0.0, 0.0],   # 0
        [1.0, 0.0, 0.0],   # 1
        [0.0, 1.0, 0.0],   # 2
        [0.0, 0.0, 1.0],   # 3
        [-0.0, 0.0, 0.0],  # 4 == 0 (exactly equal coordinates)
        [1.0, 0.0, 0.0],   # 5 == 1
        [7.0, 7.0, 7.0],   # 6 unreferenced
        [0.0, 1.0, 0.0],   # 7 == 2, only in a degenerate face
    ])
    f = np.array([
        [0, 2, 1],  # kept
        [4, 5, 3],  # kept: (0, 1, 3)
        [0, 4, 1],  # degenerate after merging
        [2, 7, 3],  # degenerate after merging
        [1, 0, 2],  # duplicate of the first (reversed)
        [5, 2, 4],  # duplicate of the first (rotated, other copies)
        [0, 3, 2],  # kept
        [3, 3, 3],  # degenerate
    ])
    v2, f2 = clean_mesh(v, f, name="hand")
    assert v2.dtype == np.float64 and f2.dtype == np.int64
    assert v2.shape == (4, 3) and f2.shape == (3, 3)
    assert_clean(v2, f2)
    expected = np.array([[[0, 0, 0], [0, 1, 0], [1, 0, 0]],
                         [[0, 0, 0], [1, 0, 0], [0, 0, 1]],
                         [[0, 0, 0], [0, 0, 1], [0, 1, 0]]], float)
    assert_same_triangles(tris(v2, f2), expected, atol=0, oriented=True)
    assert {tuple(p) for p in v2.tolist()} == {(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)}


def test_clean_mesh_leaves_a_clean_mesh_alone():
    mesh = torus()
    v2, f2 = clean_mesh(mesh.vertices, mesh.faces)
    assert len(v2) == len(mesh.vertices) and len(f2) == len(mesh.faces)
    assert_same_triangles(tris(v2, f2), mesh.triangles, atol=0)


def test_clean_mesh_accepts_lists_and_unsigned_faces():
    v2, f2 = clean_mesh(TETRA_V.tolist(), TETRA_F.astype(np.uint32))
    assert_same_triangles(tris(v2, f2), TETRA_T, atol=0)


def _reference_clean(v, f):
    """Plain-Python clean-up: the oriented triangles kept (as coordinate tuples), or None."""
    seen = set()
    out = []
    for face in f:
        corners = [tuple(float(x) for x in v[i]) for i in face]
        if len(set(corners)) < 3:
            continue
        key = frozenset(corners)
        if key in seen:
            continue
        seen.add(key)
        out.append(corners)
    return out or None


# small coordinate pool: coincidences (and 0.0 / -0.0) happen often
_coord = st.sampled_from([0.0, -0.0, 1.0, 2.5, -1.0])


@HYPO
@given(st.data())
def test_clean_mesh_matches_reference(data):
    n = data.draw(st.integers(3, 12))
    v = np.array(data.draw(st.lists(st.tuples(_coord, _coord, _coord), min_size=n, max_size=n)), float)
    f = np.array(data.draw(st.lists(st.tuples(*[st.integers(0, n - 1)] * 3), min_size=1, max_size=25)))
    expected = _reference_clean(v, f)
    if expected is None:
        with pytest.raises(MeshLoadError) as err:
            clean_mesh(v, f, name="ref")
        assert str(err.value).startswith("ref: ")
        return
    v2, f2 = clean_mesh(v, f, name="ref")
    assert_clean(v2, f2)
    got = tris(v2, f2)
    assert len(got) == len(expected)

    def canon(tri):
        # rotate so the smallest corner comes first: keeps the winding
        k = min(range(3), key=lambda i: tri[i])
        return tuple(tri[k:] + tri[:k])

    assert sorted(canon([tuple(c) for c in t.tolist()]) for t in got) == sorted(canon(t) for t in expected)
    assert {tuple(p) for p in v2.tolist()} == {c for t in expected for c in t}


# -- 4. scale ----------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0.001, 2.0, 25.4, 1e-6])
def test_scale_multiplies_coordinates(scale, tmp_path):
    path = write_text(tmp_path / "t.obj", _tetra_obj())
    m = load_mesh(path, scale=scale)
    expected = TETRA_T * scale
    assert_same_triangles(tris(m.vertices, m.faces), expected, atol=1e-15 * max(scale, 1))
    assert volume(tris(m.vertices, m.faces)) == pytest.approx(scale ** 3 / 6.0, rel=1e-12)


def test_scale_with_a_float32_file(tmp_path):
    mesh = torus()
    path = write("ply-binary", mesh, tmp_path)
    m = load_mesh(path, scale=3.0)
    assert_same_triangles(tris(m.vertices, m.faces), mesh.triangles * 3.0, atol=3e-6)
    assert volume(tris(m.vertices, m.faces)) == pytest.approx(27.0 * mesh.volume, rel=1e-6)


@pytest.mark.parametrize("scale", [0, 0.0, -0.0, -1.0, -1e-9, float("nan"), float("inf"), float("-inf")])
def test_bad_scale_is_an_error(scale, tmp_path):
    path = write_text(tmp_path / "t.obj", _tetra_obj())
    with pytest.raises(MeshLoadError) as err:
        load_mesh(path, scale=scale)
    assert str(err.value).startswith(str(path))
    assert "scale" in str(err.value)


@pytest.mark.parametrize("coord, scale, ok", [
    (1e6, 1.0, True),                # at the bound
    (-1e6, 1.0, True),
    (1.000001e6, 1.0, False),        # just past it
    (-1.000001e6, 1.0, False),
    (1e300, 1.0, False),             # 1e300 squares to inf: the OBB fit turned NaN, the viewer crashed
    (1e9, 1e-3, True),               # millimetres of a part a kilometre across, scaled to metres
    (1e4, 1e3, False),               # within the bound in the file, past it after the scale
])
def test_coordinates_beyond_the_bound_are_refused(coord, scale, ok, tmp_path):
    """|coordinate| <= MAX_COORD (1e6 units) after the scale; past it a MeshLoadError names the
    file, how far the coordinates reach and the bound."""
    from app.scene.mesh_io import MAX_COORD

    assert MAX_COORD == 1e6
    path = write_text(tmp_path / "far.obj", _tetra_obj(extra_v=[(coord, 0.0, 0.0)], extra_f=[(0, 4, 1)]))
    if ok:
        m = load_mesh(path, scale=scale)
        assert np.abs(m.vertices).max() == pytest.approx(abs(coord) * scale, rel=1e-12)
        return
    with pytest.raises(MeshLoadError) as err:
        load_mesh(path, scale=scale)
    text = str(err.value)
    assert text.startswith(f"{path}: coordinates reach {abs(coord) * scale:.3g}")
    assert "1e+06 units" in text and (("after scale" in text) == (scale != 1.0))


@pytest.mark.parametrize("fmt, stated", [("stl-binary", 12), ("stl-by-hand", 12), ("ply-binary", 12),
                                         ("ply-ascii", 12), ("stl-ascii", None), ("obj", None), ("off", None),
                                         ("glb", None)])
def test_declared_triangles_reads_binary_stl_and_ply_headers(fmt, stated, tmp_path):
    from app.scene.mesh_io import declared_triangles

    assert declared_triangles(write(fmt, trimesh.creation.box(), tmp_path)) == stated


def test_declared_triangles_of_broken_headers(tmp_path):
    from app.scene.mesh_io import declared_triangles

    cut = tmp_path / "cut.stl"  # a binary STL whose size does not match its count: not trusted
    write_binary_stl(cut, trimesh.creation.box().triangles)
    cut.write_bytes(cut.read_bytes()[:-10])
    assert declared_triangles(cut) is None
    no_faces = write_text(tmp_path / "points.ply", "ply\nformat ascii 1.0\nelement vertex 1\n"
                                                   "property float x\nend_header\n0\n")
    assert declared_triangles(no_faces) is None
    assert declared_triangles(tmp_path / "missing.stl") is None


@pytest.mark.parametrize("fmt", ["stl-binary", "ply-binary", "obj", "stl-ascii"])
def test_a_mesh_above_the_triangle_limit_is_refused(fmt, tmp_path, monkeypatch):
    """Above MAX_TRIANGLES (lowered here) a MeshLoadError names the file, the count and the limit,
    and suggests decimation; binary STL and PLY are refused from their header, before parsing."""
    import app.scene.mesh_io as mio

    path = write(fmt, trimesh.creation.icosphere(subdivisions=1), tmp_path)  # 80 triangles
    monkeypatch.setattr(mio, "MAX_TRIANGLES", 80)
    assert len(load_mesh(path).faces) == 80  # at the limit: loads
    monkeypatch.setattr(mio, "MAX_TRIANGLES", 79)
    from_header = fmt in ("stl-binary", "ply-binary")
    if from_header:
        def no_parse(path):
            raise AssertionError("the file was parsed")
        monkeypatch.setattr(mio, "_read", no_parse)
    with pytest.raises(MeshLoadError) as err:
        load_mesh(path)
    text = str(err.value)
    assert text.startswith(f"{path}: 80 triangles") and "more than the 79 the viewer loads" in text
    assert "decimate" in text and ("(as its header says)" in text) == from_header


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_scale_overflow_is_an_error(tmp_path):
    path = write_text(tmp_path / "big.obj", _tetra_obj().replace("1.0", "1e10"))
    try:
        m = load_mesh(path, scale=1e300)
    except MeshLoadError as exc:
        assert str(exc).startswith(str(path))
    else:
        assert np.all(np.isfinite(m.vertices)), "load_mesh returned non-finite vertices"


# -- 5. bad input ------------------------------------------------------------------------


def assert_load_error(path, *words):
    with pytest.raises(MeshLoadError) as err:
        load_mesh(path)
    msg = str(err.value)
    assert msg.startswith(str(path)), msg
    for w in words:
        assert w.lower() in msg.lower(), msg
    return msg


def assert_error_or_clean(path):
    """For fuzzed files: MeshLoadError naming the file, or a valid clean mesh."""
    try:
        m = load_mesh(path)
    except MeshLoadError as exc:
        assert str(exc).startswith(str(path)), str(exc)
    else:
        assert isinstance(m, trimesh.Trimesh)
        assert_clean(m.vertices, m.faces)


def test_missing_file(tmp_path):
    assert_load_error(tmp_path / "nope.stl", "no such file")


def test_directory(tmp_path):
    d = tmp_path / "looks_like.obj"
    d.mkdir()
    assert_load_error(d, "directory")


@pytest.mark.parametrize("ext", [".obj", ".stl", ".ply", ".off", ".glb", ".gltf"])
def test_empty_file(ext, tmp_path):
    p = tmp_path / f"empty{ext}"
    p.write_bytes(b"")
    assert_load_error(p, "empty")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file(tmp_path):
    p = write("off", box(), tmp_path)
    p.chmod(0)
    try:
        assert_load_error(p)
    finally:
        p.chmod(0o644)


@pytest.mark.parametrize("fmt", ["stl-binary", "ply-binary", "glb", "stl-by-hand"])
def test_binary_file_truncated_to_half(fmt, tmp_path):
    p = write(fmt, icosphere(), tmp_path)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    assert_load_error(p)


@HYPO
@given(fmt=st.sampled_from(["stl-binary", "ply-binary", "glb"]), frac=st.floats(0.0, 1.0, exclude_max=True))
def test_binary_file_truncated_anywhere(fmt, frac, tmp_path):
    p = tmp_path / ("cut" + os.path.splitext(WRITERS[fmt][0])[1])
    write(fmt, box(), tmp_path).rename(p)
    data = p.read_bytes()
    p.write_bytes(data[: max(1, int(len(data) * frac))])
    assert_load_error(p)


@pytest.mark.parametrize("fmt", ["obj", "stl-ascii", "ply-ascii", "off"])
def test_text_file_truncated_to_half(fmt, tmp_path):
    # a text file cut in half may still be a (smaller) valid mesh; else an error
    p = write(fmt, icosphere(), tmp_path)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    assert_error_or_clean(p)


@pytest.mark.parametrize("ext", [".obj", ".stl", ".ply", ".off", ".glb", ".gltf"])
def test_random_bytes_fixed(ext, tmp_path):
    p = tmp_path / f"random{ext}"
    p.write_bytes(np.random.default_rng(12345).bytes(4096))
    assert_error_or_clean(p)


@HYPO
@given(ext=st.sampled_from([".obj", ".stl", ".ply", ".off", ".glb", ".gltf"]),
       data=st.binary(min_size=1, max_size=600))
def test_random_bytes_never_escape(ext, data, tmp_path):
    p = tmp_path / f"fuzz{ext}"
    p.write_bytes(data)
    assert_error_or_clean(p)


_MAGIC = {
    ".ply": [b"ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\n"
             b"property float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\n"
             b"end_header\n", b"ply\nformat ascii 1.0\n"],
    ".glb": [b"glTF\x02\x00\x00\x00"],
    ".stl": [b"solid x\n", b"solid x\nfacet normal 0 0 0\nouter loop\nvertex "],
    ".off": [b"OFF\n3 1 0\n", b"OFF\n"],
    ".obj": [b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 "],
}


@HYPO
@given(pair=st.sampled_from([(e, m) for e, ms in _MAGIC.items() for m in ms]),
       tail=st.binary(min_size=0, max_size=400))
def test_magic_header_then_random_bytes(pair, tail, tmp_path):
    ext, magic = pair
    p = tmp_path / f"magic{ext}"
    p.write_bytes(magic + tail)
    assert_error_or_clean(p)


_obj_number = st.one_of(st.integers(-3, 3).map(str), st.sampled_from(["nan", "inf", "-inf", "1e400", "0.5", "x", ""]))
_obj_index = st.one_of(st.integers(-6, 8).map(str), st.sampled_from(["1/1", "2//3", "a", ""]))
_obj_line = st.one_of(
    st.tuples(st.just("v"), _obj_number, _obj_number, _obj_number).map(" ".join),
    st.lists(_obj_index, min_size=0, max_size=5).map(lambda xs: " ".join(["f"] + xs)),
    st.sampled_from(["# comment", "o part", "g group", "vn 0 0 1", "vt 0 0", "usemtl m", "mtllib nope.mtl", ""]),
)


@HYPO
@given(lines=st.lists(_obj_line, min_size=1, max_size=20))
def test_obj_like_text_never_escapes(lines, tmp_path):
    p = tmp_path / "fuzz.obj"
    p.write_text("\n".join(lines) + "\n")
    assert_error_or_clean(p)


@HYPO
@given(data=st.data())
def test_obj_text_matches_reference(data, tmp_path):
    """Well-formed OBJ files of triangles: load_mesh gives what the plain-Python reference keeps."""
    n = data.draw(st.integers(3, 10))
    v = np.array(data.draw(st.lists(st.tuples(_coord, _coord, _coord), min_size=n, max_size=n)), float)
    f = np.array(data.draw(st.lists(st.tuples(*[st.integers(0, n - 1)] * 3), min_size=1, max_size=20)))
    text = "".join(f"v {float(x)!r} {float(y)!r} {float(z)!r}\n" for x, y, z in v)
    text += "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in f)
    p = write_text(tmp_path / "gen.obj", text)
    expected = _reference_clean(v, f)
    if expected is None:
        assert_load_error(p, "degenerate")
        return
    m = load_mesh(p)
    assert_clean(m.vertices, m.faces)
    assert_same_triangles(tris(m.vertices, m.faces), np.array(expected), atol=0, oriented=True)


@HYPO
@given(pair=st.sampled_from([(e, m) for e, ms in _MAGIC.items() for m in ms if e != ".glb"]),
       tail=st.text(alphabet="0123456789 .-+e\nfvnaOFsolidacetxrmpyqu/", max_size=300))
def test_magic_header_then_random_text(pair, tail, tmp_path):
    ext, magic = pair
    p = tmp_path / f"text{ext}"
    p.write_bytes(magic + tail.encode())
    assert_error_or_clean(p)


@pytest.mark.parametrize("name, text", [
    ("nofaces.off", "OFF\n3 0 0\n0 0 0\n1 0 0\n0 1 0\n"),
    ("segments.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\nf 2 3\n"),
])
def test_file_without_triangles_says_so(name, text, tmp_path):
    p = write_text(tmp_path / name, text)
    msg = assert_load_error(p)
    assert "no triangle" in msg, msg


def test_obj_with_nan_vertex(tmp_path):
    p = write_text(tmp_path / "nan.obj", "v 0 0 0\nv 1 0 0\nv nan 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\n")
    assert_load_error(p, "nan")


def test_obj_with_infinite_vertex(tmp_path):
    p = write_text(tmp_path / "inf.obj", "v 0 0 0\nv 1 0 0\nv 0 inf 0\nf 1 2 3\n")
    assert_load_error(p, "infinite")


def test_obj_all_faces_degenerate(tmp_path):
    p = write_text(tmp_path / "degen.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 0 0\nf 1 1 2\nf 2 3 3\nf 1 2 4\n")
    assert_load_error(p, "degenerate")


def test_obj_vertices_all_coincide(tmp_path):
    p = write_text(tmp_path / "point.obj", "v 1 2 3\nv 1 2 3\nv 1 2 3\nv 1 2 3\nf 1 2 3\nf 1 3 4\n")
    msg = assert_load_error(p)
    assert "zero size" in msg or "degenerate" in msg, msg


def test_obj_without_faces(tmp_path):
    p = write_text(tmp_path / "points.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n")
    assert_load_error(p)


def test_obj_only_lines(tmp_path):
    p = write_text(tmp_path / "lines.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2 3\n")
    assert_load_error(p)


def test_obj_face_index_out_of_range(tmp_path):
    p = write_text(tmp_path / "oor.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n")
    assert_load_error(p)


def test_off_with_no_faces(tmp_path):
    p = write_text(tmp_path / "nofaces.off", "OFF\n3 0 0\n0 0 0\n1 0 0\n0 1 0\n")
    assert_load_error(p)


def test_obj_with_latin1_comment_loads(tmp_path):
    p = tmp_path / "latin1.obj"
    p.write_bytes("# Modèle exporté (°)\n".encode("latin-1") + _tetra_obj().encode())
    m = load_mesh(p)
    assert_same_triangles(tris(m.vertices, m.faces), TETRA_T, atol=0)


def test_truncated_stl_message_names_the_file_problem(tmp_path):
    p = write("stl-binary", icosphere(), tmp_path)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    msg = assert_load_error(p)
    assert "ModuleNotFoundError" not in msg and "charset" not in msg, msg


@pytest.mark.parametrize("faces", [
    [[0, 1, 4]],      # past the end
    [[0, 1, 3]],      # exactly len(v)
    [[0, -1, 2]],     # negative
    [[0, 1, 2], [2, 1, 99]],
])
def test_clean_mesh_face_index_out_of_range(faces):
    v = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    with pytest.raises(MeshLoadError) as err:
        clean_mesh(v, np.array(faces), name="my/file.obj")
    assert str(err.value).startswith("my/file.obj: ")
    assert "vertex" in str(err.value)


@pytest.mark.parametrize("v, f", [
    (np.zeros((3, 2)), [[0, 1, 2]]),                   # 2-D points
    (np.zeros((3, 3)), [[0, 1]]),                      # not triangles
    (np.eye(3), np.array([[0.0, 1.0, 2.0]])),          # float indices
    (np.eye(3), np.zeros((0, 3), int)),                # no faces
    (np.zeros((0, 3)), np.zeros((0, 3), int)),         # nothing
    (np.array([[0.0, 0, 0], [1, 0, 0], [np.nan, 1, 0]]), [[0, 1, 2]]),
    (np.array([[0.0, 0, 0], [1, 0, 0], [0, -np.inf, 0]]), [[0, 1, 2]]),
    (np.zeros((3, 3)), [[0, 1, 2]]),                   # one point three times
])
def test_clean_mesh_errors(v, f):
    with pytest.raises(MeshLoadError) as err:
        clean_mesh(v, np.asarray(f), name="NAME")
    assert str(err.value).startswith("NAME: ")


# -- 6. file_digest ----------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 1000, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 5 * (1 << 20) // 2 + 7])
def test_file_digest_equals_sha256(size, tmp_path):
    data = np.random.default_rng(size).bytes(size)
    p = tmp_path / "blob.bin"
    p.write_bytes(data)
    assert file_digest(p) == hashlib.sha256(data).hexdigest()
    assert file_digest(str(p), chunk=4096) == hashlib.sha256(data).hexdigest()


def test_file_digest_changes_with_one_byte(tmp_path):
    data = bytearray(np.random.default_rng(7).bytes(3 << 20))
    p = tmp_path / "blob.bin"
    p.write_bytes(bytes(data))
    before = file_digest(p)
    data[(1 << 20) + 5] ^= 1  # a byte in the second chunk
    p.write_bytes(bytes(data))
    assert file_digest(p) != before
    assert file_digest(p) == hashlib.sha256(bytes(data)).hexdigest()


# -- 7. a large mesh ---------------------------------------------------------------------


def torus_grid(nu, nv, R=2.0, r=0.7):
    """Closed grid torus, 2 * nu * nv outward-wound triangles, built here."""
    u = np.linspace(0, 2 * np.pi, nu, endpoint=False)
    w = np.linspace(0, 2 * np.pi, nv, endpoint=False)
    U, W = np.meshgrid(u, w, indexing="ij")
    V = np.stack([(R + r * np.cos(W)) * np.cos(U), (R + r * np.cos(W)) * np.sin(U), r * np.sin(W)], -1)
    V = V.reshape(-1, 3)
    i = np.arange(nu)[:, None]
    j = np.arange(nv)[None, :]
    a = i * nv + j
    b = ((i + 1) % nu) * nv + j
    c = ((i + 1) % nu) * nv + (j + 1) % nv
    d = i * nv + (j + 1) % nv
    F = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])
    return V, F


def test_torus_grid_reference():
    V, F = torus_grid(60, 40)
    t = tris(V, F)
    assert euler(V, F) == 0
    # a fine polyhedral torus approaches 2 pi^2 R r^2 from below
    assert 0.98 * 2 * np.pi ** 2 * 2.0 * 0.7 ** 2 < volume(t) < 2 * np.pi ** 2 * 2.0 * 0.7 ** 2


def test_large_mesh_with_progress(tmp_path):
    import time

    V, F = torus_grid(600, 500)  # 600 000 faces, 300 000 vertices
    assert len(F) == 600_000 > LARGE_MESH
    t0 = V[F]
    path = tmp_path / "big.stl"
    write_binary_stl(path, t0)  # a soup: 1.8 M vertices to merge
    t0 = t0.astype(np.float32).astype(np.float64)
    calls = []
    start = time.perf_counter()
    m = load_mesh(path, progress=calls.append)
    elapsed = time.perf_counter() - start
    if elapsed > 20:
        pytest.skip(f"loading 600k faces took {elapsed:.1f} s (> 20 s) on this machine")

    assert len(calls) >= 1
    assert all(isinstance(c, str) and c.strip() for c in calls), calls
    assert len(m.faces) == 600_000
    assert len(m.vertices) == 300_000
    t1 = tris(m.vertices, m.faces)
    assert_same_triangles(t1, t0, atol=0, oriented=True)
    assert volume(t1) == pytest.approx(volume(t0), rel=1e-9)
    assert area(t1) == pytest.approx(area(t0), rel=1e-9)


def test_small_mesh_progress_is_optional(tmp_path):
    calls = []
    path = write("off", box(), tmp_path)
    m = load_mesh(path, progress=calls.append)
    assert all(isinstance(c, str) for c in calls)
    assert len(m.faces) == 12


def test_large_mesh_two_argument_progress(tmp_path):
    """A ``progress(stage, fraction)`` callback hears the reading (no fraction) and the clean-up's
    fractions, rising from 0 to 1, on one stage name."""
    V, F = torus_grid(600, 500)
    path = tmp_path / "big.stl"
    write_binary_stl(path, V[F])
    seen = []
    load_mesh(path, progress=lambda stage, fraction: seen.append((stage, fraction)))
    assert seen[0] == ("reading big.stl (29 MB)", None)
    cleaning = [f for s, f in seen if s == "cleaning 600000 triangles"]
    assert cleaning[0] == 0.0 and cleaning[-1] == 1.0 and cleaning == sorted(cleaning) and len(cleaning) >= 3
    assert len(seen) == 1 + len(cleaning)


def _shuffled_soup(nu=500, nv=300, seed=11):
    """The grid torus (2 nu nv faces) as a triangle soup in random order, with 10% duplicate faces
    (same corners, rotated or reversed) and 1% degenerate ones mixed in, and its vertex rows shuffled:
    nothing equal sits near its twin. Returns (vertices, faces, the soup's triangles in face order)."""
    rng = np.random.default_rng(seed)
    V, F = torus_grid(nu, nv)
    t = V[F]
    dup = t[rng.choice(len(t), len(t) // 10, replace=False)]
    k = rng.integers(0, 3, len(dup))
    dup = np.take_along_axis(dup, ((k[:, None] + np.arange(3)) % 3)[:, :, None], axis=1)
    rev = rng.random(len(dup)) < 0.5
    dup[rev] = dup[rev][:, ::-1]
    deg = t[rng.choice(len(t), len(t) // 100, replace=False)].copy()
    deg[:, 1] = deg[:, 0]
    soup = np.concatenate([t, dup, deg])[rng.permutation(len(t) + len(dup) + len(deg))]
    rows = soup.reshape(-1, 3)
    order = rng.permutation(len(rows))
    v = rows[order]
    f = np.argsort(order).reshape(-1, 3)  # row i of the soup is v[inverse[i]]
    assert np.array_equal(v[f], soup)
    return v, f, soup


def _expected_clean(soup):
    """The clean triangles, in order, by sorting (independent of the hash kernel): corners as
    lexicographic ids, degenerate faces out, the first face of each corner set kept."""
    ids = _corner_ids(soup.reshape(-1, 3)).reshape(-1, 3)
    keep = (ids[:, 0] != ids[:, 1]) & (ids[:, 1] != ids[:, 2]) & (ids[:, 0] != ids[:, 2])
    soup, ids = soup[keep], np.sort(ids[keep], axis=1)
    assert ids.max() < 1 << 21
    packed = (ids[:, 0] << 42) | (ids[:, 1] << 21) | ids[:, 2]
    _, first = np.unique(packed, return_index=True)
    return soup[np.sort(first)]


@pytest.fixture(scope="module")
def shuffled_soup():
    return _shuffled_soup()


def test_large_clean_up_matches_references(shuffled_soup):
    """300k faces (+10% duplicates, +1% degenerate, shuffled): the output equals, face for face and
    in order, what a sort-based reference keeps; a 20k-face sample equals the plain-Python reference."""
    v, f, soup = shuffled_soup
    v2, f2 = clean_mesh(v, f, name="big")
    assert len(f2) == 300_000 and len(v2) == 150_000
    got = tris(v2, f2)
    assert np.array_equal(got, _expected_clean(soup))
    # assert_clean, vectorised: distinct positions, all used, no degenerate or repeated face
    assert _corner_ids(v2).max() + 1 == len(v2)
    assert np.array_equal(np.unique(f2), np.arange(len(v2)))
    srt = np.sort(f2, axis=1)
    assert np.all((srt[:, 0] < srt[:, 1]) & (srt[:, 1] < srt[:, 2]))
    assert len(np.unique((srt[:, 0] << 42) | (srt[:, 1] << 21) | srt[:, 2])) == len(f2)
    edges = np.sort(np.concatenate([f2[:, [0, 1]], f2[:, [1, 2]], f2[:, [2, 0]]]), axis=1)
    assert len(v2) - len(np.unique(edges[:, 0] << 21 | edges[:, 1])) + len(f2) == 0  # Euler: a torus again
    # the sample: the plain-Python reference, as test_clean_mesh_matches_reference
    fs = f[:20_000]
    expected = _reference_clean(v, fs)
    vs, fs2 = clean_mesh(v, fs, name="sample")
    assert len(fs2) == len(expected)
    assert [tuple(map(tuple, t)) for t in tris(vs, fs2).tolist()] == [tuple(t) for t in expected]


MEMORY_SCRIPT = r'''
import json, resource, sys
import numpy as np
from app.scene.mesh_io import clean_mesh

def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)

v, f = np.load(sys.argv[1]), np.load(sys.argv[2])
clean_mesh(np.eye(4)[:, :3], np.array([[0, 1, 2], [0, 3, 1], [1, 3, 2], [0, 2, 3]]))  # load the kernels
try:  # reset the peak (VmHWM) to the current size: Linux >= 4.0
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    reset = True
except OSError:
    reset = False
before = status("VmRSS")
clean_mesh(v, f)
print(json.dumps({"before": before, "peak": status("VmHWM"), "reset": reset,
                  "input": v.nbytes + f.nbytes}))
'''


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
def test_large_clean_up_memory_is_linear(tmp_path, shuffled_soup):
    """Peak memory of cleaning the 333k-face shuffled soup, in a fresh process: at most 6 times the
    input arrays (measured: 1.2x). The hash tables are sized by the input, never quadratically;
    the allocations are deterministic, so the bound is not flaky. Without a resettable peak the
    measure is a lower bound and the test weaker, never wrong."""
    import json
    import subprocess
    import sys

    v, f, _ = shuffled_soup
    np.save(tmp_path / "v.npy", v)
    np.save(tmp_path / "f.npy", f)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, str(tmp_path / "v.npy"), str(tmp_path / "f.npy")],
                         check=True, capture_output=True, text=True, env=env, cwd=root, timeout=300)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    extra = r["peak"] - r["before"]
    print(f"\nclean-up of {len(f)} faces: input {r['input'] / 2**20:.0f} MB, peak +{extra / 2**20:.0f} MB "
          f"({extra / r['input']:.1f}x){'' if r['reset'] else ' (lower bound: VmHWM not resettable)'}")
    assert extra <= 6 * r["input"]


def test_clean_mesh_two_argument_progress(monkeypatch):
    """Above LARGE_MESH (lowered here) clean_mesh reports one stage with rising fractions; below, nothing."""
    import app.scene.mesh_io as mio

    V, F = torus_grid(20, 10)
    seen = []
    clean_mesh(V, F, progress=lambda s, fr: seen.append((s, fr)))
    assert seen == []
    monkeypatch.setattr(mio, "LARGE_MESH", 100)
    clean_mesh(V, F, progress=lambda s, fr: seen.append((s, fr)))
    assert {s for s, _ in seen} == {"cleaning 400 triangles"}
    fr = [x for _, x in seen]
    assert fr[0] == 0.0 and fr[-1] == 1.0 and fr == sorted(fr)
