"""The GUI panel: Dear ImGui (imgui-bundle) in the viewer's window, over the scene.

A status bar across the top (scene, bodies, frame rate, step time, paused, the last
message) and, under it on the left, a window of fixed width with collapsible sections
that scrolls when they do not fit. The sections are :data:`SECTIONS`, ``(title, draw)``
pairs: ``draw(session)`` draws the body of one collapsing header with
``from imgui_bundle import imgui, implot`` and changes the world only through the
session's actions (the same ``do_<action>`` methods the keys of
:mod:`app.viewer.controls` call). Adding a section is one line::

    SECTIONS.append(("Narrow phase", draw_narrow_phase))

Input: the panel's handlers sit on top of the window's. A press on the panel (or where
Dear ImGui wants the mouse: an open combo list) goes to ImGui alone, and so does the
drag and the release that follow it; a press elsewhere goes to the scene (picking,
dragging, orbiting) and drags that start in the scene stay there. While a text field
has the keyboard, keys go to it and not to the shortcuts. ``F1`` hides / shows the
panel (then the full text HUD comes back). The panel also draws headless (EGL): it
needs only the window's GL context.

The panel's state for the sections (the profiler's history, the recent files, the
widgets' rectangles for tests) is ``session.gui``, this object.
"""

import os
import time

import imgui_bundle
import pyglet
from imgui_bundle import imgui, implot
from pyglet.window import key as pkey
from pyglet.window import mouse

from .controls import BINDINGS
from .panel_bodies import draw_bodies
from .panel_debug import draw_debug_draw
from .panel_gl import PanelRenderer
from .narrow_panel import draw_narrow_phase_section
from .panel_help import draw_help, draw_log
from .panel_inspect import SECTIONS as PAIR_SECTIONS
from .panel_profiler import draw_profiler
from .panel_scenes import draw_scenes
from .panel_widgets import ERROR, GREY
from .panel_world import draw_world
from .profile_history import ProfileHistory

__all__ = ["Panel", "SECTIONS", "panel_width"]

# (title, draw(session)); the panel draws them in this order, each under a collapsing header.
SECTIONS = [
    ("Scenes", draw_scenes),
    ("Bodies", draw_bodies),
    ("Debug draw", draw_debug_draw),
    ("World", draw_world),
    ("Narrow phase", draw_narrow_phase_section),
    *PAIR_SECTIONS,  # Pair, Traversal, Separating axis, GJK and vector symbols
    ("Profiler", draw_profiler),
    ("Log", draw_log),
    ("Help", draw_help),
]
OPEN_AT_START = ("Scenes", "Debug draw", "World")
# The keys bound to showing / hiding the panel (pyglet symbols).
PANEL_KEYS = frozenset(getattr(pkey, k) for k, action, _, _ in BINDINGS if action == "panel")

FONT = os.path.join(os.path.dirname(imgui_bundle.__file__), "assets", "fonts", "DroidSans.ttf")
FONT_SIZE = 15.0
MESSAGE_SECONDS = 8.0  # how long the status bar shows the last message
BACKGROUND = (0.14, 0.15, 0.18, 1.0)  # the panel's window, opaque (a test looks for it in the screenshots)


def panel_width(width):
    """The panel's width in pixels for a window ``width`` wide: about a quarter, 270 to 340 pixels,
    never more than 40 % (a very narrow window keeps most of the scene)."""
    return int(min(max(270, min(340, 0.27 * width)), 0.4 * width))


