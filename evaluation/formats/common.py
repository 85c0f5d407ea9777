"""What every format reader shares: problems, episodes, load results, reading JSON / JSON
Lines with line numbers, and the id-like fields of container records.

How a recorded tool result becomes a step is in :mod:`mcpgym.evaluation.formats.results`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from mcpgym.evaluation.records.compressed import CompressedFileError, looks_compressed, read_frames
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.kernel.exceptions import FormatError
from mcpgym.kernel.input_files import MAX_TRAJECTORY_BYTES, InputFileError, decode_input, read_input_bytes
from mcpgym.kernel.shorten import cap_message

EXTERNAL_AGENT = "external"
"""Agent name of episodes whose file names none (docs/design.md §7)."""


class Problem(BaseModel):
    """Something wrong with an input file.

    Attributes:
        file: the file, as given.
        line: 1-based line of the file, when the problem sits on one line.
        episode: the episode's label (``"record 2"``, ``"session s-1"``...), when known.
        message: what is wrong.
        severity: ``error`` (that line / episode / file was not scored) or ``warning``
            (scored, but something was left out or assumed, e.g. a call without a result).
    """

    file: str
    line: int | None = None
    episode: str | None = None
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line is not None else "")
        if self.episode:
            where += f" ({self.episode})"
        return f"{where}: {self.severity}: {self.message}"


class EpisodeError(FormatError, ValueError):
    """An episode that cannot be converted; the message says what is wrong (the caller adds
    the file and the episode label)."""


@dataclass
class Episode:
    """One converted episode: its label in the file, the first line it came from, the
    trajectory, and notes (warnings) about what was left out or assumed."""

    label: str
    trajectory: Trajectory
    line: int | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class LoadResult:
    """What a format reader made of one file.

    Attributes:
        file: the file, as given.
        format: the format name (``openai``, ``complexmcp``...).
        episodes: the converted episodes, in file order.
        problems: malformed input (each names the file, the line or the episode).
        descriptions: tool name -> description, when the file lists tools (used by the
            heuristic classifier for tools no catalog knows).
        unread: the file could not be opened at all (missing, not a regular file, too large):
            none of its records was tried, so its problem is no record that failed to parse.
    """

    file: str
    format: str
    episodes: list[Episode] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    descriptions: dict[str, str] = field(default_factory=dict)
    unread: bool = False

    def problem(
        self,
        message: str,
        *,
        line: int | None = None,
        episode: str | None = None,
        severity: Literal["error", "warning"] = "error",
    ) -> None:
        """Record a problem of this file (a message past 500 characters, e.g. one quoting a
        huge tool name, is cut: :func:`mcpgym.kernel.shorten.cap_message`)."""
        self.problems.append(
            Problem(file=self.file, line=line, episode=episode, message=cap_message(message, 500), severity=severity)
        )

    def add(self, ep: Episode) -> None:
        """Add an episode and turn its warnings into ``warning`` problems."""
        self.episodes.append(ep)
        for w in ep.warnings:
            self.problem(w, line=ep.line, episode=ep.label, severity="warning")


# -- reading files ----------------------------------------------------------------------------
def read_text(path: Path, result: LoadResult) -> str | None:
    """The file's text (UTF-8, a BOM dropped), or None with a problem recorded (a missing file,
    a special file such as ``/dev/zero`` or a FIFO, a file over 1 GiB, bytes that are not UTF-8:
    :func:`mcpgym.kernel.input_files.read_input_text`). A file of zstd frames
    (``trajectories.jsonl.zst``) is decompressed frame by frame: a torn last frame (a killed run)
    or a frame damaged in place is a problem naming it by number, every other frame is read."""
    try:
        data = read_input_bytes(path, limit=MAX_TRAJECTORY_BYTES)
        if looks_compressed(data):
            found = read_frames(data)
            for d in found.damaged:
                if d.torn:
                    result.problem("the last zstd frame is torn (a write cut short): the lines before it are read")
                else:
                    result.problem(f"damaged zstd {d.describe()}: left out, the frames after it are read")
            return decode_input(found.data, path)
        return decode_input(data, path)
    except CompressedFileError as exc:
        result.problem(cap_message(str(exc)))
    except InputFileError as exc:
        result.unread = True
        result.problem("file not found" if exc.reason == "no such file" else exc.reason)
    return None


def jsonl_lines(text: str) -> list[str]:
    """The lines of a JSON Lines text: split at ``"\n"`` only (a ``"\r"`` before it is
    dropped). ``str.splitlines()`` also splits at U+2028, U+2029, NEL, form feeds...: legal
    unescaped inside a JSON string (a model's text holds them, and the run writes them raw), so
    it cut records in two. Line numbers count ``"\n"`` as editors do."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def _parses_alone(line: str) -> bool:
    s = line.strip()
    if not s or s[0] not in '[{"':
        return False
    try:
        json.loads(s)
    except ValueError:
        return False
    return True


def read_json_records(path: Path, text: str, result: LoadResult) -> tuple[list[tuple[int | None, Any]], bool]:
    """Parse ``text`` as one JSON document or as JSON Lines.

    JSON Lines is assumed when the extension is ``.jsonl``/``.ndjson``, when the whole text
    fails with "Extra data" (several documents), or when most non-blank lines parse on their
    own. A JSONL line that does not parse is a problem naming the line and column; the other
    lines are kept.

    Returns:
        ``([(line, value), ...], is_jsonl)``; ``line`` is None for a single JSON document.
    """
    nonblank = [(i, ln) for i, ln in enumerate(jsonl_lines(text), start=1) if ln.strip()]
    if not nonblank:
        result.problem("the file is empty")
        return [], False
    jsonl = path.suffix.lower() in (".jsonl", ".ndjson")
    if not jsonl:
        try:
            return [(None, json.loads(text))], False
        except json.JSONDecodeError as exc:
            alone = sum(_parses_alone(ln) for _, ln in nonblank)
            if not (exc.msg == "Extra data" or (len(nonblank) > 1 and alone * 2 > len(nonblank))):
                result.problem(f"invalid JSON at column {exc.colno}: {exc.msg}", line=exc.lineno)
                return [], False
    records: list[tuple[int | None, Any]] = []
    for lineno, ln in nonblank:
        try:
            records.append((lineno, json.loads(ln)))
        except json.JSONDecodeError as exc:
            result.problem(f"invalid JSON at column {exc.colno}: {exc.msg}", line=lineno)
    return records, True


def id_key(value: Any) -> Any:
    """A hashable key for a call id as recorded (ids are matched by value; a list or object
    id, which no protocol allows but a broken file may hold, is keyed by its JSON)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def meta_str(value: Any) -> str | None:
    """A record's id-like field as a string (ints and strings; anything else None)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, str)):
        return str(value)
    return None


def record_agent(record: dict[str, Any]) -> str | None:
    """The agent a record names: ``agent`` (a string, or a dict's ``name``), else ``model``."""
    agent = record.get("agent")
    if isinstance(agent, dict):
        agent = agent.get("name") or agent.get("model")
    if isinstance(agent, str) and agent.strip():
        return agent.strip()
    model = record.get("model")
    if isinstance(model, str) and model.strip():
        return model.strip()
    return None


def record_trial(record: dict[str, Any]) -> int:
    """A record's ``trial`` (0-based), 0 when it gives none.

    Raises:
        EpisodeError: when ``trial`` is given but is not a non-negative integer (``"1"``,
            ``2.0``, ``true``, ``-1``): read as 0, such records merged silently with trial 0.
    """
    t = record.get("trial")
    if t is None:
        return 0
    if isinstance(t, bool) or not isinstance(t, int) or t < 0:
        raise EpisodeError(f"field trial: expected a non-negative integer, got {json.dumps(t)}")
    return t


__all__ = [
    "EXTERNAL_AGENT",
    "Episode",
    "EpisodeError",
    "LoadResult",
    "Problem",
    "id_key",
    "meta_str",
    "read_json_records",
    "read_text",
    "record_agent",
    "record_trial",
]
