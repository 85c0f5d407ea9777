"""HTTP episode throughput (issue 30): whole episodes per second over streamable HTTP.

One ours episode, end to end: an MCP session on the server's ``/mcp`` endpoint whose opening
``initialize`` creates the episode (world seed and apps of the workload in the query string,
faults off; ``mcp.Client`` legacy mode, the initialize handshake), six tool calls (read,
write, read back, undo, read, write), and the session's close (``DELETE``), which deletes
the episode. The baseline, interleaved episode by episode in the same repetition: a session
of the SDK's ``MCPServer`` no-op server doing the same (connect, six no-op calls, close). One
episode at a time. Both make the same nine HTTP requests.

A third kind, interleaved too and reported in the details only: the same episode made the
control API's way (``POST /control/episodes``, a session on its ``mcp_url``, ``DELETE
/control/episodes/{id}``), the runner's path, two requests more than a no-op session.

The figure is ours episodes per second / no-op sessions per second (wall time); target at
least 0.9x. The details add what each side computed: the CPU time of the server process and
of the client process (every thread, :func:`mcpgym.benchmarks.harness.process_cpu_ns`) per
episode and per no-op session, and their ratio (``cpu_ratio``). Wall time also counts the
waits for a CPU: on a shared machine, the other processes' load times the number of round
trips. After the run no episode may be left on the server (``episodes_left``: an error if not);
the row has a server of its own, so that no other figure's live episode is counted.
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


async def _control_episode(control: Any, http: Any, plan: list[tuple[str, dict[str, Any]]], errors: list[str]) -> None:
    """The episode the control API's way: create, a session on its URL, delete."""
    created = await control.create_episode({"seed": WORLD_SEED, "apps": list(APPS), "faults": "none"})
    try:
        await _session_calls(created.mcp_url, http, plan, [], errors)
    finally:
        await control.delete(created.episode_id)


def session_episode_url(base: str) -> str:
    """The ``/mcp`` URL whose sessions are episodes of the workload's world (faults off)."""
    return f"{base}/mcp?seed={WORLD_SEED}&apps={','.join(APPS)}&faults=none"


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
    """Figure: HTTP episodes per second (a ``/mcp`` session: create with the opening request,
    6 calls, delete with the close) / SDK no-op sessions per second (connect, 6 calls, close),
    interleaved; median over repetitions; target at least 0.9x. The CPU time of both sides
    (server and client process), its ratio, and the control API's path (create, session,
    delete: ``control_api_ratio``) are in the details.

    Raises:
        OSError: where process CPU times cannot be read (``/proc``, Linux only).
    """
    from mcpgym.evaluation.run.server_process import ControlClient

    item = workload_item()
    plan = [(tool, _cycle_args(tool, item)) for tool in (CONCURRENT_CYCLE[i % 4] for i in range(CALLS))]
    noop_plan: list[tuple[str, dict[str, Any]]] = [("noop", {})] * CALLS
    n = {"full": 60, "quick": 20}.get(settings.mode, 2)
    errors: list[str] = []
    left: list[str] = []
    with ours_http(own=True) as handle, noop_http() as noop_url:
        assert handle.process is not None  # spawned here: its CPU time is readable
        url = session_episode_url(handle.url)

        async def main() -> list[tuple[_Meter, _Meter, _Meter]]:
            out = []
            async with (
                ControlClient(handle.url, handle.token) as control,
                _http_client(2) as http,
                _http_client(2) as authed,
            ):
                authed.headers["Authorization"] = f"Bearer {handle.token}"
                # warm-up: template, catalog, connections
                await _session_calls(url, authed, plan, [], [])
                await _control_episode(control, http, plan, [])
                await _session_calls(noop_url, http, noop_plan, [], [])
                for _ in range(settings.reps):
                    ours, noop = _Meter(handle.process.pid), _Meter(noop_pid(noop_url))
                    by_control = _Meter(handle.process.pid)
                    for _ in range(n):
                        started = ours.start()
                        await _session_calls(url, authed, plan, [], errors)
                        ours.stop(started)
                        started = noop.start()
                        await _session_calls(noop_url, http, noop_plan, [], errors)
                        noop.stop(started)
                        started = by_control.start()
                        await _control_episode(control, http, plan, errors)
                        by_control.stop(started)
                    out.append((ours, noop, by_control))
                left.extend((await control.list_episodes()).episodes)
            return out

        split = cpu_split()
        with pinned(split[1] if split else None):
            reps = anyio.run(main)
    if left:
        errors.append(f"{len(left)} episodes left on the server after their sessions closed")
    ratios = [noop.wall / ours.wall for ours, noop, _ in reps]
    cpu_ratios = [noop.cpu / ours.cpu for ours, noop, _ in reps]
    control_ratios = [noop.wall / by_control.wall for _, noop, by_control in reps]
    value = median(ratios)

    def ms(values: list[float]) -> float:
        return round(1000 * median(values) / n, 2)

    return Figure(
        name="http_episodes",
        title=f"HTTP episodes per second (create, connect, {CALLS} calls, delete; /mcp session episodes)",
        value=round(value, 3),
        unit="x no-op",
        target=HTTP_EPISODES_TARGET,
        op=">=",
        baseline=f"MCPServer no-op sessions per second (connect, {CALLS} calls)",
        ratio=round(value, 3),
        details={
            "episodes_per_second": round(median([n / o.wall for o, _, _ in reps]), 1),
            "noop_sessions_per_second": round(median([n / b.wall for _, b, _ in reps]), 1),
            "control_api_ratio": round(median(control_ratios), 3),
            "control_api_ratio_per_rep": [round(r, 3) for r in control_ratios],
            "control_api_episode_cpu_ms": ms([c.server_cpu + c.client_cpu for _, _, c in reps]),
            "ratio_per_rep": [round(r, 3) for r in ratios],
            "cpu_ratio": round(median(cpu_ratios), 3),
            "cpu_ratio_per_rep": [round(r, 3) for r in cpu_ratios],
            "episode_server_cpu_ms": ms([o.server_cpu for o, _, _ in reps]),
            "episode_client_cpu_ms": ms([o.client_cpu for o, _, _ in reps]),
            "noop_server_cpu_ms": ms([b.server_cpu for _, b, _ in reps]),
            "noop_client_cpu_ms": ms([b.client_cpu for _, b, _ in reps]),
            "episodes_left": len(left),
            "errors": len(errors),
            "first_errors": errors[:3],
            "episodes_per_rep": n,
            "reps": settings.reps,
        },
        note=f"{len(errors)} errors" if errors else "",
    )


__all__ = ["http_episodes"]
