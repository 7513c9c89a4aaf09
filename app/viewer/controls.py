"""The one table of key bindings. The help overlay and the README print it.

Keys are pyglet key names (``pyglet.window.key.<NAME>``), kept as strings so
this module imports no pyglet. Each binding names an action of
:class:`app.viewer.session.Session` and its argument.
"""

MOVE_STEP = 0.05   # scene units per key press (x10 with Shift)
TURN_STEP = 0.08   # radians per key press (x5 with Shift)

# (key, action, argument, help text)
BINDINGS = [
    ("LEFT", "move", (-1, 0, 0), "move selected body -X"),
    ("RIGHT", "move", (1, 0, 0), "move selected body +X"),
    ("UP", "move", (0, 1, 0), "move selected body +Y (up)"),
    ("DOWN", "move", (0, -1, 0), "move selected body -Y"),
    ("PAGEUP", "move", (0, 0, -1), "move selected body -Z"),
    ("PAGEDOWN", "move", (0, 0, 1), "move selected body +Z"),
    ("Q", "turn", (1, 0, 0), "rotate selected body about +X"),
    ("A", "turn", (-1, 0, 0), "rotate selected body about -X"),
    ("W", "turn", (0, 1, 0), "rotate selected body about +Y"),
    ("S", "turn", (0, -1, 0), "rotate selected body about -Y"),
    ("E", "turn", (0, 0, 1), "rotate selected body about +Z"),
    ("D", "turn", (0, 0, -1), "rotate selected body about -Z"),
    ("TAB", "cycle", None, "select the next body"),
    ("SPACE", "pause", None, "pause / resume the motion"),
    ("N", "single_step", None, "advance one fixed step (when paused)"),
    ("R", "reset", None, "reset all bodies to their start poses"),
    ("F", "frame", None, "frame the scene in the camera"),
    ("P", "screenshot", None, "save a screenshot (PNG)"),
    ("B", "toggle", "boxes", "OBB tree boxes on / off"),
    ("BRACKETRIGHT", "depth", 1, "show OBB tree one level deeper"),
    ("BRACKETLEFT", "depth", -1, "show OBB tree one level shallower"),
    ("V", "toggle", "aabbs", "world AABBs (broad phase) on / off"),
    ("K", "toggle", "pieces", "convex pieces the bodies collide as (scene files' decomposition) on / off"),
    ("T", "toggle", "triangles", "colliding triangles on / off"),
    ("G", "toggle", "segments", "intersection curves on / off"),
    ("C", "toggle", "contacts", "contact points and normals on / off"),
    ("M", "toggle", "manifolds", "contact manifolds of the convex pieces (points, normals) on / off"),
    ("Z", "broad_phase", None, "switch the broad phase (brute, sap, grid, octree, tree)"),
    ("L", "throw", None, "throw a ball from the camera (dynamic; Shift: 3x faster)"),
    ("Y", "ccd", None, "continuous detection (speculative contacts of fast bodies) on / off"),
    ("O", "toggle", "traversal", "OBB-tree traversal of the pair (selected body and partner): node pairs "
                                 "visited / pruned on / off"),
    ("X", "toggle", "axis", "separating axis of the pair's convex pieces (or traversal node pair), with both "
                            "projection intervals, on / off"),
    ("I", "toggle", "gjk", "GJK of the pair's convex pieces: simplex support points, closest points on / off"),
    ("J", "partner", None, "pick the next body as the selected body's partner (also Ctrl+click)"),
    ("PERIOD", "trav_step", 1, "traversal: next node pair (Shift: the last)"),
    ("COMMA", "trav_step", -1, "traversal: previous node pair (Shift: the first)"),
    ("APOSTROPHE", "gjk_step", 1, "GJK: next iteration (Shift: the last)"),
    ("SEMICOLON", "gjk_step", -1, "GJK: previous iteration (Shift: the first)"),
    ("H", "toggle", "help", "this help"),
    ("F1", "panel", None, "the GUI panel on / off (off: this text HUD instead)"),
    ("F5", "save_scene", None, "save the scene (TOML) with the bodies where they are now"),
    ("F6", "next_scene", None, "load the next example scene (assets/scenes)"),
    ("ESCAPE", "quit", None, "quit"),
]

MOUSE_HELP = [
    ("left click", "select the body under the cursor (ray cast through its OBB tree)"),
    ("Ctrl + left click", "make the body under the cursor the selected body's partner (the inspected pair)"),
    ("left drag on a body", "pull it in the view plane (a dynamic body on the mouse joint; a static one stays)"),
    ("left drag elsewhere", "orbit the camera (also on a static body)"),
    ("right / middle drag", "pan the camera"),
    ("wheel", "zoom"),
    ("drop a file", "add it as a body that falls (any format trimesh reads; several queue up)"),
]


# How a key name is shown to people.
DISPLAY_NAMES = {"BRACKETRIGHT": "]", "BRACKETLEFT": "[", "PAGEUP": "PgUp", "PAGEDOWN": "PgDn",
                 "ESCAPE": "Esc", "SPACE": "Space", "TAB": "Tab", "LEFT": "Left", "RIGHT": "Right",
                 "UP": "Up", "DOWN": "Down", "PERIOD": ".", "COMMA": ",", "APOSTROPHE": "'", "SEMICOLON": ";"}


def key_label(name):
    return DISPLAY_NAMES.get(name, name)


def help_lines():
    """The help overlay, one line per binding, printed from :data:`BINDINGS`."""
    lines = [f"{key_label(key):>6s}  {text}" for key, _, _, text in BINDINGS]
    lines += [f"{what}: {text}" for what, text in MOUSE_HELP]
    lines.append("Shift: 10x longer moves, 5x larger turns")
    return lines


def markdown_table():
    """The key table for the README."""
    rows = ["| key | action |", "|---|---|"]
    rows += [f"| `{key_label(key)}` | {text} |" for key, _, _, text in BINDINGS]
    rows += [f"| {what} | {text} |" for what, text in MOUSE_HELP]
    return "\n".join(rows)
