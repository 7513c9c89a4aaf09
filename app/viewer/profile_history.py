"""The profiler's memory: per-frame phase times and counts over the last frames. GL-free.

:class:`ProfileHistory` keeps a ring of the last ``size`` frames: the frame's phases
(``session.times``: every phase of :mod:`app.viewer.frame_clock`, the world's among them,
then render and the frame), and the counts of the frame (candidate pairs, box tests,
triangle tests, manifolds, manifold points, triangle contacts). The panel plots :meth:`series` and prints
:meth:`summary` (min / mean / max over what is kept).
"""

import numpy as np

from .frame_clock import FRAME_PHASES

__all__ = ["ProfileHistory", "PHASES", "COUNTS"]

# (key, label): milliseconds per frame, from session.times (else world.stats): the frame's phases
# (app.viewer.frame_clock), which add up to the frame, then two totals, render and the frame
PHASES = FRAME_PHASES + (("render", "render (overlays, draw, HUD)"), ("frame", "frame"))
# (key, label): per frame, from world.stats
COUNTS = (("candidates", "pairs"), ("box_tests", "box tests"), ("tri_tests", "triangle tests"),
          ("manifolds", "manifolds"), ("points", "manifold points"), ("contacts", "triangle contacts"))


class ProfileHistory:
    """A ring buffer of the last ``size`` frames' phase times (ms) and counts.

    Parameters
    ----------
    size : int
        Frames kept (>= 1).
    """

    def __init__(self, size=300):
        if size < 1:
            raise ValueError(f"size: expected >= 1, got {size}")
        self.size = int(size)
        self.keys = [k for k, _ in PHASES] + [k for k, _ in COUNTS]
        self.data = np.zeros((len(self.keys), self.size))
        self.count = 0  # frames recorded in all
        self._row = {k: i for i, k in enumerate(self.keys)}

    def record(self, stats, times):
        """Add one frame: ``stats`` (the world's, seconds and counts) and ``times`` (the window's, seconds)."""
        col = self.count % self.size
        for k, _ in PHASES:
            seconds = times.get(k) if k in times else stats.get(k, 0.0)
            self.data[self._row[k], col] = 1000.0 * float(seconds or 0.0)
        for k, _ in COUNTS:
            self.data[self._row[k], col] = float(stats.get(k, 0) or 0)
        self.count += 1

    def __len__(self):
        return min(self.count, self.size)

    def series(self, key):
        """The kept values of ``key``, oldest first: (n,) float64 (ms for a phase)."""
        row = self.data[self._row[key]]
        n = len(self)
        if self.count <= self.size:
            return row[:n].copy()
        start = self.count % self.size
        return np.concatenate([row[start:], row[:start]])

    def frames(self):
        """The frame numbers of :meth:`series`' values, (n,) float64 (the newest is ``count - 1``)."""
        n = len(self)
        return np.arange(self.count - n, self.count, dtype=float)

    def table(self):
        """Every kept value at once: ``(keys, values (len(keys), n) oldest first, min (k,), mean (k,), max (k,))``."""
        n = len(self)
        if self.count <= self.size:
            values = self.data[:, :n]
        else:
            start = self.count % self.size
            values = np.concatenate([self.data[:, start:], self.data[:, :start]], axis=1)
        if not n:
            zeros = np.zeros(len(self.keys))
            return self.keys, values, zeros, zeros, zeros
        return self.keys, values, values.min(axis=1), values.mean(axis=1), values.max(axis=1)

    def summary(self, key):
        """``(min, mean, max)`` of ``key`` over the kept frames (zeros before the first)."""
        s = self.series(key)
        if not len(s):
            return 0.0, 0.0, 0.0
        return float(s.min()), float(s.mean()), float(s.max())
