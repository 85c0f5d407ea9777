"""Format ``claude-code``: Claude Code's session logs and its ``stream-json`` output.

Claude Code writes one JSON object a line, in two forms:

* its session log (``~/.claude/projects/<project>/<session>.jsonl``): ``{"type": "user" |
  "assistant", "message": <a Messages-API message>, "sessionId", "uuid", "parentUuid", "cwd",
  "isSidechain", "timestamp", ...}``, and lines of its own bookkeeping (``queue-operation``,
  ``summary``, ``last-prompt``, ``system``, ``file-history-snapshot``: skipped). EnterpriseBench
  stores its runs this way (``agent_trace.jsonl``; docs/labelling.md, "The seventh source");
* ``claude -p --output-format stream-json --verbose`` (what headless runs and Harbor's
  ``claude-code.txt`` keep): the same message lines keyed ``session_id``, a sub-agent's lines
  marked by ``parent_tool_use_id``, a first ``{"type": "system", "subtype": "init", "cwd",
  "model", "tools"}`` line and a last ``{"type": "result", "subtype", "is_error", "result"}`` line.

One assistant message is spread over several lines, one content block each, that share
``message.id``; each tool result is a ``user`` line of its own.

Conversion rules:

* One episode per ``sessionId`` (a file normally holds one session), its lines in file order.
* A user line recording a local slash command or its output (``<command-name>/exit``,
  ``<local-command-stdout>``: :data:`LOCAL_COMMAND_RE`) is no message to the agent: left out.
* A sub-agent's lines (``isSidechain: true``, or a ``parent_tool_use_id``) are left out: what the main agent saw of them is
  its ``Task`` / ``Agent`` call's result (a warning counts the lines left out).
* The lines of one assistant message are merged (same ``message.id``), so the ``tool_use`` blocks
  of one model turn form one batch; consecutive ``user`` lines are merged (the results of those
  calls); ``thinking`` blocks are dropped. The merged conversation is read by the ``anthropic``
  rules (:func:`mcpgym.evaluation.formats.anthropic.trajectory_from_messages`): ``is_error`` of
  each ``tool_result`` makes it an error, else the layered result reader decides.
* The agent is the first assistant line's ``message.model``; the session's ``cwd`` is kept in
  the metadata (a ``mkdir -p`` of it is no write: :func:`mcpgym.evaluation.scoring.call_kinds.mkdir_of_existing`).
* A session whose last assistant line is Claude Code's report of a failed API call
  (``isApiErrorMessage: true``, "API Error: 400 ...") ended because the provider failed: status
  ``errored``, that text its stop reason, and no final message. A ``stream-json`` result line
  says how the run ended: ``error_max_turns`` is ``limit`` (the harness's turn limit), another
  ``error_*`` subtype or ``is_error: true`` is ``errored``; the init line's ``tools`` are the
  tools the agent had (false success: a named write never attempted).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mcpgym.evaluation.formats.anthropic import trajectory_from_messages
from mcpgym.evaluation.formats.common import Episode, LoadResult, meta_str, read_json_records, read_text
from mcpgym.evaluation.formats.conversations import RUN_ERROR_MAX, convert_episode, record_meta
from mcpgym.evaluation.records.status import EpisodeStatus

FORMAT = "claude-code"
MESSAGE_TYPES = frozenset(["user", "assistant"])
"""Line types that carry a message; every other type is Claude Code's bookkeeping."""
DROPPED_BLOCKS = frozenset(["thinking", "redacted_thinking"])
"""Content blocks left out of the conversation (the model's hidden reasoning)."""


SESSION_KEYS = ("sessionId", "session_id")
"""Where a line names its session: the session log's key, then ``stream-json``'s."""


def session_of(v: Any) -> str | None:
    """The session a Claude Code line belongs to (:data:`SESSION_KEYS`), or None."""
    if not isinstance(v, dict):
        return None
    return next((meta_str(v[k]) for k in SESSION_KEYS if meta_str(v.get(k)) is not None), None)


def is_line(v: Any) -> bool:
    """True for a Claude Code line that carries a message, in either form (``auto`` uses it)."""
    return (
        isinstance(v, dict)
        and isinstance(v.get("type"), str)
        and v["type"] in MESSAGE_TYPES
        and isinstance(v.get("message"), dict)
        and session_of(v) is not None
    )


