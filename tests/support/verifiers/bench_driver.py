"""The ``verifiers_rollouts`` benchmark row's driver, run in ``.venv-vf``
(``.venv-vf/bin/python tests/support/verifiers/bench_driver.py CONFIG_JSON``).

CONFIG_JSON: ``{"url", "token", "model_url", "task", "tools", "max_turns", "rollouts",
"concurrency", "rounds"}``. Times ``rounds`` rounds; a round is one batch of ``rollouts`` whole
verifiers rollouts (``concurrency`` at once) of mcpgym's environment (one mcpgym episode each:
created, played, rewarded, deleted) and one of the baseline taskset ``mcpgym-noop-bench``
(:mod:`mcpgym_noop_bench`: verifiers' own toolset of as many no-op tools, the same harness, model
and turn count), back to back, the side that goes first alternating from round to round (so a
load that rises or falls across a round weighs on both sides alike). Prints
``{"mcpgym": [rollouts/s per round], "noop": [...], "ratios": [mcpgym/noop per round],
"errors": [...]}``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any


async def _rate(env: Any, ctx: Any, rollouts: int, concurrency: int) -> tuple[float, list[str]]:
    """Rollouts per wall second of ``rollouts`` rollouts of ``env``'s first task, and errors."""
    task = next(iter(env.taskset))
    slots = env.slots(task, rollouts)
    semaphore = asyncio.Semaphore(concurrency)
    started = time.perf_counter()
    episodes = await asyncio.gather(*(env.run_slot(slot, ctx, semaphore) for slot in slots))
    seconds = time.perf_counter() - started
    errors = [e.message for ep in episodes for e in ep.errors]
    errors += [e.message for ep in episodes for t in ep.traces for e in t.errors]
    return rollouts / seconds, errors


async def main(config: dict[str, Any]) -> dict[str, Any]:
    import os

    import verifiers.v1 as vf
    from verifiers.v1.clients import ModelContext
    from verifiers.v1.utils.loaders import load_environment as vf_load

    from mcpgym.integrations.verifiers_env import McpgymHarnessConfig, load_environment

    os.environ.setdefault("MCPGYM_DRIVER_KEY", "sk-test")
    ours = load_environment(
        tasks=[config["task"]],
        faults="none",
        tools=config.get("tools", "all"),
        url=config["url"],
        token=config["token"],
        max_turns=config["max_turns"],
    )
    noop = vf_load(
        vf.SingleAgentEnvConfig(
            taskset=vf.TasksetConfig(id="mcpgym-noop-bench"),
            agent=vf.AgentConfig(
                harness=McpgymHarnessConfig(max_turns=config["max_turns"]), runtime=vf.SubprocessConfig()
            ),
        )
    )
    ctx = ModelContext(
        client=vf.EvalClientConfig(base_url=config["model_url"], api_key_var="MCPGYM_DRIVER_KEY"), model="replay"
    )
    rates: dict[str, list[float]] = {"mcpgym": [], "noop": []}
    errors: list[str] = []
    async with ours.serving(), noop.serving():
        await _rate(ours, ctx, 2, 2)  # warm both (imports, first connections)
        await _rate(noop, ctx, 2, 2)
        for round_ in range(config["rounds"]):
            sides = [("mcpgym", ours), ("noop", noop)]
            for name, env in sides if round_ % 2 == 0 else sides[::-1]:
                rate, errs = await _rate(env, ctx, config["rollouts"], config["concurrency"])
                rates[name].append(rate)
                errors += errs
    ratios = [ours_rate / noop_rate for ours_rate, noop_rate in zip(rates["mcpgym"], rates["noop"], strict=True)]
    return {**rates, "ratios": ratios, "errors": errors[:5]}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(json.loads(sys.argv[1])))))
