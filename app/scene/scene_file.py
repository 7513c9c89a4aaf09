"""Scene files (TOML): bodies from mesh files or primitives, read, checked, saved.

A scene file looks like::

    [scene]
    name = "pile in a bowl"
    dt = 0.008333            # fixed step, seconds (optional)
    category = "concave"     # where the viewer's scene list shows it (optional)

    [[body]]
    name = "bowl"
    mesh = "../meshes/bowl.ply"   # relative to the scene file
    position = [0.0, 0.6, 0.0]
    rotation_deg = [0, 0, 0]      # about x, then y, then z (degrees)
    motion = "static"             # "dynamic" (default), "kinematic" or "static"
    [body.decompose]
    method = "vhacd"
    max_pieces = 12

    [[body]]
    name = "crate"
    shape = "box"                 # box, sphere, capsule, cylinder or plane
    size = [0.4, 0.4, 0.4]
    position = [0.0, 2.0, 0.0]
    velocity = [0.0, 0.0, 0.0]
    angular_velocity = [0.0, 1.0, 0.0]
    density = 500.0
    friction = 0.6                # Coulomb coefficient (contacts use the geometric mean)
    restitution = 0.2             # bounce, 0..1 (contacts use the larger)
    color = [0.8, 0.5, 0.3]

Reading never stops at the first problem: every body is checked, a body
with an error is left out, and each error names the file, the body and the
key. Saving writes a temporary file and renames it over the target, so a
failed write never destroys the old file. The example scenes (``assets/scenes``)
are never written: saving one writes a copy into the user's data folder
(:func:`save_path`). A saved file has one ``[[body]]`` table per body, every
value on one line, and keeps the comment lines at the head of the file it
replaces.
"""

import math
import os
import re
import tempfile
from dataclasses import dataclass, field

import numpy as np

from obbcollide._validate import _show, is_number

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from ..assets import assets_dir

__all__ = ["BodySpec", "SceneSpec", "SceneError", "read_scene", "save_scene", "format_scene", "save_path",
           "unique_name", "scene_registry", "user_data_dir", "SHAPES", "MOTIONS"]

SHAPES = {"box": ("size",), "sphere": ("radius",), "capsule": ("radius", "height"),
          "cylinder": ("radius", "height"), "plane": ("size",)}
MOTIONS = ("dynamic", "kinematic", "static")
DECOMPOSE_KEYS = {"method": str, "max_pieces": int, "resolution": int, "threshold": float, "max_vertices": int}
BODY_KEYS = {"name", "mesh", "shape", "size", "radius", "height", "scale", "position", "rotation_deg",
             "velocity", "angular_velocity", "density", "friction", "restitution", "motion", "color", "decompose"}
SCENE_KEYS = {"name", "dt", "gravity", "category"}

ASSETS = assets_dir()


class SceneError(ValueError):
    """A scene file that cannot be read at all (missing, not TOML, no bodies)."""


@dataclass
class BodySpec:
    """One body of a scene file, checked. Angles in degrees, lengths in scene units."""

    name: str
    mesh: str = None              # absolute path, or None for a primitive
    shape: str = None             # one of SHAPES when mesh is None
    size: tuple = None            # box: (x, y, z) full lengths; plane: (x, z)
    radius: float = None
    height: float = None          # capsule / cylinder: length of the axis (y)
    scale: float = 1.0
    position: tuple = (0.0, 0.0, 0.0)
    rotation_deg: tuple = (0.0, 0.0, 0.0)
    velocity: tuple = (0.0, 0.0, 0.0)
    angular_velocity: tuple = (0.0, 0.0, 0.0)
    density: float = 1000.0
    friction: float = None        # None: the world's default
    restitution: float = None
    motion: str = "dynamic"
    color: tuple = None
    decompose: dict = field(default_factory=dict)

    def pose(self):
        """(4, 4) model-to-world transform: rotate about x, y, z in turn, then translate."""
        rx, ry, rz = (math.radians(a) for a in self.rotation_deg)
        cx, sx, cy, sy, cz, sz = math.cos(rx), math.sin(rx), math.cos(ry), math.sin(ry), math.cos(rz), math.sin(rz)
        mx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
        my = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
        mz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
        p = np.eye(4)
        p[:3, :3] = mz @ my @ mx
        p[:3, 3] = self.position
        return p


