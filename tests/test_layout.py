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
LIBRARY_DEPENDENCIES = {"numpy", "numba", "scipy"}
# The application's and the tests' dependencies, which the library must not load.
NOT_FOR_THE_LIBRARY = ("trimesh", "pyglet", "OpenGL", "imgui_bundle", "PIL", "platformdirs", "tomli", "fcl",
                       "pybullet", "vhacdx", "coacd", "app", "obbcollide_app")


def test_the_library_sources_import_only_numpy_numba_and_scipy():
    """Every import statement in collision/ names the standard library, numpy, numba, scipy or the
    library itself: an embedding program can depend on just those three."""
    for path in (ROOT / "collision").rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or top in LIBRARY_DEPENDENCIES, f"{path.name} imports {name}"


def test_using_the_library_loads_none_of_the_applications_dependencies():
    """Importing the library and running queries of several kinds loads no module of the
    application's dependencies (trimesh, pyglet, ...)."""
    code = ("import sys, numpy as np, obbcollide as c\n"
            "pa = np.random.default_rng(0).normal(size=(12, 3))\n"
            "pb = np.random.default_rng(1).normal(size=(12, 3)) + 0.5\n"
            "c.ConvexPolyhedron.from_points(pa)\n"
            "assert not c.convex_convex_sat(pa, None, pb, None).separated\n"
            "c.test_triangle_triangle(pa[:3], pb[:3])\n"
            f"bad = sorted({{m for m in sys.modules if m.split('.')[0] in {NOT_FOR_THE_LIBRARY!r}}})\n"
            "print(bad); sys.exit(1 if bad else 0)")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_app_demo_reports_the_library(capsys):
    from app.__main__ import main

    assert main(["--demo"]) == 0
    out = capsys.readouterr().out
    assert "SAT" in out and "vector symbol" in out and "OBBs by covariance" in out
