"""Concurrency figure: 100 HTTP episodes of 20 calls each, all at once.

One process (this one) drives every MCP session, through one shared HTTP client, with
``mcp.Client(mode="legacy")`` and output-schema validation off (as the evaluation runner
does). The episodes' faults are off, so every call of the cycle should succeed: a transport
exception or a tool error is an error. The baseline is the ``MCPServer`` no-op server under
the same number of concurrent sessions, in the same repetition.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
from mcp.types import TextContent

from mcpgym.benchmarks.harness import Figure, Settings, cpu_split, median, percentile, pinned
from mcpgym.benchmarks.transport import CLIENT_MODE, noop_http, ours_http
from mcpgym.benchmarks.workload import APPS, WORLD_SEED, WRITE_TOOL, workload_item, write_arguments

CONCURRENT_CYCLE = ("shop_get_item", WRITE_TOOL, "shop_get_cart", "shop_remove_from_cart")
"""The calls of each concurrent episode, repeated: read, write, read back, undo (faults off)."""


def _cycle_args(tool: str, item: str) -> dict[str, Any]:
    if tool == WRITE_TOOL:
        return write_arguments(item)
    if tool == "shop_get_cart":
        return {}
    return {"item_id": item}


async def _skip_validation(name: str, result: Any) -> None:
    """Stands in for ``ClientSession.validate_tool_result`` (as the evaluation runner does)."""


async def _session_calls(
    url: str, http: Any, plan: list[tuple[str, dict[str, Any]]], latencies: list[float], errors: list[str]
) -> None:
    """One MCP session on ``url``: the calls of ``plan`` in order, each timed; failures counted."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    try:
        async with Client(streamable_http_client(url, http_client=http), mode=CLIENT_MODE) as client:
            client.session.validate_tool_result = _skip_validation  # type: ignore[method-assign]
            for tool, args in plan:
                t0 = time.perf_counter()
                try:
                    result = await client.call_tool(tool, args)
                except Exception as exc:  # noqa: BLE001 - every failure is counted, the run goes on
                    errors.append(f"{tool}: {type(exc).__name__}: {exc}")
                    continue
                latencies.append(time.perf_counter() - t0)
                if result.is_error:
                    first = result.content[0] if result.content else None
                    text = first.text if isinstance(first, TextContent) else ""
                    errors.append(f"{tool}: tool error {text}"[:300])
    except Exception as exc:  # noqa: BLE001 - a session that cannot open counts its calls as errors
        errors.append(f"session: {type(exc).__name__}: {exc}")


def _http_client(sessions: int) -> Any:
    """One HTTP client for every session of a run, with room for all their connections."""
    import httpx2

    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(60.0, read=300.0),
        limits=httpx2.Limits(max_connections=4 * sessions + 10, max_keepalive_connections=2 * sessions + 10),
    )


