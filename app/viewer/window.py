"""The pyglet window: events to the session, the frame loop, screenshots, scripted input.

Import this module only after the display decision is made (see
:func:`app.__main__.main`): pyglet opens a display connection on import.
"""

import json
import os
import time

import numpy as np
import pyglet
from pyglet.window import key, mouse

from .frame_clock import PHASE_KEYS, WORLD_PHASES, FrameClock
from .renderer import Hud, Renderer
from .script import action_problem

_BUTTONS = {mouse.LEFT: "left", mouse.RIGHT: "right", mouse.MIDDLE: "middle"}
# The key names a script may use: pyglet's key symbols (not its modifier or motion codes).
KEY_NAMES = frozenset(name for name, value in vars(key).items()
                      if isinstance(value, int) and not name.startswith(("MOD_", "MOTION_")))


def _key_name(symbol):
    return key.symbol_string(symbol)


class ViewerWindow(pyglet.window.Window):
    """The application window around a :class:`~app.viewer.session.Session`."""

    def __init__(self, session, width=1280, height=720, visible=True, panel=True):
        config = pyglet.gl.Config(red_size=8, green_size=8, blue_size=8, alpha_size=8,
                                  depth_size=24, double_buffer=True)
        super().__init__(width, height, caption="obbcollide viewer", resizable=True, config=config,
                         visible=visible, file_drops=not pyglet.options.get("headless", False))
        self.session = session
        self.renderer = Renderer()
        self.hud = Hud()
        self._last = time.perf_counter()
        self._fps = 0.0
        self.pointer = None  # where a scripted press holds the left button, (x, y), or None
        self.clock = FrameClock()  # the frame's phases (app.viewer.frame_clock), published at each flip
        session.camera.width, session.camera.height = self.get_framebuffer_size()
        self.panel = None  # the GUI panel (app.viewer.panel), drawn over the scene; F1 hides it
        if panel:
            from .panel import Panel

            self.panel = Panel(self, session)

    # -- events --------------------------------------------------------------

    def on_key_press(self, symbol, modifiers):
        name = _key_name(symbol)
        if name == "ESCAPE":
            self.session.quit_requested = True
            return pyglet.event.EVENT_HANDLED  # do not let pyglet close before the loop ends
        try:
            self.session.key(name, shift=bool(modifiers & key.MOD_SHIFT))
        except ValueError as exc:
            self.session.say(str(exc), error=True)
        return pyglet.event.EVENT_HANDLED

    def on_mouse_press(self, x, y, button, modifiers):
        if button == mouse.LEFT and modifiers & key.MOD_CTRL:  # Ctrl+click: the selected body's partner
            self.session.pick_partner(x, y)
            return
        self.session.mouse_press(x, y, _BUTTONS.get(button, "left"))

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        button = "left" if buttons & mouse.LEFT else ("right" if buttons & mouse.RIGHT else "middle")
        try:
            self.session.mouse_drag(x, y, dx, dy, button)
        except ValueError as exc:
            self.session.say(str(exc), error=True)

    def on_mouse_release(self, x, y, button, modifiers):
        self.session.mouse_release(x, y, _BUTTONS.get(button, "left"))

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.session.scroll(scroll_y)

    def on_file_drop(self, x, y, paths):
        for p in paths:
            self.session.add_mesh(p)

    def on_close(self):
        self.session.quit_requested = True

    def on_draw(self):
        self.clock.lap("idle")  # the event loop since the last tick or flip
        self.render()
        self.flip_with_screenshot()

    # -- frames --------------------------------------------------------------

    def step_frame(self, frame_dt):
        """Advance the session by one frame of ``frame_dt`` seconds and render it (no flip)."""
        self.clock.lap("events")  # since the last flip: input dispatched, scripted actions
        self._lap_world(self.session.update(frame_dt))
        if self.session.screenshot_requested:
            self.hud.refresh_now()
        self.render()
        if self.session.screenshot_requested:
            path = self.session.screenshot_requested
            self.session.screenshot_requested = None
            self.save_screenshot(path)
            self.clock.lap("screenshot")

    def _lap_world(self, ran):
        """Close the session's update: the world's own phases (``world.stats``) out of it when the
        world ran a frame (``ran``), the rest is the ``world`` phase."""
        self.clock.lap("world")
        if ran:
            st = self.session.world.stats
            self.clock.split("world", {k: float(st.get(k, 0.0)) for k in WORLD_PHASES})

    def flip(self):
        """Swap the buffers, then end the frame: its phases go to ``session.times``."""
        super().flip()
        clock = getattr(self, "clock", None)
        if clock is not None:
            self.session.times.update(clock.finish("flip"))

    def render(self):
        t0 = time.perf_counter()
        w, h = self.get_framebuffer_size()
        self.renderer.forget_missing(self.session.world.bodies)
        self.renderer.draw(self.session, w, h)
        self.clock.lap("draw")
        self.clock.split("draw", {"overlays": self.renderer.overlay_seconds})
        if self.panel is None or not self.session.panel_visible:  # the panel has the status line and the help
            self.hud.draw(self.session.hud_lines(), self.session.help_text(), self.width, self.height)
            self.clock.lap("hud")
        self.session.times["render"] = time.perf_counter() - t0
        if self.panel is not None:
            self.panel.draw(self.session)  # its own phase, session.times["panel"]
            self.clock.lap("panel")

    def save_screenshot(self, path):
        """Save the back buffer (the frame just rendered, before flip) as a PNG."""
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            pyglet.image.get_buffer_manager().get_color_buffer().save(path)
            self.session.say(f"screenshot saved: {path}")
        except OSError as exc:
            self.session.say(f"{path}: cannot save screenshot ({exc})", error=True)

    def tick(self, dt):
        """The interactive clock callback."""
        now = time.perf_counter()
        real = now - self._last
        self._last = now
        if real > 0:
            self._fps = 0.9 * self._fps + 0.1 / real if self._fps else 1.0 / real
        self.session.times["fps"] = self._fps
        self.clock.lap("idle")  # the event loop since the last draw
        self._lap_world(self.session.update(real))
        if self.session.quit_requested:
            pyglet.app.exit()

    def close(self):
        if self.panel is not None:
            self.switch_to()
            self.panel.close()
            self.panel = None
        self.clock.close()
        super().close()

    def flip_with_screenshot(self):
        if self.session.screenshot_requested:
            path = self.session.screenshot_requested
            self.session.screenshot_requested = None
            self.save_screenshot(path)
            self.clock.lap("screenshot")


