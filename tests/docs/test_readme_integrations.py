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


def _python(code: str, cwd: Path, timeout: float = 300) -> str:
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_one_section_per_integration_each_block_at_most_ten_lines() -> None:
    assert list(BLOCKS) == ["Gymnasium", "Inspect AI", "OpenEnv", "ATIF"]
    for title, found in BLOCKS.items():
        assert len(found) == 1, title
        assert 0 < len(found[0][1].strip().splitlines()) <= 10, title


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


def test_inspect_block_and_scoring_its_log(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="needs the [inspect] extra")
    [(lang, code)] = BLOCKS["Inspect AI"]
    assert lang == "python" and 'model="openai/gpt-4o-mini"' in code
    run = MOCK + code.replace('model="openai/gpt-4o-mini"', "model=MOCK_MODEL") + "\nprint(logs[0].status)\n"
    assert _python(run, tmp_path).splitlines()[-1].strip() == "success"
    [log] = sorted((tmp_path / "logs").glob("*.eval"))
    score = subprocess.run(
        [sys.executable, "-m", "mcpgym.evaluation.cli", "score", "--format", "inspect", str(log), "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert score.returncode == 0, score.stderr[-2000:]
    episodes = {e["scores"]["episode_id"]: e["scores"] for e in json.loads(score.stdout)["episodes"]}
    from inspect_ai.log import read_eval_log

    samples = read_eval_log(str(log)).samples or []
    assert len(samples) == 8 == len(episodes)  # the smoke suite, one trial
    for sample in samples:
        mine = sample.scores["mcpgym_scorer"].metadata
        assert episodes[mine["episode_id"]] == mine  # "the same scores"


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
