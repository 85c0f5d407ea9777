"""Rollouts through NeMo Gym's own client against mcpgym's resources server; runs in
``.venv-nemo`` (nemo-gym 0.4 with mcp<2; no mcpgym import), driven by
tests/integrations/test_nemo_gym.py and benchmarks/nemo_gym.py.

Reads one JSON object on stdin::

    {"mcpgym_url": str, "token": str, "reward": "outcome" | "shaped", "concurrency": int,
     "rollouts": [{"task": str, "trial": int, "faults": str | null, "fault_seed": int | null, "actions": [{"tool", "arguments"}],
                   "final": str, "seed": bool (default true), "verify": bool (default true),
                   "delete_before_verify": bool}],
     "bench": {"seconds": float, "task": str} | null}

Starts the resources server (integrations/nemo_gym_server.py) with uvicorn on a free loopback
port, plays every rollout with NeMo Gym's ``ServerClient`` (``/seed_session``, the episode's MCP
tools with the MCP SDK's streamable-HTTP client, ``/verify``; at most ``concurrency`` at once, each
its own session cookie) and prints one JSON object: ``{"rollouts": [{"seed": answer | {"status",
"detail"}, "results": [tool results], "verify": answer | {"status", "detail"}}]}``. With ``bench``,
it instead measures seed+verify pairs per second (no tool calls) against this server and against
NeMo Gym's example resources server ``example_session_state_mgmt``, alternating, and prints
``{"bench": {"mcpgym": rate, "example": rate}}``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from nemo_gym.openai_utils import (
    NeMoGymEasyInputMessage,
    NeMoGymResponse,
    NeMoGymResponseCreateParamsNonStreaming,
    NeMoGymResponseOutputMessage,
    NeMoGymResponseOutputText,
)
from nemo_gym.server_utils import BaseServerConfig, ServerClient, get_response_json
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parents[2]


def load_server_module() -> Any:
    """integrations/nemo_gym_server.py loaded by its path (this venv has no mcpgym)."""
    spec = importlib.util.spec_from_file_location(
        "mcpgym_nemo_gym_server", ROOT / "integrations" / "nemo_gym_server.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def free_port() -> int:
    """A free loopback TCP port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_in_thread(app: Any, port: int) -> uvicorn.Server:
    """Run ``app`` with uvicorn on ``port`` in a daemon thread; return once it listens (30 s at most)."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the resources server did not start within 30 s")
        time.sleep(0.01)
    return server


def client_for(servers: dict[str, int]) -> ServerClient:
    """NeMo Gym's ServerClient knowing each named resources server's loopback port."""
    tree = {n: {"resources_servers": {n: {"host": "127.0.0.1", "port": p}}} for n, p in servers.items()}
    return ServerClient(
        head_server_config=BaseServerConfig(host="127.0.0.1", port=0), global_config_dict=OmegaConf.create(tree)
    )


def verify_body(final: str) -> dict[str, Any]:
    """A NeMo Gym verify request whose response's last assistant message is ``final``."""
    response = NeMoGymResponse(
        id="resp_1",
        created_at=0,
        model="scripted",
        object="response",
        output=[
            NeMoGymResponseOutputMessage(
                id="msg_1",
                content=[NeMoGymResponseOutputText(text=final, annotations=[])],
                role="assistant",
                status="completed",
                type="message",
            )
        ],
        parallel_tool_calls=False,
        tool_choice="auto",
        tools=[],
    )
    params = NeMoGymResponseCreateParamsNonStreaming(input=[NeMoGymEasyInputMessage(role="user", content="go")])
    return {"responses_create_params": params.model_dump(exclude_unset=True), "response": response.model_dump()}


async def post(client: ServerClient, name: str, path: str, body: dict[str, Any], cookies: Any) -> tuple[dict, Any]:
    """One POST through NeMo Gym's client: ``(answer JSON or {"status", "detail"}, cookies)``."""
    answer = await client.post(server_name=name, url_path=path, json=body, cookies=cookies)
    if not answer.ok:
        return {"status": answer.status, "detail": (await get_response_json(answer)).get("detail")}, answer.cookies
    return await get_response_json(answer), answer.cookies


