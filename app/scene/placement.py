"""Where a new body goes: in free space above the scene, near where the camera looks.

A mesh the user adds (``--mesh``, a dropped file) starts centred over the
camera's target with its bottom at the target's height, is lifted above every
ground plane, then up until its world AABB overlaps no other body's, and a
little more, so it visibly falls. Only translation: the body keeps its
orientation and its size (:func:`size_note` says when the size looks like a
unit mistake; guessing the units instead would be wrong as often as right).
"""

import numpy as np

from obbcollide.shapes import HalfSpace

__all__ = ["place_body", "size_note", "aabbs_overlap", "ground_for", "typical_size", "unit_scale"]

# A body starts this fraction of its largest extent above what is under it (a visible drop).
DROP = 0.25
# size_note speaks up (and unit_scale looks for a unit) past this ratio between the new body
# and the scene's typical body.
ODD_RATIO = 25.0
# Units a mesh file is often written in, as fractions of the scene's unit (metres: gravity is 9.81).
# The first that brings a file within ODD_RATIO of the scene is taken (inches, 2.54 cm, would never
# be reached: where centimetres leave a file too large, inches leave it larger).
UNITS = (("millimetres", 0.001), ("centimetres", 0.01))


def aabbs_overlap(lo_a, hi_a, lo_b, hi_b, gap=0.0):
    """True when the boxes ``[lo_a, hi_a]`` and ``[lo_b, hi_b]`` (each (3,)) come closer than ``gap``."""
    return bool(np.all(lo_a < hi_b + gap) and np.all(lo_b < hi_a + gap))


def _ground_planes(bodies):
    """World ``(normal (3,), offset)`` of every half-space of ``bodies``: the solid ``normal . x <= offset``."""
    planes = []
    for b in bodies:
        for s in b.shapes:
            if isinstance(s, HalfSpace):
                n = b.pose[:3, :3] @ s.normal
                planes.append((n, s.offset + float(n @ b.pose[:3, 3])))
    return planes


def place_body(body, others, target, drop=DROP):
    """Translate ``body`` into free space above the scene near ``target``; returns the translation (3,).

    The body's world AABB is centred on ``target`` in x and z with its bottom
    at ``target``'s height; then it is lifted until it is above every ground
    (half-space) of ``others`` and its AABB overlaps no other body's AABB,
    each with a gap of ``drop`` times its largest extent (y is up). Lifting
    above the highest box it meets, again until none is met, ends after at
    most one lift per box.

    Parameters
    ----------
    body : app.world.body.Body
        Its pose is changed (translation only).
    others : list of app.world.body.Body
        The bodies already in the scene.
    target : (3,) float
        Where the camera looks.
    drop : float
        The gap, as a fraction of the body's largest extent.
    """
    lo, hi = body.world_aabb()
    gap = drop * float(np.max(hi - lo))
    target = np.asarray(target, float)
    shift = np.array([target[0] - (lo[0] + hi[0]) / 2, target[1] - lo[1], target[2] - (lo[2] + hi[2]) / 2])
    lo, hi = lo + shift, hi + shift
    center, half = (lo + hi) / 2, (hi - lo) / 2
    for n, offset in _ground_planes([b for b in others if b.unbounded]):
        if n[1] <= 1e-6:  # a wall or a ceiling: lifting does not get the body out of it
            continue
        lowest = float(n @ center - np.abs(n) @ half)  # the box's least reach along n
        lift = (offset + gap - lowest) / n[1]
        if lift > 0:
            shift[1] += lift
            lo[1] += lift
            hi[1] += lift
            center[1] += lift
    boxes = [b.world_aabb() for b in others if not b.unbounded]
    for _ in range(len(boxes) + 1):
        tops = [b_hi[1] for b_lo, b_hi in boxes if aabbs_overlap(lo, hi, b_lo, b_hi, gap)]
        if not tops:
            break
        lift = max(tops) + gap - lo[1]
        shift[1] += lift
        lo[1] += lift
        hi[1] += lift
    pose = body.pose.copy()
    pose[:3, 3] += shift
    body.pose = pose
    return shift


