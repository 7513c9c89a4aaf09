"""Small helpers the panel's sections share: key labels beside widgets, tooltips, widget rectangles.

A section draws with ``from imgui_bundle import imgui`` directly; these only save repeating
the same few lines. :func:`mark` records a widget's rectangle (window pixels, origin top
left, y down, as Dear ImGui's) in the panel's ``items`` so that tests can click it where it
really is, whatever the font or layout.
"""

from imgui_bundle import imgui

from .controls import BINDINGS, key_label

__all__ = ["mark", "key_of", "tooltip", "hint", "keyed_checkbox", "action_button", "labelled"]

GREY = (0.62, 0.65, 0.70, 1.0)
ERROR = (1.0, 0.45, 0.40, 1.0)


def mark(session, name):
    """Record the last widget's rectangle as ``session.gui.items[name] = (x0, y0, x1, y1)``."""
    gui = getattr(session, "gui", None)
    if gui is not None:
        lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        gui.items[name] = (lo.x, lo.y, hi.x, hi.y)


def key_of(action, arg=None):
    """The key bound to ``action`` (with ``arg``) in :data:`app.viewer.controls.BINDINGS`, as shown, or ""."""
    found = _KEYS.get((action, repr(arg)))
    if found is None:
        found = next((key_label(key) for key, a, b, _ in BINDINGS if a == action and (arg is None or b == arg)), "")
        _KEYS[(action, repr(arg))] = found
    return found


_KEYS = {}


def tooltip(text):
    """Show ``text`` as a tooltip when the last widget is hovered."""
    if text and imgui.is_item_hovered(imgui.HoveredFlags_.delay_short):
        imgui.set_tooltip(text)


def hint(text):
    """Grey, wrapped text (a sentence that explains the widgets around it)."""
    imgui.push_style_color(imgui.Col_.text, GREY)
    imgui.text_wrapped(text)
    imgui.pop_style_color()


def keyed_checkbox(session, label, value, key="", help_text="", name=None):
    """A checkbox with its shortcut key in grey after it; returns whether it was clicked."""
    clicked, _ = imgui.checkbox(label, value)
    mark(session, name or label)
    tooltip(help_text)
    if key:
        imgui.same_line()
        imgui.text_colored(GREY, f"[{key}]")
    return clicked


def action_button(session, label, action, arg=None, help_text="", name=None):
    """A button that runs the session's key action ``do_<action>(arg, False)``, the same call as its key."""
    key = key_of(action, arg)
    clicked = imgui.button(f"{label} ({key})" if key else label)
    mark(session, name or label)
    tooltip(help_text)
    if clicked:
        getattr(session, "do_" + action)(arg, False)
    return clicked


def labelled(label, text):
    """``label`` in grey, then ``text``, on one line."""
    imgui.text_colored(GREY, label)
    imgui.same_line()
    imgui.text(text)
