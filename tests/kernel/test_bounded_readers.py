"""One set of bounded readers behind every input (issue 36): size, depth, digits, special files.

Each input kind gets the same three hostile values (a value nested 100,000 deep, an integer of
5,000 digits, a special file or an archive that inflates past its bound) through the real
command, server or package: Inspect ``.eval`` logs, catalogs, format detection, Gymnasium
actions, task files, control-API bodies and stdio lines. None may hang, crash with
``RecursionError`` or Python's own digit-limit advice, or answer a request under id null.
See docs/guarantees.md, "Every input is bounded".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.cli.app import app
from mcpgym.integrations.stepping import parse_action

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "9" * 5000


def cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.output


def assert_plain(text: str) -> None:
    assert "RecursionError" not in text and "set_int_max_str_digits" not in text and "unexpected" not in text, text[
        :600
    ]
    assert "Traceback" not in text, text[:600]


def test_score_on_a_fifo_named_eval_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "log.eval"
    os.mkfifo(fifo)
    cmd = [sys.executable, "-c", "from mcpgym.evaluation.cli.app import main; main()", "score", str(fifo)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=60)  # a hang fails here
    assert res.returncode != 0 and "named pipe" in res.stdout + res.stderr, res.stdout + res.stderr
    assert_plain(res.stdout + res.stderr)


def test_an_eval_member_that_inflates_past_its_bound_is_refused_unread(tmp_path: Path) -> None:
    log = tmp_path / "bomb.eval"
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", "{}")
        archive.writestr("samples/1_epoch_1.json", b"\0" * 4096)
    data = bytearray(log.read_bytes())
    three_gib = (3 << 30).to_bytes(4, "little")
    central = data.rindex(b"PK\x01\x02", 0, data.rindex(b"samples/1_epoch_1.json"))  # its central entry
    data[central + 24 : central + 28] = three_gib  # it now says it inflates to 3 GiB
    log.write_bytes(bytes(data))
    code, out = cli("score", str(log))
    assert code != 0 and "inflates to 3,221,225,472 bytes" in out and "samples/1_epoch_1.json" in out, out
    assert_plain(out)


def test_deep_and_huge_values_in_files_are_one_plain_line(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    code, out = cli("score", str(deep))  # format detection, then the reader
    assert code != 0
    assert_plain(out)
    catalog = tmp_path / "catalog.json"
    for text, said in ((DEEP, "nested more than 200 levels"), (f'[{{"name": "x", "n": {HUGE}}}]', "5,000 digits")):
        catalog.write_text(text)
        code, out = cli("score", "--catalog", str(catalog), str(deep))
        assert code == 2 and "catalog.json" in out and said in out.replace("\n", " "), out
        assert_plain(out)
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(f"tasks:\n  - id: t.one\n    apps: [system]\n    seed: {HUGE}\n")
    code, out = cli("tasks", "--tasks", str(tasks))
    flat = " ".join(out.split())
    assert code == 2 and "tasks.yaml" in flat and "tasks[0].seed" in flat and "5,000 digits" in flat, out
    assert_plain(out)


def test_actions_nested_past_the_bound_are_a_reason_not_an_exception() -> None:
    for action in (DEEP, f'{{"tool": "system_get_time", "arguments": {{"n": {HUGE}}}}}', '{"tool": ' * 50_000):
        said = parse_action(action)
        assert isinstance(said, str) and len(said) < 300, said
    nested: dict = {}
    cur = nested
    for _ in range(5000):
        cur["a"] = {}
        cur = cur["a"]
    said = parse_action({"tool": "system_get_time", "arguments": nested, "x": 1})
    assert isinstance(said, str)


def test_gymnasium_env_step_survives_a_deep_action() -> None:
    pytest.importorskip("gymnasium", reason="needs the gymnasium extra: pip install 'mcpgym[gymnasium]'")
    from mcpgym.integrations.gymnasium_env import EpisodeEnv

    env = EpisodeEnv(task="system.dark_mode")
    env.reset(seed=0)
    for action in ("[" * 30_000 + "]" * 30_000, '{"tool": "system_get_time", "arguments": {"n": ' + HUGE + "}}"):
        _, _, terminated, _, info = env.step(action)  # within the 64 KiB action bound: parsed, and refused
        assert not terminated and ("nested" in info["invalid_action"] or "digits" in info["invalid_action"]), info
    _, _, terminated, _, _ = env.step(json.dumps({"tool": "system_get_time", "arguments": {}}))
    assert not terminated  # the loop goes on
    env.close()


def test_control_bodies_with_deep_or_huge_values_get_a_400(http_server: tuple[str, str]) -> None:
    url, token = http_server
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    for body in (DEEP[:200_000], f'{{"seed": {HUGE}}}', '{"seed": 1, "faults": {"name": ' + HUGE + "}}"):
        res = httpx.post(f"{url}/control/episodes", content=body, headers=headers, timeout=30)
        assert res.status_code == 400, (res.status_code, res.text[:300])
        assert len(res.content) < 400 and ("nested" in res.text or "digits" in res.text), res.text
    assert httpx.get(f"{url}/control/episodes", headers=headers, timeout=30).status_code == 200  # still serving


def test_stdio_answers_unreadable_lines_under_their_own_id() -> None:
    opening = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    call = '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"system_get_time","arguments":{"a":%s}}}'
    lines = [
        json.dumps(opening),
        call % ("7", '"\\ud800"'),  # a lone surrogate escape: valid JSON, not valid Unicode
        call % ('"r8"', HUGE),  # an integer past Python's digit limit
        call % (HUGE, "1"),  # the id itself too long: no id to answer under
        '{"jsonrpc":"2.0","id":9,"method":"ping"}',
    ]
    cmd = [sys.executable, "-c", "from mcpgym.evaluation.cli.app import main; main()", "serve", "--transport", "stdio"]
    # stdin stays open until every answer is read: at end of input the SDK's stdio server stops
    # without answering what is still in flight, so closing it at once races the last answer.
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    deadline = threading.Timer(60, proc.kill)  # a server that never answers ends the reads (EOF)
    deadline.start()
    try:
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in range(len(lines))]  # one per line; the ping last
    finally:
        deadline.cancel()
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
    by_id = {json.dumps(a.get("id")): a for a in answers}
    assert "Unicode" in by_id["7"]["error"]["message"]
    assert "5,000 digits" in by_id['"r8"']["error"]["message"]
    assert by_id["null"]["error"]["code"] == -32600
    assert "result" in by_id["9"]  # and the session goes on
