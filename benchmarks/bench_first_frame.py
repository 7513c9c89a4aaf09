"""Time to first frame of each example scene, with an empty kernel cache and with a warm one.

Run: ``.venv/bin/python benchmarks/bench_first_frame.py [--scenes default,stacks] [--repeat 3]
[--no-cold] [--setup]``

What a person waits for after the setup (``.venv`` installed), measured as
``python3 -m app`` and ``python3 -m app --scene NAME`` start: a fresh Python
process each time, the clock starting when the process is launched. The
viewer runs in a real window (EGL, offscreen, 1280x720), its frames paced at
60 a second as ``pyglet.app.run`` paces them:

- ``default``: the default scene is built, warmed up (on a cold cache its
  kernels compile here, before the window opens, with a line on stderr), the
  window opens and draws it.
- a scene file: the window opens on an empty world and draws the loading
  line while the scene loads and warms up in the background
  (:meth:`app.viewer.session.Session.load_scene`), then draws the scene.

Columns: ``window`` is the first frame the window drew (the loading line, for
a scene file), ``scene`` the first frame with the scene's bodies, ``gap`` the
longest time between two frames before the scene's first (how frozen the
window was; ``-`` when the window only opened with the scene), ``fps`` the
frames drawn per second meanwhile (60 at most), ``kernels`` how
many of the project's kernels compiled and ``after`` how many compiled in the
second after the scene's first frame (a hitch while it runs; 0 is the aim).
``cold`` empties numba's cache first (``*.nbi``, ``*.nbc`` under ``app/`` and
``collision/``), so it deletes the cached kernels of this checkout; ``warm`` is
the median of ``--repeat`` runs right after. ``--setup`` also times the
setup's compilation of every kernel (:func:`app.warmup.compile_kernels`) from
an empty cache. Runs go one after another, never in parallel.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def clear_kernel_cache(root=ROOT):
    """Delete numba's cached kernels of ``app/`` and ``collision/``; returns how many files went."""
    gone = 0
    for package in ("app", "collision"):
        for pattern in ("*.nbi", "*.nbc"):
            for path in (root / package).rglob(pattern):
                path.unlink()
                gone += 1
    return gone


# -- the measured process ----------------------------------------------------------------


def _child(scene, launched):
    """One start of the viewer on ``scene`` ("default" or a scene name); prints a JSON line."""
    os.environ["PYGLET_HEADLESS"] = "1"
    os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
    import pyglet

    pyglet.options["headless"] = True
    from app.warmup import CompileWatch

    watch = CompileWatch()
    watch.__enter__()
    from app.scene.loader import default_scene
    from app.scene.scene_file import scene_registry
    from app.viewer.session import Session
    from app.warmup import warm_up_world
    from app.world.world import World

    def since():
        return time.time() - launched

    if scene == "default":
        world = default_scene()
        warm_up_world(world)
        session = Session(world)
    else:
        session = Session(World([]))
        session.load_scene(scene_registry()[scene])
    from app.viewer.window import ViewerWindow

    win = ViewerWindow(session, 1280, 720, visible=False)
    first_window = first_scene = None
    gaps, gap_from = [], None
    compiled_at_scene = None
    period = 1.0 / 60.0
    last = time.perf_counter()
    while True:
        start = time.perf_counter()
        win.dispatch_events()
        win.step_frame(start - last)
        win.flip()
        last = start
        now = time.perf_counter()
        if gap_from is not None and first_scene is None:
            gaps.append(now - gap_from)
        gap_from = now
        if first_window is None:
            first_window = since()
        if first_scene is None and session.world.bodies:
            first_scene = since()
            compiled_at_scene = watch.count
            scene_frames_until = now + 1.0
        if first_scene is not None and now >= scene_frames_until:
            break
        time.sleep(max(0.0, period - (time.perf_counter() - start)))
    watch.__exit__(None, None, None)
    win.close()
    loading = first_scene - first_window
    print(json.dumps({"window": first_window, "scene": first_scene,
                      "gap": max(gaps) if gaps else None, "frames_before": len(gaps) + 1,
                      "fps": len(gaps) / loading if gaps and loading > 0 else None,
                      "kernels": compiled_at_scene, "compile_s": watch.seconds,
                      "after": watch.count - compiled_at_scene, "after_names": watch.kernels[compiled_at_scene:]}))


