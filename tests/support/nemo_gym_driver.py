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
NeMo Gym's example resources server ``example_session_state_mgmt``, pair by pair in turn, and
prints ``{"bench": {"ratios": [per round], "mcpgym": rate, "example": rate, "direct": {"requests": ms,
"empty": ms}}}``
(``direct``: mcpgym's two requests of a pair, and an empty request, timed straight from aiohttp).
With ``bench.concurrent`` (``{"sessions": int, "seconds": float, "rounds": int}``) it measures
instead pairs per second with ``sessions`` pairs in flight, each resources server in its own
uvicorn process (as ``ng_run`` runs them; this file with ``--serve NAME PORT URL TOKEN``), one
round of each in turn (the order alternating), and prints ``{"bench": {"ratios": [...],
"mcpgym": rate, "example": rate, "cpu_ms": {process: CPU ms per pair}}}``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import statistics
import subprocess
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


async def one_pair(client: ServerClient, name: str, seed: dict[str, Any], body: dict[str, Any]) -> float:
    """One seed_session + verify pair on server ``name``: its wall seconds."""
    start = time.perf_counter()
    s = await client.post(server_name=name, url_path="/seed_session", json=seed)
    assert s.ok, await s.read()
    v = await client.post(server_name=name, url_path="/verify", json=body, cookies=s.cookies)
    assert v.ok, await v.read()
    await v.read()
    return time.perf_counter() - start


async def interleaved_round(
    client: ServerClient, seeds: dict[str, dict[str, Any]], bodies: dict[str, dict[str, Any]], seconds: float
) -> dict[str, float]:
    """Pairs per second of each server over ``seconds`` of wall time, pair by pair in turn (so
    both meet the same load at the same moments): ``{name: pairs / seconds spent on them}``."""
    spent = dict.fromkeys(seeds, 0.0)
    done = dict.fromkeys(seeds, 0)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for name in seeds:
            spent[name] += await one_pair(client, name, seeds[name], bodies[name])
            done[name] += 1
    return {name: done[name] / spent[name] for name in seeds}


async def direct_ms(job: dict[str, Any], seconds: float) -> dict[str, float]:
    """Milliseconds, straight to mcpgym over one kept-alive aiohttp session as the resources
    server holds: ``requests`` the pair's two requests (task episode; reward with delete),
    ``empty`` an empty round trip (``GET /health``); each the mean over ``seconds``."""
    import aiohttp

    headers = {"Authorization": f"Bearer {job['token']}"}
    base, task = job["mcpgym_url"].rstrip("/"), job["bench"]["task"]
    out: dict[str, float] = {}
    async with aiohttp.ClientSession(headers=headers) as http:

        async def pair() -> None:
            async with http.post(f"{base}/control/task-episodes", json={"task": task, "trial": 0}) as made:
                assert made.status == 201, await made.read()
                eid = (await made.json())["episode_id"]
            wanted = {"final_message": "done", "delete": True}
            async with http.post(f"{base}/control/episodes/{eid}/reward", json=wanted) as got:
                assert got.status == 200, await got.read()
                await got.read()

        async def empty() -> None:
            async with http.get(f"{base}/health") as got:
                await got.read()

        for name, step in (("requests", pair), ("empty", empty)):
            done, start = 0, time.perf_counter()
            while time.perf_counter() - start < seconds:
                await step()
                done += 1
            out[name] = (time.perf_counter() - start) / done * 1e3
    return out


async def bench(job: dict[str, Any], client: ServerClient) -> dict[str, Any]:
    """Both servers' rates, pair by pair in turn (module docstring), in ``rounds`` rounds:
    ``{"ratios": [mcpgym / example per round], "mcpgym", "example": median rates, "direct": the
    best round of :func:`direct_ms` (what mcpgym's share of a pair costs)}``."""
    aiohttp_client()
    seeds = {"mcpgym": {"task": job["bench"]["task"], "trial": 0}, "example": {"initial_count": 0}}
    bodies = {"mcpgym": verify_body("done"), "example": verify_body("done") | {"expected_count": 0}}
    await interleaved_round(client, seeds, bodies, 0.3)  # warm both (first requests, first world)
    rounds: list[dict[str, float]] = []
    direct: list[dict[str, float]] = []
    for _ in range(int(job["bench"].get("rounds", 3))):
        rounds.append(await interleaved_round(client, seeds, bodies, job["bench"]["seconds"]))
        direct.append(await direct_ms(job, job["bench"]["seconds"] / 4))
    return {
        "ratios": [r["mcpgym"] / r["example"] for r in rounds],
        **{name: statistics.median(r[name] for r in rounds) for name in seeds},
        "direct": {k: min(d[k] for d in direct) for k in direct[0]},
    }


async def concurrent_round(
    client: ServerClient, name: str, seed: dict, body: dict, sessions: int, seconds: float
) -> float:
    """Pairs per wall second on server ``name`` with ``sessions`` pairs in flight for ``seconds``
    (each its own session; the pairs begun before the end are waited for and counted)."""
    done = 0
    start = time.perf_counter()

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() - start < seconds:
            await one_pair(client, name, seed, body)
            done += 1

    await asyncio.gather(*(worker() for _ in range(sessions)))
    return done / (time.perf_counter() - start)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (every thread; /proc/<pid>/stat)."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def concurrent_bench(job: dict[str, Any], client: ServerClient, pids: dict[str, int]) -> dict[str, Any]:
    """Both servers' rates with ``sessions`` in flight, round by round in turn (module
    docstring), and each process's CPU milliseconds per pair over the rounds of its server."""
    aiohttp_client()
    conc = job["bench"]["concurrent"]
    sessions, seconds = int(conc["sessions"]), float(conc["seconds"])
    seeds = {"mcpgym": {"task": job["bench"]["task"], "trial": 0}, "example": {"initial_count": 0}}
    bodies = {"mcpgym": verify_body("done"), "example": verify_body("done") | {"expected_count": 0}}
    for name in seeds:  # warm both
        await concurrent_round(client, name, seeds[name], bodies[name], sessions, 0.3)
    rates: dict[str, list[float]] = {name: [] for name in seeds}
    cpu: dict[str, float] = {}
    pairs = dict.fromkeys(seeds, 0.0)
    watched = {"client": os.getpid(), **pids}
    for r in range(int(conc["rounds"])):
        for name in seeds if r % 2 == 0 else reversed(list(seeds)):
            before = {k: cpu_seconds(p) for k, p in watched.items()}
            rate = await concurrent_round(client, name, seeds[name], bodies[name], sessions, seconds)
            rates[name].append(rate)
            pairs[name] += rate * seconds
            for k, p in watched.items():
                key = f"{k}@{name}"
                cpu[key] = cpu.get(key, 0.0) + cpu_seconds(p) - before[k]
    per_pair = {
        key: round(spent / pairs[key.split("@")[1]] * 1e3, 3)
        for key, spent in cpu.items()
        if key.split("@")[0] in ("client", key.split("@")[1], "mcpgym_serve")
        and not (key.startswith("mcpgym_serve") and key.endswith("@example"))
    }
    return {
        "ratios": [m / e for m, e in zip(rates["mcpgym"], rates["example"], strict=True)],
        **{name: statistics.median(rates[name]) for name in seeds},
        "cpu_ms": per_pair,
    }


def serve(name: str, port: int, url: str, token: str) -> None:
    """``--serve NAME PORT URL TOKEN``: serve one resources server (``mcpgym`` or ``example``)
    with uvicorn in this process until terminated."""
    if name == "mcpgym":
        app = load_server_module().build(url, token, port=port).setup_webserver()
    else:
        from resources_servers.example_session_state_mgmt.app import (
            StatefulCounterResourcesServer,
            StatefulCounterResourcesServerConfig,
        )

        cfg = StatefulCounterResourcesServerConfig(host="127.0.0.1", port=port, entrypoint="app.py", name=name)
        app = StatefulCounterResourcesServer(config=cfg, server_client=client_for({name: port})).setup_webserver()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def spawn_servers(job: dict[str, Any]) -> tuple[dict[str, int], list[subprocess.Popen]]:
    """Both resources servers, each in its own process on a free port; returns once both
    accept connections (30 s at most)."""
    ports = {"mcpgym": free_port(), "example": free_port()}
    procs = [
        subprocess.Popen([sys.executable, __file__, "--serve", n, str(p), job["mcpgym_url"], job["token"]])
        for n, p in ports.items()
    ]
    deadline = time.monotonic() + 30
    for port in ports.values():
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    for p in procs:
                        p.kill()
                    raise RuntimeError("a resources server process did not start within 30 s") from None
                time.sleep(0.05)
    return ports, procs


def main_concurrent(job: dict[str, Any]) -> None:
    """The concurrent measurement (module docstring): servers in processes of their own."""
    ports, procs = spawn_servers(job)
    pids = {name: p.pid for name, p in zip(ports, procs, strict=True)}
    if job.get("mcpgym_pid"):
        pids["mcpgym_serve"] = int(job["mcpgym_pid"])
    try:
        print(json.dumps({"bench": asyncio.run(concurrent_bench(job, client_for(ports), pids))}))
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def main() -> None:
    """Read the job on stdin, play or measure it, print the JSON answer (or ``--serve``)."""
    if sys.argv[1:2] == ["--serve"]:
        name, port, url, token = sys.argv[2:6]
        serve(name, int(port), url, token)
        return
    job = json.loads(sys.stdin.read())
    if (job.get("bench") or {}).get("concurrent"):
        main_concurrent(job)
        return
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
