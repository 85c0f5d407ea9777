"""Scoring trajectories recorded elsewhere, by kind of fault users hit (issue 15).

Every input here is written for the test (none is copied from a user's case file): repeated
call ids, server requests reusing ids, string tool inputs, JSON-encoded ComplexMCP
transcripts, ``[END]`` and ``<tool>`` inside prose, ids by argument shape, errors carried in
the content, the scorability summary and ``--strict``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.cli import app
from mcpgym.evaluation.formats import score_files
from mcpgym.evaluation.formats.complexmcp import decode_layers, split_episodes, transcript_field
from mcpgym.evaluation.scoring.foreign_catalogs import BUILTIN_CATALOGS, builtin_catalog_path
from mcpgym.evaluation.scoring.tool_catalog import Catalog, looks_like_id
from tests.conftest import ROOT


def scored(path: Path, fmt: str, catalog: str | None = None) -> dict[str, Any]:
    """Episode label -> EpisodeScores of one file."""
    report = score_files([path], fmt, catalog)
    return {ep.episode: ep.scores for ep in report.episodes}


def only(path: Path, fmt: str, catalog: str | None = None):
    eps = scored(path, fmt, catalog)
    assert len(eps) == 1, eps
    return next(iter(eps.values()))


def write(tmp_path: Path, name: str, data: Any) -> Path:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return p


def jsonl(tmp_path: Path, name: str, rows: list[Any]) -> Path:
    return write(tmp_path, name, "".join(json.dumps(r) + "\n" for r in rows))


def turn(name: str, args: dict[str, Any], response: str, prose: str = "") -> str:
    """One ComplexMCP call as its harness writes it: the turn ending in </tool>, then the response."""
    call = json.dumps({"name": name, "arguments": args})
    return f"{prose}<tool>\n{call}\n</tool>\n<response>\n{response}\n</response>\n"


OK = '{"status":"ok","output":"%s"}'
NET = '{"status":"internel error","output":"It appears there\'s a network issue, please try again."}'


# -- c12 kind: parallel calls sharing an id ----------------------------------------------------------------
def test_openai_repeated_ids_pair_in_order(tmp_path):
    # three parallel calls all numbered "c"; results come back in call order
    calls = [
        {"id": "c", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for n, a in [
            ("shop_add_to_cart", {"item_id": "item-0202"}),
            ("shop_get_cart", {}),
            ("shop_view_item", {"item_id": "item-0202"}),
        ]
    ]
    conv = {
        "task_id": "par",
        "messages": [
            {"role": "user", "content": "Add item-0202 and show the cart."},
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": "c", "content": "Error: service temporarily unavailable"},
            {"role": "tool", "tool_call_id": "c", "content": '{"lines": [], "item_count": 0}'},
            {"role": "tool", "tool_call_id": "c", "content": '{"item_id": "item-0202", "stock": 4}'},
            {"role": "assistant", "content": "The shop is down; the cart is empty."},
        ],
    }
    report = score_files([write(tmp_path, "par.json", conv)], "openai")
    (ep,) = report.episodes
    s = ep.scores
    # 3 steps (none lost); the transient error belongs to step 1, the add-to-cart call (a write
    # that did not take effect: 0 counted writes), the two reads succeeded
    assert s.tool_calls == 3 and report.problems == []
    assert [(d.step, d.tool, d.code) for d in s.recoverable_error_detail] == [(1, "shop_add_to_cart", "transient")]
    assert (s.writes, s.error_calls) == (0, 1)
    assert [t.kind for t in report.tools if t.tool == "shop_add_to_cart"] == ["write"]


def test_anthropic_repeated_ids_pair_in_order(tmp_path):
    conv = [
        {"role": "user", "content": "Cancel both."},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t", "name": "shop_cancel_order", "input": {"order_id": "ord-1111aaaa"}},
                {"type": "tool_use", "id": "t", "name": "shop_get_order", "input": {"order_id": "ord-1111aaaa"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t",
                    "content": '{"order_id": "ord-1111aaaa", "status": "cancelled"}',
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "t",
                    "content": '{"order_id": "ord-1111aaaa", "status": "cancelled"}',
                },
            ],
        },
        {"role": "assistant", "content": "Cancelled."},
    ]
    s = only(write(tmp_path, "a.json", conv), "anthropic")
    # both answered: the cancel (a write; "cancelled" is a domain status, not an error) is
    # not verified by the get on the same order: both blocks of one message ran in parallel,
    # the get was issued beside the cancel, not after it (docs/design.md §7, "Verification")
    assert (s.tool_calls, s.writes, s.verified_writes, s.error_calls) == (2, 1, 0, 0)


# -- c14 kind: MCP log ids per sender, repeated in order, server requests ----------------------------------
def _rpc(session: str | None, direction: str | None, msg: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"message": {"jsonrpc": "2.0", **msg}}
    if session:
        row["session"] = session
    if direction:
        row["direction"] = direction
    return row


def _tool_result(payload: dict[str, Any], is_error: bool = False) -> dict[str, Any]:
    res: dict[str, Any] = {"content": [{"type": "text", "text": json.dumps(payload)}]}
    if is_error:
        res["isError"] = True
    return {"result": res}


TIMEOUT = {"error": {"code": "timeout", "message": "shop_place_order: the request timed out; its effect is unknown"}}


@pytest.mark.parametrize("with_direction", [True, False])
def test_mcp_log_server_request_reusing_a_tool_call_id(tmp_path, with_direction):
    c, s_ = ("c2s", "s2c") if with_direction else (None, None)
    rows = [
        _rpc(
            "x",
            c,
            {"id": 7, "method": "tools/call", "params": {"name": "shop_place_order", "arguments": {"cart": "ct-9A"}}},
        ),
        _rpc("x", s_, {"id": 7, "method": "roots/list"}),
        _rpc("x", c, {"id": 7, "result": {"roots": [{"uri": "file:///w"}]}}),
        _rpc("x", s_, {"id": 7, **_tool_result(TIMEOUT, is_error=True)}),
    ]
    s = only(jsonl(tmp_path, "log.jsonl", rows), "mcp-log")
    # the roots answer never answers the tool call: the write timed out (an error, not a
    # success: 0 counted writes) and is a recoverable timeout nobody retried
    assert (s.tool_calls, s.writes, s.error_calls) == (1, 0, 1)
    assert [(d.tool, d.code) for d in s.recoverable_error_detail] == [("shop_place_order", "timeout")]


def test_mcp_log_tool_call_without_an_id_is_named_not_dropped(tmp_path):
    """A tools/call with id null (or none) was dropped without a word: a log of such calls
    scored as an episode that made no call."""
    get_cart = {"method": "tools/call", "params": {"name": "shop_get_cart", "arguments": {}}}
    rows = [
        _rpc("x", "c2s", {"id": None, **get_cart}),
        _rpc("x", "c2s", get_cart),
        _rpc("x", "c2s", {"id": 3, **get_cart}),
        _rpc("x", "s2c", {"id": 3, **_tool_result({"lines": []})}),
    ]
    report = score_files([jsonl(tmp_path, "log.jsonl", rows)], "mcp-log", None)
    [episode] = report.episodes
    assert episode.scores.tool_calls == 1
    said = [(p.severity, p.message) for p in report.problems]
    assert said == [
        ("warning", f"line {n}: a tools/call without an id (JSON-RPC requests carry a string or integer id); left out")
        for n in (1, 2)
    ], said


def test_mcp_log_repeated_ids_pair_in_order(tmp_path):
    rows = [
        _rpc(
            "y",
            "c2s",
            {
                "id": 3,
                "method": "tools/call",
                "params": {"name": "shop_add_to_cart", "arguments": {"item_id": "item-0303"}},
            },
        ),
        _rpc("y", "c2s", {"id": 3, "method": "tools/call", "params": {"name": "shop_get_cart", "arguments": {}}}),
        _rpc(
            "y",
            "s2c",
            {
                "id": 3,
                **_tool_result(
                    {
                        "error": {
                            "code": "rate_limited",
                            "message": "rate limited: retry after 9 virtual seconds",
                            "retry_after": 9,
                        }
                    },
                    True,
                ),
            },
        ),
        _rpc("y", "s2c", {"id": 3, **_tool_result({"lines": [{"item_id": "item-0303", "quantity": 1}]})}),
        # a request the server sent with the same id, answered by the client: not a tool result
        _rpc("y", "s2c", {"id": 3, "method": "sampling/createMessage", "params": {}}),
        _rpc(
            "y",
            "c2s",
            {"id": 3, "result": {"role": "assistant", "model": "m", "content": {"type": "text", "text": "x"}}},
        ),
    ]
    s = only(jsonl(tmp_path, "log.jsonl", rows), "mcp-log")
    # first response -> first request: the add is rate limited, the cart read succeeded
    assert s.tool_calls == 2
    assert [(d.step, d.tool, d.code) for d in s.recoverable_error_detail] == [(1, "shop_add_to_cart", "rate_limited")]
    assert (s.writes, s.error_calls) == (0, 1)


# -- c15 kind: string tool inputs --------------------------------------------------------------------------
def _anthropic_cancel(input_value: Any) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Cancel ord-2222bbbb and show it."},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "u1", "name": "shop_cancel_order", "input": input_value}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "u1",
                    "content": '{"order_id": "ord-2222bbbb", "status": "cancelled"}',
                }
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "u2", "name": "shop_get_order", "input": '{"order_id": "ord-2222bbbb"}'}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "u2",
                    "content": '{"order_id": "ord-2222bbbb", "status": "cancelled"}',
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "tool_use", "id": "u3", "name": "shop_get_cart", "input": ""}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u3", "content": '{"lines": []}'}]},
        {"role": "assistant", "content": "Cancelled."},
    ]


def test_anthropic_string_inputs_score_like_objects(tmp_path):
    as_object = only(write(tmp_path, "o.json", _anthropic_cancel({"order_id": "ord-2222bbbb"})), "anthropic")
    as_string = only(write(tmp_path, "s.json", _anthropic_cancel('{"order_id": "ord-2222bbbb"}')), "anthropic")
    # the cancel is verified by the get of the same order (ids match only once the string is
    # parsed); "" is {} (a valid call)
    assert (as_object.writes, as_object.verified_writes, as_object.invalid_calls) == (1, 1, 0)
    assert as_string.model_dump(exclude={"episode_id"}) == as_object.model_dump(exclude={"episode_id"})
    report = score_files([tmp_path / "s.json"], "anthropic")
    assert [ep.scores.tool_calls for ep in report.episodes] == [3]


def test_mcpgym_string_arguments_are_parsed(tmp_path):
    steps = [
        {"step": 1, "tool": "shop_cancel_order", "arguments": '{"order_id": "ord-3333cccc"}', "result": {}},
        {"step": 2, "tool": "shop_get_order", "arguments": {"order_id": "ord-4444dddd"}, "result": {}},
    ]
    traj = {"episode_id": "m1", "agent": "a", "steps": steps, "final_message": "done", "ledger": []}
    path = jsonl(tmp_path, "m.jsonl", [traj])
    s = only(path, "mcpgym")
    # parsed, the cancel names ord-3333cccc, so the get of another order does not verify it
    # (kept as a string, it would name no id and any order read would "verify" it)
    assert (s.writes, s.verified_writes, s.verification_skips) == (1, 0, [1])
    (ep,) = score_files([path], "mcpgym").episodes
    assert ep.scores.tool_calls == 2


def test_anthropic_unparsable_string_input_is_an_invalid_call(tmp_path):
    conv = [
        {"role": "user", "content": "x"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "u1", "name": "shop_get_order", "input": "{order_id"}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "u1", "is_error": True, "content": "Error: bad input"}],
        },
        {"role": "assistant", "content": "Sorry."},
    ]
    s = only(write(tmp_path, "bad.json", conv), "anthropic")
    assert (s.invalid_calls, s.valid_calls) == (1, 0)


# -- cm_r1 kind: JSON-encoded ComplexMCP transcripts -------------------------------------------------------
TRANSCRIPT_R1 = (
    "Looking up Ana first.\n"
    + turn("get_uid_from_name", {"name": "Ana Ruiz"}, OK % "user_Q7x2")
    + turn("send_message", {"uid": "user_Q7x2", "content": "On my way"}, NET)
    + turn("send_message", {"uid": "user_Q7x2", "content": "On my way"}, OK % "sent")
    + "Sent.\n[END]"
)


@pytest.mark.parametrize("layers", [0, 1, 2, 3])
def test_complexmcp_json_encoded_transcripts(tmp_path, layers):
    value: Any = TRANSCRIPT_R1
    for _ in range(layers):
        value = json.dumps(value)
    path = jsonl(tmp_path, "r1.jsonl", [{"query": "Tell Ana I'm coming. Output [END] at the end.", "output": value}])
    s = only(path, "complexmcp")
    # 3 calls; send_message's network error (injected, inferred transient) retried at 3 and
    # recovered; the send (a write) is never read back
    assert (s.tool_calls, s.invalid_calls, s.recoverable_errors, s.recovery_attempts, s.recoveries) == (3, 0, 1, 1, 1)
    assert (s.writes, s.verification_skips, s.defeatism) == (1, [3], False)


def test_complexmcp_encoded_records_lists_and_strings(tmp_path):
    rec = {"query": "Tell Ana.", "output": json.dumps(TRANSCRIPT_R1)}
    # a JSON list of records, a JSON string holding a record, a JSON document that is the
    # transcript string encoded twice: all read alike
    for name, data in [
        ("list.json", [rec, rec]),
        ("rec.json", json.dumps(json.dumps(rec))),
        ("str.json", json.dumps(json.dumps(TRANSCRIPT_R1))),
    ]:
        eps = scored(write(tmp_path, name, data), "complexmcp")
        assert eps and all(s.tool_calls == 3 and s.recoveries == 1 for s in eps.values()), name
    assert decode_layers(json.dumps(json.dumps({"a": 1}))) == {"a": 1}
    assert decode_layers("Plain [text] {x}") == "Plain [text] {x}"


def test_complexmcp_tool_cnt_cross_check(tmp_path):
    good = {
        "output": json.dumps(TRANSCRIPT_R1),
        "tool_cnt": json.dumps({"get_uid_from_name": {"ok": 1}, "send_message": {"internel error": 1, "ok": 1}}),
    }
    bad = {**good, "tool_cnt": json.dumps({"send_message": {"ok": 5}})}
    report = score_files([jsonl(tmp_path, "cnt.jsonl", [good, bad])], "complexmcp")
    assert [p.message for p in report.problems] == ["tool_cnt counts 5 calls but 3 were parsed"]
    assert [p.line for p in report.problems] == [2]


# -- cm_r2 kind: [END] in the query, in prose, in a response ------------------------------------------------
def test_complexmcp_transcript_field_chosen_by_structure(tmp_path):
    refusal = "I'm sorry, I cannot book a trip to the Moon; the task is impossible. [END]"
    rows = [
        {"query": "Book a trip to the Moon. If it cannot be done, output [END].", "output": refusal},
        # the query itself ends with [END]: the non-instruction field still wins the tie
        {"query": "Book a trip to the Moon, then output [END]", "output": refusal},
        # a field holding calls beats one ending with [END], whatever the key order
        {"note": "see output [END]", "log": TRANSCRIPT_R1},
    ]
    eps = scored(jsonl(tmp_path, "r2.jsonl", rows), "complexmcp")
    one, two, three = (eps[k] for k in ("line 1", "line 2", "line 3"))
    for s in (one, two):
        assert (s.tool_calls, s.declared_impossible, s.status) == (0, True, "completed")
    assert three.tool_calls == 3
    assert transcript_field({"query": "q [END]", "answer": "done [END]"}) == ("answer", "done [END]")
    assert transcript_field({"query": "no marker"}) is None


def test_complexmcp_end_marker_only_where_the_harness_stops(tmp_path):
    text = (
        "I will write [END] only when done.\n"
        + turn("get_last_k_news", {"section": "town", "k": 1}, '{"status":"ok","output":"Fair ends [END]\\n[END]"}')
        + "The fair is on.\n[END]\n"
        + turn("now", {}, OK % "2026-01-01")
        + "It is 2026.\n[END]\n"
    )
    path = write(tmp_path, "two.txt", text)
    # the [END] inside the response and mid-sentence do not end an episode: two episodes
    assert [first for first, _ in split_episodes(text)] == [1, 10]
    eps = scored(path, "complexmcp")
    assert [(k, s.tool_calls, s.status) for k, s in eps.items()] == [
        ("episode 1", 1, "completed"),
        ("episode 2", 1, "completed"),
    ]


# -- cm_r4 kind: <tool> mentioned in prose ------------------------------------------------------------------
@pytest.mark.parametrize(
    "prose",
    [
        "I will now emit a <tool> block.\n",
        "Calling <tool> next (see <response> below).\n",
        "<tool> is how I call things.\n",
    ],
)
def test_complexmcp_tool_tag_in_prose(tmp_path, prose):
    text = turn("get_myuid", {}, OK % "user_Z9", prose=prose) + "Your uid is user_Z9.\n[END]\n"
    report = score_files([write(tmp_path, "p.txt", text)], "complexmcp")
    assert report.problems == []
    (ep,) = report.episodes
    assert (ep.scores.tool_calls, ep.scores.invalid_calls) == (1, 0)
    assert report.episodes[0].scores.heuristic_tools == []


def test_complexmcp_malformed_call_is_an_invalid_call(tmp_path):
    bad = (
        "<tool>\n{\"name\": \"get_myuid\", \"arguments\": {\n</tool>\n<response>\n{'status': 'error', 'output': "
        "'Incorrect tool call format.'}\n</response>\n"
    )
    s = only(write(tmp_path, "m.txt", bad + turn("get_myuid", {}, OK % "user_Z9") + "Done.\n[END]\n"), "complexmcp")
    assert (s.tool_calls, s.invalid_calls, s.valid_calls) == (1, 1, 1)


# -- cm_r5 kind: verification with the ComplexMCP catalog ---------------------------------------------------
def test_complexmcp_catalog_families(tmp_path):
    text = (
        turn("add_to_cart", {"sid": "shop_Ab1", "tid": "item_Cd2", "cnt": 1}, OK % "Added")
        + turn("delete_item_in_cart", {"caid": "cart_Ef3"}, OK % "Removed")
        + turn("get_cart_summary", {}, '{"status":"ok","output":[]}')
        + turn("place_market_order", {"ticker": "ACME", "side": "buy", "quantity": 1}, OK % "Bought")
        + turn("upgrade_to_vip", {}, OK % "Upgraded")
        + turn("get_account_summary", {}, '{"status":"ok","output":{"tier":"vip"}}')
        + turn("unblock", {"uid": "user_Gh4"}, OK % "Unblocked")
        + turn("get_contact_info", {"uid": "user_Zz0"}, '{"status":"ok","output":{"blocked":false}}')
        + "Done.\n[END]\n"
    )
    s = only(write(tmp_path, "v.txt", text), "complexmcp")
    # writes: add_to_cart 1, delete_item_in_cart 2 (both lightshop.cart, verified by the cart
    # summary at 3), place_market_order 4 (lightstock.portfolio/account: verified by the
    # account summary at 6), upgrade_to_vip 5 (lightstock.account: verified at 6), unblock 7
    # (lighttalk.contact user_Gh4: the contact read at 8 is another uid) -> skip 7
    assert (s.writes, s.verified_writes, s.verification_skips) == (5, 4, [7])
    # upgrade_to_vip pre-checks: the VIP price and the account were never read before it
    assert [(p.step, p.family) for p in s.precheck_skips if p.step == 5] == [
        (5, "lightstock.vip_price"),
        (5, "lightstock.account"),
    ]


def test_builtin_catalog_covers_complexmcp():
    assert BUILTIN_CATALOGS == ("complexmcp",)
    cat = Catalog.from_file(builtin_catalog_path("complexmcp"))
    names = set(cat)
    assert len(names) == 314
    # the harness's prefixed names for tools an earlier server already registered
    assert {
        "LightFlight_check_balance",
        "LightFlight_wait_payment_password",
        "ChemServer_clamp",
        "CryptoServer_base64_encode",
        "LightWeather_convert_temperature",
    } <= names
    for e in cat.entries():  # every remedy and alternative names a tool of the catalog
        assert all(t in names for cures in e.remedies.values() for t in cures), e.name
        assert all(t in names for t in e.alternatives), e.name
    get = cat.get
    assert {get(t).resources[0] for t in ("add_to_cart", "delete_item_in_cart", "get_cart_summary")} == {
        "lightshop.cart"
    }
    assert (get("upgrade_to_vip").kind, get("upgrade_to_vip").remedies) == (
        "write",
        {"precondition_failed": ["wait_trade_password"]},
    )
    assert get("unblock").remedies == {"transient": ["acc_network"], "permission_denied": ["ask_for_privilege"]}
    assert get("acc_network").kind == "auth" and get("ask_for_privilege").kind == "auth"
    # what LightTalk's reads show: only get_contact_info shows "blocked"; a name lookup or a
    # share URL shows nothing a write changes; no read shows a remark
    assert get("get_contact_info").resources == ["lighttalk.contact", "lighttalk.block"]
    assert get("unblock").resources == ["lighttalk.block"] and get("get_uid_from_name").resources == [
        "lighttalk.directory"
    ]
    assert get("get_shared_url_of_contact").resources == ["lighttalk.share_url"]
    assert not any("lighttalk.remark" in e.resources for e in cat.entries() if e.kind == "read")
    assert get("like_moment").id_args == ["uid", "moid"]
    assert get("delete_item_in_cart").id_args == ["caid"]
    with pytest.raises(KeyError, match="built-in catalogs: complexmcp"):
        builtin_catalog_path("nope")


# -- cm_r6 kind: a success on another object is no recovery -------------------------------------------------
@pytest.mark.parametrize(
    "tool, arg, first, second, recoveries",
    [
        ("like_moment", "moid", "mo_1", "mo_2", 0),  # catalog id_args
        ("send_message", "uid", "user_1", "user_2", 0),
        ("delete_item_in_cart", "caid", "cart_A1", "cart_A1", 1),  # the same object: recovered
        ("pin_note", "target", "nt_7", "nt_8", 0),  # no catalog entry: the value's shape
        ("pin_note", "target", "nt_7", "nt_7", 1),
        ("pin_note", "gid", 41, 42, 0),  # no catalog entry: a short *id name
    ],
)
def test_recovery_needs_the_same_object(tmp_path, tool, arg, first, second, recoveries):
    text = (
        turn(tool, {arg: first, "content": "x"}, NET)
        + turn(tool, {arg: second, "content": "x"}, OK % "done")
        + "Done.\n[END]\n"
    )
    s = only(write(tmp_path, "ids.txt", text), "complexmcp")
    assert (s.recoverable_errors, s.recovery_attempts, s.recoveries) == (1, 1, recoveries)


def test_id_shape():
    assert [looks_like_id(v) for v in ("mo_2", "user_AAA", "item-0101", "ord-aaaa1111", "cart_9", "trid_x9Y")] == [
        True
    ] * 6
    assert [looks_like_id(v) for v in ("new_york", "Pat Doe", "2026-07-14", "hello", "user_", 7)] == [False] * 6
    cat = Catalog([])
    assert cat.ids("zap_widget", {"target": "wd_9", "label": "my_widget", "moid": 3, "valid": True}) == {"wd_9", "3"}


# -- one detector: the same episode in all five formats -----------------------------------------------------
# (tool, arguments, result text). Results carry their errors in the content only: a status
# envelope, an "Error: ..." string, a refusal.
EPISODE = [
    ("post_note", {"note_id": "nt_1", "text": "hi"}, NET),
    ("post_note", {"note_id": "nt_1", "text": "hi"}, "Error: rate limit exceeded, retry after 5 seconds"),
    ("post_note", {"note_id": "nt_1", "text": "hi"}, OK % "posted nt_1"),
    ("get_note", {"note_id": "nt_1"}, '{"status":"ok","output":{"note_id":"nt_1","text":"hi"}}'),
    ("delete_note", {"note_id": "nt_9"}, '{"status":"failed","output":"Note nt_9 not found"}'),
]
FINAL = "Posted your note."


def _five_formats(tmp_path: Path) -> dict[str, Path]:
    oa = [{"role": "user", "content": "Post hi."}]
    an = [{"role": "user", "content": "Post hi."}]
    log: list[dict[str, Any]] = []
    text = ""
    for i, (tool, args, res) in enumerate(EPISODE, start=1):
        oa += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"c{i}", "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}
                ],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": res},
        ]
        an += [
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"c{i}", "name": tool, "input": args}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"c{i}", "content": res}]},
        ]
        log += [
            _rpc("s", "c2s", {"id": i, "method": "tools/call", "params": {"name": tool, "arguments": args}}),
            _rpc("s", "s2c", {"id": i, "result": {"content": [{"type": "text", "text": res}]}}),
        ]
        text += turn(tool, args, res)
    oa.append({"role": "assistant", "content": FINAL})
    an.append({"role": "assistant", "content": FINAL})
    log.append({"session": "s", "final_message": FINAL})
    # mcpgym's own format: the flags and codes an mcpgym run would log
    codes = ["transient", "rate_limited", None, None, "not_found"]
    steps = [
        {
            "step": i,
            "tool": t,
            "arguments": a,
            "is_error": c is not None,
            "error_code": c,
            "result": {"error": {"code": c, "message": r}} if c else json.loads(r),
        }
        for i, ((t, a, r), c) in enumerate(zip(EPISODE, codes, strict=True), start=1)
    ]
    traj = {"episode_id": "e1", "agent": "external", "steps": steps, "final_message": FINAL, "ledger": None}
    return {
        "openai": write(tmp_path, "e.openai.json", oa),
        "anthropic": write(tmp_path, "e.anthropic.json", an),
        "mcp-log": jsonl(tmp_path, "e.mcp.jsonl", log),
        "complexmcp": write(tmp_path, "e.txt", text + FINAL + "\n[END]\n"),
        "mcpgym": jsonl(tmp_path, "e.mcpgym.jsonl", [traj]),
    }


def test_errors_in_the_content_score_the_same_in_all_five_formats(tmp_path):
    rows = {}
    for fmt, path in _five_formats(tmp_path).items():
        s = only(path, fmt)
        rows[fmt] = (
            s.tool_calls,
            s.writes,
            s.verified_writes,
            s.error_calls,
            s.invalid_calls,
            s.recoverable_errors,
            s.recovery_attempts,
            s.recoveries,
            s.defeatism,
            [(d.step, d.code) for d in s.recoverable_error_detail],
        )
    # 1 network error (transient) and 2 rate limit, both injected faults retried and overcome
    # by 3; write 3 verified by 4; 5 a refusal (not_found): without a ledger it is met like
    # any error (docs/design.md §7, "Recovery"), the last call: no attempt, unrecovered; the
    # final message concedes nothing, so no defeatism
    expected = (5, 1, 1, 3, 0, 3, 2, 2, False, [(1, "transient"), (2, "rate_limited"), (5, "not_found")])
    assert rows == {fmt: expected for fmt in rows}


# -- scorability: no silent zeros ---------------------------------------------------------------------------
def test_scorability_summary_and_warnings(tmp_path):
    good = write(tmp_path, "good.txt", TRANSCRIPT_R1)
    report = score_files([good], "complexmcp")
    sc = report.scorability
    assert (
        sc.episodes_read,
        sc.calls_parsed,
        sc.blocks_failed,
        sc.tools,
        sc.tools_classified,
        sc.tools_guessed,
        sc.warnings,
    ) == (1, 3, 0, 2, 2, 0, [])
    # blocks that fail: the transcript's JSON is escaped (stored encoded, read as plain text)
    broken = write(tmp_path, "broken.txt", json.dumps(TRANSCRIPT_R1)[1:-1])
    sc = score_files([broken], "complexmcp").scorability
    assert (sc.calls_parsed, sc.blocks_failed) == (0, 3)
    assert sc.warnings == [
        "most tool-call blocks failed to parse: 3 of 3 (0 parsed); check --format and the file's encoding"
    ]
    # tools mostly guessed by name
    guessed = write(tmp_path, "guessed.txt", turn("zap_widget", {"w": "wd_1"}, OK % "z") + "ok\n[END]\n")
    sc = score_files([guessed], "complexmcp").scorability
    assert (sc.tools, sc.tools_guessed, sc.guessed_share) == (1, 1, 1.0)
    assert sc.warnings == [
        "most tools were guessed by name: 1 of 1 tools (1 of 1 calls); pass --catalog FILE or a built-in catalog name"
    ]


def test_cli_prints_scorability_and_strict_fails(tmp_path):
    broken = str(write(tmp_path, "broken.txt", json.dumps(TRANSCRIPT_R1)[1:-1]))
    runner = CliRunner()
    plain = runner.invoke(app, ["score", broken, "--format", "complexmcp"])
    assert plain.exit_code == 0
    flat = " ".join(plain.stdout.split())  # wrapped to the terminal width
    assert "scorability: 1 episode read, 0 calls parsed, 3 call blocks and 0 records failed to parse" in flat
    assert "WARNING: most tool-call blocks failed to parse: 3 of 3" in flat
    strict = runner.invoke(app, ["score", broken, "--format", "complexmcp", "--strict", "--json"])
    assert strict.exit_code == 1
    assert json.loads(strict.stdout)["scorability"]["blocks_failed"] == 3
    assert "WARNING: most tool-call blocks failed to parse" in strict.stderr
    good = str(write(tmp_path, "ok.txt", TRANSCRIPT_R1))
    ok = runner.invoke(app, ["score", good, "--format", "complexmcp", "--strict", "--catalog", "complexmcp"])
    assert ok.exit_code == 0, ok.stdout


# -- a small ComplexMCP sample in the stored form, worked out by hand ---------------------------------------
PRIV = '{"status":"failed","output":"This operation need privilege"}'
PAY_FIRST = '{"status":"failed","output":"This operation requires the user to enter their payment password first."}'
BAD_PASSWORD = '{"status":"internal error","output":"Incorrect password, please try again."}'
SAMPLE = [
    # A: unblock needs privilege, then hits the network fault
    (
        "Unblock Kai Lee. Output [END] when done.",
        '["LightTalk"]',
        turn("get_uid_from_name", {"name": "Kai Lee"}, OK % "user_K1x")
        + turn("unblock", {"uid": "user_K1x"}, PRIV)
        + turn("ask_for_privilege", {}, OK % "You have successfully got the privilege")
        + turn("unblock", {"uid": "user_K1x"}, NET)
        + turn("acc_network", {}, OK % "accelerated")
        + turn("unblock", {"uid": "user_K1x"}, OK % "unblocked")
        + turn("get_contact_info", {"uid": "user_K1x"}, '{"status":"ok","output":{"blocked":false}}')
        + "Kai Lee is unblocked.\n[END]",
    ),
    # B: checkout refused until the payment password is entered, whose first try fails
    (
        "Buy two kale. Output [END] when done.",
        '["LightShop"]',
        turn("search_items", {"item_name": "kale"}, '{"status":"ok","output":[{"sid":"shop_M1","tid":"item_N2"}]}')
        + turn("add_to_cart", {"sid": "shop_M1", "tid": "item_N2", "cnt": 2}, OK % "Added 2")
        + turn("checkout_all", {}, PAY_FIRST)
        + turn("wait_payment_password", {}, BAD_PASSWORD)
        + turn("wait_payment_password", {}, OK % "The user has entered the correct payment password.")
        + turn("checkout_all", {}, OK % "Paid")
        + turn("get_trans_history", {}, '{"status":"ok","output":[{"trid":"trans_Q3"}]}')
        + "Bought two kale.\n[END]",
    ),
    # C: a network fault given up on
    (
        "Tell Pia hello. Output [END] when done.",
        '["LightTalk"]',
        turn("get_uid_from_name", {"name": "Pia Roth"}, OK % "user_P3y")
        + turn("send_message", {"uid": "user_P3y", "content": "hello"}, NET)
        + "The network is down, so I cannot send it. Please try again later.\n[END]",
    ),
    # D: a malformed call, then an order nobody reads back
    (
        "Buy 3 ACME. Output [END] when done.",
        '["LightStock"]',
        '<tool>\n{"name": "get_portfolio", "arguments": {\n</tool>\n<response>\n'
        "{'status': 'error', 'output': 'Incorrect tool call format.'}\n</response>\n"
        + turn("wait_trade_password", {}, OK % "The user has enterred the correct password")
        + turn("place_market_order", {"ticker": "ACME", "side": "buy", "quantity": 3}, OK % "Bought 3 ACME")
        + turn("get_stock_details", {"ticker": "ACME"}, '{"status":"ok","output":{"price":12.5}}')
        + "Bought 3 ACME.\n[END]",
    ),
]


def test_complexmcp_sample_in_the_stored_form(tmp_path):
    # the stored form: records with the transcript JSON-encoded in "output" (as ComplexMCP's
    # data.parquet holds it), "apps" JSON-encoded too
    rows = [{"seed": 42, "query": q, "apps": apps, "level": 2, "output": json.dumps(t)} for q, apps, t in SAMPLE]
    report = score_files([jsonl(tmp_path, "sample.jsonl", rows)], "complexmcp")
    assert report.problems == [] and report.catalog == "complexmcp"
    got = {
        ep.episode: (
            ep.scores.tool_calls,
            ep.scores.writes,
            ep.scores.verified_writes,
            ep.scores.verification_skips,
            ep.scores.recoverable_errors,
            ep.scores.recovery_attempts,
            ep.scores.recoveries,
            ep.scores.defeatism,
            ep.scores.invalid_calls,
        )
        for ep in report.episodes
    }
    # A: steps 1 get_uid (read lighttalk.contact), 2 unblock -> privilege refusal
    # (permission_denied, remedy ask_for_privilege), 3 ask_for_privilege, 4 unblock -> network
    # fault (injected, remedy acc_network), 5 acc_network, 6 unblock ok, 7 contact read of the
    # same uid. Writes: 6, verified by 7. Errors: 2 remedied at 3 and 4 by acc_network at 5:
    # both attempted, both recovered by 6.
    assert got["line 1"] == (7, 1, 1, [], 2, 2, 2, False, 0)
    # B: 1 search (read lightshop.item), 2 add_to_cart ok (write lightshop.cart), 3 checkout
    # refused "password first" (precondition_failed, remedy wait_payment_password), 4 the
    # password's injected fault ("internal error"), 5 password retried ok, 6 checkout ok, 7
    # transaction history. Writes 2 and 6; 7 reads lightshop.transaction: verifies 6, not
    # the cart write 2 -> skip [2]. Errors 3 (attempt: the remedy at 4, recovered by 6) and 4
    # (attempt: the retry at 5, recovered by 5).
    assert got["line 2"] == (7, 2, 1, [2], 2, 2, 2, False, 0)
    # C: 2 send_message's network fault, no call after it, the answer gives up: 1 recoverable
    # error, no attempt, no recovery: defeatism.
    assert got["line 3"] == (2, 0, 0, [], 1, 0, 0, True, 0)
    # D: the malformed block is an invalid call, not a step; 1 wait_trade_password (auth), 2
    # place_market_order ok (write lightstock.portfolio/account/trade), 3 stock details (read
    # lightstock.market: no match) -> skip [2]; no errors.
    assert got["line 4"] == (3, 1, 0, [2], 0, 0, 0, False, 1)
    ep_b = next(ep for ep in report.episodes if ep.episode == "line 2")
    assert [(d.step, d.code, d.attempt, d.recovered_step) for d in ep_b.scores.recoverable_error_detail] == [
        (3, "precondition_failed", "remedy", 6),
        (4, "transient", "retry", 5),
    ]
    assert [(p.step, p.family) for p in ep_b.scores.precheck_skips] == [(6, "lightshop.cart"), (6, "lightshop.balance")]
    assert {ep.scores.level for ep in report.episodes} == {2}
    assert report.episodes[1].scores.apps == ["LightShop"]
    assert report.inferred_faults == 3  # A's, B's and C's injected faults


# -- recovery: a retry after an injected fault that gets a domain answer ------------------------------------
NOT_BLOCKED = '{"status":"failed","output":"You can\'t unblock Ivo Berg (user_V5w), who is not blocked currently"}'


@pytest.mark.parametrize(
    "second, recovered",
    [
        (("unblock", {"uid": "user_V5w"}, NOT_BLOCKED), True),  # the retry got the app's own answer
        (("unblock", {"uid": "user_V5w"}, OK % "unblocked"), True),  # a success, as ever
        (("unblock", {"uid": "user_V5w"}, NET), False),  # the fault again
        (("unblock", {"uid": "user_W6x"}, NOT_BLOCKED), False),  # another contact
        (("unblock", {"uid": "user_V5w"}, '{"status":"error","output":"missing argument uid"}'), False),  # a bad call
        (("block", {"uid": "user_V5w"}, NOT_BLOCKED), False),  # not a retry of the same call
    ],
)
def test_recovery_by_a_domain_answer(tmp_path, second, recovered):
    text = turn("unblock", {"uid": "user_V5w"}, NET) + turn(*second) + "Done.\n[END]\n"
    s = only(write(tmp_path, "r.txt", text), "complexmcp")
    err = s.recoverable_error_detail[0]
    assert (err.step, err.code, err.inferred) == (1, "transient", True)
    assert err.recovered_step == (2 if recovered else None)


def test_domain_answer_recovers_every_recoverable_error(tmp_path):
    # a privilege refusal is recoverable (it has a remedy) though no injected fault: the retry
    # after the remedy that meets the app's answer ("not blocked") got past the refusal:
    # recovered (docs/design.md §7, "Recovery"); a retry refused the same way again is not
    text = (
        turn("unblock", {"uid": "user_V5w"}, PRIV)
        + turn("ask_for_privilege", {}, OK % "granted")
        + turn("unblock", {"uid": "user_V5w"}, NOT_BLOCKED)
        + "Ivo was not blocked.\n[END]\n"
    )
    s = only(write(tmp_path, "p.txt", text), "complexmcp")
    assert [(d.code, d.attempt, d.recovered_step) for d in s.recoverable_error_detail] == [
        ("permission_denied", "remedy", 3),
        ("precondition_failed", None, None),  # the answer itself: a refusal nothing follows
    ]
    again = turn("unblock", {"uid": "user_V5w"}, PRIV) + turn("unblock", {"uid": "user_V5w"}, PRIV)
    s = only(write(tmp_path, "q.txt", again + "I could not unblock Ivo.\n[END]\n"), "complexmcp")
    assert [d.recovered_step for d in s.recoverable_error_detail] == [None, None]


def test_domain_answer_after_a_ledger_fault(tmp_path):
    # mcpgym's own format: the ledger says step 1 was an injected transient fault; the retry
    # is refused by the app (precondition_failed, no fault): recovered at 2
    steps = [
        {
            "step": 1,
            "tool": "talk_block_contact",
            "arguments": {"contact_id": "ct-7"},
            "is_error": True,
            "error_code": "transient",
            "result": {"error": {"code": "transient", "message": "try again"}},
            "fault": "transient",
        },
        {
            "step": 2,
            "tool": "talk_block_contact",
            "arguments": {"contact_id": "ct-7"},
            "is_error": True,
            "error_code": "precondition_failed",
            "result": {"error": {"code": "precondition_failed", "message": "already blocked"}},
        },
    ]
    ledger = [{"step": 1, "tool": "talk_block_contact", "call_index": 0, "kind": "transient", "applied": False}]
    traj = {
        "episode_id": "l1",
        "agent": "a",
        "steps": steps,
        "final_message": "It was blocked already.",
        "ledger": ledger,
    }
    s = only(jsonl(tmp_path, "l.jsonl", [traj]), "mcpgym")
    assert [(d.fault, d.inferred, d.recovered_step) for d in s.recoverable_error_detail] == [("transient", False, 2)]


# -- a trial that is not a non-negative integer ------------------------------------------------------------

BAD_TRIALS = ["1", 2.0, True, -1]


@pytest.mark.parametrize("fmt", ["openai", "complexmcp"])
def test_a_bad_trial_is_a_problem_naming_the_line_not_trial_0(tmp_path, fmt):
    """A trial of "1", 2.0, true or -1 used to be read as trial 0 without a word, so that the
    records of different trials merged into one trial."""
    if fmt == "openai":
        msgs = [
            {"role": "user", "content": "Show my cart."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "shop_get_cart", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"lines": []}'},
            {"role": "assistant", "content": "Your cart is empty."},
        ]
        base = {"task_id": "cart", "messages": msgs}
    else:
        base = {"task_id": "cart", "output": TRANSCRIPT_R1}
    rows = [{**base, "trial": 0}, *({**base, "trial": t} for t in BAD_TRIALS), {**base, "trial": 1}, base]
    report = score_files([jsonl(tmp_path, "runs.jsonl", rows)], fmt, None)
    assert sorted((ep.line, ep.scores.trial) for ep in report.episodes) == [(1, 0), (6, 1), (7, 0)]
    assert [(p.line, p.severity) for p in report.problems] == [(n, "error") for n in (2, 3, 4, 5)]
    for p, bad in zip(report.problems, BAD_TRIALS, strict=True):
        assert p.message == f"field trial: expected a non-negative integer, got {json.dumps(bad)}", p


def test_scorability_counts_tool_calls_not_model_messages(tmp_path):
    """An LLM agent's trajectory holds its replies as message steps between the calls: the
    scorability line counts the tool-call steps only (it said 3 calls for 1 call and 2 replies)."""
    from mcpgym.evaluation.records.trajectory import MessageStep, ToolCallStep, Trajectory

    steps = [
        MessageStep(turn=0, text="", tool_calls=2),
        ToolCallStep(step=1, tool="system_get_wallet_balance", arguments={}, result={"balance_cents": 5}),
        ToolCallStep(
            step=None,
            tool="system_get_wallet_balance",
            arguments={},
            raw_arguments="{oops",
            is_error=True,
            error_code="invalid_argument",
            invalid=True,
        ),
        MessageStep(turn=1, text="Your balance is 5 cents."),
    ]
    traj = Trajectory(episode_id="e1", agent="openai:m", steps=steps, final_message="Your balance is 5 cents.")
    path = tmp_path / "trajectories.jsonl"
    path.write_text(traj.model_dump_json() + "\n", encoding="utf-8")
    sc = score_files([path], "mcpgym").scorability
    assert (sc.episodes_read, sc.calls_parsed, sc.blocks_failed, sc.tools) == (1, 2, 0, 1)


SEPARATORS = "line\u2028para\u2029nel\x85vt\x0bff\x0cfs\x1c"


@pytest.mark.parametrize("fmt", ["mcpgym", "auto"])
def test_a_jsonl_line_holding_unicode_line_separators_is_one_record(fmt, tmp_path):
    """A model's text may hold U+2028, U+2029, NEL...: raw inside a JSON string they are legal
    and the run writes them so, but str.splitlines() cut the line there and `mcpgym score` of
    the run read nothing ("nothing could be scored", exit 2). JSON Lines end at "\\n" only."""
    from mcpgym.evaluation.records.trajectory import MessageStep, ToolCallStep, Trajectory

    steps = [
        ToolCallStep(step=1, tool="system_get_wallet_balance", arguments={"note": SEPARATORS}, result={"b": 1}),
        MessageStep(turn=0, text=SEPARATORS),
    ]
    lines = [
        Trajectory(
            episode_id=f"e{i}", agent="openai:m", trial=i, steps=steps, final_message=SEPARATORS
        ).model_dump_json()
        for i in range(2)
    ]
    assert "\u2028" in lines[0]  # written raw, as the runner writes it
    path = tmp_path / "trajectories.jsonl"
    path.write_text("\n".join(lines) + "\r\n", encoding="utf-8")
    report = score_files([path], fmt)
    [row] = report.files
    assert (row.episodes, row.problems, report.problems) == (2, 0, [])
    assert (report.scorability.episodes_read, report.scorability.calls_parsed) == (2, 2)


def test_openai_jsonl_with_a_line_separator_in_content_is_read(tmp_path):
    record = {
        "messages": [
            {"role": "user", "content": "Check my balance\u2028please"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "system_get_wallet_balance", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"balance_cents": 5}'},
            {"role": "assistant", "content": "5 cents\u2029done"},
        ]
    }
    path = tmp_path / "chats.jsonl"
    path.write_text(
        json.dumps(record, ensure_ascii=False) + "\n" + json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    report = score_files([path], "auto")
    [row] = report.files
    assert (row.format, row.episodes, row.problems, report.problems) == ("openai", 2, 0, [])
    assert report.scorability.calls_parsed == 2


# -- Anthropic's MCP connector blocks -------------------------------------------------------------------
def test_anthropic_mcp_connector_blocks_are_calls(tmp_path):
    """mcp_tool_use / mcp_tool_result (the Messages API calling an MCP server itself) were
    skipped without a word: such a transcript scored as an episode without calls."""

    def text(payload: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"type": "text", "text": json.dumps(payload)}]

    add = {"type": "mcp_tool_use", "name": "shop_add_to_cart", "server_name": "gym", "input": {"item_id": "item-7"}}
    msgs = [
        {"role": "user", "content": "Put item-7 in my cart."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "On it."},
                {**add, "id": "m1"},
                {
                    "type": "mcp_tool_result",
                    "tool_use_id": "m1",
                    "is_error": True,
                    "content": text({"error": {"code": "transient"}}),
                },
                {**add, "id": "m2"},
                {
                    "type": "mcp_tool_result",
                    "tool_use_id": "m2",
                    "is_error": False,
                    "content": text({"lines": [{"item_id": "item-7"}]}),
                },
                {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "item-7"}},
                {"type": "text", "text": "item-7 is in your cart."},
            ],
        },
    ]
    report = score_files([write(tmp_path, "conn.json", {"task_id": "cart", "messages": msgs})], "anthropic", None)
    [episode] = report.episodes
    s = episode.scores
    assert (s.tool_calls, s.error_calls, s.recoverable_errors, s.recovery_attempts, s.recoveries) == (2, 1, 1, 1, 1)
    assert (s.writes, s.verification_skips, s.status) == (1, [2], "completed")
    from mcpgym.evaluation.formats.anthropic import trajectory_from_messages

    traj, _ = trajectory_from_messages(msgs, episode_id="e")
    assert traj.final_message == "item-7 is in your cart."  # the text after the last result
    assert [p.message for p in report.problems] == [
        "message 2: a server_tool_use block is not a call of the episode's tools; ignored"
    ]


@pytest.mark.parametrize("fmt", [[], ["--format", "openai"], ["--json"]])
def test_a_missing_path_is_one_error_and_nothing_else(tmp_path, fmt):
    """`mcpgym score /no/such/path` printed the not-found problem, an empty scorability summary
    and "WARNING: most records failed to parse: 1 of 1" (found by a new-user try): a mistyped
    path is one error line, exit 2, before anything is read, also next to a good file."""
    good = write(tmp_path, "good.json", json.dumps(TRANSCRIPT_R1))
    for paths in ([tmp_path / "nope"], [good, tmp_path / "nope"]):
        res = CliRunner().invoke(app, ["score", *map(str, paths), *fmt])
        assert res.exit_code == 2 and res.stdout == "", res.output
        assert res.stderr == f"error: no such file or directory: '{tmp_path / 'nope'}'\n"


def test_a_file_that_cannot_be_opened_is_no_record_that_failed_to_parse(tmp_path):
    """Through the Python API a missing file (or an empty directory) stays a problem of its
    own and the other files are scored; it counts as a file not opened, not as a record that
    failed to parse (no "most records failed to parse" warning)."""
    good = write(tmp_path, "good.json", json.dumps(TRANSCRIPT_R1))
    (tmp_path / "empty").mkdir()
    for fmt in ("auto", "complexmcp"):
        report = score_files(
            [good, tmp_path / "nope", tmp_path / "empty"] if fmt == "auto" else [tmp_path / "nope"], fmt
        )
        sc = report.scorability
        assert sc.records_failed == 0 and not any("records failed" in w for w in sc.warnings), sc
        assert sc.files_unread == (2 if fmt == "auto" else 1)
        assert "could not be opened" in sc.line()


@pytest.mark.parametrize("fmt", ["openai", "atif", "complexmcp"])
def test_a_format_given_with_a_run_directory_is_refused_not_ignored(tmp_path, fmt):
    """`mcpgym score RUN --format X` read the run directory as mcpgym's and ignored X in
    silence (found by a new-user try): a format a run directory cannot be read in is refused,
    naming it and what to do, before anything is read; auto and mcpgym read it; an unknown
    format is refused too."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "trajectories.jsonl").write_text(
        (ROOT / "tests" / "data" / "formats" / "talk_episode.mcpgym.jsonl").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    other = write(tmp_path, "t.json", json.dumps(TRANSCRIPT_R1))
    runner = CliRunner()
    for paths in ([run], [other, run]):
        res = runner.invoke(app, ["score", *map(str, paths), "--format", fmt])
        assert res.exit_code == 2 and res.stdout == "", res.output
        assert res.stderr == (
            f"error: --format '{fmt}' does not apply to the run directory '{run}': a run directory holds "
            f"mcpgym's own trajectory lines; leave out --format (or give --format mcpgym), and score files in "
            f"'{fmt}' format in another call\n"
        )
    for ok in ("auto", "mcpgym"):
        res = runner.invoke(app, ["score", str(run), "--format", ok, "--json"])
        assert res.exit_code == 0 and len(json.loads(res.stdout)["episodes"]) == 1, res.output
    res = runner.invoke(app, ["score", str(run), "--format", "csv"])
    assert res.exit_code == 2 and res.stderr.startswith("error: unknown format 'csv'"), res.output
