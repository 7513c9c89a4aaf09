"""Reading a user's mesh file into one clean triangle mesh, or a clear error.

Every format trimesh reads (OBJ, STL, PLY, OFF, GLB/glTF, ...). A file holding
a scene of several geometries is flattened with each node's transform. The
clean-up merges duplicate vertices and drops degenerate and duplicate faces
and unreferenced vertices. Problems raise :class:`MeshLoadError`, whose
message names the file and the problem; nothing else escapes.

The clean-up is linear in the mesh size: equal vertex rows and equal face
corner sets are found with a hash table (open addressing, linear probing;
Knuth TAOCP vol. 3, 6.4 "Algorithm L") in a compiled kernel, instead of
sorting the rows (``np.unique(axis=0)`` took ~10 s for 2M triangles).
"""

import hashlib
import os

import numpy as np

from obbcollide._jit import njit

from ..progress import report

__all__ = ["MeshLoadError", "load_mesh", "clean_mesh", "file_digest", "declared_triangles", "MAX_COORD",
           "MAX_TRIANGLES"]

# A mesh's coordinates (after its scale) must lie within +-MAX_COORD scene units. Geometry
# is float64, and its tests multiply coordinates: squares (distances, the OBB fit's
# covariance) and triple products (orientation tests) must neither overflow (1e300 squares to
# inf, the fit turns NaN and the viewer could not frame or draw it) nor lose the precision
# contacts need: at 1e6, float64 still resolves 1e-10, far below the solver's 5 mm slop,
# triple products stay below 1e18, and float32 vertices on the GPU still resolve 0.1.
# A drawing in millimetres of a part metres across still fits; larger: use the scale.
MAX_COORD = 1e6
# Meshes of more triangles are refused (before the clean-up, and for binary STL and PLY
# before reading, from the count in the header). Measured here (2 cores, no GPU): 2M
# triangles read and clean in 2.4 s, their OBB tree takes 1.2 s more and the process peaks
# at 1.9 GB, so memory grows by about 1 GB per million triangles; 5M stays within a
# desktop's memory. Larger models: decimate them first.
MAX_TRIANGLES = 5_000_000
# Above this many faces a clean-up reports its steps through ``progress``.
LARGE_MESH = 500_000
# Files above this many bytes are named with their size when reading starts.
LARGE_FILE = 16 << 20


class MeshLoadError(ValueError):
    """A mesh file that cannot become a body; ``str()`` names the file and the problem."""


def file_digest(path, chunk=1 << 20):
    """SHA-256 hex digest of a file's bytes (read in chunks: no memory blow-up)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while True:
            block = fh.read(chunk)
            if not block:
                break
            h.update(block)
    return h.hexdigest()


def declared_triangles(path):
    """The triangle count a binary STL or a PLY file states in its header, or None.

    Reads at most 64 KB: lets :func:`load_mesh` refuse a file above ``MAX_TRIANGLES``
    before parsing it. A PLY face may be a polygon: its count is a lower bound.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
        size = os.path.getsize(path)
    except OSError:
        return None
    if head.startswith(b"ply"):
        for line in head.split(b"end_header")[0].splitlines():
            words = line.split()
            if len(words) == 3 and words[:2] == [b"element", b"face"] and words[2].isdigit():
                return int(words[2])
        return None
    if len(head) >= 84:  # binary STL: 80 header bytes, a uint32 count, 50 bytes per triangle
        count = int(np.frombuffer(head[80:84], "<u4")[0])
        if size == 84 + 50 * count:
            return count
    return None


def _too_many(path, count, stated=""):
    return MeshLoadError(f"{path}: {count:,} triangles{stated}, more than the {MAX_TRIANGLES:,} the viewer "
                         "loads; decimate it first (e.g. Blender's Decimate modifier, or "
                         "trimesh's simplify_quadric_decimation)")


def _read(path):
    import trimesh

    # process=False: processing would silently drop NaN vertices and the faces
    # using them, and the user should hear about a broken file.
    loaded = trimesh.load(path, process=False)
    if isinstance(loaded, trimesh.Scene):
        if len(loaded.geometry) == 0:
            raise ValueError("the file holds no geometry")
        meshes = [g for g in loaded.dump(concatenate=False) if isinstance(g, trimesh.Trimesh)]
        if not meshes:
            raise ValueError("the file holds no triangle mesh (only points or lines)")
        loaded = trimesh.util.concatenate(meshes) if len(meshes) > 1 else meshes[0]
    if not isinstance(loaded, trimesh.Trimesh):
        raise ValueError(f"the file holds no triangle mesh ({type(loaded).__name__})")
    return loaded


# -- equal rows by hashing -------------------------------------------------------------

_SIGN = np.uint64(1 << 63)  # the bits of -0.0


@njit
def _mix64(h):
    """splitmix64's finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom number
    generators", OOPSLA 2014): every input bit flips about half the output bits."""
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h


