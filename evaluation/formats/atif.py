"""Format ``atif``: the Agent Trajectory Interchange Format (ATIF v1.8), both ways.

Validated with the ``atif`` package's pydantic models (``pip install 'mcpgym[atif]'``); a
document they refuse is a problem naming the record and the field, never scored.

Writing ours (:func:`to_atif`, ``mcpgym export --format atif RUN_DIR``), one ATIF trajectory
per episode:

* step 1, ``source: user``: the instruction;
* each tool call: an ``agent`` step with one ``tool_calls`` entry (``tool_call_id`` = the
  call's id, else ``call-<step>``; arguments that were no JSON object are ``{}`` with the raw
  text in the call's ``extra.raw_arguments``) and one ``observation.results`` entry: the
  result as JSON text, ``extra.is_error`` / ``extra.error_code`` on an error;
* each model turn (``message`` step): an ``agent`` step with the text, the reasoning and the
  token counts (``metrics``); each ``ask_user`` turn: a ``user`` step with the answer;
* the final message: a last ``agent`` step;
* every step's ``extra.mcpgym`` holds our step as recorded, and the root's ``extra.mcpgym``
  every trajectory field but the steps (seeds, profile, ledger, snapshots, status, scores),
  so that reading it back gives the same trajectory.

Reading (:func:`from_atif`, ``mcpgym score --format atif``): a document written by us comes
back as it was (the ``extra.mcpgym`` records). Any other ATIF document is read as a
conversation: the first ``user`` step is the instruction; each agent ``tool_calls`` entry is
a step, matched to its result by ``source_call_id`` (an unanswered call is left out, with a
warning; the entries of one agent step were issued together, a parallel ``batch``); a result is an error when its ``extra.is_error`` says so, else by the shared error
detector (:func:`mcpgym.evaluation.formats.layers.read_result`); the final message is the
last agent message after the last result that calls no tool (none: status ``limit``), as in
the ``openai`` format. No ledger (faults inferred) and no world states (no outcome).

Containers: a JSON file holds one document or a list of them; a JSON Lines file one per line.
"""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from pathlib import Path
from typing import Any

from mcpgym.evaluation.formats.common import EXTERNAL_AGENT, Episode, EpisodeError, LoadResult, read_text
from mcpgym.evaluation.formats.conversations import conversation_trajectory
from mcpgym.evaluation.formats.layers import read_result
from mcpgym.evaluation.formats.results import make_step, parse_arguments
from mcpgym.evaluation.records.atomic import write_atomic
from mcpgym.evaluation.records.trajectory import MessageStep, ToolCallStep, Trajectory, UserTurnStep
from mcpgym.kernel.input_files import MAX_TRAJECTORY_BYTES, InputFileError, read_input_bytes

FORMAT = "atif"
SCHEMA_VERSION = "ATIF-v1.8"
"""The ATIF version written (the ``atif`` package's models are of this version)."""

_KEY = "mcpgym"


def _models() -> Any:
    try:
        import atif
    except ImportError as exc:  # pragma: no cover - the [atif] extra is in dev
        raise ImportError("the ATIF format needs the atif package: pip install 'mcpgym[atif]'") from exc
    return atif


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mcpgym")
    except PackageNotFoundError:  # pragma: no cover - a source checkout that is not installed
        return "0"


def to_atif(traj: Trajectory) -> dict[str, Any]:
    """Our trajectory as an ATIF document (module docstring), validated by ``atif.Trajectory``.

    Returns:
        The document as JSON-ready data (unset fields left out).
    """
    atif = _models()
    steps: list[Any] = []

    def add(**fields: Any) -> None:
        steps.append(atif.Step(step_id=len(steps) + 1, **fields))

    if traj.instruction is not None:
        add(source="user", message=traj.instruction, extra={_KEY: {"type": "instruction"}})
    for step in traj.steps:
        record = step.model_dump(mode="json")
        if isinstance(step, ToolCallStep):
            call_id = step.call_id or f"call-{step.step or len(steps) + 1}"
            args = step.arguments if isinstance(step.arguments, dict) else {}
            call_extra = None
            if not isinstance(step.arguments, dict):
                raw = step.raw_arguments if step.raw_arguments is not None else json.dumps(step.arguments)
                call_extra = {"raw_arguments": raw}
            result_extra = {"is_error": True, "error_code": step.error_code} if step.is_error else None
            add(
                source="agent",
                message="",
                tool_calls=[
                    atif.ToolCall(tool_call_id=call_id, function_name=step.tool, arguments=args, extra=call_extra)
                ],
                observation=atif.Observation(
                    results=[
                        atif.ObservationResult(
                            source_call_id=call_id, content=json.dumps(step.result, default=str), extra=result_extra
                        )
                    ]
                ),
                extra={_KEY: record},
            )
        elif isinstance(step, MessageStep):
            metrics = (
                atif.Metrics(prompt_tokens=step.tokens.input, completion_tokens=step.tokens.output)
                if step.tokens is not None
                else None
            )
            add(
                source="agent",
                message=step.text,
                reasoning_content=step.reasoning,
                metrics=metrics,
                extra={_KEY: record},
            )
        elif isinstance(step, UserTurnStep):
            add(source="user", message=step.answer, extra={_KEY: record})
    add(source="agent", message=traj.final_message, extra={_KEY: {"type": "final"}})
    final_metrics = (
        atif.FinalMetrics(
            total_prompt_tokens=traj.tokens.input, total_completion_tokens=traj.tokens.output, total_steps=len(steps)
        )
        if traj.tokens is not None
        else atif.FinalMetrics(total_steps=len(steps))
    )
    doc = atif.Trajectory(
        schema_version=SCHEMA_VERSION,
        session_id=traj.episode_id,
        trajectory_id=traj.episode_id,
        agent=atif.Agent(name=traj.agent, version=_version()),
        steps=steps,
        final_metrics=final_metrics,
        extra={_KEY: traj.model_dump(mode="json", exclude={"steps", "stored"})},
    )
    data: dict[str, Any] = doc.to_json_dict()
    return data


