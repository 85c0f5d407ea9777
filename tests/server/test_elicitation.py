"""MCP elicitation in the server (issue 19): the SDK client's elicitation callback answers the
questions of ``system_send_money`` over stdio, in-process (2026-07-28: InputRequiredResult)
and over streamable HTTP; accept, decline and cancel each have their effect; a client without
the capability gets the tool error naming what the user must provide."""

from __future__ import annotations

import mcp_types as types
import pytest
from mcp import Client

from mcpgym.kernel.world import World
from mcpgym.server.episode import Episode
from mcpgym.server.mcp_server import server_for_episode
from mcpgym.tools.mcp_bridge import payload_of
from tests.support.mcp_helpers import control_get, create_episode, stdio_params

SEED = 7
WORLD = World(SEED, ["system"])
ONE = next(p for p in WORLD.people if p.name == "Tara Dubois")
MAYAS = sorted(p.name for p in WORLD.people if p.name.startswith("Maya "))
START = WORLD.apps["system"].state.wallet.balance_cents


class ScriptedUser:
    """An elicitation callback answering from a queue of (action, content) and keeping what it was asked."""

    def __init__(self, *answers: tuple[str, dict | None]) -> None:
        self.answers = list(answers)
        self.asked: list[types.ElicitRequestFormParams] = []

    async def __call__(self, context, params):  # noqa: ANN001 - the SDK's callback shape
        self.asked.append(params)
        action, content = self.answers.pop(0)
        return types.ElicitResult(action=action, content=content)


async def _send(client: Client, **args) -> tuple[bool, dict]:  # noqa: ANN003
    res = await client.call_tool("system_send_money", args)
    return bool(res.is_error), payload_of(res)


def test_world_has_what_the_tests_need() -> None:
    assert len(MAYAS) == 2 and START > 30_000


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_choose_then_confirm_in_process(mode: str) -> None:
    episode = Episode.create(seed=SEED, apps=["system"])
    user = ScriptedUser(("accept", {"recipient": MAYAS[1]}), ("accept", {"confirmed_by_user": True}))
    async with Client(server_for_episode(episode), mode=mode, elicitation_callback=user) as client:
        err, out = await _send(client, recipient="Maya", amount_cents=25_000, memo="concert")
    assert not err and out["recipient"] == MAYAS[1] and out["balance_cents"] == START - 25_000
    assert [p.requested_schema["required"] for p in user.asked] == [["recipient"], ["confirmed_by_user"]]
    assert user.asked[0].requested_schema["properties"]["recipient"]["enum"] == MAYAS
    assert "$250.00" in user.asked[1].message and MAYAS[1] in user.asked[1].message
    record = episode.invoker.calls[-1]
    assert len(episode.invoker.calls) == 1 and not record.is_error
    assert [a["action"] for a in record.user["asked"]] == ["accept", "accept"]


async def test_decline_records_the_refusal_and_sends_nothing() -> None:
    episode = Episode.create(seed=SEED, apps=["system"])
    user = ScriptedUser(("decline", None))
    async with Client(server_for_episode(episode), mode="legacy", elicitation_callback=user) as client:
        err, out = await _send(client, recipient=ONE.name, amount_cents=20_000)
    assert not err and out["status"] == "declined" and out["balance_cents"] == START
    state = episode.world.apps["system"].state
    assert state.wallet.balance_cents == START
    assert (
        state.notifications[f"n-declined-{ONE.person_id}-20000"].text
        == "You declined a payment of $200.00 to Tara Dubois."
    )


async def test_cancel_changes_nothing_and_a_small_payment_asks_nothing() -> None:
    episode = Episode.create(seed=SEED, apps=["system"])
    before = episode.world.state_hash()
    user = ScriptedUser(("cancel", None))
    async with Client(server_for_episode(episode), mode="2026-07-28", elicitation_callback=user) as client:
        err, out = await _send(client, recipient=ONE.name, amount_cents=20_000)
        assert err and out["error"]["code"] == "user_input_required"
        assert episode.world.state_hash() == before
        err, out = await _send(client, recipient=ONE.name, amount_cents=5_000)  # under $100: no question
    assert not err and out["balance_cents"] == START - 5_000 and len(user.asked) == 1


async def test_a_client_without_elicitation_gets_the_tool_error_and_can_answer_in_arguments() -> None:
    episode = Episode.create(seed=SEED, apps=["system"])
    async with Client(server_for_episode(episode), mode="legacy") as client:
        err, out = await _send(client, recipient="Maya", amount_cents=25_000)
        assert err and out["error"]["code"] == "user_input_required" and out["error"]["field"] == "recipient"
        assert out["error"]["details"]["user_request"]["options"] == MAYAS
        assert "ask the user which one" in out["error"]["message"]
        err, out = await _send(client, recipient=MAYAS[0], amount_cents=25_000)
        assert (
            err and out["error"]["field"] == "confirmed_by_user" and "confirmed_by_user=true" in out["error"]["message"]
        )
        err, out = await _send(client, recipient=MAYAS[0], amount_cents=25_000, confirmed_by_user=True)
    assert not err and out["balance_cents"] == START - 25_000


