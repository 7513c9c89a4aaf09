"""Input checks at the public edge, and broadcasting of batched queries.

Every public function converts its inputs here: to contiguous float64, with the
expected trailing shape, finite. A bad input raises ``ValueError`` naming the
argument; inside the kernels inputs are trusted.
"""

import numpy as np

__all__ = ["as_array", "broadcast_batch", "unbatch"]


def as_array(value, name, item_shape=None, finite=True):
    """Convert ``value`` to a float64 array and check it.

    Parameters
    ----------
    value : array_like
        The user's input.
    name : str
        Argument name used in error messages.
    item_shape : tuple of int, optional
        Required trailing shape, e.g. ``(3,)`` or ``(3, 3)``; ``-1`` matches any size.
    finite : bool
        Reject NaN and infinity.

    Returns
    -------
    array : float64 ndarray
    """
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        arr = value
    else:
        try:
            arr = np.asarray(value)
        except Exception as exc:  # ragged lists and the like
            raise ValueError(f"{name}: cannot be read as an array ({exc})") from None
        if arr.dtype == object or arr.dtype.kind not in "biuf":
            raise ValueError(f"{name}: expected real numbers, got dtype {arr.dtype}")
        arr = arr.astype(np.float64)
    if item_shape is not None:
        k = len(item_shape)
        tail = arr.shape[arr.ndim - k:] if arr.ndim >= k else None
        ok = tail is not None and all(
            want == -1 or want == got for want, got in zip(item_shape, tail)
        )
        if not ok:
            want = "(..., " + ", ".join("n" if s == -1 else str(s) for s in item_shape) + ")"
            raise ValueError(f"{name}: expected shape {want}, got {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN or infinity")
    return arr


def broadcast_batch(specs):
    """Broadcast several batched arguments against each other.

    Parameters
    ----------
    specs : list of (name, value, item_shape)
        ``item_shape`` is the shape of one query item, e.g. ``(3,)`` for a
        point or ``()`` for a radius.

    Returns
    -------
    flat : list of ndarray
        Each argument as a C-contiguous array of shape ``(n,) + item_shape``.
    lead : tuple of int
        The broadcast leading shape (``()`` for a single query).
    """
    arrays = [as_array(v, name, item) for name, v, item in specs]
    leads = [a.shape[: a.ndim - len(item)] for a, (_, _, item) in zip(arrays, specs)]
    try:
        lead = np.broadcast_shapes(*leads)
    except ValueError:
        names = ", ".join(f"{n} {a.shape}" for (n, _, _), a in zip(specs, arrays))
        raise ValueError(f"arguments do not broadcast: {names}") from None
    n = int(np.prod(lead)) if lead else 1
    flat = [
        np.ascontiguousarray(np.broadcast_to(a, lead + tuple(item)).reshape((n,) + tuple(item)))
        for a, (_, _, item) in zip(arrays, specs)
    ]
    return flat, lead


def unbatch(out, lead):
    """Reshape a flat ``(n, ...)`` kernel result back to ``lead + (...)``.

    A single query (``lead == ()``) gives the item itself: a ``(3,)`` array
    for a point, a numpy scalar for a number.
    """
    if lead == ():
        return out[0]
    return out.reshape(lead + out.shape[1:])
