"""Retrieval mode: the ``search_tools(query, k)`` meta-tool.

In retrieval mode an episode exposes only ``search_tools``. It ranks the episode's tools by
BM25 (the ``rank_bm25`` library) over name, description, parameter names and descriptions
(:func:`parameter_text`) and resource families, returns the top ``k`` of the tools that share
at least one word with the query (none when no tool does: a search for something the episode
cannot do finds nothing, rather than five unrelated tools) and unlocks them: they appear in
``tools/list`` from then on (a ``notifications/tools/list_changed`` is sent) and may be called.
"""

from __future__ import annotations

import json
import re
from typing import Any

import mcp_types as types

from mcpgym.tools.mcp_bridge import error_result

SEARCH_TOOL_NAME = "search_tools"
_TOKEN = re.compile(r"[a-z0-9]+")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower().replace("_", " ").replace(".", " "))


def search_tool() -> types.Tool:
    """The MCP definition of the ``search_tools`` meta-tool."""
    return types.Tool(
        name=SEARCH_TOOL_NAME,
        description=(
            "Find tools by what they do. Returns the k best-matching tools (name, description, input schema) "
            "and makes them callable; none when no tool matches a word of the query. Search again with other "
            "words if a tool you need is missing."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "maxLength": 1000, "description": "what you want to do, in a few words"},
                "k": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5, "description": "how many tools"},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {"tools": {"type": "array", "items": {"type": "object"}}},
            "required": ["tools"],
        },
        annotations=types.ToolAnnotations(
            title="search tools",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )


MAX_PARAMETER_TEXT = 4_000
"""The most characters of parameter text indexed per tool."""


def parameter_text(schema: Any) -> str:
    """The words of a tool's input schema a search should find it by: each property's name,
    description and string ``enum`` values, nested objects and array items included (at most
    :data:`MAX_PARAMETER_TEXT` characters)."""
    parts: list[str] = []
    stack = [schema]
    while stack and sum(map(len, parts)) < MAX_PARAMETER_TEXT:
        node = stack.pop(0)
        if not isinstance(node, dict):
            continue
        props = node.get("properties")
        for name, sub in (props if isinstance(props, dict) else {}).items():
            parts.append(str(name))
            if isinstance(sub, dict):
                if isinstance(sub.get("description"), str):
                    parts.append(sub["description"])
                parts += [v for v in sub.get("enum") or [] if isinstance(v, str)]
                stack.append(sub)
        for key in ("items", "anyOf", "oneOf"):
            value = node.get(key)
            stack += value if isinstance(value, list) else [value]
    return " ".join(parts)[:MAX_PARAMETER_TEXT]


def rank_tools(specs: list[Any], query: str, k: int) -> list[Any]:
    """Return at most ``k`` specs ranked best for ``query`` by BM25 over name (twice),
    description, :func:`parameter_text` and resource families (ties: catalog order), leaving out
    every spec that shares no word with the query: no match, no result."""
    words = _tokens(query)
    if not specs or not words:
        return []
    from rank_bm25 import BM25Okapi  # numpy underneath: imported only when a search runs

    corpus = [
        _tokens(f"{s.name} {s.name} {s.description} {parameter_text(s.input_schema())} {' '.join(s.resources)}")
        for s in specs
    ]
    bm25 = BM25Okapi(corpus)
    scores = bm25.get_scores(words)
    wanted = set(words)
    matching = [i for i in range(len(specs)) if wanted & set(corpus[i])]
    order = sorted(matching, key=lambda i: (-scores[i], i))
    return [specs[i] for i in order[:k]]


def search_tools_call(episode: Any, arguments: Any) -> types.CallToolResult:
    """Run ``search_tools`` for ``episode``: validate, rank, unlock, and answer.

    The call is logged in the episode's call log as a read of the tool catalog.
    """
    if not isinstance(arguments, dict):
        return error_result("invalid_argument", "arguments must be an object with 'query'", "query")
    query = arguments.get("query")
    k = arguments.get("k", 5)
    extra = set(arguments) - {"query", "k"}
    if extra:
        return error_result("invalid_argument", f"unexpected argument {sorted(extra)[0]!r}", sorted(extra)[0])
    if not isinstance(query, str) or not query.strip() or len(query) > 1000:
        return error_result("invalid_argument", "query must be a non-empty string of at most 1000 characters", "query")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 20:
        return error_result("invalid_argument", "k must be an integer from 1 to 20", "k")
    with episode.lock:
        candidates = list(episode.invoker.specs.values())
        if episode.visible is not None:
            candidates = [s for s in candidates if s.name in episode.visible]
        found = rank_tools(candidates, query, k)
        episode.unlocked.update(s.name for s in found)
        episode.refresh_exposure()
        payload = {
            "tools": [{"name": s.name, "description": s.description, "input_schema": s.input_schema()} for s in found]
        }
        episode.invoker.log_meta_call(SEARCH_TOOL_NAME, arguments, payload)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(payload))], structured_content=payload, is_error=False
    )