class Panel:
    """Dear ImGui in a :class:`~app.viewer.window.ViewerWindow`.

    Parameters
    ----------
    window : pyglet.window.Window
        Its GL context must be current; the panel's input handlers are pushed on it.
    session : app.viewer.session.Session
        ``session.gui`` is set to this panel (the window may swap sessions: :meth:`draw`
        takes the current one).
    """

    def __init__(self, window, session):
        self.window = window
        self.context = imgui.create_context()
        self.plot_context = implot.create_context()
        io = imgui.get_io()
        io.set_ini_filename("")  # no imgui.ini: the layout is the program's
        io.config_error_recovery_enable_assert = False  # a section that raises is recovered from (see _sections)
        io.config_error_recovery_enable_tooltip = False  # and reported in a message
        if os.path.isfile(FONT):
            io.fonts.add_font_from_file_ttf(FONT, FONT_SIZE)
        self._style()
        self.renderer = PanelRenderer(window, attach_callbacks=False)  # the events come through here
        self.renderer._window = window  # for the mouse cursor's shape, which the backend sets
        if pyglet.options.get("headless", False):
            io.config_flags |= imgui.ConfigFlags_.no_mouse_cursor_change
        self.io = imgui.get_io()
        self.history = ProfileHistory(300)
        self.items = {}  # widget name -> (x0, y0, x1, y1), window pixels, y down (see panel_widgets.mark)
        self.rects = []  # the panel's windows this frame, (x0, y0, x1, y1): where a press is the panel's
        self.panel_rect = None  # the sections' window's rectangle, (x0, y0, x1, y1)
        self.captured = set()  # the mouse buttons pressed on the panel (their drags and releases are its too)
        self.open = {title: title in OPEN_AT_START for title, _ in SECTIONS}
        self.state = {}  # what sections keep between frames (text fields, dialogs), by their own keys
        self._help = None
        self._failed = {}  # section title -> its last error (said once), the section folded
        self._last = time.perf_counter()
        self.session = None
        self.bind(session)
        window.push_handlers(self)

    def bind(self, session):
        self.session = session
        session.gui = self

    @staticmethod
    def _style():
        imgui.style_colors_dark()
        style = imgui.get_style()
        style.window_rounding = 0.0
        style.frame_rounding = 3.0
        style.grab_rounding = 3.0
        style.window_border_size = 0.0
        style.item_spacing = (6.0, 4.0)
        style.set_color_(imgui.Col_.window_bg, BACKGROUND)
        style.set_color_(imgui.Col_.header, (0.20, 0.30, 0.42, 0.85))
        style.set_color_(imgui.Col_.header_hovered, (0.26, 0.40, 0.56, 0.90))

    # -- input (pyglet event handlers, on top of the window's) --------------------------

    @property
    def visible(self):
        return self.session is not None and getattr(self.session, "panel_visible", True)

    def _height(self):
        return self.window.height

    def over(self, x, y):
        """True when window point ``(x, y)`` (pyglet's, y up) is on the panel as last drawn."""
        if not self.visible:
            return False
        py = self._height() - y
        return any(x0 <= x < x1 and y0 <= py < y1 for x0, y0, x1, y1 in self.rects)

    def _pos(self, x, y):
        self.io.add_mouse_pos_event(float(x), float(self._height() - y))

    @staticmethod
    def _button(button):
        return {mouse.LEFT: 0, mouse.RIGHT: 1, mouse.MIDDLE: 2}.get(button, 0)

    def on_mouse_motion(self, x, y, dx, dy):
        self._pos(x, y)

    def on_mouse_press(self, x, y, button, modifiers):
        self._pos(x, y)
        if not self.visible:
            return None
        mine = self.over(x, y) or self.io.want_capture_mouse
        # ImGui sees every press: one on the scene ends the typing in a text field (its focus goes)
        self.io.add_mouse_button_event(self._button(button), True)
        if mine:
            self.captured.add(button)
            return pyglet.event.EVENT_HANDLED
        return None  # the scene's (and so are its drag and release, even across the panel)

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self._pos(x, y)
        if self.captured:
            return pyglet.event.EVENT_HANDLED
        return None

    def on_mouse_release(self, x, y, button, modifiers):
        self._pos(x, y)
        self.io.add_mouse_button_event(self._button(button), False)
        if button in self.captured:
            self.captured.discard(button)
            return pyglet.event.EVENT_HANDLED
        return None

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self._pos(x, y)
        if self.over(x, y):
            self.io.add_mouse_wheel_event(float(scroll_x), float(scroll_y))
            return pyglet.event.EVENT_HANDLED
        return None

    def on_key_press(self, symbol, modifiers):
        self.renderer.on_key_press(symbol, modifiers)
        if symbol in PANEL_KEYS:
            return None  # the panel's own key works even while a field has the keyboard
        if self.visible and self.io.want_capture_keyboard:
            return pyglet.event.EVENT_HANDLED  # typing into a field: no shortcut
        return None

    def on_key_release(self, symbol, modifiers):
        self.renderer.on_key_release(symbol, modifiers)
        if self.visible and self.io.want_capture_keyboard:
            return pyglet.event.EVENT_HANDLED
        return None

    def on_text(self, text):
        if self.visible:
            for ch in text:
                self.io.add_input_character(ord(ch))

    # -- frames ---------------------------------------------------------------------------

    def draw(self, session):
        """Record the frame's numbers in the profiler and, when visible, draw the panel (the last
        thing of the frame, over the scene). Returns the seconds it took (also ``session.times["panel"]``)."""
        t0 = time.perf_counter()
        if session is not self.session:
            self.bind(session)
        if session.times.get("frame"):  # the frame's phases; the panel's and the frame's time are the last frame's
            self.history.record(session.world.stats, session.times)
        if not self.visible:
            self.rects = []
            session.times["panel"] = time.perf_counter() - t0
            return session.times["panel"]
        imgui.set_current_context(self.context)
        implot.set_current_context(self.plot_context)
        io = self.io
        w, h = self.window.width, self.window.height
        fw, fh = self.window.get_framebuffer_size()
        io.display_size = (float(w), float(h))
        io.display_framebuffer_scale = (fw / max(w, 1), fh / max(h, 1))
        now = time.perf_counter()
        io.delta_time = min(max(now - self._last, 1e-4), 0.25)
        self._last = now
        imgui.new_frame()
        self.items = {}
        self.rects = []
        bar = self._status_bar(session, w)
        self._sections(session, w, h, bar)
        imgui.render()
        self.renderer.render(imgui.get_draw_data())
        session.times["panel"] = time.perf_counter() - t0
        return session.times["panel"]

    def _status_bar(self, session, width):
        """The one-line status across the top; returns its height."""
        flags = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_saved_settings
                 | imgui.WindowFlags_.no_focus_on_appearing | imgui.WindowFlags_.no_bring_to_front_on_focus
                 | imgui.WindowFlags_.no_scroll_with_mouse)
        height = imgui.get_frame_height() + 2
        imgui.set_next_window_pos((0.0, 0.0))
        imgui.set_next_window_size((float(width), height))
        imgui.push_style_var(imgui.StyleVar_.window_padding, (8.0, 3.0))
        imgui.begin("##status", None, flags)
        imgui.text(session.status_line())
        last = session.messages[-1] if session.messages else None
        if last is not None and time.monotonic() - last[1] < MESSAGE_SECONDS:
            imgui.same_line(0.0, 24.0)
            imgui.text_colored(ERROR if last[2] else GREY, ("! " if last[2] else "") + last[0])
        self._remember_window()
        imgui.end()
        imgui.pop_style_var()
        return height

    def _sections(self, session, width, height, top):
        pw = panel_width(width)
        imgui.set_next_window_pos((0.0, top))
        imgui.set_next_window_size((float(pw), float(height - top)))
        flags = imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_resize | imgui.WindowFlags_.no_saved_settings
        expanded, _ = imgui.begin("obbcollide   (F1 hides this panel)###panel", None, flags)
        if expanded:
            help_on = bool(session.flags.get("help"))
            for title, draw in SECTIONS:
                if title == "Help" and help_on != self._help:  # H opens the help here (and closes it)
                    imgui.set_next_item_open(help_on)
                    self._help = help_on
                    if help_on:
                        imgui.set_scroll_here_y(0.0)
                if self._failed.get(title, (None, False))[1]:
                    imgui.set_next_item_open(False)
                    self._failed[title] = (self._failed[title][0], False)
                opened = imgui.collapsing_header(title, imgui.TreeNodeFlags_.default_open
                                                 if self.open.get(title) else 0)
                self.items["section:" + title] = _rect()
                self.open[title] = opened
                if opened:
                    saved = imgui.internal.ErrorRecoveryState()
                    imgui.internal.error_recovery_store_state(saved)
                    imgui.push_id(title)
                    try:
                        draw(session)
                    except Exception as exc:  # a section's bug must not take the viewer down: fold it, say why
                        imgui.internal.error_recovery_try_to_recover_state(saved)  # its pushes and children
                        text = f"panel section {title!r} failed: {type(exc).__name__}: {exc}"
                        if self._failed.get(title, (None,))[0] != text:
                            session.say(text, error=True)
                        self._failed[title] = (text, True)
                    else:
                        imgui.pop_id()
                    imgui.spacing()
        self.panel_rect = self._remember_window()
        imgui.end()

    def _remember_window(self):
        pos, size = imgui.get_window_pos(), imgui.get_window_size()
        self.rects.append((pos.x, pos.y, pos.x + size.x, pos.y + size.y))
        return self.rects[-1]

    def close(self):
        """Free the GL objects and the ImGui / ImPlot contexts (the window's context must be current)."""
        if self.context is None:
            return
        imgui.set_current_context(self.context)
        try:
            self.renderer.shutdown()
        except Exception:  # the GL context may be gone already
            pass
        implot.destroy_context(self.plot_context)
        imgui.destroy_context(self.context)
        self.context = None


def _rect():
    lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
    return lo.x, lo.y, hi.x, hi.y

