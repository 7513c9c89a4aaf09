"""Convex pieces of a mesh, with their OBB trees, cached on disk.

Seed 003 treats a non-convex ("non-standard") model as a union of convex
("standard") ones; contact generation and rigid-body response want convex
pieces too. A mesh that is already convex is one piece, its hull; otherwise
an approximate convex decomposition: V-HACD (``vhacdx``, the fast default) or
CoACD (``coacd``, slower, closer to the shape), whose pieces are then grown
until they hold every point of the surface. Each piece gets its own OBB
tree (vertex covariance), and the set gets a tree over all the pieces'
triangles, whose leaves name their piece, for the mid phase.

Decomposition takes seconds to minutes, so results are cached as ``.npz``
(never pickle) in a user cache directory, keyed by a hash of the mesh's
arrays and the settings. An entry holds everything the pieces are made of:
each hull's vertices, triangles, polygons, planes and edges and the node
arrays of every OBB tree, so a cache hit computes no hull and builds no tree
(a few milliseconds). What it reads is checked before use (shapes, index
ranges, convexity of each hull, every tree's structure and that every box
encloses its triangles, in compiled kernels); an entry that cannot be read,
fails a check, or was written for other inputs or by another format version
is rebuilt.
"""

import hashlib
import json
import logging
import numbers
import os
import tempfile
import time
from dataclasses import asdict, dataclass

import numpy as np

import obbcollide as co
from obbcollide._jit import njit
from obbcollide._validate import _show

from ..progress import report

log = logging.getLogger(__name__)

__all__ = ["DecomposeSettings", "ConvexPieces", "convex_pieces", "decompose", "is_convex",
           "cache_dir", "CACHE_FORMAT", "DecomposerMissing", "DecomposerCrashed"]

# Entries store what ConvexPolyhedron.from_points and the OBB tree build produce, not only
# their input: bump this when either changes its output, or old entries (still valid hulls
# and trees) keep being used. 4: hulls and trees stored (3 stored the pieces' points).
# 5: pieces grown to cover the surface (_cover).
CACHE_FORMAT = 5
# How every tree is built (the OBBTree defaults); written in each entry's meta and checked.
TREE_FIT, TREE_LEAF = "vertex", 1
METHODS = ("auto", "hull", "vhacd", "coacd")
# The package behind each decomposition method: optional (the project's "decompose" extra).
PACKAGES = {"vhacd": "vhacdx", "coacd": "coacd"}
# The settings' ranges (DecomposeSettings): what the decomposers accept, in bounded work.
# V-HACD's voxel count sets its time and memory: measured here (2 cores) on the 1024-triangle
# gear, 1e5 voxels took 7 s and 0.35 GB, 1e6 took 40 s and 1.2 GB (its own limit, a uint32,
# would be hours and tens of GB). Pieces and vertices per piece are uint32 in V-HACD and int in
# CoACD: far past these bounds each piece costs a hull and a tree and no contact gets better.
RANGES = {"max_pieces": (1, 256), "resolution": (1000, 1_000_000), "max_vertices": (4, 1024)}


class DecomposerMissing(ImportError):
    """The package of a decomposition method cannot be imported; ``str()`` names it and says
    how to install it."""


class DecomposerCrashed(ValueError):
    """The decomposer's child process died (a signal: V-HACD or CoACD crashed, or the system
    ended it for its memory) or exited without an answer; ``str()`` says how
    (:mod:`app.scene.decompose_child`)."""


def _decomposer(method):
    """The module that does ``method`` ("vhacd" or "coacd"), or :class:`DecomposerMissing`."""
    import importlib

    package = PACKAGES[method]
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        why = "is not installed" if isinstance(exc, ModuleNotFoundError) else f"cannot be imported ({exc})"
        raise DecomposerMissing(f"{method} needs the Python package {package!r}, which {why} "
                                f"(pip install {package})") from exc


