"""The public API is fully annotated, and every annotation resolves.

"Public API" is every name ``collision`` exports (``__all__`` and whatever
else its ``__init__`` imports without an underscore), with the public
methods, properties and ``__init__`` of the exported classes and the fields of
the exported dataclasses, plus the public functions of every module of
``obbcollide.broad_phase``. Each of them must annotate every parameter and its
return, and ``typing.get_type_hints`` must evaluate those annotations (no
undefined name hides behind ``from __future__ import annotations``).

What is left out is listed in ``EXEMPT`` with the reason; the test checks
that those entries still exist and still deserve their exemption, and that
the walk below found the API it is meant to cover, so neither a stale
exemption nor an empty walk can make it pass.
"""

import dataclasses
import importlib
import inspect
import pkgutil
import types
import typing

import numpy as np
import pytest
from numpy.typing import NDArray

import obbcollide
import obbcollide.broad_phase
# qualified name -> why it carries no annotations
EXEMPT = {
    "obbcollide.broad_phase._base.reserve_keys":
        "numba dispatcher (@njit kernel): annotations would not type its compiled signatures",
    "obbcollide.broad_phase._base.pairs_from_keys":
        "numba dispatcher (@njit kernel): annotations would not type its compiled signatures",
}

# Names the walk must reach (a guard against a walk that silently finds nothing).
MUST_CHECK = {
    "obbcollide.closest_pt_point_plane", "obbcollide.collide", "obbcollide.ray_cast", "obbcollide.gjk_distance",
    "obbcollide.OBBTree.__init__", "obbcollide.OBBTree.from_arrays", "obbcollide.OBBTree.closed",
    "obbcollide.OBB.from_points", "obbcollide.HullTable.add", "obbcollide.ConvexPolyhedron.transformed",
    "obbcollide.DynamicAABBTree.__init__", "obbcollide.BroadPhase.update", "obbcollide.make_broad_phase",
    "obbcollide.broad_phase._base.check_boxes", "obbcollide.broad_phase.grid.median_extent",
    "obbcollide.broad_phase.octree.root_cube",
}


def _is_dispatcher(obj):
    return hasattr(obj, "py_func") and hasattr(obj, "signatures")


def _exported():
    """(qualified name, object) of everything ``collision`` exports."""
    names = set(obbcollide.__all__)
    names |= {n for n, v in vars(obbcollide).items()
              if not n.startswith("_") and not inspect.ismodule(v)}
    return sorted((f"obbcollide.{n}", getattr(obbcollide, n)) for n in names)


def _broad_phase_functions():
    """(qualified name, object) of the public module-level functions of obbcollide.broad_phase."""
    out = []
    pkg = obbcollide.broad_phase
    modules = [pkg] + [importlib.import_module(f"{pkg.__name__}.{m.name}")
                       for m in pkgutil.iter_modules(pkg.__path__)]
    for mod in modules:
        for name, obj in vars(mod).items():
            if name.startswith("_"):
                continue
            if (inspect.isfunction(obj) or _is_dispatcher(obj)) and getattr(obj, "__module__", None) == mod.__name__:
                out.append((f"{mod.__name__}.{name}", obj))
    return out


def _class_members(qual, cls):
    """(qualified name, function) of a class's public methods, properties and own ``__init__``."""
    out = []
    for klass in cls.__mro__:
        if not klass.__module__.startswith("obbcollide"):
            continue
        for name, raw in vars(klass).items():
            if name.startswith("_") and name != "__init__":
                continue
            if any(q == f"{qual}.{name}" for q, _ in out):
                continue  # overridden in a subclass: that one counts
            if isinstance(raw, property):
                out.append((f"{qual}.{name}", raw.fget))
            elif isinstance(raw, (classmethod, staticmethod)):
                out.append((f"{qual}.{name}", raw.__func__))
            elif inspect.isfunction(raw):
                out.append((f"{qual}.{name}", raw))
    return out


def _callables():
    items = []
    for qual, obj in _exported():
        if inspect.isclass(obj):
            items.append((qual, obj))
            items += _class_members(qual, obj)
        elif callable(obj):
            items.append((qual, obj))
    items += _broad_phase_functions()
    items += [(f"obbcollide.batch.{n}", getattr(obbcollide.batch, n)) for n in ("collide", "distance", "within")]
    return items


CALLABLES = _callables()
FUNCTIONS = [(q, f) for q, f in CALLABLES if not inspect.isclass(f)]
CLASSES = [(q, c) for q, c in CALLABLES if inspect.isclass(c)]


