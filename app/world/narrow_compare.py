"""The narrow phase the user chooses, compared pair by pair with the exact reference.

The world's contacts come from SAT manifolds (:mod:`app.world.contacts`). The
library has three more answers to "do these two convex pieces touch?"
(:mod:`collision.hull_touch`): GJK / EPA, the vector-symbol method of seed 003,
and the exact triangle test through the pieces' OBB trees, the reference.
:class:`NarrowPhaseChoice` (the world's :attr:`app.world.world.World.narrow_choice`)
holds the chosen one and, once per frame when it is active, answers every
candidate piece pair with it and, when the comparison is on, with the
reference too:

- *candidate piece pairs*: the hull pieces of the broad phase's candidate body
  pairs whose world AABBs come within the contact margin (a pair that touches
  always does). Pairs with a sphere, a capsule, a ground (half-space) or a
  static triangle mesh are counted, not compared: the vector-symbol method and
  the triangle reference need two polyhedra;
- the counts by class: both touch, neither, chosen only, reference only;
- the disagreeing pairs, each with its signed distance by GJK / EPA (exact for
  two convex pieces: > 0 penetration, < 0 gap).

What it changes: the answers shown (counts, overlay, report). The response
(the solver's contacts) uses SAT manifolds unless :attr:`NarrowPhaseChoice.response`
is ``"gjk"`` (the world's contact manager then builds one-point GJK / EPA
manifolds for hull pairs); the vector-symbol method and the triangle test
give no contact points, so they cannot drive it.

Cost: nothing when the algorithm is ``"sat"`` and the comparison is off (the
default); otherwise one call per pair and algorithm, at most
:attr:`NarrowPhaseChoice.max_pairs` pairs per frame (the true count is kept
beside the cap).
"""

import math
import time

import numpy as np

from obbcollide.epa import convex_penetration
from obbcollide.hull_touch import TOUCH_ALGORITHMS, touch_hull_hull
from obbcollide.shapes import Hull, shape_world_aabb

__all__ = ["ALGORITHMS", "REFERENCE", "CLASSES", "RESPONSES", "NarrowPhaseChoice", "candidate_piece_pairs",
           "WHY_DISAGREE", "response_text"]

ALGORITHMS = tuple(TOUCH_ALGORITHMS)  # sat, gjk, vector-symbol, triangles
REFERENCE = "triangles"
CLASSES = ("both", "neither", "chosen_only", "reference_only")
RESPONSES = ("sat", "gjk")  # what may build the solver's contacts
MAX_PAIRS = 200  # pairs answered per frame by default (0.05 to 0.4 ms each, benchmarks/bench_narrow_compare.py)

WHY_DISAGREE = (
    "Why answers can differ: only within rounding of touching, where each algorithm's tolerance "
    "decides (SAT takes faces 1e-13 apart as apart, GJK / EPA calls them touching, the triangle test "
    "counts contact within 1e-12 of the size); the vector-symbol method counts touching as not "
    "colliding and misses degenerate overlaps (equal boxes offset along one axis: faces coplanar or "
    "meeting along an edge). The solver keeps resting pieces sunk by up to its 5 mm slop and others "
    "apart, so pairs seldom come that close. The reference is exact on the pieces' hull triangles, "
    "not on the body's own mesh: a concave body's pieces may touch where its mesh does not.")


def response_text(choice):
    """A sentence: what the solver's contacts come from under ``choice``."""
    if choice.response == "gjk":
        return ("Response: GJK / EPA one-point manifolds for hull pairs (round shapes and grounds as "
                "always). A box rocks on one point: the stacks scene's column falls within a second.")
    extra = {"gjk": " (GJK / EPA answers are shown; letting them drive the response is a choice below)",
             "vector-symbol": " (the vector-symbol method answers yes / no only: no contact points)",
             "triangles": " (the triangle test gives intersection segments, no depth: no contact points)"}
    return "Response: SAT manifolds" + extra.get(choice.algorithm, "") + "."


def _piece_boxes(body, pad):
    """(k, 2, 3) world AABBs of ``body``'s hull pieces grown by ``pad`` (None for other shapes)."""
    out = []
    for s in body.shapes:
        if isinstance(s, Hull):
            box = shape_world_aabb(s, body.pose)
            out.append((box[0] - pad, box[1] + pad))
        else:
            out.append(None)
    return out


def candidate_piece_pairs(world, body_pairs=None):
    """The candidate piece pairs of the world's last detection.

    Parameters
    ----------
    world : app.world.world.World
    body_pairs : (k, 2) int, optional
        Body rows ``i < j``; default the broad phase's candidates of the last
        detection (grounds included).

    Returns
    -------
    hulls : list of (i, j, p, q)
        Hull piece ``p`` of body ``i`` and hull piece ``q`` of body ``j`` whose
        world AABBs come within the contact margin.
    others : int
        Piece pairs of those body pairs with another shape (sphere, capsule,
        half-space, triangle mesh): not compared.
    """
    pairs = world.candidate_pairs if body_pairs is None else body_pairs
    pairs = np.asarray(pairs, np.int64).reshape(-1, 2)
    margin = world.manager.margin
    boxes = {}
    hulls, others = [], 0
    for i, j in pairs.tolist():
        a, b = world.bodies[i], world.bodies[j]
        if not a.shapes or not b.shapes or (a.motion == "static" and b.motion == "static"):
            continue  # no narrow phase for them (as app.world.contacts: static against static, or no shapes)
        for k in (i, j):
            if k not in boxes:
                boxes[k] = _piece_boxes(world.bodies[k], margin / 2)
        for p, bp in enumerate(boxes[i]):
            for q, bq in enumerate(boxes[j]):
                if bp is None or bq is None:
                    others += 1
                    continue
                if np.all(bp[0] <= bq[1]) and np.all(bq[0] <= bp[1]):
                    hulls.append((i, j, p, q))
    return hulls, others


