"""The evaluation runner's view of an mcpgym HTTP server: spawn one, or talk to a given one.

:func:`spawn_server` starts ``python -m mcpgym.evaluation.cli serve --transport http --port 0`` with
a fresh random control token (passed through ``$MCPGYM_TOKEN``, so it never shows in the
process list), waits for its ``MCPGYM_READY {"url": ...}`` line and returns a
:class:`ServerHandle`. On Linux the child gets ``PR_SET_PDEATHSIG = SIGTERM``: when the runner
dies, even by ``SIGKILL``, its server goes with it. :class:`ControlClient` wraps the control
API (docs/design.md §5).
"""

from __future__ import annotations

import functools
import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, ClassVar, TypeVar

import anyio
import httpx2  # the MCP SDK's HTTP client library (a dependency of mcp): one HTTP stack for both
from pydantic import BaseModel, ValidationError

from mcpgym.kernel.exceptions import InvalidValue, ServiceError
from mcpgym.kernel.shorten import short_text
from mcpgym.kernel.wording import counted
from mcpgym.server.control_models import EPISODE_PARTS, CreateEpisode, EpisodeCreated, EpisodeList, Health

READY_PREFIX = "MCPGYM_READY "
M = TypeVar("M", bound=BaseModel)


class ServerError(ServiceError, RuntimeError):
    """The server could not be started or reached, or its control API refused a request
    (exit code 2: the ``--server`` given, or the machine, does not serve)."""

    exit_code: ClassVar[int] = 2


def _pdeathsig(parent: int) -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask for SIGTERM when ``parent`` (the runner) dies; exit at once if it already has."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort: not Linux, or no libc.so.6
        return
    # The runner may have died between fork and prctl: then no signal will ever come.
    if os.getppid() != parent:
        os._exit(1)


@dataclass
class ServerHandle:
    """A server the runner talks to.

    Attributes:
        url: base URL (``http://127.0.0.1:PORT``); token: the control token.
        process: the child process when the runner spawned it, else None.
        log_path: where the spawned server's stdout/stderr go.
    """

    url: str
    token: str
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    _drain: threading.Thread | None = field(default=None, repr=False)

    @property
    def spawned(self) -> bool:
        """True when the runner started this server (and must stop it)."""
        return self.process is not None

    def exit_code(self) -> int | None:
        """The spawned server's exit code, None while it runs (or when it was not spawned)."""
        return None if self.process is None else self.process.poll()

    def stop(self, grace: float = 5.0) -> None:
        """Stop a spawned server: SIGTERM, then SIGKILL after ``grace`` wall seconds. No-op otherwise."""
        proc = self.process
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=grace)
        if self._drain is not None:
            self._drain.join(timeout=grace)


class _Log:
    """The spawned server's output sink: kept in memory until :meth:`attach` names its file
    (a server started before the run directory is ready), then appended to that file."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buffer: list[bytes] = []
        self._file: BinaryIO | None = None
        self._closed = False

    def attach(self, path: Path) -> None:
        """Append what was buffered to ``path`` and write there from now on; a new (or empty)
        file first gets mcpgym's header line (:data:`mcpgym.evaluation.run.run_owner.SERVER_LOG_HEADER`).

        Raises:
            OSError: ``path`` cannot be opened for appending.
        """
        from mcpgym.evaluation.records.atomic import open_append
        from mcpgym.evaluation.run.run_owner import SERVER_LOG_HEADER

        path.parent.mkdir(parents=True, exist_ok=True)
        f = os.fdopen(open_append(path), "ab")  # a symlink in the log's place is refused
        with self._lock:
            if f.tell() == 0:  # mcpgym's first line: the proof --force needs to delete the log
                f.write(SERVER_LOG_HEADER.encode("utf-8"))
            f.write(b"".join(self._buffer))
            f.flush()
            self._buffer.clear()
            if self._closed:
                f.close()
            else:
                self._file = f

    def write(self, raw: bytes) -> None:
        """Keep one line of the server's output."""
        with self._lock:
            if self._file is not None:
                self._file.write(raw)
                self._file.flush()
            elif not self._closed:
                self._buffer.append(raw)

    def close(self) -> None:
        """The server's output ended: close the file (buffered bytes stay until :meth:`attach`)."""
        with self._lock:
            self._closed = True
            if self._file is not None:
                self._file.close()
                self._file = None


def _pump(stream: BinaryIO, lines: queue.Queue[str | None], log: _Log) -> None:
    """Copy the child's output into ``log``; hand the READY line to ``lines``."""
    ready = False
    try:
        for raw in iter(stream.readline, b""):
            log.write(raw)
            if not ready:
                text = raw.decode("utf-8", "replace").strip()
                if text.startswith(READY_PREFIX):
                    ready = True
                    lines.put(text)
    finally:
        lines.put(None)
        log.close()


