"""Scenes: the default demo scene and loading the user's meshes into bodies.

Loading never raises past this module for a user's file: :func:`load_mesh_body`
returns ``(body, None)`` or ``(None, message)``, the message naming the file
and the problem, so the viewer can show it and keep everything it had.
"""

import dataclasses
import os

import numpy as np

import obbcollide as co
from obbcollide.shapes import Capsule, HalfSpace, Sphere, TriMesh

from ..assets import meshes_dir
from ..progress import prefixed, report
from ..world.world import Body, MassProperties, World, pose_matrix, rotation

ASSETS = meshes_dir()

# Body colours, muted and away from the overlay colours (red triangles, yellow
# curves, magenta contacts, cyan boxes) so the debug drawing always stands out.
PALETTE = [
    (0.86, 0.55, 0.30), (0.36, 0.55, 0.85), (0.52, 0.70, 0.45), (0.80, 0.72, 0.56),
    (0.58, 0.62, 0.72), (0.62, 0.55, 0.80), (0.45, 0.68, 0.66), (0.72, 0.58, 0.48),
]

# name, mesh file, position, (axis, angle) orientation, spin (rad/s, world)
DEFAULT_SCENE = [
    ("torus_knot", "torus_knot.ply", (0.0, 1.1, 0.0), ((1, 0, 0), 0.5), (0.0, 0.25, 0.0)),
    ("gear", "gear.ply", (1.05, 1.0, 0.25), ((0, 1, 0), 1.2), (0.0, 0.0, 0.35)),
    ("capsule", "capsule.ply", (-0.95, 1.15, 0.1), ((0, 0, 1), 1.1), (0.3, 0.0, 0.0)),
    ("box", "box.ply", (0.0, 0.35, 0.9), ((0, 1, 0), 0.4), (0.0, -0.2, 0.0)),
    ("blob", "blob.ply", (0.2, 0.45, -0.85), ((1, 1, 0), 0.3), (0.15, 0.1, 0.0)),
    ("bowl", "bowl.ply", (-1.9, 0.6, -0.6), ((0, 0, 1), 0.0), (0.0, 0.0, 0.0)),
]


def make_body(name, vertices, faces, pose, color, spin=(0, 0, 0)):
    """A body from arrays (builds its OBB tree)."""
    tree = co.OBBTree(vertices, faces)
    return Body(name, np.asarray(vertices, float), np.asarray(faces, np.int64), tree,
                pose, color, np.asarray(spin, float))


def projectile_body(name, radius, position, velocity, density=1000.0):
    """A dynamic ball (an exact sphere for collisions) to throw into the scene; a saved scene
    keeps it as a sphere primitive (its ``spec``)."""
    import trimesh

    from .scene_file import BodySpec

    m = trimesh.creation.icosphere(subdivisions=2, radius=radius)
    v, f = np.asarray(m.vertices, float), np.asarray(m.faces, np.int64)
    color, restitution = (0.95, 0.85, 0.35), 0.3
    body = Body(name, v, f, co.OBBTree(v, f), pose_matrix(None, position), color,
                velocity=np.asarray(velocity, float), motion="dynamic", mass=mass_properties(v, f, density),
                shapes=[Sphere(radius)], restitution=restitution)
    body.spec = BodySpec(name=name, shape="sphere", radius=float(radius), motion="dynamic", density=float(density),
                         restitution=restitution, color=color)
    return body


