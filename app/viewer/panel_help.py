"""The panel's Help (the key table, from :data:`app.viewer.controls.BINDINGS`) and Log
(every message of the session, newest last) sections."""

import time

from imgui_bundle import imgui

from .controls import BINDINGS, MOUSE_HELP, key_label
from .panel_widgets import ERROR, GREY, mark

__all__ = ["draw_help", "draw_log"]

HELP_ROWS = 14  # visible rows before the table scrolls


def draw_help(session):
    flags = (imgui.TableFlags_.row_bg | imgui.TableFlags_.scroll_y | imgui.TableFlags_.borders_inner_h
             | imgui.TableFlags_.sizing_fixed_fit)
    height = HELP_ROWS * imgui.get_text_line_height_with_spacing()
    if imgui.begin_table("##keys", 2, flags, (0.0, height)):
        imgui.table_setup_scroll_freeze(0, 1)
        imgui.table_setup_column("key")
        imgui.table_setup_column("action", imgui.TableColumnFlags_.width_stretch)
        imgui.table_headers_row()
        for key, _, _, text in BINDINGS:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text(key_label(key))
            imgui.table_next_column()
            imgui.text_wrapped(text)
        for what, text in MOUSE_HELP:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text_colored(GREY, what)
            imgui.table_next_column()
            imgui.text_wrapped(text)
        imgui.end_table()
    mark(session, "help_table")
    imgui.text_colored(GREY, "Shift: 10x longer moves, 5x larger turns")


def draw_log(session):
    log = getattr(session, "log", session.messages)
    if imgui.small_button("Clear"):
        log.clear()
        session.messages.clear()
    imgui.same_line()
    imgui.text_colored(GREY, f"{len(log)} messages")
    height = 8 * imgui.get_text_line_height_with_spacing()
    imgui.begin_child("##log", (0.0, height), imgui.ChildFlags_.borders)
    now = time.monotonic()
    for text, when, error in log:
        imgui.text_colored(GREY, f"{now - when:5.0f} s")
        imgui.same_line()
        if error:
            imgui.push_style_color(imgui.Col_.text, ERROR)
        imgui.text_wrapped(text)
        if error:
            imgui.pop_style_color()
    if imgui.get_scroll_y() >= imgui.get_scroll_max_y() - 1:
        imgui.set_scroll_here_y(1.0)  # follow the newest while at the bottom
    imgui.end_child()
    mark(session, "log")