async def tool_calls(url: str, actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The actions as MCP tool calls on the episode's URL: each ``{"is_error", "result"}``."""
    out = []
    async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as session:
        await session.initialize()
        for a in actions:
            r = await session.call_tool(a["tool"], a.get("arguments") or {})
            out.append({"is_error": bool(r.isError), "result": r.structuredContent})
    return out


async def rollout(client: ServerClient, spec: dict[str, Any], control: Any) -> dict[str, Any]:
    """One rollout (module docstring): seed, tool calls, verify, each through NeMo Gym's client."""
    cookies: Any = None
    played: dict[str, Any] = {"results": []}
    if spec.get("seed", True):
        wanted = {k: spec[k] for k in ("task", "trial", "faults", "fault_seed") if spec.get(k) is not None}
        played["seed"], cookies = await post(client, "mcpgym", "/seed_session", wanted, cookies)
        if "status" in played["seed"]:
            return played
        played["results"] = await tool_calls(played["seed"]["mcp"]["url_path"], spec.get("actions", []))
        if spec.get("delete_before_verify"):
            await control.delete(f"/control/episodes/{played['seed']['episode_id']}")
    if not spec.get("verify", True):
        return played
    played["verify"], _ = await post(client, "mcpgym", "/verify", verify_body(spec.get("final", "")), cookies)
    return played


def aiohttp_client() -> None:
    """NeMo Gym's global aiohttp client with its default settings (no Hydra config to read)."""
    from nemo_gym.server_utils import GlobalAIOHTTPAsyncClientConfig, set_global_aiohttp_client

    set_global_aiohttp_client(GlobalAIOHTTPAsyncClientConfig())


async def play(job: dict[str, Any], client: ServerClient) -> list[dict[str, Any]]:
    """Every rollout of ``job``, at most ``concurrency`` at once, in order."""
    import httpx

    aiohttp_client()
    gate = asyncio.Semaphore(int(job.get("concurrency", 1)))
    async with httpx.AsyncClient(base_url=job["mcpgym_url"], headers={"Authorization": f"Bearer {job['token']}"}) as c:

        async def one(spec: dict[str, Any]) -> dict[str, Any]:
            async with gate:
                return await rollout(client, spec, c)

        return list(await asyncio.gather(*(one(s) for s in job["rollouts"])))


async def pairs_per_second(
    client: ServerClient, name: str, seed: dict[str, Any], check: dict[str, Any], seconds: float
) -> float:
    """seed_session + verify pairs per wall second, one after another, for ``seconds``."""
    body, done, start = verify_body("done") | check, 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        s = await client.post(server_name=name, url_path="/seed_session", json=seed)
        assert s.ok, await s.read()
        v = await client.post(server_name=name, url_path="/verify", json=body, cookies=s.cookies)
        assert v.ok, await v.read()
        await v.read()
        done += 1
    return done / (time.perf_counter() - start)


async def bench(job: dict[str, Any], client: ServerClient) -> dict[str, float]:
    """Both servers' rates, alternating rounds (module docstring); the best round of each."""
    aiohttp_client()
    rates: dict[str, list[float]] = {"mcpgym": [], "example": []}
    seeds = {"mcpgym": {"task": job["bench"]["task"], "trial": 0}, "example": {"initial_count": 0}}
    checks: dict[str, dict[str, Any]] = {"mcpgym": {}, "example": {"expected_count": 0}}
    for name in ("mcpgym", "example"):  # warm both (first requests, first world of the task)
        await pairs_per_second(client, name, seeds[name], checks[name], 0.3)
    for _ in range(int(job["bench"].get("rounds", 3))):
        for name in ("mcpgym", "example"):
            rate = await pairs_per_second(client, name, seeds[name], checks[name], job["bench"]["seconds"])
            rates[name].append(rate)
    return {name: max(r) for name, r in rates.items()}


def main() -> None:
    """Read the job on stdin, play or measure it, print the JSON answer."""
    job = json.loads(sys.stdin.read())
    module = load_server_module()
    ports = {"mcpgym": free_port()}
    server = module.build(job["mcpgym_url"], job["token"], port=ports["mcpgym"], reward=job.get("reward", "outcome"))
    servers = [serve_in_thread(server.setup_webserver(), ports["mcpgym"])]
    if job.get("bench"):
        from resources_servers.example_session_state_mgmt.app import (
            StatefulCounterResourcesServer,
            StatefulCounterResourcesServerConfig,
        )

        ports["example"] = free_port()
        cfg = StatefulCounterResourcesServerConfig(
            host="127.0.0.1", port=ports["example"], entrypoint="app.py", name="example"
        )
        example = StatefulCounterResourcesServer(config=cfg, server_client=client_for(ports))
        servers.append(serve_in_thread(example.setup_webserver(), ports["example"]))
    client = client_for(ports)
    try:
        if job.get("bench"):
            print(json.dumps({"bench": asyncio.run(bench(job, client))}))
        else:
            print(json.dumps({"rollouts": asyncio.run(play(job, client))}))
    finally:
        for s in servers:
            s.should_exit = True


if __name__ == "__main__":
    main()
