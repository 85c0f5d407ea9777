"""Format ``mcp-log``: a JSON Lines log of JSON-RPC messages as an MCP client sees them.

Each line (or each item, when the file is one JSON list) is a JSON-RPC message, a JSON-RPC batch (a list), or a wrapper object holding the
message under ``message`` / ``msg`` / ``payload`` / ``data`` / ``rpc`` / ``body`` next to
fields of the log (direction, time...). Only ``tools/call`` requests and their responses make
steps; ``tools/list`` results give tool descriptions (used by the heuristic classifier for
tools no catalog knows); ``initialize`` gives the client's name (kept in metadata, not used as
the agent name: it names the harness).

Episodes:

* When lines carry a session field (``session``, ``session_id``, ``sessionId``,
  ``mcp_session_id``, ``mcp-session-id``), one episode per session value, in order of first
  appearance; a line without one belongs to the session of the line before it (an
  ``initialize`` request sent before the server assigned the session id belongs to the
  first session that follows it).
* Otherwise every ``initialize`` request starts a new episode.

Calls and results: a ``tools/call`` request (``params.name``, ``params.arguments``) is
matched to the response with the same id inside its episode. Ids belong to their sender:
the wrapper's direction field (``direction``: ``c2s`` / ``s2c``, or ``sender`` / ``from``:
``client`` / ``server``...: :data:`DIRECTION_KEYS`) says who sent a line, and a response
answers a request of the other side, so a server-initiated request (``roots/list``) that
reuses a tool call's id never takes its answer. Without a direction field, requests of
:data:`SERVER_METHODS` are the server's and a response goes to the server's open request
only when its result has that request's shape (``roots``...). An id repeated while open
pairs its responses in order (first response, first request). A call with no response is
left out (a warning names it), and so is a response that answers no open request (its id
no request used, or a second response to one). A result with ``isError: true`` is an error; its code is the
payload's ``error.code`` (``structuredContent``, else the text content parsed as JSON) when
it is one of mcpgym's codes, else guessed from the text
(:data:`mcpgym.evaluation.formats.common.ERROR_TEXT_PATTERNS`). A result without ``isError``
goes through the detector every format shares
(:func:`mcpgym.evaluation.formats.layers.read_result`): an ``{"error": ...}`` payload,
a ``{"status": "failed" | "error" | "internal error", ...}`` envelope or ``Error: ...`` text
is still an error. A JSON-RPC error response is an error too: an unknown tool
is ``not_found`` on field ``name`` (an invalid call for the scorer), ``-32602`` is
``invalid_argument``, anything else is guessed from the message. The step's result is the
``structuredContent``, else the text content parsed as JSON, else ``{"text": ...}``.

A log holds no agent messages, so the final message is empty unless a line annotates it:
``{"final_message": "...", "session": ...}``; such lines (or any wrapper) may also name the
``agent`` (or ``model``) and the ``task_id``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from mcpgym.evaluation.formats.common import (
    EXTERNAL_AGENT,
    Episode,
    LoadResult,
    id_key,
    meta_str,
    read_json_records,
    read_text,
    record_agent,
)
from mcpgym.evaluation.formats.layers import Reading, read_result
from mcpgym.evaluation.formats.results import (
    UNKNOWN_TOOL_RE,
    content_text,
    error_code_of,
    error_message_of,
    error_payload,
    guess_error_code,
    make_step,
    parse_arguments,
    parse_json_text,
)
from mcpgym.evaluation.records.error_rule import ErrorRule
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory

FORMAT = "mcp-log"
SESSION_KEYS: tuple[str, ...] = ("session", "session_id", "sessionId", "mcp_session_id", "mcp-session-id")
MESSAGE_KEYS: tuple[str, ...] = ("message", "msg", "payload", "data", "rpc", "body")


def _is_rpc(v: Any) -> TypeGuard[dict[str, Any]]:
    """Whether ``v`` is a JSON-RPC 2.0 message: an object with ``jsonrpc``, ``method`` or a
    response's ``id``, whose ``id`` (if any) is a string, a number or null and whose ``method``
    (if any) is a string, as the JSON-RPC 2.0 specification requires. Anything else is reported
    as "not a JSON-RPC message", never half-read."""
    if not isinstance(v, dict):
        return False
    rid = v.get("id")
    if rid is not None and (isinstance(rid, bool) or not isinstance(rid, (str, int, float))):
        return False
    if "method" in v and not isinstance(v["method"], str):
        return False
    return "jsonrpc" in v or "method" in v or ("id" in v and ("result" in v or "error" in v))


@dataclass
class _Line:
    line: int | None
    where: str
    messages: list[dict[str, Any]]
    session: str | None
    record: dict[str, Any]

    @property
    def sender(self) -> str | None:
        """``client`` or ``server``: who sent this line's messages, when the log says so."""
        return record_sender(self.record)


