"""The panel's Debug draw section: every overlay of the key table as a checkbox (the same
``toggle`` action as its key), and the OBB tree depth, for every body or the selected one."""

from imgui_bundle import imgui

from .controls import BINDINGS, key_label
from .panel_widgets import GREY, hint, keyed_checkbox, mark, tooltip
from .session import OVERLAYS

__all__ = ["draw_debug_draw", "overlay_rows"]

# Overlays with no key of their own: (name, text)
UNKEYED = {"grid": "the ground grid"}
# The checkboxes' labels (the key table's longer text is their tooltip).
LABELS = {"boxes": "OBB tree boxes", "aabbs": "world AABBs (broad phase)", "pieces": "convex pieces",
          "triangles": "colliding triangles", "segments": "intersection curves", "contacts": "contact points",
          "manifolds": "contact manifolds", "traversal": "tree traversal (selected)",
          "axis": "separating axis (selected)", "grid": "ground grid"}


_ROWS = []


def overlay_rows():
    """``(name, key label, text)`` for each overlay a checkbox shows, in the key table's order
    (then the ones without a key); the help is in the Help section."""
    if _ROWS:
        return _ROWS
    rows = [(arg, key_label(key), text) for key, action, arg, text in BINDINGS
            if action == "toggle" and arg != "help"]
    named = {r[0] for r in rows}
    rows += [(name, "", UNKEYED.get(name, name)) for name in OVERLAYS if name not in named and name != "help"]
    _ROWS.extend(rows)
    return _ROWS


def _short(name, text):
    """The checkbox label: a short name, else the key table's text without its trailing "on / off"."""
    return LABELS.get(name) or text.replace(" on / off", "").strip()


def _deepest(world, cache={}):  # noqa: B006 - a cache by design
    """The deepest level of the world's OBB trees (recomputed when the bodies change)."""
    key = (id(world), len(world.bodies), id(world.bodies[-1]) if world.bodies else None)
    if key not in cache:
        cache.clear()
        cache[key] = max((b.tree.depth for b in world.bodies), default=1) - 1
    return cache[key]


def draw_debug_draw(session):
    for name, key, text in overlay_rows():
        if keyed_checkbox(session, f"{_short(name, text)}##{name}", session.flags[name], key, text,
                          name=f"overlay:{name}"):
            session.do_toggle(name, False)
    imgui.separator_text("OBB tree depth")
    deepest = _deepest(session.world)
    imgui.set_next_item_width(-90)
    changed, depth = imgui.slider_int("depth", session.depth, 0, max(deepest, 0))
    mark(session, "depth")
    tooltip("the level of the OBB trees drawn (0: the root box) - also [ and ]")
    if changed:
        session.set_depth(depth)
    imgui.same_line()
    imgui.text_colored(GREY, "[ ]")
    if imgui.radio_button("every body", not session.depth_selected_only):
        session.depth_selected_only = False
    mark(session, "depth:all")
    imgui.same_line()
    if imgui.radio_button("selected body only", session.depth_selected_only):
        session.depth_selected_only = True
    mark(session, "depth:selected")
    if session.depth_selected_only:
        hint("the other bodies show their root box"
             + ("" if session.selected is not None else "; select a body to see its tree"))
    if session.flags.get("traversal") and session.selected is not None:
        visited, pruned = session.trace_counts
        imgui.text(f"traversal: {visited} node pairs overlap, {pruned} pruned")
    if session.flags.get("axis") and session.selected is not None:
        k = session.separating_axis
        imgui.text("root boxes overlap (no separating axis)" if k < 0 else
                   f"separating axis #{k}: " + ("face of A" if k < 3 else "face of B" if k < 6 else "edge x edge"))
