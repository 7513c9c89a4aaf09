"""The one key table (app/viewer/controls.py): it names real Session actions, and the
help overlay and README table are printed from it."""

import inspect

import pytest

from app.viewer import controls
from app.viewer.controls import BINDINGS, MOUSE_HELP, help_lines, key_label, markdown_table
from app.viewer.session import OVERLAYS, Session


def test_bindings_are_well_formed():
    assert len(BINDINGS) > 0
    for entry in BINDINGS:
        assert len(entry) == 4
        key, action, _arg, text = entry
        assert isinstance(key, str) and key == key.upper() and key
        assert isinstance(action, str) and action
        assert isinstance(text, str) and text.strip()


@pytest.mark.parametrize("key, action, arg, text", BINDINGS)
def test_every_action_is_a_session_method(key, action, arg, text):
    method = getattr(Session, "do_" + action, None)
    assert method is not None and callable(method), f"{key}: Session has no do_{action}"
    # Called as method(arg, shift).
    params = list(inspect.signature(method).parameters)
    assert len(params) == 3, f"do_{action} takes {params}"


def test_keys_are_unique():
    keys = [b[0] for b in BINDINGS]
    assert len(keys) == len(set(keys)), [k for k in keys if keys.count(k) > 1]
    labels = [key_label(k) for k in keys]
    assert len(labels) == len(set(labels))


def test_toggles_name_session_overlays():
    for key, action, arg, _ in BINDINGS:
        if action == "toggle":
            assert arg in OVERLAYS, f"{key} toggles unknown overlay {arg!r}"
    toggled = [arg for _, action, arg, _ in BINDINGS if action == "toggle"]
    assert len(toggled) == len(set(toggled))


def test_move_and_turn_arguments_are_unit_axes_in_pairs():
    for action in ("move", "turn"):
        args = sorted(tuple(arg) for _, a, arg, _ in BINDINGS if a == action)
        expected = sorted(tuple(s * e for e in row) for row in ((1, 0, 0), (0, 1, 0), (0, 0, 1)) for s in (1, -1))
        assert args == expected, action
    assert controls.MOVE_STEP > 0 and controls.TURN_STEP > 0


def test_help_lines_one_per_binding_plus_mouse():
    lines = help_lines()
    assert len(lines) == len(BINDINGS) + len(MOUSE_HELP) + 1  # + the Shift line
    for (key, _, _, text), line in zip(BINDINGS, lines):
        assert text in line and key_label(key) in line
    for what, text in MOUSE_HELP:
        assert any(what in line and text in line for line in lines)
    assert any("Shift" in line for line in lines)


def test_help_lines_contain_every_binding_text():
    joined = "\n".join(help_lines())
    for key, _, _, text in BINDINGS:
        assert text in joined, key


def test_markdown_table_has_a_row_per_binding():
    table = markdown_table()
    rows = table.splitlines()
    assert rows[0].startswith("|") and set(rows[1]) <= set("|-")
    key_rows = [r for r in rows if r.startswith("| `")]
    assert len(key_rows) == len(BINDINGS)
    for key, _, _, text in BINDINGS:
        assert f"| `{key_label(key)}` | {text} |" in rows, key
    for what, text in MOUSE_HELP:
        assert f"| {what} | {text} |" in rows
    for r in rows:
        assert r.count("|") == 3, r  # two columns, no stray pipes from the texts


def test_key_labels():
    assert key_label("BRACKETLEFT") == "[" and key_label("BRACKETRIGHT") == "]"
    assert key_label("Q") == "Q"


def test_readme_prints_the_binding_table():
    """The README's key table is the one printed from BINDINGS (regenerate it with markdown_table())."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert markdown_table() in readme
