"""Geometry to vertex arrays, GL-free: what the renderer uploads.

Everything returns float32 arrays ready for a vertex buffer: flat-shaded
triangle lists (positions and normals), line lists for box wireframes, grids,
axes, crosses at points, the ground. Sizes that must read the same at any
scale (markers, normals, the smallest a body is drawn) are given in pixels
and turned into world lengths per point (:func:`pixel_world_sizes`). Tested
without a window.
"""

import math

import numpy as np

# The 12 edges of a box as pairs of corner indices; corners are ordered by
# the signs (-1/+1) of x, y, z in binary (corner k has x sign bit 2, y bit 1, z bit 0).
BOX_EDGES = np.array([[0, 1], [2, 3], [4, 5], [6, 7], [0, 2], [1, 3], [4, 6], [5, 7],
                      [0, 4], [1, 5], [2, 6], [3, 7]])
_SIGNS = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)


def flat_mesh(vertices, faces):
    """Flat-shaded triangle list.

    Parameters
    ----------
    vertices : (n, 3) float
    faces : (m, 3) int

    Returns
    -------
    positions : (3m, 3) float32
    normals : (3m, 3) float32
        The face normal repeated on its three corners (zero for degenerate faces).
    """
    tri = np.asarray(vertices, float)[np.asarray(faces)]
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    ln = np.linalg.norm(n, axis=1)
    n = np.divide(n, ln[:, None], out=np.zeros_like(n), where=ln[:, None] > 0)
    return tri.reshape(-1, 3).astype(np.float32), np.repeat(n, 3, axis=0).astype(np.float32)


def box_lines(centers, axes, half_extents, pose=None):
    """Wireframes of oriented boxes as a line list.

    Parameters
    ----------
    centers : (k, 3), axes : (k, 3, 3) rows, half_extents : (k, 3)
    pose : (4, 4), optional
        Model-to-world transform applied to all boxes.

    Returns
    -------
    lines : (24 k, 3) float32
        Pairs of points, 12 edges per box.
    """
    corners = box_corners(centers, axes, half_extents)
    if pose is not None:
        corners = corners @ pose[:3, :3].T + pose[:3, 3]
    return corners[:, BOX_EDGES.ravel()].reshape(-1, 3).astype(np.float32)


def box_corners(centers, axes, half_extents):
    """The 8 corners of oriented boxes: ``centers (k, 3)``, ``axes (k, 3, 3)`` rows, ``half_extents
    (k, 3)`` -> ``(k, 8, 3)`` float64."""
    centers = np.asarray(centers, float).reshape(-1, 3)
    axes = np.asarray(axes, float).reshape(-1, 3, 3)
    half = np.asarray(half_extents, float).reshape(-1, 3)
    return centers[:, None, :] + np.einsum("cj,kj,kjd->kcd", _SIGNS, half, axes)


def posed_box_lines(corners, rotations, translations):
    """Wireframes of boxes each with a pose of its own, in one go.

    Parameters
    ----------
    corners : (k, 8, 3)
        Model-space corners (:func:`box_corners`).
    rotations : (k, 3, 3), translations : (k, 3)
        Each box's model-to-world transform.

    Returns
    -------
    lines : (24 k, 3) float32
        As :func:`box_lines`.
    """
    world = np.einsum("kij,kcj->kci", rotations, corners) + translations[:, None, :]
    return world[:, BOX_EDGES.ravel()].reshape(-1, 3).astype(np.float32)


def aabb_lines(lo, hi):
    """Wireframes of axis-aligned boxes ``(k, 3)`` as a line list ``(24 k, 3)``."""
    lo, hi = np.asarray(lo, float).reshape(-1, 3), np.asarray(hi, float).reshape(-1, 3)
    eye = np.broadcast_to(np.eye(3), (len(lo), 3, 3))
    return box_lines((lo + hi) / 2, eye, (hi - lo) / 2)


# The floor grid reaches at most this far (scene units) and has at most this many lines
# each way: a body far away, or a bound that is not finite, never asks for a grid that
# cannot be built or that float32 vertices cannot hold.
GRID_MAX = 1e6
GRID_MAX_TICKS = 1001


