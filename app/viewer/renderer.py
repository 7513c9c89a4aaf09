"""GL drawing: shader programs, instanced mesh buffers, per-frame debug lines.

Shader-based OpenGL 3.3 through pyglet 2 (raw calls for instancing). Bodies
are flat-shaded, lit by a key light and a headlight, coloured per body. Each
distinct mesh is uploaded once; all bodies using it are drawn with one
instanced draw call whose per-instance attributes (model matrix, colour,
highlight) are refreshed every frame, so hundreds of bodies cost a handful of
draw calls. Debug overlays (boxes, segments, markers, highlighted triangles)
are gathered each frame into one line list and one triangle list, whose numpy
arrays and GPU buffers (:class:`OverlayBuffer`) are kept from frame to frame:
only the vertices that changed are uploaded, and the buffers grow only when a
frame needs more.
"""

import ctypes
import time

import numpy as np
import pyglet
from pyglet import gl
from pyglet.graphics.shader import Shader, ShaderProgram

from obbcollide.shapes import HalfSpace

from .buffers import colors, flat_mesh, grid_extent, grid_lines, ground_fade, ground_quad, instance_rows, \
    pixel_world_sizes, tiny_bodies
from .layout import FontMetrics, layout_text
from .overlays import COLORS, MIN_BODY_PX, LineCollector

MESH_VS = """#version 330 core
layout(location = 0) in vec3 position;
layout(location = 1) in vec3 normal;
layout(location = 2) in vec4 model_c0;   // per instance: the model matrix columns,
layout(location = 3) in vec4 model_c1;
layout(location = 4) in vec4 model_c2;
layout(location = 5) in vec4 model_c3;
layout(location = 6) in vec4 tint;       // and RGB + highlight
uniform mat4 vp;
out vec3 v_normal;
out vec3 v_pos;
out vec3 v_color;
out float v_highlight;
void main() {
    mat4 model = mat4(model_c0, model_c1, model_c2, model_c3);
    v_normal = mat3(model) * normal;
    vec4 world = model * vec4(position, 1.0);
    v_pos = world.xyz;
    v_color = tint.rgb;
    v_highlight = tint.a;
    gl_Position = vp * world;
}
"""

# The one lighting of bodies and grounds: two-sided (open meshes look right too), a key light
# from above plus a head light, and the selection's highlight towards white.
SHADE_GLSL = """
vec3 shade(vec3 color, vec3 n, vec3 v, float highlight) {
    if (dot(n, v) < 0.0) n = -n;
    vec3 key = normalize(vec3(0.35, 1.0, 0.55));
    vec3 c = color * (0.22 + 0.50 * max(dot(n, key), 0.0) + 0.30 * max(dot(n, v), 0.0));
    return mix(c, vec3(1.0), 0.25 * highlight);
}
"""

MESH_FS = """#version 330 core
in vec3 v_normal;
in vec3 v_pos;
in vec3 v_color;
in float v_highlight;
uniform vec3 eye;
out vec4 frag;
""" + SHADE_GLSL + """
void main() {
    frag = vec4(shade(v_color, normalize(v_normal), normalize(eye - v_pos), v_highlight), 1.0);
}
"""

GROUND_VS = """#version 330 core
in vec3 position;
uniform mat4 vp;
out vec3 v_pos;
void main() {
    v_pos = position;
    gl_Position = vp * vec4(position, 1.0);
}
"""

# Lit as the meshes are (a flat face up), fading into the background with the distance from
# the eye: the ground reaches the horizon as the half-space it collides as does.
GROUND_FS = """#version 330 core
in vec3 v_pos;
uniform vec3 eye;
uniform vec3 normal;
uniform vec3 color;
uniform vec3 background;
uniform float highlight;
uniform vec2 fade;   // full colour up to fade.x from the eye, the background from fade.y on
out vec4 frag;
""" + SHADE_GLSL + """
void main() {
    vec3 c = shade(color, normal, normalize(eye - v_pos), highlight);
    frag = vec4(mix(c, background, smoothstep(fade.x, fade.y, distance(eye, v_pos))), 1.0);
}
"""

