"""The trajectory model: everything an agent did in one episode, its states and its scores.

A :class:`Trajectory` is what the runner appends, one JSON line per finished episode, to
``trajectories.jsonl`` (docs/design.md §6), and what ``mcpgym score`` reads
back. Its ``steps`` are every agent action, in the order it happened:

* :class:`ToolCallStep` (``"type": "tool_call"``): a tool call. Calls that reached the
  server mirror the server-side call log (:class:`mcpgym.tools.invoke.CallRecord`) and carry
  its 1-based ``step`` number; a call refused before it reached the server (arguments that do
  not parse, a tool the episode does not offer) has ``step`` None. Calls that broke the tool
  contract (unknown tool, unparsable arguments, arguments that break the input schema) are
  flagged ``invalid``, with the error the agent got back in ``result``.
* :class:`MessageStep` (``"type": "message"``): one model reply: its text, refusal text and
  reasoning summary (when the provider returns one), how many tool calls it asked for, and
  the tokens of that turn.
* :class:`UserTurnStep` (``"type": "user_turn"``): the agent asked the user in text (an
  ``ask_user`` turn) and the user simulator answered.

Lines written before steps had a ``type`` read as tool calls. The ``ledger`` is the fault
ledger (:class:`mcpgym.tools.invoke.LedgerEntry` rows as JSON, :class:`LedgerRow`), the ground truth the scorer
prefers over anything inferred from error codes; its ``step`` numbers are call-log numbers.
"""

from __future__ import annotations

import errno
import io
import json
import os
import threading
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
    with_config,
)
from typing_extensions import TypedDict  # pydantic validates only this TypedDict on Python < 3.12

from mcpgym.evaluation.records.atomic import open_append
from mcpgym.evaluation.records.compressed import (
    DamagedFramesWarning,
    FrameDamage,
    RunFileText,
    compress_line,
    damage_summary,
    read_run_file,
)
from mcpgym.evaluation.records.condition import EpisodeCondition
from mcpgym.evaluation.records.error_rule import ErrorRule
from mcpgym.evaluation.records.scores import EpisodeScores
from mcpgym.evaluation.records.snapshots import SnapshotStore, StoredStates
from mcpgym.evaluation.records.status import EpisodeStatus, TokenUsage
from mcpgym.kernel.bounded_json import JSONLimitError, load_json
from mcpgym.kernel.errors import ErrorCode
from mcpgym.kernel.exceptions import FormatError
from mcpgym.kernel.input_files import MAX_TRAJECTORY_BYTES, InputFileError
from mcpgym.kernel.validation_text import json_type, validation_line

INVALID_CODES = ("invalid_argument",)
"""Error codes that make a tool call ``invalid`` (plus ``not_found`` on the field ``name``: an unknown tool)."""


def is_invalid_error(error_code: str | None, error_field: str | None) -> bool:
    """Whether an error means the call broke the tool contract: ``invalid_argument``, or
    ``not_found`` on the field ``name`` (the tool does not exist in the episode)."""
    return error_code in INVALID_CODES or (error_code == ErrorCode.NOT_FOUND and error_field == "name")


@with_config(ConfigDict(extra="allow"))
class LedgerRow(TypedDict):
    """One fault-ledger row as a trajectory stores it: a :class:`mcpgym.tools.invoke.LedgerEntry`
    as JSON (a typed dict, so rows read and write as JSON objects at the speed of one; keys a
    writer adds beyond these are kept). Same keys and types as ``LedgerEntry``, only
    ``call_index``, ``applied`` and ``persisting`` may be missing (lines written elsewhere);
    ``tests/evaluation/records/test_ledger_row.py`` fails when the two drift. A trajectory also
    takes ``LedgerEntry`` objects and stores them as their JSON.

    Keys:
        step: the call-log step the fault hit. tool: the tool. kind: the fault kind.
        call_index: 0-based call count of that tool when it hit (optional).
        applied: whether a write really took effect; None for reads (optional).
        persisting: True when an earlier fault still in force refused the call (optional).
    """

    step: int
    tool: str
    kind: str
    call_index: NotRequired[int]
    applied: NotRequired[bool | None]
    persisting: NotRequired[bool]


