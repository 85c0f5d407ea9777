"""NeMo Gym figure: what mcpgym's resources server costs a NeMo Gym rollout's bookkeeping.

* ``nemo_gym_seed_verify``: ``/seed_session`` + ``/verify`` pairs per wall second through NeMo
  Gym's own ``ServerClient``, one pair after another (no tool calls between: the pair is the
  resources server's whole share of a rollout), against integrations/nemo_gym_server.py over a
  ``mcpgym serve --transport http`` (a task episode made, judged, rewarded and deleted per
  pair) / against NeMo Gym's example resources server ``example_session_state_mgmt`` (shipped
  in the ``nemo-gym`` package: a counter in a dict), both served by uvicorn in the same
  ``.venv-nemo`` process, measured in alternating rounds (the best round of each). Target at
  least 0.9x (issue 39).

Unavailable (not a zero) without ``.venv-nemo`` (docs/rl.md, "NeMo Gym") or outside a source
checkout (the driver is tests/support/nemo_gym_driver.py).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from mcpgym.benchmarks.harness import Figure, Settings

TASK = "flights.book_cheapest_berlin_paris"
TARGET = 0.9
TITLE = "NeMo Gym seed_session+verify pairs/s, mcpgym resources server"


def _unavailable(why: str) -> Figure:
    return Figure(
        name="nemo_gym_seed_verify",
        title=TITLE,
        value=None,
        unit="x example",
        target=TARGET,
        op=">=",
        available=False,
        note=f"not available: {why}",
    )


def nemo_gym_seed_verify(settings: Settings) -> Figure:
    """Figure: pairs per second against mcpgym's server / against NeMo Gym's example (module
    docstring)."""
    from mcpgym.benchmarks.transport import ROOT
    from mcpgym.evaluation.run.server_process import spawn_server

    python = Path(os.environ.get("MCPGYM_NEMO_PYTHON") or ROOT / ".venv-nemo" / "bin" / "python")
    driver = ROOT / "tests" / "support" / "nemo_gym_driver.py"
    if not python.exists():
        return _unavailable(f"no NeMo Gym venv at {python} (docs/rl.md, 'NeMo Gym')")
    if not driver.exists():
        return _unavailable(f"no driver at {driver} (a source checkout is needed)")
    seconds = {"tiny": 0.2, "quick": 1.0}.get(settings.mode, 2.0)
    rounds = 1 if settings.mode == "tiny" else 3
    log = ROOT / ".mcpgym-bench-nemo-serve.log"
    server = spawn_server(log, max_episodes=64)
    try:
        job = {
            "mcpgym_url": server.url,
            "token": server.token,
            "rollouts": [],
            "bench": {"seconds": seconds, "rounds": rounds, "task": TASK},
        }
        done = subprocess.run(
            [str(python), str(driver)], input=json.dumps(job), capture_output=True, text=True, timeout=600, cwd=ROOT
        )
    finally:
        server.stop()
        log.unlink(missing_ok=True)
    if done.returncode:
        return _unavailable(f"the NeMo Gym driver failed: {done.stderr.strip()[-300:]}")
    rates = json.loads(done.stdout.strip().splitlines()[-1])["bench"]
    value = round(rates["mcpgym"] / rates["example"], 3)
    return Figure(
        name="nemo_gym_seed_verify",
        title=TITLE,
        value=value,
        unit="x example",
        target=TARGET,
        op=">=",
        baseline="NeMo Gym's example_session_state_mgmt resources server, same client, alternating rounds",
        ratio=value,
        details={
            "mcpgym_pairs_per_second": round(rates["mcpgym"], 1),
            "example_pairs_per_second": round(rates["example"], 1),
            "seconds_per_round": seconds,
            "rounds": rounds,
        },
    )


__all__ = ["nemo_gym_seed_verify"]
