"""Compiling the kernels before a person waits on them.

numba compiles a kernel on its first call with new argument types, and on a
cold cache (a fresh clone, or after a source change made the setup delete the
cached kernels, see :mod:`app._bootstrap`) the first world step and the first
drawn frame compiled a hundred kernels on the window's thread: the window
stayed frozen for a minute. Two things here keep that from a person's sight:

:func:`compile_kernels`
    The setup's tour: every example scene and the default scene are loaded
    and run in a GL-free :class:`~app.viewer.session.Session` while a person
    would use them (every overlay drawn, every broad phase, a body picked,
    dragged and moved, a ball thrown, a mesh dropped), so each kernel the
    viewer reaches is compiled and cached on disk, with a progress line.
    ``python3 -m app`` runs it before the window opens whenever the cached
    kernels were deleted.
:func:`warm_up_world`
    The same run on a copy of one loaded world, for a scene load in the
    background (:meth:`app.viewer.session.Session.load_scene`): when the
    cache is cold after all (the setup was skipped, the cache was emptied by
    hand), the scene's kernels compile in the loader's thread while the
    window keeps drawing; with a warm cache it costs one frame of the copy.

:class:`CompileWatch` follows numba's compilations through its event API
(``numba:compile``), naming the project's kernels as they compile.
"""

import copy
import logging
import os
import tempfile
import time

import numpy as np
from numba.core import event

from .assets import meshes_dir
from .progress import report

__all__ = ["CompileWatch", "StatusLine", "compile_kernels", "warm_up_world", "exercise", "tour", "zoo_world"]

log = logging.getLogger(__name__)

PROJECT = ("obbcollide", "app", "obbcollide_app")  # the packages whose kernels are counted and named
FRAME = 1.0 / 60.0


def kernel_name(dispatcher):
    """``module.qualname`` of a numba dispatcher's Python function."""
    f = dispatcher.py_func
    return f"{f.__module__}.{f.__qualname__}"


class CompileWatch(event.Listener):
    """Counts the project's kernels numba compiles while installed (a context manager).

    Loading a kernel from the disk cache is no compilation and is not counted;
    numba's own helpers compiled on the way (``np.empty`` and the like) are
    left out of the count and the names. numba compiles under one global lock,
    so the compilations of all threads come one after another.

    Parameters
    ----------
    progress : callable, optional
        ``progress(stage, fraction)`` (:mod:`app.progress`), told
        ``"compiling kernels: {n} ({where}{module.name})"`` when the n-th
        project kernel starts compiling (fraction None).
    where : str
        Put before the kernel's name in the progress text.

    Attributes
    ----------
    kernels : list of str
        ``module.qualname`` of each project kernel compiled, in order (a kernel
        compiled for two argument types comes twice).
    seconds : float
        Time spent compiling, the outermost compilations' durations summed.
    """

    def __init__(self, progress=None, where=""):
        self.progress = progress
        self.where = where
        self.kernels = []
        self.seconds = 0.0
        self._depth = 0
        self._started = 0.0

    @staticmethod
    def _ours(e):
        name = kernel_name(e.data["dispatcher"])
        return name if name.split(".", 1)[0] in PROJECT else None

    def on_start(self, e):
        if self._depth == 0:
            self._started = time.perf_counter()
        self._depth += 1
        name = self._ours(e)
        if name is not None:
            report(self.progress, f"compiling kernels: {len(self.kernels) + 1} ({self.where}{name})")

    def on_end(self, e):
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._started
        name = self._ours(e)
        if name is not None:
            self.kernels.append(name)

    @property
    def count(self):
        """How many project kernels were compiled."""
        return len(self.kernels)

    def __enter__(self):
        event.register("numba:compile", self)
        return self

    def __exit__(self, *exc):
        event.unregister("numba:compile", self)


