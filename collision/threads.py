"""When a batch kernel runs on numba's threads, and when on the calling thread alone.

A numba ``parallel=True`` kernel opens a parallel region (OpenMP here: the TBB
layer is not installed, so numba's default layer picks ``omp``; ``workqueue`` is
the other one) on every call, however small the loop. Every thread of the
region must run its share before the call returns, so its cost has a floor:

* a few microseconds to wake the worker threads and join them when the cores
  are free (libgomp's workers spin a while after a region, then sleep);
* on a machine whose cores are busy with other processes, a worker waits for a
  time slice of the scheduler before it starts its share, and the caller waits
  at the region's end for it: measured 13 ms for an empty region on two busy
  cores (against 0.4 us for the same loop on one thread), and a 100-body world
  step of 1.3 ms on one thread took 35 ms on two.

Each batch kernel therefore has two drivers, compiled from the same Python
function: the ``parallel=True`` one and a serial twin (:func:`serial_twin`,
where ``prange`` is a plain ``range`` and no region opens). A
:class:`ThreadChoice` per call site picks one for each call:

1. A batch of fewer than ``2 * min_per_thread`` items runs serially: each
   site's threshold asks for about 2 ms of serial work, so that the region's
   usual cost is under 1% of a threaded call (the numbers are given where each
   site makes its choice).
2. A bigger batch runs threaded, but the call is timed, and so is now and then
   a serial call of a similar batch: per item, the faster driver of the recent
   calls (an exponential average) is used. On a busy machine the threaded calls
   lose and the site falls back to one thread; it tries threads again (a fresh
   measurement, replacing their stale average) after
   64 calls, then after twice as many each time they lose again (at most
   4096), so that a machine that quiets down gets its threads back while a
   busy one pays for a lost try rarely.

The threads also wait passively: this module sets ``OMP_WAIT_POLICY=PASSIVE``
(unless the environment names a policy) before numba starts its OpenMP pool, so
that a worker sleeps at once after a region instead of spinning (libgomp spins
for a while by default). On the two busy cores it changed a region's cost from
3 us median but 1.4-16 ms at the 90th percentile (spinning workers and the
caller fight other processes for the cores) to 6-10 us median, 9-18 us at the 90th
percentile. On idle cores (not measured here: the machine was never idle) a
sleeping worker's wake-up is a futex call, microseconds, which the thresholds
above pay for many times over. (``KMP_BLOCKTIME`` is the same knob
for Intel's runtime, which numba does not use here.)

Both drivers give the same results bit for bit: each item (a pair, a contact
row, an island) is computed by the same code from the same inputs whichever
thread runs it, and no item reads another's output.

:func:`forced` pins every site to one driver (tests comparing the two, a
warm-up that must compile both).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

# Before numba's thread pool (libgomp) starts: a worker sleeps as soon as its region ends.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba  # noqa: E402
from numba import get_num_threads  # noqa: E402
from numba.core.caching import NullCache  # noqa: E402
from numba.np.ufunc import parallel as _parallel  # noqa: E402

if getattr(_parallel, "_is_initialized", False):  # (some other code started the pool first)
    logging.getLogger(__name__).debug("numba's thread pool was started before obbcollide was imported: "
                                      "OMP_WAIT_POLICY=%s may not apply", os.environ["OMP_WAIT_POLICY"])

__all__ = ["ThreadChoice", "serial_twin", "forced", "timed", "CHOICES"]

# Every ThreadChoice made, by name (for forced() and for reports).
CHOICES: dict[str, "ThreadChoice"] = {}

_FORCED: list[str | None] = [None]  # None, "serial" or "threaded"

# The average's weight of the newest call, and the retry intervals (calls) of a losing driver.
_WEIGHT = 0.25
_FIRST_RETRY = 64
_LAST_RETRY = 4096


def serial_twin(kernel: Any, name: str) -> Any:
    """A serial compilation of a ``parallel=True`` numba kernel: the same Python function,
    compiled with the kernel's options less ``parallel`` (``prange`` runs as ``range``, no
    parallel region opens).

    The twin is cached on disk when the kernel is (numba keeps ``cache`` apart from the options
    it hands back, so it is passed again here: without it every process compiled the twins
    anew, 10-20 s for the hull-pair batch at a scene's first touching pair). Its function object
    gets its own ``__name__``/``__qualname__`` ``name``, so that numba's disk cache (whose index
    file is named after the function, not after its options) keeps the two compilations apart.
    With ``NUMBA_DISABLE_JIT=1`` the kernel is a plain Python function and is returned as it is.
    """
    py = getattr(kernel, "py_func", None)
    if py is None:  # numba's jit is off: the "kernel" is the Python function
        return kernel
    twin = types.FunctionType(py.__code__, py.__globals__, name, py.__defaults__, py.__closure__)
    twin.__qualname__ = name
    twin.__doc__ = f"Serial twin of :func:`{py.__qualname__}` (see :func:`collision.threads.serial_twin`)."
    twin.__module__ = py.__module__
    options = {k: v for k, v in kernel.targetoptions.items() if k not in ("parallel", "nopython")}
    cached = not isinstance(kernel._cache, NullCache)
    return numba.njit(cache=cached, **options)(twin)


class ThreadChoice:
    """The driver (serial or threaded) of one batch call site, chosen per call.

    Parameters
    ----------
    name : str
        The call site, for :data:`CHOICES` and messages.
    min_per_thread : int
        Fewer items than this per thread and the batch uses fewer threads; below
        ``2 * min_per_thread`` it runs serially.

    Use::

        runs = choice.runs(k)
        t0 = time.perf_counter()
        (parallel_kernel if runs > 1 else serial_kernel)(..., runs)
        choice.record(k, runs, time.perf_counter() - t0)
    """

    def __init__(self, name: str, min_per_thread: int):
        if min_per_thread < 1:
            raise ValueError(f"min_per_thread: must be >= 1, got {min_per_thread!r}")
        self.name = name
        self.min_per_thread = int(min_per_thread)
        self.cost = {False: None, True: None}  # seconds per item, serial / threaded (averages)
        self.retry = _FIRST_RETRY  # calls until the losing driver is tried again
        self.since = 0  # eligible calls since the losing driver last ran
        self.calls = {False: 0, True: 0}  # calls of each driver (serial, threaded)
        CHOICES[name] = self

    def reset(self) -> None:
        """Forget the measured costs."""
        self.cost = {False: None, True: None}
        self.retry = _FIRST_RETRY
        self.since = 0

    def eligible(self, k: int, threads: int | None = None) -> int:
        """The threads a batch of ``k`` items may use by size alone: ``min(threads, k //
        min_per_thread)``, at least 1 (``threads`` default: numba's current count)."""
        threads = get_num_threads() if threads is None else threads
        return max(1, min(threads, k // self.min_per_thread))

    def serial_below(self) -> int:
        """The batch size from which :meth:`runs` may choose threads: smaller batches run serially
        and untimed (a caller may then run the serial driver itself, inside a larger compiled call).
        ``2 min_per_thread``; under :func:`forced` ``"serial"`` no size, under ``"threaded"`` 2."""
        mode = _FORCED[0]
        if mode == "serial":
            return sys.maxsize
        return 2 if mode == "threaded" else 2 * self.min_per_thread

    def runs(self, k: int) -> int:
        """How many runs (threads) a batch of ``k`` items gets now: 1 means the serial driver."""
        if k < self.serial_below():  # too small for threads (and no numba call), or forced serial
            return 1
        mode = _FORCED[0]
        if mode == "threaded":
            return max(1, min(get_num_threads(), k))
        n = self.eligible(k, get_num_threads())
        if n == 1:
            return 1
        serial, threaded = self.cost[False], self.cost[True]
        if threaded is None:
            return n
        if serial is None:
            return 1
        loser_threaded = threaded > serial
        self.since += 1
        if self.since >= self.retry:  # try the losing driver again
            return n if loser_threaded else 1
        return 1 if loser_threaded else n

    def record(self, k: int, runs: int, seconds: float) -> None:
        """The time of a call of ``k`` items that ran on ``runs`` threads."""
        threaded = runs > 1
        self.calls[threaded] += 1
        if k < 2 * self.min_per_thread or _FORCED[0] is not None or self.eligible(k) == 1:
            return
        per = seconds / k
        serial_cost, threaded_cost = self.cost[False], self.cost[True]
        was_loser = (serial_cost is not None and threaded_cost is not None
                     and (threaded_cost > serial_cost) == threaded)
        old = self.cost[threaded]
        # a retry replaces the loser's average, which is as old as its last retry
        self.cost[threaded] = per if old is None or was_loser else (1 - _WEIGHT) * old + _WEIGHT * per
        if was_loser:  # a retry of the losing driver: it wins now, or waits twice as long
            self.since = 0
            now_loses = (self.cost[True] > self.cost[False]) == threaded
            self.retry = min(2 * self.retry, _LAST_RETRY) if now_loses else _FIRST_RETRY

    def __repr__(self) -> str:
        def us(x):
            return "?" if x is None else f"{x * 1e6:.3g} us"

        return (f"ThreadChoice({self.name!r}, min_per_thread={self.min_per_thread}, per item: serial "
                f"{us(self.cost[False])}, threaded {us(self.cost[True])}; calls {self.calls[False]} serial, "
                f"{self.calls[True]} threaded)")


@contextlib.contextmanager
def forced(mode: str | None) -> Iterator[None]:
    """Within the block, every :class:`ThreadChoice` runs ``"serial"`` (one thread, the serial
    drivers) or ``"threaded"`` (the parallel drivers on every batch of at least one item per
    thread, however small), or chooses as usual (``None``). Timings of the block are not kept."""
    if mode not in (None, "serial", "threaded"):
        raise ValueError(f"mode: expected None, 'serial' or 'threaded', got {mode!r}")
    old = _FORCED[0]
    _FORCED[0] = mode
    try:
        yield
    finally:
        _FORCED[0] = old


def timed(choice: ThreadChoice, k: int, serial: Callable[..., Any], parallel: Callable[..., Any], *args: Any) -> Any:
    """Run ``serial(*args, 1)`` or ``parallel(*args, runs)`` as ``choice`` picks for ``k`` items,
    timed into it; returns the kernel's result. (For kernels whose last argument is the run count.)"""
    runs = choice.runs(k)
    t0 = time.perf_counter()
    out = parallel(*args, runs) if runs > 1 else serial(*args, 1)
    choice.record(k, runs, time.perf_counter() - t0)
    return out
