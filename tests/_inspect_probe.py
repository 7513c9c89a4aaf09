"""Render the pair-inspection sections in a real window with a minimal Dear ImGui frame.

``python -m tests._inspect_probe CONFIG.json OUT_DIR`` loads a scene, picks a pair, sets the
overlays and steps as the config says, draws the scene through the viewer window and the
sections of :mod:`app.viewer.panel_inspect` in one ImGui window on the left, clicks widgets by
name, and writes ``OUT_DIR/shot.png`` (the last frame) and ``OUT_DIR/probe.json`` (the widget
rectangles and the state after the clicks). Xvfb when ``DISPLAY`` is set, else EGL headless.

Config keys: ``scene`` (an example's name, or "default" for the demo meshes), ``size`` [w, h],
``select`` and ``partner`` (body names), ``flags`` {overlay: bool}, ``trav_step``, ``gjk_step``,
``axis_source``, ``pieces`` [i, j], ``sections`` (titles to open; default all), ``panel``
(false: no panel, the scene only), ``panel_width``, ``camera`` {target, distance, yaw, pitch},
``moves`` [[body name, [dx, dy, dz]], ...], ``hud`` (false: no HUD text), ``frames``, ``clicks`` [[frame, widget name], ...] (one every 3
frames at most), ``ctrl_clicks`` [[frame, body name], ...], ``keys`` [[frame, key name, shift], ...].
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
    import numpy as np
    import pyglet

    if headless:
        pyglet.options["headless"] = True
    from imgui_bundle import imgui, implot
    from imgui_bundle.python_backends.pyglet_backend import create_renderer
    from pyglet.window import key, mouse

    from app.scene.loader import default_scene
    from app.scene.scene_file import scene_registry
    from app.viewer.panel_inspect import SECTIONS
    from app.viewer.session import Session
    from app.viewer.window import ViewerWindow
    from app.world.world import World

    width, height = cfg.get("size", [1280, 720])
    if cfg.get("scene", "default") == "default":
        session = Session(default_scene())
    else:
        session = Session(World([]))
        session.load_scene(scene_registry().get(cfg["scene"], cfg["scene"]), wait=True)
    session.world.paused = bool(cfg.get("paused", True))
    names = [b.name for b in session.world.bodies]
    if "select" in cfg:
        session.selected = names.index(cfg["select"])
    if "partner" in cfg:
        session.inspector.set_partner(names.index(cfg["partner"]))
    for name, on in cfg.get("flags", {}).items():
        session.flags[name] = bool(on)
    for name, offset in cfg.get("moves", []):
        session.world.move_body(names.index(name), translation=offset)
    ins = session.inspector
    if "pieces" in cfg:
        ins.piece_choice = tuple(cfg["pieces"])
    if "axis_source" in cfg:
        ins.axis_source = cfg["axis_source"]
    if not cfg.get("hud", True):  # the panel's own status line stands in for the HUD's text
        session.hud_lines = lambda: []
    win = ViewerWindow(session, width, height, visible=not headless, panel=False)  # its own ImGui frame below
    cam = session.camera
    for k, value in cfg.get("camera", {}).items():
        setattr(cam, k, np.array(value, float) if k == "target" else float(value))
    panel = cfg.get("panel", True)
    imgui.create_context()
    implot.create_context()
    imgui.get_io().set_ini_filename(None)
    renderer = create_renderer(win, attach_callbacks=False)  # the Guard below forwards the input
    imgui.get_io().config_flags |= imgui.ConfigFlags_.no_mouse_cursor_change

    class Guard:
        """ImGui first; the scene gets a press only where ImGui does not want the mouse."""

        def on_mouse_motion(self, x, y, dx, dy):
            renderer.on_mouse_motion(x, y, dx, dy)

        def on_mouse_press(self, x, y, button, modifiers):
            renderer.on_mouse_motion(x, y, 0, 0)
            renderer.on_mouse_press(x, y, button, modifiers)
            return pyglet.event.EVENT_HANDLED if imgui.get_io().want_capture_mouse else None

        def on_mouse_release(self, x, y, button, modifiers):
            renderer.on_mouse_release(x, y, button, modifiers)
            return pyglet.event.EVENT_HANDLED if imgui.get_io().want_capture_mouse else None

    guard = Guard()  # pyglet holds handlers weakly: keep it alive
    win.push_handlers(guard)
    open_titles = set(cfg.get("sections", [t for t, _ in SECTIONS]))
    panel_w = cfg.get("panel_width", 440)
    clicks = sorted(cfg.get("clicks", []))
    keys = sorted(cfg.get("keys", []))
    frames = int(cfg.get("frames", 4))
    done = []
    section_ms = []  # the sections' drawing time per frame (their computations included)
    for frame in range(frames):
        if frame == 1:  # after the first frame (the steps need the pair's traversal)
            if "trav_step" in cfg:
                ins.step_to(cfg["trav_step"])
            if "gjk_step" in cfg:
                ins.gjk_step_to(cfg["gjk_step"])
        for f, name in clicks:  # a click: the pointer moves there one frame, presses the next
            if f == frame:
                x0, y0, x1, y1 = ins.items[name]
                win.dispatch_event("on_mouse_motion", (x0 + x1) / 2, height - (y0 + y1) / 2, 0, 0)
            if f + 1 == frame:
                x0, y0, x1, y1 = ins.items[name]
                win.dispatch_event("on_mouse_press", (x0 + x1) / 2, height - (y0 + y1) / 2, mouse.LEFT, 0)
                done.append(name)
        for f, name in cfg.get("ctrl_clicks", []):  # Ctrl+click on a body's centre: the partner
            if f == frame:
                x, y = cam.project(session.world.bodies[names.index(name)].world_center())
                win.dispatch_event("on_mouse_press", x, y, mouse.LEFT, key.MOD_CTRL)
                win.dispatch_event("on_mouse_release", x, y, mouse.LEFT, key.MOD_CTRL)
        for f, name, shift in keys:
            if f == frame:
                win.dispatch_event("on_key_press", getattr(key, name), key.MOD_SHIFT if shift else 0)
        win.dispatch_events()
        win.step_frame(1 / 60)
        if panel:
            io = imgui.get_io()
            io.display_size = (win.width, win.height)
            renderer.process_inputs()
            imgui.new_frame()
            imgui.set_next_window_pos((0, 0))
            imgui.set_next_window_size((panel_w, height))
            imgui.begin("Why they collide", None, imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_resize)
            t0 = time.perf_counter()
            for title, draw in SECTIONS:
                imgui.set_next_item_open(title in open_titles, imgui.Cond_.always)
                if imgui.collapsing_header(title):
                    draw(session)
            section_ms.append(1e3 * (time.perf_counter() - t0))
            imgui.end()
            imgui.render()
            renderer.render(imgui.get_draw_data())
        if frame == frames - 1:
            os.makedirs(out, exist_ok=True)
            pyglet.image.get_buffer_manager().get_color_buffer().save(os.path.join(out, "shot.png"))
        win.flip()
        for f, name in clicks:  # release the button after the frame that saw the press
            if f + 1 == frame:
                win.dispatch_event("on_mouse_release", 0, 0, mouse.LEFT, 0)
    rec = ins.traversal()
    report = {
        "items": ins.items,
        "clicked": done,
        "flags": dict(session.flags),
        "selected": None if session.selected is None else names[session.selected],
        "partner": None if ins.partner is None else names[ins.partner],
        "trav_step": ins.current_step(),
        "box_tests": None if rec is None else rec.box_tests,
        "gjk_step": ins.current_gjk_step(),
        "gjk_steps": None if ins.gjk() is None else len(ins.gjk()),
        "axis_source": ins.axis_source,
        "axis_labels": None if ins.axis_view() is None else list(ins.axis_view()["labels"]),
        "hud": session.hud_lines(),
        "pair_lines": ins.hud_lines(session.flags),
        "messages": [m[0] for m in session.messages],
        "section_ms": section_ms,
    }
    with open(os.path.join(out, "probe.json"), "w") as fh:
        json.dump(report, fh, indent=1)
    renderer.shutdown()
    win.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
