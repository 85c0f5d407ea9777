"""The proxy's connection to its upstream MCP server, over stdio or streamable HTTP.

:class:`Upstream` runs the SDK client (``mcp.Client``) in a task of its own, so that the
connection can be awaited with a deadline and its failure (the server crashed, broke the
protocol, closed the pipe) is seen by every waiting call instead of hanging it. Every wait on
the upstream has a deadline: connecting (``connect_timeout``) and every request
(``call_timeout``), wall seconds.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from pydantic import BaseModel, Field, model_validator

from mcpgym.kernel.exceptions import ServiceError
from mcpgym.server.proxy.lines import broken_answer_reason

DEFAULT_CONNECT_TIMEOUT = 60.0
"""Wall seconds to start the upstream and finish its initialisation."""
DEFAULT_CALL_TIMEOUT = 60.0
"""Wall seconds any one request to the upstream may take."""


class UpstreamSpec(BaseModel):
    """Where the upstream server is: a command run over stdio, or a streamable-HTTP URL.

    Attributes:
        command: the command and its arguments (``["mcp-server-git", "--repository", "r"]``).
        url: the streamable-HTTP endpoint (``http://127.0.0.1:8000/mcp``).
        env: extra environment variables for the command.
        cwd: working directory of the command.
        connect_timeout, call_timeout: deadlines in wall seconds (> 0).

    Exactly one of ``command`` and ``url`` is given (a ValueError names both otherwise).
    """

    command: list[str] | None = None
    url: str | None = None
    env: dict[str, str] | None = None
    cwd: str | None = None
    connect_timeout: float = Field(DEFAULT_CONNECT_TIMEOUT, gt=0, le=3600)
    call_timeout: float = Field(DEFAULT_CALL_TIMEOUT, gt=0, le=86_400)

    @model_validator(mode="after")
    def _one_target(self) -> UpstreamSpec:
        if (self.command is None) == (self.url is None) or (self.command is not None and not self.command):
            raise ValueError("give the upstream as a command (--upstream CMD...) or a URL (--upstream-url), not both")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"--upstream-url must be an http(s) URL, got {self.url[:200]!r}")
        return self

    def describe(self) -> str:
        """The upstream as one line (for trajectories and errors)."""
        return self.url if self.url is not None else " ".join(self.command or [])


class UpstreamFailure(enum.Enum):
    """How a request to the upstream failed (what the client is told: ``timeout`` or ``unavailable``)."""

    TIMEOUT = "timeout"
    """No answer within ``call_timeout``: the call may have applied (a retryable ``timeout``)."""
    CLOSED = "closed"
    """The upstream is gone (crashed, closed its pipe, never started): ``unavailable``."""
    BROKEN = "broken"
    """The upstream answered, but the answer breaks the protocol: ``unavailable``, at once."""


class UpstreamError(ServiceError):
    """The upstream could not be reached or stopped answering; the message says how.

    Attributes:
        failure: which way it failed (:class:`UpstreamFailure`), never read from the message.
    """

    def __init__(self, message: str, failure: UpstreamFailure = UpstreamFailure.CLOSED) -> None:
        super().__init__(message)
        self.failure = failure


class Callbacks(BaseModel):
    """What the upstream may ask of the proxy's own client, forwarded downstream.

    Each is an async callable or None (the SDK's default answer).
    """

    model_config = {"arbitrary_types_allowed": True}

    elicitation: Callable[..., Awaitable[Any]] | None = None
    sampling: Callable[..., Awaitable[Any]] | None = None
    logging: Callable[..., Awaitable[Any]] | None = None
    message: Callable[..., Awaitable[Any]] | None = None


async def _no_validation(name: str, result: Any) -> None:
    """The proxy passes answers on as they are; the downstream client validates them."""


class Upstream:
    """One connection to the upstream (use :meth:`run` in a task group, then :meth:`ready`).

    Attributes:
        spec: the :class:`UpstreamSpec`.
        client: the connected ``mcp.Client`` (None until ready).
        failure: why the connection ended or never started (None while it lives).
        tap: a :class:`~mcpgym.server.proxy.upstream_stdio.Tap` that sees a command
            upstream's lines first (the session's fast path), or None.
    """

    def __init__(self, spec: UpstreamSpec, callbacks: Callbacks | None = None, *, mode: Any = "legacy") -> None:
        self.spec = spec
        self.callbacks = callbacks or Callbacks()
        self.mode = mode
        self.client: Any = None
        self.failure: str | None = None
        self.tap: Any = None
        self._ready = anyio.Event()
        self._done = anyio.Event()
        self._close = anyio.Event()
        self._waiting: set[anyio.CancelScope] = set()

    def _target(self) -> Any:
        if self.spec.url is not None:
            return self.spec.url
        from mcpgym.server.proxy import upstream_stdio

        command = self.spec.command or []
        if upstream_stdio.available():
            return upstream_stdio.subprocess_stdio(
                command[0], command[1:], env=self.spec.env, cwd=self.spec.cwd, tap=self.tap
            )
        from mcp.client.stdio import StdioServerParameters

        return StdioServerParameters(command=command[0], args=command[1:], env=self.spec.env, cwd=self.spec.cwd)

    async def run(self) -> None:
        """Connect and hold the connection until :meth:`close` (or the upstream fails)."""
        from mcp import Client

        cb = self.callbacks
        try:
            async with Client(
                self._target(),
                mode=self.mode,
                elicitation_callback=cb.elicitation,  # type: ignore[arg-type]
                sampling_callback=cb.sampling,  # type: ignore[arg-type]
                logging_callback=cb.logging,  # type: ignore[arg-type]
                message_handler=cb.message,  # type: ignore[arg-type]
                cache=None,
            ) as client:
                client.session.validate_tool_result = _no_validation  # type: ignore[method-assign]
                self.client = client
                self._ready.set()
                await self._close.wait()
        except Exception as exc:  # noqa: BLE001 - any end of the upstream is reported, never raised into the proxy
            self.failure = f"the upstream {self.spec.describe()!r} failed: {_why(exc)}"
        else:
            if not self._close.is_set():
                self.failure = f"the upstream {self.spec.describe()!r} closed the connection"
        finally:
            self.client = None
            if self.failure is None:
                self.failure = "the upstream connection is closed"
            self._ready.set()
            self._done.set()
            for waiting in list(self._waiting):  # every request still waiting ends now
                waiting.cancel()

    async def ready(self) -> None:
        """Wait until connected.

        Raises:
            UpstreamError: when the upstream failed to start, or did not finish its
                initialisation within ``connect_timeout`` seconds.
        """
        with anyio.move_on_after(self.spec.connect_timeout):
            await self._ready.wait()
        if self.client is None:
            if self.failure is not None:
                raise UpstreamError(self.failure)
            raise UpstreamError(
                f"the upstream {self.spec.describe()!r} did not initialise within {self.spec.connect_timeout:g} s",
                UpstreamFailure.TIMEOUT,
            )

    def close(self) -> None:
        """Ask :meth:`run` to end the connection (and the upstream process)."""
        self._close.set()

    @property
    def closing(self) -> bool:
        """True once :meth:`close` was called (an end the proxy asked for)."""
        return self._close.is_set()

    @property
    def alive(self) -> bool:
        """True while the connection is up."""
        return self.client is not None and not self._done.is_set()

    async def request(self, call: Callable[[Any], Awaitable[Any]], what: str) -> Any:
        """Run one request on the upstream's session within ``call_timeout`` seconds.

        Args:
            call: ``session -> awaitable`` (e.g. ``lambda s: s.list_tools()``).
            what: the request, for the error message.

        Raises:
            UpstreamError: when the upstream is gone, did not answer in time, or its answer
                broke the protocol. An ``mcp.shared.exceptions.MCPError`` (a JSON-RPC error
                answer of the upstream) is raised as it is.
        """
        from mcp.shared.exceptions import MCPError

        client = self.client
        if client is None:
            raise UpstreamError(self.failure or "the upstream is not connected")
        result: Any = None
        failed: str | None = None
        kind = UpstreamFailure.CLOSED
        timeout = self.spec.call_timeout
        # one cancel scope per request, its deadline the call timeout; run() cancels every
        # waiting scope when the connection ends (no watcher task per request)
        scope = anyio.CancelScope(deadline=anyio.current_time() + timeout)
        self._waiting.add(scope)
        try:
            with scope:
                result = await call(client.session)
        except MCPError as exc:
            if _is_timeout(exc):
                failed, kind = f"the upstream did not answer {what} within {timeout:g} s", UpstreamFailure.TIMEOUT
            elif _is_closed(exc):
                failed = self.failure or f"the upstream closed the connection during {what}"
            elif (broken := broken_answer_reason(exc.error)) is not None:
                failed, kind = f"the upstream's answer to {what} broke the protocol: {broken}", UpstreamFailure.BROKEN
            else:
                raise  # the upstream's own JSON-RPC error answer
        except Exception as exc:  # noqa: BLE001 - a broken answer is reported, never raised
            failed, kind = f"the upstream's answer to {what} broke the protocol: {_why(exc)}", UpstreamFailure.BROKEN
        finally:
            self._waiting.discard(scope)
        if scope.cancelled_caught and not self._done.is_set():
            failed, kind = f"the upstream did not answer {what} within {timeout:g} s", UpstreamFailure.TIMEOUT
        if failed is None and result is None and not self._done.is_set():
            failed, kind = f"no answer to {what}", UpstreamFailure.BROKEN
        if self._done.is_set() and result is None:
            failed, kind = self.failure or f"the upstream closed the connection during {what}", UpstreamFailure.CLOSED
        if failed is not None:
            raise UpstreamError(failed, kind)
        return result


def _is_timeout(exc: Exception) -> bool:
    return (
        getattr(getattr(exc, "error", None), "code", None) == types.REQUEST_TIMEOUT or "timed out" in str(exc).lower()
    )


def _is_closed(exc: Exception) -> bool:
    return getattr(getattr(exc, "error", None), "code", None) == types.CONNECTION_CLOSED


def _why(exc: BaseException) -> str:
    """One bounded line for an exception (exception groups: their first leaf)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text[:500]
