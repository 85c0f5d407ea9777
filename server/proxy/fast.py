"""The fast path of ``tools/call`` over stdio: a handshake-era client's call forwarded as a line.

A proxied call through the SDK on both sides costs two sessions' machinery (request dispatch,
a handler task, the upstream request's wait, validation and re-serialisation both ways) and
a dozen event-loop iterations; it made a proxied no-op call about twice a direct one
(benchmarks/proxy.py). When the client talks the handshake era (``initialize``, as Claude
Desktop and the SDK's legacy mode do) and the upstream is a subprocess over stdio
(:mod:`mcpgym.server.proxy.upstream_stdio`), :class:`FastCalls` takes each ``tools/call``
line off the client's input before the SDK parses it and, in the same event-loop turn:

1. asks the session's :class:`~mcpgym.server.proxy.plan.ProxyFaultPlan` for the decision,
   exactly as the SDK handler does (a refused call is answered and logged at once);
2. otherwise writes the request to the upstream unchanged but for its id (a proxy-owned
   string, ``mcpgym-fast-N``, that the SDK client's integer ids never meet);
3. takes the upstream's answer to that id off the upstream's output, again before the SDK
   parses it, settles it with the plan (logged in the call log and ledger as on the SDK path:
   a withheld write answers ``timeout``, a stale read the older answer) and writes the
   client's answer under the client's id.

What the client gets is what the SDK path gives: the result validated and dumped for the
negotiated protocol version (``mcp_types.methods.serialize_server_result``), an upstream
JSON-RPC error passed on with its code, message and data, and the SDK path's tool errors for
an upstream that broke the protocol (``unavailable``), did not answer within
``call_timeout`` (``timeout``) or closed the connection (``unavailable``); each of those marks
the session errored. Everything else (other methods, a line the fast path does not fully
understand, a 2026-07-28 client, an upstream over HTTP) goes through the SDK unchanged. An
upstream's elicitation or sampling request during a fast call reaches the client as on the
SDK path (the call is in the session's ``in_flight`` list). At the end of the client's input
the proxy waits for the calls still in flight (:mod:`mcpgym.server.proxy.drain`); calls still
waiting when it stops are not logged, and a call whose answer could not be written (the client
is gone) is marked undelivered (the trajectory leaves it out). The client's answers are written as they
come; the pipe buffers what a slow client has not read yet. A call the proxy stops waiting
for (past ``call_timeout``, or the client left) is cancelled on the upstream with
``notifications/cancelled``, as the SDK client does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.methods import serialize_server_result

from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.server.proxy.lines import LineWriter, answered_id
from mcpgym.server.proxy.plan import Action, Decision
from mcpgym.server.proxy.server import MAX_TOOL_NAME, ProxySession, _error_result, _InFlight
from mcpgym.server.proxy.upstream import UpstreamFailure, _is_closed, _is_timeout, _why

ID_PREFIX = "mcpgym-fast-"
"""Prefix of the request ids the fast path gives the upstream."""
_ID_MARK = b'"' + ID_PREFIX.encode()
TIMEOUT, CLOSED, BROKEN = UpstreamFailure.TIMEOUT, UpstreamFailure.CLOSED, UpstreamFailure.BROKEN
_METHOD_MARK = b'"tools/call"'


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class _Standalone:
    """A served request's ``ServerSession`` whose ``send_request`` goes on the connection's own
    channel: a fast call has no SDK request whose channel it could ride (over stdio both are
    the same pipe; ``related_request_id`` only routes streamable-HTTP answers)."""

    def __init__(self, session: Any) -> None:
        self._session = session

    async def send_request(self, request: Any, result_type: Any, *args: Any, metadata: Any = None, **kw: Any) -> Any:
        """``ServerSession.send_request`` without the request-scoped ``metadata``."""
        return await self._session.send_request(request, result_type, *args, **kw)


@dataclass
class CallContext:
    """What the session's elicitation and sampling callbacks need of a fast call's request
    (the SDK handler's ``ctx`` has the same three attributes)."""

    session: Any
    request_id: int | str
    protocol_version: str


@dataclass
class _Call:
    client_id: int | str
    name: str
    arguments: dict[str, Any] | None
    decision: Decision
    in_flight: _InFlight
    timer: asyncio.TimerHandle | None = None
    what: str = field(init=False)

    def __post_init__(self) -> None:
        self.what = f"tools/call {self.name!r}"


class FastCalls:
    """The fast path of one proxied stdio session (module docstring).

    Args:
        session: the proxied session (its plan, upstream, ``in_flight`` list).
        downstream: the writer to the client (None until the client's pipes are open: then
            the fast path stays off).

    Attributes:
        enabled: True once :meth:`enable` saw a handshake-era client (until then every line
            goes through the SDK).
    """

    def __init__(self, session: ProxySession, downstream: LineWriter | None = None) -> None:
        self.session = session
        self.downstream = downstream
        self.upstream: LineWriter | None = None
        self.enabled = False
        self._context: CallContext | None = None
        self._pending: dict[str, _Call] = {}
        self._count = 0
        self._closed = False
        self._upstream_ended = False

    def waiting(self) -> int:
        """Fast calls sent to the upstream and not answered to the client yet."""
        return len(self._pending)

    def attach_upstream(self, writer: LineWriter) -> None:
        """Take the writer to the upstream's stdin (the upstream transport calls this)."""
        self.upstream = writer

    def enable(self, ctx: Any) -> None:
        """Turn the fast path on for the client of ``ctx`` (a request the SDK served) when it
        talks a handshake-era protocol version; a 2026-07-28 client stays on the SDK path."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        version = str(getattr(ctx, "protocol_version", "") or "")
        if self.enabled or self._closed or self.downstream is None or not version:
            return
        if version in MODERN_PROTOCOL_VERSIONS:
            return
        self._context = CallContext(session=_Standalone(ctx.session), request_id=0, protocol_version=version)
        self.enabled = True

    def close(self) -> None:
        """The client is gone: forget the calls still waiting (not logged, as on the SDK path)."""
        self._closed = True
        self.enabled = False
        for upstream_id, call in self._pending.items():
            self._done(call)
            self._cancel_upstream(upstream_id, "the client left")
        self._pending.clear()

    # -- the client's side --------------------------------------------------------------------
    def from_client(self, line: bytes) -> bool:
        """A line from the client: True when it was a ``tools/call`` taken by the fast path."""
        if not self.enabled or self.upstream is None or _METHOD_MARK not in line:
            return False
        if b"\\ud" in line or b"\\uD" in line:  # a surrogate escape (maybe lone, no UTF-8): the SDK path judges it
            return False
        try:
            msg = json.loads(line, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            return False
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or msg.get("method") != "tools/call":
            return False
        client_id, params = msg.get("id"), msg.get("params")
        if isinstance(client_id, bool) or not isinstance(client_id, int | str) or not isinstance(params, dict):
            return False
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or len(name) > MAX_TOOL_NAME or not isinstance(arguments, dict | None):
            return False
        if set(msg) - {"jsonrpc", "id", "method", "params"}:
            return False
        plan = self.session.plan
        decision = plan.decide(name)
        upstream = self.session.upstream
        if decision.action is not Action.REFUSE and (self._upstream_ended or not upstream.alive):
            # the SDK path's answer to a call after the upstream's end, without waiting
            ctx = CallContext(None, client_id, "")
            gone = _Call(client_id, name, arguments, decision, _InFlight(ctx=ctx, send=None, receive=None))
            self._fail(gone, upstream.failure or f"the upstream closed the connection during {gone.what}", CLOSED)
            return True
        if decision.action is Action.REFUSE:
            settled = plan.settle(decision, arguments)
            assert settled.error is not None
            self._delivered(decision.step, self._answer(client_id, _error_result(settled.error)))
            return True
        assert self._context is not None
        ctx = CallContext(self._context.session, client_id, self._context.protocol_version)
        call = _Call(client_id, name, arguments, decision, _InFlight(ctx=ctx, send=None, receive=None))
        upstream_id = f"{ID_PREFIX}{self._count}"
        self._count += 1
        msg["id"] = upstream_id
        try:
            self.upstream.write_line(json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            gone_why = self.session.upstream.failure or f"the upstream closed the connection during {call.what}"
            self._fail(call, gone_why, CLOSED)
            return True
        timeout = self.session.upstream.spec.call_timeout
        call.timer = asyncio.get_running_loop().call_later(timeout, self._timed_out, upstream_id)
        self._pending[upstream_id] = call
        self.session.in_flight.append(call.in_flight)
        return True

    # -- the upstream's side ------------------------------------------------------------------
    def from_upstream(self, line: bytes) -> bool:
        """A line from the upstream: True when it answered a fast call (then answered downstream)."""
        if not self._pending or _ID_MARK not in line:
            return False
        try:
            msg = json.loads(line, parse_constant=_no_constant)
        except (ValueError, RecursionError) as exc:
            # no JSON Python reads whole (an integer of 5,000 digits...): still an answer when
            # it carries a fast call's id, and then a broken one, answered at once
            broken = self._pending.pop(rid, None) if isinstance(rid := answered_id(line), str) else None
            if broken is None:
                return False
            self._done(broken)
            self._fail(broken, f"the upstream's answer to {broken.what} broke the protocol: {_why(exc)}", BROKEN)
            return True
        if not isinstance(msg, dict) or "method" in msg:  # a request of the upstream's own: its ids are its own
            return False
        upstream_id = msg.get("id")
        call = self._pending.pop(upstream_id, None) if isinstance(upstream_id, str) else None
        if call is None:
            return False
        self._done(call)
        if msg.get("jsonrpc") != "2.0" or ("result" not in msg and "error" not in msg):
            shape = f"jsonrpc {msg.get('jsonrpc')!r}" if msg.get("jsonrpc") != "2.0" else "neither result nor error"
            self._fail(call, f"the upstream's answer to {call.what} broke the protocol: {shape}", BROKEN)
            return True
        if "error" in msg:  # as the SDK's parser reads it: an error answer, even beside a result
            self._upstream_error(call, msg["error"])
            return True
        self._settle(call, msg.get("result"))
        return True

    def upstream_ended(self) -> None:
        """The upstream's output ended: every waiting call gets the SDK path's closed-connection error."""
        self._upstream_ended = True
        pending, self._pending = list(self._pending.values()), {}
        for call in pending:
            self._done(call)
            if not self._closed:
                self._fail(
                    call,
                    self.session.upstream.failure or f"the upstream closed the connection during {call.what}",
                    CLOSED,
                )

    def _timed_out(self, upstream_id: str) -> None:
        call = self._pending.pop(upstream_id, None)
        if call is not None:
            self._done(call)
            timeout = self.session.upstream.spec.call_timeout
            self._cancel_upstream(upstream_id, f"no answer within {timeout:g} s")
            self._fail(call, f"the upstream did not answer {call.what} within {timeout:g} s", TIMEOUT)

    def _cancel_upstream(self, upstream_id: str, reason: str) -> None:
        """Tell the upstream a request is abandoned (the SDK client's courtesy ``notifications/cancelled``:
        a handler still running would otherwise keep the upstream from exiting at the end)."""
        if self.upstream is None or self._upstream_ended:
            return
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": upstream_id, "reason": reason},
        }
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            self.upstream.write_line(json.dumps(note).encode() + b"\n")

    def _settle(self, call: _Call, result: Any) -> None:
        """Log the upstream's result with the plan and answer the client (the SDK path's rules)."""
        assert self._context is not None
        version = self._context.protocol_version
        try:
            answer = types.CallToolResult.model_validate(result, by_name=False)
            wire = _line(call.client_id, {"result": serialize_server_result("tools/call", version, result)})
        except Exception as exc:  # noqa: BLE001 - any invalid answer (a lone surrogate too) is reported as on the SDK path
            self._fail(call, f"the upstream's answer to {call.what} broke the protocol: {_why(exc)}", BROKEN)
            return
        settled = self.session.plan.settle(call.decision, call.arguments, answer)
        if settled.error is not None:
            sent = self._answer(call.client_id, _error_result(settled.error))
        elif settled.answer is answer:
            sent = self._send(wire)
        else:
            sent = self._answer(call.client_id, settled.answer)
        self._delivered(call.decision.step, sent)

    def _upstream_error(self, call: _Call, error: Any) -> None:
        """An upstream JSON-RPC error answer: passed on with its code, message and data."""
        try:
            data = types.ErrorData.model_validate(error, by_name=False)
        except Exception as exc:  # noqa: BLE001
            self._fail(call, f"the upstream's answer to {call.what} broke the protocol: {_why(exc)}", BROKEN)
            return
        answered = MCPError(data.code, data.message, data.data)
        if _is_timeout(answered):
            timeout = self.session.upstream.spec.call_timeout
            self._fail(call, f"the upstream did not answer {call.what} within {timeout:g} s", TIMEOUT)
        elif _is_closed(answered):
            gone = self.session.upstream.failure or f"the upstream closed the connection during {call.what}"
            self._fail(call, gone, CLOSED)
        else:
            code = ErrorCode.INVALID_ARGUMENT if data.code == types.INVALID_PARAMS else ErrorCode.UNAVAILABLE
            failure = ToolError(code, f"upstream error {data.code}: {data.message}")
            self.session.plan.settle(call.decision, call.arguments, failure=failure)
            sent = self._write(
                call.client_id, {"error": data.model_dump(mode="json", by_alias=True, exclude_none=True)}
            )
            self._delivered(call.decision.step, sent)

    def _fail(self, call: _Call, why: str, failure: UpstreamFailure) -> None:
        """The upstream gave no usable answer: the SDK path's tool error (``timeout`` for
        :attr:`UpstreamFailure.TIMEOUT`, else ``unavailable``), logged, session errored."""
        code = ErrorCode.TIMEOUT if failure is UpstreamFailure.TIMEOUT else ErrorCode.UNAVAILABLE
        self.session.upstream_failed(why)
        err = ToolError(code, f"mcpgym proxy: {why}", retryable=code == ErrorCode.TIMEOUT)
        self.session.plan.settle(call.decision, call.arguments, failure=err)
        self._delivered(call.decision.step, self._answer(call.client_id, _error_result(err)))

    def _delivered(self, step: int, sent: bool) -> None:
        """A call's answer that could not be written (the client is gone) is no answer it got:
        its step goes to the session's ``undelivered`` (left out of the trajectory)."""
        if not sent:
            self.session.undelivered.append(step)

    def _done(self, call: _Call) -> None:
        if call.timer is not None:
            call.timer.cancel()
        if call.in_flight in self.session.in_flight:
            self.session.in_flight.remove(call.in_flight)

    # -- writing to the client ----------------------------------------------------------------
    def _answer(self, client_id: int | str, result: types.CallToolResult) -> bool:
        assert self._context is not None
        dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return self._write(
            client_id, {"result": serialize_server_result("tools/call", self._context.protocol_version, dumped)}
        )

    def _write(self, client_id: int | str, body: dict[str, Any]) -> bool:
        """Write one answer to the client; False when it could not be written (the client is
        gone: it misses the answer, and the caller marks the call undelivered)."""
        return self._send(_line(client_id, body))

    def _send(self, line: bytes) -> bool:
        """Write one whole line to the client (see :meth:`_write`)."""
        assert self.downstream is not None
        try:
            self.downstream.write_line(line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        return True


def _line(client_id: int | str, body: dict[str, Any]) -> bytes:
    """One JSON-RPC answer line under ``client_id``.

    Raises:
        UnicodeEncodeError: when ``body`` holds a lone surrogate (it cannot be UTF-8).
    """
    text = json.dumps({"jsonrpc": "2.0", "id": client_id, **body}, ensure_ascii=False, separators=(",", ":"))
    return text.encode() + b"\n"
