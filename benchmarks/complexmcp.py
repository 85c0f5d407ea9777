"""The complexmcp figure: ComplexMCP's 47 human transcripts replayed against their own apps,
through mcpgym / the way their harness calls (a new MCP session per call).

- ``complexmcp_replay``: for each task, the transcript's calls (those of the seven apps) are
  made twice on fresh sessions of the task's seed, interleaved task by task: through mcpgym
  (the replay agent, mcpgym's proxy and the gateway's open connections: one MCP session per
  app for the whole episode) and as ``client/agent.py`` does (``async with client:`` around
  every ``call_tool``: connect, initialise, call, close). Only the calls are timed, not the
  logins and logouts both make alike. A third pass makes the calls on the open sessions without
  the proxy: the apps' own floor (each Light* app itself opens a new session to LightSystem's
  clock on every call), reported in the details. The figure is their time / ours over all tasks (median
  over repetitions); target at least 10x (issue 40). Unavailable (said loudly) without a
  set-up folder in ``$MCPGYM_COMPLEXMCP_DIR`` (``mcpgym complexmcp setup --dir DIR``).

``quick`` and ``full`` replay all 47 tasks; ``tiny`` two.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio

from mcpgym.benchmarks.harness import Figure, Settings, median

TARGET = 10.0
"""At least 10x their way of calling (issue 40)."""
NAME = "complexmcp_replay"
TITLE = "ComplexMCP's 47 transcripts replayed on their apps: their per-call sessions / mcpgym"


class _TimedReplay:
    """The transcript replay agent, timing its calls (the episode's call phase)."""

    def __init__(self) -> None:
        from mcpgym.evaluation.complexmcp.replay import TranscriptReplay

        self.inner = TranscriptReplay()
        self.name = self.inner.name
        self.seconds = 0.0
        self.calls = 0

    async def run(self, task: Any, tools: Any, call: Any, context: Any = None) -> Any:
        async def timed(name: str, arguments: dict[str, Any]) -> Any:
            t0 = time.perf_counter()
            try:
                return await call(name, arguments)
            finally:
                self.seconds += time.perf_counter() - t0
                self.calls += 1

        from mcpgym.evaluation.agents.base import NO_CONTEXT

        return await self.inner.run(task, tools, timed, context or NO_CONTEXT)


async def _their_way(suite: Any, task: Any, per_call_session: bool = True) -> tuple[float, int]:
    """The task's transcript calls, each in a new MCP session (their harness), or with
    ``per_call_session=False`` on the episode's open sessions without mcpgym's proxy (the apps'
    own floor): (seconds, calls)."""
    from mcp import Client

    from mcpgym.evaluation.complexmcp.replay import transcript_calls
    from mcpgym.evaluation.complexmcp.sessions import SESSION_ARG, EpisodeApps

    episode = EpisodeApps(suite.urls, suite.table, task.seed, task.apps)
    calls, _ = transcript_calls(task.transcript)
    seconds, made = 0.0, 0
    async with episode.connect():
        await episode.login()
        try:
            for key, arguments in calls:
                route = suite.table.get(key)
                if route is None:
                    continue  # not listed: the replay agent does not make it either
                if route.app not in episode.sessions:
                    made += 1  # their harness answers "not logged into" itself: no session, no time
                    continue
                args = {**arguments, SESSION_ARG: episode.sessions[route.app]}
                t0 = time.perf_counter()
                if per_call_session:
                    with anyio.fail_after(60):
                        async with Client(suite.urls[route.app], mode="legacy") as client:
                            await client.session.call_tool(route.tool, args)
                else:
                    await episode.call(key, arguments)
                seconds += time.perf_counter() - t0
                made += 1
        finally:
            await episode.logout()
    return seconds, made


def complexmcp_replay(settings: Settings) -> Figure:
    """Figure: the 47 transcripts' calls, their way (a session per call) / through mcpgym."""
    folder = os.environ.get("MCPGYM_COMPLEXMCP_DIR")
    if not folder or not (Path(folder) / "complexmcp-setup.json").is_file():
        return Figure(
            name=NAME,
            title=TITLE,
            value=None,
            unit="x mcpgym",
            target=TARGET,
            op=">=",
            available=False,
            note="no ComplexMCP setup: mcpgym complexmcp setup --dir DIR, then MCPGYM_COMPLEXMCP_DIR=DIR",
        )
    from mcpgym.evaluation.complexmcp.apps import APP_NAMES, SYSTEM_APP
    from mcpgym.evaluation.complexmcp.suite import open_suite
    from mcpgym.evaluation.complexmcp.tasks import load_tasks

    reps = 1 if settings.mode != "full" else 3
    every = load_tasks(Path(folder) / "tree")
    tiny = settings.mode == "tiny"
    # tiny: two tasks, and only the apps they use started (every app otherwise)
    apps = tuple(a for a in APP_NAMES if a == SYSTEM_APP or any(a in t.apps for t in every[:2])) if tiny else APP_NAMES
    ratios, ours_ms, theirs_ms, floor_ms = [], [], [], []
    calls = 0
    with open_suite(Path(folder), apps) as suite:
        tasks = suite.tasks[:2] if tiny else suite.tasks
        for _ in range(reps):
            ours = theirs = floor = 0.0
            calls = 0
            for task in tasks:
                agent = _TimedReplay()
                suite.run(task, agent.name, agent)
                seconds, made = anyio.run(_their_way, suite, task)
                if made != agent.calls:
                    raise RuntimeError(f"{task.id}: {agent.calls} calls through mcpgym, {made} their way")
                direct, _ = anyio.run(_their_way, suite, task, False)
                ours, theirs, floor, calls = ours + agent.seconds, theirs + seconds, floor + direct, calls + made
            ratios.append(theirs / ours)
            ours_ms.append(1e3 * ours / calls)
            theirs_ms.append(1e3 * theirs / calls)
            floor_ms.append(1e3 * floor / calls)
    value = median(ratios)
    return Figure(
        name=NAME,
        title=TITLE,
        value=round(value, 2),
        unit="x mcpgym",
        target=TARGET,
        op=">=",
        baseline="the same calls on the same apps, a new MCP session per call (client/agent.py's way)",
        ratio=round(value, 2),
        note=(
            f"{calls} calls of {len(tasks)} tasks: mcpgym {median(ours_ms):.1f} ms a call, theirs "
            f"{median(theirs_ms):.1f} ms, the apps' floor (open sessions, no proxy) {median(floor_ms):.1f} ms"
        ),
        details={
            "calls": calls,
            "tasks": len(tasks),
            "mcpgym_ms_per_call": round(median(ours_ms), 2),
            "their_ms_per_call": round(median(theirs_ms), 2),
            "apps_floor_ms_per_call": round(median(floor_ms), 2),
            "ratio_per_rep": [round(r, 3) for r in ratios],
        },
    )


__all__ = ["complexmcp_replay"]
