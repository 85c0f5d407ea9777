"""Integration figures: what the Gymnasium and OpenEnv adapters add to a step.

* ``gymnasium_step``: ``EpisodeEnv.step`` with a JSON tool-call action (parse the action, call,
  render the observation as ASCII JSON) / ``GymEpisode.step`` of the same call, interleaved
  call by call in one process (two episodes of the same task, faults off, a read tool so that
  every call does the same work). Target at most 1.2x.
* ``openenv_step``: one OpenEnv ``step`` through ``openenv-core``'s ``GenericEnvClient`` over
  its WebSocket to ``mcpgym serve --openenv`` / the same tool call through ``mcp.Client`` to an
  episode of ``mcpgym serve --transport http`` (streamable HTTP), alternating. Both servers
  are child processes pinned to the same CPU, the client to the others. Target at most 1x.

A figure is unavailable (not a zero) when its extra (``mcpgym[gym]``, ``mcpgym[openenv]``) is
not installed.
"""

from __future__ import annotations

import importlib.util
import json
import time
from typing import Any

import anyio

from mcpgym.benchmarks.harness import Figure, Settings, cpu_split, gc_paused, median, pinned
from mcpgym.integrations.openenv_process import openenv_server

TASK = "shop.buy_sold_out_mouse"
TOOL = "shop_search_items"
ARGUMENTS = {"query": "mouse"}
GYM_TARGET = 1.2
OPENENV_TARGET = 1.0


def _unavailable(name: str, title: str, target: float, note: str) -> Figure:
    return Figure(name=name, title=title, value=None, unit="x", target=target, available=False, note=note)


def _task() -> Any:
    from mcpgym.evaluation.tasks import get_task

    return get_task(TASK).model_copy(update={"max_calls": None})  # no budget: the loop decides


def gymnasium_step(settings: Settings) -> Figure:
    """Figure: ``EpisodeEnv.step`` / ``GymEpisode.step`` of the same read call (module docstring)."""
    title = f"Gymnasium env.step, {TOOL}"
    if importlib.util.find_spec("gymnasium") is None:
        return _unavailable(
            "gymnasium_step", title, GYM_TARGET, "not available: gymnasium is not installed (pip install 'mcpgym[gym]')"
        )
    from mcpgym.evaluation.run.gym import GymEpisode
    from mcpgym.integrations.gymnasium_env import EpisodeEnv

    task = _task()
    action = json.dumps({"tool": TOOL, "arguments": ARGUMENTS})
    n = max(settings.inproc_calls // 4, 5)
    ratios: list[float] = []
    env_times: list[float] = []
    ep_times: list[float] = []
    for _ in range(settings.reps):
        env = EpisodeEnv(task, faults="none", max_steps=n + 10)
        env.reset(seed=0)
        ep = GymEpisode.create(task, faults="none", fault_seed=0)
        t_env: list[float] = []
        t_ep: list[float] = []
        with gc_paused():
            for _ in range(n):
                t0 = time.perf_counter()
                env.step(action)
                t1 = time.perf_counter()
                ep.step(TOOL, ARGUMENTS)
                t2 = time.perf_counter()
                t_env.append(t1 - t0)
                t_ep.append(t2 - t1)
        ratios.append(median(t_env) / median(t_ep))
        env_times.append(median(t_env))
        ep_times.append(median(t_ep))
    return Figure(
        name="gymnasium_step",
        title=title,
        value=round(median(ratios), 3),
        unit="x GymEpisode.step",
        target=GYM_TARGET,
        baseline="GymEpisode.step of the same call",
        ratio=round(median(ratios), 3),
        details={
            "env_step_us": round(median(env_times) * 1e6, 1),
            "gym_episode_step_us": round(median(ep_times) * 1e6, 1),
            "calls_per_rep": n,
            "ratio_per_rep": [round(r, 3) for r in ratios],
        },
    )


def openenv_step(settings: Settings) -> Figure:
    """Figure: an OpenEnv step over its WebSocket / the same call over MCP (module docstring)."""
    title = f"OpenEnv step, {TOOL}"
    try:
        from openenv import GenericEnvClient
    except ImportError as exc:
        return _unavailable(
            "openenv_step", title, OPENENV_TARGET, f"not available: {exc} (pip install 'mcpgym[openenv]')"
        )
    from mcp import Client

    from mcpgym.benchmarks.transport import ours_http
    from mcpgym.evaluation.run.server_process import ControlClient

    task = _task()
    n = max(settings.round_trips // 2, 5)
    split = cpu_split()

    async def measure(url: str, handle: Any) -> dict[str, Any]:
        ratios: list[float] = []
        oe_times: list[float] = []
        mcp_times: list[float] = []
        async with ControlClient(handle.url, handle.token) as control:
            for _ in range(settings.reps):
                created = await control.create_episode(
                    {"seed": task.seed, "apps": list(task.apps), "faults": "none", "fault_seed": 0}
                )
                try:
                    async with (
                        GenericEnvClient(base_url=url, message_timeout_s=120) as env,
                        Client(created.mcp_url, mode="legacy") as client,
                    ):
                        await env.reset(task=TASK, seed=0)
                        t_oe: list[float] = []
                        t_mcp: list[float] = []
                        for _ in range(3):  # warm-up
                            await env.step({"tool": TOOL, "arguments": ARGUMENTS})
                            await client.call_tool(TOOL, ARGUMENTS)
                        for _ in range(n):
                            t0 = time.perf_counter()
                            out = await env.step({"tool": TOOL, "arguments": ARGUMENTS})
                            t1 = time.perf_counter()
                            res = await client.call_tool(TOOL, ARGUMENTS)
                            t2 = time.perf_counter()
                            assert not out.done and not res.is_error
                            t_oe.append(t1 - t0)
                            t_mcp.append(t2 - t1)
                finally:
                    with anyio.CancelScope(shield=True):
                        await control.delete(created.episode_id)
                ratios.append(median(t_oe) / median(t_mcp))
                oe_times.append(median(t_oe))
                mcp_times.append(median(t_mcp))
        return {"ratios": ratios, "oe": oe_times, "mcp": mcp_times}

    with pinned(split[0] if split else None), openenv_server("--faults", "none") as url, ours_http() as handle:  # noqa: SIM117
        with pinned(split[1] if split else None):
            m = anyio.run(measure, url, handle)
    value = round(median(m["ratios"]), 3)
    return Figure(
        name="openenv_step",
        title=title,
        value=value,
        unit="x MCP call",
        target=OPENENV_TARGET,
        baseline="the same call over MCP (streamable HTTP episode)",
        ratio=value,
        details={
            "openenv_step_ms": round(median(m["oe"]) * 1e3, 3),
            "mcp_call_ms": round(median(m["mcp"]) * 1e3, 3),
            "calls_per_rep": n,
            "ratio_per_rep": [round(r, 3) for r in m["ratios"]],
        },
    )


__all__ = ["gymnasium_step", "openenv_step"]
