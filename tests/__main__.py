"""``python3 -m tests``: set up ``.venv`` on first use, then run the whole suite.

Extra arguments go to pytest (``python3 -m tests -k obb -x``).
"""

import sys

from app._bootstrap import ensure_environment

if __name__ == "__main__":
    ensure_environment("tests")
    import pytest

    sys.exit(pytest.main(sys.argv[1:]))
