"""``serve --transport http --seed/--apps/--faults/--fault-seed/--search-tools`` are the defaults
of the episodes created on the control API (issue 16); bad values are refused at start-up with
a one-line error; ``--help`` says so."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest

from tests.conftest import ROOT, spawn_http_server
from tests.support.mcp_helpers import create_episode


@pytest.fixture(scope="module")
def server_with_defaults(tmp_path_factory):
    profile = tmp_path_factory.mktemp("profile") / "flaky.json"
    profile.write_text(json.dumps({"name": "flaky", "rates": {"transient": 0.2}}))
    proc, url, token = spawn_http_server(
        "--seed", "42", "--apps", "talk,weather", "--faults", str(profile), "--fault-seed", "9", "--search-tools"
    )
    try:
        yield url, token
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_missing_fields_take_the_serve_options(server_with_defaults):
    base, token = server_with_defaults
    ep = create_episode(base, token)
    assert (ep["seed"], ep["fault_seed"], ep["apps"], ep["faults"]) == (42, 9, ["system", "talk", "weather"], "flaky")
    assert ep["tools"] == 0  # retrieval mode: nothing but search_tools until it unlocks tools
    again = create_episode(base, token)
    assert again["state_hash"] == ep["state_hash"] and again["episode_id"] != ep["episode_id"]


def test_fields_given_in_the_request_win(server_with_defaults):
    base, token = server_with_defaults
    ep = create_episode(base, token, seed=3, apps=["shop"], faults="none", fault_seed=4, search_tools=False)
    assert (ep["seed"], ep["fault_seed"], ep["apps"], ep["faults"]) == (3, 4, ["system", "shop"], "none")
    assert ep["tools"] > 10
    # a request may still not name a file, even though the server's default came from one
    r = httpx.post(
        f"{base}/control/episodes", json={"faults": "/etc/passwd.json"}, headers={"Authorization": f"Bearer {token}"}
    )
    assert r.status_code == 422


def test_without_options_the_old_defaults_hold(http_server):
    base, token = http_server
    ep = create_episode(base, token)
    assert (ep["seed"], ep["fault_seed"], ep["apps"], ep["faults"]) == (0, 0, ["system", "shop"], "none")


@pytest.mark.parametrize(
    "args,message",
    [
        (["--apps", "shop,nope"], "unknown app 'nope'"),
        (["--faults", "nasty"], "unknown fault profile 'nasty'"),
    ],
)
def test_bad_defaults_are_refused_at_start(args, message):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcpgym.evaluation.cli",
            "serve",
            "--transport",
            "http",
            "--port",
            "0",
            "--token",
            "t",
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and out.stdout == ""
    assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_help_says_what_the_options_do_over_http():
    out = subprocess.run(
        [sys.executable, "-m", "mcpgym.evaluation.cli", "serve", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    text = " ".join(out.stdout.split())
    assert "defaults of the episodes created on the control API" in text
    for option in ("--seed", "--apps", "--faults", "--fault-seed", "--search-tools"):
        assert option in text
    assert text.count("with http, the default") >= 4