@dataclass
class SceneSpec:
    """A checked scene: its bodies and settings; ``path`` is where it was read from."""

    bodies: list
    name: str = "scene"
    dt: float = 1.0 / 120.0
    gravity: tuple = (0.0, -9.81, 0.0)
    path: str = None
    category: str = None          # the viewer's scene list groups the scenes by it


def unique_name(name, taken):
    """``name``, or when ``taken`` (a set of names) has it, ``"name (k)"`` with the smallest k >= 2
    not taken: a scene's bodies have distinct names (:func:`read_scene` refuses a repeated one)."""
    if name not in taken:
        return name
    k = 2
    while f"{name} ({k})" in taken:
        k += 1
    return f"{name} ({k})"


def _where(path, index, name):
    who = f"body {name!r}" if name else f"body #{index + 1}"
    return f"{path}: {who}"


# Limits on what a scene file may ask for (the README's "Scene files" lists them). Each
# bound is what the geometry, the step or the decomposer can still handle, far beyond what a
# real scene needs:
# - positions and sizes (after the scale): within MAX_COORD (+-1e6 units, as a mesh's
#   coordinates, app.scene.mesh_io.MAX_COORD: float64 geometry keeps the precision contacts need and
#   float32 vertices on the GPU still resolve 0.1), sizes at least MIN_SIZE (1e-6: a body
#   1e12 times smaller than the world's extent is below float64's resolution there);
MIN_SIZE = 1e-6
# - speeds: |velocity| <= MAX_SPEED m/s and |angular_velocity| <= MAX_SPIN rad/s (app.world.world
#   clamps to the same bounds every step, see World.repair);
# - density within DENSITY (kg/m^3: aerogel to far beyond osmium), so masses and their
#   inverses stay finite and the solver's mass ratios bounded;
DENSITY = (1e-3, 1e6)
# - friction at most MAX_FRICTION; dt within DT_RANGE seconds (the step integrates
#   semi-implicitly: a step longer than 0.1 s turns gravity into jumps); gravity's components
#   within +-MAX_GRAVITY m/s^2 (100 g);
MAX_FRICTION = 100.0
DT_RANGE = (1e-5, 0.1)
MAX_GRAVITY = 1000.0
# - at most MAX_BODIES bodies (the rest are left out with a message) and MAX_FILE_BYTES bytes
#   (5000 bodies take about 1 MB); arrays nested deeper than Python's TOML parser can follow
#   cost only the body that holds them (see read_scene).
MAX_BODIES = 5000
MAX_FILE_BYTES = 64 << 20


def _limits():
    from .mesh_io import MAX_COORD
    from ..world.world import MAX_SPEED, MAX_SPIN

    return MAX_COORD, MAX_SPEED, MAX_SPIN


def _vec(value, n, key, where, positive=False, unit=False, limit=None, norm=None, low=None):
    if not isinstance(value, (list, tuple)) or len(value) != n or not all(is_number(x) for x in value):
        raise ValueError(f"{where}: key {key!r}: expected a list of {n} numbers, got {_show(value)}")
    _big(value, key, where)
    out = tuple(_float(x) for x in value)
    if not all(math.isfinite(x) for x in out):
        raise ValueError(f"{where}: key {key!r}: numbers must be finite, got {_show(value)}")
    if positive and not all(x > 0 for x in out):
        raise ValueError(f"{where}: key {key!r}: numbers must be > 0, got {_show(value)}")
    if unit and not all(0.0 <= x <= 1.0 for x in out):
        raise ValueError(f"{where}: key {key!r}: numbers must be in [0, 1], got {_show(value)}")
    if limit is not None and not all(abs(x) <= limit for x in out):
        raise ValueError(f"{where}: key {key!r}: numbers must be within +-{limit:g}{_why(key)}, got {_show(value)}")
    if low is not None and not all(x >= low for x in out):
        raise ValueError(f"{where}: key {key!r}: numbers must be >= {low:g}{_why(key)}, got {_show(value)}")
    if norm is not None and not math.hypot(*out) <= norm:
        raise ValueError(f"{where}: key {key!r}: its length must be at most {norm:g}{_why(key)}, "
                         f"got {_show(value)}")
    return out


def _float(x):
    """``x`` (an int or float) as float; an integer too large for float64 is infinite (then refused)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf


def _why(key):
    """The reason for a key's bound, for the message."""
    if key in ("velocity", "angular_velocity"):
        return " (faster than the step integrates; the world clamps to it)"
    if key in ("position", "size", "radius", "height", "scale"):
        return " (the scene units float64 geometry handles, as for meshes)"
    return ""


