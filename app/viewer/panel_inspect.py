"""The panel's sections on why two bodies collide: the pair, its traversal, separating axis, GJK.

Each ``draw_<section>(session)`` draws the body of one collapsible section with
``from imgui_bundle import imgui, implot`` (between the panel's ``new_frame`` and ``render``)
and reads and changes only :attr:`app.viewer.session.Session.inspector`
(:class:`app.viewer.inspect.PairInspector`) and the overlay flags, through the same actions
as the keys. :data:`SECTIONS` lists them as ``(title, draw)`` for the panel.

Widget rectangles are recorded in ``session.inspector.items`` (window pixels, origin top
left, y down) so that a test can click them where they are.
"""

import numpy as np
from imgui_bundle import imgui, implot

from obbcollide.traversal_record import AXIS_NAMES

from .inspect import COLORS, MAX_DRAWN_PAIRS, mesh_of

__all__ = ["SECTIONS", "draw_pair_section", "draw_traversal_section", "draw_separating_axis_section",
           "draw_gjk_section"]

GREY = (0.62, 0.65, 0.70, 1.0)
LAGGING = "(slow to compute: updated every 0.25 s while the pair moves; pause with Space)"
VISITED = (0.20, 1.00, 0.30, 1.0)
PRUNED = (0.85, 0.35, 0.35, 1.0)


def _rgba(c, a=1.0):
    return (c[0], c[1], c[2], a)


def _mark(session, name):
    lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
    session.inspector.items[name] = (lo.x, lo.y, hi.x, hi.y)


def _hint(text):
    imgui.push_style_color(imgui.Col_.text, GREY)
    imgui.text_wrapped(text)
    imgui.pop_style_color()


def _overlay_checkbox(session, name, label):
    changed, _ = imgui.checkbox(f"{label}##overlay-{name}", bool(session.flags[name]))
    _mark(session, f"overlay:{name}")
    if changed:
        session.do_toggle(name, False)


def _steps(session, tag, current, last, go):
    """First / previous / next / last buttons and a slider over ``0..last``; ``go(k)`` jumps."""
    for label, target in (("|<", 0), ("<", current - 1), (">", current + 1), (">|", last)):
        if imgui.button(f"{label}##{tag}"):
            go(max(0, min(last, target)))
        _mark(session, f"{tag}:{label}")
        imgui.same_line()
    imgui.set_next_item_width(-1)
    changed, k = imgui.slider_int(f"##{tag}-slider", current + 1, 1, last + 1, f"%d of {last + 1}")
    _mark(session, f"{tag}:slider")
    if changed:
        go(k - 1)


# -- the pair ----------------------------------------------------------------------------------


def draw_pair_section(session):
    """The pair: body A (the selected one) and body B (its partner), and a convex piece of each."""
    ins = session.inspector
    bodies = session.world.bodies
    names = [f"{b.name}##{k}" for k, b in enumerate(bodies)]
    if not bodies:
        _hint("no bodies")
        return
    sel = session.selected
    changed, k = imgui.combo("body A", -1 if sel is None else sel, names)
    _mark(session, "pair:A")
    if changed:
        ins.set_selected(k)
    p = ins.partner
    items = ["auto (touching, else nearest)"] + names
    current = 0 if ins.partner_is_auto or p is None else p + 1
    changed, k = imgui.combo("body B", current, items)
    _mark(session, "pair:B")
    if changed:
        ins.set_partner(None if k == 0 else k - 1)
    if ins.pair() is None:
        _hint("click a body to select it (A), then Ctrl+click another (B), or J for the next one")
        return
    imgui.same_line()
    if imgui.small_button("swap"):
        a, b = ins.pair()
        ins.set_selected(b)
        ins.set_partner(a)
    _mark(session, "pair:swap")
    pp = ins.piece_pair()
    a, b = (bodies[i] for i in ins.pair())
    if pp is None:
        _hint(f"{ins.no_pieces_reason()}: the traversal and the node pair's axis only")
        return
    for side, body, idx in (("A", a, pp[0]), ("B", b, pp[1])):
        choices = ins.choices(body)
        meshy = mesh_of(body) is not None
        labels = ["auto: deepest / closest " + ("triangle" if meshy else "pair")] + [lab for _, lab in choices]
        chosen = ins.piece_choice[0 if side == "A" else 1]
        at = [k for k, _ in choices]
        imgui.set_next_item_width(-110)
        changed, k = imgui.combo(f"piece of {side}", 0 if chosen not in at else at.index(chosen) + 1, labels)
        _mark(session, f"pair:piece{side}")
        if changed:
            c = list(ins.piece_choice)
            c[0 if side == "A" else 1] = None if k == 0 else at[k - 1]
            ins.piece_choice = tuple(c)
            ins.gjk_step = None
        if chosen is None:
            imgui.text_colored(GREY, f"  auto: {ins.piece(body, idx)[1]}")
        if meshy:
            _hint(f"{body.name} collides as its exact surface: its pieces are its triangles, tested one by one")