@dataclass(frozen=True)
class DecomposeSettings:
    """How to cut a mesh into convex pieces.

    Attributes
    ----------
    method : str
        ``"auto"`` (one piece if the mesh is convex, else V-HACD), ``"hull"``
        (always one piece: the convex hull), ``"vhacd"`` or ``"coacd"``.
    max_pieces : int
        Upper bound on the number of pieces.
    resolution : int
        V-HACD voxel count (more: finer, slower).
    threshold : float
        CoACD concavity threshold (less: more pieces, closer to the shape).
    max_vertices : int
        At most this many vertices per piece (V-HACD).
    """

    method: str = "auto"
    max_pieces: int = 16
    resolution: int = 100_000
    threshold: float = 0.05
    max_vertices: int = 64

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"method: expected one of {METHODS}, got {_show(self.method)}")
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not low <= value <= high:
                raise ValueError(f"{name}: expected an integer in [{low}, {high}], got {_show(value)}")
            object.__setattr__(self, name, int(value))
        t = self.threshold
        if isinstance(t, bool) or not isinstance(t, numbers.Real) or not 0.0 < t <= 1.0:
            raise ValueError(f"threshold: expected a number in (0, 1], got {_show(t)}")
        object.__setattr__(self, "threshold", float(t))  # 1 and 1.0: one cache key


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


def cache_dir():
    """The cache folder: ``$OBBCOLLIDE_CACHE`` if set, else the user cache directory."""
    env = os.environ.get("OBBCOLLIDE_CACHE")
    if env:
        return env
    try:
        import platformdirs

        return os.path.join(platformdirs.user_cache_dir("obbcollide"), "pieces")
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        return os.path.join(os.path.expanduser("~"), ".cache", "obbcollide", "pieces")


def is_convex(vertices, faces, rel_tol=1e-3):
    """True when a closed mesh fills its convex hull (volumes within ``rel_tol``).

    Closed means every directed edge once and its reverse once (a closed,
    consistently wound surface: only then is the signed volume the solid's).
    Plain numpy and one Qhull call, no trimesh processing: 2M triangles take
    seconds, not minutes, and no extra mesh copies.
    """
    from scipy.spatial import ConvexHull, QhullError

    v = np.ascontiguousarray(vertices, dtype=np.float64)
    f = np.ascontiguousarray(faces, dtype=np.int64)
    if len(f) < 4 or not _closed(f):
        return False
    vol = abs(_mesh_volume(v, f))
    try:
        hull = float(ConvexHull(v[np.unique(f)]).volume)
    except (QhullError, ValueError):  # flat
        return False
    return hull > 0 and vol >= (1.0 - rel_tol) * hull


def _closed(f):
    """Every directed edge of the faces (m, 3) once, and its reverse once."""
    a = f.reshape(-1)
    b = f[:, [1, 2, 0]].reshape(-1)
    if np.any(a == b):
        return False
    n = int(f.max()) + 1
    edges = a * n + b
    edges.sort()
    if np.any(edges[1:] == edges[:-1]):
        return False
    reverse = b * n + a
    reverse.sort()
    return bool(np.array_equal(edges, reverse))


def decompose(vertices, faces, settings=DecomposeSettings(), progress=None):
    """Convex pieces as point sets (no cache).

    ``progress(stage, fraction)`` (optional, see :mod:`app.progress`) hears
    of the convexity test and the decomposition, without fractions.

    Returns
    -------
    pieces : list of (k_i, 3) float64
        The points of each piece (their hull is the piece).
    method : str
        The method actually used.

    Raises
    ------
    DecomposerMissing
        The method's package (``vhacdx``, ``coacd``) cannot be imported.
    """
    v = np.ascontiguousarray(vertices, dtype=np.float64)
    f = np.ascontiguousarray(faces, dtype=np.int64)
    method = settings.method
    if method == "auto":
        report(progress, f"testing whether {len(f)} triangles are convex", None)
        method = "hull" if is_convex(v, f) else "vhacd"
    if method == "hull":
        return [v], "hull"
    report(progress, f"{method}: decomposing {len(f)} triangles into at most {settings.max_pieces} pieces", None)
    if method == "vhacd":
        pts = _vhacd_filling(v, f, settings, progress)
    else:
        coacd = _decomposer("coacd")
        coacd.set_log_level("error")
        parts = coacd.run_coacd(coacd.Mesh(v, f), threshold=float(settings.threshold),
                                max_convex_hull=settings.max_pieces)
        pts = [np.asarray(p, dtype=np.float64) for p, _ in parts]
    pts = [p for p in pts if len(p) >= 4 and _spans_3d(p)]
    if not pts:  # the decomposition found nothing usable: fall back to the hull
        return [v], "hull"
    return _cover(v, f, pts, progress), method


