"""The panel's Scenes section: the example scenes by category, reload / save / save as,
open a scene or a mesh file (a path field, or the desktop's file dialog), recent files."""

import os
import shutil
import sys

from imgui_bundle import imgui

from ..scene.catalog import SCENE_SUFFIXES, RecentFiles, catalog
from .panel_widgets import GREY, action_button, hint, mark, tooltip

__all__ = ["draw_scenes", "open_path", "start_dialog", "DIALOG_PROGRAMS"]

# What portable-file-dialogs runs on Linux; with none of them there is no dialog (say so, do not wait).
DIALOG_PROGRAMS = ("zenity", "kdialog", "matedialog", "qarma")
MESH_PATTERNS = "*.stl *.obj *.ply *.off *.glb *.gltf *.3mf *.dae"


def _state(session):
    gui = session.gui
    st = gui.state.setdefault("scenes", {})
    if "catalog" not in st:
        st["catalog"] = catalog()
        st["recent"] = RecentFiles()
        st["path"] = ""
        st["save_as"] = ""
        st["dialog"] = None
        st["seen"] = None
    if session.scene_path != st["seen"]:  # a scene came in (from here, F6, the command line)
        # "Save as" follows the scene unless the person typed or chose another path there: left
        # on the last scene's file, it would save this scene over that one
        if session.scene_path and st["save_as"] in ("", st["seen"]):
            st["save_as"] = session.scene_path
        st["seen"] = session.scene_path
    return st


def open_path(session, path, recent=None):
    """Open ``path``: a ``.toml`` file loads as the scene, anything else is added as a mesh body.
    A missing file is a message, and nothing changes. Returns whether a load started (then the
    path goes first in ``recent``, a :class:`~app.scene.catalog.RecentFiles`: the files opened
    here, not those of the command line or the example list)."""
    path = os.path.expanduser(path.strip())
    if not path:
        session.say("type a file's path first (a scene .toml, or a mesh)", error=True)
        return False
    if not os.path.isfile(path):
        session.say(f"{path}: no such file", error=True)
        return False
    if path.lower().endswith(SCENE_SUFFIXES):
        session.say(f"loading {os.path.basename(path)} ...")
        started = session.load_scene(path) is not False
    else:
        started = session.add_mesh(path) is not False
    if started and recent is not None:
        recent.add(path)
    return started


def start_dialog(kind, title, start):
    """A desktop file dialog (``kind`` "open" or "save"), or ``(None, reason)`` where none can open."""
    if sys.platform.startswith("linux") and not any(shutil.which(p) for p in DIALOG_PROGRAMS):
        return None, ("no file dialog program is installed (zenity or kdialog): "
                      "type the path in the field instead")
    try:
        from imgui_bundle import portable_file_dialogs as pfd

        filters = ["Scenes and meshes", "*.toml " + MESH_PATTERNS, "All files", "*"]
        if kind == "open":
            return pfd.open_file(title, start, filters), None
        return pfd.save_file(title, start, ["Scenes", "*.toml"]), None
    except Exception as exc:  # a dialog library failing must not cost the viewer
        return None, f"the file dialog failed ({type(exc).__name__}: {exc}): type the path in the field instead"


def _poll_dialog(session, st):
    pending = st["dialog"]
    if pending is None:
        return
    kind, dialog = pending
    imgui.text_colored(GREY, "waiting for the file dialog ...")
    if not dialog.ready(0):
        return
    st["dialog"] = None
    result = dialog.result()
    if kind == "open" and result:
        st["path"] = result[0]
        open_path(session, result[0], st["recent"])
    elif kind == "save" and result:
        st["save_as"] = result
        session.save_scene(result)


def _browse(session, st, kind, title, start):
    dialog, problem = start_dialog(kind, title, start)
    if dialog is None:
        session.say(problem, error=True)
    else:
        st["dialog"] = (kind, dialog)


def draw_scenes(session):
    st = _state(session)
    current = os.path.abspath(session.scene_path) if session.scene_path else None
    imgui.text_colored(GREY, "Example scenes (click to load)")
    for category, entries in st["catalog"]:
        if imgui.tree_node_ex(category, imgui.TreeNodeFlags_.default_open):
            for e in entries:
                chosen = current is not None and os.path.abspath(e.path) == current
                if imgui.selectable(f"{e.title}##{e.key}", chosen)[0]:
                    session.say(f"loading {e.key} ...")
                    session.load_scene(e.path)
                mark(session, f"scene:{e.key}")
                tooltip(e.description)
            imgui.tree_pop()
    if not st["catalog"]:
        hint("no example scenes in assets/scenes")

    if imgui.button("Reload"):
        if session.scene_path:
            session.say(f"loading {os.path.basename(session.scene_path)} again ...")
            session.load_scene(session.scene_path)
        else:
            session.say("this scene has no file to reload (R puts the bodies back)", error=True)
    mark(session, "reload")
    tooltip("read the scene file again (R only puts the bodies back where they started)")
    imgui.same_line()
    action_button(session, "Next", "next_scene", help_text="the next example scene")
    imgui.same_line()
    action_button(session, "Save", "save_scene", help_text="save the scene with the bodies where they are now "
                                                          "(an example scene: a copy in your data folder)")

    imgui.separator_text("Save as")
    imgui.set_next_item_width(-70)
    _, st["save_as"] = imgui.input_text("##save_as", st["save_as"])
    mark(session, "save_as_field")
    imgui.same_line()
    if imgui.button("Save##as"):
        if st["save_as"].strip():
            written = session.save_scene(os.path.expanduser(st["save_as"].strip()))
            if written:
                st["recent"].add(written)
        else:
            session.say("type the path to save to (a .toml file)", error=True)
    mark(session, "save_as")
    if imgui.small_button("Browse...##save"):
        _browse(session, st, "save", "Save the scene as", st["save_as"] or os.getcwd())
    mark(session, "browse_save")

    imgui.separator_text("Open a scene or a mesh")
    imgui.set_next_item_width(-70)
    entered, st["path"] = imgui.input_text("##open_path", st["path"], imgui.InputTextFlags_.enter_returns_true)
    mark(session, "open_field")
    tooltip("a scene (.toml) replaces the world; a mesh (STL, OBJ, PLY, glTF, ...) is added as a body")
    imgui.same_line()
    if imgui.button("Open") or entered:
        open_path(session, st["path"], st["recent"])
    mark(session, "open")
    if imgui.small_button("Browse...##open"):
        _browse(session, st, "open", "Open a scene or a mesh", os.getcwd())
    mark(session, "browse_open")
    imgui.same_line()
    imgui.text_colored(GREY, f"meshes come in as {session.mesh_motion}")
    _poll_dialog(session, st)

    recent = st["recent"].items
    if recent and imgui.tree_node_ex("Recent files", 0):
        for k, path in enumerate(recent):
            if imgui.selectable(f"{os.path.basename(path)}##recent{k}", False)[0]:
                st["path"] = path
                open_path(session, path, st["recent"])
            tooltip(path)
        imgui.tree_pop()
