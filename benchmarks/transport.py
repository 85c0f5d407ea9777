"""Transport figures: tool-call round trips over stdio and streamable HTTP.

Baseline: :mod:`mcpgym.benchmarks.noop_server`, an SDK ``MCPServer`` with one no-op tool, spawned
the same way as ours (a child process over stdio; a uvicorn child process over loopback
HTTP). One client process (this one) drives both servers with the same ``mcp.Client``
settings (``mode="legacy"``, what the evaluation runner uses; output-schema validation on, the
SDK default), alternating call by call: our timed write, the untimed settle calls
(:func:`mcpgym.benchmarks.workload.settle_async`), then a timed no-op. A repetition's ratio is the
median over its pairs of ours / no-op; the figure is the median over repetitions. Both
servers run pinned to one CPU and the client to the others (:func:`mcpgym.benchmarks.harness.cpu_split`).

Also here: the server processes shared by the figures of one run (:func:`shared_servers`).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio

from mcpgym.benchmarks.harness import Figure, Settings, cpu_split, median, pinned
from mcpgym.benchmarks.workload import (
    APPS,
    PROFILE,
    WORLD_SEED,
    WRITE_TOOL,
    fault_seed_for_workload,
    mcp_call,
    settle_async,
    workload_item,
    write_arguments,
)

ROOT = Path(__file__).resolve().parent.parent
CLIENT_MODE = "legacy"
WARMUP_CALLS = 5
ROUND_TRIP_TARGET = 1.3


# -- servers ------------------------------------------------------------------------------------
def ours_stdio(fault_seed: int) -> Any:
    """``StdioServerParameters`` spawning ``mcpgym serve --transport stdio`` on the workload episode."""
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "mcpgym.evaluation.cli",
            "serve",
            "--transport",
            "stdio",
            "--seed",
            str(WORLD_SEED),
            "--apps",
            ",".join(APPS),
            "--faults",
            PROFILE,
            "--fault-seed",
            str(fault_seed),
        ],
        cwd=str(ROOT),
    )


def noop_stdio() -> Any:
    """``StdioServerParameters`` spawning the no-op baseline server over stdio."""
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable, args=["-m", "mcpgym.benchmarks.noop_server", "stdio"], cwd=str(ROOT)
    )


_PIDS: dict[str, int] = {}
"""Process id of each no-op HTTP server started here, by its MCP endpoint URL."""


def noop_pid(url: str) -> int:
    """The process id of the no-op HTTP server serving ``url`` (started by :func:`noop_http`).

    Raises:
        KeyError: for a URL no no-op server of this process serves.
    """
    return _PIDS[url]


_SHARED: dict[str, Any] = {}
"""Servers shared by the figures of one run (see :func:`shared_servers`)."""
_SHARED_LOCK = threading.Lock()


@contextlib.contextmanager
def shared_servers() -> Iterator[None]:
    """Inside this block, :func:`ours_http` and :func:`noop_http` hand every figure the same
    two servers, started once (in parallel) on first use and stopped when the block ends."""
    stack = contextlib.ExitStack()
    _SHARED["stack"] = stack
    try:
        with stack:
            yield
    finally:
        _SHARED.clear()


def _start_shared() -> None:
    """Start both HTTP servers of a :func:`shared_servers` block: the no-op's child first, so
    that its start-up overlaps ours."""
    stack: contextlib.ExitStack = _SHARED["stack"]
    split = cpu_split()
    with pinned(split[0] if split else None):
        noop_wait = stack.enter_context(_noop_http_process())
        _SHARED["ours"] = stack.enter_context(_ours_http_process(max_episodes=1000))
    _SHARED["noop"] = noop_wait()


@contextlib.contextmanager
def noop_http(startup_timeout: float = 60.0) -> Iterator[str]:
    """Run the no-op baseline over streamable HTTP on loopback; yield its MCP endpoint URL.

    Inside :func:`shared_servers`, the shared instance.

    Raises:
        RuntimeError: when it does not print its ready line.
    """
    if "stack" in _SHARED:
        with _SHARED_LOCK:
            if "noop" not in _SHARED:
                _start_shared()
        yield _SHARED["noop"]
        return
    split = cpu_split()
    with pinned(split[0] if split else None):
        cm = _noop_http_process(startup_timeout)
        wait = cm.__enter__()
    try:
        yield wait()
    finally:
        cm.__exit__(None, None, None)


@contextlib.contextmanager
def _noop_http_process(startup_timeout: float = 60.0) -> Iterator[Any]:
    """Start the no-op HTTP child; yield a function that waits for its URL."""
    from mcpgym.benchmarks.noop_server import READY_PREFIX

    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpgym.benchmarks.noop_server", "http"],
        cwd=str(ROOT),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
    )

    def wait() -> str:
        assert proc.stdout is not None
        deadline = time.monotonic() + startup_timeout
        line = ""
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if line.startswith(READY_PREFIX) or not line:
                break
        if not line.startswith(READY_PREFIX):
            raise RuntimeError(f"the no-op baseline server did not start (exit code {proc.poll()})")
        url: str = json.loads(line[len(READY_PREFIX) :])["url"] + "/mcp"
        _PIDS[url] = proc.pid
        return url

    try:
        yield wait
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@contextlib.contextmanager
def ours_http(max_episodes: int = 1000, *, own: bool = False) -> Iterator[Any]:
    """Spawn ``mcpgym serve --transport http`` (the runner's :func:`spawn_server`); yield its
    handle. Inside :func:`shared_servers`, the shared instance (1000 episodes at most), unless
    ``own``: a figure that counts the server's episodes needs a server no other figure uses
    (tiny mode runs the figures side by side)."""
    if "stack" in _SHARED and max_episodes <= 1000 and not own:
        with _SHARED_LOCK:
            if "ours" not in _SHARED:
                _start_shared()
        yield _SHARED["ours"]
        return
    split = cpu_split()
    with pinned(split[0] if split else None):
        cm = _ours_http_process(max_episodes)
        handle = cm.__enter__()
    try:
        yield handle
    finally:
        cm.__exit__(None, None, None)


@contextlib.contextmanager
def _ours_http_process(max_episodes: int) -> Iterator[Any]:
    from mcpgym.evaluation.run.server_process import spawn_server

    with tempfile.TemporaryDirectory(prefix="mcpgym-bench-") as tmp:
        handle = spawn_server(Path(tmp) / "server.log", max_episodes=max_episodes)
        try:
            yield handle
        finally:
            handle.stop()


@contextlib.asynccontextmanager
async def episode_url(
    handle: Any, *, faults: str = PROFILE, fault_seed: int = 0, apps: tuple[str, ...] = APPS
) -> AsyncIterator[str]:
    """Create an episode on ``handle``'s control API; yield its ``mcp_url``; delete it after."""
    from mcpgym.evaluation.run.server_process import ControlClient

    async with ControlClient(handle.url, handle.token) as control:
        created = await control.create_episode(
            {"seed": WORLD_SEED, "apps": list(apps), "faults": faults, "fault_seed": fault_seed}
        )
        try:
            yield created.mcp_url
        finally:
            with anyio.CancelScope(shield=True):
                await control.delete(created.episode_id)


@contextlib.asynccontextmanager
async def two_clients(ours: Any, noop: Any) -> AsyncIterator[tuple[Any, Any]]:
    """Connect ``mcp.Client(ours)`` and ``mcp.Client(noop)`` at the same time (their server
    processes start in parallel); yield both. Each client is entered and left by its own task.
    A server process spawned here (stdio) runs on the server CPU of :func:`cpu_split`."""
    from mcp import Client

    clients: dict[str, Any] = {}
    both, done = anyio.Event(), anyio.Event()
    split = cpu_split()

    async def hold(key: str, target: Any) -> None:
        async with Client(target, mode=CLIENT_MODE) as client:
            clients[key] = client
            if len(clients) == 2:
                both.set()
            await done.wait()

    async with anyio.create_task_group() as tg:
        with pinned(split[0] if split else None):  # the children inherit the affinity at spawn
            tg.start_soon(hold, "ours", ours)
            tg.start_soon(hold, "noop", noop)
            await both.wait()
        try:
            yield clients["ours"], clients["noop"]
        finally:
            done.set()


# -- the interleaved round-trip loop ----------------------------------------------------------------
async def _interleaved(ours: Any, noop: Any, item: str, n: int) -> tuple[list[float], list[float], int]:
    """``n`` x (timed write on ``ours``, untimed settle, timed no-op); (ours s, no-op s, faulted)."""
    from mcpgym.tools.mcp_bridge import payload_of

    call = mcp_call(ours)
    args = write_arguments(item)
    t_ours: list[float] = []
    t_noop: list[float] = []
    faulted = 0
    for _ in range(n):
        t0 = time.perf_counter()
        result = await ours.call_tool(WRITE_TOOL, args)
        t_ours.append(time.perf_counter() - t0)
        faulted += bool(result.is_error)
        await settle_async(call, item, bool(result.is_error), payload_of(result))
        t0 = time.perf_counter()
        await noop.call_tool("noop", {})
        t_noop.append(time.perf_counter() - t0)
    return t_ours, t_noop, faulted


async def _measure(ours: Any, noop: Any, settings: Settings, item: str) -> dict[str, Any]:
    """Warm up, then ``reps`` repetitions; a repetition's ratio is the median over its pairs
    (a timed write and the no-op timed right after it) of ours / no-op: both calls of a pair
    meet the same momentary load of a shared machine."""
    await ours.list_tools()
    await noop.list_tools()
    await _interleaved(ours, noop, item, WARMUP_CALLS)
    ratios, of_medians, ours_med, noop_med, faulted = [], [], [], [], 0
    for _ in range(settings.reps):
        a, b, f = await _interleaved(ours, noop, item, settings.round_trips)
        ratios.append(median(x / y for x, y in zip(a, b, strict=False)))
        of_medians.append(median(a) / median(b))
        ours_med.append(median(a))
        noop_med.append(median(b))
        faulted += f
    return {"ratios": ratios, "of_medians": of_medians, "ours": ours_med, "noop": noop_med, "faulted": faulted}


def _round_trip_figure(
    name: str, title: str, baseline: str, m: dict[str, Any], settings: Settings, extra: dict[str, Any]
) -> Figure:
    value = median(m["ratios"])
    return Figure(
        name=name,
        title=title,
        value=round(value, 3),
        unit="x no-op",
        target=ROUND_TRIP_TARGET,
        op="<=",
        baseline=baseline,
        ratio=round(value, 3),
        details={
            "ours_median_ms": round(median(m["ours"]) * 1e3, 3),
            "noop_median_ms": round(median(m["noop"]) * 1e3, 3),
            "ratio_per_rep": [round(r, 3) for r in m["ratios"]],
            "ratio_of_medians": round(median(m["of_medians"]), 3),
            "timed_calls_per_rep": settings.round_trips,
            "reps": settings.reps,
            "timed_calls_faulted": m["faulted"],
            "tool": WRITE_TOOL,
            "faults": PROFILE,
            "client_mode": CLIENT_MODE,
            "client_output_validation": True,
            **extra,
        },
    )


def stdio_round_trip(settings: Settings) -> Figure:
    """Figure: stdio round trip of the workload write / an ``MCPServer`` no-op over stdio."""
    fault_seed = fault_seed_for_workload()
    item = workload_item()

    async def main() -> dict[str, Any]:
        async with two_clients(ours_stdio(fault_seed), noop_stdio()) as (ours, noop):
            split = cpu_split()
            with pinned(split[1] if split else None):
                return await _measure(ours, noop, settings, item)

    m = anyio.run(main)
    return _round_trip_figure(
        "stdio_round_trip",
        f"stdio round trip, {WRITE_TOOL} (faults {PROFILE})",
        "MCPServer no-op tool over stdio",
        m,
        settings,
        {"fault_seed": fault_seed},
    )


def http_round_trip(settings: Settings) -> Figure:
    """Figure: streamable-HTTP round trip of the workload write via an episode's ``mcp_url`` /
    an ``MCPServer`` no-op over streamable HTTP on loopback."""
    fault_seed = fault_seed_for_workload()
    item = workload_item()

    with ours_http() as handle, noop_http() as noop_url:

        async def main() -> dict[str, Any]:
            async with episode_url(handle, fault_seed=fault_seed) as url, two_clients(url, noop_url) as (ours, noop):
                return await _measure(ours, noop, settings, item)

        split = cpu_split()
        with pinned(split[1] if split else None):
            m = anyio.run(main)
    return _round_trip_figure(
        "http_round_trip",
        f"HTTP round trip, {WRITE_TOOL} (faults {PROFILE})",
        "MCPServer no-op tool over streamable HTTP",
        m,
        settings,
        {"fault_seed": fault_seed},
    )


__all__ = [
    "episode_url",
    "http_round_trip",
    "noop_http",
    "noop_stdio",
    "ours_http",
    "ours_stdio",
    "shared_servers",
    "two_clients",
    "stdio_round_trip",
]
