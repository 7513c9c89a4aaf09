"""The narrow phase chosen and compared each frame (app/world/narrow_compare.py).

The counts the world reports after a frame are checked against a direct
computation on the same poses: the piece pairs enumerated by brute force (every
hull piece of every candidate body pair, world AABBs from the transformed
vertices), each answered by the library's own functions outside the comparison
(the SAT manifold, convex_penetration, the vector-symbol test of
collision.narrow_phase, and the brute-force triangle twin as the reference).
Also: nothing runs by default, the cap keeps the true count, a constructed
disagreement is classified and listed with its depth, the GJK response gives
one-point manifolds, the command line and the report carry the choice.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from app.world.narrow_compare import ALGORITHMS, CLASSES, NarrowPhaseChoice, candidate_piece_pairs, response_text
from app.scene.loader import load_scene
from app.scene.scene_file import scene_registry
from app.world.world import World
from obbcollide.epa import convex_penetration
from obbcollide.hull_touch import touch_hull_hull_brute
from obbcollide.manifold import collide_hull_hull
from obbcollide.narrow_phase import test_hull_hull_vector_symbol as vector_symbol_yes
from obbcollide.shapes import Hull

from .._bodies import box_body, ground_body

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def direct_answer(name, a, pa, b, pb):
    """The chosen algorithm's touching answer, by the library functions called directly."""
    if name == "sat":
        m = collide_hull_hull(a.poly, pa, b.poly, pb, margin=0.0)
        return bool(len(m.depths)) and m.depths.max() >= 0.0
    if name == "gjk":
        return convex_penetration(a.core, pa, b.core, pb).depth >= 0.0
    if name == "vector-symbol":
        return vector_symbol_yes(a, pa, b, pb)
    return touch_hull_hull_brute(a, pa, b, pb).touching


def direct_counts(world, name):
    """The comparison's counts, computed here from scratch."""
    margin = world.manager.margin
    counts = dict.fromkeys(CLASSES, 0)
    pairs = others = 0
    for i, j in world.candidate_pairs.tolist():
        a, b = world.bodies[i], world.bodies[j]
        if not a.shapes or not b.shapes or (a.motion == "static" and b.motion == "static"):
            continue
        for p, sa in enumerate(a.shapes):
            for q, sb in enumerate(b.shapes):
                if not (isinstance(sa, Hull) and isinstance(sb, Hull)):
                    others += 1
                    continue
                va = sa.poly.vertices @ a.pose[:3, :3].T + a.pose[:3, 3]
                vb = sb.poly.vertices @ b.pose[:3, :3].T + b.pose[:3, 3]
                if np.any(va.min(0) > vb.max(0) + margin) or np.any(vb.min(0) > va.max(0) + margin):
                    continue
                pairs += 1
                chosen = direct_answer(name, sa, a.pose, sb, b.pose)
                ref = touch_hull_hull_brute(sa, a.pose, sb, b.pose).touching
                counts[("both" if ref else "chosen_only") if chosen else ("reference_only" if ref else "neither")] += 1
    return pairs, others, counts


@pytest.fixture(scope="module")
def stacks():
    world, errors = load_scene(scene_registry()["stacks"])
    assert errors == []
    for _ in range(20):  # the boxes settle on each other (and some start to sleep)
        world.frame(1 / 60)
    return world


@pytest.mark.parametrize("name", ALGORITHMS)
def test_the_counts_equal_a_direct_computation_on_the_same_frame(stacks, name):
    world = stacks
    world.narrow_choice = NarrowPhaseChoice(name, compare=True)
    world.frame(1 / 60)
    got = world.narrow_choice.counts
    pairs, others, counts = direct_counts(world, name)
    assert pairs > 20  # the column and the pyramid: boxes on boxes
    assert got["pairs"] == got["answered"] == pairs
    assert got["others"] == others
    assert {k: got[k] for k in CLASSES} == counts
    assert got["touching"] == counts["both"] + counts["chosen_only"]
    assert counts["both"] > 20  # resting boxes touch (the solver's slop)
    assert len(world.narrow_choice.disagreements) == counts["chosen_only"] + counts["reference_only"]


def two_box_world(offset):
    """Two equal kinematic unit boxes, B at ``offset`` from A, and a ground far below."""
    bodies = [box_body("A", [0.5, 0.5, 0.5], (0, 2, 0)), box_body("B", [0.5, 0.5, 0.5], np.add((0, 2, 0), offset)),
              ground_body()]
    world = World(bodies, exact=False)
    world.collide()
    return world


def test_a_vector_symbol_disagreement_is_classified_and_listed_with_its_depth():
    world = two_box_world((0.6, 0, 0))  # its degenerate case: overlapping by 0.4, faces coplanar
    choice = world.narrow_choice
    choice.set_algorithm("vector-symbol")
    choice.compare = True
    choice.run(world)
    c = choice.counts
    assert (c["pairs"], c["reference_only"], c["both"], c["chosen_only"], c["neither"]) == (1, 1, 0, 0, 0)
    (d,) = choice.disagreements
    assert (d["a"], d["b"], d["kind"]) == ("A", "B", "reference_only")
    assert d["depth"] == pytest.approx(0.4, abs=1e-9)
    np.testing.assert_allclose(d["centers"], [[0, 2, 0], [0.6, 2, 0]], atol=1e-12)
    summary = choice.summary()
    assert summary["algorithm"] == "vector-symbol" and summary["reference"] == "triangles"
    assert (summary["agree"], summary["disagree"]) == (0, 1)
    assert summary["disagreements"][0]["kind"] == "reference_only"
    json.dumps(summary)  # what the report writes


