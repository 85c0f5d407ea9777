"""Every input is bounded and every echo is short (issue 29).

Each class with inputs written here: YAML alias bombs (nested, recursive, in fault profiles and
task files), binary files, special files (``/dev/zero``, FIFOs, directories), files past the
size cap, and huge values that an error could echo (control API bodies, command-line options).
Every file input of the CLI is driven: ``serve --faults``, ``run --faults``, ``tasks --tasks``,
``score`` (files and ``--catalog``), ``run --agent replay:FILE`` and a run's manifest. See
docs/guarantees.md, "Inputs are bounded".
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from mcpgym.evaluation.cli.app import app
from mcpgym.kernel.input_files import (
    MAX_CONFIG_BYTES,
    MAX_YAML_NODES,
    InputFileError,
    YamlLimitError,
    load_yaml,
    read_input_text,
)
from mcpgym.kernel.shorten import MAX_MESSAGE_CHARS, cap_message, short


def laughs(levels: int = 9, width: int = 9) -> str:
    """A 'billion laughs' YAML document: each level is ``width`` aliases of the level below."""
    lines = ["l0: &l0 [" + ", ".join(['"lol"'] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


BOMBS = {
    "nested aliases (9^9 nodes)": laughs(),
    "wide and shallow (40^4)": laughs(levels=4, width=40),
    "mapping aliases": "a: &a {x: 1, y: 1, z: 1, w: 1}\n"
    + "".join(
        f"{c}: &{c} {{p: *{p}, q: *{p}, r: *{p}, s: *{p}, t: *{p}, u: *{p}, v: *{p}}}\n"
        for p, c in zip("abcdefg", "bcdefgh", strict=True)
    ),
    "as the rates of a profile": "rates: &r\n  timeout: 0.1\n" + laughs(levels=8),
}


@pytest.mark.parametrize("text", list(BOMBS.values()), ids=list(BOMBS))
def test_an_alias_bomb_is_refused_before_it_is_built(text: str) -> None:
    assert len(text.encode()) < 2048  # a small file...
    with pytest.raises(YamlLimitError, match=f"more than {MAX_YAML_NODES:,} nodes"):
        load_yaml(text)  # ...refused from its node graph, before any object exists


def test_aliases_within_the_cap_still_work_and_cycles_are_refused() -> None:
    merged = load_yaml("base: &b {timeout: 0.1}\nshop:\n  <<: *b\n  transient: 0.2\nagain: *b\n")
    assert merged == {"base": {"timeout": 0.1}, "shop": {"timeout": 0.1, "transient": 0.2}, "again": {"timeout": 0.1}}
    assert load_yaml(laughs(levels=3, width=9))["l2"][0][0][0] == "lol"  # 9^3 nodes: fine
    for text in ("a: &a [*a]\n", "a: &a {b: *a}\n"):
        with pytest.raises(YamlLimitError, match="recursive"):
            load_yaml(text)
    for depth in (990, 5000):  # libyaml's own limit is 1000 levels; ours catches any recursion
        try:
            load_yaml("[" * depth + "]" * depth)
        except yaml.YAMLError as exc:
            assert "nest" in str(exc)


def cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, " ".join(res.output.split())


def one_line_error(code: int, text: str, *says: str) -> None:
    assert code != 0, text
    assert "Traceback" not in text and "UnicodeDecodeError" not in text and "unexpected" not in text, text
    for s in says:
        assert s in text, text


@pytest.fixture()
def bombs(tmp_path: Path) -> dict[str, Path]:
    profile = tmp_path / "lol.yaml"
    profile.write_text(BOMBS["as the rates of a profile"])
    tasks = tmp_path / "lol-tasks.yaml"
    tasks.write_text("tasks: &t\n" + laughs())
    return {"profile": profile, "tasks": tasks}


def test_alias_bombs_fail_fast_in_serve_run_and_tasks(bombs: dict[str, Path]) -> None:
    profile, tasks = str(bombs["profile"]), str(bombs["tasks"])
    for args in (
        ["serve", "--faults", profile],
        ["run", "--faults", profile, "--task", "system.dark_mode", "--out", str(bombs["profile"].parent / "r")],
        ["tasks", "--tasks", tasks],
        ["run", "--tasks", tasks, "--out", str(bombs["tasks"].parent / "r2")],
    ):
        code, text = cli(*args)
        one_line_error(code, text, "expands to more than", Path(args[2]).name)


BINARY = bytes(range(256)) * 4  # NUL bytes and invalid UTF-8, like an executable


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".toml"])
def test_a_binary_fault_profile_names_the_file(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"profile{suffix}"
    path.write_bytes(BINARY)
    for command in ("serve", "run"):
        code, text = cli(command, "--faults", str(path))
        one_line_error(code, text, str(path), "not UTF-8 text (a binary file?)")


def special_files(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    return {"a character device": Path("/dev/zero"), "a named pipe": fifo, "a directory": folder}


def test_special_files_are_refused_by_every_file_input(tmp_path: Path) -> None:
    specials = special_files(tmp_path)
    for kind, path in specials.items():
        p = str(path)
        for args, says in (
            (["tasks", "--tasks", p], [p, kind]),
            (["run", "--tasks", p, "--out", str(tmp_path / "r")], [p, kind]),
            (["score", p, "--json"], [p]),
            (["score", p, "--format", "openai"], [p, kind]),
            (["score", str(tmp_path), "--catalog", p], [p, kind]),
        ):
            code, text = cli(*args)
            one_line_error(code, text, *says)
    # fault profiles are named by suffix: the same kinds under a profile's name
    for kind, path in specials.items():
        if path.suffix == ".yaml":
            code, text = cli("serve", "--faults", str(path))
            one_line_error(code, text, str(path), kind)
    for path in ("/dev/zero", str(specials["a named pipe"])):
        with pytest.raises(InputFileError, match="not a regular file"):
            read_input_text(path, what="replay file")


def test_a_replay_agent_on_a_special_or_binary_file_is_one_clear_error(tmp_path: Path) -> None:
    binary = tmp_path / "replay.jsonl"
    binary.write_bytes(BINARY)
    for path, says in ((Path("/dev/zero"), "a character device"), (binary, "not UTF-8 text")):
        code, text = cli("run", "--agent", f"replay:{path}", "--task", "system.dark_mode", "--out", str(tmp_path / "r"))
        one_line_error(code, text, str(path), says)


def test_files_past_the_size_cap_are_refused_without_reading_them(tmp_path: Path) -> None:
    for name in ("big.yaml", "big.json"):
        path = tmp_path / name
        with path.open("wb") as fh:  # sparse: the size is there, the bytes are not
            fh.truncate(MAX_CONFIG_BYTES + 1)
        for args in (["serve", "--faults", str(path)], ["tasks", "--tasks", str(path)]):
            code, text = cli(*args)
            one_line_error(code, text, str(path), f"the limit is {MAX_CONFIG_BYTES:,}")
    with pytest.raises(InputFileError, match="the limit is 100"):
        read_input_text(tmp_path / "big.json", limit=100)


def test_a_binary_or_special_manifest_stops_a_resume_naming_it(tmp_path: Path) -> None:
    for content in (BINARY, None):
        run = tmp_path / f"run-{content is None}"
        run.mkdir()
        manifest = run / "manifest.json"
        if content is None:
            os.mkfifo(manifest)
        else:
            manifest.write_bytes(content)
        code, text = cli("run", "--resume", "--out", str(run), "--task", "system.dark_mode")
        one_line_error(code, text, "manifest.json")


# -- echoes --------------------------------------------------------------------------------------
def test_short_quotes_any_value_in_a_bounded_length() -> None:
    for value in ("x" * 900_000, ["y" * 1000] * 1000, {"k" * 500: "v" * 500}, 10**5000, b"\0" * 10**6, [[[[[[1]]]]]]):
        assert len(short(value)) <= 90
    assert short("plain") == "'plain'" and short([1, 2]) == "[1, 2]"
    capped = cap_message("e" * 10**6)
    assert len(capped) <= MAX_MESSAGE_CHARS + 40 and capped.endswith("characters left out)")


BIG = "x" * 900_000
BAD_BODIES = {
    "an unknown app": {"apps": BIG},
    "an unknown app in a list": {"apps": ["shop", BIG]},
    "an unknown field": {BIG: 1},
    "an unknown tool": {"tools": [BIG]},
    "a rate that is no number": {"faults": {"rates": {"timeout": BIG}}},
    "an unknown fault kind": {"faults": {"rates": {BIG: 0.1}}},
    "an override of an unknown app": {"faults": {"apps": {BIG: {"timeout": 0.1}}}},
    "an override of an unknown tool": {"faults": {"tools": {BIG: {"timeout": 0.1}}}},
    "an unknown profile field": {"faults": {BIG: 1}},
    "many long app names": {"apps": ["a" * 1000] * 800},
}


def test_control_api_422_replies_never_echo_a_huge_value(http_server: tuple[str, str]) -> None:
    url, token = http_server
    sizes = {}
    with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
        for name, body in BAD_BODIES.items():
            r = client.post(
                f"{url}/control/episodes",
                content=json.dumps(body).encode(),
                headers={"content-type": "application/json"},
            )
            assert r.status_code == 422, (name, r.text[:300])
            sizes[name] = len(r.content)
            assert len(r.content) < 1024, (name, len(r.content))
            assert "..." in r.json()["error"], (name, r.text[:300])  # the value is quoted, shortened
    print("control API 422 reply sizes for 900 KB values (bytes):", sizes)


def test_cli_errors_quote_long_option_values_shortened() -> None:
    long = "z" * 100_000
    for args in (
        ["run", "--task", long],
        ["run", "--agent", long],
        ["run", "--agent", f"replay:{long}"],
        ["serve", "--faults", long + ".yaml"],
        ["run", "--suite", long],
        ["tasks", "--suite", long],
        ["run", "--faults", long],
        ["serve", "--apps", long],
        ["run", "--tools", long],
        ["score", "--format", long, "/dev/null"],
    ):
        code, text = cli(*args)
        assert code == 2 and len(text) < 400, (args[:2], len(text), text[:200])
        assert "zzz...zzz" in text, text[:300]


def test_score_problems_never_echo_a_huge_value(tmp_path: Path) -> None:
    big = "q" * 1_000_000
    files = {
        "openai.json": json.dumps(
            [
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "c", "type": "function", "function": {"name": big, "arguments": big}}],
                }
            ]
        ),
        "mcpgym.jsonl": json.dumps({"episode_id": "e", "agent": "a", "trial": big, "steps": []}) + "\n",
        "catalog-row.json": json.dumps([{"name": "x", "kind": big}]),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    for args in (
        ["score", str(tmp_path / "openai.json")],
        ["score", str(tmp_path / "openai.json"), "--json"],
        ["score", str(tmp_path / "mcpgym.jsonl"), "--json"],
        ["score", str(tmp_path / "mcpgym.jsonl"), "--catalog", str(tmp_path / "catalog-row.json")],
    ):
        res = CliRunner().invoke(app, args)
        assert len(res.output) < 10_000, (args[1:], len(res.output))


def test_a_file_without_a_profile_suffix_is_named_with_what_is_wrong(tmp_path: Path) -> None:
    plain = tmp_path / "profile"
    plain.write_bytes(BINARY)
    for path in ("/bin/true", "/dev/zero", str(plain)):
        code, text = cli("serve", "--faults", path)
        one_line_error(code, text, f"{path}: not a fault profile", ".toml, .json, .yaml or .yml")
