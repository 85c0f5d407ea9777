"""Run mcpgym's verifiers environment through verifiers' own Python API, in the verifiers
virtual environment (``.venv-vf/bin/python tests/support/verifiers/driver.py CONFIG_JSON``).

CONFIG_JSON: ``{"url", "token", "model_url", "model", "tasks", "trials", "rollouts",
"faults", "fault_seed", "reward", "tools", "max_turns", "max_concurrent"}``. Prints one JSON object: ``{"rollouts":
[{"task_id", "trial", "reward", "ok", "errors", "mcpgym", "messages"}], "seconds"}``, one
rollout per (task, trial) x ``rollouts`` (verifiers' ``-r``), in plan order.

Imports only what the environment module may import (the standard library, verifiers,
``mcpgym.integrations.verifiers_env``) and reports which ``mcp`` and which mcpgym modules
were loaded, so a test can check the process boundary.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from importlib.metadata import version
from typing import Any


async def main(config: dict) -> dict:
    import verifiers.v1 as vf
    from verifiers.v1.clients import ModelContext

    from mcpgym.integrations.verifiers_env import load_environment

    os.environ.setdefault("MCPGYM_DRIVER_KEY", "sk-test")
    env = load_environment(
        tasks=config["tasks"],
        trials=config.get("trials", 1),
        faults=config.get("faults", "default"),
        reward=config.get("reward", "outcome"),
        url=config["url"],
        token=config["token"],
        fault_seed=config.get("fault_seed"),
        tools=config.get("tools", "all"),
        max_turns=config.get("max_turns", 30),
    )
    ctx = ModelContext(
        client=vf.EvalClientConfig(base_url=config["model_url"], api_key_var="MCPGYM_DRIVER_KEY"),
        model=config.get("model", "replay"),
    )
    tasks = list(env.taskset)
    slots = [slot for task in tasks for slot in env.slots(task, config.get("rollouts", 1))]
    limit = config.get("max_concurrent")
    semaphore = asyncio.Semaphore(limit) if limit else None
    started = time.perf_counter()
    async with env.serving():
        episodes = await asyncio.gather(*(env.run_slot(slot, ctx, semaphore) for slot in slots))
    seconds = time.perf_counter() - started
    out = []
    for slot, episode in zip(slots, episodes, strict=True):
        trace = episode.traces[0] if episode.traces else None
        out.append(
            {
                "task_id": slot.task.data.task_id,
                "trial": slot.task.data.trial,
                "ok": episode.ok,
                "reward": trace.reward if trace is not None else None,
                "errors": [_said(e) for e in episode.errors] + ([_said(e) for e in trace.errors] if trace else []),
                "mcpgym": trace.info.get("mcpgym") if trace is not None else None,
                "metrics": dict(trace.metrics) if trace is not None else {},
                "messages": len(trace.messages) if trace is not None else 0,
            }
        )
    loaded = sorted(m for m in sys.modules if m.startswith("mcpgym"))
    return {"rollouts": out, "seconds": seconds, "mcp_version": version("mcp"), "mcpgym_modules": loaded}


def _said(error: Any) -> str:
    """A verifiers error as one line: its type, its message and its traceback's last line (a
    timeout's own message is often empty)."""
    tail = (getattr(error, "traceback", None) or "").strip().splitlines()[-1:]
    return f"{error.type}: {error.message}" + (f" [{tail[0][:300]}]" if tail else "")


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(json.loads(sys.argv[1])))))
