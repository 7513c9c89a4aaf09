"""Scenes: the default demo scene and loading the user's meshes into bodies.

Loading never raises past this module for a user's file: :func:`load_mesh_body`
returns ``(body, None)`` or ``(None, message)``, the message naming the file
and the problem, so the viewer can show it and keep everything it had.
"""

import os

import numpy as np

import collision as co

from .world import Body, World, pose_matrix, rotation

ASSETS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "assets", "meshes")

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


def _load_trimesh(path):
    """Read any format trimesh reads into one Trimesh (scenes flattened with their transforms)."""
    import trimesh

    # process=False first: processing would silently drop NaN vertices and
    # the faces using them, and the user should hear about a broken file
    loaded = trimesh.load(path, force="mesh", process=False)
    if not isinstance(loaded, trimesh.Trimesh):
        raise ValueError("the file holds no triangle mesh")
    if not np.all(np.isfinite(np.asarray(loaded.vertices, float))):
        raise ValueError("the mesh has NaN or infinite vertex coordinates")
    loaded.process(validate=False)  # merge duplicate vertices
    return loaded


def make_body(name, vertices, faces, pose, color, spin=(0, 0, 0)):
    """A body from arrays (builds its OBB tree)."""
    tree = co.OBBTree(vertices, faces)
    return Body(name, np.asarray(vertices, float), np.asarray(faces, np.int64), tree,
                pose, color, np.asarray(spin, float))


def load_mesh_body(path, index=0, position=None):
    """A body from a mesh file, or the reason it cannot be one.

    Returns
    -------
    (Body, None) or (None, str)
        The message names the file and the problem.
    """
    name = os.path.basename(path)
    if not os.path.isfile(path):
        return None, f"{path}: no such file"
    try:
        m = _load_trimesh(path)
    except Exception as exc:  # trimesh raises many kinds for broken files
        return None, f"{path}: cannot read a mesh ({type(exc).__name__}: {exc})"
    v = np.asarray(m.vertices, float)
    f = np.asarray(m.faces, np.int64)
    if len(f) == 0 or len(v) == 0:
        return None, f"{path}: the mesh has no triangles"
    if not np.all(np.isfinite(v)):
        return None, f"{path}: the mesh has NaN or infinite vertices"
    size = float(np.ptp(v, axis=0).max())
    if size == 0.0:
        return None, f"{path}: the mesh is a single point (zero size)"
    warn = None
    if size > 1e3 or size < 1e-3:
        warn = f"{path}: unusual size {size:.3g} (units?); the camera is refitted"
    v = v - (v.min(0) + v.max(0)) / 2
    if position is None:
        position = (2.0 + 1.5 * index, size / 2, 2.0)
    try:
        body = make_body(name, v, f, pose_matrix(None, position), PALETTE[(index + 3) % len(PALETTE)])
    except ValueError as exc:
        return None, f"{path}: {exc}"
    return body, warn


def default_scene():
    """The demo: six project meshes, some overlapping, slowly spinning."""
    bodies = []
    for k, (name, fname, pos, (axis, angle), spin) in enumerate(DEFAULT_SCENE):
        m = _load_trimesh(os.path.join(ASSETS, fname))
        pose = pose_matrix(rotation(axis, angle) if angle else None, pos)
        bodies.append(make_body(name, m.vertices, m.faces, pose, PALETTE[k % len(PALETTE)], spin))
    return World(bodies)
