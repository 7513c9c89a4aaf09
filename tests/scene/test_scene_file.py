"""Tests for scene files (app/scene/scene_file.py) and building scenes from them (app/scene/loader.py).

What is compared with what:

- ``read_scene`` errors: for every kind of bad body (unknown key, wrong types,
  non-finite numbers from TOML ``nan``/``inf``, missing mesh, mesh and shape
  both or neither, unknown shape, missing or inapplicable shape parameters,
  bad motion, non-static plane, colour outside [0, 1], duplicate name, bad
  ``decompose`` tables, a body that is not a table, bad names) a file holds
  one bad body between two good ones; the spec must hold exactly the two good
  bodies (equal to the hand-written ``BodySpec``) and exactly one error, which
  starts with ``"<absolute path>: body '<name>'"`` (``"body #2"`` when the body
  has no usable name) and contains the key and the problem. File-level
  problems (unknown top-level keys, bad ``[scene]`` keys, dt and gravity) give
  one error and keep all three bodies. Several problems in one file give one
  error each, in file order.
- ``SceneError`` (a ``ValueError``) naming the path for: missing file, a
  folder, invalid TOML, no ``[[body]]``, a single ``[body]`` table, bytes that
  are not UTF-8.
- Save then read: a hypothesis property over random valid ``SceneSpec``s
  (every shape with random positive sizes, mesh bodies pointing into
  ``assets/meshes`` and at files written under the test's own folder with
  spaces, quotes and non-ASCII in their names, random finite poses,
  velocities, densities, scales, motions, colours, ``decompose`` tables;
  names with quotes, backslashes, newlines and unicode): the read spec equals
  the saved one exactly (floats are written with ``repr``, so no tolerance),
  mesh paths are written relative to the scene's folder when the mesh is in
  that folder's tree or its parent's, else absolute, and resolve to the same
  absolute file. The text itself: one ``[[body]]`` table per body, every
  vector on one line, defaults left out, the header as comments.
- Atomic save: ``os.replace`` or ``os.fsync`` made to raise ``OSError``: the
  error propagates, the old file's bytes are unchanged, no temporary file is
  left, and the temporary file was in the target's folder; a missing folder
  raises ``OSError`` and creates nothing.
- ``BodySpec.pose``: equal (1e-12) to scipy's
  ``Rotation.from_euler("xyz", degrees=True)`` (extrinsic x, then y, then z),
  orthonormal with determinant 1, translation = position; a hand-worked
  example fixes the order.
- ``primitive_mesh``: closed, consistently wound, outward (positive volume),
  centred; box volume exact (1e-12); sphere, capsule and cylinder are
  inscribed polyhedra (every vertex on the ideal surface, 1e-9), so their
  volume is at most the analytic one and, at this tessellation, within 1%
  (sphere: icosphere, measured 0.86% less), 1.5% (capsule: 24 segments,
  1.31%) and 1% (cylinder: 32 sections, 0.64%); capsule and cylinder axes
  along y (bounding boxes); the plane is two triangles at y = 0 facing +y.
- ``mass_properties``: box mass = density * volume, centre of mass = its
  centre, inertia = analytic box inertia rotated into place (1e-9 relative);
  inverted winding gives the same positive result; an open mesh gives None.
- ``build_body``: an open OBJ surface that is not static moves as its convex
  hull (mass, centre and inertia of a solid square pyramid, analytic, 1e-9);
  a flat one must be static (``ValueError`` naming the body otherwise); an
  open one builds when static; primitive bodies carry the spec's pose,
  velocities, colour, motion and scaled mass.
- ``scene_registry`` / ``load_scene``: every example scene loads with no
  errors and one body per ``[[body]]``; primitives.toml checked in detail;
  a corrupt mesh file or a flat dynamic mesh leaves that body out with an
  error naming the file, and the other bodies load (an open one among them).

Every test uses a private decomposition cache (``OBBCOLLIDE_CACHE`` and
``cache=`` under pytest's tmp folders).
"""

import json
import math
import os
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
import trimesh
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from app.scene.pieces import METHODS
from app.scene.loader import PALETTE, build_body, load_scene, mass_properties, primitive_mesh
from app.scene.scene_file import (MOTIONS, SHAPES, BodySpec, SceneError, SceneSpec, read_scene, save_scene,
                            scene_registry)

ROOT = Path(__file__).resolve().parents[2]
MESHES = ROOT / "assets" / "meshes"
SCENES = ROOT / "assets" / "scenes"


@pytest.fixture(scope="module", autouse=True)
def private_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OBBCOLLIDE_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


def toml_str(s):
    """A TOML basic string (JSON string escapes are valid TOML escapes)."""
    return json.dumps(str(s), ensure_ascii=False)


# -- per-body errors ---------------------------------------------------------------------

FIRST = 'name = "first"\nshape = "sphere"\nradius = 0.5\n'
MIDDLE = 'name = "middle"\nshape = "capsule"\nradius = 0.2\nheight = 0.5\nposition = [0.0, 2.0, 0.0]\n'
LAST = 'name = "last"\nshape = "box"\nsize = [1.0, 2.0, 3.0]\nposition = [0.0, 1.0, 0.0]\n'
FIRST_SPEC = BodySpec("first", shape="sphere", radius=0.5)
MIDDLE_SPEC = BodySpec("middle", shape="capsule", radius=0.2, height=0.5, position=(0.0, 2.0, 0.0))
LAST_SPEC = BodySpec("last", shape="box", size=(1.0, 2.0, 3.0), position=(0.0, 1.0, 0.0))
BOX_PLY = toml_str(MESHES / "box.ply")


def scene_text(middle=MIDDLE, header=""):
    return f"{header}\n\n[[body]]\n{FIRST}\n[[body]]\n{middle}\n[[body]]\n{LAST}"


def sphere(extra, name='"bad"'):
    return f"name = {name}\nshape = \"sphere\"\nradius = 1.0\n{extra}\n"


