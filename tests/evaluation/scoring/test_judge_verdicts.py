"""The per-app judge (``judge``) against the whole-world judge it replaced (``judge_restored``):
identical verdicts on every task of the ``full`` suite (issue 30), for three final states per
task: the gold state (success), the initial state (nothing done) and the gold state of one
changed app only, the other apps untouched (the same objects as the initial state's)."""

from __future__ import annotations

from mcpgym.evaluation.scoring.judge import judge, judge_restored
from mcpgym.evaluation.tasks import gold_run, load_tasks
from mcpgym.kernel.world import template


def _finals(initial: dict, gold: dict) -> list[dict]:
    changed = [n for n in gold["apps"] if gold["state"].get(n) != initial["state"].get(n)]
    finals = [gold, initial]
    if changed:
        one = {**initial, "state": {**initial["state"], changed[-1]: gold["state"][changed[-1]]}}
        finals.append(one)
    return finals


def test_per_app_and_whole_world_judges_agree_on_every_full_task() -> None:
    tasks = load_tasks("full")
    assert len(tasks) > 1000
    compared = 0
    for task in tasks:
        # the shared snapshots themselves (read-only here), not the registry's fresh copies
        initial, gold = template(task.seed, task.apps).snapshot, gold_run(task).snapshot
        for final in _finals(initial, gold):
            checks = task.checks
            new = judge(initial, final, gold, checks=checks, final_message="done", task=task.id)
            old = judge_restored(initial, final, gold, checks=checks, final_message="done")
            assert new == old, task.id
            compared += 1
    assert compared > 2 * len(tasks)
