"""A NeMo Gym resources server whose rollouts are mcpgym episodes (docs/rl.md, "NeMo Gym").

Standalone on purpose: this module imports only NeMo Gym (``nemo-gym`` 0.4, which needs
``mcp<2``), FastAPI, pydantic and the HTTP stack NeMo Gym itself uses (aiohttp, orjson), never mcpgym, so it runs in a venv of its own
(``.venv-nemo``) and talks to a ``mcpgym serve --transport http`` over HTTP: the process
boundary that lets NeMo Gym's ``mcp<2`` and mcpgym's ``mcp>=2.3`` both be what they are. Load
it by its path (``python integrations/nemo_gym_server.py --mcpgym-url URL --token T``, or
``importlib`` on the file; it has no ``from __future__ import annotations``, so pydantic
resolves its models without the module being in ``sys.modules``).

- ``POST /seed_session`` (:class:`McpgymSeedSessionRequest`: ``task``, ``trial``, optionally
  ``faults`` and ``fault_seed``): ``POST /control/task-episodes`` on mcpgym makes the task's
  episode (world seed the task's; fault seed ``fault_seed_for(task, trial)`` as ``mcpgym run``
  derives it). The answer (:class:`McpgymSeedSessionResponse`) gives the rollout's own MCP
  access as NeMo Gym's :class:`nemo_gym.base_resources_server.MCPServerMetadata` under ``mcp``:
  ``url_path`` is the episode's absolute streamable-HTTP MCP URL on mcpgym (the 128-bit episode
  id in it is the capability; no headers needed), plus the episode id, seeds and instruction.
- ``POST /verify`` (:class:`McpgymVerifyRequest`): the text of the response's last assistant
  message is the final message; ``POST /control/episodes/{id}/reward`` on mcpgym ends, judges
  and rewards the episode with mcpgym's one reward function under the server's profile; the
  answer (:class:`McpgymVerifyResponse`) has ``reward`` (the total) and ``reward_components``
  (``{term: signed contribution, "process": sum}``) and the whole breakdown. The same request
  asks mcpgym to delete the episode once it is rewarded (``"delete": true``), and the session is
  forgotten.

Two requests to mcpgym per rollout, over one kept-alive aiohttp connection pool per server (the
client NeMo Gym's own servers use; docs/performance.md, ``nemo_gym_seed_verify``, has what each
costs).

Refusals are FastAPI ``HTTPException`` answers, as NeMo Gym's own resources servers give
(``{"detail": ...}``): a seed mcpgym refuses keeps mcpgym's status (422 unknown task or bad
seed, 429 episode cap, with ``Retry-After``); a verify whose session was never seeded (or
already verified) is 400 "session not seeded"; one whose episode is gone on mcpgym (expired,
deleted, server restarted) is 410; mcpgym unreachable or timing out is 503/504. No reward is
ever made up.
"""

import argparse
import contextlib
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
from fastapi import FastAPI, HTTPException, Request
from nemo_gym.base_resources_server import (
    BaseResourcesServerConfig,
    BaseSeedSessionRequest,
    BaseSeedSessionResponse,
    BaseVerifyRequest,
    BaseVerifyResponse,
    MCPServerMetadata,
    SimpleResourcesServer,
)
from nemo_gym.server_utils import SESSION_ID_KEY
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

MAX_SEED = 2**63 - 1
"""Largest world or fault seed mcpgym takes."""


class McpgymResourcesServerConfig(BaseResourcesServerConfig):
    """The server's config (NeMo Gym's, plus where mcpgym is).

    Attributes:
        mcpgym_url: base URL of ``mcpgym serve --transport http`` (e.g. ``http://127.0.0.1:8765``).
        mcpgym_token: its control token. reward: the reward profile: ``outcome``, ``shaped``, or
            a mapping of mcpgym ``RewardProfile`` fields. faults: the fault profile of a seed
            that names none (None: mcpgym's ``serve --faults``; a task's own profile wins). timeout: seconds
            each request to mcpgym may take. max_sessions: most seeded, unverified sessions held.
    """

    mcpgym_url: str
    mcpgym_token: str = Field(min_length=1)
    reward: str | dict[str, Any] = "outcome"
    faults: str | dict[str, Any] | None = None
    timeout: float = Field(120.0, gt=0)
    max_sessions: int = Field(10_000, ge=1)


