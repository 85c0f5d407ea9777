"""The episode runner: tasks x trials x agents against an mcpgym HTTP server (docs/design.md §6).

For each (agent, task, trial) the runner, concurrently (an anyio ``CapacityLimiter`` of
``concurrency`` episodes):

1. creates an episode on the control API: ``{"seed": task.seed, "apps": task.apps,
   "faults": task.faults or the run's profile, "fault_seed": fault_seed_for(task, trial)}``;
2. connects ``mcp.Client(mcp_url)``, lists the tools (``ToolInfo``, kind from
   ``_meta["mcpgym/kind"]``) and runs the agent with a call function that never raises a
   transport failure into it (the call gets an error result, the episode is ``errored``),
   under a per-episode wall-clock timeout (status ``limit``) and the task's ``max_calls``
   (``CallLimitReached``, status ``limit``);
3. reads the call log, fault ledger, final and initial snapshots, deletes the episode;
4. builds the :class:`Trajectory` (steps from the server's call log; gold snapshot from the
   task's oracle), scores it (:func:`score_episode` with the task's checks) and appends it as
   ONE line to ``trajectories.jsonl`` (:func:`append_trajectory`: whole line, fsynced).

An episode the harness could not run to the end (no episode created, final state not
readable, scoring failed) is not written: it is reported, the run exits non-zero, and
``--resume`` runs it again. ``scores.json`` is :func:`compute_scores` over every line, kept
up to date during the run and recomputed from the file at the end; it sorts the episodes
first, so it does not depend on line order (a resumed run scores like an uninterrupted one).
One episode's steps are in :mod:`mcpgym.evaluation.run.episode_runner`; the server process and the
control API client in :mod:`mcpgym.evaluation.run.server_process`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from mcpgym.evaluation.records.condition import EpisodeCondition
from mcpgym.evaluation.records.manifest import (
    MANIFEST_NAME,
    Manifest,
    build_manifest,
    describe_agent,
    finish_manifest,
    merge_for_resume,
    read_manifest,
    resume_left_out,
    write_json_atomic,
)
from mcpgym.evaluation.records.scores import Scoreboard
from mcpgym.evaluation.records.snapshots import SnapshotStore
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import append_trajectory
from mcpgym.evaluation.run.conditions import conditions_of
from mcpgym.evaluation.run.config import DEFAULT_EPISODE_TIMEOUT, Executor, RunConfig
from mcpgym.evaluation.run.episode_runner import AgentEntry, EpisodeContext, EpisodeJob, HarnessFailure
from mcpgym.evaluation.run.executors import LocalExecutor, mcp_http_client
from mcpgym.evaluation.run.progress_lines import is_terminal, print_progress_lines
from mcpgym.evaluation.run.run_dir import (
    RUN_FILES,
    SCORES,
    SERVER_LOG,
    TRAJECTORIES,
    RunError,
    compute_scores,
    load_paths,
    load_run,
    prepare_out_dir,
    rescore,
    trajectories_file,
)
from mcpgym.evaluation.run.run_lock import ForeignLockFile, RunDirLocked, run_lock
from mcpgym.evaluation.run.run_owner import RUN_FLAGS, DirFlags, read_marker
from mcpgym.evaluation.run.server_process import ServerHandle, ServerStart, spawn_server
from mcpgym.evaluation.scoring.aggregate import as_scores
from mcpgym.evaluation.scoring.scorer import EpisodeScores
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from mcpgym.evaluation.tasks.model import Task
from mcpgym.kernel.exceptions import InputError
from mcpgym.tools.faults import BUILTIN_PROFILES, FaultProfile, load_profile


# -- plan -----------------------------------------------------------------------------------
def faults_payload(spec: str | FaultProfile | None) -> tuple[str | dict[str, Any], FaultProfile]:
    """The ``faults`` value of ``POST /control/episodes`` for a profile name, file or object.

    Built-in names travel as names; any other profile as its full inline object (the server
    takes no file paths).

    Raises:
        mcpgym.tools.faults.FaultProfileError: for an unknown name or an invalid file.
    """
    profile = load_profile(spec)
    if isinstance(spec, str) and spec in BUILTIN_PROFILES:
        return spec, profile
    return profile.model_dump(mode="json"), profile


def plan_jobs(
    tasks: list[Task],
    agents: list[AgentEntry],
    trials: int,
    run_faults: str | FaultProfile,
    fault_seed_for: Callable[[Any, int], int],
    done: AbstractSet[tuple[str, str, int] | tuple[str, str, int, EpisodeCondition | None]] = frozenset(),
    conditions: Sequence[EpisodeCondition | None] = (None,),
) -> list[EpisodeJob]:
    """Every (agent, task, trial, condition) not in ``done``, trial-major so that early results
    cover every agent, task and condition (a task's own ``faults`` beats the run's profile).

    Args:
        run_faults: the run's profile in a run without conditions (``conditions`` ``(None,)``);
            a condition's ``faults`` is its own profile.
        done: the keys already written: ``(agent, task id, trial, condition)``; a 3-tuple
            is the key of a run without conditions.
        conditions: the run's conditions (:func:`mcpgym.evaluation.run.conditions.conditions_of`).
            Every condition of (task, trial) has the trial's one fault seed: they are paired.

    Raises:
        mcpgym.tools.faults.FaultProfileError: for a bad run or task profile.
    """
    own: dict[str, tuple[Any, str]] = {}
    for t in tasks:
        if getattr(t, "faults", None):
            payload, prof = faults_payload(t.faults)
            own[t.id] = (payload, prof.name)
    profiles: dict[EpisodeCondition | None, tuple[Any, str]] = {}
    for c in conditions:
        payload, prof = faults_payload(run_faults if c is None else c.faults)
        profiles[c] = (payload, prof.name)
    written = {k if len(k) == 4 else (*k, None) for k in done}
    jobs = []
    for trial in range(trials):
        for t in tasks:
            seed = int(fault_seed_for(t, trial))
            for c in conditions:
                run_profile = profiles[c]
                for a in agents:
                    if (a.name, t.id, trial, c) in written:
                        continue
                    payload, name = own.get(t.id, run_profile)
                    jobs.append(EpisodeJob(a, t, trial, seed, payload, name, c))
    return jobs


# -- the run ---------------------------------------------------------------------------------
@dataclass
class RunResult:
    """What a run did.

    Attributes:
        out: the run directory. scores: the final ``scores.json``. ran: episodes written by
        this invocation. skipped: episodes of this invocation's plan already written (``--resume``). failures: (episode
        label, message) for episodes the harness could not finish (not written). wall_seconds:
        duration of this invocation. server_url: the server used (empty with ``--executor
        ray``: each worker has its own). retried: episodes sent again after their Ray worker
        was lost (each is still written once).
    """

    out: Path
    scores: Scoreboard
    ran: int
    skipped: int
    failures: list[tuple[str, str]] = field(default_factory=list)
    wall_seconds: float = 0.0
    server_url: str = ""
    retried: int = 0


def run_evaluation(
    tasks: list[Any],
    agents: list[AgentEntry],
    settings: RunConfig,
    *,
    gold_snapshot: Callable[[Any], dict[str, Any]] | None = None,
    fault_seed_for: Callable[[Any, int], int] | None = None,
    tool_info: type | None = None,
    call_result: type | None = None,
    console: Any = None,
    server_start: ServerStart | None = None,
    flags: DirFlags = RUN_FLAGS,
) -> RunResult:
    """Run ``agents`` x ``tasks`` x ``settings.trials`` episodes and write the run directory
    (``trajectories.jsonl``, ``scores.json``, ``manifest.json``, ``mcpgym.server.log``).

    Args:
        tasks: ``mcpgym.evaluation.tasks.Task`` objects (``id``, ``instruction``, ``apps``, ``seed``,
            ``level``, ``tags``, ``feasible``, ``faults``, ``checks``, ``max_calls``).
        agents: the agents, with the specs they were made from; names must be unique.
        settings: the run's :class:`~mcpgym.evaluation.run.config.RunConfig` (``out`` required).
        gold_snapshot, fault_seed_for: default to ``mcpgym.evaluation.tasks``' functions.
        tool_info, call_result: the ``ToolInfo`` / ``CallResult`` types handed to agents
            (default: ``mcpgym.evaluation.agents``').
        console: a ``rich.console.Console`` for the progress bar (default: stderr).
        server_start: a server the caller started early
            (:func:`mcpgym.evaluation.run.server_process.start_server`, so that its start-up
            overlaps the caller's imports and task loading); used instead of spawning one when
            the run needs a spawned server, else stopped. Always stopped when the run ends.
        flags: how the calling command spells its directory options (``mcpgym play`` has no
            ``--resume``), for the refusals of the run directory and its lock
            (:class:`~mcpgym.evaluation.run.run_owner.DirFlags`).

    Returns:
        :class:`RunResult`.

    The run directory is locked for the whole run (:func:`mcpgym.evaluation.run.run_lock.run_lock`):
    a second run or ``--resume`` on it fails at once, naming the holder.

    Raises:
        RunError: bad output directory, another process writing to it, duplicate agent names,
            the server gone mid-run.
        InputError: a resume that raises the run's trials but leaves out some of its agents or
            tasks (:func:`~mcpgym.evaluation.records.manifest.resume_left_out`); nothing is written.
        ServerError: the server could not be started or reached.
        mcpgym.tools.faults.FaultProfileError: a bad fault profile.
    """
    if gold_snapshot is None or fault_seed_for is None:
        from mcpgym.evaluation import tasks as task_registry

        gold_snapshot = gold_snapshot or task_registry.gold_snapshot
        fault_seed_for = fault_seed_for or task_registry.fault_seed_for
    from mcpgym.evaluation import agents as agent_registry

    tool_info = tool_info or agent_registry.ToolInfo
    call_result = call_result or agent_registry.CallResult
    names = [a.name for a in agents]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RunError(f"two agents share the name {', '.join(dupes)}: trajectories are grouped by agent name")
    if settings.trials < 1 or settings.concurrency < 1:
        raise RunError("--trials and --concurrency must be at least 1")
    if settings.out is None:
        raise RunError("the run needs a run directory (RunConfig.out)")
    t0 = time.monotonic()
    if Path(settings.out).exists() and not Path(settings.out).is_dir():
        raise RunError(f"{flags.option} {settings.out} is a file, not a directory")
    try:
        out_dir = Path(settings.out)
        with run_lock(settings.out, command=_command(settings, flags), discard_if=lambda: read_marker(out_dir) is None):
            return _run_locked(
                tasks,
                agents,
                settings,
                gold_snapshot,
                fault_seed_for,
                tool_info,
                call_result,
                console,
                t0,
                server_start,
                flags,
            )
    except (RunDirLocked, ForeignLockFile) as exc:
        raise RunError(str(exc)) from None
    finally:
        if server_start is not None:
            server_start.cancel()  # no-op when the run adopted it


def _command(settings: RunConfig, flags: DirFlags) -> str:
    """The command line that holds the run's lock, as the lock file names it."""
    resume = f" {flags.resume}" if settings.resume and flags.resume else ""
    return f"{flags.command}{resume} {flags.option} {settings.out}"


def _run_locked(
    tasks: list[Any],
    agents: list[AgentEntry],
    settings: RunConfig,
    gold_snapshot: Callable[[Any], dict[str, Any]],
    fault_seed_for: Callable[[Any, int], int],
    tool_info: type,
    call_result: type,
    console: Any,
    t0: float,
    server_start: ServerStart | None = None,
    flags: DirFlags = RUN_FLAGS,
) -> RunResult:
    """:func:`run_evaluation` once the run directory's lock is held."""
    from mcpgym.evaluation import agents as agent_registry

    assert settings.out is not None
    out = prepare_out_dir(settings.out, resume=settings.resume, force=settings.force, flags=flags)
    try:
        existing = load_run(out, repair=True, states=False) if settings.resume else []
        old = read_manifest(out) if settings.resume else None
    except ValueError as exc:  # TrajectoryFileError is one: a malformed line that is not a torn tail
        raise RunError(f"cannot resume: {exc} (fix or remove it, or use another --out)") from None
    left_out = resume_left_out(old, [t.id for t in tasks], [a.name for a in agents], settings.trials) if old else None
    if left_out is not None:
        raise InputError(f"cannot resume {out}: {left_out}")
    done = {(t.agent, t.task_id or "", t.trial, t.condition) for t in existing}
    axis = settings.condition_axis()
    conditions = conditions_of(axis)
    jobs = plan_jobs(
        tasks,
        agents,
        settings.trials,
        settings.faults if axis is None else axis.faults[0],
        fault_seed_for,
        done,
        conditions,
    )
    # resumed: the episodes of this invocation's plan already written (not the run's others)
    skipped = len(tasks) * len(agents) * settings.trials * len(conditions) - len(jobs)
    profiles = [faults_payload(f)[1] for f in (axis.faults if axis is not None else [settings.faults])]
    run_profile = profiles[0]
    pending = {j.task.id: j.task for j in jobs}
    fault_seeds = {t.id: [int(fault_seed_for(t, i)) for i in range(settings.trials)] for t in tasks}

    use_ray = settings.executor is Executor.ray
    if use_ray and settings.server_url:
        raise RunError("--server and --executor ray exclude each other: each Ray worker runs its own server")
    if use_ray:
        from mcpgym.evaluation.run.ray_executor import import_ray

        import_ray()  # fail before touching the run directory's manifest when Ray is missing

    server: ServerHandle | None = None
    executor: Any = None
    failures: list[tuple[str, str]] = []
    ran = 0
    finished = False
    manifest: Manifest | None = None
    try:
        gold: dict[str, dict[str, Any]] = {}
        if not use_ray:
            # The oracle runs (gold states) overlap the server's start-up (a few seconds of imports).
            with ThreadPoolExecutor(max_workers=1) as pool:
                gold_future = pool.submit(_gold_states, pending, gold_snapshot)
                if settings.server_url:
                    server = ServerHandle(url=settings.server_url.rstrip("/"), token=settings.token or "")
                elif jobs and server_start is not None:
                    server = server_start.ready(out / SERVER_LOG)
                elif jobs:
                    server = spawn_server(out / SERVER_LOG, max_episodes=max(100, settings.concurrency * 4))
                gold = gold_future.result()
        manifest = build_manifest(
            suite=settings.suite,
            tasks=tasks,
            trials=settings.trials,
            agents=[describe_agent(a.agent, a.spec) for a in agents],
            profile=run_profile,
            fault_seeds=fault_seeds,
            concurrency=settings.concurrency,
            episode_timeout=settings.episode_timeout,
            server_url=server.url if server else "",
            server_spawned=bool(server and server.spawned),
            recovery_window=settings.k,
            client={"mcp_mode": settings.mcp_mode, "validate_output": settings.validate_output},
            settings=settings.recorded(),
            conditions=axis,
            profiles=profiles if axis is not None else None,
        )
        if old is not None:
            try:
                manifest = merge_for_resume(old, manifest)
            except ValueError as exc:
                raise RunError(str(exc)) from None
        manifest.run_id = read_marker(out)  # the run's proof of ownership, see run_owner
        write_json_atomic(out / MANIFEST_NAME, manifest.to_json())
        if jobs:
            if use_ray:
                from mcpgym.evaluation.run.ray_executor import RayExecutor

                executor = RayExecutor(
                    settings,
                    address=settings.ray_address,
                    workers=settings.ray_workers,
                    concurrency=settings.concurrency,
                    retries=settings.retries,
                )
            else:
                assert server is not None
                executor = LocalExecutor(
                    server,
                    lambda control, http: EpisodeContext(
                        control=control,
                        http=http,
                        config=settings,
                        catalog=Catalog.from_apps(),
                        gold=gold,
                        tool_info=tool_info,
                        call_result=call_result,
                        limit_error=agent_registry.CallLimitReached,
                    ),
                )
            try:
                ran = anyio.run(
                    _run_jobs, jobs, executor, [as_scores(t) for t in existing], settings, failures, out, console
                )
            except BaseExceptionGroup as group:
                raise _first_error(group) from None
        finished = True
    finally:
        if server is not None:
            server.stop()
        # Also after an interrupt: scores.json always matches the lines on disk. Before the
        # manifest there are no lines, and a scores.json would be a file the next run into this
        # --out must not take as its own (a run's early files are its server's log alone).
        if (out / MANIFEST_NAME).is_file():
            final_scores = compute_scores(load_run(out, states=False))
            write_json_atomic(out / SCORES, final_scores.model_dump(mode="json"))
        if finished and manifest is not None:
            if executor is not None and manifest.invocations:
                manifest.invocations[-1].executor = executor.describe()
                manifest.invocations[-1].resent_after_lost_worker = executor.retried
            write_json_atomic(out / MANIFEST_NAME, finish_manifest(manifest).to_json())
    return RunResult(
        out=out,
        scores=final_scores,
        ran=ran,
        skipped=skipped,
        failures=failures,
        wall_seconds=time.monotonic() - t0,
        server_url=server.url if server else "",
        retried=getattr(executor, "retried", 0),
    )


def _gold_states(tasks: dict[str, Any], gold_snapshot: Callable[[Any], dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Task id -> gold snapshot.

    Raises:
        RunError: naming the task whose oracle failed.
    """
    out = {}
    for tid, task in tasks.items():
        try:
            out[tid] = gold_snapshot(task)
        except Exception as exc:  # noqa: BLE001 - reported with the task id
            raise RunError(
                f"the oracle of task {tid!r} failed, so it has no gold state: {type(exc).__name__}: {exc}"
            ) from exc
    return out


def _first_error(group: BaseExceptionGroup) -> BaseException:
    """The first leaf exception of a (nested) exception group, preferring RunError."""
    leaves: list[BaseException] = []

    def walk(g: BaseExceptionGroup) -> None:
        for e in g.exceptions:
            walk(e) if isinstance(e, BaseExceptionGroup) else leaves.append(e)

    walk(group)
    return next((e for e in leaves if isinstance(e, RunError)), leaves[0] if leaves else group)


async def _run_jobs(
    jobs: list[EpisodeJob],
    executor: Any,
    scores: list[EpisodeScores],
    settings: RunConfig,
    failures: list[tuple[str, str]],
    out: Path,
    console: Any,
) -> int:
    """Run every job on ``executor`` (see :mod:`mcpgym.evaluation.run.executors`) under the
    concurrency limit, writing each returned trajectory here, in the driver; return how many
    were written.

    ``scores`` (the episodes already on disk) grows with every written episode and feeds the
    ``scores.json`` rewritten at most every 2 wall seconds during the run. A second result for
    an (agent, task, trial, condition) already written by this invocation is dropped, so an episode is
    recorded once whatever an executor's retries do.

    Raises:
        RunError: when the executor cannot go on (a spawned server exited during the run).
        ServerError: when the server is unreachable or refuses the token.
    """
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    limiter = anyio.CapacityLimiter(settings.concurrency)
    store = SnapshotStore(out)  # initial and gold snapshots once per distinct state, finals as diffs
    traj_file = trajectories_file(out)  # zstd frames; an older run's plain file is resumed as it is
    written = 0
    written_keys: set[tuple[str, str, int, EpisodeCondition | None]] = set()
    last_scores_write = -math.inf
    counts = {"ok": 0, "errored": 0, "limit": 0, "truncated": 0, "failed": 0}

    def status_text() -> str:
        return " ".join(f"{k} {v}" for k, v in counts.items() if v or k == "ok")

    console = console or Console(stderr=True)
    plain = settings.progress and not is_terminal(console)  # a log or a pipe: a line every 10 s instead of a bar

    async with executor:
        progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            disable=not settings.progress or plain,
        )

        async def worker(job: EpisodeJob) -> None:
            nonlocal written, last_scores_write
            async with limiter:
                try:
                    traj = await executor.run(job)
                except HarnessFailure as exc:
                    failures.append((job.label, str(exc)))
                    counts["failed"] += 1
                    await anyio.to_thread.run_sync(executor.check)  # a gone server ends the run: one message
                else:
                    key = (traj.agent, traj.task_id or "", traj.trial, traj.condition)
                    if key not in written_keys:
                        written_keys.add(key)
                        line = await anyio.to_thread.run_sync(traj.compacted, store)
                        await anyio.to_thread.run_sync(append_trajectory, traj_file, line)
                        written += 1
                        scores.append(traj.scores or EpisodeScores())
                        counts["ok" if traj.status == EpisodeStatus.COMPLETED else traj.status] += 1
                        if time.monotonic() - last_scores_write > 2.0:
                            last_scores_write = time.monotonic()
                            snapshot = compute_scores(list(scores))
                            await anyio.to_thread.run_sync(
                                write_json_atomic, out / SCORES, snapshot.model_dump(mode="json")
                            )
                progress.update(bar, advance=1, status=status_text())

        def state() -> tuple[int, int, int]:
            finished = sum(counts.values())
            return finished, len(jobs), counts["errored"] + counts["failed"]

        with progress:
            bar = progress.add_task("episodes", total=len(jobs), status=status_text())
            async with anyio.create_task_group() as lines:
                if plain:
                    lines.start_soon(print_progress_lines, state, console.file)
                async with anyio.create_task_group() as tg:
                    for job in jobs:
                        tg.start_soon(worker, job)
                lines.cancel_scope.cancel()
    return written


__all__ = [
    "AgentEntry",
    "DEFAULT_EPISODE_TIMEOUT",
    "RUN_FILES",
    "SCORES",
    "SERVER_LOG",
    "TRAJECTORIES",
    "RunError",
    "RunConfig",
    "RunResult",
    "compute_scores",
    "faults_payload",
    "load_paths",
    "load_run",
    "mcp_http_client",
    "plan_jobs",
    "prepare_out_dir",
    "rescore",
    "run_evaluation",
]