# A disc of a few pixels at the centre of a body too small to see (gl_PointSize), in the
# body's colour with a dark rim so it stands out on the ground and the background alike.
DOT_VS = """#version 330 core
in vec3 position;
in vec3 color;
in float size;
uniform mat4 vp;
out vec3 v_color;
void main() {
    v_color = color;
    gl_Position = vp * vec4(position, 1.0);
    gl_PointSize = size;
}
"""

DOT_FS = """#version 330 core
in vec3 v_color;
out vec4 frag;
void main() {
    vec2 d = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(d, d);
    if (r2 > 1.0) discard;
    frag = vec4(r2 > 0.5 ? v_color * 0.3 : v_color, 1.0);
}
"""

LINE_VS = """#version 330 core
in vec3 position;
in vec3 color;
uniform mat4 vp;
out vec3 v_color;
void main() {
    v_color = color;
    gl_Position = vp * vec4(position, 1.0);
}
"""

LINE_FS = """#version 330 core
in vec3 v_color;
out vec4 frag;
void main() { frag = vec4(v_color, 1.0); }
"""


def _spheres(world):
    """The bounding spheres of the world's bodies but its grounds, from its packed table:
    ``centers (k, 3)``, ``radii (k,)`` and their rows in ``world.bodies`` ``(k,)``."""
    t = world.sync()
    rows = t.bounded_rows
    pose = t.state.pose[rows]
    centers = np.einsum("kij,kj->ki", pose[:, :3, :3], t.root_center[rows]) + pose[:, :3, 3]
    return centers, t.radius[rows], rows


def _mat(m):
    """numpy (4, 4) to the column-major flat tuple GL wants."""
    return tuple(np.asarray(m, np.float32).T.ravel().tolist())


class MeshBuffer:
    """One mesh on the GPU, drawn instanced: a static vertex buffer, a streamed instance buffer."""

    STRIDE = 20 * 4  # bytes per instance row, see :func:`~app.viewer.buffers.instance_rows`

    def __init__(self, vertices, faces):
        self.vertices = vertices  # kept so the key (its id) cannot be reused
        pos, nrm = flat_mesh(vertices, faces)
        self.count = len(pos)
        self.vao = gl.GLuint()
        gl.glGenVertexArrays(1, ctypes.byref(self.vao))
        self.vbo, self.ibo = gl.GLuint(), gl.GLuint()
        gl.glGenBuffers(1, ctypes.byref(self.vbo))
        gl.glGenBuffers(1, ctypes.byref(self.ibo))
        gl.glBindVertexArray(self.vao)
        data = np.ascontiguousarray(np.hstack([pos, nrm]), np.float32)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.vbo)
        gl.glBufferData(gl.GL_ARRAY_BUFFER, data.nbytes, data.ctypes.data, gl.GL_STATIC_DRAW)
        for loc in (0, 1):
            gl.glEnableVertexAttribArray(loc)
            gl.glVertexAttribPointer(loc, 3, gl.GL_FLOAT, gl.GL_FALSE, 24, 12 * loc)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.ibo)
        for k in range(5):
            gl.glEnableVertexAttribArray(2 + k)
            gl.glVertexAttribPointer(2 + k, 4, gl.GL_FLOAT, gl.GL_FALSE, self.STRIDE, 16 * k)
            gl.glVertexAttribDivisor(2 + k, 1)
        gl.glBindVertexArray(0)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, 0)

    def draw(self, rows):
        """Draw one instance per row of ``rows`` (k, 20) float32."""
        rows = np.ascontiguousarray(rows, np.float32)
        gl.glBindVertexArray(self.vao)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.ibo)
        gl.glBufferData(gl.GL_ARRAY_BUFFER, rows.nbytes, rows.ctypes.data, gl.GL_STREAM_DRAW)
        gl.glDrawArraysInstanced(gl.GL_TRIANGLES, 0, self.count, len(rows))
        gl.glBindVertexArray(0)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, 0)

    def delete(self):
        gl.glDeleteBuffers(1, ctypes.byref(self.vbo))
        gl.glDeleteBuffers(1, ctypes.byref(self.ibo))
        gl.glDeleteVertexArrays(1, ctypes.byref(self.vao))


