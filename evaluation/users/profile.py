"""The user profile of a task: what the simulated user knows, prefers and refuses.

In a task's YAML::

    user:
      facts:                      # topic -> the user's answer
        recipient: Maya Novak     # "which Maya?"
        seat: window
      refuses: [payment]          # topics the user says no to when asked to confirm
      in_world: [home_city]       # facts the agent could have read from a tool instead
      persona: "Busy, answers in a few words."   # for LLM-backed simulators

A topic is a short snake_case key; the oracle's ``ask`` steps and the tools' user requests
(:class:`mcpgym.kernel.user.UserRequest`) name the topic they ask about.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

TOPIC_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


class UserProfile(BaseModel):
    """What the user of a task knows and wants.

    Attributes:
        facts: topic -> answer (a JSON value: text, number, boolean).
        refuses: topics the user declines when asked to confirm (a ``confirm`` request or an
            ``ask`` about that topic answers no).
        in_world: topics whose answer is also available from a tool (asking about them is a
            burden on the user: the ``user_burden`` score).
        persona: how the user talks, for LLM-backed simulators.

    Raises:
        pydantic.ValidationError: for a topic that is not snake_case (``^[a-z][a-z0-9_]*$``)
            or an ``in_world`` topic missing from ``facts``.
    """

    model_config = ConfigDict(extra="forbid")

    facts: dict[str, Any] = Field(default_factory=dict)
    refuses: list[str] = Field(default_factory=list)
    in_world: list[str] = Field(default_factory=list)
    persona: str = ""

    @field_validator("facts")
    @classmethod
    def _topics(cls, v: dict[str, Any]) -> dict[str, Any]:
        for key in v:
            if not TOPIC_RE.match(key):
                raise ValueError(f"fact topic {key!r} must be snake_case (letters, digits, '_')")
        return v

    @field_validator("refuses", "in_world")
    @classmethod
    def _topic_list(cls, v: list[str]) -> list[str]:
        for key in v:
            if not TOPIC_RE.match(key):
                raise ValueError(f"topic {key!r} must be snake_case (letters, digits, '_')")
        return v

    @model_validator(mode="after")
    def _in_world_known(self) -> UserProfile:
        missing = [t for t in self.in_world if t not in self.facts]
        if missing:
            raise ValueError(f"in_world topics need a fact: {', '.join(missing)}")
        return self

    def knows(self, topic: str) -> bool:
        """True when the user has an answer about ``topic`` (a fact or a refusal)."""
        return topic in self.facts or topic in self.refuses

    def answer(self, topic: str) -> Any:
        """The user's answer about ``topic``: ``False`` for a refused topic, else the fact, else None."""
        if topic in self.refuses:
            return False
        return self.facts.get(topic)


__all__ = ["TOPIC_RE", "UserProfile"]
