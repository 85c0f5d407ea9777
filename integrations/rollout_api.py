"""The rollout API: task episodes for trainers in other processes (``mcpgym serve --transport
http --rollouts``), created and rewarded exactly as ``mcpgym run`` creates and scores them.

A trainer that cannot import mcpgym's MCP stack (verifiers pins ``mcp==2.0.0``: docs/rl.md)
asks this API for a rollout of a task; the model plays the episode over its MCP URL; the
trainer then asks for the reward of the finished episode. The routes are added to the HTTP
server's own app (:func:`mcpgym.server.http_app.create_app`) and reach its control API in
process (an ASGI transport), so an episode here is an ordinary control-API episode (listed,
inspectable, capped by ``--max-episodes``).

- creation: the task's world seed and apps, the fault profile (a task's own wins) and
  ``fault_seed_for(task, trial)`` (:func:`mcpgym.evaluation.run.runner.plan_jobs`'s rule),
  the tool exposure of ``mcpgym run --tools``;
- the reward: the episode's final state, call log and ledger read at one instant
  (``/final``), the trajectory built by the runner's own
  :func:`mcpgym.evaluation.run.episode_runner.build_trajectory`, judged by
  :func:`mcpgym.evaluation.scoring.scorer.score_episode`, rewarded by
  :func:`mcpgym.evaluation.scoring.reward.episode_reward`; then the episode is deleted.

Wire models: :mod:`mcpgym.integrations.rollout_models`. Routes are listed there.
"""

from __future__ import annotations

import hmac
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import anyio
import httpx2
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpgym.integrations.rollout_models import (
    CreateRollout,
    FinishRollout,
    RolloutCreated,
    RolloutReward,
    RolloutTask,
    RolloutTasks,
)

MAX_TASKS_LISTED = 10_000
"""Most tasks one ``GET /rollouts/tasks`` answers."""


@dataclass(frozen=True)
class _Rollout:
    """What the reward needs to know of a created rollout."""

    task: Any
    trial: int
    fault_seed: int
    profile_name: str
    apps: list[str]
    app_versions: dict[str, str]


