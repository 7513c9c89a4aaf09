"""The one place that decides how hot loops are compiled.

Every kernel in :mod:`collision` is decorated with :func:`njit`, which is
``numba.njit(cache=True, fastmath=False)``: results are cached on disk next to
the sources (``__pycache__``), so only the first run of a checkout pays the
compile time. ``fastmath`` stays off: the geometric predicates rely on exact
IEEE behaviour (signed zeros, no reassociation).

With ``NUMBA_DISABLE_JIT=1`` numba hands back the plain Python functions and
every result stays the same, only slower; the test-suite runs a subset that way.
"""

from numba import njit as _numba_njit

__all__ = ["njit"]


def njit(func=None, **kwargs):
    """``numba.njit`` with the project's defaults (``cache=True``).

    Usable bare (``@njit``) or with options (``@njit(inline="always")``).
    """
    kwargs.setdefault("cache", True)
    kwargs.setdefault("fastmath", False)
    if func is None:
        return _numba_njit(**kwargs)
    return _numba_njit(**kwargs)(func)
