"""Inspect AI: mcpgym tasks as an Inspect ``Task`` (``pip install 'mcpgym[inspect]'``).

::

    from inspect_ai import eval
    from mcpgym.integrations.inspect_task import mcpgym_task
    eval(mcpgym_task(suite="smoke", faults="default", trials=3), model="openai/gpt-4o-mini")

or, with Inspect's own command line (``mcpgym_task`` is an Inspect ``@task``, registered as
``mcpgym/mcpgym_task`` through the package's ``inspect_ai`` entry point)::

    inspect eval mcpgym/mcpgym_task -T suite=smoke -T trials=3 --model openai/gpt-4o-mini

* Samples: one per mcpgym task (``id`` = task id, ``input`` = its instruction); ``epochs`` =
  ``trials``, and epoch ``e`` plays trial ``e - 1`` (its fault seed: ``fault_seed_for(task, e-1)``),
  as ``mcpgym run --trials`` does.
* Solver (:func:`mcpgym_episode`): each sample gets a fresh episode on an mcpgym HTTP server
  (``POST /control/episodes``: the task's world seed and apps, the fault profile, the trial's
  fault seed); its MCP tools reach the model through Inspect's own MCP support
  (``mcp_server_http`` on the episode's streamable-HTTP URL), and the model plays with
  ``generate(tool_calls="loop")`` until it answers without a tool call (or Inspect's
  ``message_limit`` ends it). Then the episode's call log, fault ledger and world states are
  read from the control API into the sample's store (key ``mcpgym``) and the episode deleted.
* Scorer (:func:`mcpgym_scorer`): the trajectory built as the log's reader builds it
  (:func:`mcpgym.evaluation.formats.inspect_log.episode_trajectory`: the server's call log for
  the calls that reached it, an invalid step for each call Inspect refused itself, e.g. a tool
  the episode does not offer) and judged and scored by the same code; the value is the outcome
  (1.0 on success), the metadata every :class:`EpisodeScores` field (verification, recovery,
  defeatism, ... whatever the scorer has).
* Metrics: our aggregates of those scores (:func:`mcpgym.evaluation.scoring.aggregate.metrics`:
  ``success_rate``, ``verification_rate``, ``recovery_rate``, ``defeatism_rate``, ...), NaN
  where a rate has no denominator, over *every* epoch's score: they are declared
  ``scores="unreduced"`` (Inspect >= 0.3.241), so Inspect's epoch reducer, which keeps one
  score's metadata per sample, never stands between the trials and the rates.
* Server: ``server=URL`` and ``token=...`` (default ``$MCPGYM_TOKEN``) use a running
  ``mcpgym serve --transport http``; none starts one on a free loopback port, once per
  process, stopped when the process exits.

``mcpgym score --format inspect LOG.eval`` reads the log back
(:mod:`mcpgym.evaluation.formats.inspect_log`) and gives the same scores and rates.
"""

from __future__ import annotations

import atexit
import math
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import anyio
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import mcp_connection, mcp_server_http

from mcpgym.evaluation.formats.inspect_log import STORE_KEY, episode_trajectory
from mcpgym.evaluation.records.scores import Metrics
from mcpgym.evaluation.scoring.aggregate import metrics as aggregate_metrics
from mcpgym.evaluation.scoring.scorer import DEFAULT_K, EpisodeScores
from mcpgym.kernel.exceptions import MCPGymError
from mcpgym.kernel.shorten import short, short_name

RATES: tuple[str, ...] = tuple(
    name
    for name in (
        "success_rate",
        "verification_rate",
        "precheck_rate",
        "recovery_attempt_rate",
        "recovery_rate",
        "defeatism_rate",
        "false_success_rate",
    )
    if name in Metrics.model_fields
)
"""The aggregate rates reported as Inspect metrics (those :class:`Metrics` has)."""

_SERVER: dict[str, Any] = {}
_LOCK = threading.Lock()


def local_server() -> tuple[str, str]:
    """``(url, token)`` of this process's mcpgym HTTP server, started on first use on a free
    loopback port (its log in a temporary directory) and stopped at exit.

    Raises:
        mcpgym.evaluation.run.server_process.ServerError: it did not start (the message quotes its log).
    """
    with _LOCK:
        if "handle" not in _SERVER:
            from mcpgym.evaluation.run.server_process import spawn_server

            logs = tempfile.mkdtemp(prefix="mcpgym-inspect-")
            handle = spawn_server(f"{logs}/server.log")
            _SERVER["handle"] = handle
            atexit.register(handle.stop)
        handle = _SERVER["handle"]
    return handle.url, handle.token


