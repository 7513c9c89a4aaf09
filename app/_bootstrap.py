"""First-run setup for the two README commands; standard library only.

``python3 -m app`` and ``python3 -m tests`` start with whatever ``python3`` the
user has. If that interpreter is not the project's virtual environment
(``.venv`` at the repository root), this module creates it, installs the
project with its test and decomposition extras, and re-executes the same
command inside it. A stamp file records the hash of ``pyproject.toml`` so a
change of dependencies reinstalls; otherwise the check costs milliseconds.

It also guards numba's on-disk kernel cache. Numba checks a cached kernel
against its own source file only: a kernel that calls a function from another
file keeps the old compiled callee after that file changes (an update by
``git pull``, an edit). So when any source file of ``collision/`` or ``app/``
differs from the last run, the cached kernels are deleted and compiled again.

For ``python3 -m app`` the setup then compiles them at once, before the window
opens (:func:`ensure_kernels`, a progress line on stderr), instead of letting
the viewer's first frames compile them one by one: see :mod:`app.warmup`.
"""

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A source checkout has the project file beside the packages; an installed package (a wheel in
# site-packages) has not, and then there is nothing to set up: pip installed the dependencies.
CHECKOUT = (ROOT / "pyproject.toml").is_file() and (ROOT / "collision").is_dir()
# The library's and the application's folders: ``collision/`` and ``app/`` in a checkout,
# ``obbcollide/`` and ``obbcollide_app/`` installed.
PACKAGES = ("collision", "app") if CHECKOUT else ("obbcollide", Path(__file__).resolve().parent.name)
VENV = ROOT / ".venv"
STAMP = VENV / ".obbcollide-installed"
KERNELS = VENV / ".obbcollide-kernels"  # hash of the sources the cached kernels were compiled from
# hash of the sources whose kernels the setup compiled: in the checkout's .venv, or for an installed
# package in the user's cache folder
COMPILED = VENV / ".obbcollide-compiled" if CHECKOUT else \
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "obbcollide" / "compiled"
EXTRAS = "test,decompose"


def _venv_python():
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _wanted_stamp():
    text = (ROOT / "pyproject.toml").read_bytes()
    return hashlib.sha256(text + EXTRAS.encode()).hexdigest()


def _in_venv():
    try:
        return Path(sys.prefix).resolve() == VENV.resolve()
    except OSError:
        return False


def ensure_environment(module):
    """Make sure we run inside an up-to-date ``.venv``; re-exec there if not.

    Parameters
    ----------
    module : str
        The ``-m`` module to re-run (``"app"`` or ``"tests"``).
    """
    if os.environ.get("OBBCOLLIDE_NO_BOOTSTRAP") or not CHECKOUT:
        return
    if sys.version_info < (3, 10):
        sys.exit(f"obbcollide needs Python >= 3.10; this is {sys.version.split()[0]}")
    wanted = _wanted_stamp()
    current = STAMP.read_text().strip() if STAMP.exists() else ""
    if current != wanted:
        _install(wanted)
    if not _in_venv():
        py = str(_venv_python())
        os.execv(py, [py, "-m", module, *sys.argv[1:]])
    refresh_kernel_cache()


def _sources_hash(root):
    h = hashlib.sha256()
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def refresh_kernel_cache(root=ROOT, stamp=KERNELS):
    """Delete numba's cached kernels (``*.nbi``, ``*.nbc`` in ``collision/`` and ``app/``) when the
    sources changed since the stamp was written; returns how many files were deleted."""
    wanted = _sources_hash(root)
    try:
        if stamp.read_text().strip() == wanted:
            return 0
    except OSError:
        pass
    gone = 0
    for package in PACKAGES:
        for pattern in ("*.nbi", "*.nbc"):
            for path in (root / package).rglob(pattern):
                try:
                    path.unlink()
                    gone += 1
                except OSError:
                    pass
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(wanted + "\n")
    except OSError:
        pass
    return gone


def _has_kernels(root):
    return any(True for package in PACKAGES for _ in (root / package).rglob("*.nbi"))


def ensure_kernels(root=ROOT, stamp=COMPILED):
    """Compile the viewer's kernels now, with a progress line on stderr, if they need it.

    They need it when the setup has not compiled them for the current sources
    (a first run, or a change that made :func:`refresh_kernel_cache` delete
    them) or when no compiled kernel is cached at all. Otherwise this costs a
    hash of the sources (milliseconds). Skipped with ``OBBCOLLIDE_NO_BOOTSTRAP``.
    Returns the number of kernels compiled (0 when nothing was to do).
    """
    if os.environ.get("OBBCOLLIDE_NO_BOOTSTRAP"):
        return 0
    wanted = _sources_hash(root)
    try:
        done = stamp.read_text().strip() == wanted
    except OSError:
        done = False
    if done and _has_kernels(root):
        return 0
    from .warmup import StatusLine, compile_kernels

    print("[setup] compiling the kernels (numba), once after an install or a change of the sources; "
          "they are cached on disk", file=sys.stderr, flush=True)
    line = StatusLine("[setup] ")
    try:
        watch = compile_kernels(line)
    except KeyboardInterrupt:
        line.close()
        sys.exit("[setup] interrupted: the kernels not compiled yet will compile when first used")
    line.close()
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(wanted + "\n")
    except OSError:
        pass
    return watch.count


def _install(stamp):
    py = _venv_python()
    if not py.exists():
        print(f"[setup] creating {VENV} (first run only)", file=sys.stderr, flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print("[setup] installing dependencies into .venv (first run, a few minutes)...",
          file=sys.stderr, flush=True)
    pip = [str(py), "-m", "pip", "--disable-pip-version-check"]
    log = VENV / "setup.log"
    with open(log, "w") as fh:
        subprocess.run(pip + ["install", "--upgrade", "pip"], stdout=fh, stderr=fh, check=False)
        result = subprocess.run(pip + ["install", "-e", f"{ROOT}[{EXTRAS}]"], stdout=fh, stderr=fh)
    if result.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-25:]
        print("\n".join(tail), file=sys.stderr)
        sys.exit(f"[setup] pip install failed (full log: {log}). Nothing was changed outside "
                 ".venv; run the command again once the problem is fixed.")
    STAMP.write_text(stamp + "\n")
    print("[setup] done", file=sys.stderr, flush=True)