def run_interactive(session, width=1280, height=720, report=None, panel=True):
    """Open the window and run until the user quits.

    ``report``: a JSON path, written as :func:`run_frames` writes it, every second and on quitting
    (so a program driving the window, or a person, can follow a live session)."""
    win = ViewerWindow(session, width, height, panel=panel)
    pyglet.clock.schedule_interval(win.tick, 1 / 60.0)
    if report:
        recorder = Recorder(session)
        win.push_handlers(on_draw=lambda: recorder.record(session.times["frame"]))
        pyglet.clock.schedule_interval(lambda _dt: recorder.write(report), 1.0)
    pyglet.app.run(1 / 60.0)
    if report:
        recorder.write(report)
    win.close()


class Recorder:
    """Per-frame timings, counts and the largest body speed of a session, and its final state."""

    def __init__(self, session):
        self.session = session
        self.frames = []

    def record(self, wall):
        """Add this frame's line (``wall``: its wall-clock seconds)."""
        session = self.session
        st = session.world.stats
        self.frames.append({"frame": len(self.frames), "wall": wall, "update": st["update"],
                            "broad": st["broad"], "narrow": st["narrow"], "render": session.times["render"],
                            "panel": session.times.get("panel", 0.0),
                            "candidates": st["candidates"], "box_tests": st["box_tests"],
                            "tri_tests": st["tri_tests"], "contacts": st["contacts"],
                            "max_speed": max_speed(session.world.bodies)})
        # the frame's phases (app.viewer.frame_clock), which add up to its wall time
        self.frames[-1]["phases"] = {k: float(session.times.get(k, 0.0)) for k in PHASE_KEYS}
        choice = session.world.narrow_choice
        if choice.active:  # the chosen narrow phase's answers, and the comparison's counts
            self.frames[-1]["narrow_phase"] = choice.summary()

    def report(self):
        """The report: the frames, then the bodies (pose, velocity, spin, asleep) and the session."""
        session = self.session
        return {
            "frames": self.frames,
            "bodies": [{"name": b.name, "pose": b.pose.tolist(), "velocity": b.velocity.tolist(),
                        "spin": b.spin.tolist(), "asleep": bool(b.sleeping)} for b in session.world.bodies],
            "selected": session.selected,
            "contact_pairs": [[session.world.bodies[c.a].name, session.world.bodies[c.b].name, len(c.pairs)]
                              for c in session.world.contacts],
            "flags": dict(session.flags),
            "messages": [m[0] for m in session.messages],
        }

    def write(self, path):
        """Write the report to ``path`` (JSON) through a temporary file, so a reader never sees half."""
        tmp = f"{path}.tmp"
        try:
            with open(tmp, "w") as fh:
                json.dump(self.report(), fh, indent=1)
            os.replace(tmp, path)
        except OSError as exc:
            self.session.say(f"{path}: cannot write the report ({exc})", error=True)


