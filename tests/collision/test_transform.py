"""Pose checks (collision/transform.py): what every query accepts as a 4x4 pose."""

import numpy as np
import pytest

from obbcollide.transform import POSE_ERRORS, as_pose, check_pose_kernel, checked_pose

from .._reference import random_rotation


def pose(rot=None, t=(0.0, 0.0, 0.0)):
    p = np.eye(4)
    if rot is not None:
        p[:3, :3] = rot
    p[:3, 3] = t
    return p


@pytest.mark.parametrize("seed", range(20))
def test_rigid_poses_pass(seed):
    rng = np.random.default_rng(seed)
    p = pose(random_rotation(rng), rng.normal(size=3) * 1e3)
    assert check_pose_kernel(p) == 0
    assert checked_pose(p.tolist(), "pose") is not None


@pytest.mark.parametrize("change, code", [
    (lambda p: p.__setitem__((0, 3), np.nan), 1),
    (lambda p: p.__setitem__((1, 1), np.inf), 1),
    (lambda p: p.__setitem__((0, 0), 2.0), 2),                      # scaled
    (lambda p: p.__setitem__((2, 2), -1.0), 2),                     # a reflection: det -1
    (lambda p: p.__setitem__((3, 0), 0.5), 2),                      # projective last row
    (lambda p: p.__setitem__((0, 1), 1e-3), 2),                     # sheared beyond 1e-6
])
def test_bad_poses_are_named(change, code):
    p = np.eye(4)
    change(p)
    assert check_pose_kernel(p) == code
    with pytest.raises(ValueError, match=r"pose_b: " + POSE_ERRORS[code].split(" (")[0]):
        checked_pose(p, "pose_b")


def test_within_the_rigidity_tolerance():
    p = np.eye(4)
    p[0, 1] = 1e-8
    assert check_pose_kernel(p) == 0


@pytest.mark.parametrize("bad", [np.eye(3), "pose", [[1, 2], [3, 4]], np.zeros((4, 4, 1))])
def test_wrong_shapes_and_types(bad):
    with pytest.raises(ValueError, match="the_pose"):
        as_pose(bad, "the_pose")