class ToolCallStep(BaseModel):
    """One tool call of an episode. A call that reached the server is its call-log record
    (:class:`mcpgym.tools.invoke.CallRecord`, the server's log row) seen from the trajectory:
    :func:`step_from_record` builds it, the one place that does.

    Attributes:
        type: always ``"tool_call"`` (the step discriminator; absent in old lines).
        step: 1-based position in the server's call log; None for a call refused before it
            reached the server (unparsable arguments, a tool the episode does not offer).
        tool: tool name as the agent sent it.
        arguments: the arguments as sent (a JSON object, or whatever the agent sent).
        raw_arguments: the argument text the model sent when it was not a JSON object.
        call_id: the provider's id of the call (LLM agents), when there is one.
        is_error: whether the agent got a tool error.
        error_code: the error code (``mcpgym.kernel.errors.ERROR_CODES``) when ``is_error``.
        result: the structured result, or the error payload ``{"error": {...}}`` the agent got.
        invalid: the call broke the tool contract (unknown tool, unparsable arguments,
            arguments against the input schema); see :func:`is_invalid_error`.
        fault: the injected fault kind when known (from the ledger or the call log).
        fault_inferred: true when ``fault`` was guessed from an error code, not known.
        time: virtual time after the call (seconds since the epoch), when known.
        user: when the call asked the user (MCP elicitation): ``{"asked": [{"request",
            "action", "content", "via"}, ...]}`` (see :mod:`mcpgym.tools.elicit`); None otherwise.
        batch: calls with the same ``batch`` were issued together, in one model turn (parallel
            tool calls of an imported transcript: the number of the message that made them);
            None for a call issued alone. A read verifies only writes issued before its batch
            (docs/design.md §7, "Verification").
        error_rule: for an error of an imported transcript, the named rule of the layered
            result reader that made it one (:class:`~mcpgym.evaluation.records.error_rule.ErrorRule`);
            None for a success and for mcpgym's own steps (their errors are the server's).
    """

    model_config = ConfigDict(extra="forbid")

    type: Literal["tool_call"] = "tool_call"
    step: int | None = Field(default=None, ge=1, strict=True)
    tool: str
    arguments: Any = Field(default_factory=dict)
    raw_arguments: str | None = None
    call_id: str | None = None
    is_error: bool = Field(False, strict=True)
    error_code: str | None = None
    result: Any = None
    invalid: bool = Field(False, strict=True)
    fault: str | None = None
    fault_inferred: bool = Field(False, strict=True)
    time: int | None = Field(None, strict=True)
    user: dict[str, Any] | None = None
    batch: int | None = Field(None, strict=True)
    error_rule: ErrorRule | None = None

    @property
    def reached_server(self) -> bool:
        """True for a call the server logged (it has a call-log ``step``)."""
        return self.step is not None

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
                return str(err["field"])
        return None


class ProviderRetry(BaseModel):
    """One provider request that failed and was sent again (LLM agents).

    Attributes:
        attempt: the 1-based attempt that failed. status: its HTTP status (None: no answer).
        reason: why it failed (``HTTP 503: ...``, ``no answer within 120 s``...).
        delay: wall seconds waited before the next attempt.
    """

    model_config = ConfigDict(extra="forbid")

    attempt: int = Field(ge=1)
    status: int | None = None
    reason: str = ""
    delay: float = Field(0.0, ge=0)


class MessageStep(BaseModel):
    """One reply of the model (LLM agents), in order with the tool calls.

    Attributes:
        type: always ``"message"``.
        turn: 0-based model turn (request) of the episode.
        text: the reply's text (the final answer on the last turn).
        refusal: refusal text, when the provider returns one apart from the text.
        reasoning: the reasoning summary, when the provider returns one.
        tool_calls: how many tool calls the reply asked for.
        finish_reason: the provider's finish/stop reason.
        tokens: input and output tokens of this turn.
        latency: wall seconds from the first request of this turn to its answer, retries and
            their waits included (None: not measured, e.g. old lines).
        retries: the requests of this turn that failed and were sent again, in order.
        removed_text: what was taken out of ``text`` because it was only leftover tool-call
            syntax (``{}`` after the server parsed the call out; at most 200 characters), so it
            was neither the reply's text nor sent back to the model; None when nothing was.
    """

    model_config = ConfigDict(extra="forbid")

    type: Literal["message"] = "message"
    turn: int = Field(0, ge=0, strict=True)
    text: str = ""
    refusal: str | None = None
    reasoning: str | None = None
    tool_calls: int = Field(0, ge=0, strict=True)
    finish_reason: str | None = None
    tokens: TokenUsage | None = None
    latency: float | None = Field(None, ge=0)
    retries: list[ProviderRetry] = Field(default_factory=list)
    removed_text: str | None = Field(None, max_length=200)


