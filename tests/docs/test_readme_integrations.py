"""README "Integrations": every block is at most ten lines and runs as written, from a fresh
directory, with the real packages. Two substitutions, both said here: the Inspect block's model
becomes Inspect's ``mockllm/model`` (no provider key or network in the tests; it answers
without calling a tool and states its token usage, as mockllm would otherwise fetch a tiktoken
encoding), and the OpenEnv block's port 8000 becomes the free port of the
``mcpgym serve --openenv`` this test starts."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

SECTION = re.search(r"^## Integrations\n(.*?)^## ", (ROOT / "README.md").read_text(encoding="utf-8"), re.S | re.M)
assert SECTION is not None, "README.md has an Integrations section"


def blocks() -> dict[str, list[tuple[str, str]]]:
    """Subsection title -> its code blocks ``(language, code)``."""
    out: dict[str, list[tuple[str, str]]] = {}
    for part in re.split(r"^### ", SECTION.group(1), flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        out[title.strip()] = re.findall(r"```(\w+)\n(.*?)```", body, re.S)
    return out


BLOCKS = blocks()


def _python(code: str, cwd: Path, timeout: float = 300, argv: list[str] | None = None) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code, *(argv or [])], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_one_section_per_integration_each_block_at_most_ten_lines() -> None:
    assert list(BLOCKS) == ["Gymnasium", "Inspect AI", "OpenEnv", "ATIF"]
    for title, found in BLOCKS.items():
        assert len(found) == (2 if title == "Inspect AI" else 1), title  # Inspect: Python, then its CLI
        for _, code in found:
            assert 0 < len(code.strip().splitlines()) <= 10, title


def test_gymnasium_block(tmp_path: Path) -> None:
    pytest.importorskip("gymnasium", reason="needs the [gym] extra")
    [(lang, code)] = BLOCKS["Gymnasium"]
    assert lang == "python"
    assert _python(code, tmp_path).splitlines()[-1] == "True 0.0 False"


MOCK = """
from inspect_ai.model import ModelOutput, ModelUsage, get_model

def _answer(messages, tools, tool_choice, config):
    out = ModelOutput.from_content("mockllm/model", "I cannot do that.")
    out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return out