def _child_setup(launched):
    from app.warmup import compile_kernels

    watch = compile_kernels()
    print(json.dumps({"setup": time.time() - launched, "kernels": watch.count, "compile_s": watch.seconds}))


# -- the driver ----------------------------------------------------------------------------


def run_child(*args):
    env = dict(os.environ, OBBCOLLIDE_NO_BOOTSTRAP="1", PYTHONPATH=str(ROOT))
    launched = time.time()
    r = subprocess.run([sys.executable, __file__, "--child", *args, repr(launched)], cwd=ROOT, env=env,
                       capture_output=True, text=True)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        raise RuntimeError(f"run {args} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return json.loads(lines[-1])


def _s(x, digits=1):
    return "-" if x is None else f"{x:.{digits}f}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scenes", help="comma-separated: default and scene names (default: all)")
    p.add_argument("--repeat", type=int, default=3, help="warm runs per scene (median)")
    p.add_argument("--no-cold", action="store_true", help="leave the kernel cache alone: warm runs only")
    p.add_argument("--setup", action="store_true", help="also time the setup's compilation of every kernel")
    p.add_argument("--json", help="write the raw numbers here")
    p.add_argument("--child", nargs=2, metavar=("SCENE", "LAUNCHED"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        sys.path.insert(0, str(ROOT))
        scene, launched = args.child[0], float(args.child[1])
        return _child_setup(launched) if scene == "SETUP" else _child(scene, launched)

    sys.path.insert(0, str(ROOT))
    from app.scene.scene_file import scene_registry

    scenes = args.scenes.split(",") if args.scenes else ["default", *scene_registry()]
    results = {}
    if args.setup:
        clear_kernel_cache()
        results["setup"] = run_child("SETUP")
        print(f"setup: every kernel compiled from an empty cache in {results['setup']['setup']:.1f} s "
              f"({results['setup']['kernels']} kernels, {results['setup']['compile_s']:.1f} s compiling)",
              flush=True)
    for scene in scenes:
        row = {}
        if not args.no_cold:
            clear_kernel_cache()
            row["cold"] = run_child(scene)
        row["warm"] = [run_child(scene) for _ in range(args.repeat)]
        results[scene] = row
        print(f"  {scene}: done", file=sys.stderr, flush=True)
    print()
    head = (f"{'scene':12s} | {'cold: window':>12s} {'scene':>7s} {'gap':>6s} {'fps':>4s} {'kernels':>7s} "
            f"{'after':>5s} | {'warm: window':>12s} {'scene':>7s} {'gap':>6s} {'after':>5s}")
    print(head)
    print("-" * len(head))
    for scene in scenes:
        row = results[scene]
        c = row.get("cold")
        cold = " " * 46
        if c:
            cold = (f"{_s(c['window']):>12s} {_s(c['scene']):>7s} {_s(c['gap']):>6s} {_s(c['fps'], 0):>4s} "
                    f"{c['kernels']:>7d} {c['after']:>5d}")
        w = row["warm"]

        def med(key):
            vals = [r[key] for r in w if r[key] is not None]
            return statistics.median(vals) if vals else None

        print(f"{scene:12s} | {cold} | {_s(med('window')):>12s} {_s(med('scene')):>7s} {_s(med('gap')):>6s} "
              f"{max(r['after'] for r in w):>5d}")
    print(f"\nseconds from the process start; warm: median of {args.repeat} runs")
    for scene in scenes:
        late = sorted({n for r in [results[scene].get("cold")] + results[scene]["warm"] if r for n in r["after_names"]})
        if late:
            print(f"{scene}: compiled after its first frame: {', '.join(late)}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
