"""The JSON Schemas in docs/schemas/ are generated from the models that write the run files,
are current, and describe what a real run stored (the recorded smoke run validates)."""

from __future__ import annotations

import json
import tarfile

import jsonschema

from mcpgym.evaluation.report.schemas import SCHEMAS, json_schemas, schema_text
from tests.conftest import ROOT

FOLDER = ROOT / "docs" / "schemas"
RECORDED = ROOT / "tests" / "data" / "recorded_run" / "smoke-scripted.tar.gz"


def test_the_published_schemas_are_current() -> None:
    """Regenerate with ``python -m mcpgym.evaluation.report.schemas docs/schemas``."""
    assert sorted(p.name for p in FOLDER.glob("*.json")) == sorted(SCHEMAS)
    for name, schema in json_schemas().items():
        assert (FOLDER / name).read_text(encoding="utf-8") == schema_text(schema), name


def test_the_recorded_run_validates_against_the_schemas() -> None:
    with tarfile.open(RECORDED, "r:gz") as tar:

        def text(name: str) -> str:
            member = tar.extractfile(name)
            assert member is not None
            return member.read().decode("utf-8")

        lines = [json.loads(line) for line in text("trajectories.jsonl").splitlines()]
        scores = json.loads(text("scores.json"))
    trajectory = json.loads((FOLDER / "trajectory.schema.json").read_text(encoding="utf-8"))
    scoreboard = json.loads((FOLDER / "scores.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(trajectory)
    for line in lines:
        jsonschema.validate(line, trajectory, cls=jsonschema.Draft202012Validator)
    jsonschema.validate(scores, scoreboard, cls=jsonschema.Draft202012Validator)
    bad = dict(lines[0], status="finished")
    assert not jsonschema.Draft202012Validator(trajectory).is_valid(bad)