class NarrowPhaseChoice:
    """The chosen narrow-phase algorithm and its comparison with the reference.

    Attributes
    ----------
    algorithm : str
        One of :data:`ALGORITHMS`.
    compare : bool
        Answer every pair with the reference too, and count the agreements.
    response : str
        ``"sat"`` or ``"gjk"``: what builds the solver's contacts (see the
        module docstring); set through :meth:`set_response`.
    max_pairs : int
        Pairs answered per frame (the rest are counted in ``pairs`` only).
    counts : dict
        After :meth:`run`: ``pairs`` (candidate hull piece pairs), ``answered``
        (those answered, at most ``max_pairs``), ``others`` (piece pairs of
        other shapes, not compared), ``touching`` (chosen says touching), and
        when comparing, the classes of :data:`CLASSES`.
    touching : list of (i, j, p, q)
        The answered pairs the chosen algorithm says touch.
    disagreements : list of dict
        ``a, b`` (body names), ``i, j, piece_a, piece_b``, ``kind``
        (``"chosen_only"`` or ``"reference_only"``), ``depth`` (GJK / EPA
        signed distance: > 0 penetration, < 0 gap), ``centers`` ((2, 3) the
        pieces' world centres).
    seconds : float
        Time the last :meth:`run` took.
    """

    def __init__(self, algorithm="sat", compare=False, max_pairs=MAX_PAIRS):
        self.algorithm = "sat"
        self.set_algorithm(algorithm)
        self.compare = bool(compare)
        self.response = "sat"
        self.max_pairs = int(max_pairs)
        self.clear()

    def clear(self):
        self.counts = {}
        self.touching = []
        self.disagreements = []
        self.seconds = 0.0

    def set_algorithm(self, name):
        """Choose the algorithm (a name of :data:`ALGORITHMS`); a bad name is a ValueError naming them."""
        if name not in ALGORITHMS:
            raise ValueError(f"narrow phase: expected one of {', '.join(ALGORITHMS)}, got {name!r}")
        self.algorithm = name

    @property
    def active(self):
        """True when a frame has work to do (a non-default algorithm, or the comparison on)."""
        return self.algorithm != "sat" or self.compare

    def run(self, world):
        """Answer the world's candidate piece pairs (see the module docstring); fills
        :attr:`counts`, :attr:`touching` and :attr:`disagreements`."""
        t0 = time.perf_counter()
        hulls, others = candidate_piece_pairs(world)
        answered = hulls[:max(0, self.max_pairs)]
        counts = {"pairs": len(hulls), "answered": len(answered), "others": others, "touching": 0}
        if self.compare:
            counts.update(dict.fromkeys(CLASSES, 0))
        touching, disagree = [], []
        bodies = world.bodies
        for i, j, p, q in answered:
            a, b = bodies[i], bodies[j]
            sa, sb = a.shapes[p], b.shapes[q]
            chosen = touch_hull_hull(self.algorithm, sa, a.pose, sb, b.pose).touching
            if chosen:
                touching.append((i, j, p, q))
            if not self.compare:
                continue
            ref = chosen if self.algorithm == REFERENCE else \
                touch_hull_hull(REFERENCE, sa, a.pose, sb, b.pose).touching
            kind = ("both" if ref else "chosen_only") if chosen else ("reference_only" if ref else "neither")
            counts[kind] += 1
            if chosen != ref:
                depth = convex_penetration(sa.core, a.pose, sb.core, b.pose).depth
                centers = np.array([shape_world_aabb(sa, a.pose).mean(0), shape_world_aabb(sb, b.pose).mean(0)])
                disagree.append({"a": a.name, "b": b.name, "i": i, "j": j, "piece_a": p, "piece_b": q,
                                 "kind": kind, "depth": float(depth), "centers": centers})
        counts["touching"] = len(touching)
        self.counts, self.touching, self.disagreements = counts, touching, disagree
        self.seconds = time.perf_counter() - t0

    def set_response(self, name, world=None):
        """What builds the solver's contacts: ``"sat"`` (the default) or ``"gjk"`` (one-point GJK / EPA
        manifolds for hull pairs); ``world``'s contact manager follows."""
        if name not in RESPONSES:
            raise ValueError(f"response: expected one of {', '.join(RESPONSES)}, got {name!r}")
        self.response = name
        if world is not None:
            world.manager.hull_response = name

    def summary(self):
        """The report's line for this frame: the algorithm, the reference and the counts."""
        out = {"algorithm": self.algorithm, "response": self.response, "compare": self.compare}
        if self.compare:
            out["reference"] = REFERENCE
        out.update(self.counts)
        if self.compare and self.counts:
            out["agree"] = self.counts["both"] + self.counts["neither"]
            out["disagree"] = self.counts["chosen_only"] + self.counts["reference_only"]
        out["disagreements"] = [{k: d[k] for k in ("a", "b", "piece_a", "piece_b", "kind")}
                                | {"depth": d["depth"] if math.isfinite(d["depth"]) else None}
                                for d in self.disagreements[:20]]
        return out
