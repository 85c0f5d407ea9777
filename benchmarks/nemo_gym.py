"""NeMo Gym figure: what mcpgym's resources server costs a NeMo Gym rollout's bookkeeping.

* ``nemo_gym_seed_verify``: ``/seed_session`` + ``/verify`` pairs per wall second through NeMo
  Gym's own ``ServerClient``, one pair after another (no tool calls between: the pair is the
  resources server's whole share of a rollout), against integrations/nemo_gym_server.py over a
  ``mcpgym serve --transport http`` (a task episode made, judged, rewarded and deleted per
  pair) / against NeMo Gym's example resources server ``example_session_state_mgmt`` (shipped
  in the ``nemo-gym`` package: a counter in a dict), both served by uvicorn in the same
  ``.venv-nemo`` process, one pair of each in turn (so both meet the same load at the same
  moments), in rounds of ``seconds``; the figure is the median over rounds of the ratio of their
  pairs per second spent. Target at least 0.9x (issue 39). The details break a pair down: each server's milliseconds per pair,
  and, timed straight from aiohttp to the same ``mcpgym serve``, mcpgym's two requests of a pair
  (``mcpgym_requests_ms``: the task episode, then the reward that deletes it) and an empty
  request's round trip (``empty_request_ms``).

Unavailable (not a zero) without ``.venv-nemo`` (docs/rl.md, "NeMo Gym") or outside a source
checkout (the driver is tests/support/nemo_gym_driver.py).
"""

from __future__ import annotations

import json
import os
import statistics
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
    rounds = {"tiny": 1, "quick": 3}.get(settings.mode, 5)
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
    value = round(statistics.median(rates["ratios"]), 3)
    direct = rates["direct"]
    return Figure(
        name="nemo_gym_seed_verify",
        title=TITLE,
        value=value,
        unit="x example",
        target=TARGET,
        op=">=",
        baseline="NeMo Gym's example_session_state_mgmt resources server, same client, pair by pair in turn",
        ratio=value,
        details={
            "mcpgym_pairs_per_second": round(rates["mcpgym"], 1),
            "example_pairs_per_second": round(rates["example"], 1),
            "mcpgym_pair_ms": round(1e3 / rates["mcpgym"], 2),
            "example_pair_ms": round(1e3 / rates["example"], 2),
            "mcpgym_requests_ms": round(direct["requests"], 2),
            "empty_request_ms": round(direct["empty"], 3),
            "seconds_per_round": seconds,
            "rounds": rounds,
            "ratio_per_round": [round(r, 3) for r in rates["ratios"]],
        },
    )


__all__ = ["nemo_gym_seed_verify"]
