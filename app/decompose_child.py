"""Convex decomposition in a child process, so a loader thread leaves the window responsive.

V-HACD (``vhacdx``) and CoACD hold Python's GIL for as long as they run:
measured, a loader thread decomposing the project's 1024-triangle gear
stalled the main thread (the window's frames) for 8 s, a 2M-triangle mesh for
19 s. :func:`convex_pieces` runs such a decomposition, when the cache lacks it,
in a child process (``python -m app.decompose_child``) that writes the cache
entry (:func:`app.pieces.convex_pieces`, ``.npz``), then reads that entry here
(milliseconds). The mesh goes to the child as two ``.npy`` files and the
settings as JSON (no pickle); its progress comes back as JSON lines. A convex
mesh (one piece, its hull), a run without a cache and a run whose decomposer
this process cannot import stay in this process; so does a run whose child
fails, and then :func:`app.pieces.convex_pieces` gives its own error.
"""

import atexit
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict

import numpy as np

from .progress import report

__all__ = ["convex_pieces"]

_children = set()  # running children, ended when this process exits


@atexit.register
def _end_children():
    for proc in list(_children):
        if proc.poll() is None:
            proc.terminate()


def convex_pieces(vertices, faces, settings, cache=True, progress=None):
    """:func:`app.pieces.convex_pieces`, its V-HACD or CoACD run in a child process when not cached.

    Parameters and result as :func:`app.pieces.convex_pieces`.
    """
    from . import pieces

    v = np.ascontiguousarray(vertices, dtype=np.float64)
    f = np.ascontiguousarray(faces, dtype=np.int64)
    folder = (pieces.cache_dir() if cache is True else cache) if cache else None
    if folder and not os.path.exists(os.path.join(folder, pieces.cache_key(v, f, settings) + ".npz")):
        heavy = settings.method in ("vhacd", "coacd") or (settings.method == "auto" and not pieces.is_convex(v, f))
        if heavy and _importable("coacd" if settings.method == "coacd" else "vhacdx"):
            fill_cache(v, f, settings, folder, progress)
    return pieces.convex_pieces(v, f, settings, cache=cache, progress=progress)


def _importable(name):
    """Whether this process can import the decomposer (if not, the in-process run says so)."""
    import importlib

    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def fill_cache(vertices, faces, settings, folder, progress=None):
    """Run :func:`app.pieces.convex_pieces` in a child process that writes its entry into ``folder``.

    Returns True when the child ended well (the entry is then there, unless the
    folder cannot be written); False otherwise (the caller computes in-process).
    """
    # the folder holding the top-level package (the checkout, or site-packages installed)
    root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                        *[os.pardir] * (__package__.count(".") + 1)))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    with tempfile.TemporaryDirectory(prefix="obbcollide-pieces-") as work:
        np.save(os.path.join(work, "vertices.npy"), vertices, allow_pickle=False)
        np.save(os.path.join(work, "faces.npy"), faces, allow_pickle=False)
        with open(os.path.join(work, "job.json"), "w") as fh:
            json.dump({"settings": asdict(settings), "folder": os.path.abspath(folder)}, fh)
        try:
            proc = subprocess.Popen([sys.executable, "-m", f"{__package__}.decompose_child", work], cwd=root, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError:
            return False
        _children.add(proc)
        try:
            for line in proc.stdout:  # blocking reads release the GIL
                try:
                    stage, fraction = json.loads(line)
                except (ValueError, TypeError):
                    continue
                report(progress, stage, fraction)
            return proc.wait() == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            _children.discard(proc)


def main(work):
    """The child: read the job from the folder ``work``, write the cache entry, report progress on stdout."""
    from .pieces import DecomposeSettings, convex_pieces as compute

    with open(os.path.join(work, "job.json")) as fh:
        job = json.load(fh)
    v = np.load(os.path.join(work, "vertices.npy"), allow_pickle=False)
    f = np.load(os.path.join(work, "faces.npy"), allow_pickle=False)

    def progress(stage, fraction):
        print(json.dumps([stage, fraction]), flush=True)

    compute(v, f, DecomposeSettings(**job["settings"]), cache=job["folder"], progress=progress)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
