"""The library stays a library: importing it pulls in no GL, no window, no app."""

import ast
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


def test_importing_collision_loads_no_gl_modules():
    code = ("import sys, collision; bad = [m for m in sys.modules if m.split('.')[0] in "
            f"{FORBIDDEN!r}]; print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_app_demo_reports_the_library(capsys):
    from app.__main__ import main

    assert main(["--demo"]) == 0
    out = capsys.readouterr().out
    assert "SAT" in out and "vector symbol" in out and "OBBs by covariance" in out
