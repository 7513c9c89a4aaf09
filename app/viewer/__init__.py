"""The OpenGL viewer. Only ``window.py`` and ``renderer.py`` import pyglet; the rest is
GL-free (camera maths, geometry-to-buffer code, the key table, HUD text) and is
tested without a window."""