def _ours(doc: Any) -> Trajectory | None:
    """The trajectory a document written by :func:`to_atif` carries, else None."""
    root = (doc.extra or {}).get(_KEY)
    if not isinstance(root, dict):
        return None
    steps = [
        s.extra[_KEY]
        for s in doc.steps
        if isinstance(s.extra, dict)
        and isinstance(s.extra.get(_KEY), dict)
        and s.extra[_KEY].get("type") in ("tool_call", "message", "user_turn")
    ]
    return Trajectory.model_validate({**root, "steps": steps})


def _conversation(doc: Any, episode_id: str) -> tuple[Trajectory, list[str]]:
    """Any ATIF document read as a conversation (module docstring)."""
    warnings: list[str] = []
    instruction: str | None = None
    calls: list[tuple[str, str, Any, int]] = []  # (id, name, arguments, step)
    results: dict[str, Any] = {}
    last_result_at = -1
    last_agent: tuple[int, str, bool] | None = None
    for step in doc.steps:
        text = step.message if isinstance(step.message, str) else ""
        if step.source == "user" and instruction is None:
            instruction = text
        if step.source != "agent":
            continue
        for tc in step.tool_calls or []:
            raw = (tc.extra or {}).get("raw_arguments")
            args = parse_arguments(raw)[0] if isinstance(raw, str) else dict(tc.arguments)
            calls.append((tc.tool_call_id, tc.function_name, args, step.step_id))
        for res in step.observation.results if step.observation is not None else []:
            if res.source_call_id is None:
                continue
            if res.source_call_id in results:
                warnings.append(f"step {step.step_id}: a second result for call {res.source_call_id!r}; ignored")
                continue
            results[res.source_call_id] = res
            last_result_at = step.step_id
        last_agent = (step.step_id, text, bool(step.tool_calls))
    steps: list[Any] = []
    per_step = Counter(at for _, _, _, at in calls)
    for call_id, name, args, at in calls:
        res = results.get(call_id)
        if res is None:
            warnings.append(f"step {at}: the call of {name} (id {call_id!r}) has no result; left out")
            continue
        flag = (res.extra or {}).get("is_error")
        content = res.content if isinstance(res.content, str) else json.dumps(res.content, default=str)
        r = read_result(content, flag=flag if isinstance(flag, bool) else None, tool=name)
        code = (res.extra or {}).get("error_code") or r.code
        made = make_step(len(steps) + 1, name, args, is_error=r.is_error, code=code, result=r.result, rule=r.rule)
        if per_step[at] > 1:
            made.batch = at  # the tool calls of one agent step were issued together
        steps.append(made)
    if last_agent is not None and last_agent[0] == last_result_at:
        last_agent = None  # the step that got the last result is no answer after it
    traj = conversation_trajectory(
        steps,
        last_agent,
        last_result_at,
        episode_id=episode_id,
        task_id=None,
        agent=doc.agent.name or EXTERNAL_AGENT,
        trial=0,
        instruction=instruction,
        metadata={"atif_schema_version": doc.schema_version},
    )
    return traj, warnings


