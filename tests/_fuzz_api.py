"""Fuzzing the library's public API (hypothesis), run in a child process by tests/test_fuzz.py.

``python -m tests._fuzz_api EXAMPLES`` calls every entry of :data:`CALLS` (the functions and
classes exported by ``collision``) with valid arguments in which one argument is replaced by
a hostile value: None, strings (also ``"1.5"``), bytes, complex numbers, bools, integers too
large for float64, 1e300, NaN, infinity, empty, ragged and deeply nested lists, arrays of the
wrong shape or dtype, objects of the wrong type; or, with ``finite`` draws, by finite numbers
up to the library's bound (``collision._validate.MAX_COORD``) and by values just past it.

The contract asserted for each call:

- it returns, and every float in the answer is finite (NaN nowhere; infinity only where the
  API documents it: a ray's miss); or
- it raises ``ValueError`` whose message names the replaced argument;
- nothing else (TypeError, AttributeError, IndexError, ...) escapes.

Process death and hangs are the parent's to see (it runs this with a timeout). The child
prints one JSON line: the number of calls by outcome and the first failures.
"""

import dataclasses
import json
import math
import sys
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import obbcollide as co
from obbcollide._validate import MAX_COORD

COUNTS = Counter()
FAILURES = []

# -- valid arguments ------------------------------------------------------------------------

TETRA = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
TETRA_F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
CUBE = np.array([[x, y, z] for x in (0.0, 1.0) for y in (0.0, 1.0) for z in (0.0, 1.0)])
POSE = np.eye(4)
POSE2 = np.eye(4)
POSE2[:3, 3] = (0.5, 0.2, 0.1)
TRI1 = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
TRI2 = np.array([[0.2, 0.2, -0.5], [0.2, 0.2, 0.5], [0.9, 0.1, 0.0]])


def _objects():
    poly = co.ConvexPolyhedron.from_points(CUBE)
    tree = co.OBBTree(TETRA, TETRA_F)
    model = co.StandardModel.from_points(CUBE)
    hull = co.HullData.from_points(CUBE)
    table = co.HullTable([poly])
    obb = co.OBB.from_points(CUBE)
    return poly, tree, model, hull, table, obb


POLY, TREE, MODEL, HULLDATA, TABLE, BOX = _objects()

