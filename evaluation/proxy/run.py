"""``mcpgym run --proxy UPSTREAM``: agents on tasks against an outside MCP server, through the proxy.

A proxied task has no world and no oracle: it is an instruction plus checks, on the agent's
final message (``checks``, the task checks of docs/design.md §6) and on a *read-back*: one
tool call the runner makes on the upstream after the agent finished, bypassing the proxy (no
fault, not a step of the agent), whose answer text the ``read_back.checks`` test. The outcome
is then judged by checks alone (docs/design.md §7, "Outcome").

Task file (YAML or JSON; a list, or ``{"tasks": [...]}``)::

    - id: commit_readme
      instruction: Commit README.md with the message "docs".
      checks: [{kind: not_contains, value: sorry}]
      read_back: {tool: git_log, arguments: {repo_path: /r, max_count: 1}, checks: [{kind: contains, value: docs}]}

Each episode runs the proxy in this process (an in-process MCP connection to the proxy
server, the upstream spawned or reached per episode), so the upstream starts fresh for each
episode only if it is a command; an HTTP upstream keeps its own state between episodes.
Trial t uses the fault seed ``--fault-seed + t``. Trajectories go to ``OUT/trajectories.jsonl``
and the classification to ``OUT/catalog.json`` (:mod:`mcpgym.evaluation.proxy.record`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.scoring.judge import ExtraCheck
from mcpgym.kernel.bounded_json import load_json
from mcpgym.kernel.input_files import load_yaml, read_input_text, yaml_error_text
from mcpgym.kernel.shorten import short_text
from mcpgym.kernel.validation_text import validation_line
from mcpgym.kernel.wording import counted

DEFAULT_MAX_CALLS = 30


class ReadBack(BaseModel):
    """The read-back of a proxied task: one call made on the upstream after the agent finished.

    Attributes:
        tool: the upstream tool. arguments: its arguments.
        checks: checks on the answer's text (at least one).
    """

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1, max_length=64)
    arguments: dict[str, Any] = Field(default_factory=dict)
    checks: list[ExtraCheck] = Field(min_length=1)


class ProxyTask(BaseModel):
    """A task for an outside server: an instruction plus checks (no world, no oracle).

    Attributes:
        id: the task id. instruction: what the agent is asked.
        checks: checks on the final message. read_back: the read-back and its checks.
        max_calls: the call budget. At least one check (of either kind) is required.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=200)
    instruction: str = Field(min_length=1)
    checks: list[ExtraCheck] = Field(default_factory=list)
    read_back: ReadBack | None = None
    max_calls: int = Field(DEFAULT_MAX_CALLS, ge=1, le=10_000)

    # what agents may read of a task besides the instruction (no world behind it)
    apps: list[str] = Field(default_factory=lambda: ["external"], exclude=True)
    oracle: Any = Field(None, exclude=True)
    user: Any = Field(None, exclude=True)
    feasible: bool | None = Field(None, exclude=True)
    level: int | None = Field(None, exclude=True)
    tags: list[str] = Field(default_factory=list, exclude=True)
    faults: Any = Field(None, exclude=True)

    def model_post_init(self, _: Any) -> None:
        if not self.checks and self.read_back is None:
            raise ValueError(f"task {self.id!r}: give checks on the final message or a read_back (nothing to judge)")


