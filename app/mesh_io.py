"""Reading a user's mesh file into one clean triangle mesh, or a clear error.

Every format trimesh reads (OBJ, STL, PLY, OFF, GLB/glTF, ...). A file holding
a scene of several geometries is flattened with each node's transform. The
clean-up merges duplicate vertices and drops degenerate and duplicate faces
and unreferenced vertices. Problems raise :class:`MeshLoadError`, whose
message names the file and the problem; nothing else escapes.
"""

import hashlib
import os

import numpy as np

__all__ = ["MeshLoadError", "load_mesh", "clean_mesh", "file_digest"]

# Above this many faces a clean-up reports its steps through ``progress``.
LARGE_MESH = 500_000


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


def clean_mesh(vertices, faces, name="mesh", progress=None):
    """Check and clean raw arrays.

    Parameters
    ----------
    vertices : (n, 3) float
    faces : (m, 3) int
    name : str
        Used in error messages (usually the file path).
    progress : callable, optional
        ``progress(step_name)`` for large meshes.

    Returns
    -------
    vertices : (n', 3) float64
    faces : (m', 3) int64
        Duplicate vertices merged (exact coordinates), degenerate faces (two
        equal corners after merging) and duplicate faces dropped, unreferenced
        vertices removed.

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
    f = f.astype(np.int64)
    big = len(f) > LARGE_MESH and progress is not None
    if big:
        progress("merging vertices")
    uniq, inverse = np.unique(v, axis=0, return_inverse=True)
    f = inverse.reshape(-1)[f]
    if big:
        progress("dropping degenerate and duplicate faces")
    keep = (f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])
    f = f[keep]
    if len(f) == 0:
        raise MeshLoadError(f"{name}: every face is degenerate (repeated corners)")
    # duplicate faces: same corner set, whatever the order or orientation
    _, first = np.unique(np.sort(f, axis=1), axis=0, return_index=True)
    f = f[np.sort(first)]
    used = np.unique(f)
    remap = np.full(len(uniq), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    v, f = uniq[used], remap[f]
    if float(np.ptp(v, axis=0).max()) == 0.0:
        raise MeshLoadError(f"{name}: the mesh has zero size (all vertices coincide)")
    return np.ascontiguousarray(v), np.ascontiguousarray(f)


def load_mesh(path, scale=1.0, progress=None):
    """Read and clean a mesh file.

    Parameters
    ----------
    path : str
    scale : float
        Multiplies the coordinates (units: e.g. 0.001 for a file in mm).
    progress : callable, optional
        ``progress(step_name)`` for large meshes.

    Returns
    -------
    trimesh.Trimesh
        Cleaned, not otherwise processed (its faces keep their winding).

    Raises
    ------
    MeshLoadError
        Missing, unreadable, empty, NaN, or degenerate; the message names the file.
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
    try:
        raw = _read(path)
    except MeshLoadError:
        raise
    except Exception as exc:  # trimesh raises many kinds for broken files
        detail = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        raise MeshLoadError(f"{path}: cannot read a mesh ({type(exc).__name__}{': ' + detail if detail else ''})") \
            from None
    v, f = clean_mesh(raw.vertices, raw.faces, name=path, progress=progress)
    with np.errstate(over="ignore"):
        v = v * float(scale)
    if not np.all(np.isfinite(v)):
        raise MeshLoadError(f"{path}: scale {scale!r} makes the coordinates overflow")
    return trimesh.Trimesh(v, f, process=False)