class StatusLine:
    """A progress callback for the setup's compilation: one line on stderr.

    ``line(text, fraction)`` shows ``prefix + text`` and the seconds since the
    first call (the fraction is not shown: most kernels compile in the tour's
    first part, so it says little). On a terminal the line is redrawn in place
    (``\\r``) at most every ``interval`` seconds; elsewhere (a pipe, a log file)
    a line is written when the text before the first ``":"`` changes and at
    most every ``every`` seconds otherwise, so logs stay short. :meth:`close`
    ends the line.

    Parameters
    ----------
    prefix : str
        Put before each text (``"[setup] "``).
    stream : file-like, optional
        Default ``sys.stderr`` (looked up at each write).
    """

    def __init__(self, prefix="", stream=None, interval=0.2, every=10.0, clock=time.monotonic):
        self.prefix = prefix
        self._stream = stream
        self.interval, self.every = interval, every
        self._clock = clock
        self._drawn = -1e9
        self._start = None
        self._head = None
        self._width = 0
        self._open = False

    @property
    def stream(self):
        import sys

        return self._stream if self._stream is not None else sys.stderr

    def _tty(self):
        try:
            return bool(self.stream.isatty())
        except (AttributeError, ValueError, OSError):
            return False

    def __call__(self, text, fraction):
        now = self._clock()
        if self._start is None:
            self._start = now
        line = f"{self.prefix}{text}  {now - self._start:.0f} s"
        head = text.split(":", 1)[0]
        if self._tty():
            if now - self._drawn >= self.interval or fraction == 1.0:
                self._write("\r" + line + " " * max(0, self._width - len(line)))
                self._width, self._drawn, self._open = len(line), now, True
        elif head != self._head or now - self._drawn >= self.every:
            self._write(line + "\n")
            self._drawn = now
        self._head = head

    def close(self):
        if self._open:
            self._write("\n")
            self._open = False

    def _write(self, text):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (ValueError, OSError):  # a closed or broken stream: progress is never worth an error
            pass


def _step_frames(session, frames):
    for _ in range(frames):
        session.update(FRAME)
        session.overlays()
        session.hud_lines()