async def test_stdio_elicitation_confirms_a_payment() -> None:
    user = ScriptedUser(("accept", {"confirmed_by_user": True}))
    async with Client(stdio_params("--seed", str(SEED), "--apps", "system"), elicitation_callback=user) as client:
        err, out = await _send(client, recipient=ONE.name, amount_cents=30_000, memo="rent share")
        assert not err and out["balance_cents"] == START - 30_000
        txns = payload_of(await client.call_tool("system_list_transactions", {"limit": 1}))["transactions"]
    assert txns[0]["amount_cents"] == -30_000 and txns[0]["memo"] == "to Tara Dubois: rent share"
    assert len(user.asked) == 1


async def test_stdio_without_elicitation_gets_the_tool_error() -> None:
    async with Client(stdio_params("--seed", str(SEED), "--apps", "system")) as client:
        err, out = await _send(client, recipient=ONE.name, amount_cents=30_000)
    assert err and out["error"]["code"] == "user_input_required"


async def test_http_elicitation_confirms_and_the_log_keeps_the_answer(http_server) -> None:  # noqa: ANN001
    base, token = http_server
    ep = create_episode(base, token, seed=SEED, apps=["system"])
    user = ScriptedUser(("accept", {"recipient": MAYAS[0]}), ("accept", {"confirmed_by_user": True}))
    async with Client(ep["mcp_url"], elicitation_callback=user) as client:
        err, out = await _send(client, recipient="maya", amount_cents=12_345)
    assert not err and out["recipient"] == MAYAS[0]
    calls = control_get(base, token, f"/control/episodes/{ep['episode_id']}/calls")
    assert len(calls) == 1 and [a["request"]["kind"] for a in calls[0]["user"]["asked"]] == ["choose", "confirm"]
    snap = control_get(base, token, f"/control/episodes/{ep['episode_id']}/snapshot")
    assert snap["state"]["system"]["wallet"]["balance_cents"] == START - 12_345


async def test_http_without_elicitation_gets_the_tool_error(http_server) -> None:  # noqa: ANN001
    base, token = http_server
    ep = create_episode(base, token, seed=SEED, apps=["system"])
    async with Client(ep["mcp_url"]) as client:
        err, out = await _send(client, recipient=ONE.name, amount_cents=12_345)
    assert err and out["error"]["code"] == "user_input_required"
    snap = control_get(base, token, f"/control/episodes/{ep['episode_id']}/snapshot")
    assert snap["state"]["system"]["wallet"]["balance_cents"] == START


# -- a whole confirmation task, the user played by the task's scripted simulator ----------------
def _task_channel(task_id: str):  # noqa: ANN202
    from mcpgym.evaluation.tasks import get_task
    from mcpgym.evaluation.users import ScriptedUser, UserChannel

    task = get_task(task_id)
    return task, UserChannel(ScriptedUser(task.user, task.seed), lambda: 0)


def _payment_args(task) -> dict:  # noqa: ANN001
    call = next(s for s in task.oracle if getattr(s, "call", None) == "system_send_money")
    return {k: v for k, v in call.args.items() if k != "confirmed_by_user"}  # the user confirms, not the agent


@pytest.mark.parametrize("task_id", ["users.confirm_payment_1", "users.confirm_payment_2"])
async def test_http_client_with_elicitation_completes_a_confirmation_task(http_server, task_id: str) -> None:  # noqa: ANN001
    from mcpgym.evaluation.scoring.judge import judge
    from mcpgym.evaluation.tasks.registry import gold_snapshot

    base, token = http_server
    task, channel = _task_channel(task_id)
    ep = create_episode(base, token, seed=task.seed, apps=list(task.apps))
    async with Client(ep["mcp_url"], elicitation_callback=channel.elicitation_callback) as client:
        err, out = await _send(client, **_payment_args(task))
    assert not err and out["status"] == ("declined" if "payment" in task.user.refuses else "sent")
    initial = control_get(base, token, f"/control/episodes/{ep['episode_id']}/initial")
    final = control_get(base, token, f"/control/episodes/{ep['episode_id']}/snapshot")
    assert judge(initial, final, gold_snapshot(task)).success  # the world the task wants


async def test_stdio_client_with_elicitation_completes_a_confirmation_task() -> None:
    from mcpgym.evaluation.tasks.registry import gold_snapshot

    task, channel = _task_channel("users.confirm_payment_1")
    gold = gold_snapshot(task)["state"]["system"]
    target = stdio_params("--seed", str(task.seed), "--apps", "system")
    async with Client(target, elicitation_callback=channel.elicitation_callback) as client:
        err, out = await _send(client, **_payment_args(task))
        txns = payload_of(await client.call_tool("system_list_transactions", {"limit": 5}))["transactions"]
    assert not err and out["balance_cents"] == gold["wallet"]["balance_cents"]
    assert [t["memo"] for t in txns] == [t["memo"] for t in gold["transactions"].values()][-len(txns) :]
    async with Client(target) as client:  # the same task without the capability: the tool error
        err, out = await _send(client, **_payment_args(task))
    assert err and out["error"]["code"] == "user_input_required" and "confirmed_by_user=true" in out["error"]["message"]