def _big(values, key, where):
    """Refuse an integer too large for float64 (TOML integers have any size here) with a clear message."""
    for x in values:
        if isinstance(x, int) and math.isinf(_float(x)):
            raise ValueError(f"{where}: key {key!r}: the integer {_show(x, 40)} is too large for a float64")


def _num(value, key, where, positive=True, low=None, high=None):
    if is_number(value):
        _big([value], key, where)
    if not is_number(value) or not math.isfinite(_float(value)):
        raise ValueError(f"{where}: key {key!r}: expected a number, got {_show(value)}")
    value = _float(value)
    if positive and not value > 0:
        raise ValueError(f"{where}: key {key!r}: must be > 0, got {_show(value)}")
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "" if low is None else f" >= {low:g}"
        hi = "" if high is None else f" <= {high:g}"
        raise ValueError(f"{where}: key {key!r}: must be{lo}{' and' if lo and hi else ''}{hi}{_why(key)}, "
                         f"got {_show(value)}")
    return value


def _body(raw, index, path, base):
    name = raw.get("name") if isinstance(raw, dict) else None
    where = _where(path, index, name if isinstance(name, str) else None)
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected a table, got {_show(raw)}")
    unknown = sorted(set(raw) - BODY_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(BODY_KEYS))})")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{where}: key 'name': expected a non-empty string, got {_show(name)}")
    max_coord, max_speed, max_spin = _limits()
    spec = BodySpec(name=name)
    has_mesh, has_shape = "mesh" in raw, "shape" in raw
    if has_mesh == has_shape:
        raise ValueError(f"{where}: give exactly one of 'mesh' (a file) or 'shape' ({', '.join(SHAPES)})")
    if has_mesh:
        if not isinstance(raw["mesh"], str):
            raise ValueError(f"{where}: key 'mesh': expected a file path, got {_show(raw['mesh'])}")
        mesh = os.path.normpath(os.path.join(base, os.path.expanduser(raw["mesh"])))
        if not os.path.isfile(mesh):
            raise ValueError(f"{where}: key 'mesh': no such file {mesh}")
        spec.mesh = mesh
        for key in ("size", "radius", "height"):
            if key in raw:
                raise ValueError(f"{where}: key {key!r} belongs to a primitive shape, not a mesh")
    else:
        shape = raw["shape"]
        if not isinstance(shape, str) or shape not in SHAPES:
            raise ValueError(f"{where}: key 'shape': expected one of {', '.join(SHAPES)}, got {_show(shape)}")
        spec.shape = shape
        for key in SHAPES[shape]:
            if key not in raw:
                raise ValueError(f"{where}: a {shape} needs the key {key!r}")
        for key in ("size", "radius", "height"):
            if key in raw and key not in SHAPES[shape]:
                raise ValueError(f"{where}: key {key!r} does not apply to a {shape}")
        if "size" in raw:
            spec.size = _vec(raw["size"], 3 if shape == "box" else 2, "size", where, positive=True,
                             limit=max_coord, low=MIN_SIZE)
        if "radius" in raw:
            spec.radius = _num(raw["radius"], "radius", where, low=MIN_SIZE, high=max_coord)
        if "height" in raw:
            spec.height = _num(raw["height"], "height", where, low=MIN_SIZE, high=max_coord)
    if "scale" in raw:
        spec.scale = _num(raw["scale"], "scale", where, low=MIN_SIZE, high=max_coord)
        extent = [x * spec.scale for x in (spec.size or ())] + \
            [x * spec.scale for x in (spec.radius, spec.height) if x is not None]
        if extent and not (MIN_SIZE <= min(extent) and max(extent) <= max_coord):
            raise ValueError(f"{where}: key 'scale': makes the {spec.shape}'s sizes {min(extent):g} to "
                             f"{max(extent):g}, outside [{MIN_SIZE:g}, {max_coord:g}]{_why('scale')}")
    for key, limit, norm in (("position", max_coord, None), ("rotation_deg", max_coord, None),
                             ("velocity", None, max_speed), ("angular_velocity", None, max_spin)):
        if key in raw:
            setattr(spec, key, _vec(raw[key], 3, key, where, limit=limit, norm=norm))
    if "density" in raw:
        spec.density = _num(raw["density"], "density", where, low=DENSITY[0], high=DENSITY[1])
    if "friction" in raw:
        spec.friction = _num(raw["friction"], "friction", where, positive=False, high=MAX_FRICTION)
        if spec.friction < 0:
            raise ValueError(f"{where}: key 'friction': must be >= 0, got {_show(raw['friction'])}")
    if "restitution" in raw:
        spec.restitution = _num(raw["restitution"], "restitution", where, positive=False)
        if not 0.0 <= spec.restitution <= 1.0:
            raise ValueError(f"{where}: key 'restitution': must be in [0, 1], got {_show(raw['restitution'])}")
    if "motion" in raw:
        if raw["motion"] not in MOTIONS:
            raise ValueError(f"{where}: key 'motion': expected one of {', '.join(MOTIONS)}, got {_show(raw['motion'])}")
        spec.motion = raw["motion"]
    if spec.shape == "plane" and spec.motion != "static":
        raise ValueError(f"{where}: a plane is open (no volume), so it can only be static (motion = \"static\")")
    if "color" in raw:
        spec.color = _vec(raw["color"], 3, "color", where, unit=True)
    if "decompose" in raw:
        dec = raw["decompose"]
        if not isinstance(dec, dict):
            raise ValueError(f"{where}: key 'decompose': expected a table, got {_show(dec)}")
        for key, value in dec.items():
            if key not in DECOMPOSE_KEYS:
                raise ValueError(f"{where}: key 'decompose.{key}': unknown (known: {', '.join(DECOMPOSE_KEYS)})")
            want = DECOMPOSE_KEYS[key]
            ok = isinstance(value, want) and not isinstance(value, bool) if want is not float else \
                isinstance(value, (int, float)) and not isinstance(value, bool)
            if not ok:
                raise ValueError(f"{where}: key 'decompose.{key}': expected {want.__name__}, got {_show(value)}")
        try:
            from .pieces import DecomposeSettings

            DecomposeSettings(**dec)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: key 'decompose': {exc}") from None
        spec.decompose = dict(dec)
    return spec


