"""The evaluation client: tasks, agents, runner, trajectories, judge, scorer, reports.

Packages, lowest layer first (docs/design.md §1; ``tests/project/test_layering.py`` enforces the order):
``records`` (persisted schemas) < ``scoring`` < ``tasks`` / ``users`` / ``agents`` / ``llm``
< ``formats`` (readers of other trajectory files) < ``run`` < ``report`` < ``cli``.

The public surface is importable from here; each name is loaded on first use, so
``import mcpgym.evaluation`` (and the CLI's start-up) stays cheap::

    from mcpgym.evaluation import GymEpisode, Trajectory, run_evaluation, score_episode
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpgym.evaluation.agents import (
        SCRIPTED_AGENTS,
        Agent,
        AgentContext,
        AgentResult,
        CallResult,
        ToolInfo,
        known_agents,
        make_agent,
        register_agent,
    )
    from mcpgym.evaluation.formats.score import ScoreReport, score_files
    from mcpgym.evaluation.records.manifest import read_manifest
    from mcpgym.evaluation.records.scores import EpisodeScores
    from mcpgym.evaluation.records.trajectory import Trajectory, TrajectoryFileError
    from mcpgym.evaluation.report.run_report import write_report
    from mcpgym.evaluation.run.config import RunConfig
    from mcpgym.evaluation.run.episode_runner import AgentEntry
    from mcpgym.evaluation.run.gym import EpisodeFinished, GymEpisode
    from mcpgym.evaluation.run.run_dir import RunError, load_run
    from mcpgym.evaluation.run.runner import RunResult, run_evaluation
    from mcpgym.evaluation.scoring.aggregate import aggregate
    from mcpgym.evaluation.scoring.scorer import DEFAULT_K, score_episode, score_trajectories
    from mcpgym.evaluation.tasks import Task, get_task, load_tasks, register_suite, suite_names

_EXPORTS: dict[str, str] = {
    # run
    "run_evaluation": "mcpgym.evaluation.run.runner",
    "RunConfig": "mcpgym.evaluation.run.config",
    "RunResult": "mcpgym.evaluation.run.runner",
    "AgentEntry": "mcpgym.evaluation.run.episode_runner",
    "RunError": "mcpgym.evaluation.run.run_dir",
    "load_run": "mcpgym.evaluation.run.run_dir",
    "GymEpisode": "mcpgym.evaluation.run.gym",
    "EpisodeFinished": "mcpgym.evaluation.run.gym",
    # score
    "score_episode": "mcpgym.evaluation.scoring.scorer",
    "score_trajectories": "mcpgym.evaluation.scoring.scorer",
    "EpisodeScores": "mcpgym.evaluation.records.scores",
    "DEFAULT_K": "mcpgym.evaluation.scoring.scorer",
    "aggregate": "mcpgym.evaluation.scoring.aggregate",
    "score_files": "mcpgym.evaluation.formats.score",
    "ScoreReport": "mcpgym.evaluation.formats.score",
    # records
    "Trajectory": "mcpgym.evaluation.records.trajectory",
    "TrajectoryFileError": "mcpgym.evaluation.records.trajectory",
    "read_manifest": "mcpgym.evaluation.records.manifest",
    # agents and their registry
    "Agent": "mcpgym.evaluation.agents",
    "AgentContext": "mcpgym.evaluation.agents",
    "AgentResult": "mcpgym.evaluation.agents",
    "CallResult": "mcpgym.evaluation.agents",
    "ToolInfo": "mcpgym.evaluation.agents",
    "SCRIPTED_AGENTS": "mcpgym.evaluation.agents",
    "known_agents": "mcpgym.evaluation.agents",
    "make_agent": "mcpgym.evaluation.agents",
    "register_agent": "mcpgym.evaluation.agents",
    # tasks and their registry
    "Task": "mcpgym.evaluation.tasks",
    "get_task": "mcpgym.evaluation.tasks",
    "load_tasks": "mcpgym.evaluation.tasks",
    "register_suite": "mcpgym.evaluation.tasks",
    "suite_names": "mcpgym.evaluation.tasks",
    # report
    "write_report": "mcpgym.evaluation.report.run_report",
}

__all__ = [
    "Agent",
    "AgentContext",
    "AgentEntry",
    "AgentResult",
    "CallResult",
    "DEFAULT_K",
    "EpisodeFinished",
    "EpisodeScores",
    "GymEpisode",
    "RunConfig",
    "RunError",
    "RunResult",
    "SCRIPTED_AGENTS",
    "ScoreReport",
    "Task",
    "ToolInfo",
    "Trajectory",
    "TrajectoryFileError",
    "aggregate",
    "get_task",
    "known_agents",
    "load_run",
    "load_tasks",
    "make_agent",
    "read_manifest",
    "register_agent",
    "register_suite",
    "run_evaluation",
    "score_episode",
    "score_files",
    "score_trajectories",
    "suite_names",
    "write_report",
]


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use (PEP 562).

    Raises:
        AttributeError: for a name that is neither exported nor a subpackage.
    """
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names and the module's own attributes."""
    return sorted(set(globals()) | set(_EXPORTS))
