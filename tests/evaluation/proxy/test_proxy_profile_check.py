"""A fault profile naming a tool the upstream does not have is refused, as ``serve`` and
``run`` refuse one naming no tool of the apps: a typo in ``tools.<name>`` meant no faults at
all, silently. The proxy checks the profile against the upstream's ``tools/list`` at start
(``ProxyFaultPlan.check_profile``) and names the file, the field, the value, the closest tool
names and the upstream's tools. Upstream: the real ``mcp-server-git`` (the proxy extra)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from mcpgym.server.proxy.plan import ProxiedTool, ProxyFaultPlan
from mcpgym.server.proxy.server import describe_answer
from mcpgym.tools.faults import FaultProfile, FaultProfileError
from tests.conftest import ROOT
from tests.server.test_proxy_git import make_repo
from tests.support.proxy_helpers import profile_file

GIT_SERVER = shutil.which("mcp-server-git")
needs_git_server = pytest.mark.skipif(
    GIT_SERVER is None, reason="mcp-server-git is not installed (pip install -e '.[proxy]')"
)
GIT_TOOLS = (
    "git_add, git_branch, git_checkout, git_commit, git_create_branch, git_diff, git_diff_staged, "
    "git_diff_unstaged, git_log, git_reset, git_show, git_status"
)


def _cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mcpgym.evaluation.cli", *args],
        input="",
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


@needs_git_server
def test_mcpgym_proxy_refuses_a_profile_naming_no_tool_of_the_upstream(tmp_path):
    repo, record = make_repo(tmp_path / "repo"), tmp_path / "rec"
    typo = profile_file(tmp_path, "typo", {"tools": {"git_comit": {"timeout": 1.0}}})
    proc = _cli("proxy", "--record", str(record), "--faults", typo, "--upstream", GIT_SERVER, "--repository", str(repo))
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.splitlines() == [
        f"error: {typo}: invalid fault profile: field 'tools.git_comit' = {{'timeout': 1.0}}: no tool named "
        f"'git_comit'; closest: git_commit, git_checkout, git_log; tools of the upstream: {GIT_TOOLS}"
    ]
    assert not (record / "trajectories.jsonl").exists()  # no session was served


@needs_git_server
def test_run_proxy_refuses_it_before_the_first_episode_runs(tmp_path):
    repo, out = make_repo(tmp_path / "repo"), tmp_path / "run"
    tasks = tmp_path / "tasks.json"
    tasks.write_text('[{"id": "look", "instruction": "Show the log.", "checks": [{"kind": "contains", "value": "x"}]}]')
    replay = tmp_path / "recorded.jsonl"
    replay.write_text(
        '{"episode_id": "r", "task_id": "look", "agent": "recorded", "steps": [], "final_message": "x"}\n'
    )
    apps = profile_file(tmp_path, "apps", {"apps": {"git": {"transient": 0.5}}})
    proc = _cli(
        "run", "--proxy", f"{GIT_SERVER} --repository {repo}", "--tasks", str(tasks),
        "--agent", f"replay:{replay}", "--out", str(out), "--faults", apps, "--trials", "1",
    )  # fmt: skip
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.splitlines() == [
        f"error: {apps}: invalid fault profile: field 'apps.git' = {{'transient': 0.5}}: no app named 'git'; "
        "known apps: external"
    ]
    assert not (out / "trajectories.jsonl").exists()


def _plan(profile: dict) -> ProxyFaultPlan:
    return ProxyFaultPlan(FaultProfile.model_validate({"name": "p", **profile}), 0, describe_answer)


TOOLS = {
    "get_thing": ProxiedTool(name="get_thing", kind="read"),
    "set_thing": ProxiedTool(name="set_thing", kind="write"),
    "wait_a_bit": ProxiedTool(name="wait_a_bit", kind="write", role="wait"),
}


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        (
            {"tools": {"get_thng": {"transient": 1.0}}},
            "field 'tools.get_thng' = {'transient': 1.0}: no tool named 'get_thng'; closest: get_thing, set_thing; "
            "tools of the upstream: get_thing, set_thing, wait_a_bit",
        ),
        (
            {"tools": {"delete_all": {"transient": 1.0}}},
            "no tool named 'delete_all'; tools of the upstream: get_thing, set_thing, wait_a_bit",
        ),
        ({"tools": {"wait_a_bit": {"transient": 0.5}}}, "wait_a_bit is declared never faulted"),
        (
            {"tools": {"set_thing": {"transient": 0.7, "timeout": 0.6}}},
            "the per-call fault rates of write tool set_thing add up to 1.3 > 1",
        ),
    ],
)
def test_the_plan_checks_the_profile_against_the_first_tool_list(profile, message):
    plan = _plan(profile)
    with pytest.raises(FaultProfileError) as refused:
        plan.set_tools(TOOLS)
    assert str(refused.value).startswith("<mapping>: invalid fault profile: ") and message in str(refused.value)
    assert plan.tools == {}  # nothing taken: the session does not start


def test_a_profile_naming_real_tools_is_taken_and_a_later_listing_is_not_checked():
    plan = _plan({"tools": {"get_thing": {"transient": 1.0}}, "apps": {"external": {"timeout": 0.1}}})
    plan.set_tools(TOOLS)
    assert plan.decide("get_thing").fault == "transient"
    plan.set_tools({"set_thing": TOOLS["set_thing"]})  # the upstream withdrew get_thing mid-session
    assert set(plan.tools) == {"set_thing"}


def test_a_profile_file_of_lost_writes_says_they_are_never_injected(tmp_path, capsys):
    from mcpgym.evaluation.proxy.command import build

    lost = profile_file(tmp_path, "lost", {"rates": {"lost_write": 0.5}})
    build(["some-server"], None, lost, 0, None)
    assert capsys.readouterr().err.splitlines() == [
        f"warning: {lost}: lost_write is never injected by the proxy (it would fake a success the upstream did "
        "not give): its rates are ignored"
    ]
    build(["some-server"], None, profile_file(tmp_path, "t", {"rates": {"transient": 0.5}}), 0, None)
    build(["some-server"], None, "harsh", 0, None)  # the built-in's lost_write is documented
    assert capsys.readouterr().err == ""