class UserTurnStep(BaseModel):
    """One turn in which the agent asked the user in text (an ``ask_user`` turn) and the user
    simulator (:mod:`mcpgym.evaluation.users`) answered, in order with the other steps.

    Attributes:
        type: always ``"user_turn"``.
        before_step: the call-log step of the next tool call (1 + the calls made so far when
            the question was asked); informative only, the position in ``steps`` is the order.
        question: what the agent asked.
        about: the topic the agent named, if any.
        answer: what the user said.
        value: the structured answer (None: the user did not know).
        topic: the profile topic the question was taken to be about.
        in_world: the task's profile marks the answer as available from a tool.
    """

    model_config = ConfigDict(extra="forbid")

    type: Literal["user_turn"] = "user_turn"
    before_step: int = Field(ge=1, strict=True)
    question: str
    about: str | None = None
    answer: str = ""
    value: Any = None
    topic: str | None = None
    in_world: bool = Field(False, strict=True)


UserTurn = UserTurnStep
"""The former name of :class:`UserTurnStep` (lines written before user turns were steps)."""


def _step_type(value: Any) -> str:
    """The discriminator of a step: its ``type``, ``tool_call`` when absent (old lines)."""
    if isinstance(value, dict):
        kind: str = value.get("type", "tool_call")  # a non-string type fails the discriminator
        return kind
    return getattr(value, "type", "tool_call")


Step = Annotated[
    Annotated[ToolCallStep, Tag("tool_call")]
    | Annotated[MessageStep, Tag("message")]
    | Annotated[UserTurnStep, Tag("user_turn")],
    Discriminator(_step_type),
]
"""One agent action: a :class:`ToolCallStep`, a :class:`MessageStep` or a :class:`UserTurnStep`."""


def merge_user_turns(steps: Iterable[Any], turns: Iterable[Any]) -> list[Any]:
    """``steps`` with the user turns ``turns`` placed among them by their ``before_step``: each
    turn goes right before the first tool call that reached the server with a call-log step
    >= its ``before_step`` (after the other turns placed there), or at the end when no such
    call follows. Used for lines written with a separate ``user_turns`` list and for runners
    that record turns apart from the call log (steps and turns are dicts or models).
    """
    pending = sorted(enumerate(turns), key=lambda it: (_before(it[1]), it[0]))
    if not pending:  # nothing to place (most episodes): the steps as they are
        return list(steps)
    out: list[Any] = []
    i = 0
    for step in steps:
        n = step.get("step") if isinstance(step, dict) else getattr(step, "step", None)
        if _step_type(step) == "tool_call" and isinstance(n, int):
            while i < len(pending) and _before(pending[i][1]) <= n:
                out.append(pending[i][1])
                i += 1
        out.append(step)
    out.extend(t for _, t in pending[i:])
    return out


