"""obbcollide: exact, compiled collision-detection primitives and queries.

The library knows nothing of windows or worlds: it takes arrays (float64,
``(3,)`` for one query or ``(n, 3)`` for a batch) and returns arrays or small
result objects. Hot loops are compiled with numba and cached on disk.

Sources: Ericson, *Real-Time Collision Detection* (RTCD), chapters 4 and 5;
Zhang, Ma and Yu, *Vector symbol analysis for collision detection of models in
three dimensions* (the vector-symbol method); Gottschalk, Lin and Manocha,
*OBBTree*.
"""

__version__ = "0.1.0"

from . import threads  # first: its OpenMP wait policy must be set before numba's thread pool starts

from .closest_point import (
    closest_pt_point_aabb,
    closest_pt_point_obb,
    closest_pt_point_plane,
    closest_pt_point_ray,
    closest_pt_point_rect,
    closest_pt_point_segment,
    closest_pt_point_sphere,
    closest_pt_point_tetrahedron,
    closest_pt_point_triangle,
)
from .closest_pair import (
    closest_pt_line_line,
    closest_pt_segment_segment,
    closest_pt_segment_triangle,
)
from .convex import ConvexPolyhedron, closest_pt_point_convex
from .obb import OBB, test_obb_obb
from .segment2d import intersect_segment_segment_2d, signed_2d_tri_area
from .triangle import closest_pt_triangle_triangle, intersect_triangle_triangle, test_triangle_triangle

__all__ = [
    "closest_pt_point_plane",
    "closest_pt_point_ray",
    "closest_pt_point_segment",
    "closest_pt_point_sphere",
    "closest_pt_point_aabb",
    "closest_pt_point_obb",
    "closest_pt_point_rect",
    "closest_pt_point_triangle",
    "closest_pt_point_tetrahedron",
    "closest_pt_point_convex",
    "closest_pt_line_line",
    "closest_pt_segment_segment",
    "closest_pt_segment_triangle",
    "closest_pt_triangle_triangle",
    "signed_2d_tri_area",
    "intersect_segment_segment_2d",
    "OBB",
    "test_obb_obb",
    "test_triangle_triangle",
    "intersect_triangle_triangle",
    "ConvexPolyhedron",
]

from .sat import SatResult, convex_convex_sat
from .vector_symbol import (
    StandardModel,
    VectorSymbolResult,
    model_collision_factor,
    polygon_intersection_factor,
    position_factor,
    vector_symbol_collide,
)

__all__ += [
    "SatResult",
    "convex_convex_sat",
    "StandardModel",
    "VectorSymbolResult",
    "position_factor",
    "polygon_intersection_factor",
    "model_collision_factor",
    "vector_symbol_collide",
]

from .mesh_query import CollideResult, DistanceResult, RayHit, collide, distance, ray_cast, within
from .obb_tree import OBBTree

__all__ += ["OBBTree", "collide", "distance", "within", "ray_cast", "CollideResult", "DistanceResult", "RayHit"]

from .broad_phase import (BROAD_PHASES, BroadPhase, BruteForce, DynamicAABBTree, Octree, SweepAndPrune, UniformGrid,
                          make_broad_phase)

__all__ += ["BroadPhase", "BruteForce", "SweepAndPrune", "UniformGrid", "Octree", "DynamicAABBTree", "BROAD_PHASES",
            "make_broad_phase"]

from .contact_match import match_contacts
from .contact_reduce import reduce_contacts
from .convex_mesh import collide_convex_trimesh
from .epa import PenetrationResult, convex_penetration
from .gjk import GjkResult, gjk_distance
from .hull_batch import HullTable, ManifoldBatch, collide_hull_pairs
from .hull_data import HullData
from .manifold import Manifold, SatCache, collide_hull_hull
from .narrow_phase import PairCache, UnsupportedPair, collide_shapes
from .shapes import Capsule, HalfSpace, Hull, Sphere, TriMesh, box_hull
from .tree_box_query import triangles_near_box

__all__ += ["HullTable", "ManifoldBatch", "collide_hull_pairs", "gjk_distance", "GjkResult", "convex_penetration", "PenetrationResult", "HullData", "Manifold",
            "SatCache", "collide_hull_hull", "match_contacts", "reduce_contacts", "collide_shapes", "PairCache",
            "UnsupportedPair", "Sphere", "Capsule", "Hull", "HalfSpace", "TriMesh", "box_hull",
            "collide_convex_trimesh", "triangles_near_box"]

from . import batch
from .manager import CollisionManager, ContactData, DistanceData

__all__ += ["batch", "CollisionManager", "ContactData", "DistanceData"]
