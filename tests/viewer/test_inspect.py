"""The picked pair and its views at the session level (no window): app/viewer/inspect.py.

Select a pair (click, Ctrl+click, J, the inspector's setters), compute the traversal, the
separating axis, GJK and the vector-symbol factors, and check each against the library's own
queries on the same bodies (collide, convex_convex_sat, gjk_distance, model_collision_factor),
and the overlay geometry the session hands the renderer (colours, counts).
"""

import numpy as np
import pytest

import obbcollide as co
from app.scene.loader import default_scene
from app.scene.scene_file import scene_registry
from app.viewer.inspect import COLORS as INSPECT_COLORS
from app.viewer.inspect import MAX_DRAWN_PAIRS
from app.viewer.session import COLORS, Session
from app.world.world import World
from obbcollide.traversal_record import axis_name

W, H = 800, 600


def rows(colors, color):
    return np.all(colors == np.asarray(color, np.float32), axis=1)


@pytest.fixture
def demo():
    s = Session(default_scene())
    s.camera.width, s.camera.height = W, H
    s.frame_camera()
    s.world.paused = True
    s.update(0.0)
    return s


@pytest.fixture(scope="module")
def pile_world():
    s = Session(World([]))
    s.load_scene(scene_registry()["bowl_pile"], wait=True)
    return s.world


@pytest.fixture
def pile(pile_world):
    s = Session(pile_world)
    s.camera.width, s.camera.height = W, H
    s.frame_camera()
    s.world.paused = True
    s.update(0.0)
    return s


def names(s):
    return [b.name for b in s.world.bodies]


def pick_pair(s, a, b):
    s.selected = names(s).index(a)
    s.inspector.set_partner(names(s).index(b))


# -- selecting the pair ---------------------------------------------------------------------------


def test_no_pair_without_a_selection(demo):
    ins = demo.inspector
    assert ins.pair() is None and ins.traversal() is None and ins.axis_view() is None and ins.gjk() is None
    demo.flags.update(traversal=True, axis=True, gjk=True)
    demo.overlays()  # draws nothing of the pair, does not fail
    assert demo.trace_counts == (0, 0)
    assert any("Ctrl+click" in line for line in ins.hud_lines(demo.flags))
    demo.key("PERIOD")  # stepping without a pair says so
    assert "select two bodies" in demo.messages[-1][0]
    demo.key("J")
    assert "select a body first" in demo.messages[-1][0]


def test_auto_partner_then_ctrl_click_then_j(demo):
    demo.key("TAB")
    ins = demo.inspector
    a = demo.selected
    auto = ins.partner
    assert auto is not None and auto != a and ins.partner_is_auto
    # Ctrl+click on another body's centre pixel (one that shows it first) makes it the partner.
    for k, b in enumerate(demo.world.bodies):
        if k in (a, auto):
            continue
        x, y = demo.camera.project(b.world_center())
        hit, _ = demo.pick(x, y)
        if hit == k:
            demo.pick_partner(x, y)
            assert ins.partner == k and not ins.partner_is_auto
            assert demo.selected == a  # the selection stays
            assert ins.pair() == (a, k)
            break
    else:
        pytest.fail("no other body visible at its centre")
    # J walks the partners, never onto A itself.
    seen = set()
    for _ in range(len(demo.world.bodies) + 1):
        demo.key("J")
        assert ins.partner != a
        seen.add(ins.partner)
    assert seen == set(range(len(demo.world.bodies))) - {a}


def test_partner_forgotten_with_its_scene(demo, pile_world):
    pick_pair(demo, "gear", "torus_knot")
    demo.world = pile_world  # what a scene swap does to the bodies
    demo.selected = 0
    assert demo.inspector.partner_body not in demo.world.bodies
    assert demo.inspector.partner_is_auto and demo.inspector.partner != 0


# -- item 3: the traversal -------------------------------------------------------------------------


