"""The evaluation client: tasks, agents, runner, trajectories, judge, scorer, reports.

The in-process episode API is public here: ``from mcpgym.evaluation import GymEpisode``
(:class:`mcpgym.evaluation.gym.GymEpisode`; imported on first use, so that importing a
submodule stays cheap).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpgym.evaluation.gym import EpisodeFinished, GymEpisode
    from mcpgym.evaluation.scorer import EpisodeScores

_LAZY = {
    "GymEpisode": "mcpgym.evaluation.gym",
    "EpisodeFinished": "mcpgym.evaluation.gym",
    "EpisodeScores": "mcpgym.evaluation.scorer",
}


def __getattr__(name: str) -> Any:
    """``GymEpisode``, ``EpisodeFinished`` and ``EpisodeScores``, imported on first access.

    Raises:
        AttributeError: any other name.
    """
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["EpisodeFinished", "EpisodeScores", "GymEpisode"]
