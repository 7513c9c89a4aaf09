"""Broad phase: which pairs of world AABBs overlap, once per step.

Every implementation follows one protocol (:class:`BroadPhase`)::

    bp = make_broad_phase("tree")          # or "brute", "sap", "grid", "octree"
    pairs = bp.update(lo, hi)              # lo, hi : (n, 3) float64; pairs : (k, 2) int64
    bp.stats["box_tests"]

``update`` returns ALL overlapping pairs ``(i, j)``, ``i < j``, rows sorted,
for closed boxes (touching overlaps); indices are stable between calls and a
change of ``n`` rebuilds. Every implementation returns exactly the brute-force
pair set (tests/collision/test_broad_phase.py); they differ in cost:

=========  ============================================  ==========================
name       idea                                          source
=========  ============================================  ==========================
brute      all n(n-1)/2 tests, the reference             Jolt's BroadPhaseBruteForce
sap        sort-and-sweep, end points insertion-sorted   RTCD 7.5, Baraff 1992
grid       hashed uniform grid, oversized-box list       RTCD 7.1, Teschner 2003
octree     boxes at the deepest containing node          RTCD 7.3
tree       dynamic AABB tree of fat boxes, SAH, AVL      Box2D b2DynamicTree idea
=========  ============================================  ==========================

For a world of moving bodies ``tree`` is the one to use (it does work only for
bodies that left their fat boxes); ``grid`` is close when the boxes have
similar sizes; ``benchmarks/bench_broad_phase.py`` measures them all against
python-fcl and pybullet. A change of ``n`` rebuilds (tree: ~10 ms at 5000).
"""

from __future__ import annotations

from .._validate import _show
from ._base import BroadPhase, check_boxes
from .aabb_tree import DynamicAABBTree
from .brute_force import BruteForce
from .grid import UniformGrid
from .octree import Octree
from .sweep_and_prune import SweepAndPrune

__all__ = [
    "BroadPhase",
    "BruteForce",
    "SweepAndPrune",
    "UniformGrid",
    "Octree",
    "DynamicAABBTree",
    "BROAD_PHASES",
    "make_broad_phase",
    "check_boxes",
]

BROAD_PHASES: dict[str, type[BroadPhase]] = {
    "brute": BruteForce,
    "sap": SweepAndPrune,
    "grid": UniformGrid,
    "octree": Octree,
    "tree": DynamicAABBTree,
}


def make_broad_phase(name: str, **options: float | None) -> BroadPhase:
    """A new broad phase by registry name.

    Parameters
    ----------
    name : str
        One of ``BROAD_PHASES`` (``"brute"``, ``"sap"``, ``"grid"``,
        ``"octree"``, ``"tree"``).
    **options
        Passed to the class (e.g. ``cell_size=`` for ``"grid"``,
        ``margin_rel=`` for ``"tree"``).

    Raises
    ------
    ValueError
        For an unknown name (the message lists the choices) or a bad option.
    """
    try:
        cls = BROAD_PHASES[name]
    except (KeyError, TypeError):
        choices = ", ".join(repr(k) for k in BROAD_PHASES)
        raise ValueError(f"name: unknown broad phase {_show(name)}; choose one of {choices}") from None
    try:
        return cls(**options)
    except TypeError as exc:
        raise ValueError(f"options: {exc}") from None
