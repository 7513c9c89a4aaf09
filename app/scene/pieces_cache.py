"""The disk cache of convex pieces: keys, the ``.npz`` entry, reading it back checked.

Decomposition takes seconds to minutes, so results are cached as ``.npz``
(never pickle) in a user cache directory, keyed by a hash of the mesh's
arrays and the settings. An entry holds everything the pieces are made of:
each hull's vertices, triangles, polygons, planes and edges and the node
arrays of every OBB tree, so a cache hit computes no hull and builds no tree
(a few milliseconds). What it reads is checked before use (shapes, index
ranges, convexity of each hull, every tree's structure and that every box
encloses its triangles: :mod:`app.scene.entry_checks`); an entry that cannot
be read, fails a check, or was written for other inputs or by another format
version is rebuilt.
"""

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import asdict

import numpy as np

import obbcollide as co

from .decompose import METHODS
from .entry_checks import entry_ok

log = logging.getLogger(__name__)

__all__ = ["cache_dir", "cache_key", "read_entry", "write_entry", "CACHE_FORMAT", "TREE_FIT", "TREE_LEAF"]

# Entries store what ConvexPolyhedron.from_points and the OBB tree build produce, not only
# their input: bump this when either changes its output, or old entries (still valid hulls
# and trees) keep being used. 4: hulls and trees stored (3 stored the pieces' points).
# 5: pieces grown to cover the surface (app.scene.surface_cover).
CACHE_FORMAT = 5


# How every tree is built (the OBBTree defaults); written in each entry's meta and checked.
TREE_FIT, TREE_LEAF = "vertex", 1


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


def cache_key(vertices, faces, settings):
    """Hex key of a mesh's arrays and the settings (and the cache format)."""
    h = hashlib.sha256()
    h.update(f"obbcollide-pieces-{CACHE_FORMAT}".encode())
    h.update(np.ascontiguousarray(vertices, dtype="<f8").data)  # the buffer, not a copy
    h.update(np.ascontiguousarray(faces, dtype="<i8").data)
    h.update(json.dumps(asdict(settings), sort_keys=True).encode())
    return h.hexdigest()[:40]


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


def write_entry(path, key, pieces, settings):
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


def read_entry(path, key):
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
    from .pieces import ConvexPieces  # that module reads and writes entries through this one

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
    if not entry_ok(a["vertices"], vs, a["triangles"], ts, a["polygons"], a["polygon_start"], fs, a["normals"],
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
