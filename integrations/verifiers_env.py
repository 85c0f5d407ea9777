"""mcpgym as a verifiers environment (verifiers 0.4, its ``verifiers.v1`` API): every rollout is
its own mcpgym episode, seeded as ``mcpgym run`` seeds it, and rewarded by mcpgym's judge and
behaviour scores through the one reward (:func:`mcpgym.evaluation.scoring.reward.episode_reward`).

The process boundary (docs/rl.md, "verifiers"): verifiers 0.4 pins ``mcp==2.0.0`` and mcpgym
needs ``mcp>=2.3``, so verifiers lives in a virtual environment of its own (``.venv-vf``, with
mcpgym installed there by ``pip install --no-deps -e .``) and this module imports only the
standard library, httpx, pydantic, verifiers (with the MCP SDK and httpx2 it pins, for the
rollouts' MCP sessions) and the control API's wire models
(:mod:`mcpgym.server.rl_models`: pydantic and mcpgym's kernel): never the MCP SDK mcpgym uses,
nor a module that pulls it in (``tests/integrations/test_verifiers_env.py`` checks). The
episodes live in a ``mcpgym serve --transport http`` process (mcpgym's own venv), reached over
the control API's routes for trainers (:mod:`mcpgym.server.rl_routes`, the NeMo Gym door's too):

- the taskset (:class:`McpgymTaskset`) lists the tasks (``GET /control/tasks``) and makes one
  verifiers task per (task, trial), ``trials`` of them per mcpgym task;
- a rollout's :meth:`McpgymTask.setup` creates its episode (``POST /control/task-episodes``): world seed the
  task's, fault seed ``fault_seed_for(task, trial)`` (or the fixed ``fault_seed``), the fault
  profile (a task's own wins) and tool exposure as in ``mcpgym run``; a verifiers group
  (``-r N``) repeats one (task, trial): the same world and faults, the model's samples differ;
- the rollouts of one eval (one event loop) share their HTTP clients: the control API's, the
  model interception's, and the one under every rollout's own MCP session (:func:`_pooled`);
- the harness (:class:`McpgymHarness`, the taskset's default) plays the episode in process:
  the episode's MCP tools are the model's OpenAI tool schemas, each tool call goes to the
  episode's MCP URL, every model call goes through verifiers' interception (so the trace is
  verifiers' own record); it ends when the model answers without a tool call or after
  ``max_turns`` model turns;
- the reward (:meth:`McpgymTask.mcpgym`, a ``@vf.reward``) asks the server for the finished
  episode's reward (``POST /control/episodes/{id}/reward``, the final message being the model's
  last reply; the episode is deleted with it): the same number ``mcpgym run`` and every other
  door give; the breakdown's terms are
  recorded as metrics (``reward_<term>``) and the judge's scores (``success``, ``recall``...),
  and the breakdown, the scores and the seeds are in ``trace.info["mcpgym"]``.

Discovery: ``vf-eval mcpgym-verifiers`` imports the top-level module ``mcpgym_verifiers``,
which exports this taskset and harness (verifiers finds a taskset by its id's module name).
In Python: :func:`load_environment`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import ssl
import weakref
from collections.abc import Callable
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from typing import Any, TypeVar

import httpx
import verifiers.v1 as vf
from pydantic import Field
from verifiers.v1.runtimes import ProgramResult

from mcpgym.server.rl_models import EpisodeReward, RewardRequest, TaskEpisodeCreated, TaskEpisodeRequest, TaskList

TASKSET_ID = "mcpgym-verifiers"
"""The verifiers taskset id (``vf-eval mcpgym-verifiers``; module ``mcpgym_verifiers``)."""
URL_ENV = "MCPGYM_URL"
"""Environment variable with the ``mcpgym serve --transport http`` base URL (the default of ``url``)."""
TOKEN_ENV = "MCPGYM_TOKEN"
"""Environment variable with its control token (the default of ``token``)."""
MAX_TOOL_TEXT = 100_000
"""Most characters of one tool result handed back to the model."""


class McpgymTaskConfig(vf.TaskConfig):
    """What every rollout of the taskset shares (``--env.taskset.task.*``)."""

    url: str = Field(default_factory=lambda: os.environ.get(URL_ENV, ""))
    """Base URL of ``mcpgym serve --transport http`` (default ``$MCPGYM_URL``)."""
    token: str = Field(default_factory=lambda: os.environ.get(TOKEN_ENV, ""), repr=False)
    """Its control token (default ``$MCPGYM_TOKEN``)."""
    faults: str = "default"
    """Fault profile name: ``none``, ``default`` (``mcpgym run``'s default), ``harsh``."""
    tools: str = "all"
    """Tool exposure (``mcpgym run --tools``): ``all``, ``task``, ``task+N``, ``retrieval``."""
    fault_seed: int | None = Field(None, ge=0)
    """A fixed fault seed for every rollout instead of ``fault_seed_for(task, trial)``."""
    reward: str | dict[str, Any] = "outcome"
    """Reward profile: ``outcome``, ``shaped``, or the fields of a ``RewardProfile``."""
    request_timeout: float = Field(120.0, gt=0)
    """Seconds one request to the mcpgym server may take."""


class McpgymTasksetConfig(vf.TasksetConfig):
    """Which tasks load (``--env.taskset.*``)."""

    suite: str = "core"
    """mcpgym suite (``core``, ``smoke``, ``baseline``, an app's name...)."""
    tasks: list[str] = Field(default_factory=list)
    """Only these task ids, in this order (empty: the whole suite)."""
    trials: int = Field(1, ge=1)
    """Trials per task: one verifiers task per (task, trial), as ``mcpgym run --trials``."""
    task: McpgymTaskConfig = McpgymTaskConfig()


class McpgymData(vf.TaskData):
    """One (task, trial): the wire half of a verifiers task."""

    task_id: str
    trial: int


class McpgymState(vf.State):
    """The rollout's episode, made by :meth:`McpgymTask.setup`."""

    episode_id: str = ""
    mcp_url: str = ""
    world_seed: int = 0
    fault_seed: int = 0
    faults: str = ""


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every client this module makes: httpx builds a new one per client
    otherwise (loading the CA bundle, 20-50 ms of CPU)."""
    return ssl.create_default_context()


_ClientT = TypeVar("_ClientT")
_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], Any]] = weakref.WeakKeyDictionary()
"""The HTTP clients of each running event loop, by what they are for (:func:`_pooled`)."""


def _pooled(key: tuple[Any, ...], make: Callable[[], _ClientT]) -> _ClientT:
    """The running event loop's client for ``key``, made by ``make`` the first time (or again
    once closed). Every rollout of an eval runs on one loop, so its rollouts share the clients,
    their TLS context and their kept-alive connections instead of making, connecting and closing
    a client per request (an httpx client per request cost about 2.5 ms of CPU a rollout, an
    MCP session's own httpx2 client 22 ms). An httpx client belongs to the loop it first ran on:
    the pool is per loop, and goes with it."""
    pool = _POOLS.setdefault(asyncio.get_running_loop(), {})
    client = pool.get(key)
    if client is None or client.is_closed:
        client = pool[key] = make()
    return client


def _client(config: McpgymTaskConfig) -> httpx.AsyncClient:
    """The loop's shared client for the control API of ``config``'s server (kept alive between
    rollouts; connections bounded by the concurrent rollouts, verifiers' own limit).

    Raises:
        ValueError: no server URL configured.
    """
    if not config.url:
        raise ValueError(f"no mcpgym server: set --env.taskset.task.url or ${URL_ENV} (mcpgym serve --transport http)")
    return _pooled(
        ("control", config.url.rstrip("/"), config.token, config.request_timeout),
        lambda: httpx.AsyncClient(
            base_url=config.url.rstrip("/"),
            headers={"Authorization": f"Bearer {config.token}"},
            timeout=config.request_timeout,
            verify=_tls(),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
        ),
    )


@asynccontextmanager
async def _mcp_session(url: str, timeout: float, connect_timeout: float) -> Any:
    """An MCP client session on ``url`` (the MCP SDK verifiers pins, its streamable HTTP
    transport), over the loop's shared httpx2 client (:func:`_pooled`) instead of a new one per
    session as verifiers' own ``mcp_client`` makes (same timeouts and redirects; as there, a
    failure while closing is suppressed, so closing noise cannot fail a finished rollout)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = _pooled(
        ("mcp", timeout, connect_timeout),
        lambda: httpx2.AsyncClient(
            follow_redirects=True,
            timeout=httpx2.Timeout(timeout, connect=connect_timeout),
            verify=_tls(),
            limits=httpx2.Limits(max_connections=None, max_keepalive_connections=64),
        ),
    )
    stack = AsyncExitStack()
    try:
        yield await stack.enter_async_context(Client(streamable_http_client(url, http_client=http)))
    finally:
        with suppress(Exception):
            await stack.aclose()


def _checked(response: httpx.Response, what: str) -> httpx.Response:
    """``response`` if it succeeded, else a RuntimeError naming ``what`` and the server's error."""
    if response.is_success:
        return response
    try:
        detail = response.json().get("error", response.text)
    except ValueError:
        detail = response.text
    raise RuntimeError(f"mcpgym server: {what}: HTTP {response.status_code}: {str(detail)[:500]}")


class McpgymTask(vf.Task[McpgymData, McpgymState, McpgymTaskConfig]):
    """One rollout of an mcpgym task: its own episode, its reward from the server."""

    async def setup(self, trace: vf.Trace, runtime: Any) -> None:
        """Create the rollout's episode (``POST /control/task-episodes``) and keep it on ``trace.state``.

        Raises:
            RuntimeError: the server refused (unknown task, bad profile, episode cap reached).
        """
        config = self.config
        body = TaskEpisodeRequest(
            task=self.data.task_id,
            trial=self.data.trial,
            faults=config.faults,
            fault_seed=config.fault_seed,
            tools=config.tools,
        )
        answer = _checked(
            await _client(config).post("/control/task-episodes", content=body.model_dump_json(exclude_none=True)),
            "create the task's episode",
        )
        made = TaskEpisodeCreated.model_validate_json(answer.content)
        state = trace.state
        state.episode_id, state.mcp_url = made.episode_id, made.mcp_url
        state.world_seed, state.fault_seed, state.faults = made.seed, made.fault_seed, made.faults

    @vf.reward(weight=1.0)
    async def mcpgym(self, trace: vf.Trace) -> float:
        """The finished episode's reward (``POST /control/episodes/{id}/reward``, which then
        deletes the episode): ``episode_reward``'s total under the configured profile; terms
        and scores are recorded as metrics.

        Raises:
            RuntimeError: no episode (setup failed) or the server could not reward it (e.g. the
                judge could not decide the outcome: never a silent zero).
        """
        state = trace.state
        if not state.episode_id:
            raise RuntimeError("this rollout has no mcpgym episode (its setup failed)")
        body = RewardRequest(final_message=trace.last_reply, reward=self.config.reward, steps=True, delete=True)
        answer = _checked(
            await _client(self.config).post(
                f"/control/episodes/{state.episode_id}/reward", content=body.model_dump_json()
            ),
            "reward",
        )
        got = EpisodeReward.model_validate_json(answer.content)
        for term in got.breakdown.get("terms", []):
            trace.record_metric(f"reward_{term['name']}", float(term["contribution"]))
        for name, value in got.scores.items():
            if isinstance(value, (bool, int, float)) and not isinstance(value, str):
                trace.record_metric(name, float(value))
        trace.info["mcpgym"] = {
            "episode_id": got.episode_id,
            "task_id": self.data.task_id,
            "trial": self.data.trial,
            "world_seed": state.world_seed,
            "fault_seed": state.fault_seed,
            "faults": state.faults,
            "calls": got.calls,
            "reward": got.breakdown,
            "components": got.components,
            "scores": got.scores,
            "steps": [s.model_dump(mode="json") for s in got.steps or []],
        }
        return got.total


class McpgymTaskset(vf.Taskset[McpgymTask, McpgymTasksetConfig]):
    """The suite's tasks (or the named ones) x ``trials``, listed by the mcpgym server."""

    def load(self) -> Any:
        """Yield one :class:`McpgymTask` per (task, trial), trial-major as ``mcpgym run`` plans.

        Raises:
            RuntimeError: the server is unreachable or refused the listing.
            ValueError: no server URL is configured.
        """
        config = self.config
        params: list[tuple[str, str | int | float | bool | None]] = [
            ("suite", config.suite),
            *(("task", t) for t in config.tasks),
        ]
        task_config = config.task
        if not task_config.url:
            raise ValueError(
                f"no mcpgym server: set --env.taskset.task.url or ${URL_ENV} (mcpgym serve --transport http)"
            )
        with httpx.Client(
            base_url=task_config.url.rstrip("/"),
            headers={"Authorization": f"Bearer {task_config.token}"},
            timeout=task_config.request_timeout,
            verify=_tls(),
        ) as http:
            answer = _checked(http.get("/control/tasks", params=params), "list tasks")
        listed = TaskList.model_validate_json(answer.content)
        for trial in range(config.trials):
            for t in listed.tasks:
                yield McpgymTask(
                    McpgymData(
                        id=f"{t.task}#{trial}",
                        name=t.task,
                        prompt=t.instruction,
                        system_prompt=listed.system_prompt,
                        task_id=t.task,
                        trial=trial,
                    ),
                    task_config,
                )


class McpgymHarnessConfig(vf.HarnessConfig):
    """The in-process tool-calling loop (``--env.agent.harness.*``)."""

    id: str = TASKSET_ID
    max_turns: int = Field(30, ge=1, le=1000)
    """Most model turns in one rollout (a turn past it is not asked for)."""
    connect_timeout: float = Field(30.0, gt=0, le=600)
    """Seconds to connect to the episode's MCP endpoint (verifiers' own default, 5 s, is too
    short for 64 rollouts starting at once on a loaded host)."""


class McpgymHarness(vf.Harness[McpgymHarnessConfig]):
    """A chat loop run in process (verifiers' ``Harness.launch`` contract allows it: every model
    call goes through the interception ``endpoint``): the tools are the rollout's MCP servers',
    the mcpgym episode's when the task made one, else the task's verifiers toolsets'."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_MCP = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: Any,
        trace: vf.Trace,
        runtime: Any,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> ProgramResult:
        """Play the rollout to its end (module docstring) and return a success result.

        Raises:
            RuntimeError: the model endpoint failed or answered no message, or the episode's MCP
                session or HTTP client failed (the message names the episode and the error's type).
        """
        state = trace.state
        urls = [state.mcp_url] if getattr(state, "mcp_url", "") else list(mcp_urls.values())
        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt if isinstance(prompt, str) else data.prompt_text})
        try:
            await self._play(ctx, urls, endpoint, secret, messages)
        except BaseExceptionGroup as group:  # the MCP client's task group: name the cause, not the group
            raise RuntimeError(f"mcpgym episode {getattr(state, 'episode_id', '')}: {_leaf(group)}") from group
        except Exception as exc:  # an httpx timeout's own text is often empty: name its type too
            raise RuntimeError(
                f"mcpgym episode {getattr(state, 'episode_id', '')}: {type(exc).__name__}: {str(exc)[:500]}"
            ) from exc
        return ProgramResult(exit_code=0, stdout="", stderr="")

    async def _play(
        self, ctx: Any, urls: list[str], endpoint: str, secret: str, messages: list[dict[str, Any]]
    ) -> None:
        """The chat loop over the episode's MCP sessions (:meth:`launch`)."""
        async with AsyncExitStack() as stack:
            sessions = [
                await stack.enter_async_context(_mcp_session(u, self.config.tool_timeout, self.config.connect_timeout))
                for u in urls
            ]
            owner, tools = await _list_tools(sessions)
            http = _pooled(
                ("model", self.config.tool_timeout),
                lambda: httpx.AsyncClient(
                    timeout=self.config.tool_timeout,
                    verify=_tls(),
                    limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
                ),
            )
            for _turn in range(self.config.max_turns):
                reply = await _chat(http, endpoint, secret, ctx.model, messages, tools)
                messages.append(reply)
                calls = reply.get("tool_calls") or []
                if not calls:
                    break
                for call in calls:
                    messages.append(await _run_call(call, owner))


def _leaf(group: BaseExceptionGroup) -> str:
    """``type: message`` of the first exception inside ``group`` (nested groups opened)."""
    inner: BaseException = group
    while isinstance(inner, BaseExceptionGroup) and inner.exceptions:
        inner = inner.exceptions[0]
    return f"{type(inner).__name__}: {str(inner)[:500]}"


async def _list_tools(sessions: list[Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Each tool's session and the OpenAI tool schemas of every session's tools."""
    owner: dict[str, Any] = {}
    schemas = []
    for session in sessions:
        for tool in (await session.list_tools()).tools:
            owner[tool.name] = session
            schemas.append(
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description or "",
                        "parameters": tool.input_schema or {"type": "object", "properties": {}},
                    },
                }
            )
    return owner, schemas


async def _chat(
    http: httpx.AsyncClient,
    endpoint: str,
    secret: str,
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
) -> dict[str, Any]:
    """One chat completion through the interception (``secret``: the rollout's bearer secret);
    the assistant message as a chat dict."""
    body: dict[str, Any] = {"model": model, "messages": messages}
    if tools:
        body |= {"tools": tools, "tool_choice": "auto"}
    answer = await http.post(
        f"{endpoint.rstrip('/')}/chat/completions", json=body, headers={"Authorization": f"Bearer {secret}"}
    )
    if not answer.is_success:
        raise RuntimeError(f"model endpoint: HTTP {answer.status_code}: {answer.text[:500]}")
    choices = answer.json().get("choices") or []
    if not choices or not isinstance(choices[0].get("message"), dict):
        raise RuntimeError("model endpoint answered no message")
    message = choices[0]["message"]
    out: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    if message.get("tool_calls"):
        out["tool_calls"] = message["tool_calls"]
    return out


async def _run_call(call: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    """Run one tool call on its MCP session; the tool message to send back. A call the model
    got wrong (unknown tool, arguments that are no JSON object) is answered with an error
    and reaches no tool."""
    fn = call.get("function") or {}
    name = fn.get("name") or ""
    try:
        arguments = json.loads(fn.get("arguments") or "{}")
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        text = json.dumps({"error": "invalid_arguments", "message": "arguments must be a JSON object"})
    elif name not in owner:
        text = json.dumps({"error": "unknown_tool", "message": f"no tool named {name[:100]!r}"})
    else:
        result = await owner[name].call_tool(name, arguments)
        text = "\n".join(getattr(c, "text", "") for c in result.content)[:MAX_TOOL_TEXT]
    return {"role": "tool", "tool_call_id": call.get("id") or "", "content": text}


def load_environment(
    suite: str = "core",
    tasks: list[str] | None = None,
    faults: str = "default",
    tools: str = "all",
    trials: int = 1,
    reward: str | dict[str, Any] = "outcome",
    *,
    url: str | None = None,
    token: str | None = None,
    fault_seed: int | None = None,
    max_turns: int = 30,
) -> vf.Env:
    """A verifiers environment over an ``mcpgym serve --transport http`` server.

    Args:
        suite, tasks: which mcpgym tasks (``tasks``: only these ids). faults: fault profile.
        tools: tool exposure. trials: verifiers tasks per mcpgym task (trial 0..trials-1).
        reward: reward profile. url, token: the server (default ``$MCPGYM_URL``,
        ``$MCPGYM_TOKEN``). fault_seed: a fixed fault seed. max_turns: model turns per rollout.

    Returns:
        The ``verifiers.v1`` env (``SingleAgentEnv`` over :class:`McpgymTaskset`, played by
        :class:`McpgymHarness`); run it with verifiers' eval (``vf-eval``) or its API.

    Raises:
        ValueError: no server URL; pydantic's ValidationError for a bad option.
    """
    from verifiers.v1.utils.loaders import load_environment as vf_load

    task = McpgymTaskConfig(
        url=url if url is not None else os.environ.get(URL_ENV, ""),
        token=token if token is not None else os.environ.get(TOKEN_ENV, ""),
        faults=faults,
        tools=tools,
        fault_seed=fault_seed,
        reward=reward,
    )
    config = vf.SingleAgentEnvConfig(
        taskset=McpgymTasksetConfig(id=TASKSET_ID, suite=suite, tasks=list(tasks or []), trials=trials, task=task),
        # The harness runs in this process (no sandbox needed: it executes no model code).
        agent=vf.AgentConfig(harness=McpgymHarnessConfig(max_turns=max_turns), runtime=vf.SubprocessConfig()),
    )
    return vf_load(config)


__all__ = [
    "TASKSET_ID",
    "McpgymData",
    "McpgymHarness",
    "McpgymHarnessConfig",
    "McpgymState",
    "McpgymTask",
    "McpgymTaskConfig",
    "McpgymTaskset",
    "McpgymTasksetConfig",
    "load_environment",
]
