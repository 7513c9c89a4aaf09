"""gjk_steps: GJK's states iteration by iteration, against gjk_distance on random hull pairs."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from obbcollide.gjk import gjk_distance
from obbcollide.gjk_record import gjk_steps

quats = arrays(np.float64, 4, elements=st.floats(-1.0, 1.0)).filter(lambda q: np.linalg.norm(q) > 0.1)


def pose(q, t):
    q = np.asarray(q, float) / np.linalg.norm(q)
    w, x, y, z = q
    p = np.eye(4)
    p[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                 [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                 [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    p[:3, 3] = t
    return p


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 31), qa=quats, qb=quats,
       off=arrays(np.float64, 3, elements=st.floats(-3.0, 3.0)), na=st.integers(1, 30), nb=st.integers(1, 30))
def test_steps_end_at_the_gjk_answer(seed, qa, qb, off, na, nb):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(na, 3)), rng.normal(size=(nb, 3)) * 0.7
    pa, pb = pose(qa, rng.normal(size=3) * 0.1), pose(qb, off)
    ref = gjk_distance(a, pa, b, pb)
    steps = gjk_steps(a, pa, b, pb)
    last = steps[-1]
    assert last.done and not any(s.done for s in steps[:-1])
    assert [s.iteration for s in steps] == list(range(len(steps)))
    assert last.iteration == ref.iterations
    assert last.distance == pytest.approx(ref.distance, abs=1e-12)
    assert last.overlap == ref.core_overlap
    assert np.allclose(last.point_a, ref.point_a, atol=1e-12) and np.allclose(last.point_b, ref.point_b, atol=1e-12)
    assert np.array_equal(last.simplex, ref.simplex)
    # Each step: the support points are the shapes' posed points, the distance is |a - b| and never grows.
    for s in steps:
        n = len(s.simplex)
        assert 1 <= n <= 4
        assert np.allclose(s.support_a, a[s.simplex[:, 0]] @ pa[:3, :3].T + pa[:3, 3])
        assert np.allclose(s.support_b, b[s.simplex[:, 1]] @ pb[:3, :3].T + pb[:3, 3])
        assert np.allclose(s.vertices, s.support_a - s.support_b)
        if not s.overlap:
            assert s.distance == pytest.approx(np.linalg.norm(s.point_a - s.point_b), abs=1e-9)
    d = [s.distance for s in steps]
    assert all(d[k + 1] <= d[k] + 1e-12 for k in range(len(d) - 1))
    for k in range(len(steps) - 1):  # the pair the next iteration adds is in the next simplex
        nxt = steps[k].next_support
        if nxt is not None:
            assert list(nxt) in steps[k + 1].simplex.tolist()


def test_two_unit_cubes_apart():
    cube = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    pb = np.eye(4)
    pb[:3, 3] = [3.0, 0.2, 0.1]
    steps = gjk_steps(cube, np.eye(4), cube, pb)
    assert steps[-1].distance == pytest.approx(2.0)
    assert len(steps) >= 2 and steps[0].distance > 2.0
    with pytest.raises(ValueError, match="pose_b"):
        gjk_steps(cube, np.eye(4), cube, np.zeros((4, 4)))
