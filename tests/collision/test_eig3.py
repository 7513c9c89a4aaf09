"""eig_sym3 against numpy.linalg.eigh: random, scaled, repeated and special symmetric matrices.

Every decomposition is checked for descending eigenvalues equal to eigh's (to
1e-12 of the largest entry), orthonormal right-handed axes, and axes that
diagonalise the matrix. The closed-form solvers the OBB-tree build tries first
(:func:`collision.eig3._eig_fast_into`, :func:`collision.obb_fit._eig_flat_into`)
are checked through the trees they build, in tests/collision/test_obb_tree.py.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from obbcollide.eig3 import eig_sym3


def _check_eig(a):
    a = np.asarray(a, dtype=float)
    vals, axes = eig_sym3(a.copy())
    ref = np.linalg.eigh(a)[0][::-1]
    norm = max(np.abs(a).max(), 1e-300)
    assert np.all(np.diff(vals) <= 0.0), vals
    assert np.allclose(vals, ref, rtol=0, atol=1e-12 * norm), (vals, ref)
    assert np.abs(axes @ axes.T - np.eye(3)).max() < 1e-12
    assert abs(np.linalg.det(axes) - 1.0) < 1e-12
    # The rows diagonalise a: axes a axes^T = diag(values).
    d = axes @ a @ axes.T
    assert np.abs(d - np.diag(vals)).max() <= 1e-12 * norm, d


# Entries are 0 or of magnitude 1e-6 .. 1e3; extreme overall scales are the subject of
# test_eig_sym3_scale_invariant.
_ENTRY = st.one_of(st.just(0.0), st.floats(1e-6, 1e3), st.floats(-1e3, -1e-6))


@settings(max_examples=300, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(arrays(np.float64, (3, 3), elements=_ENTRY))
def test_eig_sym3_random_symmetric(m):
    _check_eig(0.5 * (m + m.T))


@pytest.mark.parametrize("scale", [1e-200, 1e-160, 1e-100, 1e100, 1e160, 1e200])
def test_eig_sym3_scale_invariant(scale):
    """eig_sym3(s a) = s eig_sym3(a) for any finite scale: the eigen-decomposition of a
    scaled matrix is the scaled decomposition. (The off-diagonal measure is a sum of
    squares, which underflows below ~1e-154 and overflows above ~1e154.)"""
    a = np.ones((3, 3)) + np.diag([0.0, 1.0, 2.0])
    vals, axes = eig_sym3(a)
    svals, saxes = eig_sym3(a * scale)
    assert np.allclose(svals / scale, vals, rtol=1e-12, atol=0), (svals / scale, vals)
    assert np.abs(np.abs(saxes @ axes.T) - np.eye(3)).max() < 1e-9
    _check_eig(a * scale)


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(q=arrays(np.float64, 4, elements=st.floats(-1, 1)).filter(lambda q: np.linalg.norm(q) > 1e-3),
       lam=st.floats(-10, 10), mu=st.floats(-10, 10), pattern=st.sampled_from(["aab", "abb", "aaa", "aba"]))
def test_eig_sym3_repeated_eigenvalues(q, lam, mu, pattern):
    q = q / np.linalg.norm(q)
    w, x, y, z = q
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    vals = [{"a": lam, "b": mu}[c] for c in pattern]
    a = r @ np.diag(vals) @ r.T
    _check_eig(0.5 * (a + a.T))


@pytest.mark.parametrize("a", [
    np.zeros((3, 3)),
    np.eye(3),
    -2.5 * np.eye(3),
    np.diag([1.0, 2.0, 3.0]),
    np.diag([3.0, 3.0, -1.0]),
    np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),  # zero diagonal
    np.array([[1e8, 1.0, 0.0], [1.0, 1e-8, 1e-9], [0.0, 1e-9, 0.0]]),  # wide range
    np.array([[2.0, 1e-20, 0.0], [1e-20, 2.0, 1e-20], [0.0, 1e-20, 2.0]]),  # nearly repeated
    np.ones((3, 3)),  # rank one
], ids=["zero", "identity", "neg_identity", "diag", "diag_repeated", "zero_diag", "wide_range",
        "near_repeated", "rank_one"])
def test_eig_sym3_special(a):
    _check_eig(a)
