"""``mcpgym proxy`` in front of a real upstream from PyPI: ``mcp-server-git`` over stdio on a
temporary repository (issue 28). The SDK client talks to the proxy over stdio; faults are on.

Shows: the same fault seed gives the same ledger; a timeout that applied leaves the commit in
the repository while the agent saw a timeout; a commit refused by a fault leaves the
repository as it was; the recorded trajectory scores verification and recovery by numbers
counted by hand below.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from mcp import Client

from tests.support.proxy_helpers import profile_file, proxy_params, recorded, score_json, text_of

GIT_SERVER = shutil.which("mcp-server-git")
pytestmark = pytest.mark.skipif(
    GIT_SERVER is None, reason="mcp-server-git is not installed (pip install -e '.[dev]' installs it)"
)


def make_repo(folder: Path) -> Path:
    """A git repository with one commit (``init``)."""
    folder.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"]):
        subprocess.run(["git", *args], cwd=folder, check=True)
    (folder / "a.txt").write_text("a\n")
    subprocess.run(["git", "add", "a.txt"], cwd=folder, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=folder, check=True)
    return folder


def head_message(repo: Path) -> str:
    return subprocess.run(["git", "log", "-1", "--format=%s"], cwd=repo, capture_output=True, text=True).stdout.strip()


SCRIPT_KINDS = [("git_status", "read"), ("git_add", "write"), ("git_commit", "write"), ("git_log", "read")]


def upstream(repo: Path) -> list[str]:
    return [str(GIT_SERVER), "--repository", str(repo)]


async def scripted_session(repo: Path, record: Path, *options: str, mode: str = "auto") -> list[tuple[bool, str]]:
    """A fixed script of calls through the proxy by a client of ``mode``: (is_error, text) per call."""
    out = []
    async with Client(proxy_params(record, *options, upstream=upstream(repo)), mode=mode) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"git_status", "git_add", "git_commit", "git_log"} <= names
        for i in range(3):
            (repo / f"f{i}.txt").write_text(f"{i}\n")
            for tool, args in (
                ("git_status", {}),
                ("git_add", {"files": [f"f{i}.txt"]}),
                ("git_commit", {"message": f"commit {i}"}),
                ("git_log", {"max_count": 2}),
            ):
                result = await client.call_tool(tool, {"repo_path": str(repo), **args})
                out.append((bool(result.is_error), text_of(result)))
    return out


async def test_same_fault_seed_gives_the_same_ledger(tmp_path):
    ledgers, errors = [], []
    # run 0: a 2026-07-28 client (the SDK path); run 1: a handshake-era one (server/proxy/fast.py)
    for run, mode in enumerate(("auto", "legacy")):
        record = tmp_path / f"rec{run}"
        options = ("--faults", "harsh", "--fault-seed", "4")
        out = await scripted_session(make_repo(tmp_path / f"repo{run}"), record, *options, mode=mode)
        errors.append([is_error for is_error, _ in out])
        (line,) = recorded(record)
        ledgers.append([{k: e[k] for k in ("step", "tool", "call_index", "kind", "applied")} for e in line["ledger"]])
        assert line["fault_seed"] == 4 and line["fault_profile"] == "harsh" and len(line["steps"]) == 12
    assert ledgers[0] == ledgers[1] and ledgers[0], ledgers
    assert errors[0] == errors[1] and any(errors[0]), errors
    # and it is the seed's doing: the schedule of another seed differs on these calls
    from mcpgym.tools.faults import ToolSchedule, load_profile

    def kinds(seed: int) -> list:
        return [ToolSchedule(load_profile("harsh"), seed, t, "external", k).first(3) for t, k in SCRIPT_KINDS]

    assert kinds(4) != kinds(5)


async def test_a_timeout_that_applied_commits_while_the_agent_sees_a_timeout_and_scores_by_hand(tmp_path):
    repo, record = make_repo(tmp_path / "repo"), tmp_path / "rec"
    faults = profile_file(tmp_path, "commit-timeout", {"tools": {"git_commit": {"timeout": 1.0}}, "max_consecutive": 1})
    (repo / "b.txt").write_text("b\n")
    # a handshake-era client: its calls take the fast path (server/proxy/fast.py) once tools/list is served
    async with Client(proxy_params(record, "--faults", faults, upstream=upstream(repo)), mode="legacy") as client:
        await client.list_tools()
        add = await client.call_tool("git_add", {"repo_path": str(repo), "files": ["b.txt"]})  # step 1: write
        commit = await client.call_tool("git_commit", {"repo_path": str(repo), "message": "add b"})  # step 2
        assert not add.is_error and commit.is_error
        assert '"code": "timeout"' in text_of(commit) and "effect is unknown" in text_of(commit)
        assert head_message(repo) == "add b"  # the write applied: only its answer was withheld
        log = await client.call_tool("git_log", {"repo_path": str(repo), "max_count": 1})  # step 3: read
        assert "add b" in text_of(log)
        (repo / "c.txt").write_text("c\n")
        await client.call_tool("git_add", {"repo_path": str(repo), "files": ["c.txt"]})  # step 4: write, unread
    (line,) = recorded(record)
    assert line["ledger"] == [
        {"step": 2, "tool": "git_commit", "call_index": 0, "kind": "timeout", "applied": True, "persisting": False}
    ]
    assert [s["tool"] for s in line["steps"]] == ["git_add", "git_commit", "git_log", "git_add"]
    # Hand count (docs/design.md §7). Every git tool is annotated, so each reads or writes the one
    # family external.upstream. Counted writes: step 1 (success), step 2 (a timeout the ledger
    # says applied), step 4 (success) = 3. Verified: a later read (step 3) matches steps 1 and 2;
    # nothing reads after step 4 -> 2 of 3. Recoverable errors: the injected timeout at step 2 = 1;
    # attempt: the read at step 3 matches it (within K = 3); recovered: that read shows the truth
    # of an applied timeout -> 1 attempt, 1 recovery.
    scores = score_json(record)["episodes"][0]["scores"]
    assert (scores["writes"], scores["verified_writes"], scores["verification_skips"]) == (3, 2, [4])
    assert scores["verification_rate"] == pytest.approx(2 / 3)
    assert (scores["recoverable_errors"], scores["recovery_attempts"], scores["recoveries"]) == (1, 1, 1)
    assert scores["defeatism"] is False and scores["blind_retries"] == 0
    assert line["scores"]["verification_rate"] == scores["verification_rate"]  # scored when recorded, too
    implicit = score_json(record, explicit=False)  # the recorded catalog.json is the default
    assert implicit["catalog"] == str(record / "catalog.json") and implicit["episodes"][0]["scores"] == scores


async def test_a_commit_refused_by_a_fault_leaves_the_repository_unchanged(tmp_path):
    repo, record = make_repo(tmp_path / "repo"), tmp_path / "rec"
    faults = profile_file(tmp_path, "commit-transient", {"tools": {"git_commit": {"transient": 1.0}}})
    (repo / "b.txt").write_text("b\n")
    async with Client(proxy_params(record, "--faults", faults, upstream=upstream(repo))) as client:
        await client.call_tool("git_add", {"repo_path": str(repo), "files": ["b.txt"]})
        commit = await client.call_tool("git_commit", {"repo_path": str(repo), "message": "add b"})
        assert commit.is_error and '"code": "transient"' in text_of(commit)
    assert head_message(repo) == "init"  # never forwarded
    (line,) = recorded(record)
    assert [(e["kind"], e["applied"]) for e in line["ledger"]] == [("transient", False)]
    assert line["metadata"]["proxy"]["tool_sources"]["git_commit"] == "annotations"
