"""A compiled call's arguments that stay the same from call to call, held in one struct.

numba takes each array argument of a call from its Python object anew: it reads the object's
type, shape and strides, allocates a record that holds a reference to it (``malloc``) and, when
the call returns, takes the interpreter's lock to drop that reference and frees the record. For
one array that is tens of nanoseconds, but the world's step passes about a hundred and ten
arrays (the body table's columns, the tree's nodes, the detection's scratch and shape tables),
and between two steps those Python objects leave the processor's caches: beside pybullet, on a
pile of 100 boxes, a call that did nothing with the step's arguments cost 24 us, a sixth of a
step.

An :class:`ArgPack` is a numba struct (:mod:`numba.experimental.structref`) holding a tuple of such
arrays: the compiled code reads them from the struct (``pack.args``), and a call takes the struct
as one reference, without an allocation. Its owner makes it once and keeps it while what it was
made from stays (:class:`PackCache`, keyed by the identity of the objects that own the arrays).
The struct holds references to its arrays, so they live as long as it does; an array changed in
place is seen by the next call, an array replaced by another needs a new pack.

With ``NUMBA_DISABLE_JIT=1`` a pack is a plain object with the same ``args``.
"""

from operator import is_
from types import SimpleNamespace

import numba
from numba import njit, types
from numba.core.extending import overload, typeof_impl
from numba.experimental import structref

__all__ = ["ArgPack", "pack_args", "PackCache"]


@structref.register
class _PackType(types.StructRef):
    """The numba type of an :class:`ArgPack`: one field, ``args``, a tuple."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class ArgPack(structref.StructRefProxy):
    """A tuple of arguments as one numba struct (see the module docstring); made by :func:`pack_args`."""


structref.define_boxing(_PackType, ArgPack)


@typeof_impl.register(ArgPack)
def _typeof_pack(val, c):
    """A pack's numba type, read directly: numba's generic way first tries the object as a buffer and
    catches the error (about a microsecond a call)."""
    return val._type


def _new_pack(args):
    """Compiled only (:func:`_new_pack_impl`)."""
    raise NotImplementedError("compiled only")


@overload(_new_pack)
def _new_pack_impl(args):
    struct = _PackType([("args", args)])

    def impl(args):
        pack = structref.new(struct)
        pack.args = args
        return pack

    return impl


@njit(cache=True)
def _pack(args):
    return _new_pack(args)


def pack_args(args):
    """An :class:`ArgPack` of the tuple ``args`` (about 15 us for a hundred arrays: make it once and
    keep it, :class:`PackCache`)."""
    if numba.config.DISABLE_JIT:
        return SimpleNamespace(args=args)
    return _pack(args)


class PackCache:
    """One :class:`ArgPack`, kept while its key holds: :meth:`get` compares the key's objects by
    identity with those it was made for (and holds them, so that no other object takes their id).
    A copy (``copy``, ``deepcopy``, pickling) is an empty cache: the copy of an object that keeps one
    makes its packs from its own arrays."""

    __slots__ = ("_key", "_pack", "args")

    def __init__(self):
        self._key = ()
        self._pack = None
        self.args = ()  # the tuple the kept pack holds

    def __copy__(self):
        return PackCache()  # (a cache: a copy makes its own pack from its own owner's arrays)

    def __deepcopy__(self, memo):
        return PackCache()  # (a copied pack would hand the copy's compiled calls the original's arrays)

    def __reduce__(self):
        return (PackCache, ())

    def get(self, key, make):
        """The pack of ``make()`` (a tuple), made again when an object of ``key`` (a tuple) is not the one
        the kept pack was made for."""
        old = self._key
        if self._pack is None or len(old) != len(key) or not all(map(is_, key, old)):
            self.args = tuple(make())
            self._pack = pack_args(self.args)
            self._key = key
        return self._pack