class McpgymSeedSessionRequest(BaseSeedSessionRequest):
    """``/seed_session``'s body: the task and trial of the rollout (a dataset row's other
    fields, such as ``responses_create_params``, are allowed and ignored).

    Attributes:
        task: an mcpgym task id. trial: 0-based trial (fixes the fault seed). faults: a
            built-in fault profile name or an inline profile. fault_seed: the fault seed itself.
    """

    model_config = ConfigDict(extra="allow")

    task: str = Field(min_length=1, max_length=200)
    trial: int = Field(0, ge=0, le=MAX_SEED, strict=True)
    faults: str | dict[str, Any] | None = None
    fault_seed: int | None = Field(None, ge=0, le=MAX_SEED, strict=True)


class McpgymSeedSessionResponse(BaseSeedSessionResponse):
    """``/seed_session``'s answer.

    Attributes:
        mcp: the rollout's MCP access (``url_path``: the episode's absolute MCP URL).
        episode_id: the mcpgym episode. task, trial: what it plays. world_seed, fault_seed: its
            seeds. instruction: the task's instruction to the agent. tools: how many tools it offers.
    """

    mcp: MCPServerMetadata
    episode_id: str
    task: str
    trial: int
    world_seed: int
    fault_seed: int
    instruction: str
    tools: int


class McpgymVerifyRequest(BaseVerifyRequest):
    """``/verify``'s body: NeMo Gym's (the rollout's ``response``); other fields allowed."""

    model_config = ConfigDict(extra="allow")


class McpgymVerifyResponse(BaseVerifyResponse):
    """``/verify``'s answer: NeMo Gym's (``reward``: mcpgym's total) plus the reward's parts.

    Attributes:
        reward_components: ``{term: signed contribution}`` and ``process`` (the per-step sum).
        reward_breakdown: mcpgym's whole ``RewardBreakdown`` (terms, process steps, profile).
        success: the judge's verdict. episode_id, task, trial: the rollout's episode.
    """

    model_config = ConfigDict(extra="allow")

    reward_components: dict[str, float]
    reward_breakdown: dict[str, Any]
    success: bool | None
    episode_id: str
    task: str
    trial: int


class _Seeded(BaseModel):
    """What a seeded session remembers until its verify."""

    episode_id: str
    task: str
    trial: int


def final_message(response: Any) -> str:
    """The text of the last assistant message among a NeMo Gym response's output items
    (its ``output_text`` parts joined); "" when there is none."""
    last = ""
    for item in getattr(response, "output", None) or []:
        if getattr(item, "type", None) != "message" or getattr(item, "role", None) != "assistant":
            continue
        content = getattr(item, "content", None)
        if isinstance(content, str):
            last = content
        elif isinstance(content, list):
            last = "".join(t for t in (getattr(p, "text", None) for p in content) if isinstance(t, str))
    return last


@dataclass(frozen=True)
class _Answer:
    """One answer of mcpgym: its status, its ``Retry-After`` header (or None) and its body."""

    status: int
    retry_after: str | None
    body: bytes

    def json(self) -> Any:
        """The body as JSON (``orjson.JSONDecodeError``, a ``ValueError``, when it is not)."""
        return orjson.loads(self.body)


def _mcpgym_error(answer: _Answer, what: str) -> HTTPException:
    """mcpgym's refusal as the HTTPException this server answers (its status, its one line)."""
    try:
        said = str(answer.json().get("error", ""))[:500]
    except (ValueError, AttributeError):
        said = answer.body[:500].decode("utf-8", "replace")
    headers = {"Retry-After": answer.retry_after} if answer.retry_after is not None else None
    return HTTPException(status_code=answer.status, detail=f"mcpgym refused {what}: {said}", headers=headers)


