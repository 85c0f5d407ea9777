"""Episodes driven step by step in this process, without MCP: for RL trainers and custom loops.

A :class:`GymEpisode` is built exactly as the server builds one for ``POST /control/episodes``
(:meth:`mcpgym.server.episode.Episode.create` with the task's world seed and apps, the fault
profile and the trial's fault seed), and its calls go through the same ``ToolInvoker``; the
trajectory is put together by the runner's own
:func:`mcpgym.evaluation.run.episode_runner.build_trajectory` and scored by
:func:`mcpgym.evaluation.scoring.scorer.score_episode`. So, for the same task, trial and fault seed, it
gives the trajectory steps and scores that ``mcpgym run`` records over MCP (the tests compare
both paths)::

    from mcpgym.evaluation import GymEpisode

    ep = GymEpisode.create("shop.buy_cheapest_mouse", trial=0, faults="default")
    ep.instruction, ep.observation  # the task's instruction; the text the agent saw last
    obs = ep.step("shop_search_products", {"query": "mouse"})   # CallResult(is_error, payload)
    ...
    ep.finish("Bought the cheapest mouse.")
    ep.done, ep.reward              # True, 1.0 or 0.0 (the outcome)
    scores = ep.scores              # EpisodeScores: success, recall, verification_rate, ...
    traj = ep.trajectory()          # Trajectory, the same record a run writes

An episode object is not thread-safe; make one per rollout (they are cheap: one world).
"""

from __future__ import annotations

import json
import operator
import secrets
import time
import weakref
from typing import Any

from mcpgym.evaluation.agents.base import (
    Agent,
    AgentContext,
    AgentResult,
    CallLimitReached,
    CallResult,
    ToolInfo,
    run_agent,
)
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import TokenUsage, Trajectory
from mcpgym.evaluation.run.episode_runner import build_trajectory, exposure_request, settle_status
from mcpgym.evaluation.scoring.scorer import DEFAULT_K, EpisodeScores, score_episode
from mcpgym.evaluation.scoring.tool_catalog import installed_catalog
from mcpgym.kernel.errors import ErrorCode, ErrorPayload
from mcpgym.kernel.exceptions import MCPGymError
from mcpgym.server.retrieval import SEARCH_TOOL_NAME, search_tools_call

MAX_FAULT_SEED = 2**63 - 1
"""Largest fault seed (the server's ``MAX_SEED``: seeds are stored as signed 64-bit integers)."""


def whole_number(value: Any, name: str, *, minimum: int, maximum: int | None = None) -> int:
    """``value`` as an ``int`` when it is a whole number (``int`` or NumPy integer, not a bool,
    a float or a string) from ``minimum`` to ``maximum``: the one rule the in-process entry points
    (:meth:`GymEpisode.create`, Gymnasium, OpenEnv) apply to a trial, a fault seed and a step
    limit, as the control API and the CLI do.

    Raises:
        ValueError: naming ``name``, the range and the value given.
    """
    span = f"from {minimum} to {maximum}" if maximum is not None else f"of at least {minimum}"
    try:
        number = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        number = None
    if number is None or number < minimum or (maximum is not None and number > maximum):
        raise ValueError(f"{name} must be a whole number {span}, got {value!r}"[:300])
    return number


class EpisodeFinished(MCPGymError, RuntimeError):
    """A step was taken after :meth:`GymEpisode.finish`."""


