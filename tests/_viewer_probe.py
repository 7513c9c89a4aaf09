"""Render a scene through the real viewer window with a camera set by hand; for the pixel tests.

``python -m tests._viewer_probe CONFIG.json OUT_DIR`` loads a scene, sets the overlays and
the camera as the config says, runs the window's frames (Xvfb when ``DISPLAY`` is set, else
EGL headless), and writes ``OUT_DIR/shot.png`` (the last frame) and ``OUT_DIR/probe.json``:
the window size, each body's centre as a pixel (origin top left, y down, as the PNG), each
requested world point as a pixel, and the text boxes the HUD laid out.

Config keys (all optional but ``scene``): ``scene`` (a path or an example's name),
``size`` [w, h], ``frames``, ``frame_dt``, ``flags`` {overlay: bool}, ``camera``
{``target``, ``distance``, ``yaw``, ``pitch``}, ``paused``, ``resize`` [frame, w, h],
``points`` [[x, y, z], ...], ``panel`` (the GUI panel; default off: the text HUD).
"""

import json
import os
import sys


def main(config_path, out):
    with open(config_path) as fh:
        cfg = json.load(fh)
    headless = not os.environ.get("DISPLAY")
    if headless:
        os.environ["PYGLET_HEADLESS"] = "1"
        os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
    import numpy as np
    import pyglet

    if headless:
        pyglet.options["headless"] = True
    from app.scene.scene_file import scene_registry
    from app.viewer.session import Session
    from app.viewer.window import ViewerWindow
    from app.world.world import World

    width, height = cfg.get("size", [1280, 720])
    session = Session(World([]))
    path = scene_registry().get(cfg["scene"], cfg["scene"])
    session.load_scene(path, wait=True)
    for name, on in cfg.get("flags", {}).items():
        session.flags[name] = bool(on)
    session.world.paused = bool(cfg.get("paused", False))
    win = ViewerWindow(session, width, height, visible=not headless, panel=bool(cfg.get("panel", False)))
    cam = session.camera
    for key, value in cfg.get("camera", {}).items():
        setattr(cam, key, np.array(value, float) if key == "target" else float(value))
    frames = int(cfg.get("frames", 3))
    resize = cfg.get("resize")
    for frame in range(frames):
        if resize and frame == resize[0]:
            win.set_size(resize[1], resize[2])
        win.dispatch_events()
        if frame == frames - 1:
            win.hud.refresh_now()
        win.step_frame(float(cfg.get("frame_dt", 1 / 60)))
        if frame == frames - 1:
            os.makedirs(out, exist_ok=True)
            pyglet.image.get_buffer_manager().get_color_buffer().save(os.path.join(out, "shot.png"))
        win.flip()
    w, h = win.get_framebuffer_size()

    def pixel(p):
        x, y = cam.project(p)
        return [float(x), float(h - y)]

    report = {
        "size": [w, h],
        "window": [win.width, win.height],
        "bodies": {b.name: {"center": pixel(b.world_center()), "position": b.pose[:3, 3].tolist(),
                            "radius": b.radius} for b in session.world.bodies},
        "points": [pixel(p) for p in cfg.get("points", [])],
        "eye": cam.eye.tolist(),
        "boxes": [{"name": b.name, "left_out": b.left_out, "x": b.x, "y": b.y, "width": b.width, "height": b.height,
                   "columns": [list(c) for c in b.columns], "column_width": b.column_width,
                   "line_height": b.metrics.line_height, "char_width": b.metrics.char_width,
                   "origins": b.text_origins()} for b in getattr(win.hud, "boxes", [])],
        "messages": [m[0] for m in session.messages],
    }
    with open(os.path.join(out, "probe.json"), "w") as fh:
        json.dump(report, fh, indent=1)
    win.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