# A face not inside one piece is split until its parts are no longer than COVER_EDGE[0] times
# the mesh's diagonal, and where it is partly inside a piece, COVER_EDGE[1] times (_cover).
COVER_EDGE = (0.02, 0.0025)


def _cover(v, f, pts, progress=None):
    """The pieces grown until every point of the mesh's surface lies in one of them.

    A part of the surface outside every piece is something a person sees
    that collides with nothing: another body sinks into it. V-HACD's pieces
    are hulls of voxels and can stop short of the surface where it runs
    between voxel centres, and two pieces meeting at a seam leave a crack
    between their hulls (measured: the project's blob, scaled 0.7, in 8
    pieces left vertices 11.7 mm, 0.9% of its diagonal, outside every piece,
    and with only its vertices added to the nearest piece, points inside
    faces 5.4 mm out). CoACD's pieces are hulls of parts of the surface cut
    by planes: a cut face lies in the two pieces together but in neither.

    A face whose three corners are not all in one piece (within rounding) is
    cut into four at its edge midpoints, and the parts that are still not in
    one piece again, until they are no longer than ``COVER_EDGE[0]`` times the
    diagonal, or ``COVER_EDGE[1]`` times where a corner is in a piece (along
    a seam or the edge of a piece); the corners of those parts are added to
    the piece nearest each part's centroid, whose hull then holds the part.
    So the pieces cover the surface exactly, and a piece grows only along the
    seams and over the places it missed, by at most the distance it missed
    them by plus a part's size.

    Returns
    -------
    list of (k_i, 3) float64
        The pieces' points (the same arrays where nothing was added).
    """
    from scipy.spatial import ConvexHull, QhullError

    diag = float(np.linalg.norm(np.ptp(v, axis=0)))
    planes = []
    for p in pts:
        try:
            planes.append(ConvexHull(p).equations)
        except (QhullError, ValueError):
            pass

    def outside(corners, index):
        """(not inside one piece, no corner inside a piece) of each triangle ``corners[index]``."""
        covered = np.zeros(len(index), dtype=bool)
        touched = np.zeros(len(corners), dtype=bool)
        for eq in planes:
            inside = np.empty(len(corners), dtype=bool)
            for s in range(0, len(corners), 1 << 15):  # bounded temporaries on large meshes
                inside[s:s + (1 << 15)] = np.all(corners[s:s + (1 << 15)] @ eq[:, :3].T + eq[:, 3] <= 1e-9 * diag,
                                                 axis=1)
            covered |= inside[index].all(1)
            touched |= inside
        return ~covered, ~touched[index].any(1)

    out, free = outside(v, f)
    tris, free = v[f[out]], free[out]
    done = []
    while len(tris):
        length = np.linalg.norm(tris - np.roll(tris, -1, axis=1), axis=2).max(1)
        long = length > np.where(free, COVER_EDGE[0], COVER_EDGE[1]) * diag
        done.append(tris[~long])
        a, b, c = (tris[long, i] for i in range(3))
        ab, bc, ca = (a + b) / 2, (b + c) / 2, (c + a) / 2
        tris = np.concatenate([np.stack(t, 1) for t in ((a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca))])
        corners, index = np.unique(tris.reshape(-1, 3), axis=0, return_inverse=True)
        out, free = outside(corners, index.reshape(-1, 3))
        tris, free = tris[out], free[out]
    tris = np.concatenate(done)
    if not len(tris):
        return pts
    centroids = tris.mean(1)
    dist = np.stack([np.linalg.norm(co.closest_pt_point_convex(centroids, p) - centroids, axis=1) for p in pts])
    near = dist.argmin(0)
    report(progress, f"covering the surface: {len(tris)} parts of faces not inside one piece (up to "
           f"{dist.min(0).max():.3g} out) added to the nearest piece", None)
    grown = list(pts)
    for k in np.unique(near):
        extra = np.unique(tris[near == k].reshape(-1, 3), axis=0)
        grown[k] = np.concatenate([pts[k], extra])
    return grown


# V-HACD's pieces must hold at least this fraction of the mesh's volume.
MIN_FILL = 0.8


