"""Work shared out at run time: the threads of a parallel region claim chunks in turn.

numba's ``prange`` under the OpenMP layer cuts its range into one equal run per
thread before any runs (``numba.parallel_chunksize`` is not honoured by that
layer: measured, every chunk size gave the same two halves). When items cost
unequally (a separated pose pair takes a tenth of a microsecond to reject, a
touching one a thousand times as long) or a thread loses its core to another
process for a while, the region lasts as long as its slowest run while the
other thread idles. Here each thread instead takes the next unclaimed chunk
from a shared counter, incremented atomically (:func:`claim`), until none is
left: a thread that is slowed simply claims fewer chunks.

Which thread computes a chunk never changes what is computed, so results
equal the serial loop's bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic

from ._jit import njit

__all__ = ["claim", "new_counter"]


@intrinsic
def _fetch_add(typingctx, counter, value):
    """Atomically add ``value`` to ``counter[0]`` (int64, C-contiguous); the value before."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
        return None
    sig = types.int64(counter, types.int64)

    def codegen(context, builder, signature, args):
        arr = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, signature.args[0], arr, [cgutils.intp_t(0)])
        return builder.atomic_rmw("add", ptr, args[1], "seq_cst")

    return sig, codegen


if config.DISABLE_JIT:  # plain Python: one thread, no atomics needed
    def claim(counter):
        """The next unclaimed chunk number (``counter[0]`` before the increment)."""
        k = int(counter[0])
        counter[0] = k + 1
        return k
else:
    @njit(inline="always")
    def claim(counter):
        """The next unclaimed chunk number (``counter[0]`` before the increment), atomically."""
        return _fetch_add(counter, np.int64(1))


def new_counter():
    """A fresh shared chunk counter: int64 ``(1,)`` zero."""
    return np.zeros(1, dtype=np.int64)
