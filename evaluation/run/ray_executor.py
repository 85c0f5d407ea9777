"""``mcpgym run --executor ray``: episodes played by Ray actors (``pip install 'mcpgym[ray]'``).

The driver (the ``mcpgym run`` process) connects to a Ray cluster (``--ray-address``, else
``$RAY_ADDRESS``, else a local cluster started for the run) and starts ``--ray-workers``
:class:`EpisodeWorker` actors (default: one per CPU of the cluster, at most ``--concurrency``),
one CPU each. Each actor spawns its own mcpgym HTTP server on its node's loopback interface
(no server is shared across the cluster) and plays the episodes it is sent, up to its share of
``--concurrency`` at once, with the same :func:`mcpgym.evaluation.run.episode_runner.run_episode`
as ``--executor local``.

What travels to a worker is an :class:`mcpgym.evaluation.run.episode_spec.EpisodeSpec` (JSON: the
agent spec string, the task's fields, the trial, the fault seed and profile) and the run's
:class:`mcpgym.evaluation.run.config.RunConfig` as JSON; what comes back is the scored trajectory
as JSON, which the driver alone writes to the run directory, as the local executor's are.
A worker lost mid-episode (process killed, node gone) is restarted by Ray
(``max_restarts=-1``) and the driver sends the episode again, up to ``retries`` times; only
a returned trajectory is written, so the episode is recorded once.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import secrets
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.run.config import RunConfig
from mcpgym.evaluation.run.episode_runner import EpisodeContext, EpisodeJob, HarnessFailure
from mcpgym.evaluation.run.episode_spec import run_spec, spec_for
from mcpgym.evaluation.run.run_dir import RunError

FORWARDED_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
"""Environment variables of the driver handed to the workers (the LLM agents' endpoints and
keys), through Ray's ``runtime_env``; only those that are set."""


RESTART_PATIENCE = 300.0
"""Wall seconds an episode waits for a restarting worker before it is reported as failed."""

WORKER_PREFIX = "mcpgym-worker-"
"""Worker actors are named ``mcpgym-worker-<run id>-<i>`` (``ray list actors`` shows them)."""


def import_ray() -> Any:
    """The ``ray`` module.

    Raises:
        RunError: when Ray is not installed, saying how to install it.
    """
    try:
        import ray
    except ImportError:
        raise RunError("--executor ray needs Ray: pip install 'mcpgym[ray]'") from None
    return ray


def _warm_up() -> Any:
    """Import what an episode needs on the client side and build the scorer's catalog."""
    import mcp.client.streamable_http  # noqa: F401
    from mcp import Client  # noqa: F401

    import mcpgym.evaluation.tasks  # noqa: F401
    from mcpgym.evaluation.scoring.tool_catalog import Catalog

    return Catalog.from_apps()