async def _crowd(urls: list[str], plan: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Run one session per URL, all at once, each doing ``plan``."""
    latencies: list[float] = []
    errors: list[str] = []
    async with _http_client(len(urls)) as http:
        t0 = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for url in urls:
                tg.start_soon(_session_calls, url, http, plan, latencies, errors)
        wall = time.perf_counter() - t0
    return {"latencies": latencies, "errors": errors, "wall": wall}


async def _episodes_run(handle: Any, n_episodes: int, plan: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Create ``n_episodes`` episodes (faults off), run their sessions all at once, delete them."""
    from mcpgym.evaluation.run.server_process import ControlClient

    async with ControlClient(handle.url, handle.token) as control:
        created: list[Any] = []

        async def create() -> None:
            created.append(await control.create_episode({"seed": WORLD_SEED, "apps": list(APPS), "faults": "none"}))

        async with anyio.create_task_group() as tg:
            for _ in range(n_episodes):
                tg.start_soon(create)
        try:
            return await _crowd([ep.mcp_url for ep in created], plan)
        finally:
            async with anyio.create_task_group() as tg:
                for ep in created:
                    tg.start_soon(control.delete, ep.episode_id)


def _summary(run: dict[str, Any]) -> dict[str, float | None]:
    lat = run["latencies"]
    return {
        "p50": percentile(lat, 50) if lat else None,
        "p99": percentile(lat, 99) if lat else None,
        "throughput": len(lat) / run["wall"] if run["wall"] > 0 else None,
    }


def _ms(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(median(vals) * 1e3, 3) if vals else None


def http_concurrency(settings: Settings) -> Figure:
    """Figure: ``concurrent_episodes`` HTTP episodes of ``calls_per_episode`` calls at once.

    Value: errors (transport exceptions and tool errors; faults are off, so every call of the
    cycle should succeed), summed over repetitions; target 0. p50/p99 per-call latency and
    throughput are reported. Baseline, in the same repetition: as many sessions of the
    ``MCPServer`` no-op server doing no-op calls at once (as many calls each; half as many in
    ``--quick``); the ratio is our p50 / its p50. The p50 of one episode alone is reported too. The client skips output-schema
    validation, as the evaluation runner does; one process drives every session.
    """
    item = workload_item()
    n, calls = settings.concurrent_episodes, settings.calls_per_episode
    reps = {"full": 3, "quick": 1}.get(settings.mode, 1)
    plan = [
        (tool, _cycle_args(tool, item)) for tool in (CONCURRENT_CYCLE[i % len(CONCURRENT_CYCLE)] for i in range(calls))
    ]
    # --quick halves the baseline's calls per session: its p50 is set by how many sessions
    # queue at once, which stays n; the full run matches the calls too.
    noop_calls = calls if settings.mode == "full" else max(1, calls // 2)
    noop_plan: list[tuple[str, dict[str, Any]]] = [("noop", {})] * noop_calls
    with ours_http(max_episodes=max(1000, 2 * n)) as handle, noop_http() as noop_url:

        async def main() -> list[dict[str, Any]]:
            runs = []
            for _ in range(reps):
                alone = await _episodes_run(handle, 1, plan)
                crowd = await _episodes_run(handle, n, plan)
                noop = await _crowd([noop_url] * n, noop_plan)
                runs.append({"alone": alone, "crowd": crowd, "noop": noop})
            return runs

        split = cpu_split()
        with pinned(split[1] if split else None):
            runs = anyio.run(main)
    errors = [e for r in runs for e in r["crowd"]["errors"] + r["alone"]["errors"]]
    ours = [_summary(r["crowd"]) for r in runs]
    base = [_summary(r["noop"]) for r in runs]
    alone = [_summary(r["alone"]) for r in runs]
    ratios = [o["p50"] / b["p50"] for o, b in zip(ours, base, strict=False) if o["p50"] and b["p50"]]
    return Figure(
        name="http_concurrency",
        title=f"{n} concurrent HTTP episodes x {calls} calls",
        value=float(len(errors)),
        unit="errors",
        target=0.0,
        op="<=",
        baseline=f"{n} MCPServer no-op sessions x {noop_calls} calls (p50)",
        ratio=round(median(ratios), 3) if ratios else None,
        details={
            "p50_ms": _ms([o["p50"] for o in ours]),
            "p99_ms": _ms([o["p99"] for o in ours]),
            "calls_per_second": round(median([o["throughput"] for o in ours if o["throughput"]]), 1),
            "noop_p50_ms": _ms([b["p50"] for b in base]),
            "noop_p99_ms": _ms([b["p99"] for b in base]),
            "noop_calls_per_second": round(median([b["throughput"] for b in base if b["throughput"]]), 1),
            "alone_p50_ms": _ms([a["p50"] for a in alone]),
            "noop_errors": sum(len(r["noop"]["errors"]) for r in runs),
            "noop_calls_per_session": noop_calls,
            "wall_s_per_rep": [round(r["crowd"]["wall"], 3) for r in runs],
            "calls_per_rep": n * calls,
            "reps": reps,
            "cycle": list(CONCURRENT_CYCLE),
            "faults": "none",
            "client_output_validation": False,
            "first_errors": errors[:5],
        },
    )


__all__ = ["CONCURRENT_CYCLE", "http_concurrency"]