class RolloutService:
    """The rollout routes over one server app (:meth:`routes`).

    Args:
        app: the HTTP server's Starlette app (its control API is called in process).
        token: its control token. max_rollouts: most rollouts remembered at once (created,
            not yet rewarded); past it those whose episode is gone are forgotten, else 429.
    """

    def __init__(self, app: Starlette, token: str, max_rollouts: int = 100_000) -> None:
        self.token = token
        self.max_rollouts = max_rollouts
        self._rollouts: OrderedDict[str, _Rollout] = OrderedDict()
        self._gold: dict[str, dict[str, Any]] = {}
        self._initial: dict[tuple[tuple[str, ...], int], dict[str, Any]] = {}
        self._control = httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app),
            base_url="http://127.0.0.1",
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )

    def routes(self) -> list[Route]:
        """The three routes (module docstring), to put before the app's own."""
        return [
            Route("/rollouts/tasks", self._guarded(self.tasks), methods=["GET"]),
            Route("/rollouts", self._guarded(self.create), methods=["POST"]),
            Route("/rollouts/{episode_id}/reward", self._guarded(self.reward), methods=["POST"]),
        ]

    def _guarded(self, handler: Any) -> Any:
        async def wrapped(request: Request) -> Response:
            given = request.headers.get("authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
                return _problem(401, "missing or wrong control token (Authorization: Bearer <token>)")
            return await handler(request)

        return wrapped

    async def tasks(self, request: Request) -> Response:
        """``GET /rollouts/tasks``: the suite's tasks (``suite``, default ``core``), or only
        those named by ``task`` (repeatable), in that order."""
        from mcpgym.evaluation.llm.agent import DEFAULT_SYSTEM_PROMPT
        from mcpgym.evaluation.tasks import registry

        suite = request.query_params.get("suite") or "core"
        wanted = request.query_params.getlist("task")
        try:
            chosen = [registry.get_task(t) for t in wanted] if wanted else registry.load_tasks(suite)
        except (KeyError, ValueError) as exc:
            return _problem(404, str(exc)[:500])
        if len(chosen) > MAX_TASKS_LISTED:
            return _problem(422, f"{len(chosen)} tasks: at most {MAX_TASKS_LISTED} per listing; name them with task=")
        listed = [
            RolloutTask(
                task_id=t.id,
                instruction=t.instruction,
                apps=list(t.apps),
                world_seed=t.seed,
                level=getattr(t, "level", None),
            )
            for t in chosen
        ]
        return _json(RolloutTasks(tasks=listed, system_prompt=DEFAULT_SYSTEM_PROMPT))

    async def create(self, request: Request) -> Response:
        """``POST /rollouts``: a :class:`CreateRollout` -> 201 :class:`RolloutCreated`."""
        from mcpgym.evaluation.run.episode_runner import exposure_request
        from mcpgym.evaluation.run.runner import faults_payload
        from mcpgym.evaluation.tasks import registry

        try:
            body = CreateRollout.model_validate_json(await request.body())
        except ValidationError as exc:
            return _problem(422, _first_error(exc))
        try:
            task = registry.get_task(body.task_id)
        except KeyError as exc:
            return _problem(404, str(exc)[:500])
        try:
            payload, profile = faults_payload(task.faults or body.faults)
            extra = exposure_request(body.tools, task)
        except ValueError as exc:
            return _problem(422, str(exc)[:500])
        if not await self._room():
            return _problem(429, f"{self.max_rollouts} rollouts are waiting for their reward; reward or end some")
        fault_seed = registry.fault_seed_for(task, body.trial) if body.fault_seed is None else body.fault_seed
        answer = await self._control.post(
            "/control/episodes",
            json={"seed": task.seed, "apps": list(task.apps), "faults": payload, "fault_seed": fault_seed, **extra},
        )
        if answer.status_code != 201:
            return Response(answer.content, status_code=answer.status_code, media_type="application/json")
        created = answer.json()
        eid = created["episode_id"]
        self._rollouts[eid] = _Rollout(
            task=task,
            trial=body.trial,
            fault_seed=int(created["fault_seed"]),
            profile_name=profile.name,
            apps=list(created.get("apps") or task.apps),
            app_versions=dict(created.get("app_versions") or {}),
        )
        made = RolloutCreated(
            episode_id=eid,
            # the control API answered the in-process transport's host: the caller's is the one to use
            mcp_url=urljoin(str(request.base_url), urlsplit(created["mcp_url"]).path),
            task_id=task.id,
            trial=body.trial,
            world_seed=task.seed,
            fault_seed=int(created["fault_seed"]),
            faults=profile.name,
        )
        return _json(made, 201)

    async def reward(self, request: Request) -> Response:
        """``POST /rollouts/{id}/reward``: a :class:`FinishRollout` -> :class:`RolloutReward`;
        404 for a rollout this server did not create or already rewarded."""
        from mcpgym.evaluation.scoring.reward import RewardUnavailable, load_profile

        eid = request.path_params["episode_id"]
        try:
            body = FinishRollout.model_validate_json(await request.body())
            profile = load_profile(body.reward)
        except ValidationError as exc:
            return _problem(422, _first_error(exc))
        except ValueError as exc:
            return _problem(422, f"reward: {exc}"[:500])
        rollout = self._rollouts.pop(eid, None)
        if rollout is None:
            return _problem(404, f"no rollout {eid[:64]!r} waiting for its reward (never created here, or rewarded)")
        try:
            ended = await self._control.get(f"/control/episodes/{eid}/final")
            if ended.status_code != 200:
                return Response(ended.content, status_code=ended.status_code, media_type="application/json")
            initial = await self._initial_of(eid, rollout)
        finally:
            await self._control.delete(f"/control/episodes/{eid}")
        final = ended.json()
        try:
            traj, breakdown = await anyio.to_thread.run_sync(
                lambda: self._judge(eid, rollout, final, initial, body.final_message, body.agent, profile)
            )
        except RewardUnavailable as exc:
            return _problem(409, str(exc)[:500])
        answer = RolloutReward(
            episode_id=eid,
            total=breakdown.total,
            reward=breakdown.model_dump(mode="json"),
            scores=traj.scores.model_dump(mode="json"),
            calls=len(final["calls"]),
            trajectory=traj.model_dump(mode="json"),
        )
        return _json(answer)

    async def _initial_of(self, eid: str, rollout: _Rollout) -> dict[str, Any]:
        """The episode's initial world, fetched once per (apps, world seed) as the runner does."""
        key = (tuple(rollout.apps), rollout.task.seed)
        if key not in self._initial:
            answer = await self._control.get(f"/control/episodes/{eid}/initial")
            answer.raise_for_status()
            self._initial[key] = answer.json()
        return self._initial[key]

    def _judge(
        self,
        eid: str,
        rollout: _Rollout,
        final: dict[str, Any],
        initial: dict[str, Any],
        final_message: str,
        agent: str,
        profile: Any,
    ) -> tuple[Any, Any]:
        """Build, score and reward the trajectory (CPU work: called off the event loop)."""
        from mcpgym.evaluation.agents.base import AgentResult
        from mcpgym.evaluation.run.episode_runner import build_trajectory, settle_status
        from mcpgym.evaluation.scoring.reward import episode_reward
        from mcpgym.evaluation.scoring.scorer import DEFAULT_K, score_episode
        from mcpgym.evaluation.scoring.tool_catalog import installed_catalog
        from mcpgym.evaluation.tasks import registry

        task = rollout.task
        if task.id not in self._gold:
            self._gold[task.id] = registry.gold_snapshot(task)
        result = AgentResult(final_message=final_message)
        status, reason = settle_status(result, None, None, limit_hit=False, max_calls=None)
        traj = build_trajectory(
            episode_id=eid,
            task=task,
            agent_name=agent,
            trial=rollout.trial,
            fault_seed=rollout.fault_seed,
            profile_name=rollout.profile_name,
            apps=rollout.apps,
            app_versions=rollout.app_versions or None,
            calls=final["calls"],
            ledger=final["ledger"],
            initial=initial,
            final=final["snapshot"],
            gold=self._gold[task.id],
            result=result,
            status=status,
            reason=reason,
            metadata={"internal_errors": sum(1 for c in final["calls"] if c.get("internal"))},
        )
        catalog = installed_catalog()
        traj.scores = score_episode(traj, catalog, k=DEFAULT_K, checks=traj.metadata["extra_checks"])
        return traj, episode_reward(traj, profile, catalog=catalog)

    async def _room(self) -> bool:
        """Whether one more rollout may be remembered: below the cap, or once the rollouts
        whose episode the server no longer holds (expired, or deleted on the control API)
        are forgotten."""
        if len(self._rollouts) < self.max_rollouts:
            return True
        for eid in list(self._rollouts):
            gone = await self._control.get(f"/control/episodes/{eid}")
            if gone.status_code == 404:
                self._rollouts.pop(eid, None)
        return len(self._rollouts) < self.max_rollouts


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "body"
    return f"{where}: {err.get('msg', 'invalid')}"[:500]


def _problem(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _json(model: Any, status: int = 200) -> Response:
    return Response(model.model_dump_json(), status_code=status, media_type="application/json")


def add_rollout_routes(app: Starlette, token: str) -> Starlette:
    """Put the rollout routes (:class:`RolloutService`) in front of ``app``'s own and return it
    (``serve_http(..., wrap_app=...)`` calls this for ``mcpgym serve --rollouts``)."""
    service = RolloutService(app, token)
    app.router.routes[:0] = service.routes()
    return app


__all__ = ["MAX_TASKS_LISTED", "RolloutService", "add_rollout_routes"]
