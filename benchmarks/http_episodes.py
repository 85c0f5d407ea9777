"""HTTP episode throughput (issue 30): whole episodes per second over streamable HTTP.

One ours episode, end to end as a runner plays it: ``POST /control/episodes`` (world seed and
apps of the workload, faults off), an MCP session on its ``mcp_url`` (``mcp.Client`` legacy
mode, the initialize handshake), six tool calls (read, write, read back, undo, read, write),
``DELETE`` of the episode. The baseline, interleaved episode by episode in the same
repetition: a session of the SDK's ``MCPServer`` no-op server doing the same (connect, six
no-op calls, close). The value is ours episodes per second / no-op sessions per second (wall
time, one episode at a time, one shared HTTP client); target at least 0.9x.
"""

from __future__ import annotations

import time
from typing import Any

import anyio

from mcpgym.benchmarks.concurrency import CONCURRENT_CYCLE, _cycle_args, _http_client, _session_calls
from mcpgym.benchmarks.harness import Figure, Settings, cpu_split, median, pinned
from mcpgym.benchmarks.transport import noop_http, ours_http
from mcpgym.benchmarks.workload import APPS, WORLD_SEED, workload_item

HTTP_EPISODES_TARGET = 0.9
CALLS = 6


async def _ours_episode(control: Any, http: Any, plan: list[tuple[str, dict[str, Any]]], errors: list[str]) -> None:
    created = await control.create_episode({"seed": WORLD_SEED, "apps": list(APPS), "faults": "none"})
    try:
        await _session_calls(created["mcp_url"], http, plan, [], errors)
    finally:
        await control.delete(created["episode_id"])


def http_episodes(settings: Settings) -> Figure:
    """Figure: HTTP episodes per second (create, connect, 6 calls, delete) / SDK no-op sessions
    per second (connect, 6 calls), interleaved; median over repetitions; target at least 0.9x."""
    from mcpgym.evaluation.run.server_process import ControlClient

    item = workload_item()
    plan = [(tool, _cycle_args(tool, item)) for tool in (CONCURRENT_CYCLE[i % 4] for i in range(CALLS))]
    noop_plan: list[tuple[str, dict[str, Any]]] = [("noop", {})] * CALLS
    n = {"full": 60, "quick": 20}.get(settings.mode, 2)
    errors: list[str] = []
    with ours_http() as handle, noop_http() as noop_url:

        async def main() -> list[tuple[float, float]]:
            out = []
            async with ControlClient(handle.url, handle.token) as control, _http_client(2) as http:
                await _ours_episode(control, http, plan, [])  # warm-up: template, catalog, connections
                await _session_calls(noop_url, http, noop_plan, [], [])
                for _ in range(settings.reps):
                    t_ours = t_noop = 0.0
                    for _ in range(n):
                        t0 = time.perf_counter()
                        await _ours_episode(control, http, plan, errors)
                        t1 = time.perf_counter()
                        await _session_calls(noop_url, http, noop_plan, [], errors)
                        t_ours += t1 - t0
                        t_noop += time.perf_counter() - t1
                    out.append((n / t_ours, n / t_noop))
            return out

        split = cpu_split()
        with pinned(split[1] if split else None):
            reps = anyio.run(main)
    ratios = [o / b for o, b in reps]
    value = median(ratios)
    return Figure(
        name="http_episodes",
        title=f"HTTP episodes per second (create, connect, {CALLS} calls, delete)",
        value=round(value, 3),
        unit="x no-op",
        target=HTTP_EPISODES_TARGET,
        op=">=",
        baseline=f"MCPServer no-op sessions per second (connect, {CALLS} calls)",
        ratio=round(value, 3),
        details={
            "episodes_per_second": round(median([o for o, _ in reps]), 1),
            "noop_sessions_per_second": round(median([b for _, b in reps]), 1),
            "errors": len(errors),
            "first_errors": errors[:3],
            "episodes_per_rep": n,
            "reps": settings.reps,
        },
        note=f"{len(errors)} errors" if errors else "",
    )


__all__ = ["http_episodes"]