def exercise(world, seconds=1.0, interact=True, hold=False):
    """Run a copy of ``world`` as the viewer would, drawing every overlay; the world is not touched.

    Parameters
    ----------
    world : app.world.world.World
    seconds : float
        Simulated time at 60 frames a second (bodies fall, land and touch).
    interact : bool
        Also what a person does: pick a body, drag it, move and turn it with
        the keys, throw a ball, switch through every broad phase, turn
        continuous detection off and on, pause and single-step, reset.
    hold : bool
        Also (without the rest of ``interact``) what a person's first drag
        reaches: a click on each body (the picking's ray casts, up to 64
        bodies), then a dynamic body held by the mouse joint for two frames,
        one that touches something if any does (a step with the joint solves
        the contacts through kernels a step without one does not call,
        :meth:`app.world.dynamics.Dynamics.step`); then a step with each
        broad phase (the Z key) and two other partners for the
        separating-axis overlay (the J key).
    """
    from .world.dynamics import Dynamics
    from .viewer.session import OVERLAYS, Session

    if not world.bodies:
        return
    # The copy shares what no step writes (meshes, trees, convex pieces): a big mesh is not copied.
    shared = [x for b in world.bodies for x in (b.vertices, b.faces, b.tree, b.pieces) if x is not None]
    world = copy.deepcopy(world, {id(x): x for x in shared})
    world.paused = False
    s = Session(world)
    s.camera.width, s.camera.height = 1280, 720
    s.frame_camera()
    for name in OVERLAYS:
        s.flags[name] = name != "help"
    bodies = world.bodies
    s.selected = next((k for k, b in enumerate(bodies) if not b.unbounded), 0)  # traversal and axis overlays
    frames = max(1, int(round(seconds / FRAME)))
    _step_frames(s, frames)
    moving = [k for k, b in enumerate(bodies) if Dynamics.moves(b)]
    if hold and not interact and moving:
        for b in bodies[:64]:  # a click on each body: the ray casts of the picking, one kernel per kind of shape
            if not b.unbounded:
                s.pick(*s.camera.project(b.world_center()))
        # Bodies still in the air: steps (not drawn) until one lands and the contact store holds two
        # manifolds or more, 2 s at most.
        for _ in range(120):
            store = world.manager.store
            touching = {int(i) for i in store.keys[:, :2].ravel()}  # (the bodies of manifolds)
            if len(store) >= 2 and any(k in touching for k in moving):
                break
            world.step()
        body = bodies[next((k for k in moving if k in touching), moving[0])]
        centre = body.world_center()
        world.dynamics.grab_body(body, centre, centre + (0.05, 0.05, 0.0))  # (what a drag of the mouse sets)
        _step_frames(s, 2)
        world.dynamics.release()
        # Z and J, the keys a person tries early: a step with each broad phase (the others' kernels),
        # and the separating-axis overlay with other partners than the automatic one.
        from obbcollide.broad_phase import BROAD_PHASES

        first = world.broad_phase_name
        for name in BROAD_PHASES:
            world.set_broad_phase(name)
            world.step()  # (the first step of a broad phase builds it; the second updates it)
            world.step()
        world.set_broad_phase(first)
        for _ in range(2):
            s.key("J")
            s.overlays()
    if not interact:
        return
    still = [k for k, b in enumerate(bodies) if not Dynamics.moves(b) and not b.unbounded]
    for k in dict.fromkeys(moving[:1] + moving[-1:] + still[:1]):  # a click, a drag (dynamic: held by the mouse)
        x, y = s.camera.project(bodies[k].world_center())
        s.mouse_press(x, y, "left")
        s.mouse_drag(x + 12, y + 8, 12, 8, "left")
        _step_frames(s, 2)
        s.mouse_release(x + 12, y + 8, "left")
    s.mouse_drag(10, 10, 5, 5, "left")  # orbit and pan the camera
    s.mouse_drag(10, 10, 5, 5, "right")
    for k in still[:1] + moving[:1]:  # keys drive the selected body
        s.selected = k
        for key in ("RIGHT", "UP", "Q", "W", "E"):
            s.key(key)
        _step_frames(s, 1)
    s.do_throw(None, False)
    _step_frames(s, 20)
    from obbcollide.broad_phase import BROAD_PHASES

    for name in BROAD_PHASES:
        world.set_broad_phase(name)
        _step_frames(s, 3)
    from .world.narrow_compare import ALGORITHMS

    s.set_narrow_compare(True)  # every narrow phase compared with the reference, then GJK driving the response
    for name in ALGORITHMS:
        s.set_narrow_phase(name)
        _step_frames(s, 1)
    s.set_narrow_response("gjk")
    _step_frames(s, 1)
    s.set_narrow_response("sat")
    s.set_narrow_phase("sat")
    s.set_narrow_compare(False)
    s.do_ccd(None, False)
    _step_frames(s, 2)
    s.do_ccd(None, False)
    s.do_single_step(None, False)
    _step_frames(s, 1)  # paused: detection without a step
    s.do_pause(None, False)
    s.do_reset(None, False)
    _step_frames(s, 2)


def warm_up_world(world, progress=None, seconds=0.5):
    """Compile what ``world`` needs to run and be drawn, on a copy (the world is not touched).

    One frame first, then what a first drag reaches (``exercise``'s ``hold``: a
    click on each body, steps until a body lands, that body held by the mouse
    joint for two frames): when that compiles nothing the cache is warm and
    that is all (measured 0.07-0.3 s for the example scenes but the bowl pile,
    2.3 s). Otherwise the copy runs ``seconds`` of frames with every overlay
    drawn, so the kernels of contacts that start a little later are compiled
    here too, not in the middle of the scene. A failure here is only logged:
    the world's own frames will meet it and say so.

    With a warm cache the held body still matters: numba loads a cached kernel
    into the process at its first call (tens of milliseconds each), and the
    kernels of a step with the mouse joint were loaded in the first frame of
    the first drag: measured in the `stacks` scene, that frame took 113 ms
    against 7 for the next ones. Held here, they load in the loader's thread.

    Returns
    -------
    int
        How many project kernels were compiled.
    """
    with CompileWatch(progress) as watch:
        try:
            exercise(world, FRAME, interact=False, hold=True)
            if watch.count:
                exercise(world, seconds, interact=False, hold=True)
        except Exception as exc:  # never lose a loaded scene to its warm-up
            log.warning("warming up the scene failed (%s: %s)", type(exc).__name__, exc)
    if watch.count:
        log.info("compiled %d kernels in %.1f s", watch.count, watch.seconds)
    return watch.count


