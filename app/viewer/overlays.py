"""The debug overlays: their colours and sizes, the arrays they are gathered into, and the
geometry of each overlay for a frame (:class:`OverlayDrawing`, part of the viewer's
:class:`~app.viewer.session.Session`). GL-free: the renderer uploads and draws the arrays.
"""

import numpy as np

import obbcollide as co

__all__ = ["COLORS", "OVERLAYS", "MARKER_PX", "NORMAL_PX", "MANIFOLD_MARKER_PX", "MANIFOLD_NORMAL_PX",
           "MIN_BODY_PX", "VertexArrays", "LineCollector", "OverlayDrawing"]

COLORS = {
    "background": (0.11, 0.12, 0.14),
    "grid": (0.30, 0.32, 0.36),
    "boxes": (0.15, 0.90, 0.95),
    "aabbs": (0.85, 0.85, 0.85),
    "triangles": (1.00, 0.10, 0.10),
    "segments": (1.00, 1.00, 0.25),
    "contacts": (1.00, 0.20, 1.00),
    "visited": (0.20, 1.00, 0.30),
    "pruned": (0.55, 0.22, 0.22),
    "axis": (0.70, 0.45, 1.00),
    "selected": (1.00, 1.00, 1.00),
    "pieces": (0.55, 0.95, 0.45),
    "manifolds": (1.00, 0.55, 0.00),
    "grab": (0.95, 0.95, 0.95),
}

OVERLAYS = ("boxes", "aabbs", "pieces", "triangles", "segments", "contacts", "manifolds", "traversal", "axis", "help",
            "grid", "gjk")


# Sizes on screen, in pixels, whatever the scene's scale or the camera's distance.
MARKER_PX = 5            # half a contact point's cross
NORMAL_PX = 30           # a contact normal
MANIFOLD_MARKER_PX = 9   # half a manifold point's cross
MANIFOLD_NORMAL_PX = 45  # a manifold's normal
MIN_BODY_PX = 4          # a body drawn smaller than this radius gets a disc of this radius


class VertexArrays:
    """Positions and colours ``(n, 3)`` float32 each, appended to in place: the storage is kept
    between frames and grows (doubling) only when a frame needs more."""

    def __init__(self, capacity=1024):
        self.positions = np.zeros((capacity, 3), np.float32)
        self.colors = np.zeros((capacity, 3), np.float32)
        self.count = 0

    def clear(self):
        self.count = 0

    def add(self, points, color):
        """Append ``points`` (k, 3), all in ``color`` (3,)."""
        k = len(points)
        end = self.count + k
        if end > len(self.positions):
            size = max(end, 2 * len(self.positions))
            for name in ("positions", "colors"):
                grown = np.zeros((size, 3), np.float32)
                grown[:self.count] = getattr(self, name)[:self.count]
                setattr(self, name, grown)
        self.positions[self.count:end] = points
        self.colors[self.count:end] = color
        self.count = end

    def views(self):
        """``(positions (n, 3), colors (n, 3))``: views of the storage, valid until the next :meth:`clear`."""
        return self.positions[:self.count], self.colors[:self.count]