@njit
def _word(keys, i, j, signed_zero):
    w = keys[i, j]
    if signed_zero and w == _SIGN:  # -0.0 == 0.0: one key
        return np.uint64(0)
    return w


@njit
def _first_ids(keys, signed_zero, expected):
    """Number the distinct rows of ``keys`` by first occurrence.

    Parameters
    ----------
    keys : (n, k) uint64
        Rows compared word by word; with ``signed_zero`` the words are
        float64 bit patterns and -0.0 equals 0.0 (NaN must not occur).
    expected : int
        Guess of the number of distinct rows (sizes the table; a wrong guess
        costs only time).

    Returns
    -------
    ids : (n,) int64
        ``ids[i] == ids[j]`` exactly when rows i and j are equal; ids count
        up from 0 in order of first occurrence.
    first : (u,) int64
        The row where each id first occurs (increasing).

    A hash table of (hash, id) pairs, linear probing, doubled when half full,
    so O(n) expected time and O(u) table memory.
    """
    n, k = keys.shape
    cap = 16
    while cap < 2 * expected:
        cap *= 2
    mask = np.uint64(cap - 1)
    table = np.full((cap, 2), -1, dtype=np.int64)  # (hash bits, id); id -1: empty
    ids = np.empty(n, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    hashes = np.empty(n, dtype=np.uint64)
    count = 0
    for i in range(n):
        h = np.uint64(0x9E3779B97F4A7C15)
        for j in range(k):
            h = _mix64(h ^ _word(keys, i, j, signed_zero))
        slot = h & mask
        while True:
            u = table[slot, 1]
            if u < 0:  # a new row
                table[slot, 0] = np.int64(h)
                table[slot, 1] = count
                first[count] = i
                hashes[count] = h
                ids[i] = count
                count += 1
                if 2 * count > cap:  # rehash into a table twice the size
                    cap *= 2
                    mask = np.uint64(cap - 1)
                    table = np.full((cap, 2), -1, dtype=np.int64)
                    for q in range(count):
                        s = hashes[q] & mask
                        while table[s, 1] >= 0:
                            s = (s + np.uint64(1)) & mask
                        table[s, 0] = np.int64(hashes[q])
                        table[s, 1] = q
                break
            if np.uint64(table[slot, 0]) == h:
                r = first[u]
                same = True
                for j in range(k):
                    if _word(keys, r, j, signed_zero) != _word(keys, i, j, signed_zero):
                        same = False
                        break
                if same:
                    ids[i] = u
                    break
            slot = (slot + np.uint64(1)) & mask
    return ids, first[:count].copy()


def clean_mesh(vertices, faces, name="mesh", progress=None):
    """Check and clean raw arrays.

    Parameters
    ----------
    vertices : (n, 3) float
    faces : (m, 3) int
    name : str
        Used in error messages (usually the file path).
    progress : callable, optional
        ``progress(stage, fraction)`` (see :mod:`app.progress`), called for
        meshes of more than ``LARGE_MESH`` faces.

    Returns
    -------
    vertices : (n', 3) float64
    faces : (m', 3) int64
        Duplicate vertices merged (exact coordinates, -0.0 equal to 0.0),
        degenerate faces (two equal corners after merging) and duplicate
        faces (same corner set, whatever the order) dropped, unreferenced
        vertices removed. What is kept keeps its order: vertices and faces
        in their first input order, so an already clean mesh comes back equal.

    Raises
    ------
    MeshLoadError
    """
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces)
    if f.size == 0 or v.size == 0:
        raise MeshLoadError(f"{name}: the mesh has no triangles")
    if v.ndim != 2 or v.shape[1] != 3:
        raise MeshLoadError(f"{name}: vertices must be (n, 3), got {v.shape}")
    if f.ndim != 2 or f.shape[1] != 3 or (f.size and f.dtype.kind not in "iu"):
        raise MeshLoadError(f"{name}: faces must be (m, 3) integers, got {f.shape} {f.dtype}")
    if len(f) == 0 or len(v) == 0:
        raise MeshLoadError(f"{name}: the mesh has no triangles")
    if not np.all(np.isfinite(v)):
        bad = int(np.count_nonzero(~np.all(np.isfinite(v), axis=1)))
        raise MeshLoadError(f"{name}: {bad} vertices have NaN or infinite coordinates")
    if f.min() < 0 or f.max() >= len(v):
        raise MeshLoadError(f"{name}: a face refers to a vertex that does not exist "
                            f"(index {int(f.max() if f.max() >= len(v) else f.min())}, {len(v)} vertices)")
    v = np.ascontiguousarray(v)
    stage = f"cleaning {len(f)} triangles"
    big = len(f) > LARGE_MESH and progress is not None
    if big:
        report(progress, stage, 0.0)
    # 1. merge equal vertices: an id per distinct coordinate triple (a closed
    # mesh has about half as many vertices as faces: the table's first size)
    ids, first = _first_ids(v.view(np.uint64), True, min(len(v), len(f)))
    f = ids[f]  # (m, 3) int64, fancy indexing copies
    del ids
    if big:
        report(progress, stage, 0.4)
    # 2. degenerate faces: two corners on one vertex
    f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])]
    if len(f) == 0:
        raise MeshLoadError(f"{name}: every face is degenerate (repeated corners)")
    # 3. duplicate faces: same corner set, whatever the order or orientation; the first one stays
    corners = np.sort(f, axis=1)
    if len(first) <= 1 << 21:  # three 21-bit indices in one word
        corners = ((corners[:, 0] << 42) | (corners[:, 1] << 21) | corners[:, 2]).reshape(-1, 1)
    _, keep = _first_ids(corners.view(np.uint64), False, len(f))
    del corners
    if len(keep) < len(f):
        f = f[keep]
    if big:
        report(progress, stage, 0.8)
    # 4. unreferenced vertices, the rest renumbered in order
    used = np.zeros(len(first), dtype=bool)
    used[f.reshape(-1)] = True
    remap = np.cumsum(used, dtype=np.int64) - 1
    v = v[first[used]]
    f = remap[f]
    if float(np.ptp(v, axis=0).max()) == 0.0:
        raise MeshLoadError(f"{name}: the mesh has zero size (all vertices coincide)")
    if big:
        report(progress, stage, 1.0)
    return np.ascontiguousarray(v), np.ascontiguousarray(f)


