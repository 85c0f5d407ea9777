"""Recording a proxied session as a trajectory (``mcpgym proxy --record DIR``).

Each session appends one line to ``DIR/trajectories.jsonl`` (the format ``mcpgym run``
writes, with the fault ledger) and rewrites ``DIR/catalog.json`` with the classification of
every upstream tool seen so far (rows of earlier sessions kept), so that

    mcpgym score DIR --catalog DIR/catalog.json

scores it with the tool kinds the proxy used. There is no world for an outside server: the
snapshots are empty and the outcome is unknown unless the line carries checks
(``mcpgym run --proxy``).
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from mcpgym.evaluation.proxy.classify import UPSTREAM_APP, ToolClassifier
from mcpgym.evaluation.records.trajectory import Trajectory, append_trajectory, steps_from_call_log
from mcpgym.evaluation.scoring.scorer import score_episode
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from mcpgym.server.proxy.server import ProxySession

TRAJECTORIES = "trajectories.jsonl"
CATALOG = "catalog.json"


def trajectory_of(
    session: ProxySession,
    classifier: ToolClassifier,
    *,
    agent: str | None = None,
    instruction: str | None = None,
    final_message: str = "",
    task_id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Trajectory:
    """The trajectory of one proxied session, scored with the classifier's catalog.

    Steps are the session's call log in call-log order (calls still in flight when it ended
    are not in it), the ledger is the plan's; ``status`` is the session's (``errored`` with
    the upstream's failure as ``stop_reason`` when the upstream crashed or hung).
    """
    plan = session.plan
    calls = sorted(plan.calls, key=lambda c: c.step)
    traj = Trajectory(
        episode_id=f"proxy-{secrets.token_hex(8)}",
        task_id=task_id,
        agent=agent or session.client_name or "proxy-client",
        fault_seed=plan.fault_seed,
        fault_profile=plan.profile.name,
        apps=[UPSTREAM_APP],
        instruction=instruction,
        steps=list(steps_from_call_log(calls)),
        final_message=final_message,
        ledger=[e.model_dump(mode="json") for e in sorted(plan.ledger, key=lambda e: e.step)],
        status=session.status,
        stop_reason=session.stop_reason,
        metadata={
            "proxy": {
                "upstream": session.upstream.spec.describe(),
                "catalog": classifier.catalog_path,
                "tool_sources": dict(classifier.sources),
                "down": sorted(plan.down),
            },
            **(metadata or {}),
        },
    )
    traj.scores = score_episode(traj, Catalog(classifier.rows()))
    return traj


def write_catalog(folder: Path, classifier: ToolClassifier) -> Path:
    """Merge the classifier's rows into ``folder/catalog.json`` (a row of a tool seen now replaces its older row)."""
    path = folder / CATALOG
    rows: dict[str, dict[str, Any]] = {}
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = []
        for row in old if isinstance(old, list) else []:
            if isinstance(row, dict) and isinstance(row.get("name"), str):
                rows[row["name"]] = row
    for row in classifier.rows():
        rows[row["name"]] = row
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(list(rows.values()), indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def record_session(folder: str | Path, traj: Trajectory, classifier: ToolClassifier) -> Path:
    """Append ``traj`` to ``folder/trajectories.jsonl`` and update ``folder/catalog.json``.

    Raises:
        OSError: when the folder cannot be written.
    """
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    append_trajectory(out / TRAJECTORIES, traj)
    write_catalog(out, classifier)
    return out / TRAJECTORIES
