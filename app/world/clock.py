"""``time.perf_counter()`` read from compiled code.

The world's one compiled call (:mod:`app.world.world_step`) reads the clock between its phases, so
that the frame's phases still add up. Numba has no clock of its own, and an ``objmode`` block that
calls :func:`time.perf_counter` takes the GIL, unpickles its callee and boxes its result: 0.63 us
a reading measured here, two readings a step. Where ``perf_counter`` is ``clock_gettime`` of
``CLOCK_MONOTONIC`` (Linux), :func:`perf_counter` calls that C function directly (0.035 us), so
its readings are the same clock's; elsewhere it falls back to the ``objmode`` block, and with
numba's JIT off it is :func:`time.perf_counter` itself.
"""

import sys
import time

import numba
from llvmlite import ir
from numba import njit, objmode, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["perf_counter", "DIRECT"]

# Whether time.perf_counter() is clock_gettime(CLOCK_MONOTONIC), the C call made below (on a 64-bit
# system, where struct timespec is two 64-bit words).
DIRECT = (hasattr(time, "CLOCK_MONOTONIC") and sys.maxsize > 2 ** 32
          and time.get_clock_info("perf_counter").implementation == "clock_gettime(CLOCK_MONOTONIC)")
_CLOCK_ID = int(getattr(time, "CLOCK_MONOTONIC", 1))


@intrinsic
def _clock_gettime(typingctx):
    """Seconds of ``clock_gettime(CLOCK_MONOTONIC)`` as a float64 (``tv_sec + 1e-9 tv_nsec``), by a call
    of the C library's function, which the compiled code names (so a cached compilation links it
    again in a new process)."""

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        f64 = ir.DoubleType()
        fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32), i64.as_pointer()])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")
        ts = cgutils.alloca_once(builder, i64, size=2)  # struct timespec: tv_sec, tv_nsec (both 64 bits)
        builder.call(fn, [ir.Constant(ir.IntType(32), _CLOCK_ID), ts])
        sec = builder.sitofp(builder.load(ts), f64)
        nsec = builder.sitofp(builder.load(builder.gep(ts, [ir.Constant(i64, 1)])), f64)
        return builder.fadd(sec, builder.fmul(nsec, ir.Constant(f64, 1e-9)))

    return types.float64(), codegen


if numba.config.DISABLE_JIT:  # (an intrinsic cannot run as Python)
    perf_counter = time.perf_counter
elif DIRECT:
    @njit(cache=True)
    def perf_counter():
        """``time.perf_counter()`` from compiled code: the same clock, read by a C call."""
        return _clock_gettime()
else:
    @njit(cache=True)
    def perf_counter():
        """``time.perf_counter()`` from compiled code (an ``objmode`` block: this platform's
        ``perf_counter`` is not ``clock_gettime(CLOCK_MONOTONIC)``)."""
        with objmode(t="float64"):
            t = time.perf_counter()
        return t