def grid_extent(lo, hi):
    """Half size and spacing of the floor grid (centred on the origin) for a scene's box.

    Parameters
    ----------
    lo, hi : (3,) float
        The scene's world AABB; coordinates that are not finite are ignored.

    Returns
    -------
    half : float
        The grid covers ``[-half, half]`` in x and z: 1.3 times the farthest x or z
        extent from the origin (at least 1e-3, at most about ``GRID_MAX``), a whole
        number of steps.
    step : float
        A power of ten, about a tenth to a fortieth of the extent.
    """
    c = np.abs(np.concatenate([np.asarray(lo, float)[[0, 2]], np.asarray(hi, float)[[0, 2]]]))
    span = float(np.clip(c[np.isfinite(c)].max(initial=0.0), 1e-3, GRID_MAX))
    step = 10.0 ** math.floor(math.log10(span / 4))
    return math.ceil(span * 1.3 / step - 1e-9) * step, step  # - 1e-9: 13.000000000000002 steps are 13


def grid_lines(half_size=5.0, step=0.5, y=0.0):
    """A square grid on the plane ``y`` as a line list ``(4 k, 3)`` float32: lines at
    ``-half_size, -half_size + step, ...`` up to ``half_size``, along x and along z.

    Sizes that are not finite, not positive or past float32's range give no
    lines; a step finer than ``GRID_MAX_TICKS`` lines allow is widened.
    """
    limit = float(np.finfo(np.float32).max)
    if not (0 < half_size < limit and 0 < step < limit and abs(y) < limit):  # False for NaN too
        return np.zeros((0, 3), np.float32)
    step = max(step, 2 * half_size / (GRID_MAX_TICKS - 1))
    ticks = -half_size + step * np.arange(int(2 * half_size / step + 0.5) + 1)
    a = [[t, y, -half_size] for t in ticks] + [[-half_size, y, t] for t in ticks]
    b = [[t, y, half_size] for t in ticks] + [[half_size, y, t] for t in ticks]
    return np.stack([np.array(a), np.array(b)], axis=1).reshape(-1, 3).astype(np.float32)


def cross_lines(points, size):
    """Three short axis-aligned strokes through each point.

    Parameters
    ----------
    points : (k, 3) float
    size : float or (k,) float
        Half the length of each stroke (world units), one for all or one per point.

    Returns
    -------
    (6 k, 3) float32 line list
    """
    p = np.asarray(points, float).reshape(-1, 3)
    size = np.broadcast_to(np.asarray(size, float).reshape(-1), (len(p),)) if len(p) else np.zeros(0)
    offs = size[:, None, None] * np.eye(3)  # (k, 3, 3)
    ends = np.stack([p[:, None] - offs, p[:, None] + offs], axis=2)  # (k, 3, 2, 3)
    return ends.reshape(-1, 3).astype(np.float32)


def segment_lines(segments):
    """Segments ``(k, 2, 3)`` as a line list ``(2 k, 3)``."""
    return np.asarray(segments, float).reshape(-1, 3).astype(np.float32)


def ray_lines(points, directions, length):
    """A stroke from each point along its direction: ``(2 k, 3)``.

    ``length`` is one float for all or ``(k,)`` (world units, per point).
    """
    p = np.asarray(points, float).reshape(-1, 3)
    d = np.asarray(directions, float).reshape(-1, 3)
    length = np.asarray(length, float)
    if length.ndim:
        length = length.reshape(-1, 1)
    return np.stack([p, p + d * length], axis=1).reshape(-1, 3).astype(np.float32)


def pixel_world_sizes(points, eye, forward, fovy_deg, viewport_height, near=1e-9):
    """World length of one pixel at each point, for a perspective camera.

    A length ``s`` at depth ``z`` (along the view direction), across the view,
    covers ``s / (2 z tan(fovy / 2)) * viewport_height`` pixels, so a marker of
    ``k`` pixels at ``p`` is ``k`` times this long. (The depth is the distance
    along the view axis, not to the eye: off the axis the two differ, and the
    projection divides by the depth.)

    Parameters
    ----------
    points : (k, 3) float
    eye : (3,) float
    forward : (3,) float
        Unit view direction.
    fovy_deg : float
        Vertical field of view.
    viewport_height : int
        Pixels.
    near : float
        Depths below this (points at or behind the eye) count as this.

    Returns
    -------
    (k,) float64
    """
    p = np.asarray(points, float).reshape(-1, 3)
    depth = np.maximum((p - np.asarray(eye, float)) @ np.asarray(forward, float), near)
    return depth * (2.0 * math.tan(math.radians(fovy_deg) / 2) / max(1, int(viewport_height)))


