"""What a client sends to the control API and to ``/mcp``, read and checked: the body of
``POST /control/episodes`` (bounded; the one-line error a wrong field gets), a ``/mcp`` URL's
query string as the same fields, and whether an ``initialize`` answer succeeded."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from pydantic import ValidationError
from starlette.requests import Request

from mcpgym.kernel.shorten import short, short_text
from mcpgym.server.control_models import CreateEpisode

MAX_CONTROL_BODY = 1_000_000
"""Largest ``POST /control/episodes`` body in bytes (larger: 413)."""
FIELD_SHAPES = {
    "apps": "a list of app names or a comma-separated string",
    "faults": "a built-in profile name (none, default, harsh) or an inline profile object",
}
"""What the union-typed fields of :class:`CreateEpisode` take, in the error a wrong value gets
(pydantic's own message names one member of the union only, under a tag like ``list[str]``)."""


QUERY_FIELDS = ("seed", "apps", "faults", "fault_seed", "tools", "search_tools")
"""The query parameters of ``/mcp``: the fields of ``POST /control/episodes`` that a URL can spell."""
MAX_QUERY_FIELDS = 16
MAX_OPENING_ANSWER = 65_536
"""Most bytes of an opening ``initialize`` answer read to see whether it succeeded."""


def initialized(answer: bytes) -> bool:
    """Whether an ``initialize`` answer (a JSON body or SSE ``data:`` lines) holds a JSON-RPC
    result; an error answer, or one cut past :data:`MAX_OPENING_ANSWER`, does not."""
    texts = (
        [answer]
        if answer.lstrip().startswith(b"{")
        else [line[5:] for line in answer.splitlines() if line.startswith(b"data:")]
    )
    for text in texts:
        try:
            message = json.loads(text)
        except ValueError:
            continue
        if isinstance(message, dict) and isinstance(message.get("result"), dict):
            return True
    return False


def query_fields(query: str) -> dict[str, Any] | str:
    """The episode fields a ``/mcp`` URL's query string names, as the JSON values
    :class:`CreateEpisode` takes (``seed=7`` -> 7, ``tools=a,b`` -> ["a", "b"],
    ``search_tools=true`` -> True), or the one-line error for a query that cannot be one: an
    unknown or repeated parameter, a seed that is no whole number, a flag that is no
    true/false. Values are quoted shortened in errors."""
    try:
        pairs = parse_qsl(query, keep_blank_values=True, max_num_fields=MAX_QUERY_FIELDS)
    except ValueError:
        return f"the query string has more than {MAX_QUERY_FIELDS} parameters"
    out: dict[str, Any] = {}
    for name, value in pairs:
        if name not in QUERY_FIELDS:
            return f"unknown query parameter {short(name)} (known: {', '.join(QUERY_FIELDS)})"
        if name in out:
            return f"query parameter {name!r} given twice"
        if name in ("seed", "fault_seed"):
            if not (value.isascii() and value.isdigit() and len(value) <= 19):
                return f"invalid field {name!r}: expected a whole number, got {short(value)}"
            out[name] = int(value)
        elif name == "search_tools":
            if value.lower() not in ("true", "false", "1", "0"):
                return f"invalid field 'search_tools': expected true or false, got {short(value)}"
            out[name] = value.lower() in ("true", "1")
        elif name == "tools":
            out[name] = [t.strip() for t in value.split(",") if t.strip()]
        else:
            out[name] = value
    return out


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {dict: "object", list: "array", str: "string", type(None): "null"}.get(type(value), type(value).__name__)


def body_error(data: Any, exc: ValidationError) -> str:
    """The one-line error for a ``POST /control/episodes`` body ``data`` that ``exc`` refused:
    a body that is no JSON object says so; otherwise the first wrong field is named as the
    request spells it (``apps``, ``apps.1``, never a union tag) with what it takes."""
    if not isinstance(data, dict):
        fields = ", ".join(CreateEpisode.model_fields)
        return f"the body must be a JSON object of episode fields ({fields}), got a JSON {_json_type(data)}"
    err = exc.errors(include_url=False)[0]
    field, rest = str(err["loc"][0]), err["loc"][1:]
    path = [field, *(p for p in rest if isinstance(p, int))]
    where = short(".".join(str(p) for p in path))
    if field in FIELD_SHAPES and field in data:
        value = data[field]
        for index in path[1:]:
            value = value[index] if isinstance(value, list) and isinstance(index, int) else value
        return f"invalid field {where}: expected {FIELD_SHAPES[field]}, got a JSON {_json_type(value)}"
    return f"invalid field {where}: {short_text(str(err['msg']), 200)}"


async def read_capped(request: Request, limit: int) -> bytes | None:
    """The request body, or None as soon as it exceeds ``limit`` bytes (never buffers more)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > limit:
            return None
    return bytes(body)