# name: (callable, {argument: valid value}); the arguments are passed by keyword
CALLS = {
    "closest_pt_point_plane": (co.closest_pt_point_plane, dict(p=[1.0, 2.0, 3.0], n=[0.0, 1.0, 0.0], d=0.5)),
    "closest_pt_point_ray": (co.closest_pt_point_ray, dict(p=[1.0, 2.0, 3.0], origin=[0.0, 0.0, 0.0],
                                                         direction=[1.0, 0.0, 0.0])),
    "closest_pt_point_segment": (co.closest_pt_point_segment, dict(p=[1.0, 2.0, 3.0], a=[0.0, 0.0, 0.0],
                                                                 b=[1.0, 1.0, 0.0])),
    "closest_pt_point_sphere": (co.closest_pt_point_sphere, dict(p=[1.0, 2.0, 3.0], center=[0.0, 0.0, 0.0],
                                                               radius=1.0)),
    "closest_pt_point_aabb": (co.closest_pt_point_aabb, dict(p=[1.0, 2.0, 3.0], bmin=[0.0, 0.0, 0.0],
                                                           bmax=[1.0, 1.0, 1.0])),
    "closest_pt_point_obb": (co.closest_pt_point_obb, dict(p=[1.0, 2.0, 3.0], obb=BOX)),
    "closest_pt_point_rect": (co.closest_pt_point_rect, dict(p=[1.0, 2.0, 3.0], center=[0.0, 0.0, 0.0],
                                                           axes=[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
                                                           half_extents=[1.0, 2.0])),
    "closest_pt_point_triangle": (co.closest_pt_point_triangle, dict(p=[1.0, 2.0, 3.0], a=TRI1[0], b=TRI1[1],
                                                                   c=TRI1[2])),
    "closest_pt_point_tetrahedron": (co.closest_pt_point_tetrahedron, dict(p=[1.0, 2.0, 3.0], a=TETRA[0],
                                                                         b=TETRA[1], c=TETRA[2], d=TETRA[3])),
    "closest_pt_point_convex": (co.closest_pt_point_convex, dict(p=[1.0, 2.0, 3.0], vertices=CUBE)),
    "closest_pt_line_line": (co.closest_pt_line_line, dict(p1=[0.0, 0.0, 0.0], q1=[1.0, 0.0, 0.0],
                                                         p2=[0.0, 1.0, 1.0], q2=[0.0, 2.0, 1.0])),
    "closest_pt_segment_segment": (co.closest_pt_segment_segment, dict(p1=[0.0, 0.0, 0.0], q1=[1.0, 0.0, 0.0],
                                                                     p2=[0.0, 1.0, 1.0], q2=[0.0, 2.0, 1.0])),
    "closest_pt_segment_triangle": (co.closest_pt_segment_triangle, dict(p=[0.2, 0.2, 1.0], q=[0.2, 0.2, 2.0],
                                                                       a=TRI1[0], b=TRI1[1], c=TRI1[2])),
    "closest_pt_triangle_triangle": (co.closest_pt_triangle_triangle, dict(a0=TRI1[0], a1=TRI1[1], a2=TRI1[2],
                                                                         b0=TRI2[0], b1=TRI2[1], b2=TRI2[2])),
    "signed_2d_tri_area": (co.signed_2d_tri_area, dict(a=[0.0, 0.0], b=[1.0, 0.0], c=[0.0, 1.0])),
    "intersect_segment_segment_2d": (co.intersect_segment_segment_2d, dict(a=[0.0, 0.0], b=[1.0, 1.0],
                                                                         c=[0.0, 1.0], d=[1.0, 0.0])),
    "OBB": (co.OBB, dict(center=[0.0, 0.0, 0.0], axes=np.eye(3), half_extents=[1.0, 1.0, 1.0])),
    "OBB.from_points": (co.OBB.from_points, dict(points=CUBE)),
    "OBB.from_triangles": (co.OBB.from_triangles, dict(triangles=[TRI1, TRI2])),
    "test_obb_obb": (co.test_obb_obb, dict(a=BOX, b=co.OBB.from_points(CUBE + 0.5))),
    "test_triangle_triangle": (co.test_triangle_triangle, dict(t1=TRI1, t2=TRI2)),
    "intersect_triangle_triangle": (co.intersect_triangle_triangle, dict(t1=TRI1, t2=TRI2)),
    "ConvexPolyhedron.from_points": (co.ConvexPolyhedron.from_points, dict(points=CUBE)),
    "ConvexPolyhedron.from_mesh": (co.ConvexPolyhedron.from_mesh, dict(vertices=TETRA, faces=TETRA_F)),
    "convex_convex_sat": (co.convex_convex_sat, dict(verts_a=TETRA, faces_a=TETRA_F, verts_b=TETRA + 0.2,
                                                   faces_b=TETRA_F)),
    "StandardModel.from_points": (co.StandardModel.from_points, dict(points=CUBE)),
    "vector_symbol_collide": (co.vector_symbol_collide, dict(model_a=MODEL,
                                                           model_b=co.StandardModel.from_points(CUBE + 0.5))),
    "OBBTree": (co.OBBTree, dict(vertices=TETRA, faces=TETRA_F)),
    "collide": (co.collide, dict(tree_a=TREE, pose_a=POSE, tree_b=TREE, pose_b=POSE2)),
    "distance": (co.distance, dict(tree_a=TREE, pose_a=POSE, tree_b=TREE, pose_b=POSE2)),
    "within": (co.within, dict(tree_a=TREE, pose_a=POSE, tree_b=TREE, pose_b=POSE2, tolerance=0.1)),
    "ray_cast": (co.ray_cast, dict(tree=TREE, pose=POSE, origin=[0.2, 0.2, 5.0], direction=[0.0, 0.0, -1.0])),
    "make_broad_phase": (co.make_broad_phase, dict(name="grid")),
    "BroadPhase.update": (lambda lo, hi: co.make_broad_phase("sap").update(lo, hi),
                          dict(lo=[[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]], hi=[[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])),
    "UniformGrid": (co.UniformGrid, dict(cell_size=1.0, cell_factor=1.5, max_cells=64)),
    "DynamicAABBTree": (co.DynamicAABBTree, dict(margin_rel=0.1, margin_abs=0.01, shrink=4.0, predict=2.0)),
    "gjk_distance": (co.gjk_distance, dict(points_a=CUBE, pose_a=POSE, points_b=CUBE, pose_b=POSE2 * 1.0,
                                         radius_a=0.0, radius_b=0.0)),
    "convex_penetration": (co.convex_penetration, dict(points_a=CUBE, pose_a=POSE, points_b=CUBE, pose_b=POSE2,
                                                     radius_a=0.0, radius_b=0.0)),
    "HullData.from_points": (co.HullData.from_points, dict(points=CUBE)),
    "collide_hull_hull": (co.collide_hull_hull, dict(hull_a=HULLDATA, pose_a=POSE, hull_b=HULLDATA, pose_b=POSE2,
                                                   margin=0.0)),
    "collide_hull_pairs": (co.collide_hull_pairs, dict(table=TABLE, hull_ids_a=[0], poses_a=[POSE], hull_ids_b=[0],
                                                     poses_b=[POSE2], margin=0.0)),
    "match_contacts": (co.match_contacts, dict(old_ids=[1, 2], old_points=[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]],
                                             new_ids=[2, 3], new_points=[[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]],
                                             tol=0.01)),
    "reduce_contacts": (co.reduce_contacts, dict(points=CUBE, depths=np.linspace(0.0, 0.1, 8),
                                               normal=[0.0, 1.0, 0.0])),
    "Sphere": (co.Sphere, dict(radius=1.0, center=[0.0, 0.0, 0.0])),
    "Capsule": (co.Capsule, dict(radius=0.5, half_height=1.0)),
    "Hull.from_points": (co.Hull.from_points, dict(points=CUBE)),
    "HalfSpace": (co.HalfSpace, dict(normal=[0.0, 1.0, 0.0], offset=0.0)),
    "box_hull": (co.box_hull, dict(half_extents=[1.0, 2.0, 3.0])),
    "collide_shapes": (co.collide_shapes, dict(shape_a=co.Sphere(1.0), pose_a=POSE, shape_b=co.box_hull([1, 1, 1]),
                                             pose_b=POSE2, margin=0.0)),
    "collide_convex_trimesh": (co.collide_convex_trimesh, dict(shape=co.Sphere(0.5), pose_a=POSE2,
                                                             mesh=co.TriMesh(TREE), pose_b=POSE, margin=0.0)),
    "triangles_near_box": (co.triangles_near_box, dict(tree=TREE, pose=POSE, center=[0.2, 0.2, 0.2],
                                                     axes=np.eye(3), half_extents=[0.5, 0.5, 0.5])),
}
# answers that may hold infinity by contract (a ray that misses: t = inf, and its point NaN)
INFINITE_OK = {"ray_cast"}

# -- hostile values -------------------------------------------------------------------------


def _translated(far):
    p = np.eye(4)
    p[:3, 3] = (far, -far / 2, 0.0)
    return p


def _nested(depth):
    x = [1.0, 2.0, 3.0]
    for _ in range(depth):
        x = [x]
    return x


HOSTILE = st.one_of(
    st.sampled_from([None, "1.5", "abc", b"1", 1j, [1j, 0.0, 0.0], True, False, [True, False, True], 10 ** 400,
                     -10 ** 400, [10 ** 400, 0, 0], 1e300, -1e300, [1e300, 0.0, 0.0], math.nan, math.inf, -math.inf,
                     [math.nan, 0.0, 0.0], [0.0, math.inf, 0.0], [], [[]], [[1.0, 2.0], [3.0]], ["1", "2", "3"],
                     {"x": 1.0}, object(), _nested(40), _nested(3000), np.zeros((0, 3)), np.zeros((2, 5)),
                     np.array(["a", "b", "c"]), np.ones(3, dtype=bool), np.ones(3, dtype=complex),
                     np.full(3, 5e299), np.float32(1.5), np.int64(2), _translated(1e300), _translated(1e30),
                     _translated(1e17)]),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=5),
)