class McpgymResourcesServer(SimpleResourcesServer):
    """NeMo Gym's :class:`SimpleResourcesServer` over mcpgym episodes (module docstring).
    One NeMo Gym session (its session cookie) is one rollout is one mcpgym episode."""

    config: McpgymResourcesServerConfig
    _seeded: dict[str, _Seeded] = PrivateAttr(default_factory=dict)
    _http: aiohttp.ClientSession | None = PrivateAttr(default=None)

    def setup_webserver(self) -> FastAPI:
        """NeMo Gym's routes (``/seed_session``, ``/verify``, ``/aggregate_metrics``); the HTTP
        client to mcpgym is closed with the app."""
        app = super().setup_webserver()
        app.router.add_event_handler("shutdown", self.aclose)
        return app

    def _client(self) -> aiohttp.ClientSession:
        """The one HTTP client to mcpgym (made on first use, in the server's event loop): a
        kept-alive pool of at most 256 connections, each request bounded by ``timeout``."""
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(
                headers={"Authorization": f"Bearer {self.config.mcpgym_token}"},
                timeout=aiohttp.ClientTimeout(total=self.config.timeout),
                connector=aiohttp.TCPConnector(limit=256, keepalive_timeout=15.0),
                cookie_jar=aiohttp.DummyCookieJar(),
            )
        return self._http

    async def aclose(self) -> None:
        """Close the HTTP client to mcpgym."""
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def _mcpgym(self, method: str, path: str, body: dict[str, Any] | None = None) -> _Answer:
        """One request to mcpgym (``body`` as JSON); 503 when it cannot be reached, 504 when it
        does not answer within ``timeout``."""
        url = self.config.mcpgym_url.rstrip("/") + path
        data = None if body is None else orjson.dumps(body)
        headers = None if body is None else {"Content-Type": "application/json"}
        try:
            async with self._client().request(method, url, data=data, headers=headers) as answer:
                return _Answer(answer.status, answer.headers.get("Retry-After"), await answer.read())
        except TimeoutError:  # aiohttp's timeouts (ServerTimeoutError too) are TimeoutErrors
            raise HTTPException(
                504, f"mcpgym did not answer {method} {path} within {self.config.timeout:g} s"
            ) from None
        except aiohttp.ClientError as exc:
            raise HTTPException(503, f"mcpgym unreachable at {self.config.mcpgym_url}: {exc}"[:500]) from None

    async def seed_session(self, request: Request, body: McpgymSeedSessionRequest) -> McpgymSeedSessionResponse:
        """Make the rollout's episode (module docstring). A session seeded again gets a new
        episode; its old one is deleted first.

        Raises:
            HTTPException: mcpgym's refusal (422, 429), 429 past ``max_sessions``, 503/504.
        """
        session = request.session[SESSION_ID_KEY]
        old = self._seeded.pop(session, None)
        if old is not None:
            await self._mcpgym("DELETE", f"/control/episodes/{old.episode_id}")
        if len(self._seeded) >= self.config.max_sessions:
            raise HTTPException(429, f"{self.config.max_sessions} sessions are seeded and not verified yet")
        faults = body.faults if body.faults is not None else self.config.faults
        wanted = {"task": body.task, "trial": body.trial, "faults": faults, "fault_seed": body.fault_seed}
        answer = await self._mcpgym("POST", "/control/task-episodes", wanted)
        if answer.status != 201:
            raise _mcpgym_error(answer, f"the seed of task {body.task[:200]!r}")
        made = answer.json()
        self._seeded[session] = _Seeded(episode_id=made["episode_id"], task=made["task"], trial=made["trial"])
        return McpgymSeedSessionResponse(
            mcp=MCPServerMetadata(server_name=self.config.name, url_path=made["mcp_url"], headers={}),
            episode_id=made["episode_id"],
            task=made["task"],
            trial=made["trial"],
            world_seed=made["seed"],
            fault_seed=made["fault_seed"],
            instruction=made["instruction"],
            tools=made["tools"],
        )

    async def verify(self, request: Request, body: McpgymVerifyRequest) -> McpgymVerifyResponse:
        """Reward the session's episode (module docstring), then delete it.

        Raises:
            HTTPException: 400 session not seeded (or already verified), 410 its episode is gone
                on mcpgym, mcpgym's other refusals (409: the judge cannot decide), 503/504.
        """
        seeded = self._seeded.pop(request.session[SESSION_ID_KEY], None)
        if seeded is None:
            raise HTTPException(400, "session not seeded: call /seed_session first (or it was verified already)")
        wanted = {"final_message": final_message(body.response), "reward": self.config.reward, "delete": True}
        try:
            answer = await self._mcpgym("POST", f"/control/episodes/{seeded.episode_id}/reward", wanted)
        except HTTPException:  # not answered (503, 504): its episode is freed if mcpgym can be reached
            with contextlib.suppress(HTTPException):
                await self._mcpgym("DELETE", f"/control/episodes/{seeded.episode_id}")
            raise
        if answer.status == 404:
            raise HTTPException(410, f"episode {seeded.episode_id} is gone on mcpgym (expired, deleted or restarted)")
        if answer.status != 200:  # mcpgym keeps a refused episode (and a 422 body never reached it): free it
            with contextlib.suppress(HTTPException):
                await self._mcpgym("DELETE", f"/control/episodes/{seeded.episode_id}")
            raise _mcpgym_error(answer, f"the reward of episode {seeded.episode_id}")
        got = answer.json()
        return McpgymVerifyResponse(
            **body.model_dump(),
            reward=got["total"],
            reward_components=got["components"],
            reward_breakdown=got["breakdown"],
            success=got["success"],
            episode_id=seeded.episode_id,
            task=seeded.task,
            trial=seeded.trial,
        )


