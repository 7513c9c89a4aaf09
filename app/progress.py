"""Progress of long loads: a callback protocol and a terminal progress bar.

Loading a big mesh, cleaning it, decomposing it into convex pieces and
building OBB trees can take seconds. The loaders (:mod:`app.scene.mesh_io`,
:mod:`app.scene.pieces`) report what they do through one optional callback, so a
terminal, the viewer's HUD or a test can follow along:

``progress(stage, fraction)``
    ``stage`` (str) names the current step in a few words ("reading
    big.stl (96 MB)", "cleaning 2007372 triangles", "vhacd: decomposing ...");
    the same text comes again as the step advances, a new text starts a new
    step. ``fraction`` (float in [0, 1], or None) is how much of that step is
    done; None when the work gives no measure of it (V-HACD and CoACD have no
    progress callback: they report their start and their end only).

A callback with a single required parameter (the older form, e.g.
``list.append``) gets one text instead: the stage, with the percentage
appended when known (:func:`report` decides by the callback's signature).

:class:`TerminalProgress` is such a callback: a bar redrawn in place on a
terminal, a plain line per stage otherwise (a log file, a pipe).
"""

import inspect
import sys
import time
from typing import Callable, Optional

__all__ = ["Progress", "report", "as_text", "tee", "prefixed", "TerminalProgress"]

Progress = Callable[[str, Optional[float]], None]

def _takes_two(callback):
    """True when ``callback`` requires two positional arguments (stage, fraction).

    One required parameter (``def step(text, k=k)``, ``list.append``) is the
    one-text form, whatever optional parameters follow; a signature that
    cannot be read is taken as the one-text form too.
    """
    try:
        params = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    variadic = any(p.kind == p.VAR_POSITIONAL for p in params)
    return len(required) >= 2 or (variadic and len(required) < 2)


def as_text(stage, fraction=None):
    """The one-text form of a report: ``"stage"`` or ``"stage (40%)"``."""
    if fraction is None:
        return stage
    return f"{stage} ({min(max(fraction, 0.0), 1.0):.0%})"


def report(progress, stage, fraction=None):
    """Send one report to ``progress`` (None: nothing), in the form it takes.

    Parameters
    ----------
    progress : callable or None
        ``progress(stage, fraction)``, or a one-argument callable that gets
        :func:`as_text` of the report.
    stage : str
    fraction : float or None
        Clipped to [0, 1].
    """
    if progress is None:
        return
    if fraction is not None:
        fraction = min(max(float(fraction), 0.0), 1.0)
    if _takes_two(progress):
        progress(stage, fraction)
    else:
        progress(as_text(stage, fraction))


def tee(*callbacks):
    """One callback that forwards every report to each of ``callbacks`` (None entries skipped)."""
    live = [c for c in callbacks if c is not None]

    def both(stage, fraction):
        for c in live:
            report(c, stage, fraction)

    return both


def prefixed(progress, prefix):
    """A callback that forwards to ``progress`` with ``prefix`` put before each stage (None stays None)."""
    if progress is None:
        return None

    def inner(stage, fraction):
        report(progress, prefix + stage, fraction)

    return inner


class TerminalProgress:
    """A progress callback that draws on a terminal (stderr by default).

    On a terminal (``stream.isatty()``, or ``bar=True``) the current stage is
    one line redrawn in place: ``stage [#######-------]  50%  1.2 s``, or
    ``stage ...  1.2 s`` when the fraction is unknown; each finished stage
    stays as a line with its time. Elsewhere (``bar=False``, or a stream that
    is not a terminal) one plain line is written when a stage starts, none
    for its updates, so logs stay short.

    Parameters
    ----------
    stream : file-like, optional
        Default ``sys.stderr`` (looked up at each write).
    bar : bool or None
        None: a bar when the stream is a terminal.
    width : int
        Characters of the bar itself.
    interval : float
        Least seconds between two redraws of the same stage (a new stage
        and a finished one, fraction 1, are always drawn).
    clock : callable
        Seconds, for tests; default ``time.monotonic``.
    """

    def __init__(self, stream=None, bar=None, width=30, interval=0.1, clock=time.monotonic):
        self._stream = stream
        self._bar = bar
        self.width = int(width)
        self.interval = float(interval)
        self._clock = clock
        self._stage = None
        self._started = 0.0
        self._drawn = -1.0
        self._fraction = None
        self._open = False  # a bar line is on screen without its newline
        self._last_len = 0

    @property
    def stream(self):
        return self._stream if self._stream is not None else sys.stderr

    @property
    def is_bar(self):
        if self._bar is not None:
            return bool(self._bar)
        isatty = getattr(self.stream, "isatty", None)
        try:
            return bool(isatty and isatty())
        except (ValueError, OSError):  # a closed stream
            return False

    def __call__(self, stage, fraction):
        now = self._clock()
        new = stage != self._stage
        if new:
            self._finish(now)
            self._stage, self._started, self._drawn = stage, now, -1.0
        if not self.is_bar:
            if new:
                self._write(f"{stage}\n")
            return
        done = fraction is not None and fraction >= 1.0
        if new or done or now - self._drawn >= self.interval:
            self._draw(stage, fraction, now)

    def close(self):
        """End the current line (call when the work is over); the stage's time is shown."""
        self._finish(self._clock())
        self._stage = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _line(self, stage, fraction, now):
        seconds = now - self._started
        if fraction is None:
            return f"{stage} ...  {seconds:.1f} s"
        f = min(max(float(fraction), 0.0), 1.0)
        n = int(round(f * self.width))
        return f"{stage} [{'#' * n}{'-' * (self.width - n)}] {f:4.0%}  {seconds:.1f} s"

    def _draw(self, stage, fraction, now):
        text = self._line(stage, fraction, now)
        pad = " " * max(0, self._last_len - len(text))  # wipe the end of a longer previous line
        self._write("\r" + text + pad)
        self._last_len = len(text)
        self._drawn = now
        self._open = True
        self._fraction = fraction

    def _finish(self, now):
        if self._open:
            text = self._line(self._stage, self._fraction, now)
            pad = " " * max(0, self._last_len - len(text))
            self._write("\r" + text + pad + "\n")
            self._open = False
            self._last_len = 0

    def _write(self, text):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (ValueError, OSError):  # closed or broken stream: progress is never worth an error
            pass
