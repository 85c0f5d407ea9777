"""The complexmcp suite: start the apps once, run every (task, agent, trial), one episode at a time.

:func:`run_suite` is what ``mcpgym run --suite complexmcp --complexmcp DIR`` runs; the
trajectories are recorded into ``--out`` by the rules of a proxy record directory
(:func:`mcpgym.evaluation.proxy.record.hold_record_dir`), so ``mcpgym score OUT`` rescores
them. Agents are mcpgym's agent specs, plus ``complexmcp-replay``
(:class:`~mcpgym.evaluation.complexmcp.replay.TranscriptReplay`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio

from mcpgym.evaluation.complexmcp.apps import APP_NAMES, running_apps
from mcpgym.evaluation.complexmcp.install import SetupFolder
from mcpgym.evaluation.complexmcp.replay import AGENT_NAME, TranscriptReplay
from mcpgym.evaluation.complexmcp.run import DEFAULT_EPISODE_TIMEOUT, exposure, make_classifier, run_episode
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


class OpenSuite:
    """The running apps of a set-up folder, their tool table and the tasks (:func:`open_suite`).

    Attributes:
        urls: app -> endpoint. table: the agent's tools. tasks: every task of the folder's tree.
        classifier: the tool classifier of every episode (its rows are the run's ``catalog.json``).
    """

    def __init__(self, urls: dict[str, str], table: dict[str, Any], tasks: list[ComplexTask]) -> None:
        self.urls, self.table, self.tasks = urls, table, tasks
        self.classifier = make_classifier()

    def run(
        self,
        task: ComplexTask,
        spec: str,
        agent: Any | None = None,
        *,
        faults: Any = "none",
        fault_seed: int = 0,
        trial: int = 0,
        tools: str = "list_all",
        timeout: float = DEFAULT_EPISODE_TIMEOUT,
    ) -> Any:
        """One episode of agent ``spec`` (built now unless ``agent`` is given) on ``task``: its scored trajectory."""
        episode = functools.partial(
            run_episode,
            self.urls,
            self.table,
            task,
            spec,
            agent if agent is not None else make_complex_agent(spec),
            faults=faults,
            fault_seed=fault_seed,
            trial=trial,
            tools=tools,
            timeout=timeout,
            classifier=self.classifier,
        )
        return anyio.run(episode)


@contextlib.contextmanager
def open_suite(folder: Path, apps: tuple[str, ...] = APP_NAMES) -> Iterator[OpenSuite]:
    """Start ``apps`` of the set-up ``folder`` (all seven by default) for the block.

    Raises:
        SetupError, AppsError, ValueError: the folder is not set up, an app did not start,
            or the tasks cannot be read.
    """
    setup = SetupFolder.open(folder)
    tasks = load_tasks(setup.tree)
    with running_apps(folder, apps) as running:
        table = routes(setup.tree, anyio.run(list_app_tools, running.urls))
        yield OpenSuite(running.urls, table, tasks)


def serve_local_agents(stack: contextlib.ExitStack, agents: list[Any], context: int | None) -> None:
    """Start the bundled model's server in ``stack`` and point every ``local:`` agent of
    ``agents`` at it, as ``mcpgym run`` does (nothing when there is none).

    Raises:
        RuntimeError: the model server did not start (the message says why).
    """
    from mcpgym.evaluation.llm.local_agent import local_agents

    local = local_agents(agents)
    if not local:
        return
    from mcpgym.evaluation.llm.local_model import DEFAULT_CONTEXT, ModelUnavailable, serve_local_model
    from mcpgym.evaluation.run.launch import LOCAL_MODEL_THREADS

    window = context or DEFAULT_CONTEXT
    try:
        url = stack.enter_context(serve_local_model(context=window, threads=LOCAL_MODEL_THREADS))
    except (ModelUnavailable, RuntimeError, OSError) as exc:
        raise RuntimeError(f"the local model server did not start: {exc}") from None
    for agent in local:
        agent.attach(url, context=window, threads=LOCAL_MODEL_THREADS)


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
    on_episode: Callable[[Any, Any], None] | None = None,
    model_context: int | None = None,
) -> list[Any]:
    """Start the apps of ``folder``, run the episodes, stop the apps; return the trajectories.

    Args:
        folder: a set-up folder (``mcpgym complexmcp setup --dir``).
        agents: agent specs. faults: a fault profile. tools: the tool mode
            (:func:`~mcpgym.evaluation.complexmcp.run.exposure`).
        task_ids, limit: which tasks (:func:`select_tasks`).
        on_episode: called with each trajectory and the suite's tool classifier as soon as
            the trajectory is scored (to record or print it).
        model_context: the context window of the model server started for ``local:`` agents
            (default :data:`~mcpgym.evaluation.llm.local_model.DEFAULT_CONTEXT`).

    Raises:
        SetupError, AppsError, SessionError, ValueError: the message says which part failed.
    """
    built = [(spec, make_complex_agent(spec)) for spec in agents]
    with open_suite(folder) as suite, contextlib.ExitStack() as stack:
        serve_local_agents(stack, [agent for _, agent in built], model_context)
        tasks = select_tasks(suite.tasks, task_ids, limit)
        for task in tasks:
            exposure(tools, task, suite.table)  # a bad mode fails before any episode
        done: list[Any] = []
        for task in tasks:
            for name, agent in built:
                for trial in range(trials):
                    traj = suite.run(
                        task,
                        name,
                        agent,
                        faults=faults,
                        fault_seed=fault_seed + trial,
                        trial=trial,
                        tools=tools,
                        timeout=timeout,
                    )
                    done.append(traj)
                    if on_episode is not None:
                        on_episode(traj, suite.classifier)
    return done
