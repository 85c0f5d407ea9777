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
  request's round trip (``empty_request_ms``). Reported: one pair at a time measures latency,
  not what a trainer gets (below).
* ``nemo_gym_seed_verify_concurrent``: the same pairs with 16 sessions in flight and each
  resources server in its own uvicorn process (as NeMo Gym's ``ng_run`` runs each server), the
  driver being NeMo Gym's client only: a round of ``seconds`` on one server, then one on the
  other, the order alternating; the figure is the median over rounds of the ratio of their
  pairs per second. Target at least 0.9x (issue 39): trainers run rollouts concurrently, so
  their throughput is concurrent pairs per second. The details add each process's CPU
  milliseconds per pair (client, resources server, ``mcpgym serve``).

Unavailable (not a zero) without ``.venv-nemo`` (docs/rl.md, "NeMo Gym") or outside a source
checkout (the driver is tests/support/nemo_gym_driver.py).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from pathlib import Path
from typing import Any

from mcpgym.benchmarks.harness import Figure, Settings

TASK = "flights.book_cheapest_berlin_paris"
TARGET = 0.9
TITLE = "NeMo Gym seed_session+verify pairs/s, mcpgym resources server, one at a time"
TITLE_CONCURRENT = "NeMo Gym seed_session+verify pairs/s, 16 in flight, each server its own process"
SESSIONS = 16


def _unavailable(name: str, title: str, target: float | None, why: str) -> Figure:
    return Figure(
        name=name,
        title=title,
        value=None,
        unit="x example",
        target=target,
        op=">=",
        available=False,
        note=f"not available: {why}",
    )


def _drive(bench: dict[str, Any]) -> dict[str, Any] | str:
    """Run the NeMo Gym driver's ``bench`` job against a fresh ``mcpgym serve``: its
    ``bench`` answer, or why it is unavailable."""
    from mcpgym.benchmarks.transport import ROOT
    from mcpgym.evaluation.run.server_process import spawn_server

    python = Path(os.environ.get("MCPGYM_NEMO_PYTHON") or ROOT / ".venv-nemo" / "bin" / "python")
    driver = ROOT / "tests" / "support" / "nemo_gym_driver.py"
    if not python.exists():
        return f"no NeMo Gym venv at {python} (docs/rl.md, 'NeMo Gym')"
    if not driver.exists():
        return f"no driver at {driver} (a source checkout is needed)"
    log = ROOT / ".mcpgym-bench-nemo-serve.log"
    server = spawn_server(log, max_episodes=64)
    try:
        job: dict[str, Any] = {
            "mcpgym_url": server.url,
            "token": server.token,
            "mcpgym_pid": server.process.pid if server.process is not None else None,
            "rollouts": [],
            "bench": bench,
        }
        done = subprocess.run(
            [str(python), str(driver)], input=json.dumps(job), capture_output=True, text=True, timeout=600, cwd=ROOT
        )
    finally:
        server.stop()
        log.unlink(missing_ok=True)
    if done.returncode:
        return f"the NeMo Gym driver failed: {done.stderr.strip()[-300:]}"
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])["bench"]
    return answer


def nemo_gym_seed_verify(settings: Settings) -> Figure:
    """Figure: pairs per second against mcpgym's server / against NeMo Gym's example, one pair
    at a time (module docstring); reported, no target."""
    seconds = {"tiny": 0.2, "quick": 1.0}.get(settings.mode, 2.0)
    rounds = {"tiny": 1, "quick": 3}.get(settings.mode, 5)
    rates = _drive({"seconds": seconds, "rounds": rounds, "task": TASK})
    if isinstance(rates, str):
        return _unavailable("nemo_gym_seed_verify", TITLE, None, rates)
    value = round(statistics.median(rates["ratios"]), 3)
    direct = rates["direct"]
    return Figure(
        name="nemo_gym_seed_verify",
        title=TITLE,
        value=value,
        unit="x example",
        target=None,
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


def nemo_gym_seed_verify_concurrent(settings: Settings) -> Figure:
    """Figure: pairs per second with 16 in flight, each resources server its own process,
    against mcpgym's server / against NeMo Gym's example (module docstring); target 0.9x."""
    seconds = {"tiny": 0.2, "quick": 1.0}.get(settings.mode, 2.0)
    rounds = {"tiny": 1, "quick": 3}.get(settings.mode, 5)
    concurrent = {"sessions": SESSIONS, "seconds": seconds, "rounds": rounds}
    rates = _drive({"task": TASK, "concurrent": concurrent})
    if isinstance(rates, str):
        return _unavailable("nemo_gym_seed_verify_concurrent", TITLE_CONCURRENT, TARGET, rates)
    value = round(statistics.median(rates["ratios"]), 3)
    return Figure(
        name="nemo_gym_seed_verify_concurrent",
        title=TITLE_CONCURRENT,
        value=value,
        unit="x example",
        target=TARGET,
        op=">=",
        baseline="NeMo Gym's example_session_state_mgmt resources server in its own process, same client, "
        "rounds in turn",
        ratio=value,
        details={
            "mcpgym_pairs_per_second": round(rates["mcpgym"], 1),
            "example_pairs_per_second": round(rates["example"], 1),
            "sessions_in_flight": SESSIONS,
            "cpu_ms_per_pair": rates["cpu_ms"],
            "seconds_per_round": seconds,
            "rounds": rounds,
            "ratio_per_round": [round(r, 3) for r in rates["ratios"]],
        },
    )


__all__ = ["nemo_gym_seed_verify", "nemo_gym_seed_verify_concurrent"]
