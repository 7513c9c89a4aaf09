"""The yes / no walk's order and stack, and the batch's pose check, against plain references.

* :func:`obbcollide.mesh_collide.first_contact_walk` (nearer child first, a stack of
  fixed length that restarts the walk on a longer one when it runs out) against brute force
  over every triangle pair, on random poses of small meshes; the pair it stops at meets;
* the child-order helpers of :mod:`obbcollide.tree_pair` against numpy;
* ``batch.check_poses`` (one compiled loop) against the single-pose check
  (:func:`obbcollide.transform.check_pose_kernel`) applied pose by pose.
"""

import functools

import numpy as np
import pytest
import trimesh
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from obbcollide import OBBTree, batch
from obbcollide.mesh_collide import first_contact_walk
from obbcollide.transform import POSE_ERRORS, check_pose_kernel
from obbcollide.tree_pair import _apply, _apply_inverse, _relative_t, _second_nearer
from obbcollide.triangle import test_triangle_triangle

SETTINGS = dict(deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

MESHES = {
    "sphere": lambda: trimesh.creation.icosphere(1, radius=0.5),
    "torus": lambda: trimesh.creation.torus(0.5, 0.15, major_sections=12, minor_sections=6),
    "box": lambda: trimesh.creation.box((0.8, 0.3, 0.5)),
    "capsule": lambda: trimesh.creation.capsule(0.6, 0.2, count=[6, 6]),
}


@functools.lru_cache(maxsize=None)
def tree(name, leaf):
    m = MESHES[name]()
    return OBBTree(np.array(m.vertices, float), np.array(m.faces), leaf_size=leaf)


def rotation(q):
    w, x, y, z = np.asarray(q, float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def pose(q, offset):
    p = np.eye(4)
    p[:3, :3] = rotation(q)
    p[:3, 3] = offset
    return p


quats = st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(lambda q: np.linalg.norm(q) > 0.1)
offsets = st.lists(st.floats(-1.2, 1.2), min_size=3, max_size=3)


@settings(max_examples=120, **SETTINGS)
@given(qa=quats, qb=quats, oa=offsets, ob=offsets, names=st.sampled_from(sorted(MESHES)),
       other=st.sampled_from(sorted(MESHES)), leaf=st.sampled_from([1, 3]), rows=st.sampled_from([1, 2, 64]))
def test_walk_equals_brute_force(qa, qb, oa, ob, names, other, leaf, rows):
    ta, tb = tree(names, leaf), tree(other, leaf)
    pa, pb = pose(qa, oa), pose(qb, ob)
    r, t = _relative_t(pa, pb)
    stack = np.empty((rows, 2), np.int64)  # 1 or 2 rows: the walk must restart on longer stacks
    hit, box_tests, tri_tests, _, i, j = first_contact_walk(*ta.arrays, *tb.arrays, r, t, stack)
    # Brute force in A's model frame: every triangle of A against every triangle of B placed there.
    rm, tv = np.array(r), np.array(t)
    tri_b = tb.triangles @ rm.T + tv
    every = test_triangle_triangle(ta.triangles[:, None], tri_b[None, :])
    assert hit == bool(every.any())
    assert box_tests >= 1 and tri_tests >= int(hit)
    if hit:
        assert every[i, j]  # the pair it stopped at is one of the intersecting pairs


@settings(max_examples=200, **SETTINGS)
@given(q=quats, off=offsets, p=offsets)
def test_apply_inverse_undoes_apply(q, off, p):
    rm = rotation(q)
    r = tuple(tuple(row) for row in rm)
    t = tuple(off)
    back = _apply_inverse(r, t, _apply(r, t, tuple(p)))
    assert np.allclose(back, p, rtol=0, atol=1e-12)
    assert np.allclose(_apply_inverse(r, t, tuple(p)), rm.T @ (np.array(p) - np.array(off)), rtol=0, atol=1e-12)


@settings(max_examples=200, **SETTINGS)
@given(c0=offsets, c1=offsets, p=offsets)
def test_second_nearer_compares_centre_distances(c0, c1, p):
    nodes = np.zeros((3, 16))
    nodes[1, :3] = c0
    nodes[2, :3] = c1
    d0 = np.sum((np.array(c0) - p) ** 2)
    d1 = np.sum((np.array(c1) - p) ** 2)
    assert _second_nearer(nodes, 1, tuple(p)) == (d1 < d0)


def single_check_index(flat, name):
    """The first pose (flat index) that the single-pose check refuses, NaN first, and its message."""
    codes = [check_pose_kernel(p) for p in flat]
    for want in (1, 2):
        if want in codes:
            return codes.index(want), f"{name}: {POSE_ERRORS[want]}"
    return None


SPOILS = ["ok", "nan", "inf", "scale", "reflect", "shear_small", "shear_big", "last_row", "translate_big"]


def spoil(p, how, rng):
    p = p.copy()
    if how == "nan":
        p[rng.integers(0, 3), rng.integers(0, 4)] = np.nan
    elif how == "inf":
        p[rng.integers(0, 3), rng.integers(0, 4)] = -np.inf
    elif how == "scale":
        p[:3, rng.integers(0, 3)] *= 1.01
    elif how == "reflect":
        p[:3, 0] *= -1.0
    elif how == "shear_small":  # within the 1e-6 tolerance: still rigid
        p[0, 1] += 1e-8
    elif how == "shear_big":
        p[0, 1] += 1e-4
    elif how == "last_row":
        p[3, rng.integers(0, 4)] += 0.5
    elif how == "translate_big":  # a rigid pose far away: accepted
        p[:3, 3] = 1e3
    return p


@settings(max_examples=150, **SETTINGS)
@given(spoils=st.lists(st.sampled_from(SPOILS), min_size=1, max_size=12), seed=st.integers(0, 2 ** 31),
       shape=st.sampled_from([None, (3, 4), (12,)]))
def test_check_poses_names_the_pose_the_single_check_refuses(spoils, seed, shape):
    rng = np.random.default_rng(seed)
    flat = np.array([spoil(pose(rng.normal(size=4), rng.uniform(-1, 1, 3)), how, rng) for how in spoils])
    arr = flat
    if shape is not None:
        n = int(np.prod(shape))
        arr = np.concatenate([flat, np.tile(np.eye(4), (n - len(flat), 1, 1))]) if n >= len(flat) else flat[:n]
        flat = arr
        arr = arr.reshape(shape + (4, 4))
    want = single_check_index(flat, "pose_a")
    if want is None:
        assert batch.check_poses(arr, "pose_a") is arr
        return
    k, message = want
    where = "" if arr.ndim == 2 else "[" + ",".join(str(int(i)) for i in np.unravel_index(k, arr.shape[:-2])) + "]"
    expected = message.replace("pose_a:", f"pose_a{where}:")
    with pytest.raises(ValueError) as err:
        batch.check_poses(arr, "pose_a")
    assert str(err.value) == expected
