"""Format ``complexmcp``: the text transcripts of the ComplexMCP benchmark.

One text per episode, as ComplexMCP's harness (``client/agent.py``) builds it: its turns
joined by newlines, where an assistant turn that calls a tool ends with ``</tool>`` (the
harness stops generation there) and is followed by the tool's answer
``<response>\\n{result}\\n</response>``; the episode ends with an assistant turn ending in
``[END]``. Tool names are bare (``send_message``, ``ask_for_privilege``); the built-in
``complexmcp`` catalog (:mod:`mcpgym.evaluation.scoring.foreign_catalogs`) classifies them.

Parsing follows the harness, not tag balance:

* A call is a ``</tool>`` followed (whitespace apart) by a ``<response>`` block. Its JSON is
  the text after the **last** ``<tool>`` before that ``</tool>`` in the same turn, as the
  harness's parser takes it, so ``<tool>`` mentioned in prose before the real call is
  harmless. No ``<tool>``, JSON that does not parse, or no ``name``: the agent's malformed
  call (an invalid call, not a step). ``arguments`` (else ``parameters`` / ``args`` /
  ``input``) are the arguments, a JSON string inside is parsed.
* ``[END]`` ends the episode only where the harness stops: at the end of a turn (the end of
  a line outside any ``<response>`` block). ``[END]`` quoted inside a query, a tool result
  or mid-sentence is text. The final message is the prose after the last response, up to
  that ``[END]``. No final ``[END]`` and no hand-off or end call last: scored with status ``limit`` (the transcript may have
  been cut short, so errors in its last calls do not count as given up) and a warning.
* A ``<tool>`` tag that opens a block (at the start of a line, followed by ``{``) that no
  ``</tool>`` closes before the next ``<response>`` (or the end) makes the episode
  unscorable; the problem names the line.
* A ``</tool>`` without a ``<response>`` after it (a transcript cut mid-call) is left out
  with a warning; such blocks are counted (``metadata["unparsed_tool_blocks"]``) as blocks
  that failed to parse in the scorability summary, so a transcript whose JSON escapes were
  never decoded (``<tool>\\n{\\"name\\"...``) is loudly not scored, never a silent zero.

Results are read by the shared detector
(:func:`mcpgym.evaluation.formats.layers.read_result`): JSON or single-quoted
Python-literal dicts (the harness prints its own error dicts that way), ``{"status",
"output"}`` envelopes (``ok`` success; ``failed`` a refusal, code guessed from the output;
``error`` a bad call; ``internal error`` / ``internel error`` an injected fault, inferred
``transient``), ``Error: ...`` text; anything else is a success.

Where the transcripts sit (every string is decoded as long as it is itself a JSON-encoded
string or object, as ComplexMCP's ``data.parquet`` stores its ``output`` column):

* a plain text file (``.txt``, or anything not starting like JSON): one episode, or several,
  each ending at a turn-ending ``[END]``;
* a JSON document that is a string, a list of strings, an object or a list of objects;
* JSON Lines, one string or object per line.

In an object the transcript field is chosen by its structure: the string field (one level
of nested objects is searched too) holding ``</tool>``-then-``<response>`` calls, else one
ending with ``[END]`` (an answer without tool calls), else one containing ``<tool>`` or
``[END]``; on a tie a field not named like an instruction (``query``, ``instruction``,
``question``, ``task``, ``prompt``) wins, then the first in key order. ``agent`` /
``model``, ``task_id``, ``trial``, ``episode_id`` / ``id``, ``level`` (1-3), ``apps`` and
the instruction (``instruction`` / ``query`` / ``question`` / ``task`` / ``prompt``) are
read when present. A ``tool_cnt`` field (ComplexMCP's own count of the calls that named a
tool, per tool and status) is checked against the calls parsed; a mismatch is a warning
naming both counts.
"""

from __future__ import annotations

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
from mcpgym.evaluation.formats.endings import ending_kind
from mcpgym.evaluation.formats.layers import Reading, read_result
from mcpgym.evaluation.formats.results import (
    make_step,
    parse_arguments,
    parse_result_text,
)
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory
from mcpgym.kernel.wording import counted

FORMAT = "complexmcp"
END_MARKER = "[END]"
INSTRUCTION_KEYS: tuple[str, ...] = ("instruction", "query", "question", "task", "prompt")
TEXT_SUFFIXES: frozenset[str] = frozenset({".txt", ".text", ".md"})
"""Files read as plain text whatever they start with (others: JSON when they start like JSON)."""
MAX_DECODE_LAYERS = 8
"""JSON-encoding layers peeled off a string at most."""

