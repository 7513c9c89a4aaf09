"""What the user is doing, GL-free: selection, driving, overlays, messages, the HUD text.

The window turns pyglet events into calls on :class:`Session` (``key``,
``mouse_press``, ``mouse_drag``, ...) and draws what :meth:`Session.overlays`
returns. Keeping this free of GL lets the tests drive the whole interaction
without a window, and the window tests check that the pixels agree.
"""

import logging
import math
import os
import threading
import time
from collections import deque

import numpy as np

import obbcollide as co

from ..world.dynamics import Dynamics
from ..world.world import rotation
from .camera import OrbitCamera
from .controls import BINDINGS, MOVE_STEP, TURN_STEP, help_lines

log = logging.getLogger(__name__)

COLORS = {
    "background": (0.11, 0.12, 0.14),
    "grid": (0.30, 0.32, 0.36),
    "boxes": (0.15, 0.90, 0.95),
    "aabbs": (0.85, 0.85, 0.85),
    "triangles": (1.00, 0.10, 0.10),
    "segments": (1.00, 1.00, 0.25),
    "contacts": (1.00, 0.20, 1.00),
    "visited": (0.20, 1.00, 0.30),
    "pruned": (0.55, 0.22, 0.22),
    "axis": (0.70, 0.45, 1.00),
    "selected": (1.00, 1.00, 1.00),
    "pieces": (0.55, 0.95, 0.45),
    "manifolds": (1.00, 0.55, 0.00),
    "grab": (0.95, 0.95, 0.95),
}

MAX_THROWN = 50  # thrown balls kept in the scene (the oldest go first)

OVERLAYS = ("boxes", "aabbs", "pieces", "triangles", "segments", "contacts", "manifolds", "traversal", "axis", "help",
            "grid", "gjk")


# Sizes on screen, in pixels, whatever the scene's scale or the camera's distance.
MARKER_PX = 5            # half a contact point's cross
NORMAL_PX = 30           # a contact normal
MANIFOLD_MARKER_PX = 9   # half a manifold point's cross
MANIFOLD_NORMAL_PX = 45  # a manifold's normal
MIN_BODY_PX = 4          # a body drawn smaller than this radius gets a disc of this radius


class VertexArrays:
    """Positions and colours ``(n, 3)`` float32 each, appended to in place: the storage is kept
    between frames and grows (doubling) only when a frame needs more."""

    def __init__(self, capacity=1024):
        self.positions = np.zeros((capacity, 3), np.float32)
        self.colors = np.zeros((capacity, 3), np.float32)
        self.count = 0

    def clear(self):
        self.count = 0

    def add(self, points, color):
        """Append ``points`` (k, 3), all in ``color`` (3,)."""
        k = len(points)
        end = self.count + k
        if end > len(self.positions):
            size = max(end, 2 * len(self.positions))
            for name in ("positions", "colors"):
                grown = np.zeros((size, 3), np.float32)
                grown[:self.count] = getattr(self, name)[:self.count]
                setattr(self, name, grown)
        self.positions[self.count:end] = points
        self.colors[self.count:end] = color
        self.count = end

    def views(self):
        """``(positions (n, 3), colors (n, 3))``: views of the storage, valid until the next :meth:`clear`."""
        return self.positions[:self.count], self.colors[:self.count]


class LineCollector:
    """A :class:`collision.debug_draw.DebugDraw` that gathers arrays for the renderer.

    The arrays are kept between frames (:meth:`reset` empties them without freeing them).

    Parameters
    ----------
    pixel_size : callable
        ``(k, 3) points -> (k,)`` world length of one pixel at each point
        (:func:`app.viewer.buffers.pixel_world_sizes` of the camera): point
        markers are ``marker_px`` pixels, whatever the scale.
    """

    def __init__(self, pixel_size):
        self._lines = VertexArrays()
        self._tris = VertexArrays()
        self.reset(pixel_size)

    def reset(self, pixel_size):
        """Empty the collector for a new frame (keeping its storage), with the frame's ``pixel_size``."""
        self._lines.clear()
        self._tris.clear()
        self.pixel_size = pixel_size
        self.marker_px = MARKER_PX

    @property
    def line_count(self):
        """Line vertices gathered so far."""
        return self._lines.count

    def line_range(self, start, stop):
        """A copy of line vertices ``start:stop`` ((k, 3) float32)."""
        return self._lines.positions[start:stop].copy()

    def boxes(self, centers, axes, half_extents, color):
        from .buffers import box_lines

        pts = box_lines(centers, axes, half_extents)
        self._add_lines(pts, color)

    def segments(self, segments, color):
        self._add_lines(np.asarray(segments, np.float32).reshape(-1, 3), color)

    def points(self, points, color):
        from .buffers import cross_lines

        points = np.asarray(points, float).reshape(-1, 3)
        self._add_lines(cross_lines(points, self.marker_px * self.pixel_size(points)), color)

    def rays(self, points, directions, pixels, color):
        """A stroke ``pixels`` long on screen (across the view) from each point along its direction."""
        from .buffers import ray_lines

        points = np.asarray(points, float).reshape(-1, 3)
        self._add_lines(ray_lines(points, directions, pixels * self.pixel_size(points)), color)

    def triangles(self, triangles, color):
        self._tris.add(np.asarray(triangles, np.float32).reshape(-1, 3), np.asarray(color, np.float32))

    def _add_lines(self, pts, color):
        if len(pts):
            self._lines.add(pts, np.asarray(color, np.float32))

    def arrays(self):
        """``(lines (n, 3), line_colors (n, 3), tris (m, 3), tri_colors (m, 3))`` float32: views of the
        collector's storage, valid until its next :meth:`reset`."""
        return (*self._lines.views(), *self._tris.views())


