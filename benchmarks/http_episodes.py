"""HTTP episode throughput (issue 30): whole episodes per second over streamable HTTP.

One ours episode, end to end as a runner plays it: ``POST /control/episodes`` (world seed and
apps of the workload, faults off), an MCP session on its ``mcp_url`` (``mcp.Client`` legacy
mode, the initialize handshake), six tool calls (read, write, read back, undo, read, write),
``DELETE`` of the episode. The baseline, interleaved episode by episode in the same
repetition: a session of the SDK's ``MCPServer`` no-op server doing the same (connect, six
no-op calls, close). One episode at a time, one shared HTTP client.

The figure is ours episodes per second / no-op sessions per second (wall time); target at
least 0.9x. The details add what each side computed: the CPU time of the server process and
of the client process (every thread, :func:`mcpgym.benchmarks.harness.process_cpu_ns`) per
episode and per no-op session, and their ratio (``cpu_ratio``). Wall time also counts the
waits for a CPU: on a shared machine, the other processes' load times the number of round
trips, and an episode makes two more than a no-op session (create and delete).
"""

from __future__ import annotations

import os
import time
from typing import Any

import anyio

from mcpgym.benchmarks.concurrency import CONCURRENT_CYCLE, _cycle_args, _http_client, _session_calls
from mcpgym.benchmarks.harness import Figure, Settings, cpu_split, median, pinned, process_cpu_ns
from mcpgym.benchmarks.transport import noop_http, noop_pid, ours_http
from mcpgym.benchmarks.workload import APPS, WORLD_SEED, workload_item

HTTP_EPISODES_TARGET = 0.9
CALLS = 6


async def _ours_episode(control: Any, http: Any, plan: list[tuple[str, dict[str, Any]]], errors: list[str]) -> None:
    created = await control.create_episode({"seed": WORLD_SEED, "apps": list(APPS), "faults": "none"})
    try:
        await _session_calls(created.mcp_url, http, plan, [], errors)
    finally:
        await control.delete(created.episode_id)


class _Meter:
    """Wall seconds and CPU seconds (a server process plus this client process) of the units
    run inside :meth:`unit`, summed."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid
        self.client_pid = os.getpid()
        self.wall = self.server_cpu = self.client_cpu = 0.0

    def start(self) -> tuple[float, int, int]:
        return time.perf_counter(), process_cpu_ns(self.server_pid), process_cpu_ns(self.client_pid)

    def stop(self, started: tuple[float, int, int]) -> None:
        wall, server, client = started
        self.client_cpu += (process_cpu_ns(self.client_pid) - client) / 1e9
        self.server_cpu += (process_cpu_ns(self.server_pid) - server) / 1e9
        self.wall += time.perf_counter() - wall

    @property
    def cpu(self) -> float:
        return self.server_cpu + self.client_cpu


def http_episodes(settings: Settings) -> Figure:
    """Figure: HTTP episodes per second (create, connect, 6 calls, delete) / SDK no-op sessions
    per second (connect, 6 calls), interleaved; median over repetitions; target at least 0.9x.
    The CPU time of both sides (server and client process) and its ratio are in the details.

    Raises:
        OSError: where process CPU times cannot be read (``/proc``, Linux only).
    """
    from mcpgym.evaluation.run.server_process import ControlClient

    item = workload_item()
    plan = [(tool, _cycle_args(tool, item)) for tool in (CONCURRENT_CYCLE[i % 4] for i in range(CALLS))]
    noop_plan: list[tuple[str, dict[str, Any]]] = [("noop", {})] * CALLS
    n = {"full": 60, "quick": 20}.get(settings.mode, 2)
    errors: list[str] = []
    with ours_http() as handle, noop_http() as noop_url:
        assert handle.process is not None  # spawned here: its CPU time is readable

        async def main() -> list[tuple[_Meter, _Meter]]:
            out = []
            async with ControlClient(handle.url, handle.token) as control, _http_client(2) as http:
                await _ours_episode(control, http, plan, [])  # warm-up: template, catalog, connections
                await _session_calls(noop_url, http, noop_plan, [], [])
                for _ in range(settings.reps):
                    ours, noop = _Meter(handle.process.pid), _Meter(noop_pid(noop_url))
                    for _ in range(n):
                        started = ours.start()
                        await _ours_episode(control, http, plan, errors)
                        ours.stop(started)
                        started = noop.start()
                        await _session_calls(noop_url, http, noop_plan, [], errors)
                        noop.stop(started)
                    out.append((ours, noop))
            return out

        split = cpu_split()
        with pinned(split[1] if split else None):
            reps = anyio.run(main)
    ratios = [noop.wall / ours.wall for ours, noop in reps]
    cpu_ratios = [noop.cpu / ours.cpu for ours, noop in reps]
    value = median(ratios)

    def ms(values: list[float]) -> float:
        return round(1000 * median(values) / n, 2)

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
            "episodes_per_second": round(median([n / o.wall for o, _ in reps]), 1),
            "noop_sessions_per_second": round(median([n / b.wall for _, b in reps]), 1),
            "ratio_per_rep": [round(r, 3) for r in ratios],
            "cpu_ratio": round(median(cpu_ratios), 3),
            "cpu_ratio_per_rep": [round(r, 3) for r in cpu_ratios],
            "episode_server_cpu_ms": ms([o.server_cpu for o, _ in reps]),
            "episode_client_cpu_ms": ms([o.client_cpu for o, _ in reps]),
            "noop_server_cpu_ms": ms([b.server_cpu for _, b in reps]),
            "noop_client_cpu_ms": ms([b.client_cpu for _, b in reps]),
            "errors": len(errors),
            "first_errors": errors[:3],
            "episodes_per_rep": n,
            "reps": settings.reps,
        },
        note=f"{len(errors)} errors" if errors else "",
    )


__all__ = ["http_episodes"]