def read_scene(path):
    """Read and check a scene file.

    Returns
    -------
    scene : SceneSpec
        The bodies that passed the checks.
    errors : list of str
        One message per problem (file, body, key); the bodies with errors are
        not in ``scene``.

    Raises
    ------
    SceneError
        The file is missing, is not TOML, or has no ``[[body]]`` list at all.
    """
    path = os.path.abspath(os.fspath(path))
    errors = []
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            raise SceneError(f"{path}: {os.path.getsize(path):,} bytes, more than the {MAX_FILE_BYTES:,} a scene "
                             f"file may have ({MAX_BODIES} bodies take about 1 MB)")
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
        try:
            raw = tomllib.loads(text)
        except RecursionError:  # arrays nested deeper than the parser follows: body by body
            raw = _read_by_body(text, path, errors)
    except FileNotFoundError:
        raise SceneError(f"{path}: no such scene file") from None
    except OSError as exc:
        raise SceneError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SceneError(f"{path}: not a valid TOML file ({exc})") from None
    unknown = sorted(set(raw) - {"scene", "body"})
    for key in unknown:
        errors.append(f"{path}: unknown top-level key {key!r} (expected [scene] and [[body]])")
    settings = raw.get("scene", {})
    spec = SceneSpec(bodies=[], name=os.path.splitext(os.path.basename(path))[0], path=path)
    if not isinstance(settings, dict):
        errors.append(f"{path}: [scene] must be a table")
        settings = {}
    for key, value in settings.items():
        try:
            if key not in SCENE_KEYS:
                raise ValueError(f"{path}: [scene]: unknown key {key!r} (known: {', '.join(sorted(SCENE_KEYS))})")
            if key in ("name", "category"):
                if not isinstance(value, str):
                    raise ValueError(f"{path}: [scene]: key {key!r}: expected a string, got {_show(value)}")
                setattr(spec, key, value)
            elif key == "dt":
                spec.dt = _num(value, "dt", f"{path}: [scene]", low=DT_RANGE[0], high=DT_RANGE[1])
            else:
                spec.gravity = _vec(value, 3, "gravity", f"{path}: [scene]", limit=MAX_GRAVITY)
        except ValueError as exc:
            errors.append(str(exc))
        except Exception as exc:  # RecursionError in a nested value, and anything else: this key only
            errors.append(f"{path}: [scene]: key {_show(key)}: cannot be read ({type(exc).__name__})")
    bodies = raw.get("body")
    if not isinstance(bodies, list) or not bodies:
        raise SceneError(f"{path}: no bodies: expected one or more [[body]] tables")
    base = os.path.dirname(path)
    names = set()
    if len(bodies) > MAX_BODIES:
        errors.append(f"{path}: {len(bodies)} bodies, more than the {MAX_BODIES} a scene may have: bodies "
                      f"#{MAX_BODIES + 1} to #{len(bodies)} are left out")
        bodies = bodies[:MAX_BODIES]
    for i, item in enumerate(bodies):
        if item is None:  # a body the parser could not follow (see _read_by_body): already reported
            continue
        try:
            body = _body(item, i, path, base)
            if body.name in names:
                raise ValueError(f"{_where(path, i, body.name)}: key 'name': another body already has this name")
            names.add(body.name)
            spec.bodies.append(body)
        except ValueError as exc:
            errors.append(str(exc))
        except Exception as exc:  # a RecursionError in a nested value, and anything else: this body only
            name = item.get("name") if isinstance(item, dict) else None
            errors.append(f"{_where(path, i, name if isinstance(name, str) else None)}: cannot be read "
                          f"({type(exc).__name__}: {_show(str(exc), 200)})")
    return spec, errors