_CALL_RE = re.compile(r"</tool>\s*<response>")
_RESPONSE_END = "</response>"
_OPENER_RE = re.compile(r"^[ \t]*<tool>\s*\{", re.MULTILINE)
_TAG_RE = re.compile(r"<(/?)(tool|response)>")
_END_AT_EOL_RE = re.compile(r"\[END\][ \t]*(?=\r?\n|$)")


def interpret_response(body: str) -> Reading:
    """The verdict on a ``<response>`` block (the shared layered reader)."""
    return read_result(body)


def decode_layers(value: Any) -> Any:
    """Peel JSON encodings off ``value``: a string that is a JSON string, object or list is
    replaced by what it encodes, again and again (at most :data:`MAX_DECODE_LAYERS` times).
    A transcript (prose, ``<tool>`` blocks) does not parse as JSON and is returned as is."""
    for _ in range(MAX_DECODE_LAYERS):
        if not isinstance(value, str):
            return value
        s = value.strip()
        if not s or s[0] not in '"[{' or s[-1] not in '"]}':
            return value
        try:
            value = json.loads(s)
        except ValueError:
            return value
    return value


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _literal(body: str) -> Any:
    ok, value = parse_result_text(body)
    return value if ok else None


def trajectory_from_text(
    text: str,
    *,
    episode_id: str,
    agent: str = EXTERNAL_AGENT,
    task_id: str | None = None,
    trial: int = 0,
    instruction: str | None = None,
    metadata: dict[str, Any] | None = None,
    first_line: int | None = None,
    level: int | None = None,
    apps: list[str] | None = None,
) -> tuple[Trajectory, list[str]]:
    """Convert one ComplexMCP transcript into a :class:`Trajectory` (no ledger).

    Args:
        text: the transcript.
        episode_id, agent, task_id, trial, instruction, metadata, level, apps: copied into
            the trajectory.
        first_line: the file line the transcript starts on (plain text files); messages then
            name file lines, else lines of the transcript.

    Returns:
        ``(trajectory, warnings)``; the trajectory's ``invalid_calls`` counts the malformed
        ``<tool>`` blocks.

    Raises:
        EpisodeError: for a ``<tool>`` block that is never closed (the message names the
            line).
    """

    def where(pos: int) -> str:
        n = _line_of(text, pos)
        return f"line {first_line + n - 1}" if first_line is not None else f"transcript line {n}"

    warnings: list[str] = []
    steps: list[ToolCallStep] = []
    invalid = 0
    pos = 0  # start of the current assistant turn(s)
    tail_start = 0  # where the text after the last response starts
    responses: list[tuple[int, int]] = []
    while True:
        m = _CALL_RE.search(text, pos)
        if m is None:
            break
        turn = text[pos : m.start()]
        _check_openers(turn, pos, where, closed_at=m.start())
        body_end = text.find(_RESPONSE_END, m.end())
        if body_end < 0:
            warnings.append(f"the <response> at {where(m.end())} is never closed (cut short?); the call is left out")
            tail_start = len(text)
            pos = len(text)
            break
        responses.append((m.end(), body_end))
        start = turn.rfind("<tool>")
        call = _literal(turn[start + len("<tool>") :]) if start >= 0 else None
        name = call.get("name") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(name, str) or not name:
            invalid += 1
        else:
            raw: Any = next((call[k] for k in ("arguments", "parameters", "args", "input") if k in call), {})
            args, ok = parse_arguments(raw)
            r = interpret_response(text[m.end() : body_end])
            code = "invalid_argument" if r.is_error and not ok else r.code
            steps.append(
                make_step(len(steps) + 1, name, args, is_error=r.is_error, code=code, result=r.result, rule=r.rule)
            )
        pos = tail_start = body_end + len(_RESPONSE_END)

    tail = text[tail_start:]
    _check_openers(tail, tail_start, where, closed_at=None)
    dangling = tail.find("</tool>")
    cut_call = dangling >= 0 and "<tool>" in tail[:dangling]
    if cut_call:
        warnings.append(f"the <tool> call ending at {where(tail_start + dangling)} has no <response>; left out")
    # every </tool> outside a response ends a turn the harness took for a call: those not
    # parsed as one failed to parse (e.g. a transcript whose JSON escapes were never decoded)
    closers = text.count("</tool>") - sum(text.count("</tool>", a, b) for a, b in responses)
    unparsed = max(0, closers - len(steps) - invalid)
    meta = dict(metadata or {})
    if unparsed:
        meta["unparsed_tool_blocks"] = unparsed
        if unparsed > int(cut_call):
            warnings.append(
                f"{counted(unparsed, '</tool> block')} {'is' if unparsed == 1 else 'are'} not followed by a <response> block and were not "
                "parsed as calls (is the transcript still JSON-encoded?)"
            )
    ends = list(_END_AT_EOL_RE.finditer(tail))
    status, stop_reason = EpisodeStatus.COMPLETED, None
    if ends:
        final = tail[: ends[-1].start()].strip()
    elif steps and ending_kind(steps[-1].tool) is not None:
        final = tail.strip()  # the agent handed off or ended the episode itself
        stop_reason = f"the agent ended the episode ({steps[-1].tool})"
    else:
        final = tail.strip()
        status, stop_reason = EpisodeStatus.LIMIT, "no [END] marker: the transcript may have been cut short"
        warnings.append(f"no {END_MARKER} marker: scored as cut short (status limit)")
    traj = Trajectory(
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
        invalid_calls=invalid,
        level=level,
        apps=list(apps or []),
        metadata=meta,
    )
    return traj, warnings