DIRECTION_KEYS: tuple[str, ...] = ("direction", "dir", "sender", "from", "source", "side", "origin")
"""Wrapper fields naming who sent a message (the first present is read)."""
_CLIENT_SENT = frozenset(
    {
        "c2s",
        "client",
        "client->server",
        "client_to_server",
        "client-to-server",
        "to_server",
        "outgoing",
        "out",
        "sent",
        "send",
        "request",
        ">",
    }
)
_SERVER_SENT = frozenset(
    {
        "s2c",
        "server",
        "server->client",
        "server_to_client",
        "server-to-client",
        "to_client",
        "incoming",
        "in",
        "received",
        "recv",
        "receive",
        "response",
        "<",
    }
)
SERVER_METHODS: frozenset[str] = frozenset({"roots/list", "sampling/createMessage", "elicitation/create"})
"""Requests only a server sends (used to tell the sender when the log does not)."""


def record_sender(rec: dict[str, Any]) -> str | None:
    """``client`` / ``server`` from a wrapper's direction field (:data:`DIRECTION_KEYS`), else None."""
    for k in DIRECTION_KEYS:
        v = rec.get(k)
        if isinstance(v, str):
            key = v.strip().lower()
            if key in _CLIENT_SENT:
                return "client"
            if key in _SERVER_SENT:
                return "server"
    return None


def _answers_server_request(msg: dict[str, Any]) -> bool:
    result = msg.get("result")
    return isinstance(result, dict) and (
        "roots" in result or "action" in result or ("model" in result and "role" in result)
    )


@dataclass
class _Group:
    label: str
    line: int | None
    lines: list[_Line] = field(default_factory=list)


def _unpack(line: int | None, where: str, value: Any) -> _Line | None:
    if isinstance(value, list):
        return (
            _Line(line, where, [m for m in value if _is_rpc(m)], None, {}) if any(_is_rpc(m) for m in value) else None
        )
    if not isinstance(value, dict):
        return None
    session = next((meta_str(value[k]) for k in SESSION_KEYS if meta_str(value.get(k)) is not None), None)
    if _is_rpc(value):
        return _Line(line, where, [value], session, value)
    for k in MESSAGE_KEYS:
        v = value.get(k)
        if _is_rpc(v):
            return _Line(line, where, [v], session, value)
        if isinstance(v, list) and any(_is_rpc(m) for m in v):
            return _Line(line, where, [m for m in v if _is_rpc(m)], session, value)
    if any(k in value for k in ("final_message", "agent", "model", "task_id")):
        return _Line(line, where, [], session, value)
    return None


def _is_initialize(msg: dict[str, Any]) -> bool:
    return msg.get("method") == "initialize" and "id" in msg


def _groups(lines: list[_Line]) -> list[_Group]:
    if any(ln.session is not None for ln in lines):
        groups: dict[str, _Group] = {}
        waiting: list[_Line] = []  # lines before the first session
        current: str | None = None
        for ln in lines:
            if ln.session is None and current is None:
                waiting.append(ln)
                continue
            sid = ln.session if ln.session is not None else current
            assert sid is not None
            current = sid
            if sid not in groups:
                groups[sid] = _Group(label=f"session {sid}", line=(waiting or [ln])[0].line)
                groups[sid].lines.extend(waiting)
                waiting.clear()
            groups[sid].lines.append(ln)
        return list(groups.values())
    out: list[_Group] = []
    for ln in lines:
        if not out or (any(_is_initialize(m) for m in ln.messages) and any(x.messages for x in out[-1].lines)):
            out.append(_Group(label=f"episode {len(out) + 1}", line=ln.line))
        out[-1].lines.append(ln)
    return out


