"""Format ``openai``: chat-completions message lists (tau-bench and most harnesses).

Messages: OpenAI Responses-API items (``function_call`` / ``function_call_output`` /
``mcp_call``, what the Agents SDK stores) are converted first by
:func:`mcpgym.evaluation.formats.responses.items_to_chat`, so ``--format openai`` on them reads
their calls (never a silent zero). Chat-completions messages: ``assistant`` messages with ``tool_calls`` ``[{"id", "type": "function",
"function": {"name", "arguments": JSON string}}]`` (the legacy ``function_call`` too), and
``tool`` messages (legacy: ``function``) with ``tool_call_id`` and ``content``. Tolerated as
well: flat tool calls ``{"id", "name", "arguments"}`` and a tool message's ``"error": true``
(tau2-bench style; the flag makes the result an error). Containers: see
:mod:`mcpgym.evaluation.formats.conversations`.

Conversion rules:

* One step per tool call, in the order the calls were made; a call is matched to its result
  by ``tool_call_id``; when several calls share an id (parallel calls some harnesses number
  alike), their results pair with them in order, the first result with the first call. A
  result without an id goes to the oldest unanswered call of the same name, else the oldest
  unanswered call. A call that never got a result is left out (a
  warning names it): nothing says it ran. The calls of one assistant message ran in parallel:
  they share a ``batch`` (the message's number), so a read among them verifies none of their
  writes.
* Arguments that are not a JSON object (unparsable JSON) are kept as the raw string; if
  the result is an error, its code is ``invalid_argument``. Arguments nested too deep to
  parse are such a call too, kept as their first 200 characters, with a warning.
* Error detection, from the result's content (:func:`mcpgym.evaluation.formats.layers.read_result`):
  a JSON object with a truthy ``"error"`` (the code is ``error.code`` when it is one of
  mcpgym's codes, else guessed from the message), a JSON object with ``"isError": true``, or
  text starting with ``Error`` / ``ERROR`` / ``error:``. The code of a text error is guessed
  by :data:`mcpgym.evaluation.formats.common.ERROR_TEXT_PATTERNS` (network / internal error ->
  ``transient``, rate limit -> ``rate_limited``, time-out -> ``timeout``...: injected faults,
  marked inferred); no match leaves the code empty.
* The instruction is the first ``user`` message; the final message is the text of the last
  ``assistant`` message when it comes after the last tool result and makes no tool call,
  else empty: the conversation stopped in the middle, and the trajectory gets status
  ``limit`` (errors in its last K calls are not counted as given up), unless its last call
  is a hand-off or an end call (ToolBench's ``Finish``): the agent ended the episode
  (``completed``; :func:`~mcpgym.evaluation.formats.conversations.conversation_trajectory`).
  An end call is no step: it carries the final answer (its ``final_answer``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from mcpgym.evaluation.formats.common import (
    EXTERNAL_AGENT,
    EpisodeError,
    LoadResult,
    id_key,
)
from mcpgym.evaluation.formats.conversations import answer_beside_notes, conversation_trajectory, load_conversations
from mcpgym.evaluation.formats.endings import ending_kind
from mcpgym.evaluation.formats.layers import read_result
from mcpgym.evaluation.formats.results import (
    content_text,
    make_step,
    parse_arguments,
)
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory
from mcpgym.kernel.spec import ToolKind

FORMAT = "openai"


class _Call:
    __slots__ = ("id", "name", "arguments", "ok_args", "where", "content", "answered", "error_flag", "text")

    def __init__(self, id: Any, name: str, arguments: Any, ok_args: bool, where: int, text: str = "") -> None:
        self.id, self.name, self.arguments, self.ok_args, self.where = id, name, arguments, ok_args, where
        self.text = text
        self.content: Any = None
        self.answered = False
        self.error_flag = False


def _function_of(tc: Any) -> dict[str, Any] | None:
    """The function object of one raw tool call: ``{"function": {...}}``, or the call itself when
    flat (``{"id", "name", "arguments"}``, tau2-bench style); None when it has neither."""
    fn = tc.get("function") if isinstance(tc, dict) else None
    if fn is None and isinstance(tc, dict) and "name" in tc:
        fn = tc
    return fn if isinstance(fn, dict) else None


def trajectory_from_messages(
    messages: list[Any],
    *,
    episode_id: str,
    agent: str = EXTERNAL_AGENT,
    task_id: str | None = None,
    trial: int = 0,
    metadata: dict[str, Any] | None = None,
) -> tuple[Trajectory, list[str]]:
    """Convert one chat-completions conversation into a :class:`Trajectory` (no ledger).

    Args:
        messages: the message dicts, in order.
        episode_id, agent, task_id, trial, metadata: copied into the trajectory.

    Returns:
        ``(trajectory, warnings)``; warnings name what was left out (unanswered calls,
        results for unknown call ids, unknown roles).

    Raises:
        EpisodeError: a message that is not an object (a tool call without a name is counted
            in ``invalid_calls``, with a warning naming its message and position).
    """
    from mcpgym.evaluation.formats.responses import is_item, items_to_chat

    warnings: list[str] = []
    if any(is_item(m) for m in messages):  # Responses items (the Agents SDK's stored runs)
        chat = items_to_chat(messages)
        messages, warnings = chat.messages, list(chat.warnings)
    calls: list[_Call] = []
    by_id: dict[Any, list[_Call]] = {}  # id -> its calls, in order (an id may be repeated)
    instruction: str | None = None
    last_result_at = -1
    last_assistant: tuple[int, str, bool] | None = None  # (message, text, made tool calls)
    note_answer: str | None = None  # the text of an assistant turn whose only calls were note tools
    user_last: str | None = None  # the last message's text when a user wrote it
    call: _Call | None
    malformed = 0  # tool calls without a usable function name (Trajectory.invalid_calls)
    for i, m in enumerate(messages, start=1):
        if not isinstance(m, dict):
            raise EpisodeError(f"message {i} is not an object (got {type(m).__name__})")
        role = m.get("role")
        if role not in ("system", "developer"):
            user_last = content_text(m.get("content")) if role == "user" else None
        if role == "user":
            note_answer = None
        if role == "assistant":
            raw_calls = m.get("tool_calls") or []
            if not isinstance(raw_calls, list):
                raise EpisodeError(f"message {i}: tool_calls must be a list")
            if isinstance(m.get("function_call"), dict):
                raw_calls = [*raw_calls, {"id": None, "function": m["function_call"]}]
            text, note_answer = answer_beside_notes(
                content_text(m.get("content")), [(_function_of(tc) or {}).get("name") for tc in raw_calls], note_answer
            )
            last_assistant = (i, text, bool(raw_calls))
            for j, tc in enumerate(raw_calls, start=1):
                fn = _function_of(tc)
                name = fn.get("name") if fn is not None else None
                if fn is None or not isinstance(name, str) or not name:
                    malformed += 1  # kept as a malformed call: counted, never silently dropped
                    warnings.append(f"message {i}: tool call {j} has no function name; counted as a malformed call")
                    continue
                args, ok = parse_arguments(
                    fn.get("arguments"), warnings=warnings, where=f"message {i}: the call of {name}"
                )
                call = _Call(id_key(tc.get("id")), name, args, ok, i, last_assistant[1])
                calls.append(call)
                if call.id is not None:
                    by_id.setdefault(call.id, []).append(call)
        elif role in ("tool", "function"):
            cid = id_key(m.get("tool_call_id"))
            if cid is not None:
                same = by_id.get(cid, [])
                call = next((c for c in same if not c.answered), None)
                if call is None:
                    what = "a second result" if same else "a result"
                    warnings.append(f"message {i}: {what} for tool_call_id {cid!r} with no open call; ignored")
                    continue
            else:
                open_calls = [c for c in calls if not c.answered]
                call = next((c for c in open_calls if c.name == m.get("name")), open_calls[0] if open_calls else None)
                if call is None:
                    warnings.append(f"message {i}: a tool result with no open tool call; ignored")
                    continue
            call.content, call.answered, call.error_flag = m.get("content"), True, m.get("error") is True
            last_result_at = i
        elif role == "user":
            if instruction is None:
                instruction = content_text(m.get("content"))
        elif role not in ("system", "developer"):
            warnings.append(f"message {i}: unknown role {role!r}; ignored")
    steps: list[ToolCallStep] = []
    per_message = Counter(c.where for c in calls)
    for c in calls:
        if ending_kind(c.name) == ToolKind.END and not c.answered:
            continue  # the agent's answer (ToolBench's Finish), no call of the world's tools
        if not c.answered:
            warnings.append(f"message {c.where}: the call of {c.name} (id {c.id!r}) has no result; left out")
            continue
        r = read_result(c.content, flag=c.error_flag, tool=c.name)
        code = "invalid_argument" if r.is_error and not c.ok_args else r.code
        step = make_step(
            len(steps) + 1, c.name, c.arguments, is_error=r.is_error, code=code, result=r.result, rule=r.rule
        )
        if per_message[c.where] > 1:
            step.batch = c.where  # parallel calls of one assistant message
        steps.append(step)
    traj = conversation_trajectory(
        steps,
        last_assistant,
        last_result_at,
        episode_id=episode_id,
        task_id=task_id,
        agent=agent,
        trial=trial,
        instruction=instruction,
        metadata=metadata,
        last_call=(calls[-1].name, calls[-1].arguments, calls[-1].text) if calls else None,
        user_last=user_last,
        repeated_handoffs=_trailing_repeats(calls),
    )
    traj.invalid_calls += malformed
    return traj, warnings


def _trailing_repeats(calls: list[_Call]) -> int:
    """How many identical calls (same tool, same arguments) end the list."""
    if not calls:
        return 0
    last, n = calls[-1], 0
    for c in reversed(calls):
        if c.name != last.name or c.arguments != last.arguments:
            break
        n += 1
    return n


def load(path: str | Path) -> LoadResult:
    """Read a JSON or JSONL file of chat-completions conversations (module docstring)."""
    return load_conversations(path, FORMAT, trajectory_from_messages)


__all__ = ["FORMAT", "load", "trajectory_from_messages"]