def load_mesh_body(path, index=0, motion="dynamic", scale=None, typical=None, cache=True, progress=None):
    """A body from a mesh file (``--mesh``, a dropped file), or the reason it cannot be one.

    The file goes through :func:`build_body`, as a scene file's mesh body does:
    convex pieces from the cache, mass properties (an open mesh's from its
    convex hull, see :func:`build_body`). The mesh is re-centred on its
    bounding box (``body.source_offset`` keeps the shift, so a saved scene puts
    the file's own frame back); the caller places the body
    (:func:`app.scene.placement.place_body`). A flat mesh (no volume) cannot move
    under contacts: asked to be dynamic or kinematic, it is added as static,
    with a note.

    Parameters
    ----------
    path : str
    index : int
        Picks the colour.
    motion : str
        ``"dynamic"``, ``"kinematic"`` or ``"static"``.
    scale : float or None
        Multiplies the coordinates; None: 1, unless the file is far larger
        than the scene's bodies and a unit (millimetres, centimetres, inches)
        explains it (:func:`app.scene.placement.unit_scale`; a note says so).
    typical : float or None
        The scene's typical body size (:func:`app.scene.placement.typical_size`).
    cache : bool or str
        The decomposition cache (see :func:`app.scene.pieces.convex_pieces`).
    progress : callable, optional
        ``progress(stage, fraction)`` (see :mod:`app.progress`).

    Returns
    -------
    (Body, list of str) or (None, str)
        The body and notes for the user (an open, flat or rescaled mesh), or
        no body and the message naming the file and the problem.
    """
    import trimesh

    from .mesh_io import MeshLoadError, load_mesh
    from .placement import unit_scale
    from .scene_file import BodySpec

    name = os.path.basename(path)
    notes = []
    try:
        mesh = load_mesh(path, progress=progress)
    except MeshLoadError as exc:
        return None, str(exc)
    if scale is None:
        scale, note = unit_scale(name, float(np.max(np.ptp(mesh.vertices, axis=0))), typical)
        notes += [note] if note else []
    if scale != 1.0:
        with np.errstate(over="ignore"):
            v = np.asarray(mesh.vertices, float) * float(scale)
        if not np.all(np.isfinite(v)):
            return None, f"{path}: scale {scale!r} makes the coordinates overflow"
        mesh = trimesh.Trimesh(v, mesh.faces, process=False)
    spec = BodySpec(name=name, mesh=os.path.abspath(path), scale=float(scale), motion=motion,
                    color=PALETTE[(index + 3) % len(PALETTE)])
    try:
        body = build_body(spec, index, cache=cache, progress=progress, recenter=True, mesh=mesh)
    except FlatMeshError:  # only raised for a body that is not static
        try:
            body = build_body(dataclasses.replace(spec, motion="static"), index, cache=cache, progress=progress,
                              recenter=True, mesh=mesh)
        except ValueError as exc:
            return None, f"{path}: {exc}"
        return body, notes + [f"{name} is flat (it has no volume), so it cannot move: added as static"]
    except ValueError as exc:
        return None, f"{path}: {exc}"
    if body.mass_source is not None:
        notes.append(f"{name} is open (not a closed surface): {body.mass_source}")
    return body, notes


def default_scene():
    """The demo: six project meshes, some overlapping, slowly spinning."""
    bodies = []
    from .mesh_io import load_mesh

    for k, (name, fname, pos, (axis, angle), spin) in enumerate(DEFAULT_SCENE):
        m = load_mesh(os.path.join(ASSETS, fname))
        pose = pose_matrix(rotation(axis, angle) if angle else None, pos)
        body = make_body(name, m.vertices, m.faces, pose, PALETTE[k % len(PALETTE)], spin)
        body.source = os.path.join(ASSETS, fname)
        bodies.append(body)
    return World(bodies)


# -- scene files -------------------------------------------------------------------------


def primitive_mesh(spec):
    """The triangle mesh of a primitive body spec (box, sphere, capsule, cylinder, plane)."""
    import trimesh

    if spec.shape == "box":
        return trimesh.creation.box(extents=spec.size)
    if spec.shape == "sphere":
        return trimesh.creation.icosphere(subdivisions=3, radius=spec.radius)
    if spec.shape == "capsule":  # axis along y
        m = trimesh.creation.capsule(height=spec.height, radius=spec.radius, count=[24, 24])
        m.apply_transform(trimesh.transformations.rotation_matrix(-np.pi / 2, [1, 0, 0]))
        return m
    if spec.shape == "cylinder":
        m = trimesh.creation.cylinder(radius=spec.radius, height=spec.height, sections=32)
        m.apply_transform(trimesh.transformations.rotation_matrix(-np.pi / 2, [1, 0, 0]))
        return m
    if spec.shape == "plane":  # a square in y = 0, facing up; open, so static only
        hx, hz = spec.size[0] / 2, spec.size[1] / 2
        v = np.array([[-hx, 0, -hz], [hx, 0, -hz], [hx, 0, hz], [-hx, 0, hz]], float)
        return trimesh.Trimesh(v, np.array([[0, 2, 1], [0, 3, 2]]), process=False)
    raise ValueError(f"unknown shape {spec.shape!r}")


def primitive_shapes(spec):
    """The exact narrow-phase shapes of a round or flat primitive, or None (then the
    body's convex pieces are its shapes).

    A sphere and a capsule collide as themselves, not as their tessellation. A
    plane collides as the half-space below it (an infinite ground: its size is
    only how it is drawn).
    """
    s = spec.scale
    if spec.mesh is not None:
        return None
    if spec.shape == "sphere":
        return [Sphere(spec.radius * s)]
    if spec.shape == "capsule":
        return [Capsule(spec.radius * s, spec.height * s / 2)]
    if spec.shape == "plane":
        return [HalfSpace((0.0, 1.0, 0.0), 0.0)]
    return None


