"""Format ``inspect``: Inspect AI logs (``.eval`` archives, or ``.json`` logs), read with Inspect's
own reader (``inspect_ai.log.read_eval_log``; ``pip install 'mcpgym[inspect]'``).

One episode per sample and epoch (trial = epoch - 1; agent = the log's model). The sample's
messages are read as a chat conversation with the ``openai`` format's rules
(:func:`mcpgym.evaluation.formats.openai.trajectory_from_messages`): each assistant tool call
is a step, matched to its tool message by id; a tool message with an ``error`` (Inspect's
``ToolCallError``, e.g. an MCP result with ``isError``) is an error result whose text the
shared detector reads (an mcpgym ``{"error": {"code", ...}}`` keeps its code); the final message
is the last assistant text after the last tool result. So an Inspect run against any MCP
server scores with our rules (faults inferred, no outcome).

A sample that :mod:`mcpgym.integrations.inspect_task` played carries the episode's record in
its store (key ``mcpgym``): task id, fault seed and profile, the server's call log, the fault
ledger and the initial, final and gold world states. With it the episode is scored as
``mcpgym run`` scores its own (:func:`episode_trajectory`, the one function the live Inspect
scorer uses too): the calls that reached the server are the call log's records, faults come
from the ledger, the outcome is judged from the states; a call Inspect refused itself (a tool
the episode does not offer: "Tool X not found"; arguments that do not parse or break the tool's
input schema: an Inspect ``parsing`` error) never reached the server and is an invalid step
without a call-log number, as an LLM agent's refused call is in ``mcpgym run``
(:func:`merged_steps`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcpgym.evaluation.formats.common import Episode, EpisodeError, LoadResult
from mcpgym.evaluation.formats.openai import trajectory_from_messages
from mcpgym.evaluation.records.trajectory import Step, ToolCallStep, step_from_record
from mcpgym.kernel.errors import ErrorCode, ErrorPayload
from mcpgym.kernel.input_files import InputFileError, check_input_file, check_zip_input

FORMAT = "inspect"
STORE_KEY = "mcpgym"
"""Key of the episode record in an Inspect sample's store (written by the mcpgym solver)."""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        text = getattr(part, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts)


