"""verifiers figure: what an mcpgym episode costs a verifiers rollout.

* ``verifiers_rollouts``: whole verifiers rollouts per wall second (verifiers 0.4's own
  ``Env.run_slot``: setup, the harness's chat loop over MCP, the rubric) with a zero-latency
  scripted model (:class:`mcpgym.benchmarks.replay_model.ReplayModel`, the careful agent's
  actions on ``system.dark_mode``), through mcpgym's environment (each rollout its own episode
  on a ``mcpgym serve --transport http``: created, played, judged, rewarded and deleted over
  the control API) / through verifiers' own tool environment with as many no-op tools and the
  same turn count (verifiers 0.4 has no ``ToolEnv`` class: its equivalent is a taskset's
  ``Toolset`` of ``@vf.tool`` functions, served once for the eval by verifiers; the same
  harness, model and MCP client play it; tests/support/verifiers/mcpgym_noop_bench.py). 8
  rollouts at once. A round is one batch of each side back to back, the side going first
  alternating from round to round, so both meet the same load at nearly the same moments; the
  figure is the median over many short rounds of the round's ratio (the NeMo Gym row's method:
  each side's best round of its own, as before, moved by up to 40% with the host's load).
  Target at least 0.9x (issue 39).

Unavailable (not a zero) without ``.venv-vf`` (docs/rl.md, "verifiers") or outside a source
checkout (the driver is tests/support/verifiers/bench_driver.py).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from pathlib import Path

from mcpgym.benchmarks.harness import Figure, Settings

TASK = "system.dark_mode"
TARGET = 0.9
CONCURRENCY = 8
TITLE = "verifiers rollouts/s through mcpgym's environment"


def _unavailable(why: str) -> Figure:
    return Figure(
        name="verifiers_rollouts",
        title=TITLE,
        value=None,
        unit="x ToolEnv",
        target=TARGET,
        op=">=",
        available=False,
        note=f"not available: {why}",
    )


def _tool_count(url: str, token: str) -> int:
    """How many tools the task's episode offers (made once and deleted)."""
    import httpx

    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        made = http.post("/control/task-episodes", json={"task": TASK, "faults": "none"})
        made.raise_for_status()
        http.delete(f"/control/episodes/{made.json()['episode_id']}")
    return int(made.json()["tools"])


def verifiers_rollouts(settings: Settings) -> Figure:
    """Figure: rollouts per second through mcpgym's environment / through verifiers' own tool
    environment (module docstring)."""
    from mcpgym.benchmarks.replay_model import ReplayModel, careful_script
    from mcpgym.benchmarks.transport import ROOT
    from mcpgym.evaluation.run.server_process import spawn_server
    from mcpgym.evaluation.tasks import get_task

    python = Path(os.environ.get("MCPGYM_VERIFIERS_PYTHON") or ROOT / ".venv-vf" / "bin" / "python")
    support = ROOT / "tests" / "support" / "verifiers"
    if not python.exists():
        return _unavailable(f"no verifiers venv at {python} (docs/rl.md, 'verifiers')")
    if not (support / "bench_driver.py").exists():
        return _unavailable(f"no driver in {support} (a source checkout is needed)")
    rollouts = {"tiny": 4}.get(settings.mode, 16)
    rounds = {"tiny": 1, "quick": 5}.get(settings.mode, 15)
    ours = careful_script(TASK)
    calls = len(ours) - 1
    log = ROOT / ".mcpgym-bench-verifiers-serve.log"
    server = spawn_server(log, max_episodes=64)
    try:
        tools = _tool_count(server.url, server.token)
        noop = [{"tool": f"noop_{i % tools}", "arguments": {}} for i in range(calls)] + [{"final": "Done."}]
        script = {get_task(TASK).instruction: ours, "Call the no-op tools.": noop}
        with ReplayModel(script) as model:
            job = {
                "url": server.url,
                "token": server.token,
                "model_url": model.url,
                "task": TASK,
                "max_turns": calls + 1,
                "rollouts": rollouts,
                "concurrency": CONCURRENCY,
                "rounds": rounds,
            }
            env = {**os.environ, "MCPGYM_NOOP_TOOLS": str(tools), "PYTHONPATH": str(support)}
            done = subprocess.run(
                [str(python), str(support / "bench_driver.py"), json.dumps(job)],
                capture_output=True,
                text=True,
                timeout=900,
                cwd=ROOT,
                env=env,
            )
    finally:
        server.stop()
        log.unlink(missing_ok=True)
    if done.returncode:
        return _unavailable(f"the verifiers driver failed: {done.stderr.strip()[-300:]}")
    rates = json.loads(done.stdout.strip().splitlines()[-1])
    if rates["errors"]:
        raise RuntimeError(f"verifiers rollouts failed in the benchmark: {rates['errors']}")
    value = round(statistics.median(rates["ratios"]), 3)
    return Figure(
        name="verifiers_rollouts",
        title=TITLE,
        value=value,
        unit="x ToolEnv",
        target=TARGET,
        op=">=",
        baseline=(
            f"verifiers' own toolset of {tools} no-op tools, same harness, model and {calls} tool turns,"
            " batch by batch in turn"
        ),
        ratio=value,
        details={
            "mcpgym_rollouts_per_second": round(statistics.median(rates["mcpgym"]), 2),
            "toolenv_rollouts_per_second": round(statistics.median(rates["noop"]), 2),
            "ratio_per_round": [round(r, 3) for r in rates["ratios"]],
            "rounds_mcpgym": [round(r, 2) for r in rates["mcpgym"]],
            "rounds_toolenv": [round(r, 2) for r in rates["noop"]],
            "rounds": rounds,
            "tools": tools,
            "tool_calls": calls,
            "rollouts_per_round": rollouts,
            "concurrency": CONCURRENCY,
        },
    )


__all__ = ["verifiers_rollouts"]