def run_frames(session, frames, frame_dt=1 / 60.0, width=1280, height=720, script=None,
               screenshot=None, report=None, visible=False, panel=True):
    """Run a fixed number of frames (headless or in a window), scripted, deterministic.

    Parameters
    ----------
    session : Session
    frames : int
    frame_dt : float
        Simulated seconds per frame (fixed, so a run can be replayed).
    script : list of dict, optional
        Timed input actions, see :func:`apply_action`.
    screenshot : str, optional
        PNG of the last frame.
    report : str, optional
        JSON with per-frame phase timings and counts, and the final poses.
    panel : bool
        Draw the GUI panel (:mod:`app.viewer.panel`) over the scene.

    Returns
    -------
    dict
        The report.
    """
    win = ViewerWindow(session, width, height, visible=visible, panel=panel)
    script = sorted(script or [], key=lambda a: a.get("frame", 0))
    recorder = Recorder(session)
    k = 0
    win.clock.start()
    loop_start = time.perf_counter()
    for frame in range(frames):
        while k < len(script) and script[k].get("frame", 0) <= frame:
            apply_action(win, script[k])
            k += 1
        win.dispatch_events()
        if frame == frames - 1:
            win.hud.refresh_now()  # the last frame (and its screenshot) shows current numbers
        win.step_frame(frame_dt)
        if frame == frames - 1 and screenshot:
            win.save_screenshot(screenshot)
            win.clock.lap("screenshot")
        win.flip()  # ends the frame: session.times holds its phases and its wall time, "frame"
        wall = session.times["frame"]
        session.times["fps"] = 1.0 / wall if wall > 0 else 0.0
        recorder.record(wall)
        win.clock.lap("record")  # (the next frame's)
        if session.quit_requested:
            break
    loop = time.perf_counter() - loop_start
    out = recorder.report()
    out["loop"] = loop  # seconds from the first frame's start to the last one's record, on a clock of its own
    if report:
        with open(report, "w") as fh:
            json.dump(out, fh, indent=1)
    win.close()
    return out


def max_speed(bodies):
    """The largest speed of a body's centre of mass (scene units / s; 0 with no body)."""
    speeds = [float(np.linalg.norm(b.velocity)) for b in bodies]
    return max(speeds, default=0.0)


def apply_action(win, action):
    """Dispatch one scripted action as real window events.

    Actions (dicts): ``{"key": "TAB", "shift": false}``,
    ``{"click": [x, y]}`` (left button, origin bottom-left),
    ``{"drag": [x0, y0, x1, y1], "button": "left", "steps": 10}``,
    ``{"scroll": clicks}``, ``{"drop": [path, ...]}``, ``{"screenshot": path}``
    (:mod:`app.viewer.script` lists them all). An action with a problem (an
    unknown key name or field, a wrong type) is skipped with a message.

    A drag that lasts across frames, as a person's does:
    ``{"press": [x, y]}`` presses the left button at a pixel, ``{"press": "BODY NAME"}`` at the
    window projection of that body's centre (its root box's centre), ``{"move": [dx, dy]}``
    moves the held pointer by pixels (a drag event), ``{"release": true}`` lets go where the
    pointer is.
    """
    problem = action_problem(action, KEY_NAMES)
    if problem is not None:
        win.session.say(f"scripted action {json.dumps(action, default=str)[:80]}: {problem}; skipped", error=True)
        return
    if "key" in action:
        sym = getattr(key, action["key"])
        mods = key.MOD_SHIFT if action.get("shift") else 0
        win.dispatch_event("on_key_press", sym, mods)
        win.dispatch_event("on_key_release", sym, mods)
    if "click" in action:
        x, y = action["click"]
        win.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
        win.dispatch_event("on_mouse_release", x, y, mouse.LEFT, 0)
    if "drag" in action:
        x0, y0, x1, y1 = action["drag"]
        button = {"left": mouse.LEFT, "right": mouse.RIGHT, "middle": mouse.MIDDLE}[action.get("button", "left")]
        steps = int(action.get("steps", 10))
        win.dispatch_event("on_mouse_press", x0, y0, button, 0)
        px, py = x0, y0
        for s in range(1, steps + 1):
            x = x0 + (x1 - x0) * s / steps
            y = y0 + (y1 - y0) * s / steps
            win.dispatch_event("on_mouse_drag", x, y, x - px, y - py, button, 0)
            px, py = x, y
        win.dispatch_event("on_mouse_release", x1, y1, button, 0)
    if "press" in action:
        target = action["press"]
        if isinstance(target, str):
            try:
                x, y = _body_pixel(win.session, target)
            except ValueError as exc:
                win.session.say(f"scripted action {json.dumps(action)[:80]}: {exc}; skipped", error=True)
                return
        else:
            x, y = (float(c) for c in target)
        win.pointer = (x, y)
        win.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
    if "move" in action and win.pointer is not None:
        dx, dy = (float(c) for c in action["move"])
        x, y = win.pointer[0] + dx, win.pointer[1] + dy
        win.pointer = (x, y)
        win.dispatch_event("on_mouse_drag", x, y, dx, dy, mouse.LEFT, 0)
    if action.get("release") and win.pointer is not None:
        x, y = win.pointer
        win.pointer = None
        win.dispatch_event("on_mouse_release", x, y, mouse.LEFT, 0)
    if "scroll" in action:
        win.dispatch_event("on_mouse_scroll", 0, 0, 0, action["scroll"])
    if "drop" in action:
        win.dispatch_event("on_file_drop", 0, 0, list(action["drop"]))
    if "screenshot" in action:
        win.session.screenshot_requested = action["screenshot"]


def _body_pixel(session, name):
    """Window pixel of the centre of the body called ``name`` (a ValueError when there is none)."""
    for b in session.world.bodies:
        if b.name == name:
            return session.camera.project(b.world_center())
    raise ValueError(f"no body named {name!r} to press on")