def load_proxy_tasks(path: str | Path) -> list[ProxyTask]:
    """Read a proxied-task file.

    Raises:
        ValueError: naming the file, the task (index and id) and the field, for unreadable
            YAML/JSON (a key given twice in one object too), a task that does not validate, or two tasks with one id.
    """
    p = Path(path)
    try:
        raw = read_input_text(p, what="task file")
        data = load_json(raw, unique_keys=True) if p.suffix == ".json" else load_yaml(raw)
    except yaml.YAMLError as exc:
        raise ValueError(f"{p}: cannot read the task file: {yaml_error_text(exc)}") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{p}: cannot read the task file: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("tasks"), list):
        data = data["tasks"]
    if not isinstance(data, list) or not data:
        raise ValueError(f"{p}: a task file is a non-empty list of tasks (or {{tasks: [...]}})")
    tasks: list[ProxyTask] = []
    for i, row in enumerate(data):
        name = row.get("id", "?") if isinstance(row, dict) else "?"
        try:
            tasks.append(ProxyTask.model_validate(row))
        except ValidationError as exc:
            raise ValueError(f"{p}: task {i} ({short_text(str(name), 80)}): {validation_line(exc, row)}") from None
    ids = [t.id for t in tasks]
    dup = next((t for t in ids if ids.count(t) > 1), None)
    if dup is not None:
        raise ValueError(f"{p}: two tasks have the id {dup!r}")
    return tasks


def checks_metadata(task: ProxyTask, read_back: dict[str, Any] | None) -> dict[str, Any]:
    """The trajectory metadata that lets ``mcpgym score`` judge the outcome by checks alone."""
    meta: dict[str, Any] = {
        "outcome": "checks",
        "extra_checks": [c.model_dump(mode="json") for c in task.checks],
    }
    if task.read_back is not None:
        meta["read_back"] = {
            "tool": task.read_back.tool,
            "arguments": task.read_back.arguments,
            "checks": [c.model_dump(mode="json") for c in task.read_back.checks],
            **(read_back or {"is_error": True, "text": None, "error": "not made"}),
        }
    return meta


async def run_proxied_episode(
    spec: Any,
    task: ProxyTask,
    agent_name: str,
    agent: Any,
    faults: Any,
    fault_seed: int,
    trial: int,
    classifier: Any,
    timeout: float,
) -> Trajectory:
    """Run one episode of ``agent`` on ``task`` through an in-process proxy; return its scored trajectory.

    Raises:
        mcpgym.tools.faults.FaultProfileError: (a ValueError) when the profile names a tool
            the upstream does not list (:meth:`mcpgym.server.proxy.plan.ProxyFaultPlan.check_profile`).
    """
    from mcpgym.evaluation.agents.base import AgentContext
    from mcpgym.evaluation.scoring.scorer import score_episode
    from mcpgym.evaluation.scoring.tool_catalog import Catalog
    from mcpgym.server.proxy.plan import ProxyFaultPlan
    from mcpgym.server.proxy.server import ProxySession, describe_answer, open_session
    from mcpgym.server.proxy.upstream import Upstream, UpstreamError
    from mcpgym.tools.faults import FaultProfileError

    plan = ProxyFaultPlan(faults, fault_seed, describe_answer)
    session: ProxySession | None = None
    result: Any = None
    caller: Any = None
    read_back: dict[str, Any] | None = None
    status, reason = None, None
    refused: FaultProfileError | None = None
    async with anyio.create_task_group() as tg:
        try:
            session = await open_session(spec, plan, classifier.proxied, tg)
        except UpstreamError as exc:
            session = ProxySession(upstream=Upstream(spec), plan=plan, classify=classifier.proxied)
            session.upstream_failed(str(exc))
            tg.cancel_scope.cancel()
        except FaultProfileError as exc:  # raised below, once the upstream is stopped
            refused = exc
            tg.cancel_scope.cancel()
        else:
            result, caller, status, reason = await drive_agent(
                session, task, agent, AgentContext(trial=trial, fault_seed=fault_seed), timeout
            )
            if task.read_back is not None and session.upstream.alive:
                rb = task.read_back
                try:
                    answer = await session.upstream.request(
                        lambda s: s.call_tool(rb.tool, rb.arguments), f"the read-back {rb.tool!r}"
                    )
                    is_error, _, payload = describe_answer(answer)
                    text = "\n".join(getattr(b, "text", "") or "" for b in answer.content)
                    read_back = {"is_error": is_error, "text": text[:20_000], "payload": payload}
                except Exception as exc:  # noqa: BLE001 - a failed read-back fails its checks, said why
                    read_back = {"is_error": True, "text": None, "error": str(exc)[:500]}
            session.upstream.close()
    if refused is not None:
        raise refused
    assert session is not None
    meta = checks_metadata(task, read_back)
    traj = settle_trajectory(session, classifier, caller, result, status, reason, agent_name, task, meta, trial)
    traj.scores = score_episode(traj, Catalog(classifier.rows()))
    return traj


