"""The panel's Profiler section: each phase's time over the last frames as ImPlot lines, with
min / mean / max, and the counts of the frame (pairs, box and triangle tests, manifolds, points)."""

from imgui_bundle import imgui, implot

from .panel_widgets import GREY, mark
from .profile_history import COUNTS, PHASES

__all__ = ["draw_profiler"]

PLOTTED = ("update", "broad", "narrow", "exact", "overlays", "draw", "panel", "flip", "frame")


def draw_profiler(session):
    hist = session.gui.history
    if not len(hist):
        imgui.text_colored(GREY, "no frame yet")
        return
    x = hist.frames()
    keys, values, lo, mean, hi = hist.table()
    row = {k: i for i, k in enumerate(keys)}
    if implot.begin_plot("##phases", (-1.0, 210.0), implot.Flags_.no_menus | implot.Flags_.no_box_select):
        implot.setup_axes("", "ms", implot.AxisFlags_.no_tick_labels, implot.AxisFlags_.auto_fit)
        implot.setup_axis_limits(implot.ImAxis_.x1, float(x[0]), float(x[0] + hist.size - 1), implot.Cond_.always)
        implot.setup_legend(implot.Location_.north_east, implot.LegendFlags_.outside)
        labels = dict(PHASES)
        for key in PLOTTED:
            implot.plot_line(labels[key].split(" ")[0], x, values[row[key]])
        implot.end_plot()
    mark(session, "profiler_plot")
    flags = imgui.TableFlags_.row_bg | imgui.TableFlags_.borders_inner_h | imgui.TableFlags_.sizing_stretch_prop
    if imgui.begin_table("##phase_table", 4, flags):
        for head in ("ms per frame", "min", "mean", "max"):
            imgui.table_setup_column(head)
        imgui.table_headers_row()
        for key, label in PHASES:
            i = row[key]
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text(label)
            for v in (lo[i], mean[i], hi[i]):
                imgui.table_next_column()
                imgui.text(f"{v:7.2f}")
        imgui.end_table()
    imgui.text_colored(GREY, f"over the last {len(hist)} frames (the plot: the last {hist.size})")
    if imgui.begin_table("##count_table", 4, flags):
        for head in ("per frame", "now", "mean", "max"):
            imgui.table_setup_column(head)
        imgui.table_headers_row()
        for key, label in COUNTS:
            i = row[key]
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text(label)
            for v in (values[i, -1], mean[i], hi[i]):
                imgui.table_next_column()
                imgui.text(f"{v:8.0f}" if v >= 100 else f"{v:8.1f}")
        imgui.end_table()