# -- item 3: the traversal ---------------------------------------------------------------------


def draw_traversal_section(session):
    """Node pairs visited and pruned per depth (a bar chart), and the traversal one pair at a time."""
    ins = session.inspector
    _overlay_checkbox(session, "traversal", "draw in the scene (O)")
    rec = ins.traversal()
    if rec is None:
        _hint("select a pair first")
        return
    k = ins.current_step()
    visited, pruned = rec.per_depth()
    imgui.text_wrapped(f"{rec.box_tests} box tests: {int(visited.sum())} overlap, {int(pruned.sum())} pruned; "
                       f"{rec.triangle_tests} triangle tests, {rec.hits} intersecting")
    if k + 1 > MAX_DRAWN_PAIRS:
        imgui.text_colored(PRUNED, f"the scene shows the last {MAX_DRAWN_PAIRS} of {k + 1} node pairs")
    if implot.begin_plot("##per-depth", (-1, 150)):
        implot.setup_axes("depth", "node pairs")
        implot.setup_axes_limits(-0.7, len(visited) - 0.3, 0, max(1, int(max(visited.max(), pruned.max()))) * 1.1,
                                 imgui.Cond_.always)
        xs = np.arange(len(visited), dtype=np.float64)
        spec = implot.Spec()
        spec.fill_color, spec.line_color = VISITED, VISITED
        implot.plot_bars("visited", xs - 0.2, visited.astype(np.float64), 0.4, spec)
        spec = implot.Spec()
        spec.fill_color, spec.line_color = PRUNED, PRUNED
        implot.plot_bars("pruned", xs + 0.2, pruned.astype(np.float64), 0.4, spec)
        implot.end_plot()
    _mark(session, "traversal:plot")
    imgui.separator_text("step through")
    _steps(session, "trav", k, rec.box_tests - 1, ins.step_to)
    imgui.text_wrapped(ins.step_text(k))
    if rec.axis[k] >= 0:
        _hint("(Separating axis, with 'the step's node pair', shows this axis and the two boxes' projections)")
    counts = rec.axis_counts()
    if counts.sum():
        imgui.separator_text("which axis pruned")
        top = np.argsort(-counts, kind="stable")[:5]
        imgui.text_wrapped(", ".join(f"{AXIS_NAMES[i]}: {counts[i]}" for i in top if counts[i]))


# -- item 4: the separating axis -----------------------------------------------------------------


def _interval_strip(view, width, height=34):
    """The two projection intervals on one line, drawn with the window's draw list."""
    t = view["table"]
    row = t.best
    lo = min(t.lo_a[row], t.lo_b[row])
    hi = max(t.hi_a[row], t.hi_b[row])
    span = (hi - lo) or 1.0
    pos = imgui.get_cursor_screen_pos()
    dl = imgui.get_window_draw_list()
    x0, x1 = pos.x + 8, pos.x + width - 8

    def x(s):
        return x0 + (s - lo) / span * (x1 - x0)

    y = pos.y + height / 2
    dl.add_line((x0 - 4, y), (x1 + 4, y), imgui.get_color_u32(_rgba((0.70, 0.45, 1.00))), 1.0)
    dl.add_rect_filled((x(t.lo_a[row]), y - 9), (x(t.hi_a[row]), y - 3),
                       imgui.get_color_u32(_rgba(COLORS["interval_a"])))
    dl.add_rect_filled((x(t.lo_b[row]), y + 3), (x(t.hi_b[row]), y + 9),
                       imgui.get_color_u32(_rgba(COLORS["interval_b"])))
    g0, g1 = sorted((x(t.hi_a[row]), x(t.lo_b[row])))
    gap_color = COLORS["gap"] if t.separated else COLORS["overlap"]
    dl.add_rect_filled((g0, y - 2), (max(g1, g0 + 1), y + 2), imgui.get_color_u32(_rgba(gap_color)))
    imgui.dummy((width, height))


