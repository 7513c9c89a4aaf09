"""GL drawing: shader programs, instanced mesh buffers, per-frame debug lines.

Shader-based OpenGL 3.3 through pyglet 2 (raw calls for instancing). Bodies
are flat-shaded, lit by a key light and a headlight, coloured per body. Each
distinct mesh is uploaded once; all bodies using it are drawn with one
instanced draw call whose per-instance attributes (model matrix, colour,
highlight) are refreshed every frame, so hundreds of bodies cost a handful of
draw calls. Debug overlays (boxes, segments, markers, highlighted triangles)
are rebuilt each frame into one line list and one triangle list.
"""

import ctypes
import time

import numpy as np
import pyglet
from pyglet import gl
from pyglet.graphics.shader import Shader, ShaderProgram

from .buffers import colors, flat_mesh, grid_extent, grid_lines, instance_rows
from .session import COLORS

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

MESH_FS = """#version 330 core
in vec3 v_normal;
in vec3 v_pos;
in vec3 v_color;
in float v_highlight;
uniform vec3 eye;
out vec4 frag;
void main() {
    vec3 n = normalize(v_normal);
    vec3 v = normalize(eye - v_pos);
    if (dot(n, v) < 0.0) n = -n;          // two-sided: open meshes look right too
    vec3 key = normalize(vec3(0.35, 1.0, 0.55));
    float diffuse = max(dot(n, key), 0.0);
    float head = max(dot(n, v), 0.0);
    vec3 c = v_color * (0.22 + 0.50 * diffuse + 0.30 * head);
    c = mix(c, vec3(1.0), 0.25 * v_highlight);
    frag = vec4(c, 1.0);
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


class Renderer:
    """Owns the GL objects. Create it with a current GL context."""

    def __init__(self):
        self.mesh_program = ShaderProgram(Shader(MESH_VS, "vertex"), Shader(MESH_FS, "fragment"))
        self.line_program = ShaderProgram(Shader(LINE_VS, "vertex"), Shader(LINE_FS, "fragment"))
        self.meshes = {}  # id(body.vertices) -> MeshBuffer, shared by bodies with one mesh
        self._grid = None
        self._grid_key = None
        self._lines = None
        self._tris = None

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

    def _grid_list(self, half, step):
        key = (round(half, 6), round(step, 6))
        if self._grid_key != key:
            if self._grid is not None:
                self._grid.delete()
            pts = grid_lines(half, step)
            col = colors(len(pts), COLORS["grid"])
            # Axes: x red, z blue along the grid, y green upwards.
            axes = np.array([[0, 0, 0], [half, 0, 0], [0, 0, 0], [0, half, 0], [0, 0, 0], [0, 0, half]], np.float32)
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

        prog = self.mesh_program
        prog.use()
        prog["eye"] = tuple(float(x) for x in cam.eye)
        prog["vp"] = _mat(vp)
        groups = {}
        for k, body in enumerate(session.world.bodies):
            groups.setdefault(id(body.vertices), []).append(k)
        bodies = session.world.bodies
        for members in groups.values():
            rows = instance_rows([bodies[k].pose for k in members], [bodies[k].color for k in members],
                                 [1.0 if k == session.selected else 0.0 for k in members])
            self._mesh(bodies[members[0]]).draw(rows)
        prog.stop()

        lines, line_cols, tris, tri_cols = session.overlays()
        lp = self.line_program
        lp.use()
        lp["vp"] = _mat(vp)
        if session.flags["grid"]:
            self._grid_list(*grid_extent(*session.world.bounds())).draw(gl.GL_LINES)
        if self._tris is not None:
            self._tris.delete()
            self._tris = None
        if len(tris):
            gl.glEnable(gl.GL_POLYGON_OFFSET_FILL)
            gl.glPolygonOffset(-1.0, -2.0)  # draw over the body's own faces
            self._tris = lp.vertex_list(len(tris), gl.GL_TRIANGLES, position=("f", tris.ravel()),
                                        color=("f", tri_cols.ravel()))
            self._tris.draw(gl.GL_TRIANGLES)
            gl.glDisable(gl.GL_POLYGON_OFFSET_FILL)
        if self._lines is not None:
            self._lines.delete()
            self._lines = None
        if len(lines):
            gl.glDepthFunc(gl.GL_ALWAYS)  # debug lines stay visible through the meshes
            self._lines = lp.vertex_list(len(lines), gl.GL_LINES, position=("f", lines.ravel()),
                                         color=("f", line_cols.ravel()))
            self._lines.draw(gl.GL_LINES)
            gl.glDepthFunc(gl.GL_LEQUAL)
        lp.stop()
        gl.glDisable(gl.GL_DEPTH_TEST)


class Hud:
    """The text overlay: status top-left, help top-right.

    Laying out text is the costliest part of a small frame, and the status
    numbers change every frame, so the labels are re-laid out at most every
    ``interval`` seconds (at once when the help text or the line count
    changes), the way profilers' overlays refresh.
    """

    interval = 0.2

    def __init__(self):
        self.batch = pyglet.graphics.Batch()
        self.status = pyglet.text.Label("", x=10, y=0, anchor_y="top", multiline=True, width=1600,
                                        font_size=11, color=(235, 235, 235, 255), batch=self.batch)
        self.help = pyglet.text.Label("", x=0, y=0, anchor_x="right", anchor_y="top", multiline=True,
                                      width=440, font_size=10, color=(200, 215, 235, 255), batch=self.batch)
        self._text = (None, None)
        self._stamp = 0.0

    def refresh_now(self):
        """Lay the text out again on the next draw (before a screenshot)."""
        self._stamp = -np.inf

    def draw(self, lines, help_lines, width, height):
        text = ("\n".join(lines), "\n".join(help_lines))
        now = time.perf_counter()
        old = self._text
        if text != old and (old[0] is None or text[1] != old[1] or text[0].count("\n") != old[0].count("\n")
                            or now - self._stamp >= self.interval):
            self.status.text, self.help.text = text
            self._text = text
            self._stamp = now
        self.status.y = height - 8
        self.help.x, self.help.y = width - 10, height - 110  # below the status lines
        self.batch.draw()