def _vhacd_filling(v, f, settings, progress):
    """V-HACD pieces that fill the solid, asking for fewer pieces until they do.

    The installed V-HACD 4 (vhacdx) returns exactly the requested number of
    hulls, and past a handful of them it covers the surface with flat or thin
    hulls and leaves the inside empty (measured: an L prism in 8 pieces kept
    32% of its volume; with 4, 105-123%). Its ``shrinkWrap`` pulls hulls onto
    the surface voxels and makes this worse, so it is off. A result holding
    less than ``MIN_FILL`` of the volume is retried with half the pieces. An
    open surface has no volume to fill: its first result is kept.
    """
    vhacdx = _decomposer("vhacd")
    volume = abs(_mesh_volume(v, f)) if _closed(f) else 0.0
    n = settings.max_pieces
    while True:
        parts = vhacdx.compute_vhacd(v, f.astype(np.uint32), maxConvexHulls=n, resolution=settings.resolution,
                                     maxNumVerticesPerCH=settings.max_vertices, shrinkWrap=False)
        pts = [p for p in (np.asarray(q, dtype=np.float64) for q, _ in parts) if len(p) >= 4 and _spans_3d(p)]
        filled = sum(_points_hull_volume(p) for p in pts) / volume if volume > 0 else 1.0
        if filled >= MIN_FILL or n <= 2:
            return pts
        report(progress, f"vhacd: {n} pieces hold only {filled:.0%} of the volume; trying {n // 2}", None)
        n //= 2


def _mesh_volume(v, f, chunk=1 << 18):
    """Signed volume (divergence theorem), a chunk of faces at a time (bounded temporaries)."""
    total = 0.0
    for s in range(0, len(f), chunk):
        tri = v[f[s:s + chunk]]
        total += float(np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])).sum())
    return total / 6.0


def _points_hull_volume(p):
    from scipy.spatial import ConvexHull

    return float(ConvexHull(p).volume)


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
        found = _read_entry(path, key)
        if found is not None:
            return found
        report(progress, f"cache entry {os.path.basename(path)} unreadable or stale: rebuilding", None)
    t0 = time.perf_counter()
    pts, method = decompose(v, f, settings, progress)
    seconds = time.perf_counter() - t0
    pieces = _assemble(pts, method, seconds, False, progress)
    if path:
        _write_entry(path, key, pieces, settings)
    return pieces


def cache_key(vertices, faces, settings):
    """Hex key of a mesh's arrays and the settings (and the cache format)."""
    h = hashlib.sha256()
    h.update(f"obbcollide-pieces-{CACHE_FORMAT}".encode())
    h.update(np.ascontiguousarray(vertices, dtype="<f8").data)  # the buffer, not a copy
    h.update(np.ascontiguousarray(faces, dtype="<i8").data)
    h.update(json.dumps(asdict(settings), sort_keys=True).encode())
    return h.hexdigest()[:40]


# -- the cache entry -----------------------------------------------------------------------
#
# An entry is an uncompressed ``.npz`` of three members: ``meta`` (JSON text),
# ``floats`` (float64) and ``ints`` (int64), the last two the arrays below
# raveled and concatenated in this order (few members: each costs a zip entry
# and a header parse on every load). ``meta["rows"]`` gives each array's row
# count; the widths are fixed. With P pieces, each ``*_start`` array holds P + 1
# offsets (piece k's rows are ``x[x_start[k]:x_start[k + 1]]``), indices are
# local to their piece:
#
#   vertices        (V, 3) float64   the hulls' vertices, piece after piece; vertex_start
#   triangles       (T, 3) int64     the hulls' triangles; triangle_start
#   polygons        (Q,) int64       every planar face's vertex loop; polygon_start (F+1,) per face
#   face_start      (P+1,) int64     piece k's faces: face_start[k]:face_start[k+1]
#   normals         (F, 3) float64   and offsets (F,) float64: the faces' planes
#   edges           (E, 2) int64     edge_start
#   nodes, links    (N, 16) float64, (N, 3) int64: every piece tree's packed arrays; node_start
#   tri_index       (T,) int64       every piece tree's leaf order
#   tree_nodes, tree_links, tree_tri_index: the tree over all pieces' triangles, whose mesh is
#                   the concatenated vertices and triangles (shifted by vertex_start)
#
# ``owner`` follows from triangle_start.