def _sample_mesh(folder):
    """A small concave closed mesh file (an L-shaped prism, 0.3 by 0.2 by 0.1) in ``folder``; its path."""
    import trimesh

    outline = np.array([(0, 0), (3, 0), (3, 1), (1, 1), (1, 2), (0, 2)], float) * 0.1 - (0.15, 0.1)
    n = len(outline)
    v = np.vstack([np.c_[outline, np.full(n, -0.05)], np.c_[outline, np.full(n, 0.05)]])
    caps = [(0, k, k + 1) for k in range(1, n - 1)]  # a fan from the corner that sees the whole L
    f = [(a, c, b) for a, b, c in caps] + [(a + n, b + n, c + n) for a, b, c in caps]
    for k in range(n):
        j = (k + 1) % n
        f += [(k, j, j + n), (k, j + n, k + n)]
    mesh = trimesh.Trimesh(v, np.array(f), process=False)
    trimesh.repair.fix_normals(mesh)
    path = os.path.join(folder, "sample_L.ply")
    mesh.export(path)
    return path


def zoo_world(folder):
    """A world where every pair of shape kinds the narrow phase routes touches from the start.

    A ground (a half-space), a static concave bowl (its exact triangle surface),
    and in it and beside it boxes, cylinders, spheres, capsules and a concave
    body of several convex pieces, all overlapping, plus a kinematic box
    sweeping through: hull, sphere, capsule, half-space and mesh pairs of
    every order, penetrating and (as the solver pushes them apart) within the
    margin. Last, a box falling from high up, touching nothing for a while.
    ``folder`` receives the concave body's mesh file.
    """
    from .scene.loader import build_body
    from .scene.scene_file import BodySpec
    from .world.world import World

    meshes = meshes_dir()
    specs = [BodySpec("ground", shape="plane", size=(4.0, 4.0), motion="static"),
             BodySpec("bowl", mesh=os.path.join(meshes, "bowl.ply"), position=(0.0, 0.45, 0.0), motion="static",
                      decompose={"method": "vhacd", "max_pieces": 16})]
    for x in (0.0, 1.6):  # in the bowl, and on the ground beside it
        specs += [
            BodySpec(f"box {x}", shape="box", size=(0.3, 0.2, 0.25), position=(x, 0.12, 0.0), rotation_deg=(0, 20, 0)),
            BodySpec(f"can {x}", shape="cylinder", radius=0.1, height=0.25, position=(x + 0.15, 0.15, 0.1)),
            BodySpec(f"ball {x}", shape="sphere", radius=0.1, position=(x - 0.1, 0.12, 0.1)),
            BodySpec(f"ball 2 {x}", shape="sphere", radius=0.08, position=(x - 0.05, 0.2, 0.15)),
            BodySpec(f"pill {x}", shape="capsule", radius=0.06, height=0.3, position=(x, 0.1, -0.12),
                     rotation_deg=(0, 0, 80)),
            BodySpec(f"pill 2 {x}", shape="capsule", radius=0.05, height=0.25, position=(x + 0.1, 0.2, -0.1)),
            BodySpec(f"L {x}", mesh=_sample_mesh(folder), position=(x - 0.05, 0.2, 0.0),
                     decompose={"method": "vhacd", "max_pieces": 4, "resolution": 10_000}),
        ]
    specs.append(BodySpec("pusher", shape="box", size=(0.2, 0.2, 0.2), position=(0.8, 0.15, 0.0),
                          velocity=(0.5, 0.0, 0.0), angular_velocity=(0.0, 1.0, 0.0), motion="kinematic"))
    specs.append(BodySpec("faller", shape="box", size=(0.15, 0.15, 0.15), position=(-1.2, 2.0, 0.0)))  # last: a
    # dynamic body dragged while it touches nothing
    bodies = []
    for k, spec in enumerate(specs):
        try:
            bodies.append(build_body(spec, k, cache=spec.mesh is None or "bowl" in spec.mesh))
        except Exception as exc:  # an optional decomposer missing: the tour goes on without the body
            log.warning("warm-up body %s left out (%s: %s)", spec.name, type(exc).__name__, exc)
    return World(bodies)


