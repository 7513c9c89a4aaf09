"""The heap reserve (app.world.memory): written pages kept for the steps, so that they do not page-fault.

Each case runs in a fresh interpreter: the reserve changes malloc's settings for the whole process."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Allocates and writes arrays of 1 to 4 MB (as a step's working arrays grow while a pile lands),
# after the reserve or without it; prints whether the reserve is in place, the page faults the
# allocations took, and the free top of the heap.
_PROBE = """
import resource, sys
import numpy as np
from app.world import memory
made = memory.reserve(8 << 20) if sys.argv[1] == "reserve" else False
if sys.argv[1] == "world":
    from tests._bodies import box_body, ground_body
    from app.world.world import World
    World([ground_body(), box_body("b", (0.25, 0.25, 0.25), (0.0, 1.0, 0.0), motion="dynamic")])
    made = memory.free_top() >= memory.RESERVE
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for k in range(4):
    a = np.empty((k + 1) << 20, np.uint8)
    a.fill(1)
    del a
print(made, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, memory.free_top())
"""


def _probe(mode, **env):
    out = subprocess.run([sys.executable, "-c", _PROBE, mode], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": ROOT, **env}, timeout=300)
    assert out.returncode == 0, out.stderr
    made, faults, top = out.stdout.split()
    return made == "True", int(faults), int(top)


def _glibc_heap():
    from app.world import memory

    return memory.free_top() >= 0


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _glibc_heap(),
                    reason="the heap reserve acts through glibc's mallopt and mallinfo2 only (elsewhere it does nothing)")
def test_reserve_takes_the_page_faults_out_of_later_allocations():
    made, faults, _ = _probe("reserve")
    plain_made, plain_faults, _ = _probe("plain")
    assert made and not plain_made
    # 10 MB written: ~2,500 fresh 4 kB pages without the reserve (fewer with huge pages), none with it
    assert plain_faults > 100, plain_faults
    assert faults * 10 < plain_faults, (faults, plain_faults)


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _glibc_heap(),
                    reason="the heap reserve acts through glibc's mallopt and mallinfo2 only (elsewhere it does nothing)")
def test_a_new_world_leaves_the_reserve_at_the_top_of_the_heap():
    made, faults, top = _probe("world")
    assert made and top >= 4 << 20  # (the probe's allocations came from it and went back)
    _, plain_faults, _ = _probe("plain")
    assert faults * 10 < plain_faults, (faults, plain_faults)


def test_the_environment_turns_the_reserve_off():
    made, faults, _ = _probe("reserve", OBBCOLLIDE_NO_HEAP_RESERVE="1")
    assert not made
    made, _, _ = _probe("world", OBBCOLLIDE_NO_HEAP_RESERVE="1")
    assert not made or not sys.platform.startswith("linux")
