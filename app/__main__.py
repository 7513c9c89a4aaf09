"""``python3 -m app``: the viewer on the default scene, or a headless run.

The first run sets up ``.venv`` (see :mod:`app._bootstrap`). The display is
decided before pyglet is imported (pyglet connects to the display on import):
``--headless`` or no ``DISPLAY`` renders offscreen through EGL.
"""

import argparse
import os
import sys

# The names of collision.broad_phase.BROAD_PHASES, spelt out so that --help imports no numba
# (tests/world/test_world.py checks they agree).
BROAD_PHASE_NAMES = ("brute", "sap", "grid", "octree", "tree")
# The names of app.world.narrow_compare.ALGORITHMS, likewise (tests/world/test_narrow_compare.py checks them).
NARROW_PHASE_NAMES = ("sat", "gjk", "vector-symbol", "triangles")


def _parser():
    p = argparse.ArgumentParser(
        prog="python3 -m app" if __package__ == "app" else "obbcollide",
        description="Real-time rigid-body collision detection viewer: OBB trees, contacts, intersection curves.",
    )
    p.add_argument("--mesh", action="append", default=[], metavar="PATH",
                   help="add a mesh file as a body (repeatable; any format trimesh reads)")
    p.add_argument("--motion", default="dynamic", choices=("dynamic", "kinematic", "static"),
                   help="how --mesh and dropped files move: dynamic (fall and collide; the default), "
                        "kinematic (only the user moves them) or static")
    p.add_argument("--mesh-scale", type=float, default=None, metavar="S",
                   help="multiply the coordinates of --mesh and dropped files by S (e.g. 0.001 for "
                        "millimetres); by default a file far larger than the scene's bodies is read "
                        "in the unit that fits (millimetres, centimetres, inches), with a message")
    p.add_argument("--empty", action="store_true", help="start without the default scene")
    p.add_argument("--scene", metavar="NAME|PATH",
                   help="load a scene file (TOML), or an example scene by name (see --list-scenes)")
    p.add_argument("--list-scenes", action="store_true", help="list the example scenes and exit")
    p.add_argument("--headless", action="store_true", help="render offscreen (EGL), no window")
    p.add_argument("--frames", type=int, default=None, help="run this many frames, then exit")
    p.add_argument("--screenshot", metavar="PNG", help="save the last frame as a PNG")
    p.add_argument("--report", metavar="JSON", help="write per-frame timings, counts, the largest body speed and the final poses, velocities "
                        "and sleep states (in a window: every second and on quitting)")
    p.add_argument("--scripted", metavar="JSON", help="timed input actions (see app/viewer/window.py)")
    p.add_argument("--size", default="1280x720", help="window size, WIDTHxHEIGHT")
    p.add_argument("--broad-phase", default="tree", choices=BROAD_PHASE_NAMES,
                   help="the broad phase to start with (Z switches it in the viewer; default tree)")
    p.add_argument("--narrow-phase", default="sat", choices=NARROW_PHASE_NAMES,
                   help="the narrow phase whose touching answers are shown (default sat, the contact manifolds)")
    p.add_argument("--narrow-compare", action="store_true",
                   help="compare the narrow phase with the exact triangle test on every candidate piece pair, "
                        "each frame (counts in the panel and in --report)")
    p.add_argument("--narrow-response", default="sat", choices=("sat", "gjk"),
                   help="what builds the solver's contacts for hull pairs: sat (default) or gjk (one-point "
                        "GJK / EPA manifolds; stacks fall)")
    p.add_argument("--no-panel", action="store_true",
                   help="no GUI panel: the text HUD only (F1 hides / shows the panel in the viewer)")
    p.add_argument("--demo", action="store_true", help="print one query of each kind and exit (no GL)")
    p.add_argument("--bench", nargs="?", const="10,100,500", metavar="N,N,...",
                   help="print frame-time phases for scenes of this many bodies (default 10,100,500), headless")
    return p


