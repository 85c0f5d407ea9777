"""One episode over HTTP: create it, let the agent work through MCP, read the truth, score it.

:func:`run_episode` is what :mod:`mcpgym.evaluation.run.runner` runs for every (agent, task, trial):

1. ``POST /control/episodes`` ``{"seed", "apps", "faults", "fault_seed"}`` -> ``mcp_url``;
2. ``mcp.Client`` on ``mcp_url`` (streamable HTTP), every tool listed as a ``ToolInfo``
   (kind from ``_meta["mcpgym/kind"]``), the agent run with an :class:`EpisodeCaller` under a
   wall-clock timeout;
3. ``GET`` calls, ledger, snapshot and initial; ``DELETE`` the episode (always);
4. the :class:`Trajectory` built (steps from the server's call log, gold snapshot from the
   task) and scored with :func:`mcpgym.evaluation.scoring.scorer.score_episode` and the task's checks.

Status of the trajectory: ``errored`` when the agent raised, the MCP session failed or a
call met a transport failure; ``limit`` when the timeout or the call budget stopped it;
otherwise what the agent reported.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcpgym.evaluation.agents.base import record_refused_call
from mcpgym.evaluation.llm.replies import raw_text
from mcpgym.evaluation.records.condition import EpisodeCondition
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import (
    MessageStep,
    Step,
    TokenUsage,
    ToolCallStep,
    Trajectory,
    UserTurnStep,
    merge_user_turns,
    steps_from_call_log,
)
from mcpgym.evaluation.run.config import RunConfig
from mcpgym.evaluation.run.server_process import ControlClient, ServerError
from mcpgym.evaluation.scoring.scorer import score_episode
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from mcpgym.evaluation.tasks.model import Task
from mcpgym.kernel.errors import ErrorPayload
from mcpgym.kernel.exceptions import InvalidValue, MCPGymError

SERVER_CALL = object()
"""Marker in :attr:`EpisodeCaller.timeline`: a call forwarded to the server (its step comes from the call log)."""


@dataclass
class AgentEntry:
    """One agent of a run: the spec it was made from (``careful``, ``openai:gpt-4o``...) and the agent."""

    spec: str
    agent: Any

    @property
    def name(self) -> str:
        """The agent's name (trajectories group by it)."""
        return str(getattr(self.agent, "name", self.spec))


@dataclass
class EpisodeJob:
    """One (agent, task, trial[, condition]) to run, with its fault set-up resolved.

    Attributes:
        faults: the ``faults`` value sent to the control API (a built-in name or an inline
            profile object); profile_name: its name, recorded in the trajectory.
        condition: the run's condition it is played at (None: a run without condition axes);
            its ``tools`` is the episode's tool exposure, recorded in the trajectory.
    """

    agent: AgentEntry
    task: Task
    trial: int
    fault_seed: int
    faults: str | dict[str, Any]
    profile_name: str
    condition: EpisodeCondition | None = None

    @property
    def label(self) -> str:
        """``agent/task/trial N`` (and `` [faults=F, tools=T]`` in a condition), for messages."""
        where = f" [{self.condition.label}]" if self.condition is not None else ""
        return f"{self.agent.name}/{self.task.id}/trial {self.trial}{where}"

    def tool_exposure(self, run_exposure: str) -> str:
        """The episode's tool exposure: its condition's, else the run's ``run_exposure``."""
        return self.condition.tools if self.condition is not None else run_exposure


class HarnessFailure(MCPGymError):
    """An episode the harness could not run to the end (not written; ``--resume`` re-runs it)."""


