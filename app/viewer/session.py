"""What the user is doing, GL-free: selection, driving, overlays, messages, the HUD text.

The window turns pyglet events into calls on :class:`Session` (``key``,
``mouse_press``, ``mouse_drag``, ...) and draws what :meth:`Session.overlays`
returns. Keeping this free of GL lets the tests drive the whole interaction
without a window, and the window tests check that the pixels agree.

This module holds the session's state and its frame (update, the HUD, the status
line, the narrow-phase choice); its behaviours are in one module each, mixed in:
the keys' and the mouse's actions (:mod:`app.viewer.actions`), background loads and
saves (:mod:`app.viewer.loads`), the panel's settings (:mod:`app.viewer.settings`)
and the overlays' geometry (:mod:`app.viewer.overlays`). Their names are importable
from here as before.
"""

import logging
import math
import os
import time
from collections import deque

from .actions import MAX_THROWN, KeyActions  # noqa: F401 (MAX_THROWN: the session's names, as before)
from .camera import OrbitCamera
from .controls import BINDINGS, help_lines
from .loads import SceneLoads
from .overlays import (COLORS, MANIFOLD_MARKER_PX, MANIFOLD_NORMAL_PX, MARKER_PX, MIN_BODY_PX,  # noqa: F401
                       NORMAL_PX, OVERLAYS, LineCollector, OverlayDrawing, VertexArrays)
from .settings import GRAVITY_LIMIT, ITERATION_RANGE, STEP_RANGE, TIME_SCALE_RANGE, PanelSettings  # noqa: F401

log = logging.getLogger(__name__)


class Session(KeyActions, SceneLoads, PanelSettings, OverlayDrawing):
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

    def frame_camera(self):
        lo, hi = self.world.bounds()
        self.camera.frame(lo, hi)

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
