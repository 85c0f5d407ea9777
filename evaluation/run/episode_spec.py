"""Episodes by spec: what travels from a run's driver to the process that plays an episode.

A distributed executor never ships live objects (an agent with an HTTP client, a task with
compiled checks, a loaded fault profile): it ships an :class:`EpisodeSpec`, plain JSON, and the
worker rebuilds the episode from it with :func:`job_from_spec`: the agent with
``make_agent(agent_spec)``, the task from its JSON fields, the fault profile from its name or
inline object. The run-wide settings travel as the run's
:class:`~mcpgym.evaluation.run.config.RunConfig` (its JSON, without the control token).
:func:`run_spec` is how a worker plays one: the very :func:`run_episode` the local executor
runs, against the worker's own server.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mcpgym.evaluation.records.condition import EpisodeCondition
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.run.config import RunConfig
from mcpgym.evaluation.run.episode_runner import AgentEntry, EpisodeContext, EpisodeJob, HarnessFailure, run_episode


class EpisodeSpec(BaseModel):
    """One (agent, task, trial) as JSON.

    Attributes:
        agent: the agent spec (``careful``, ``openai:gpt-4o``, ``replay:PATH``...), rebuilt with
            ``mcpgym.evaluation.agents.make_agent``. agent_name: the name the driver knows it by
            (checked against the rebuilt agent's).
        task: the task's fields (``Task.model_dump(mode="json")``), so tasks outside the
            registry travel too. trial: 0-based trial index.
        fault_seed: the trial's fault seed. faults: a built-in profile name or the inline
            profile object; profile_name: its name.
    """

    model_config = ConfigDict(extra="forbid")

    agent: str
    agent_name: str
    task: dict[str, Any]
    trial: int = Field(ge=0)
    fault_seed: int = Field(ge=0)
    faults: str | dict[str, Any]
    profile_name: str
    condition: EpisodeCondition | None = None

    @property
    def key(self) -> tuple[str, str, int, EpisodeCondition | None]:
        """``(agent name, task id, trial, condition)``: a run records each key once."""
        return (self.agent_name, str(self.task.get("id", "")), self.trial, self.condition)


def spec_for(job: EpisodeJob) -> EpisodeSpec:
    """The spec of a planned job (the driver side)."""
    task = job.task
    dumped = task.model_dump(mode="json") if hasattr(task, "model_dump") else dict(task)
    return EpisodeSpec(
        agent=job.agent.spec,
        agent_name=job.agent.name,
        task=dumped,
        trial=job.trial,
        fault_seed=job.fault_seed,
        faults=job.faults,
        profile_name=job.profile_name,
        condition=job.condition,
    )


def _agent(spec: str, tool_exposure: str, agent_options: dict[str, Any] | None = None) -> Any:
    from mcpgym.evaluation.agents import SCRIPTED_AGENTS, make_agent

    if spec not in SCRIPTED_AGENTS and not spec.startswith("replay:"):
        from mcpgym.evaluation.llm import register_llm_agents

        register_llm_agents(replace=True, tool_exposure=tool_exposure, **(agent_options or {}))
    return make_agent(spec)


def job_from_spec(spec: EpisodeSpec | dict[str, Any], config: RunConfig) -> EpisodeJob:
    """Rebuild the job of ``spec`` in this process (the worker side).

    Raises:
        HarnessFailure: the agent spec is unknown here (e.g. a replay file missing on this
            node), its name differs from the driver's, or the task does not validate.
    """
    from mcpgym.evaluation.tasks import Task

    spec = EpisodeSpec.model_validate(spec)
    try:
        agent = _agent(spec.agent, config.tool_exposure, config.agent_options)
        task = Task.model_validate(spec.task)
    except (ValueError, KeyError) as exc:
        raise HarnessFailure(f"cannot rebuild the episode on this worker: {exc}") from None
    entry = AgentEntry(spec.agent, agent)
    if entry.name != spec.agent_name:
        raise HarnessFailure(
            f"agent spec {spec.agent!r} builds an agent named {entry.name!r} on this worker, not {spec.agent_name!r}"
        )
    return EpisodeJob(entry, task, spec.trial, spec.fault_seed, spec.faults, spec.profile_name, spec.condition)


async def run_spec(ctx: EpisodeContext, spec: EpisodeSpec | dict[str, Any]) -> Trajectory:
    """Play the episode of ``spec`` with :func:`run_episode` under the run's config
    (``ctx.config``; ``ctx.gold`` must hold its task's gold snapshot, see :func:`ensure_gold`)
    and return the scored trajectory.

    Raises:
        HarnessFailure: see :func:`job_from_spec` and :func:`run_episode`.
    """
    job = job_from_spec(spec, ctx.config)
    ensure_gold(ctx.gold, job.task)
    return await run_episode(ctx, job)


def ensure_gold(gold: dict[str, dict[str, Any]], task: Any) -> None:
    """Put ``task``'s gold snapshot (its oracle run, faults off) into ``gold`` once per task id.

    Raises:
        HarnessFailure: naming the task when its oracle fails.
    """
    if task.id in gold:
        return
    from mcpgym.evaluation.tasks import gold_snapshot

    try:
        gold[task.id] = gold_snapshot(task)
    except Exception as exc:  # noqa: BLE001 - reported with the task id
        raise HarnessFailure(
            f"the oracle of task {task.id!r} failed, so it has no gold state: {type(exc).__name__}: {exc}"
        ) from None


__all__ = ["EpisodeSpec", "ensure_gold", "job_from_spec", "run_spec", "spec_for"]
