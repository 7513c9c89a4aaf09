"""Convex pieces of a mesh, with their OBB trees, cached on disk.

Seed 003 treats a non-convex ("non-standard") model as a union of convex
("standard") ones; contact generation and rigid-body response want convex
pieces too. :func:`convex_pieces` cuts a mesh into convex point sets
(:mod:`app.scene.decompose`: its hull, V-HACD or CoACD, grown to cover the
surface), gives each piece its hull and its own OBB tree (vertex
covariance), and the set a tree over all the pieces' triangles, whose leaves
name their piece, for the mid phase. Results are kept in a disk cache
(:mod:`app.scene.pieces_cache`: ``.npz``, never pickle, checked when read).

The names of the decomposition and the cache that callers use are importable
from here too (``DecomposeSettings``, ``decompose``, ``is_convex``,
``cache_dir``, ``cache_key``, ``CACHE_FORMAT``, the decomposers' errors).
"""

import os
import time
from dataclasses import dataclass

import numpy as np

import obbcollide as co

from ..progress import report
from .decompose import (METHODS, DecomposeSettings, DecomposerCrashed, DecomposerMissing, decompose,
                        is_convex)
from .pieces_cache import CACHE_FORMAT, TREE_FIT, TREE_LEAF, cache_dir, cache_key, read_entry, write_entry

__all__ = ["DecomposeSettings", "ConvexPieces", "convex_pieces", "decompose", "is_convex",
           "cache_dir", "cache_key", "CACHE_FORMAT", "METHODS", "DecomposerMissing", "DecomposerCrashed"]


@dataclass(eq=False)
class ConvexPieces:
    """The convex pieces of one mesh.

    Attributes
    ----------
    hulls : list of ConvexPolyhedron
        In the mesh's model frame.
    trees : list of OBBTree
        One per piece, over the piece's hull triangles.
    tree : OBBTree
        Over all pieces' hull triangles together (the mid phase).
    owner : (t,) int64
        Piece of each face of ``tree``.
    method : str
        What made them (``"hull"``, ``"vhacd"`` or ``"coacd"``).
    seconds : float
        Time spent decomposing (0 when read from the cache).
    cached : bool
        True when read from the cache.
    """

    hulls: list
    trees: list
    tree: co.OBBTree
    owner: np.ndarray
    method: str
    seconds: float = 0.0
    cached: bool = False

    def __len__(self):
        return len(self.hulls)

    @property
    def volume(self):
        """Sum of the pieces' volumes (overlaps counted twice)."""
        return float(sum(_hull_volume(h) for h in self.hulls))


def convex_pieces(vertices, faces, settings=DecomposeSettings(), cache=True, progress=None):
    """The mesh's convex pieces with their trees, from the cache when possible.

    Parameters
    ----------
    vertices : (n, 3) float
    faces : (m, 3) int
    settings : DecomposeSettings
    cache : bool or str
        True: the default :func:`cache_dir`; a string: that folder; False: no cache.
    progress : callable, optional
        ``progress(stage, fraction)`` (see :mod:`app.progress`): the
        decomposition (no fraction: V-HACD and CoACD give none), then the
        hulls and trees piece by piece; a rebuilt cache entry is announced.
        A cache hit reports nothing (milliseconds).

    Returns
    -------
    ConvexPieces
    """
    v = np.ascontiguousarray(vertices, dtype=np.float64)
    f = np.ascontiguousarray(faces, dtype=np.int64)
    key = cache_key(v, f, settings)
    folder = (cache_dir() if cache is True else cache) if cache else None
    path = os.path.join(folder, key + ".npz") if folder else None
    if path and os.path.exists(path):
        found = read_entry(path, key)
        if found is not None:
            return found
        report(progress, f"cache entry {os.path.basename(path)} unreadable or stale: rebuilding", None)
    t0 = time.perf_counter()
    pts, method = decompose(v, f, settings, progress)
    seconds = time.perf_counter() - t0
    pieces = _assemble(pts, method, seconds, False, progress)
    if path:
        write_entry(path, key, pieces, settings)
    return pieces


def _hull_volume(hull):
    tri = hull.vertices[hull.triangles]
    return abs(float(np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])).sum()) / 6.0)


def _assemble(pts, method, seconds, cached, progress=None):
    """Hulls of the point sets, a tree per hull and one over all of them."""
    n = len(pts)
    stage = f"hulls and OBB trees of {n} piece{'s' if n > 1 else ''}"
    hulls, trees = [], []
    for k, p in enumerate(pts):
        report(progress, stage, k / (n + 1))
        hulls.append(co.ConvexPolyhedron.from_points(p))
        trees.append(co.OBBTree(hulls[-1].vertices, hulls[-1].triangles, fit=TREE_FIT, leaf_size=TREE_LEAF))
    report(progress, stage, n / (n + 1))
    verts, faces, owner = [], [], []
    base = 0
    for k, h in enumerate(hulls):
        verts.append(h.vertices)
        faces.append(h.triangles + base)
        owner.append(np.full(len(h.triangles), k, dtype=np.int64))
        base += len(h.vertices)
    tree = co.OBBTree(np.concatenate(verts), np.concatenate(faces), fit=TREE_FIT, leaf_size=TREE_LEAF)
    report(progress, stage, 1.0)
    return ConvexPieces(hulls, trees, tree, np.concatenate(owner), method, seconds, cached)