def _rate(name: str) -> Metric:
    """The Inspect metric of one aggregate rate (:data:`RATES`): the rate of
    :func:`~mcpgym.evaluation.scoring.aggregate.metrics` over the episodes whose scores it
    gets (every sample and epoch: the metric is declared ``scores="unreduced"``)."""

    def compute(scores: list[SampleScore]) -> float:
        episodes = [EpisodeScores.model_validate(s.score.metadata) for s in scores if s.score.metadata]
        value = getattr(aggregate_metrics(episodes), name)
        return math.nan if value is None else float(value)

    return compute


def _rate_metrics() -> list[Metric]:
    out = []
    for name in RATES:

        def factory(name: str = name) -> Metric:
            return _rate(name)

        factory.__name__ = name
        out.append(metric(name=name, scores="unreduced")(factory)())
    return out


@scorer(metrics=_rate_metrics())
def mcpgym_scorer(k: int | None = DEFAULT_K) -> Scorer:
    """Judge and score the sample's episode (module docstring); ``k``: the recovery window."""

    async def score(state: TaskState, target: Target) -> Score:
        record = state.store.get(STORE_KEY)
        if not isinstance(record, dict):
            raise RuntimeError("the sample has no mcpgym episode record: use the mcpgym_episode solver")
        scores = judge(record, list(state.messages), sample_id=state.sample_id, epoch=state.epoch, k=k)
        return Score(
            value=1.0 if scores.success else 0.0,
            answer=record["final_message"],
            explanation=f"status {scores.status}; {scores.tool_calls} tool calls",
            metadata=scores.model_dump(mode="json"),
        )

    return score


def judge(
    record: dict[str, Any],
    messages: list[Any],
    *,
    sample_id: Any = None,
    epoch: int | None = None,
    k: int | None = DEFAULT_K,
) -> EpisodeScores:
    """Scores of a sample's episode: its ``record`` (the store's ``mcpgym`` entry) and its
    Inspect ``messages``, as ``mcpgym score --format inspect`` scores the log
    (:func:`~mcpgym.evaluation.formats.inspect_log.episode_trajectory`, the same function).

    Raises:
        RuntimeError: the judge could not decide the outcome.
    """
    from mcpgym.evaluation.scoring.scorer import score_episode
    from mcpgym.evaluation.scoring.tool_catalog import installed_catalog

    epoch = epoch if epoch is not None else int(record["trial"]) + 1
    traj, _ = episode_trajectory(messages, record, sample_id=sample_id, epoch=epoch, model=str(record["agent"]))
    scores = score_episode(traj, installed_catalog(), k=k)
    if scores.success is None:
        raise RuntimeError(f"episode {record['episode_id']}: the judge could not decide the outcome")
    return scores


def _answer(state: TaskState) -> tuple[str, str, str | None]:
    """``(final message, status, stop reason)`` by the ``openai`` format's rule: the last
    assistant message, when it calls no tool, is the answer; else the episode was cut off."""
    last = state.messages[-1] if state.messages else None
    if last is not None and last.role == "assistant" and not last.tool_calls:
        return last.text, "completed", None
    return "", "limit", "the conversation ends without a final answer (Inspect's limits)"


