"""An LLM-backed user simulator: a model plays the user, through the provider adapters of
:mod:`mcpgym.evaluation.llm` (``openai:MODEL`` for any OpenAI-compatible server,
``anthropic:MODEL``).

The model only words the answer: what the answer *is* stays decided by the task's profile
(the :class:`~mcpgym.evaluation.users.simulator.ScriptedUser` picks the topic, the value and
whether a confirmation is declined), so scores built on values are the same as with the
scripted user, and the seed of the request (``seed``, ``temperature`` 0) is the episode's.
Tool requests (elicitations) are answered from the profile as by the scripted user.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from mcpgym.evaluation.users.profile import UserProfile
from mcpgym.evaluation.users.simulator import ScriptedUser, UserReply, UserSimulator
from mcpgym.kernel.user import UserAnswer, UserRequest

USER_PROMPT = (
    "You play the user of an assistant. Answer the assistant's question in one short sentence, as the user. "
    "Say only what the facts below support; if they do not answer the question, say you don't know. "
    "Never invent other facts.\n\nPersona: {persona}\nWhat you know (topic -> answer): {facts}\n"
    "Topics you refuse (answer no): {refuses}\nThe answer you must give: {answer}"
)
"""The system prompt of the user model (the profile and the decided answer filled in)."""


class LLMUser(UserSimulator):
    """A model words the user's answers (module docstring).

    Args:
        spec: ``PROVIDER:MODEL`` (options as for LLM agents are not taken here; the base URL
            and key come from the provider's environment variables).
        profile: the task's user profile.
        seed: the request seed (and the scripted decisions' wording seed).
        **options: passed to :func:`mcpgym.evaluation.llm.spec.parse_llm_spec` (``base_url``,
            ``api_key``...).

    Raises:
        ValueError: for a spec the LLM adapters reject.
    """

    name = "llm"

    def __init__(self, spec: str, profile: UserProfile | None, seed: int = 0, **options: Any) -> None:
        from mcpgym.evaluation.llm.spec import parse_llm_spec

        self.scripted = ScriptedUser(profile, seed)
        self.profile = self.scripted.profile
        self.model = parse_llm_spec(spec, seed=int(seed), temperature=0.0, **options)
        self.name = f"llm:{spec}"

    async def reply(self, question: str, about: str | None = None) -> UserReply:
        """The scripted decision, worded by the model; on a provider failure, the scripted wording."""
        from mcpgym.evaluation.llm.transport import ProviderError, post_json

        decided = await self.scripted.reply(question, about)
        prompt = USER_PROMPT.format(
            persona=self.profile.persona or "an ordinary user",
            facts=json.dumps(self.profile.facts, ensure_ascii=False),
            refuses=", ".join(self.profile.refuses) or "none",
            answer=decided.text,
        )
        agent = self.model
        messages = agent.initial_messages(question)
        if messages and isinstance(messages[0], dict) and messages[0].get("role") == "system":
            messages[0] = {"role": "system", "content": prompt}
        body = agent.request_body(messages, [])
        if "system" in body:
            body["system"] = prompt
        try:
            async with httpx.AsyncClient(timeout=agent.retry.request_timeout + 1.0) as client:
                data = await post_json(client, agent.endpoint(), agent.headers(), body, agent.retry)
            text = agent.parse_reply(data, 0).text.strip()
        except (ProviderError, httpx.HTTPError):
            text = ""
        return UserReply(text=text or decided.text, value=decided.value, topic=decided.topic, in_world=decided.in_world)

    async def answer_request(self, request: UserRequest) -> UserAnswer:
        """Answered from the profile, as by :class:`ScriptedUser`."""
        answer = await self.scripted.answer_request(request)
        return answer.model_copy(update={"via": f"simulator:{self.name}"})


__all__ = ["LLMUser", "USER_PROMPT"]