def tour():
    """The tour's stages: ``(name, run)`` pairs, each ``run()`` doing one part of the tour.

    Every shape pair first (with what a person does), then each scene for a few
    frames with every overlay (the scenes' own loading and drawing), then a
    dropped mesh.
    """
    from .scene.loader import default_scene, load_scene
    from .scene.scene_file import scene_registry

    def zoo():
        with tempfile.TemporaryDirectory() as folder:
            exercise(zoo_world(folder), seconds=0.25)

    def scene(path):
        def run():
            for _ in range(2):  # the pieces cache: filled on a first load, read on the next
                world, _errors = load_scene(path)
            exercise(world, seconds=0.1, interact=False)
        return run

    def default():
        exercise(default_scene(), seconds=0.1)

    def dropped():
        from .viewer.session import Session
        from .world.world import World

        with tempfile.TemporaryDirectory() as folder:
            before = os.environ.get("OBBCOLLIDE_CACHE")
            os.environ["OBBCOLLIDE_CACHE"] = os.path.join(folder, "cache")  # leave the user's cache alone
            try:
                s = Session(World([]))
                s.add_mesh(_sample_mesh(folder))
                while s.loading is not None:  # a viewer that adds meshes in the background
                    time.sleep(0.01)
                    s.poll()
                exercise(s.world, seconds=0.1, interact=False)
            finally:
                if before is None:
                    del os.environ["OBBCOLLIDE_CACHE"]
                else:
                    os.environ["OBBCOLLIDE_CACHE"] = before

    stages = [("every shape pair", zoo), ("default scene", default)]
    stages += [(name, scene(path)) for name, path in scene_registry().items()]
    stages.append(("a dropped mesh", dropped))
    return stages


def compile_kernels(progress=None):
    """The setup's tour: compile every kernel the viewer reaches, with progress.

    Parameters
    ----------
    progress : callable, optional
        ``progress(stage, fraction)``: ``"compiling kernels: {n} (part {k}/{m}
        {part}: {kernel})"``, the fraction being the part's place in the tour;
        at the end ``"compiled {n} kernels in {s} s"`` with fraction 1.

    Returns
    -------
    CompileWatch
        What was compiled (``count``, ``kernels``, ``seconds``).
    """
    stages = tour()
    where = {"fraction": 0.0}
    watch = CompileWatch(lambda text: report(progress, text, where["fraction"]))
    with watch:
        for k, (name, run) in enumerate(stages):
            part = f"part {k + 1}/{len(stages)} {name}"
            where["fraction"], watch.where = k / len(stages), part + ": "
            report(progress, f"compiling kernels: {watch.count} ({part})", k / len(stages))
            try:
                run()
            except Exception as exc:  # a broken example must not stop the setup: it compiles on use
                log.warning("warming up %s failed (%s: %s); its kernels compile when used",
                            name, type(exc).__name__, exc)
        report(progress, f"compiled {watch.count} kernels in {watch.seconds:.0f} s", 1.0)
    return watch
