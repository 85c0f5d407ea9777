"""Containers of message lists, shared by the ``openai`` and ``anthropic`` formats.

A file (one JSON document, or JSON Lines with one record per line) holds conversations in
any of these shapes, as tau-bench and most harnesses store them:

* a bare list of messages (objects with a ``role``): one conversation;
* a list of such lists: one conversation each;
* an object with the messages under ``messages``, ``traj`` (tau-bench), ``trajectory`` or
  ``conversation``, optionally with ``task_id``, ``trial``, ``reward`` (tau-bench; kept in
  the trajectory's metadata, not used as success), ``agent`` / ``model`` (the agent name),
  ``episode_id`` / ``id``, ``tools`` (tool definitions: their descriptions feed the
  heuristic classifier), ``error`` (the harness's own error on the run record, AgentDojo's:
  a cut transcript with one is ``errored``, :func:`harness_failed`) and ``cwd`` (the agent's
  working directory, as Claude Code's session logs record it; kept in the metadata); or a list
  of such objects;
* JSON Lines whose lines are single messages: consecutive message lines form one
  conversation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpgym.evaluation.formats.common import (
    EXTERNAL_AGENT,
    Episode,
    EpisodeError,
    LoadResult,
    meta_str,
    read_json_records,
    read_text,
    record_agent,
    record_trial,
)
from mcpgym.evaluation.formats.endings import end_call_message, ending_kind
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.kernel.spec import ToolKind

USER_STOP_MARKERS: tuple[str, ...] = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
"""Markers by which a simulated user ends a conversation (tau-bench's ``###STOP###``; tau2-bench's
user simulator also ends with ``###TRANSFER###``, asking for a human, and
``###OUT-OF-SCOPE###``, a request the scenario does not cover): the episode ended
``completed``, by the user. A conversation whose last message is the user's without one was
cut by the harness."""
REPEATED_HANDOFFS = 2
"""Identical hand-off calls at the end of a conversation from which on the hand-off did not
end it: the agent kept handing off until the harness's step limit cut it (status ``limit``)."""
HARNESS_TEXTS: tuple[tuple[re.Pattern[str], EpisodeStatus, str], ...] = (
    (
        re.compile(
            r"\s*(?:error:\s*)?(?:timeout,?\s*)?no response (?:was )?(?:received )?from (?:the )?(?:llm|model)[\s.!]*",
            re.IGNORECASE,
        ),
        EpisodeStatus.ERRORED,
        "the harness got no answer from the model",
    ),
    (
        re.compile(r"\s*agent stopped due to (?:iteration limit or time limit|max iterations)[\s.!]*", re.IGNORECASE),
        EpisodeStatus.LIMIT,
        "the harness's step or time limit cut the episode",
    ),
)
"""Texts a harness writes itself where the agent's final answer would be, each matched against
the whole last assistant message (a model's answer that merely begins so is no harness text),
with the status it shows and why: "Error: Timeout, no response from LLM" (MCP-Universe's agent
when the model call failed: ``errored``); "Agent stopped due to iteration limit or time limit."
and "Agent stopped due to max iterations." (LangChain's ``AgentExecutor`` at its
``max_iterations``: ``limit``). Neither is a final message to judge."""
HARNESS_TEXT_MAX = 200
"""Longest last message compared with :data:`HARNESS_TEXTS`, in characters."""


def harness_text(text: str) -> tuple[EpisodeStatus, str] | None:
    """``(status, reason)`` when ``text`` is a harness's own text in place of a final answer
    (:data:`HARNESS_TEXTS`), else None. An empty or blank text is the model's turn that gave
    nothing (no words, no call): ``errored``, the model call failed."""
    if not text.strip():
        return EpisodeStatus.ERRORED, "the agent's last turn is empty: the model gave no answer"
    if len(text) > HARNESS_TEXT_MAX:
        return None
    for pattern, status, why in HARNESS_TEXTS:
        if pattern.fullmatch(text):
            return status, f"{why}: {text.strip()}"
    return None


def answer_beside_notes(text: str, call_names: list[str | None], pending: str | None) -> tuple[str, str | None]:
    """One assistant turn's text for the final message, and what the next turn inherits: an
    answer given beside the agent's own note calls only (opencode's ``todowrite``, Claude
    Code's ``TodoWrite``: :func:`~mcpgym.evaluation.scoring.tool_catalog.is_agent_note`) is the
    final message when the next and last turn is empty (the run closed after the to-do update).

    Args:
        text: the turn's text. call_names: the names of its tool calls (None: no usable name).
        pending: what the previous assistant turn passed on (None: nothing).

    Returns:
        ``(text, pending)``: the text to take for this turn, and what to pass to the next.
    """
    from mcpgym.evaluation.scoring.tool_catalog import is_agent_note

    if not text.strip() and not call_names and pending is not None:
        return pending, None
    only_notes = bool(call_names) and all(n is not None and is_agent_note(n) for n in call_names)
    return text, text if text.strip() and only_notes else None


CONVERSATION_KEYS: tuple[str, ...] = ("messages", "traj", "trajectory", "conversation")
"""Keys under which a record keeps its message list, tried in this order."""


@dataclass
class Conversation:
    """One message list found in a file, with its label, line and container record."""

    label: str
    line: int | None
    messages: Any
    record: dict[str, Any] = field(default_factory=dict)


def _is_message(v: Any) -> bool:
    from mcpgym.evaluation.formats.responses import is_item

    # a Responses item (function_call...) has no role: the openai reader converts such lists
    return isinstance(v, dict) and (isinstance(v.get("role"), str) or is_item(v) or v.get("type") == "reasoning")


def _conv_key(v: Any) -> str | None:
    if isinstance(v, dict):
        for k in CONVERSATION_KEYS:
            if k in v:
                return k
    return None


def tool_descriptions(tools: Any) -> dict[str, str]:
    """Tool name -> description from OpenAI (``{"type": "function", "function": {...}}``),
    Anthropic or MCP (``{"name", "description"}``) tool definitions."""
    out: dict[str, str] = {}
    if not isinstance(tools, list):
        return out
    for t in tools:
        if isinstance(t, dict) and isinstance(t.get("function"), dict):
            t = t["function"]
        if isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("description"), str):
            out[t["name"]] = t["description"]
    return out