class OverlayBuffer:
    """A vertex buffer of coloured vertices (position, colour: 6 float32 each) kept across frames.

    :meth:`update` rewrites it in place: only the span of vertices that differ from what
    the buffer holds is uploaded (boxes of bodies at rest, contacts of a paused world: often
    nothing), and the buffer is reallocated only when a frame needs more room (doubling).

    Parameters
    ----------
    program : pyglet.graphics.shader.ShaderProgram
        With the vertex attributes ``position`` and ``color`` (vec3 each).
    """

    def __init__(self, program, capacity=4096):
        self.vao, self.vbo = gl.GLuint(), gl.GLuint()
        gl.glGenVertexArrays(1, ctypes.byref(self.vao))
        gl.glGenBuffers(1, ctypes.byref(self.vbo))
        gl.glBindVertexArray(self.vao)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.vbo)
        for k, name in enumerate((b"position", b"color")):
            loc = gl.glGetAttribLocation(program.id, name)
            gl.glEnableVertexAttribArray(loc)
            gl.glVertexAttribPointer(loc, 3, gl.GL_FLOAT, gl.GL_FALSE, 24, 12 * k)
        gl.glBindVertexArray(0)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, 0)
        self.held = np.zeros((0, 6), np.float32)  # what the GPU buffer holds (its first `count` rows)
        self._next = np.zeros((0, 6), np.float32)  # the next frame's rows, swapped with `held`
        self.capacity = 0
        self.count = 0
        self.uploaded = 0  # vertices sent by the last update (for tests and the curious)
        self._reserve(capacity)

    def _reserve(self, n):
        """Room for ``n`` vertices; returns whether the GPU buffer was reallocated (its content lost)."""
        if n <= self.capacity:
            return False
        self.capacity = max(n, 2 * self.capacity)
        for name in ("held", "_next"):
            grown = np.zeros((self.capacity, 6), np.float32)
            old = getattr(self, name)
            grown[:len(old)] = old
            setattr(self, name, grown)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.vbo)
        gl.glBufferData(gl.GL_ARRAY_BUFFER, self.capacity * 24, None, gl.GL_DYNAMIC_DRAW)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, 0)
        return True

    def update(self, positions, colors):
        """Make the buffer hold ``positions`` and ``colors`` ((n, 3) each), uploading what changed."""
        n = len(positions)
        fresh = self._reserve(n)
        rows = self._next[:n]
        rows[:, :3] = positions
        rows[:, 3:] = colors
        if fresh:
            lo, hi = 0, n
        else:
            same = min(n, self.count)
            changed = np.flatnonzero((rows[:same] != self.held[:same]).any(axis=1))
            lo = int(changed[0]) if len(changed) else same
            hi = int(changed[-1]) + 1 if len(changed) else same
            if n > same:  # vertices past what the buffer held are all new
                hi = n
            lo = min(lo, hi)
        if hi > lo:
            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.vbo)
            gl.glBufferSubData(gl.GL_ARRAY_BUFFER, lo * 24, (hi - lo) * 24, rows[lo:hi].ctypes.data)
            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, 0)
        self.uploaded = hi - lo
        self.held, self._next = self._next, self.held  # `held` is now this frame's rows
        self.count = n

    def draw(self, mode):
        if self.count:
            gl.glBindVertexArray(self.vao)
            gl.glDrawArrays(mode, 0, self.count)
            gl.glBindVertexArray(0)

    def delete(self):
        gl.glDeleteBuffers(1, ctypes.byref(self.vbo))
        gl.glDeleteVertexArrays(1, ctypes.byref(self.vao))


