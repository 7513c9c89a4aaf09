"""The example scenes by category, and the recently opened files, for the viewer's panel. GL-free.

A scene file's ``[scene]`` table may name a ``category`` (:mod:`app.scene.scene_file`); the
catalogue reads only that table and the file's leading comment (its description), so
listing the examples is quick. The recent files are kept in ``recent.json`` in the
user's data folder (:func:`app.scene.scene_file.user_data_dir`), newest first.
"""

import json
import logging
import os
from dataclasses import dataclass

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from .scene_file import leading_comments, scene_registry, user_data_dir

__all__ = ["SceneEntry", "catalog", "RecentFiles", "UNCATEGORIZED", "SCENE_SUFFIXES"]

log = logging.getLogger(__name__)

UNCATEGORIZED = "other"
SCENE_SUFFIXES = (".toml",)  # what the panel's "open" loads as a scene (anything else is a mesh)
MAX_RECENT = 10


@dataclass(frozen=True)
class SceneEntry:
    """One example scene: its registry key (``--scene KEY``), title, category, description, path."""

    key: str
    title: str
    category: str
    description: str
    path: str


def _entry(key, path):
    try:
        with open(path, "rb") as fh:
            settings = tomllib.load(fh).get("scene", {})
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        log.warning("%s: cannot read the scene's settings (%s)", path, exc)
        settings = {}
    if not isinstance(settings, dict):
        settings = {}
    title = settings.get("name") if isinstance(settings.get("name"), str) else key
    category = settings.get("category") if isinstance(settings.get("category"), str) else UNCATEGORIZED
    description = " ".join(line.strip() for line in leading_comments(path)).strip()
    return SceneEntry(key, title, category.strip() or UNCATEGORIZED, description, path)


def catalog(folder=None):
    """The example scenes grouped by category.

    Parameters
    ----------
    folder : str, optional
        Default: ``assets/scenes``.

    Returns
    -------
    list of (str, list of SceneEntry)
        Categories in alphabetical order (``"other"`` last), the scenes of each by title.
    """
    groups = {}
    for key, path in scene_registry(folder).items():
        e = _entry(key, path)
        groups.setdefault(e.category, []).append(e)
    order = sorted(groups, key=lambda c: (c == UNCATEGORIZED, c.lower()))
    return [(c, sorted(groups[c], key=lambda e: e.title.lower())) for c in order]


class RecentFiles:
    """The files opened recently (scenes and meshes), newest first, at most :data:`MAX_RECENT`.

    Parameters
    ----------
    path : str, optional
        The JSON file that keeps them; default ``user_data_dir()/recent.json``. A file that
        cannot be read or written costs only the list (a warning in the log).
    """

    def __init__(self, path=None):
        self.path = path or os.path.join(user_data_dir(), "recent.json")
        self.items = self._read()

    def _read(self):
        try:
            with open(self.path, encoding="utf-8") as fh:
                raw = json.load(fh)
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            log.warning("%s: cannot read the recent files (%s)", self.path, exc)
            return []
        if not isinstance(raw, list):
            return []
        return [p for p in raw if isinstance(p, str) and p][:MAX_RECENT]

    def add(self, path):
        """Put ``path`` (made absolute) first; writes the file. Returns the list."""
        path = os.path.abspath(os.fspath(path))
        self.items = [path] + [p for p in self.items if p != path][:MAX_RECENT - 1]
        tmp = f"{self.path}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(self.items, fh, indent=1)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("%s: cannot save the recent files (%s)", self.path, exc)
        return self.items