class Session:
    """The viewer's state and behaviour, independent of the window system.

    Parameters
    ----------
    world : app.world.world.World
    screenshot_dir : str
        Where ``P`` saves screenshots.
    """

    def __init__(self, world, screenshot_dir=".", scene_path=None):
        self.world = world
        self.scene_path = scene_path  # where F5 saves; None: ./scene.toml
        self._loading = None  # the background load in progress (a scene or a mesh), see load_scene, add_mesh
        self._queue = deque()  # loads waiting for it (files dropped together)
        self.mesh_motion = "dynamic"  # the motion of added meshes (--motion)
        self.mesh_scale = None  # the scale of added meshes (--mesh-scale); None: guess the units of odd sizes
        self.camera = OrbitCamera()
        self.selected = None
        self.flags = {name: name in ("boxes", "triangles", "segments", "contacts", "manifolds", "grid")
                      for name in OVERLAYS}
        self._chosen = set()  # overlays the user has toggled: a scene load leaves them alone
        self.depth = 0
        self.messages = deque(maxlen=6)
        self.quit_requested = False
        self.screenshot_requested = None
        self.screenshot_dir = screenshot_dir
        self.times = {"frame": 0.0, "render": 0.0, "fps": 0.0}
        self._drag = None
        self._press = None
        self._bindings = {key: (action, arg) for key, action, arg, _ in BINDINGS}
        self._thrown = []  # balls thrown with L, oldest first
        self.trace_counts = (0, 0)
        self.separating_axis = -1
        self.panel_visible = True  # the GUI panel (F1); the window draws it when it has one
        self.time_scale = 1.0  # simulated seconds per real second (the fixed step stays fixed)
        self.depth_selected_only = False  # the OBB tree depth applies to the selected body only
        self.log = deque(maxlen=200)  # every message, (text, time.monotonic(), error): the panel's log
        self.frame_camera()
        from .inspect import PairInspector

        self.inspector = PairInspector(self)  # the picked pair and why it collides (O, X, I)

    # -- messages ------------------------------------------------------------

    def say(self, text, error=False):
        """Show a message in the HUD; an error is also logged (the command line shows it on stderr)."""
        self.messages.append((text, time.monotonic(), error))
        self.log.append(self.messages[-1])
        if error:
            log.error("%s", text)

    # -- keys ----------------------------------------------------------------

    def key(self, name, shift=False):
        """Handle a key by its pyglet name (``"TAB"``, ``"LEFT"``, ...). Returns True if bound."""
        if name not in self._bindings:
            return False
        action, arg = self._bindings[name]
        getattr(self, "do_" + action)(arg, shift)
        return True

    def _movable(self):
        """The selected body's index when the keys may move it; else None, with a message (a static
        body stays where it is: the bodies resting on it would float or sink)."""
        if self.selected is None:
            self.say("select a body first (click it, or Tab)")
            return None
        body = self.world.bodies[self.selected]
        if body.motion == "static":
            self.say(f"{body.name} is static: it can be selected, not moved")
            return None
        return self.selected

    def do_move(self, direction, shift):
        k = self._movable()
        if k is not None:
            step = MOVE_STEP * (10 if shift else 1)
            self.world.move_body(k, translation=np.asarray(direction, float) * step)
            self.world.wake_touching(k)

    def do_turn(self, axis, shift):
        k = self._movable()
        if k is not None:
            angle = TURN_STEP * (5 if shift else 1)
            self.world.move_body(k, rot=rotation(axis, angle))
            self.world.wake_touching(k)

    def do_cycle(self, _arg, _shift):
        n = len(self.world.bodies)
        if n:
            self.selected = 0 if self.selected is None else (self.selected + 1) % n

    def do_pause(self, _arg, _shift):
        self.world.paused = not self.world.paused

    def do_single_step(self, _arg, _shift):
        self.world.paused = True
        self.world.step()

    def do_reset(self, _arg, _shift):
        self.world.reset()

    def do_frame(self, _arg, _shift):
        self.frame_camera()

    def do_screenshot(self, _arg, _shift):
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.screenshot_requested = os.path.join(self.screenshot_dir, f"screenshot-{stamp}.png")

    def do_toggle(self, name, _shift):
        self.flags[name] = not self.flags[name]
        self._chosen.add(name)

    def do_depth(self, delta, _shift):
        deepest = max((b.tree.depth for b in self.world.bodies), default=1) - 1
        self.depth = int(np.clip(self.depth + delta, 0, deepest))

    def do_throw(self, _arg, shift):
        """A ball from the camera at the point it looks at, half the size of a typical body,
        reaching it in about half a second (Shift: 3x faster), aimed high by what gravity takes
        on the way; the oldest thrown balls go once there are more than MAX_THROWN."""
        from ..scene.loader import projectile_body

        sizes = [b.radius for b in self.world.bodies if b.motion != "static"]
        radius = 0.5 * float(np.median(sizes)) if sizes else 0.1
        eye = self.camera.eye
        ahead = self.camera.target - eye
        distance = float(np.linalg.norm(ahead))
        ahead /= distance
        speed = (3.0 if shift else 1.0) * max(3.0, 2.0 * distance)
        start = eye + ahead * 2 * radius
        flight = distance / speed  # the ballistic throw that reaches the target after this long
        velocity = (self.camera.target - start) / flight - 0.5 * self.world.dynamics.gravity * flight
        ball = projectile_body(f"ball {len(self._thrown) + 1}", radius, start, velocity)
        bodies = self.world.bodies
        chosen = bodies[self.selected] if self.selected is not None else None
        bodies.append(ball)
        self._thrown.append(ball)
        while len(self._thrown) > MAX_THROWN:
            oldest = self._thrown.pop(0)
            if oldest in bodies:
                bodies.remove(oldest)
        self.selected = bodies.index(chosen) if chosen is not None and chosen in bodies else None
        self.say(f"threw {ball.name} at {speed:.1f} units/s")

    def do_ccd(self, _arg, _shift):
        self.world.ccd = not self.world.ccd
        self.say("continuous detection " + ("on: fast bodies stop at what they hit" if self.world.ccd else
                                            "off: a body faster than its size per step can tunnel"))

    def do_broad_phase(self, _arg, _shift):
        self.say(f"broad phase: {self.world.next_broad_phase()}")

    def do_quit(self, _arg, _shift):
        self.quit_requested = True

    def frame_camera(self):
        lo, hi = self.world.bounds()
        self.camera.frame(lo, hi)

    # -- mouse ---------------------------------------------------------------

    def pick(self, x, y):
        """Index of the body under window pixel ``(x, y)``, and the hit point."""
        origin, direction = self.camera.ray(x, y)
        k, _, point = self.world.pick(origin, direction)
        return k, point

    def mouse_press(self, x, y, button):
        """``button``: "left", "right" or "middle". A left press selects the body under the cursor
        and, unless it is static, holds it for a drag."""
        self._press = (x, y)
        self._drag = None
        if button == "left":
            k, point = self.pick(x, y)
            self.selected = k
            if k is not None and self.world.bodies[k].motion != "static":
                self._drag = {"point": point, "body": self.world.bodies[k]}

    def mouse_drag(self, x, y, dx, dy, button):
        if button == "left" and self._drag is not None:
            self._drag_body(x, y)
        elif button == "left":
            self.camera.orbit(dx, dy)  # on nothing, or on a static body (the ground): orbit
        else:
            self.camera.pan(dx, dy)

    def mouse_release(self, x, y, button):
        self._drag = None
        self.world.dynamics.release()

    def scroll(self, clicks):
        self.camera.zoom(clicks)

    @property
    def grab_line(self):
        """``(grabbed point, cursor point)`` world (3,) each while a dynamic body is dragged, else None."""
        joint = self.world.dynamics.grab
        if joint is None or joint.body not in self.world.bodies:
            return None
        return joint.anchor(), joint.target.copy()

    def _drag_body(self, x, y):
        """Pull the dragged body towards the cursor in the view plane through the grabbed point.

        A dynamic body hangs on the mouse joint (:class:`app.world.mouse_joint.MouseJoint`): soft, with a
        force of at most a few dozen times its weight and a speed of at most a few metres a second
        however fast the cursor moves, solved with the contacts, so a drag cannot fling it or
        blow up what it touches. A kinematic body follows the cursor exactly and wakes the
        sleeping bodies it reaches (they are pushed out by the contacts)."""
        d = self._drag
        body = d["body"]
        if body not in self.world.bodies:  # removed meanwhile (a scene swap, an old thrown ball)
            self._drag = None
            self.world.dynamics.release()
            return
        origin, direction = self.camera.ray(x, y)
        normal = self.camera.target - self.camera.eye
        normal /= np.linalg.norm(normal)
        denom = direction @ normal
        if abs(denom) < 1e-9:
            return
        t = ((d["point"] - origin) @ normal) / denom
        target = origin + t * direction
        if not np.all(np.isfinite(target)):
            return
        index = self.world.bodies.index(body)
        if Dynamics.moves(body):
            if self.world.dynamics.grab is None or self.world.dynamics.grab.body is not body:
                self.world.dynamics.grab_body(body, d["point"], target)
            self.world.dynamics.move_grab(target)
            return
        delta = target - d["point"]
        self.world.move_body(index, translation=delta)
        self.world.wake_touching(index)
        d["point"] = target

    # -- files ---------------------------------------------------------------

    def add_mesh(self, path, motion=None, scale=None, wait=False, echo=False):
        """Add a mesh file as a body; it loads in the background, as a scene does.

        The worker reads the file, cuts it into convex pieces (cached) and
        builds its trees and mass (:func:`app.scene.loader.load_mesh_body`) while the
        window keeps drawing, the HUD showing the progress; files added while
        one loads wait their turn. :meth:`poll` then places the body in free
        space above the scene near where the camera looks
        (:func:`app.scene.placement.place_body`), selects it and reframes the camera.
        A bad file gives a message naming it, and nothing else changes.

        Parameters
        ----------
        path : str
        motion : str, optional
            ``"dynamic"``, ``"kinematic"`` or ``"static"``; default
            :attr:`mesh_motion` (``--motion``).
        scale : float, optional
            Multiplies the file's coordinates; default :attr:`mesh_scale`
            (``--mesh-scale``); None: 1, or a unit's factor when the file is
            far larger than the scene's bodies (:func:`app.scene.placement.unit_scale`).
        wait : bool
            Block until the body is in (scripts, tests).
        echo : bool
            Also print the progress on stderr.

        Returns
        -------
        bool
            With ``wait``, whether the body was added; otherwise True (queued).
        """
        motion = motion or self.mesh_motion
        scale = scale if scale is not None else self.mesh_scale
        job = {"kind": "mesh", "path": path, "echo": echo}

        def prepare():  # when its turn comes: the scene it will join
            from ..scene.placement import typical_size

            job["index"], job["typical"] = len(self.world.bodies), typical_size(self.world.bodies)

        def work(progress):
            from ..scene.loader import load_mesh_body

            return load_mesh_body(path, index=job["index"], motion=motion, scale=scale, typical=job["typical"],
                                  progress=progress)

        job.update(prepare=prepare, work=work)
        self._queue.append(job)
        self._start_next()
        if not wait:
            return True
        self._wait_for(job)
        return job["added"]

    def _place_mesh(self, job):
        """Put a loaded mesh body in the world: in free space, selected, in view."""
        from ..scene.placement import ground_for, place_body, size_note

        body, notes = job["result"]
        if body is None:
            self.say(notes, error=True)
            return False
        bodies = self.world.bodies
        ground = ground_for(body, bodies, self.camera.target)
        if ground is not None:
            bodies.append(ground)
            self.say(f"the scene has no ground: added one at height {ground.pose[1, 3]:.3g} "
                     f"for {body.name} to land on")
        place_body(body, bodies, self.camera.target)
        body.home = body.pose.copy()  # R puts it back here
        odd = size_note(body, bodies)
        bodies.append(body)
        self.selected = len(bodies) - 1
        n = len(body.pieces) if body.pieces is not None else 0
        pieces = f", {n} convex piece{'s' if n > 1 else ''}" if n else ""
        self.say(f"added {body.name} ({len(body.faces)} triangles, {body.motion}{pieces})")
        for note in notes:
            self.say(note)
        if odd:
            self.say(odd, error=True)
        self.frame_camera()
        return True

    # -- scenes ----------------------------------------------------------------

    def load_scene(self, path, wait=False, echo=False):
        """Load a scene file in a background thread; the current scene stays until it is ready.

        Decomposition and tree builds can take seconds on a first load, so the
        window keeps drawing and answering meanwhile; :meth:`poll` (called every
        frame) swaps the new world in. Before that, a copy of the new world runs a
        frame in the same thread (:func:`app.warmup.warm_up_world`): on a cold
        kernel cache the scene's kernels compile there, not in the window's first
        frame. ``wait=True`` blocks (scripts, tests); ``echo=True`` also prints the
        progress on stderr.
        """
        if self._loading is not None or self._queue:
            what = os.path.basename((self._loading or self._queue[0])["path"])
            self.say(f"{what} is still loading; wait for it", error=True)
            return False

        def work(progress):
            from ..scene.loader import load_scene
            from ..scene.scene_file import SceneError

            try:
                world, errors = load_scene(path, progress=progress)
                if world is not None:
                    from ..warmup import warm_up_world

                    warm_up_world(world, progress=progress)
                return world, errors
            except SceneError as exc:
                return None, [str(exc)]

        job = {"kind": "scene", "path": path, "work": work, "echo": echo}
        self._queue.append(job)
        self._start_next()
        if wait:
            self._wait_for(job)
        return True

    def _start_next(self):
        """Start the next queued load in a worker thread, unless one is running."""
        if self._loading is not None or not self._queue:
            return
        job = self._queue.popleft()
        job.update(message="reading", fraction=None, result=None, error=None, start=time.monotonic())
        if job.get("prepare"):
            job["prepare"]()

        def progress(stage, fraction):
            job["message"], job["fraction"] = stage, fraction

        def run():
            from ..progress import TerminalProgress, tee

            terminal = TerminalProgress() if job["echo"] else None
            try:
                job["result"] = job["work"](tee(progress, terminal))
            except Exception as exc:  # never lose the viewer to a loader bug
                job["error"] = f"{job['path']}: loading failed ({type(exc).__name__}: {exc})"
            finally:
                if terminal is not None:
                    terminal.close()

        job["thread"] = threading.Thread(target=run, name=f"{job['kind']}-loader", daemon=True)
        self._loading = job
        job["thread"].start()

    def _wait_for(self, job):
        """Block until ``job`` (and every load queued before it) has finished and been polled in."""
        while not job.get("done") and (self._loading is not None or self._queue):
            if self._loading is None:
                self._start_next()
            self._loading["thread"].join()
            self.poll()

    def poll(self):
        """Finish a background load that is done (swap a scene in, place a mesh body) and start the
        next queued one; returns True when one finished."""
        job = self._loading
        if job is None or job["thread"].is_alive():
            return False
        self._loading = None
        try:
            if job.get("error"):
                self.say(job["error"], error=True)
                job["added"] = False
            elif job["kind"] == "mesh":
                job["added"] = self._place_mesh(job)
            else:
                self._swap_scene(job)
        finally:
            job["done"] = True
            self._start_next()
        return True

    def _swap_scene(self, state):
        """Make a loaded scene the current one (unless nothing in it loaded)."""
        world, errors = state["result"]
        for text in errors:
            self.say(text, error=True)
        if world is None:
            return
        if not world.bodies:
            self.say(f"{state['path']}: no body could be loaded; keeping the current scene", error=True)
            return
        world.set_broad_phase(self.world.broad_phase_name)  # the user's choices outlive the scene
        world.ccd = self.world.ccd
        self._carry_narrow_choice(world)
        for name in ("iterations", "friction", "restitution", "allow_sleep"):  # and the panel's solver settings
            setattr(world.dynamics, name, getattr(self.world.dynamics, name))
        self.world = world
        self.scene_path = state["path"]
        self.selected = None
        self.depth = 0
        self.frame_camera()
        name = getattr(getattr(world, "scene", None), "name", os.path.basename(state["path"]))
        self.say(f"loaded scene {name!r}: {len(world.bodies)} bodies")
        if "triangles" not in self._chosen:
            # Bodies at rest on each other overlap by the solver's slop, so every touching face
            # would be red: a physics scene shows its manifolds, and T the exact triangles.
            self.flags["triangles"] = not any(b.moves for b in world.bodies)

    @property
    def loading(self):
        """``(path, message, seconds)`` of a load in progress, or None."""
        s = self._loading
        if s is None:
            return None
        return s["path"], s["message"], time.monotonic() - s["start"]

    @property
    def loading_fraction(self):
        """How far the current stage of the load is (0..1), or None when unknown or not loading."""
        return None if self._loading is None else self._loading["fraction"]

    def do_save_scene(self, _arg, _shift):
        self.save_scene()

    def save_scene(self, path=None):
        """Write the scene with every body where it is now (atomic); returns the path written or None.

        ``path`` (default: the scene's file, else ``scene.toml`` in the screenshot folder) is
        written in place, unless it is an example scene: those are never touched, and a
        copy of the same name in the user's data folder is written (and updated by the next
        save) instead; the message says where.
        """
        from ..scene.loader import body_spec
        from ..scene.scene_file import SceneSpec, leading_comments, save_path, save_scene

        source = path or self.scene_path or os.path.join(self.screenshot_dir, "scene.toml")
        target, copy = save_path(source)
        bodies, skipped = [], []
        for b in self.world.bodies:
            try:
                bodies.append(body_spec(b))
            except ValueError:
                skipped.append(b.name)
        base = getattr(self.world, "scene", None)
        spec = SceneSpec(bodies=bodies, name=getattr(base, "name", "scene"), dt=self.world.dt,
                         gravity=tuple(float(g) for g in self.world.dynamics.gravity),
                         category=getattr(base, "category", None))
        header = leading_comments(source)
        if copy:
            header += [""] * bool(header) + [f"A copy of the example scene {source}, saved from the viewer (F5)."]
        try:
            if copy:
                os.makedirs(os.path.dirname(target), exist_ok=True)
            save_scene(target, spec, header=header)
        except OSError as exc:
            self.say(f"{target}: cannot save the scene ({exc.strerror or exc}); nothing was changed", error=True)
            return None
        if not copy:
            self.scene_path = target
        where = f"a copy of the example scene, in {target}" if copy else target
        self.say(f"saved {len(bodies)} bodies to {where}"
                 + (f" (skipped {', '.join(skipped)}: no file)" if skipped else ""))
        return target

    def do_next_scene(self, _arg, _shift):
        from ..scene.scene_file import scene_registry

        scenes = list(scene_registry().values())
        if not scenes:
            self.say("no example scenes in assets/scenes", error=True)
            return
        try:
            k = (scenes.index(self.scene_path) + 1) % len(scenes)
        except ValueError:
            k = 0
        self.say(f"loading {os.path.basename(scenes[k])} ...")
        self.load_scene(scenes[k])

    # -- per frame -----------------------------------------------------------

    def update(self, frame_dt):
        """Swap in a finished scene load, advance the world and run detection for this frame.

        A step that fails (it should not: the world repairs non-finite bodies) pauses the world
        with the message in the HUD, so the viewer keeps running and nothing is lost.

        The exact triangle contacts (``world.exact``) are found only while an overlay draws
        them (:meth:`needs_exact`). Returns whether the world ran its frame (its ``stats`` are
        this frame's)."""
        self.poll()
        if not self.world.bodies:  # nothing to move: no kernel call (one compiling in a scene load would block)
            return False
        self._gate_exact()
        ran = True
        try:
            self.world.frame(frame_dt * self.time_scale)
        except (ValueError, FloatingPointError, RuntimeError) as exc:
            self.world.paused = True
            self.say(f"the step failed and the world is paused (Space resumes): {exc}", error=True)
            ran = False
        for text in self.world.problems:
            self.say(text, error=True)
        self.world.problems.clear()
        return ran

    # Overlays drawn from the exact triangle contacts (world.contacts).
    EXACT_OVERLAYS = ("triangles", "segments", "contacts")

    def needs_exact(self):
        """Whether this frame needs the exact triangle contacts: an overlay that draws them is on."""
        return any(self.flags[name] for name in self.EXACT_OVERLAYS)

    def _gate_exact(self):
        """Run the world's exact triangle pass only when :meth:`needs_exact` (a world built without it,
        ``World(exact=False)``, stays without). Off, its contacts and counts are emptied rather than
        left from an older frame."""
        world = self.world
        if getattr(self, "_exact_world", None) is not world:
            self._exact_world, self._exact_allowed = world, bool(world.exact)
        world.exact = self._exact_allowed and self.needs_exact()
        if not world.exact and (world.contacts or world.stats.get("exact")):
            world.contacts = []
            world.stats.update(exact=0.0, box_tests=0, tri_tests=0, contacts=0)

    def overlays(self, out=None):
        """Debug geometry for this frame, through the core's DebugDraw protocol.

        ``out``: a :class:`LineCollector` to fill (emptied first; its storage is reused, and the
        arrays returned are views of it); default a new one."""
        from obbcollide import debug_draw as dd

        from .buffers import pixel_world_sizes

        cam = self.camera
        eye = cam.eye
        forward = (cam.target - eye) / cam.distance

        def pixel_size(p):
            return pixel_world_sizes(p, eye, forward, cam.fovy, cam.height)

        draw = out if out is not None else LineCollector(pixel_size)
        draw.reset(pixel_size)
        world = self.world
        if self.flags["boxes"]:
            self._draw_boxes(draw)
        if self.flags["aabbs"]:
            from .buffers import aabb_lines

            boxes = np.array([b.world_aabb() for b in world.bodies]) if world.bodies else np.zeros((0, 2, 3))
            if len(boxes):
                draw._add_lines(aabb_lines(boxes[:, 0], boxes[:, 1]), COLORS["aabbs"])
        if self.flags["pieces"]:
            for b in world.bodies:
                if b.pieces is None:
                    continue
                r, t = b.pose[:3, :3], b.pose[:3, 3]
                for hull in b.pieces.hulls:
                    seg = hull.vertices[hull.edges] @ r.T + t
                    draw.segments(seg, COLORS["pieces"])
        marks, marks_normals = [], []
        for c in world.contacts:
            a, b = world.bodies[c.a], world.bodies[c.b]
            result = co.CollideResult(True, c.pairs, c.segments, c.box_tests, c.tri_tests, c.contained, True)
            dd.draw_collide(draw, result, a.tree, a.pose, b.tree, b.pose,
                            tri_color=COLORS["triangles"] if self.flags["triangles"] else None,
                            seg_color=COLORS["segments"] if self.flags["segments"] else None)
            if self.flags["contacts"] and len(c.pairs):
                # A readable sample: every contact marked would hide the curves.
                every = max(1, len(c.pairs) // 16)
                marks.append(c.points()[::every])
                marks_normals.append(c.normals[::every])
        if marks:  # all pairs' markers and normals in one go
            marks, marks_normals = np.concatenate(marks), np.concatenate(marks_normals)
            draw.points(marks, COLORS["contacts"])
            draw.rays(marks, marks_normals, NORMAL_PX, COLORS["contacts"])
        if self.flags["manifolds"]:
            draw.marker_px = MANIFOLD_MARKER_PX
            for pm in world.manifolds:  # the patch outline, each point and the normal (A to B)
                m = pm.manifold
                pts = m.points
                draw.points(pts, COLORS["manifolds"])
                draw.rays(pts, np.broadcast_to(m.normal, pts.shape), MANIFOLD_NORMAL_PX, COLORS["manifolds"])
                if len(pts) > 2:  # in order around the patch, seen along the normal
                    d = pts - pts.mean(0)
                    u = np.cross(m.normal, d[0]) if np.linalg.norm(np.cross(m.normal, d[0])) > 0 else d[1]
                    ring = pts[np.argsort(np.arctan2(d @ u, d @ np.cross(u, m.normal)))]
                    draw.segments(np.stack([ring, np.roll(ring, -1, axis=0)], axis=1), COLORS["manifolds"])
                elif len(pts) == 2:
                    draw.segments(pts[None], COLORS["manifolds"])
            draw.marker_px = MARKER_PX
        if world.narrow_choice.active:  # the chosen narrow phase's answers and disagreements
            from .narrow_panel import draw_narrow_overlay

            draw_narrow_overlay(draw, world)
        grab = self.grab_line
        if grab is not None:  # the mouse joint: a line from the grabbed point to the cursor, both marked
            draw.segments(np.stack(grab)[None], COLORS["grab"])
            draw.points(np.stack(grab), COLORS["grab"])
        self.trace_counts = self.inspector.draw(draw, self.flags, COLORS)  # the pair's views (O, X, I)
        self.separating_axis = self.inspector.root_axis() if self.flags["axis"] else -1
        return draw.arrays()

    def _draw_boxes(self, draw):
        """Every body's OBB tree boxes at the depth shown, but the grounds', as one batch: each
        tree's boxes at a depth are kept as model-space corners, posed together."""
        from .buffers import box_corners, posed_box_lines

        cache = self.__dict__.setdefault("_tree_corners", {})  # (id(tree), depth) -> (tree, (m, 8, 3))
        parts, owners = [], []
        bodies = self.world.bodies
        for k, b in enumerate(bodies):
            if b.unbounded:  # a ground, drawn as its plane: its mesh's finite boxes would float there
                continue
            depth = self.depth if not self.depth_selected_only or k == self.selected else 0
            hit = cache.get((id(b.tree), depth))
            if hit is None or hit[0] is not b.tree:
                tree = b.tree
                d = tree.node_depths()
                sel = (d == depth) | ((d < depth) & (tree.child < 0))
                hit = (tree, box_corners(tree.centers[sel], tree.axes[sel], tree.half_extents[sel]))
                cache[(id(tree), depth)] = hit
            parts.append(hit[1])
            owners.append(k)
        if len(cache) > 4 * len(bodies) + 64:  # trees of removed bodies
            live = {id(b.tree) for b in bodies}
            for key in [key for key in cache if key[0] not in live]:
                del cache[key]
        if parts:
            owner = np.repeat(owners, [len(p) for p in parts])
            poses = np.array([b.pose for b in bodies])[owner]
            draw._add_lines(posed_box_lines(np.concatenate(parts), poses[:, :3, :3], poses[:, :3, 3]),
                            COLORS["boxes"])

    # -- HUD -----------------------------------------------------------------

    def hud_lines(self):
        """The HUD text, top to bottom."""
        st = self.world.stats
        t = self.times
        ms = 1000.0
        lines = [
            f"{t['fps']:5.1f} fps   frame {t['frame'] * ms:6.2f} ms   "
            f"update {st['update'] * ms:5.2f}  broad {st['broad'] * ms:5.2f}  "
            f"narrow {st['narrow'] * ms:6.2f}  render {t['render'] * ms:5.2f} ms",
            f"bodies {len(self.world.bodies)}   candidate pairs {st['candidates']}   "
            f"box tests {st['box_tests']}   triangle tests {st['tri_tests']}   "
            f"contacts {st['contacts']}" + ("   [paused]" if self.world.paused else ""),
            f"broad phase {self.world.broad_phase_name}{'' if self.world.ccd else ' (no CCD)'}   "
            f"piece pairs {st['piece_pairs']}   "
            f"manifolds {st['manifolds']} ({st['points']} points)   touching pairs {st['touching']}   "
            f"asleep {self.world.dynamics.stats.get('sleeping', 0)}   "
            + (f"exact triangles {st['exact'] * ms:5.2f} ms" if self.world.exact else
             "exact triangles off (no overlay draws them)"),
            self.phase_line(),
            "overlays: " + " ".join(name for name in OVERLAYS if self.flags[name] and name != "help")
            + f"   tree depth {self.depth}",
        ]
        if self.selected is not None:
            b = self.world.bodies[self.selected]
            p = b.pose[:3, 3]
            r = b.pose[:3, :3]
            yaw = math.degrees(math.atan2(r[0, 2], r[2, 2]))
            pitch = math.degrees(math.asin(max(-1.0, min(1.0, -r[1, 2]))))
            roll = math.degrees(math.atan2(r[1, 0], r[1, 1]))
            lines.append(f"selected: {b.name}   position ({p[0]:+.3f}, {p[1]:+.3f}, {p[2]:+.3f})   "
                         f"yaw/pitch/roll ({yaw:+.1f}, {pitch:+.1f}, {roll:+.1f}) deg   "
                         f"{len(b.faces)} triangles, tree depth {b.tree.depth}")
            if getattr(b, "mass_source", None):
                lines.append(f"{b.name}: open mesh, {b.mass_source}")
            lines += self.inspector.hud_lines(self.flags)
        else:
            lines.append("click a body (or Tab) to select it;  H for help")
        if self._loading is not None:
            path, message, seconds = self.loading
            fraction = self.loading_fraction
            if fraction is None:  # a stage of unknown length (V-HACD reports none): a spinner
                mark = "|/-\\"[int(seconds * 8) % 4]
            else:
                mark = "[" + "#" * round(10 * fraction) + "-" * (10 - round(10 * fraction)) + f"] {fraction:4.0%}"
            queued = f" (+{len(self._queue)} queued)" if self._queue else ""
            lines.append(f"{mark} loading {os.path.basename(path)}{queued} ({seconds:.0f} s): {message}")
        now = time.monotonic()
        for text, when, error in self.messages:
            if now - when < 8.0:
                lines.append(("! " if error else "") + text)
        return lines

    def phase_line(self):
        """The rest of the last frame's phases (:mod:`app.viewer.frame_clock`), in ms: with the line above
        them, every phase of the frame."""
        t = self.times
        names = (("events", "events"), ("idle", "idle"), ("world", "world"), ("exact", "exact"),
                 ("overlays", "overlays"), ("draw", "draw"), ("hud", "hud"), ("panel", "panel"),
                 ("screenshot", "shot"), ("flip", "flip"), ("gc", "gc"), ("record", "record"))
        return "phases ms: " + "  ".join(f"{label} {t.get(key, 0.0) * 1000.0:.2f}" for key, label in names
                                         if t.get(key) or key in ("overlays", "draw", "flip"))

    def help_text(self):
        """The help panel's lines, or an empty list when help is off."""
        return help_lines() if self.flags["help"] else []

    # -- the narrow phase you choose and compare (app.world.narrow_compare) -------------------

    def set_narrow_phase(self, name):
        """Choose the narrow-phase algorithm whose answers are shown (a name of
        :data:`app.world.narrow_compare.ALGORITHMS`); a bad name is a message, nothing changes."""
        choice = self.world.narrow_choice
        try:
            choice.set_algorithm(name)
        except ValueError as exc:
            self.say(str(exc), error=True)
            return
        choice.clear()
        self.say(f"narrow phase: {name}")

    def set_narrow_compare(self, on):
        """Compare the chosen algorithm with the exact triangle test on every candidate pair."""
        choice = self.world.narrow_choice
        choice.compare = bool(on)
        choice.clear()
        self.say(f"narrow-phase comparison {'on' if on else 'off'}")

    def set_narrow_response(self, name):
        """What builds the solver's contacts for hull pairs: ``"sat"`` or ``"gjk"``."""
        try:
            self.world.narrow_choice.set_response(name, self.world)
        except ValueError as exc:
            self.say(str(exc), error=True)
            return
        self.say(f"response: {name} manifolds for hull pairs")

    def _carry_narrow_choice(self, world):
        """A loaded scene keeps the narrow phase the user chose."""
        choice = self.world.narrow_choice
        choice.clear()
        world.narrow_choice = choice
        world.manager.hull_response = choice.response

    # -- the picked pair (app/viewer/inspect.py) -------------------------------------------

    def pick_partner(self, x, y):
        """Ctrl+click: the body under window pixel ``(x, y)`` becomes the selected body's partner."""
        k, _ = self.pick(x, y)
        if k is None:
            return
        if self.selected is None or k == self.selected:
            self.selected = k
            self.say(f"selected {self.world.bodies[k].name}; Ctrl+click another body to pair it")
            return
        self.inspector.set_partner(k)
        self.say(f"pair: {self.world.bodies[self.selected].name} and {self.world.bodies[k].name}")

    def do_partner(self, _arg, _shift):
        self.inspector.cycle_partner()

    def do_trav_step(self, delta, shift):
        """Step the traversal by ``delta`` node pairs (Shift: to the first or the last)."""
        if shift:
            self.inspector.step_to(0 if delta < 0 else 1 << 62)
        else:
            self.inspector.step_by(delta)

    def do_gjk_step(self, delta, shift):
        """Step GJK by ``delta`` iterations (Shift: to the first or the last)."""
        if shift:
            self.inspector.gjk_step_to(0 if delta < 0 else 1 << 62)
        else:
            self.inspector.gjk_step_by(delta)

    # -- the GUI panel's actions (its widgets call the keys' actions above too) ----------------

    def do_panel(self, _arg, _shift):
        self.panel_visible = not self.panel_visible

    def select(self, index):
        """Select body ``index`` (None: nothing); an index out of range selects nothing."""
        n = len(self.world.bodies)
        self.selected = index if index is not None and 0 <= index < n else None

    def set_depth(self, depth):
        """Show the OBB trees down to ``depth`` (through the ``[`` / ``]`` action, so it is clamped the same way)."""
        self.do_depth(int(depth) - self.depth, False)

    def set_gravity(self, gravity):
        """Set the world's gravity (3,) (units/s^2, each component within +-GRAVITY_LIMIT); wakes every body,
        since a sleeping one would not feel the change. Returns the gravity now in force."""
        g = np.asarray(gravity, float).reshape(3)
        if not np.all(np.isfinite(g)):
            self.say(f"gravity {g.tolist()}: not finite; unchanged", error=True)
            return self.world.dynamics.gravity
        self.world.dynamics.gravity = np.clip(g, -GRAVITY_LIMIT, GRAVITY_LIMIT)
        for b in self.world.bodies:
            b.wake()
        return self.world.dynamics.gravity

    def set_fixed_step(self, dt):
        """Set the fixed time step (seconds, clamped to STEP_RANGE); the frames then run as many steps
        as their time allows (at most ``world.max_steps``)."""
        self.world.dt = float(np.clip(dt, *STEP_RANGE))
        return self.world.dt

    def set_iterations(self, n):
        """Solver (velocity) iterations per step, clamped to ITERATION_RANGE."""
        self.world.dynamics.iterations = int(np.clip(int(n), *ITERATION_RANGE))
        return self.world.dynamics.iterations

    def set_friction(self, mu):
        """The default friction (>= 0): read at every step by every contact of a body without its own
        ``friction`` (scene files may give one), so existing contacts change from the next step."""
        self.world.dynamics.friction = max(0.0, float(mu)) if math.isfinite(mu) else self.world.dynamics.friction
        return self.world.dynamics.friction

    def set_restitution(self, e):
        """The default restitution (0..1), read as :meth:`set_friction`'s friction is."""
        self.world.dynamics.restitution = float(np.clip(e, 0.0, 1.0)) if math.isfinite(e) else \
            self.world.dynamics.restitution
        return self.world.dynamics.restitution

    def set_sleeping(self, on):
        """Let resting islands sleep (True, the default) or keep every body awake (False: the sleeping
        ones wake at the next step)."""
        self.world.dynamics.allow_sleep = bool(on)
        if not on:
            for b in self.world.bodies:
                b.wake()

    def set_ccd(self, on):
        """Continuous detection on / off (through the ``Y`` action, with its message)."""
        if bool(on) != self.world.ccd:
            self.do_ccd(None, False)

    def set_broad_phase(self, name):
        """Switch to the broad phase ``name`` (one of :data:`collision.broad_phase.BROAD_PHASES`)."""
        if name != self.world.broad_phase_name:
            self.world.set_broad_phase(name)
            self.say(f"broad phase: {name}")

    def set_time_scale(self, scale):
        """Simulated seconds per real second (clamped to TIME_SCALE_RANGE): the frame's time is scaled
        before the fixed-step accumulator, so the step and its results stay the same, only more or
        fewer of them run per frame."""
        self.time_scale = float(np.clip(scale, *TIME_SCALE_RANGE)) if math.isfinite(scale) else self.time_scale
        return self.time_scale

    def set_motion(self, index, motion):
        """Make body ``index`` dynamic, kinematic or static; it starts from rest. A body without mass
        (an open mesh) cannot be dynamic: a message says so and nothing changes. Returns whether it changed."""
        b = self.world.bodies[index]
        if motion not in ("dynamic", "kinematic", "static"):
            raise ValueError(f"motion {motion!r}: expected dynamic, kinematic or static")
        if motion == b.motion:
            return False
        if motion == "dynamic" and b.mass is None:
            self.say(f"{b.name} has no mass (an open mesh, or a ground): it cannot be dynamic", error=True)
            return False
        if self.world.dynamics.grab is not None and self.world.dynamics.grab.body is b:
            self.world.dynamics.release()
            self._drag = None
        b.motion = motion
        b.velocity, b.spin = np.zeros(3), np.zeros(3)
        b.wake()
        self.world.wake_touching(index)
        self.say(f"{b.name} is now {motion}")
        return True

    def delete_body(self, index):
        """Remove body ``index`` from the world (R does not bring it back; reload the scene for that)."""
        bodies = self.world.bodies
        b = bodies[index]
        chosen = bodies[self.selected] if self.selected is not None else None
        if self.world.dynamics.grab is not None and self.world.dynamics.grab.body is b:
            self.world.dynamics.release()
        self._drag = None
        self.world.wake_touching(index)  # what it held up falls
        bodies.pop(index)
        if b in self._thrown:
            self._thrown.remove(b)
        self.world.contacts = []  # their indices are of the old list; the next frame finds them again
        self.selected = bodies.index(chosen) if chosen is not None and chosen in bodies else None
        self.say(f"deleted {b.name}")

    def duplicate_body(self, index):
        """Add a copy of body ``index`` (sharing its mesh, trees, pieces and mass) above it, in free
        space (:func:`app.scene.placement.place_body`), and select it. Returns the new body."""
        from ..world.body import Body
        from ..scene.placement import place_body

        b = self.world.bodies[index]
        names = {o.name for o in self.world.bodies}
        k = 2
        while f"{b.name} ({k})" in names:
            k += 1
        copy = Body(f"{b.name} ({k})", b.vertices, b.faces, b.tree, b.pose.copy(), b.color, motion=b.motion,
                    pieces=b.pieces, mass=b.mass, shapes=b.shapes, friction=b.friction, restitution=b.restitution)
        lo, hi = b.world_aabb()
        place_body(copy, self.world.bodies, np.array([(lo[0] + hi[0]) / 2, hi[1], (lo[2] + hi[2]) / 2]))
        copy.home = copy.pose.copy()
        self.world.bodies.append(copy)
        self.selected = len(self.world.bodies) - 1
        self.say(f"added {copy.name}, a copy of {b.name}")
        return copy

    def frame_body(self, index):
        """Point the camera at body ``index`` and fit it in view."""
        lo, hi = self.world.bodies[index].world_aabb()
        self.camera.frame(lo, hi)

    def status_line(self):
        """The one-line status under the GUI panel's title: scene, bodies, speed, paused."""
        st = self.world.stats
        name = getattr(getattr(self.world, "scene", None), "name", None) or (
            os.path.basename(self.scene_path) if self.scene_path else "default scene")
        step_ms = (st["update"] + st["broad"] + st["narrow"]) * 1000.0
        parts = [name, f"{len(self.world.bodies)} bodies", f"{self.times['fps']:.0f} fps",
                 f"step {step_ms:.2f} ms", f"frame {self.times['frame'] * 1000.0:.1f} ms"]
        if self.time_scale != 1.0:
            parts.append(f"time x{self.time_scale:g}")
        if self.world.paused:
            parts.append("PAUSED")
        if self._loading is not None:
            path, message, seconds = self.loading
            parts.append(f"loading {os.path.basename(path)} ({seconds:.0f} s): {message}")
        return "   |   ".join(parts)


# Bounds on what the panel's world settings take.
GRAVITY_LIMIT = 100.0               # units/s^2, per component
STEP_RANGE = (1.0 / 1000.0, 1.0 / 20.0)  # seconds
ITERATION_RANGE = (1, 200)
TIME_SCALE_RANGE = (0.05, 4.0)
