"""Inspect AI as a harness for server truth: mcpgym's own Inspect task (``mcpgym_task``) run with
Inspect's ``openai-api`` model provider pointed at the scripted model.

:func:`play_inspect` runs one eval of one task (one sample, one epoch) against a running
``mcpgym serve --transport http``; the solver creates the episode and keeps the server's
record in the sample's store (``mcpgym``). The folder gets, as :func:`tests.support.harnesses.episodes.play`
writes them: ``transcript.eval`` (Inspect's log as Inspect wrote it, less mcpgym's record and
scores: what an Inspect run against any MCP server leaves), ``server_trajectory.jsonl`` (built
from that record) and ``episode.json`` (``formats``: ``{"transcript.eval": "inspect"}``).
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from typing import Any

from tests.support.harnesses.episodes import server_trajectory
from tests.support.harnesses.scripted_model import TURN_TIMEOUT, ScriptedModelServer
from tests.support.servers import HttpServer

SAMPLE_TIME_LIMIT = 120
"""Wall seconds Inspect gives the one sample (its ``time_limit``), as the drivers' timeout."""


def play_inspect(
    server: HttpServer, model: ScriptedModelServer, task_id: str, agent: str, faults: str, folder: Path
) -> dict[str, Any]:
    """Play ``task_id`` with scripted ``agent`` through Inspect under ``faults``; returns the
    ``episode.json`` record.

    Raises:
        RuntimeError: the eval did not end with one scored sample holding mcpgym's record.
    """
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import GenerateConfig, get_model

    from mcpgym.evaluation.tasks.registry import fault_seed_for, get_task
    from mcpgym.integrations.inspect_task import mcpgym_task

    task = get_task(task_id)
    fault_seed = fault_seed_for(task, 0)
    session, model_url = model.add_session(task, agent, fault_seed)
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    logs = folder / "logs"
    [log] = inspect_eval(
        mcpgym_task(tasks=[task_id], faults=faults, trials=1, server=server.url, token=server.token),
        model=get_model(
            "openai-api/scripted/scripted",
            base_url=model_url,
            api_key="scripted",
            config=GenerateConfig(max_retries=1, timeout=TURN_TIMEOUT + 10),
        ),
        log_dir=str(logs),
        display="none",
        time_limit=SAMPLE_TIME_LIMIT,
    )
    full = read_eval_log(log.location)
    samples = full.samples or []
    if len(samples) != 1 or "mcpgym" not in (samples[0].store or {}):
        raise RuntimeError(f"inspect on {task_id}: {len(samples)} sample(s), status {full.status}: {full.error}")
    record = samples[0].store["mcpgym"]
    traj = server_trajectory(
        task,
        agent,
        faults,
        fault_seed,
        record["episode_id"],
        list(record["apps"]),
        record,
        str(record["final_message"]),
        "inspect",
    )
    (folder / "server_trajectory.jsonl").write_text(traj.model_dump_json() + "\n", encoding="utf-8")
    bare = full.model_copy(
        update={"samples": [s.model_copy(update={"store": {}, "scores": None}) for s in samples], "reductions": None}
    )
    write_eval_log(bare, str(folder / "transcript.eval"))
    for f in logs.iterdir():
        f.unlink()
    logs.rmdir()
    episode = {
        "harness": "inspect",
        "formats": {"transcript.eval": "inspect"},
        "api": "chat",
        "versions": {p: importlib.metadata.version(p) for p in ("inspect-ai", "openai")},
        "task": task_id,
        "agent": agent,
        "faults": faults,
        "fault_seed": fault_seed,
        "episode_id": record["episode_id"],
        "server_calls": len(record["calls"]),
        "model_requests": session.requests,
        "tools_offered": len(session.offered),
    }
    (folder / "episode.json").write_text(json.dumps(episode, indent=1) + "\n", encoding="utf-8")
    return episode