def test_boxes_whose_aabbs_overlap_but_apart_are_candidates_and_all_say_neither():
    from app.world.world import rotation

    world = two_box_world((0.9, 0, 0.9))
    world.bodies[1].pose[:3, :3] = rotation((0, 1, 0), np.pi / 4)  # a diamond seen from above: 65 mm apart
    world.collide()
    hulls, others = candidate_piece_pairs(world)
    assert hulls == [(0, 1, 0, 0)] and others == 0
    gap = -convex_penetration(world.bodies[0].shapes[0].core, world.bodies[0].pose,
                              world.bodies[1].shapes[0].core, world.bodies[1].pose).depth
    assert gap == pytest.approx(0.4 * np.sqrt(2) - 0.5, abs=1e-9)  # along the diagonal: A's corner to B's face
    for name in ALGORITHMS:
        choice = NarrowPhaseChoice(name, compare=True)
        choice.run(world)
        assert choice.counts["neither"] == 1 and not choice.disagreements, name
    assert candidate_piece_pairs(two_box_world((1.005, 0, 0)))[0] == []  # AABBs apart: no candidate


def test_nothing_runs_by_default_and_the_cap_keeps_the_true_count(stacks, monkeypatch):
    world = stacks
    world.narrow_choice = NarrowPhaseChoice()
    assert not world.narrow_choice.active

    def refuse(*_):
        raise AssertionError("the comparison ran while off")

    monkeypatch.setattr(NarrowPhaseChoice, "run", refuse)
    world.frame(1 / 60)
    monkeypatch.undo()
    choice = NarrowPhaseChoice("gjk", compare=True, max_pairs=5)
    choice.run(world)
    assert choice.counts["answered"] == 5 and choice.counts["pairs"] > 5
    assert sum(choice.counts[k] for k in CLASSES) == 5


def test_bad_names_are_refused():
    with pytest.raises(ValueError, match="narrow phase: expected one of sat, gjk, vector-symbol, triangles"):
        NarrowPhaseChoice("epa")
    with pytest.raises(ValueError, match="response: expected one of sat, gjk"):
        NarrowPhaseChoice().set_response("triangles")


def test_the_gjk_response_gives_one_point_manifolds_for_hull_pairs():
    world = two_box_world((0.3, 0.99, 0.1))  # B rests on A, 1 cm deep
    sat = [pm.manifold for pm in world.manifolds if pm.b.name == "B"]
    assert len(sat) == 1 and len(sat[0].depths) == 4
    world.narrow_choice.set_response("gjk", world)
    world.collide()
    (m,) = [pm.manifold for pm in world.manifolds if pm.b.name == "B"]
    assert len(m.depths) == 1 and m.kind == "gjk"
    assert m.depths[0] == pytest.approx(0.01, abs=1e-9)
    assert "falls" in response_text(world.narrow_choice)
    assert "SAT" in response_text(NarrowPhaseChoice("vector-symbol"))


def test_the_command_line_names_agree_and_a_bad_one_is_refused():
    from app.__main__ import NARROW_PHASE_NAMES, _parser

    assert NARROW_PHASE_NAMES == ALGORITHMS
    args = _parser().parse_args(["--narrow-phase", "vector-symbol", "--narrow-compare", "--narrow-response", "gjk"])
    assert (args.narrow_phase, args.narrow_compare, args.narrow_response) == ("vector-symbol", True, "gjk")
    assert _parser().parse_args([]).narrow_phase == "sat"
    r = subprocess.run([sys.executable, "-m", "app", "--narrow-phase", "epa", "--demo"], cwd=ROOT,
                       env=dict(os.environ, OBBCOLLIDE_NO_BOOTSTRAP="1"), capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--narrow-phase: invalid choice: 'epa'" in r.stderr


def test_the_report_carries_the_per_frame_counts(tmp_path):
    rep = tmp_path / "report.json"
    env = dict(os.environ, OBBCOLLIDE_NO_BOOTSTRAP="1")
    env.pop("DISPLAY", None)
    r = subprocess.run([sys.executable, "-m", "app", "--scene", "stacks", "--headless", "--frames", "4",
                        "--narrow-phase", "gjk", "--narrow-compare", "--report", str(rep), "--size", "320x240"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    frames = json.loads(rep.read_text())["frames"]
    assert len(frames) == 4
    for f in frames:
        n = f["narrow_phase"]
        assert (n["algorithm"], n["reference"], n["response"], n["compare"]) == ("gjk", "triangles", "sat", True)
        assert n["agree"] + n["disagree"] == n["answered"] == sum(n[k] for k in CLASSES) > 0
    off = tmp_path / "off.json"
    r = subprocess.run([sys.executable, "-m", "app", "--scene", "stacks", "--headless", "--frames", "2",
                        "--report", str(off), "--size", "320x240"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert all("narrow_phase" not in f for f in json.loads(off.read_text())["frames"])