@dataclass
class EpisodeContext:
    """What every episode of a run shares.

    Attributes:
        control: the control API client. http: one ``httpx2.AsyncClient`` shared by every MCP
            session (the SDK would otherwise build a TLS context per session), or None.
        config: the run's :class:`~mcpgym.evaluation.run.config.RunConfig`; an episode reads
            its settings there (``episode_timeout``, ``k``, ``mcp_mode``, ``tool_exposure``,
            ``validate_output``, ``user_simulator``...). ``validate_output`` lets the SDK client
            check every successful result against the tool's output schema
            (``ClientSession.validate_tool_result``); off by default: it compiles each tool's
            schema again in every session and then cost about 0.25 s of CPU per episode, more
            than the server's whole work (the server's own tests check its output schemas).
            ``user_simulator`` plays the user (``scripted`` or ``PROVIDER:MODEL``, see
            :func:`mcpgym.evaluation.users.make_simulator`): it answers the server's
            elicitations (the MCP client declares the capability) and the agent's ``ask_user``
            questions, seeded with the episode's fault seed.
        catalog: for the scorer. gold: task id -> gold snapshot.
        tool_info, call_result: the agents' ``ToolInfo`` and ``CallResult`` types.
        limit_error: the exception the call function raises once the call budget is spent
            (``mcpgym.evaluation.agents.CallLimitReached``), or None to answer with an error instead.
    """

    control: ControlClient
    config: RunConfig
    catalog: Catalog
    gold: dict[str, dict[str, Any]]
    tool_info: type
    call_result: type
    limit_error: type[BaseException] | None = None
    http: Any = None
    initial: dict[tuple[Any, ...], dict[str, Any]] = field(default_factory=dict)
    """(apps, world seed) -> the initial snapshot, fetched from the server once and shared."""


def result_payload(result: Any) -> dict[str, Any]:
    """The JSON payload of a ``CallToolResult``: its structured content, else its text
    content parsed as JSON (``{"result": value}`` for a non-object, ``{"text": ...}`` for
    text that is not JSON)."""
    if isinstance(result.structured_content, dict):
        return result.structured_content
    text = "\n".join(getattr(c, "text", "") for c in result.content or [] if getattr(c, "type", "") == "text")
    try:
        data = json.loads(text)
    except ValueError:
        return {"text": text}
    return data if isinstance(data, dict) else {"result": data}


def _error(result_type: type, code: str, message: str) -> Any:
    return result_type(
        is_error=True,
        payload=ErrorPayload(code=code, message=message).result(),
    )


class EpisodeCaller:
    """The call function of one episode: ``await caller(name, arguments) -> CallResult``, and
    the recorder of the agent's actions in order.

    Never lets a transport problem reach the agent as an exception: an exception from the
    MCP client is remembered in ``transport_error`` (the episode becomes ``errored``) and
    answered, then and for every later call, with an ``unavailable`` error. Arguments that
    are not a JSON object are refused locally (``invalid_argument``) and recorded as an
    invalid step; they never reach the server. Once ``max_calls`` calls were made,
    ``limit_error`` is raised (the agents' ``CallLimitReached``, which they turn into status
    ``limit``), or, without one, an error is answered; ``limit_hit`` is set either way.

    The order of the episode is kept in ``timeline``: a :data:`SERVER_CALL` marker for each
    call forwarded to the server, and the steps the agent handed to :meth:`record` (its
    messages, the calls it refused itself) or that this caller refused. :meth:`steps` merges
    it with the server's call log.
    """

    def __init__(
        self, client: Any, max_calls: int | None, result_type: type, limit_error: type[BaseException] | None = None
    ) -> None:
        self.client = client
        self.max_calls = max_calls
        self.result_type = result_type
        self.limit_error = limit_error
        self.calls = 0
        self.limit_hit = False
        self.transport_error: str | None = None
        self.timeline: list[Any] = []

    def record(self, step: MessageStep | ToolCallStep | UserTurnStep) -> None:
        """Keep an agent action that the server does not log (a model message, an ``ask_user``
        turn, or a call the agent refused; ``step.step`` is then None) at its place in the
        episode.

        Raises:
            TypeError: for anything else than a :class:`MessageStep`, a :class:`UserTurnStep`
                or a :class:`ToolCallStep` without a call-log number.
        """
        if isinstance(step, (MessageStep, UserTurnStep)) or (isinstance(step, ToolCallStep) and step.step is None):
            self.timeline.append(step)
            return
        raise TypeError("record() takes a MessageStep, a UserTurnStep or a ToolCallStep with step=None")

    def steps(self, call_log: list[Any]) -> list[Step]:
        """Every step of the episode in order: the recorded ones, and the server's call log
        (``/calls`` records) in place of the markers of forwarded calls. Log records left over
        (a call whose answer was lost with the connection) come last, in log order."""
        logged = iter(steps_from_call_log(call_log))
        out: list[Step] = []
        for item in self.timeline:
            if item is SERVER_CALL:
                nxt = next(logged, None)
                if nxt is not None:
                    out.append(nxt)
            else:
                out.append(item)
        out.extend(logged)
        return out

    async def __call__(self, name: str, arguments: Any = None) -> Any:
        if self.transport_error is not None:
            return _error(
                self.result_type, "unavailable", f"the connection to the MCP server failed: {self.transport_error}"
            )
        if self.max_calls is not None and self.calls >= self.max_calls:
            self.limit_hit = True
            message = f"call budget of {self.max_calls} spent"
            if self.limit_error is not None:
                raise self.limit_error(message)
            return _error(self.result_type, "unavailable", message)
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict) or not isinstance(name, str):
            refused = _error(
                self.result_type, "invalid_argument", "the tool name must be a string and the arguments a JSON object"
            )
            record_refused_call(
                self.timeline.append,
                name if isinstance(name, str) else repr(name)[:200],
                refused.payload,
                raw_arguments=raw_text(arguments),
            )
            return refused
        self.calls += 1
        self.timeline.append(SERVER_CALL)
        try:
            result = await self.client.call_tool(name, arguments)
        except Exception as exc:  # noqa: BLE001 - whatever the transport raises ends the episode as errored
            self.transport_error = f"{type(exc).__name__}: {exc}"
            return _error(
                self.result_type, "unavailable", f"the connection to the MCP server failed: {self.transport_error}"
            )
        return self.result_type(is_error=bool(result.is_error), payload=result_payload(result))


