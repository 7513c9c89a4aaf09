"""The text panels' layout (app/viewer/layout.py), without a window.

For the HUD and help text the viewer shows, at the sizes people use and at random ones:
every box lies inside the window, no two overlap, every line fits its column, and no
word is lost (or, when the window is too small for everything, the last line says how
many lines are left out). The pixel tests in test_viewer_drawing.py check the same boxes
in screenshots.
"""

import re

import numpy as np
import pytest

from app.viewer.controls import help_lines
from app.viewer.layout import COLUMN_GAP, PAD, FontMetrics, layout_text, wrap

HUD_FONT = FontMetrics(char_width=8.0, line_height=17.0)   # DejaVu Sans Mono 10 pt, as measured
HELP_FONTS = [FontMetrics(7.0, 15.0), FontMetrics(7.0, 13.0), FontMetrics(6.0, 13.0)]  # 9, 8, 7.5 pt
HELP_FONT = HELP_FONTS[0]

HUD = [
    "  59.8 fps   frame  16.71 ms   update  3.20  broad  0.25  narrow   2.12  render  9.54 ms",
    "bodies 26   candidate pairs 49   box tests 3651   triangle tests 610   contacts 352   [paused]",
    "broad phase tree   piece pairs 49   manifolds 35 (140 points)   touching pairs 32   asleep 0   "
    "exact triangles  3.17 ms",
    "overlays: boxes triangles segments contacts manifolds grid   tree depth 0",
    "selected: column 10   position (-1.000, +2.860, +0.000)   yaw/pitch/roll (+0.0, -0.0, +0.0) deg   "
    "12 triangles, tree depth 1",
    "! /home/someone/Downloads/a rather long folder name/with spaces/part.stl: cannot read the mesh "
    "(no faces); the scene keeps everything it had",
]


def words(lines):
    return " ".join(lines).split()


def check(boxes, width, height):
    for b in boxes:
        assert b.inside(width, height), (b.name, b.x, b.y, b.right, b.bottom, width, height)
        m = b.metrics
        assert b.height == pytest.approx(max(len(c) for c in b.columns) * m.line_height + 2 * PAD)
        for k, col in enumerate(b.columns):
            x0 = b.x + PAD + k * b.column_width
            for line in col:
                assert x0 + len(line) * m.char_width <= b.right - PAD + 1e-9, (b.name, line)
            if k + 1 < len(b.columns):  # a column's text ends before the next one begins
                assert max(len(line) for line in col) * m.char_width <= b.column_width - COLUMN_GAP * m.char_width
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), (a, b)


@pytest.mark.parametrize("size", [(1280, 720), (800, 600), (1920, 1080), (1024, 768)])
def test_hud_and_help_fit_the_usual_windows_whole(size):
    width, height = size
    boxes = layout_text(HUD, help_lines(), width, height, HUD_FONT, HELP_FONTS)
    assert [b.name for b in boxes] == ["hud", "help"]
    check(boxes, width, height)
    hud, helpbox = boxes
    # nothing lost: the same words in the same order, and no "left out" note
    assert words(hud.lines) == words(HUD)
    assert words(helpbox.lines) == words(help_lines())
    assert not any(b.left_out for b in boxes)
    assert not any("enlarge the window" in line for b in boxes for line in b.lines)
    # the help's last entries are there, the help is under the HUD and against the right edge
    flat = helpbox.lines
    assert flat[-1] == help_lines()[-1]
    assert any(re.fullmatch(r"\s*Esc  quit", line) for line in flat)
    assert any(line.startswith("drop a file:") for line in flat)
    assert helpbox.y >= hud.bottom
    assert helpbox.right == pytest.approx(width - 8)


def test_a_help_entry_too_long_for_its_column_hangs_under_its_text():
    lines = wrap("     M  contact manifolds of the convex pieces (points, normals) on / off", 30)
    assert lines[0] == "     M  contact manifolds of"
    assert all(len(x) <= 30 for x in lines)
    assert all(x.startswith(" " * 8) and x[8] != " " for x in lines[1:])
    assert words(lines) == "M contact manifolds of the convex pieces (points, normals) on / off".split()
    mouse = wrap("left drag on a body: move it in the view plane (a dynamic body hangs on a spring)", 40)
    assert all(x.startswith("  ") and x[2] != " " for x in mouse[1:]) and len(mouse) == 3
    hud = wrap("15.5 fps   frame 64.46 ms   update 42.70  broad  0.67  narrow 25.68", 30, hang=False)
    assert all(x.startswith("  ") and x[2] != " " for x in hud[1:])
    assert wrap("short", 30) == ["short"]
    cut = wrap("x" * 25, 10)  # a word longer than the line is cut
    assert "".join(x.strip() for x in cut) == "x" * 25 and all(len(x) <= 10 for x in cut)


def test_at_800x600_the_help_is_in_columns_under_the_hud():
    """The window that used to show the help over the HUD: now in columns that fit under it."""
    boxes = layout_text(HUD, help_lines(), 800, 600, HUD_FONT, HELP_FONTS)
    hud, helpbox = boxes
    assert len(helpbox.columns) >= 2
    assert helpbox.y >= hud.bottom + 8 and helpbox.bottom <= 600 - 8


@pytest.mark.parametrize("seed", range(40))
def test_random_windows_and_fonts_never_overflow_or_overlap(seed):
    rng = np.random.default_rng(seed)
    width, height = int(rng.integers(160, 2600)), int(rng.integers(120, 1500))
    hud_font = FontMetrics(float(rng.integers(5, 12)), float(rng.integers(9, 22)))
    help_font = FontMetrics(float(rng.integers(5, 12)), float(rng.integers(9, 22)))
    hud = HUD[:int(rng.integers(1, len(HUD) + 1))]
    boxes = layout_text(hud, help_lines(), width, height, hud_font, help_font)
    check(boxes, width, height)
    for b in boxes:
        source = hud if b.name == "hud" else help_lines()
        lines = b.lines
        if b.left_out:  # some left out: the last line says how many
            assert re.search(rf"\b{b.left_out}\b", lines[-1])
            shown = "".join(words(lines[:-1]))
            assert "".join(words(source)).startswith(shown)
        else:  # everything shown: the same characters in order (a word longer than a line is cut)
            assert "".join(words(lines)) == "".join(words(source))


def test_no_help_no_help_box_and_a_tiny_window_gives_no_box_outside():
    assert [b.name for b in layout_text(HUD, [], 1280, 720, HUD_FONT)] == ["hud"]
    for width, height in [(10, 10), (40, 30), (100, 40)]:
        check(layout_text(HUD, help_lines(), width, height, HUD_FONT, HELP_FONT), width, height)
