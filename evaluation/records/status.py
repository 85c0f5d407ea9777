"""How an episode ended: the closed set of statuses, defined once (docs/design.md §6)."""

from __future__ import annotations

from enum import StrEnum


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


__all__ = ["EpisodeStatus"]