MOCK_MODEL = get_model("mockllm/model", custom_outputs=_answer)
"""


BY_NAME = """
import json, sys
[by_name] = eval(sys.argv[1], task_args=json.loads(sys.argv[2]), model=MOCK_MODEL, log_dir="cli-logs", display="none")
print("by name:", by_name.status)
"""


def _score(log: Path, cwd: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "mcpgym.evaluation.cli", "score", "--format", "inspect", str(log), "--json"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_inspect_blocks_and_scoring_their_logs(tmp_path: Path) -> None:
    """The Python block as written (the model swapped), then, in the same process (one mcpgym
    server for both), the ``inspect eval`` line: its task spec and ``-T`` arguments run as
    Inspect's command line resolves them (the registered name, through the package's
    ``inspect_ai`` entry point), the model swapped for the mock (the real ``inspect eval`` with a
    mock model would fetch a tiktoken encoding; tests/integrations/test_integration_inspect.py
    runs the real command) and one task of the suite kept (``-T tasks=...``: seconds, not a
    minute). Each log scores again to the same scores; the command's three trials all count in
    its metrics, which are ``mcpgym score``'s rates of the log."""
    pytest.importorskip("inspect_ai", reason="needs the [inspect] extra")
    from inspect_ai.log import read_eval_log

    (lang, code), (cli_lang, cli) = BLOCKS["Inspect AI"]
    assert lang == "python" and 'model="openai/gpt-4o-mini"' in code
    argv = shlex.split(cli.strip())
    assert cli_lang == "bash" and argv[:3] == ["inspect", "eval", "mcpgym/mcpgym_task"]
    assert argv[-2:] == ["--model", "openai/gpt-4o-mini"]
    pairs = [argv[i + 1] for i, a in enumerate(argv) if a == "-T"]
    args: dict[str, Any] = {k: int(v) if v.isdigit() else v for k, _, v in (p.partition("=") for p in pairs)}
    assert args == {"suite": "smoke", "trials": 3}
    args["tasks"] = "flights.book_cheapest_berlin_paris"
    run = (
        MOCK
        + code.replace('model="openai/gpt-4o-mini"', "model=MOCK_MODEL")
        + '\nprint("block:", logs[0].status)\n'
        + BY_NAME
    )
    out = _python(run, tmp_path, argv=[argv[2], json.dumps(args)])
    lines = [line.strip() for line in out.splitlines()]
    assert "block: success" in lines and lines[-1] == "by name: success", out[-2000:]
    [log] = sorted((tmp_path / "logs").glob("*.eval"))
    episodes = {e["scores"]["episode_id"]: e["scores"] for e in _score(log, tmp_path)["episodes"]}
    samples = read_eval_log(str(log)).samples or []
    assert len(samples) == 8 == len(episodes)  # the smoke suite, one trial
    for sample in samples:
        mine = sample.scores["mcpgym_scorer"].metadata
        assert episodes[mine["episode_id"]] == mine  # "the same scores"
    [by_name] = sorted((tmp_path / "cli-logs").glob("*.eval"))
    read = read_eval_log(str(by_name))
    assert sorted(s.epoch for s in read.samples or []) == [1, 2, 3]  # three trials
    pooled = _score(by_name, tmp_path)["agents"]["mockllm/model"]
    shown = {name: m.value for name, m in read.results.scores[0].metrics.items()}
    assert shown and all(
        (pooled[name] is None and shown[name] != shown[name]) or shown[name] == pytest.approx(pooled[name])
        for name in shown
    ), (shown, pooled)


def test_openenv_block(tmp_path: Path) -> None:
    pytest.importorskip("openenv", reason="needs the [openenv] extra")
    [(lang, code)] = BLOCKS["OpenEnv"]
    assert lang == "python" and "mcpgym serve --openenv --port 8000" in code
    from mcpgym.integrations.openenv_process import openenv_server

    with openenv_server() as url:
        out = _python(code.replace("http://127.0.0.1:8000", url), tmp_path)
    lines = out.splitlines()
    assert lines[0].startswith("Book me the cheapest economy seat") and lines[-1] == "True 0.0 False"


def test_atif_block(tmp_path: Path) -> None:
    pytest.importorskip("atif", reason="needs the [atif] extra")
    [(lang, code)] = BLOCKS["ATIF"]
    assert lang == "bash"
    bindir = Path(sys.executable).parent
    outputs = []
    for line in code.strip().splitlines():
        argv = shlex.split(line.split("  #")[0])
        assert argv[0] == "mcpgym"
        done = subprocess.run(
            [str(bindir / "mcpgym"), *argv[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, (line, done.stdout[-1500:], done.stderr[-1500:])
        outputs.append(done.stdout)
    assert (tmp_path / "runs/atif-demo/trajectories.atif.jsonl").is_file()
    assert "wrote 3 ATIF trajectories" in outputs[1]  # the default three trials
    assert [json.loads(line)["session_id"] for line in outputs[2].splitlines()] == [
        json.loads(line)["session_id"]
        for line in (tmp_path / "runs/atif-demo/trajectories.atif.jsonl").read_text().splitlines()
    ]  # --out -: the same documents on standard output
    assert not (tmp_path / "-").exists()
    assert "careful" in outputs[3]


def test_the_in_process_example_reaches_a_real_result(tmp_path: Path) -> None:
    """README "Driving episodes yourself": the search finds a real flight (it found none once)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Driving episodes yourself") :]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None and "from mcpgym.evaluation import GymEpisode" in code.group(1)
    lines = _python(code.group(1), tmp_path).splitlines()
    assert lines[-2] == "AU219-20260604" and lines[-1] == "True 0.0 False None"
