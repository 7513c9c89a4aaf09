"""The panel section and the scene overlay of the narrow phase you choose and compare.

:func:`draw_narrow_phase_section` draws the section's body with Dear ImGui
(imgui-bundle): the algorithm, the comparison with the exact triangle test,
what the response uses, the agree / disagree counts, the disagreeing pairs
with their signed distance, and why answers can differ.
:func:`draw_narrow_overlay` adds to the scene's debug geometry (GL-free):
a line between the pieces of every pair the chosen algorithm says touch, and
the disagreeing pairs' pieces outlined in their own colour.
State lives in the world's :class:`app.world.narrow_compare.NarrowPhaseChoice`;
the widgets change it through the session's actions
(:meth:`app.viewer.session.Session.set_narrow_phase` and the two after it).
"""

import numpy as np

from ..world.narrow_compare import ALGORITHMS, CLASSES, REFERENCE, WHY_DISAGREE, response_text

__all__ = ["draw_narrow_phase_section", "draw_narrow_overlay", "ALGORITHM_LABELS", "CLASS_LABELS",
           "OVERLAY_COLORS", "LISTED"]

ALGORITHM_LABELS = {
    "sat": "SAT manifolds (default)",
    "gjk": "GJK / EPA",
    "vector-symbol": "vector symbol (yes / no, seed 003)",
    "triangles": "exact triangles (reference)",
}
CLASS_LABELS = {
    "both": "both touch",
    "neither": "neither touches",
    "chosen_only": "chosen only",
    "reference_only": "reference only",
}
OVERLAY_COLORS = {
    "touching": (0.35, 0.75, 1.00),  # a pair the chosen algorithm says touch
    "chosen_only": (1.00, 0.85, 0.10),  # disagreements, by class
    "reference_only": (1.00, 0.15, 0.45),
}
LISTED = 12  # disagreeing pairs listed in the panel (the count says how many there are)


def draw_narrow_phase_section(session):
    """The body of the panel's "Narrow phase" section (imgui calls; inside an imgui frame)."""
    from imgui_bundle import imgui

    choice = session.world.narrow_choice
    names = list(ALGORITHMS)
    changed, k = imgui.combo("algorithm", names.index(choice.algorithm), [ALGORITHM_LABELS[n] for n in names])
    if changed:
        session.set_narrow_phase(names[k])
    changed, on = imgui.checkbox("compare with the exact triangle test", choice.compare)
    if changed:
        session.set_narrow_compare(on)
    if choice.algorithm == "gjk" or choice.response == "gjk":
        changed, on = imgui.checkbox("GJK / EPA drives the response", choice.response == "gjk")
        if changed:
            session.set_narrow_response("gjk" if on else "sat")
    imgui.text_wrapped(response_text(choice))
    c = choice.counts
    if not choice.active:
        imgui.text_disabled("(SAT without comparison: nothing extra is computed)")
        return
    if not c:
        imgui.text("no frame answered yet")
        return
    capped = f" (answered {c['answered']}, the cap)" if c["answered"] < c["pairs"] else ""
    imgui.text(f"candidate hull piece pairs: {c['pairs']}{capped}")
    imgui.text(f"{ALGORITHM_LABELS[choice.algorithm]} says touching: {c['touching']}")
    if c["others"]:
        imgui.text_disabled(f"{c['others']} pairs with a sphere, capsule, ground or mesh: not compared")
    imgui.text(f"{choice.seconds * 1e3:.2f} ms this frame")
    if not choice.compare:
        return
    if imgui.begin_table("narrow_counts", 2, imgui.TableFlags_.borders.value):
        imgui.table_setup_column(f"{choice.algorithm} vs {REFERENCE}")
        imgui.table_setup_column("pairs")
        imgui.table_headers_row()
        for cls in CLASSES:
            imgui.table_next_row()
            imgui.table_next_column()
            label = CLASS_LABELS[cls]
            if cls in OVERLAY_COLORS and c[cls]:
                imgui.text_colored(imgui.ImVec4(*OVERLAY_COLORS[cls], 1.0), label)
            else:
                imgui.text(label)
            imgui.table_next_column()
            imgui.text(str(c[cls]))
        imgui.end_table()
    dis = choice.disagreements
    agree = c["both"] + c["neither"]
    imgui.text(f"agree {agree}, disagree {len(dis)}")
    for d in dis[:LISTED]:
        imgui.text_colored(imgui.ImVec4(*OVERLAY_COLORS[d["kind"]], 1.0),
                           f"{d['a']}[{d['piece_a']}] - {d['b']}[{d['piece_b']}]: {CLASS_LABELS[d['kind']]}, "
                           + _depth_text(d["depth"]))
    if len(dis) > LISTED:
        imgui.text(f"... and {len(dis) - LISTED} more")
    imgui.text_wrapped(WHY_DISAGREE)


def _depth_text(depth):
    """GJK / EPA's signed distance in millimetres, said as a gap or a depth."""
    mm = depth * 1e3
    return f"depth {mm:.3f} mm" if depth > 0 else f"gap {-mm:.3f} mm" if depth < 0 else "touching (0 mm)"


def draw_narrow_overlay(draw, world):
    """Add the chosen algorithm's answers to ``draw`` (an :class:`app.viewer.session.LineCollector`):
    a line between the piece centres of each touching pair, and the edges of both pieces of
    each disagreeing pair in its class's colour. Nothing when the choice is inactive."""
    choice = world.narrow_choice
    if not choice.active:
        return
    bodies = world.bodies

    def known(i, p):  # (the bodies may have changed since the answers: a body removed)
        return i < len(bodies) and p < len(bodies[i].shapes) and hasattr(bodies[i].shapes[p], "poly")

    seg = [(_piece_center(bodies[i], p), _piece_center(bodies[j], q)) for i, j, p, q in choice.touching
           if known(i, p) and known(j, q)]
    if seg:
        draw.segments(np.array(seg), OVERLAY_COLORS["touching"])
    for d in choice.disagreements:
        if not (known(d["i"], d["piece_a"]) and known(d["j"], d["piece_b"])):
            continue
        color = OVERLAY_COLORS[d["kind"]]
        for i, p in ((d["i"], d["piece_a"]), (d["j"], d["piece_b"])):
            poly = bodies[i].shapes[p].poly
            pose = bodies[i].pose
            draw.segments(poly.vertices[poly.edges] @ pose[:3, :3].T + pose[:3, 3], color)
        draw.segments(np.asarray(d["centers"])[None], color)


def _piece_center(body, p):
    poly = body.shapes[p].poly
    return body.pose[:3, :3] @ poly.vertices.mean(0) + body.pose[:3, 3]
