"""A run from its :class:`~mcpgym.evaluation.run.config.RunConfig`: what ``mcpgym run`` does,
as a Python API (the command is a thin adapter over :func:`launch`).

:func:`plan` resolves the config into tasks and agents and checks it before anything is
written (a bad suite, task, file, profile, agent or option combination raises an
:class:`~mcpgym.kernel.exceptions.InputError` naming it); :func:`launch` plans, then runs it
with :func:`mcpgym.evaluation.run.runner.run_evaluation`.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpgym.evaluation.llm.local_model import DEFAULT_THREADS
from mcpgym.evaluation.run.config import CORE_DEFAULT_LIMIT, Executor, RunConfig
from mcpgym.evaluation.run.episode_runner import AgentEntry
from mcpgym.kernel.exceptions import InputError, MCPGymError, ServiceError
from mcpgym.kernel.shorten import short
from mcpgym.kernel.wording import counted

if TYPE_CHECKING:
    from mcpgym.evaluation.run.runner import RunResult
    from mcpgym.evaluation.run.server_process import ServerStart
    from mcpgym.evaluation.tasks import Task

MAX_EPISODES = 1_000_000
"""Most episodes one run plans (tasks x trials x agents): the run lists every episode up front,
so a mistyped ``--trials 10000000000`` would hang filling memory; a million episodes is
already about 110 GB of trajectories."""

LOCAL_MODEL_THREADS = DEFAULT_THREADS
"""llama.cpp CPU threads of the model server a run starts for its ``local:`` agents when
``--model-threads`` is not given (measured: ``benchmarks/local_generation.py``)."""

LLM_FLAGS = "--max-turns, --max-output-tokens, --request-timeout, --temperature, --seed and --agent-option"
"""The flags that fill ``RunConfig.agent_options`` (named in the error of a run without LLM agents)."""


def default_suite(names: list[str], core_size: int) -> str:
    """The suite of a run that names none: ``core`` while it has at most
    :data:`~mcpgym.evaluation.run.config.CORE_DEFAULT_LIMIT` tasks, else ``smoke``."""
    if core_size <= CORE_DEFAULT_LIMIT or "smoke" not in names:
        return "core"
    return "smoke"


def _input_error(exc: BaseException) -> MCPGymError:
    """``exc`` as an :class:`InputError` (an :class:`MCPGymError` as it is); a ``KeyError``'s
    message without the quotes ``str()`` adds."""
    if isinstance(exc, MCPGymError):
        return exc
    if isinstance(exc, KeyError) and exc.args and isinstance(exc.args[0], str):
        return InputError(exc.args[0])
    return InputError(str(exc))


def load_task_files(files: list[str]) -> list[Task]:
    """The tasks of ``--tasks`` files, in order.

    Raises:
        InputError: for a malformed file (naming the file, task and field) or an id found in
            two files.
    """
    from mcpgym.evaluation import tasks as registry

    out: list[Task] = []
    seen: dict[str, str] = {}
    try:
        for f in files:
            for t in registry.load_file(f):
                if t.id in seen:
                    raise InputError(f"{f}: task {t.id!r}: field 'id': duplicate id (also in {seen[t.id]})")
                seen[t.id] = f
                out.append(t)
    except (KeyError, ValueError) as exc:
        raise _input_error(exc) from None
    return out


def select_tasks(config: RunConfig) -> tuple[list[Task], str | None]:
    """The tasks of a config and the suite they came from: the ``task_files``' tasks (the
    ``task_ids`` pick among them), the ``task_ids`` (from any suite), or a suite (default:
    :func:`default_suite`).

    Raises:
        InputError: for a suite together with task files, an unknown suite or task id, or a
            malformed task file.
    """
    from mcpgym.evaluation import tasks as registry

    if config.task_files:
        if config.suite:
            raise InputError("--tasks FILE and --suite are exclusive: give one")
        found = load_task_files(config.task_files)
        if not config.task_ids:
            return found, None
        by_id = {t.id: t for t in found}
        missing = [t for t in config.task_ids if t not in by_id]
        if missing:
            raise InputError(
                f"task {missing[0]!r} is not in {', '.join(config.task_files)}; its tasks: "
                f"{', '.join(by_id) or '(none)'}"
            )
        return [by_id[t] for t in config.task_ids], None
    try:
        if config.task_ids:
            return [registry.get_task(t) for t in config.task_ids], config.suite
        names = registry.suite_names()
        name = config.suite or default_suite(names, len(registry.load_tasks("core")))
        if name not in names:
            raise InputError(f"unknown suite {short(name)}; suites: {', '.join(names)}")
        return registry.load_tasks(name), name
    except (KeyError, ValueError) as exc:
        raise _input_error(exc) from None


def _is_llm(spec: str) -> bool:
    from mcpgym.evaluation.agents import SCRIPTED_AGENTS

    return spec not in SCRIPTED_AGENTS and spec != "human" and not spec.startswith("replay:")


@dataclass
class RunPlan:
    """A checked run: its config, tasks, the suite they came from and the agents.

    Attributes:
        config: the config (``out`` filled in, ``token`` from ``$MCPGYM_TOKEN`` when not given).
        tasks: the tasks. suite: the suite they came from (None: picked by id or from files).
        agents: the agents with the specs they were made from.
    """

    config: RunConfig
    tasks: list[Task]
    suite: str | None
    agents: list[AgentEntry]

    def run(self, *, server_start: ServerStart | None = None, console: Any = None) -> RunResult:
        """Run the plan with :func:`~mcpgym.evaluation.run.runner.run_evaluation`.

        Args:
            server_start: a server started early (stopped when not used). console: a ``rich``
                console for the progress bar (default: stderr).

        With ``local:`` agents, the model server is started first (``config.model_context``
        tokens of context) and ended after the run (:mod:`mcpgym.evaluation.llm.local_agent`).

        Raises:
            RunError, ServerError: see ``run_evaluation``. ServiceError: the local model server
                did not start.
        """
        from mcpgym.evaluation.llm.local_agent import local_agents
        from mcpgym.evaluation.run.runner import run_evaluation

        local = local_agents(self.agents)
        if not local:
            return run_evaluation(self.tasks, self.agents, self.config, server_start=server_start, console=console)
        from mcpgym.evaluation.llm.local_model import DEFAULT_CONTEXT, ModelUnavailable, serve_local_model

        context = self.config.model_context or DEFAULT_CONTEXT
        threads = self.config.model_threads or LOCAL_MODEL_THREADS
        path_model = path_model_of(self.config)
        with contextlib.ExitStack() as stack:
            urls: dict[str, str] = {}
            for agent in local:  # one server per model the run's local: agents name
                model = local_model_of(agent.model, path_model)
                if model.name not in urls:
                    try:
                        urls[model.name] = stack.enter_context(
                            serve_local_model(context=context, threads=threads, model=model)
                        )
                    except (ModelUnavailable, RuntimeError, OSError, ValueError) as exc:
                        if server_start is not None:
                            server_start.cancel()
                        raise ServiceError(f"the local model server of {model.name} did not start: {exc}") from None
                agent.attach(urls[model.name], context=context, threads=threads, model=model)
            return run_evaluation(self.tasks, self.agents, self.config, server_start=server_start, console=console)


def path_model_of(config: RunConfig) -> Any:
    """The :class:`~mcpgym.evaluation.llm.local_models.PathModel` of ``config.model_path``
    (None without one).

    Raises:
        InputError: the file is missing or no readable GGUF.
    """
    if config.model_path is None:
        return None
    from mcpgym.evaluation.llm.local_models import model_from_path

    return model_from_path(Path(config.model_path))


def local_model_of(name: str, path_model: Any) -> Any:
    """The model ``local:NAME`` names (a row, or ``path_model`` by its name).

    Raises:
        InputError: an unknown name (the known ones listed).
    """
    from mcpgym.evaluation.llm.local_model import check_local_model

    try:
        return check_local_model(name, path_model)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def plan(config: RunConfig) -> RunPlan:
    """Check ``config`` and resolve its tasks and agents (nothing is written).

    Raises:
        InputError: a bad option combination (``--ray-address`` without ``--executor ray``,
            ``--server`` without a token, LLM options without an LLM agent, ``--model-context``
            without a ``local:`` agent (not on a resume: there they may be the run's own, kept
            for its other agents; :func:`~mcpgym.evaluation.run.config.resume_config` checks
            what the command line gives), ``local:`` agents on Ray...), an unknown ``local:``
            model, a ``local:`` agent whose model or runtime is not installed, fault profile,
            suite, task, task file or agent spec; too many episodes (:data:`MAX_EPISODES`).
        RunError: Ray is not installed for ``--executor ray``.
    """
    from mcpgym.evaluation.agents import SCRIPTED_AGENTS, make_agent
    from mcpgym.evaluation.run.conditions import axis_values, conditions_of
    from mcpgym.tools.faults import load_profile

    if config.resume and config.out is None:
        raise InputError("--resume needs --out DIR (the run to continue)")
    if config.executor is Executor.local and (config.ray_address or config.ray_workers):
        raise InputError("--ray-address and --ray-workers need --executor ray")
    if config.executor is Executor.ray and config.server_url:
        raise InputError("--server and --executor ray exclude each other: each Ray worker runs its own server")
    if config.executor is Executor.ray:
        from mcpgym.evaluation.run.ray_executor import import_ray

        import_ray()
    token = config.token or os.environ.get("MCPGYM_TOKEN")
    if config.server_url and not token:
        raise InputError("--server needs --token (or $MCPGYM_TOKEN)")
    for profile in axis_values(config.faults, "--faults"):
        load_profile(profile)  # FaultProfileError (an InputError) names the profile
    tasks, suite = select_tasks(config)
    if not tasks:
        files = config.task_files
        raise InputError(
            "no tasks to run" + (f" (the file{'s hold' if len(files) > 1 else ' holds'} none)" if files else "")
        )
    specs = list(config.agents or SCRIPTED_AGENTS)
    conditions = len(conditions_of(config.condition_axis()))
    planned = len(tasks) * config.trials * len(specs) * conditions
    if planned > MAX_EPISODES:
        raise InputError(
            f"{counted(len(tasks), 'task')} x {counted(config.trials, 'trial')} x {counted(len(specs), 'agent')} "
            + (f"x {counted(conditions, 'condition')} " if conditions > 1 else "")
            + f"is {planned:,} episodes; "
            f"a run holds at most {MAX_EPISODES:,} (give fewer --trials, or split the run)"
        )
    local = [s for s in specs if s.partition(":")[0].strip().lower() == "local" and ":" in s]
    if local:
        if config.executor is Executor.ray:
            raise InputError(
                "local: agents need --executor local: the run serves their model on this machine's loopback"
            )
        check_local_models(config, local)
    elif not config.resume:  # resumed: the run's own (resume_config)
        for given, flag in (
            (config.model_context, "--model-context"),
            (config.model_threads, "--model-threads"),
            (config.model_path, "--model-path"),
        ):
            if given is not None:
                raise InputError(f"{flag} sets the model server of local: agents, and this run has none")
    if any(_is_llm(s) for s in specs):
        from mcpgym.evaluation.llm import register_llm_agents  # the openai:/anthropic: prefixes

        register_llm_agents(replace=True, tool_exposure=config.tool_exposure, **config.agent_options)
    elif config.agent_options and not config.resume:
        raise InputError(f"{LLM_FLAGS} set LLM agents, and this run has none")
    try:
        agents = [AgentEntry(spec, make_agent(spec)) for spec in specs]
    except (KeyError, ValueError) as exc:
        raise _input_error(exc) from None
    out = config.out or Path("runs") / time.strftime("run-%Y%m%d-%H%M%S", time.gmtime())
    config = config.model_copy(update={"out": out, "token": token, "suite": suite})
    return RunPlan(config=config, tasks=tasks, suite=suite, agents=agents)


def check_local_models(config: RunConfig, specs: list[str]) -> None:
    """Check the models of the ``local:`` agent ``specs``: every name known (a row, or the
    ``--model-path`` file's name), said before whether anything is installed (installing would
    not help a mistyped one); the context within each model's own; pieces and llama.cpp installed.

    Raises:
        InputError: naming the spec and what is wrong or what to install.
    """
    from mcpgym.evaluation.llm.local_model import (
        DEFAULT_CONTEXT,
        ModelUnavailable,
        check_available,
        check_context,
        context_limit,
    )

    path_model = path_model_of(config)
    models = [(spec, local_model_of(spec.partition(":")[2].strip(), path_model)) for spec in specs]
    for spec, model in models:
        try:
            check_context(config.model_context or DEFAULT_CONTEXT, context_limit(model))
        except ValueError as exc:
            raise InputError(f"--model-context for {spec}: {exc}") from None
    for spec, model in models:
        try:
            check_available(model)
        except ModelUnavailable as exc:
            raise InputError(f"{spec}: {exc}") from None


def launch(config: RunConfig, *, server_start: ServerStart | None = None, console: Any = None) -> RunResult:
    """Plan and run ``config`` (:func:`plan`, then
    :func:`~mcpgym.evaluation.run.runner.run_evaluation`); see :class:`RunPlan` for the checks.

    Args:
        config: the run. server_start: a server started early (stopped when not used).
        console: a ``rich`` console for the progress bar (default: stderr).

    Raises:
        InputError: see :func:`plan`. RunError: see ``run_evaluation``.
    """
    try:
        checked = plan(config)
    except BaseException:
        if server_start is not None:
            server_start.cancel()
        raise
    return checked.run(server_start=server_start, console=console)


__all__ = [
    "LLM_FLAGS",
    "LOCAL_MODEL_THREADS",
    "check_local_models",
    "local_model_of",
    "path_model_of",
    "MAX_EPISODES",
    "RunPlan",
    "default_suite",
    "launch",
    "load_task_files",
    "plan",
    "select_tasks",
]
