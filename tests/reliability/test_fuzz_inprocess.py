"""In-process fuzzing of every registered app through ``mcpgym.server.episode.Episode.call``.

Hypothesis draws whole episodes: a world seed, a fault profile (none, default, harsh), whether
every privilege is granted first, and a sequence of calls (valid, mutated and hostile, see
:mod:`tests.support.hostile`). Every outcome must be a result or a tool error with a known
code, never an exception and never an internal error; the call log, the ledger and the
snapshot must stay strict JSON; the world must round-trip through its snapshot; the episode
must still answer afterwards. The run counts its calls and asserts at least 5 000.
"""

from __future__ import annotations

import functools
import time
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgym.kernel.app import app_names
from mcpgym.kernel.world import World
from mcpgym.server.episode import Episode
from mcpgym.tools.conformance.common import grant_all_privileges
from tests.support.hostile import (
    FUZZ_SETTINGS,
    FuzzTally,
    call_strategy,
    check_error_payload,
    known_values,
    materialize,
    safe_repr,
    scaled,
    strict_json,
)

EXAMPLES_PER_APP = 12
CALLS_PER_EXAMPLE = 53
MIN_CALLS = 5_000
SEEDS = (0, 1, 2)
PROFILES = ("none", "default", "harsh")


def _world_apps(app: str) -> list[str]:
    return ["system"] if app == "system" else ["system", app]


def check_outcome(episode: Episode, name: Any, arguments: Any, tally: FuzzTally) -> None:
    """Call ``name`` in ``episode`` and assert the outcome is well-formed (see module docstring)."""
    where = f"{safe_repr(name, 60)}({safe_repr(arguments)})"
    out = episode.call(name, materialize(arguments))
    record = out.record
    assert not record.internal, f"{where}: internal error {out.payload}"
    assert record.is_error == out.is_error
    strict_json(record.model_dump(mode="json"))
    if out.is_error:
        code = check_error_payload(out.payload, where)
        assert record.error_code == code
        tally.add(name, True, code)
        return
    spec = episode.invoker.specs[name]
    spec.output_model.model_validate(out.payload)
    strict_json(out.payload)
    tally.add(name, False, None)


def fuzz_app(app: str, tally: FuzzTally) -> None:
    """Run the hypothesis episodes for one app (adds to ``tally``)."""
    apps = _world_apps(app)
    specs = Episode.create(seed=0, apps=apps).invoker.specs
    focus = [name for name, spec in specs.items() if spec.app == app]
    # Ids differ between seeds: each seed gets call strategies built from its own world.
    batches = {
        seed: st.lists(
            call_strategy(specs, focus, known_values(World(seed, apps), app), wire=False),
            min_size=CALLS_PER_EXAMPLE,
            max_size=CALLS_PER_EXAMPLE,
        ).map(functools.partial(_with_seed, seed))
        for seed in SEEDS
    }

    @settings(max_examples=scaled(EXAMPLES_PER_APP), **FUZZ_SETTINGS)
    @given(
        seeded=st.sampled_from(SEEDS).flatmap(batches.__getitem__),
        faults=st.sampled_from(PROFILES),
        privileged=st.sampled_from([True, True, True, False]),
    )
    def episode_run(seeded: tuple[int, list[tuple[Any, Any]]], faults: str, privileged: bool) -> None:
        seed, batch = seeded
        episode = Episode.create(seed=seed, apps=apps, faults=faults, fault_seed=seed + 101)
        if privileged:
            grant_all_privileges(episode.invoker)
        before = len(episode.invoker.calls)
        for name, arguments in batch:
            check_outcome(episode, name, arguments, tally)
        assert len(episode.invoker.calls) == before + len(batch)
        strict_json(episode.calls())
        strict_json(episode.ledger())
        strict_json(episode.summary())
        snapshot = episode.world.snapshot()
        strict_json(snapshot)
        assert World.restore(snapshot).state_hash() == episode.world.state_hash()
        still = episode.call("system_get_time", {})  # exempt from faults: must always answer
        assert not still.is_error and still.payload["now"] == episode.world.clock.now

    episode_run()


def _with_seed(seed: int, batch: list[tuple[Any, Any]]) -> tuple[int, list[tuple[Any, Any]]]:
    return seed, batch


def test_fuzz_every_registered_app_in_process(figures: dict[str, str]) -> None:
    tally = FuzzTally()
    started = time.perf_counter()
    apps = app_names()
    for app in apps:
        fuzz_app(app, tally)
    elapsed = time.perf_counter() - started
    figures["in-process fuzz"] = (
        f"{tally.calls} calls over {len(apps)} apps in {elapsed:.1f} s; "
        f"{sum(tally.ok.values())} successes; errors by code {dict(sorted(tally.errors.items()))}"
    )
    assert tally.calls >= MIN_CALLS
    all_tools = {name for app in apps for name in Episode.create(seed=0, apps=_world_apps(app)).invoker.specs}
    never_called = sorted(all_tools - set(tally.called))
    assert not never_called, f"tools the fuzzer never called: {never_called}"
    # The fuzzer must reach the sandboxes, not only bounce off validation: a tenth of the calls
    # succeed, and at least a third of every app's tools succeeded at least once.
    assert sum(tally.ok.values()) >= tally.calls // 10
    assert {"invalid_argument", "not_found"} <= set(tally.errors)
    for app in apps:
        tools = [n for n in all_tools if n.startswith(app + "_")]
        succeeded = [n for n in tools if tally.ok[n]]
        assert len(succeeded) * 3 >= len(tools), (app, sorted(set(tools) - set(succeeded)))