async def drive_agent(session: Any, task: Any, agent: Any, context: Any, timeout: float) -> tuple[Any, Any, Any, Any]:
    """Run ``agent`` on ``task`` against the proxy server of ``session`` (an in-process MCP
    connection) within ``timeout`` wall seconds.

    Returns:
        ``(result, caller, status, reason)``: the agent's result (None when it raised), the
        episode's :class:`~mcpgym.evaluation.run.episode_runner.EpisodeCaller` (None when the
        connection failed first), and the status and reason the harness decided (``limit``
        for a spent budget or the timeout, ``errored`` for a crash; None when it decided none).
    """
    from mcp import Client

    from mcpgym.evaluation.agents.base import CallLimitReached, CallResult, ToolInfo, run_agent
    from mcpgym.evaluation.run.episode_runner import EpisodeCaller, _list_tools, tool_infos
    from mcpgym.server.proxy.server import build_proxy_server

    result: Any = None
    caller: Any = None
    status, reason = None, None
    try:
        async with Client(build_proxy_server(session)) as client:
            tools = tool_infos(await _list_tools(client), ToolInfo)
            caller = EpisodeCaller(client, task.max_calls, CallResult, CallLimitReached)
            with anyio.move_on_after(timeout) as scope:
                try:
                    result = await run_agent(agent, task, tools, caller, context)
                except CallLimitReached as exc:
                    status, reason = "limit", str(exc)
                except Exception as exc:  # noqa: BLE001 - a crashing agent is an errored episode
                    status, reason = "errored", f"agent raised {type(exc).__name__}: {exc}"
            if scope.cancelled_caught:
                status, reason = "limit", f"episode timed out after {timeout:g} wall seconds"
    except Exception as exc:  # noqa: BLE001 - the in-process session broke
        status, reason = "errored", f"MCP session failed: {type(exc).__name__}: {exc}"
    return result, caller, status, reason


def settle_trajectory(
    session: Any,
    classifier: Any,
    caller: Any,
    result: Any,
    status: Any,
    reason: Any,
    agent_name: str,
    task: Any,
    metadata: dict[str, Any],
    trial: int,
) -> Trajectory:
    """The (not yet scored) trajectory of an episode :func:`drive_agent` ran: the proxy's
    session (:func:`mcpgym.evaluation.proxy.record.trajectory_of`) with the caller's steps,
    and the status: ``errored`` when the upstream failed, else the harness's, else the
    agent's own ``errored`` / ``limit``."""
    from mcpgym.evaluation.proxy.record import trajectory_of

    traj = trajectory_of(
        session,
        classifier,
        agent=agent_name,
        instruction=task.instruction,
        final_message=getattr(result, "final_message", "") or "",
        task_id=task.id,
        metadata=metadata,
    )
    plan = session.plan
    if caller is not None:
        traj.steps = caller.steps([c.model_dump(mode="json") for c in sorted(plan.calls, key=lambda c: c.step)])
    agent_status = getattr(result, "status", None)
    if session.status == "errored":
        traj.status = EpisodeStatus.ERRORED
    elif status is not None:
        traj.status, traj.stop_reason = status, reason
    elif agent_status in (EpisodeStatus.ERRORED, EpisodeStatus.LIMIT):
        traj.status, traj.stop_reason = agent_status, getattr(result, "error", None) or result.stop_reason
    traj.trial = trial
    traj.tokens = getattr(result, "tokens", None)
    return traj


