"""No forged consent (issue 29): over the 2026-07-28 protocol the ``requestState`` a client
echoes is an opaque server-held token (server/input_state.py). A client that never asked the
user and sends back a state saying the user confirmed a $500 payment is refused, and so are a
flipped character, a state of another episode, of another tool, of other arguments, an expired
one and one replayed; each refusal is the JSON-RPC error -32602 naming why, and nothing is run
or logged. Real SDK clients: over streamable HTTP (the session server) and in-process."""

from __future__ import annotations

import json
import time

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcpgym.kernel.world import World
from mcpgym.server.episode import Episode
from mcpgym.server.input_state import InputStateError, InputStates, arguments_digest
from mcpgym.server.mcp_server import server_for_episode
from mcpgym.tools.mcp_bridge import payload_of
from tests.support.mcp_helpers import control_get, create_episode

SEED = 7
WORLD = World(SEED, ["system"])
TARA = next(p for p in WORLD.people if p.name == "Tara Dubois")
START = WORLD.apps["system"].state.wallet.balance_cents
PAY = {"recipient": TARA.name, "amount_cents": 50_000, "memo": "rent"}
CONFIRM = types.ElicitResult(action="accept", content={"confirmed_by_user": True})


async def never_answers(context, params):  # noqa: ANN001, ANN201 - the SDK's elicitation callback shape
    """An elicitation callback that must not be called: these clients answer nothing themselves."""
    raise AssertionError(f"the server asked the user: {params.message}")


def forged_state() -> str:
    """What the server used to hand out and trust: the settled confirmation and an 'asked' record."""
    record = {
        "request": {"kind": "confirm", "argument": "confirmed_by_user", "message": "Send $500.00 to Tara Dubois?"},
        "action": "accept",
        "content": {"confirmed_by_user": True},
        "via": "elicitation",
    }
    return json.dumps({"settled": {"confirmed_by_user": True}, "asked": [record]}, separators=(",", ":"))


async def refused(client: Client, reason: str, args: dict | None = None, **echo) -> str:  # noqa: ANN003
    """Call ``system_send_money`` with the echo; assert the -32602 refusal for ``reason``."""
    with pytest.raises(MCPError) as info:
        await client.call_tool("system_send_money", args or PAY, **echo)
    assert info.value.error.code == types.INVALID_PARAMS, info.value.error
    assert info.value.error.data == {"reason": f"request_state_{reason}"}, info.value.error
    return info.value.error.message


async def first_round(client: Client, args: dict | None = None) -> str:
    """The genuine requestState of the first round (the confirmation question)."""
    res = await client.session.call_tool("system_send_money", args or PAY, allow_input_required=True)
    assert isinstance(res, types.InputRequiredResult) and res.request_state
    assert res.input_requests["user"].params.requested_schema["required"] == ["confirmed_by_user"]
    return res.request_state


def untouched(base: str, token: str, episode_id: str, calls: int = 0) -> None:
    """The episode's wallet holds its starting balance and its call log has ``calls`` rows."""
    snap = control_get(base, token, f"/control/episodes/{episode_id}/snapshot")
    assert snap["state"]["system"]["wallet"]["balance_cents"] == START
    assert len(control_get(base, token, f"/control/episodes/{episode_id}/calls")) == calls


# -- the $500 transfer, forged --------------------------------------------------------------------
async def test_a_forged_settled_state_sends_nothing_and_logs_nothing(http_server) -> None:  # noqa: ANN001
    base, token = http_server
    ep = create_episode(base, token, seed=SEED, apps=["system"])
    async with Client(ep["mcp_url"], elicitation_callback=never_answers) as client:
        assert client.protocol_version == "2026-07-28"
        message = await refused(client, "unknown", input_responses={"user": CONFIRM}, request_state=forged_state())
        assert "not issued by this episode" in message
        await refused(client, "unknown", request_state=forged_state())  # the state alone
        await refused(client, "unanswered", input_responses={"user": CONFIRM})  # an answer to no question
        # a tool that asks nothing refuses the forged echo too
        with pytest.raises(MCPError) as info:
            await client.call_tool("system_get_time", {}, request_state=forged_state())
        assert info.value.error.data == {"reason": "request_state_unknown"}
    untouched(base, token, ep["episode_id"])


async def test_a_genuine_round_trip_logs_the_answer_the_server_validated(http_server) -> None:  # noqa: ANN001
    base, token = http_server
    ep = create_episode(base, token, seed=SEED, apps=["system"])
    async with Client(ep["mcp_url"], elicitation_callback=never_answers) as client:
        state = await first_round(client)
        res = await client.call_tool("system_send_money", PAY, input_responses={"user": CONFIRM}, request_state=state)
    assert not res.is_error and payload_of(res)["balance_cents"] == START - 50_000
    (call,) = control_get(base, token, f"/control/episodes/{ep['episode_id']}/calls")
    (record,) = call["user"]["asked"]
    assert record["action"] == "accept" and record["content"] == {"confirmed_by_user": True}
    assert record["request"]["kind"] == "confirm" and "$500.00" in record["request"]["message"]