@solver
def mcpgym_episode(
    faults: str = "default", server: str | None = None, token: str | None = None, tool_exposure: str = "all"
) -> Solver:
    """Play the sample's mcpgym task in a fresh episode (module docstring).

    Raises (when solving): ``ServerError`` when the server cannot create or report the episode.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        from mcpgym.evaluation.run.episode_runner import exposure_request
        from mcpgym.evaluation.run.runner import faults_payload
        from mcpgym.evaluation.run.server_process import ControlClient
        from mcpgym.evaluation.tasks import fault_seed_for, get_task, gold_snapshot

        url, secret = (server, _server_token(token)) if server else local_server()
        task_ = get_task(str(state.metadata["task_id"]))
        trial = max(int(state.epoch) - 1, 0)
        payload, profile = faults_payload(task_.faults or faults)
        fault_seed = fault_seed_for(task_, trial)
        body = {"seed": task_.seed, "apps": list(task_.apps), "faults": payload, "fault_seed": fault_seed}
        body.update(exposure_request(tool_exposure, task_))
        async with ControlClient(url, secret) as control:
            created = await control.create_episode(body)
            eid = created.episode_id
            try:
                mcp = mcp_server_http(name="mcpgym", url=created.mcp_url, timeout=60)
                async with mcp_connection([mcp]):
                    state.tools = list(await mcp.tools())
                    state = await generate(state, tool_calls="loop")
            finally:
                # Also when Inspect's limits end the loop (it scores the sample all the same):
                # the episode is read and deleted, shielded from the cancellation.
                with anyio.CancelScope(shield=True):
                    try:
                        ended = await control.get(eid, "final")  # calls, ledger, snapshot at one instant
                        calls, ledger, final = ended["calls"], ended["ledger"], ended["snapshot"]
                        initial = await control.get(eid, "initial")
                    finally:
                        await control.delete(eid)
                    message, status, reason = _answer(state)
                    state.store.set(
                        STORE_KEY,
                        {
                            "episode_id": eid,
                            "task_id": task_.id,
                            "agent": str(state.model),
                            "trial": trial,
                            "world_seed": task_.seed,
                            "fault_seed": created.fault_seed,
                            "fault_profile": profile.name,
                            "apps": list(created.apps or task_.apps),
                            "level": task_.level,
                            "feasible": task_.feasible,
                            "extra_checks": [c.model_dump(mode="json") for c in task_.checks],
                            "tags": list(task_.tags or []),
                            "max_calls": task_.max_calls,
                            "calls": calls,
                            "ledger": ledger,
                            "initial_snapshot": initial,
                            "final_snapshot": final,
                            "gold_snapshot": gold_snapshot(task_),
                            "final_message": message,
                            "status": status,
                            "stop_reason": reason,
                        },
                    )
        return state

    return solve


def _server_token(token: str | None) -> str:
    """The control token for ``server=``: ``token``, else ``$MCPGYM_TOKEN``.

    Raises:
        ValueError: neither is set (or it is blank), or it holds a character an HTTP header
            cannot carry (the message does not quote it).
    """
    secret = token if token is not None else os.environ.get("MCPGYM_TOKEN")
    if not isinstance(secret, str) or not secret.strip():
        raise ValueError("server= needs token= (or $MCPGYM_TOKEN): the control token of that mcpgym server")
    secret = secret.strip()
    if any(not (0x20 <= ord(c) <= 0x7E) for c in secret):
        raise ValueError(
            "the control token holds a character an HTTP header cannot carry (a line break, a control "
            "or non-ASCII character); check token= or $MCPGYM_TOKEN"
        )
    return secret


def _whole(name: str, value: Any, *, at_least: int) -> int:
    """``value`` as an int of at least ``at_least`` (a bool or a string is refused, not cast).

    Raises:
        ValueError: naming the argument and the value.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < at_least:
        raise ValueError(f"{name} must be a whole number >= {at_least}, got {short(value)}")
    return value


def _task_ids(tasks: str | list[str] | None) -> list[str] | None:
    """``tasks`` as a list of ids: a list, or one string of comma-separated ids (``-T tasks=a,b``).

    Raises:
        ValueError: anything else, or no id at all.
    """
    if tasks is None:
        return None
    if isinstance(tasks, str):
        tasks = [t.strip() for t in tasks.split(",") if t.strip()]
    if not isinstance(tasks, (list, tuple)) or not all(isinstance(t, str) for t in tasks):
        raise ValueError(f"tasks must be a list of task ids (or one comma-separated string), got {short(tasks)}")
    if not tasks:
        raise ValueError("tasks names no task: give at least one task id, or leave it out for the whole suite")
    return list(tasks)