def run_proxy(
    upstream: str,
    tasks: list[ProxyTask],
    agents: list[str],
    *,
    out: Path,
    faults: str = "default",
    fault_seed: int = 0,
    trials: int = 1,
    catalog: Path | None = None,
    timeout: float = 600.0,
    resume: bool = False,
    force: bool = False,
    skipped: list[tuple[str, str, int]] | None = None,
) -> list[Trajectory]:
    """Run every agent on every task and trial through the proxy, one episode at a time.

    Args:
        upstream: the upstream's command line (split like a shell) or its http(s) URL.
        out: the directory of the trajectories, claimed before the first episode like
            ``mcpgym proxy --record DIR`` (:func:`mcpgym.evaluation.proxy.record.hold_record_dir`,
            held until the last episode is recorded):
            ``resume`` appends to the episodes recorded there and skips every (agent, task,
            trial) already recorded (:func:`recorded_episodes`), as ``mcpgym run --resume``
            does; ``force`` starts over in a directory of mcpgym's own.
        skipped: when given, the (agent, task id, trial) skipped as recorded are appended to it.

    Returns:
        The trajectories of the episodes run now.

    Raises:
        ValueError: for an empty, or bad, upstream, a bad profile (one naming a tool the
            upstream does not list is refused at the first episode), catalog or agent spec, an
            ``out`` that cannot be used (:class:`mcpgym.evaluation.proxy.record.RecordDirError`),
            or a ``resume`` whose fault profile or fault seed differs from the recorded episodes'.
    """
    import shlex

    from mcpgym.evaluation.agents import make_agent
    from mcpgym.evaluation.proxy.classify import ToolClassifier
    from mcpgym.evaluation.proxy.command import build
    from mcpgym.evaluation.proxy.record import hold_record_dir

    url = upstream if upstream.startswith(("http://", "https://")) else None
    try:
        command = None if url else [c for c in shlex.split(upstream) if c]
    except ValueError as exc:  # an unclosed quote
        raise ValueError(f"--proxy {upstream!r}: cannot split the command line: {exc}") from None
    if not url and not command:
        raise ValueError("--proxy needs a command or URL: the upstream MCP server's command line, or its http(s) URL")
    spec, plan, classifier = build(command, url, faults, fault_seed, catalog)
    built = [(name, make_agent(name)) for name in agents]
    with hold_record_dir(
        out, resume=resume, force=force, catalog=catalog, option="--out", command=LOCK_COMMAND
    ) as held:
        if held.user_catalog is not None and catalog is None:  # the user's own edit of it: used
            classifier = ToolClassifier(held.user_catalog)
        recorded = recorded_episodes(out, plan.profile.name, fault_seed) if resume else set()
        return _run_held(held, spec, plan, classifier, tasks, built, trials, fault_seed, timeout, recorded, skipped)


def _run_held(
    held: Any,
    spec: Any,
    plan: Any,
    classifier: Any,
    tasks: list[ProxyTask],
    built: list[tuple[str, Any]],
    trials: int,
    fault_seed: int,
    timeout: float,
    recorded: set[tuple[str, str, int]],
    skipped: list[tuple[str, str, int]] | None,
) -> list[Trajectory]:
    """The episodes of :func:`run_proxy` not in ``recorded``, run in the claimed record directory ``held``."""
    done: list[Trajectory] = []
    for task in tasks:
        for name, agent in built:
            for trial in range(trials):
                if (name, task.id, trial) in recorded:
                    if skipped is not None:
                        skipped.append((name, task.id, trial))
                    continue
                traj = anyio.run(
                    run_proxied_episode,
                    spec,
                    task,
                    name,
                    agent,
                    plan.profile,
                    fault_seed + trial,
                    trial,
                    classifier,
                    timeout,
                )
                held.record(traj, classifier)
                done.append(traj)
    return done


