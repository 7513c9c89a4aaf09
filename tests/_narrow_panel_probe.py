"""Draw the narrow-phase panel section in a minimal Dear ImGui frame in a real window; for the tests.

``python -m tests._narrow_panel_probe OUT_DIR`` (``DISPLAY`` set: an Xvfb display) builds a
world of two equal boxes overlapping by 0.4 along x (the vector-symbol method's degenerate
case) and one box apart, chooses the vector-symbol method, runs a frame, and draws
:func:`app.viewer.narrow_panel.draw_narrow_phase_section` in an imgui window at the top left,
over the scene's background colour. It then clicks the comparison checkbox (pyglet mouse
events through the imgui-bundle backend), runs frames again, and writes:

- ``OUT_DIR/before.png``, ``OUT_DIR/after.png``: the frame before and after the click;
- ``OUT_DIR/probe.json``: the texts the section drew in each frame (imgui's text calls,
  recorded), the checkbox's rectangle, the choice's state and counts after the click, and the
  window size.
"""

import json
import os
import sys

W, H = 800, 600


def main(out):
    import pyglet
    from imgui_bundle import imgui, implot
    from imgui_bundle.python_backends.pyglet_backend import create_renderer
    from pyglet import gl

    from app.viewer.narrow_panel import draw_narrow_phase_section
    from app.viewer.session import COLORS, Session
    from app.world.world import World
    from tests._bodies import box_body

    bodies = [box_body("left", [0.5, 0.5, 0.5], (0, 0, 0)), box_body("right", [0.5, 0.5, 0.5], (0.6, 0, 0)),
              box_body("far", [0.3, 0.3, 0.3], (0.6, 0.9, 0))]
    session = Session(World(bodies, exact=False))
    session.set_narrow_phase("vector-symbol")

    config = gl.Config(red_size=8, green_size=8, blue_size=8, alpha_size=8, depth_size=24, double_buffer=True)
    window = pyglet.window.Window(W, H, config=config, visible=True, caption="narrow panel probe")
    imgui.create_context()
    implot.create_context()
    imgui.get_io().set_ini_filename("")
    renderer = create_renderer(window)

    texts = []
    boxes = {}
    originals = {name: getattr(imgui, name) for name in ("text", "text_colored", "text_wrapped", "text_disabled",
                                                          "checkbox")}

    def recorder(name):
        def call(*args):
            texts[-1].append(args[-1] if name != "checkbox" else args[0])
            result = originals[name](*args)
            if name == "checkbox":
                lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
                boxes[args[0]] = [lo.x, lo.y, hi.x, hi.y]
            return result
        return call

    for name in originals:
        setattr(imgui, name, recorder(name))

    def frame(shot=None):
        session.update(1 / 60)
        window.switch_to()
        window.dispatch_events()
        gl.glClearColor(*COLORS["background"], 1.0)
        gl.glClear(gl.GL_COLOR_BUFFER_BIT | gl.GL_DEPTH_BUFFER_BIT)
        renderer.process_inputs()
        imgui.new_frame()
        imgui.set_next_window_pos(imgui.ImVec2(0, 0))
        imgui.set_next_window_size(imgui.ImVec2(560, 560))
        texts.append([])
        imgui.begin("Narrow phase")
        draw_narrow_phase_section(session)
        imgui.end()
        imgui.render()
        renderer.render(imgui.get_draw_data())
        if shot:
            pyglet.image.get_buffer_manager().get_color_buffer().save(os.path.join(out, shot))
        window.flip()

    for _ in range(3):
        frame()
    frame("before.png")
    before = texts[-1]
    x0, y0, x1, y1 = boxes["compare with the exact triangle test"]
    x, y = int(x0 + 8), int(H - (y0 + y1) / 2)  # pyglet's y goes up
    window.dispatch_event("on_mouse_motion", x, y, 0, 0)
    frame()
    window.dispatch_event("on_mouse_press", x, y, pyglet.window.mouse.LEFT, 0)
    frame()
    window.dispatch_event("on_mouse_release", x, y, pyglet.window.mouse.LEFT, 0)
    frame()
    frame()
    frame("after.png")
    choice = session.world.narrow_choice
    with open(os.path.join(out, "probe.json"), "w") as fh:
        json.dump({"size": [W, H], "before": before, "after": texts[-1], "checkbox": boxes,
                   "compare": choice.compare, "algorithm": choice.algorithm, "counts": choice.counts,
                   "disagreements": [{k: d[k] for k in ("a", "b", "kind", "depth")} for d in choice.disagreements]},
                  fh, indent=1)
    renderer.shutdown()
    window.close()


if __name__ == "__main__":
    main(sys.argv[1])
