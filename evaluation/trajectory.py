"""The trajectory model: one episode's tool calls, final message, states and scores.

A :class:`Trajectory` is what the runner appends, one JSON line per finished episode, to
``trajectories.jsonl`` (docs/design.md §6), and what ``mcpgym score`` reads back. Its steps
mirror the server-side call log (:class:`mcpgym.tools.invoke.CallRecord`); its ``ledger`` is the
fault ledger (:class:`mcpgym.tools.invoke.LedgerEntry` rows as dicts), the ground truth the scorer
prefers over anything inferred from error codes.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class TokenUsage(BaseModel):
    """Tokens an LLM agent spent in one episode (0 for scripted agents)."""

    model_config = ConfigDict(extra="forbid")

    input: int = Field(0, ge=0)
    output: int = Field(0, ge=0)


class ToolCallStep(BaseModel):
    """One tool call of an episode, as the server logged it.

    Attributes:
        step: 1-based position in the episode's call log.
        tool: tool name as the agent sent it.
        arguments: the arguments as sent (a JSON object, or whatever the agent sent).
        is_error: whether the agent got a tool error.
        error_code: the error code (``mcpgym.kernel.errors.ERROR_CODES``) when ``is_error``.
        result: the structured result, or the error payload ``{"error": {...}}``.
        fault: the injected fault kind when known (from the ledger or the call log).
        fault_inferred: true when ``fault`` was guessed from an error code, not known.
        time: virtual time after the call (seconds since the epoch), when known.
    """

    model_config = ConfigDict(extra="forbid")

    step: int = Field(ge=1)
    tool: str
    arguments: Any = Field(default_factory=dict)
    is_error: bool = False
    error_code: str | None = None
    result: Any = None
    fault: str | None = None
    fault_inferred: bool = False
    time: int | None = None

    @property
    def retry_after(self) -> int | None:
        """``retry_after`` (virtual seconds) from the error payload, when there is one."""
        if isinstance(self.result, dict):
            err = self.result.get("error")
            if isinstance(err, dict) and isinstance(err.get("retry_after"), (int, float)):
                return int(err["retry_after"])
        return None

    @property
    def error_field(self) -> str | None:
        """The ``field`` of the error payload (e.g. ``"name"`` for an unknown tool), if any."""
        if isinstance(self.result, dict):
            err = self.result.get("error")
            if isinstance(err, dict) and isinstance(err.get("field"), str):
                return err["field"]
        return None


class Trajectory(BaseModel):
    """One finished episode.

    Attributes:
        episode_id: the server's episode id (or any unique id for external trajectories).
        task_id: the task, or None for free-form episodes.
        agent: agent name (``careful``, ``overconfident``, a model name, ``external``...).
        trial: 0-based trial index; a trial varies the fault seed.
        world_seed, fault_seed, fault_profile: how the episode was set up.
        apps: the episode's apps.
        app_versions: app name -> ``App.version`` of the apps that served the episode (as the
            server reported them); empty when unknown (external trajectories).
        level: task level 1-3, when known.
        instruction: what the agent was asked.
        steps: the tool calls, in order, with strictly increasing ``step``.
        final_message: the agent's last message to the user.
        ledger: the fault ledger (dicts shaped like ``LedgerEntry``); None when unknown
            (external trajectories), ``[]`` when known to be empty.
        initial_snapshot, final_snapshot, gold_snapshot: ``World.snapshot()`` dicts.
        feasible: whether the task can be done (None: unknown).
        status: ``completed`` (the agent answered), ``errored`` (the agent or harness
            failed), ``limit`` (a step/token/time limit stopped it).
        stop_reason: free text about why it stopped.
        tokens: token usage, for LLM agents.
        invalid_calls: calls the runner rejected before they reached the server
            (unparsable arguments, malformed tool calls).
        scores: :class:`mcpgym.evaluation.scorer.EpisodeScores` as a dict, once scored.
        metadata: anything else (model name, system-prompt hash, ``extra_checks``...).
    """

    model_config = ConfigDict(extra="forbid")

    episode_id: str
    task_id: str | None = None
    agent: str
    trial: int = Field(0, ge=0)
    world_seed: int | None = None
    fault_seed: int | None = None
    fault_profile: str | None = None
    apps: list[str] = Field(default_factory=list)
    app_versions: dict[str, str] = Field(default_factory=dict)
    level: int | None = None
    instruction: str | None = None
    steps: list[ToolCallStep] = Field(default_factory=list)
    final_message: str = ""
    ledger: list[dict[str, Any]] | None = None
    initial_snapshot: dict[str, Any] | None = None
    final_snapshot: dict[str, Any] | None = None
    gold_snapshot: dict[str, Any] | None = None
    feasible: bool | None = None
    status: Literal["completed", "errored", "limit"] = "completed"
    stop_reason: str | None = None
    tokens: TokenUsage | None = None
    invalid_calls: int = Field(0, ge=0)
    scores: dict[str, Any] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("steps")
    @classmethod
    def _steps_increasing(cls, steps: list[ToolCallStep]) -> list[ToolCallStep]:
        last = 0
        for s in steps:
            if s.step <= last:
                raise ValueError(f"step numbers must strictly increase: step {s.step} follows step {last}")
            last = s.step
        return steps

    @field_validator("ledger")
    @classmethod
    def _ledger_rows(cls, ledger: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        if ledger is None:
            return None
        for i, row in enumerate(ledger):
            for key in ("step", "tool", "kind"):
                if key not in row:
                    raise ValueError(f"ledger row {i} lacks {key!r} (expected step, tool, call_index, kind, applied)")
        return ledger


def steps_from_call_log(calls: Iterable[Any]) -> list[ToolCallStep]:
    """Convert a server call log into trajectory steps.

    Args:
        calls: :class:`mcpgym.tools.invoke.CallRecord` objects or their dicts (as the control API's
            ``/calls`` route returns them). The ``fault`` of a record is known, not inferred.

    Returns:
        One :class:`ToolCallStep` per record, in order.
    """
    out: list[ToolCallStep] = []
    for rec in calls:
        data = rec.model_dump(mode="json") if isinstance(rec, BaseModel) else dict(rec)
        out.append(
            ToolCallStep(
                step=data["step"],
                tool=data["tool"],
                arguments=data.get("arguments") if data.get("arguments") is not None else {},
                is_error=bool(data.get("is_error")),
                error_code=data.get("error_code"),
                result=data.get("result"),
                fault=data.get("fault"),
                fault_inferred=False,
                time=data.get("time"),
            )
        )
    return out


class TrajectoryFileError(ValueError):
    """A trajectories file has a malformed line; the message names file, line and field."""


def _format_validation(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(line)"
        parts.append(f"field {loc}: {err.get('msg')}")
    return "; ".join(parts)


def iter_trajectories(path: str | Path, *, tolerate_truncated_tail: bool = False) -> Iterator[Trajectory]:
    """Yield the trajectories of a JSONL file, one per non-blank line.

    Args:
        path: the ``trajectories.jsonl`` file.
        tolerate_truncated_tail: skip a malformed *last* line that lacks its newline (what
            a process killed in the middle of a write leaves behind), instead of raising.

    Raises:
        TrajectoryFileError: for invalid JSON or a line that does not validate; the message
            reads ``<file>:<line>: field <loc>: <problem>``.
        OSError: when the file cannot be read.
    """
    p = Path(path)
    with p.open("r", encoding="utf-8") as fh:
        lines = fh.readlines()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        is_tail = lineno == len(lines) and not line.endswith("\n")
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            if tolerate_truncated_tail and is_tail:
                return
            raise TrajectoryFileError(f"{p}:{lineno}: invalid JSON at column {exc.colno}: {exc.msg}") from None
        if not isinstance(data, dict):
            raise TrajectoryFileError(f"{p}:{lineno}: a trajectory line must be a JSON object, got {type(data).__name__}")
        try:
            yield Trajectory.model_validate(data)
        except ValidationError as exc:
            raise TrajectoryFileError(f"{p}:{lineno}: {_format_validation(exc)}") from None


def read_trajectories(path: str | Path, *, tolerate_truncated_tail: bool = False) -> list[Trajectory]:
    """Read every trajectory of a JSONL file (see :func:`iter_trajectories`).

    Raises:
        TrajectoryFileError: naming the file, the line number and the field (pydantic's loc).
    """
    return list(iter_trajectories(path, tolerate_truncated_tail=tolerate_truncated_tail))


_APPEND_LOCK = threading.Lock()


def append_trajectory(path: str | Path, traj: Trajectory) -> None:
    """Append ``traj`` to a JSONL file as one whole line, then flush and ``os.fsync``.

    The line is written with a single ``os.write`` on a descriptor opened with ``O_APPEND``
    (under a process-wide lock), so concurrent episodes never interleave. If the file ends
    in a partial line (a killed earlier run), a newline is written first so the new record
    stays parseable. Parent directories are created.

    Raises:
        OSError: when the file cannot be written.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    data = (traj.model_dump_json() + "\n").encode("utf-8")
    with _APPEND_LOCK:
        fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size:
                with p.open("rb") as fh:
                    fh.seek(size - 1)
                    if fh.read(1) != b"\n":
                        data = b"\n" + data
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)


def write_trajectories(path: str | Path, trajs: Iterable[Trajectory]) -> None:
    """Write ``trajs`` to a new JSONL file (replacing it), one line each, fsynced.

    Raises:
        OSError: when the file cannot be written.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for t in trajs:
            fh.write(t.model_dump_json() + "\n")
        fh.flush()
        os.fsync(fh.fileno())


__all__ = [
    "TokenUsage",
    "ToolCallStep",
    "Trajectory",
    "TrajectoryFileError",
    "append_trajectory",
    "iter_trajectories",
    "read_trajectories",
    "steps_from_call_log",
    "write_trajectories",
]
