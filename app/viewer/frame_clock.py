"""Where a frame's time goes: named phases that add up to the frame. GL-free.

A :class:`FrameClock` is a lap timer. Each :meth:`~FrameClock.lap` closes the
interval since the previous one and adds it to a named phase, so the phases of a
frame cover it from its start to its end with no gap: their sum is the frame's
wall time by construction, and what matters is that each interval carries the
right name. Two refinements keep the names right:

- A lap that contains finer measurements made elsewhere (the world's own
  update / broad / narrow / exact times inside the session's update, the
  overlay geometry inside the renderer's draw) is divided with
  :meth:`~FrameClock.split`: those parts go to their phases and the lap keeps
  the rest (the world's bookkeeping, the GL draw submission).
- Time the garbage collector takes (measured through :data:`gc.callbacks`) is
  taken out of the lap it interrupted and put in the ``gc`` phase.

The phases, in frame order (:data:`FRAME_PHASES`): the recorder's bookkeeping of
the previous frame, event dispatch (or, in the interactive loop, the event loop's
wait for the next frame), the world's phases, the overlays' geometry, the GL draw
submission, the text HUD, the GUI panel, the screenshot, the buffer swap, and the
garbage collector.
"""

import gc
import time

__all__ = ["FrameClock", "FRAME_PHASES", "PHASE_KEYS", "WORLD_PHASES"]

# (key, label) in frame order: together they are the whole frame.
FRAME_PHASES = (
    ("record", "recording"),          # the recorder's line of the previous frame (--bench, --report)
    ("events", "events"),             # input events and scripted actions dispatched
    ("idle", "idle (event loop)"),    # interactive: the event loop between frames (events, waiting for the clock)
    ("update", "update (solver)"),    # world.stats: integration and the solver, summed over the frame's steps
    ("broad", "broad phase"),         # world.stats
    ("narrow", "narrow phase"),       # world.stats: mid and narrow phases into manifolds
    ("exact", "exact triangles"),     # world.stats: the triangle contacts the overlays draw
    ("world", "world (other)"),       # the rest of the session's update: loads polled, sync, repair, messages
    ("overlays", "overlay geometry"),  # Session.overlays: the debug lines and triangles built
    ("draw", "draw (GL)"),            # the renderer's GL calls: meshes, grounds, overlay buffers uploaded
    ("hud", "HUD text"),              # the text overlay (when the panel is hidden)
    ("panel", "panel"),               # the GUI panel (Dear ImGui), its profiler's record
    ("screenshot", "screenshot"),     # reading back and saving the frame when one is asked for
    ("flip", "flip (swap)"),          # the buffer swap (the GL work queued by the draw finishes here)
    ("gc", "garbage collection"),     # the collector, taken out of whichever phase it interrupted
)
PHASE_KEYS = tuple(k for k, _ in FRAME_PHASES)
WORLD_PHASES = ("update", "broad", "narrow", "exact")  # measured by the world, inside the session's update


class FrameClock:
    """A lap timer over named phases (see the module docs).

    Use :meth:`start` at the start of a frame, :meth:`lap` at the end of each phase,
    :meth:`finish` at the end of its last phase; :attr:`last` is then the finished frame's phases and
    ``"frame"``, its wall time (seconds).
    """

    def __init__(self):
        self.times = dict.fromkeys(PHASE_KEYS, 0.0)
        self.last = {**self.times, "frame": 0.0}
        self._start = self._mark = time.perf_counter()
        self._gc = 0.0        # collector seconds since the last lap
        self._gc_lap = 0.0    # collector seconds taken out of the last lap
        self._lap = 0.0       # the last lap's seconds (less the collector's)
        self._gc_since = None
        gc.callbacks.append(self._on_gc)

    def close(self):
        """Stop listening to the collector."""
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase, _info):
        now = time.perf_counter()
        if phase == "start":
            self._gc_since = now
        elif self._gc_since is not None:
            self._gc += now - self._gc_since
            self._gc_since = None

    def start(self):
        """Begin a frame now (the previous one, unless finished, is dropped)."""
        self.times = dict.fromkeys(PHASE_KEYS, 0.0)
        self._start = self._mark = time.perf_counter()
        self._gc = 0.0

    def lap(self, phase):
        """Add the time since the last lap (less the collector's) to ``phase``; returns it (seconds)."""
        now = time.perf_counter()
        took = now - self._mark - self._gc
        self.times[phase] += took
        self.times["gc"] += self._gc
        self._gc_lap, self._gc = self._gc, 0.0
        self._mark = now
        self._lap = took
        return took

    def split(self, phase, parts):
        """Move ``parts`` ({phase: seconds}, measured inside the last lap, one of ``phase``) out of it.

        Parts measured across a collection hold the collector's time that the lap
        already gave to ``gc``; that overlap (at most the lap's collector time) goes
        back from ``gc`` so that nothing is counted twice.
        """
        total = sum(parts.values())
        over = min(max(total - self._lap, 0.0), self._gc_lap)
        self.times["gc"] -= over
        self.times[phase] += over - total
        for name, seconds in parts.items():
            self.times[name] += seconds

    def finish(self, phase):
        """Close the last phase (as :meth:`lap`) and end the frame: :attr:`last` becomes its phases
        and ``"frame"``, its wall time from :meth:`start`; the next frame starts. Returns :attr:`last`."""
        self.lap(phase)
        self.last = {**self.times, "frame": self._mark - self._start}
        self.times = dict.fromkeys(PHASE_KEYS, 0.0)
        self._start = self._mark
        return self.last
