"""Queries between posed OBB trees: collide, distance, within, ray cast.

One module per query: :mod:`collision.mesh_collide` (which triangles meet),
:mod:`collision.mesh_distance` (distance, within), :mod:`collision.mesh_ray`
(ray cast) and :mod:`collision.mesh_containment` (a closed mesh inside
another), on the node-pair pieces of :mod:`collision.tree_pair`. This module
gathers their names where they have always been importable.
"""

from .mesh_collide import (CollideResult, _scratch, collide, collide_kernel, collide_trace, first_contact_kernel,
                           trace_kernel)
from .mesh_containment import _PARITY_DIRS, _containment, _inside, parity_kernel
from .mesh_distance import DistanceResult, _distance, _heap_pop, _heap_push, distance, distance_kernel, within
from .mesh_ray import RayHit, ray_cast, ray_kernel
from .tree_pair import (_a_frame, _apply, _b_frame, _descend_a, _frame_in_a, _frame_in_b, _overlap_in,
                        _overlap_rel, _overlap_terms, _pose, _relative_t, _tree, _tri, boxes_gap2, boxes_overlap,
                        pose_status)

__all__ = ["CollideResult", "DistanceResult", "RayHit", "collide", "collide_trace", "distance", "within",
           "ray_cast"]