def interpret_response(resp: dict[str, Any]) -> Reading:
    """The verdict on a JSON-RPC response to ``tools/call`` (module docstring): a JSON-RPC
    error is rule ``format_flag``, ``isError: true`` rule ``is_error``, else the layered
    reader decides on the content."""
    if "error" in resp and resp.get("result") is None:
        raw_err = resp.get("error")
        rpc_error = raw_err if isinstance(raw_err, dict) else {"message": str(raw_err)}
        msg = str(rpc_error.get("message", ""))
        if UNKNOWN_TOOL_RE.search(msg):
            return Reading(True, "not_found", error_payload("not_found", msg, field="name"), ErrorRule.FORMAT_FLAG)
        code = "invalid_argument" if rpc_error.get("code") == -32602 else guess_error_code(msg)
        return Reading(True, code, error_payload(code, msg), ErrorRule.FORMAT_FLAG)
    raw_result = resp.get("result")
    result = raw_result if isinstance(raw_result, dict) else {}
    structured = result.get("structuredContent")
    text = content_text(result.get("content"))
    parsed, value = parse_json_text(text) if text else (False, None)
    if isinstance(structured, dict):
        payload: Any = structured
    elif parsed:
        payload = value
    else:
        payload = {"text": text} if text else {}
    if result.get("isError") is True:
        err = payload.get("error") if isinstance(payload, dict) else None
        message = error_message_of(err, text) if err is not None else text
        code = error_code_of(err) or guess_error_code(message)
        result_value = payload if isinstance(err, dict) else error_payload(code, message)
        return Reading(True, code, result_value, ErrorRule.IS_ERROR)
    if structured is not None or text:
        # no flag: the content may still carry the error (the reader every format shares)
        found = read_result(structured if isinstance(structured, dict) else text)
        if found.is_error:
            return found
    return Reading(False, None, payload)