_FLOATS = {"vertices": 3, "normals": 3, "offsets": 1, "nodes": 16, "tree_nodes": 16}  # name: row width
_INTS = {"vertex_start": 1, "triangles": 3, "triangle_start": 1, "polygons": 1, "polygon_start": 1,
         "face_start": 1, "edges": 2, "edge_start": 1, "links": 3, "node_start": 1, "tri_index": 1,
         "tree_links": 3, "tree_tri_index": 1}


def _starts(sizes):
    return np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).astype(np.int64)


def _entry_arrays(pieces):
    """The arrays of a cache entry (see above) for assembled pieces."""
    hulls, trees = pieces.hulls, pieces.trees
    loops = [np.asarray(p, dtype=np.int64) for h in hulls for p in h.polygons]
    return {
        "vertices": np.concatenate([h.vertices for h in hulls]),
        "vertex_start": _starts([len(h.vertices) for h in hulls]),
        "triangles": np.concatenate([h.triangles for h in hulls]),
        "triangle_start": _starts([len(h.triangles) for h in hulls]),
        "polygons": np.concatenate(loops),
        "polygon_start": _starts([len(p) for p in loops]),
        "face_start": _starts([len(h.polygons) for h in hulls]),
        "normals": np.concatenate([h.normals for h in hulls]),
        "offsets": np.concatenate([h.offsets for h in hulls]),
        "edges": np.concatenate([np.asarray(h.edges).reshape(-1, 2) for h in hulls]),
        "edge_start": _starts([len(h.edges) for h in hulls]),
        "nodes": np.concatenate([t.nodes for t in trees]),
        "links": np.concatenate([t.links for t in trees]),
        "node_start": _starts([len(t.nodes) for t in trees]),
        "tri_index": np.concatenate([t.tri_index for t in trees]),
        "tree_nodes": pieces.tree.nodes,
        "tree_links": pieces.tree.links,
        "tree_tri_index": pieces.tree.tri_index,
    }


def _pack(arrays):
    """``(floats, ints, rows)``: the arrays raveled into two blobs, and each one's row count."""
    floats = np.concatenate([np.asarray(arrays[k], dtype=np.float64).ravel() for k in _FLOATS])
    ints = np.concatenate([np.asarray(arrays[k], dtype=np.int64).ravel() for k in _INTS])
    return floats, ints, {k: int(len(arrays[k])) for k in (*_FLOATS, *_INTS)}


def _unpack(floats, ints, rows):
    """The arrays from the blobs, or None if the row counts do not fit them exactly."""
    out = {}
    for blob, widths in ((floats, _FLOATS), (ints, _INTS)):
        at = 0
        for name, width in widths.items():
            n = rows.get(name)
            if type(n) is not int or n < 0:
                return None
            size = n * width
            x = blob[at:at + size]
            if len(x) != size:
                return None
            out[name] = x if width == 1 else x.reshape(n, width)
            at += size
        if at != len(blob):
            return None
    return out


def _write_entry(path, key, pieces, settings):
    """Write atomically (temp file + rename); a failure leaves no partial entry behind."""
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        floats, ints, rows = _pack(_entry_arrays(pieces))
        meta = json.dumps({"format": CACHE_FORMAT, "key": key, "pieces": len(pieces), "method": pieces.method,
                           "settings": asdict(settings), "tree": {"fit": TREE_FIT, "leaf_size": TREE_LEAF},
                           "rows": rows})
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, meta=np.array(meta), floats=floats, ints=ints)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    except OSError as exc:  # a read-only or full cache only costs the next load its time
        log.warning("could not write the pieces cache entry %s: %s", path, exc)


