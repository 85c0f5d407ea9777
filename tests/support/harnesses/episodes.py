"""Play one mcpgym episode through one real harness and keep both sides of it.

:func:`play` creates the episode on a running ``mcpgym serve --transport http`` (the task's
world seed and apps, a fault profile, the task's trial-0 fault seed), opens a session of the
scripted model (:mod:`tests.support.harnesses.scripted_model`) playing one scripted agent, runs
the harness's driver script (:mod:`tests.support.harnesses.drivers`) against the episode's MCP
URL, then reads the server's record of the episode (``GET /control/episodes/{id}/final``) and
deletes it. It writes into its folder:

- ``transcript.json``: what the harness saved, the way its users save it;
- ``server_trajectory.jsonl``: the server's own trajectory of the same episode (one mcpgym
  trajectory line: the call log's steps, the fault ledger, the harness's final answer; the
  world snapshots left out, so the outcome is not judged on either side);
- ``episode.json``: harness, package versions, task, agent, fault profile and seed.

Harnesses (:data:`HARNESSES`) run in this interpreter when their package is importable here;
LangGraph's ``langchain-mcp-adapters`` does not import with ``mcp>=2.3``, so it runs in a
virtual environment of its own: ``$MCPGYM_LANGGRAPH_PYTHON``, else ``.venv-langgraph/`` at the
repository root (what ``.ci/run`` creates).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import ROOT
from tests.support.harnesses.scripted_model import ScriptedModelServer
from tests.support.servers import HttpServer

DRIVERS = Path(__file__).resolve().parent / "drivers"
DRIVER_TIMEOUT = 120.0
"""Wall seconds one harness run may take before it is killed (the test then fails)."""
LANGGRAPH_PYTHON_ENV = "MCPGYM_LANGGRAPH_PYTHON"
REQUIRE_ENV = "MCPGYM_REQUIRE_HARNESSES"
"""Set to 1 (``.ci/run`` does) and a missing harness package fails its test instead of skipping."""


@dataclass(frozen=True)
class Harness:
    """One harness: its driver, the model API it speaks, the packages it needs, where it runs."""

    name: str
    driver: str
    api: str
    packages: tuple[str, ...]
    modules: tuple[str, ...]
    own_venv: bool = False

    def python(self) -> str | None:
        """The interpreter to run the driver with, or None when the harness is not installed."""
        if not self.own_venv:
            ok = all(importlib.util.find_spec(m) is not None for m in self.modules)
            return sys.executable if ok else None
        env = os.environ.get(LANGGRAPH_PYTHON_ENV)
        candidate = Path(env) if env else ROOT / ".venv-langgraph" / "bin" / "python"
        if not candidate.is_file():
            return None
        probe = subprocess.run(
            [str(candidate), "-c", "; ".join(f"import {m}" for m in self.modules)],
            capture_output=True,
            timeout=60,
        )
        return str(candidate) if probe.returncode == 0 else None

    def why_missing(self) -> str:
        """The message of a skip for want of this harness."""
        if self.own_venv:
            return (
                f"{self.name}: needs {', '.join(self.packages)} in their own virtual environment "
                f"(${LANGGRAPH_PYTHON_ENV} or .venv-langgraph/, made by .ci/run)"
            )
        return f"{self.name}: needs the 'harnesses' extra (pip install -e '.[harnesses]': {', '.join(self.packages)})"

    def versions(self, python: str) -> dict[str, str]:
        """``{package: version}`` as installed for ``python``."""
        code = (
            "import importlib.metadata as m, json; "
            f"print(json.dumps({{p: m.version(p) for p in {list(self.packages)!r}}}))"
        )
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
        return json.loads(out.stdout) if out.returncode == 0 else {}


HARNESSES: dict[str, Harness] = {
    h.name: h
    for h in (
        Harness("agents_sdk_chat", "agents_sdk.py", "chat", ("openai-agents", "openai"), ("agents",)),
        Harness("agents_sdk_responses", "agents_sdk.py", "responses", ("openai-agents", "openai"), ("agents",)),
        Harness("pydantic_ai", "pydantic_ai_driver.py", "chat", ("pydantic-ai-slim",), ("pydantic_ai",)),
        Harness(
            "langgraph",
            "langgraph_driver.py",
            "chat",
            ("langgraph", "langchain-mcp-adapters", "langchain-openai", "langchain-core", "mcp"),
            ("langgraph", "langchain_mcp_adapters.client", "langchain_openai"),
            own_venv=True,
        ),
    )
}


@dataclass
class Played:
    """One played episode: its folder and what the two sides said."""

    folder: Path
    transcript: Path
    server_trajectory: Path
    final: str
    episode: dict[str, Any]


def server_trajectory(
    task: Any,
    agent: str,
    faults: str,
    fault_seed: int,
    episode_id: str,
    apps: list[str],
    record: dict[str, Any],
    final: str,
    harness: str,
) -> Any:
    """The server's own trajectory of one episode: its call log's steps and fault ledger
    (``record``: ``{"calls", "ledger"}`` as ``GET /control/episodes/{id}/final`` answers), the
    harness's final answer, status ``completed``; no world snapshots (the outcome is judged on
    neither side)."""
    from mcpgym.evaluation.records.status import EpisodeStatus
    from mcpgym.evaluation.run.episode_runner import build_trajectory, steps_from_call_log

    traj = build_trajectory(
        episode_id=episode_id,
        task=task,
        agent_name=agent,
        trial=0,
        fault_seed=fault_seed,
        profile_name=faults,
        apps=apps,
        calls=record["calls"],
        ledger=record["ledger"],
        initial=None,  # type: ignore[arg-type]
        final=None,  # type: ignore[arg-type]
        gold=None,  # type: ignore[arg-type]
        result=None,
        status=EpisodeStatus.COMPLETED,
        reason=None,
        steps=steps_from_call_log(record["calls"]),
        metadata={"harness": harness},
    )
    traj.final_message = final
    return traj


def play(
    server: HttpServer,
    model: ScriptedModelServer,
    harness: Harness,
    python: str,
    task_id: str,
    agent: str,
    faults: str,
    folder: Path,
    http: httpx.Client,
) -> Played:
    """Play ``task_id`` with scripted ``agent`` through ``harness`` under ``faults`` (module
    docstring); files go to ``folder`` (created; existing files of these names are replaced,
    so give a fresh folder).

    Raises:
        RuntimeError: the harness run failed or timed out (the message holds its stderr tail).
    """
    from mcpgym.evaluation.tasks.registry import fault_seed_for, get_task

    task = get_task(task_id)
    fault_seed = fault_seed_for(task, 0)
    body = {"seed": task.seed, "apps": list(task.apps), "faults": faults, "fault_seed": fault_seed}
    r = http.post(f"{server.url}/control/episodes", json=body, headers=server.auth)
    r.raise_for_status()
    created = r.json()
    eid = created["episode_id"]
    session, model_url = model.add_session(task, agent, fault_seed)
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    transcript = folder / "transcript.json"
    try:
        run = subprocess.run(
            [
                python,
                str(DRIVERS / harness.driver),
                "--mcp-url",
                created["mcp_url"],
                "--model-url",
                model_url,
                "--instruction",
                task.instruction,
                "--out",
                str(transcript),
                "--api",
                harness.api,
            ],
            capture_output=True,
            text=True,
            timeout=DRIVER_TIMEOUT,
            cwd=str(folder),
        )
    except subprocess.TimeoutExpired as exc:
        http.delete(f"{server.url}/control/episodes/{eid}", headers=server.auth)
        tail = (exc.stderr or b"")[-3000:]
        raise RuntimeError(
            f"{harness.name} on {task_id} ({agent}, {faults}) did not finish within {DRIVER_TIMEOUT:g} s; "
            f"model: {session.error or 'ok'}; stderr: {tail!r}"
        ) from None
    try:
        final_r = http.get(f"{server.url}/control/episodes/{eid}/final", headers=server.auth)
        final_r.raise_for_status()
        ended = final_r.json()
    finally:
        http.delete(f"{server.url}/control/episodes/{eid}", headers=server.auth)
    if run.returncode != 0 or not transcript.is_file():
        raise RuntimeError(
            f"{harness.name} on {task_id} ({agent}, {faults}) exited {run.returncode}; "
            f"model: {session.error or 'ok'}; stderr: {run.stderr[-3000:]}"
        )
    final = str(json.loads(run.stdout.strip().splitlines()[-1])["final"])
    traj = server_trajectory(
        task, agent, faults, fault_seed, eid, list(created.get("apps") or task.apps), ended, final, harness.name
    )
    truth = folder / "server_trajectory.jsonl"
    truth.write_text(traj.model_dump_json() + "\n", encoding="utf-8")
    formats = {"transcript.json": "auto"}
    chat = session.openai_messages()
    if chat is not None:  # the same conversation as an OpenAI chat client logs it
        (folder / "openai_messages.json").write_text(json.dumps(chat, indent=1) + "\n", encoding="utf-8")
        formats["openai_messages.json"] = "openai"
    episode = {
        "harness": harness.name,
        "formats": formats,
        "api": harness.api,
        "versions": harness.versions(python),
        "task": task_id,
        "agent": agent,
        "faults": faults,
        "fault_seed": fault_seed,
        "episode_id": eid,
        "server_calls": len(ended["calls"]),
        "model_requests": session.requests,
        "tools_offered": len(session.offered),
    }
    (folder / "episode.json").write_text(json.dumps(episode, indent=1) + "\n", encoding="utf-8")
    return Played(folder, transcript, truth, final, episode)
