"""NeMo Gym's side of the tests: the ``.venv-nemo`` interpreter (nemo-gym 0.4 with mcp<2, beside
mcpgym's mcp>=2.3 only across a process boundary) and one run of
:mod:`tests.support.nemo_gym_driver` in it.

Where ``.venv-nemo`` is missing, the tests skip saying how to make it; with
``MCPGYM_REQUIRE_NEMO=1`` (``.ci/run`` sets it) they fail instead.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

REQUIRE_ENV = "MCPGYM_REQUIRE_NEMO"
DRIVER = ROOT / "tests" / "support" / "nemo_gym_driver.py"
MAKE_IT = (
    "python3.12 -m venv .venv-nemo && .venv-nemo/bin/python -m pip install 'nemo-gym==0.4.0' 'mcp>=1.27,<2' "
    "(docs/rl.md, 'NeMo Gym')"
)


def nemo_python() -> Path:
    """The interpreter of ``.venv-nemo`` (``$MCPGYM_NEMO_PYTHON`` overrides), checked to import
    NeMo Gym; skips (fails under ``MCPGYM_REQUIRE_NEMO=1``) when it cannot."""
    python = Path(os.environ.get("MCPGYM_NEMO_PYTHON") or ROOT / ".venv-nemo" / "bin" / "python")
    why = None
    if not python.exists():
        why = f"no NeMo Gym venv at {python}: make it with {MAKE_IT}"
    else:
        probe = subprocess.run(
            [str(python), "-c", "import nemo_gym.base_resources_server, mcp"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if probe.returncode:
            why = f"{python} cannot import nemo_gym: {probe.stderr.strip()[-300:]}; make it with {MAKE_IT}"
    if why is not None:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 and {why}")
        pytest.skip(why)
    return python


def run_driver(python: Path, job: dict[str, Any], timeout: float = 300.0) -> dict[str, Any]:
    """Run the driver on ``job`` (its module docstring) in NeMo Gym's venv; its JSON answer.

    Raises:
        AssertionError: the driver failed (its stderr's end is in the message).
    """
    done = subprocess.run(
        [str(python), str(DRIVER)], input=json.dumps(job), capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )
    assert done.returncode == 0, f"the NeMo Gym driver failed: {done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])
