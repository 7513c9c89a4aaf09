"""The library stays a library: importing it pulls in no GL, no window, no app."""

import ast
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FORBIDDEN = ("app", "pyglet", "OpenGL")


def test_collision_sources_import_nothing_forbidden():
    for path in (ROOT / "collision").rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            for name in names:
                assert name.split(".")[0] not in FORBIDDEN, f"{path.name} imports {name}"


def test_importing_the_library_loads_no_gl_modules():
    code = ("import sys, obbcollide; bad = [m for m in sys.modules if m.split('.')[0] in "
            f"{FORBIDDEN + ('obbcollide_app',)!r}]; print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


# What a program that embeds only the library needs besides the standard library.
LIBRARY_DEPENDENCIES = {"numpy", "numba", "scipy", "llvmlite", "obbcollide"}


def test_the_library_imports_only_numpy_numba_and_scipy():
    """Importing the library and running a query of each kind loads no third-party module but
    numpy, numba (llvmlite) and scipy: an embedding program can depend on just those."""
    code = ("import sys, numpy as np, obbcollide as c\n"
            "pa = np.random.default_rng(0).normal(size=(12, 3))\n"
            "pb = np.random.default_rng(1).normal(size=(12, 3)) + 0.5\n"
            "c.ConvexPolyhedron.from_points(pa)\n"
            "assert not c.convex_convex_sat(pa, None, pb, None).separated\n"
            "c.test_triangle_triangle(pa[:3], pb[:3])\n"
            "std = set(sys.stdlib_module_names) | {'_distutils_hack', '__editable___obbcollide_0_1_0_finder'}\n"
            "extra = sorted({m.split('.')[0] for m in sys.modules} - std - "
            f"{LIBRARY_DEPENDENCIES!r})\n"
            "extra = [m for m in extra if not m.startswith(('_', '__editable__'))]\n"
            "print(extra); sys.exit(1 if extra else 0)")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_app_demo_reports_the_library(capsys):
    from app.__main__ import main

    assert main(["--demo"]) == 0
    out = capsys.readouterr().out
    assert "SAT" in out and "vector symbol" in out and "OBBs by covariance" in out