NAMED = "body 'bad'"
UNNAMED = "body #2"
BODY_CASES = [
    # unknown keys
    pytest.param(sphere("colour = [1.0, 0.0, 0.0]"), NAMED, ["unknown key 'colour'"], id="unknown-key"),
    pytest.param('shape = "sphere"\nradius = 1.0\nmass = 3.0\n', UNNAMED, ["unknown key 'mass'"],
                 id="unknown-key-no-name"),
    # wrong types and sizes
    pytest.param(sphere('position = "0 0 0"'), NAMED, ["key 'position'", "expected a list of 3 numbers"],
                 id="position-string"),
    pytest.param(sphere("position = [1.0, 2.0]"), NAMED, ["key 'position'", "expected a list of 3 numbers"],
                 id="position-2-numbers"),
    pytest.param(sphere("position = [1.0, 2.0, 3.0, 4.0]"), NAMED, ["key 'position'", "list of 3 numbers"],
                 id="position-4-numbers"),
    pytest.param(sphere('position = [1.0, "2", 3.0]'), NAMED, ["key 'position'", "list of 3 numbers"],
                 id="position-string-element"),
    pytest.param(sphere("velocity = [true, 0.0, 0.0]"), NAMED, ["key 'velocity'", "list of 3 numbers"],
                 id="velocity-bool-element"),
    pytest.param(sphere("rotation_deg = 30.0"), NAMED, ["key 'rotation_deg'", "list of 3 numbers"],
                 id="rotation-scalar"),
    pytest.param(sphere("density = true"), NAMED, ["key 'density'", "expected a number"], id="density-bool"),
    pytest.param(sphere('density = "heavy"'), NAMED, ["key 'density'", "expected a number"],
                 id="density-string"),
    pytest.param(sphere("density = 0.0"), NAMED, ["key 'density'", "must be > 0"], id="density-zero"),
    pytest.param(sphere("density = -5"), NAMED, ["key 'density'", "must be > 0"], id="density-negative"),
    pytest.param(sphere("scale = 0"), NAMED, ["key 'scale'", "must be > 0"], id="scale-zero"),
    pytest.param(sphere('scale = "big"'), NAMED, ["key 'scale'", "expected a number"], id="scale-string"),
    # non-finite numbers (TOML nan / inf)
    pytest.param(sphere("density = nan"), NAMED, ["key 'density'", "expected a number"], id="density-nan"),
    pytest.param(sphere("density = inf"), NAMED, ["key 'density'", "expected a number"], id="density-inf"),
    pytest.param(sphere("position = [0.0, nan, 0.0]"), NAMED, ["key 'position'", "finite"], id="position-nan"),
    pytest.param(sphere("angular_velocity = [inf, 0.0, 0.0]"), NAMED, ["key 'angular_velocity'", "finite"],
                 id="spin-inf"),
    pytest.param(sphere("rotation_deg = [0.0, 0.0, -inf]"), NAMED, ["key 'rotation_deg'", "finite"],
                 id="rotation-minus-inf"),
    pytest.param('name = "bad"\nshape = "sphere"\nradius = nan\n', NAMED, ["key 'radius'", "expected a number"],
                 id="radius-nan"),
    pytest.param('name = "bad"\nshape = "box"\nsize = [1.0, inf, 1.0]\n', NAMED, ["key 'size'", "finite"],
                 id="size-inf"),
    # mesh / shape
    pytest.param('name = "bad"\nmesh = "missing/nope.obj"\n', NAMED,
                 ["key 'mesh'", "no such file", "{dir}/missing/nope.obj"], id="mesh-missing"),
    pytest.param('name = "bad"\nmesh = 5\n', NAMED, ["key 'mesh'", "expected a file path"], id="mesh-not-string"),
    pytest.param(f'name = "bad"\nmesh = {BOX_PLY}\nshape = "box"\nsize = [1.0, 1.0, 1.0]\n', NAMED,
                 ["exactly one of 'mesh'", "'shape'"], id="mesh-and-shape"),
    pytest.param('name = "bad"\nposition = [0.0, 0.0, 0.0]\n', NAMED, ["exactly one of 'mesh'", "'shape'"],
                 id="neither-mesh-nor-shape"),
    pytest.param('name = "bad"\nshape = "cone"\nradius = 1.0\n', NAMED, ["key 'shape'", "'cone'"],
                 id="unknown-shape"),
    pytest.param('name = "bad"\nshape = 3\n', NAMED, ["key 'shape'", "3"], id="shape-number"),
    pytest.param('name = "bad"\nshape = ["box"]\nsize = [1.0, 1.0, 1.0]\n', NAMED, ["key 'shape'"],
                 id="shape-array"),
    pytest.param('name = "bad"\nshape = {kind = "box"}\nsize = [1.0, 1.0, 1.0]\n', NAMED, ["key 'shape'"],
                 id="shape-table"),
    pytest.param('name = "bad"\nshape = "box"\n', NAMED, ["box needs the key 'size'"], id="box-without-size"),
    pytest.param('name = "bad"\nshape = "capsule"\nradius = 0.2\n', NAMED, ["capsule needs the key 'height'"],
                 id="capsule-without-height"),
    pytest.param('name = "bad"\nshape = "cylinder"\nheight = 0.2\n', NAMED, ["cylinder needs the key 'radius'"],
                 id="cylinder-without-radius"),
    pytest.param('name = "bad"\nshape = "sphere"\n', NAMED, ["sphere needs the key 'radius'"],
                 id="sphere-without-radius"),
    pytest.param('name = "bad"\nshape = "plane"\nmotion = "static"\n', NAMED, ["plane needs the key 'size'"],
                 id="plane-without-size"),
    pytest.param('name = "bad"\nshape = "box"\nsize = [1.0, 1.0, 1.0]\nradius = 1.0\n', NAMED,
                 ["key 'radius' does not apply to a box"], id="radius-on-box"),
    pytest.param(sphere("height = 1.0"), NAMED, ["key 'height' does not apply to a sphere"], id="height-on-sphere"),
    pytest.param(sphere("size = [1.0, 1.0, 1.0]"), NAMED, ["key 'size' does not apply to a sphere"],
                 id="size-on-sphere"),
    pytest.param(f'name = "bad"\nmesh = {BOX_PLY}\nsize = [1.0, 1.0, 1.0]\n', NAMED,
                 ["key 'size' belongs to a primitive shape"], id="size-on-mesh"),
    pytest.param(f'name = "bad"\nmesh = {BOX_PLY}\nradius = 1.0\n', NAMED,
                 ["key 'radius' belongs to a primitive shape"], id="radius-on-mesh"),
    pytest.param('name = "bad"\nshape = "box"\nsize = [1.0, 1.0]\n', NAMED, ["key 'size'", "list of 3 numbers"],
                 id="box-size-2-numbers"),
    pytest.param('name = "bad"\nshape = "box"\nsize = [1.0, 0.0, 1.0]\n', NAMED, ["key 'size'", "> 0"],
                 id="box-size-zero"),
    pytest.param('name = "bad"\nshape = "plane"\nsize = [1.0, 1.0, 1.0]\nmotion = "static"\n', NAMED,
                 ["key 'size'", "list of 2 numbers"], id="plane-size-3-numbers"),
    # motion
    pytest.param(sphere('motion = "flying"'), NAMED, ["key 'motion'", "'flying'"], id="motion-unknown"),
    pytest.param(sphere("motion = 3"), NAMED, ["key 'motion'", "3"], id="motion-number"),
    pytest.param('name = "bad"\nshape = "plane"\nsize = [2.0, 2.0]\n', NAMED, ["plane", "only be static", "motion"],
                 id="plane-dynamic-by-default"),
    pytest.param('name = "bad"\nshape = "plane"\nsize = [2.0, 2.0]\nmotion = "kinematic"\n', NAMED,
                 ["plane", "only be static", "motion"], id="plane-kinematic"),
    # contact coefficients
    pytest.param(sphere("friction = -0.1"), NAMED, ["key 'friction'", ">= 0"], id="friction-negative"),
    pytest.param(sphere('friction = "grippy"'), NAMED, ["key 'friction'", "expected a number"], id="friction-string"),
    pytest.param(sphere("restitution = 1.5"), NAMED, ["key 'restitution'", "[0, 1]"], id="restitution-above-1"),
    pytest.param(sphere("restitution = true"), NAMED, ["key 'restitution'", "expected a number"],
                 id="restitution-bool"),
    # colour
    pytest.param(sphere("color = [1.5, 0.0, 0.0]"), NAMED, ["key 'color'", "[0, 1]"], id="color-above-1"),
    pytest.param(sphere("color = [0.5, -0.1, 0.5]"), NAMED, ["key 'color'", "[0, 1]"], id="color-below-0"),
    pytest.param(sphere("color = [0.5, 0.5]"), NAMED, ["key 'color'", "list of 3 numbers"], id="color-2-numbers"),
    # names
    pytest.param(sphere("", name='"first"'), "body 'first'", ["key 'name'", "another body already has this name"],
                 id="duplicate-name"),
    pytest.param('shape = "sphere"\nradius = 1.0\n', UNNAMED, ["key 'name'", "non-empty string"], id="no-name"),
    pytest.param(sphere("", name="5"), UNNAMED, ["key 'name'", "non-empty string"], id="name-number"),
    pytest.param(sphere("", name='""'), UNNAMED, ["key 'name'", "non-empty string"], id="name-empty"),
    pytest.param(sphere("", name='"   "'), "body '   '", ["key 'name'", "non-empty string"], id="name-blank"),
    # decompose
    pytest.param(sphere("decompose = {foo = 1}"), NAMED, ["key 'decompose.foo'", "unknown"],
                 id="decompose-unknown-key"),
    pytest.param(sphere('decompose = {method = "foo"}'), NAMED, ["key 'decompose'", "method", "'foo'"],
                 id="decompose-method-foo"),
    pytest.param(sphere("decompose = {method = 3}"), NAMED, ["key 'decompose.method'", "expected str"],
                 id="decompose-method-number"),
    pytest.param(sphere("decompose = {max_pieces = 0}"), NAMED, ["key 'decompose'", "max_pieces", "[1, 256]"],
                 id="decompose-max-pieces-0"),
    pytest.param(sphere("decompose = {max_pieces = 2.5}"), NAMED, ["key 'decompose.max_pieces'", "expected int"],
                 id="decompose-max-pieces-float"),
    pytest.param(sphere("decompose = {max_pieces = true}"), NAMED, ["key 'decompose.max_pieces'", "expected int"],
                 id="decompose-max-pieces-bool"),
    pytest.param(sphere('decompose = {threshold = "0.1"}'), NAMED, ["key 'decompose.threshold'", "expected float"],
                 id="decompose-threshold-string"),
    pytest.param(sphere("decompose = {threshold = 0.0}"), NAMED, ["key 'decompose'", "threshold"],
                 id="decompose-threshold-0"),
    pytest.param(sphere("decompose = {threshold = 1.5}"), NAMED, ["key 'decompose'", "threshold"],
                 id="decompose-threshold-1.5"),
    pytest.param(sphere("decompose = {resolution = 10}"), NAMED, ["key 'decompose'", "resolution"],
                 id="decompose-resolution-small"),
    pytest.param(sphere("decompose = {max_vertices = 3}"), NAMED, ["key 'decompose'", "max_vertices"],
                 id="decompose-max-vertices-3"),
    pytest.param(sphere("decompose = 3"), NAMED, ["key 'decompose'", "expected a table"], id="decompose-not-table"),
]


