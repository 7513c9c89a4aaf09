"""``python3 -m app --bench``: frame-time phases for scenes of 10, 100 and 500 bodies.

Each scene is a grid of the demo meshes (bodies of one mesh share its OBB
tree and its GPU buffer), every body spinning, packed so that neighbours
overlap now and then. Frames run headless through the real renderer with a
fixed simulated step, the GUI panel drawn over them (its own phase, ``panel``);
the medians of each phase are printed per scene.
"""

import math
import os
import statistics
import sys
import time

import numpy as np

import obbcollide as co

from .scene.mesh_io import load_mesh
from .scene.loader import ASSETS, DEFAULT_SCENE, PALETTE
from .world.world import Body, World, pose_matrix, rotation

PHASES = ("update", "broad", "narrow", "render", "panel", "wall")


def stress_scene(n, seed=0, spacing=1.6):
    """A :class:`World` of ``n`` bodies: the demo meshes on a cubic grid, spinning.

    Parameters
    ----------
    n : int
    seed : int
        Orientations and spins are random but reproducible.
    spacing : float
        Grid step (the demo meshes are about one unit across, so neighbours
        touch while they turn).
    """
    rng = np.random.default_rng(seed)
    meshes = []
    for name, fname, *_ in DEFAULT_SCENE:
        m = load_mesh(os.path.join(ASSETS, fname))
        v, f = np.asarray(m.vertices, float), np.asarray(m.faces, np.int64)
        meshes.append((name, v, f, co.OBBTree(v, f)))
    side = max(1, math.ceil(n ** (1 / 3)))
    bodies = []
    for k in range(n):
        i, j, l = k % side, (k // side) % side, k // (side * side)
        name, v, f, tree = meshes[k % len(meshes)]
        axis = rng.normal(size=3)
        pos = (np.array([i, l, j]) - (side - 1) / 2) * spacing + [0.0, (side - 1) / 2 * spacing + 0.6, 0.0]
        pose = pose_matrix(rotation(axis, rng.uniform(0, math.pi)), pos)
        spin = rng.normal(size=3) * 0.4
        bodies.append(Body(f"{name}_{k}", v, f, tree, pose, PALETTE[k % len(PALETTE)], spin))
    return World(bodies)


def run(counts=(10, 100, 500), frames=60, warmup=5, width=960, height=540, out=None):
    """Run each scene headless and print the median phase times (ms).

    Returns
    -------
    dict
        ``{n: {phase: median seconds, ..., "candidates": median, "contacts": median}}``.
    """
    from .viewer.session import Session
    from .viewer.window import run_frames

    out = out or sys.stdout
    results = {}
    out.write(f"frame-time phases, medians over {frames} frames (ms), {width}x{height}, headless\n")
    out.write(f"{'bodies':>7} {'triangles':>10} " + " ".join(f"{p:>8}" for p in PHASES)
              + f" {'fps':>6} {'pairs':>6} {'contacts':>8}\n")
    for n in counts:
        t0 = time.perf_counter()
        world = stress_scene(n)
        session = Session(world)
        session.frame_camera()
        report = run_frames(session, frames + warmup, width=width, height=height)
        rows = report["frames"][warmup:]
        med = {p: statistics.median(r[p] for r in rows) for p in PHASES}
        med["candidates"] = statistics.median(r["candidates"] for r in rows)
        med["contacts"] = statistics.median(r["contacts"] for r in rows)
        results[n] = med
        tris = sum(len(b.faces) for b in world.bodies)
        out.write(f"{n:>7} {tris:>10} " + " ".join(f"{med[p] * 1e3:8.2f}" for p in PHASES)
                  + f" {1.0 / med['wall']:6.1f} {med['candidates']:6.0f} {med['contacts']:8.0f}"
                  + f"   (scene built in {time.perf_counter() - t0:.1f} s)\n")
        out.flush()
    return results