LOCK_COMMAND = "mcpgym run --proxy"
"""What the lock of an ``mcpgym run --proxy`` directory names as its holder."""


def recorded_episodes(out: Path, profile: str, fault_seed: int) -> set[tuple[str, str, int]]:
    """The (agent, task id, trial) of the episodes ``mcpgym run --proxy`` recorded in ``out``
    (lines with a task id; sessions of ``mcpgym proxy --record`` have none), for ``--resume``.

    Raises:
        ValueError: a malformed line (file, line, field), or a recorded episode whose fault
            profile or fault seed differs from ``profile`` / ``fault_seed + trial``: resuming
            with them would mix two conditions in one directory.
    """
    from mcpgym.evaluation.proxy.record import TRAJECTORIES
    from mcpgym.evaluation.records.trajectory import read_trajectories

    path = out / TRAJECTORIES
    if not path.is_file():
        return set()
    found: set[tuple[str, str, int]] = set()
    for t in read_trajectories(path, tolerate_truncated_tail=True, states=False):
        if not t.task_id:
            continue
        if t.fault_profile != profile:
            raise ValueError(
                f"--faults {profile} differs from the fault profile {t.fault_profile} of the episodes recorded in "
                f"{out}: one directory must not mix two conditions; resume with --faults {t.fault_profile}, "
                "or use another --out"
            )
        if t.fault_seed is not None and t.fault_seed - t.trial != fault_seed:
            raise ValueError(
                f"--fault-seed {fault_seed} differs from the fault seed {t.fault_seed - t.trial} of the episodes "
                f"recorded in {out} (trial t: seed + t): one directory must not mix two conditions; resume with "
                f"--fault-seed {t.fault_seed - t.trial}, or use another --out"
            )
        found.add((t.agent, t.task_id, t.trial))
    return found


def run_proxy_command(
    upstream: str,
    task_files: list[Path] | None,
    agents: list[str] | None,
    out: Path | None,
    faults: str,
    fault_seed: int,
    trials: int,
    catalog: Path | None,
    timeout: float,
    resume: bool = False,
    force: bool = False,
) -> None:
    """``mcpgym run --proxy``: check the options, run, print one line per episode.

    Raises:
        typer.Exit: code 2 for bad input (one line on stderr).
    """
    import typer

    def fail(message: str) -> None:
        typer.secho(f"error: {' '.join(message.split())}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2)

    if not upstream.strip():
        fail("--proxy needs a command or URL: the upstream MCP server's command line, or its http(s) URL")
    if not task_files:
        fail("--proxy needs --tasks FILE: instructions and checks (docs/proxy.md)")
    if not agents:
        fail("--proxy needs --agent SPEC (replay:FILE.jsonl or an LLM spec): there is no oracle to script")
    if out is None:
        fail("--proxy needs --out DIR")
    assert task_files is not None and agents is not None and out is not None
    skipped: list[tuple[str, str, int]] = []
    try:
        tasks = [t for f in task_files for t in load_proxy_tasks(f)]
        trajs = run_proxy(
            upstream,
            tasks,
            agents,
            out=out,
            faults=faults,
            fault_seed=fault_seed,
            trials=trials,
            catalog=catalog,
            timeout=timeout,
            resume=resume,
            force=force,
            skipped=skipped,
        )
    except (ValueError, OSError) as exc:
        fail(str(exc))
        return
    if skipped:
        typer.echo(f"{counted(len(skipped), 'episode')} already recorded in {out}, not run again (--resume)")
    for t in trajs:
        typer.echo(
            f"{t.task_id} {t.agent} trial {t.trial}: {t.status}, success {t.scores and t.scores.success}, "
            f"{counted(t.scores.tool_calls if t.scores else 0, 'call')}, {counted(len(t.ledger or []), 'fault')}"
        )
    typer.echo(
        f"trajectories: {out / 'trajectories.jsonl'} (score: mcpgym score {out} --catalog {out / 'catalog.json'})"
    )