def mass_properties(vertices, faces, density):
    """:class:`MassProperties` of a closed, consistently wound mesh, or None (it can only be static)."""
    import trimesh

    m = trimesh.Trimesh(vertices, faces, process=False)
    if not (m.is_watertight and m.is_winding_consistent):
        return None  # no well-defined inside
    if m.volume < 0:
        m.invert()  # inside-out winding
    m.density = float(density)
    mp = m.mass_properties
    return MassProperties(float(density), float(mp.volume), float(mp.mass), np.array(mp.center_mass, float),
                          np.array(mp.inertia, float))


def pieces_mass_properties(pieces, density):
    """:class:`MassProperties` of the solid made of convex pieces, each a closed hull.

    Each piece's volume, centre of mass and inertia (divergence theorem on its
    outward hull triangles), combined with the parallel-axis theorem. Pieces
    that overlap count their overlap twice (V-HACD and CoACD pieces overlap
    little; one piece, the convex hull, is exact).

    Parameters
    ----------
    pieces : app.scene.pieces.ConvexPieces
    density : float

    Returns
    -------
    MassProperties
    """
    import trimesh

    masses, centers, inertias = [], [], []
    for hull in pieces.hulls:
        m = trimesh.Trimesh(hull.vertices, hull.triangles, process=False)
        if m.volume < 0:
            m.invert()
        m.density = float(density)
        mp = m.mass_properties
        masses.append(float(mp.mass))
        centers.append(np.array(mp.center_mass, float))
        inertias.append(np.array(mp.inertia, float))
    mass = float(sum(masses))
    if not mass > 0:
        raise FlatMeshError("its convex pieces have no volume")
    center = sum(m * c for m, c in zip(masses, centers)) / mass
    inertia = np.zeros((3, 3))
    for m, c, i in zip(masses, centers, inertias):
        d = c - center
        inertia += i + m * (np.dot(d, d) * np.eye(3) - np.outer(d, d))  # parallel axes
    return MassProperties(float(density), mass / float(density), mass, center, inertia)


def hull_support_points(vertices, count, chunk=1 << 16):
    """At most ``count`` of the points (n, 3): the farthest along ``count`` directions spread over the sphere.

    Their hull is inscribed in the points' hull: exact where a vertex is
    extreme along a sampled direction (the six axis directions are among
    them, so the bounding box is exact), inside it elsewhere: on a finely
    tessellated unit sphere the deepest face of the hull of 64 such points is
    0.057 in, of 128 points 0.027, of 256 points 0.014 (measured). An open
    mesh of 1.3M triangles gets such a hull in a second or two, where the hull
    of all its points takes minutes and makes every contact test slow.

    Returns
    -------
    (k, 3) float64, k <= count
    """
    v = np.asarray(vertices, dtype=np.float64)
    k = max(int(count) - 6, 1)
    i = np.arange(k) + 0.5
    polar, turn = np.arccos(1.0 - 2.0 * i / k), np.pi * (1.0 + 5.0 ** 0.5) * i  # a Fibonacci sphere
    dirs = np.concatenate([np.eye(3), -np.eye(3), np.stack([np.cos(turn) * np.sin(polar), np.sin(turn) *
                                                            np.sin(polar), np.cos(polar)], axis=1)])
    best, where = np.full(len(dirs), -np.inf), np.zeros(len(dirs), np.int64)
    for start in range(0, len(v), chunk):
        reach = v[start:start + chunk] @ dirs.T
        arg = np.argmax(reach, axis=0)
        top = reach[arg, np.arange(len(dirs))]
        better = top > best
        best[better], where[better] = top[better], arg[better] + start
    return v[np.unique(where)]


class FlatMeshError(ValueError):
    """A mesh that spans no volume (all its points in a plane or on a line): it can only be static."""


def _flat(vertices):
    """True when the points (n, 3) span no volume (their least spread is ~1e-9 of the largest)."""
    c = vertices - vertices.mean(0)
    s = np.linalg.svd(c.T @ c, compute_uv=False)  # (3, 3): cheap for millions of points
    return not s[-1] > 1e-18 * max(s[0], 1e-300)


