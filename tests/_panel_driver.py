"""Drive the viewer's GUI panel in a real window, as a person would; for tests/viewer/test_viewer_panel.py.

``python -m tests._panel_driver CONFIG.json OUT_DIR`` loads a scene, opens the viewer window
(Xvfb when ``DISPLAY`` is set, else EGL headless) and runs the config's steps, each through
real pyglet window events and real frames (Dear ImGui needs a frame between the pointer's
move, the press and the release). Widgets are found by the names the panel records for them
(``session.gui.items``, their rectangles as drawn in the last frame), not by hard-coded pixels.
After each step it records the state in ``OUT_DIR/report.json``: ``{"steps": [state, ...]}``.

Config: ``scene``, ``size`` [w, h], ``camera`` {target, distance, yaw, pitch}, ``paused``,
``steps``: a list of
``{"click": NAME}``, ``{"drag": NAME, "by": [dx, dy]}`` (pixels, y up),
``{"click_at": [x, y]}``, ``{"drag_at": [x, y], "by": [dx, dy]}`` (window pixels, y up),
``{"key": PYGLET_KEY_NAME}``, ``{"text": "abc"}`` (typed: key presses and text events),
``{"frames": n}``, ``{"wait_load": true}``, ``{"shot": "name"}`` (OUT_DIR/name.png),
``{"pan": [dx, dy]}`` (the camera, as a right drag),
``broken_section`` (true: a first section that raises, for the panel's error recovery),
``{"pick": [x, y]}`` (records which body the scene would pick there),
``{"find_body_under_panel": true}`` (a pixel on the panel over a body that is not static: the
"spot" that ``click_at`` / ``drag_at`` may name).
"""

import json
import os
import sys
import time