def _extent(body):
    return float(np.max(np.ptp(body.vertices, axis=0)))


def typical_size(bodies):
    """The median of the bodies' sizes (largest extent of their vertices' box), grounds left out; None if none."""
    sizes = [_extent(b) for b in bodies if not b.unbounded]
    return float(np.median(sizes)) if sizes else None


def unit_scale(name, size, typical):
    """``(factor, note)``: the scale a mesh file of ``size`` is taken at in a scene whose typical body is
    ``typical``.

    A file more than :data:`ODD_RATIO` times the scene's typical body is most
    often in other units: 3D printing and CAD files are in millimetres, the
    scene in metres. The first of :data:`UNITS` (millimetres, then
    centimetres) that brings it within ``ODD_RATIO`` of the typical size is
    taken; the note says what was done and how to keep the file's size.
    Otherwise (or with no scene to compare with: ``typical`` None) ``(1.0, None)``.
    """
    if typical is None or not typical > 0 or not size / typical > ODD_RATIO:
        return 1.0, None
    for unit, factor in UNITS:
        if 1.0 / ODD_RATIO <= size * factor / typical <= ODD_RATIO:
            return factor, (f"{name} is {size:.3g} units across, {size / typical:.0f} times the scene's typical "
                            f"body ({typical:.3g}): read as {unit}, scaled by {factor:g} to {size * factor:.3g} "
                            "(--mesh-scale 1 keeps the file's size)")
    return 1.0, None


def size_note(body, others):
    """A message when ``body`` is far larger or smaller than the scene's bodies (units?), else None.

    A body's size is the largest extent of its vertices' bounding box (model
    frame; the root OBB of a cube can be turned, and its AABB twice as large);
    the scene's typical size is the median of the other bodies' (grounds left
    out). With no other body, sizes above 1000 or below 0.001 units are called out.
    """
    size = _extent(body)
    sizes = [_extent(b) for b in others if not b.unbounded]
    hint = "a scene file's 'scale' key converts units (0.001 for millimetres); the body is kept as it is"
    if sizes:
        typical = float(np.median(sizes))
        ratio = size / typical if typical > 0 else np.inf
        if ratio > ODD_RATIO or ratio < 1.0 / ODD_RATIO:
            words = f"{ratio:.0f} times" if ratio > 1 else f"1/{1 / ratio:.0f} of"
            return (f"{body.name} is {size:.3g} units across, {words} the scene's typical body ({typical:.3g}): "
                    f"other units? {hint}")
        return None
    if size > 1e3 or size < 1e-3:
        return f"{body.name} is {size:.3g} units across: other units? {hint}"
    return None


def ground_for(body, others, target):
    """A static ground plane for ``body`` to land on when ``others`` have none, else None.

    A dynamic body in a scene with no ground (the default demo, ``--empty``)
    would fall for ever. The plane is level, at the lowest point of the other
    bodies (so it cuts none of them) or at ``target``'s height when that is
    lower, centred under ``target``, and drawn large: 20 times the body's size
    or 4 times the scene's, whichever is more (it collides as an infinite
    half-space).

    Returns
    -------
    app.world.body.Body or None
    """
    if not body.moves or any(b.unbounded for b in others):
        return None
    from .loader import build_body
    from .scene_file import BodySpec

    target = np.asarray(target, float)
    height = float(target[1])
    extent = 0.0
    boxes = [b.world_aabb() for b in others]
    if boxes:
        boxes = np.array(boxes)
        height = min(height, float(boxes[:, 0, 1].min()))
        extent = float(np.max(boxes[:, 1, [0, 2]].max(0) - boxes[:, 0, [0, 2]].min(0)))
    size = max(20.0 * float(np.max(np.ptp(body.world_aabb(), axis=0))), 4.0 * extent)
    spec = BodySpec("ground", shape="plane", size=(size, size), position=(float(target[0]), height,
                    float(target[2])), motion="static", color=(0.55, 0.57, 0.6))
    return build_body(spec)