@pytest.mark.parametrize("middle, who, parts", BODY_CASES)
def test_bad_body_is_reported_and_the_others_load(tmp_path, middle, who, parts):
    path = tmp_path / "scene.toml"
    path.write_text(scene_text(middle), encoding="utf-8")
    spec, errors = read_scene(path)
    assert spec.bodies == [FIRST_SPEC, LAST_SPEC]
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{path}: {who}: "), errors[0]
    for part in parts:
        assert part.format(dir=tmp_path) in errors[0]


@pytest.mark.parametrize("item", ["5", '"box"', "[1.0, 2.0]", "true"])
def test_body_that_is_not_a_table(tmp_path, item):
    first = "{" + FIRST.strip().replace("\n", ", ") + "}"
    last = "{" + LAST.strip().replace("\n", ", ") + "}"
    path = tmp_path / "scene.toml"
    path.write_text(f"body = [{first}, {item}, {last}]\n", encoding="utf-8")
    spec, errors = read_scene(path)
    assert spec.bodies == [FIRST_SPEC, LAST_SPEC]
    assert len(errors) == 1
    assert errors[0].startswith(f"{path}: body #2: expected a table, got ")


FILE_CASES = [
    pytest.param("foo = 1", ["unknown top-level key 'foo'"], id="unknown-top-level-key"),
    pytest.param("scene = 5", ["[scene] must be a table"], id="scene-not-table"),
    pytest.param("[scene]\nspeed = 2.0", ["[scene]: unknown key 'speed'"], id="scene-unknown-key"),
    pytest.param("[scene]\nname = 5", ["[scene]: key 'name'", "expected a string"], id="scene-name-number"),
    pytest.param("[scene]\ndt = 0.0", ["[scene]: key 'dt'", "must be > 0"], id="dt-zero"),
    pytest.param("[scene]\ndt = -0.01", ["[scene]: key 'dt'", "must be > 0"], id="dt-negative"),
    pytest.param('[scene]\ndt = "fast"', ["[scene]: key 'dt'", "expected a number"], id="dt-string"),
    pytest.param("[scene]\ndt = true", ["[scene]: key 'dt'", "expected a number"], id="dt-bool"),
    pytest.param("[scene]\ndt = nan", ["[scene]: key 'dt'", "expected a number"], id="dt-nan"),
    pytest.param("[scene]\ndt = inf", ["[scene]: key 'dt'", "expected a number"], id="dt-inf"),
    pytest.param("[scene]\ngravity = [0.0, -9.81]", ["[scene]: key 'gravity'", "list of 3 numbers"],
                 id="gravity-2-numbers"),
    pytest.param("[scene]\ngravity = [0.0, nan, 0.0]", ["[scene]: key 'gravity'", "finite"], id="gravity-nan"),
    pytest.param('[scene]\ngravity = "down"', ["[scene]: key 'gravity'", "list of 3 numbers"],
                 id="gravity-string"),
]


@pytest.mark.parametrize("header, parts", FILE_CASES)
def test_bad_file_level_setting_is_reported_and_all_bodies_load(tmp_path, header, parts):
    path = tmp_path / "scene.toml"
    path.write_text(scene_text(header=header), encoding="utf-8")
    spec, errors = read_scene(path)
    assert spec.bodies == [FIRST_SPEC, MIDDLE_SPEC, LAST_SPEC]
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{path}: "), errors[0]
    for part in parts:
        assert part in errors[0]
    # the bad setting keeps its default
    assert (spec.name, spec.dt, spec.gravity) == ("scene", 1.0 / 120.0, (0.0, -9.81, 0.0))