def test_traversal_counts_equal_collide_and_are_drawn(demo):
    pick_pair(demo, "gear", "torus_knot")
    demo.key("O")
    a, b = (demo.world.bodies[k] for k in demo.inspector.pair())
    real = co.collide(a.tree, a.pose, b.tree, b.pose, containment=False)
    rec = demo.inspector.traversal()
    assert (rec.box_tests, rec.triangle_tests, rec.hits) == (real.box_tests, real.tri_tests, len(real.pairs))
    lines, colors, _, _ = demo.overlays()
    visited, pruned = demo.trace_counts
    assert visited + pruned == rec.box_tests < MAX_DRAWN_PAIRS
    assert rows(colors, COLORS["visited"]).sum() == 24 * 2 * visited
    assert rows(colors, COLORS["pruned"]).sum() == 24 * 2 * pruned
    assert not rows(colors, INSPECT_COLORS["current"]).any()  # the whole traversal: no current pair
    hud = "\n".join(demo.hud_lines())
    assert f"traversal: {visited} node pairs overlapped, {pruned} pruned" in hud
    assert "A = gear, B = torus_knot" in hud


def test_step_through(demo):
    c = demo.world.contacts[0]  # a pair whose triangles meet: the traversal reaches leaves
    demo.selected = c.a
    demo.inspector.set_partner(c.b)
    demo.flags["traversal"] = True
    ins = demo.inspector
    rec = ins.traversal()
    last = rec.box_tests - 1
    assert ins.current_step() == last
    demo.key("COMMA", shift=True)  # the first
    assert ins.current_step() == 0
    demo.key("PERIOD")
    demo.key("PERIOD")
    assert ins.current_step() == 2
    demo.key("COMMA")
    assert ins.current_step() == 1
    _, colors, _, _ = demo.overlays()
    assert demo.trace_counts == (int(rec.overlap[:2].sum()), int((~rec.overlap[:2]).sum()))
    assert rows(colors, INSPECT_COLORS["current"]).sum() == 24 * 2
    # Past either end it stops there.
    ins.step_to(-5)
    assert ins.current_step() == 0
    ins.step_to(10 ** 9)
    assert ins.current_step() == last and ins.step is None
    demo.key("COMMA", shift=True)
    demo.key("PERIOD", shift=True)
    assert ins.current_step() == last
    # Each step's sentence says what happened to that node pair.
    pruned = int(np.flatnonzero(~rec.overlap)[0])
    ins.step_to(pruned)
    text = ins.step_text()
    assert f"test {pruned + 1} of {rec.box_tests}" in text and axis_name(int(rec.axis[pruned])) in text
    leaf = [k for k in range(rec.box_tests) if rec.tri_tests[k] > 0]
    assert leaf, "the pair should reach overlapping leaves"
    ins.step_to(leaf[0])
    assert f"{rec.tri_tests[leaf[0]]} triangle tests" in ins.step_text()


# -- item 4: the separating axis ----------------------------------------------------------------------


def test_axis_of_the_pieces_is_the_sat_answer(pile):
    ins = pile.inspector
    for a, b in (("bowl", "knot"), ("blob", "gear"), ("knot", "blob")):
        pick_pair(pile, a, b)
        i, j, auto = ins.piece_pair()
        assert auto
        view = ins.axis_view()
        assert view["source"] == "pieces" and view["note"] == ""
        sa = ins.piece(pile.world.bodies[ins.pair()[0]], i)[0].transformed(pile.world.bodies[ins.pair()[0]].pose)
        sb = ins.piece(pile.world.bodies[ins.pair()[1]], j)[0].transformed(pile.world.bodies[ins.pair()[1]].pose)
        ref = co.convex_convex_sat(sa, None, sb, None)
        t = view["table"]
        assert t.gap[t.best] == pytest.approx(-ref.depth, abs=1e-9)
        assert t.separated == ref.separated
        first, second = ins.axis_text(view)
        assert ("separating axis" in first) == ref.separated
        assert ("no axis separates" in first) == (not ref.separated)


def test_auto_pieces_are_the_deepest_or_closest(pile):
    pick_pair(pile, "knot", "blob")
    ins = pile.inspector
    i, j, _ = ins.piece_pair()
    a, b = (pile.world.bodies[k] for k in ins.pair())

    def score(p, q):
        pa, pb = ins.pieces(a)[p][0], ins.pieces(b)[q][0]
        g = co.gjk_distance(pa.vertices, a.pose, pb.vertices, b.pose)
        if not g.overlap:
            return g.distance
        return -co.convex_convex_sat(pa.transformed(a.pose), None, pb.transformed(b.pose), None).depth

    scores = np.array([[score(p, q) for q in range(len(ins.pieces(b)))] for p in range(len(ins.pieces(a)))])
    assert scores[i, j] <= scores.min() + 1e-7  # EPA's depth against SAT's: equal to rounding
    # A piece chosen by hand is kept.
    ins.piece_choice = (0, 1)
    assert ins.piece_pair() == (0, 1, False)


