"""What a client sends to the control API and to ``/mcp``, read and checked: the body of
``POST /control/episodes`` (bounded; the one-line error a wrong field gets), a ``/mcp`` URL's
query string as the same fields, whether a request can open a session there, and whether an
``initialize`` answer succeeded."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request

from mcpgym.kernel.shorten import short, short_text
from mcpgym.kernel.validation_text import json_type
from mcpgym.server.control_models import MAX_SEED, CreateEpisode

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


def opening_answer(answer: bytes) -> bool | None:
    """What the ``initialize`` answer read so far (a JSON body or SSE ``data:`` lines) says:
    True for a JSON-RPC result, False for a JSON-RPC error, None while it holds neither (not
    all of it read yet)."""
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
        if isinstance(message, dict) and "error" in message:
            return False
    return None


def initialized(answer: bytes) -> bool:
    """Whether an ``initialize`` answer (a JSON body or SSE ``data:`` lines) holds a JSON-RPC
    result; an error answer, or one cut past :data:`MAX_OPENING_ANSWER`, does not."""
    return opening_answer(answer) is True


BUILT_IN_PROFILES = ("none", "default", "harsh")
"""The fault profiles a request may name (a file path is the server owner's choice only)."""


def query_fields(query: str) -> dict[str, Any] | str:
    """The episode fields a ``/mcp`` URL's query string names, as the JSON values
    :class:`CreateEpisode` takes (``seed=7`` -> 7, ``tools=a,b`` -> ["a", "b"],
    ``search_tools=true`` -> True), or the one-line error for a query that cannot be one: more
    than :data:`MAX_QUERY_FIELDS` parameters (empty ``&&`` segments are not parameters), an
    unknown or repeated parameter, a seed outside 0..2**63-1, a flag that is no true/false, a
    fault profile that is not built in (a URL carries no inline profile). Values are quoted
    shortened in errors."""
    segments = [part for part in query.split("&") if part]
    if len(segments) > MAX_QUERY_FIELDS:
        return f"the query string has {len(segments)} parameters (at most {MAX_QUERY_FIELDS})"
    out: dict[str, Any] = {}
    for name, value in parse_qsl("&".join(segments), keep_blank_values=True):
        if name not in QUERY_FIELDS:
            return f"unknown query parameter {short(name)} (known: {', '.join(QUERY_FIELDS)})"
        if name in out:
            return f"query parameter {name!r} given twice"
        if name in ("seed", "fault_seed"):
            if not (value.isascii() and value.isdigit() and len(value) <= 19 and int(value) <= MAX_SEED):
                return f"invalid field {name!r}: expected a whole number from 0 to {MAX_SEED}, got {short(value)}"
            out[name] = int(value)
        elif name == "search_tools":
            if value.lower() not in ("true", "false", "1", "0"):
                return f"invalid field 'search_tools': expected true or false, got {short(value)}"
            out[name] = value.lower() in ("true", "1")
        elif name == "tools":
            out[name] = [t.strip() for t in value.split(",") if t.strip()]
        elif name == "faults" and value not in BUILT_IN_PROFILES:
            return f"invalid field 'faults': a URL names a built-in profile ({', '.join(BUILT_IN_PROFILES)}), got {short(value)}"
        else:
            out[name] = value
    return out


def is_initialize(body: bytes) -> bool:
    """Whether ``body`` is one JSON-RPC request of method ``initialize`` (a session's opening)."""
    if b'"initialize"' not in body:
        return False
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and message.get("method") == "initialize"


def opening_problem(body: bytes) -> str | None:
    """Why ``body`` cannot open a session on ``/mcp`` (None when it can): it must be one
    JSON-RPC 2.0 ``initialize`` request with an id (a string or a number) and params carrying
    ``protocolVersion`` (a string naming a version with sessions, or one the server does not
    know, which the SDK negotiates down), ``capabilities`` (an object) and ``clientInfo`` (an
    object with string ``name`` and ``version``), as MCP's lifecycle requires. Checked here so
    that a malformed opening gets one plain reason instead of the SDK's (a missing id reads
    "Missing session ID" there) and creates no episode."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return "the body is not JSON"
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return "the first request must be a JSON-RPC initialize request (a batch or another method cannot open one)"
    if message.get("jsonrpc") != "2.0":
        return f"'jsonrpc' must be \"2.0\", got {short(message.get('jsonrpc'))}"
    rid = message.get("id")
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        return f"the initialize request needs an 'id' (a string or a number), got {short(rid)}"
    params = message.get("params")
    if not isinstance(params, dict):
        return "the initialize request needs 'params' (an object)"
    version = params.get("protocolVersion")
    if not isinstance(version, str):
        return f"'params.protocolVersion' must be a string, got {short(version)}"
    if version in MODERN_PROTOCOL_VERSIONS:
        return f"protocol version {short(version)} has no sessions"
    if not isinstance(params.get("capabilities"), dict):
        return "'params.capabilities' must be an object"
    info = params.get("clientInfo")
    if not (isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)):
        return "'params.clientInfo' must be an object with a string 'name' and 'version'"
    return None


def body_error(data: Any, exc: ValidationError) -> str:
    """The one-line error for a ``POST /control/episodes`` body ``data`` that ``exc`` refused:
    a body that is no JSON object says so; otherwise the first wrong field is named as the
    request spells it (``apps``, ``apps.1``, never a union tag) with what it takes."""
    if not isinstance(data, dict):
        fields = ", ".join(CreateEpisode.model_fields)
        return f"the body must be a JSON object of episode fields ({fields}), got a JSON {json_type(data)}"
    err = exc.errors(include_url=False)[0]
    field, rest = str(err["loc"][0]), err["loc"][1:]
    path = [field, *(p for p in rest if isinstance(p, int))]
    where = short(".".join(str(p) for p in path))
    if field in FIELD_SHAPES and field in data:
        value = data[field]
        for index in path[1:]:
            value = value[index] if isinstance(value, list) and isinstance(index, int) else value
        return f"invalid field {where}: expected {FIELD_SHAPES[field]}, got a JSON {json_type(value)}"
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
