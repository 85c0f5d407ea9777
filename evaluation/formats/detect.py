"""The trajectory formats: :data:`READERS`, one row per reader, and format ``auto``, which
tells a file's format from its extension and content.

Adding a format: its reader module in ``formats/`` (``load(path) -> LoadResult``) and its row
in :data:`READERS` (name, module, the content marker that makes ``auto`` pick it). ``--format``,
``FORMATS`` and the loaders of :mod:`mcpgym.evaluation.formats.score` follow from the rows.

Rules of ``auto``, in order:

1. A file whose text starts like JSON (``[``, ``{``, ``"``) is parsed (one JSON document,
   else line by line, skipping lines that do not parse) and its values are searched, record
   by record, for markers:

   =============== ==========================================================================
   format          marker (an object or string anywhere inside a record)
   =============== ==========================================================================
   ``atif``        an object whose ``schema_version`` starts with ``ATIF``
   ``mcpgym``      an object with ``episode_id``, ``agent`` and ``steps``
   ``mcp-log``     an object with ``jsonrpc``, or a ``method`` of ``tools/call``,
                   ``tools/list`` or ``initialize``
   ``tau2``        an object with ``messages`` and ``termination_reason`` (a tau2-bench
                   simulation)
   ``pydantic-ai`` an object with ``kind`` ``request`` / ``response`` and ``parts``
   ``langchain``   a message of ``type`` ``ai`` / ``tool`` with ``data`` (``messages_to_dict``)
                   or ``content`` (``model_dump``)
   ``responses``   an item of ``type`` ``function_call``, ``function_call_output``,
                   ``mcp_call`` or ``mcp_list_tools`` (OpenAI Responses API, Agents SDK runs)
   ``claude-code`` a line of ``type`` ``user`` / ``assistant`` with ``message`` and
                   ``sessionId`` (a Claude Code session log)
   ``anthropic``   a content block of ``type`` ``tool_use``, ``tool_result``,
                   ``mcp_tool_use`` or ``mcp_tool_result``
   ``openai``      a message with ``tool_calls``, ``tool_call_id`` or ``function_call``
                   (legacy), or ``role`` ``tool`` or ``function`` (legacy)
   ``complexmcp``  a string containing ``<tool>``
   =============== ==========================================================================

   The first record with any marker decides; when it has several, the format higher in the
   table wins (an OpenAI conversation quoting ``<tool>`` stays ``openai``).
2. Otherwise (plain text, or JSON without markers) a text holding a ComplexMCP call block
   (``</tool>`` then ``<response>``) or ending a line with ``[END]`` is ``complexmcp`` (a
   README that mentions ``<tool>`` or `` `[END]` `` in prose is not).
3. A ``.eval`` file (a zip archive) is an Inspect AI log: ``inspect``.
4. Else the format is unknown (the caller reports it and asks for ``--format``). The
   extension is not trusted on its own: ``.json``, ``.jsonl`` and ``.log`` files hold every
   JSON format; it only decides how ``complexmcp`` reads a ``.txt`` / ``.text`` / ``.md``
   file (as plain text).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpgym.evaluation.formats.common import LoadResult, jsonl_lines
from mcpgym.evaluation.records.compressed import is_compressed
from mcpgym.kernel.bounded_json import JSONLimitError, load_json
from mcpgym.kernel.input_files import MAX_TRAJECTORY_BYTES, InputFileError, decode_input, read_input_bytes


def _atif(v: dict[str, Any]) -> bool:
    return str(v.get("schema_version", "")).startswith("ATIF")


def _mcpgym(v: dict[str, Any]) -> bool:
    return "episode_id" in v and "steps" in v and "agent" in v


def _mcp_log(v: dict[str, Any]) -> bool:
    return "jsonrpc" in v or v.get("method") in ("tools/call", "tools/list", "initialize")


def _anthropic(v: dict[str, Any]) -> bool:
    return v.get("type") in ("tool_use", "tool_result", "mcp_tool_use", "mcp_tool_result")


def _openai(v: dict[str, Any]) -> bool:
    if "tool_calls" in v or "tool_call_id" in v or v.get("role") in ("tool", "function"):
        return True
    return isinstance(v.get("function_call"), dict) and isinstance(v.get("role"), str)  # legacy (ToolBench)


def _responses(v: dict[str, Any]) -> bool:
    from mcpgym.evaluation.formats.responses import is_item

    return is_item(v)


def _tau2(v: dict[str, Any]) -> bool:
    return isinstance(v.get("messages"), list) and "termination_reason" in v


def _langchain(v: dict[str, Any]) -> bool:
    from mcpgym.evaluation.formats.langchain import is_message

    return v.get("type") in ("ai", "tool", "AIMessage", "ToolMessage") and is_message(v)


def _claude_code(v: dict[str, Any]) -> bool:
    from mcpgym.evaluation.formats.claude_code import is_line

    return is_line(v)


def _pydantic_ai(v: dict[str, Any]) -> bool:
    return v.get("kind") in ("request", "response") and isinstance(v.get("parts"), list)


@dataclass(frozen=True)
class Reader:
    """One trajectory format.

    Attributes:
        name: the ``--format`` value. module: the reader module (its ``load(path) -> LoadResult``).
        marks: whether a JSON object inside a record is this format's marker (None: ``auto``
            tells it by other rules, see the module docstring).
    """

    name: str
    module: str
    marks: Callable[[dict[str, Any]], bool] | None = None

    @property
    def load(self) -> Callable[[str | Path], LoadResult]:
        """The reader's ``load`` (its module imported on first use)."""
        loader: Callable[[str | Path], LoadResult] = importlib.import_module(self.module).load
        return loader


