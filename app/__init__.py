"""The desktop application: scenes, the simulation loop and the OpenGL viewer.

Importing :mod:`app` imports nothing heavy: ``python3 -m app`` must be able to
bootstrap its own environment first (see :mod:`app._bootstrap`).
"""

__version__ = "0.1.0"  # the same as the library's (obbcollide.__version__)
