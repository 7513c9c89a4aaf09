"""The package as a user installs it: a wheel built from the checkout, installed (not editable)
into a fresh virtual environment outside the repository, run from another folder.

One module-scoped build and install (about a minute: pip takes the dependencies from its cache
after the checkout's own setup); the tests then run the installed ``obbcollide`` command.
"""

import json
import os
import pathlib
import subprocess
import sys
import venv

import numpy as np
import pytest
from PIL import Image

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _run(cmd, cwd, timeout, env=None):
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(bin folder, a working folder outside the repository)`` of a fresh venv holding the wheel."""
    base = tmp_path_factory.mktemp("install")
    wheels = base / "wheels"
    r = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-w", wheels,
              ROOT], cwd=base, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    wheel = sorted(wheels.glob("obbcollide-*.whl"))
    assert len(wheel) == 1, list(wheels.iterdir())
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    r = _run([bin_dir / "python", "-m", "pip", "install", "--disable-pip-version-check", wheel[0]], cwd=base,
             timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    work = base / "elsewhere"
    work.mkdir()
    return bin_dir, work


def test_the_wheel_installs_two_packages_named_for_the_project(installed):
    bin_dir, work = installed
    code = ("import importlib.util, json, obbcollide, obbcollide_app; "
            "print(json.dumps({'version': obbcollide.__version__, 'lib': obbcollide.__file__, "
            "'app': importlib.util.find_spec('app') is not None, "
            "'collision': importlib.util.find_spec('collision') is not None}))")
    r = _run([bin_dir / "python", "-c", code], cwd=work, timeout=300)
    assert r.returncode == 0, r.stderr
    found = json.loads(r.stdout.strip().splitlines()[-1])
    assert "site-packages" in found["lib"], found  # the installed copy, not the checkout
    assert not found["app"] and not found["collision"], found  # no generic top-level names
    import obbcollide

    assert found["version"] == obbcollide.__version__


def test_the_installed_command_lists_every_example_scene(installed):
    bin_dir, work = installed
    r = _run([bin_dir / "obbcollide", "--list-scenes"], cwd=work, timeout=300)
    assert r.returncode == 0, r.stderr
    listed = {line.split()[0]: line.split()[1] for line in r.stdout.splitlines() if line.strip()}
    expected = {p.stem for p in (ROOT / "assets" / "scenes").glob("*.toml")}
    assert set(listed) == expected and expected
    for path in listed.values():
        assert "site-packages" in path and os.path.isfile(path), path


def test_the_installed_command_renders_the_default_scene_headless(installed):
    """A headless frame of the default scene (its meshes are package data) from another folder,
    and an example scene loaded by name. The kernels compile on demand
    (``OBBCOLLIDE_NO_BOOTSTRAP`` skips compiling all of them up front, which takes minutes)."""
    bin_dir, work = installed
    env = dict(os.environ, OBBCOLLIDE_NO_BOOTSTRAP="1", OBBCOLLIDE_CACHE=str(work / "cache"))
    env.pop("DISPLAY", None)
    shot, report = work / "frame.png", work / "report.json"
    r = _run([bin_dir / "obbcollide", "--headless", "--frames", "2", "--screenshot", shot, "--report", report],
             cwd=work, timeout=1500, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    bodies = json.loads(report.read_text())["bodies"]
    assert {"torus_knot", "gear", "bowl"} <= {b["name"] for b in bodies}, [b["name"] for b in bodies]
    pixels = np.asarray(Image.open(shot).convert("RGB")).reshape(-1, 3)
    colours, counts = np.unique(pixels // 16, axis=0, return_counts=True)
    assert counts.max() < 0.9 * len(pixels)  # not one flat colour: the bodies are drawn
    assert len(colours) > 20

    r = _run([bin_dir / "obbcollide", "--scene", "stacks", "--headless", "--frames", "1", "--report", report],
             cwd=work, timeout=900, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    names = {b["name"] for b in json.loads(report.read_text())["bodies"]}
    assert "column 1" in names or any(n.startswith("column") for n in names), names
