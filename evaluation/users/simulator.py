"""Seeded user simulators: they answer an agent's questions and a tool's elicitations from
the task's :class:`~mcpgym.evaluation.users.profile.UserProfile`.

:class:`ScriptedUser` (the default) answers deterministically: the topic of a question is
the one given (``about``), else the longest profile topic whose words all occur in the
question; the answer is the profile's fact (a refused topic answers no); the wording is
drawn from the named stream ``(seed, "user", topic)``, so the same task and seeds give the
same replies. :class:`LLMUser` lets a model play the user through the provider adapters of
:mod:`mcpgym.evaluation.llm`, with the profile in its system prompt.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from mcpgym.evaluation.users.profile import UserProfile
from mcpgym.kernel.rng import rng
from mcpgym.kernel.user import UserAnswer, UserRequest

UNKNOWN_REPLY = "I don't know that, sorry; please check with your tools."


@dataclass
class UserReply:
    """The user's answer to a question.

    Attributes:
        text: what the user says.
        value: the structured answer (the profile's fact; ``False`` for a refusal; None when
            the user does not know).
        topic: the topic the question was taken to be about (None: none matched).
        in_world: the profile marks the answer as available from a tool.
    """

    text: str
    value: Any
    topic: str | None
    in_world: bool = False


class UserSimulator(ABC):
    """Answers an agent's text questions and a tool's user requests for one episode."""

    name: str = "user"

    @abstractmethod
    async def reply(self, question: str, about: str | None = None) -> UserReply:
        """Answer ``question`` (``about``: the topic when the asker names it)."""

    @abstractmethod
    async def answer_request(self, request: UserRequest) -> UserAnswer:
        """Answer a tool's :class:`UserRequest` (an MCP elicitation): accept, decline or cancel."""


def _words(topic: str) -> list[str]:
    return [w for w in topic.split("_") if w]


SYNONYMS: dict[str, tuple[str, ...]] = {
    "payment": ("pay", "send", "transfer", "money", "$"),
    "recipient": ("who", "which", "whom"),
}
"""Words that also point at a topic in a free-text question (an LLM agent rarely says "recipient")."""


def topic_of(profile: UserProfile, question: str, about: str | None) -> str | None:
    """The profile topic a question is about: ``about`` when given (even if unknown to the
    profile); else the longest known topic whose words all occur in the question; else the one
    known topic whose answer shares a word (3+ letters) with the question (``Which Maya?`` ->
    ``recipient: Maya Novak``); else the one known topic one of whose :data:`SYNONYMS` occurs;
    else None."""
    if about:
        return about
    text = question.lower()
    known = sorted({*profile.facts, *profile.refuses}, key=lambda t: (-len(_words(t)), t))
    for topic in known:
        if all(w in text for w in _words(topic)):
            return topic
    words = {w.strip("?.,!:;\"'") for w in text.split()}
    by_value = [
        t
        for t in known
        if isinstance(profile.facts.get(t), str)
        and any(len(w) >= 3 and w in words for w in profile.facts[t].lower().split())
    ]
    if len(by_value) == 1:
        return by_value[0]
    by_synonym = [t for t in known if any(s in text for s in SYNONYMS.get(t, ()))]
    return by_synonym[0] if len(by_synonym) == 1 else None


_YES = ("Yes, go ahead.", "Yes please.", "Sure, do it.")
_NO = ("No, please don't.", "No, leave it.", "Please don't do that.")
_FACT = ("{value}.", "It's {value}.", "{value}, please.")


class ScriptedUser(UserSimulator):
    """The deterministic simulator (module docstring).

    Args:
        profile: the task's user profile (an empty one knows nothing and confirms everything
            it is asked to confirm).
        seed: the seed of the wording streams (the runner passes the world seed).
    """

    name = "scripted"

    def __init__(self, profile: UserProfile | None, seed: int = 0) -> None:
        self.profile = profile or UserProfile()
        self.seed = int(seed)

    def _pick(self, topic: str, options: tuple[str, ...]) -> str:
        return rng(self.seed, "user", topic).choice(options)

    async def reply(self, question: str, about: str | None = None) -> UserReply:
        """Answer from the profile (module docstring); an unknown topic gets :data:`UNKNOWN_REPLY`."""
        topic = topic_of(self.profile, question, about)
        if topic is None or not self.profile.knows(topic):
            return UserReply(text=UNKNOWN_REPLY, value=None, topic=topic)
        value = self.profile.answer(topic)
        if isinstance(value, bool):
            text = self._pick(topic, _YES if value else _NO)
        else:
            shown = value if isinstance(value, str) else json.dumps(value)
            text = self._pick(topic, _FACT).format(value=shown)
        return UserReply(text=text, value=value, topic=topic, in_world=topic in self.profile.in_world)

    async def answer_request(self, request: UserRequest) -> UserAnswer:
        """``confirm``: decline a refused topic (or a fact that is false), else accept; ``choose``:
        the fact about the topic when it is one of the options, else cancel; ``provide``: the
        fact, else cancel."""
        value = self.profile.answer(request.topic)
        if request.kind == "confirm":
            if value is False:
                return UserAnswer(action="decline", via=f"simulator:{self.name}")
            return UserAnswer(action="accept", content={request.argument: True}, via=f"simulator:{self.name}")
        if request.kind == "choose":
            if value in request.options:
                return UserAnswer(action="accept", content={request.argument: value}, via=f"simulator:{self.name}")
            return UserAnswer(action="cancel", via=f"simulator:{self.name}")
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return UserAnswer(action="accept", content={request.argument: str(value)}, via=f"simulator:{self.name}")
        return UserAnswer(action="cancel", via=f"simulator:{self.name}")


def make_simulator(spec: str, profile: UserProfile | None, seed: int) -> UserSimulator:
    """Build a simulator from ``spec``: ``scripted`` (default) or ``PROVIDER:MODEL`` for
    :class:`mcpgym.evaluation.users.llm_user.LLMUser` (a provider adapter of :mod:`mcpgym.evaluation.llm`).

    Raises:
        ValueError: for an unknown spec.
    """
    name = (spec or "scripted").strip()
    if name == "scripted":
        return ScriptedUser(profile, seed)
    if ":" in name:
        from mcpgym.evaluation.users.llm_user import LLMUser

        return LLMUser(name, profile, seed)
    raise ValueError(f"unknown user simulator {spec!r}; use 'scripted' or PROVIDER:MODEL")


__all__ = ["ScriptedUser", "UNKNOWN_REPLY", "UserReply", "UserSimulator", "make_simulator", "topic_of"]
