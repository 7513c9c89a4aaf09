"""GL drawing: shader programs, one vertex buffer per body, per-frame debug lines.

Shader-based OpenGL 3.3 through pyglet 2. Bodies are flat-shaded, lit by a
key light and a headlight, coloured per body; a body's buffer is built once
and drawn with its pose as the model matrix (one draw call per body). Debug
overlays (boxes, segments, markers, highlighted triangles) are rebuilt each
frame into one line list and one triangle list.
"""

import numpy as np
import pyglet
from pyglet import gl
from pyglet.graphics.shader import Shader, ShaderProgram

from .buffers import colors, flat_mesh, grid_lines
from .session import COLORS

MESH_VS = """#version 330 core
in vec3 position;
in vec3 normal;
uniform mat4 mvp;
uniform mat4 model;
out vec3 v_normal;
out vec3 v_pos;
void main() {
    v_normal = mat3(model) * normal;
    v_pos = (model * vec4(position, 1.0)).xyz;
    gl_Position = mvp * vec4(position, 1.0);
}
"""

MESH_FS = """#version 330 core
in vec3 v_normal;
in vec3 v_pos;
uniform vec3 color;
uniform vec3 eye;
uniform float highlight;
out vec4 frag;
void main() {
    vec3 n = normalize(v_normal);
    vec3 v = normalize(eye - v_pos);
    if (dot(n, v) < 0.0) n = -n;          // two-sided: open meshes look right too
    vec3 key = normalize(vec3(0.35, 1.0, 0.55));
    float diffuse = max(dot(n, key), 0.0);
    float head = max(dot(n, v), 0.0);
    vec3 c = color * (0.22 + 0.50 * diffuse + 0.30 * head);
    c = mix(c, vec3(1.0), 0.25 * highlight);
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


class Renderer:
    """Owns the GL objects. Create it with a current GL context."""

    def __init__(self):
        self.mesh_program = ShaderProgram(Shader(MESH_VS, "vertex"), Shader(MESH_FS, "fragment"))
        self.line_program = ShaderProgram(Shader(LINE_VS, "vertex"), Shader(LINE_FS, "fragment"))
        self.body_lists = {}  # id(body) -> vertex list
        self._grid = None
        self._grid_key = None
        self._lines = None
        self._tris = None

    def _body_list(self, body):
        vl = self.body_lists.get(id(body))
        if vl is None:
            pos, nrm = flat_mesh(body.vertices, body.faces)
            vl = self.mesh_program.vertex_list(len(pos), gl.GL_TRIANGLES,
                                               position=("f", pos.ravel()), normal=("f", nrm.ravel()))
            self.body_lists[id(body)] = vl
        return vl

    def forget_missing(self, bodies):
        """Release buffers of bodies no longer in the scene."""
        alive = {id(b) for b in bodies}
        for key in [k for k in self.body_lists if k not in alive]:
            self.body_lists.pop(key).delete()

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
        for k, body in enumerate(session.world.bodies):
            vl = self._body_list(body)
            prog["model"] = _mat(body.pose)
            prog["mvp"] = _mat(vp @ body.pose)
            prog["color"] = tuple(float(x) for x in body.color)
            prog["highlight"] = 1.0 if k == session.selected else 0.0
            vl.draw(gl.GL_TRIANGLES)
        prog.stop()

        lines, line_cols, tris, tri_cols = session.overlays()
        lp = self.line_program
        lp.use()
        lp["vp"] = _mat(vp)
        if session.flags["grid"]:
            lo, hi = session.world.bounds()
            span = float(max(np.abs(lo[[0, 2]]).max(), np.abs(hi[[0, 2]]).max(), 1e-3))
            step = 10.0 ** np.floor(np.log10(span / 4))
            self._grid_list(np.ceil(span * 1.3 / step) * step, step).draw(gl.GL_LINES)
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
    """The text overlay: status top-left, help top-right; labels re-laid out only on change."""

    def __init__(self):
        self.batch = pyglet.graphics.Batch()
        self.status = pyglet.text.Label("", x=10, y=0, anchor_y="top", multiline=True, width=1600,
                                        font_size=11, color=(235, 235, 235, 255), batch=self.batch)
        self.help = pyglet.text.Label("", x=0, y=0, anchor_x="right", anchor_y="top", multiline=True,
                                      width=440, font_size=10, color=(200, 215, 235, 255), batch=self.batch)
        self._text = (None, None)

    def draw(self, lines, help_lines, width, height):
        text = ("\n".join(lines), "\n".join(help_lines))
        if text != self._text:
            self.status.text, self.help.text = text
            self._text = text
        self.status.y = height - 8
        self.help.x, self.help.y = width - 10, height - 110  # below the status lines
        self.batch.draw()