def build_body(spec, index=0, cache=True, progress=None, notes=None, recenter=False, mesh=None):
    """A :class:`Body` from a checked :class:`~app.scene.scene_file.BodySpec`.

    Loads the mesh (or makes the primitive), cuts it into convex pieces
    (cached), builds the trees and the mass properties. When the decomposer
    the body asks for (V-HACD, CoACD) is not installed, its convex hull is its
    one piece (a static body still collides as its exact surface), and a
    message naming the body says so in ``notes`` (a list, optional).

    A closed mesh's mass properties are its own (divergence theorem). An open
    or non-manifold mesh (most downloaded models: a mug, a brick with a hole)
    has no inside, so no volume of its own: unless it is static (then it
    collides as its exact surface, as before), its pieces are its convex hull
    (``decompose.method = "auto"``; of at most twice ``decompose.max_vertices``
    points, :func:`hull_support_points`; an explicit ``"vhacd"`` / ``"coacd"``
    is kept) and its mass properties those of its pieces
    (:func:`pieces_mass_properties`), so the solid it weighs is the solid it
    collides as. The hull, not V-HACD, by default: V-HACD's voxel fill leaks
    through an opening and gives voxel-thin shells whose mass depends on the
    voxel size (an open box in 16 pieces held 10% of its hull's volume).
    ``body.mass_source`` says so in words (None for a closed mesh).

    Parameters
    ----------
    recenter : bool
        Move the mesh's bounding-box centre to its model origin
        (``body.source_offset`` keeps the shift; :func:`body_spec` puts the
        file's frame back).
    mesh : trimesh.Trimesh, optional
        The spec's mesh file already read (and scaled): it is not read again.

    Raises
    ------
    ValueError
        With a message naming the body (and the file) when it cannot be built;
        :class:`FlatMeshError` for a flat mesh that is not static.
    """

    from .decompose_child import convex_pieces  # V-HACD in a child process: the window keeps drawing
    from .mesh_io import load_mesh
    from .pieces import DecomposerCrashed, DecomposerMissing, DecomposeSettings

    if mesh is None and spec.mesh is not None:
        mesh = load_mesh(spec.mesh, scale=spec.scale, progress=progress)
    elif mesh is None:
        mesh = primitive_mesh(spec)
        if spec.scale != 1.0:
            mesh.apply_scale(spec.scale)
    v = np.asarray(mesh.vertices, float)
    f = np.asarray(mesh.faces, np.int64)
    offset = None
    if recenter:
        offset = (v.min(0) + v.max(0)) / 2
        v = v - offset
    report(progress, "mass properties")
    mass = mass_properties(v, f, spec.density)
    settings = DecomposeSettings(**spec.decompose)
    cut_v, cut_f = v, f  # what is cut into pieces
    if mass is None and spec.motion != "static":
        if _flat(v):
            raise FlatMeshError(f"body {spec.name!r}: the mesh is flat (no volume), so it can only be static "
                                "(motion = \"static\")")
        if settings.method == "auto":
            settings = dataclasses.replace(settings, method="hull")
            if len(v) > 2 * settings.max_vertices:  # twice V-HACD's per piece: one piece here, not 16
                from scipy.spatial import ConvexHull

                cut_v = hull_support_points(v, 2 * settings.max_vertices)
                cut_f = ConvexHull(cut_v).simplices.astype(np.int64)  # the hull method needs only its points
    pieces = None
    hull_only = False  # the decomposer is missing: the hull stands in for the pieces
    if mass is not None or spec.motion != "static":
        try:
            try:
                pieces = convex_pieces(cut_v, cut_f, settings, cache=cache, progress=progress)
            except (DecomposerMissing, DecomposerCrashed) as exc:  # missing, or died in its child process
                hull_only = True
                what = "it is static, so it still collides as its exact surface" if spec.motion == "static" \
                    else "it collides as its convex hull"
                if notes is not None:
                    notes.append(f"body {spec.name!r}: {exc}; {what}")
                pieces = convex_pieces(cut_v, cut_f, dataclasses.replace(settings, method="hull"), cache=cache,
                                       progress=progress)
        except (ValueError, RuntimeError) as exc:
            raise ValueError(f"body {spec.name!r}: convex decomposition failed ({exc})") from None
    mass_source = None
    if mass is None and pieces is not None:
        try:
            mass = pieces_mass_properties(pieces, spec.density)
        except FlatMeshError as exc:
            raise FlatMeshError(f"body {spec.name!r}: {exc}, so it can only be static") from None
        mass_source = ("mass and collision shape from its convex hull" if len(pieces) == 1 else
                       f"mass and collision shape from its {len(pieces)} convex pieces")
    color = spec.color if spec.color is not None else PALETTE[index % len(PALETTE)]
    report(progress, f"OBB tree of {len(f)} triangles", 0.0)
    tree = co.OBBTree(v, f)
    report(progress, f"OBB tree of {len(f)} triangles", 1.0)
    shapes = primitive_shapes(spec)
    if shapes is None and spec.motion == "static" and (pieces is None or len(pieces) > 1 or hull_only):
        shapes = [TriMesh(tree)]  # a static concave (or open) mesh collides as its exact surface
    body = Body(spec.name, v, f, tree, spec.pose(), tuple(color), np.asarray(spec.angular_velocity, float),
                velocity=np.asarray(spec.velocity, float), motion=spec.motion, pieces=pieces, mass=mass,
                shapes=shapes, friction=spec.friction, restitution=spec.restitution)
    body.spec = spec
    body.source = spec.mesh
    body.mass_source = mass_source
    if offset is not None:
        body.source_offset = offset
    return body