def test_good_scene_settings_are_kept_next_to_a_bad_one(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(scene_text(header='[scene]\nname = "kept"\ndt = 0.01\ngravity = [0.0, 0.0, -1.0]\nfoo = 1'),
                    encoding="utf-8")
    spec, errors = read_scene(path)
    assert (spec.name, spec.dt, spec.gravity, spec.path) == ("kept", 0.01, (0.0, 0.0, -1.0), str(path))
    assert len(errors) == 1 and "unknown key 'foo'" in errors[0]


def test_every_problem_of_a_file_is_reported_in_order(tmp_path):
    path = tmp_path / "many.toml"
    path.write_text("extra = true\n[scene]\ndt = 0\n\n"
                    f"[[body]]\n{FIRST}\n"
                    '[[body]]\nname = "b1"\nshape = "cone"\n\n'
                    f"[[body]]\n{MIDDLE}\n"
                    '[[body]]\nshape = "sphere"\nradius = 1.0\n\n'
                    '[[body]]\nname = "b3"\nshape = "box"\nsize = [1.0, 1.0, 1.0]\ncolor = [2.0, 0.0, 0.0]\n\n'
                    f"[[body]]\n{LAST}", encoding="utf-8")
    spec, errors = read_scene(path)
    assert spec.bodies == [FIRST_SPEC, MIDDLE_SPEC, LAST_SPEC]
    assert len(errors) == 5, errors
    assert "top-level key 'extra'" in errors[0]
    assert "[scene]: key 'dt'" in errors[1]
    assert errors[2].startswith(f"{path}: body 'b1': key 'shape'")
    assert errors[3].startswith(f"{path}: body #4: key 'name'")
    assert errors[4].startswith(f"{path}: body 'b3': key 'color'")


# -- file-level errors -------------------------------------------------------------------


@pytest.mark.parametrize("content", [
    pytest.param(None, id="missing-file"),
    pytest.param("folder", id="a-folder"),
    pytest.param(b'[[body]]\nname = "unterminated\n', id="invalid-toml"),
    pytest.param(b"[[body]\nname = 1\n", id="invalid-toml-header"),
    pytest.param(b'[scene]\nname = "no bodies"\n', id="no-body"),
    pytest.param(b"", id="empty-file"),
    pytest.param(b'[body]\nname = "one"\nshape = "sphere"\nradius = 1.0\n', id="body-table-not-array"),
    pytest.param(b'body = "many"\n', id="body-string"),
    pytest.param(b'[[body]]\nname = "caf\xe9"\nshape = "sphere"\nradius = 1.0\n', id="latin-1"),
    pytest.param(b"\xff\xfe\x00[\x00[\x00b\x00", id="utf-16-bytes"),
])
def test_unusable_file_raises_scene_error_naming_it(tmp_path, content):
    path = tmp_path / "bad scene.toml"
    if content == "folder":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(SceneError) as info:
        read_scene(path)
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith(f"{path}: ")


def test_empty_body_list_is_a_scene_error(tmp_path):
    path = tmp_path / "empty.toml"
    path.write_text("body = []\n", encoding="utf-8")
    with pytest.raises(SceneError, match="no bodies"):
        read_scene(path)


# -- save then read ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def roundtrip_tree(tmp_path_factory):
    """A scene folder and mesh files next to it, under it and beside it (odd names)."""
    root = tmp_path_factory.mktemp("roundtrip")
    folder = root / "scenes" / "deep"
    files = [folder / "local.obj", folder / "sub dir" / "mesh with spaces.obj",
             root / "meshes ünï" / "q\"uote's #1.obj", root / "scenes" / "up.stl.obj"]
    obj = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"
    for f in files:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(obj)
    files += sorted(MESHES.glob("*.ply"))
    return folder, [os.path.normpath(str(f)) for f in files]


# values within the scene files' limits (app/scene/scene_file.py): positions within +-1e6, sizes
# times the scale within [1e-6, 1e6], speeds and spins below 1e4 m/s and 1e3 rad/s
finite = st.floats(-1e6, 1e6)
positive = st.floats(min_value=1e-3, max_value=1e3)
unit = st.floats(min_value=0.0, max_value=1.0)
vec3 = st.one_of(st.just((0.0, 0.0, 0.0)), st.tuples(finite, finite, finite))
speed3 = st.one_of(st.just((0.0, 0.0, 0.0)), st.tuples(*[st.floats(-500.0, 500.0)] * 3))
names = st.one_of(
    st.text(min_size=1, max_size=12).filter(str.strip),
    st.sampled_from(['say "hi"', "it's", "back\\slash", "ünïcødé ✓ 名前 🙂", "multi\nline", "tab\there",
                     '"""', "'''", "[[body]]", "#comment", " padded "]))
decompose = st.fixed_dictionaries({}, optional={
    "method": st.sampled_from(METHODS),
    "max_pieces": st.integers(1, 256),
    "resolution": st.integers(1000, 10**6),
    "threshold": st.one_of(st.floats(min_value=0.0, max_value=1.0, exclude_min=True), st.just(1)),
    "max_vertices": st.integers(4, 1024),
})


@st.composite
def body_specs(draw, name, meshes):
    kind = draw(st.sampled_from(["mesh", *SHAPES]))
    kw = {}
    if kind == "mesh":
        kw["mesh"] = draw(st.sampled_from(meshes))
    else:
        kw["shape"] = kind
        if kind == "box":
            kw["size"] = draw(st.tuples(positive, positive, positive))
        elif kind == "plane":
            kw["size"] = draw(st.tuples(positive, positive))
        else:
            kw["radius"] = draw(positive)
            if kind in ("capsule", "cylinder"):
                kw["height"] = draw(positive)
    return BodySpec(
        name=name, scale=draw(st.one_of(st.just(1.0), positive)),
        position=draw(vec3), rotation_deg=draw(vec3), velocity=draw(speed3), angular_velocity=draw(speed3),
        density=draw(positive), motion="static" if kind == "plane" else draw(st.sampled_from(MOTIONS)),
        friction=draw(st.one_of(st.none(), st.floats(0.0, 10.0))), restitution=draw(st.one_of(st.none(), unit)),
        color=draw(st.one_of(st.none(), st.tuples(unit, unit, unit))), decompose=draw(decompose), **kw)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_save_then_read_gives_the_same_scene(roundtrip_tree, data):
    folder, meshes = roundtrip_tree
    body_names = data.draw(st.lists(names, min_size=1, max_size=6, unique=True))
    scene = SceneSpec(bodies=[data.draw(body_specs(n, meshes)) for n in body_names],
                      name=data.draw(st.text(max_size=20)), dt=data.draw(st.floats(1e-5, 0.1)),
                      gravity=data.draw(st.tuples(*[st.floats(-1000.0, 1000.0)] * 3)))
    target = folder / "scene.toml"
    assert save_scene(target, scene) == str(target)
    got, errors = read_scene(target)
    assert errors == []
    assert (got.name, got.dt, got.gravity, got.path) == (scene.name, scene.dt, scene.gravity, str(target))
    assert got.bodies == scene.bodies
    # mesh paths: relative in the file when the mesh is in the scene's folder tree or its
    # parent's (one "../" at most), else absolute; the same absolute file after reading
    with open(target, "rb") as fh:
        tables = tomllib.load(fh)["body"]
    for table, body, back in zip(tables, scene.bodies, got.bodies):
        if body.mesh is not None:
            near = os.path.relpath(body.mesh, folder).split(os.sep)[:2] != [os.pardir, os.pardir]
            assert os.path.isabs(table["mesh"]) is not near
            assert os.path.normpath(os.path.join(folder, table["mesh"])) == body.mesh
            assert os.path.samefile(back.mesh, body.mesh)
    assert not [f for f in os.listdir(folder) if f.startswith(".tmp-")]


def test_saved_mesh_paths_are_relative_to_the_scene_folder(tmp_path):
    (tmp_path / "meshes").mkdir()
    (tmp_path / "scenes").mkdir()
    mesh = tmp_path / "meshes" / "m.obj"
    mesh.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    scene = SceneSpec([BodySpec("m", mesh=str(mesh), motion="static")])
    save_scene(tmp_path / "scenes" / "s.toml", scene)
    with open(tmp_path / "scenes" / "s.toml", "rb") as fh:
        assert tomllib.load(fh)["body"][0]["mesh"] == "../meshes/m.obj"
    # moving scene and meshes together keeps the link
    moved = tmp_path.parent / (tmp_path.name + "-moved")
    os.rename(tmp_path, moved)
    try:
        spec, errors = read_scene(moved / "scenes" / "s.toml")
        assert errors == [] and spec.bodies[0].mesh == str(moved / "meshes" / "m.obj")
    finally:
        os.rename(moved, tmp_path)


def test_mesh_in_a_folder_named_tilde_survives_save_and_read(tmp_path):
    (tmp_path / "~").mkdir()
    mesh = tmp_path / "~" / "m.obj"
    mesh.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    scene = SceneSpec([BodySpec("m", mesh=str(mesh), motion="static")])
    save_scene(tmp_path / "s.toml", scene)
    spec, errors = read_scene(tmp_path / "s.toml")
    assert errors == []
    assert spec.bodies == scene.bodies


# -- what a saved file looks like --------------------------------------------------------


def body_blocks(text):
    """The lines of each ``[[body]]`` table (its ``[body.decompose]`` included), blank lines dropped."""
    blocks = []
    for line in text.splitlines():
        if line == "[[body]]":
            blocks.append([])
        elif blocks and line:
            blocks[-1].append(line)
    return blocks


def test_saved_text_has_one_table_per_body_and_one_line_per_value(tmp_path):
    mesh = str(MESHES / "gear.ply")
    scene = SceneSpec([
        BodySpec("ground", shape="plane", size=(6.0, 6.0), motion="static", color=(0.55, 0.57, 0.6)),
        BodySpec("crate", shape="box", size=(0.3, 0.3, 0.3), position=(-1.0, 0.15, 0.0), rotation_deg=(0, 20, 0),
                 velocity=(1.0, 0.0, 0.0), angular_velocity=(0.0, 0.5, 0.0), density=500.0, friction=0.6,
                 restitution=0.2),
        BodySpec("gear", mesh=mesh, scale=0.8, position=(0.1, 0.9, 0.0),
                 decompose={"method": "coacd", "max_pieces": 12, "threshold": 0.08}),
    ], name="a scene", dt=1 / 60)
    path = save_scene(tmp_path / "s.toml", scene, header=["two lines", "of notes"])
    text = Path(path).read_text()
    with open(path, "rb") as fh:
        raw = tomllib.load(fh)
    assert text.startswith("# two lines\n# of notes\n\n[scene]\n")
    blocks = body_blocks(text)
    assert len(blocks) == len(scene.bodies) == len(raw["body"]) == text.count("[[body]]")
    for block, table in zip(blocks, raw["body"]):
        # every value on its own single line: as many "key = value" lines as the table has values
        values = {**{k: v for k, v in table.items() if k != "decompose"}, **table.get("decompose", {})}
        assert len([x for x in block if " = " in x]) == len(values)
        assert ("[body.decompose]" in block) == ("decompose" in table)
        for line in block:
            assert line == "[body.decompose]" or line.split(" = ")[0] in values
    assert "position = [-1.0, 0.15, 0.0]" in blocks[1] and "rotation_deg = [0.0, 20.0, 0.0]" in blocks[1]
    assert "gravity = [0.0, -9.81, 0.0]" in text.splitlines()
    # defaults are left out: no rotation or velocity of the ground, no density of 1000
    assert not any(x.startswith(("rotation_deg", "velocity", "angular_velocity", "density")) for x in blocks[0])
    assert 'mesh = "../../' not in text and read_scene(path)[0].bodies == scene.bodies


def test_saving_an_example_scene_gives_a_file_about_its_size(tmp_path):
    """The issue: F5 turned stacks.toml's 238 lines into 953 (one number per line)."""
    for name, example in scene_registry().items():
        spec, errors = read_scene(example)
        assert errors == []
        path = save_scene(tmp_path / f"{name}.toml", spec)
        lines = Path(path).read_text().splitlines()
        shipped = Path(example).read_text().splitlines()
        # at most the motion of each body and the scene's gravity more than the example
        assert len(lines) <= len(shipped) + len(spec.bodies) + 1, name
        back, errors = read_scene(path)
        assert errors == [] and back.bodies == spec.bodies


# -- atomic save -------------------------------------------------------------------------


def two_scenes():
    old = SceneSpec([FIRST_SPEC, LAST_SPEC], name="old")
    new = SceneSpec([MIDDLE_SPEC], name="new")
    return old, new


@pytest.mark.parametrize("victim", ["replace", "fsync"])
def test_failed_save_keeps_the_old_file_and_leaves_nothing(tmp_path, monkeypatch, victim):
    old, new = two_scenes()
    target = tmp_path / "scene.toml"
    save_scene(target, old)
    before = target.read_bytes()
    seen = []
    failure = OSError(28, "No space left on device")

    def boom(*args, **kw):
        seen.append(args)
        raise failure

    monkeypatch.setattr(os, victim, boom)
    with pytest.raises(OSError) as info:
        save_scene(target, new)
    monkeypatch.undo()
    assert info.value is failure
    assert seen, f"os.{victim} was not called"
    if victim == "replace":
        src, dst = seen[0]
        assert os.path.dirname(src) == str(tmp_path) and dst == str(target)
    assert target.read_bytes() == before
    assert os.listdir(tmp_path) == ["scene.toml"]
    spec, errors = read_scene(target)
    assert errors == [] and spec.name == "old" and spec.bodies == old.bodies


def test_successful_save_replaces_the_file_and_leaves_no_temp(tmp_path):
    old, new = two_scenes()
    target = tmp_path / "scene.toml"
    save_scene(target, old)
    save_scene(target, new)
    assert os.listdir(tmp_path) == ["scene.toml"]
    spec, errors = read_scene(target)
    assert errors == [] and spec.name == "new" and spec.bodies == new.bodies


def test_save_into_a_missing_folder_raises(tmp_path):
    with pytest.raises(OSError):
        save_scene(tmp_path / "nope" / "scene.toml", two_scenes()[0])
    assert os.listdir(tmp_path) == []


# -- BodySpec.pose -----------------------------------------------------------------------

angles = st.floats(-720.0, 720.0)


@settings(max_examples=300, deadline=None)
@given(rot=st.tuples(angles, angles, angles), pos=st.tuples(*[st.floats(-1e6, 1e6)] * 3))
def test_pose_is_extrinsic_xyz_rotation_then_translation(rot, pos):
    p = BodySpec("b", shape="sphere", radius=1.0, rotation_deg=rot, position=pos).pose()
    assert p.shape == (4, 4)
    r = p[:3, :3]
    np.testing.assert_allclose(r, Rotation.from_euler("xyz", rot, degrees=True).as_matrix(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.T @ r, np.eye(3), rtol=0, atol=1e-12)
    assert abs(np.linalg.det(r) - 1.0) < 1e-12
    assert tuple(p[:3, 3]) == pos
    assert tuple(p[3]) == (0.0, 0.0, 0.0, 1.0)


@pytest.mark.parametrize("rot, y_goes_to", [
    ((90.0, 0.0, 0.0), (0, 0, 1)),    # x: y -> z
    ((0.0, 0.0, 90.0), (-1, 0, 0)),   # z: y -> -x
    ((90.0, 90.0, 0.0), (1, 0, 0)),   # x first (y -> z), then y (z -> x); y-then-x would give z
    ((90.0, 0.0, 90.0), (0, 0, 1)),   # x first (y -> z), z leaves z; z-then-x would give -x
])
def test_pose_rotation_order_by_hand(rot, y_goes_to):
    p = BodySpec("b", shape="sphere", radius=1.0, rotation_deg=rot).pose()
    np.testing.assert_allclose(p[:3, :3] @ [0.0, 1.0, 0.0], y_goes_to, atol=1e-15)


# -- primitive_mesh ----------------------------------------------------------------------


def closed_and_outward(m):
    assert m.is_watertight
    assert m.is_winding_consistent
    assert m.volume > 0
    np.testing.assert_allclose(m.bounds[0], -m.bounds[1], atol=1e-12)  # centred on the origin


def test_box_mesh():
    m = primitive_mesh(BodySpec("b", shape="box", size=(0.8, 0.5, 0.6)))
    closed_and_outward(m)
    np.testing.assert_allclose(m.extents, (0.8, 0.5, 0.6), rtol=1e-12)
    assert m.volume == pytest.approx(0.8 * 0.5 * 0.6, rel=1e-12)


def test_sphere_mesh_is_inscribed_within_1_percent():
    r = 0.35
    m = primitive_mesh(BodySpec("s", shape="sphere", radius=r))
    closed_and_outward(m)
    np.testing.assert_allclose(np.linalg.norm(m.vertices, axis=1), r, rtol=1e-9)
    exact = 4.0 / 3.0 * math.pi * r ** 3
    assert 0.99 * exact <= m.volume <= exact


def test_capsule_mesh_along_y_is_inscribed_within_1_5_percent():
    r, h = 0.18, 0.9
    m = primitive_mesh(BodySpec("c", shape="capsule", radius=r, height=h))
    closed_and_outward(m)
    np.testing.assert_allclose(m.extents, (2 * r, h + 2 * r, 2 * r), rtol=1e-9)
    v = m.vertices
    axis_point = np.stack([np.zeros(len(v)), np.clip(v[:, 1], -h / 2, h / 2), np.zeros(len(v))], axis=1)
    np.testing.assert_allclose(np.linalg.norm(v - axis_point, axis=1), r, rtol=1e-9)
    exact = math.pi * r ** 2 * h + 4.0 / 3.0 * math.pi * r ** 3
    assert 0.985 * exact <= m.volume <= exact


def test_cylinder_mesh_along_y_is_inscribed_within_1_percent():
    r, h = 0.25, 0.6
    m = primitive_mesh(BodySpec("c", shape="cylinder", radius=r, height=h))
    closed_and_outward(m)
    np.testing.assert_allclose(m.extents, (2 * r, h, 2 * r), rtol=1e-9)
    v = m.vertices
    np.testing.assert_allclose(np.abs(v[:, 1]), h / 2, rtol=1e-12)
    rim = np.hypot(v[:, 0], v[:, 2])
    np.testing.assert_allclose(rim[rim > 1e-12], r, rtol=1e-9)  # trimesh may add cap centres
    exact = math.pi * r ** 2 * h
    assert 0.99 * exact <= m.volume <= exact


def test_plane_mesh_is_two_triangles_at_y0_facing_up():
    m = primitive_mesh(BodySpec("p", shape="plane", size=(3.0, 2.0), motion="static"))
    assert len(m.faces) == 2 and len(m.vertices) == 4
    assert not m.is_watertight
    assert np.all(m.vertices[:, 1] == 0.0)
    np.testing.assert_allclose(m.face_normals, [[0, 1, 0], [0, 1, 0]], atol=1e-15)
    np.testing.assert_allclose(m.bounds, [[-1.5, 0, -1.0], [1.5, 0, 1.0]], rtol=0, atol=0)
    assert m.area == pytest.approx(6.0, rel=1e-15)


# -- mass_properties ---------------------------------------------------------------------


def box_case():
    size = np.array([0.8, 0.5, 0.6])
    r = Rotation.from_euler("xyz", (20, -35, 50), degrees=True).as_matrix()
    t = np.array([1.0, -2.0, 3.0])
    m = trimesh.creation.box(extents=size)
    v = m.vertices @ r.T + t
    a, b, c = size
    inertia = np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) / 12.0
    return v, np.asarray(m.faces), size, r, t, inertia


@pytest.mark.parametrize("inverted", [False, True], ids=["outward", "inside-out"])
def test_mass_properties_of_a_box(inverted):
    v, f, size, r, t, unit_inertia = box_case()
    if inverted:
        f = f[:, ::-1]
    density = 600.0
    mp = mass_properties(v, f, density)
    volume = float(np.prod(size))
    mass = density * volume
    assert mp.density == density
    assert mp.volume == pytest.approx(volume, rel=1e-9)
    assert mp.mass == pytest.approx(mass, rel=1e-9)
    np.testing.assert_allclose(mp.center, t, rtol=0, atol=1e-9 * np.abs(t).max())
    expected = mass * r @ unit_inertia @ r.T
    np.testing.assert_allclose(mp.inertia, expected, rtol=0, atol=1e-9 * np.abs(expected).max())


def test_mass_properties_of_an_open_mesh_is_none():
    v, f, *_ = box_case()
    assert mass_properties(v, f[1:], 600.0) is None
    plane = primitive_mesh(BodySpec("p", shape="plane", size=(1.0, 1.0), motion="static"))
    assert mass_properties(plane.vertices, plane.faces, 1.0) is None


def test_mass_properties_of_a_mesh_with_one_flipped_triangle():
    m = trimesh.creation.box(extents=(1.0, 2.0, 3.0))
    f = np.array(m.faces)
    f[0] = f[0, ::-1]
    mp = mass_properties(m.vertices, f, 2.0)
    assert mp is None or (mp.volume == pytest.approx(6.0, rel=1e-9) and np.allclose(mp.center, 0, atol=1e-9))


# -- build_body --------------------------------------------------------------------------

TENT = "v -1 0 -1\nv 1 0 -1\nv 1 0 1\nv -1 0 1\nv 0 1 0\nf 1 5 2\nf 2 5 3\nf 3 5 4\nf 4 5 1\n"


SHEET = "v -1 0 -1\nv 1 0 -1\nv 1 0 1\nv -1 0 1\nf 1 3 2\nf 1 4 3\n"


@pytest.mark.parametrize("motion", ["dynamic", "kinematic"])
def test_open_mesh_body_moves_as_its_convex_hull(tmp_path, motion):
    """An open mesh (a tent: a square pyramid without its floor) that is not static collides as its
    convex hull and weighs what the hull does: a solid square pyramid, base side a = 2, height h = 1,
    volume a^2 h / 3, centre of mass h / 4 above the base, inertia about it m a^2 / 10 (axis) and
    m (a^2 / 20 + 3 h^2 / 80) (across)."""
    (tmp_path / "tent.obj").write_text(TENT)
    spec = BodySpec("my tent", mesh=str(tmp_path / "tent.obj"), motion=motion, density=300.0)
    body = build_body(spec, cache=str(tmp_path))
    assert body.motion == motion and body.moves == (motion == "dynamic")
    assert len(body.pieces) == 1 and body.pieces.method == "hull"
    assert "convex hull" in body.mass_source
    m = 300.0 * 4.0 / 3.0
    assert body.mass.mass == pytest.approx(m, rel=1e-9)
    np.testing.assert_allclose(body.mass.center, (0.0, 0.25, 0.0), atol=1e-12)
    across = m * (4.0 / 20.0 + 3.0 / 80.0)
    np.testing.assert_allclose(body.mass.inertia, np.diag([across, m * 4.0 / 10.0, across]), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("motion", ["dynamic", "kinematic"])
def test_flat_mesh_body_must_be_static(tmp_path, motion):
    (tmp_path / "sheet.obj").write_text(SHEET)
    spec = BodySpec("my sheet", mesh=str(tmp_path / "sheet.obj"), motion=motion)
    with pytest.raises(ValueError) as info:
        build_body(spec, cache=str(tmp_path))
    assert "body 'my sheet'" in str(info.value)
    assert "flat" in str(info.value) and "can only be static" in str(info.value)


@pytest.mark.parametrize("seed", range(6))
def test_hull_support_points(seed):
    """A subset of the points, at most ``count``, with the same bounding box; chunking changes nothing."""
    from app.scene.loader import hull_support_points

    rng = np.random.default_rng(seed)
    pts = rng.normal(size=(int(rng.integers(10, 3000)), 3)) * rng.uniform(0.1, 10.0, 3)
    got = hull_support_points(pts, 40)
    assert len(got) <= 40 and {tuple(p) for p in got} <= {tuple(p) for p in pts}
    np.testing.assert_array_equal(got.min(0), pts.min(0))
    np.testing.assert_array_equal(got.max(0), pts.max(0))
    np.testing.assert_array_equal(hull_support_points(pts, 40, chunk=7), got)


def test_hull_support_points_on_a_sphere_stay_close_to_it():
    from scipy.spatial import ConvexHull

    from app.scene.loader import hull_support_points

    sphere = trimesh.creation.icosphere(subdivisions=5, radius=1.0)
    hull = ConvexHull(hull_support_points(sphere.vertices, 128))
    assert 1.0 + hull.equations[:, 3].max() < 0.03  # every face within 3% of the radius


def test_a_finely_tessellated_open_mesh_moves_as_a_hull_of_few_points(tmp_path):
    """An open sphere of 2562 vertices: one piece of at most 2 * max_vertices points, its mass within 5%
    of the full hull's (the sphere's)."""
    m = trimesh.creation.icosphere(subdivisions=4, radius=0.5)
    open_sphere = trimesh.Trimesh(m.vertices, m.faces[1:], process=False)
    open_sphere.export(tmp_path / "ball.ply")
    body = build_body(BodySpec("ball", mesh=str(tmp_path / "ball.ply")), cache=str(tmp_path))
    assert body.moves and len(body.pieces) == 1 and len(body.pieces.hulls[0].vertices) <= 128
    assert body.mass.mass == pytest.approx(1000.0 * m.volume, rel=0.05)
    np.testing.assert_allclose(body.mass.center, 0.0, atol=0.01)


def test_closed_mesh_body_has_no_mass_note(tmp_path):
    spec = BodySpec("crate", shape="box", size=(1.0, 2.0, 3.0))
    assert build_body(spec, cache=str(tmp_path)).mass_source is None


def test_open_mesh_body_builds_when_static(tmp_path):
    (tmp_path / "tent.obj").write_text(TENT)
    spec = BodySpec("my tent", mesh=str(tmp_path / "tent.obj"), motion="static", position=(1.0, 2.0, 3.0),
                    rotation_deg=(0.0, 45.0, 0.0))
    body = build_body(spec, index=2, cache=str(tmp_path))
    assert body.name == "my tent" and body.motion == "static"
    assert body.mass is None and body.pieces is None
    assert len(body.faces) == 4
    np.testing.assert_array_equal(body.pose, spec.pose())
    assert body.color == PALETTE[2]
    assert body.source == spec.mesh and body.spec is spec


def test_primitive_body_carries_the_spec(tmp_path):
    spec = BodySpec("crate", shape="box", size=(0.8, 0.5, 0.6), scale=2.0, position=(0.0, 0.3, 0.0),
                    rotation_deg=(10.0, 20.0, 30.0), velocity=(1.0, 0.0, -1.0), angular_velocity=(0.0, 0.5, 0.0),
                    density=600.0, motion="kinematic", color=(0.1, 0.2, 0.3))
    body = build_body(spec, index=5, cache=str(tmp_path))
    np.testing.assert_array_equal(body.pose, spec.pose())
    np.testing.assert_array_equal(body.velocity, spec.velocity)
    np.testing.assert_array_equal(body.spin, spec.angular_velocity)
    assert body.color == spec.color and body.motion == "kinematic"
    np.testing.assert_allclose(np.ptp(body.vertices, axis=0), (1.6, 1.0, 1.2), rtol=1e-12)
    assert body.mass.mass == pytest.approx(600.0 * 1.6 * 1.0 * 1.2, rel=1e-9)
    assert body.pieces is not None and len(body.pieces.hulls) == 1


# -- scene_registry and load_scene -------------------------------------------------------


def test_registry_lists_the_example_scenes():
    reg = scene_registry()
    assert {"primitives", "bowl_pile"} <= set(reg)
    for name, path in reg.items():
        assert path == str(SCENES / f"{name}.toml") and os.path.isfile(path)
    assert set(reg) == {p.stem for p in SCENES.glob("*.toml")}


def test_registry_of_a_folder(tmp_path):
    for f in ("b.toml", "a.toml", "notes.txt", "c.toml.bak"):
        (tmp_path / f).write_text("")
    assert scene_registry(str(tmp_path)) == {"a": str(tmp_path / "a.toml"), "b": str(tmp_path / "b.toml")}
    assert list(scene_registry(str(tmp_path))) == ["a", "b"]
    assert scene_registry(str(tmp_path / "missing")) == {}


@pytest.mark.parametrize("name", sorted(scene_registry()))
def test_every_example_scene_loads_without_errors(tmp_path, name):
    path = scene_registry()[name]
    with open(path, "rb") as fh:
        raw = tomllib.load(fh)
    world, errors = load_scene(path, cache=str(tmp_path))
    assert errors == []
    assert [b.name for b in world.bodies] == [b["name"] for b in raw["body"]]
    assert world.scene.path == path and world.dt == world.scene.dt
    for body in world.bodies:
        assert len(body.faces) > 0
        assert body.motion == "static" or body.mass is not None


def test_primitives_scene_in_detail(tmp_path):
    world, errors = load_scene(scene_registry()["primitives"], cache=str(tmp_path))
    assert errors == []
    bodies = {b.name: b for b in world.bodies}
    assert list(bodies) == ["ground", "crate", "ball", "pill", "can"]
    assert {n: b.motion for n, b in bodies.items()} == {
        "ground": "static", "crate": "dynamic", "ball": "dynamic", "pill": "dynamic", "can": "dynamic"}
    assert bodies["ground"].mass is None
    assert bodies["crate"].mass.mass == pytest.approx(0.8 * 0.5 * 0.6 * 600.0, rel=1e-9)
    assert bodies["ball"].mass.mass == pytest.approx(1000.0 * 4.0 / 3.0 * math.pi * 0.35 ** 3, rel=0.01)
    assert bodies["can"].mass.mass == pytest.approx(2700.0 * math.pi * 0.25 ** 2 * 0.6, rel=0.01)
    assert world.dt == 0.008333333333333333
    assert tuple(bodies["ground"].color) == (0.55, 0.57, 0.6)
    np.testing.assert_allclose(bodies["crate"].pose[:3, 3], (0.0, 0.25, 0.0))


def corrupt_scene(tmp_path):
    rng = np.random.default_rng(1234)
    (tmp_path / "broken.stl").write_bytes(rng.bytes(1000))
    (tmp_path / "tent.obj").write_text(TENT)
    (tmp_path / "sheet.obj").write_text(SHEET)
    path = tmp_path / "scene.toml"
    path.write_text(scene_text(middle='name = "broken"\nmesh = "broken.stl"\n') +
                    '\n[[body]]\nname = "sheet"\nmesh = "sheet.obj"\n'
                    '\n[[body]]\nname = "tent"\nmesh = "tent.obj"\n', encoding="utf-8")
    return path


def test_corrupt_or_flat_mesh_leaves_that_body_out(tmp_path):
    """A corrupt file and a flat mesh that is not static are left out with their errors; an open mesh
    (the tent) loads, dynamic by default, as its convex hull."""
    path = corrupt_scene(tmp_path)
    world, errors = load_scene(path, cache=str(tmp_path / "cache"))
    assert [b.name for b in world.bodies] == ["first", "last", "tent"]
    assert len(errors) == 2, errors
    assert errors[0].startswith(f"{path}: ") and str(tmp_path / "broken.stl") in errors[0]
    assert errors[1].startswith(f"{path}: body 'sheet': ") and "can only be static" in errors[1]
    tent = world.bodies[2]
    assert tent.motion == "dynamic" and tent.moves and "convex hull" in tent.mass_source


def test_corrupt_mesh_error_names_the_body(tmp_path):
    path = corrupt_scene(tmp_path)
    _, errors = load_scene(path, cache=str(tmp_path / "cache"))
    assert "body 'broken'" in errors[0]


def test_friction_and_restitution_reach_the_body(tmp_path):
    path = tmp_path / "scene.toml"
    path.write_text(scene_text(sphere("friction = 0.9\nrestitution = 0.4", name='"bouncy"')), encoding="utf-8")
    world, errors = load_scene(path)
    assert errors == []
    bodies = {b.name: b for b in world.bodies}
    assert bodies["bouncy"].friction == 0.9 and bodies["bouncy"].restitution == 0.4
    assert bodies["first"].friction is None and bodies["first"].restitution is None  # the world's defaults


# -- a missing decomposer ----------------------------------------------------------------

DECOMPOSED = f"""[[body]]
name = "crate"
shape = "box"
size = [0.5, 0.5, 0.5]

[[body]]
name = "knot"
mesh = {toml_str(MESHES / "torus_knot.ply")}
position = [0.0, 2.0, 0.0]
[body.decompose]
method = "vhacd"

[[body]]
name = "bowl"
mesh = {toml_str(MESHES / "bowl.ply")}
motion = "static"
[body.decompose]
method = "coacd"

[[body]]
name = "gear"
mesh = {toml_str(MESHES / "gear.ply")}
position = [2.0, 1.0, 0.0]
"""


def test_a_missing_decomposer_falls_back_to_the_convex_hull_naming_the_body(tmp_path, monkeypatch):
    """Without vhacdx and coacd (``import`` raises ModuleNotFoundError) every body loads: a body that
    asks for a decomposition (or the gear, concave, by "auto") gets its convex hull as its one piece,
    a static one still collides as its exact surface, and each gets a message naming the file, the
    body, the package and how to install it. Before, the error escaped load_scene and every body
    was lost."""
    from scipy.spatial import ConvexHull

    from obbcollide.shapes import TriMesh

    monkeypatch.setitem(sys.modules, "vhacdx", None)
    monkeypatch.setitem(sys.modules, "coacd", None)
    path = tmp_path / "scene.toml"
    path.write_text(DECOMPOSED)
    cache = tmp_path / "cache"
    world, errors = load_scene(path, cache=str(cache))
    bodies = {b.name: b for b in world.bodies}
    assert list(bodies) == ["crate", "knot", "bowl", "gear"]
    assert len(errors) == 3
    for text, name, package in zip(errors, ("knot", "bowl", "gear"), ("vhacdx", "coacd", "vhacdx")):
        assert text.startswith(f"{path}: body {name!r}: ")
        assert f"'{package}', which is not installed (pip install {package})" in text
    assert "collides as its convex hull" in errors[0] and "exact surface" in errors[1]
    for name in ("knot", "bowl", "gear"):
        b = bodies[name]
        assert len(b.pieces) == 1 and b.pieces.method == "hull"
        assert b.pieces.volume == pytest.approx(ConvexHull(b.vertices).volume, rel=1e-9)
    assert isinstance(bodies["bowl"].shapes[0], TriMesh)
    # the hulls are cached as hulls: a later load with the decomposer installed still decomposes
    from app.scene.pieces import DecomposeSettings, cache_key

    knot = bodies["knot"]
    assert not (cache / f"{cache_key(knot.vertices, knot.faces, DecomposeSettings(method='vhacd'))}.npz").exists()
    assert (cache / f"{cache_key(knot.vertices, knot.faces, DecomposeSettings(method='hull'))}.npz").exists()


def test_a_cached_decomposition_needs_no_decomposer(tmp_path, monkeypatch):
    pytest.importorskip("vhacdx")
    from app.scene.pieces import DecomposeSettings, convex_pieces

    box = trimesh.creation.box(extents=(0.5, 0.5, 0.5))
    box.export(tmp_path / "cube.ply")
    settings = {"method": "vhacd", "max_pieces": 1, "resolution": 1000}
    first = convex_pieces(box.vertices, box.faces, DecomposeSettings(**settings), cache=str(tmp_path / "cache"))
    assert first.method == "vhacd" and not first.cached
    monkeypatch.setitem(sys.modules, "vhacdx", None)
    (tmp_path / "s.toml").write_text('[[body]]\nname = "cube"\nmesh = "cube.ply"\n[body.decompose]\n'
                                     'method = "vhacd"\nmax_pieces = 1\nresolution = 1000\n')
    world, errors = load_scene(tmp_path / "s.toml", cache=str(tmp_path / "cache"))
    assert errors == [] and world.bodies[0].pieces.cached and world.bodies[0].pieces.method == "vhacd"


def test_an_unexpected_failure_loses_only_that_body(tmp_path, monkeypatch):
    """A loader bug in one body (any exception) is a message naming the file and the body."""
    import app.scene.loader as scene_mod

    real = scene_mod.build_body

    def flaky(spec, *args, **kw):
        if spec.name == "middle":
            raise KeyError("a bug")
        return real(spec, *args, **kw)

    monkeypatch.setattr(scene_mod, "build_body", flaky)
    path = tmp_path / "s.toml"
    path.write_text(scene_text())
    world, errors = load_scene(path, cache=str(tmp_path / "cache"))
    assert [b.name for b in world.bodies] == ["first", "last"]
    assert errors == [f"{path}: body 'middle': loading failed (KeyError: 'a bug')"]


def test_unique_name_numbers_a_repeated_name():
    from app.scene.scene_file import unique_name

    assert unique_name("cup", set()) == "cup"
    assert unique_name("cup", {"cup"}) == "cup (2)"
    assert unique_name("cup", {"cup", "cup (2)", "cup (3)"}) == "cup (4)"
    assert unique_name("cup (2)", {"cup", "cup (2)"}) == "cup (2) (2)"