def _check_openers(segment: str, offset: int, where: Any, *, closed_at: int | None) -> None:
    """Raise :class:`EpisodeError` for a block-opening ``<tool>`` in ``segment`` (a line
    starting with ``<tool>`` then ``{``; prose mentions are not openers) that is never
    closed: a ``<response>`` follows it inside a turn (``closed_at`` given), or no
    ``</tool>`` follows it in the text after the last response (``closed_at`` None)."""
    for m in _OPENER_RE.finditer(segment):
        tag_at = segment.index("<tool>", m.start())
        after = segment[tag_at + len("<tool>") :]
        if closed_at is not None:
            if "<response>" not in after:
                continue
        elif "</tool>" in after:
            continue
        nxt = _TAG_RE.search(segment, tag_at + len("<tool>"))
        detail = ""
        if nxt is not None:
            detail = f" (the next tag is <{nxt.group(1)}{nxt.group(2)}> at {where(offset + nxt.start())})"
        raise EpisodeError(f"unclosed <tool> block opened at {where(offset + tag_at)}{detail}")


def _structure_score(text: str) -> int:
    if _CALL_RE.search(text) and _RESPONSE_END in text:
        return 3
    if text.rstrip().endswith(END_MARKER):
        return 2
    if "<tool>" in text or END_MARKER in text:
        return 1
    return 0


def transcript_field(rec: dict[str, Any]) -> tuple[str, str] | None:
    """(key, text) of the transcript field of a record (module docstring), or None.

    String fields are decoded first (:func:`decode_layers`); a field that decodes to an
    object is searched one level down.
    """
    candidates: list[tuple[str, str]] = []
    for k, v in rec.items():
        v = decode_layers(v)
        if isinstance(v, str):
            candidates.append((str(k), v))
        elif isinstance(v, dict):
            for k2, v2 in v.items():
                v2 = decode_layers(v2)
                if isinstance(v2, str):
                    candidates.append((f"{k}.{k2}", v2))
    best: tuple[float, int] | None = None
    found: tuple[str, str] | None = None
    for i, (k, v) in enumerate(candidates):
        score = _structure_score(v)
        if score == 0:
            continue
        rank = (score - (0.5 if k.rsplit(".", 1)[-1].lower() in INSTRUCTION_KEYS else 0.0), -i)
        if best is None or rank > best:
            best, found = rank, (k, v)
    return found


def split_episodes(text: str) -> list[tuple[int, str]]:
    """Split a plain text of several episodes after each turn-ending ``[END]`` (at the end
    of a line, outside any ``<response>`` block).

    Returns:
        ``[(first_line, text), ...]``; whitespace after the last marker is dropped.
    """
    blocked: list[tuple[int, int]] = []
    for m in _CALL_RE.finditer(text):
        end = text.find(_RESPONSE_END, m.end())
        blocked.append((m.end(), len(text) if end < 0 else end))
    cuts = [m.end() for m in _END_AT_EOL_RE.finditer(text) if not any(a <= m.start() < b for a, b in blocked)]
    out: list[tuple[int, str]] = []
    pos = 0
    for end in [*cuts, len(text)]:
        chunk = text[pos:end]
        if chunk.strip():
            lead = len(chunk) - len(chunk.lstrip())
            out.append((_line_of(text, pos + lead), chunk[lead:]))
        pos = end
    return out


