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

from typing import Any

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
        server: the server. ctx_args: the :class:`EpisodeContext` fields other than
            ``control`` and ``http`` (catalog, gold snapshots, timeout, k, ...).
    """

    retried = 0

    def __init__(self, server: ServerHandle, ctx_args: dict[str, Any]) -> None:
        self.server = server
        self.ctx_args = ctx_args
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
        self.ctx = EpisodeContext(control=self._control, http=self._http, **self.ctx_args)
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

    def check(self) -> None:
        """Raise ``RunError`` when a spawned server has exited (after a failed episode)."""
        code = self.server.exit_code()
        if code is not None:
            raise RunError(f"the mcpgym server exited (code {code}) during the run; see {self.server.log_path}")

    def describe(self) -> dict[str, Any]:
        """``{"kind": "local"}`` for the manifest."""
        return {"kind": "local"}


__all__ = ["LocalExecutor", "mcp_http_client"]
