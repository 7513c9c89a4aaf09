"""Where the text panels go, GL-free: the HUD and the help, wrapped and fitted to the window.

The session and the key table say *what* the text is (:meth:`Session.hud_lines`,
:func:`app.viewer.controls.help_lines`); this module says *where* it goes, given only
the font's metrics and the window's size, as boxes in window pixels with the origin
at the top left and y down (as Dear ImGui places its windows). The renderer draws
a backing panel and the text of each box; a GUI panel can take the same boxes.

The HUD is at the top left, wrapped to the window's width. The help goes under it,
against the right edge, in as few columns as make it fit the height that is left
(in a smaller font when even the most columns do not); a help entry that does not
fit its column is wrapped with its continuation lines indented under its text.
When nothing fits (a very small window), the last row says how many lines are left
out: nothing is drawn outside the window, and panels never overlap.
"""

import math
import re
from dataclasses import dataclass

MARGIN = 8      # pixels between the window's edge and a panel, and between panels
PAD = 6         # pixels between a panel's edge and its text
COLUMN_GAP = 3  # characters between two help columns
MAX_COLUMNS = 4
MIN_COLUMN_CHARS = 24  # a help column narrower than this wraps too much to read


@dataclass(frozen=True)
class FontMetrics:
    """A monospaced font's size in pixels: the advance of one character and the line spacing."""

    char_width: float
    line_height: float


@dataclass(frozen=True)
class TextBox:
    """A panel of text in window pixels (origin top left, y down).

    Attributes
    ----------
    name : str
        ``"hud"`` or ``"help"``.
    x, y, width, height : float
        The panel (text and padding).
    columns : tuple of tuple of str
        The text, column by column, each already wrapped to fit.
    column_width : float
        Pixels from one column's left edge to the next one's.
    metrics : FontMetrics
        The font the text was fitted to.
    left_out : int
        Lines that did not fit (0: all the text is there); the last line then says how many.
    """

    name: str
    x: float
    y: float
    width: float
    height: float
    columns: tuple
    column_width: float
    metrics: FontMetrics
    left_out: int = 0

    @property
    def right(self):
        return self.x + self.width

    @property
    def bottom(self):
        return self.y + self.height

    @property
    def lines(self):
        """Every line of the box, column after column."""
        return [line for col in self.columns for line in col]

    def text_origins(self):
        """``(x, y)`` of each column's first line's top left corner, window pixels (y down)."""
        return [(self.x + PAD + k * self.column_width, self.y + PAD) for k in range(len(self.columns))]

    def overlaps(self, other):
        return (self.x < other.right and other.x < self.right and self.y < other.bottom and other.y < self.bottom)

    def inside(self, width, height):
        return self.x >= 0 and self.y >= 0 and self.right <= width and self.bottom <= height


_LABEL = re.compile(r"^(\s*\S.*?\s\s)(?=\S)")  # "   PgUp  move ..." or "key: text": the hanging indent


def wrap(line, chars, hang=True):
    """One text line as lines of at most ``chars`` characters, broken at spaces where it can.

    Continuation lines are indented by two spaces, or with ``hang`` under the text after a
    key label (the line's start up to its first double space, as
    :func:`app.viewer.controls.help_lines` writes it); a word longer than a line is cut.
    """
    chars = max(1, int(chars))
    if len(line) <= chars:
        return [line]
    m = _LABEL.match(line) if hang else None
    indent = len(m.group(1)) if m and len(m.group(1)) <= chars // 2 else min(2, chars - 1)
    out = []
    rest = line
    first = True
    while rest:
        room = chars if first else chars - indent
        prefix = "" if first else " " * indent
        if len(rest) <= room:
            out.append(prefix + rest)
            break
        cut = rest.rfind(" ", 0, room + 1)
        if cut <= 0 or (first and m and cut < len(m.group(1))):
            cut = room  # no space to break at: cut the word
            head, rest = rest[:cut], rest[cut:]
        else:
            head, rest = rest[:cut].rstrip(), rest[cut:].lstrip()
        out.append(prefix + head)
        first = False
    return out


def _wrap_all(lines, chars, hang=True):
    return [part for line in lines for part in wrap(line, chars, hang)]


def _fit_rows(rows, capacity, chars):
    """At most ``capacity`` rows of at most ``chars``, and how many were left out (the last
    row then says how many)."""
    rows = [r[:chars] for r in rows]
    if len(rows) <= capacity:
        return rows, 0
    if capacity <= 0:
        return [], len(rows)
    left = len(rows) - (capacity - 1)
    note = f"... {left} more lines: enlarge the window"
    return rows[:capacity - 1] + [note if len(note) <= chars else f"+{left}"[:chars]], left