def _finite_like(value, draw):
    """A finite array shaped like ``value``: magnitudes from 1e-300 to just past MAX_COORD."""
    arr = np.asarray(value, dtype=float)
    scale = draw(st.sampled_from([1.0, 1e-300, 1e6, 1e15, MAX_COORD, 2 * MAX_COORD]))
    return (draw(st.lists(st.floats(-1.0, 1.0), min_size=arr.size, max_size=arr.size).map(np.array))
            .reshape(arr.shape) * scale)


def _floats_in(result, path="result"):
    """Every float in the answer, with where it is."""
    if isinstance(result, (bool, np.bool_, str, type(None))):
        return
    if isinstance(result, (float, np.floating)):
        yield path, float(result)
    elif isinstance(result, np.ndarray):
        if result.dtype.kind == "f" and result.size:
            yield path, float(result[~np.isfinite(result)][0]) if not np.all(np.isfinite(result)) else 0.0
    elif dataclasses.is_dataclass(result):
        for f in dataclasses.fields(result):
            yield from _floats_in(getattr(result, f.name), f"{path}.{f.name}")
    elif isinstance(result, (list, tuple)):
        for k, x in enumerate(result[:64]):
            yield from _floats_in(x, f"{path}[{k}]")


def call_once(name, arg, value):
    """Call ``CALLS[name]`` with ``arg`` replaced by ``value``; returns the outcome's label."""
    fn, base = CALLS[name]
    kwargs = dict(base)
    kwargs[arg] = value
    try:
        result = fn(**kwargs)
    except ValueError as exc:
        if arg not in str(exc):
            return "fail", f"{name}({arg}={_short(value)}): ValueError without the argument's name: {exc}"
        return "ValueError naming the argument", None
    except Exception as exc:  # noqa: BLE001 - every other exception breaks the contract
        return "fail", f"{name}({arg}={_short(value)}): {type(exc).__name__}: {_short(exc)}"
    if name == "ray_cast" and not np.any(result.hit):
        return "returned a finite answer", None  # a miss: t = inf, point and normal NaN, as documented
    for where, x in _floats_in(result):
        if math.isnan(x) or (math.isinf(x) and name not in INFINITE_OK):
            return "fail", f"{name}({arg}={_short(value)}): {where} is {x} for input the call accepted"
    return "returned a finite answer", None