def _before(turn: Any) -> int:
    b = turn.get("before_step") if isinstance(turn, dict) else getattr(turn, "before_step", None)
    return b if isinstance(b, int) else 1


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
        steps: every agent action in order (:data:`Step`); the call-log ``step`` numbers of
            the tool calls that reached the server strictly increase.
        final_message: the agent's last message to the user.
        ledger: the fault ledger (:class:`LedgerRow`: ``LedgerEntry`` as JSON); None when unknown
            (external trajectories), ``[]`` when known to be empty.
        initial_snapshot, final_snapshot, gold_snapshot: ``World.snapshot()`` dicts. In a
            compact run directory they are stored apart (see
            :mod:`mcpgym.evaluation.records.snapshots`) and filled in when the run is loaded: then
            they are read-only, as the three share their unchanged parts with each other and
            with the run's other episodes.
        feasible: whether the task can be done (None: unknown).
        status: :data:`EpisodeStatus`: ``completed`` (the agent answered), ``errored`` (the
            agent, its provider or the harness failed), ``limit`` (a step/token/time limit
            stopped it), ``truncated`` (the final reply was cut at the output-token limit).
        stop_reason: free text about why it stopped.
        tokens: token usage, for LLM agents.
        invalid_calls: calls refused before they reached the server that are *not* recorded
            as steps (old run directories and external formats that only count them); new
            runs record such calls as invalid :class:`ToolCallStep` rows and leave this 0.
        scores: :class:`mcpgym.evaluation.records.scores.EpisodeScores`, once scored (written
            by the scorer; read back as written).
        metadata: anything else (model name, system-prompt hash, ``extra_checks``...).
        condition: the run's condition the episode was played at (fault profile, tool
            exposure: :class:`~mcpgym.evaluation.records.condition.EpisodeCondition`); None,
            and left out of the line, in a run without condition axes.
        stored: in a compact line, where the three snapshots are (:class:`StoredStates`: shared
            snapshot files and the final state as a diff); :func:`iter_trajectories` fills the
            snapshots in from it and clears it. None in a self-contained line.

    Lines written before user turns were steps carry them in a separate ``user_turns`` list:
    they are read into ``steps`` with :func:`merge_user_turns` (and so may constructors);
    :attr:`user_turns` lists them back from the steps. Elicitations made inside a tool call
    are in that step's ``user``.
    """

    model_config = ConfigDict(extra="forbid")

    episode_id: str
    task_id: str | None = None
    agent: str
    trial: int = Field(0, ge=0, strict=True)
    world_seed: int | None = Field(None, strict=True)
    fault_seed: int | None = Field(None, strict=True)
    fault_profile: str | None = None
    apps: list[str] = Field(default_factory=list)
    app_versions: dict[str, str] = Field(default_factory=dict)
    level: int | None = Field(None, strict=True)
    instruction: str | None = None
    steps: list[Step] = Field(default_factory=list)
    final_message: str = ""
    ledger: list[LedgerRow] | None = None
    initial_snapshot: dict[str, Any] | None = None
    final_snapshot: dict[str, Any] | None = None
    gold_snapshot: dict[str, Any] | None = None
    feasible: bool | None = Field(None, strict=True)
    status: EpisodeStatus = EpisodeStatus.COMPLETED
    stop_reason: str | None = None
    tokens: TokenUsage | None = None
    invalid_calls: int = Field(0, ge=0, strict=True)
    scores: EpisodeScores | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    stored: StoredStates | None = None
    condition: EpisodeCondition | None = Field(None, exclude_if=lambda v: v is None)

    @property
    def answer(self) -> str:
        """The final message as the scorer reads it for the answer: empty when the episode is
        ``truncated`` (the reply was cut at the output-token limit, so its text is no answer:
        no check passes on it, it claims nothing and concedes nothing; docs/design.md §7,
        status ``truncated``), else :attr:`final_message`."""
        return "" if self.status == EpisodeStatus.TRUNCATED else self.final_message

    def compacted(self, store: SnapshotStore) -> Trajectory:
        """A copy for a compact run directory: initial and gold snapshots stored in ``store``
        (once per distinct state), the final one as a diff; the snapshot fields left empty.
        A trajectory without an initial snapshot is returned as it is.

        Raises:
            OSError: when a snapshot file cannot be written.
        """
        if self.initial_snapshot is None:
            return self
        stored = store.compact(self.initial_snapshot, self.final_snapshot, self.gold_snapshot)
        return self.model_copy(
            update={"initial_snapshot": None, "final_snapshot": None, "gold_snapshot": None, "stored": stored}
        )

    @property
    def tool_calls(self) -> list[ToolCallStep]:
        """Every tool-call step, in order (also those refused before the server)."""
        return [s for s in self.steps if isinstance(s, ToolCallStep)]

    @property
    def server_calls(self) -> list[ToolCallStep]:
        """The tool calls that reached the server (the call log), in order: what the
        behaviour metrics are computed over."""
        return [s for s in self.steps if isinstance(s, ToolCallStep) and s.step is not None]

    @property
    def user_turns(self) -> list[UserTurnStep]:
        """The agent's questions to the user and the answers (``ask_user`` turns), in order."""
        return [s for s in self.steps if isinstance(s, UserTurnStep)]

    @model_validator(mode="before")
    @classmethod
    def _fold_user_turns(cls, data: Any) -> Any:
        if isinstance(data, dict) and "user_turns" in data:
            data = dict(data)
            turns = data.pop("user_turns")
            if turns:
                if not isinstance(turns, list):
                    raise ValueError("user_turns must be a list of user turns")
                turns = [{**t, "type": "user_turn"} if isinstance(t, dict) else t for t in turns]
                data["steps"] = merge_user_turns(data.get("steps") or [], turns)
        return data

    @property
    def messages(self) -> list[MessageStep]:
        """The model's replies, in order."""
        return [s for s in self.steps if isinstance(s, MessageStep)]

    @property
    def refused_calls(self) -> int:
        """Invalid calls refused before the server: recorded steps plus the legacy counter."""
        return (
            sum(1 for s in self.steps if isinstance(s, ToolCallStep) and s.step is None and s.invalid)
            + self.invalid_calls
        )

    @field_validator("steps")
    @classmethod
    def _steps_increasing(cls, steps: list[Any]) -> list[Any]:
        last = 0
        for s in steps:
            if not isinstance(s, ToolCallStep) or s.step is None:
                continue
            if s.step <= last:
                raise ValueError(f"step numbers must strictly increase: step {s.step} follows step {last}")
            last = s.step
        return steps

    @field_validator("ledger", mode="before")
    @classmethod
    def _ledger_rows(cls, ledger: Any) -> Any:
        if isinstance(ledger, list):
            if any(isinstance(row, BaseModel) for row in ledger):  # LedgerEntry objects: stored as their JSON
                ledger = [row.model_dump(mode="json") if isinstance(row, BaseModel) else row for row in ledger]
            for i, row in enumerate(ledger):
                for key in ("step", "tool", "kind"):
                    if isinstance(row, dict) and key not in row:
                        raise ValueError(
                            f"ledger row {i} lacks {key!r} (expected step, tool, call_index, kind, applied)"
                        )
        return ledger