def tiny_bodies(centers, radii, eye, forward, fovy_deg, viewport_height, min_pixels):
    """The bodies in front of the camera whose bounding sphere would be drawn less than
    ``min_pixels`` in radius: they get a marker of that size (a 2 cm ball seen from 5 m is
    a few pixels, and at 80 m/s no one would find it).

    Parameters
    ----------
    centers : (k, 3) float
    radii : (k,) float
        Bounding radii (world units).
    eye, forward, fovy_deg, viewport_height
        The camera, as :func:`pixel_world_sizes` takes it.
    min_pixels : float

    Returns
    -------
    (m,) int64
        Indices into ``centers``.
    """
    c = np.asarray(centers, float).reshape(-1, 3)
    if not len(c):
        return np.zeros(0, np.int64)
    ahead = (c - np.asarray(eye, float)) @ np.asarray(forward, float) > 0
    px = np.asarray(radii, float).reshape(-1) / pixel_world_sizes(c, eye, forward, fovy_deg, viewport_height)
    return np.flatnonzero(ahead & (px < min_pixels))


def ground_quad(normal, offset, eye, half_size):
    """A square on the plane ``normal . x = offset``, centred under the eye: two triangles.

    Parameters
    ----------
    normal : (3,) float
        Unit normal of the plane.
    offset : float
    eye : (3,) float
        Its foot on the plane is the square's centre.
    half_size : float

    Returns
    -------
    (6, 3) float32
    """
    n = np.asarray(normal, float)
    foot = np.asarray(eye, float) - (n @ eye - offset) * n
    u = np.cross(n, [1.0, 0, 0] if abs(n[0]) < 0.9 else [0, 0, 1.0])
    u /= np.linalg.norm(u)
    v = np.cross(n, u)
    c = foot + half_size * np.array([-u - v, u - v, u + v, -u + v])
    return c[[0, 1, 2, 0, 2, 3]].astype(np.float32)


def ground_fade(eye, view_distance, lo, hi, far_plane):
    """Where a ground drawn to the horizon fades into the background.

    Full colour out to the farther of four view distances and the scene's farthest
    corner (so a body resting anywhere in the scene rests on visible ground), gone at four
    times that, or just before the camera's far plane where that comes first.

    Parameters
    ----------
    eye : (3,) float
    view_distance : float
        The camera's distance to what it looks at.
    lo, hi : (3,) float
        The scene's box (its bounded bodies).
    far_plane : float
        The camera's far clipping distance.

    Returns
    -------
    start, end : float
        Distances from the eye.
    """
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    corners = np.where(np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], bool), hi, lo)
    far = float(np.linalg.norm(corners - np.asarray(eye, float), axis=1).max())
    start = max(4.0 * float(view_distance), 1.25 * far if math.isfinite(far) else 0.0)
    end = min(4.0 * start, 0.9 * float(far_plane))
    return min(start, 0.5 * end), end


def colors(n, rgb):
    """``(n, 3)`` float32 of one colour (per-vertex colour for a line list)."""
    return np.tile(np.asarray(rgb, np.float32), (n, 1))


def instance_rows(poses, colors, highlight):
    """Per-instance attributes of bodies sharing one mesh buffer.

    Parameters
    ----------
    poses : (k, 4, 4) float
        Model-to-world transforms.
    colors : (k, 3) float
        RGB in 0..1.
    highlight : (k,) float
        1 for the selected body, else 0.

    Returns
    -------
    (k, 20) float32
        The model matrix's four columns (what GLSL's ``mat4(c0, c1, c2, c3)``
        takes), then RGB and highlight.
    """
    poses = np.asarray(poses, float).reshape(-1, 4, 4)
    out = np.empty((len(poses), 20), np.float32)
    out[:, :16] = np.transpose(poses, (0, 2, 1)).reshape(-1, 16)
    out[:, 16:19] = np.asarray(colors, float).reshape(-1, 3)
    out[:, 19] = np.asarray(highlight, float).reshape(-1)
    return out
