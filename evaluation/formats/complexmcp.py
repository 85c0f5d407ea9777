"""Format ``complexmcp``: the text transcripts of the ComplexMCP benchmark.

One text per episode: the agent's prose interleaved with ``<tool>`` blocks (a JSON object
with ``name`` and ``arguments``), each followed by a ``<response>`` block (the result), the
episode ending with a final message carrying ``[END]``. Tool names are bare
(``send_message``, ``ask_for_privilege``): tools no catalog knows are classified by the
heuristic of :mod:`mcpgym.evaluation.catalog`.

Where the texts sit:

* a plain text file (``.txt``, or anything not starting like JSON): one episode, or several,
  each ending at an ``[END]`` marker;
* a JSON document that is a string, a list of strings, an object or a list of objects;
* JSON Lines, one string or object per line.

In an object the transcript is the first string field (in key order; one level of nested
objects is searched too) that contains ``<tool>``, else the first that contains ``[END]``
(an episode without tool calls). ``agent`` / ``model``, ``task_id``, ``trial``,
``episode_id`` / ``id`` and ``instruction`` / ``query`` / ``question`` are read when present.

Results: a JSON object, a single-quoted Python-literal dict (read with
:func:`ast.literal_eval`), or plain text. A dict's ``status`` decides:

====================================== =====================================================
``status``                             step
====================================== =====================================================
``ok`` / ``success``                   success
``failed`` (refused: not found,        error; code ``permission_denied``, ``not_found`` or
precondition, missing privilege)       ``precondition_failed`` guessed from ``output``
                                       (:data:`~mcpgym.evaluation.formats.common.ERROR_TEXT_PATTERNS`,
                                       default ``precondition_failed``)
``error`` (a bad call)                 error ``invalid_argument``
``internal error`` / ``internel error`` error ``transient``: an injected network or password
(sic)                                  fault, marked inferred
anything else                          error; code guessed from the text
====================================== =====================================================

A dict without ``status`` and plain text follow the ``openai`` content rule (``{"error":
...}`` or text starting with ``Error`` is an error).

Malformed transcripts: an unclosed ``<tool>`` or ``<response>`` block, a closing tag
without its opening tag, or a ``<response>`` that follows no ``<tool>`` makes the episode
unscorable (a problem names the episode and the line). A ``<tool>`` block whose JSON does not
parse (or has no ``name``) is the agent's malformed call: it counts as an invalid call. A
``<tool>`` with no ``<response>`` is left out (a warning names it). A transcript without
``[END]`` is scored with status ``limit`` (it may have been cut short, so errors in its last
calls do not count as given up) and a warning.
"""

from __future__ import annotations

import ast
import json
import re
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
from mcpgym.evaluation.formats.results import (
    ERROR_PREFIX_RE,
    error_payload,
    guess_error_code,
    interpret_result,
    make_step,
    parse_arguments,
)
from mcpgym.evaluation.trajectory import Trajectory

FORMAT = "complexmcp"
END_MARKER = "[END]"
OK_STATUSES: frozenset[str] = frozenset({"ok", "success", "succeeded", "successful"})
FAILED_STATUSES: frozenset[str] = frozenset({"failed", "fail", "failure"})
INTERNAL_STATUSES: frozenset[str] = frozenset({"internal error", "internel error", "internal"})
FAILED_CODES: tuple[str, ...] = ("permission_denied", "not_found", "precondition_failed")
INSTRUCTION_KEYS: tuple[str, ...] = ("instruction", "query", "question", "task")
TEXT_SUFFIXES: frozenset[str] = frozenset({".txt", ".text", ".md"})
"""Files read as plain text whatever they start with (others: JSON when they start like JSON)."""
_TAG_RE = re.compile(r"<(/?)(tool|response)>")


def _literal(text: str) -> Any:
    s = text.strip()
    try:
        return json.loads(s)
    except ValueError:
        pass
    if s[:1] in ("{", "["):
        try:
            value = ast.literal_eval(s)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
        return json.loads(json.dumps(value, default=str))  # tuples -> lists, sets/bytes -> str
    return None


