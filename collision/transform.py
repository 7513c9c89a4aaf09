"""Rigid 4x4 poses: the one check every query makes of the poses it is given.

A pose is a model-to-world transform: an orthonormal rotation with
determinant +1 in the upper 3x3 block, a translation in the last column and
``0 0 0 1`` as the last row. Queries accept any array-like of that shape and
refuse NaN, infinity and anything that is not rigid, naming the argument.
"""

import math

import numpy as np

from ._jit import njit
from ._validate import MAX_COORD, as_array

__all__ = ["check_pose_kernel", "as_pose", "checked_pose", "POSE_ERRORS"]

# Messages for the codes of check_pose_kernel.
POSE_ERRORS = {1: "contains NaN or infinity",
               2: "is not a rigid transform (orthonormal rotation, det +1, last row 0 0 0 1)"}


@njit(borrow=True)
def check_pose_kernel(p):
    """0 if ``p`` (4, 4) is a finite rigid transform, 1 if not finite, 2 if not rigid
    (rotation columns orthonormal within 1e-6, determinant positive, last row 0 0 0 1)."""
    for i in range(4):
        for j in range(4):
            if not math.isfinite(p[i, j]):
                return 1
    if p[3, 0] != 0.0 or p[3, 1] != 0.0 or p[3, 2] != 0.0 or p[3, 3] != 1.0:
        return 2
    for i in range(3):
        for j in range(3):
            d = p[0, i] * p[0, j] + p[1, i] * p[1, j] + p[2, i] * p[2, j]
            if abs(d - (1.0 if i == j else 0.0)) > 1e-6:
                return 2
    det = (p[0, 0] * (p[1, 1] * p[2, 2] - p[1, 2] * p[2, 1])
           - p[0, 1] * (p[1, 0] * p[2, 2] - p[1, 2] * p[2, 0])
           + p[0, 2] * (p[1, 0] * p[2, 1] - p[1, 1] * p[2, 0]))
    if det < 0.0:
        return 2
    return 0


def as_pose(p, name):
    """``p`` as a float64 (4, 4) array (its values are checked by the kernels), or a
    ``ValueError`` naming ``name``."""
    if type(p) is np.ndarray and p.dtype == np.float64 and p.shape == (4, 4):
        x, y, z = p[0, 3], p[1, 3], p[2, 3]
        if abs(x) > MAX_COORD or abs(y) > MAX_COORD or abs(z) > MAX_COORD:  # NaN passes: the kernels say so
            raise ValueError(f"{name}: the translation reaches {max(abs(x), abs(y), abs(z)):.3g}, beyond the "
                             f"+-{MAX_COORD:.0e} float64 geometry allows (collision._validate.MAX_COORD)")
        return p
    p = as_array(p, name, finite=False)  # numbers only (no strings, bools), within MAX_COORD
    if p.shape != (4, 4):
        raise ValueError(f"{name}: expected shape (4, 4), got {p.shape}")
    return p


def checked_pose(p, name):
    """:func:`as_pose` and :func:`check_pose_kernel` together: a valid pose or a ``ValueError``."""
    p = as_pose(p, name)
    code = check_pose_kernel(p)
    if code:
        raise ValueError(f"{name}: {POSE_ERRORS[code]}")
    return p