def _piece_triangle_score(ins, a, p, b, q):
    """GJK's distance of a convex piece and a triangle (its three corners), minus SAT's depth on overlap."""
    pa, tri = ins.piece(a, p)[0], ins.piece(b, q)[0]
    g = co.gjk_distance(pa.vertices, a.pose, tri.vertices, b.pose)
    if not g.overlap:
        return g.distance
    return -co.convex_convex_sat(pa.transformed(a.pose), None, tri.transformed(b.pose), None).depth


@pytest.mark.parametrize("steps", [0, 40, 100])
def test_a_mesh_that_collides_as_its_surface_offers_its_triangles(pile_world, steps):
    """The bowl collides as its triangles (a TriMesh): the pieces are its triangles, and the
    automatic one is the deepest (else the closest) against every piece of the other body:
    brute force over every triangle within reach of each piece's bounding sphere."""
    s = Session(pile_world)
    s.world.paused = False
    for _ in range(steps):
        s.update(1 / 60)
    s.world.paused = True
    ins = s.inspector
    for name in ("knot", "gear", "blob"):
        pick_pair(s, name, "bowl")
        a, b = (s.world.bodies[k] for k in ins.pair())
        assert ins.pieces(b) == [] and ins.piece_count(b) == len(b.faces)
        i, j, auto = ins.piece_pair()
        assert auto and ins.piece(b, j)[1] == f"triangle {j} of its surface"
        chosen = _piece_triangle_score(ins, a, i, b, j)
        tri = b.vertices[b.faces] @ b.pose[:3, :3].T + b.pose[:3, 3]
        best = np.inf
        for p in range(ins.piece_count(a)):
            v = ins.piece(a, p)[0].vertices @ a.pose[:3, :3].T + a.pose[:3, 3]
            c = v.mean(0)
            r = np.linalg.norm(v - c, axis=1).max()
            q = co.closest_pt_point_triangle(np.broadcast_to(c, tri[:, 0].shape), tri[:, 0], tri[:, 1], tri[:, 2])
            for k in np.flatnonzero(np.linalg.norm(q - c, axis=1) <= r + max(chosen, 0.0) + 1e-9):
                if ins.piece(b, int(k))[0] is not None:
                    best = min(best, _piece_triangle_score(ins, a, p, b, int(k)))
        assert chosen <= best + 1e-7, name
        # Swapped, the same pair the other way round; the panel offers the triangles it scored.
        pick_pair(s, "bowl", name)
        assert ins.piece_pair() == (j, i, True)
        assert j in [k for k, _ in ins.choices(b)]
        # The separating-axis view is that of the piece and the triangle, as the narrow phase tests them.
        view = ins.axis_view()
        assert view["source"] == "pieces" and view["labels"][0] == f"triangle {j} of its surface"
        assert view["table"].gap[view["table"].best] == pytest.approx(
            -co.convex_convex_sat(ins.piece(b, j)[0].transformed(b.pose), None,
                                  ins.piece(a, i)[0].transformed(a.pose), None).depth, abs=1e-9)
        # A triangle chosen by hand is kept; the piece of the other body is then the best against it.
        ins.piece_choice = (j, None)
        assert ins.piece_pair()[0] == j


def test_a_triangle_piece_separates_as_its_three_corners(pile):
    """Two-sided and flat: SAT on it (the separating-axis view's table) agrees with GJK on its corners."""
    from app.viewer.inspect import triangle_piece

    rng = np.random.default_rng(7)
    tree = co.OBBTree(rng.normal(size=(3, 3)), np.array([[0, 1, 2]]))
    tri = triangle_piece(tree, 0)
    assert len(tri.edges) == 3 and np.allclose(tri.normals[0], -tri.normals[1])
    hull = co.ConvexPolyhedron.from_points(rng.normal(size=(12, 3)) * 0.6)
    agree = 0
    for _ in range(300):
        pose = np.eye(4)
        pose[:3, 3] = rng.normal(size=3) * 1.2
        moved = hull.transformed(pose)
        sat = co.convex_convex_sat(moved, None, tri, None)
        gjk = co.gjk_distance(hull.vertices, pose, tri.vertices, np.eye(4))
        if gjk.distance > 1e-9 or not sat.separated:
            assert sat.separated == (not gjk.overlap)
            if sat.separated:
                assert -sat.depth <= gjk.distance + 1e-9  # a separating axis's gap is at most the distance
            agree += 1
    assert agree > 250
    flat = co.OBBTree(np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0]]), np.array([[0, 1, 2], [0, 1, 3]]))
    assert triangle_piece(flat, 0) is None and triangle_piece(flat, 1) is not None


