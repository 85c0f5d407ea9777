"""A read that shows the written object (docs/design.md §7, "Verification"), for transcripts
recorded elsewhere, where tools carry no catalog and a read's resource family often differs from
the write's (``create_directory`` then ``directory_tree``; ``CREATE INDEX`` then
``get-table-schema``; ``create_branch`` then ``get_file_contents`` with ``ref`` on it).

The rule, :func:`shown_by_later_read`: a successful write W is verified when a later successful
call that is no write (a read, or a call of unknown kind) acts on the object W acted on (an
identifying argument value in common: a path, a branch, a ref, an id; :func:`acted_on`), or
shows one of W's *object names* in its result, as a whole name (not inside a longer
identifier) that its own arguments do not already hold. An id shown inside another object's
listing is not that object read back (appending children to block X, then listing X's parent,
shows X but not the children), so ids count only as arguments.

W's object names (:func:`object_names`), each at least :data:`MIN_NAME` characters:

* its path-like identifying values (:func:`mcpgym.evaluation.scoring.calls.object_values`)
  and output paths, and their last components;
* the name an SQL ``CREATE`` gives the object it creates (:data:`SQL_CREATED_RE`: a table, an
  index, a trigger, a view, a function...);
* for a shell command that writes, the path operands of its writing commands (``mkdir``,
  ``cp``, ``mv``, ``touch``...; :data:`SHELL_TARGET_RE`), last components.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcpgym.evaluation.scoring.calls import Call, object_values

MIN_NAME = 6
"""Characters an object name needs to say which object it is (shorter names match by chance)."""
OUTPUT_ARG_RE = re.compile(r"^(?:output|out|dest|destination|target|save)_?(?:path|file|dir|directory)?$", re.I)
"""Arguments naming where a write puts its result."""
SQL_CREATED_RE = re.compile(
    r"\bcreate\s+(?:or\s+replace\s+)?(?:unique\s+)?(?:temp(?:orary)?\s+)?(?:materialized\s+)?(?:constraint\s+)?"
    r"(?:table|index|view|function|procedure|trigger|schema|sequence|type|domain|policy|extension)\s+"
    r"(?:concurrently\s+)?(?:if\s+not\s+exists\s+)?([`\"\w.$-]+)",
    re.I,
)
"""The name an SQL ``CREATE`` statement gives its object (group 1)."""
SHELL_TARGET_RE = re.compile(r"(?:^|[;&|]\s*)(?:mkdir|cp|mv|touch|tee|ln)\b([^;&|]*)")
"""A writing shell command and its operands (group 1)."""
_SQL_ARGS = ("sql", "query", "statement", "sql_query", "queries")
_SHELL_ARGS = ("command", "cmd", "script", "commands")


def _last(path: str) -> str:
    """The last component of a path, ``/`` or ``\\`` (a Windows path) separated."""
    return re.split(r"[/\\]", path.rstrip("/\\"))[-1]


def _clean(value: str) -> str:
    return value.strip().strip("`\"'").lower()


def _path_like(value: str) -> bool:
    return "/" in value or bool(re.search(r"\.[A-Za-z]\w{0,5}$", value))


def _add(out: set[str], value: str) -> None:
    value = _clean(value)
    for v in (value, _last(value)):
        if len(v) >= MIN_NAME:
            out.add(v)


def acted_on(c: Call) -> frozenset[str]:
    """The identifying argument values of call ``c`` (and a path's last component), lowercased:
    the object it acts on (:func:`~mcpgym.evaluation.scoring.calls.object_values`); for a shell
    command, also the files it names (:func:`command_paths`: ``python analyze.py`` runs the
    script written before, ``ls out/report.xlsx`` lists the file)."""
    out: set[str] = set()
    for v in object_values(c.arguments):
        _add(out, v)
    args = c.arguments if isinstance(c.arguments, dict) else {}
    for k in _SHELL_ARGS:
        if isinstance(cmd := args.get(k), str):
            for token in command_paths(cmd):
                _add(out, token)
    return frozenset(out)


COMMAND_PATH_RE = re.compile(r"(?<![\w$-])(?:[\w.~:-]+[/\\])*[\w-]+\.[A-Za-z]\w{0,5}(?![\w/\\-])")
"""A file named in a shell command (a name with an extension, with or without its folders)."""


def command_paths(cmd: str) -> list[str]:
    """The files a shell command names (:data:`COMMAND_PATH_RE`, first 20,000 characters):
    what running, listing or printing it acts on."""
    return [m.group(0) for m in COMMAND_PATH_RE.finditer(cmd[:20_000])]


def object_names(c: Call) -> frozenset[str]:
    """The names of the object write ``c`` makes that a later result can show (module
    docstring): its path-like identifying values and output paths (and their last components),
    the names SQL ``CREATE`` gives, the targets of its writing shell commands; lowercased."""
    out: set[str] = set()
    for v in object_values(c.arguments):
        if _path_like(v):
            _add(out, v)
    args = c.arguments if isinstance(c.arguments, dict) else {}
    for k, v in args.items():
        if isinstance(v, str) and OUTPUT_ARG_RE.match(str(k)):
            _add(out, v)
    for k in _SQL_ARGS:
        if isinstance(sql := args.get(k), str):
            sql = re.sub(r"--[^\n]*|/\*.*?\*/", " ", sql, flags=re.S)
            for m in SQL_CREATED_RE.finditer(sql):
                _add(out, m.group(1).strip('`"').rsplit(".", 1)[-1])
    for k in _SHELL_ARGS:
        if isinstance(cmd := args.get(k), str):
            for m in SHELL_TARGET_RE.finditer(cmd):
                for token in m.group(1).split():
                    if not token.startswith("-") and not re.search(r"[*?$<>]", token):
                        _add(out, token)
    return frozenset(out)


def _text(value: Any) -> str:
    try:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = str(value)
    return text[:400_000].lower()


def _whole(names: frozenset[str]) -> re.Pattern[str] | None:
    if not names:
        return None
    return re.compile("|".join(rf"(?<![\w.-]){re.escape(n)}(?![\w-])" for n in sorted(names)))


def shown_by_later_read(calls: list[Call], unverified: list[int]) -> set[int]:
    """The indexes of ``unverified`` (successful writes no read matched by family) that a later
    call shows (module docstring): a successful call of a non-write kind, outside the write's
    own parallel batch, that acts on one of the write's identifying values
    (:func:`acted_on`), or whose result names one of its :func:`object_names` whole where its
    own arguments do not (a result echoing the call's own text shows nothing).

    Args:
        calls: the resolved calls. unverified: indexes into ``calls`` of the writes to check.
    """
    out: set[int] = set()
    for i in unverified:
        w = calls[i]
        ids, pattern = acted_on(w), _whole(object_names(w))
        if not ids and pattern is None:
            continue
        for r in calls[i + 1 :]:
            if not r.ok or r.entry.kind.value == "write" or (w.batch is not None and r.batch == w.batch):
                continue
            if ids & acted_on(r):
                out.add(i)
                break
            if pattern is not None:
                shown = {m.group(0) for m in pattern.finditer(_text(r.result))}
                if shown - {m.group(0) for m in pattern.finditer(_text(r.arguments))}:
                    out.add(i)
                    break
    return out


__all__ = [
    "COMMAND_PATH_RE",
    "acted_on",
    "command_paths",
    "MIN_NAME",
    "OUTPUT_ARG_RE",
    "SHELL_TARGET_RE",
    "SQL_CREATED_RE",
    "object_names",
    "shown_by_later_read",
]