def _read_entry(path, key):
    """The :class:`ConvexPieces` of a cache file, or None if it is not a good one.

    Nothing is rebuilt: the hulls and trees are made from the stored arrays,
    after checks that catch any entry these arrays could not have come from
    (wrong dtypes or sizes, offsets out of order, indices out of range, a
    hull that is open, flat, inside out, not convex or whose planes or edges
    do not fit it, a tree whose links are not a binary tree partitioning its
    triangles, whose axes are not a rotation, or a box that does not enclose
    its triangles). The zip format's CRC-32 of each member catches flipped
    bits and truncation.
    """
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"][()]))
            if (not isinstance(meta, dict) or meta.get("format") != CACHE_FORMAT or meta.get("key") != key
                    or meta.get("method") not in METHODS[1:]
                    or meta.get("tree") != {"fit": TREE_FIT, "leaf_size": TREE_LEAF}
                    or not isinstance(meta.get("rows"), dict)):
                return None
            floats, ints = z["floats"], z["ints"]
        if floats.dtype != np.float64 or ints.dtype != np.int64 or floats.ndim != 1 or ints.ndim != 1:
            return None
        n = meta.get("pieces")
        if type(n) is not int or n < 1:
            return None
        arrays = _unpack(floats, ints, meta["rows"])
        if arrays is None:
            return None
        return _pieces_from_arrays(arrays, n, meta["method"])
    except Exception as exc:  # truncated zip, bad CRC, missing member, bad JSON: all mean "rebuild"
        log.info("rebuilding the damaged pieces cache entry %s (%s)", path, exc)
        return None


def _offsets_ok(starts, total, count):
    return (len(starts) == count + 1 and starts[0] == 0 and starts[-1] == total
            and bool(np.all(starts[1:] >= starts[:-1])))


_CUTS = {"vertex_start": "vertices", "triangle_start": "triangles", "face_start": "normals",
         "edge_start": "edges", "node_start": "nodes"}  # offsets -> the array they cut


def _pieces_from_arrays(a, n, method):
    """ConvexPieces from entry arrays, or None when a check fails."""
    for cut, member in _CUTS.items():
        if not _offsets_ok(a[cut], len(a[member]), n):
            return None
    n_faces = len(a["normals"])
    if (len(a["offsets"]) != n_faces or not _offsets_ok(a["polygon_start"], len(a["polygons"]), n_faces)
            or len(a["tri_index"]) != len(a["triangles"]) or len(a["tree_tri_index"]) != len(a["triangles"])
            or not np.all(np.isfinite(a["vertices"]))):
        return None
    vs, ts, fs, es, ns = (a[k] for k in ("vertex_start", "triangle_start", "face_start", "edge_start",
                                         "node_start"))
    counts = np.diff(ts)
    faces = a["triangles"] + np.repeat(vs[:-1], counts)[:, None]  # of the tree over all pieces
    scale = max(1.0, float(np.abs(a["vertices"]).max()))
    tol = 1e-9 * scale  # as OBBTree.validate and ConvexPolyhedron.from_mesh
    if not _entry_ok(a["vertices"], vs, a["triangles"], ts, a["polygons"], a["polygon_start"], fs, a["normals"],
                     a["offsets"], a["edges"], es, a["nodes"], a["links"], ns, a["tri_index"], faces,
                     a["tree_nodes"], a["tree_links"], a["tree_tri_index"], TREE_LEAF, tol):
        return None
    loops_all, loop_start = a["polygons"], a["polygon_start"]
    hulls, trees = [], []
    for k in range(n):
        v = a["vertices"][vs[k]:vs[k + 1]]
        tri = a["triangles"][ts[k]:ts[k + 1]]
        loops = [loops_all[loop_start[i]:loop_start[i + 1]] for i in range(fs[k], fs[k + 1])]
        hulls.append(co.ConvexPolyhedron(vertices=v, triangles=tri, polygons=loops,
                                         normals=a["normals"][fs[k]:fs[k + 1]],
                                         offsets=a["offsets"][fs[k]:fs[k + 1]], edges=a["edges"][es[k]:es[k + 1]]))
        trees.append(co.OBBTree.from_arrays(v, tri, a["nodes"][ns[k]:ns[k + 1]], a["links"][ns[k]:ns[k + 1]],
                                             a["tri_index"][ts[k]:ts[k + 1]], TREE_FIT, TREE_LEAF))
    tree = co.OBBTree.from_arrays(a["vertices"], faces, a["tree_nodes"], a["tree_links"], a["tree_tri_index"],
                                  TREE_FIT, TREE_LEAF)
    owner = np.repeat(np.arange(n, dtype=np.int64), counts)
    return ConvexPieces(hulls, trees, tree, owner, method, 0.0, True)


