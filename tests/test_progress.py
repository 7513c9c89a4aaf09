"""Tests for app.progress: the callback protocol and the terminal progress bar.

What is checked against what:

- ``report``: a callback that requires two positional arguments gets
  ``(stage, fraction)`` (fraction clipped to [0, 1], None passed through);
  one with a single required argument (``list.append``, ``def step(text,
  k=k)`` as app/scene/loader.py writes it) gets the text ``"stage (40%)"`` or
  ``"stage"``; ``*args`` callables and callable objects are told apart the
  same way; ``None`` is a no-op. ``tee`` and ``prefixed`` forward to both forms.
- ``TerminalProgress``, written to a ``StringIO`` (not a terminal) or to one
  whose ``isatty()`` says True, with a fake clock: exact expected output
  strings (one line per stage without a terminal; a bar redrawn with ``\\r``,
  throttled to ``interval`` except for a new stage and fraction 1, each
  finished stage left on its own line with its time, on a terminal);
  ``bar=`` forces either mode; a closed stream raises nothing; the default
  stream is ``sys.stderr`` at the time of writing.
"""

import io

import pytest

from app.progress import TerminalProgress, as_text, prefixed, report, tee


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class Tty(io.StringIO):
    def isatty(self):
        if self.closed:  # as a real file does
            raise ValueError("I/O operation on closed file")
        return True


# ---------------------------------------------------------------- report


def test_two_argument_callback_gets_stage_and_fraction():
    got = []
    report(lambda stage, fraction: got.append((stage, fraction)), "reading", 0.25)
    report(lambda stage, fraction: got.append((stage, fraction)), "reading", None)
    report(lambda stage, fraction: got.append((stage, fraction)), "reading", 1.7)
    report(lambda stage, fraction: got.append((stage, fraction)), "reading", -2)
    assert got == [("reading", 0.25), ("reading", None), ("reading", 1.0), ("reading", 0.0)]


def test_one_argument_callback_gets_text():
    got = []
    report(got.append, "cleaning", 0.4)
    report(got.append, "vhacd", None)
    report(got.append, "done", 1.0)
    assert got == ["cleaning (40%)", "vhacd", "done (100%)"]
    assert as_text("x", 0.125) == "x (12%)" and as_text("x") == "x"


def test_one_required_argument_with_defaults_gets_text():
    """app/scene/loader.py's ``def step(text, k=k, b=b)``: the defaults must not receive the fraction."""
    got = []

    def step(text, k=3, b="box"):
        got.append((text, k, b))

    report(step, "reading", 0.5)
    assert got == [("reading (50%)", 3, "box")]


def test_variadic_and_callable_objects():
    got = []

    class Two:
        def __call__(self, stage, fraction):
            got.append(("two", stage, fraction))

    class One:
        def __call__(self, text):
            got.append(("one", text))

    report(Two(), "a", 0.5)
    report(One(), "b", 0.5)
    report(lambda *args: got.append(("var",) + args), "c", None)
    assert got == [("two", "a", 0.5), ("one", "b (50%)"), ("var", "c", None)]


def test_none_is_silent():
    report(None, "anything", 0.5)  # no error, nothing to call


def test_tee_and_prefixed():
    texts, pairs = [], []
    both = tee(texts.append, None, lambda s, f: pairs.append((s, f)))
    report(both, "trees", 0.5)
    assert texts == ["trees (50%)"] and pairs == [("trees", 0.5)]
    pre = prefixed(texts.append, "[1/2] gear: ")
    report(pre, "reading", None)
    assert texts[-1] == "[1/2] gear: reading"
    assert prefixed(None, "x") is None


# ---------------------------------------------------------------- terminal


def test_plain_lines_when_not_a_terminal():
    out = io.StringIO()
    clock = Clock()
    bar = TerminalProgress(out, clock=clock)
    assert not bar.is_bar
    for f in (0.0, 0.3, 0.6, 1.0):
        bar("cleaning 600000 triangles", f)
        clock.t += 1
    bar("vhacd: decomposing", None)
    bar("vhacd: decomposing", None)
    bar.close()
    assert out.getvalue() == "cleaning 600000 triangles\nvhacd: decomposing\n"


def test_bar_on_a_terminal():
    out = Tty()
    clock = Clock()
    bar = TerminalProgress(out, width=10, interval=0.5, clock=clock)
    assert bar.is_bar
    bar("trees", 0.0)
    clock.t = 0.1
    bar("trees", 0.3)  # within the interval: not drawn
    clock.t = 0.6
    bar("trees", 0.5)
    clock.t = 0.7
    bar("trees", 1.0)  # finished: always drawn
    clock.t = 1.0
    bar("vhacd", None)  # a new stage: the old line ends with its time
    clock.t = 3.0
    bar.close()
    expected = ("\rtrees [----------]   0%  0.0 s"
                "\rtrees [#####-----]  50%  0.6 s"
                "\rtrees [##########] 100%  0.7 s"
                "\rtrees [##########] 100%  1.0 s\n"
                "\rvhacd ...  0.0 s"  # a fresh line: nothing to wipe
                "\rvhacd ...  2.0 s\n")
    assert out.getvalue() == expected


def test_bar_line_is_wiped_when_shorter():
    out = Tty()
    bar = TerminalProgress(out, width=4, interval=0.0, clock=Clock())
    bar("a long stage name", 0.5)
    bar("a long stage name", None)  # shorter line: padded with spaces over the old one
    first = "\ra long stage name [##--]  50%  0.0 s"
    second = "\ra long stage name ...  0.0 s"
    assert out.getvalue() == first + second + " " * (len(first) - len(second))


@pytest.mark.parametrize("stream,force,is_bar", [(io.StringIO, True, True), (Tty, False, False)])
def test_bar_can_be_forced(stream, force, is_bar):
    out = stream()
    bar = TerminalProgress(out, bar=force, clock=Clock())
    bar("x", 0.5)
    bar.close()
    assert bar.is_bar == is_bar
    assert out.getvalue().startswith("\r") == is_bar


def test_closed_stream_raises_nothing():
    out = Tty()
    bar = TerminalProgress(out, clock=Clock())
    out.close()
    assert not bar.is_bar  # isatty on a closed stream raises ValueError: taken as "no"
    bar("x", 0.5)
    bar.close()


def test_default_stream_is_stderr(capsys):
    with TerminalProgress(clock=Clock()) as bar:
        bar("loading", None)
    captured = capsys.readouterr()
    assert captured.err == "loading\n" and captured.out == ""


def test_reporting_to_a_terminal_progress():
    """report() talks to TerminalProgress in the two-argument form."""
    out = io.StringIO()
    bar = TerminalProgress(out, clock=Clock())
    report(bar, "stage one", 0.5)
    report(bar, "stage two", None)
    assert out.getvalue() == "stage one\nstage two\n"
