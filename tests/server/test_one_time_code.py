"""The one-time code (elicitation kind ``provide``): ``system_send_money`` over $500.00 needs, once
confirmed, the code the bank texted the user. Over stdio with the SDK client's elicitation
callback: the task's simulated user completes ``users.code_payment_1``; accept / decline /
cancel / a wrong code each have their effect; a client without the capability gets the tool
error naming ``one_time_code``."""

from __future__ import annotations

import mcp_types as types
from mcp import Client

from mcpgym.evaluation.tasks import get_task
from mcpgym.evaluation.tasks.registry import gold_snapshot
from mcpgym.evaluation.users import ScriptedUser, UserChannel
from mcpgym.kernel.world import World
from mcpgym.tools.mcp_bridge import payload_of
from tests.support.mcp_helpers import stdio_params

TASK = get_task("users.code_payment_1")
WORLD = World(TASK.seed, ["system"])
PERSON = next(p for p in WORLD.people if p.name == "Sami Kowalski")
AMOUNT = 65_000
CODE = WORLD.apps["system"].one_time_code(PERSON.person_id, AMOUNT)
START = WORLD.apps["system"].state.wallet.balance_cents
ARGS = {"recipient": PERSON.name, "amount_cents": AMOUNT, "memo": "the sofa"}


class Answers:
    """An elicitation callback answering from a queue of (action, content), keeping the requests."""

    def __init__(self, *answers: tuple[str, dict | None]) -> None:
        self.answers = list(answers)
        self.asked: list = []

    async def __call__(self, context, params):  # noqa: ANN001 - the SDK's callback shape
        self.asked.append(params)
        action, content = self.answers.pop(0)
        return types.ElicitResult(action=action, content=content)


async def _send(client: Client, **args) -> tuple[bool, dict]:  # noqa: ANN003
    res = await client.call_tool("system_send_money", args)
    return bool(res.is_error), payload_of(res)


async def _balance(client: Client) -> int:
    return payload_of(await client.call_tool("system_get_wallet_balance", {}))["balance_cents"]


def test_the_task_pins_the_worlds_code() -> None:
    assert TASK.user is not None and TASK.user.facts["one_time_code"] == CODE and len(CODE) == 6
    assert START >= AMOUNT and "confirmation" in TASK.tags


async def test_stdio_client_with_elicitation_completes_the_one_time_code_task() -> None:
    channel = UserChannel(ScriptedUser(TASK.user, TASK.seed), lambda: 0)
    asked: list = []

    async def relay(context, params):  # noqa: ANN001, ANN202
        asked.append(params)
        return await channel.elicitation_callback(context, params)

    gold = gold_snapshot(TASK)["state"]["system"]
    async with Client(stdio_params("--seed", str(TASK.seed), "--apps", "system"), elicitation_callback=relay) as client:
        err, out = await _send(client, **ARGS)
        assert not err and out["status"] == "sent" and out["balance_cents"] == gold["wallet"]["balance_cents"]
        txns = payload_of(await client.call_tool("system_list_transactions", {"limit": 1}))["transactions"]
    assert txns[0]["amount_cents"] == -AMOUNT and txns[0]["memo"] == "to Sami Kowalski: the sofa"
    # first the confirmation (a boolean), then the code (a string only the user has)
    props = [next(iter(p.requested_schema["properties"].items())) for p in asked]
    assert [(name, prop["type"]) for name, prop in props] == [
        ("confirmed_by_user", "boolean"),
        ("one_time_code", "string"),
    ]
    assert "one-time code" in asked[1].message and CODE not in asked[1].message


async def test_stdio_decline_cancel_and_a_wrong_code_send_nothing() -> None:
    yes = ("accept", {"confirmed_by_user": True})
    user = Answers(
        yes, ("decline", None), yes, ("cancel", None), yes, ("accept", {"one_time_code": "000000"}), yes,
        ("accept", {"one_time_code": CODE}),
    )  # fmt: skip
    async with Client(stdio_params("--seed", str(TASK.seed), "--apps", "system"), elicitation_callback=user) as client:
        err, out = await _send(client, **ARGS)  # the user will not give the code: declined, nothing sent
        assert err and out["error"]["code"] == "user_declined" and await _balance(client) == START
        err, out = await _send(client, **ARGS)  # dismissed: nothing changed, the call can be made again
        assert err and out["error"]["code"] == "user_input_required" and out["error"]["field"] == "one_time_code"
        err, out = await _send(client, **ARGS)  # a code that is not the bank's: refused
        assert err and out["error"]["code"] == "permission_denied" and out["error"]["field"] == "one_time_code"
        assert await _balance(client) == START
        err, out = await _send(client, **ARGS)  # the right code: sent once
        assert not err and out["status"] == "sent" and await _balance(client) == START - AMOUNT
    assert len(user.asked) == 8 and user.answers == []


async def test_stdio_without_elicitation_gets_the_tool_error_naming_the_code() -> None:
    async with Client(stdio_params("--seed", str(TASK.seed), "--apps", "system")) as client:
        err, out = await _send(client, **ARGS, confirmed_by_user=True)
        assert err and out["error"]["code"] == "user_input_required" and out["error"]["field"] == "one_time_code"
        assert "one_time_code" in out["error"]["message"] and "one-time code" in out["error"]["message"]
        assert await _balance(client) == START  # nothing sent
        err, out = await _send(client, **ARGS, confirmed_by_user=True, one_time_code=CODE)  # asked in text
        assert not err and out["status"] == "sent" and out["balance_cents"] == START - AMOUNT
