"""The user simulator, the user channel, the task profile and the three user scores
(issue 19), on hand-built trajectories and profiles."""

from __future__ import annotations

import anyio
import pytest

from mcpgym.evaluation.agents.scripted import catalog_for
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory, UserTurn
from mcpgym.evaluation.scoring.user_scores import clarification_skips, unconfirmed_writes, user_burden
from mcpgym.evaluation.tasks.model import Task, TaskError
from mcpgym.evaluation.tasks.registry import TaskLoadError, parse_task
from mcpgym.evaluation.users import ScriptedUser, UserChannel, UserProfile
from mcpgym.evaluation.users.simulator import UNKNOWN_REPLY
from mcpgym.kernel.user import UserRequest

CATALOG = catalog_for(["system", "talk"])
PROFILE = UserProfile(
    facts={"recipient": "Maya Novak", "home_city": "Lisbon", "seat_preference": "window"},
    refuses=["payment"],
    in_world=["home_city"],
)


def _ask(sim, question, about=None):  # noqa: ANN001, ANN202
    return anyio.run(lambda: sim.reply(question, about))


def _answer(sim, request):  # noqa: ANN001, ANN202
    return anyio.run(lambda: sim.answer_request(request))


# -- the simulator -----------------------------------------------------------------------------
def test_scripted_user_answers_from_the_profile() -> None:
    sim = ScriptedUser(PROFILE, seed=5)
    assert _ask(sim, "Which Maya did you mean?", "recipient").value == "Maya Novak"
    reply = _ask(sim, "What is your seat preference, window or aisle?")  # topic found from the words
    assert (reply.topic, reply.value) == ("seat_preference", "window") and "window" in reply.text
    assert _ask(sim, "Where do you live? home city?").in_world is True
    no = _ask(sim, "May I send the money?", "payment")
    assert no.value is False and no.text.startswith(("No", "Please don't"))
    unknown = _ask(sim, "What is your favourite colour?")
    assert (unknown.value, unknown.topic, unknown.text) == (None, None, UNKNOWN_REPLY)


def test_scripted_user_wording_is_seeded() -> None:
    texts = {_ask(ScriptedUser(PROFILE, seed=s), "which one", "recipient").text for s in range(30)}
    assert len(texts) > 1  # the wording varies with the seed...
    one = [_ask(ScriptedUser(PROFILE, seed=9), "which one", "recipient").text for _ in range(3)]
    assert len(set(one)) == 1  # ...and is the same for the same seed


def test_scripted_user_answers_tool_requests() -> None:
    sim = ScriptedUser(PROFILE, seed=1)
    choose = UserRequest(
        kind="choose",
        tool="system_send_money",
        argument="recipient",
        message="Which Maya?",
        topic="recipient",
        options=["Maya Fischer", "Maya Novak"],
    )
    assert _answer(sim, choose).model_dump(exclude={"via"}) == {
        "action": "accept",
        "content": {"recipient": "Maya Novak"},
    }
    assert _answer(sim, choose.model_copy(update={"options": ["Maya Fischer", "Maya Petrov"]})).action == "cancel"
    confirm = UserRequest(
        kind="confirm",
        tool="system_send_money",
        argument="confirmed_by_user",
        message="Send $250?",
        topic="payment",
        decline_value=False,
    )
    assert _answer(sim, confirm).action == "decline"  # the profile refuses payments
    assert _answer(ScriptedUser(UserProfile(), 1), confirm).content == {"confirmed_by_user": True}
    code = UserRequest(kind="provide", tool="t", argument="code", message="The code?", topic="otp")
    assert _answer(sim, code).action == "cancel"
    assert _answer(ScriptedUser(UserProfile(facts={"otp": "482913"}), 1), code).content == {"code": "482913"}


def test_channel_records_turns_before_the_next_step() -> None:
    made = [0]
    channel = UserChannel(ScriptedUser(PROFILE, 3), lambda: made[0])

    async def main() -> None:
        await channel.ask("Which Maya?", "recipient")
        made[0] = 4
        await channel.ask("Any seat preference, window or aisle?")

    anyio.run(main)
    assert [(t.before_step, t.topic, t.value) for t in channel.turns] == [
        (1, "recipient", "Maya Novak"),
        (5, "seat_preference", "window"),
    ]


def test_profile_and_ask_steps_are_validated() -> None:
    with pytest.raises(ValueError, match="snake_case"):
        UserProfile(facts={"Home City": "Lisbon"})
    with pytest.raises(ValueError, match="in_world topics need a fact: seat"):
        UserProfile(facts={"a": 1}, in_world=["seat"])
    data = {
        "id": "users.bad",
        "instruction": "Send Maya $5.",
        "apps": ["system"],
        "seed": 1,
        "level": 1,
        "tags": ["clarification"],
        "user": {"facts": {"recipient": "Maya Novak"}},
        "oracle": [
            {"ask": "Which Maya?", "about": "who", "save": "who"},
            {"call": "system_send_money", "args": {"recipient": "{who}", "amount_cents": 500}},
            {"answer": "Sent."},
        ],
    }
    with pytest.raises(TaskLoadError, match="task 'users.bad': field 'user': the oracle asks about 'who'"):
        parse_task(data, "inline.yaml", 0)
    data["oracle"][0]["about"] = "recipient"
    assert isinstance(parse_task(data, "inline.yaml", 0), Task)
    data["oracle"][0]["guess"] = "{nobody}"
    with pytest.raises(TaskLoadError, match=r"oracle\[0\]\.guess"):
        parse_task(data, "inline.yaml", 0)
    assert issubclass(TaskError, ValueError)