def _short(x):
    try:
        text = repr(x)
    except Exception:  # noqa: BLE001
        text = type(x).__name__
    return text if len(text) < 120 else text[:117] + "..."


GROUPS = Counter()  # failures by (call, argument, what went wrong)


def record(outcome, failure):
    COUNTS[outcome] += 1
    if failure:
        GROUPS[failure.split("=", 1)[0] + " | " + failure.split("): ", 1)[-1].split(":")[0]] += 1
        if len(FAILURES) < 200 and failure not in FAILURES:
            FAILURES.append(failure)


def run(examples):
    names = sorted(CALLS)

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def hostile(data):
        name = data.draw(st.sampled_from(names))
        arg = data.draw(st.sampled_from(sorted(CALLS[name][1])))
        record(*call_once(name, arg, data.draw(HOSTILE)))

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def finite(data):
        name = data.draw(st.sampled_from(names))
        numeric = [a for a, v in CALLS[name][1].items() if isinstance(v, (list, np.ndarray, float))
                   and not isinstance(v, str) and np.asarray(v).dtype.kind == "f"]
        if not numeric:
            return
        arg = data.draw(st.sampled_from(sorted(numeric)))
        record(*call_once(name, arg, _finite_like(CALLS[name][1][arg], data.draw)))

    # every (function, argument) once with each fixed hostile value, then the random draws
    for name in names:
        for arg in sorted(CALLS[name][1]):
            for value in (None, "1.5", True, 10 ** 400, math.nan, 1e300, _nested(3000)):
                record(*call_once(name, arg, value))
    hostile()
    finite()


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
    print(json.dumps({"counts": dict(COUNTS), "groups": dict(GROUPS), "failures": FAILURES}))