_NAME = re.compile(r'^[ \t]*name[ \t]*=[ \t]*"([^"\\\n]*)"', re.M)  # a plain name, for the message
_BODY_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*body[ \t]*\]\][ \t]*(#.*)?$", re.M)


def _read_by_body(text, path, errors):
    """The file's tables when the whole file is too deeply nested for the TOML parser
    (``RecursionError``): each ``[[body]]`` section (up to the next one) is parsed on its own,
    so only the sections the parser cannot follow are lost, each with a message. A body's
    sub-tables (``[body.decompose]``) follow it in its section."""
    cuts = [m.start() for m in _BODY_HEADER.finditer(text)]
    head = text[:cuts[0]] if cuts else text
    try:
        raw = tomllib.loads(head)
    except RecursionError:
        errors.append(f"{path}: [scene]: nested too deeply for the TOML parser; left out")
        raw = {}
    bodies = []
    for k, start in enumerate(cuts):
        section = text[start:cuts[k + 1] if k + 1 < len(cuts) else len(text)]
        try:
            table = tomllib.loads(section).get("body")
            bodies += table if isinstance(table, list) else [table]
        except RecursionError:
            name = _NAME.search(section)
            errors.append(f"{_where(path, len(bodies), name.group(1) if name else None)}: an array nested too "
                          "deeply for the TOML parser; left out")
            bodies.append(None)
    if bodies:
        raw["body"] = bodies
    return raw


# -- writing -----------------------------------------------------------------------------

# A mesh path is written relative to the scene file's folder when the mesh lies in that
# folder's tree or beside it (``../meshes/x.ply``: scenes and meshes side by side, moved
# together), else absolute: a copy saved far from the meshes names them where they are.
RELATIVE_UP = 1

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_string(text):
    """A TOML basic string: double quotes, with quote, backslash and control characters escaped."""
    def escape(ch):
        if ch in _ESCAPES:
            return _ESCAPES[ch]
        return f"\\u{ord(ch):04X}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch
    return '"' + "".join(escape(ch) for ch in text) + '"'


def _toml_value(value):
    """A TOML value on one line: string, integer, float (``repr``: the shortest text that reads
    back to the same float, so no noise is added) or a flat list of them."""
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"cannot write the non-finite number {_show(value)}")
        return repr(value + 0.0)  # -0.0 reads as 0.0
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} {value!r} to a scene file")


def _mesh_path(mesh, base):
    """How a body's mesh is named in a file in folder ``base`` (see ``RELATIVE_UP``)."""
    if not base:
        return mesh
    try:
        rel = os.path.relpath(mesh, base)
    except ValueError:  # another drive (Windows): no relative path exists
        return mesh
    parts = rel.split(os.sep)
    if parts[:RELATIVE_UP + 1] == [os.pardir] * (RELATIVE_UP + 1):
        return mesh
    rel = rel.replace(os.sep, "/")
    if rel.startswith("~"):
        rel = "./" + rel  # a folder named "~", not the home directory, when read back
    return rel


