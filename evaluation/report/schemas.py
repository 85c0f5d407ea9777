"""JSON Schemas of the files a run directory holds, generated from the models that write them.

``docs/schemas/`` publishes them (``tests/evaluation/report/test_schemas.py`` fails when they are not current);
regenerate with ``python -m mcpgym.evaluation.report.schemas docs/schemas``:

- ``trajectory.schema.json``: one line of ``trajectories.jsonl``
  (:class:`mcpgym.evaluation.records.trajectory.Trajectory`);
- ``scores.schema.json``: ``scores.json`` (:class:`mcpgym.evaluation.records.scores.Scoreboard`);
- ``manifest.schema.json``: ``manifest.json`` (:class:`mcpgym.evaluation.records.manifest.Manifest`),
  each invocation's ``settings`` described by :class:`mcpgym.evaluation.run.config.RunConfig`.
  It is the schema of what this mcpgym *reads* (validation mode: fields with a default may be
  missing), so the manifests of older runs validate too;
- ``control-*.schema.json``: the control API's request and answer bodies
  (:mod:`mcpgym.server.control_models`, and :mod:`mcpgym.server.rl_models` for
  ``control-task*`` and ``control-reward*``; ``control-call-record`` and ``control-ledger-entry`` are
  one element of the ``/calls`` and ``/ledger`` answers). The request's is in validation mode
  (what the server accepts), the answers' in serialization mode (what the server writes).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from mcpgym.evaluation.records import manifest as records
from mcpgym.evaluation.records.scores import Scoreboard
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.run.config import RunConfig
from mcpgym.server import control_models as control
from mcpgym.server import rl_models
from mcpgym.tools.invoke import CallRecord, LedgerEntry


class Invocation(records.Invocation):
    """:class:`~mcpgym.evaluation.records.manifest.Invocation` with its ``settings`` typed (for
    the schema only: the records layer cannot name ``RunConfig``, a higher layer)."""

    settings: RunConfig = Field(default_factory=RunConfig)  # type: ignore[assignment]


class Manifest(records.Manifest):
    """:class:`~mcpgym.evaluation.records.manifest.Manifest` whose invocations' settings are
    :class:`RunConfig` (for the schema only)."""

    invocations: list[Invocation] = Field(default_factory=list)  # type: ignore[assignment]


SCHEMAS: dict[str, type[BaseModel]] = {
    "trajectory.schema.json": Trajectory,
    "scores.schema.json": Scoreboard,
    "manifest.schema.json": Manifest,
    "control-create-episode.schema.json": control.CreateEpisode,
    "control-episode-created.schema.json": control.EpisodeCreated,
    "control-episode.schema.json": control.EpisodeSummary,
    "control-episodes.schema.json": control.EpisodeList,
    "control-health.schema.json": control.Health,
    "control-error.schema.json": control.ControlError,
    "control-call-record.schema.json": CallRecord,
    "control-ledger-entry.schema.json": LedgerEntry,
    "control-episode-final.schema.json": control.EpisodeFinal,
    "control-task-episode.schema.json": rl_models.TaskEpisodeRequest,
    "control-task-episode-created.schema.json": rl_models.TaskEpisodeCreated,
    "control-reward-request.schema.json": rl_models.RewardRequest,
    "control-reward.schema.json": rl_models.EpisodeReward,
    "control-tasks.schema.json": rl_models.TaskList,
}
"""File name under ``docs/schemas/`` -> the model whose JSON it describes."""

MODES: dict[str, str] = {
    "manifest.schema.json": "validation",
    "control-create-episode.schema.json": "validation",
    "control-task-episode.schema.json": "validation",
    "control-reward-request.schema.json": "validation",
}
"""The schema mode of a file when not ``serialization`` (what the model writes)."""


def json_schemas() -> dict[str, dict[str, Any]]:
    """File name -> the JSON Schema (draft 2020-12) of what the model serialises, with ``$schema``
    and ``$id`` set."""
    out: dict[str, dict[str, Any]] = {}
    for name, model in SCHEMAS.items():
        schema = model.model_json_schema(mode="validation" if MODES.get(name) == "validation" else "serialization")
        out[name] = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": name, **schema}
    return out


def schema_text(schema: dict[str, Any]) -> str:
    """The schema as written to ``docs/schemas/`` (sorted keys, two-space indent, final newline)."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schemas(folder: str | Path) -> list[Path]:
    """Write every schema of :data:`SCHEMAS` into ``folder`` (created if missing); returns the paths."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in json_schemas().items():
        path = root / name
        path.write_text(schema_text(schema), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":  # pragma: no cover - the regeneration command of the module docstring
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m mcpgym.evaluation.report.schemas FOLDER")
    for p in write_schemas(sys.argv[1]):
        print(p)
