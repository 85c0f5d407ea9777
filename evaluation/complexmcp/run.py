"""Episodes of ComplexMCP's tasks through mcpgym's proxy (``mcpgym run --suite complexmcp``).

One episode: log into the task's apps (:class:`~mcpgym.evaluation.complexmcp.sessions.EpisodeApps`),
put mcpgym's proxy (:func:`mcpgym.server.proxy.server.build_proxy_server`: fault plan, call log,
ledger) in front of the in-process gateway server of those sessions, run the agent against the
proxy (an in-process MCP connection, as ``mcpgym run --proxy`` does), log out, and keep the
states before, after and gold in the trajectory for the ``complexmcp`` outcome rule
(:mod:`mcpgym.evaluation.scoring.complexmcp_rule`). Tools are classified by mcpgym's built-in
``complexmcp`` catalog. Trial t uses fault seed ``fault_seed + t``.

Tool exposure (``--tools``), their modes under mcpgym's names:

* ``list_all`` (or ``all``): every tool of the seven apps;
* ``provide`` (or ``task``): the tools of the task's ``tool_cnt`` that the apps have;
* ``+N`` (or ``provide+N``, ``task+N``): those plus N distractors drawn from the other tools
  by :func:`mcpgym.evaluation.llm.exposure.pick_distractors` with the task's seed;
* ``rag`` (or ``rag:K``): their ``rag``: the K (default 30, their ``--topk``) tools that rank
  best for the task's query, ranked once before the episode by mcpgym's BM25 tool search
  (:func:`mcpgym.server.retrieval.rank_tools`; theirs embeds with Chroma);
* ``search`` (or ``retrieval``, their ``fetch``): only mcpgym's ``search_tools``; what it finds
  is listed from then on (every tool may be called).
"""

from __future__ import annotations

import re
from typing import Any

import anyio

from mcpgym.evaluation.complexmcp.sessions import EpisodeApps, Route, SessionError, gateway_server
from mcpgym.evaluation.complexmcp.tasks import ComplexTask
from mcpgym.server.proxy.upstream import Upstream, UpstreamSpec

DEFAULT_EPISODE_TIMEOUT = 600.0
"""Wall seconds one episode may take (agent and calls; login and logout have their own deadlines)."""
TOOL_MODES = ("list_all", "provide", "+N", "rag", "search")
"""The ``--tools`` values of the complexmcp suite (``+N`` with N an integer)."""

_PLUS = re.compile(r"^(?:provide|task)?\+(\d{1,4})$")
_RAG = re.compile(r"^rag(?::(\d{1,3}))?$")
RAG_TOP_K = 30
"""Their ``--topk`` default: how many tools ``rag`` offers."""


def exposure(mode: str, task: ComplexTask, table: dict[str, Route]) -> tuple[list[str] | None, bool]:
    """``(offered, search)`` of tool mode ``mode`` for ``task`` (module docstring): the keys
    ``tools/list`` shows (None: all), and whether retrieval is on.

    Raises:
        ValueError: for a mode that is none of :data:`TOOL_MODES` (and their mcpgym names).
    """
    from mcpgym.evaluation.llm.exposure import pick_distractors

    text = mode.strip().lower()
    if text in ("list_all", "all"):
        return None, False
    if text in ("search", "retrieval", "fetch"):
        return [], True
    rag = _RAG.match(text)
    if rag is not None:
        from mcpgym.server.retrieval import rank_tools

        specs = [r.search_spec() for r in table.values()]
        return [s.name for s in rank_tools(specs, task.instruction, int(rag.group(1) or RAG_TOP_K))], False
    provided = [k for k in task.provided_tools if k in table]
    if text in ("provide", "task"):
        return provided, False
    match = _PLUS.match(text)
    if match is None:
        raise ValueError(
            f"--tools {mode!r}: the complexmcp suite takes list_all, provide, +N (e.g. +10), rag[:K] or search"
        )
    extra = pick_distractors(provided, list(table), int(match.group(1)), task.seed)
    return provided + extra, False