def _missing_annotations(func):
    """Names of the parameters (and ``return``) of ``func`` without an annotation."""
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    missing = [p.name for p in params if p.annotation is inspect.Parameter.empty]
    if sig.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing, [p.name for p in params]


def test_the_walk_covers_the_api():
    checked = {q for q, _ in CALLABLES}
    assert MUST_CHECK <= checked, sorted(MUST_CHECK - checked)
    assert len(FUNCTIONS) >= 100, len(FUNCTIONS)
    # every export is either a class, a function or a module-level constant that is annotated
    for qual, obj in _exported():
        if inspect.ismodule(obj):  # obbcollide.batch: its three queries are walked in _callables
            continue
        if not callable(obj):
            name = qual.rsplit(".", 1)[1]
            hints = {}
            for mod in (obbcollide, obbcollide.broad_phase):
                hints.update(typing.get_type_hints(mod))
            assert name in hints, f"{qual}: exported constant without an annotation"


def test_exemptions_are_current():
    everything = dict(CALLABLES)
    for qual, reason in EXEMPT.items():
        assert reason, qual
        assert qual in everything, f"{qual}: exempt but no longer public (drop it from EXEMPT)"
        obj = everything[qual]
        from numba.core.config import DISABLE_JIT
        assert _is_dispatcher(obj) or (DISABLE_JIT and inspect.isfunction(obj)), \
            f"{qual}: exempt as a numba dispatcher but is a {type(obj).__name__}"
    # no public numba dispatcher slips through unlisted
    for qual, obj in CALLABLES:
        if _is_dispatcher(obj):
            assert qual in EXEMPT, f"{qual}: a public numba dispatcher; annotate a wrapper or list it in EXEMPT"


@pytest.mark.parametrize("qual, func", [pytest.param(q, f, id=q) for q, f in FUNCTIONS if q not in EXEMPT])
def test_function_fully_annotated(qual, func):
    missing, params = _missing_annotations(func)
    assert not missing, f"{qual}: no annotation for {missing}"
    hints = typing.get_type_hints(func)  # raises NameError on an undefined name
    for name in params + ["return"]:
        assert name in hints, f"{qual}: {name} annotation did not resolve"


@pytest.mark.parametrize("qual, cls", [pytest.param(q, c, id=q) for q, c in CLASSES])
def test_class_fields_annotated(qual, cls):
    hints = typing.get_type_hints(cls)  # class and dataclass field annotations resolve
    if dataclasses.is_dataclass(cls):
        for f in dataclasses.fields(cls):
            hint = hints[f.name]
            # the placeholders the fields had before: say what the field holds
            assert hint is not object and hint is not np.ndarray, f"{qual}.{f.name}: {hint!r} is not specific"


def test_annotations_mention_the_array_dtype():
    """Returned arrays say their dtype: no bare ``np.ndarray`` in a public signature."""
    bare = []
    for qual, func in FUNCTIONS:
        if qual in EXEMPT:
            continue
        for name, hint in typing.get_type_hints(func).items():
            parts = typing.get_args(hint) or (hint,)
            if any(p is np.ndarray for p in parts):
                bare.append(f"{qual}:{name}")
    assert not bare, bare


def test_obb_tree_takes_a_mesh_like_object():
    """``OBBTree`` takes anything with vertices and faces (``MeshLike``): a duck-typed mesh builds."""

    class Mesh:
        vertices = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
        faces = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])

    tree = obbcollide.OBBTree(Mesh())
    assert tree.faces.shape == (4, 3) and tree.closed
    hints = typing.get_type_hints(obbcollide.OBBTree.__init__)
    assert "MeshLike" in repr(hints["vertices"])


# ---------------------------------------------------------------------------
# The annotations say what the code returns: real calls checked against them
# ---------------------------------------------------------------------------


