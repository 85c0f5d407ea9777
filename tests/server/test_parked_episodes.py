"""Parked episodes (issue 30, lean live episodes): an idle episode keeps its changed app
states and its call log as JSON text and its fault state as tuples (``Episode.park``), and
unparks on its next call. Parking changes nothing observable: the same snapshots, hashes,
views, call logs, ledgers, trajectories and verdicts as an episode never parked; a write
reaches neither another episode nor the template; and a parked episode holds few objects
the garbage collector tracks."""

from __future__ import annotations

import gc

import anyio

from mcpgym.evaluation.agents import make_agent
from mcpgym.evaluation.run.gym import GymEpisode
from mcpgym.evaluation.tasks import gold_snapshot, load_tasks
from mcpgym.kernel.world import World, template
from mcpgym.server import episode as episode_mod
from mcpgym.server.episode import Episode


def _play(task, monkeypatch, hot: int) -> tuple[dict, list, list, str, str]:
    """The careful agent on ``task`` under ``harsh`` faults, with ``hot`` episodes kept hot
    (0: the episode is parked after every call, so every call runs on a parked episode)."""
    monkeypatch.setattr(episode_mod, "HOT_EPISODES", hot)
    ep = GymEpisode.create(task, trial=1, faults="harsh", gold=gold_snapshot(task), agent_name="careful")
    traj = anyio.run(ep.run_agent, make_agent("careful"))
    data = traj.model_dump(mode="json")
    data.pop("episode_id")
    data.get("scores", {}).pop("episode_id", None)
    return data, ep._episode.calls(), ep._episode.ledger(), ep._episode.world.state_hash(), ep.observation


def test_core_trajectories_are_the_same_parked_after_every_call_as_never_parked(monkeypatch) -> None:
    """Every ``core`` task (all eight apps), the careful agent under ``harsh`` faults (lost
    writes roll back to checkpoints, stale reads read them): the same trajectory, call log,
    ledger, final hash, scores and last observation when the episode is parked after every
    call as when it never is."""
    parked_any = 0
    for task in load_tasks("core"):
        kept = _play(task, monkeypatch, hot=10_000)
        parked = _play(task, monkeypatch, hot=0)
        assert parked == kept, task.id
        parked_any += bool(kept[1])
    assert parked_any > 20  # the comparison covered episodes that made calls


def test_a_parked_world_has_the_same_snapshot_hash_and_view_and_copies_back_on_access() -> None:
    world = World.from_template(42, ["system", "shop"])
    fresh = World(42, ["system", "shop"])
    for w in (world, fresh):
        w.apps["system"].state.settings["theme"] = "dark"
        w.apps["shop"].state.cart_coupon = "SAVE10"
    before = (world.snapshot(), world.state_hash(), world.comparable())
    assert world.park() == 2  # the two changed apps; the others are the template's
    assert world.apps["shop"].shared_state() is not None and world.apps["shop"].shared_state().is_parked
    assert (world.snapshot(), world.state_hash(), world.comparable()) == before
    assert world.state_hash() == fresh.state_hash()
    assert world.park() == 0  # nothing owned any more
    # the next access copies the parked state back; writes go on from it
    world.apps["shop"].state.cart_coupon = None
    fresh.apps["shop"].state.cart_coupon = None
    assert world.apps["shop"].shared_state() is None
    assert world.state_hash() == fresh.state_hash()
    # a checkpoint of a parked app is its parked state; rolling back returns to it
    world.park()
    mark = world.checkpoint()
    world.apps["system"].state.settings["theme"] = "light"
    world.rollback(mark)
    assert world.state_hash() == fresh.state_hash()


def test_a_write_in_a_parked_episode_reaches_neither_another_episode_nor_the_template() -> None:
    pristine = World(42, ["system", "shop"]).state_hash()
    made = template(42, ["system", "shop"])
    first = Episode.create(42, ["system", "shop"], "none")
    second = Episode.create(42, ["system", "shop"], "none")
    item = first.call("shop_search_items", {"query": ""}).payload["items"][0]["item_id"]
    assert not first.call("shop_add_to_cart", {"item_id": item, "quantity": 1}).is_error
    second.call("shop_list_orders", {})
    written = first.world.state_hash()
    calls = first.calls()
    assert first.park() and second.park()
    assert first.world.state_hash() == written and first.calls() == calls
    assert second.world.state_hash() == pristine == World.from_template(42, ["system", "shop"]).state_hash()
    assert made.snapshot == World(42, ["system", "shop"]).snapshot()
    # unparked by its next call, the episode goes on from its own state
    assert not first.call("shop_add_to_cart", {"item_id": item, "quantity": 1}).is_error
    assert first.world.apps["shop"].state.cart[item].quantity == 2
    assert second.world.state_hash() == pristine
    assert [c["step"] for c in first.calls()] == [1, 2, 3]


def test_a_call_running_keeps_its_episode_from_being_parked() -> None:
    ep = Episode.create(5, ["system"], "none")
    ep.call("system_get_wallet_balance", {})
    with ep.lock:  # as while a tool call runs on another thread
        assert ep.park() is False
    assert ep.park() is True


def test_a_parked_call_log_is_counted_without_being_read_back() -> None:
    """``call_count`` (the size the control API's reward route chooses its thread by) is the
    log's length, parked or not, and reading it leaves a parked log parked."""
    ep = Episode.create(5, ["system"], "none")
    for _ in range(3):
        ep.call("system_get_wallet_balance", {})
    assert ep.park() is True and ep.invoker._calls is None
    assert ep.invoker.call_count == 3 and ep.invoker._calls is None
    assert len(ep.invoker.calls) == 3 == ep.invoker.call_count


def _tracked_per_episode(hot: int, monkeypatch, n: int = 20) -> float:
    """Objects the garbage collector tracks per live episode of ``(42, all)`` after two calls
    (a read and a write to ``shop``), with ``hot`` episodes kept hot; what existed before (the
    template, the catalogs, the imports) frozen out of the count as a serving process does."""
    monkeypatch.setattr(episode_mod, "HOT_EPISODES", hot)
    warm = Episode.create(42, "all", "none")
    warm.call("shop_search_items", {"query": ""})
    del warm
    gc.collect()
    gc.freeze()
    try:
        base = len(gc.get_objects())
        eps = [Episode.create(42, "all", "none") for _ in range(n)]
        for ep in eps:
            item = ep.call("shop_search_items", {"query": ""}).payload["items"][0]["item_id"]
            ep.call("shop_add_to_cart", {"item_id": item, "quantity": 1})
        gc.collect()
        per = (len(gc.get_objects()) - base) / n
        parked = sum(ep.world.apps["shop"].shared_state() is not None for ep in eps)
        assert parked == max(0, n - hot)
        return per
    finally:
        gc.unfreeze()


def test_parked_episodes_hold_few_objects_the_collector_tracks(monkeypatch) -> None:
    """Episodes beyond the last ``HOT_EPISODES`` called are parked: each then holds a small
    header the collector tracks (none of its changed states' models, records or results),
    where an episode kept hot holds hundreds (the copied ``shop`` state: a model, its fields
    set and containers per item and review)."""
    parked = _tracked_per_episode(0, monkeypatch)
    kept = _tracked_per_episode(10_000, monkeypatch)
    assert parked < 40 < 300 < kept, (parked, kept)
