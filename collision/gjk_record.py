"""GJK recorded iteration by iteration: the simplex, its support points and the closest points.

GJK (RTCD 9.5; van den Bergen 4.3) works on the Minkowski difference ``A - B``:
each iteration asks both shapes for the support point along the search
direction ``-v`` (``v`` the point of the current simplex closest to the
origin), adds their difference to the simplex and keeps the smallest
sub-simplex that still holds the closest point (the signed-volumes step of
Montanari et al. 2017). The difference is abstract; what can be drawn is the
pair of shape points that makes each simplex vertex and the closest points
``a``, ``b`` whose difference is ``v``.

The recording reuses the real kernel (:func:`collision.gjk.gjk_kernel`): the
state after ``k`` support evaluations is exactly what the kernel returns when
it is stopped after ``k`` (``max_iter = k``), so the steps cannot drift from the
query they explain. This costs ``O(k^2)`` kernel iterations, nothing for the
handful of iterations a polytope pair needs.
"""

from dataclasses import dataclass

import numpy as np

from .gjk import GJK_MAX_ITER_REACHED, GJK_MAX_ITERATIONS, GJK_OVERLAP, gjk_kernel
from .support import check_core, check_pose, relative_transform

__all__ = ["GjkStep", "gjk_steps"]


@dataclass(frozen=True, eq=False)
class GjkStep:
    """The state of GJK after ``iteration`` support evaluations; points in world coordinates.

    Attributes
    ----------
    iteration : int
        Support evaluations done (0: only the starting support point).
    simplex : (n, 2) int32
        Index pairs ``(core point of A, core point of B)`` of the simplex, ``n = 1..4``.
    support_a, support_b : (n, 3) float64
        The points of A and of B that make each simplex vertex ``support_a - support_b``.
    vertices : (n, 3) float64
        The simplex vertices in the Minkowski difference ``A - B`` (world-frame differences).
    point_a, point_b : (3,) float64
        The closest points of the cores found so far (one common point on overlap).
    distance : float
        ``|point_a - point_b|``: an upper bound of the core distance that shrinks each step.
    next_support : (2,) int or None
        The support pair the next iteration evaluates along ``-v``, None at the last step.
    done : bool
        The last step: what :func:`collision.gjk.gjk_distance` returns.
    overlap : bool
        The cores touch or overlap (the simplex encloses the origin, or ``v`` is zero).
    """

    iteration: int
    simplex: np.ndarray
    support_a: np.ndarray
    support_b: np.ndarray
    vertices: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    distance: float
    next_support: object
    done: bool
    overlap: bool


def gjk_steps(points_a, pose_a, points_b, pose_b, max_iterations=GJK_MAX_ITERATIONS):
    """Every state GJK passes through for two core point sets (radius 0), cold started.

    Parameters
    ----------
    points_a : (na, 3) float64
        A's core points (a hull's vertices), A's model frame.
    pose_a : (4, 4) float64
        A's model-to-world rigid transform.
    points_b : (nb, 3) float64
    pose_b : (4, 4) float64
    max_iterations : int
        The kernel's cap on support evaluations.

    Returns
    -------
    list of GjkStep
        Step ``k`` after ``k`` support evaluations; the last one is the answer of
        :func:`collision.gjk.gjk_distance` with the same arguments (distance, closest points,
        simplex and iteration count).
    """
    pa = check_core(points_a, "points_a")
    pb = check_core(points_b, "points_b")
    ta = check_pose(pose_a, "pose_a")
    tb = check_pose(pose_b, "pose_b")
    rot, trans = relative_transform(ta, tb)
    none = np.zeros((0, 2), np.int32)
    simplex = np.empty((4, 2), np.int32)
    pts = np.empty((2, 3))
    ra, t_a = ta[:3, :3], ta[:3, 3]
    rb, t_b = tb[:3, :3], tb[:3, 3]
    steps = []
    for k in range(int(max_iterations) + 1):
        dist, n, iterations, status = gjk_kernel(pa, pb, rot, trans, none, 0, k, simplex, pts)
        done = status != GJK_MAX_ITER_REACHED or k == int(max_iterations)
        s = simplex[:n].copy()
        sa = pa[s[:, 0]] @ ra.T + t_a
        sb = pb[s[:, 1]] @ rb.T + t_b
        ca, cb = pts[0] @ ra.T + t_a, pts[1] @ ra.T + t_a  # both in A's frame
        steps.append(GjkStep(int(iterations), s, sa, sb, sa - sb, ca, cb, float(dist), None, done,
                             status == GJK_OVERLAP))
        if done:
            break
    for k in range(len(steps) - 1):  # what the next step added: the pair new in its simplex
        old = {tuple(p) for p in steps[k].simplex.tolist()}
        new = [tuple(p) for p in steps[k + 1].simplex.tolist() if tuple(p) not in old]
        object.__setattr__(steps[k], "next_support", new[0] if new else None)
    return steps
