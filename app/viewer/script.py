"""Scripted input files (``--scripted``): a JSON list of timed actions, checked before a run.

Each action is an object with the frame it happens at (``"frame"``, default 0) and what
happens (:func:`app.viewer.window.apply_action` turns it into window events)::

    {"frame": 3, "key": "TAB", "shift": false}   a key pressed and released, by pyglet name
    {"click": [x, y]}                            left click at a pixel (origin bottom-left)
    {"drag": [x0, y0, x1, y1], "button": "left", "steps": 10}
    {"scroll": clicks}
    {"drop": ["part.stl", ...]}                  files dropped on the window
    {"screenshot": "out.png"}
    {"press": [x, y]} or {"press": "BODY NAME"}  left button down at a pixel, or at a body's centre
    {"move": [dx, dy]}                           the held pointer moved by pixels
    {"release": true}                            left button up

A click or press at a pixel covered by the GUI panel goes to the panel, as a person's does
(``{"key": "F1"}`` hides it). A script never ends a run: a file that cannot be read, is not JSON or not a list gives
one message and the run goes on without it; an action with a problem (an unknown field
or key name, a value of the wrong type) gives a message naming the file, the action's
number (from 1) and the problem, and is skipped while the others run. GL-free.
"""

import difflib
import json
import math
import os

__all__ = ["ACTIONS", "FIELDS", "action_problem", "read_script"]

# What an action does (at least one per action) and the fields that only qualify it.
ACTIONS = ("key", "click", "drag", "scroll", "drop", "screenshot", "press", "move", "release")
FIELDS = ("frame", "shift", "button", "steps") + ACTIONS
BUTTONS = ("left", "right", "middle")


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _numbers(value, n):
    return isinstance(value, list) and len(value) == n and all(_is_number(x) for x in value)


def _is_int(x, low):
    return isinstance(x, int) and not isinstance(x, bool) and x >= low


def _show(value):
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def action_problem(action, key_names=None):
    """What is wrong with one scripted action, or None.

    Parameters
    ----------
    action : object
        One element of the script's list (as ``json.load`` gives it).
    key_names : collection of str, optional
        The key names ``"key"`` may use (pyglet's, see ``app.viewer.window.KEY_NAMES``);
        None accepts any string.

    Returns
    -------
    str or None
        The problem in words, naming the field and the value.
    """
    if not isinstance(action, dict):
        return f'expected an object such as {{"frame": 3, "key": "TAB"}}, got {_show(action)}'
    unknown = [k for k in action if k not in FIELDS]
    if unknown:
        near = difflib.get_close_matches(unknown[0], FIELDS, n=1)
        hint = f"did you mean {near[0]!r}? " if near else ""
        return f"unknown field {unknown[0]!r} ({hint}known: {', '.join(FIELDS)})"
    if not any(k in action for k in ACTIONS):
        return f"nothing to do: give one of {', '.join(ACTIONS)}"
    checks = {
        "frame": (lambda v: _is_int(v, 0), "a whole number >= 0"),
        "shift": (lambda v: isinstance(v, bool), "true or false"),
        "button": (lambda v: v in BUTTONS, "one of " + ", ".join(BUTTONS)),
        "steps": (lambda v: _is_int(v, 1) and v <= 10_000, "a whole number from 1 to 10000"),
        "key": (lambda v: isinstance(v, str), "a key name such as \"TAB\""),
        "click": (lambda v: _numbers(v, 2), "[x, y] (pixels)"),
        "drag": (lambda v: _numbers(v, 4), "[x0, y0, x1, y1] (pixels)"),
        "scroll": (_is_number, "a number of wheel clicks"),
        "drop": (lambda v: isinstance(v, list) and v and all(isinstance(p, str) and p for p in v),
                 "a list of file paths"),
        "screenshot": (lambda v: isinstance(v, str) and v != "", "a PNG file path"),
        "press": (lambda v: (isinstance(v, str) and v.strip() != "") or _numbers(v, 2),
                  "[x, y] (pixels) or a body's name"),
        "move": (lambda v: _numbers(v, 2), "[dx, dy] (pixels)"),
        "release": (lambda v: v is True, "true"),
    }
    for name, value in action.items():
        ok, want = checks[name]
        if not ok(value):
            return f"field {name!r}: expected {want}, got {_show(value)}"
    if "key" in action and key_names is not None and action["key"] not in key_names:
        near = difflib.get_close_matches(action["key"].upper(), key_names, n=1)
        return f"unknown key name {action['key']!r}" + (f" (did you mean {near[0]!r}?)" if near else "")
    return None


def read_script(path, key_names=None):
    """Read and check a script file.

    Parameters
    ----------
    path : str
    key_names : collection of str, optional
        See :func:`action_problem`.

    Returns
    -------
    actions : list of dict
        The good actions, in file order.
    problems : list of str
        One message per problem, each naming the file (and the action's number
        from 1): the whole file (then ``actions`` is empty), or an action that
        was left out.
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
    except OSError as exc:
        return [], [f"{path}: cannot read the script ({exc.strerror or exc}); running without it"]
    except UnicodeDecodeError:
        return [], [f"{path}: the script is not UTF-8 text; running without it"]
    except json.JSONDecodeError as exc:
        return [], [f"{path}: the script is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                    "running without it"]
    if not isinstance(raw, list):
        kind = {dict: "an object", str: "a string", bool: "a boolean", type(None): "null"}.get(type(raw), "a number")
        return [], [f"{path}: expected a JSON list of actions, got {kind} {_show(raw)}; running without it"]
    actions, problems = [], []
    for i, action in enumerate(raw):
        problem = action_problem(action, key_names)
        if problem is None:
            actions.append(action)
        else:
            problems.append(f"{path}: action #{i + 1}: {problem}; skipped")
    return actions, problems
