"""Input checks at the public edge, and broadcasting of batched queries.

Every public function converts its inputs here: to contiguous float64, with the
expected trailing shape, finite, within ``+-MAX_COORD``. A bad input raises
``ValueError`` naming the argument; inside the kernels (and the C code behind
them: Qhull, V-HACD, CoACD) inputs are trusted.

What counts as a number: Python ``int`` and ``float`` and numpy's integer and
floating types (scalars or arrays). Not ``bool`` (``True`` is not 1.0 here), not
``complex``, not ``None``, not a string, even one that reads as a number
(``"1.5"`` is refused, never parsed), not an integer too large for float64.

Ranges, with their reasons:

``MAX_COORD = 1e18``
    Coordinates, sizes and radii of the library's queries. The kernels
    multiply coordinates: squared distances, triple products, the covariance
    of an OBB fit, Qhull's determinants. Products up to the sixth degree of
    1e18 stay below 1e108, far from float64's 1.8e308, so finite input gives
    finite answers; 5e299 squared is infinity, and Qhull crashed the process
    on points near it. (float64 resolves 128 units at 1e18: an application
    wants a far smaller world; the scene and mesh readers allow +-1e6, see
    ``app.scene.mesh_io.MAX_COORD``.)
"""

import math
import numbers

import numpy as np

__all__ = ["as_array", "as_indices", "check_type", "as_number", "as_integer", "broadcast_batch", "unbatch",
           "MAX_COORD", "is_number"]

MAX_COORD = 1e18


def is_number(value):
    """True for a real number: int, float or a numpy integer / floating scalar; not bool."""
    return (isinstance(value, (numbers.Real, np.integer, np.floating))
            and not isinstance(value, (bool, np.bool_)))


def as_number(value, name, low=None, high=None, low_open=False, integer=False):
    """Check one real number at the public edge and return it as ``float`` (or ``int``).

    Parameters
    ----------
    value : object
        The user's input.
    name : str
        Argument name used in error messages.
    low, high : float, optional
        Closed range ``[low, high]`` (``low_open``: ``(low, high]``).
    integer : bool
        Require an integral value (an ``int`` or numpy integer, not ``2.0``);
        returns ``int``.

    Raises
    ------
    ValueError
        Naming ``name``: not a number (bool, complex, None, strings), not
        finite, too large for float64, not an integer, out of range.
    """
    if integer:
        if not isinstance(value, (numbers.Integral, np.integer)) or isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name}: expected an integer, got {_show(value)}")
        out = int(value)
    else:
        if not is_number(value):
            raise ValueError(f"{name}: expected a real number, got {_show(value)}")
        try:
            out = float(value)
        except (OverflowError, ValueError):
            raise ValueError(f"{name}: {_show(value)} is too large for a float64") from None
        if not math.isfinite(out):
            raise ValueError(f"{name}: expected a finite number, got {out!r}")
    if low is not None and (out < low or (low_open and out == low)):
        raise ValueError(f"{name}: expected {'>' if low_open else '>='} {low!r}, got {_show(out)}")
    if high is not None and out > high:
        raise ValueError(f"{name}: expected <= {high!r}, got {_show(out)}")
    return out


def as_integer(value, name, low=None, high=None):
    """:func:`as_number` for an integer in ``[low, high]``."""
    return as_number(value, name, low, high, integer=True)


def _show(value, width=80):
    """A short ``repr`` for messages (a 400-digit integer or a huge list is cut)."""
    try:
        text = repr(value)
    except Exception:  # a repr that fails is not our problem to report
        text = f"<{type(value).__name__}>"
    return text if len(text) <= width else text[:width - 3] + "..."


def _check_items(value, name, depth=0):
    """Refuse bools, strings, None, complex and oversized ints in nested lists before numpy sees them
    (numpy would read ``True`` as 1.0 and turn a 400-digit int into an object array)."""
    if depth > 32:
        raise ValueError(f"{name}: nested deeper than 32 levels")
    if isinstance(value, (list, tuple)):
        for item in value:
            _check_items(item, name, depth + 1)
    elif isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected real numbers, got a bool ({value!r})")
    elif isinstance(value, int) and not -2 ** 1023 < value < 2 ** 1023:
        raise ValueError(f"{name}: the integer {_show(value)} is too large for a float64")


def as_array(value, name, item_shape=None, finite=True, limit=MAX_COORD):
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
    limit : float or None
        Reject entries with ``|x| > limit`` (default ``MAX_COORD``; see the
        module's note for the reason). None: no bound.

    Returns
    -------
    array : float64 ndarray
    """
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        arr = value
    else:
        if isinstance(value, (str, bytes)) or value is None:
            raise ValueError(f"{name}: expected real numbers, got {_show(value)}")
        if not isinstance(value, np.ndarray):
            _check_items(value, name)
        try:
            arr = np.asarray(value)
        except Exception as exc:  # ragged lists and the like
            raise ValueError(f"{name}: cannot be read as an array ({_show(exc, 200)})") from None
        if arr.dtype == object or arr.dtype.kind not in "iuf":
            raise ValueError(f"{name}: expected real numbers, got dtype {arr.dtype}")
        with np.errstate(over="ignore"):
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
    if limit is not None and arr.size:
        with np.errstate(invalid="ignore"):
            far = np.abs(arr).max() if finite else np.max(np.abs(arr[np.isfinite(arr)]), initial=0.0)
        if far > limit:
            raise ValueError(f"{name}: entries reach {far:.3g}, beyond the +-{limit:.0e} "
                             "float64 geometry allows (collision._validate.MAX_COORD)")
    return arr


def check_type(value, name, *classes):
    """``value`` itself when it is an instance of one of ``classes``, else a ``ValueError``
    naming ``name`` (the library's queries take their own objects: an OBB, a tree, a shape)."""
    if not isinstance(value, classes):
        want = " or ".join(c.__name__ for c in classes)
        raise ValueError(f"{name}: expected a {want}, got {type(value).__name__}")
    return value


def as_indices(value, name, item_shape=None, count=None):
    """Convert ``value`` to an int64 array of indices and check it.

    Parameters
    ----------
    value : array_like of int
        Integers only: floats (even ``2.0``), bools, strings and None are refused.
    name : str
        Argument name used in error messages.
    item_shape : tuple of int, optional
        Required trailing shape, as for :func:`as_array`.
    count : int, optional
        Every index must lie in ``[0, count)``.

    Returns
    -------
    C-contiguous int64 ndarray
    """
    if isinstance(value, (str, bytes)) or value is None:
        raise ValueError(f"{name}: expected integers, got {_show(value)}")
    if not isinstance(value, np.ndarray):
        _check_items(value, name)
    try:
        arr = np.asarray(value)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name}: cannot be read as an array ({_show(exc, 200)})") from None
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"{name}: expected integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name}: index {arr.max()} is too large")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    if item_shape is not None:
        k = len(item_shape)
        tail = arr.shape[arr.ndim - k:] if arr.ndim >= k else None
        if tail is None or not all(w == -1 or w == g for w, g in zip(item_shape, tail)):
            want = "(..., " + ", ".join("n" if s == -1 else str(s) for s in item_shape) + ")"
            raise ValueError(f"{name}: expected shape {want}, got {arr.shape}")
    if count is not None and arr.size and (arr.min() < 0 or arr.max() >= count):
        bad = int(arr.min() if arr.min() < 0 else arr.max())
        raise ValueError(f"{name}: index {bad} out of range [0, {count})")
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
