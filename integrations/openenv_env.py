"""OpenEnv: mcpgym episodes behind OpenEnv's reset/step/state server (``pip install
'mcpgym[openenv]'``; ``mcpgym serve --openenv``).

A thin adapter: :class:`McpgymEnvironment` is an ``openenv.core.env_server.interfaces.Environment``
over one :class:`mcpgym.evaluation.GymEpisode` at a time, with the step contract of
:mod:`mcpgym.integrations.stepping`; OpenEnv's own server (``create_fastapi_app``) serves it, so
the wire is what the ``openenv-core`` clients (``GenericEnvClient``, TRL's and verifiers'
adapters) speak: a WebSocket session at ``/ws`` (``{"type": "reset" | "step" | "state"}``)
holds its own environment, so each client session is its own episode, up to ``max_envs`` at
once: a session past the cap gets OpenEnv's ``CAPACITY_REACHED`` error message, then a close
frame with code 1013 (try again later) whose reason names the cap (a client that sends before
reading sees the reason in its ``ConnectionClosed`` error).

OpenEnv's HTTP ``/reset``, ``/step`` and ``/state`` make a fresh environment per request and
close it after, so no episode lives across two HTTP requests: ``/reset`` shows an episode's
first observation (or 422 with the reason for bad reset arguments), ``/step`` answers 409 with
the reason (step over the WebSocket session). Bad reset arguments get the same message on both
sides; the fault seed and trial follow one rule (:func:`mcpgym.evaluation.run.gym.whole_number`).

* ``reset(task=ID, seed=S, faults=PROFILE, trial=T)``: a fresh episode of task ``ID`` with
  fault seed ``S`` (default: the task's trial-``T`` fault seed); ``faults`` (a built-in name
  or an inline profile object, never a path: files are the server owner's, ``--faults``)
  defaults to the server's ``--faults``. The observation's ``text`` is the instruction, ``info`` has the tools.
* ``step({"tool": NAME, "arguments": {...}})`` or ``step({"final": TEXT})``: observation
  ``text`` (the result as ``{"is_error", "result"}`` JSON), ``done``, ``reward`` (0.0 until
  the end, then the reward under the server's profile, default ``outcome``), ``info``
  (``scores`` and ``reward``, the breakdown, at the end).
* ``state``: ``episode_id``, ``step_count``, ``task_id``, ``fault_seed``, ``done``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field

from mcpgym.evaluation.run.gym import GymEpisode
from mcpgym.evaluation.scoring.reward import RewardProfile, load_profile
from mcpgym.integrations.stepping import EpisodeStepper, check_max_steps
from mcpgym.kernel.shorten import cap_message, short

DEFAULT_MAX_ENVS = 64
"""Concurrent sessions (episodes) one server holds by default."""

DEFAULT_IDLE_TIMEOUT = 1800.0
"""Seconds a silent ``/ws`` session is kept (``serve --idle-timeout``)."""

BUILT_IN_PROFILES = ("none", "default", "harsh")
"""The fault profiles a reset may name (an inline profile is an object; a path is the owner's)."""

TRY_AGAIN_LATER = 1013
"""WebSocket close code of a session refused past the cap (RFC 6455 registry: "Try Again Later")."""


class ResetError(ValueError):
    """Reset arguments the environment cannot take (missing or unknown task, bad fault profile,
    fault seed or trial, unknown argument): over HTTP a 422 ``{"detail": message}``, over the
    WebSocket OpenEnv's error message."""


class NoEpisodeError(RuntimeError):
    """A step with no episode: over HTTP a 409 ``{"detail": message}`` (OpenEnv's HTTP
    endpoints make a fresh environment per request, so an HTTP ``/step`` never has one)."""


NO_EPISODE = (
    "no episode to step: reset(task=...) first, on the same session; OpenEnv's HTTP /reset and "
    "/step each make a fresh environment, so step an episode over the WebSocket session at /ws "
    "(openenv's GenericEnvClient or EnvClient)"
)


class McpgymAction(Action):
    """One action: ``tool`` + ``arguments`` (a tool call) or ``final`` (the last message).
    Giving both or neither is answered with an ``invalid_argument`` observation, not a
    protocol error (the episode goes on, the call counts as invalid)."""

    tool: str | None = Field(default=None, max_length=256)
    arguments: dict[str, Any] = Field(default_factory=dict)
    final: str | None = None


class McpgymObservation(Observation):
    """What the agent sees: ``text`` (instruction, then each result as JSON) and ``info``
    (reset: task_id, trial, fault_seed, max_steps, tools; end: status and scores)."""

    text: str = ""
    info: dict[str, Any] = Field(default_factory=dict)


class McpgymState(State):
    """The session's episode: OpenEnv's ``episode_id`` / ``step_count`` plus task and fault seed."""

    task_id: str | None = None
    fault_seed: int | None = None
    done: bool = False


class McpgymEnvironment(Environment[McpgymAction, McpgymObservation, McpgymState]):
    """One OpenEnv session: an mcpgym episode per ``reset``.

    Args:
        faults: the default fault profile of episodes whose reset names none.
        max_steps: step limit, at least 1 (None: each task's ``max_calls``).
        reward: reward profile of the episodes (``outcome`` | ``shaped`` | a file | a
            ``RewardProfile``; :mod:`mcpgym.evaluation.scoring.reward`).

    Raises:
        ValueError: a ``max_steps`` below 1 or not a whole number, or a bad reward profile.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self,
        faults: str | dict[str, Any] | None = "default",
        max_steps: int | None = None,
        reward: str | RewardProfile | None = "outcome",
    ) -> None:
        super().__init__()
        self.faults = faults
        self.reward_profile = load_profile(reward)
        self.max_steps = None if max_steps is None else check_max_steps(max_steps)
        self.stepper: EpisodeStepper | None = None

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task: str | None = None,
        faults: str | dict[str, Any] | None = None,
        trial: int = 0,
        **kwargs: Any,
    ) -> McpgymObservation:
        """Start a fresh episode (module docstring).

        Raises:
            ResetError: (a ValueError) no ``task``, an unknown one, a bad fault profile, a fault
                seed outside 0 .. 2**63-1 or a trial below 0 (not whole numbers either), or
                unknown reset arguments (OpenEnv answers the client with the message).
        """
        if kwargs:
            raise ResetError(
                f"unknown reset arguments {sorted(kwargs)[:20]}; allowed: task, seed, faults, trial, episode_id"[:500]
            )
        if not task:
            raise ResetError("reset needs task=<task id> (see `mcpgym tasks`)")
        if not isinstance(task, str):
            raise ResetError(f"task must be a task id (a string), got {type(task).__name__}")
        if isinstance(faults, str) and faults not in BUILT_IN_PROFILES:
            raise ResetError(
                f"faults names a built-in profile ({', '.join(BUILT_IN_PROFILES)}) or gives one inline "
                f"(an object), got {short(faults)}: a file path is the server owner's choice (serve --faults)"
            )
        if faults is not None and not isinstance(faults, (str, dict)):
            raise ResetError(f"faults must be a built-in profile name or an inline profile object, got {short(faults)}")
        try:
            episode = GymEpisode.create(
                task,
                trial=trial,
                faults=faults if faults is not None else self.faults,
                fault_seed=seed,
                agent_name="openenv",
            )
        except KeyError as exc:
            raise ResetError(cap_message(str(exc.args[0] if exc.args else exc), 500)) from None
        except ValueError as exc:  # a bad fault seed, trial or fault profile (FaultProfileError)
            raise ResetError(cap_message(str(exc), 500)) from None
        if episode_id:
            episode.episode_id = str(episode_id)[:128]
        self.stepper = EpisodeStepper(episode, max_steps=self.max_steps, reward=self.reward_profile)
        text, info = self.stepper.first()
        return McpgymObservation(text=text, info=info, done=False, reward=0.0)

    def step(self, action: McpgymAction, timeout_s: float | None = None, **kwargs: Any) -> McpgymObservation:
        """Apply one action (module docstring).

        Raises:
            NoEpisodeError: before ``reset`` (always over HTTP). EpisodeFinished: after the
                episode ended.
        """
        if self.stepper is None:
            raise NoEpisodeError(NO_EPISODE)
        out = self.stepper.step(action.model_dump(exclude={"metadata"}, exclude_none=True))
        return McpgymObservation(
            text=out.observation, info=out.info, done=out.terminated or out.truncated, reward=out.reward
        )

    @property
    def state(self) -> McpgymState:
        """The session's episode state."""
        if self.stepper is None:
            return McpgymState()
        ep = self.stepper.episode
        return McpgymState(
            episode_id=ep.episode_id,
            step_count=self.stepper.steps,
            task_id=ep.task.id,
            fault_seed=ep.fault_seed,
            done=ep.done,
        )

    def get_metadata(self) -> EnvironmentMetadata:
        """Name, description and version for OpenEnv's ``/metadata``."""
        from importlib.metadata import version

        return EnvironmentMetadata(
            name="mcpgym",
            description="Stateful MCP sandbox apps with seeded fault injection; reset(task=...) starts an episode.",
            version=version("mcpgym"),
        )


class SessionCap:
    """ASGI wrapper that refuses a WebSocket session at ``/ws`` past ``max_sessions`` with a
    message naming the cap: OpenEnv's ``CAPACITY_REACHED`` error as the first message, then a
    close with code :data:`TRY_AGAIN_LATER` and the message as its reason (OpenEnv's own refusal
    closes with 1000 "OK", which a client that sends first reads as a normal close). It counts
    a session from its handshake to the end of OpenEnv's handler, so OpenEnv's own count (taken
    later, dropped earlier) never reaches the cap first."""

    def __init__(self, app: Any, max_sessions: int) -> None:
        self.app = app
        self.max_sessions = max_sessions
        self.active = 0

    def __getattr__(self, name: str) -> Any:
        """The wrapped app's attributes (``routes``, ``state``...), for code that inspects it."""
        return getattr(self.app, name)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Serve ``scope``; a ``/ws`` session past the cap is refused (class docstring)."""
        if scope["type"] != "websocket" or scope.get("path") != "/ws":
            await self.app(scope, receive, send)
            return
        if self.active >= self.max_sessions:
            await self._refuse(receive, send)
            return
        self.active += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.active -= 1

    async def _refuse(self, receive: Any, send: Any) -> None:
        message = (
            f"mcpgym: all {self.max_sessions} episode sessions are in use "
            f"(serve --max-episodes {self.max_sessions}); try again later"
        )
        first = await receive()
        if first.get("type") != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        error = {
            "type": "error",
            "data": {
                "message": message,
                "code": "CAPACITY_REACHED",
                "active_sessions": self.active,
                "max_sessions": self.max_sessions,
            },
        }
        await send({"type": "websocket.send", "text": json.dumps(error)})
        await send({"type": "websocket.close", "code": TRY_AGAIN_LATER, "reason": message[:123]})


def _answer(status: int) -> Any:
    """An exception handler answering ``status`` with ``{"detail": str(exc)}``."""

    async def handler(_request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)[:2000]}, status_code=status)

    return handler


def create_app(
    *,
    faults: str | dict[str, Any] | None = "default",
    max_envs: int = DEFAULT_MAX_ENVS,
    token: str | None = None,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    reward: str | RewardProfile | None = "outcome",
) -> Any:
    """OpenEnv's FastAPI app over :class:`McpgymEnvironment` (episodes rewarded by the
    ``reward`` profile), ``max_envs`` sessions at once,
    wrapped in :class:`SessionCap`; :class:`ResetError` answers 422 and :class:`NoEpisodeError`
    409 over HTTP, with the message as ``detail``. With a ``token``, wrapped in
    :class:`mcpgym.integrations.openenv_guard.OpenEnvGuard` too: the token on the control routes,
    ``/ws`` sessions closed after ``idle_timeout`` silent seconds, bad messages answered."""
    from openenv.core.env_server.http_server import create_fastapi_app

    profile = load_profile(reward)

    def factory() -> McpgymEnvironment:
        return McpgymEnvironment(faults=faults, reward=profile)

    factory.SUPPORTS_CONCURRENT_SESSIONS = True  # type: ignore[attr-defined]
    app: FastAPI = create_fastapi_app(factory, McpgymAction, McpgymObservation, max_concurrent_envs=max_envs)
    app.add_exception_handler(ResetError, _answer(422))
    app.add_exception_handler(NoEpisodeError, _answer(409))
    capped = SessionCap(app, max_envs)
    if token is None:
        return capped
    from mcpgym.integrations.openenv_guard import OpenEnvGuard

    return OpenEnvGuard(capped, token=token, idle_timeout=idle_timeout)


def serve(
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_envs: int = DEFAULT_MAX_ENVS,
    faults: str = "default",
    token: str | None = None,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    reward: str = "outcome",
) -> None:
    """Serve :func:`create_app` with uvicorn until interrupted (``mcpgym serve --openenv
    [--reward PROFILE]``).

    The control token is ``token``, else ``$MCPGYM_TOKEN``, else generated; a generated one is
    printed on the ready line and on stderr. Prints ``MCPGYM_READY {"url": ...}`` once
    listening (port 0 picks a free port).

    Raises:
        OSError: the address cannot be bound.
    """
    import socket

    import uvicorn

    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets whose proto says TCP (small
    # frames are not held back by Nagle's algorithm), as mcpgym.server.serve does.
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    bound = sock.getsockname()[1]
    from mcpgym.server.serve import resolve_token

    token, generated = resolve_token(token)
    app = create_app(faults=faults, max_envs=max_envs, token=token, idle_timeout=idle_timeout, reward=reward)
    config = uvicorn.Config(app, log_level="warning", ws_max_size=16 * 1024 * 1024)
    server = uvicorn.Server(config)
    shown = f"[{host}]" if ":" in host else host
    ready: dict[str, Any] = {"url": f"http://{shown}:{bound}", "openenv": True}
    if generated:
        ready["token"] = token
    print("MCPGYM_READY " + json.dumps(ready), flush=True)
    if generated:
        print(f"control token (generated; also on the MCPGYM_READY line): {token}", file=sys.stderr, flush=True)
    server.run(sockets=[sock])


__all__ = [
    "DEFAULT_MAX_ENVS",
    "McpgymAction",
    "McpgymEnvironment",
    "McpgymObservation",
    "McpgymState",
    "NoEpisodeError",
    "ResetError",
    "SessionCap",
    "TRY_AGAIN_LATER",
    "create_app",
    "serve",
]