def draw_separating_axis_section(session):
    """The separating axis of the convex pair (or of the traversal step's node pair), its
    intervals, the gap, and which candidate axis it is."""
    ins = session.inspector
    _overlay_checkbox(session, "axis", "draw in the scene (X)")
    if imgui.radio_button("the pieces", ins.axis_source == "pieces"):
        ins.axis_source = "pieces"
    _mark(session, "axis:pieces")
    imgui.same_line()
    if imgui.radio_button("the step's node pair", ins.axis_source == "nodes"):
        ins.axis_source = "nodes"
    _mark(session, "axis:nodes")
    view = ins.axis_view()
    if view is None:
        _hint("select a pair first")
        return
    if view["note"]:
        _hint(view["note"])
    if "axis" in ins.lagging:
        _hint(LAGGING)
    t = view["table"]
    imgui.text(f"A: {view['labels'][0]}    B: {view['labels'][1]}")
    first, second = ins.axis_text(view)
    imgui.push_style_color(imgui.Col_.text, _rgba(COLORS["gap"] if t.separated else COLORS["overlap"]))
    imgui.text_wrapped(first)
    imgui.pop_style_color()
    imgui.text_wrapped(second)
    _interval_strip(view, imgui.get_content_region_avail().x)
    imgui.text_colored(_rgba(COLORS["interval_a"]), "A's projection")
    imgui.same_line()
    imgui.text_colored(_rgba(COLORS["interval_b"]), "B's projection")
    imgui.same_line()
    imgui.text_colored(_rgba(COLORS["gap"] if t.separated else COLORS["overlap"]),
                       "gap" if t.separated else "overlap")
    n_face_a, n_face_b = int((t.kind == 0).sum()), int((t.kind == 1).sum())
    n_edge = int((t.kind == 2).sum())
    _hint(f"{len(t)} candidate axes: {n_face_a} face normals of A, {n_face_b} of B, {n_edge} edge x edge "
          "cross products (seed 001). Two convex shapes are apart exactly when one of them separates their "
          "projections; when none does, the smallest overlap is the penetration depth.")
    if imgui.begin_table("axes", 3, imgui.TableFlags_.borders_inner_h | imgui.TableFlags_.sizing_stretch_prop):
        imgui.table_setup_column("axis")
        imgui.table_setup_column("from")
        imgui.table_setup_column("gap")
        imgui.table_headers_row()
        finite = np.flatnonzero(np.isfinite(t.gap))
        for row in finite[np.argsort(-t.gap[finite], kind="stable")][:6]:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text(f"#{t.index[row]}")
            imgui.table_next_column()
            imgui.text(AXIS_NAMES[t.index[row]] if view["source"] == "nodes" else t.describe(row))
            imgui.table_next_column()
            imgui.text_colored(_rgba(COLORS["gap"] if t.gap[row] > 0 else COLORS["overlap"]), f"{t.gap[row]:+.4g}")
        imgui.end_table()


# -- item 5: GJK and the vector-symbol factors ---------------------------------------------------------


def _simplex_inset(session, step, size=150):
    """The simplex in the Minkowski difference A - B, seen as the camera sees, with the origin."""
    cam = session.camera
    fwd = cam.target - cam.eye
    fwd = fwd / np.linalg.norm(fwd)
    right = np.cross(fwd, [0.0, 1.0, 0.0])
    right = right / (np.linalg.norm(right) or 1.0)
    up = np.cross(right, fwd)
    pts = np.vstack([step.vertices, np.zeros((1, 3)), (step.point_a - step.point_b)[None]])
    xy = np.stack([pts @ right, pts @ up], axis=1)
    lo, hi = xy.min(0), xy.max(0)
    scale = (size - 24) / max(float((hi - lo).max()), 1e-12)
    pos = imgui.get_cursor_screen_pos()
    centre = (lo + hi) / 2

    def px(p):
        q = (p - centre) * scale
        return (pos.x + size / 2 + q[0], pos.y + size / 2 - q[1])

    dl = imgui.get_window_draw_list()
    dl.add_rect(pos, (pos.x + size, pos.y + size), imgui.get_color_u32(GREY))
    n = len(step.vertices)
    col = imgui.get_color_u32(_rgba(COLORS["simplex"]))
    for i in range(n):
        for j in range(i + 1, n):
            dl.add_line(px(xy[i]), px(xy[j]), col, 1.5)
    for i in range(n):
        dl.add_circle_filled(px(xy[i]), 3.5, col)
    dl.add_circle_filled(px(xy[n]), 4.0, imgui.get_color_u32((1.0, 1.0, 1.0, 1.0)))  # the origin
    dl.add_line(px(xy[n]), px(xy[n + 1]), imgui.get_color_u32(_rgba(COLORS["closest"], 0.7)), 1.0)
    dl.add_circle(px(xy[n + 1]), 4.0, imgui.get_color_u32(_rgba(COLORS["next"])))
    imgui.dummy((size, size))