class Renderer:
    """Owns the GL objects. Create it with a current GL context."""

    def __init__(self):
        self.mesh_program = ShaderProgram(Shader(MESH_VS, "vertex"), Shader(MESH_FS, "fragment"))
        self.line_program = ShaderProgram(Shader(LINE_VS, "vertex"), Shader(LINE_FS, "fragment"))
        self.ground_program = ShaderProgram(Shader(GROUND_VS, "vertex"), Shader(GROUND_FS, "fragment"))
        self.dot_program = ShaderProgram(Shader(DOT_VS, "vertex"), Shader(DOT_FS, "fragment"))
        self._transient = []  # per-frame vertex lists, deleted on the next frame
        self.meshes = {}  # id(body.vertices) -> MeshBuffer, shared by bodies with one mesh
        self._grid = None
        self._grid_key = None
        self._lines = OverlayBuffer(self.line_program)  # the overlays' lines and triangles, kept across frames
        self._tris = OverlayBuffer(self.line_program)
        self._collector = LineCollector(None)  # the overlays' numpy arrays, kept across frames
        self.overlay_seconds = 0.0  # the last draw's time in Session.overlays (its own phase, "overlays")

    def _mesh(self, body):
        buf = self.meshes.get(id(body.vertices))
        if buf is None or buf.vertices is not body.vertices:
            buf = MeshBuffer(body.vertices, body.faces)
            self.meshes[id(body.vertices)] = buf
        return buf

    def forget_missing(self, bodies):
        """Release buffers of meshes no body uses any more."""
        alive = {id(b.vertices) for b in bodies}
        for key in [k for k in self.meshes if k not in alive]:
            self.meshes.pop(key).delete()

    def _grid_list(self, half, step, y):
        key = (round(half, 6), round(step, 6), y)
        if self._grid_key != key:
            if self._grid is not None:
                self._grid.delete()
            pts = grid_lines(half, step, y)
            col = colors(len(pts), COLORS["grid"])
            # Axes: x red, z blue along the grid, y green upwards.
            axes = np.array([[0, 0, 0], [half, 0, 0], [0, 0, 0], [0, half, 0], [0, 0, 0], [0, 0, half]], np.float32)
            axes[:, 1] += y
            acol = np.array([[0.9, 0.25, 0.25]] * 2 + [[0.3, 0.85, 0.3]] * 2 + [[0.3, 0.45, 0.95]] * 2, np.float32)
            pts, col = np.concatenate([pts, axes]), np.concatenate([col, acol])
            self._grid = self.line_program.vertex_list(len(pts), gl.GL_LINES, position=("f", pts.ravel()),
                                                       color=("f", col.ravel()))
            self._grid_key = key
        return self._grid

    def draw(self, session, width, height):
        """Draw one frame of the session's world and overlays into the current framebuffer."""
        cam = session.camera
        cam.width, cam.height = width, height
        gl.glViewport(0, 0, width, height)
        gl.glClearColor(*COLORS["background"], 1.0)
        gl.glClear(gl.GL_COLOR_BUFFER_BIT | gl.GL_DEPTH_BUFFER_BIT)
        gl.glEnable(gl.GL_DEPTH_TEST)
        gl.glDepthFunc(gl.GL_LEQUAL)
        view, proj = cam.view(), cam.projection()
        vp = proj @ view
        for vl in self._transient:
            vl.delete()
        self._transient = []
        bodies = session.world.bodies
        grid_y = self._draw_grounds(session, vp)

        prog = self.mesh_program
        prog.use()
        prog["eye"] = tuple(float(x) for x in cam.eye)
        prog["vp"] = _mat(vp)
        groups = {}
        for k, body in enumerate(bodies):
            if not body.unbounded:  # a ground is drawn to the horizon above
                groups.setdefault(id(body.vertices), []).append(k)
        for members in groups.values():
            rows = instance_rows([bodies[k].pose for k in members], [bodies[k].color for k in members],
                                 [1.0 if k == session.selected else 0.0 for k in members])
            self._mesh(bodies[members[0]]).draw(rows)
        prog.stop()

        t0 = time.perf_counter()
        lines, line_cols, tris, tri_cols = session.overlays(out=self._collector)
        self.overlay_seconds = time.perf_counter() - t0
        lp = self.line_program
        lp.use()
        lp["vp"] = _mat(vp)
        if session.flags["grid"]:
            # Over the ground (pushed back by its polygon offset), and writing no depth, so the
            # axes drawn along two of its lines win over them everywhere instead of in dashes.
            gl.glDepthMask(gl.GL_FALSE)
            self._grid_list(*grid_extent(*session.world.bounds()), grid_y).draw(gl.GL_LINES)
            gl.glDepthMask(gl.GL_TRUE)
        self._tris.update(tris, tri_cols)
        if len(tris):
            gl.glEnable(gl.GL_POLYGON_OFFSET_FILL)
            gl.glPolygonOffset(-1.0, -2.0)  # draw over the body's own faces
            self._tris.draw(gl.GL_TRIANGLES)
            gl.glDisable(gl.GL_POLYGON_OFFSET_FILL)
        self._lines.update(lines, line_cols)
        if len(lines):
            gl.glDepthFunc(gl.GL_ALWAYS)  # debug lines stay visible through the meshes
            self._lines.draw(gl.GL_LINES)
            gl.glDepthFunc(gl.GL_LEQUAL)
        lp.stop()
        self._draw_tiny(session, vp)
        gl.glDisable(gl.GL_DEPTH_TEST)

    def _draw_grounds(self, session, vp):
        """Each body with a half-space (a ground) as the plane it collides as: a square reaching
        where the ground has faded into the background, pushed back in depth (polygon offset) so
        the grid and the bodies resting on it are drawn over it, never through it. Returns the
        height of the first upward ground (where the grid goes), else 0."""
        cam = session.camera
        grid_y = None
        planes = []
        for k, body in enumerate(session.world.bodies):
            for shape in body.shapes if body.unbounded else ():
                if isinstance(shape, HalfSpace):
                    r, t = body.pose[:3, :3], body.pose[:3, 3]
                    n = r @ shape.normal
                    planes.append((k, body, n, shape.offset + float(n @ t)))
        if not planes:
            return 0.0
        eye = cam.eye
        centers, radii, _ = _spheres(session.world)
        if len(centers):  # the box around the bodies' bounding spheres
            lo, hi = (centers - radii[:, None]).min(axis=0), (centers + radii[:, None]).max(axis=0)
        else:
            lo = hi = cam.target
        start, end = ground_fade(eye, cam.distance, lo, hi, cam.far)
        gp = self.ground_program
        gp.use()
        gp["vp"] = _mat(vp)
        gp["eye"] = tuple(float(x) for x in eye)
        gp["background"] = COLORS["background"]
        gp["fade"] = (float(start), float(end))
        gl.glEnable(gl.GL_POLYGON_OFFSET_FILL)
        gl.glPolygonOffset(2.0, 2.0)
        for k, body, n, offset in planes:
            gp["normal"] = tuple(float(x) for x in n)
            gp["color"] = tuple(float(x) for x in body.color)
            gp["highlight"] = 1.0 if k == session.selected else 0.0
            quad = ground_quad(n, offset, eye, end)
            vl = gp.vertex_list(len(quad), gl.GL_TRIANGLES, position=("f", quad.ravel()))
            vl.draw(gl.GL_TRIANGLES)
            self._transient.append(vl)
            if grid_y is None and n[1] > 0.999:
                grid_y = offset / n[1]
        gl.glDisable(gl.GL_POLYGON_OFFSET_FILL)
        gp.stop()
        return 0.0 if grid_y is None else float(grid_y)

    def _draw_tiny(self, session, vp):
        """A disc of MIN_BODY_PX radius at the centre of each body drawn smaller than that."""
        cam = session.camera
        centers, radii, rows = _spheres(session.world)
        eye = cam.eye
        forward = (cam.target - eye) / cam.distance
        idx = tiny_bodies(centers, radii, eye, forward, cam.fovy, cam.height, MIN_BODY_PX)
        if not len(idx):
            return
        c = centers[idx]
        # Each disc stands where the front of a ball of its size would be, not at the centre,
        # so the ground a small body rests on hides less of it.
        lift = radii[idx] + MIN_BODY_PX * pixel_world_sizes(c, eye, forward, cam.fovy, cam.height)
        toward = eye - c
        pos = c + toward / np.linalg.norm(toward, axis=1)[:, None] * lift[:, None]
        bodies = session.world.bodies
        cols = np.array([bodies[rows[k]].color for k in idx], np.float32)
        size = np.full(len(idx), 2 * MIN_BODY_PX + 1, np.float32)
        dp = self.dot_program
        dp.use()
        dp["vp"] = _mat(vp)
        gl.glEnable(gl.GL_PROGRAM_POINT_SIZE)
        vl = dp.vertex_list(len(idx), gl.GL_POINTS, position=("f", pos.astype(np.float32).ravel()),
                            color=("f", cols.ravel()), size=("f", size))
        vl.draw(gl.GL_POINTS)
        self._transient.append(vl)
        gl.glDisable(gl.GL_PROGRAM_POINT_SIZE)
        dp.stop()