class LineCollector:
    """A :class:`collision.debug_draw.DebugDraw` that gathers arrays for the renderer.

    The arrays are kept between frames (:meth:`reset` empties them without freeing them).

    Parameters
    ----------
    pixel_size : callable
        ``(k, 3) points -> (k,)`` world length of one pixel at each point
        (:func:`app.viewer.buffers.pixel_world_sizes` of the camera): point
        markers are ``marker_px`` pixels, whatever the scale.
    """

    def __init__(self, pixel_size):
        self._lines = VertexArrays()
        self._tris = VertexArrays()
        self.reset(pixel_size)

    def reset(self, pixel_size):
        """Empty the collector for a new frame (keeping its storage), with the frame's ``pixel_size``."""
        self._lines.clear()
        self._tris.clear()
        self.pixel_size = pixel_size
        self.marker_px = MARKER_PX

    @property
    def line_count(self):
        """Line vertices gathered so far."""
        return self._lines.count

    def line_range(self, start, stop):
        """A copy of line vertices ``start:stop`` ((k, 3) float32)."""
        return self._lines.positions[start:stop].copy()

    def boxes(self, centers, axes, half_extents, color):
        from .buffers import box_lines

        pts = box_lines(centers, axes, half_extents)
        self._add_lines(pts, color)

    def segments(self, segments, color):
        self._add_lines(np.asarray(segments, np.float32).reshape(-1, 3), color)

    def points(self, points, color):
        from .buffers import cross_lines

        points = np.asarray(points, float).reshape(-1, 3)
        self._add_lines(cross_lines(points, self.marker_px * self.pixel_size(points)), color)

    def rays(self, points, directions, pixels, color):
        """A stroke ``pixels`` long on screen (across the view) from each point along its direction."""
        from .buffers import ray_lines

        points = np.asarray(points, float).reshape(-1, 3)
        self._add_lines(ray_lines(points, directions, pixels * self.pixel_size(points)), color)

    def triangles(self, triangles, color):
        self._tris.add(np.asarray(triangles, np.float32).reshape(-1, 3), np.asarray(color, np.float32))

    def _add_lines(self, pts, color):
        if len(pts):
            self._lines.add(pts, np.asarray(color, np.float32))

    def arrays(self):
        """``(lines (n, 3), line_colors (n, 3), tris (m, 3), tri_colors (m, 3))`` float32: views of the
        collector's storage, valid until its next :meth:`reset`."""
        return (*self._lines.views(), *self._tris.views())