# What a reader's exception most likely means, in the words of the file (the exception follows it).
_READ_HINTS = ((IndexError, "a face refers to a vertex the file does not have"),
               (UnicodeDecodeError, "its bytes are not text in the format its name says"))


def load_mesh(path, scale=1.0, progress=None):
    """Read and clean a mesh file.

    Parameters
    ----------
    path : str
    scale : float
        Multiplies the coordinates (units: e.g. 0.001 for a file in mm).
    progress : callable, optional
        ``progress(stage, fraction)`` (see :mod:`app.progress`): the reading
        (no fraction: trimesh gives none) and, for more than ``LARGE_MESH``
        faces, the clean-up.

    Returns
    -------
    trimesh.Trimesh
        Cleaned, not otherwise processed (its faces keep their winding).

    Raises
    ------
    MeshLoadError
        Missing, unreadable, empty, NaN, degenerate, more than ``MAX_TRIANGLES``
        triangles, or coordinates beyond ``MAX_COORD`` (after the scale); the message
        names the file.
    """
    import trimesh

    path = os.fspath(path)
    if not os.path.exists(path):
        raise MeshLoadError(f"{path}: no such file")
    if os.path.isdir(path):
        raise MeshLoadError(f"{path}: is a directory, not a mesh file")
    if os.path.getsize(path) == 0:
        raise MeshLoadError(f"{path}: the file is empty")
    if not (np.isfinite(scale) and scale > 0):
        raise MeshLoadError(f"{path}: scale must be a positive number, got {scale!r}")
    size = os.path.getsize(path)
    what = os.path.basename(path) + (f" ({size / (1 << 20):.0f} MB)" if size > LARGE_FILE else "")
    stated = declared_triangles(path)
    if stated is not None and stated > MAX_TRIANGLES:
        raise _too_many(path, stated, " (as its header says)")
    report(progress, f"reading {what}", None)
    try:
        raw = _read(path)
    except MeshLoadError:
        raise
    except Exception as exc:  # trimesh raises many kinds for broken files
        detail = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        hint = next((h for kind, h in _READ_HINTS if isinstance(exc, kind)), "")
        raise MeshLoadError(f"{path}: cannot read a mesh{': ' + hint if hint else ''} "
                            f"({type(exc).__name__}{': ' + detail if detail else ''})") from None
    if len(raw.faces) > MAX_TRIANGLES:
        raise _too_many(path, len(raw.faces))
    vertices, faces = raw.vertices.view(np.ndarray), raw.faces.view(np.ndarray)
    del raw  # the arrays are all the clean-up needs; trimesh's caches go now
    v, f = clean_mesh(vertices, faces, name=path, progress=progress)
    del vertices, faces
    if float(scale) != 1.0:
        with np.errstate(over="ignore"):
            v *= float(scale)
        if not np.all(np.isfinite(v)):
            raise MeshLoadError(f"{path}: scale {scale!r} makes the coordinates overflow")
    far = float(np.abs(v).max())
    if far > MAX_COORD:
        after = f" after scale {scale!r}" if float(scale) != 1.0 else ""
        raise MeshLoadError(f"{path}: coordinates reach {far:.3g}{after}, beyond the {MAX_COORD:.0e} units "
                            "allowed (float64 geometry needs the headroom); rescale the file, or give it "
                            "a scale in a scene file")
    return trimesh.Trimesh(v, f, process=False)
