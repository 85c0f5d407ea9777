"""LLM agent settings on the command line (issue 25): ``--max-turns``, ``--max-output-tokens``,
``--request-timeout``, ``--temperature``, ``--seed`` and ``--agent-option KEY=VALUE`` reach the
provider's requests, are recorded in the manifest, and a bare ``--resume`` keeps them.

Runs ``mcpgym run`` in-process against the real HTTP server and the loopback fake provider.
"""

from __future__ import annotations

import json

import pytest

from mcpgym.evaluation.cli.app import main
from mcpgym.evaluation.llm.options import AGENT_OPTION_KEYS, agent_options, parse_agent_option
from tests.conftest import run_text
from tests.support.fake_provider import OpenAIDialect


def cli(args: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def test_agent_options_parse_json_values_and_refuse_unknown_keys():
    assert parse_agent_option("max_turns=3") == ("max_turns", 3)
    assert parse_agent_option("temperature=0.5") == ("temperature", 0.5)
    assert parse_agent_option("system_prompt=Be brief. 42") == ("system_prompt", "Be brief. 42")
    assert parse_agent_option("max-output-tokens=64") == ("max_output_tokens", 64)
    assert agent_options(["max_turns=3", "seed=1"], seed=9, temperature=None) == {"max_turns": 3, "seed": 9}
    with pytest.raises(ValueError, match="unknown agent option 'api_key'"):
        parse_agent_option("api_key=sk-secret")
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_agent_option("max_turns")
    with pytest.raises(ValueError, match="max_turns must be >= 1"):
        agent_options(["max_turns=0"])
    with pytest.raises(ValueError, match="request_timeout must be a number"):
        agent_options(["request_timeout=soon"])
    with pytest.raises(ValueError, match="temperature must be a finite number from 0 to 2"):
        agent_options(["temperature=3"])
    assert "api_key" not in AGENT_OPTION_KEYS and "base_url" not in AGENT_OPTION_KEYS


def test_a_bad_agent_option_is_one_error_line_before_any_episode(capsys):
    code, _, err = cli(["run", "--agent", "openai:m", "--agent-option", "max_turns=zero", "-q"], capsys)
    assert code == 2 and "max_turns must be an integer" in err and "Traceback" not in err
    code, _, err = cli(["run", "--agent", "careful", "--max-turns", "3", "-q"], capsys)
    assert code == 2 and "this run has none" in err


def test_settings_reach_the_provider_the_manifest_and_a_resumed_run(fake, http_server, tmp_path, monkeypatch, capsys):
    base, token = http_server
    d = OpenAIDialect()
    monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.url}/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "run"
    fake.play(d.reply(text="I cannot see a dark mode switch."), d.reply(text="Still nothing."))
    args = ["run", "--agent", "openai:local-model", "--task", "system.dark_mode", "--trials", "1"]
    args += ["--server", base, "--token", token, "--out", str(out), "-q"]
    options = ["--max-turns", "2", "--max-output-tokens", "33", "--request-timeout", "7", "--temperature", "0.3"]
    options += ["--seed", "5", "--agent-option", "max_retries=0", "--agent-option", "max_tool_calls=4"]
    code, _, err = cli(args + options, capsys)
    assert code == 0, err
    first = fake.requests[0].body
    assert (first["max_tokens"], first["temperature"], first["seed"]) == (33, 0.3, 5)

    manifest = json.loads((out / "manifest.json").read_text())
    described = manifest["agents"][0]["describe"]
    assert described["limits"]["max_turns"] == 2 and described["limits"]["max_output_tokens"] == 33
    assert described["limits"]["max_tool_calls"] == 4
    assert described["retry"]["request_timeout"] == 7 and described["retry"]["max_retries"] == 0
    assert (described["temperature"], described["seed"]) == (0.3, 5)
    given = manifest["invocations"][0]["settings"]["agent_options"]
    assert given == {
        "max_turns": 2,
        "max_output_tokens": 33,
        "request_timeout": 7.0,
        "temperature": 0.3,
        "seed": 5,
        "max_retries": 0,
        "max_tool_calls": 4,
    }

    # a bare --resume (one more trial) sends the second trial with the same settings
    code, _, err = cli(
        ["run", "--resume", "--out", str(out), "--trials", "2", "--server", base, "--token", token, "-q"], capsys
    )
    assert code == 0, err
    assert len(fake.requests) == 2
    second = fake.requests[1].body
    assert (second["max_tokens"], second["temperature"], second["seed"]) == (33, 0.3, 5)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["invocations"][1]["settings"]["agent_options"] == given
    lines = run_text(out).splitlines()
    assert [json.loads(line)["trial"] for line in lines] == [0, 1]
