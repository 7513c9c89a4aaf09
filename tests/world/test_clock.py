"""The clock read from compiled code (app/world/clock.py) is time.perf_counter's clock: a compiled
reading lies between two Python readings taken around it, and readings do not go back."""

import sys
import time

import pytest
from numba import njit

from app.world.clock import DIRECT, perf_counter


@njit
def _two_readings():
    a = perf_counter()
    s = 0.0
    for k in range(1000):  # (a little work between them)
        s += k * 0.5
    return a, perf_counter(), s


def test_compiled_clock_is_perf_counter():
    _two_readings()  # (compiled first)
    for _ in range(50):
        before = time.perf_counter()
        a, b, _ = _two_readings()
        after = time.perf_counter()
        assert before <= a <= b <= after


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="CPython's perf_counter is clock_gettime on Linux")
def test_compiled_clock_calls_clock_gettime_on_linux():
    """On Linux the compiled clock is the direct C call, not the objmode fallback."""
    assert DIRECT