RECORD_FIELDS_NOT_IN_STEPS = frozenset({"call_index", "internal"})
"""The :class:`mcpgym.tools.invoke.CallRecord` fields a :class:`ToolCallStep` does not carry
(``call_index`` is the server's per-tool count; ``internal`` goes to the trajectory's metadata
as a count); every other field is copied by :func:`step_from_record`."""


def step_from_record(record: Any) -> ToolCallStep:
    """The trajectory step of one server call-log record: the one place a
    :class:`mcpgym.tools.invoke.CallRecord` becomes a :class:`ToolCallStep`.

    Args:
        record: a ``CallRecord``, or its JSON dict (as the control API's ``/calls`` route
            answers it). Its ``fault`` is known, not inferred; ``invalid`` is computed from the
            error (:func:`is_invalid_error`).

    Raises:
        KeyError: a dict without ``step`` or ``tool``.
        pydantic.ValidationError: a record whose fields are not a step's.
    """
    data = record.model_dump(mode="json") if isinstance(record, BaseModel) else dict(record)
    result = data.get("result")
    err = result.get("error") if isinstance(result, dict) else None
    field = err.get("field") if isinstance(err, dict) else None
    return ToolCallStep(
        step=data["step"],
        tool=data["tool"],
        arguments=data.get("arguments") if data.get("arguments") is not None else {},
        is_error=bool(data.get("is_error")),
        error_code=data.get("error_code"),
        result=result,
        invalid=bool(data.get("is_error")) and is_invalid_error(data.get("error_code"), field),
        fault=data.get("fault"),
        fault_inferred=False,
        time=data.get("time"),
        user=data.get("user"),
    )


def steps_from_call_log(calls: Iterable[Any]) -> list[ToolCallStep]:
    """Convert a server call log into trajectory steps (invalid calls flagged).

    Args:
        calls: :class:`mcpgym.tools.invoke.CallRecord` objects or their dicts (as the control API's
            ``/calls`` route returns them); each becomes a step by :func:`step_from_record`.

    Returns:
        One :class:`ToolCallStep` per record, in order.
    """
    return [step_from_record(rec) for rec in calls]


class TrajectoryFileError(FormatError, ValueError):
    """A trajectories file has a malformed line; the message names file, line and field."""


def _format_validation(exc: ValidationError, data: Any = None) -> str:
    """A trajectory line's validation errors as one plain line (the field as the line spells
    it, the value, what is wrong: :func:`mcpgym.kernel.validation_text.validation_line`)."""
    return validation_line(exc, data)


def missing_line_field(data: dict[str, Any]) -> str | None:
    """What a trajectory *line* lacks that the model would default, as ``field F: ...``, or
    None. A line without ``steps`` would read as an episode without tool calls and score as
    one (0 calls, nothing to verify): a silent zero, where the writer most likely named the
    field otherwise. An episode that made no call says ``"steps": []``."""
    if "steps" not in data:
        return 'field steps: missing (an episode that made no tool call has "steps": [])'
    return None


