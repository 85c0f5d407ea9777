"""Executors: where a run's episodes are played. The driver (:mod:`mcpgym.evaluation.run.runner`)
plans the jobs, hands each to an executor, and alone writes what comes back.

Every executor is an async context manager with ``await executor.run(job) -> Trajectory``
(the scored trajectory; :class:`mcpgym.evaluation.run.episode_runner.HarnessFailure` when the
episode could not be played to the end), ``check()`` (raises ``RunError`` when the executor
cannot go on), ``retried`` (episodes played again after a lost worker) and ``describe()``
(JSON for the manifest).

- :class:`LocalExecutor` (``--executor local``): one mcpgym HTTP server on this machine,
  every episode through :func:`mcpgym.evaluation.run.episode_runner.run_episode`.
- :class:`mcpgym.evaluation.run.ray_executor.RayExecutor` (``--executor ray``): Ray actors, each
  with its own server, playing episodes sent as :class:`mcpgym.evaluation.run.episode_spec.EpisodeSpec`
  through the same ``run_episode``.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections.abc import Callable
from typing import Any

import httpx
import httpx2  # the MCP SDK's HTTP client library (a dependency of mcp)

from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.run.episode_runner import EpisodeContext, EpisodeJob, run_episode
from mcpgym.evaluation.run.run_dir import RunError
from mcpgym.evaluation.run.server_process import ControlClient, ServerHandle


def mcp_http_client() -> httpx2.AsyncClient:
    """The HTTP client every MCP session of a run (or of a Ray worker) shares: the SDK
    transport's own client type (``httpx2``) with the timeouts its transports use, 30 s per
    operation and 300 s to read a response stream the server may hold open (virtual time does
    not apply: these are wall seconds)."""
    return httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=300.0))


class LocalExecutor:
    """Episodes against one server (spawned by the runner or given with ``--server``).

    Args:
        server: the server. make_context: builds the :class:`EpisodeContext` of the run from
            the control client and the shared HTTP client, once connected.
    """

    retried = 0

    def __init__(self, server: ServerHandle, make_context: Callable[[ControlClient, Any], EpisodeContext]) -> None:
        self.server = server
        self.make_context = make_context
        self.ctx: EpisodeContext | None = None
        self._control: ControlClient | None = None
        self._http: Any = None

    async def __aenter__(self) -> LocalExecutor:
        """Connect to the server and check it answers with this token.

        Raises:
            mcpgym.evaluation.run.server_process.ServerError: unreachable server or wrong token.
        """
        self._control = ControlClient(self.server.url, self.server.token)
        self._http = mcp_http_client()
        try:
            await self._control.health()
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        self.ctx = self.make_context(self._control, self._http)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._http is not None:
            await self._http.aclose()
        if self._control is not None:
            await self._control.aclose()

    async def run(self, job: EpisodeJob) -> Trajectory:
        """Play ``job``; see :func:`run_episode`."""
        assert self.ctx is not None, "use the executor as an async context manager"
        return await run_episode(self.ctx, job)

    def check(self, wait: float = 5.0) -> None:
        """After a failed episode: raise ``RunError`` when the server is gone, so that a run
        whose server died ends with one message naming the exit instead of one "could not be
        run" line per remaining episode.

        A spawned server that has exited is named with its exit (code or signal). A server
        that refuses connections is waited for up to ``wait`` wall seconds to exit (a server
        shutting down on SIGINT closes its socket before its process ends); one that is not
        spawned and refuses connections has stopped answering. Blocking: call it in a thread.
        """
        code = self.server.exit_code()
        if code is None:
            if self._answers():
                return
            proc = self.server.process
            if proc is not None:
                try:
                    code = proc.wait(timeout=wait)
                except subprocess.TimeoutExpired:
                    raise RunError(
                        f"the mcpgym server (pid {proc.pid}) stopped accepting connections during the run; "
                        f"see {self.server.log_path}"
                    ) from None
            else:
                raise RunError(
                    f"the mcpgym server at {self.server.url} stopped accepting connections during the run; "
                    "the finished episodes are kept: start it again and continue with --resume"
                )
        raise RunError(
            f"the mcpgym server exited during the run ({describe_exit(code)}); the finished episodes are kept "
            f"(continue with --resume); see {self.server.log_path}"
        )

    def _answers(self) -> bool:
        """Whether the server accepts a connection and answers ``GET /health`` (2 s)."""
        try:
            httpx.get(f"{self.server.url}/health", timeout=2.0)
        except httpx.TransportError:
            return False
        return True

    def describe(self) -> dict[str, Any]:
        """``{"kind": "local"}`` for the manifest."""
        return {"kind": "local"}


def describe_exit(code: int) -> str:
    """A process's exit status in words: ``exit code 3``; ``killed by SIGKILL`` for ``-9``; for
    a shell-style ``128 + N`` (130), the signal N it stopped on (``SIGINT``)."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    if code > 128:
        with contextlib.suppress(ValueError):  # 128 + N with N no signal: a plain exit code
            return f"exit code {code}: 128 + {signal.Signals(code - 128).name}, the server stopped on that signal"
    return f"exit code {code}"


__all__ = ["LocalExecutor", "describe_exit", "mcp_http_client"]
