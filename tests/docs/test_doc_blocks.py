"""Every code block of README.md and docs/*.md runs, or says why it does not.

A fenced block is read with its language tag and the Markdown comment on the line before it:

- ``python``: executed, one fresh namespace per block, in a temporary working directory
  (top-level ``await`` allowed: the block runs in an event loop);
- ``bash`` / ``sh`` / ``shell``: every command line (``\\``-continued lines joined, ``#``
  comments dropped) must be an ``mcpgym ...`` command, run as a subprocess with a timeout;
  a ``serve`` command passes when it is still serving after a short grace period (HTTP: once
  it prints its ready line; a fixed ``--port`` is replaced by ``--port 0``, other engineers'
  servers may hold it);
- ``<!-- synopsis -->`` before a shell block: a usage synopsis (``[--suite S]``), not a
  command; every ``--option`` it shows must be one its command's ``--help`` lists;
- ``<!-- not-run: reason -->`` before a block: not run, for the reason given (a reason that
  names a test file, ``tests/...py``, must name one that exists);
- ``json`` / ``yaml`` / ``toml``: parsed; a ``toml`` block whose first comment names a fault
  profile file is loaded as a fault profile.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<indent>[ ]*)```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ ]*$", re.M | re.S)
MARKER = re.compile(r"<!--\s*(?P<kind>not-run|synopsis)\s*:?\s*(?P<reason>.*?)\s*-->")
SHELL = {"bash", "sh", "shell", "console"}
SERVE_GRACE = 1.5  # seconds a `serve` command must keep serving
COMMAND_TIMEOUT = 60.0


@dataclass(frozen=True)
class Block:
    """One fenced block: its file (relative to the repository), first line, language, body and
    the marker before it (``not-run`` / ``synopsis`` / None) with its reason."""

    file: str
    line: int
    lang: str
    body: str
    marker: str | None
    reason: str

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"


def blocks() -> list[Block]:
    """Every fenced block of the documents, in order."""
    found: list[Block] = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            indent = len(m.group("indent"))
            body = "\n".join(line[indent:] for line in m.group("body").splitlines()) + "\n"
            before = [ln for ln in text[: m.start()].splitlines() if ln.strip()]
            marker = MARKER.search(before[-1]) if before else None
            found.append(
                Block(
                    file=str(path.relative_to(ROOT)),
                    line=text[: m.start()].count("\n") + 1,
                    lang=m.group("lang").lower(),
                    body=body,
                    marker=marker.group("kind") if marker else None,
                    reason=marker.group("reason") if marker else "",
                )
            )
    return found


ALL = blocks()


def _of(langs: set[str], marker: str | None) -> list[Block]:
    return [b for b in ALL if b.lang in langs and b.marker == marker]


def commands(body: str) -> list[str]:
    """The command lines of a shell block: continuations joined, comments and blanks dropped."""
    joined = re.sub(r"\\\n\s*", " ", body)
    out = []
    for line in joined.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def test_the_documents_have_blocks_of_every_kind() -> None:
    kinds = {(b.lang, b.marker) for b in ALL}
    assert ("python", None) in kinds and ("bash", None) in kinds and ("bash", "synopsis") in kinds
    assert ("bash", "not-run") in kinds and ("python", "not-run") in kinds


@pytest.mark.parametrize("block", [b for b in ALL if b.marker == "not-run"], ids=lambda b: b.id)
def test_a_block_not_run_says_why(block: Block) -> None:
    assert len(block.reason) >= 10, f"{block.id}: <!-- not-run: ... --> needs a reason"
    for test in re.findall(r"tests/[\w/]+\.py", block.reason):
        assert (ROOT / test).is_file(), f"{block.id}: the reason names {test}, which does not exist"


@pytest.mark.parametrize("block", [b for b in ALL if b.lang == "" and b.marker is None], ids=lambda b: b.id)
def test_an_untagged_block_is_not_code(block: Block) -> None:
    """An untagged block shows output or text; code would be tagged (and then run)."""
    assert not re.match(r"\s*(mcpgym |python|from |import |\$ )", block.body), block.id


RUN_PYTHON = """
import ast, asyncio, sys
path = sys.argv[1]
code = compile(open(path, encoding="utf-8").read(), sys.argv[2], "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
result = eval(code, {"__name__": "__doc_block__"})
if asyncio.iscoroutine(result):
    asyncio.run(result)
"""


@pytest.mark.parametrize("block", _of({"python", "py"}, None), ids=lambda b: b.id)
def test_python_block_runs(block: Block, tmp_path: Path) -> None:
    """Run in its own process (a block may register suites or apps) in an empty directory."""
    (tmp_path / "block.py").write_text(block.body, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-c", RUN_PYTHON, "block.py", block.id],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
    )
    assert out.returncode == 0, (block.id, out.stderr[-2000:])


def _run_serve(argv: list[str], cwd: Path) -> None:
    """Start a ``serve`` command; it passes when it is still serving after the grace period
    (HTTP: once it printed its ready line)."""
    argv = [("0" if prev == "--port" else a) for prev, a in zip(["", *argv[:-1]], argv, strict=True)]
    http = "http" in argv
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpgym.evaluation.cli", *argv],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + (30.0 if http else SERVE_GRACE)
        if http:
            assert proc.stdout is not None
            line = proc.stdout.readline()  # the ready line, or "" when it exited
            assert line.startswith("MCPGYM_READY"), (argv, line, proc.stderr.read() if proc.stderr else "")
        while time.monotonic() < deadline and not http:
            assert proc.poll() is None, (argv, proc.stderr.read() if proc.stderr else "")
            time.sleep(0.2)
        assert proc.poll() is None, argv
    finally:
        proc.kill()
        proc.communicate(timeout=10)


@pytest.mark.parametrize("block", _of(SHELL, None), ids=lambda b: b.id)
def test_shell_block_runs(block: Block, tmp_path: Path) -> None:
    lines = commands(block.body)
    assert lines, block.id
    for line in lines:
        argv = shlex.split(line)
        assert argv[0] == "mcpgym", f"{block.id}: {line!r} is no mcpgym command; mark it <!-- not-run: why -->"
        if argv[1] == "serve":
            _run_serve(argv[1:], tmp_path)
            continue
        out = subprocess.run(
            [sys.executable, "-m", "mcpgym.evaluation.cli", *argv[1:]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            env={**os.environ, "COLUMNS": "120"},
        )
        assert out.returncode == 0, (line, out.stdout[-1500:], out.stderr[-1500:])


def _help(command: str | None, module: str | None = None) -> str:
    """``mcpgym [COMMAND] --help``, or ``python -m MODULE --help``."""
    if module is not None:
        out = subprocess.run(
            [sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=COMMAND_TIMEOUT
        )
        assert out.returncode == 0, out.stderr[-800:]
        return out.stdout
    from mcpgym.evaluation.cli import app

    args = [command, "--help"] if command else ["--help"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("block", _of(SHELL, "synopsis"), ids=lambda b: b.id)
def test_synopsis_options_exist(block: Block) -> None:
    """Each ``--option`` of a synopsis line is listed by its command's ``--help`` (``mcpgym
    COMMAND`` or ``python -m MODULE``; an indented line continues the command above it)."""
    command: str | None = None
    module: str | None = None
    checked = 0
    for line in commands(block.body):
        for segment in line.split(";"):
            words = segment.split()
            if words[:1] == ["mcpgym"]:
                module = None
                command = words[1] if len(words) > 1 and re.fullmatch(r"[a-z]+", words[1]) else None
            elif words[:2] in (["python", "-m"], ["python3", "-m"]):
                module, command = words[2], None
            helptext = _help(command, module)
            for option in re.findall(r"(?<![\w-])--[a-z][a-z-]*", segment):
                assert option in helptext, f"{block.id}: {module or 'mcpgym'} {command or ''} has no {option}"
                checked += 1
    assert checked, block.id


@pytest.mark.parametrize("block", _of(SHELL, "synopsis"), ids=lambda b: b.id)
def test_synopsis_choices_are_complete(block: Block) -> None:
    """A synopsis that spells an option's values out (``--suite smoke|baseline|core|full``)
    names every one there is: the built-in suites (the app bundles' own are listed by
    ``mcpgym tasks``), the executors. The README's left out ``baseline``."""
    from mcpgym.evaluation.run.config import Executor
    from mcpgym.evaluation.tasks import registry

    choices = {
        "--suite": [s for s in registry.suite_names() if s not in registry.bundled_suites()],
        "--executor": [e.value for e in Executor],
    }
    for option, spelled in re.findall(r"(--[a-z-]+)[ =]([\w+]+(?:\|[\w+]+)+)", block.body):
        if option in choices:
            assert spelled.split("|") == choices[option], f"{block.id}: {option} {spelled}"


@pytest.mark.parametrize("block", _of({"json", "yaml", "toml"}, None), ids=lambda b: b.id)
def test_data_block_parses(block: Block, tmp_path: Path) -> None:
    if block.lang == "json":
        json.loads(block.body)
    elif block.lang == "yaml":
        yaml.safe_load(block.body)
    else:
        tomllib.loads(block.body)
        first = block.body.splitlines()[0]
        named = re.match(r"#\s*([\w-]+\.toml):.*--faults", first)
        if named:  # a fault profile file: it loads
            from mcpgym.tools.faults import load_profile

            path = tmp_path / named.group(1)
            path.write_text(block.body, encoding="utf-8")
            profile = load_profile(str(path))
            assert profile.name == path.stem
