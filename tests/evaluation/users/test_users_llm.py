"""LLM agents ask the user through ``ask_user``, and a model can play the user (issue 19); a
loopback HTTP server stands in for the provider."""

from __future__ import annotations

import json

import anyio

from mcpgym.evaluation.agents import AgentContext, CallResult
from mcpgym.evaluation.llm.agent import ASK_USER_TOOL
from mcpgym.evaluation.users import ScriptedUser, UserChannel, UserProfile
from mcpgym.evaluation.users.llm_user import LLMUser
from tests.support.fake_provider import OpenAIDialect  # the `fake` fixture is in tests/conftest.py

PROFILE = UserProfile(facts={"recipient": "Maya Novak"}, refuses=["payment"], persona="Brief.")


class _Task:
    id = "t"
    instruction = "Send Maya $40 for lunch."


def test_llm_agent_asks_the_user_and_gets_the_simulator_answer(fake) -> None:  # noqa: ANN001, F811
    dialect = OpenAIDialect()
    fake.play(
        dialect.reply([("c1", ASK_USER_TOOL, {"question": "Which Maya do you mean?"})]),
        dialect.reply(text="Sent to Maya Novak."),
    )
    channel = UserChannel(ScriptedUser(PROFILE, 7), lambda: 0)

    async def call(name: str, arguments: dict) -> CallResult:  # never reached: ask_user stays client-side
        raise AssertionError(f"unexpected server call {name}")

    result = anyio.run(lambda: dialect.agent(fake).run(_Task(), [], call, AgentContext(user=channel)))
    assert result.status == "completed" and result.final_message == "Sent to Maya Novak."
    assert ASK_USER_TOOL in dialect.offered(fake.requests[0].body)
    [(cid, payload, _)] = dialect.results(fake.requests[1].body)
    assert cid == "c1" and "Maya Novak" in payload["answer"]
    assert [(t.question, t.value, t.before_step) for t in channel.turns] == [
        ("Which Maya do you mean?", "Maya Novak", 1)
    ]


def test_llm_agent_without_a_user_channel_offers_no_ask_user(fake) -> None:  # noqa: ANN001, F811
    dialect = OpenAIDialect()
    fake.play(dialect.reply(text="Done."))
    result = anyio.run(lambda: dialect.agent(fake).run(_Task(), [], None))
    assert result.final_message == "Done." and ASK_USER_TOOL not in dialect.offered(fake.requests[0].body)


def test_llm_user_words_the_profile_answer(fake) -> None:  # noqa: ANN001, F811
    dialect = OpenAIDialect()
    fake.play(dialect.reply(text="Maya Novak, my colleague."))
    # Short backoffs: the provider failure below is retried (4 times by default) before the fallback.
    user = LLMUser("openai:gpt-test", PROFILE, seed=11, base_url=f"{fake.url}/v1", api_key="sk-test", backoff_base=0.01)
    reply = anyio.run(lambda: user.reply("Which Maya?", "recipient"))
    assert (reply.text, reply.value, reply.topic) == ("Maya Novak, my colleague.", "Maya Novak", "recipient")
    body = fake.requests[0].body
    assert body["seed"] == 11 and body["temperature"] == 0.0 and "tools" not in body
    system = body["messages"][0]["content"]
    assert body["messages"][0]["role"] == "system" and "Brief." in system and json.dumps("Maya Novak") in system
    assert body["messages"][1] == {"role": "user", "content": "Which Maya?"}
    # the decision stays the profile's: a refused payment is declined whatever the model says
    from mcpgym.kernel.user import UserRequest

    confirm = UserRequest(
        kind="confirm",
        tool="system_send_money",
        argument="confirmed_by_user",
        message="Send?",
        topic="payment",
        decline_value=False,
    )
    assert anyio.run(lambda: user.answer_request(confirm)).action == "decline"
    # a provider failure falls back to the scripted wording
    reply = anyio.run(lambda: user.reply("Which Maya?", "recipient"))
    assert reply.value == "Maya Novak" and "Maya Novak" in reply.text
    assert len(fake.requests) == 1 + 1 + user.model.retry.max_retries  # the failing request was retried