def _body_lines(b, base):
    lines = ["[[body]]", f"name = {_toml_string(b.name)}"]

    def put(key, value):
        lines.append(f"{key} = {_toml_value(value)}")

    if b.mesh is not None:
        put("mesh", _mesh_path(b.mesh, base))
    else:
        put("shape", b.shape)
        for key in SHAPES[b.shape]:
            put(key, getattr(b, key))
    if b.scale != 1.0:
        put("scale", b.scale)
    for key in ("position", "rotation_deg", "velocity", "angular_velocity"):
        value = getattr(b, key)
        if key == "position" or any(value):
            put(key, [float(x) for x in value])
    if b.density != BodySpec.density:
        put("density", b.density)
    for key in ("friction", "restitution"):
        if getattr(b, key) is not None:
            put(key, getattr(b, key))
    put("motion", b.motion)
    if b.color is not None:
        put("color", [float(x) for x in b.color])
    if b.decompose:
        lines.append("[body.decompose]")
        for key, value in b.decompose.items():
            put(key, value)
    return lines


def format_scene(scene, base=None, header=()):
    """The text of a scene file: ``[scene]``, then one ``[[body]]`` table per body.

    Parameters
    ----------
    scene : SceneSpec
    base : str, optional
        The folder the file will be in (mesh paths are written relative to it,
        see ``RELATIVE_UP``); None writes them absolute.
    header : sequence of str
        Comment lines for the top of the file (without the ``#``).

    Every value is on one line (vectors as ``[x, y, z]``), floats as Python's
    ``repr`` (the shortest decimal that reads back exactly), keys that hold
    their default left out (rotation, velocities, scale and density), a blank
    line between bodies.
    """
    lines = [line for text in header for line in str(text).splitlines() or [""]]
    out = [("# " + "".join(c if c == "\t" or (ord(c) >= 0x20 and ord(c) != 0x7F) else "?" for c in line)).rstrip()
           for line in lines]
    out += [""] * bool(out) + ["[scene]", f"name = {_toml_string(scene.name)}", f"dt = {_toml_value(float(scene.dt))}",
            f"gravity = {_toml_value([float(g) for g in scene.gravity])}"]
    if scene.category:
        out.append(f"category = {_toml_string(scene.category)}")
    for b in scene.bodies:
        out.append("")
        out += _body_lines(b, base)
    return "\n".join(out) + "\n"


def leading_comments(path):
    """The comment lines at the top of a text file (without the ``#``), or ``[]``.

    Saving a scene over a file keeps the notes its author wrote at its head.
    """
    lines = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                text = line.strip()
                if not text.startswith("#"):
                    break
                lines.append(text[1:].removeprefix(" "))
    except (OSError, UnicodeDecodeError):
        return []
    return lines


def save_scene(path, scene, header=()):
    """Write ``scene`` to ``path`` atomically (temp file in the same folder, then rename).

    See :func:`format_scene` for the layout and ``header``. On failure the
    old file is untouched and the error (``OSError``) propagates.
    """
    path = os.path.abspath(os.fspath(path))
    base = os.path.dirname(path)
    text = format_scene(scene, base, header)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".toml", dir=base)
    try:
        # mkstemp makes the file 0600: keep the old file's mode, or the usual one
        if os.path.exists(path):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


# -- where a scene is saved --------------------------------------------------------------


def examples_dir():
    """The folder of the example scenes (shipped with the program: never written)."""
    return os.path.join(ASSETS, "scenes")


def user_data_dir():
    """The user's data folder: ``$OBBCOLLIDE_DATA`` if set, else the platform's
    (``platformdirs.user_data_dir("obbcollide")``, e.g. ``~/.local/share/obbcollide``)."""
    env = os.environ.get("OBBCOLLIDE_DATA")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    import platformdirs

    return platformdirs.user_data_dir("obbcollide")


def is_example(path):
    """True when ``path`` is inside the example scenes' folder (links resolved)."""
    folder = os.path.realpath(examples_dir())
    target = os.path.realpath(os.path.abspath(os.fspath(path)))
    try:
        return os.path.commonpath([folder, target]) == folder
    except ValueError:  # another drive
        return False


def save_path(path):
    """Where saving the scene read from ``path`` writes: ``path`` itself, or for an
    example scene a copy of the same name in ``user_data_dir()/scenes``.

    Returns
    -------
    target : str
        Absolute path.
    copy : bool
        True when ``target`` is a copy (``path`` is an example scene).
    """
    path = os.path.abspath(os.fspath(path))
    if is_example(path):
        return os.path.join(user_data_dir(), "scenes", os.path.basename(path)), True
    return path, False


def scene_registry(folder=None):
    """The example scenes by name: ``{name: path}`` for ``assets/scenes/*.toml``."""
    folder = folder or examples_dir()
    if not os.path.isdir(folder):
        return {}
    return {os.path.splitext(f)[0]: os.path.join(folder, f)
            for f in sorted(os.listdir(folder)) if f.endswith(".toml")}