def tool_names(tools: Any) -> list[str]:
    """The names of OpenAI, Anthropic or MCP tool definitions (a record's ``tools``), in order."""
    out: list[str] = []
    for t in tools if isinstance(tools, list) else []:
        if isinstance(t, dict) and isinstance(t.get("function"), dict):
            t = t["function"]
        if isinstance(t, dict) and isinstance(t.get("name"), str) and t["name"] not in out:
            out.append(t["name"])
    return out


def find_conversations(records: list[tuple[int | None, Any]], result: LoadResult) -> list[Conversation]:
    """The conversations of a file's records (see the module docstring for the shapes).

    A record of no known shape is a problem naming its line (JSONL) or its position.
    """
    out: list[Conversation] = []
    pending: list[tuple[int | None, Any]] = []  # consecutive JSONL message lines

    def flush() -> None:
        if pending:
            first, last = pending[0][0], pending[-1][0]
            out.append(Conversation(label=f"lines {first}-{last}", line=first, messages=[m for _, m in pending]))
            pending.clear()

    def add_record(rec: dict[str, Any], base: str, line: int | None) -> None:
        key = _conv_key(rec)
        label = base
        task = meta_str(rec.get("task_id"))
        if task is not None:
            label += f" task {task}"
        trial = rec.get("trial")
        if trial is not None and trial is not False and trial != 0:  # as given: a bad one is refused later
            label += f" trial {json.dumps(trial)}"
        result.descriptions.update(tool_descriptions(rec.get("tools")))
        out.append(Conversation(label=label, line=line, messages=rec.get(key) if key else None, record=rec))

    for line, value in records:
        where = f"line {line}" if line is not None else "the document"
        if _is_message(value) and line is not None:
            pending.append((line, value))
            continue
        flush()
        if isinstance(value, list):
            if not value or all(_is_message(v) for v in value):
                out.append(
                    Conversation(
                        label=f"line {line}" if line is not None else "conversation", line=line, messages=value
                    )
                )
                continue
            for i, item in enumerate(value, start=1):
                base = f"line {line} item {i}" if line is not None else f"record {i}"
                if isinstance(item, list):
                    out.append(Conversation(label=base, line=line, messages=item))
                elif _conv_key(item):
                    add_record(item, base, line)
                else:
                    result.problem(
                        f"not a conversation (expected a list of messages, or an object with "
                        f"{'/'.join(CONVERSATION_KEYS)})",
                        line=line,
                        episode=base,
                    )
        elif isinstance(value, dict) and _conv_key(value):
            add_record(value, f"line {line}" if line is not None else "conversation", line)
        else:
            result.problem(
                f"{'' if line is not None else where + ': '}not a conversation (expected a list of messages, "
                f"or an object with "
                f"{'/'.join(CONVERSATION_KEYS)}), got {type(value).__name__}",
                line=line,
            )
    flush()
    return out


