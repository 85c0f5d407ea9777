"""The ``replay`` agent: re-runs a recorded trajectory's calls, then its final message.

``make_agent("replay:runs/x/trajectories.jsonl")`` reads a file written by
:mod:`mcpgym.evaluation.records.trajectory`. For each episode it takes the trajectory with the same task id
and trial (the runner's ``context.trial``; without it, the n-th run of a task replays the
recorded trial n, counting from 0), calls its tools with the recorded arguments in order
(model messages and calls refused before the server are handed to the runner's recorder as
they were),
whatever they return, and ends with the recorded final message. Replaying under the same
world seed, fault profile and fault seed reproduces the recorded episode exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mcpgym.evaluation.agents.base import (
    NO_CONTEXT,
    Agent,
    AgentContext,
    AgentResult,
    CallFn,
    CallLimitReached,
    ToolInfo,
)
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory, UserTurnStep, read_trajectories
from mcpgym.kernel.shorten import short

if TYPE_CHECKING:
    from mcpgym.evaluation.tasks.model import Task


class ReplayAgent(Agent):
    """Replays the calls of recorded trajectories (module docstring).

    Args:
        path: a ``trajectories.jsonl`` file.

    Raises:
        ValueError: when the file does not exist, holds no trajectory, or has a malformed line
            (:class:`~mcpgym.evaluation.records.trajectory.TrajectoryFileError`, naming the line and
            field): read once here, so that a wrong file is refused before any episode runs
            instead of erroring every episode.
    """

    name = "replay"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            found = self.path.exists()
        except OSError as exc:  # a name the OS refuses (too long...)
            raise ValueError(f"replay: {short(str(self.path))}: {exc.strerror or exc}") from None
        if not found:
            raise ValueError(f"replay: no trajectories file {short(str(self.path))}")
        index: dict[tuple[str | None, int], Trajectory] = {}
        # the calls and the final message are all a replay needs: no world snapshots
        try:
            for t in read_trajectories(self.path, tolerate_truncated_tail=True, states=False):
                index.setdefault((t.task_id, t.trial), t)
        except ValueError as exc:  # TrajectoryFileError: names the line and the field
            raise ValueError(f"replay: {exc}") from None
        if not index:
            raise ValueError(f"replay: {str(self.path)!r} holds no trajectory")
        self._index = index
        self._runs: dict[str, int] = {}

    def recorded(self, task_id: str, trial: int) -> Trajectory | None:
        """The recorded trajectory of ``(task_id, trial)`` (the first one in the file), or None."""
        return self._index.get((task_id, trial))

    async def run(
        self, task: Task, tools: list[ToolInfo], call: CallFn, context: AgentContext = NO_CONTEXT
    ) -> AgentResult:
        """Replay the recorded calls of ``(task.id, context.trial)`` and return its final message
        (``context.user``, the episode's user channel, is not consulted: the recording already
        holds the answers; recorded ``ask_user`` turns are handed to it with
        ``UserChannel.replay`` so they land among the steps as recorded)."""
        trial, user = context.trial, context.user
        if trial is None:
            trial = self._runs.get(task.id, 0)
            self._runs[task.id] = trial + 1
        traj = self.recorded(task.id, trial)
        if traj is None:
            return AgentResult(
                final_message="",
                status=EpisodeStatus.ERRORED,
                error=f"no recorded trajectory for task {task.id!r} trial {trial} in {self.path}",
            )
        done = 0
        record = getattr(call, "record", None)
        for step in traj.steps:
            if isinstance(step, UserTurnStep) and user is not None:
                user.replay(step.model_copy())
                continue
            if not isinstance(step, ToolCallStep) or step.step is None:
                # a model message, or a call refused before the server: kept as recorded
                if callable(record):
                    record(step.model_copy())
                continue
            if done >= task.max_calls:
                return AgentResult(
                    final_message=traj.final_message,
                    status=EpisodeStatus.LIMIT,
                    stop_reason=f"call budget of {task.max_calls} spent after {done} replayed calls",
                )
            args = step.arguments if isinstance(step.arguments, dict) else {}
            try:
                await call(step.tool, args)
            except CallLimitReached as exc:
                return AgentResult(final_message=traj.final_message, status=EpisodeStatus.LIMIT, stop_reason=str(exc))
            done += 1
        return AgentResult(
            final_message=traj.final_message,
            invalid_calls=traj.invalid_calls,
            tokens=traj.tokens,
            stop_reason=f"replayed {done} calls of {traj.agent!r} ({traj.episode_id})",
        )


__all__ = ["ReplayAgent"]
