"""Small 3-vector helpers on tuples, for compiled kernels.

Kernels read rows of the input arrays into ``(x, y, z)`` tuples and do their
arithmetic with these helpers: numba keeps tuples in registers, so the inner
loops allocate nothing. Plain Python runs them too (``NUMBA_DISABLE_JIT=1``).
"""

import math

from ._jit import njit


@njit(inline="always")
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(inline="always")
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(inline="always")
def scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@njit(inline="always")
def madd(a, b, s):
    """``a + s * b``."""
    return (a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2])


@njit(inline="always")
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(inline="always")
def cross(a, b):
    return (
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    )


@njit(inline="always")
def norm2(a):
    return a[0] * a[0] + a[1] * a[1] + a[2] * a[2]


@njit(inline="always")
def norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@njit(inline="always")
def row(m, i):
    """Row ``i`` of an ``(n, 3)`` array as a tuple."""
    return (m[i, 0], m[i, 1], m[i, 2])


@njit(inline="always")
def store(out, i, v):
    out[i, 0] = v[0]
    out[i, 1] = v[1]
    out[i, 2] = v[2]


@njit(inline="always")
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x
