"""Draw Dear ImGui's draw lists with pyglet's OpenGL bindings (ctypes), for the GUI panel.

imgui-bundle's pyglet backend (events, the font texture, the shader) is used as it is; only
its ``render`` is replaced. The original makes about thirty PyOpenGL calls per frame to
save and restore the GL state, each costing tens of microseconds in PyOpenGL's wrappers (a
third of the panel's time); here the same state is saved and restored through pyglet's
thin ctypes bindings, and the draw calls go the same way.
"""

import ctypes

from imgui_bundle import imgui
from imgui_bundle.python_backends.pyglet_backend import PygletProgrammablePipelineRenderer
from pyglet import gl

__all__ = ["PanelRenderer"]

_CAPS = (gl.GL_BLEND, gl.GL_CULL_FACE, gl.GL_DEPTH_TEST, gl.GL_SCISSOR_TEST)
_INTS = (gl.GL_CURRENT_PROGRAM, gl.GL_VERTEX_ARRAY_BINDING, gl.GL_ARRAY_BUFFER_BINDING,
         gl.GL_TEXTURE_BINDING_2D, gl.GL_ACTIVE_TEXTURE, gl.GL_BLEND_SRC_RGB, gl.GL_BLEND_DST_RGB,
         gl.GL_BLEND_SRC_ALPHA, gl.GL_BLEND_DST_ALPHA, gl.GL_BLEND_EQUATION_RGB, gl.GL_BLEND_EQUATION_ALPHA)


def _int(name, buf=None):
    buf = buf if buf is not None else (gl.GLint * 4)()
    gl.glGetIntegerv(name, buf)
    return buf[0]


class PanelRenderer(PygletProgrammablePipelineRenderer):
    """The backend's renderer with a leaner ``render`` (same output, the GL state left as found)."""

    def render(self, draw_data):
        io = self.io
        dw, dh = io.display_size.x, io.display_size.y
        sx, sy = io.display_framebuffer_scale.x, io.display_framebuffer_scale.y
        fbw, fbh = int(dw * sx), int(dh * sy)
        self._update_textures()  # the font atlas, when ImGui asks for it
        if fbw <= 0 or fbh <= 0:
            return
        draw_data.scale_clip_rects(io.display_framebuffer_scale)
        buf = (gl.GLint * 4)()
        saved = {name: _int(name, buf) for name in _INTS}
        gl.glGetIntegerv(gl.GL_VIEWPORT, buf)
        viewport = tuple(buf)
        gl.glGetIntegerv(gl.GL_SCISSOR_BOX, buf)
        scissor_box = tuple(buf)
        caps = {cap: gl.glIsEnabled(cap) for cap in _CAPS}

        gl.glEnable(gl.GL_BLEND)
        gl.glBlendEquation(gl.GL_FUNC_ADD)
        gl.glBlendFunc(gl.GL_SRC_ALPHA, gl.GL_ONE_MINUS_SRC_ALPHA)
        gl.glDisable(gl.GL_CULL_FACE)
        gl.glDisable(gl.GL_DEPTH_TEST)
        gl.glEnable(gl.GL_SCISSOR_TEST)
        gl.glActiveTexture(gl.GL_TEXTURE0)
        gl.glViewport(0, 0, fbw, fbh)
        ortho = (gl.GLfloat * 16)(2.0 / dw, 0, 0, 0, 0, -2.0 / dh, 0, 0, 0, 0, -1.0, 0, -1.0, 1.0, 0, 1.0)
        gl.glUseProgram(self._shader_handle)
        gl.glUniform1i(self._attrib_location_tex, 0)
        gl.glUniformMatrix4fv(self._attrib_proj_mtx, 1, gl.GL_FALSE, ortho)
        gl.glBindVertexArray(self._vao_handle)
        index_type = gl.GL_UNSIGNED_SHORT if imgui.INDEX_SIZE == 2 else gl.GL_UNSIGNED_INT
        for commands in draw_data.cmd_lists:
            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self._vbo_handle)
            gl.glBufferData(gl.GL_ARRAY_BUFFER, commands.vtx_buffer.size() * imgui.VERTEX_SIZE,
                            ctypes.c_void_p(commands.vtx_buffer.data_address()), gl.GL_STREAM_DRAW)
            gl.glBindBuffer(gl.GL_ELEMENT_ARRAY_BUFFER, self._elements_handle)
            gl.glBufferData(gl.GL_ELEMENT_ARRAY_BUFFER, commands.idx_buffer.size() * imgui.INDEX_SIZE,
                            ctypes.c_void_p(commands.idx_buffer.data_address()), gl.GL_STREAM_DRAW)
            for command in commands.cmd_buffer:
                gl.glBindTexture(gl.GL_TEXTURE_2D, command.tex_ref.get_tex_id())
                x, y, z, w = command.clip_rect
                gl.glScissor(int(x), int(fbh - w), int(z - x), int(w - y))
                gl.glDrawElements(gl.GL_TRIANGLES, command.elem_count, index_type,
                                  ctypes.c_void_p(command.idx_offset * imgui.INDEX_SIZE))

        gl.glUseProgram(saved[gl.GL_CURRENT_PROGRAM])
        gl.glBindVertexArray(saved[gl.GL_VERTEX_ARRAY_BINDING])
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, saved[gl.GL_ARRAY_BUFFER_BINDING])
        gl.glBindTexture(gl.GL_TEXTURE_2D, saved[gl.GL_TEXTURE_BINDING_2D])
        gl.glActiveTexture(saved[gl.GL_ACTIVE_TEXTURE])
        gl.glBlendEquationSeparate(saved[gl.GL_BLEND_EQUATION_RGB], saved[gl.GL_BLEND_EQUATION_ALPHA])
        gl.glBlendFuncSeparate(saved[gl.GL_BLEND_SRC_RGB], saved[gl.GL_BLEND_DST_RGB],
                               saved[gl.GL_BLEND_SRC_ALPHA], saved[gl.GL_BLEND_DST_ALPHA])
        for cap, on in caps.items():
            (gl.glEnable if on else gl.glDisable)(cap)
        gl.glViewport(*viewport)
        gl.glScissor(*scissor_box)
        self._handle_mouse_cursor()
