"""How an episode ended: the closed set of statuses, defined once (docs/design.md §6)."""

from __future__ import annotations

from enum import StrEnum


class EpisodeStatus(StrEnum):
    """An episode's status, as trajectories, agent results and scores record it.

    ``completed``: the agent ended the episode itself (a final message, maybe a refusal);
    ``limit``: a call, step or token budget, or the wall timeout, stopped it; ``errored``: a
    provider or the harness broke it (counted apart, left out of success rates).
    """

    COMPLETED = "completed"
    ERRORED = "errored"
    LIMIT = "limit"


__all__ = ["EpisodeStatus"]
