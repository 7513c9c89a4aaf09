"""match_contacts: hand-made cases and a brute-force reference.

Reference: a Python loop over the documented rule (each new contact takes the
first unclaimed old contact of equal id, then, for those left in order, the
nearest unclaimed old contact within ``tol``). The end-to-end case (a tiny
motion of a resting box keeps every id) is in tests/collision/test_manifold.py.
"""

import numpy as np
import pytest

from obbcollide.contact_match import match_contacts


def test_match_contacts_by_id_then_by_distance():
    old_ids = np.array([10, 11, 12, 13])
    old_pts = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0.0]])
    new_ids = np.array([12, 99, 98, 10, 97])
    new_pts = np.array([[5, 5, 5], [1.05, 0, 0], [1.0, 0.02, 0], [0, 0, 0.0], [3, 3, 3]])
    idx = match_contacts(old_ids, old_pts, new_ids, new_pts, tol=0.1)
    # 12 and 10 by id (wherever they are); 99 takes old 11 (nearest, 0.05 away);
    # 98 is also near old 11 but it is claimed, and old 13 is too far; 97 is new.
    np.testing.assert_array_equal(idx, [2, 1, -1, 0, -1])
    assert match_contacts([], np.zeros((0, 3)), [1], [[0, 0, 0]], 1.0).tolist() == [-1]
    with pytest.raises(ValueError, match="old_points"):
        match_contacts([1, 2], [[0, 0, 0]], [1], [[0, 0, 0]], 1.0)
    with pytest.raises(ValueError, match="tol"):
        match_contacts([1], [[0, 0, 0]], [1], [[0, 0, 0]], -1.0)


def test_match_contacts_against_brute_force():
    rng = np.random.default_rng(9)
    for _ in range(200):
        m, k = rng.integers(0, 6, size=2)
        oi, ni = rng.integers(0, 5, m), rng.integers(0, 5, k)
        oi = np.unique(oi)
        m = len(oi)
        op, nw = rng.uniform(size=(m, 3)), rng.uniform(size=(k, 3))
        got = match_contacts(oi, op, ni, nw, 0.4)
        # Brute force: ids first (first unclaimed equal id), then greedy nearest in order.
        want, used = [-1] * k, set()
        for i in range(k):
            for j in range(m):
                if j not in used and oi[j] == ni[i]:
                    want[i] = j
                    used.add(j)
                    break
        for i in range(k):
            if want[i] < 0:
                cands = [(np.linalg.norm(nw[i] - op[j]), j) for j in range(m) if j not in used]
                cands = [c for c in cands if c[0] <= 0.4]
                if cands:
                    want[i] = min(cands)[1]
                    used.add(want[i])
        assert got.tolist() == want
