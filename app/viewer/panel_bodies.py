"""The panel's Bodies section: the list (a click selects), and the selected body's name,
motion (editable), mass, pose (the position editable), velocities, pieces, OBB tree;
frame / duplicate / delete."""

import math

import numpy as np
from imgui_bundle import imgui

from .panel_widgets import GREY, action_button, hint, labelled, mark, tooltip

__all__ = ["draw_bodies", "euler_deg"]

MOTIONS = ("dynamic", "kinematic", "static")
LIST_ROWS = 8  # rows of the body list before it scrolls


def euler_deg(rotation):
    """Yaw, pitch, roll in degrees of a (3, 3) rotation (as the text HUD shows them)."""
    r = np.asarray(rotation, float)
    yaw = math.degrees(math.atan2(r[0, 2], r[2, 2]))
    pitch = math.degrees(math.asin(max(-1.0, min(1.0, -r[1, 2]))))
    roll = math.degrees(math.atan2(r[1, 0], r[1, 1]))
    return yaw, pitch, roll


def _body_list(session):
    bodies = session.world.bodies
    rows = min(LIST_ROWS, max(len(bodies), 1))
    height = rows * imgui.get_text_line_height_with_spacing() + 6
    imgui.begin_child("##bodies", (0.0, height), imgui.ChildFlags_.borders)
    right = imgui.get_cursor_pos_x() + imgui.get_content_region_avail().x
    clipper = imgui.ListClipper()
    clipper.begin(len(bodies))
    while clipper.step():
        for k in range(clipper.display_start, clipper.display_end):
            b = bodies[k]
            state = "asleep" if b.sleeping else b.motion
            if imgui.selectable(f"{b.name}##{k}", k == session.selected)[0]:
                session.select(k)
            mark(session, f"body:{b.name}")
            imgui.same_line(right - imgui.calc_text_size(state).x)
            imgui.text_colored(GREY, state)
    clipper.end()
    if session.selected is not None and imgui.is_window_appearing():
        imgui.set_scroll_y(session.selected * imgui.get_text_line_height_with_spacing())
    imgui.end_child()


def _details(session, k):
    b = session.world.bodies[k]
    imgui.separator_text(b.name)
    current = MOTIONS.index(b.motion) if b.motion in MOTIONS else 0
    imgui.set_next_item_width(120)
    changed, chosen = imgui.combo("motion", current, list(MOTIONS))
    mark(session, "motion")
    tooltip("dynamic: falls and collides; kinematic: moves only as you drive it; static: never moves")
    if changed:
        session.set_motion(k, MOTIONS[chosen])
    if b.mass is not None:
        labelled("mass", f"{b.mass.mass:.4g} (from {'its pieces' if b.pieces is not None else 'the mesh'})")
    else:
        labelled("mass", "none (open mesh or ground: static / kinematic only)")
    pos = b.pose[:3, 3]
    imgui.set_next_item_width(-60)
    changed, new = imgui.drag_float3("position", [float(x) for x in pos], 0.01, 0.0, 0.0, "%.3f")
    mark(session, "position")
    if changed and b.motion != "static":
        session.world.move_body(k, translation=np.asarray(new, float) - pos)
        session.world.wake_touching(k)
    elif changed:
        session.say(f"{b.name} is static: it can be selected, not moved")
    yaw, pitch, roll = euler_deg(b.pose[:3, :3])
    labelled("yaw / pitch / roll", f"{yaw:+.1f}  {pitch:+.1f}  {roll:+.1f} deg")
    v, w = b.velocity, b.spin
    labelled("velocity", f"({v[0]:+.3f}, {v[1]:+.3f}, {v[2]:+.3f})  |v| {np.linalg.norm(v):.3f}")
    labelled("spin", f"({w[0]:+.3f}, {w[1]:+.3f}, {w[2]:+.3f}) rad/s")
    labelled("state", "asleep" if b.sleeping else "awake")
    n_pieces = len(b.pieces) if b.pieces is not None else 0
    shapes = ", ".join(sorted({type(s).__name__ for s in b.shapes})) or "triangles only"
    labelled("pieces", f"{n_pieces} convex" if n_pieces else "none")
    labelled("shapes", shapes)
    tree = b.tree
    labelled("mesh", f"{len(b.vertices)} vertices, {len(b.faces)} triangles")
    labelled("OBB tree", f"{len(tree.centers)} nodes, depth {tree.depth}")
    if b.friction is not None or b.restitution is not None:
        labelled("own coefficients", f"friction {b.friction if b.friction is not None else '-'}, "
                                     f"restitution {b.restitution if b.restitution is not None else '-'}")
    if imgui.button("Frame"):
        session.frame_body(k)
    mark(session, "frame_body")
    tooltip("point the camera at this body")
    imgui.same_line()
    if imgui.button("Duplicate"):
        session.duplicate_body(k)
    mark(session, "duplicate")
    tooltip("a copy above it (same mesh, pieces and mass), selected")
    imgui.same_line()
    imgui.push_style_color(imgui.Col_.button, (0.55, 0.18, 0.16, 1.0))
    if imgui.button("Delete"):
        session.delete_body(k)
    imgui.pop_style_color()
    mark(session, "delete")
    tooltip("remove it from the world (Reload brings the scene back)")


def draw_bodies(session):
    n = len(session.world.bodies)
    imgui.text_colored(GREY, f"{n} bodies (click to select)")
    imgui.same_line()
    action_button(session, "Next", "cycle", help_text="select the next body")
    if n:
        _body_list(session)
    if session.selected is not None and session.selected < n:
        _details(session, session.selected)
    else:
        hint("click a body in the list or in the scene to see it here")