def _parse_line(p: Path, lineno: int, line: str) -> Trajectory:
    """One trajectory line validated (snapshots not filled in).

    Raises:
        TrajectoryFileError: ``<file>:<line>: <what is wrong>`` (invalid JSON, nesting past
            Python's depth, an integer of more than 4,300 digits, not an object, a missing or
            invalid field).
    """
    try:
        data = load_json(line, limit=None)
    except JSONLimitError as exc:
        raise TrajectoryFileError(f"{p}:{lineno}: {exc.reason}") from None
    if not isinstance(data, dict):
        raise TrajectoryFileError(
            f"{p}:{lineno}: a trajectory line must be a JSON object, got a JSON {json_type(data)}"
        )
    missing = missing_line_field(data)
    if missing:
        raise TrajectoryFileError(f"{p}:{lineno}: {missing}")
    try:
        return Trajectory.model_validate(data)
    except ValidationError as exc:
        raise TrajectoryFileError(f"{p}:{lineno}: {_format_validation(exc, data)}") from None
    except RecursionError:
        raise TrajectoryFileError(f"{p}:{lineno}: nested too deeply to read") from None


def _parse_lines(p: Path, text: str, tolerate_truncated_tail: bool) -> Iterator[tuple[int, Trajectory | None]]:
    """``(line number, trajectory)`` for every non-blank line of a trajectories file's text
    (snapshots not filled in); a torn last line (no newline, invalid JSON) is ``(n, None)``
    when tolerated. Raises :class:`TrajectoryFileError` as :func:`iter_trajectories` does."""
    lines = io.StringIO(text, newline=None).readlines()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        is_tail = lineno == len(lines) and not line.endswith("\n")
        try:
            traj = _parse_line(p, lineno, line)
        except TrajectoryFileError:
            if tolerate_truncated_tail and is_tail and _not_json(line):
                yield lineno, None
                return
            raise
        yield lineno, traj


def _not_json(line: str) -> bool:
    """Whether ``line`` fails to parse as JSON at all (a torn line, not a bad record)."""
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return True
    return False


def _parse_frames(p: Path, found: RunFileText, damaged: list[FrameDamage]) -> Iterator[tuple[int, int, Trajectory]]:
    """``(frame index, line number, trajectory)`` for every line of every readable frame of a
    compressed trajectories file; a frame that holds no whole line or a line that does not read
    as a trajectory is damaged: it is appended to ``damaged`` (by number, with the reason)
    and left out, and the next frame is read. Line numbers count the lines of the readable
    frames, as ``mcpgym cat`` prints them."""
    lineno = 0
    for index, (number, text) in enumerate(found.frames):
        lines = text.split("\n")
        if lines.pop() != "" or not lines:  # a frame of mcpgym holds one or more whole lines
            start, end = found.spans[index]
            damaged.append(FrameDamage(frame=number, start=start, end=end, reason="it holds no whole line"))
            continue
        parsed: list[Trajectory] = []
        try:
            for k, line in enumerate(lines, start=1):
                if line.strip():
                    parsed.append(_parse_line(p, lineno + k, line))
        except TrajectoryFileError as exc:
            start, end = found.spans[index]
            reason = str(exc).removeprefix(f"{p}:")
            damaged.append(FrameDamage(frame=number, start=start, end=end, reason=f"line {reason}"))
            continue
        for k, traj in enumerate(parsed):
            yield index, lineno + k + 1, traj
        lineno += len(lines)


def check_trajectory_text(path: str | Path, text: str) -> tuple[int, bool]:
    """Check that ``text`` (the decompressed content of the trajectories file ``path``) is
    trajectory lines: every non-blank line a JSON object that validates as a
    :class:`Trajectory` (compact lines too; their snapshot files are not read).

    Returns:
        ``(records, torn_tail)``: how many trajectory lines it holds, and whether its last
        line is torn (no newline and invalid JSON: a write cut short), which is not counted.

    Raises:
        TrajectoryFileError: naming the file, the first bad line and what is wrong with it (any
            value quoted from the line is shortened), as :func:`iter_trajectories` does.
    """
    records = 0
    for _, traj in _parse_lines(Path(path), text, tolerate_truncated_tail=True):
        if traj is None:
            return records, True
        records += 1
    return records, False


@dataclass
class TrajectoryRead:
    """What a trajectories file holds, read whole (:func:`read_trajectory_file`).

    Attributes:
        trajectories: every trajectory that reads, in file order.
        damaged: the frames left out (a compressed file), by number (:class:`FrameDamage`).
        kept: the byte spans of the frames every trajectory came from (what a repair keeps).
        torn: whether the file ends in a torn frame or line (a write cut short).
        compressed: whether the file is zstd frames.
    """

    trajectories: list[Trajectory] = dc_field(default_factory=list)
    damaged: list[FrameDamage] = dc_field(default_factory=list)
    kept: list[tuple[int, int]] = dc_field(default_factory=list)
    torn: bool = False
    compressed: bool = False


