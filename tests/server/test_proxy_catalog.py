"""``mcpgym proxy --catalog FILE`` (issue 28): the catalog of docs/proxy.md overrides the name
rules, gives a tool the role ``reauth`` (so auth challenges are injected and cured) and
declares the remedy the scorer then uses; hand-counted recovery below."""

from __future__ import annotations

import json
import re
import sys

from mcp import Client

from tests.conftest import ROOT
from tests.support.proxy_helpers import profile_file, proxy_params, recorded, score_json, text_of

UPSTREAM = [sys.executable, "-m", "tests.support.proxy_upstream"]


def docs_catalog() -> list[dict]:
    text = (ROOT / "docs" / "proxy.md").read_text(encoding="utf-8")
    return json.loads(re.findall(r"```json\n(.*?)```", text, flags=re.S)[0])


async def test_a_catalog_declares_the_reauth_tool_and_the_remedy_the_scorer_uses(tmp_path):
    notes, record = tmp_path / "notes", tmp_path / "rec"
    notes.mkdir()
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps(docs_catalog()))
    faults = profile_file(tmp_path, "auth", {"tools": {"note_write": {"auth_challenge": 1.0}}, "max_consecutive": 1})
    params = proxy_params(record, "--faults", faults, "--catalog", str(catalog), upstream=[*UPSTREAM, str(notes)])
    async with Client(params) as client:
        refused = await client.call_tool("note_write", {"name": "n", "text": "one"})  # step 1
        assert refused.is_error and '"code": "auth_required"' in text_of(refused) and "authenticate" in text_of(refused)
        assert not (notes / "n").exists()  # never forwarded
        assert text_of(await client.call_tool("authenticate", {})) == "authenticated"  # step 2: clears it
        written = await client.call_tool("note_write", {"name": "n", "text": "one"})  # step 3
        assert not written.is_error and (notes / "n").read_text() == "one\n"
        await client.call_tool("note_read", {"name": "n"})  # step 4
    (line,) = recorded(record)
    assert [(e["step"], e["kind"], e["applied"]) for e in line["ledger"]] == [(1, "auth_challenge", False)]
    sources = line["metadata"]["proxy"]["tool_sources"]
    assert sources["authenticate"] == sources["note_write"] == sources["note_read"] == "catalog"
    assert sources["crash"] == "annotations"
    # Hand count: the recoverable error is the injected auth challenge at step 1; the catalog
    # says authenticate cures auth_required, and step 2 calls it (an attempt within K = 3);
    # step 3 repeats note_write with the same ids and succeeds (recovered). Counted writes:
    # step 3 only (step 1 was refused; authenticate is an auth call, no write), read back by
    # step 4 on the family notes.note -> verification 1 of 1.
    scores = score_json(record)["episodes"][0]["scores"]
    (error,) = scores["recoverable_error_detail"]
    assert (error["step"], error["code"], error["remedies"]) == (1, "auth_required", ["authenticate"])
    assert (error["attempt"], error["attempt_step"], error["recovered_step"]) == ("remedy", 2, 3)
    assert (scores["recoverable_errors"], scores["recovery_attempts"], scores["recoveries"]) == (1, 1, 1)
    assert (scores["writes"], scores["verified_writes"]) == (1, 1)