def main(config_path, out):
    with open(config_path) as fh:
        cfg = json.load(fh)
    headless = not os.environ.get("DISPLAY")
    if headless:
        os.environ["PYGLET_HEADLESS"] = "1"
        os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
    elif os.environ.get("PYOPENGL_PLATFORM") == "egl":  # a GLX window: PyOpenGL must not look for EGL
        del os.environ["PYOPENGL_PLATFORM"]
    import numpy as np
    import pyglet

    if headless:
        pyglet.options["headless"] = True
    from pyglet.window import key, mouse

    from app.scene.scene_file import scene_registry
    from app.viewer.session import Session
    from app.viewer.window import ViewerWindow
    from app.world.world import World

    if cfg.get("broken_section"):  # a section that raises half-way (a push and a child left open)
        from imgui_bundle import imgui

        from app.viewer.panel import SECTIONS

        def broken(session):
            imgui.push_id("half")
            imgui.begin_child("##half", (0.0, 40.0))
            imgui.text("drawn before the error")
            raise RuntimeError("a section's bug")

        SECTIONS.insert(0, ("Broken", broken))
    os.makedirs(out, exist_ok=True)
    width, height = cfg.get("size", [1280, 720])
    session = Session(World([]))
    session.load_scene(scene_registry().get(cfg["scene"], cfg["scene"]), wait=True)
    session.world.paused = bool(cfg.get("paused", False))
    win = ViewerWindow(session, width, height, visible=not headless)
    cam = session.camera
    for name, value in cfg.get("camera", {}).items():
        setattr(cam, name, np.array(value, float) if name == "target" else float(value))

    def frame(n=1):
        for _ in range(n):
            win.dispatch_events()
            t0 = time.perf_counter()
            win.step_frame(1 / 60)
            session.times["fps"] = 1.0 / max(time.perf_counter() - t0, 1e-6)  # as run_frames does
            win.flip()

    def centre(name):
        """The widget's centre (pyglet's pixels, y up), scrolling the panel with the wheel until it is in view."""
        for _ in range(80):
            if name not in win.panel.items:
                raise KeyError(f"no widget {name!r} drawn (drawn: {sorted(win.panel.items)})")
            x0, y0, x1, y1 = win.panel.items[name]
            px0, py0, px1, py1 = win.panel.panel_rect
            top = py0 + 24  # under the title bar
            if y0 >= top and y1 <= py1 - 4:
                return (x0 + x1) / 2, win.height - (y0 + y1) / 2  # pyglet's y goes up
            wx, wy = px0 + 3, win.height - (py0 + py1) / 2  # the window padding: not over a child list
            win.dispatch_event("on_mouse_motion", wx, wy, 0, 0)
            win.dispatch_event("on_mouse_scroll", wx, wy, 0, -1 if y1 > py1 - 4 else 1)
            frame(2)
        raise RuntimeError(f"could not scroll {name!r} into view")

    def press_drag_release(x, y, dx=0.0, dy=0.0, moves=8):
        win.dispatch_event("on_mouse_motion", x, y, 0, 0)
        frame()
        win.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
        frame()
        px, py = x, y
        for s in range(1, moves + 1 if (dx or dy) else 1):
            nx, ny = x + dx * s / moves, y + dy * s / moves
            win.dispatch_event("on_mouse_drag", nx, ny, nx - px, ny - py, mouse.LEFT, 0)
            frame()
            px, py = nx, ny
        win.dispatch_event("on_mouse_release", px, py, mouse.LEFT, 0)
        frame(2)

    def state(step):
        w = session.world
        sel = session.selected
        return {
            "step": step,
            "flags": dict(session.flags),
            "panel_visible": session.panel_visible,
            "gravity": w.dynamics.gravity.tolist(),
            "scene_path": session.scene_path,
            "bodies": len(w.bodies),
            "selected": sel,
            "positions": {b.name: b.pose[:3, 3].tolist() for b in w.bodies},
            "camera": {"yaw": float(cam.yaw), "pitch": float(cam.pitch), "distance": float(cam.distance),
                       "target": np.asarray(cam.target, float).tolist()},
            "items": {k: list(v) for k, v in win.panel.items.items()},
            "rects": [list(r) for r in win.panel.rects],
            "messages": [m[0] for m in session.log],
            "open_path": session.gui.state.get("scenes", {}).get("path"),
            "times": dict(session.times),
            "window": [win.width, win.height],
        }

    def body_under_panel():
        """A pixel on the panel (pyglet's, y up) over a body that is not static, and the body's index."""
        x0, y0, x1, y1 = win.panel.panel_rect
        for py in np.arange(y0 + 40, y1 - 10, 8.0):
            for px in np.arange(x0 + 10, x1 - 10, 8.0):
                x, y = float(px), float(win.height - py)
                k, _ = session.pick(x, y)
                if k is not None and session.world.bodies[k].motion != "static":
                    return [x, y], k
        return None, None

    spot = None
    frame(3)
    report = {"steps": []}
    for step in cfg.get("steps", []):
        if "click" in step:
            press_drag_release(*centre(step["click"]))
        if "drag" in step:
            x, y = centre(step["drag"])
            press_drag_release(x, y, *step["by"])
        if step.get("find_body_under_panel"):
            spot, k = body_under_panel()
            step = dict(step, spot=spot, picked=k)
        if "click_at" in step:
            press_drag_release(*(spot if step["click_at"] == "spot" else step["click_at"]))
        if "drag_at" in step:
            press_drag_release(*(spot if step["drag_at"] == "spot" else step["drag_at"]), *step["by"])
        if "key" in step:
            sym = getattr(key, step["key"])
            win.dispatch_event("on_key_press", sym, 0)
            win.dispatch_event("on_key_release", sym, 0)
            frame(2)
        if "text" in step:
            for ch in step["text"]:
                sym = getattr(key, ch.upper(), None)
                if sym is not None:
                    win.dispatch_event("on_key_press", sym, 0)
                win.dispatch_event("on_text", ch)
                if sym is not None:
                    win.dispatch_event("on_key_release", sym, 0)
                frame()
            frame()
        if "pan" in step:  # as a right-button drag in the scene does
            cam.pan(*step["pan"])
        if "frames" in step:
            frame(int(step["frames"]))
        if step.get("wait_load"):
            t0 = time.monotonic()
            while (session.loading is not None or session._queue) and time.monotonic() - t0 < 300:
                frame()
                time.sleep(0.02)
            frame(3)
        if "pick" in step:
            k, _ = session.pick(*step["pick"])
            step = dict(step, picked=k)
        if "shot" in step:  # the pointer off the panel first: no tooltip, no hover in the picture
            win.dispatch_event("on_mouse_motion", win.width - 2, 2, 0, 0)
            frame(2)
            win.dispatch_events()
            win.step_frame(1 / 60)
            pyglet.image.get_buffer_manager().get_color_buffer().save(os.path.join(out, step["shot"] + ".png"))
            win.flip()
        report["steps"].append(state(step))
    with open(os.path.join(out, "report.json"), "w") as fh:
        json.dump(report, fh, indent=1)
    win.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
