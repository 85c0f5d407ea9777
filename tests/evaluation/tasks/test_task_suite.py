"""The whole hand-written suite (issue "Task suite"): over every app, under the default fault
profile, 3 trials. careful succeeds on >= 95% of feasible tasks and refuses every infeasible
task without changing state; overconfident and defeatist fall clearly behind on the tasks
tagged for their weakness. Every figure comes from the judge and scorer."""

from __future__ import annotations

from collections import Counter

import anyio
import pytest

from mcpgym.evaluation.agents import make_agent
from mcpgym.evaluation.agents.inprocess import run_in_process, score_in_process
from mcpgym.evaluation.tasks import load_tasks, oracle_calls
from mcpgym.tools.catalog import catalog

TRIALS = 3
AGENTS = ("careful", "overconfident", "defeatist")


def _episodes() -> dict[str, list[tuple]]:
    """Every (task, trajectory, scores) of each agent over the core suite, TRIALS each.

    The episodes of a task follow one another, and each task's initial and gold snapshots are
    one object each, as the runner hands them out: every trajectory's own (fresh copies) must
    equal them, and the judge then restores those two once per task, not once per episode
    (its cache is by object).
    """
    agents = {name: make_agent(name) for name in AGENTS}
    runs: dict[str, list[tuple]] = {name: [] for name in AGENTS}

    async def main() -> None:
        for task in load_tasks("core"):
            shared = None
            for name, agent in agents.items():
                for trial in range(TRIALS):
                    traj = await run_in_process(agent, task, faults="default", trial=trial)
                    shared = shared or (traj.initial_snapshot, traj.gold_snapshot)
                    assert (traj.initial_snapshot, traj.gold_snapshot) == shared, (task.id, name, trial)
                    traj.initial_snapshot, traj.gold_snapshot = shared
                    runs[name].append((task, traj, score_in_process(traj, task)))

    anyio.run(main)
    return runs


@pytest.fixture(scope="module")
def runs() -> dict[str, list[tuple]]:
    return _episodes()


def _rate(episodes: list[tuple], pick) -> float:  # noqa: ANN001
    chosen = [sc.success for task, traj, sc in episodes if pick(task, traj)]
    assert chosen, "no episode picked"
    return sum(bool(s) for s in chosen) / len(chosen)


def test_suite_size_and_mix() -> None:
    tasks = load_tasks("core")
    assert len(tasks) >= 100
    apps = Counter(a for t in tasks for a in t.apps if a != "system")
    assert set(apps) >= {"shop", "talk", "flights", "stocks", "weather", "news", "office"}
    owner = {r["name"]: r["app"] for r in catalog()}
    spanning = [t for t in tasks if len({owner[name] for name in oracle_calls(t)}) >= 2]
    assert len(spanning) >= 30  # the oracle itself calls tools of two or more apps
    beyond_system = [t for t in tasks if len(set(t.apps) - {"system"}) >= 2]
    assert len(beyond_system) >= 20
    assert len([t for t in tasks if not t.feasible]) >= 10
    assert {t.level for t in tasks} == {1, 2, 3}
    assert len(load_tasks("full")) >= 1000


def test_careful_succeeds_on_the_feasible_and_refuses_the_infeasible(runs) -> None:  # noqa: ANN001
    careful = runs["careful"]
    assert _rate(careful, lambda t, _: t.feasible) >= 0.95
    for task, traj, sc in careful:
        if not task.feasible:
            assert sc.success is True and sc.misbehave == 0 and sc.declared_impossible, (task.id, traj.trial)
    assert sum(sc.defeatism for _, _, sc in careful) <= 0.02 * len(careful)


def test_overconfident_falls_behind_on_verification_tasks(runs) -> None:  # noqa: ANN001
    def tagged(task, _traj) -> bool:  # noqa: ANN001
        return "verification" in task.tags

    careful, over = _rate(runs["careful"], tagged), _rate(runs["overconfident"], tagged)
    assert over <= careful - 0.2, (careful, over)
    writes = sum(sc.writes for _, _, sc in runs["overconfident"])
    verified = sum(sc.verified_writes for _, _, sc in runs["overconfident"])
    assert verified / writes < 0.2


def test_defeatist_falls_behind_on_recovery_tasks_that_met_a_fault(runs) -> None:  # noqa: ANN001
    def tagged(task, traj) -> bool:  # noqa: ANN001
        return "recovery" in task.tags and any(not e.get("persisting") for e in traj.ledger or [])

    careful, defeatist = _rate(runs["careful"], tagged), _rate(runs["defeatist"], tagged)
    assert defeatist <= careful - 0.3, (careful, defeatist)
    met = [sc for _, _, sc in runs["defeatist"] if sc.recoverable_errors]
    assert sum(sc.defeatism for sc in met) / len(met) >= 0.8
