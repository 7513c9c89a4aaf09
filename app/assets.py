"""Where the example meshes and scenes are: beside the package when installed, at the
repository's top level (``assets/``) in a source checkout.

A wheel ships them as package data under ``obbcollide_app/_assets``; a checkout keeps
them in ``assets/`` next to ``app/``. Nothing else in the application computes the path.
"""

import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def assets_dir():
    """The folder holding ``meshes/`` and ``scenes/``: ``str``, absolute.

    The installed package's own ``_assets`` folder when it has one, else the
    checkout's ``assets/`` beside the package folder.
    """
    for candidate in (os.path.join(_HERE, "_assets"), os.path.join(os.path.dirname(_HERE), "assets")):
        if os.path.isdir(os.path.join(candidate, "scenes")):
            return candidate
    return os.path.join(os.path.dirname(_HERE), "assets")


def meshes_dir():
    """The example meshes' folder (``assets/meshes``)."""
    return os.path.join(assets_dir(), "meshes")


def scenes_dir():
    """The example scenes' folder (``assets/scenes``)."""
    return os.path.join(assets_dir(), "scenes")