def _json_type(v: Any) -> str:
    """The JSON name of a value's type (``null``, ``number``, ``string``, ...)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    return {int: "number", float: "number", str: "string", list: "list", dict: "object"}.get(type(v), type(v).__name__)


def _malformed(v: Any) -> str | None:
    """Why a record cannot be a Claude Code line, when it looks like none (a JSON value that is no
    object) or like a broken one (a message line whose ``message``, ``content`` or session id has
    the wrong type); None for a line to read or skip. A broken line is a problem naming its line,
    never dropped without a word."""
    if not isinstance(v, dict):
        return f"a JSON {_json_type(v)}, not an object"
    if v.get("type") not in ("user", "assistant"):
        return None  # bookkeeping (queue-operation, summary, system, result, ...)
    if not isinstance(v.get("message"), dict):
        return f"its message is a {_json_type(v.get('message'))}, not an object"
    content = v["message"].get("content")
    if content is not None and not isinstance(content, (str, list)):
        return f"its message content is a {_json_type(content)}, not text or a list of blocks"
    keys = [k for k in SESSION_KEYS if k in v]
    if keys and session_of(v) is None:
        return f"its {keys[0]} is a {_json_type(v[keys[0]])}, not a string"
    return None


def _sub_agent(d: dict[str, Any]) -> bool:
    """A sub-agent's line: ``isSidechain`` (session log) or a ``parent_tool_use_id`` (stream-json)."""
    return d.get("isSidechain") is True or isinstance(d.get("parent_tool_use_id"), str)