def _level(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 3 else None


def _apps(value: Any) -> list[str]:
    value = decode_layers(value)
    if isinstance(value, list) and all(isinstance(a, str) for a in value):
        return list(value)
    return []


def _tool_cnt_total(value: Any) -> int | None:
    value = decode_layers(value)
    if not isinstance(value, dict):
        return None
    total = 0
    for per_status in value.values():
        if not isinstance(per_status, dict):
            return None
        for n in per_status.values():
            if not isinstance(n, int) or isinstance(n, bool):
                return None
            total += n
    return total


def load(path: str | Path) -> LoadResult:
    """Read ComplexMCP transcripts from a text, JSON or JSON Lines file (module docstring)."""
    p = Path(path)
    result = LoadResult(file=str(path), format=FORMAT)
    text = read_text(p, result)
    if text is None:
        return result

    def convert(transcript: str, label: str, line: int | None, rec: dict[str, Any], first_line: int | None) -> None:
        meta: dict[str, Any] = {"format": FORMAT, "file": str(path), "episode": label}
        instruction = None
        for k in INSTRUCTION_KEYS:
            v = decode_layers(rec.get(k))
            if isinstance(v, str) and v != transcript:
                instruction = v
                break
        episode_id = meta_str(rec.get("episode_id")) or meta_str(rec.get("id")) or f"{p.name}:{label}"
        try:
            traj, warnings = trajectory_from_text(
                transcript,
                episode_id=episode_id,
                agent=record_agent(rec) or EXTERNAL_AGENT,
                task_id=meta_str(rec.get("task_id")),
                trial=record_trial(rec),
                instruction=instruction,
                metadata=meta,
                first_line=first_line,
                level=_level(rec.get("level")),
                apps=_apps(rec.get("apps")),
            )
        except EpisodeError as exc:
            result.problem(str(exc), line=line, episode=label)
            return
        except Exception as exc:  # noqa: BLE001 - a malformed episode must not stop the others
            result.problem(f"cannot be converted ({type(exc).__name__}: {exc})", line=line, episode=label)
            return
        expected = _tool_cnt_total(rec.get("tool_cnt"))
        if expected is not None and expected != len(traj.steps):
            # the harness counts the calls that named a tool (not the malformed blocks)
            warnings.append(
                f"tool_cnt counts {counted(expected, 'call')} but {len(traj.steps)} {'was' if len(traj.steps) == 1 else 'were'} parsed"
            )
        result.add(Episode(label=label, trajectory=traj, line=line, warnings=warnings))

    def from_value(value: Any, label: str, line: int | None) -> None:
        value = decode_layers(value)
        if isinstance(value, str):
            convert(value, label, line, {}, None)
        elif isinstance(value, dict):
            found = transcript_field(value)
            if found is None:
                result.problem(
                    "no string field holds a transcript (none contains <tool> or [END])", line=line, episode=label
                )
                return
            task = meta_str(value.get("task_id"))
            convert(found[1], label + (f" task {task}" if task is not None else ""), line, value, None)
        elif isinstance(value, list) and line is not None:
            for i, item in enumerate(value, start=1):
                from_value(item, f"{label} item {i}", line)
        else:
            result.problem(
                f"expected a transcript string or an object holding one, got {type(value).__name__}",
                line=line,
                episode=label,
            )

    if p.suffix.lower() in TEXT_SUFFIXES or text.lstrip()[:1] not in ("[", "{", '"'):
        decoded = decode_layers(text)
        if decoded is not text and not isinstance(decoded, str):
            result.problem("a text file holding JSON: read it without a .txt/.text/.md name")
            return result
        text = decoded
        chunks = split_episodes(text)
        if not chunks:
            result.problem("the file is empty")
        for n, (first, chunk) in enumerate(chunks, start=1):
            convert(chunk, f"episode {n}", first, {}, first)
        return result
    records, jsonl = read_json_records(p, text, result)
    for line, value in records:
        value = decode_layers(value)
        if not jsonl and isinstance(value, list):
            for i, item in enumerate(value, start=1):
                from_value(item, f"record {i}", None)
        else:
            from_value(value, f"line {line}" if line is not None else "transcript", line)
    if not result.episodes and not result.problems:
        result.problem("no transcripts in the file", severity="warning")
    return result


__all__ = [
    "END_MARKER",
    "FORMAT",
    "decode_layers",
    "interpret_response",
    "load",
    "split_episodes",
    "trajectory_from_text",
    "transcript_field",
]