def from_atif(data: Any, *, label: str = "trajectory") -> tuple[Trajectory, list[str]]:
    """An ATIF document (JSON data) as our trajectory, with warnings (module docstring).

    Raises:
        EpisodeError: the ``atif`` models refuse the document (the message names the field),
            or our records in it are no valid trajectory.
    """
    from pydantic import ValidationError

    atif = _models()
    try:
        doc = atif.Trajectory.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err.get("loc", ())) or "(document)"
        raise EpisodeError(f"not a valid ATIF trajectory: field {where}: {err.get('msg')}") from None
    try:
        ours = _ours(doc)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err.get("loc", ()))
        raise EpisodeError(f"its extra.{_KEY} record is no valid trajectory: field {where}: {err.get('msg')}") from None
    if ours is not None:
        return ours, []
    return _conversation(doc, doc.trajectory_id or doc.session_id or label)


def load(path: str | Path) -> LoadResult:
    """Read a JSON (one document or a list) or JSON Lines file of ATIF trajectories."""
    p = Path(path)
    result = LoadResult(file=str(path), format=FORMAT)
    text = read_text(p, result)
    if text is None:
        return result
    records: list[tuple[int | None, Any]] = []
    try:
        whole = json.loads(text)
        records = [(None, d) for d in whole] if isinstance(whole, list) else [(None, whole)]
    except json.JSONDecodeError:
        from mcpgym.evaluation.formats.common import jsonl_lines

        for number, line in enumerate(jsonl_lines(text), start=1):
            if not line.strip():
                continue
            try:
                records.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                result.problem(f"invalid JSON at column {exc.colno}: {exc.msg}", line=number)
    for index, (lineno, data) in enumerate(records, start=1):
        label = f"trajectory {index}"
        try:
            traj, warnings = from_atif(data, label=label)
        except EpisodeError as exc:
            result.problem(str(exc), line=lineno, episode=label)
            continue
        result.add(Episode(label=f"episode {traj.episode_id}", trajectory=traj, line=lineno, warnings=warnings))
    return result


def written_by_export(path: str | Path) -> bool:
    """Whether ``path`` is a file :func:`write_atif` wrote (what ``mcpgym export --force`` may
    replace): a regular file, not a symlink, of at most ``MAX_TRAJECTORY_BYTES``, UTF-8, with at
    least one line, every non-blank line an ATIF document of :data:`SCHEMA_VERSION` carrying
    mcpgym's record of an episode (the root's ``extra.mcpgym`` with its ``episode_id``).
    An ATIF file of another tool, a file edited into something else, an empty file: False.
    """
    p = Path(path)
    try:
        if not stat.S_ISREG(os.lstat(p).st_mode):
            return False
        text = read_input_bytes(p, what="ATIF export", limit=MAX_TRAJECTORY_BYTES).decode("utf-8")
    except (OSError, InputFileError, UnicodeDecodeError):
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return False
    for line in lines:
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            return False
        if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA_VERSION:
            return False
        root = doc.get("extra")
        ours = root.get(_KEY) if isinstance(root, dict) else None
        if not isinstance(ours, dict) or "episode_id" not in ours:
            return False
    return True


def atif_lines(trajs: Any) -> list[str]:
    """One ATIF document per trajectory of ``trajs``, each a JSON line ending in a newline (what
    :func:`write_atif` writes, and ``mcpgym export --out -`` prints)."""
    return [json.dumps(to_atif(t), ensure_ascii=False) + "\n" for t in trajs]


def write_atif(trajs: Any, out: str | Path, *, replace: bool = False) -> int:
    """Write trajectories as ATIF, one document per line of ``out`` (JSON Lines); returns how
    many were written (``mcpgym export --format atif RUN_DIR`` passes a run's episodes).

    Args:
        replace: replace an existing ``out`` when it is an earlier export of mcpgym's
            (:func:`written_by_export`), through a temporary file and ``os.replace`` (``mcpgym
            export --force``); a new ``out`` is always created exclusively. Either way the
            file is written whole or not at all (:func:`~mcpgym.evaluation.records.atomic.write_atomic`).

    Raises:
        FileExistsError: ``out`` exists, and ``replace`` is not given or ``out`` is not an
            export of mcpgym's (nothing is overwritten).
    """
    target = Path(out)
    exists = target.exists() or target.is_symlink()
    if exists and not replace:
        raise FileExistsError(
            f"{target} exists; pass --force to replace an earlier export, or choose another --out "
            "(nothing was overwritten)"
        )
    if exists and not written_by_export(target):
        raise FileExistsError(
            f"{target} exists and is not an ATIF export written by mcpgym (every line an {SCHEMA_VERSION} "
            "document carrying mcpgym's record); move it away or choose another --out (nothing was overwritten)"
        )
    lines = atif_lines(trajs)
    data = "".join(lines).encode("utf-8")
    write_atomic(target, data, prefix=f".{target.name}.", suffix=".tmp", exclusive=not exists)
    return len(lines)


__all__ = ["FORMAT", "SCHEMA_VERSION", "atif_lines", "from_atif", "load", "to_atif", "write_atif", "written_by_export"]
