"""OpenEnv: mcpgym episodes behind OpenEnv's reset/step/state server (``pip install
'mcpgym[openenv]'``; ``mcpgym serve --openenv``).

A thin adapter: :class:`McpgymEnvironment` is an ``openenv.core.env_server.interfaces.Environment``
over one :class:`mcpgym.evaluation.GymEpisode` at a time, with the step contract of
:mod:`mcpgym.integrations.stepping`; OpenEnv's own server (``create_fastapi_app``) serves it, so
the wire is what the ``openenv-core`` clients (``GenericEnvClient``, TRL's and verifiers'
adapters) speak: a WebSocket session at ``/ws`` (``{"type": "reset" | "step" | "state"}``)
holds its own environment, so each client session is its own episode, up to ``max_envs`` at
once (OpenEnv answers a session past the cap with a capacity error).

* ``reset(task=ID, seed=S, faults=PROFILE, trial=T)``: a fresh episode of task ``ID`` with
  fault seed ``S`` (default: the task's trial-``T`` fault seed); ``faults`` defaults to the
  server's ``--faults``. The observation's ``text`` is the instruction, ``info`` has the tools.
* ``step({"tool": NAME, "arguments": {...}})`` or ``step({"final": TEXT})``: observation
  ``text`` (the result as ``{"is_error", "result"}`` JSON), ``done``, ``reward`` (0.0 until
  the end, then the outcome), ``info`` (``scores`` at the end: every ``EpisodeScores`` field).
* ``state``: ``episode_id``, ``step_count``, ``task_id``, ``fault_seed``, ``done``.
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field

from mcpgym.evaluation.run.gym import GymEpisode
from mcpgym.integrations.stepping import EpisodeStepper

DEFAULT_MAX_ENVS = 64
"""Concurrent sessions (episodes) one server holds by default."""


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
        max_steps: step limit (None: each task's ``max_calls``).
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, faults: str | dict[str, Any] | None = "default", max_steps: int | None = None) -> None:
        super().__init__()
        self.faults = faults
        self.max_steps = max_steps
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
            ValueError: no ``task``, an unknown one, or unknown reset arguments (OpenEnv
                answers the client with the message).
        """
        if kwargs:
            raise ValueError(
                f"unknown reset arguments {sorted(kwargs)}; allowed: task, seed, faults, trial, episode_id"
            )
        if not task:
            raise ValueError("reset needs task=<task id> (see `mcpgym tasks`)")
        try:
            episode = GymEpisode.create(
                task,
                trial=int(trial),
                faults=faults if faults is not None else self.faults,
                fault_seed=seed,
                agent_name="openenv",
            )
        except KeyError as exc:
            raise ValueError(str(exc.args[0] if exc.args else exc)) from None
        if episode_id:
            episode.episode_id = str(episode_id)[:128]
        self.stepper = EpisodeStepper(episode, max_steps=self.max_steps)
        text, info = self.stepper.first()
        return McpgymObservation(text=text, info=info, done=False, reward=0.0)

    def step(self, action: McpgymAction, timeout_s: float | None = None, **kwargs: Any) -> McpgymObservation:
        """Apply one action (module docstring).

        Raises:
            RuntimeError: before ``reset``. EpisodeFinished: after the episode ended.
        """
        if self.stepper is None:
            raise RuntimeError("reset the environment first (reset(task=...))")
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


def create_app(*, faults: str | dict[str, Any] | None = "default", max_envs: int = DEFAULT_MAX_ENVS) -> Any:
    """OpenEnv's FastAPI app over :class:`McpgymEnvironment`, ``max_envs`` sessions at once."""
    from openenv.core.env_server.http_server import create_fastapi_app

    def factory() -> McpgymEnvironment:
        return McpgymEnvironment(faults=faults)

    factory.SUPPORTS_CONCURRENT_SESSIONS = True  # type: ignore[attr-defined]
    return create_fastapi_app(factory, McpgymAction, McpgymObservation, max_concurrent_envs=max_envs)


def serve(
    *, host: str = "127.0.0.1", port: int = 8000, max_envs: int = DEFAULT_MAX_ENVS, faults: str = "default"
) -> None:
    """Serve :func:`create_app` with uvicorn until interrupted (``mcpgym serve --openenv``).

    Prints ``MCPGYM_READY {"url": ...}`` once listening (port 0 picks a free port).

    Raises:
        OSError: the address cannot be bound.
    """
    import json
    import socket

    import uvicorn

    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets whose proto says TCP (small
    # frames are not held back by Nagle's algorithm), as mcpgym.server.serve does.
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    bound = sock.getsockname()[1]
    app = create_app(faults=faults, max_envs=max_envs)
    config = uvicorn.Config(app, log_level="warning", ws_max_size=16 * 1024 * 1024)
    server = uvicorn.Server(config)
    shown = f"[{host}]" if ":" in host else host
    print("MCPGYM_READY " + json.dumps({"url": f"http://{shown}:{bound}", "openenv": True}), flush=True)
    server.run(sockets=[sock])


__all__ = [
    "DEFAULT_MAX_ENVS",
    "McpgymAction",
    "McpgymEnvironment",
    "McpgymObservation",
    "McpgymState",
    "create_app",
    "serve",
]