# -- the scores on hand-built trajectories -----------------------------------------------------
def _traj(steps: list[dict], turns: list[dict] = (), tags: tuple[str, ...] = (), channel: bool = True) -> Trajectory:
    return Trajectory(
        episode_id="e",
        agent="a",
        apps=["system", "talk"],
        steps=[ToolCallStep(step=i + 1, **s) for i, s in enumerate(steps)],
        user_turns=[UserTurn(**t) for t in turns],
        metadata={"tags": list(tags), "user_channel": channel},
    )


READ = {"tool": "system_get_wallet_balance", "result": {"balance_cents": 100}}
SEND = {"tool": "system_send_money", "arguments": {"recipient": "Maya Novak", "amount_cents": 500}}
CONFIRMED = {
    "tool": "system_send_money",
    "arguments": {"recipient": "Tara Dubois", "amount_cents": 25_000, "confirmed_by_user": True},
}
NEEDS = {
    "tool": "system_send_money",
    "arguments": {"recipient": "Maya", "amount_cents": 500},
    "is_error": True,
    "error_code": "user_input_required",
}
TURN = {
    "question": "Which Maya?",
    "about": "recipient",
    "answer": "Maya Novak.",
    "value": "Maya Novak",
    "topic": "recipient",
}


def test_clarification_skips() -> None:
    # a write before any question, in an ambiguous task: a skip
    assert clarification_skips(_traj([READ, SEND], tags=("clarification",)), CATALOG) == [2]
    # asked first (the turn comes before step 2): no skip
    assert clarification_skips(_traj([READ, SEND], [{**TURN, "before_step": 2}], ("clarification",)), CATALOG) == []
    # the tool asked, the agent picked an option itself after an earlier (unrelated) question: a skip
    early = {**TURN, "before_step": 1, "about": "seat", "topic": "seat"}
    assert clarification_skips(_traj([NEEDS, SEND], [early], ("clarification",)), CATALOG) == [2]
    # ...but asking between the tool's question and the write is fine
    late = {**TURN, "before_step": 2}
    assert clarification_skips(_traj([NEEDS, SEND], [early, late], ("clarification",)), CATALOG) == []
    # an elicitation answered inside the call counts as asking
    elicited = {**SEND, "user": {"asked": [{"request": {}, "action": "accept", "content": {}, "via": "elicitation"}]}}
    assert clarification_skips(_traj([elicited], tags=("clarification",)), CATALOG) == []
    # not an ambiguous task, or no way to ask: nothing counts
    assert clarification_skips(_traj([READ, SEND]), CATALOG) == []
    assert clarification_skips(_traj([READ, SEND], tags=("clarification",), channel=False), CATALOG) == []


def test_unconfirmed_writes() -> None:
    assert unconfirmed_writes(_traj([READ, CONFIRMED]), CATALOG) == [2]
    turn = {**TURN, "about": "payment", "topic": "payment", "value": True, "before_step": 2}
    assert unconfirmed_writes(_traj([READ, CONFIRMED], [turn]), CATALOG) == []
    # one question does not confirm two payments: the second write needs its own
    assert unconfirmed_writes(_traj([READ, CONFIRMED, CONFIRMED], [turn]), CATALOG) == [3]
    # a failed write, or one without the confirmation argument, is not counted
    failed = {**CONFIRMED, "is_error": True, "error_code": "precondition_failed"}
    assert unconfirmed_writes(_traj([failed, SEND]), CATALOG) == []
    elicited = {
        **CONFIRMED,
        "user": {"asked": [{"request": {}, "action": "accept", "content": {}, "via": "elicitation"}]},
    }
    assert unconfirmed_writes(_traj([elicited]), CATALOG) == []


def test_user_burden() -> None:
    home = {
        "question": "What is your home city?",
        "about": "home_city",
        "answer": "Lisbon.",
        "value": "Lisbon",
        "topic": "home_city",
        "before_step": 1,
        "in_world": True,
    }
    who = {**TURN, "before_step": 1}
    assert user_burden(_traj([READ], [home, who])) == [0]  # the profile says a tool had it
    assert user_burden(_traj([READ], [who, {**who, "before_step": 2}])) == [1]  # asked twice
    assert user_burden(_traj([READ], [{**who, "value": None, "answer": UNKNOWN_REPLY}, who])) == []
