"""An in-process episode harness: one agent, one task, a ``ToolInvoker``, no server.

It builds the episode exactly as the server does (``World(task.seed, task.apps)`` and a
``ToolInvoker`` with the fault profile and the trial's fault seed from
:func:`mcpgym.evaluation.tasks.fault_seed_for`), lets the agent call tools through the invoker,
and returns the :class:`mcpgym.evaluation.records.trajectory.Trajectory` with the call log, the fault
ledger and the initial, final and gold snapshots, ready for
:func:`mcpgym.evaluation.scoring.scorer.score_episode`. Tests and quick checks use it; the runner
(``mcpgym.evaluation.run.runner``) drives the same agents over MCP.
"""

from __future__ import annotations

from typing import Any

import anyio

from mcpgym.evaluation.agents.base import (
    Agent,
    AgentContext,
    AgentResult,
    CallLimitReached,
    CallResult,
    ToolInfo,
    run_agent,
    takes_user,
)
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import Trajectory, merge_user_turns, steps_from_call_log
from mcpgym.evaluation.scoring.scorer import EpisodeScores, score_episode
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from mcpgym.evaluation.tasks.model import Task
from mcpgym.evaluation.tasks.registry import fault_seed_for, gold_snapshot

_TOOL_INFOS: dict[str, ToolInfo] = {}


def tool_infos(specs: Any) -> list[ToolInfo]:
    """:class:`ToolInfo` of each spec (``name -> ToolSpec`` mapping), cached by tool name."""
    out = []
    for name, spec in specs.items():
        if name not in _TOOL_INFOS:
            _TOOL_INFOS[name] = ToolInfo.from_spec(spec)
        out.append(_TOOL_INFOS[name])
    return out


async def run_in_process(
    agent: Agent,
    task: Task,
    *,
    faults: str | dict[str, Any] | None = None,
    trial: int = 0,
    fault_seed: int | None = None,
    user_simulator: str = "scripted",
    elicitation: bool = False,
) -> Trajectory:
    """Run one episode of ``agent`` on ``task`` in this process.

    Args:
        agent: the agent.
        task: the task.
        faults: the fault profile (built-in name, file, or a mapping of ``FaultProfile``
            fields); ``task.faults`` wins when set; None means ``default``.
        trial: 0-based trial index (fixes the fault seed unless ``fault_seed`` is given).
        fault_seed: override of ``fault_seed_for(task, trial)``.
        user_simulator: the simulator answering the user's side (``scripted`` or
            ``PROVIDER:MODEL``, see :func:`mcpgym.evaluation.users.make_simulator`), seeded with the
            trial's fault seed; the agent gets the :class:`UserChannel` as ``context.user``.
        elicitation: answer tools' user questions in the call, as an MCP client with the
            elicitation capability does (default off: the agent meets ``user_input_required``).

    Returns:
        The trajectory (``scores`` not filled in; see :func:`score_in_process`).

    Raises:
        mcpgym.tools.faults.FaultProfileError: for an invalid profile;
        evaluation.tasks.OracleRuntimeError: when the task's gold run fails.
    """
    from mcpgym.kernel.world import World
    from mcpgym.tools.invoke import ToolInvoker

    profile = task.faults or faults or "default"
    seed = fault_seed_for(task, trial) if fault_seed is None else int(fault_seed)
    world = World(task.seed, task.apps)
    initial = world.snapshot()
    inv = ToolInvoker(world, profile, seed)
    tools = tool_infos(inv.specs)
    from mcpgym.evaluation.users import UserChannel, make_simulator
    from mcpgym.tools.elicit import call_asking

    channel = UserChannel(make_simulator(user_simulator, task.user, seed), lambda: len(inv.calls))
    takes = takes_user(agent)

    async def call(name: str, arguments: dict[str, Any]) -> CallResult:
        if len(inv.calls) >= task.max_calls:
            raise CallLimitReached(f"call budget of {task.max_calls} spent")
        spec = inv.specs.get(name) if isinstance(name, str) else None
        if elicitation and spec is not None and spec.user_check and isinstance(arguments, dict):
            out = await call_asking(inv, name, arguments, channel.answer_request)
        else:
            out = inv.call(name, arguments)
        return CallResult(is_error=out.is_error, payload=out.payload)

    try:
        context = AgentContext(trial=trial, world_seed=task.seed, fault_seed=seed, user=channel)
        result = await run_agent(agent, task, tools, call, context)
    except Exception as exc:  # noqa: BLE001 - an agent bug ends the episode, it is recorded
        result = AgentResult(final_message="", status=EpisodeStatus.ERRORED, error=f"{type(exc).__name__}: {exc}")
    return Trajectory(
        episode_id=f"{agent.name}:{task.id}:t{trial}",
        task_id=task.id,
        agent=agent.name,
        trial=trial,
        world_seed=task.seed,
        fault_seed=seed,
        fault_profile=inv.profile.name,
        apps=list(task.apps),
        app_versions={name: type(app).version for name, app in world.apps.items()},
        level=task.level,
        instruction=task.instruction,
        steps=merge_user_turns(steps_from_call_log(inv.calls), channel.turns),
        final_message=result.final_message,
        ledger=[e.model_dump(mode="json") for e in inv.ledger],
        initial_snapshot=initial,
        final_snapshot=world.snapshot(),
        gold_snapshot=gold_snapshot(task),
        feasible=task.feasible,
        status=result.status,
        stop_reason=result.stop_reason
        if result.error is None
        else f"{result.stop_reason or ''} {result.error}".strip(),
        tokens=result.tokens,
        invalid_calls=result.invalid_calls,
        metadata={
            "extra_checks": [c.model_dump(mode="json") for c in task.checks],
            "tags": list(task.tags),
            "user_channel": takes,
            "elicitation": elicitation,
        },
    )


def score_in_process(traj: Trajectory, task: Task, catalog: Catalog | None = None) -> EpisodeScores:
    """Score a trajectory with the task's checks (:func:`mcpgym.evaluation.scoring.scorer.score_episode`)."""
    from mcpgym.evaluation.agents.scripted import catalog_for

    return score_episode(traj, catalog or catalog_for(task.apps), checks=task.checks)


def run_episode(agent: Agent, task: Task, **kwargs: Any) -> Trajectory:
    """Synchronous :func:`run_in_process` (do not call from inside an event loop)."""
    return anyio.run(lambda: run_in_process(agent, task, **kwargs))


__all__ = ["run_episode", "run_in_process", "score_in_process", "tool_infos"]
