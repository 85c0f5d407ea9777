"""Text from agents, task files and manifests made inert in Markdown (``report.md``).

An agent name, a task id, a final message or a profile name is data: in ``report.md`` it must
read as the characters it holds, never as HTML (``<script>``), a link, emphasis, code or a new
table column. :func:`md_text` escapes it for CommonMark / GitHub-flavoured Markdown:

* ``<``, ``>`` and ``&`` become the entities ``&lt;``, ``&gt;``, ``&amp;`` (so no raw HTML
  and no autolink ``<http://...>`` can form);
* the inline markup characters ``\\ ` * | ~`` are backslash-escaped, ``]`` where it could close
  a link or image (before ``(``, ``[`` or ``:``; a bracket pair alone, ``[30-95]``, is plain
  text in a document without link definitions) and ``_`` where it could open or close
  emphasis (at a word's edge; ``dark_mode`` stays as is);
* line breaks become spaces (a cell or a bullet stays one line).

``report.html`` escapes the same data with ``html.escape`` instead.
"""

from __future__ import annotations

import re

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MARKUP = re.compile(r"[\\`*|~]|\](?=[(\[:])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|[&<>]|\r\n|[\r\n]")


def _one(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch in _ENTITIES:
        return _ENTITIES[ch]
    if ch in ("\r\n", "\r", "\n"):
        return " "
    return "\\" + ch


def md_text(value: object) -> str:
    """``str(value)`` escaped so that Markdown renders exactly its characters (module docstring),
    on one line; safe inside a table cell."""
    return _MARKUP.sub(_one, str(value))


def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table; every header and cell goes through :func:`md_text` (agent names, task
    ids and notes are data, never markup)."""
    lines = ["| " + " | ".join(md_text(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(md_text(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


__all__ = ["md_table", "md_text"]