HUD_FONT = ["DejaVu Sans Mono", "Menlo", "Consolas", "Liberation Mono", "Courier New"]  # the first found


def font_metrics(size):
    """The HUD's font at ``size`` points: its :class:`~app.viewer.layout.FontMetrics`, measured
    from laid-out text (a proportional fallback font gets its widest letter's advance), and
    its descent (pixels under the baseline)."""
    probe = pyglet.text.Label("M" * 40, font_name=HUD_FONT, font_size=size)
    lines = pyglet.text.Label("M\nM\nM\nM", font_name=HUD_FONT, font_size=size, multiline=True, width=400)
    font = pyglet.font.load(HUD_FONT, size)
    return FontMetrics(char_width=float(np.ceil(probe.content_width / 40)),
                       line_height=float(np.ceil(lines.content_height / 4))), -float(font.descent)


class Hud:
    """The text overlay: the status (HUD) top-left and the help under it, each on a
    semi-transparent panel, laid out by :func:`app.viewer.layout.layout_text` for the window's
    size (again whenever it changes).

    Laying out text is the costliest part of a small frame, and the status
    numbers change every frame, so the labels are re-laid out at most every
    ``interval`` seconds (at once when the help text, the line count or the
    window's size changes), the way profilers' overlays refresh.
    """

    interval = 0.2
    sizes = {"hud": (10,), "help": (9, 8, 7.5)}  # points; the help takes a smaller one where it must
    text_colors = {"hud": (235, 235, 235, 255), "help": (200, 215, 235, 255)}
    panel_color = (10, 12, 16, 190)

    def __init__(self):
        self.batch = pyglet.graphics.Batch()
        self._back = pyglet.graphics.Group(order=0)
        self._front = pyglet.graphics.Group(order=1)
        self.fonts = {name: [(size, *font_metrics(size)) for size in sizes] for name, sizes in self.sizes.items()}
        self.boxes = []  # the last layout, list of TextBox
        self._panels = []
        self._labels = []
        self._text = (None, None, None)
        self._stamp = 0.0

    def refresh_now(self):
        """Lay the text out again on the next draw (before a screenshot)."""
        self._stamp = -np.inf

    def draw(self, lines, help_lines, width, height):
        text = ("\n".join(lines), "\n".join(help_lines), (width, height))
        now = time.perf_counter()
        old = self._text
        if text != old and (old[0] is None or text[1:] != old[1:] or text[0].count("\n") != old[0].count("\n")
                            or now - self._stamp >= self.interval):
            self._layout(lines, help_lines, width, height)
            self._text = text
            self._stamp = now
        self.batch.draw()

    def _layout(self, lines, help_lines, width, height):
        self.boxes = layout_text(lines, help_lines, width, height, self.fonts["hud"][0][1],
                                 [m for _, m, _ in self.fonts["help"]])
        columns = [(box, k) for box in self.boxes for k in range(len(box.columns))]
        while len(self._panels) < len(self.boxes):
            self._panels.append(pyglet.shapes.Rectangle(0, 0, 1, 1, color=self.panel_color, batch=self.batch,
                                                        group=self._back))
        while len(self._labels) < len(columns):
            self._labels.append(pyglet.text.Label("", anchor_y="top", multiline=True, width=100, font_name=HUD_FONT,
                                                  batch=self.batch, group=self._front))
        for panel, box in zip(self._panels, self.boxes):
            panel.x, panel.y = box.x, height - box.bottom  # pyglet's y goes up
            panel.width, panel.height = box.width, box.height
            panel.visible = True
        for panel in self._panels[len(self.boxes):]:
            panel.visible = False
        for label, (box, k) in zip(self._labels, columns):
            m = box.metrics
            size, descent = next((size, d) for size, fm, d in self.fonts[box.name] if fm == m)
            x, y = box.text_origins()[k]
            label.begin_update()
            label.text = "\n".join(box.columns[k]) or " "
            label.font_size = size
            label.color = self.text_colors[box.name]
            label.width = int(box.column_width + m.char_width)  # the lines are wrapped already
            label.set_style("line_spacing", m.line_height)
            # with a line spacing, the first baseline is one spacing under the top: the glyphs
            # (ascent over, descent under the baseline) then start one descent under it
            label.x, label.y = x, height - (y - descent)
            label.end_update()
            label.visible = True
        for label in self._labels[len(columns):]:
            label.visible = False
