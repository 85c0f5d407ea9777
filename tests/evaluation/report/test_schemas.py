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
        manifest = json.loads(text("manifest.json"))
    trajectory = json.loads((FOLDER / "trajectory.schema.json").read_text(encoding="utf-8"))
    scoreboard = json.loads((FOLDER / "scores.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(trajectory)
    for line in lines:
        jsonschema.validate(line, trajectory, cls=jsonschema.Draft202012Validator)
    jsonschema.validate(scores, scoreboard, cls=jsonschema.Draft202012Validator)
    manifest_schema = json.loads((FOLDER / "manifest.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(manifest, manifest_schema, cls=jsonschema.Draft202012Validator)
    for bad_field, value in (("trials", True), ("agents", [{"spec": "careful"}]), ("manifest_version", "1")):
        assert not jsonschema.Draft202012Validator(manifest_schema).is_valid({**manifest, bad_field: value}), bad_field
    bad = dict(lines[0], status="finished")
    assert not jsonschema.Draft202012Validator(trajectory).is_valid(bad)


def test_the_manifests_of_committed_runs_validate_and_load(tmp_path) -> None:
    """The published baselines and the recorded run were written by earlier versions: their
    manifests still validate against the published schema and load as a ``Manifest``, and
    the recorded config of each reads back as a ``RunConfig``."""
    from mcpgym.evaluation.records.manifest import read_manifest
    from mcpgym.evaluation.run.config import RunConfig

    schema = json.loads((FOLDER / "manifest.schema.json").read_text(encoding="utf-8"))
    archives = [RECORDED, *sorted((ROOT / "docs" / "baselines").glob("*.tar.gz"))]
    assert len(archives) >= 2
    for archive in archives:
        with tarfile.open(archive, "r:gz") as tar:
            name = next(m for m in tar.getnames() if m.endswith("manifest.json"))
            member = tar.extractfile(name)
            assert member is not None
            text = member.read().decode("utf-8")
        jsonschema.validate(json.loads(text), schema, cls=jsonschema.Draft202012Validator)
        run = tmp_path / archive.name
        run.mkdir()
        (run / "manifest.json").write_text(text, encoding="utf-8")
        manifest = read_manifest(run)
        assert manifest is not None and manifest.trials and manifest.agents, archive
        assert manifest.to_json() == json.loads(text), archive  # read and written back unchanged
        config = RunConfig.from_manifest(manifest)
        assert config.trials == manifest.trials and config.agents == [a.spec for a in manifest.agents]
