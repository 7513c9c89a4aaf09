"""Convex decomposition in a child process, so a loader thread leaves the window responsive.

V-HACD (``vhacdx``) and CoACD hold Python's GIL for as long as they run:
measured, a loader thread decomposing the project's 1024-triangle gear
stalled the main thread (the window's frames) for 8 s, a 2M-triangle mesh for
19 s. :func:`convex_pieces` runs such a decomposition, when the cache lacks it,
in a child process (``python -m app.scene.decompose_child``) that writes the cache
entry (:func:`app.scene.pieces.convex_pieces`, ``.npz``), then reads that entry here
(milliseconds). The mesh goes to the child as two ``.npy`` files and the
settings as JSON (no pickle); its progress comes back as JSON lines. A run
without a cache uses a temporary folder as the child's cache.

The child is also where a decomposer may crash without taking the viewer with
it: V-HACD and CoACD are C++ and can abort or segfault on input they do not
expect. A child that dies (a signal, or an exit with no answer) raises
:class:`app.scene.pieces.DecomposerCrashed` naming the signal, and the loader gives
that body its convex hull with a message; a child whose decomposition raised
an error passes the error's text back (JSON), raised here as ``ValueError``
(:class:`~app.scene.pieces.DecomposerMissing` for a missing package), never run again
in this process. Only a convex mesh (one piece, its hull: Qhull on points the
library has checked), a decomposer this process cannot import (the caller's
fallback) and a child that cannot start at all stay in this process.
"""

import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import asdict

import numpy as np

from ..progress import report

__all__ = ["convex_pieces"]

_children = set()  # running children, ended when this process exits


@atexit.register
def _end_children():
    for proc in list(_children):
        if proc.poll() is None:
            proc.terminate()


def convex_pieces(vertices, faces, settings, cache=True, progress=None):
    """:func:`app.scene.pieces.convex_pieces`, its V-HACD or CoACD run in a child process when not cached.

    Parameters and result as :func:`app.scene.pieces.convex_pieces`.
    """
    from . import pieces

    v = np.ascontiguousarray(vertices, dtype=np.float64)
    f = np.ascontiguousarray(faces, dtype=np.int64)
    folder = (pieces.cache_dir() if cache is True else cache) if cache else None
    if folder and os.path.exists(os.path.join(folder, pieces.cache_key(v, f, settings) + ".npz")):
        return pieces.convex_pieces(v, f, settings, cache=cache, progress=progress)
    heavy = settings.method in ("vhacd", "coacd") or (settings.method == "auto" and not pieces.is_convex(v, f))
    if heavy and _importable("coacd" if settings.method == "coacd" else "vhacdx"):
        if folder:
            fill_cache(v, f, settings, folder, progress)
        else:  # no cache: the child's entry goes to a temporary folder, read back once
            with tempfile.TemporaryDirectory(prefix="obbcollide-pieces-") as scratch:
                if fill_cache(v, f, settings, scratch, progress):
                    got = pieces.convex_pieces(v, f, settings, cache=scratch, progress=progress)
                    got.cached = False
                    return got
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
    """Run :func:`app.scene.pieces.convex_pieces` in a child process that writes its entry into ``folder``.

    Returns True when the child ended well (the entry is then there, unless the
    folder cannot be written); False when it could not start (the caller computes
    in-process).

    Raises
    ------
    app.scene.pieces.DecomposerCrashed
        The child died (a signal) or exited without an answer.
    ValueError
        The child's decomposition raised an error: its text
        (:class:`~app.scene.pieces.DecomposerMissing` for a missing package).
    """
    from .pieces import DecomposerCrashed, DecomposerMissing

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
        error = None
        try:
            for line in proc.stdout:  # blocking reads release the GIL
                try:
                    message = json.loads(line)
                    if isinstance(message, dict):
                        error = message.get("error")
                        continue
                    stage, fraction = message
                except (ValueError, TypeError):
                    continue
                report(progress, stage, fraction)
            code = proc.wait()
            if code == 0:
                return True
            method = settings.method if settings.method != "auto" else "vhacd"
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"signal {-code}"
                raise DecomposerCrashed(f"{method} crashed on this mesh ({name}, in its own process)")
            if isinstance(error, list) and len(error) == 2:
                kind = DecomposerMissing if error[0] == "DecomposerMissing" else ValueError
                raise kind(f"{error[1]}")
            raise DecomposerCrashed(f"{method} ended without an answer (exit status {code}, in its own process)")
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

    try:
        compute(v, f, DecomposeSettings(**job["settings"]), cache=job["folder"], progress=progress)
    except Exception as exc:  # the parent raises it (a crash kills this process and says so by its signal)
        print(json.dumps({"error": [type(exc).__name__, f"{exc}"]}), flush=True)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