FACTOR_SENTENCES = {
    "D": "D(V, P) = (V - V_r) . n_P, the position factor: + a vertex outside face P's plane, - inside, 0 on it.",
    "I": "I(P, Q), the intersection factor: non-zero when polygons P and Q cross; decided from the D signs "
         "by five cases (shielding planes when both straddle).",
    "E": "E(M, N), the containment factor: 1 when every vertex of N is inside M (all D <= 0).",
    "C": "C(M, N) = sum of I + E(M, N) + E(N, M), the model collision factor: the pieces collide when C != 0.",
}


def draw_gjk_section(session):
    """GJK on the convex pair one iteration at a time, and the vector-symbol factors of the pair."""
    ins = session.inspector
    _overlay_checkbox(session, "gjk", "draw in the scene (I)")
    steps = ins.gjk()
    if steps is None:
        _hint("select a pair of bodies with convex pieces first")
        return
    k = ins.current_gjk_step()
    s = steps[k]
    _steps(session, "gjk", k, len(steps) - 1, ins.gjk_step_to)
    imgui.text(f"iteration {s.iteration} of {steps[-1].iteration}: simplex of {len(s.simplex)} "
               f"({['point', 'segment', 'triangle', 'tetrahedron'][len(s.simplex) - 1]})")
    imgui.text(f"distance {s.distance:.5g}" + ("  (the cores overlap)" if s.overlap else ""))
    if s.next_support is not None:
        imgui.text_colored(_rgba(COLORS["next"]), f"next support pair: vertex {s.next_support[0]} of A, "
                                                  f"{s.next_support[1]} of B")
    elif s.done:
        imgui.text_colored(GREY, "done: " + ("the simplex holds the origin" if s.overlap else
                                             "no support point gets closer"))
    _hint("the markers on each shape are the support points whose differences are the simplex's "
          "vertices; white: the closest points so far.")
    _simplex_inset(session, s)
    imgui.same_line()
    if implot.begin_plot("##gjk-distance", (-1, 150)):
        implot.setup_axes("iteration", "distance")
        implot.setup_legend(implot.Location_.north_east)
        d = np.array([st.distance for st in steps], np.float64)
        it = np.arange(len(steps), dtype=np.float64)
        implot.setup_axes_limits(-0.2, max(1.0, len(steps) - 0.8), 0.0, max(float(d.max()), 1e-9) * 1.1,
                                 imgui.Cond_.always)
        spec = implot.Spec()
        spec.marker = implot.Marker_.circle
        implot.plot_line("distance", it, d, spec)
        implot.plot_scatter("now", np.array([float(k)]), np.array([d[k]]))
        implot.end_plot()
    _mark(session, "gjk:plot")
    imgui.separator_text("vector-symbol factors (seed 003)")
    f = ins.factors()
    if "vs" in ins.lagging:
        _hint(LAGGING)
    for name, c in f["D"].items():
        imgui.text_wrapped(f"D, {name}: {c['+']} +, {c['0']} zero, {c['-']} -; "
                   f"{c['inside']} of {c['vertices']} vertices inside all faces")
    r = f["result"]
    if r is None:
        _hint(f["note"])
    else:
        fa, fb = f["polygons"]
        imgui.text(f"I: {f['intersecting']} of {fa} x {fb} polygon pairs intersect")
        imgui.text(f"E(A, B) = {r.E_ab}, E(B, A) = {r.E_ba};  C = {r.C}: "
                   + ("the pieces collide" if r.C else "no collision"))
        if imgui.tree_node("cases of the polygon pairs"):
            for name, n in f["cases"].items():
                imgui.text(f"{n:6d}  {name}")
            imgui.tree_pop()
    for key in ("D", "I", "E", "C"):
        _hint(FACTOR_SENTENCES[key])


SECTIONS = [
    ("Pair", draw_pair_section),
    ("Traversal", draw_traversal_section),
    ("Separating axis", draw_separating_axis_section),
    ("GJK and vector symbols", draw_gjk_section),
]