class OverlayDrawing:
    """The session's overlays (mixed into :class:`~app.viewer.session.Session`): reads its world,
    ``flags``, ``depth``, selection and pair inspector; sets ``trace_counts`` and
    ``separating_axis``."""

    def overlays(self, out=None):
        """Debug geometry for this frame, through the core's DebugDraw protocol.

        ``out``: a :class:`LineCollector` to fill (emptied first; its storage is reused, and the
        arrays returned are views of it); default a new one."""
        from obbcollide import debug_draw as dd

        from .buffers import pixel_world_sizes

        cam = self.camera
        eye = cam.eye
        forward = (cam.target - eye) / cam.distance

        def pixel_size(p):
            return pixel_world_sizes(p, eye, forward, cam.fovy, cam.height)

        draw = out if out is not None else LineCollector(pixel_size)
        draw.reset(pixel_size)
        world = self.world
        if self.flags["boxes"]:
            self._draw_boxes(draw)
        if self.flags["aabbs"]:
            from .buffers import aabb_lines

            boxes = np.array([b.world_aabb() for b in world.bodies]) if world.bodies else np.zeros((0, 2, 3))
            if len(boxes):
                draw._add_lines(aabb_lines(boxes[:, 0], boxes[:, 1]), COLORS["aabbs"])
        if self.flags["pieces"]:
            for b in world.bodies:
                if b.pieces is None or any(isinstance(s, co.TriMesh) for s in b.shapes):
                    continue  # none, or a decomposition the body does not collide as (it does as its triangles)
                r, t = b.pose[:3, :3], b.pose[:3, 3]
                for hull in b.pieces.hulls:
                    seg = hull.vertices[hull.edges] @ r.T + t
                    draw.segments(seg, COLORS["pieces"])
        marks, marks_normals = [], []
        for c in world.contacts:
            a, b = world.bodies[c.a], world.bodies[c.b]
            result = co.CollideResult(True, c.pairs, c.segments, c.box_tests, c.tri_tests, c.contained, True)
            dd.draw_collide(draw, result, a.tree, a.pose, b.tree, b.pose,
                            tri_color=COLORS["triangles"] if self.flags["triangles"] else None,
                            seg_color=COLORS["segments"] if self.flags["segments"] else None)
            if self.flags["contacts"] and len(c.pairs):
                # A readable sample: every contact marked would hide the curves.
                every = max(1, len(c.pairs) // 16)
                marks.append(c.points()[::every])
                marks_normals.append(c.normals[::every])
        if marks:  # all pairs' markers and normals in one go
            marks, marks_normals = np.concatenate(marks), np.concatenate(marks_normals)
            draw.points(marks, COLORS["contacts"])
            draw.rays(marks, marks_normals, NORMAL_PX, COLORS["contacts"])
        if self.flags["manifolds"]:
            draw.marker_px = MANIFOLD_MARKER_PX
            for pm in world.manifolds:  # the patch outline, each point and the normal (A to B)
                m = pm.manifold
                pts = m.points
                draw.points(pts, COLORS["manifolds"])
                draw.rays(pts, np.broadcast_to(m.normal, pts.shape), MANIFOLD_NORMAL_PX, COLORS["manifolds"])
                if len(pts) > 2:  # in order around the patch, seen along the normal
                    d = pts - pts.mean(0)
                    u = np.cross(m.normal, d[0]) if np.linalg.norm(np.cross(m.normal, d[0])) > 0 else d[1]
                    ring = pts[np.argsort(np.arctan2(d @ u, d @ np.cross(u, m.normal)))]
                    draw.segments(np.stack([ring, np.roll(ring, -1, axis=0)], axis=1), COLORS["manifolds"])
                elif len(pts) == 2:
                    draw.segments(pts[None], COLORS["manifolds"])
            draw.marker_px = MARKER_PX
        if world.narrow_choice.active:  # the chosen narrow phase's answers and disagreements
            from .narrow_panel import draw_narrow_overlay

            draw_narrow_overlay(draw, world)
        grab = self.grab_line
        if grab is not None:  # the mouse joint: a line from the grabbed point to the cursor, both marked
            draw.segments(np.stack(grab)[None], COLORS["grab"])
            draw.points(np.stack(grab), COLORS["grab"])
        self.trace_counts = self.inspector.draw(draw, self.flags, COLORS)  # the pair's views (O, X, I)
        self.separating_axis = self.inspector.root_axis() if self.flags["axis"] else -1
        return draw.arrays()

    def _draw_boxes(self, draw):
        """Every body's OBB tree boxes at the depth shown, but the grounds', as one batch: each
        tree's boxes at a depth are kept as model-space corners, posed together."""
        from .buffers import box_corners, posed_box_lines

        cache = self.__dict__.setdefault("_tree_corners", {})  # (id(tree), depth) -> (tree, (m, 8, 3))
        parts, owners = [], []
        bodies = self.world.bodies
        for k, b in enumerate(bodies):
            if b.unbounded:  # a ground, drawn as its plane: its mesh's finite boxes would float there
                continue
            depth = self.depth if not self.depth_selected_only or k == self.selected else 0
            hit = cache.get((id(b.tree), depth))
            if hit is None or hit[0] is not b.tree:
                tree = b.tree
                d = tree.node_depths()
                sel = (d == depth) | ((d < depth) & (tree.child < 0))
                hit = (tree, box_corners(tree.centers[sel], tree.axes[sel], tree.half_extents[sel]))
                cache[(id(tree), depth)] = hit
            parts.append(hit[1])
            owners.append(k)
        if len(cache) > 4 * len(bodies) + 64:  # trees of removed bodies
            live = {id(b.tree) for b in bodies}
            for key in [key for key in cache if key[0] not in live]:
                del cache[key]
        if parts:
            owner = np.repeat(owners, [len(p) for p in parts])
            poses = np.array([b.pose for b in bodies])[owner]
            draw._add_lines(posed_box_lines(np.concatenate(parts), poses[:, :3, :3], poses[:, :3, 3]),
                            COLORS["boxes"])