@dataclass
class ServerStart:
    """A server process started with :func:`start_server` and not yet waited for.

    Starting it before the caller's own imports and task loading lets the two interpreters'
    start-up overlap; :meth:`ready` then names its log file and waits for ``MCPGYM_READY``.
    :meth:`cancel` stops a start nobody adopted (no-op after :meth:`ready`).
    """

    process: subprocess.Popen[bytes]
    token: str
    _lines: queue.Queue[str | None]
    _log: _Log
    _drain: threading.Thread
    adopted: bool = False

    def ready(self, log_path: str | Path, *, startup_timeout: float = 60.0) -> ServerHandle:
        """Write the server's output (so far and from now on) to ``log_path`` and wait up to
        ``startup_timeout`` wall seconds for its ready line.

        Raises:
            ServerError: the server exited or stayed silent; the message quotes its log's end.
        """
        log_path = Path(log_path)
        self.adopted = True
        handle = ServerHandle(url="", token=self.token, process=self.process, log_path=log_path, _drain=self._drain)
        try:
            self._log.attach(log_path)
            line = self._lines.get(timeout=startup_timeout)
        except queue.Empty:
            line = None
        except BaseException:  # interrupted while waiting: do not leave the child behind
            handle.stop()
            raise
        if line is None:
            handle.stop()
            tail = log_path.read_text(encoding="utf-8", errors="replace")[-2000:].strip()
            raise ServerError(
                f"the mcpgym server did not start (exit code {self.process.poll()}); its log {log_path} ends with:\n{tail}"
            )
        try:
            handle.url = json.loads(line[len(READY_PREFIX) :])["url"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            handle.stop()
            raise ServerError(f"unreadable ready line from the server: {line!r}") from exc
        return handle

    def cancel(self) -> None:
        """Stop the server unless :meth:`ready` adopted it (then its handle owns it)."""
        if not self.adopted:
            self.adopted = True
            ServerHandle(url="", token=self.token, process=self.process, _drain=self._drain).stop()


def start_server(*, max_episodes: int = 1000, python: str | None = None) -> ServerStart:
    """Start ``mcpgym serve --transport http`` on a free loopback port without waiting for it.

    Args:
        max_episodes: the server's cap on live episodes.
        python: interpreter (default: ``sys.executable``).

    Returns:
        A :class:`ServerStart`; its output is kept in memory until :meth:`ServerStart.ready`.

    Raises:
        OSError: the interpreter cannot be executed.
    """
    token = secrets.token_urlsafe(24)
    env = {**os.environ, "MCPGYM_TOKEN": token, "PYTHONUNBUFFERED": "1"}
    cmd = [
        python or sys.executable,
        "-m",
        "mcpgym.evaluation.cli",
        "serve",
        "--transport",
        "http",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--max-episodes",
        str(max_episodes),
    ]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        preexec_fn=functools.partial(_pdeathsig, os.getpid()) if sys.platform.startswith("linux") else None,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    log = _Log()
    assert proc.stdout is not None
    drain = threading.Thread(target=_pump, args=(proc.stdout, lines, log), name="mcpgym-server-log", daemon=True)
    drain.start()
    return ServerStart(process=proc, token=token, _lines=lines, _log=log, _drain=drain)


def spawn_server(
    log_path: str | Path,
    *,
    max_episodes: int = 1000,
    startup_timeout: float = 60.0,
    python: str | None = None,
) -> ServerHandle:
    """Start an mcpgym HTTP server on a free loopback port and wait until it is ready
    (:func:`start_server` then :meth:`ServerStart.ready`).

    Args:
        log_path: file the server's stdout and stderr are appended to.
        max_episodes: the server's cap on live episodes.
        startup_timeout: wall seconds to wait for the ``MCPGYM_READY`` line.
        python: interpreter (default: ``sys.executable``).

    Raises:
        ServerError: when the server exits or stays silent past ``startup_timeout``; the
            message quotes the end of its log.
    """
    return start_server(max_episodes=max_episodes, python=python).ready(log_path, startup_timeout=startup_timeout)


class ControlClient:
    """Async client of the control API of one server (every request carries the bearer token).

    Args:
        url: the server's base URL. token: the control token. timeout: wall seconds per request.
    """

    def __init__(self, url: str, token: str, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self._http = httpx2.AsyncClient(
            base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout
        )

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> ControlClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def health(self) -> Health:
        """``GET /health``, then an authorised ``GET /control/episodes`` to check the token.

        Raises:
            ServerError: unreachable server, a wrong token, or a malformed answer.
        """
        try:
            r = await self._http.get("/health")
            r.raise_for_status()
            c = await self._http.get("/control/episodes")
        except httpx2.HTTPError as exc:
            raise ServerError(f"cannot reach the mcpgym server at {self.url}: {exc}") from None
        if c.status_code == 401:
            raise ServerError(f"the server at {self.url} refused the control token (401)")
        return _answer(Health, r, "GET /health")

    async def create_episode(self, body: CreateEpisode | dict[str, Any], *, patience: float = 120.0) -> EpisodeCreated:
        """``POST /control/episodes``; waits out 429 (episode cap) for up to ``patience`` wall seconds.

        Args:
            body: the request; a dict is validated as :class:`CreateEpisode` first.

        Returns:
            The server's answer, validated (``episode_id``, ``mcp_url``, ``fault_seed``, ``apps``...).

        Raises:
            ServerError: for any other failure (the message carries the server's error), or an
                answer that is not an :class:`EpisodeCreated`.
            InvalidValue: ``body`` is no valid :class:`CreateEpisode` (nothing is sent).
        """
        try:
            request = body if isinstance(body, CreateEpisode) else CreateEpisode.model_validate(body)
        except ValidationError as exc:
            raise InvalidValue(f"not a valid episode request: {_problem(exc)}") from None
        content = request.model_dump_json(exclude_none=True)
        deadline = time.monotonic() + patience
        while True:
            try:
                r = await self._http.post(
                    "/control/episodes", content=content, headers={"Content-Type": "application/json"}
                )
            except httpx2.HTTPError as exc:
                raise ServerError(f"cannot create an episode at {self.url}: {type(exc).__name__}: {exc}") from None
            if r.status_code == 201:
                return _answer(EpisodeCreated, r, "POST /control/episodes")
            if r.status_code == 429 and time.monotonic() < deadline:
                await anyio.sleep(min(float(r.headers.get("Retry-After", "1") or 1), 2.0))
                continue
            raise ServerError(f"creating an episode failed ({r.status_code}): {_error_text(r)}")

    async def list_episodes(self) -> EpisodeList:
        """``GET /control/episodes``: the live episodes' ids, the cap, the open MCP sessions.

        Raises:
            ServerError: on a transport error, a non-200 answer, or a malformed one.
        """
        try:
            r = await self._http.get("/control/episodes")
        except httpx2.HTTPError as exc:
            raise ServerError(f"GET /control/episodes failed: {type(exc).__name__}: {exc}") from None
        if r.status_code != 200:
            raise ServerError(f"GET /control/episodes failed ({r.status_code}): {_error_text(r)}")
        return _answer(EpisodeList, r, "GET /control/episodes")

    async def get(self, episode_id: str, part: str = "") -> Any:
        """``GET /control/episodes/{id}[/part]`` (part: ``snapshot``, ``initial``, ``calls``, ``ledger``,
        ``final``: the three of an ending episode in one answer).

        Returns:
            The answer as JSON (so it goes into a trajectory unchanged), once it validated
            against its model (:data:`mcpgym.server.control_models.EPISODE_PARTS`): an episode
            summary, a list of call records, a list of ledger entries, or a snapshot object.

        Raises:
            ValueError: for an unknown ``part``.
            ServerError: on a transport error, a non-200 answer, or an answer its model refuses.
        """
        adapter = EPISODE_PARTS.get(part)
        if adapter is None:
            raise ValueError(f"unknown episode part {part!r} (expected one of {sorted(EPISODE_PARTS)})")
        path = f"/control/episodes/{episode_id}" + (f"/{part}" if part else "")
        try:
            r = await self._http.get(path)
        except httpx2.HTTPError as exc:
            raise ServerError(f"GET {path} failed: {type(exc).__name__}: {exc}") from None
        if r.status_code != 200:
            raise ServerError(f"GET {path} failed ({r.status_code}): {_error_text(r)}")
        try:
            data = r.json()
            adapter.validate_python(data)
        except (ValueError, ValidationError) as exc:
            raise ServerError(f"GET {path}: malformed answer from the server: {_problem(exc)}") from None
        return data

    async def delete(self, episode_id: str) -> bool:
        """``DELETE /control/episodes/{id}``; True when it existed. Transport errors are swallowed (False)."""
        try:
            r = await self._http.delete(f"/control/episodes/{episode_id}")
        except httpx2.HTTPError:
            return False
        return r.status_code == 204


def _problem(exc: Exception) -> str:
    """One bounded line saying why an answer did not validate."""
    if isinstance(exc, ValidationError):
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"]) or "(the answer)"
        return short_text(f"{where}: {err['msg']} ({counted(exc.error_count(), 'error')})", 300)
    return short_text(f"{type(exc).__name__}: {exc}", 300)


def _answer(model: type[M], r: httpx2.Response, what: str) -> M:
    """``r``'s JSON body validated as ``model``.

    Raises:
        ServerError: the body is not JSON or not a ``model`` (a server of another version,
            or not an mcpgym server).
    """
    try:
        return model.model_validate_json(r.content)
    except ValidationError as exc:
        raise ServerError(f"{what}: malformed answer from the server at {r.url}: {_problem(exc)}") from None


def _error_text(r: httpx2.Response) -> str:
    try:
        data = r.json()
        return str(data.get("error", data)) if isinstance(data, dict) else str(data)
    except ValueError:
        return r.text[:500]


__all__ = ["ControlClient", "READY_PREFIX", "ServerError", "ServerHandle", "spawn_server"]