@njit
def _entry_ok(vertices, vs, triangles, ts, polygons, polygon_start, fs, normals, offsets, edges, es, nodes, links,
              ns, tri_index, all_faces, tree_nodes, tree_links, tree_tri_index, leaf_size, tol):
    """Every piece's hull (:func:`_hull_ok`) and tree (:func:`_tree_ok`), and the tree over all pieces.

    The ``*_start`` offsets are already known to be in order and to end at
    their array's length.
    """
    for k in range(vs.shape[0] - 1):
        v = vertices[vs[k]:vs[k + 1]]
        tri = triangles[ts[k]:ts[k + 1]]
        lo, hi = polygon_start[fs[k]], polygon_start[fs[k + 1]]
        loop_start = polygon_start[fs[k]:fs[k + 1] + 1] - lo
        if not _hull_ok(v, tri, polygons[lo:hi], loop_start, normals[fs[k]:fs[k + 1]], offsets[fs[k]:fs[k + 1]],
                        edges[es[k]:es[k + 1]], tol):
            return False
        if not _tree_ok(nodes[ns[k]:ns[k + 1]], links[ns[k]:ns[k + 1]], tri_index[ts[k]:ts[k + 1]], tri, v,
                        leaf_size, tol):
            return False
    return _tree_ok(tree_nodes, tree_links, tree_tri_index, all_faces, vertices, leaf_size, tol)


@njit
def _tree_ok(nodes, links, tri_index, faces, vertices, leaf_size, tol):
    """The invariants of ``OBBTree.validate`` on raw arrays, in one compiled pass.

    Links: the root spans all triangles, every inner node's two children
    (``child``, ``child + 1``, after it) split its range in two non-empty
    halves, every other node has exactly one parent, leaves hold at most
    ``leaf_size`` triangles; ``tri_index`` is a permutation; boxes: finite,
    half extents >= 0, axes orthonormal and right-handed (1e-9), bounding
    radius = |half extents|, every corner of every triangle of a node within
    ``tol`` of its box. ``faces`` index ``vertices`` (checked here too).
    """
    n = nodes.shape[0]
    m = tri_index.shape[0]
    nv = vertices.shape[0]
    if n < 1 or n > 2 * m - 1 or links.shape[0] != n or faces.shape[0] != m:
        return False
    for t in range(m):
        for c in range(3):
            if faces[t, c] < 0 or faces[t, c] >= nv:
                return False
    seen = np.zeros(m, dtype=np.bool_)
    for i in range(m):
        t = tri_index[i]
        if t < 0 or t >= m or seen[t]:
            return False
        seen[t] = True
    parents = np.zeros(n, dtype=np.int64)
    for node in range(n):
        ch, s, c = links[node, 0], links[node, 1], links[node, 2]
        if c < 1 or s < 0 or s > m - c:
            return False
        if node == 0 and (s != 0 or c != m):
            return False
        if ch == -1:
            if c > leaf_size:
                return False
        else:
            if ch <= node or ch >= n - 1:
                return False
            parents[ch] += 1
            parents[ch + 1] += 1
            c0 = links[ch, 2]
            if links[ch, 1] != s or c0 < 1 or c0 >= c or links[ch + 1, 1] != s + c0 or links[ch + 1, 2] != c - c0:
                return False
    for node in range(1, n):
        if parents[node] != 1:
            return False
    for node in range(n):
        for j in range(16):
            if not np.isfinite(nodes[node, j]):
                return False
        for i in range(3):
            if nodes[node, 12 + i] < 0.0:
                return False
            for j in range(3):
                d = 0.0
                for q in range(3):
                    d += nodes[node, 3 + 3 * i + q] * nodes[node, 3 + 3 * j + q]
                if abs(d - (1.0 if i == j else 0.0)) > 1e-9:
                    return False
        a = nodes[node, 3:12]
        det = (a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6])
               + a[2] * (a[3] * a[7] - a[4] * a[6]))
        if not det > 0.0:
            return False
        r = np.sqrt(nodes[node, 12] ** 2 + nodes[node, 13] ** 2 + nodes[node, 14] ** 2)
        if abs(nodes[node, 15] - r) > 1e-12 * r:
            return False
        s, c = links[node, 1], links[node, 2]
        for k in range(s, s + c):
            t = tri_index[k]
            for corner in range(3):
                p = faces[t, corner]
                for i in range(3):
                    d = 0.0
                    for q in range(3):
                        d += (vertices[p, q] - nodes[node, q]) * nodes[node, 3 + 3 * i + q]
                    if abs(d) - nodes[node, 12 + i] > tol:
                        return False
    return True


