"""How an episode ended and what it cost: the closed set of statuses, defined once
(docs/design.md §6), and the tokens an LLM agent spent (read by trajectories and scores).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class EpisodeStatus(StrEnum):
    """An episode's status, as trajectories, agent results and scores record it.

    ``completed``: the agent gave its final answer (maybe a refusal); ``errored``: the agent,
    its provider or the harness failed (counted apart, left out of every success figure);
    ``limit``: a turn, call, token or time limit stopped it; ``truncated``: the model's final
    reply was cut off by the output-token limit, so it is no answer the agent chose to give.
    """

    COMPLETED = "completed"
    ERRORED = "errored"
    LIMIT = "limit"
    TRUNCATED = "truncated"


class TokenUsage(BaseModel):
    """Tokens an LLM agent spent (in one episode, or in one turn of it; 0 for scripted agents)."""

    model_config = ConfigDict(extra="forbid")

    input: int = Field(0, ge=0, strict=True)
    output: int = Field(0, ge=0, strict=True)


__all__ = ["EpisodeStatus", "TokenUsage"]