def _read_file(p: Path, follow: bool = True) -> RunFileText:
    """The frames of the trajectories file ``p`` (:func:`read_run_file`; ``follow=False``: a
    symlink refused), its errors as this module's."""
    try:
        return read_run_file(p, what="trajectory file", limit=MAX_TRAJECTORY_BYTES, follow=follow)
    except InputFileError as exc:
        if exc.reason == "no such file":
            raise FileNotFoundError(errno.ENOENT, "no such file", str(p)) from None
        raise TrajectoryFileError(str(exc)) from None


def _records(
    p: Path, found: RunFileText, tolerate_truncated_tail: bool, read: TrajectoryRead
) -> Iterator[tuple[int, Trajectory]]:
    """``(line number, trajectory)`` of the file read into ``found``; damage and the kept
    spans go into ``read``. A plain file's bad line raises; a compressed file's bad frame is
    damage (:func:`_parse_frames`)."""
    read.compressed = found.compressed
    if not found.compressed:
        read.kept = list(found.spans)
        for lineno, traj in _parse_lines(p, found.text, tolerate_truncated_tail):
            if traj is None:
                read.torn = True
                return
            yield lineno, traj
        return
    read.damaged = [d for d in found.damaged]
    read.torn = found.torn
    if read.torn and not tolerate_truncated_tail:
        raise TrajectoryFileError(f"{p}: the last zstd frame is torn (a write cut short)")
    last = -1
    for index, lineno, traj in _parse_frames(p, found, read.damaged):
        if index != last:
            read.kept.append(found.spans[index])
            last = index
        yield lineno, traj
    read.damaged.sort(key=lambda d: d.frame)


def _expanded(p: Path, lineno: int, traj: Trajectory, store: SnapshotStore | None) -> Trajectory:
    """``traj`` with the snapshots of a compact line filled in from ``store`` (None: as it is)."""
    if store is not None and traj.stored is not None:
        try:
            initial, final, gold = store.expand(traj.stored)
        except ValueError as exc:
            raise TrajectoryFileError(f"{p}:{lineno}: field stored: {exc}") from None
        traj.initial_snapshot, traj.final_snapshot, traj.gold_snapshot, traj.stored = initial, final, gold, None
    return traj


def warn_damaged(path: str | Path, damaged: list[FrameDamage]) -> None:
    """Say on stderr (a :class:`DamagedFramesWarning`) which frames of ``path`` were damaged in
    place and left out (a torn tail alone is a write cut short, tolerated silently)."""
    in_place = [d for d in damaged if not d.torn]
    if in_place:
        warnings.warn(DamagedFramesWarning(damage_summary(path, in_place)), stacklevel=3)


def iter_trajectories(
    path: str | Path,
    *,
    tolerate_truncated_tail: bool = False,
    states: bool = True,
    store: SnapshotStore | None = None,
    follow: bool = True,
) -> Iterator[Trajectory]:
    """Yield the trajectories of a JSONL file (plain or zstd frames), one per non-blank line.

    A compressed file is read frame by frame (:func:`mcpgym.evaluation.records.compressed.read_frames`):
    a damaged frame anywhere (bytes changed in place, a frame that does not decompress, a line
    that does not read) costs only that frame; every valid frame after it is read, and the
    damaged ones are named by number in a :class:`DamagedFramesWarning` once the file is read.

    Args:
        path: the ``trajectories.jsonl`` file.
        tolerate_truncated_tail: skip a malformed *last* line that lacks its newline, or a torn
            last frame (what a process killed in the middle of a write leaves behind), instead
            of raising.
        states: fill in the snapshots of compact lines (``stored``) from the snapshot files
            next to ``path`` (False: leave them out, e.g. when only the stored scores are needed).
        store: the :class:`SnapshotStore` to read them through (default: one for ``path``'s folder).
        follow: False for a run directory's file: a symlink in its place is refused.

    Raises:
        TrajectoryFileError: for a plain file's invalid JSON or a line that does not validate,
            or a compact line whose snapshot files are missing or wrong (the message reads
            ``<file>:<line>: field <loc>: <problem>``); for a file that is not a regular file
            (``/dev/zero``, a FIFO, a symlink), over 1 GiB, unreadable or not UTF-8
            (``<file>: <why>``).
        FileNotFoundError: when the file does not exist.
    """
    p = Path(path)
    found = _read_file(p, follow)
    if states and store is None:
        store = SnapshotStore(p.parent)
    read = TrajectoryRead()
    for lineno, traj in _records(p, found, tolerate_truncated_tail, read):
        yield _expanded(p, lineno, traj, store if states else None)
    warn_damaged(p, read.damaged)