def session_messages(lines: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The Messages-API conversation of one session's lines (module docstring), and how many
    sub-agent lines were left out.

    Args:
        lines: the session's message lines (:func:`is_line`), in file order.
    """
    msgs: list[dict[str, Any]] = []
    current: Any = None  # message.id of the assistant message being merged
    sidechain = 0
    for d in lines:
        if _sub_agent(d):
            sidechain += 1
            continue
        m = d["message"]
        content = m.get("content")
        if d["type"] == "user" and _local_command(content):
            continue  # Claude Code's record of a local slash command, no message to the agent
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}]
        else:
            blocks = list(content) if isinstance(content, list) else []
        blocks = [b for b in blocks if not (isinstance(b, dict) and str(b.get("type")) in DROPPED_BLOCKS)]
        role = d["type"]
        merge = bool(msgs) and msgs[-1]["role"] == role and (role == "user" or m.get("id") == current)
        if merge:
            msgs[-1]["content"].extend(blocks)
        elif blocks:
            msgs.append({"role": role, "content": blocks})
        if role == "assistant":
            current = m.get("id")
    return [x for x in msgs if x["content"]], sidechain


LOCAL_COMMAND_RE = re.compile(r"^\s*<(?:local-command-(?:stdout|stderr|caveat)|command-(?:name|message|args))>")
"""The start of a ``user`` line with which Claude Code records a local slash command (``/exit``,
``/clear``) or its output: ``<command-name>/exit</command-name>``, ``<local-command-stdout>See
ya!</local-command-stdout>``, the caveat telling the model not to respond to them. No message to
the agent: a session the user left with ``/exit`` after the agent's answer ended with that answer."""


def _local_command(content: Any) -> bool:
    """True for the content of a user line that records a local command (:data:`LOCAL_COMMAND_RE`)."""
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        content = content[0].get("text")
    return isinstance(content, str) and LOCAL_COMMAND_RE.match(content) is not None


def _api_error(lines: list[dict[str, Any]]) -> str | None:
    """The text of the session's last assistant line when Claude Code wrote it to report a failed
    API call (``isApiErrorMessage``), else None."""
    last = next((d for d in reversed(lines) if d["type"] == "assistant" and not _sub_agent(d)), None)
    if last is None or last.get("isApiErrorMessage") is not True:
        return None
    content = last["message"].get("content")
    texts = [b.get("text", "") for b in content if isinstance(b, dict)] if isinstance(content, list) else [content]
    return " ".join(t for t in texts if isinstance(t, str)).strip() or "API error"


def _run_end(result_line: dict[str, Any] | None) -> tuple[EpisodeStatus, str] | None:
    """How a ``stream-json`` result line says the run ended, when not by the agent's answer:
    ``(limit, why)`` for the turn limit, ``(errored, why)`` for another error; None for success."""
    if result_line is None:
        return None
    subtype = str(result_line.get("subtype") or "")
    text = result_line.get("result")
    said = f": {text.strip()[:RUN_ERROR_MAX]}" if isinstance(text, str) and text.strip() else ""
    if subtype == "error_max_turns":
        return EpisodeStatus.LIMIT, "the harness's turn limit (error_max_turns)"
    if subtype.startswith("error") or result_line.get("is_error") is True:
        return EpisodeStatus.ERRORED, f"the run failed ({subtype or 'is_error'}){said}"
    return None


def load(path: str | Path) -> LoadResult:
    """Read a Claude Code session log or ``stream-json`` output (module docstring; JSON Lines,
    or one JSON array of its lines); lines that are no message are skipped, a file without one
    is a problem (never a silent zero)."""
    p = Path(path)
    result = LoadResult(file=str(path), format=FORMAT)
    text = read_text(p, result)
    if text is None:
        return result
    records, _ = read_json_records(p, text, result)
    sessions: dict[str, list[dict[str, Any]]] = {}
    first_line: dict[str, int | None] = {}
    init: dict[str, dict[str, Any]] = {}
    ends: dict[str, dict[str, Any]] = {}
    for line, record in records:
        for value in record if isinstance(record, list) else [record]:  # JSON Lines, or a JSON array of lines
            why = _malformed(value)
            if why is not None:
                result.problem(f"not a Claude Code line: {why}", line=line)
                continue
            sid = session_of(value)
            if sid is None:
                continue
            if is_line(value):
                sessions.setdefault(sid, []).append(value)
                first_line.setdefault(sid, line)
            elif value.get("type") == "system" and value.get("subtype") == "init":
                init.setdefault(sid, value)
            elif value.get("type") == "result":
                ends[sid] = value
    for sid, lines in sessions.items():
        if sid in init and sid not in ends:
            result.problem(
                f"session {sid}: the stream-json output ends without its result line (the run was cut short)",
                line=first_line[sid],
                severity="warning",
            )
        _add_session(result, p, sid, lines, first_line[sid], init.get(sid, {}), ends.get(sid))
    if not result.episodes and not result.problems:
        result.problem("no Claude Code message line in the file (expected lines with type, message and a session id)")
    return result


def _add_session(
    result: LoadResult,
    p: Path,
    sid: str,
    lines: list[dict[str, Any]],
    line: int | None,
    init: dict[str, Any],
    end: dict[str, Any] | None,
) -> None:
    """Convert one session's lines into an episode of ``result`` (a conversion that fails is a
    problem naming the session)."""
    messages, sidechain = session_messages(lines)
    model = next((d["message"].get("model") for d in lines if d["type"] == "assistant"), None) or init.get("model")
    cwd = next((d["cwd"] for d in lines if isinstance(d.get("cwd"), str)), None) or init.get("cwd")
    rec: dict[str, Any] = {"model": model, "cwd": cwd}
    meta: dict[str, Any] = {"format": FORMAT, "file": str(p), "episode": sid, "session": sid, **record_meta(rec)}
    tools = [t for t in init.get("tools") or [] if isinstance(t, str)]
    if tools:
        meta["tools"] = tools
    converted = convert_episode(result, trajectory_from_messages, messages, rec, meta, f"{p.name}:{sid}", sid, line)
    if converted is None:
        return
    traj, warnings = converted
    if sidechain:
        warnings.append(f"{sidechain} sub-agent line(s) left out: the main agent saw their result")
    failed = _api_error(lines)
    ended = (EpisodeStatus.ERRORED, f"the provider failed: {failed[:RUN_ERROR_MAX]}") if failed else _run_end(end)
    if ended is not None:
        traj = traj.model_copy(update={"status": ended[0], "stop_reason": ended[1], "final_message": ""})
    result.add(Episode(label=sid, trajectory=traj, line=line, warnings=warnings))


__all__ = [
    "DROPPED_BLOCKS",
    "FORMAT",
    "MESSAGE_TYPES",
    "SESSION_KEYS",
    "is_line",
    "load",
    "session_messages",
    "session_of",
]