def _hud_box(lines, width, height, metrics):
    cw, lh = metrics.char_width, metrics.line_height
    chars = int((width - 2 * MARGIN - 2 * PAD) // cw)
    if chars < 1:
        return None
    rows = _wrap_all(lines, chars, hang=False)
    rows, left = _fit_rows(rows, int((height - 2 * MARGIN - 2 * PAD) // lh), chars)
    if not rows:
        return None
    text_w = max(len(r) for r in rows) * cw
    return TextBox("hud", MARGIN, MARGIN, text_w + 2 * PAD, len(rows) * lh + 2 * PAD, (tuple(rows),),
                   text_w, metrics, left)


def _help_box(lines, left, top, right, bottom, fonts):
    """The help in the rectangle ``[left, right] x [top, bottom]``, right-aligned, in the first
    of ``fonts`` it fits whole in (else the last, with a note of what is left out), or None."""
    box = None
    for metrics in fonts:
        box = _help_box_in(lines, left, top, right, bottom, metrics)
        if box is None or not box.left_out:
            return box
    return box


def _help_box_in(lines, left, top, right, bottom, metrics):
    cw, lh = metrics.char_width, metrics.line_height
    capacity = int((bottom - top - 2 * PAD) // lh)
    inner = right - left - 2 * PAD
    if capacity < 1 or inner < cw:
        return None
    longest = max(len(line) for line in lines)
    tried = []
    for ncol in range(1, MAX_COLUMNS + 1):
        chars = int((inner / cw - COLUMN_GAP * (ncol - 1)) // ncol)
        if chars < MIN_COLUMN_CHARS and ncol > 1:
            break
        chars = min(chars, longest)
        rows = _wrap_all(lines, chars)
        cols = _split_columns(lines, chars, ncol)
        if max(len(c) for c in cols) <= capacity:
            tried = [(cols, chars, rows)]
            break
        tried.append((cols, chars, rows))
    # when none fits, the one that shows the largest part of the help (the fewest columns of those)
    cols, chars, rows = max(tried, key=lambda t: min(1.0, capacity * len(t[0]) / len(t[2])))
    left = 0
    if max(len(c) for c in cols) > capacity:  # nothing fits: fill the columns, say what is left
        cols, left = _fill_columns(lines, chars, len(cols), capacity)
    used = max(max(len(r) for r in c) for c in cols)
    col_w = (chars + COLUMN_GAP) * cw
    text_w = (len(cols) - 1) * col_w + used * cw
    height = max(len(c) for c in cols) * lh + 2 * PAD
    width = text_w + 2 * PAD
    return TextBox("help", right - width, top, width, height, tuple(tuple(c) for c in cols), col_w, metrics, left)


def _fill_columns(lines, chars, ncol, capacity):
    """The entries (each wrapped to ``chars``) filling ``ncol`` columns of ``capacity`` rows in
    order, an entry's lines kept together, the last row saying how many rows are left out;
    returns the columns and that count."""
    entries = [wrap(line, chars) for line in lines]
    total = sum(len(e) for e in entries)
    cols = [[]]
    shown = 0
    for e in entries:
        if len(cols[-1]) + len(e) > capacity:
            if len(cols) == ncol:
                break
            cols.append([])
            if len(e) > capacity:
                break
        cols[-1].extend(e)
        shown += len(e)
    while shown < total:  # room for the note: drop whole entries from the end of the last column
        note = f"... {total - shown} more lines: enlarge the window"
        if len(cols[-1]) < capacity:
            cols[-1].append(note if len(note) <= chars else f"+{total - shown}"[:chars])
            break
        shown -= 1
        cols[-1].pop()
    cols = [c for c in cols if c]
    return cols, total - shown


def _split_columns(lines, chars, ncol):
    """The entries (each wrapped to ``chars``) in ``ncol`` columns of about equal height;
    an entry's wrapped lines stay in one column."""
    entries = [wrap(line, chars) for line in lines]
    total = sum(len(e) for e in entries)
    per = math.ceil(total / ncol)
    cols, cur = [], []
    for e in entries:
        if cur and len(cur) + len(e) > per and len(cols) < ncol - 1:
            cols.append(cur)
            cur = []
        cur = cur + e
    cols.append(cur)
    return cols


def layout_text(hud_lines, help_lines, width, height, hud_metrics, help_metrics=None):
    """The HUD and help panels for a window of ``width`` x ``height`` pixels.

    Parameters
    ----------
    hud_lines, help_lines : list of str
        The text, one entry a line (``help_lines`` empty: no help panel).
    width, height : float
        The window, pixels.
    hud_metrics : FontMetrics
        The HUD's font.
    help_metrics : FontMetrics or sequence of FontMetrics
        The help's font (default: the HUD's), or fonts from the largest down: the help takes
        the first it fits in whole (the box's ``metrics`` says which).

    Returns
    -------
    list of TextBox
        The HUD's box (when there is any HUD text and room for a line), then the help's.
        Each lies inside the window and no two overlap.
    """
    help_metrics = help_metrics or hud_metrics
    fonts = [help_metrics] if isinstance(help_metrics, FontMetrics) else list(help_metrics)
    boxes = []
    hud = _hud_box(list(hud_lines), width, height, hud_metrics) if hud_lines else None
    if hud is not None:
        boxes.append(hud)
    if help_lines:
        top = (hud.bottom + MARGIN) if hud is not None else MARGIN
        box = _help_box(list(help_lines), MARGIN, top, width - MARGIN, height - MARGIN, fonts)
        if box is not None:
            boxes.append(box)
    return boxes
