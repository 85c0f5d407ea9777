"""A key given twice in one object of a file the user wrote is refused, naming the key, by
every command that reads such a file (JSON and YAML would keep the last value silently): task
files, fault profiles, catalogs, reward profiles (price tables: test_export_hostile.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli_runs import cli_at_width

DATA = Path(__file__).resolve().parents[2] / "data" / "formats"

CASES = [
    ("tasks.yaml", "- id: a\n  id: b\n  instruction: x\n", "id", ["tasks", "--tasks", "{f}"]),
    ("tasks.json", '[{"id": "a", "instruction": "x", "id": "b"}]', "id", ["tasks", "--tasks", "{f}"]),
    (
        "faults.yaml",
        "name: mine\nfaults:\n  timeout: 0.1\n  timeout: 0.9\n",
        "timeout",
        ["run", "--faults", "{f}", "--task", "system.dark_mode", "--out", "{d}/run", "-q"],
    ),
    (
        "catalog.json",
        '[{"name": "a", "kind": "read", "kind": "write"}]',
        "kind",
        ["score", str(DATA / "openai_lines.jsonl"), "--catalog", "{f}"],
    ),
    (
        "reward.json",
        '{"weights": {"success": 1}, "weights": {"success": 0}}',
        "weights",
        ["serve", "--openenv", "--reward", "{f}", "--port", "0"],
    ),
    ("reward.yaml", "weights: {}\nweights: {}\n", "weights", ["serve", "--openenv", "--reward", "{f}", "--port", "0"]),
]


@pytest.mark.parametrize(("name", "body", "key", "args"), CASES, ids=[c[0] for c in CASES])
def test_a_key_given_twice_is_refused_naming_it(
    tmp_path: Path, monkeypatch, capsys, name: str, body: str, key: str, args: list[str]
) -> None:
    if args[0] == "serve":
        pytest.importorskip("openenv", reason="mcpgym serve --openenv needs the [openenv] extra")
    f = tmp_path / name
    f.write_text(body, encoding="utf-8")
    argv = [a.replace("{f}", str(f)).replace("{d}", str(tmp_path)) for a in args]
    code, _, err = cli_at_width(argv, 200, monkeypatch, capsys)
    assert code == 2, err
    assert f"'{key}'" in err and "twice" in err and name in err, err
    assert not (tmp_path / "run").exists()  # refused before anything was written
