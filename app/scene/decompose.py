"""Cutting a mesh into convex point sets: the settings, the convexity test and the decomposers.

A mesh that is already convex is one piece, its hull; otherwise an
approximate convex decomposition: V-HACD (``vhacdx``, the fast default) or
CoACD (``coacd``, slower, closer to the shape), whose pieces are then grown
until they hold every point of the surface (:mod:`app.scene.surface_cover`).
The result is point sets (each piece is their hull); hulls, trees and the
disk cache are :mod:`app.scene.pieces`' and :mod:`app.scene.pieces_cache`'s.
"""

import numbers
from dataclasses import dataclass

import numpy as np

from obbcollide._validate import _show

from ..progress import report
from .surface_cover import cover_surface

__all__ = ["DecomposeSettings", "decompose", "is_convex", "METHODS", "DecomposerMissing", "DecomposerCrashed"]

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
    return cover_surface(v, f, pts, progress), method


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


def _spans_3d(p):
    c = p - p.mean(0)
    s = np.linalg.svd(c, compute_uv=False)
    return s[-1] > 1e-9 * max(s[0], 1e-300)
