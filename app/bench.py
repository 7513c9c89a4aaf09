"""``python3 -m app --bench``: frame-time phases for scenes of 10, 100 and 500 bodies.

Each scene is a grid of the demo meshes (bodies of one mesh share its OBB
tree and its GPU buffer), every body spinning, packed so that neighbours
overlap now and then. Frames run headless through the real renderer with a
fixed simulated step, the GUI panel drawn over them (its own phase, ``panel``);
the medians of each phase are printed per scene.

The phases (:mod:`app.viewer.frame_clock`) cover the whole frame, from the end of
one buffer swap to the end of the next: the recorder's line, event dispatch, the
world (update, broad, narrow, exact triangles, and the rest of the session's
update), the overlays' geometry, the GL draw submission, the HUD, the panel, the
swap itself and the garbage collector. ``rest`` is the wall time less the sum
of the printed phases (per frame, its median), what no phase holds.
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

from .viewer.frame_clock import PHASE_KEYS

# The printed phases: all of app.viewer.frame_clock's but the interactive loop's idle wait and
# the screenshot (--bench has neither; "rest" shows they hold nothing), then the frame's wall time.
PRINTED = tuple(k for k in PHASE_KEYS if k not in ("idle", "screenshot"))
PHASES = PRINTED + ("rest", "wall")


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
        ``{n: {phase: median seconds, ..., "candidates": median, "contacts": median,
        "frames": the measured frames' report lines (with their "phases")}}``.
    """
    from .viewer.session import Session
    from .viewer.window import run_frames

    out = out or sys.stdout
    results = {}
    out.write(f"frame-time phases, medians over {frames} frames (ms), {width}x{height}, headless\n")
    out.write(f"{'bodies':>7} {'triangles':>9} " + " ".join(f"{p[:7]:>7}" for p in PHASES)
              + f" {'fps':>5} {'pairs':>5} {'contacts':>8}\n")
    for n in counts:
        t0 = time.perf_counter()
        world = stress_scene(n)
        session = Session(world)
        session.frame_camera()
        report = run_frames(session, frames + warmup, width=width, height=height)
        rows = report["frames"][warmup:]
        for r in rows:
            r["rest"] = r["wall"] - sum(r["phases"][k] for k in PRINTED)
        med = {p: statistics.median(r["phases"][p] if p in PRINTED else r[p] for r in rows) for p in PHASES}
        med["frames"] = rows
        med["loop"] = report["loop"]  # the frame loop on a clock of its own, and all its frames' wall times
        med["walls"] = sum(r["wall"] for r in report["frames"])
        med["candidates"] = statistics.median(r["candidates"] for r in rows)
        med["contacts"] = statistics.median(r["contacts"] for r in rows)
        results[n] = med
        tris = sum(len(b.faces) for b in world.bodies)
        out.write(f"{n:>7} {tris:>9} " + " ".join(f"{med[p] * 1e3:7.2f}" for p in PHASES)
                  + f" {1.0 / med['wall']:5.1f} {med['candidates']:5.0f} {med['contacts']:8.0f}"
                  + f"   (scene built in {time.perf_counter() - t0:.1f} s)\n")
        out.flush()
    return results
