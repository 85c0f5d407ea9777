"""Every input file a command reads is refused with one plain line naming the file, the field
and the value (kernel/validation_text), never pydantic's own text ("1 validation error for
FaultProfile ... [type=extra_forbidden, ...] For further information visit
https://errors.pydantic.dev/...", "Input tag 'bogus' found using _step_type()"). Found by a
new-user try: ``mcpgym proxy --faults allfault.json`` printed pydantic's text whole.

Each command runs for real through :func:`mcpgym.evaluation.cli.main` on real files in
``tmp_path``; every refusal comes before anything starts (no server, no upstream).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpgym.kernel.validation_text import json_type
from tests.support.cli_runs import cli_at_width

PYDANTIC_TEXT = ("validation error for", "errors.pydantic.dev", "[type=", "Extra inputs", "Input tag", "NoneType")


def one_plain_line(err: str, *parts: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for bad in PYDANTIC_TEXT:
        assert bad not in err, err
    for part in parts:
        assert part in err, err


def _files(tmp: Path) -> dict[str, Path]:
    files = {
        "allfault.json": json.dumps({"transient": 1.0}),
        "catalog.json": json.dumps([{"name": "x", "kind": "mutate"}]),
        "tasks.json": json.dumps([{"id": "x", "instruction": "i", "read_back": {"tool": "t", "checks": []}}]),
        "trajectories.jsonl": json.dumps({"episode_id": "e", "agent": "a", "steps": [{"type": "bogus"}]}) + "\n",
    }
    out = {}
    for name, text in files.items():
        (tmp / name).write_text(text, encoding="utf-8")
        out[name] = tmp / name
    return out


CASES = {
    "proxy fault profile": (
        lambda f: ["proxy", "--faults", str(f["allfault.json"]), "--upstream-url", "http://127.0.0.1:9/mcp"],
        ["allfault.json: invalid fault profile: field 'transient' = 1.0: unknown field; expected one of name"],
    ),
    "run fault profile": (
        lambda f: ["run", "--faults", str(f["allfault.json"]), "--task", "system.dark_mode", "--out", "r"],
        ["allfault.json: invalid fault profile: field 'transient' = 1.0: unknown field"],
    ),
    "play fault profile": (
        lambda f: ["play", "system.dark_mode", "--faults", str(f["allfault.json"]), "--out", "p"],
        ["allfault.json: invalid fault profile: field 'transient' = 1.0: unknown field"],
    ),
    "catalog": (
        lambda f: ["score", str(f["trajectories.jsonl"].parent / "run"), "--catalog", str(f["catalog.json"])],
        ["catalog.json: catalog row 0 (x): field 'kind' = \"mutate\": input should be 'read', 'write'"],
    ),
    "proxy task file": (
        lambda f: (
            ["run", "--proxy", "python -c pass", "--tasks", str(f["tasks.json"]), "--agent", "replay:x.jsonl"]
            + ["--out", "pz"]
        ),
        ["tasks.json: task 0 (x): field 'read_back.checks' (a JSON array): list should have at least 1 item"],
    ),
    "trajectory line": (
        lambda f: ["cat", str(f["trajectories.jsonl"])],
        ["trajectories.jsonl:1: field 'steps.0.type' = \"bogus\": not one of tool_call, message, user_turn"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_input_file_with_a_bad_field_is_one_plain_line(case, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    files = _files(tmp_path)
    run = tmp_path / "run"  # a run directory for score --catalog: its trajectories are fine
    run.mkdir()
    good = {"episode_id": "e", "task_id": "t", "agent": "a", "steps": []}
    (run / "trajectories.jsonl").write_text(json.dumps(good) + "\n")
    args, says = CASES[case]
    code, out, err = cli_at_width(args(files), 200, monkeypatch, capsys)
    assert code == 2, (out, err)
    one_plain_line(err, *says)


def test_json_types_are_named_as_json_names_them():
    assert [json_type(v) for v in (None, True, 3, 2.5, "x", [1], (1,), {"a": 1})] == [
        "null",
        "boolean",
        "number",
        "number",
        "string",
        "array",
        "array",
        "object",
    ]