@njit
def _hull_ok(v, tri, loops, loop_start, normals, offsets, edges, tol):
    """A stored convex hull is one: closed, outward, convex, with planes and edges that fit it.

    ``v`` finite (checked by the caller), at least 4 vertices all used by a
    triangle; triangles: indices in range, three distinct corners, every
    directed edge once and its reverse once (closed, consistently wound),
    positive volume (outward, not flat: > 1e-12 of the bounding cube);
    faces (at least 4): unit normals (1e-9), finite offsets, loops of at
    least 3 vertices in range lying on their plane, and every vertex on the
    inner side of every plane (convex), all within ``tol``; edges: sorted
    pairs of distinct vertices in range.
    """
    nv = v.shape[0]
    nt = tri.shape[0]
    nf = normals.shape[0]
    if nv < 4 or nt < 4 or nf < 4 or offsets.shape[0] != nf or loop_start.shape[0] != nf + 1:
        return False
    used = np.zeros(nv, dtype=np.bool_)
    keys = np.empty(3 * nt, dtype=np.int64)
    vol = 0.0
    for t in range(nt):
        a, b, c = tri[t, 0], tri[t, 1], tri[t, 2]
        if a < 0 or b < 0 or c < 0 or a >= nv or b >= nv or c >= nv or a == b or b == c or a == c:
            return False
        used[a] = used[b] = used[c] = True
        keys[3 * t] = a * nv + b
        keys[3 * t + 1] = b * nv + c
        keys[3 * t + 2] = c * nv + a
        vol += (v[a, 0] * (v[b, 1] * v[c, 2] - v[b, 2] * v[c, 1])
                - v[a, 1] * (v[b, 0] * v[c, 2] - v[b, 2] * v[c, 0])
                + v[a, 2] * (v[b, 0] * v[c, 1] - v[b, 1] * v[c, 0]))
    for i in range(nv):
        if not used[i]:
            return False
    keys.sort()
    for i in range(1, keys.shape[0]):
        if keys[i] == keys[i - 1]:
            return False
    for i in range(keys.shape[0]):
        r = (keys[i] % nv) * nv + keys[i] // nv
        j = np.searchsorted(keys, r)
        if j >= keys.shape[0] or keys[j] != r:
            return False
    ext = 0.0
    for q in range(3):
        lo, hi = v[0, q], v[0, q]
        for i in range(nv):
            lo = min(lo, v[i, q])
            hi = max(hi, v[i, q])
        ext = max(ext, hi - lo)
    if not vol / 6.0 > 1e-12 * ext * ext * ext:
        return False
    if loop_start[0] != 0 or loop_start[nf] != loops.shape[0]:
        return False
    for f in range(nf):
        nx, ny, nz, d = normals[f, 0], normals[f, 1], normals[f, 2], offsets[f]
        if not (np.isfinite(nx) and np.isfinite(ny) and np.isfinite(nz) and np.isfinite(d)):
            return False
        if abs(nx * nx + ny * ny + nz * nz - 1.0) > 1e-9:
            return False
        if loop_start[f + 1] - loop_start[f] < 3:
            return False
        for k in range(loop_start[f], loop_start[f + 1]):
            p = loops[k]
            if p < 0 or p >= nv:
                return False
            if abs(nx * v[p, 0] + ny * v[p, 1] + nz * v[p, 2] - d) > tol:
                return False
        for i in range(nv):
            if nx * v[i, 0] + ny * v[i, 1] + nz * v[i, 2] - d > tol:
                return False
    for e in range(edges.shape[0]):
        if edges[e, 0] < 0 or edges[e, 0] >= edges[e, 1] or edges[e, 1] >= nv:
            return False
    return edges.shape[0] >= 6


def _spans_3d(p):
    c = p - p.mean(0)
    s = np.linalg.svd(c, compute_uv=False)
    return s[-1] > 1e-9 * max(s[0], 1e-300)


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