Converter = Callable[..., tuple[Trajectory, list[str]]]


def load_conversations(path: str | Path, fmt: str, convert: Converter) -> LoadResult:
    """Read a file of conversations and convert each with ``convert``.

    Args:
        path: the file (JSON or JSON Lines).
        fmt: the format name for the result.
        convert: ``convert(messages, episode_id=..., agent=..., task_id=..., trial=...,
            metadata=...) -> (Trajectory, warnings)``, raising :class:`EpisodeError`.

    Returns:
        A :class:`LoadResult`; a conversation that cannot be converted is a problem naming
        its label, the others are kept.
    """
    p = Path(path)
    result = LoadResult(file=str(path), format=fmt)
    text = read_text(p, result)
    if text is None:
        return result
    records, _ = read_json_records(p, text, result)
    for conv in find_conversations(records, result):
        rec = conv.record
        meta: dict[str, Any] = {"format": fmt, "file": str(path), "episode": conv.label}
        if "reward" in rec:
            meta["reward"] = rec["reward"]
        listed = tool_names(rec.get("tools"))
        if listed:
            meta["tools"] = listed  # the tools the agent had (false success: a write never made)
        meta.update(record_meta(rec))
        episode_id = meta_str(rec.get("episode_id")) or meta_str(rec.get("id")) or f"{p.name}:{conv.label}"
        converted = convert_episode(result, convert, conv.messages, rec, meta, episode_id, conv.label, conv.line)
        if converted is not None:
            traj = harness_failed(converted[0], rec.get("error"))
            result.add(Episode(label=conv.label, trajectory=traj, line=conv.line, warnings=converted[1]))
    if not result.episodes and not result.problems:
        result.problem("no conversations in the file", severity="warning")
    return result


CWD_MAX = 1000
"""Longest working directory kept in the metadata, in characters."""


def record_meta(rec: dict[str, Any]) -> dict[str, Any]:
    """What a conversation's record says beside its messages that scoring reads: ``cwd``, the
    agent's working directory (Claude Code's session logs record it; a ``mkdir -p`` of it is no
    write), cut to :data:`CWD_MAX` characters. Empty when the record says nothing."""
    cwd = rec.get("cwd")
    return {"cwd": cwd[:CWD_MAX]} if isinstance(cwd, str) and cwd else {}


RUN_ERROR_MAX = 500
"""Longest run-record error text kept in a stop reason, in characters."""


def harness_failed(traj: Trajectory, error: Any) -> Trajectory:
    """``traj`` as its run record says it ended: a transcript the harness cut (``limit``: it
    stops on a tool result or a user turn) whose record carries the harness's own error (a
    non-empty ``error`` string beside the messages, as AgentDojo's run files store "Skipping
    task user_task_30 due to context_length_exceeded") ended because the harness failed:
    status ``errored``, the error (cut to :data:`RUN_ERROR_MAX`) its stop reason. Any other
    episode is returned unchanged (an agent that answered ended the episode itself)."""
    if traj.status != EpisodeStatus.LIMIT or not isinstance(error, str) or not error.strip():
        return traj
    why = f"the harness failed: {error.strip()[:RUN_ERROR_MAX]}"
    return traj.model_copy(update={"status": EpisodeStatus.ERRORED, "stop_reason": why})


def convert_episode(
    result: LoadResult,
    convert: Converter,
    messages: Any,
    rec: dict[str, Any],
    meta: dict[str, Any],
    episode_id: str,
    label: str,
    line: int | None,
) -> tuple[Trajectory, list[str]] | None:
    """Convert one episode's messages with ``convert`` (agent, task, trial from its record
    ``rec``); a conversion that fails is a problem of ``result`` naming the episode (None is
    returned), so one malformed episode never stops the others."""
    try:
        if not isinstance(messages, list):
            raise EpisodeError(f"the messages must be a list, got {type(messages).__name__}")
        return convert(
            messages,
            episode_id=episode_id,
            agent=record_agent(rec) or EXTERNAL_AGENT,
            task_id=meta_str(rec.get("task_id")),
            trial=record_trial(rec),
            metadata=meta,
        )
    except EpisodeError as exc:
        result.problem(str(exc), line=line, episode=label)
    except Exception as exc:  # noqa: BLE001 - a malformed episode must not stop the others
        result.problem(f"cannot be converted ({type(exc).__name__}: {exc})", line=line, episode=label)
    return None