def chat_messages(messages: list[Any]) -> list[dict[str, Any]]:
    """Inspect ``ChatMessage`` objects as chat-completions message dicts (the ``openai`` shape)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role = getattr(m, "role", None)
        if role == "assistant":
            calls = [
                {
                    "id": tc.id,
                    "type": "function",
                    "function": {
                        "name": tc.function,
                        "arguments": tc.arguments,
                    },
                }
                for tc in (m.tool_calls or [])
            ]
            out.append({"role": "assistant", "content": _text(m.content), **({"tool_calls": calls} if calls else {})})
        elif role == "tool":
            error = getattr(m, "error", None)
            text = _text(m.content)
            if error is not None and not text:
                text = error.message
            msg: dict[str, Any] = {"role": "tool", "tool_call_id": m.tool_call_id, "name": m.function, "content": text}
            if error is not None:
                msg["error"] = True
            out.append(msg)
        elif role in ("user", "system"):
            out.append({"role": role, "content": _text(m.content)})
    return out


def _refused_step(call: Any, error: Any) -> ToolCallStep:
    """The invalid step of a call Inspect refused before it reached the server: ``not_found``
    on ``name`` for a tool the episode does not offer ("Tool X not found"), else
    ``invalid_argument`` (arguments that do not parse or break the input schema)."""
    message = str(getattr(error, "message", "") or "refused by Inspect")[:2000]
    unknown = message == f"Tool {call.function} not found"
    payload = ErrorPayload(
        code=ErrorCode.NOT_FOUND if unknown else ErrorCode.INVALID_ARGUMENT,
        message=message,
        field="name" if unknown else None,
    ).result()
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    return ToolCallStep(
        step=None,
        tool=str(call.function)[:200],
        arguments=arguments,
        call_id=str(call.id) if call.id is not None else None,
        is_error=True,
        error_code=payload["error"]["code"],
        result=payload,
        invalid=True,
    )


def merged_steps(messages: list[Any], calls: list[Any]) -> list[Step]:
    """Every tool call of an Inspect sample in order, as ``mcpgym run`` records an episode's:
    the server's call-log records (``calls``, the control API's ``/calls`` rows) for the calls
    that reached the server, and an invalid step without a call-log number for each call
    Inspect answered itself with a ``parsing`` error (module docstring).

    The messages give the order: each answered assistant tool call is either refused (its
    tool message's error has type ``parsing``) or a place for the next call-log record, taken
    in log order; records left over (a call whose answer was lost) come last, in log order. A
    call without a tool message (Inspect's limits ended the sample first) was never run.

    Args:
        messages: the sample's Inspect ``ChatMessage`` objects.
        calls: the episode's call-log records (dicts or ``CallRecord`` objects).
    """
    answers = {getattr(m, "tool_call_id", None): m for m in messages if getattr(m, "role", None) == "tool"}
    logged = iter(calls)
    out: list[Step] = []
    for m in messages:
        if getattr(m, "role", None) != "assistant":
            continue
        for call in m.tool_calls or []:
            answer = answers.get(call.id)
            if answer is None:
                continue
            error = getattr(answer, "error", None)
            if error is not None and getattr(error, "type", None) == "parsing":
                out.append(_refused_step(call, error))
                continue
            record = next(logged, None)
            if record is not None:
                out.append(step_from_record(record))
    out.extend(step_from_record(r) for r in logged)
    return out


def episode_trajectory(
    messages: list[Any], record: Any, *, sample_id: Any, epoch: int | None, model: str
) -> tuple[Any, list[str]]:
    """One Inspect sample as a trajectory: its messages and, when the mcpgym solver played it,
    the episode ``record`` of its store (key ``mcpgym``; anything else: no record). Used by
    the reader (:func:`sample_trajectory`) and by the live Inspect scorer
    (:mod:`mcpgym.integrations.inspect_task`), so both give the same scores.

    Returns:
        ``(trajectory, warnings)`` (warnings from the ``openai`` rules).

    Raises:
        EpisodeError: a message the ``openai`` rules cannot convert, or a record that lacks a
            field.
    """
    trial = max(int(epoch or 1) - 1, 0)
    metadata: dict[str, Any] = {"inspect_sample_id": sample_id, "inspect_epoch": epoch}
    task_id = None
    episode_id = f"{sample_id}@{epoch}"
    if isinstance(record, dict):
        task_id = record.get("task_id")
        episode_id = str(record.get("episode_id") or episode_id)
        metadata["extra_checks"] = record.get("extra_checks") or []
        for key in ("tags", "max_calls"):
            if key in record:
                metadata[key] = record[key]
    traj, warnings = trajectory_from_messages(
        chat_messages(list(messages)),
        episode_id=episode_id,
        agent=model,
        task_id=task_id,
        trial=trial,
        metadata=metadata,
    )
    if isinstance(record, dict):
        try:
            traj = traj.model_copy(
                update={
                    "steps": merged_steps(list(messages), list(record["calls"])),
                    "world_seed": record["world_seed"],
                    "fault_seed": record["fault_seed"],
                    "fault_profile": record["fault_profile"],
                    "apps": list(record["apps"]),
                    "level": record.get("level"),
                    "feasible": record.get("feasible"),
                    "ledger": list(record["ledger"]),
                    "initial_snapshot": record["initial_snapshot"],
                    "final_snapshot": record["final_snapshot"],
                    "gold_snapshot": record["gold_snapshot"],
                    "status": record.get("status") or traj.status,
                    "stop_reason": record.get("stop_reason", traj.stop_reason),
                }
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise EpisodeError(f"its store's {STORE_KEY!r} record is not one ({type(exc).__name__}: {exc})") from None
    return traj, warnings


def sample_trajectory(sample: Any, *, model: str) -> tuple[Any, list[str]]:
    """One Inspect sample (``EvalSample``) as a trajectory (:func:`episode_trajectory`).

    Raises:
        EpisodeError: a message the ``openai`` rules cannot convert, or an mcpgym record in
            the store that is not one.
    """
    record = (sample.store or {}).get(STORE_KEY)
    return episode_trajectory(list(sample.messages), record, sample_id=sample.id, epoch=sample.epoch, model=model)


def load(path: str | Path) -> LoadResult:
    """Read an Inspect log file (module docstring). The file is checked first with the bounded
    readers (:func:`mcpgym.kernel.input_files.check_zip_input`: a regular file, never a FIFO or
    a device; a ``.eval`` archive whose members stay within their inflated-size bounds)."""
    result = LoadResult(file=str(path), format=FORMAT)
    check = check_zip_input if str(path).endswith(".eval") else check_input_file  # a .eval is a zip archive
    try:
        check(path, what="Inspect log")  # bounded before inspect-ai opens it
    except InputFileError as exc:
        result.unread = exc.reason == "no such file"
        result.problem(exc.reason)
        return result
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        result.problem("reading Inspect logs needs inspect-ai: pip install 'mcpgym[inspect]'")
        return result
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - any reader failure is this file's problem
        result.problem(f"not a readable Inspect log ({type(exc).__name__}: {exc})")
        return result
    model = str(getattr(log.eval, "model", "") or "inspect")
    for sample in log.samples or []:
        label = f"sample {sample.id} epoch {sample.epoch}"
        try:
            traj, warnings = sample_trajectory(sample, model=model)
        except EpisodeError as exc:
            result.problem(str(exc), episode=label)
            continue
        result.add(Episode(label=label, trajectory=traj, warnings=warnings))
    return result


__all__ = ["FORMAT", "STORE_KEY", "chat_messages", "episode_trajectory", "load", "merged_steps", "sample_trajectory"]
