"""Fuzzing the scene-file loader (hypothesis), run in a child process by tests/test_fuzz.py.

``python -m tests._fuzz_scenes EXAMPLES FOLDER`` writes that many generated scene files into
``FOLDER``: one valid body ("anchor", a box) and one to three generated bodies whose keys take
valid values or hostile ones (integers too large for float64, 1e300, NaN, infinity, strings
such as "1.5", bools, nested arrays, wrong lengths, tables where numbers belong, unknown keys,
decomposer settings past their range), sometimes a hostile ``[scene]`` table. Each file goes
through :func:`app.scene.loader.load_scene` and two world steps.

The contract asserted for each file:

- nothing but :class:`app.scene.scene_file.SceneError` escapes ``load_scene`` (and that only for a
  file with no usable ``[[body]]`` list, which these files always have: so never);
- the anchor body loads; every body that is left out has a message starting with the file's
  path and naming the body;
- the bodies' poses and velocities stay finite over two steps, and within the bounds.

The child prints one JSON line: files by outcome, and the first failures.
"""

import json
import math
import os
import sys
import traceback
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.scene.loader import load_scene
from app.world.world import MAX_SPEED

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOX_MESH = os.path.join(ROOT, "assets", "meshes", "box.ply")
COUNTS = Counter()
FAILURES = []


