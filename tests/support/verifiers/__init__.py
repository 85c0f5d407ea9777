"""The verifiers door's test support: where the verifiers virtual environment is, the driver
that runs verifiers' own API there (:mod:`tests.support.verifiers.driver`), and the scripted
actions the replay model plays (:func:`scripted_actions`).

verifiers 0.4 pins ``mcp==2.0.0`` and mcpgym needs ``mcp>=2.3``, so verifiers lives in
``.venv-vf`` (made by ``.ci/run``: ``pip install 'verifiers==0.4.*'`` and ``pip install
--no-deps -e .``); ``$MCPGYM_VERIFIERS_PYTHON`` names another interpreter. Without one the
tests skip naming what to install, and fail with ``MCPGYM_REQUIRE_VERIFIERS=1`` (``.ci/run``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
DRIVER = Path(__file__).with_name("driver.py")
REQUIRE_ENV = "MCPGYM_REQUIRE_VERIFIERS"
DRIVER_TIMEOUT = 600.0
"""Wall seconds one driver run may take (importing verifiers alone takes ~15 s on 2 cores)."""


def verifiers_python() -> str:
    """The verifiers venv's interpreter; skips (or fails under ``MCPGYM_REQUIRE_VERIFIERS=1``)
    when there is none with verifiers installed."""
    python = os.environ.get("MCPGYM_VERIFIERS_PYTHON") or str(ROOT / ".venv-vf" / "bin" / "python")
    why = None
    if not Path(python).exists():
        why = f"no verifiers venv at {python}"
    else:
        probe = subprocess.run(
            [python, "-c", "import verifiers.v1, mcpgym.integrations.verifiers_env"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if probe.returncode != 0:
            why = f"{python} cannot import verifiers and the environment: {probe.stderr.strip()[-300:]}"
    if why is not None:
        message = (
            f"verifiers: {why}; make it with: python -m venv .venv-vf && .venv-vf/bin/pip install "
            "'verifiers==0.4.*' && .venv-vf/bin/pip install --no-deps -e ."
        )
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 and {message}")
        pytest.skip(message)
    return python


def drive(python: str, **config: Any) -> dict[str, Any]:
    """Run :mod:`tests.support.verifiers.driver` under ``python`` with ``config``; its answer.

    Raises:
        AssertionError: the driver failed (its stderr's tail in the message).
    """
    run = subprocess.run(
        [python, str(DRIVER), json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=DRIVER_TIMEOUT,
        cwd=str(ROOT),
    )
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def scripted_actions(task_id: str) -> list[dict[str, Any]]:
    """The careful agent's actions on ``task_id`` (:func:`mcpgym.benchmarks.replay_model.careful_script`)."""
    from mcpgym.benchmarks.replay_model import careful_script

    return careful_script(task_id)