def tool_infos(tools: list[Any], info_type: type) -> list[Any]:
    """``ToolInfo`` of listed MCP tools: ``info_type.from_mcp`` when it has one, else kind from
    ``_meta["mcpgym/kind"]``, then from the read-only hint (``read``/``write``)."""
    if hasattr(info_type, "from_mcp"):
        return [info_type.from_mcp(t) for t in tools]
    out = []
    for t in tools:
        kind = (t.meta or {}).get("mcpgym/kind")
        if kind is None:
            kind = "read" if (t.annotations and t.annotations.read_only_hint) else "write"
        out.append(
            info_type(name=t.name, description=t.description or "", input_schema=t.input_schema or {}, kind=kind)
        )
    return out


async def _skip_validation(name: str, result: Any) -> None:
    """Stands in for ``ClientSession.validate_tool_result`` when output validation is off."""


async def _list_tools(client: Any) -> list[Any]:
    listed, cursor = [], None
    while True:
        page = await client.list_tools(cursor=cursor)
        listed.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return listed


def exposure_request(mode: str, task: Any) -> dict[str, Any]:
    """Extra ``POST /control/episodes`` fields for tool-exposure ``mode`` (distractors drawn
    from the task's world seed, so every agent and trial sees the same tools).

    Raises:
        ValueError: for a bad mode.
    """
    if mode == "all":
        return {}
    from mcpgym.evaluation.llm.exposure import episode_request
    from mcpgym.evaluation.tasks import oracle_tools
    from mcpgym.kernel.app import get_app
    from mcpgym.kernel.world import normalise_apps

    every = [name for app in normalise_apps(task.apps) for name in get_app(app).tools]
    return episode_request(mode, oracle_tools(task), every, task.seed)