def interpret_response(body: str) -> tuple[bool, str | None, Any]:
    """``(is_error, code, result)`` of a ``<response>`` block (the status table above)."""
    value = _literal(body)
    if isinstance(value, dict) and "status" in value:
        status = re.sub(r"[\s_]+", " ", str(value["status"]).strip().lower())
        output = value.get("output", value.get("message", ""))
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
        if status in OK_STATUSES:
            return False, None, value
        if status in FAILED_STATUSES:
            code = guess_error_code(text, allowed=FAILED_CODES, default="precondition_failed")
        elif status == "error":
            code = "invalid_argument"
        elif status in INTERNAL_STATUSES:
            code = "transient"
        else:
            code = guess_error_code(text)
        return True, code, error_payload(code, text, status=value["status"])
    if value is not None:
        return interpret_result(json.dumps(value, ensure_ascii=False))
    text = body.strip()
    if ERROR_PREFIX_RE.match(text):
        return interpret_result(text)
    return False, None, text


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def trajectory_from_text(text: str, *, episode_id: str, agent: str = EXTERNAL_AGENT, task_id: str | None = None,
                         trial: int = 0, instruction: str | None = None, metadata: dict[str, Any] | None = None,
                         first_line: int | None = None) -> tuple[Trajectory, list[str]]:
    """Convert one ComplexMCP transcript into a :class:`Trajectory` (no ledger).

    Args:
        text: the transcript.
        episode_id, agent, task_id, trial, instruction, metadata: copied into the trajectory.
        first_line: the file line the transcript starts on (plain text files); messages then
            name file lines, else lines of the transcript.

    Returns:
        ``(trajectory, warnings)``.

    Raises:
        EpisodeError: for an unclosed block, a stray closing tag or a ``<response>`` that
            follows no ``<tool>``; the message names the line.
    """

    def where(pos: int) -> str:
        n = _line_of(text, pos)
        return f"line {first_line + n - 1}" if first_line is not None else f"transcript line {n}"

    blocks: list[tuple[str, str, int]] = []  # (tag, body, start)
    open_tag: tuple[str, int, int] | None = None  # (tag, start, body start)
    last_end = 0
    for m in _TAG_RE.finditer(text):
        closing, tag = m.group(1) == "/", m.group(2)
        if open_tag is None:
            if closing:
                raise EpisodeError(f"</{tag}> at {where(m.start())} closes no <{tag}> block")
            open_tag = (tag, m.start(), m.end())
        elif closing and tag == open_tag[0]:
            blocks.append((tag, text[open_tag[2]:m.start()], open_tag[1]))
            open_tag, last_end = None, m.end()
        else:
            raise EpisodeError(f"unclosed <{open_tag[0]}> block opened at {where(open_tag[1])} "
                               f"(the next tag is <{m.group(1)}{tag}> at {where(m.start())})")
    if open_tag is not None:
        raise EpisodeError(f"unclosed <{open_tag[0]}> block opened at {where(open_tag[1])}")

    warnings: list[str] = []
    steps = []
    invalid = 0
    i = 0
    while i < len(blocks):
        tag, body, start = blocks[i]
        if tag == "response":
            raise EpisodeError(f"the <response> block at {where(start)} follows no <tool> block")
        response = blocks[i + 1] if i + 1 < len(blocks) and blocks[i + 1][0] == "response" else None
        i += 2 if response else 1
        call = _literal(body)
        name = call.get("name") if isinstance(call, dict) else None
        if not isinstance(name, str) or not name:
            invalid += 1 if response else 0
            if not response:
                warnings.append(f"the malformed <tool> block at {where(start)} has no <response>; left out")
            continue
        if response is None:
            warnings.append(f"the <tool> call of {name} at {where(start)} has no <response>; left out")
            continue
        raw = next((call[k] for k in ("arguments", "parameters", "args", "input") if k in call), {})
        args, ok = parse_arguments(raw)
        is_error, code, result = interpret_response(response[1])
        if is_error and not ok:
            code = "invalid_argument"
        steps.append(make_step(len(steps) + 1, name, args, is_error=is_error, code=code, result=result))

    tail = text[last_end:]
    end_at = tail.find(END_MARKER)
    final = (tail[:end_at] if end_at >= 0 else tail).strip()
    status, stop_reason = "completed", None
    if END_MARKER not in text:
        status, stop_reason = "limit", "no [END] marker: the transcript may have been cut short"
        warnings.append(f"no {END_MARKER} marker: scored as cut short (status limit)")
    traj = Trajectory(episode_id=episode_id, task_id=task_id, agent=agent, trial=trial, instruction=instruction,
                      steps=steps, final_message=final, ledger=None, status=status, stop_reason=stop_reason,
                      invalid_calls=invalid, metadata=dict(metadata or {}))
    return traj, warnings