@task
def mcpgym_task(
    suite: str = "smoke",
    faults: str = "default",
    trials: int = 1,
    *,
    tasks: str | list[str] | None = None,
    server: str | None = None,
    token: str | None = None,
    tool_exposure: str = "all",
    message_limit: int | None = 100,
    k: int | None = DEFAULT_K,
) -> Task:
    """An Inspect ``Task`` of mcpgym tasks (module docstring); an Inspect ``@task``, so
    ``inspect eval mcpgym/mcpgym_task -T trials=3`` runs it too.

    Every argument is checked here, before Inspect starts the eval: a bad one is an error now,
    not a failed sample later.

    Args:
        suite: the task suite (``smoke``, ``core``, ``full`` or a registered one).
        faults: fault profile (built-in name or file), unless a task sets its own.
        trials: epochs (>= 1); epoch ``e`` is trial ``e - 1``.
        tasks: task ids to keep, a list or one comma-separated string (None: the whole suite).
        server, token: a running mcpgym HTTP server and its control token (default
            ``$MCPGYM_TOKEN``); server None: one started for this process.
        tool_exposure: ``all`` | ``task`` | ``task+N`` | ``retrieval``.
        message_limit: Inspect's message limit per sample (>= 1, or None: no limit).
        k: the scorer's recovery window, in tool calls (>= 1); None (the default): no window.

    Raises:
        KeyError: an unknown suite, or a task id not in the suite. ValueError: trials, k or
            message_limit not a whole number in range; a bad tool exposure; ``server`` without a
            token. mcpgym.tools.faults.FaultProfileError: an unknown or invalid fault profile.
        SystemExit: (2) instead of those under Inspect's command line (``inspect eval``), after
            one ``error:`` line on stderr.
    """
    try:
        return _build_task(suite, faults, trials, tasks, server, token, tool_exposure, message_limit, k)
    except (KeyError, ValueError, MCPGymError) as exc:
        if not _from_inspect_cli():
            raise
        # Inspect's command line prints a 250-line traceback for any error of a task function:
        # one line instead, naming the argument as -T spells it (issue 37)
        text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        sys.stderr.write(f"error: mcpgym/mcpgym_task: {text} (-T NAME=VALUE sets an argument)\n")
        sys.stderr.flush()
        raise SystemExit(2) from None


def _from_inspect_cli() -> bool:
    """Whether this process is Inspect's command line (``inspect eval ...``), whose error output
    for a task's refusal is a traceback."""
    return Path(sys.argv[0]).name == "inspect" if sys.argv else False


def _build_task(
    suite: str,
    faults: str,
    trials: int,
    tasks: str | list[str] | None,
    server: str | None,
    token: str | None,
    tool_exposure: str,
    message_limit: int | None,
    k: int | None,
) -> Task:
    """The checks and the ``Task`` of :func:`mcpgym_task` (same arguments and errors)."""
    from mcpgym.evaluation.llm.exposure import parse_exposure
    from mcpgym.evaluation.run.episode_runner import exposure_request
    from mcpgym.evaluation.run.runner import faults_payload
    from mcpgym.evaluation.tasks import load_tasks

    trials = _whole("trials", trials, at_least=1)
    k = None if k is None else _whole("k", k, at_least=1)
    if message_limit is not None:
        message_limit = _whole("message_limit", message_limit, at_least=1)
    wanted = _task_ids(tasks)
    faults_payload(faults)  # FaultProfileError now, not in every sample
    parse_exposure(tool_exposure)
    if server is not None:
        if not isinstance(server, str) or not server.strip():
            raise ValueError(f"server must be the URL of a running mcpgym HTTP server, got {short(server)}")
        _server_token(token)
    chosen = load_tasks(suite)
    if wanted is not None:
        known = {t.id: t for t in chosen}
        missing = [t for t in wanted if t not in known]
        if missing:
            shown = ", ".join(short_name(t) for t in missing[:3]) + (
                f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            )
            raise KeyError(f"not in suite {short(suite)}: {shown}")
        chosen = [known[t] for t in wanted]
    for t in chosen:
        exposure_request(tool_exposure, t)  # e.g. a mode that needs oracle tools the task lacks
        if t.faults:
            faults_payload(t.faults)
    dataset = MemoryDataset(
        [Sample(id=t.id, input=t.instruction, metadata={"task_id": t.id}) for t in chosen], name=f"mcpgym-{suite}"
    )
    return Task(
        dataset=dataset,
        solver=mcpgym_episode(faults=faults, server=server, token=token, tool_exposure=tool_exposure),
        scorer=mcpgym_scorer(k=k),
        epochs=trials,
        message_limit=message_limit,
        name=f"mcpgym_{suite}",
    )


__all__ = ["RATES", "judge", "local_server", "mcpgym_episode", "mcpgym_scorer", "mcpgym_task"]
