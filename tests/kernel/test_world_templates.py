"""Worlds made from templates (copy on write per app) against freshly generated worlds:
the same snapshots, hashes, call results, ledgers, trajectories and verdicts, and no write of
one episode reaching another episode or the template (issue 30)."""

from __future__ import annotations

import anyio
import pytest

from mcpgym.evaluation.agents import make_agent
from mcpgym.evaluation.run.gym import GymEpisode
from mcpgym.evaluation.tasks import gold_snapshot, load_tasks, suite_names
from mcpgym.kernel.world import World, WorldTemplate, template
from mcpgym.server import episode as episode_mod
from mcpgym.server.episode import Episode


def _suite_worlds() -> list[tuple[int, tuple[str, ...]]]:
    pairs = {(t.seed, tuple(t.apps)) for suite in suite_names() for t in load_tasks(suite)}
    return sorted(pairs)


def test_every_suite_world_copies_its_template_exactly() -> None:
    """For every (world seed, app set) of the bundled suites: a world made from the template
    has the template's snapshot and hash before any access, and after every app has copied its
    state (the copy is made from JSON text: it must dump back identically)."""
    pairs = _suite_worlds()
    assert len(pairs) > 800  # the full suite's 844 and more
    for seed, apps in pairs:
        made = template(seed, apps)
        world = made.world()
        assert world.snapshot() == made.snapshot
        before = world.state_hash()
        for app in world.apps.values():
            assert app.state is not made.shared_state(app.name).state  # owned copy now
        assert world.snapshot() == made.snapshot and world.state_hash() == before, (seed, apps)


@pytest.mark.parametrize("apps", [["system"], ["shop"], "all"])
def test_a_template_world_equals_a_freshly_generated_one(apps) -> None:
    for seed in (0, 7, 123):
        fresh = World(seed, apps)
        made = World.from_template(seed, apps)
        assert made.state_hash() == fresh.state_hash()
        assert made.comparable() == fresh.comparable()


class _FreshTemplate:
    """Stands in for the template cache: every episode on a freshly generated world."""

    def __init__(self, seed: int, apps: list[str]) -> None:
        self._world = World(seed, apps)
        self.snapshot = self._world.snapshot()

    def world(self) -> World:
        return self._world


def _play(task, monkeypatch, fresh: bool) -> tuple[dict, list, list, str]:
    if fresh:
        monkeypatch.setattr(episode_mod, "template", _FreshTemplate)
    else:
        monkeypatch.undo()
    ep = GymEpisode.create(task, trial=1, faults="harsh", gold=gold_snapshot(task), agent_name="careful")
    traj = anyio.run(ep.run_agent, make_agent("careful"))
    data = traj.model_dump(mode="json")
    data.pop("episode_id")
    data.get("scores", {}).pop("episode_id", None)
    data.pop("harness_seconds", None)
    data.pop("phase_seconds", None)
    data.pop("wall_seconds", None)
    return data, ep._episode.calls(), ep._episode.ledger(), ep._episode.world.state_hash()


def test_core_trajectories_are_the_same_on_template_and_fresh_worlds(monkeypatch) -> None:
    """Every ``core`` task (all eight apps), the careful agent under the ``harsh`` profile (lost
    writes roll back to checkpoints, stale reads read them): the same trajectory, call log,
    ledger, final hash and scores on a template world as on a freshly generated world."""
    for task in load_tasks("core"):
        fresh = _play(task, monkeypatch, fresh=True)
        shared = _play(task, monkeypatch, fresh=False)
        assert shared == fresh, task.id


def test_a_write_in_one_episode_reaches_neither_another_episode_nor_the_template() -> None:
    made = template(42, ["system", "shop"])
    pristine = World(42, ["system", "shop"]).state_hash()
    first = Episode.create(42, ["system", "shop"], "none")
    second = Episode.create(42, ["system", "shop"], "none")
    assert first.initial_snapshot is second.initial_snapshot is made.snapshot  # stored once
    item = first.call("shop_search_items", {"query": ""}).payload["items"][0]["item_id"]
    out = first.call("shop_add_to_cart", {"item_id": item, "quantity": 1})
    assert not out.is_error
    assert first.world.state_hash() != pristine
    assert second.world.state_hash() == pristine
    assert World.from_template(42, ["system", "shop"]).state_hash() == pristine
    assert made.snapshot == World(42, ["system", "shop"]).snapshot()
    assert second.world.apps["shop"].state.cart == World(42, ["system", "shop"]).apps["shop"].state.cart
    # a checkpoint freezes the written state; rolling back returns to it, the template untouched
    mark = first.world.checkpoint()
    after = first.world.state_hash()
    first.call("shop_add_to_cart", {"item_id": item, "quantity": 1})
    first.world.rollback(mark)
    assert first.world.state_hash() == after
    assert World.from_template(42, ["system", "shop"]).state_hash() == pristine


def test_untouched_apps_are_never_copied() -> None:
    made = template(3, "all")
    ep = Episode.create(3, "all", "none")
    ep.call("system_get_wallet_balance", {})
    copied = {n for n, a in ep.world.apps.items() if a.peek_state() is not made.shared_state(n).state}
    assert copied == {"system"}
    assert isinstance(made, WorldTemplate)


def test_a_serving_process_freezes_its_long_lived_objects_and_sets_gc_thresholds() -> None:
    """``tune_gc`` (run by both serve entry points before any episode exists), in a fresh
    interpreter so this test process keeps its own collector settings."""
    import json
    import subprocess
    import sys

    code = (
        "import gc, json\n"
        "from mcpgym.server.serve import GC_THRESHOLDS, tune_gc\n"
        "from mcpgym.kernel.world import _TEMPLATES\n"
        "tune_gc(3, ['shop'])\n"
        "print(json.dumps([list(gc.get_threshold()), list(GC_THRESHOLDS), gc.get_freeze_count(), "
        "[list(k[1]) for k in _TEMPLATES]]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    threshold, wanted, frozen, templates = json.loads(out.stdout.strip().splitlines()[-1])
    assert threshold == wanted and frozen > 10_000
    assert templates == [["system", "shop"]]


def test_an_untouched_template_world_reports_the_templates_hash_and_a_changed_one_its_own() -> None:
    world = World.from_template(11, ["system", "shop"])
    fresh = World(11, ["system", "shop"])
    assert world.state_hash() == fresh.state_hash()
    world.apps["system"].state.settings["theme"] = "dark"  # any access copies; the change is seen
    fresh.apps["system"].state.settings["theme"] = "dark"
    assert world.state_hash() == fresh.state_hash() != World(11, ["system", "shop"]).state_hash()
    other = World.from_template(11, ["system", "shop"])
    other.clock.advance(5)
    assert other.state_hash() != World(11, ["system", "shop"]).state_hash()