def conversation_trajectory(
    steps: list[Any],
    last_assistant: tuple[int, str, bool] | None,
    last_result_at: int,
    *,
    episode_id: str,
    task_id: str | None,
    agent: str,
    trial: int,
    instruction: str | None,
    metadata: dict[str, Any] | None,
    last_call: tuple[str, Any, str] | None = None,
    user_last: str | None = None,
    repeated_handoffs: int = 0,
) -> Trajectory:
    """The trajectory of a chat conversation (``openai`` and ``anthropic`` formats).

    Args:
        steps: the tool-call steps. last_assistant: ``(index, text, has_tool_calls)`` of the
            last assistant message, or None. last_result_at: index of the last tool result.
        last_call: ``(tool, arguments, text of its message)`` of the conversation's last tool
            call, answered or not (None without calls).
        user_last: the text of the conversation's last message when a user wrote it (None
            when the agent or a tool spoke last).
        repeated_handoffs: how many identical calls of the last tool (same arguments) end the
            conversation.

    Status from the transcript (docs/design.md §6, "Outside trajectories"): the agent ended
    the episode (``completed``) when the last assistant text follows every tool result and
    asks for no tool (the final message is that text), or when its last call is a hand-off
    or an end call (:func:`~mcpgym.evaluation.formats.endings.ending_kind`: the final message
    is the end call's answer, :func:`~mcpgym.evaluation.formats.endings.end_call_message`;
    after a hand-off there is none). Otherwise the conversation stops in the middle of a turn,
    which shows the harness cut it: status ``limit``. So does a conversation whose last
    message is the user's with no stop marker (:data:`USER_STOP_MARKERS`): the user waits for
    an answer that never came; the agent's earlier text is no final message. A hand-off made
    :data:`REPEATED_HANDOFFS` times or more in a row at the end did not end the episode (the
    harness let it go on): the agent repeated it until the step limit, status ``limit``. A
    last assistant message that is the harness's own text (:func:`harness_text`: "Error:
    Timeout, no response from LLM", LangChain's "Agent stopped due to iteration limit or time
    limit.") or empty is no answer: the status that text shows (``errored`` for an empty turn),
    no final message.
    """
    answered = last_assistant is not None and last_assistant[0] > last_result_at and not last_assistant[2]
    final = last_assistant[1] if answered and last_assistant is not None else ""
    status, stop_reason = (
        (EpisodeStatus.COMPLETED, None)
        if answered
        else (EpisodeStatus.LIMIT, "the conversation ends without a final answer")
    )
    harness = harness_text(final) if answered else None
    if harness is not None:
        answered, final = False, ""
        status, stop_reason = harness
    elif user_last is not None and not any(m in user_last for m in USER_STOP_MARKERS):
        answered, final = False, ""
        status, stop_reason = EpisodeStatus.LIMIT, "the conversation ends on a user turn nobody answered"
    elif not answered and last_call is not None:
        kind = ending_kind(last_call[0])
        if kind == ToolKind.HANDOFF and repeated_handoffs >= REPEATED_HANDOFFS:
            status, stop_reason = (
                EpisodeStatus.LIMIT,
                f"the hand-off {last_call[0]} was repeated {repeated_handoffs} times until the harness cut the episode",
            )
            final = ""
        elif kind is not None:
            status, stop_reason = (
                EpisodeStatus.COMPLETED,
                f"the agent ended the episode ({kind.value} call {last_call[0]})",
            )
            # a hand-off leaves no final message: the conversation went to someone else; an
            # end call without an answer argument ends on the text of the turn that made it
            final = (end_call_message(last_call[1]) or last_call[2]) if kind == ToolKind.END else ""
    return Trajectory(
        episode_id=episode_id,
        task_id=task_id,
        agent=agent,
        trial=trial,
        instruction=instruction,
        steps=steps,
        final_message=final,
        ledger=None,
        status=status,
        stop_reason=stop_reason,
        metadata=dict(metadata or {}),
    )


__all__ = [
    "CONVERSATION_KEYS",
    "conversation_trajectory",
    "convert_episode",
    "record_meta",
    "Conversation",
    "find_conversations",
    "harness_failed",
    "harness_text",
    "load_conversations",
    "tool_descriptions",
    "tool_names",
]