def test_axis_of_the_node_pair_follows_the_step(demo):
    pick_pair(demo, "gear", "torus_knot")
    ins = demo.inspector
    ins.axis_source = "nodes"
    rec = ins.traversal()
    checked = 0
    for k in np.flatnonzero(~rec.overlap)[:40]:
        ins.step_to(k)
        t = ins.axis_view()["table"]
        finite = t.gap[np.isfinite(t.gap)]
        if np.min(np.abs(finite)) < 1e-9:
            continue  # within rounding of touching: the kernel's epsilon may decide otherwise
        assert t.first_separating == rec.axis[k]
        checked += 1
    assert checked > 10
    ins.step_to(0)  # the root boxes overlap: least penetration, said so
    view = ins.axis_view()
    assert not view["table"].separated
    assert "no axis separates them" in ins.axis_text(view)[0]


def test_large_hulls_fall_back_to_the_node_pair_and_say_why(demo):
    pick_pair(demo, "gear", "torus_knot")  # demo meshes: their pieces are whole-mesh hulls
    view = demo.inspector.axis_view()
    assert view["source"] == "nodes" and "edge pairs are too many" in view["note"]


def test_axis_overlay_draws_both_intervals(pile):
    pick_pair(pile, "blob", "gear")
    _, colors, _, _ = pile.overlays()
    for name in ("interval_a", "interval_b", "feature"):
        assert not rows(colors, INSPECT_COLORS[name]).any()
    pile.key("X")
    _, colors, _, _ = pile.overlays()
    for name in ("interval_a", "interval_b", "feature"):
        assert rows(colors, INSPECT_COLORS[name]).any(), name
    t = pile.inspector.axis_view()["table"]
    gap_color = INSPECT_COLORS["gap"] if t.separated else INSPECT_COLORS["overlap"]
    assert rows(colors, gap_color).sum() == 2 * 3  # one segment, three pixels wide


# -- item 5: GJK and the factors ------------------------------------------------------------------------


def test_gjk_steps_of_the_pieces(pile):
    pick_pair(pile, "blob", "gear")
    ins = pile.inspector
    i, j, _ = ins.piece_pair()
    a, b = (pile.world.bodies[k] for k in ins.pair())
    ref = co.gjk_distance(ins.piece(a, i)[0].vertices, a.pose, ins.piece(b, j)[0].vertices, b.pose)
    steps = ins.gjk()
    assert steps[-1].distance == pytest.approx(ref.distance, abs=1e-12)
    assert ins.current_gjk_step() == len(steps) - 1
    pile.key("SEMICOLON", shift=True)
    assert ins.current_gjk_step() == 0
    pile.key("APOSTROPHE")
    assert ins.current_gjk_step() == min(1, len(steps) - 1)
    _, colors, _, _ = pile.overlays()
    assert not rows(colors, INSPECT_COLORS["closest"]).any()
    pile.key("I")
    _, colors, _, _ = pile.overlays()
    assert rows(colors, INSPECT_COLORS["closest"]).any() and rows(colors, INSPECT_COLORS["simplex"]).any()
    assert any(line.startswith("GJK iteration") for line in pile.hud_lines())


