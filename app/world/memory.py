"""Written memory kept for the steps: a heap reserve, so that a step does not page-fault.

A step allocates its working arrays (numba's and numpy's, through ``malloc``) and frees them
at its end, and the next step gets the same memory back. When a step needs more than any before
it (a pile landing: more pairs, more points), ``malloc`` takes pages the system has not given
yet, and the first write to each costs a page fault: ~2 us a 4 kB page on the project's 2-core
virtual machine (0.5 ms a megabyte, measured by writing a fresh 1 MB array), about as much as
the arithmetic of a whole step of 100 boxes. Those faults fell on the very steps where a
falling pile lands (100 U shapes: 174 faults in 3 simulated seconds, most of them in the steps
where a layer first touches, each such step 0.1-0.5 ms slower than the same step run again).

:func:`reserve` (called at the end of every :class:`app.world.world.World`'s construction) tells
glibc's ``malloc``, the first time, to keep freed memory for reuse instead of returning it to the
system (``mallopt``: blocks under :data:`MMAP_THRESHOLD` from the heap, whose free top is given
back only beyond :data:`TRIM_THRESHOLD`); then, whenever the free top of the heap holds less than
:data:`RESERVE` bytes (what was made and lived on since took it), it allocates a block that
reaches that far, writes it and frees it: the top then holds that many written pages, which the
steps' allocations reuse (a scene of 1000 boxes grew the heap by ~10 MB while landing, one of 100
bodies by under 1 MB).

It acts on the whole process (every library's ``malloc``, a peer engine's in the same process
included), and only where glibc's ``mallopt`` and ``mallinfo2`` are found (elsewhere it does
nothing). Set the environment variable ``OBBCOLLIDE_NO_HEAP_RESERVE=1`` to leave ``malloc`` as it is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import sys

import numpy as np

__all__ = ["MMAP_THRESHOLD", "RESERVE", "TRIM_THRESHOLD", "free_top", "reserve"]

log = logging.getLogger(__name__)

RESERVE = 16 << 20  # bytes written once and kept (under MMAP_THRESHOLD: taken from the heap)
MMAP_THRESHOLD = 32 << 20  # blocks below this come from the heap (glibc's largest own choice)
TRIM_THRESHOLD = 64 << 20  # the heap's free top goes back to the system only beyond this
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # (glibc's malloc.h)

_state = {"mallopt": None, "info": None}  # None until reserve() first ran; then False where it cannot act


class _MallInfo2(ctypes.Structure):  # (glibc's struct mallinfo2, 2.33 and later)
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def _glibc():
    """``(mallopt, mallinfo2)`` of glibc, or None where the C library is not glibc 2.33 or later."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt, info = libc.mallopt, libc.mallinfo2
    except (OSError, AttributeError):
        return None
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    info.argtypes = []
    info.restype = _MallInfo2
    return mallopt, info


def free_top() -> int:
    """Bytes free at the top of the heap (glibc's ``keepcost``), -1 where that cannot be read."""
    info = _state["info"] or (_glibc() or (None, None))[1]
    return -1 if info is None else int(info().keepcost)


def reserve(nbytes: int = RESERVE) -> bool:
    """Make the free top of the heap at least ``nbytes`` of written memory (module docstring): the
    thresholds set at the first call, then, whenever the top holds less (other allocations took
    it), a block that reaches ``nbytes`` past it allocated, written and freed. Returns whether the
    reserve is in place (False where it cannot be made, or when ``OBBCOLLIDE_NO_HEAP_RESERVE`` is set)."""
    if _state["mallopt"] is None:
        _state["mallopt"] = False
        got = None if os.environ.get("OBBCOLLIDE_NO_HEAP_RESERVE", "") not in ("", "0") else _glibc()
        if got is None:
            log.debug("heap reserve: off, or no glibc mallopt / mallinfo2 here; malloc left as it is")
        elif got[0](_M_MMAP_THRESHOLD, MMAP_THRESHOLD) and got[0](_M_TRIM_THRESHOLD, TRIM_THRESHOLD):
            _state["mallopt"], _state["info"] = got
        else:
            log.debug("heap reserve: mallopt refused the thresholds; malloc left as it is")
    if not _state["mallopt"]:
        return False
    nbytes = min(int(nbytes), MMAP_THRESHOLD - (1 << 20))
    if _state["info"]().keepcost >= nbytes:
        return True
    block = np.empty(nbytes, np.uint8)  # (taken from the top: what is free there, then new pages)
    block.fill(1)  # every page written: faulted in now, not in a step
    del block  # freed back to the top of the heap, which keeps it (TRIM_THRESHOLD)
    log.debug("heap reserve: %d MB written and kept at the top of the heap", nbytes >> 20)
    return True