def _conforms(value, hint):
    """Does ``value`` match the annotation ``hint``? (the forms the public API uses)"""
    if hint is typing.Any:
        return True
    if hint is None or hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, a) for a in args)
    if origin is np.ndarray:
        want = typing.get_args(args[1])[0]
        return isinstance(value, np.ndarray) and (want is typing.Any or value.dtype.type is want)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_conforms(v, args[0]) for v in value)
        return len(value) == len(args) and all(_conforms(v, a) for v, a in zip(value, args))
    if origin is list:
        return isinstance(value, list) and all(_conforms(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(_conforms(k, args[0]) and _conforms(v, args[1])
                                               for k, v in value.items())
    if hint is float:
        return isinstance(value, float)  # np.float64 is a float; an int is not what a float hint promises
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is bool:
        return isinstance(value, bool)
    if origin is type:
        return inspect.isclass(value) and issubclass(value, args[0])
    return isinstance(value, hint)


def _check_return(func, value):
    hint = typing.get_type_hints(func)["return"]
    assert _conforms(value, hint), f"{func.__qualname__} returned {value!r}, annotated {hint}"
    if dataclasses.is_dataclass(value):
        _check_fields(value)
    return value


def _check_fields(obj):
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        assert _conforms(v, hints[f.name]), f"{type(obj).__name__}.{f.name} = {v!r}, annotated {hints[f.name]}"


def _box_mesh():
    v = np.array([[x, y, z] for x in (-1.0, 1) for y in (-1.0, 1) for z in (-1.0, 1)])
    f = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                  [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    return v, f


def _pose(x=0.0):
    p = np.eye(4)
    p[0, 3] = x
    return p


def test_returned_values_match_the_annotations():
    c = obbcollide
    rng = np.random.default_rng(0)
    one = rng.normal(size=3)
    many = rng.normal(size=(5, 3))
    for args in ((one,), (many,)):  # single queries and batches
        _check_return(c.closest_pt_point_plane, c.closest_pt_point_plane(args[0], [0, 0, 1], 0.5))
        _check_return(c.closest_pt_point_segment, c.closest_pt_point_segment(args[0], [0, 0, 0], [1, 0, 0]))
        _check_return(c.closest_pt_point_triangle, c.closest_pt_point_triangle(args[0], *np.eye(3)))
        _check_return(c.closest_pt_line_line, c.closest_pt_line_line(args[0], [1, 0, 0], [0, 1, 0], [0, 1, 1]))
        _check_return(c.closest_pt_segment_segment,
                      c.closest_pt_segment_segment(args[0], [1, 0, 0], [0, 1, 0], [0, 1, 1]))
    for a in (np.zeros(2), np.zeros((4, 2))):
        _check_return(c.signed_2d_tri_area, c.signed_2d_tri_area(a, [1, 0], [0, 1]))
        _check_return(c.intersect_segment_segment_2d, c.intersect_segment_segment_2d(a, [1, 1], [0, 1], [1, 0]))
    tri = np.eye(3)
    for t2 in (tri + 0.1, tri + 5.0, np.stack([tri + 0.1, tri + 5.0])):
        _check_return(c.test_triangle_triangle, c.test_triangle_triangle(tri, t2))
    for t2 in (tri + [0.0, 0.0, 0.1], tri + 5.0):
        _check_return(c.intersect_triangle_triangle, c.intersect_triangle_triangle(tri, t2[[2, 0, 1]] * [1, 1, -1]))

    box = c.OBB.from_points(many)
    _check_fields(box)
    _check_return(c.OBB.contains, box.contains(many))
    _check_return(c.OBB.contains, box.contains(one))
    _check_return(type(box).corners.fget, box.corners)
    _check_return(c.test_obb_obb, c.test_obb_obb(box, box))
    _check_return(c.test_obb_obb, c.test_obb_obb(box, box, return_axis=True))
    _check_return(c.closest_pt_point_obb, c.closest_pt_point_obb(many, box))

    v, f = _box_mesh()
    poly = c.ConvexPolyhedron.from_mesh(v, f)
    _check_fields(poly)
    _check_return(c.convex_convex_sat, c.convex_convex_sat(v, f, v + 0.5, None))
    model = c.StandardModel.from_polyhedron(poly)
    _check_fields(model)
    _check_return(c.position_factor, c.position_factor(one, model, 0))
    _check_return(c.position_factor, c.position_factor(many, poly, 0))
    moved = model.transformed(_pose(0.5))
    _check_return(c.polygon_intersection_factor, c.polygon_intersection_factor(model, 0, moved, 1))
    _check_return(c.vector_symbol_collide, c.vector_symbol_collide(model, poly))
    _check_return(c.vector_symbol_collide, c.vector_symbol_collide([model, model], (poly,)))

    tree = c.OBBTree(v, f)
    _check_return(c.collide, c.collide(tree, _pose(), tree, _pose(1.0)))
    _check_return(c.collide, c.collide(tree, _pose(), tree, _pose(5.0)))
    _check_return(c.collide, c.collide(tree, _pose(), c.OBBTree(v * 0.1, f), _pose()))  # contained
    _check_return(c.distance, c.distance(tree, _pose(), tree, _pose(5.0)))
    _check_return(c.within, c.within(tree, _pose(), tree, _pose(5.0), 0.5))
    _check_return(c.ray_cast, c.ray_cast(tree, _pose(), [5.0, 0, 0], [-1, 0, 0]))
    _check_return(c.ray_cast, c.ray_cast(tree, _pose(), [[5.0, 0, 0], [5, 5, 5]], [-1, 0, 0]))
    for name in ("closed", "component_vertices", "node_count", "depth"):
        _check_return(getattr(c.OBBTree, name).fget, getattr(tree, name))
    _check_return(c.OBBTree.boxes_at_depth, tree.boxes_at_depth(1))
    _check_return(c.triangles_near_box, c.triangles_near_box(tree, _pose(), np.zeros(3), np.eye(3), np.ones(3)))

    gjk = _check_return(c.gjk_distance, c.gjk_distance(v, _pose(), v, _pose(3.0)))
    _check_return(c.convex_penetration, c.convex_penetration(v, _pose(), v, _pose(1.5), simplex=gjk.simplex))
    hd = c.HullData.from_polyhedron(poly)
    _check_fields(hd)
    _check_return(c.HullData.face, hd.face(0))
    m = _check_return(c.collide_hull_hull, c.collide_hull_hull(hd, _pose(), poly, _pose(1.5), cache=c.SatCache()))
    _check_return(c.reduce_contacts, c.reduce_contacts(m.points_b, m.depths, m.normal))
    _check_return(c.match_contacts, c.match_contacts(m.ids, m.points_a, m.ids, m.points_a, 1e-3))
    _check_return(c.SatCache.indices.fget, c.SatCache().indices)
    table = c.HullTable([hd])
    _check_return(c.HullTable.extend, table.extend([poly, hd]))
    _check_return(c.HullTable.array, table.array("normals"))
    batch = _check_return(c.collide_hull_pairs, c.collide_hull_pairs(table, [0, 0], np.stack([_pose()] * 2), [0, 0],
                                                                  np.stack([_pose(1.5), _pose(5.0)])))
    _check_return(c.ManifoldBatch.manifold, batch.manifold(0))

    sphere, hull = c.Sphere(0.5), c.box_hull([1.0, 1.0, 1.0])
    capsule, ground = c.Capsule(0.3, 0.5), c.HalfSpace([0.0, 1.0, 0.0])
    for s in (sphere, capsule, hull, ground):
        _check_fields(s)
    cache = c.PairCache()
    for a, b in ((sphere, hull), (hull, hull), (ground, capsule), (capsule, sphere)):
        _check_return(c.collide_shapes, c.collide_shapes(a, _pose(), b, _pose(0.5), cache=cache))
    _check_fields(cache)
    pieces = c.collide_convex_trimesh(hull, _pose(1.5), c.TriMesh(tree), _pose())
    assert pieces
    _check_return(c.collide_convex_trimesh, pieces)

    lo = rng.uniform(0, 5, size=(30, 3))
    for name, cls in c.BROAD_PHASES.items():
        bp = _check_return(c.make_broad_phase, c.make_broad_phase(name))
        _check_return(cls.update, bp.update(lo, lo + 1.0))
        assert _conforms(bp.stats, typing.get_type_hints(c.BroadPhase)["stats"]), (name, bp.stats)
    _check_return(c.broad_phase.check_boxes, c.broad_phase.check_boxes(lo, lo + 1.0))


def test_the_conformance_check_can_fail():
    """The checker above rejects what does not match (so the test above is not vacuous)."""
    f64 = NDArray[np.float64]
    assert _conforms(np.zeros(3), f64) and not _conforms(np.zeros(3, np.int64), f64)
    assert not _conforms(np.float64(1.0), f64) and _conforms(np.float64(1.0), float | f64)
    assert not _conforms(np.bool_(True), bool) and not _conforms(1, float) and not _conforms(True, int)
    assert not _conforms((np.zeros(3),), tuple[f64, f64]) and _conforms((1, 2, 3), tuple[int, ...])
    assert not _conforms([np.zeros(2, np.int8)], list[NDArray[np.int64]])
    assert not _conforms(None, f64) and _conforms(None, f64 | None)
    assert not _conforms({"a": "x"}, dict[str, int | float | bool])
