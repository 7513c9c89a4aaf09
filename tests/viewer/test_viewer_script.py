"""Scripted input files (app/viewer/script.py), GL-free.

``read_script`` never raises for a bad file: a file that cannot be read, is not UTF-8, not
JSON or not a list gives no actions and one message naming the file and the problem; an
action with a problem is left out with a message naming the file, its number (from 1) and
the problem, and the good actions come back in file order, unchanged. Every field and
action form the viewer knows is accepted, including press / move / release; each wrong
form is refused with the field named. Key names are checked against a given set (the
window passes pyglet's); ``KEY_NAMES`` itself is checked in tests/test_bad_input.py, which
runs the window.
"""

import json

import pytest

from app.viewer.script import ACTIONS, FIELDS, action_problem, read_script

KEYS = {"TAB", "B", "LEFT", "F5", "_1", "SPACE"}

GOOD = [
    {"frame": 0, "key": "TAB"},
    {"key": "B", "shift": True},
    {"frame": 3, "click": [10, 20.5]},
    {"frame": 4, "drag": [0, 0, 100, 50], "button": "right", "steps": 5},
    {"scroll": -2},
    {"drop": ["a.stl", "b b.obj"]},
    {"screenshot": "out.png"},
    {"frame": 5, "press": [400, 300]},
    {"frame": 5, "press": "column 10"},
    {"frame": 6, "move": [2, -1.5]},
    {"frame": 9, "release": True},
    {"frame": 1, "key": "_1", "screenshot": "both.png"},
]

BAD = [  # (action, words the problem must contain)
    ({"frame": 1, "key": "TABB"}, ["unknown key name 'TABB'", "did you mean 'TAB'"]),
    ({"frame": 1, "kye": "TAB"}, ["unknown field 'kye'", "did you mean 'key'"]),
    ({"frame": 1, "jump": True}, ["unknown field 'jump'"]),
    ({"frame": 1}, ["nothing to do"]),
    ({}, ["nothing to do"]),
    ([1, 2], ["expected an object"]),
    ("TAB", ["expected an object"]),
    (None, ["expected an object"]),
    ({"frame": -1, "key": "TAB"}, ["'frame'", "whole number >= 0"]),
    ({"frame": 1.5, "key": "TAB"}, ["'frame'"]),
    ({"frame": True, "key": "TAB"}, ["'frame'"]),
    ({"frame": "3", "key": "TAB"}, ["'frame'"]),
    ({"key": 5}, ["'key'"]),
    ({"key": "B", "shift": "yes"}, ["'shift'", "true or false"]),
    ({"click": [1]}, ["'click'", "[x, y]"]),
    ({"click": [1, "2"]}, ["'click'"]),
    ({"click": [1, float("nan")]}, ["'click'"]),
    ({"click": [True, 2]}, ["'click'"]),
    ({"drag": [0, 0, 1]}, ["'drag'", "[x0, y0, x1, y1]"]),
    ({"drag": [0, 0, 1, 1], "button": "fourth"}, ["'button'", "left, right, middle"]),
    ({"drag": [0, 0, 1, 1], "steps": 0}, ["'steps'"]),
    ({"drag": [0, 0, 1, 1], "steps": 10 ** 9}, ["'steps'"]),
    ({"scroll": "up"}, ["'scroll'"]),
    ({"drop": "a.stl"}, ["'drop'", "list of file paths"]),
    ({"drop": []}, ["'drop'"]),
    ({"drop": ["a.stl", 3]}, ["'drop'"]),
    ({"screenshot": ""}, ["'screenshot'"]),
    ({"press": [1, 2, 3]}, ["'press'", "[x, y] (pixels) or a body's name"]),
    ({"press": "  "}, ["'press'"]),
    ({"press": True}, ["'press'"]),
    ({"move": [1]}, ["'move'", "[dx, dy]"]),
    ({"move": "left"}, ["'move'"]),
    ({"release": False}, ["'release'", "true"]),
    ({"release": 1}, ["'release'"]),
]


def write(tmp_path, content, name="script.json"):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


@pytest.mark.parametrize("action", GOOD, ids=lambda a: json.dumps(a))
def test_every_known_form_is_accepted(action):
    assert action_problem(action, KEYS) is None


@pytest.mark.parametrize("action, words", BAD, ids=[json.dumps(a) for a, _ in BAD])
def test_each_bad_action_is_named(action, words):
    problem = action_problem(action, KEYS)
    assert problem is not None
    for w in words:
        assert w in problem, problem


def test_without_a_key_set_any_key_name_passes():
    assert action_problem({"key": "WHATEVER"}) is None
    assert action_problem({"key": 3}) is not None


def test_the_action_table_is_complete():
    assert set(ACTIONS) <= set(FIELDS)
    assert {"press", "move", "release"} <= set(ACTIONS)


def test_a_script_keeps_its_good_actions_in_order_and_names_each_bad_one(tmp_path):
    """Bad actions at numbers 2, 4 and 5 of 7, between good ones."""
    actions = [GOOD[0], BAD[0][0], GOOD[7], BAD[2][0], BAD[14][0], GOOD[9], GOOD[10]]
    path = write(tmp_path, actions)
    got, problems = read_script(path, KEYS)
    assert got == [GOOD[0], GOOD[7], GOOD[9], GOOD[10]]
    assert len(problems) == 3
    for number, (_, words), text in zip((2, 4, 5), (BAD[0], BAD[2], BAD[14]), problems):
        assert text.startswith(f"{path}: action #{number}: ") and text.endswith("; skipped")
        assert all(w in text for w in words)


@pytest.mark.parametrize("content, words", [
    ("{not json", ["not valid JSON", "line 1, column 2"]),
    ("", ["not valid JSON", "line 1, column 1"]),
    ('[{"key": "TAB"},]', ["not valid JSON"]),
    ('{"frame": 1, "key": "TAB"}', ["expected a JSON list of actions, got an object"]),
    ('"TAB"', ["expected a JSON list of actions, got a string"]),
    ("3", ["expected a JSON list of actions, got a number"]),
    ("null", ["expected a JSON list of actions, got null"]),
    (b"[\xff\xfe]", ["not UTF-8"]),
], ids=["not-json", "empty", "trailing-comma", "object", "string", "number", "null", "latin1"])
def test_a_malformed_file_gives_one_message_and_no_actions(tmp_path, content, words):
    path = write(tmp_path, content)
    got, problems = read_script(path, KEYS)
    assert got == [] and len(problems) == 1
    assert problems[0].startswith(f"{path}: ") and problems[0].endswith("running without it")
    assert all(w in problems[0] for w in words), problems[0]


def test_a_missing_file_gives_one_message(tmp_path):
    path = str(tmp_path / "nowhere.json")
    got, problems = read_script(path, KEYS)
    assert got == [] and len(problems) == 1
    assert problems[0].startswith(f"{path}: cannot read the script")


def test_an_empty_list_is_a_script_with_nothing_to_do(tmp_path):
    assert read_script(write(tmp_path, []), KEYS) == ([], [])
