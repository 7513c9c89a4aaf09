"""Types the public signatures share that numpy does not name.

Array arguments are ``numpy.typing.ArrayLike`` (lists, tuples, arrays) and
returned arrays ``numpy.typing.NDArray`` of their dtype; this module holds only
what those two do not cover.
"""

from __future__ import annotations

from typing import Protocol

from numpy.typing import ArrayLike

__all__ = ["MeshLike"]


class MeshLike(Protocol):
    """Anything with ``vertices`` (n, 3) and ``faces`` (m, 3) arrays, e.g. a ``trimesh.Trimesh``."""

    @property
    def vertices(self) -> ArrayLike: ...

    @property
    def faces(self) -> ArrayLike: ...