# A saved state is rounded to these decimals (scene units, degrees, per second): far below
# what a person sees or the solver resolves (its slop is 5 mm), so the file reads 0.149543,
# not 0.14954306606798518. Angles keep 1e-6 degrees: a point 100 units from its body's
# origin (a mesh file's frame may be far from the mesh) moves by at most 3e-6 units.
SAVE_DECIMALS = {"position": 6, "rotation_deg": 6, "velocity": 5, "angular_velocity": 5}


def _rounded(values, decimals):
    return tuple(round(float(x), decimals) + 0.0 for x in values)  # + 0.0: no -0.0


def body_spec(body):
    """A :class:`~app.scene.scene_file.BodySpec` of a body as it is now (pose, velocities), for saving,
    rounded to ``SAVE_DECIMALS``."""
    from .scene_file import BodySpec

    base = getattr(body, "spec", None)
    if base is None:
        source = getattr(body, "source", None)
        if source is None:
            raise ValueError(f"body {body.name!r} has no mesh file or shape to save")
        base = BodySpec(name=body.name, mesh=source, motion=body.motion)
    r, t = body.pose[:3, :3], body.pose[:3, 3]
    offset = getattr(body, "source_offset", None)
    if offset is not None and base.mesh is not None:
        t = t - r @ offset  # the file's frame, not the re-centred one
    # r = Rz Ry Rx (BodySpec.pose): extrinsic x, y, z angles (scipy handles gimbal lock)
    import warnings

    from scipy.spatial.transform import Rotation

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "gimbal lock detected": still a valid triple
        angles = Rotation.from_matrix(r).as_euler("xyz", degrees=True)
    d = SAVE_DECIMALS
    return dataclasses.replace(
        base, name=body.name, position=_rounded(t, d["position"]), rotation_deg=_rounded(angles, d["rotation_deg"]),
        velocity=_rounded(body.velocity, d["velocity"]), angular_velocity=_rounded(body.spin, d["angular_velocity"]),
        motion=body.motion, color=tuple(float(c) for c in body.color))


def load_scene(path, cache=True, progress=None):
    """A :class:`World` from a scene file, and the list of problems.

    Bodies with errors (in the file, or in building: a broken mesh) are left
    out, each with a message; the rest load. Raises
    :class:`~app.scene.scene_file.SceneError` only when the file itself is unusable.
    """
    from .mesh_io import MeshLoadError
    from .scene_file import read_scene

    spec, errors = read_scene(path)
    bodies = []
    for k, b in enumerate(spec.bodies):
        step = prefixed(progress, f"[{k + 1}/{len(spec.bodies)}] {b.name}: ")
        report(step, "loading")
        notes = []
        try:
            bodies.append(build_body(b, k, cache=cache, progress=step, notes=notes))
        except MeshLoadError as exc:
            errors.append(f"{spec.path}: body {b.name!r}: {exc}")
        except ValueError as exc:
            errors.append(f"{spec.path}: {exc}" if not str(exc).startswith(spec.path) else str(exc))
        except Exception as exc:  # a loader bug or a broken library: this body only, not the scene
            errors.append(f"{spec.path}: body {b.name!r}: loading failed ({type(exc).__name__}: {exc})")
        errors += [f"{spec.path}: {text}" for text in notes]
    world = World(bodies, dt=spec.dt, gravity=spec.gravity)
    world.scene = spec
    return world, errors