def toml(value):
    """A TOML literal for ``value`` (floats as TOML spells nan and inf)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml(x) for x in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml(v)}" for k, v in value.items()) + "}"
    raise TypeError(type(value))


def nested(depth):
    return "[" * depth + "1.0" + "]" * depth


HOSTILE_NUMBER = st.sampled_from([10 ** 400, -10 ** 400, 1e300, -1e300, 1e308, 5e-324, 0.0, -1.0, math.nan,
                                  math.inf, -math.inf, "1.5", "", True, False, [], [1.0], {"x": 1.0}, 2 ** 63])
NUMBER = st.one_of(st.floats(-10.0, 10.0), st.integers(-10, 10), HOSTILE_NUMBER)
VECTOR = st.one_of(st.lists(st.floats(-5.0, 5.0), min_size=3, max_size=3), st.lists(NUMBER, min_size=0, max_size=4),
                   HOSTILE_NUMBER)
RAW = object()  # a value written as raw TOML text (deep nesting)


@st.composite
def body(draw, k):
    shape = draw(st.sampled_from(["box", "sphere", "capsule", "cylinder", "plane", "mesh", "bogus", None]))
    keys = {"name": draw(st.one_of(st.just(f"body{k}"), st.sampled_from(["", 3, "anchor", f"body{k}"])))}
    if shape == "mesh":
        keys["mesh"] = draw(st.sampled_from([BOX_MESH, BOX_MESH, "no/such/file.ply", 7]))
    elif shape is not None:
        keys["shape"] = shape
    sizes = {"box": ["size"], "plane": ["size"], "sphere": ["radius"], "capsule": ["radius", "height"],
             "cylinder": ["radius", "height"]}.get(shape, [])
    for key in sizes:
        keys[key] = draw(VECTOR if key == "size" else st.one_of(st.floats(0.05, 2.0), NUMBER))
    if shape == "plane":
        keys["motion"] = "static"
    for key in draw(st.lists(st.sampled_from(["position", "rotation_deg", "velocity", "angular_velocity", "scale",
                                              "density", "friction", "restitution", "motion", "color", "decompose",
                                              "unknown_key", "nested"]), max_size=4, unique=True)):
        if key in ("position", "rotation_deg", "velocity", "angular_velocity", "color"):
            keys[key] = draw(VECTOR)
        elif key == "motion":
            keys[key] = draw(st.sampled_from(["dynamic", "static", "kinematic", "flying", 1]))
        elif key == "decompose":
            keys[key] = draw(st.fixed_dictionaries({}, optional={
                "method": st.sampled_from(["auto", "hull", "vhacd", "coacd", "magic", 3]),
                "max_pieces": st.one_of(st.integers(-5, 300), st.sampled_from([10 ** 20, 2 ** 32, 1.5, "8"])),
                "resolution": st.one_of(st.integers(0, 2 * 10 ** 9), st.sampled_from([10 ** 30, 2.0e9, "1e5"])),
                "max_vertices": st.one_of(st.integers(-1, 5000), st.sampled_from([10 ** 20, True])),
                "threshold": st.one_of(st.floats(-1.0, 2.0), HOSTILE_NUMBER)}))
        elif key == "nested":
            keys["position"] = (RAW, nested(draw(st.sampled_from([2, 40, 300, 3000]))))
        else:
            keys[key] = draw(NUMBER)
    return keys


@st.composite
def valid_body(draw, k):
    """A body every check accepts (a box or a ball somewhere above the anchor, maybe moving)."""
    keys = {"name": f"body{k}"}
    if draw(st.booleans()):
        keys.update(shape="box", size=draw(st.lists(st.floats(0.05, 2.0), min_size=3, max_size=3)))
    else:
        keys.update(shape="sphere", radius=draw(st.floats(0.05, 1.0)))
    keys["position"] = [draw(st.floats(-5.0, 5.0)), draw(st.floats(0.0, 5.0)), draw(st.floats(-5.0, 5.0))]
    keys["velocity"] = draw(st.lists(st.floats(-100.0, 100.0), min_size=3, max_size=3))
    return keys


def write_body(keys):
    lines = ["[[body]]"]
    table = None
    for key, value in keys.items():
        if key == "decompose" and isinstance(value, dict) and value:
            table = value
            continue
        text = value[1] if isinstance(value, tuple) and value[0] is RAW else toml(value)
        lines.append(f"{key} = {text}")
    if table:
        lines.append("[body.decompose]")
        lines += [f"{k} = {toml(v)}" for k, v in table.items()]
    return "\n".join(lines)


ANCHOR = '[[body]]\nname = "anchor"\nshape = "box"\nsize = [0.5, 0.5, 0.5]\nposition = [0.0, 0.25, 0.0]\n'


def check(path, text, names):
    """Load ``path`` and step it; returns the outcome's label (a failure is recorded)."""
    try:
        world, errors = load_scene(path, cache=os.path.join(os.path.dirname(path), "cache"))
    except Exception as exc:  # noqa: BLE001 - every escape breaks the contract
        return fail(path, text, f"{type(exc).__name__} escaped load_scene: {exc}")
    loaded = [b.name for b in world.bodies]
    if "anchor" not in loaded:
        return fail(path, text, f"the anchor body was lost: {errors}")
    for e in errors:
        if not e.startswith(path):
            return fail(path, text, f"a message without the file: {e}")
    left_out = [n for n in names if isinstance(n, str) and n and n not in loaded]
    for n in left_out:
        if n != "anchor" and not any(repr(n) in e for e in errors):
            return fail(path, text, f"body {n!r} left out without a message naming it: {errors}")
    try:
        world.step()
        world.step()
    except Exception as exc:  # noqa: BLE001
        return fail(path, text, f"{type(exc).__name__} in a step: {exc}\n{traceback.format_exc()[-600:]}")
    for b in world.bodies:
        if not (np.all(np.isfinite(b.pose)) and np.all(np.isfinite(b.velocity))):
            return fail(path, text, f"body {b.name!r}: non-finite state after two steps")
        if np.linalg.norm(b.velocity) > MAX_SPEED * (1 + 1e-9):
            return fail(path, text, f"body {b.name!r}: faster than MAX_SPEED")
    if len(loaded) == len(names) and not errors:
        return "every body loaded"
    return "hostile bodies left out with messages, the rest loaded"


def fail(path, text, why):
    if len(FAILURES) < 20:
        FAILURES.append(f"{why}\n--- {path}\n{text[:1500]}")
    return "fail"


def run(examples, folder):
    counter = iter(range(10 ** 9))

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def scenes(data):
        k = next(counter)
        bodies = [data.draw(st.one_of(body(j), valid_body(j))) for j in range(data.draw(st.integers(1, 3)))]
        head = ""
        if data.draw(st.booleans()):
            head = "[scene]\n" + "\n".join(f"{key} = {toml(data.draw(NUMBER if key == 'dt' else VECTOR))}"
                                           for key in data.draw(st.lists(st.sampled_from(["dt", "gravity"]),
                                                                         unique=True))) + "\n\n"
        text = head + ANCHOR + "\n" + "\n\n".join(write_body(b) for b in bodies) + "\n"
        path = os.path.join(folder, f"scene{k}.toml")
        with open(path, "w") as fh:
            fh.write(text)
        COUNTS[check(path, text, ["anchor"] + [b.get("name") for b in bodies])] += 1

    scenes()


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 100, sys.argv[2])
    print(json.dumps({"counts": dict(COUNTS), "failures": FAILURES}))