def build(
    mcpgym_url: str, token: str, *, name: str = "mcpgym", host: str = "127.0.0.1", port: int = 0, **config: Any
) -> McpgymResourcesServer:
    """A :class:`McpgymResourcesServer` without NeMo Gym's global config (tests, scripts):
    ``config`` takes the other :class:`McpgymResourcesServerConfig` fields. Its NeMo Gym
    ``server_client`` points at itself (it calls no other server)."""
    from nemo_gym.server_utils import BaseServerConfig, ServerClient
    from omegaconf import OmegaConf

    cfg = McpgymResourcesServerConfig(
        host=host, port=port, entrypoint=__file__, name=name, mcpgym_url=mcpgym_url, mcpgym_token=token, **config
    )
    client = ServerClient(
        head_server_config=BaseServerConfig(host=host, port=port),
        global_config_dict=OmegaConf.create({name: {"resources_servers": {name: {"host": host, "port": port}}}}),
    )
    return McpgymResourcesServer(config=cfg, server_client=client)


def main(argv: list[str] | None = None) -> None:
    """``python integrations/nemo_gym_server.py --mcpgym-url URL --token T [--port P] [--reward shaped]``:
    serve the resources server with uvicorn until interrupted."""
    import uvicorn

    parser = argparse.ArgumentParser(description="NeMo Gym resources server over mcpgym episodes")
    parser.add_argument("--mcpgym-url", required=True)
    parser.add_argument("--token", required=True, help="mcpgym serve's control token")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--reward", default="outcome", help="outcome or shaped")
    parser.add_argument(
        "--faults", default=None, help="fault profile of seeds that name none (default: mcpgym serve's --faults)"
    )
    args = parser.parse_args(argv)
    server = build(args.mcpgym_url, args.token, host=args.host, port=args.port, reward=args.reward, faults=args.faults)
    uvicorn.run(server.setup_webserver(), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