_F = "mcpgym.evaluation.formats."
READERS: tuple[Reader, ...] = (
    Reader("mcpgym", _F + "mcpgym", _mcpgym),
    Reader("openai", _F + "openai", _openai),
    Reader("anthropic", _F + "anthropic", _anthropic),
    Reader("complexmcp", _F + "complexmcp"),
    Reader("mcp-log", _F + "mcp_log", _mcp_log),
    Reader("atif", _F + "atif", _atif),
    Reader("inspect", _F + "inspect_log"),
    Reader("responses", _F + "responses", _responses),
    Reader("tau2", _F + "tau2", _tau2),
    Reader("langchain", _F + "langchain", _langchain),
    Reader("pydantic-ai", _F + "pydantic_ai", _pydantic_ai),
    Reader("claude-code", _F + "claude_code", _claude_code),
)
"""Every reader, in ``--format`` order."""

FORMAT_NAMES: tuple[str, ...] = ("auto", *(r.name for r in READERS))
"""Values of ``--format``: ``auto`` then every reader's name."""

PRIORITY: tuple[str, ...] = (
    "atif",
    "mcpgym",
    "tau2",
    "mcp-log",
    "pydantic-ai",
    "langchain",
    "responses",
    "claude-code",
    "anthropic",
    "openai",
    "complexmcp",
)
"""Formats in the order they win when one record shows markers of several (a format missing
here comes after them, in :data:`READERS` order)."""

_ORDER: tuple[str, ...] = tuple(
    sorted((r.name for r in READERS), key=lambda n: PRIORITY.index(n) if n in PRIORITY else len(PRIORITY))
)
_MARKED: tuple[Reader, ...] = tuple(r for r in READERS if r.marks is not None)

_TEXT_CALL_RE = re.compile(r"</tool>\s*<response>")
_TEXT_END_RE = re.compile(r"\[END\][ \t]*(?:\r?\n|$)")

MAX_NODES = 200_000
"""JSON nodes inspected per file before giving up (keeps sniffing of huge files cheap)."""


def _markers(value: Any, hits: set[str], budget: list[int]) -> None:
    stack = [value]
    while stack and budget[0] > 0:
        v = stack.pop()
        budget[0] -= 1
        if isinstance(v, dict):
            hits.update(r.name for r in _MARKED if r.marks is not None and r.marks(v))
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str) and "<tool>" in v:
            hits.add("complexmcp")


def _records(text: str) -> Iterator[Any]:
    """The JSON document ``text`` holds, else each JSON line of it; text that does not parse
    (nested past Python's depth or holding a 5,000-digit integer included:
    :func:`mcpgym.kernel.bounded_json.load_json`) is skipped, never raised."""
    try:
        yield load_json(text, limit=None)
        return
    except JSONLimitError:
        pass
    for line in jsonl_lines(text):
        if line.strip():
            try:
                yield load_json(line, limit=None)
            except JSONLimitError:
                continue


def detect_format(path: str | Path) -> tuple[str | None, str]:
    """Guess the format of ``path`` (rules in the module docstring).

    Returns:
        ``(format, reason)``; ``format`` is None when no rule applies (``reason`` says why).
        An unreadable file gives ``(None, ...)``; the loader reports the read error.
    """
    p = Path(path)
    if p.suffix == ".eval":
        return "inspect", "an Inspect AI log (.eval)"
    try:
        data = read_input_bytes(p, limit=MAX_TRAJECTORY_BYTES)
        if is_compressed(data):  # trajectories.jsonl.zst: zstd frames of mcpgym lines
            return "mcpgym", "zstd frames (an mcpgym run's trajectories.jsonl.zst)"
        text = decode_input(data, p)
    except InputFileError as exc:
        return None, f"cannot read the file: {exc.reason}"
    if text.lstrip()[:1] in ("[", "{", '"'):
        budget = [MAX_NODES]
        for rec in _records(text):
            hits: set[str] = set()
            _markers(rec, hits, budget)
            if hits:
                fmt = next(f for f in _ORDER if f in hits)
                return fmt, f"content markers of {fmt}"
            if budget[0] <= 0:
                break
    if _TEXT_CALL_RE.search(text) or _TEXT_END_RE.search(text):
        return "complexmcp", "text with <tool> blocks or [END]"
    tried = ", ".join(r.name for r in READERS)
    return None, f"no marker of any format in the content; tried {tried}"


__all__ = ["FORMAT_NAMES", "MAX_NODES", "PRIORITY", "READERS", "Reader", "detect_format"]
