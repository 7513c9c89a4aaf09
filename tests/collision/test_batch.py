"""Batched collide / distance / within: equal to the loop of single calls, broadcasting like numpy.

The reference is the library's own single-pair queries (``obbcollide.collide``,
``obbcollide.distance``, ``obbcollide.within``, tested against brute force and
python-fcl in test_mesh_query.py), called once per pose pair in a Python loop.
The batch runs the same traversals, so the answers must be equal exactly, on
any number of threads.
"""

import functools
import os
import subprocess
import sys

import numpy as np
import pytest
import trimesh
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import obbcollide
from obbcollide import OBBTree, batch

SETTINGS = dict(deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

MESHES = {
    "gear": lambda: trimesh.load("assets/meshes/gear.ply"),
    "blob": lambda: trimesh.load("assets/meshes/blob.ply"),
    "capsule": lambda: trimesh.load("assets/meshes/capsule.ply"),
    "torus": lambda: trimesh.creation.torus(0.6, 0.2),
    "sphere": lambda: trimesh.creation.icosphere(2, radius=0.2),  # fits inside the blob
}


@functools.lru_cache(maxsize=None)
def tree(name):
    m = MESHES[name]()
    return OBBTree(np.array(m.vertices, float), np.array(m.faces))


def quat_rotation(q):
    w, x, y, z = np.asarray(q, float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def pose_array(shape, seed, spread=1.0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    p = np.tile(np.eye(4), (n, 1, 1))
    for k in range(n):
        p[k, :3, :3] = quat_rotation(rng.normal(size=4))
    p[:, :3, 3] = rng.uniform(-spread, spread, (n, 3))
    return p.reshape(tuple(shape) + (4, 4))


# leading shapes that broadcast, including empty ones
SHAPE_PAIRS = [((), ()), ((), (7,)), ((7,), ()), ((7,), (7,)), ((3, 1), (4,)), ((2, 1, 3), (5, 1)),
               ((0,), ()), ((0,), (0,)), ((0, 1), (3,)), ((1,), (6,))]


def loop_reference(ta, pa, tb, pb, tol):
    lead = np.broadcast_shapes(pa.shape[:-2], pb.shape[:-2])
    A = np.broadcast_to(pa, lead + (4, 4)).reshape(-1, 4, 4)
    B = np.broadcast_to(pb, lead + (4, 4)).reshape(-1, 4, 4)
    hits = [bool(obbcollide.collide(ta, a, tb, b, first_contact=True)) for a, b in zip(A, B)]
    dists = [obbcollide.distance(ta, a, tb, b) for a, b in zip(A, B)]
    near = [obbcollide.within(ta, a, tb, b, tol) for a, b in zip(A, B)]
    return lead, hits, dists, near


@settings(max_examples=30, **SETTINGS)
@given(st.sampled_from(SHAPE_PAIRS), st.sampled_from(sorted(MESHES)), st.sampled_from(sorted(MESHES)),
       st.integers(0, 2 ** 31), st.sampled_from([0.0, 0.05, 0.3]), st.sampled_from([None, 1]))
def test_batch_equals_loop_of_single_calls(shapes, name_a, name_b, seed, tol, threads):
    ta, tb = tree(name_a), tree(name_b)
    pa = pose_array(shapes[0], seed, 0.3)
    pb = pose_array(shapes[1], seed + 1, 0.9)
    lead, hits, dists, near = loop_reference(ta, pa, tb, pb, tol)
    got = batch.collide(ta, pa, tb, pb, threads=threads)
    assert np.shape(got) == lead and np.asarray(got).dtype == np.bool_
    assert np.array_equal(np.ravel(got), hits)
    d = batch.distance(ta, pa, tb, pb, threads=threads)
    assert np.shape(d.distance) == lead and np.shape(d.point_a) == lead + (3,)
    assert np.array_equal(np.ravel(d.distance), [r.distance for r in dists])
    assert np.array_equal(np.reshape(d.point_a, (-1, 3)), np.reshape([r.point_a for r in dists], (-1, 3)))
    assert np.array_equal(np.reshape(d.point_b, (-1, 3)), np.reshape([r.point_b for r in dists], (-1, 3)))
    assert np.array_equal(np.ravel(d.triangle_a), [r.triangle_a for r in dists])
    assert np.array_equal(np.ravel(d.triangle_b), [r.triangle_b for r in dists])
    w = batch.within(ta, pa, tb, pb, tol, threads=threads)
    assert np.shape(w) == lead and np.array_equal(np.ravel(w), near)


def test_large_batch_on_all_threads_equals_loop_and_has_both_answers():
    """Big enough to run on every thread; hits, misses and containments all occur."""
    ta, tb = tree("blob"), tree("sphere")
    pb = pose_array((1000,), 11, 0.8)
    lead, hits, dists, near = loop_reference(ta, np.eye(4), tb, pb, 0.1)
    got = batch.collide(ta, np.eye(4), tb, pb)
    assert np.array_equal(got, hits)
    assert 0.1 < np.mean(hits) < 0.9
    contained = [obbcollide.collide(ta, np.eye(4), tb, p).contained is not None for p in pb]
    assert sum(contained) > 10  # the small sphere inside the closed blob collides
    assert np.array_equal(batch.collide(ta, np.eye(4), tb, pb, containment=False),
                          [h and not c for h, c in zip(hits, contained)])
    assert np.array_equal(batch.distance(ta, np.eye(4), tb, pb).distance, [r.distance for r in dists])
    assert np.array_equal(batch.within(ta, np.eye(4), tb, pb, 0.1), near)
    assert np.array_equal(batch.collide(ta, np.eye(4), tb, pb, threads=1), got)


def test_single_pose_pair_gives_scalars():
    ta, tb = tree("gear"), tree("torus")
    assert isinstance(batch.collide(ta, np.eye(4), tb, np.eye(4)), np.bool_)
    d = batch.distance(ta, np.eye(4), tb, pose_array((), 3, 3.0))
    assert np.ndim(d.distance) == 0 and d.point_a.shape == (3,)


@pytest.mark.parametrize("pose_a, pose_b, match", [
    (np.eye(3), np.eye(4), r"pose_a: expected shape \(\.\.\., 4, 4\)"),
    (np.eye(4), np.zeros((5, 4)), "pose_b"),
    (np.eye(4), "identity", "pose_b"),
    (np.tile(np.eye(4), (2, 1, 1)), np.tile(np.eye(4), (3, 1, 1)), "pose_b: shape .* does not broadcast"),
    (np.eye(4), np.where(np.arange(3)[:, None, None] == 1, np.nan, np.tile(np.eye(4), (3, 1, 1))),
     r"pose_b\[1\]: contains NaN"),
    (np.tile(np.diag([1.0, 1.0, 2.0, 1.0]), (2, 3, 1, 1)), np.eye(4), r"pose_a\[0,0\]: is not a rigid"),
    (np.diag([1.0, 1.0, -1.0, 1.0]), np.eye(4), "pose_a: is not a rigid"),
])
def test_bad_poses_name_the_argument(pose_a, pose_b, match):
    ta, tb = tree("gear"), tree("capsule")
    for call in (lambda: batch.collide(ta, pose_a, tb, pose_b), lambda: batch.distance(ta, pose_a, tb, pose_b),
                 lambda: batch.within(ta, pose_a, tb, pose_b, 0.1)):
        with pytest.raises(ValueError, match=match):
            call()


def test_bad_trees_tolerance_threads():
    t = tree("gear")
    with pytest.raises(ValueError, match="tree_a"):
        batch.collide("gear", np.eye(4), t, np.eye(4))
    with pytest.raises(ValueError, match="tree_b"):
        batch.distance(t, np.eye(4), None, np.eye(4))
    for tol in (-1.0, np.nan, "x"):
        with pytest.raises(ValueError, match="tolerance"):
            batch.within(t, np.eye(4), t, np.eye(4), tol)
    with pytest.raises(ValueError, match="threads"):
        batch.collide(t, np.eye(4), t, np.eye(4), threads=0)


NOJIT_SCRIPT = '''
import sys
import numpy as np
import trimesh
import obbcollide as c
from obbcollide import batch

g = trimesh.creation.icosphere(1, radius=0.5)
b = trimesh.creation.box((0.5, 0.5, 0.5))
ta, tb = c.OBBTree(g), c.OBBTree(b)
P = np.tile(np.eye(4), (40, 1, 1))
P[:, 0, 3] = np.linspace(-1.5, 1.5, 40)
P[:, :3, :3] = [[0.6, -0.8, 0.0], [0.8, 0.6, 0.0], [0.0, 0.0, 1.0]]
d = batch.distance(ta, np.eye(4), tb, P)
m = c.CollisionManager()
for k in range(5):
    p = np.eye(4)
    p[0, 3] = 0.7 * k
    m.add_object(k, g if k % 2 else b, p)
hit, names = m.in_collision_internal(return_names=True)
dist, pair = m.min_distance_internal(return_names=True)
np.savez(sys.argv[1], hit=batch.collide(ta, np.eye(4), tb, P), near=batch.within(ta, np.eye(4), tb, P, 0.1),
         d=d.distance, pa=d.point_a, names=np.array(sorted(names), float).reshape(-1, 2), dist=dist,
         pair=np.array(pair, float), single=m.min_distance_single(g, P[3]))
'''


def test_uncompiled_gives_the_same_answers(tmp_path):
    """NUMBA_DISABLE_JIT=1 (plain Python kernels, prange a range) answers as the compiled code."""
    out = {}
    for jit in ("0", "1"):
        env = dict(os.environ, NUMBA_DISABLE_JIT=jit, OBBCOLLIDE_NO_BOOTSTRAP="1",
                   PYTHONPATH=os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", ""))
        path = tmp_path / f"jit{jit}.npz"
        subprocess.run([sys.executable, "-c", NOJIT_SCRIPT, str(path)], env=env, check=True, timeout=900)
        out[jit] = dict(np.load(path))
    assert out["0"]["hit"].any() and not out["0"]["hit"].all() and len(out["0"]["names"])
    for key in out["0"]:
        assert np.allclose(out["0"][key], out["1"][key], rtol=0, atol=1e-12), key