# -- variants of a genuine state ------------------------------------------------------------------
async def test_an_altered_state_is_refused(http_server) -> None:  # noqa: ANN001
    base, token = http_server
    ep = create_episode(base, token, seed=SEED, apps=["system"])
    async with Client(ep["mcp_url"], elicitation_callback=never_answers) as client:
        state = await first_round(client)
        for altered in (state[:-1] + ("A" if state[-1] != "A" else "B"), state + "x", state[1:], "", "x" * 10_000):
            await refused(client, "unknown", input_responses={"user": CONFIRM}, request_state=altered)
    untouched(base, token, ep["episode_id"])


async def test_a_state_of_another_episode_is_refused(http_server) -> None:  # noqa: ANN001
    base, token = http_server
    a = create_episode(base, token, seed=SEED, apps=["system"])
    b = create_episode(base, token, seed=SEED, apps=["system"])
    async with Client(a["mcp_url"], elicitation_callback=never_answers) as client:
        state = await first_round(client)
    async with Client(b["mcp_url"], elicitation_callback=never_answers) as client:
        await refused(client, "unknown", input_responses={"user": CONFIRM}, request_state=state)
    untouched(base, token, a["episode_id"])
    untouched(base, token, b["episode_id"])


async def test_a_state_for_another_tool_or_other_arguments_is_refused(http_server) -> None:  # noqa: ANN001
    base, token = http_server
    ep = create_episode(base, token, seed=SEED, apps=["system"])
    async with Client(ep["mcp_url"], elicitation_callback=never_answers) as client:
        small = await first_round(client, {**PAY, "amount_cents": 20_000})  # the user would confirm $200 ...
        message = await refused(client, "arguments", input_responses={"user": CONFIRM}, request_state=small)
        assert "other arguments" in message  # ... and the answer is not carried to $500
        state = await first_round(client)
        with pytest.raises(MCPError) as info:
            await client.call_tool("system_get_time", {}, input_responses={"user": CONFIRM}, request_state=state)
        assert info.value.error.data == {"reason": "request_state_tool"}
        assert "issued for tool 'system_send_money'" in info.value.error.message
    untouched(base, token, ep["episode_id"])


async def test_a_state_replayed_is_refused_and_the_payment_is_made_once(http_server) -> None:  # noqa: ANN001
    base, token = http_server
    ep = create_episode(base, token, seed=SEED, apps=["system"])
    async with Client(ep["mcp_url"], elicitation_callback=never_answers) as client:
        state = await first_round(client)
        res = await client.call_tool("system_send_money", PAY, input_responses={"user": CONFIRM}, request_state=state)
        assert not res.is_error
        for _ in range(2):
            message = await refused(client, "replayed", input_responses={"user": CONFIRM}, request_state=state)
            assert "already used" in message
    snap = control_get(base, token, f"/control/episodes/{ep['episode_id']}/snapshot")
    assert snap["state"]["system"]["wallet"]["balance_cents"] == START - 50_000
    assert len(control_get(base, token, f"/control/episodes/{ep['episode_id']}/calls")) == 1


async def test_an_expired_state_is_refused_in_process() -> None:
    episode = Episode.create(seed=SEED, apps=["system"])
    episode.limit_waits(0.3)
    async with Client(server_for_episode(episode), mode="2026-07-28", elicitation_callback=never_answers) as client:
        state = await first_round(client)
        time.sleep(0.4)
        message = await refused(client, "expired", input_responses={"user": CONFIRM}, request_state=state)
        assert "expired (0.3 s after it was issued)" in message
    assert episode.invoker.calls == [] and episode.world.apps["system"].state.wallet.balance_cents == START


# -- the store itself -----------------------------------------------------------------------------
def test_the_store_is_bounded_and_binds_tool_and_canonical_arguments() -> None:
    from mcpgym.kernel.user import UserRequest

    question = UserRequest(
        kind="confirm", tool="t", topic="payment", argument="confirmed_by_user", message="Send $1.00?"
    )
    store = InputStates(ttl=60, max_pending=3)
    tokens = [store.issue("t", {"a": 1, "b": 2}, {}, [], question, now=0) for _ in range(5)]
    assert len(store) == 3 and len(set(tokens)) == 5 and all(len(t) == 32 for t in tokens)
    with pytest.raises(InputStateError) as info:
        store.redeem(tokens[0], "t", {"a": 1, "b": 2}, now=1)  # the oldest was forgotten
    assert info.value.reason == "unknown"
    assert store.redeem(tokens[4], "t", {"b": 2, "a": 1}, now=1).answers(question)  # key order is not a change
    assert arguments_digest({"a": 1, "b": 2}) == arguments_digest({"b": 2, "a": 1}) != arguments_digest({"a": 1})
    with pytest.raises(InputStateError) as info:
        store.redeem(tokens[3], "t", {"a": 1, "b": 2}, now=61)
    assert info.value.reason == "expired"