def settle_status(
    result: Any, status: EpisodeStatus | None, reason: str | None, *, limit_hit: bool, max_calls: int | None
) -> tuple[EpisodeStatus, str | None]:
    """The episode's final ``(status, stop_reason)``: one the harness already decided
    (``limit`` on a timeout or a spent budget, ``errored`` on a crash) wins; else the agent's
    result, where a ``completed`` episode whose budget ran out becomes ``limit``; no result at
    all is ``errored``. Shared by the MCP runner and the in-process :mod:`mcpgym.evaluation.run.gym`."""
    if status is None and result is not None:
        status = result.status
        reason = result.stop_reason or (result.error if result.status == EpisodeStatus.ERRORED else None)
        if limit_hit and status == EpisodeStatus.COMPLETED:
            status, reason = EpisodeStatus.LIMIT, f"call budget of {max_calls} spent"
    if status is None:
        status, reason = EpisodeStatus.ERRORED, "the agent returned no result"
    return status, reason


def build_trajectory(
    *,
    episode_id: str,
    task: Any,
    agent_name: str,
    trial: int,
    fault_seed: int,
    profile_name: str,
    apps: list[str],
    calls: list[dict[str, Any]],
    ledger: list[dict[str, Any]],
    initial: dict[str, Any],
    final: dict[str, Any],
    gold: dict[str, Any],
    result: Any,
    status: EpisodeStatus,
    reason: str | None,
    runner_invalid_calls: int = 0,
    metadata: dict[str, Any] | None = None,
    app_versions: dict[str, str] | None = None,
    steps: list[Step] | None = None,
    user_turns: list[Any] | None = None,
) -> Trajectory:
    """The (unscored) trajectory of a finished episode, built the same way for the MCP path
    (:func:`run_episode`) and the in-process path (:mod:`mcpgym.evaluation.run.gym`).

    Args:
        calls, ledger: the episode's call log and fault ledger as JSON rows (the control
            API's ``calls`` and ``ledger``). initial, final, gold: world snapshots.
        result: the agent's ``AgentResult`` (or None: the episode was cut off, and its tokens are
            the sum of its message steps'); status, reason: from :func:`settle_status`.
        runner_invalid_calls: calls the harness refused before they reached a tool and did not
            record as steps (the in-process path; the MCP path records them).
        steps: every step in order (:meth:`EpisodeCaller.steps`); default: the call log's.
        metadata: extra ``metadata`` keys; ``extra_checks``, ``tags`` and ``max_calls`` come
            from the task.
        app_versions: app name -> ``App.version`` of the apps that served the episode (None:
            this process's registered versions of ``apps``).
        user_turns: the agent's ``ask_user`` turns (:class:`mcpgym.evaluation.records.trajectory.UserTurnStep`)
            when they are not already in ``steps``: placed among the steps by their
            ``before_step`` (:func:`mcpgym.evaluation.records.trajectory.merge_user_turns`).
    """
    if app_versions is None:
        app_versions = _app_versions({}, task, apps)
    tokens = getattr(result, "tokens", None)
    if tokens is not None and not isinstance(tokens, TokenUsage):
        tokens = TokenUsage.model_validate(tokens.model_dump() if hasattr(tokens, "model_dump") else tokens)
    replied = [s.tokens for s in steps or [] if isinstance(s, MessageStep) and s.tokens is not None]
    if tokens is None and result is None and replied:  # cut off (timeout): the replies' own sum
        tokens = TokenUsage(input=sum(t.input for t in replied), output=sum(t.output for t in replied))
    checks = [
        c.model_dump(mode="json") if hasattr(c, "model_dump") else dict(c) for c in getattr(task, "checks", []) or []
    ]
    meta = {
        "extra_checks": checks,
        "tags": list(getattr(task, "tags", []) or []),
        "max_calls": getattr(task, "max_calls", None),
        **(metadata or {}),
    }
    provider = getattr(result, "provider", None)
    if isinstance(provider, dict) and provider:
        meta["provider"] = provider
    return Trajectory(
        episode_id=episode_id,
        task_id=task.id,
        agent=agent_name,
        trial=trial,
        world_seed=task.seed,
        fault_seed=fault_seed,
        fault_profile=profile_name,
        apps=apps,
        app_versions=app_versions,
        level=getattr(task, "level", None),
        instruction=task.instruction,
        steps=merge_user_turns(steps if steps is not None else steps_from_call_log(calls), user_turns or []),
        final_message=str(getattr(result, "final_message", "") or ""),
        ledger=ledger,
        initial_snapshot=initial,
        final_snapshot=final,
        gold_snapshot=gold,
        feasible=getattr(task, "feasible", None),
        status=status,
        stop_reason=reason,
        tokens=tokens,
        invalid_calls=int(getattr(result, "invalid_calls", 0) or 0) + runner_invalid_calls,
        metadata=meta,
    )


