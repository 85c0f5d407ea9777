"""The complexmcp suite: start the apps once, run every (task, agent, trial), one episode at a time.

:func:`run_suite` is what ``mcpgym run --suite complexmcp --complexmcp DIR`` runs; the
trajectories are recorded into ``--out`` by the rules of a proxy record directory
(:func:`mcpgym.evaluation.proxy.record.hold_record_dir`), so ``mcpgym score OUT`` rescores
them. Agents are mcpgym's agent specs, plus ``complexmcp-replay``
(:class:`~mcpgym.evaluation.complexmcp.replay.TranscriptReplay`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from mcpgym.evaluation.complexmcp.apps import running_apps
from mcpgym.evaluation.complexmcp.install import SetupFolder
from mcpgym.evaluation.complexmcp.replay import AGENT_NAME, TranscriptReplay
from mcpgym.evaluation.complexmcp.run import DEFAULT_EPISODE_TIMEOUT, exposure, run_episode
from mcpgym.evaluation.complexmcp.sessions import list_app_tools, routes
from mcpgym.evaluation.complexmcp.tasks import ComplexTask, load_tasks


def make_complex_agent(spec: str) -> Any:
    """The agent of ``spec``: ``complexmcp-replay``, else :func:`mcpgym.evaluation.agents.make_agent`.

    Raises:
        ValueError: for a bad spec.
    """
    if spec == AGENT_NAME:
        return TranscriptReplay()
    from mcpgym.evaluation.agents import make_agent

    return make_agent(spec)


def select_tasks(tasks: list[ComplexTask], ids: list[str] | None, limit: int | None) -> list[ComplexTask]:
    """The tasks named by ``ids`` (ids or row numbers; None: all), then the first ``limit``.

    Raises:
        ValueError: an id no task has (the message lists the range).
    """
    chosen = tasks
    if ids:
        by_id = {t.id: t for t in tasks} | {str(t.index): t for t in tasks}
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise ValueError(
                f"no complexmcp task {unknown[0]!r}: tasks are complexmcp_00 .. complexmcp_{len(tasks) - 1:02d}"
            )
        chosen = [by_id[i] for i in ids]
    return chosen[:limit] if limit is not None else chosen


def run_suite(
    folder: Path,
    agents: list[str],
    *,
    faults: Any = "none",
    fault_seed: int = 0,
    trials: int = 1,
    tools: str = "list_all",
    task_ids: list[str] | None = None,
    limit: int | None = None,
    timeout: float = DEFAULT_EPISODE_TIMEOUT,
    on_episode: Callable[[Any], None] | None = None,
) -> list[Any]:
    """Start the apps of ``folder``, run the episodes, stop the apps; return the trajectories.

    Args:
        folder: a set-up folder (``mcpgym complexmcp setup --dir``).
        agents: agent specs. faults: a fault profile. tools: the tool mode
            (:func:`~mcpgym.evaluation.complexmcp.run.exposure`).
        task_ids, limit: which tasks (:func:`select_tasks`).
        on_episode: called with each trajectory as soon as it is scored (to record or print it).

    Raises:
        SetupError, AppsError, SessionError, ValueError: the message says which part failed.
    """
    setup = SetupFolder.open(folder)
    tasks = select_tasks(load_tasks(setup.tree), task_ids, limit)
    built = [(spec, make_complex_agent(spec)) for spec in agents]
    done: list[Any] = []
    with running_apps(folder) as apps:
        table = routes(setup.tree, anyio.run(list_app_tools, apps.urls))
        for task in tasks:
            exposure(tools, task, table)  # a bad mode fails before any episode
        for task in tasks:
            for name, agent in built:
                for trial in range(trials):
                    episode = functools.partial(
                        run_episode,
                        apps.urls,
                        table,
                        task,
                        name,
                        agent,
                        faults=faults,
                        fault_seed=fault_seed + trial,
                        trial=trial,
                        tools=tools,
                        timeout=timeout,
                    )
                    traj = anyio.run(episode)
                    done.append(traj)
                    if on_episode is not None:
                        on_episode(traj)
    return done
