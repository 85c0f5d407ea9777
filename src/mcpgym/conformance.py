"""``python -m mcpgym.conformance APP [APP ...]``: the conformance suite's command line.

The checks themselves live in :mod:`mcpgym.tools.conformance`; this alias gives app authors a
short, stable entry point. See :func:`mcpgym.check_app` for the Python API.
"""

from __future__ import annotations

import sys

from mcpgym.tools.conformance.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
