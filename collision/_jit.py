"""The one place that decides how hot loops are compiled.

Every kernel in :mod:`collision` is decorated with :func:`njit`, which is
``numba.njit(cache=True, fastmath=False)``: results are cached on disk next to
the sources (``__pycache__``), so only the first run of a checkout pays the
compile time. ``fastmath`` stays off: the geometric predicates rely on exact
IEEE behaviour (signed zeros, no reassociation).

With ``NUMBA_DISABLE_JIT=1`` numba hands back the plain Python functions and
every result stays the same, only slower; the test-suite runs a subset that way.

``borrow=True`` compiles a kernel without numba's reference counting (its
``_nrt`` option off). numba counts references on every array a compiled
function takes or cuts a view of: an atomic add and subtract each, at entry
and exit and around every branch that uses it. In a small kernel called once
per pair or point in a hot loop (a pose check, a cached separating-axis test,
a box-box manifold) those calls cost as much as the geometry or more: measured
(``benchmarks/bench_box_box.py``, one thread), a resting box pair through the
general hull kernel took 9.2 us with counting and 4.2 without, through the box
route 5.0 and 2.9; the solver's warm start of 364 points 77 us and 5.8. A borrowing kernel
only *borrows* its arrays from the caller, who holds them for the call, so it
must allocate nothing (numba refuses to compile ``np.empty`` there) and return
no array; it may cut views of its arguments for its own use, as long as none
outlives the call. The results are the same bit for bit.
"""

from numba import njit as _numba_njit

__all__ = ["njit"]


def njit(func=None, *, borrow=False, **kwargs):
    """``numba.njit`` with the project's defaults (``cache=True``).

    Usable bare (``@njit``) or with options (``@njit(inline="always")``, ``@njit(borrow=True)``: see
    the module docstring).
    """
    if borrow:
        kwargs["_nrt"] = False
    kwargs.setdefault("cache", True)
    kwargs.setdefault("fastmath", False)
    if func is None:
        return _numba_njit(**kwargs)
    return _numba_njit(**kwargs)(func)