class GatewayUpstream(Upstream):
    """The proxy's upstream: the in-process gateway server of one episode's app sessions."""

    def __init__(self, spec: UpstreamSpec, server: Any) -> None:
        super().__init__(spec)
        self.server = server

    def _target(self) -> Any:
        return self.server


def make_classifier() -> Any:
    """A tool classifier with mcpgym's built-in ``complexmcp`` catalog (every Light* tool under its harness name)."""
    from mcpgym.evaluation.proxy.classify import ToolClassifier
    from mcpgym.evaluation.scoring.foreign_catalogs import builtin_catalog_path

    return ToolClassifier(builtin_catalog_path("complexmcp"))


async def run_episode(
    urls: dict[str, str],
    table: dict[str, Route],
    task: ComplexTask,
    agent_name: str,
    agent: Any,
    *,
    faults: Any,
    fault_seed: int,
    trial: int = 0,
    tools: str = "list_all",
    timeout: float = DEFAULT_EPISODE_TIMEOUT,
    classifier: Any = None,
) -> Any:
    """Run one episode of ``agent`` on ``task`` (module docstring); return its scored trajectory.

    Args:
        urls: app -> endpoint. table: the agent's tools (:func:`~mcpgym.evaluation.complexmcp.sessions.routes`).
        faults: a fault profile (name, dict or ``FaultProfile``). tools: the tool mode.
        classifier: the :class:`~mcpgym.evaluation.proxy.classify.ToolClassifier` (default
            :func:`make_classifier`); pass one to record its rows (``catalog.json``).

    Raises:
        SessionError: an app refused the login or the logout (the apps are broken, not the agent).
        ValueError: a bad tool mode or fault profile.
    """

    from mcpgym.evaluation.agents.base import AgentContext
    from mcpgym.evaluation.proxy.run import drive_agent, settle_trajectory
    from mcpgym.evaluation.scoring.complexmcp_rule import wrap_states
    from mcpgym.evaluation.scoring.scorer import score_episode
    from mcpgym.evaluation.scoring.tool_catalog import Catalog
    from mcpgym.server.proxy.plan import ProxyFaultPlan
    from mcpgym.server.proxy.server import ProxySession, describe_answer

    offered, search = exposure(tools, task, table)
    classifier = classifier if classifier is not None else make_classifier()
    plan = ProxyFaultPlan(faults, fault_seed, describe_answer)
    episode = EpisodeApps(urls, table, task.seed, task.apps)
    spec = UpstreamSpec(command=["complexmcp-apps", *episode.apps])
    result: Any = None
    caller: Any = None
    status: str | None = None
    reason: str | None = None
    async with episode.connect():
        before = await episode.login()
        try:
            async with anyio.create_task_group() as tg:
                upstream = GatewayUpstream(spec, gateway_server(episode, offered, search))
                session = ProxySession(upstream=upstream, plan=plan, classify=classifier.proxied, task_group=tg)
                upstream.callbacks = session.callbacks()
                tg.start_soon(upstream.run)
                await upstream.ready()
                session.take_tools(await session.list_all_tools())
                context = AgentContext(trial=trial, world_seed=task.seed, fault_seed=fault_seed)
                result, caller, status, reason = await drive_agent(session, task, agent, context, timeout)
                upstream.close()
        finally:
            after = await episode.logout()
    meta = {
        "outcome": "complexmcp",
        "complexmcp": {"task": task.index, "level": task.level, "seed": task.seed, "tools": tools},
    }
    traj = settle_trajectory(session, classifier, caller, result, status, reason, agent_name, task, meta, trial)
    traj.apps = list(task.apps)
    traj.level = task.level
    traj.initial_snapshot = wrap_states(before)
    traj.final_snapshot = wrap_states(after)
    traj.gold_snapshot = wrap_states(task.gold)
    if result is not None and result.stop_reason and traj.stop_reason is None:
        traj.stop_reason = result.stop_reason
    traj.scores = score_episode(traj, Catalog(classifier.rows()))
    return traj


__all__ = ["DEFAULT_EPISODE_TIMEOUT", "GatewayUpstream", "SessionError", "TOOL_MODES", "exposure", "run_episode"]