def test_vector_symbol_factors_of_the_pieces(pile):
    for a, b in (("bowl", "knot"), ("blob", "gear")):
        pick_pair(pile, a, b)
        ins = pile.inspector
        i, j, _ = ins.piece_pair()
        ba, bb = (pile.world.bodies[k] for k in ins.pair())
        ma = co.StandardModel.from_polyhedron(ins.piece(ba, i)[0]).transformed(ba.pose)
        mb = co.StandardModel.from_polyhedron(ins.piece(bb, j)[0]).transformed(bb.pose)
        ref = co.model_collision_factor(ma, mb)
        f = ins.factors()
        r = f["result"]
        assert (r.C, r.E_ab, r.E_ba) == (ref.C, ref.E_ab, ref.E_ba)
        assert f["intersecting"] == int((ref.I != 0).sum())
        assert sum(f["cases"].values()) == ref.I.size
        d = f["D"]["B vs A's faces"]
        assert d["+"] + d["0"] + d["-"] == len(mb.vertices) * len(ma.normals)
        # E(A, B) = 1 exactly when every vertex of B is inside all of A's faces.
        assert (d["inside"] == d["vertices"]) == bool(r.E_ab)


def test_drawing_cap_shows_the_true_count(demo, monkeypatch):
    import app.viewer.inspect as inspect

    c = demo.world.contacts[0]
    demo.selected = c.a
    demo.inspector.set_partner(c.b)
    demo.flags["traversal"] = True
    rec = demo.inspector.traversal()
    cap = 100
    assert rec.box_tests > cap
    monkeypatch.setattr(inspect, "MAX_DRAWN_PAIRS", cap)
    _, colors, _, _ = demo.overlays()
    drawn = rows(colors, COLORS["visited"]).sum() + rows(colors, COLORS["pruned"]).sum()
    assert drawn == 24 * 2 * cap
    assert demo.trace_counts == (int(rec.overlap.sum()), int((~rec.overlap).sum()))  # the true counts
    hud = "\n".join(demo.hud_lines())
    assert f"the last {cap} of {rec.box_tests} drawn" in hud


def test_slow_views_refresh_on_a_clock_while_the_pair_moves(pile, monkeypatch):
    import app.viewer.inspect as inspect

    pick_pair(pile, "blob", "gear")
    ins = pile.inspector
    monkeypatch.setattr(inspect, "SLOW_S", -1.0)  # every view counts as slow
    first = ins.factors()
    pile.world.move_body(pile.selected, translation=(0.0, 1e-3, 0.0))
    assert ins.factors() is first and "vs" in ins.lagging  # shown from the old poses, said so
    monkeypatch.setattr(inspect, "REFRESH_S", 0.0)
    assert ins.factors() is not first and "vs" not in ins.lagging
    # A new pair is computed at once, however slow.
    monkeypatch.setattr(inspect, "REFRESH_S", 1e9)
    old = ins.factors()
    pick_pair(pile, "knot", "blob")
    assert ins.factors() is not old


def test_session_keeps_the_root_boxes_axis(demo):
    pick_pair(demo, "gear", "box")
    demo.key("X")
    demo.overlays()
    from obbcollide.obb import test_obb_obb_kernel

    boxes = []
    for body in (demo.world.bodies[k] for k in demo.inspector.pair()):
        r, t, tree = body.pose[:3, :3], body.pose[:3, 3], body.tree
        boxes += [r @ tree.centers[0] + t, tree.axes[0] @ r.T, tree.half_extents[0]]
    assert demo.separating_axis == int(test_obb_obb_kernel(*boxes, 1e-12))


def test_a_new_pair_starts_afresh(pile):
    pick_pair(pile, "bowl", "knot")
    ins = pile.inspector
    ins.piece_choice = (3, 2)
    ins.step_to(1)
    assert ins.piece_pair()[:2] == (3, 2) and ins.current_step() == 1
    pile.key("TAB")  # another A: automatic pieces, the whole traversal
    assert ins.pair() is not None and ins.piece_choice == (None, None) and ins.step is None


def test_convex_pieces_overlay_leaves_out_a_body_that_collides_as_its_triangles(pile):
    """K draws the convex pieces each body collides as: the bowl has a decomposition on file, but
    it collides as its exact surface, so its pieces are not drawn."""
    bowl = pile.world.bodies[names(pile).index("bowl")]
    assert bowl.pieces is not None and any(isinstance(s, co.TriMesh) for s in bowl.shapes)
    pile.key("K")
    _, colors, _, _ = pile.overlays()
    drawn = rows(colors, COLORS["pieces"]).sum() // 2  # two vertices a segment
    expected = sum(len(h.edges) for b in pile.world.bodies if b.pieces is not None and b is not bowl
                   for h in b.pieces.hulls)
    assert drawn == expected > 0