def _transcript_field(rec: dict[str, Any]) -> tuple[str, str] | None:
    """(key, text) of the transcript field of a record (module docstring), or None."""
    candidates: list[tuple[str, str]] = []
    for k, v in rec.items():
        if isinstance(v, str):
            candidates.append((k, v))
        elif isinstance(v, dict):
            candidates.extend((f"{k}.{k2}", v2) for k2, v2 in v.items() if isinstance(v2, str))
    for marker in ("<tool>", END_MARKER):
        for k, v in candidates:
            if marker in v:
                return k, v
    return None


def split_episodes(text: str) -> list[tuple[int, str]]:
    """Split a plain text of several episodes after each ``[END]`` marker.

    Returns:
        ``[(first_line, text), ...]``; whitespace after the last marker is dropped.
    """
    out: list[tuple[int, str]] = []
    pos = 0
    while pos < len(text):
        at = text.find(END_MARKER, pos)
        end = len(text) if at < 0 else at + len(END_MARKER)
        chunk = text[pos:end]
        if chunk.strip():
            lead = len(chunk) - len(chunk.lstrip())
            out.append((_line_of(text, pos + lead), chunk[lead:]))
        pos = end
    return out


def load(path: str | Path) -> LoadResult:
    """Read ComplexMCP transcripts from a text, JSON or JSON Lines file (module docstring)."""
    p = Path(path)
    result = LoadResult(file=str(path), format=FORMAT)
    text = read_text(p, result)
    if text is None:
        return result

    def convert(transcript: str, label: str, line: int | None, rec: dict[str, Any], first_line: int | None) -> None:
        meta: dict[str, Any] = {"format": FORMAT, "file": str(path), "episode": label}
        instruction = next((rec[k] for k in INSTRUCTION_KEYS if isinstance(rec.get(k), str) and rec[k] != transcript),
                           None)
        episode_id = meta_str(rec.get("episode_id")) or meta_str(rec.get("id")) or f"{p.name}:{label}"
        try:
            traj, warnings = trajectory_from_text(
                transcript, episode_id=episode_id, agent=record_agent(rec) or EXTERNAL_AGENT,
                task_id=meta_str(rec.get("task_id")), trial=record_trial(rec), instruction=instruction, metadata=meta,
                first_line=first_line)
        except EpisodeError as exc:
            result.problem(str(exc), line=line, episode=label)
            return
        except Exception as exc:  # noqa: BLE001 - a malformed episode must not stop the others
            result.problem(f"cannot be converted ({type(exc).__name__}: {exc})", line=line, episode=label)
            return
        result.add(Episode(label=label, trajectory=traj, line=line, warnings=warnings))

    def from_value(value: Any, label: str, line: int | None) -> None:
        if isinstance(value, str):
            convert(value, label, line, {}, None)
        elif isinstance(value, dict):
            found = _transcript_field(value)
            if found is None:
                result.problem("no string field holds a transcript (none contains <tool> or [END])", line=line,
                               episode=label)
                return
            task = meta_str(value.get("task_id"))
            convert(found[1], label + (f" task {task}" if task is not None else ""), line, value, None)
        else:
            result.problem(f"expected a transcript string or an object holding one, got {type(value).__name__}",
                           line=line, episode=label)

    if p.suffix.lower() in TEXT_SUFFIXES or text.lstrip()[:1] not in ("[", "{", '"'):
        chunks = split_episodes(text)
        if not chunks:
            result.problem("the file is empty")
        for n, (first, chunk) in enumerate(chunks, start=1):
            convert(chunk, f"episode {n}", first, {}, first)
        return result
    records, jsonl = read_json_records(p, text, result)
    for line, value in records:
        if not jsonl and isinstance(value, list):
            for i, item in enumerate(value, start=1):
                from_value(item, f"record {i}", None)
        else:
            from_value(value, f"line {line}" if line is not None else "transcript", line)
    if not result.episodes and not result.problems:
        result.problem("no transcripts in the file", severity="warning")
    return result


__all__ = ["END_MARKER", "FORMAT", "interpret_response", "load", "split_episodes", "trajectory_from_text"]