def demo(seed=0, out=None):
    """Run one query of each kind on two random hulls and two triangles; print the answers
    (to ``out``, default the ``sys.stdout`` of the moment)."""
    out = sys.stdout if out is None else out
    import numpy as np

    import obbcollide as c

    rng = np.random.default_rng(seed)
    a = c.ConvexPolyhedron.from_points(rng.normal(size=(12, 3)))
    b = c.ConvexPolyhedron.from_points(rng.normal(size=(12, 3)) * 0.8 + [1.2, 0.3, 0.0])
    w = out.write
    w("collision library: exact primitives (Ericson ch. 4-5) and the vector-symbol method\n\n")
    w(f"hull A: {len(a.vertices)} vertices, {len(a.polygons)} faces; "
      f"hull B: {len(b.vertices)} vertices, {len(b.polygons)} faces\n")
    sat = c.convex_convex_sat(a, None, b, None)
    state = "separated" if sat.separated else "intersecting"
    w(f"  SAT ({sat.axes_tested} axes): {state}, axis {np.round(sat.axis, 4)} ({sat.kind}), "
      f"depth {sat.depth:+.6f}\n")
    vs = c.vector_symbol_collide(a, b)
    w(f"  vector symbol: C = {vs.C} (sum I = {int(np.sum(vs.I))}, E_ab = {vs.E_ab}, E_ba = {vs.E_ba})\n")
    oa, ob = c.OBB.from_points(a.vertices), c.OBB.from_points(b.vertices)
    w(f"  OBBs by covariance: volumes {oa.volume:.3f} and {ob.volume:.3f}, overlap {c.test_obb_obb(oa, ob)}\n")
    w(f"  closest point of A to the origin: {np.round(c.closest_pt_point_convex(np.zeros(3), a.vertices), 6)}\n")
    t1 = rng.normal(size=(3, 3))
    t2 = rng.normal(size=(3, 3))
    c1, c2 = c.closest_pt_triangle_triangle(*t1, *t2)
    w(f"\ntwo random triangles: intersect {c.test_triangle_triangle(t1, t2)}, "
      f"distance {np.linalg.norm(c1 - c2):.6f}\n")


def _no_display():
    return sys.platform.startswith("linux") and not os.environ.get("DISPLAY") and \
        not os.environ.get("WAYLAND_DISPLAY")


def _log_to_stderr():
    """The command line shows the application's and the library's warnings and errors on stderr,
    as plain lines (library code only logs; what to show is the program's choice)."""
    import logging

    for name in (__package__ or "app", "obbcollide"):
        logger = logging.getLogger(name)
        if not any(getattr(h, "_obbcollide_cli", False) for h in logger.handlers):
            handler = logging.StreamHandler()  # sys.stderr of the moment
            handler.setFormatter(logging.Formatter("%(message)s"))
            handler._obbcollide_cli = True
            logger.addHandler(handler)
            logger.setLevel(logging.WARNING)
            logger.propagate = False