def _episode(group: _Group, file: str) -> Episode:
    calls: list[dict[str, Any]] = []
    descriptions: dict[str, str] = {}
    meta: dict[str, Any] = {"format": FORMAT, "file": file, "episode": group.label}
    warnings: list[str] = []
    agent = task_id = None
    final = ""
    # Open requests per (sender, id), oldest first: ids belong to their sender, and a repeated
    # id pairs its responses in order. A response comes from the other side of its request.
    open_requests: dict[tuple[str, Any], list[dict[str, Any]]] = {}
    for ln in group.lines:
        rec = ln.record
        agent = record_agent(rec) or agent
        task_id = meta_str(rec.get("task_id")) or task_id
        if isinstance(rec.get("final_message"), str):
            final = rec["final_message"]
        for msg in ln.messages:
            method, mid = msg.get("method"), id_key(msg.get("id"))
            if method is not None and mid is not None:  # a request
                sender = ln.sender or ("server" if method in SERVER_METHODS else "client")
                entry: dict[str, Any] = {"method": method}
                if method == "tools/call":
                    raw_params = msg.get("params")
                    params = raw_params if isinstance(raw_params, dict) else {}
                    name = params.get("name")
                    if not isinstance(name, str) or not name:
                        warnings.append(f"{ln.where}: a tools/call request without a tool name; left out")
                    else:
                        args, ok = parse_arguments(
                            params.get("arguments"), warnings=warnings, where=f"{ln.where}: the tools/call of {name}"
                        )
                        entry = {
                            "method": method,
                            "name": name,
                            "arguments": args,
                            "ok": ok,
                            "where": ln.where,
                            "id": mid,
                            "response": None,
                        }
                        calls.append(entry)
                open_requests.setdefault((sender, mid), []).append(entry)
                if method == "initialize" and isinstance(msg.get("params"), dict):
                    client = msg["params"].get("clientInfo")
                    if isinstance(client, dict):
                        meta["client"] = client
            elif method == "tools/call":  # no id (or null): a notification, which nothing answers
                warnings.append(
                    f"{ln.where}: a tools/call without an id (JSON-RPC requests carry a string or integer id); left out"
                )
            elif method is None and mid is not None:  # a response
                if ln.sender is not None:
                    side = "server" if ln.sender == "client" else "client"
                else:
                    has_server = bool(open_requests.get(("server", mid)))
                    has_client = bool(open_requests.get(("client", mid)))
                    side = "server" if has_server and (not has_client or _answers_server_request(msg)) else "client"
                queue = open_requests.get((side, mid))
                if not queue:
                    warnings.append(f"{ln.where}: a response with id {mid!r} answers no open request; ignored")
                    continue
                req = queue.pop(0)
                if req["method"] == "tools/call":
                    req["response"] = msg
                elif req["method"] == "tools/list":
                    listed = msg.get("result")
                    tools = listed.get("tools") if isinstance(listed, dict) else None
                    for t in tools or []:
                        if (
                            isinstance(t, dict)
                            and isinstance(t.get("name"), str)
                            and isinstance(t.get("description"), str)
                        ):
                            descriptions[t["name"]] = t["description"]
    steps: list[ToolCallStep] = []
    for c in calls:
        if c["response"] is None:
            warnings.append(f"{c['where']}: the tools/call of {c['name']} (id {c['id']!r}) has no response; left out")
            continue
        r = interpret_response(c["response"])
        is_error, code, result = r.is_error, r.code, r.result
        if is_error and not c["ok"]:
            code = "invalid_argument"
        steps.append(
            make_step(
                len(steps) + 1, c["name"], c["arguments"], is_error=is_error, code=code, result=result, rule=r.rule
            )
        )
    if descriptions:
        meta["tool_descriptions"] = descriptions
    traj = Trajectory(
        episode_id=f"{Path(file).name}:{group.label}",
        task_id=task_id,
        agent=agent or EXTERNAL_AGENT,
        steps=steps,
        final_message=final,
        ledger=None,
        metadata=meta,
    )
    return Episode(label=group.label, trajectory=traj, line=group.line, warnings=warnings)


def load(path: str | Path) -> LoadResult:
    """Read a JSON Lines log of MCP JSON-RPC messages (module docstring).

    A line that is not JSON is a problem naming the line; a JSON line that is neither a
    JSON-RPC message nor a wrapper of one is a problem too; the other lines are used.
    """
    p = Path(path)
    result = LoadResult(file=str(path), format=FORMAT)
    text = read_text(p, result)
    if text is None:
        return result
    records, jsonl = read_json_records(p, text, result)
    items: list[tuple[int | None, str, Any]] = [(n, f"line {n}", v) for n, v in records]
    if not jsonl and records and isinstance(records[0][1], list):
        # one JSON document: a list of log lines
        items = [(None, f"item {i}", v) for i, v in enumerate(records[0][1], start=1)]
    lines: list[_Line] = []
    for lineno, where, value in items:
        ln = _unpack(lineno, where, value)
        if ln is None:
            prefix = f"{where}: " if lineno is None else ""
            result.problem(
                f"{prefix}not a JSON-RPC message (expected an object with jsonrpc/method/id, or a "
                f"wrapper holding one under {'/'.join(MESSAGE_KEYS)})",
                line=lineno,
            )
            continue
        lines.append(ln)
    for group in _groups(lines):
        try:
            ep = _episode(group, str(path))
        except Exception as exc:  # noqa: BLE001 - a malformed episode must not stop the others
            result.problem(f"cannot be converted ({type(exc).__name__}: {exc})", line=group.line, episode=group.label)
            continue
        result.descriptions.update(ep.trajectory.metadata.get("tool_descriptions", {}))
        result.add(ep)
    if not result.episodes and not result.problems:
        result.problem("no JSON-RPC messages in the file", severity="warning")
    return result


__all__ = [
    "DIRECTION_KEYS",
    "FORMAT",
    "MESSAGE_KEYS",
    "SERVER_METHODS",
    "SESSION_KEYS",
    "interpret_response",
    "load",
    "record_sender",
]
