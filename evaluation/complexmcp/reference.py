"""ComplexMCP's own ``benchmark/judge.py``, run in the apps' environment, for comparing with
mcpgym's ``complexmcp`` rule (:mod:`mcpgym.evaluation.scoring.complexmcp_rule`).

Their judge imports ``software.utils.dist`` (python-Levenshtein), so it runs in the set-up
folder's virtual environment, in its tree, as a subprocess fed JSON on stdin.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from mcpgym.evaluation.complexmcp.install import SetupFolder

REFERENCE_TIMEOUT = 300.0
"""Wall seconds their judge may take over one batch of cases."""

_RUN = (
    "import json, sys\n"
    "from benchmark.judge import judge_env\n"
    "cases = json.load(sys.stdin)\n"
    "print(json.dumps([judge_env(c['before'], c['after'], c['gold']) for c in cases]))\n"
)


def their_judge(folder: Path, cases: list[dict[str, Any]]) -> list[dict[str, int]]:
    """``judge_env(before, after, gold)`` of their ``judge.py`` for each case
    (``{"before", "after", "gold"}``): ``[{"total", "recall", "misbehave"}, ...]``.

    Raises:
        SetupError: ``folder`` is not set up. RuntimeError: their judge failed or overran
            :data:`REFERENCE_TIMEOUT` (the message ends with its stderr).
    """
    setup = SetupFolder.open(folder)
    try:
        out = subprocess.run(
            [str(setup.python), "-c", _RUN],
            cwd=setup.tree,
            input=json.dumps(cases),
            capture_output=True,
            text=True,
            timeout=REFERENCE_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"their judge did not finish within {REFERENCE_TIMEOUT:g} s") from None
    if out.returncode != 0:
        raise RuntimeError(f"their judge failed: {out.stderr[-800:]}")
    return list(json.loads(out.stdout))