def main(argv=None, prepare=None):
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    ``prepare()``, when given, is called once the command goes on to the viewer
    or the benchmark (``python3 -m app`` passes the setup's kernel compilation,
    :func:`app._bootstrap.ensure_kernels`).
    """
    args = _parser().parse_args(argv)
    _log_to_stderr()
    if args.demo:
        demo()
        return 0
    if args.list_scenes:
        from .scene.scene_file import scene_registry

        for name, path in scene_registry().items():
            print(f"{name:20s} {path}")
        return 0
    scene_path = None
    if args.scene:
        from .scene.scene_file import scene_registry

        scene_path = scene_registry().get(args.scene, args.scene)
        if not os.path.isfile(scene_path):
            print(f"--scene: {args.scene!r} is neither an example scene ({', '.join(scene_registry())}) "
                  "nor a file", file=sys.stderr)
            return 2
    try:
        width, height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        print(f"--size: expected WIDTHxHEIGHT, got {args.size!r}", file=sys.stderr)
        return 2
    if args.mesh_scale is not None and not 0 < args.mesh_scale < float("inf"):
        print(f"--mesh-scale: expected a positive number, got {args.mesh_scale!r}", file=sys.stderr)
        return 2
    if prepare is not None:
        prepare()
    headless = args.headless or args.bench is not None
    if not headless and _no_display():
        print("No display found (DISPLAY is not set), so no window can open.\n"
              "  For a window: run on a desktop, or under a virtual one: xvfb-run -a python3 -m app\n"
              "  Falling back to --headless: rendering 120 frames offscreen to viewer.png", file=sys.stderr)
        headless = True
        args.frames = args.frames or 120
        args.screenshot = args.screenshot or "viewer.png"
    if headless:
        os.environ["PYGLET_HEADLESS"] = "1"
        os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
        args.frames = args.frames or 60
    elif os.environ.get("PYOPENGL_PLATFORM") == "egl":
        # a window's GL context is pyglet's GLX one: PyOpenGL (the GUI panel's backend) must not
        # look for an EGL context (an environment left over from a headless run)
        del os.environ["PYOPENGL_PLATFORM"]

    if args.bench is not None:
        try:
            counts = [int(x) for x in args.bench.split(",")]
            if not counts or min(counts) < 1:
                raise ValueError
        except ValueError:
            print(f"--bench: expected body counts like 10,100,500, got {args.bench!r}", file=sys.stderr)
            return 2
        import pyglet

        pyglet.options["headless"] = True
        from .bench import run

        run(counts, frames=args.frames or 60, width=width, height=height)
        return 0

    from .scene.loader import default_scene
    from .viewer.session import Session
    from .world.world import World

    world = World([]) if (args.empty or scene_path) else default_scene()
    if world.bodies:  # a cold kernel cache compiles here, before the window opens (a scene file: while it loads)
        from .warmup import StatusLine, warm_up_world

        line = StatusLine("default scene: ")
        warm_up_world(world, progress=line)
        line.close()
    world.set_broad_phase(args.broad_phase)
    world.narrow_choice.set_algorithm(args.narrow_phase)  # (a loaded scene keeps them: Session._swap_scene)
    world.narrow_choice.compare = args.narrow_compare
    world.narrow_choice.set_response(args.narrow_response, world)
    session = Session(world)
    session.mesh_motion = args.motion
    session.mesh_scale = args.mesh_scale
    if scene_path:
        # a window loads in the background (loading indicator in the HUD);
        # a fixed number of frames wants the scene from the first one
        print(f"loading {scene_path} ...", file=sys.stderr)
        session.load_scene(scene_path, wait=args.frames is not None, echo=True)
    for path in args.mesh:  # each waits for the scene before it, and is placed above it
        session.add_mesh(path, wait=args.frames is not None, echo=args.frames is not None)
    session.frame_camera()

    if headless:
        import pyglet

        pyglet.options["headless"] = True
    from .viewer.window import KEY_NAMES, run_frames, run_interactive

    script = None
    if args.scripted:  # a bad file or action is a message (HUD and stderr); the run goes on
        from .viewer.script import read_script

        script, problems = read_script(args.scripted, KEY_NAMES)
        for text in problems:
            session.say(text, error=True)

    if args.frames is not None:
        run_frames(session, args.frames, width=width, height=height, script=script,
                   screenshot=args.screenshot, report=args.report, visible=not headless,
                   panel=not args.no_panel)
        if args.screenshot:
            print(f"screenshot: {args.screenshot}")
    else:
        run_interactive(session, width, height, report=args.report, panel=not args.no_panel)
    return 0


def console_main():
    """The ``obbcollide`` command of an installed package: no bootstrap (pip installed what it
    needs); the kernels compile up front as in a checkout, their stamp in the user's cache."""
    from ._bootstrap import ensure_kernels

    sys.exit(main(prepare=ensure_kernels))


if __name__ == "__main__":
    from ._bootstrap import ensure_environment, ensure_kernels

    ensure_environment(__package__)
    sys.exit(main(prepare=ensure_kernels))