class GymEpisode:
    """One episode of one task, stepped with tool calls in this process.

    Use :meth:`create`; then :meth:`step` (or ``await`` :meth:`acall`, the agents' call
    function), :meth:`finish`, :meth:`reward` and :meth:`trajectory`.

    Attributes:
        task: the :class:`mcpgym.evaluation.tasks.Task`. trial: 0-based trial index.
        fault_seed: the fault seed in force. profile_name: the fault profile's name.
        agent_name: recorded as the trajectory's ``agent``. episode_id: a random id.
        tools: the :class:`ToolInfo` the agent may call (per ``tool_exposure``).
        calls: tool calls that reached a tool. invalid_calls: calls refused before reaching
            one (name not a string, arguments not a JSON object), as the MCP runner counts them.
        limit_hit: true once a call was refused because ``task.max_calls`` were spent.
    """

    def __init__(
        self, task: Any, episode: Any, *, trial: int, agent_name: str, gold: dict[str, Any], k: int | None = DEFAULT_K
    ) -> None:
        """Prefer :meth:`create`. ``episode`` is a :class:`mcpgym.server.episode.Episode`."""
        self.task = task
        self.trial = trial
        self.agent_name = agent_name
        self.k = k
        self.episode_id = secrets.token_hex(16)
        self._episode = episode
        self._gold = gold
        self.fault_seed = episode.fault_seed
        self.profile_name = episode.profile.name
        self.tools = [ToolInfo.from_spec(s) for s in episode.tool_specs()]
        if episode.search_tools:
            from mcpgym.server.retrieval import search_tool

            self.tools.insert(0, ToolInfo.from_mcp(search_tool()))
        self.harness_seconds: dict[str, float] = {}
        """Wall seconds the harness spent on this episode: ``create`` (building the world, by
        :meth:`create`) and ``judge`` (building and scoring the trajectory at the end)."""
        self.calls = 0
        self.invalid_calls = 0
        self.limit_hit = False
        self._user: Any = None  # the UserChannel, made on first use (most episodes never ask)
        self._result: AgentResult | None = None
        self._last: CallResult | None = None
        self._last_text: str | None = None  # the last observation, once the episode was parked
        episode.park_listener = weakref.ref(self)
        self._status: tuple[EpisodeStatus | None, str | None] = (None, None)
        self._traj: Trajectory | None = None
        self._scores: EpisodeScores | None = None

    @classmethod
    def create(
        cls,
        task: Any,
        *,
        trial: int = 0,
        faults: str | dict[str, Any] | None = None,
        fault_seed: int | None = None,
        agent_name: str = "agent",
        tool_exposure: str = "all",
        k: int | None = DEFAULT_K,
        gold: dict[str, Any] | None = None,
    ) -> GymEpisode:
        """A fresh episode of ``task``.

        Args:
            task: a :class:`mcpgym.evaluation.tasks.Task`, or a task id (any suite).
            trial: 0-based trial; fixes the fault seed (``fault_seed_for(task, trial)``) unless
                ``fault_seed`` is given.
            faults: fault profile: a built-in name, a file, or a mapping of ``FaultProfile``
                fields; ``task.faults`` wins when set; None means ``default`` (as ``mcpgym run``).
            agent_name: the trajectory's ``agent``.
            tool_exposure: ``all`` | ``task`` | ``task+N`` | ``retrieval``, as ``mcpgym run --tools``.
            k: the scorer's recovery window, in tool calls.
            gold: the task's gold snapshot (``mcpgym.evaluation.tasks.gold_snapshot(task)``) to
                share across many episodes of one task, as ``mcpgym run`` does: it is not copied,
                and the judge restores a shared gold state once instead of once per episode.
                Must not be modified. None: a fresh copy for this episode.

        Raises:
            KeyError: unknown task id. ValueError: a bad ``tool_exposure``, a ``trial`` below 0,
                a ``fault_seed`` outside 0 .. :data:`MAX_FAULT_SEED` (:func:`whole_number`).
            mcpgym.tools.faults.FaultProfileError: a bad profile.
            mcpgym.evaluation.tasks.OracleRuntimeError: the task's oracle fails (no gold state).
        """
        from mcpgym.evaluation import tasks as registry
        from mcpgym.evaluation.run.runner import faults_payload
        from mcpgym.server.episode import Episode

        if isinstance(task, str):
            task = registry.get_task(task)
        from mcpgym.tools.faults import FaultProfile

        spec = task.faults or faults or "default"
        payload, _ = faults_payload(FaultProfile.model_validate(spec) if isinstance(spec, dict) else spec)
        trial = whole_number(trial, "trial", minimum=0)
        if fault_seed is not None:
            fault_seed = whole_number(fault_seed, "fault seed", minimum=0, maximum=MAX_FAULT_SEED)
        seed = registry.fault_seed_for(task, trial) if fault_seed is None else fault_seed
        extra = exposure_request(tool_exposure, task)
        started = time.perf_counter()
        episode = Episode.create(
            task.seed,
            list(task.apps),
            payload,
            seed,
            tools=extra.get("tools"),
            search_tools=bool(extra.get("search_tools")),
        )
        created = time.perf_counter() - started
        if gold is None:
            gold = registry.gold_snapshot(task)
        made = cls(task, episode, trial=trial, agent_name=agent_name, gold=gold, k=k)
        made.harness_seconds["create"] = round(created, 6)
        return made

    @property
    def user(self) -> Any:
        """The user of the episode (the task's profile, seeded with the fault seed), a
        :class:`mcpgym.evaluation.users.UserChannel` made on first use: ``await
        ep.user.ask(question)`` is an ``ask_user`` turn of the trajectory."""
        if self._user is None:
            from mcpgym.evaluation.users import UserChannel, make_simulator

            episode = self._episode
            self._user = UserChannel(
                make_simulator("scripted", getattr(self.task, "user", None), self.fault_seed),
                lambda: len(episode.invoker.calls),
            )
        return self._user

    # -- stepping ---------------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        """True after :meth:`finish`."""
        return self._result is not None

    def step(self, name: str, arguments: Any = None) -> CallResult:
        """Make one tool call and return what the agent sees.

        Args:
            name: tool name (an unknown or hidden tool gets a ``not_found`` error result).
            arguments: a JSON object (None: ``{}``); anything else is refused with an
                ``invalid_argument`` error result and counted in ``invalid_calls``.

        Returns:
            ``CallResult(is_error, payload)``: the tool's structured result, or
            ``{"error": {"code", "message", "retryable", "retry_after", "field"}}``.

        Raises:
            CallLimitReached: ``task.max_calls`` calls were already made (finish the episode;
                a ``completed`` finish then becomes status ``limit``).
            EpisodeFinished: after :meth:`finish`.
        """
        if self.finished:
            raise EpisodeFinished("the episode is finished; create a new one")
        max_calls = getattr(self.task, "max_calls", None)
        if max_calls is not None and self.calls >= max_calls:
            self.limit_hit = True
            raise CallLimitReached(f"call budget of {max_calls} spent")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict) or not isinstance(name, str):
            self.invalid_calls += 1
            self._last = CallResult(
                is_error=True,
                payload=ErrorPayload(
                    code=ErrorCode.INVALID_ARGUMENT,
                    message="the tool name must be a string and the arguments a JSON object",
                ).result(),
            )
            return self._last
        self.calls += 1
        if self._episode.search_tools and name == SEARCH_TOOL_NAME:
            from mcpgym.evaluation.run.episode_runner import result_payload

            answer = search_tools_call(self._episode, arguments)
            self._last = CallResult(is_error=bool(answer.is_error), payload=result_payload(answer))
            return self._last
        out = self._episode.call(name, arguments)
        self._last = CallResult(is_error=out.is_error, payload=out.payload)
        return self._last

    async def acall(self, name: str, arguments: Any = None) -> CallResult:
        """:meth:`step` as the agents' async call function (``CallFn``)."""
        return self.step(name, arguments)

    async def run_agent(self, agent: Agent) -> Trajectory:
        """Let ``agent`` play the whole episode (``agent.run(task, tools, acall, context)``,
        through :func:`mcpgym.evaluation.agents.run_agent`),
        then :meth:`finish` with its result; an agent that raises ends the episode ``errored``
        and the budget running out ends it ``limit``, as in ``mcpgym run``.

        Returns:
            The scored trajectory.
        """
        status = reason = None
        result = None
        try:
            context = AgentContext(
                trial=self.trial,
                world_seed=getattr(self.task, "seed", None),
                fault_seed=self.fault_seed,
                user=self.user,
            )
            result = await run_agent(agent, self.task, self.tools, self.acall, context)
        except CallLimitReached:
            status, reason = EpisodeStatus.LIMIT, f"call budget of {getattr(self.task, 'max_calls', None)} spent"
        except Exception as exc:  # noqa: BLE001 - a crashing agent is an errored episode
            status, reason = EpisodeStatus.ERRORED, f"agent raised {type(exc).__name__}: {exc}"
        if result is None:
            result = AgentResult.model_validate(
                {"final_message": "", "status": status or EpisodeStatus.ERRORED, "stop_reason": reason}
            )
        self._finish(result, status, reason)
        return self.trajectory()

    def finish(
        self,
        final_message: str = "",
        *,
        status: EpisodeStatus = EpisodeStatus.COMPLETED,
        stop_reason: str | None = None,
        tokens: TokenUsage | dict[str, Any] | None = None,
        invalid_calls: int = 0,
    ) -> EpisodeScores:
        """End the episode with the agent's last message and return its reward.

        Args:
            final_message: the agent's answer to the user (the judge's extra checks and the
                defeatism score read it).
            status: ``completed`` | ``limit`` | ``errored`` (as ``AgentResult``).
            stop_reason: why it stopped, for the record. tokens: token usage, if any.
            invalid_calls: calls the caller refused itself before :meth:`step` (malformed
                model output), added to those :meth:`step` refused.

        Raises:
            EpisodeFinished: when already finished.
        """
        if self.finished:
            raise EpisodeFinished("the episode is already finished")
        result = AgentResult.model_validate(
            {
                "final_message": final_message,
                "status": status,
                "stop_reason": stop_reason,
                "tokens": TokenUsage.model_validate(tokens) if isinstance(tokens, dict) else tokens,
                "invalid_calls": invalid_calls,
            }
        )
        self._finish(result, None, None)
        return self.scores

    def _finish(self, result: AgentResult, status: EpisodeStatus | None, reason: str | None) -> None:
        max_calls = getattr(self.task, "max_calls", None)
        self._result = result
        self._status = settle_status(result, status, reason, limit_hit=self.limit_hit, max_calls=max_calls)
        started = time.perf_counter()
        traj = self._build()
        scores = score_episode(traj, installed_catalog(), k=self.k, checks=traj.metadata["extra_checks"])
        traj.scores = scores
        self.harness_seconds["judge"] = round(time.perf_counter() - started, 6)
        self._traj, self._scores = traj, scores

    # -- reading ----------------------------------------------------------------------------
    def _build(self) -> Trajectory:
        status, reason = self._status if self.finished else (EpisodeStatus.COMPLETED, None)
        return build_trajectory(
            episode_id=self.episode_id,
            task=self.task,
            agent_name=self.agent_name,
            trial=self.trial,
            fault_seed=self.fault_seed,
            profile_name=self.profile_name,
            apps=list(self._episode.apps),
            calls=self._episode.calls(),
            ledger=self._episode.ledger(),
            initial=self._episode.initial_snapshot,
            final=self._episode.world.snapshot(),
            gold=self._gold,
            result=self._result,
            status=status or EpisodeStatus.COMPLETED,
            reason=reason,
            runner_invalid_calls=self.invalid_calls,
            metadata={
                "tools_listed": len(self.tools),
                "internal_errors": sum(1 for c in self._episode.invoker.calls if c.internal),
                "user_channel": True,
            },
            user_turns=list(self._user.turns) if self._user is not None else [],
        )

    def trajectory(self) -> Trajectory:
        """The trajectory so far (scored once finished; before that, unscored and with the
        current state as its final snapshot)."""
        if self._traj is not None:
            return self._traj
        return self._build()

    @property
    def instruction(self) -> str:
        """The task's instruction to the agent (the first observation)."""
        return str(self.task.instruction)

    @property
    def done(self) -> bool:
        """True once the episode ended (:meth:`finish` or :meth:`run_agent`); no step after it."""
        return self.finished

    @property
    def observation(self) -> str:
        """What the agent saw last, as text: the instruction before the first step, then the
        last step's result as JSON (``{"is_error": bool, "result": payload}``, non-ASCII
        escaped so that the text is printable ASCII)."""
        if self._last is not None:
            return observation_text(self._last)
        return self._last_text if self._last_text is not None else self.instruction

    def episode_parked(self) -> None:
        """The episode was parked (:meth:`mcpgym.server.episode.Episode.park`): keep the last
        observation as its text, not as the result's objects."""
        if self._last is not None:
            self._last_text, self._last = observation_text(self._last), None

    @property
    def scores(self) -> EpisodeScores:
        """The typed scores: the judge's outcome (``success``, ``recall``, ...) plus the
        behaviour scores (verification, recovery, defeatism; docs/design.md §7), every field
        :class:`EpisodeScores` has. Before :meth:`finish` it scores the episode as if it ended
        now with an empty message (a shaped intermediate score). After :meth:`finish` it is the
        object the scorer made, the same one each time (the trajectory's ``scores``)."""
        if self._scores is not None:
            return self._scores
        traj = self._traj or self._build()
        if traj.scores is not None:
            return traj.scores
        return score_episode(traj, installed_catalog(), k=self.k, checks=traj.metadata["extra_checks"])

    @property
    def reward(self) -> float:
        """The outcome as a reward: 0.0 before the episode is done; then the ``outcome`` profile
        of :func:`mcpgym.evaluation.scoring.reward.episode_reward`: 1.0 if the judge says
        ``success`` (the final state matches the gold state and the extra checks pass), else
        0.0. Another profile: ``episode_reward(ep.trajectory(), profile)``.

        Raises:
            mcpgym.evaluation.scoring.reward.RewardUnavailable: (a RuntimeError) the judge could
                not decide the outcome (no gold state): never a silent zero.
        """
        if not self.done:
            return 0.0
        from mcpgym.evaluation.scoring.reward import OUTCOME, episode_reward

        return episode_reward(self.trajectory(), OUTCOME).total


def observation_text(result: CallResult) -> str:
    """A tool call's result as the text an agent reads: ``{"is_error": bool, "result": payload}``
    as JSON with non-ASCII characters escaped (so the text is printable ASCII)."""
    return json.dumps({"is_error": result.is_error, "result": result.payload}, ensure_ascii=True, default=str)


__all__ = ["MAX_FAULT_SEED", "EpisodeFinished", "GymEpisode", "observation_text", "whole_number"]