async def run_episode(ctx: EpisodeContext, job: EpisodeJob) -> Trajectory:
    """Run one episode end to end and return its scored trajectory (not yet written).

    ``metadata`` of the trajectory: ``extra_checks`` (the task's checks, so that re-scoring
    needs no task registry), ``tags``, ``agent_spec``, ``tools_listed``, ``max_calls``,
    ``internal_errors`` (sandbox bugs in the call log), ``phase_seconds`` (wall seconds of
    ``create``: the episode on the server; ``connect``: MCP initialize and tool listing;
    ``agent``: the agent's turn, its tool calls included; ``fetch``: reading the call log,
    ledger and final state; ``judge``: ending the episode on the server, building the
    trajectory, judging and scoring) and ``wall_seconds`` (from
    creation to the end of scoring: the phases plus the gaps between them).

    Raises:
        HarnessFailure: when the episode could not be created, its final state not read, or
            it could not be scored.
    """
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    task, agent = job.task, job.agent.agent
    started = time.monotonic()
    phases: dict[str, float] = {}

    def mark(name: str) -> None:
        phases[name] = round(time.monotonic() - started - sum(phases.values()), 3)

    body = {"seed": task.seed, "apps": list(task.apps), "faults": job.faults, "fault_seed": job.fault_seed}
    body.update(exposure_request(job.tool_exposure(ctx.config.tool_exposure), task))
    try:
        created = await ctx.control.create_episode(body)
    except (ServerError, InvalidValue) as exc:
        raise HarnessFailure(str(exc)) from None
    mark("create")
    eid = created.episode_id
    result: Any = None
    status: EpisodeStatus | None = None
    reason: str | None = None
    caller: EpisodeCaller | None = None
    n_tools = 0
    from mcpgym.evaluation.agents.base import AgentContext, run_agent, takes_user
    from mcpgym.evaluation.users import UserChannel, make_simulator

    channel = UserChannel(
        make_simulator(ctx.config.user_simulator, task.user, job.fault_seed),
        lambda: caller.calls if caller is not None else 0,
    )
    user_channel = takes_user(agent)
    try:
        try:
            transport = (
                streamable_http_client(created.mcp_url, http_client=ctx.http)
                if ctx.http is not None
                else created.mcp_url
            )
            async with Client(
                transport,
                mode=ctx.config.mcp_mode,
                read_timeout_seconds=ctx.config.episode_timeout,
                elicitation_callback=channel.elicitation_callback,
            ) as client:
                if not ctx.config.validate_output:
                    client.session.validate_tool_result = _skip_validation  # type: ignore[method-assign]
                tools = tool_infos(await _list_tools(client), ctx.tool_info)
                n_tools = len(tools)
                mark("connect")
                caller = EpisodeCaller(client, task.max_calls, ctx.call_result, ctx.limit_error)
                channel.record = caller.record  # ask_user turns land among the steps, in order
                context = AgentContext(
                    trial=job.trial,
                    world_seed=task.seed,
                    fault_seed=job.fault_seed,
                    user=channel,
                    deadline=anyio.current_time() + ctx.config.episode_timeout,  # an LLM agent ends a provider wait
                )
                with anyio.move_on_after(ctx.config.episode_timeout) as scope:
                    try:
                        result = await run_agent(agent, task, tools, caller, context)
                    except Exception as exc:  # noqa: BLE001 - a crashing agent is an errored episode
                        if ctx.limit_error is not None and isinstance(exc, ctx.limit_error):
                            status, reason = EpisodeStatus.LIMIT, f"call budget of {caller.max_calls} spent"
                        else:
                            status, reason = EpisodeStatus.ERRORED, f"agent raised {type(exc).__name__}: {exc}"
                mark("agent")
                if scope.cancelled_caught:
                    status, reason = (
                        EpisodeStatus.LIMIT,
                        f"episode timed out after {ctx.config.episode_timeout:g} wall seconds",
                    )
        except Exception as exc:  # noqa: BLE001 - connecting or listing failed, or the session broke
            if status is None and result is None:
                status, reason = EpisodeStatus.ERRORED, f"MCP session failed: {type(exc).__name__}: {exc}"
        try:
            ended = await ctx.control.get(eid, "final")  # calls, ledger, snapshot at one instant
            calls, ledger, final = ended["calls"], ended["ledger"], ended["snapshot"]
            key = (tuple(created.apps or task.apps), task.seed)
            initial = ctx.initial.get(key)
            if initial is None:  # every episode of (apps, seed) starts from the same state: fetched once
                initial = ctx.initial[key] = await ctx.control.get(eid, "initial")
        except ServerError as exc:
            raise HarnessFailure(f"cannot read the episode's final state: {exc}") from None
        mark("fetch")
    finally:
        with anyio.CancelScope(shield=True):
            await ctx.control.delete(eid)

    if caller is not None and caller.transport_error and status is None:
        status, reason = EpisodeStatus.ERRORED, f"transport failure: {caller.transport_error}"
    status, reason = settle_status(
        result,
        status,
        reason,
        limit_hit=bool(caller and caller.limit_hit),
        max_calls=caller.max_calls if caller else None,
    )
    traj = build_trajectory(
        episode_id=eid,
        task=task,
        agent_name=job.agent.name,
        trial=job.trial,
        fault_seed=created.fault_seed,
        profile_name=job.profile_name,
        apps=list(created.apps or task.apps),
        app_versions=_app_versions(created.model_dump(), task),
        calls=calls,
        ledger=ledger,
        initial=initial,
        final=final,
        gold=ctx.gold[task.id],
        result=result,
        status=status,
        reason=reason,
        steps=caller.steps(calls) if caller is not None else None,
        metadata={
            "agent_spec": job.agent.spec,
            "tools_listed": n_tools,
            "internal_errors": sum(1 for c in calls if c.get("internal")),
            "phase_seconds": phases,
            "user_channel": user_channel,
            "elicitation": True,
            "user_simulator": ctx.config.user_simulator,
        },
        user_turns=None if caller is not None else list(channel.turns),
    )
    traj.condition = job.condition
    checks = traj.metadata["extra_checks"]
    try:  # the judge is CPU work: off the event loop, so other episodes' I/O goes on meanwhile
        sc = await anyio.to_thread.run_sync(lambda: score_episode(traj, ctx.catalog, k=ctx.config.k, checks=checks))
    except Exception as exc:  # noqa: BLE001 - a scorer failure must not kill the whole run
        raise HarnessFailure(f"scoring failed: {type(exc).__name__}: {exc}") from None
    traj.scores = sc
    mark("judge")
    traj.metadata["wall_seconds"] = round(time.monotonic() - started, 3)
    return traj


def _app_versions(created: dict[str, Any], task: Any, apps: list[str] | None = None) -> dict[str, str]:
    """App name -> version as the server reported them at episode creation; from this
    process's registry when the server does not report them (an older server)."""
    reported = created.get("app_versions")
    if isinstance(reported, dict) and all(isinstance(v, str) for v in reported.values()):
        return {str(k): v for k, v in reported.items()}
    from mcpgym.kernel.app import app_versions

    try:
        return app_versions(apps or created.get("apps") or task.apps)
    except KeyError:
        return {}


__all__ = [
    "AgentEntry",
    "EpisodeCaller",
    "EpisodeContext",
    "EpisodeJob",
    "HarnessFailure",
    "build_trajectory",
    "result_payload",
    "run_episode",
    "settle_status",
    "tool_infos",
]