class EpisodeWorker:
    """A Ray actor (an async one) that plays episodes against its own mcpgym server.

    Args:
        options: the run's :class:`RunConfig` as JSON (``RunConfig.recorded()``: no token). max_episodes: its server's cap on live episodes.

    Raises:
        mcpgym.evaluation.run.server_process.ServerError: the server did not start (the actor
            then fails to start; the driver reports it).
    """

    def __init__(self, options: dict[str, Any], max_episodes: int = 100) -> None:
        from mcpgym.evaluation.run.server_process import spawn_server

        self.options = RunConfig.model_validate(options)
        self.max_episodes = max_episodes
        self.log_dir = Path(tempfile.mkdtemp(prefix="mcpgym-worker-"))
        # The client side's imports and catalog (seconds of CPU) load while the server starts.
        with ThreadPoolExecutor(max_workers=1) as pool:
            warm = pool.submit(_warm_up)
            self.server = spawn_server(self.log_dir / "server.log", max_episodes=max_episodes)
            self.catalog = warm.result()
        self.gold: dict[str, dict[str, Any]] = {}
        self._ctx: EpisodeContext | None = None
        self.in_flight = 0

    async def _context(self) -> EpisodeContext:
        """The episode context, rebuilt (with a fresh server) when the server has exited."""
        from mcpgym.evaluation.agents import CallLimitReached, CallResult, ToolInfo
        from mcpgym.evaluation.run.executors import mcp_http_client
        from mcpgym.evaluation.run.server_process import ControlClient, spawn_server

        if self._ctx is not None and self.server.exit_code() is None:
            return self._ctx
        if self._ctx is not None:  # the server died: start another one
            await self._ctx.control.aclose()
            self.server = spawn_server(self.log_dir / "server.log", max_episodes=self.max_episodes)
        self._ctx = EpisodeContext(
            control=ControlClient(self.server.url, self.server.token),
            http=mcp_http_client(),
            config=self.options,
            catalog=self.catalog,
            gold=self.gold,
            tool_info=ToolInfo,
            call_result=CallResult,
            limit_error=CallLimitReached,
        )
        return self._ctx

    async def run(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Play one episode.

        Args:
            spec: an :class:`EpisodeSpec` as JSON.

        Returns:
            ``{"trajectory": scored trajectory JSON}`` or ``{"failure": message}`` (a
            :class:`HarnessFailure`: not written, ``--resume`` retries it).
        """
        self.in_flight += 1
        try:
            ctx = await self._context()
            traj = await run_spec(ctx, spec)
        except HarnessFailure as exc:
            return {"failure": str(exc)}
        finally:
            self.in_flight -= 1
        return {"trajectory": traj.model_dump(mode="json")}

    def info(self) -> dict[str, Any]:
        """``{"pid", "node", "server_url", "log", "in_flight"}``: where this worker runs, and
        how many episodes it is playing now."""
        import ray

        return {
            "pid": os.getpid(),
            "node": ray.get_runtime_context().get_node_id(),
            "server_url": self.server.url,
            "log": str(self.log_dir / "server.log"),
            "in_flight": self.in_flight,
        }

    def stop(self) -> None:
        """Stop this worker's server."""
        self.server.stop()


class RayExecutor:
    """Episodes on Ray actors (see the module docstring).

    Args:
        options: what the workers need of the run's settings.
        address: Ray address (``auto``, ``ray://host:10001``, ``host:6379``); None: ``$RAY_ADDRESS``
            or, without it, a local cluster for this run (or the one this process already joined).
        workers: number of actors (None: the cluster's CPUs, at most ``concurrency``).
        concurrency: most episodes in flight across all workers.
        retries: how many times an episode whose worker was lost is sent again.
        max_episodes: each worker's server's cap on live episodes.

    Raises (on entering):
        RunError: Ray missing, the cluster unreachable, or a worker that cannot start.
    """

    def __init__(
        self,
        options: RunConfig,
        *,
        address: str | None = None,
        workers: int | None = None,
        concurrency: int = 4,
        retries: int = 2,
        max_episodes: int = 100,
    ) -> None:
        self.options = options
        self.address = address
        self.workers = workers
        self.concurrency = concurrency
        self.retries = retries
        self.max_episodes = max_episodes
        self.retried = 0
        self.actors: list[Any] = []
        self.infos: list[dict[str, Any]] = []
        self._load: list[int] = []
        self._down_until: list[float] = []
        self._owns_ray = False
        self._ray: Any = None

    async def __aenter__(self) -> RayExecutor:
        ray = self._ray = import_ray()
        try:
            if not ray.is_initialized():
                env = {k: os.environ[k] for k in FORWARDED_ENV if os.environ.get(k)}
                ray.init(
                    address=self.address,
                    log_to_driver=False,
                    include_dashboard=False,
                    logging_level="ERROR",
                    runtime_env={"env_vars": env} if env else None,
                )
                self._owns_ray = True
            cpus = int(ray.cluster_resources().get("CPU", 1))
        except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError...
            raise RunError(
                f"cannot join the Ray cluster at {self.address or 'a new local cluster'}: {type(exc).__name__}: {exc}"
            ) from None
        n = max(1, self.workers or min(self.concurrency, max(1, cpus)))
        per = max(1, math.ceil(self.concurrency / n))
        actor = ray.remote(EpisodeWorker)
        opts = dict(num_cpus=1, max_restarts=-1, max_task_retries=0, max_concurrency=per)
        run_id = secrets.token_hex(4)
        self.actors = [
            actor.options(name=f"{WORKER_PREFIX}{run_id}-{i}", **opts).remote(
                self.options.model_dump(mode="json"), max(self.max_episodes, per * 4)
            )
            for i in range(n)
        ]
        self._load = [0] * n
        self._down_until = [0.0] * n
        try:
            self.infos = list(await asyncio.gather(*[a.info.remote() for a in self.actors]))
        except Exception as exc:  # noqa: BLE001 - a worker whose server did not start
            await self.__aexit__(None, None, None)
            raise RunError(f"a Ray worker could not start: {type(exc).__name__}: {exc}") from None
        return self

    async def __aexit__(self, *exc: Any) -> None:
        ray = self._ray
        if self.actors:
            with contextlib.suppress(Exception):  # stop the servers; a lost worker's went with it
                await asyncio.wait_for(
                    asyncio.gather(*[a.stop.remote() for a in self.actors], return_exceptions=True), timeout=10
                )
        for a in self.actors:
            with contextlib.suppress(Exception):  # already gone
                ray.kill(a, no_restart=True)  # its server goes with it (PR_SET_PDEATHSIG)
        self.actors = []
        if self._owns_ray and ray.is_initialized():
            ray.shutdown()

    def _pick(self) -> int:
        """The least busy worker, preferring those not seen failing in the last second."""
        now = time.monotonic()
        return min(range(len(self.actors)), key=lambda j: (self._down_until[j] > now, self._load[j]))

    async def run(self, job: EpisodeJob) -> Trajectory:
        """Play ``job`` on the least busy worker; send it again when that worker is lost.

        A worker that died while playing it counts against ``retries``; a worker that is
        restarting (``ActorUnavailableError``) makes the driver wait and send it again, for up
        to :data:`RESTART_PATIENCE` wall seconds.

        Raises:
            HarnessFailure: the worker reported one, an error the worker raised, the episode's
                worker lost more than ``retries`` times, or no worker back in time.
        """
        from ray.exceptions import ActorUnavailableError, ObjectLostError, RayActorError, RayError, WorkerCrashedError

        spec = spec_for(job).model_dump(mode="json")
        lost, died, resent = "", 0, False
        deadline = time.monotonic() + RESTART_PATIENCE
        while True:
            i = self._pick()
            self._load[i] += 1
            try:
                out = await self.actors[i].run.remote(spec)
            except ActorUnavailableError as exc:
                lost = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                if time.monotonic() > deadline:
                    raise HarnessFailure(
                        f"no Ray worker came back within {RESTART_PATIENCE:g} s; last: {lost}"
                    ) from None
                self._down_until[i] = time.monotonic() + 1.0
                await asyncio.sleep(0.25)
            except (RayActorError, WorkerCrashedError, ObjectLostError) as exc:
                lost = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                died += 1
                if died > self.retries:
                    raise HarnessFailure(f"the episode's Ray worker was lost {died} times; last: {lost}") from None
                self._down_until[i] = time.monotonic() + 1.0
            except RayError as exc:
                raise HarnessFailure(f"the Ray worker failed: {type(exc).__name__}: {exc}") from None
            else:
                if "failure" in out:
                    raise HarnessFailure(out["failure"])
                return Trajectory.model_validate(out["trajectory"])
            finally:
                self._load[i] -= 1
            if not resent:
                resent = True
                self.retried += 1

    def check(self) -> None:
        """Nothing to check: lost workers are restarted by Ray."""

    def describe(self) -> dict[str, Any]:
        """``{"kind": "ray", "address", "workers", "retries", "nodes"}`` for the manifest."""
        return {
            "kind": "ray",
            "address": self.address,
            "workers": len(self.infos),
            "retries": self.retries,
            "nodes": len({i["node"] for i in self.infos}),
        }


__all__ = ["EpisodeWorker", "FORWARDED_ENV", "RESTART_PATIENCE", "WORKER_PREFIX", "RayExecutor", "import_ray"]