def readable_frames_text(path: str | Path, *, follow: bool = True) -> tuple[str, int, list[FrameDamage]]:
    """The text of a compressed trajectories file's readable frames (what ``mcpgym cat``
    prints), how many trajectory lines it holds, and the frames left out (damaged in place or
    the torn tail), by number. Each frame is checked on its own (:func:`_parse_frames`).

    Raises:
        TrajectoryFileError, FileNotFoundError: the file cannot be read at all (as
            :func:`iter_trajectories` says).
    """
    p = Path(path)
    found = _read_file(p, follow)
    damaged = list(found.damaged)
    used: dict[int, None] = {}
    records = 0
    for index, _, _ in _parse_frames(p, found, damaged):
        used[index] = None
        records += 1
    damaged.sort(key=lambda d: d.frame)
    return "".join(found.frames[i][1] for i in used), records, damaged


def read_trajectory_file(path: str | Path, *, states: bool = True, follow: bool = False) -> TrajectoryRead:
    """Every trajectory of a file with what was damaged and which byte spans they came from
    (:class:`TrajectoryRead`; a torn tail tolerated), for a reader that repairs the file
    (``mcpgym run --resume``). Damaged frames are not warned about here: the caller says what
    it did with them.

    Raises:
        TrajectoryFileError, FileNotFoundError: as :func:`iter_trajectories` does.
    """
    p = Path(path)
    found = _read_file(p, follow)
    store = SnapshotStore(p.parent) if states else None
    read = TrajectoryRead()
    read.trajectories = [_expanded(p, n, t, store) for n, t in _records(p, found, True, read)]
    return read


def read_trajectories(
    path: str | Path, *, tolerate_truncated_tail: bool = False, states: bool = True, follow: bool = True
) -> list[Trajectory]:
    """Read every trajectory of a JSONL file (see :func:`iter_trajectories`).

    Raises:
        TrajectoryFileError: naming the file, the line number and the field (pydantic's loc).
    """
    return list(iter_trajectories(path, tolerate_truncated_tail=tolerate_truncated_tail, states=states, follow=follow))


_APPEND_LOCK = threading.Lock()


def append_trajectory(path: str | Path, traj: Trajectory) -> None:
    """Append ``traj`` to a JSONL file as one whole line, then flush and ``os.fsync``; to a
    ``.zst`` file (``trajectories.jsonl.zst``) as one independent zstd frame holding the line
    (:mod:`mcpgym.evaluation.records.compressed`).

    The line is written with a single ``os.write`` on a descriptor opened with ``O_APPEND``
    and ``O_NOFOLLOW`` (a symlink in the file's place is refused, never written through; so is
    anything but a regular file) (under a process-wide lock), so concurrent episodes never interleave. If the file ends
    in a partial line (a killed earlier run), a newline is written first so the new record
    stays parseable. Parent directories are created.

    Raises:
        OSError: when the file cannot be written.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    data = (traj.model_dump_json() + "\n").encode("utf-8")
    if p.name.endswith(".zst"):
        data = compress_line(data)
    with _APPEND_LOCK:
        fd = open_append(p)
        try:
            info = os.fstat(fd)
            size = info.st_size
            if size and not p.name.endswith(".zst"):
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
    "INVALID_CODES",
    "EpisodeScores",
    "EpisodeStatus",
    "MessageStep",
    "ProviderRetry",
    "Step",
    "TokenUsage",
    "ToolCallStep",
    "is_invalid_error",
    "Trajectory",
    "TrajectoryFileError",
    "TrajectoryRead",
    "read_trajectory_file",
    "readable_frames_text",
    "warn_damaged",
    "UserTurn",
    "UserTurnStep",
    "merge_user_turns",
    "append_trajectory",
    "check_trajectory_text",
    "iter_trajectories",
    "missing_line_field",
    "read_trajectories",
    "step_from_record",
    "steps_from_call_log",
    "write_trajectories",
]
