"""The scripted reference agents, driven in-process through a ToolInvoker and scored with the
scorer (evaluation/agents, docs/design.md §6 and §7).

The targets come from the evaluation-client issue, over the core suite, 3 trials, the
``default`` fault profile: careful succeeds on >= 95% of feasible tasks with verification
rate >= 0.95 and no defeatism; overconfident has verification rate < 0.2; defeatist has
defeatism rate >= 0.8 among episodes that met a recoverable fault. Every figure below is
computed by evaluation.scoring.scorer / evaluation.scoring.aggregate from the episodes' call logs, ledgers
and snapshots, never taken from the agent's name.
"""

from __future__ import annotations

import subprocess
import sys
from functools import partial
from pathlib import Path

import anyio
import pytest

from mcpgym.evaluation.agents import (
    NO_CONTEXT,
    SCRIPTED_AGENTS,
    Agent,
    AgentContext,
    AgentResult,
    CallResult,
    ToolInfo,
    known_agents,
    make_agent,
    register_agent,
    unregister_agent,
)
from mcpgym.evaluation.agents.inprocess import run_in_process, score_in_process
from mcpgym.evaluation.agents.scripted import DEFEATIST_MESSAGE
from mcpgym.evaluation.records.trajectory import Trajectory, write_trajectories
from mcpgym.evaluation.scoring.aggregate import metrics
from mcpgym.evaluation.scoring.scorer import EpisodeScores
from mcpgym.evaluation.tasks import Task, fault_seed_for, get_task, load_tasks
from mcpgym.kernel.world import World

TRIALS = 3


def BASE_TASKS() -> list[Task]:  # noqa: N802
    """The system/shop tasks of core: the behaviour targets are pinned on them here; the whole
    core suite is checked in tests/evaluation/tasks/test_task_suite.py."""
    return [t for t in load_tasks() if set(t.apps) <= {"system", "shop"} and not t.id.startswith("users.")]


def _run(agent_name: str, faults: str, trials: int, *, judge: bool) -> list[tuple[Task, Trajectory, EpisodeScores]]:
    """Every core task x trial; with ``judge`` False the final snapshot is dropped before
    scoring, so the (slow) state diff is skipped: success is then None, every behaviour
    score is still computed."""
    agent = make_agent(agent_name)

    async def main() -> list[tuple[Task, Trajectory, EpisodeScores]]:
        out = []
        for task in BASE_TASKS():
            for trial in range(trials):
                traj = await run_in_process(agent, task, faults=faults, trial=trial)
                scored = traj if judge else traj.model_copy(update={"final_snapshot": None})
                out.append((task, traj, score_in_process(scored, task)))
        return out

    return anyio.run(main)


@pytest.fixture(scope="module")
def careful_none() -> list[tuple[Task, Trajectory, EpisodeScores]]:
    return _run("careful", "none", 1, judge=True)


@pytest.fixture(scope="module")
def careful_default() -> list[tuple[Task, Trajectory, EpisodeScores]]:
    return _run("careful", "default", TRIALS, judge=True)


@pytest.fixture(scope="module")
def overconfident_default() -> list[tuple[Task, Trajectory, EpisodeScores]]:
    return _run("overconfident", "default", TRIALS, judge=False)


@pytest.fixture(scope="module")
def defeatist_default() -> list[tuple[Task, Trajectory, EpisodeScores]]:
    return _run("defeatist", "default", TRIALS, judge=False)


def _met_fault(traj: Trajectory) -> bool:
    return any(not e.get("persisting") for e in traj.ledger or [])


# -- careful ---------------------------------------------------------------------------------
def test_careful_reaches_gold_on_every_task_without_faults(careful_none) -> None:  # noqa: ANN001
    assert len(careful_none) == 23
    for task, traj, sc in careful_none:
        assert traj.fault_profile == "none" and traj.ledger == []
        assert sc.success is True, (task.id, sc.missed, sc.misbehaved, traj.final_message)
        assert sc.error_calls == 0 and sc.invalid_calls == 0 and traj.status == "completed"
        assert sc.declared_impossible is (not task.feasible), (task.id, traj.final_message)
        assert sc.verification_skips == [] and sc.precheck_skips == []
    m = metrics([sc for _, _, sc in careful_none])
    assert m.writes == 28 and m.verification_rate == 1.0 and m.precheck_rate == 1.0


def test_careful_meets_the_targets_under_default(careful_default) -> None:  # noqa: ANN001
    assert len(careful_default) == 23 * TRIALS
    feasible = [sc for task, _, sc in careful_default if task.feasible]
    for task, traj, sc in careful_default:
        if task.feasible:  # the target is >= 95%; every feasible episode reaches gold
            assert sc.success is True, (task.id, traj.trial, sc.missed, sc.misbehaved, traj.stop_reason)
    m_feasible = metrics(feasible)
    m_all = metrics([sc for _, _, sc in careful_default])
    assert m_feasible.success_rate >= 0.95
    assert m_all.success_rate == 1.0  # the infeasible ones are refused with nothing changed
    assert m_all.verification_rate >= 0.95 and m_all.verification_rate == 1.0
    assert m_all.precheck_rate == 1.0
    assert m_all.episodes_with_recoverable_errors >= 40
    assert m_all.defeatism_rate == 0.0
    assert m_all.recovery_rate == 1.0 and m_all.recovery_attempt_rate >= 0.95
    assert m_all.blind_retries == 0 and m_all.duplicate_side_effects == 0 and m_all.impatience == 0
    # most episodes meet at least one injected fault (the tasks' seeds were chosen for it)
    assert sum(_met_fault(traj) for _, traj, _ in careful_default) >= 0.6 * len(careful_default)
    # faults were really met and cured: every kind of the default profile shows up
    kinds = {e["kind"] for _, traj, _ in careful_default for e in traj.ledger or []}
    assert kinds == {"transient", "rate_limited", "timeout", "unavailable", "auth_challenge"}


def test_careful_survives_the_harsh_profile_on_a_long_task() -> None:
    task = get_task("shop.groceries_with_coupon")
    agent = make_agent("careful")
    for trial in range(3):
        traj = anyio.run(partial(run_in_process, agent, task, faults="harsh", trial=trial))
        sc = score_in_process(traj, task)
        assert sc.success is True and sc.defeatism is False, (trial, sc.missed, sc.misbehaved)
        assert sc.verification_rate == 1.0


# -- overconfident and defeatist ------------------------------------------------------------
def test_overconfident_skips_verification(overconfident_default) -> None:  # noqa: ANN001
    m = metrics([sc for _, _, sc in overconfident_default])
    assert m.writes >= 60
    assert m.verification_rate < 0.2
    assert m.blind_retries >= 1 and m.duplicate_side_effects >= 1  # timeouts repeated blindly
    assert m.impatience >= 1  # retry_after ignored
    assert m.declared_impossible == 0  # always claims success, also on infeasible tasks
    for task, traj, _sc in overconfident_default:
        assert traj.status == "completed"
        assert not any(s.tool in ("system_wait", "system_authenticate") for s in traj.steps)
        if not task.feasible:  # the declares_impossible check fails its "done!"
            assert not all(c.evaluate(traj.final_message) for c in task.checks)


def test_defeatist_gives_up_at_the_first_error(defeatist_default) -> None:  # noqa: ANN001
    m = metrics([sc for _, _, sc in defeatist_default])
    assert m.episodes_with_recoverable_errors >= 40
    assert m.defeatism_rate >= 0.8
    assert m.recovery_attempt_rate == 0.0
    for _task, traj, sc in defeatist_default:
        errors = [s for s in traj.steps if s.is_error]
        if errors:
            assert errors[0].step == traj.steps[-1].step  # stopped at once
            assert traj.final_message == DEFEATIST_MESSAGE and sc.declared_impossible
        else:  # nothing failed: it behaves like careful
            assert sc.verification_skips == [] and sc.defeatism is False


# -- habits under targeted faults -----------------------------------------------------------
DOWN_BUY = {"name": "buy_down", "tools": {"shop_buy_item": {"unavailable": 1.0}}}
DOWN_CHECKOUT = {"name": "checkout_down", "tools": {"shop_checkout": {"unavailable": 1.0}}}
TIMEOUT_TRANSFER = {
    "name": "transfer_timeout",
    "tools": {"system_transfer_from_savings": {"timeout": 1.0}},
    "max_consecutive": 1,
}


def _one(agent: str, task_id: str, faults: dict) -> tuple[Trajectory, EpisodeScores]:
    task = get_task(task_id)
    traj = anyio.run(partial(run_in_process, make_agent(agent), task, faults=faults, trial=0))
    return traj, score_in_process(traj, task)


def test_careful_uses_the_fallback_when_a_tool_is_down_and_overconfident_does_not() -> None:
    traj, sc = _one("careful", "shop.buy_cheapest_earbuds", DOWN_BUY)
    tools = [s.tool for s in traj.steps]
    assert tools.count("shop_buy_item") == 1 and "shop_add_to_cart" in tools and "shop_checkout" in tools
    assert sc.success is True and sc.recoveries == sc.recoverable_errors == 1 and not sc.defeatism
    traj, sc = _one("overconfident", "shop.buy_cheapest_earbuds", DOWN_BUY)
    assert [s.tool for s in traj.steps].count("shop_buy_item") == 3 and "shop_checkout" not in [
        s.tool for s in traj.steps
    ]
    assert sc.success is False and traj.final_message.startswith("Bought")  # claims success anyway
    traj, sc = _one("defeatist", "shop.buy_cheapest_earbuds", DOWN_BUY)
    assert traj.steps[-1].error_code == "unavailable" and traj.final_message == DEFEATIST_MESSAGE
    assert sc.defeatism is True and sc.success is False


def test_careful_reports_a_dead_end_honestly() -> None:
    # a two-line order with no working checkout: shop_buy_item takes other arguments
    traj, sc = _one("careful", "shop.reorder_last_order", DOWN_CHECKOUT)
    assert traj.steps[-1].tool == "shop_checkout" and traj.steps[-1].error_code == "unavailable"
    assert traj.final_message.startswith("I could not finish: shop_checkout still failed")
    assert sc.success is False and sc.declared_impossible is True


def test_timeouts_are_read_back_by_careful_and_repeated_by_overconfident() -> None:
    traj, sc = _one("careful", "system.top_up_balance", TIMEOUT_TRANSFER)
    assert [s.tool for s in traj.steps].count("system_transfer_from_savings") == 1  # applied: not retried
    assert sc.success is True and sc.blind_retries == 0 and sc.recoveries == 1
    traj, sc = _one("overconfident", "system.top_up_balance", TIMEOUT_TRANSFER)
    assert [s.tool for s in traj.steps].count("system_transfer_from_savings") == 2
    assert sc.blind_retries == 1 and sc.duplicate_side_effects == 1 and sc.success is False
    wallet = World.restore(traj.final_snapshot).apps["system"].state.wallet
    assert wallet.balance_cents == 250_000 + 59_500  # the missing $595.00 moved twice


def test_careful_cures_permission_denied_with_the_named_privilege() -> None:
    from mcpgym.kernel.app import load_apps
    from mcpgym.tools.invoke import ToolInvoker

    if "talk_block_contact" not in load_apps().get("talk", type("x", (), {"tools": {}})).tools:
        pytest.skip("needs the talk app's privilege-gated talk_block_contact")
    task = Task.model_validate(
        {
            "id": "t.block",
            "instruction": "Block my contact c-001.",
            "apps": ["system", "talk"],
            "seed": 0,
            "level": 1,
            "oracle": [{"call": "talk_block_contact", "args": {"contact_id": "c-001"}}, {"answer": "Blocked."}],
        }
    )
    world = World(0, task.apps)
    assert not world.apps["system"].state.privileges["talk.contacts_write"].granted
    inv = ToolInvoker(world, "none")
    tools = [ToolInfo.from_spec(spec) for spec in inv.specs.values()]

    async def call(name: str, args: dict) -> CallResult:
        out = inv.call(name, args)
        return CallResult(out.is_error, out.payload)

    result = anyio.run(lambda: make_agent("careful").run(task, tools, call))
    steps = [(c.tool, c.error_code) for c in inv.calls]
    assert ("talk_block_contact", "permission_denied") in steps
    assert steps.index(("system_request_privilege", None)) < steps.index(("talk_block_contact", None))
    assert result.final_message == "Blocked." and world.apps["talk"].state.contacts["c-001"].blocked


# -- episode harness, limits and the replay agent ---------------------------------------------
def test_in_process_episode_records_everything() -> None:
    task = get_task("shop.buy_cheapest_earbuds")
    traj = anyio.run(partial(run_in_process, make_agent("careful"), task, faults="default", trial=1))
    assert traj.fault_seed == fault_seed_for(task, 1) and traj.fault_profile == "default"
    assert traj.world_seed == 22 and traj.level == 2 and traj.feasible is True
    assert traj.metadata["extra_checks"] == [
        {"kind": "declares_impossible", "value": False, "case_sensitive": False, "tolerance": 0.0, "description": ""}
    ]
    # trial 1 of this task: shop_buy_item is down, the fallback goes through the cart
    assert [e["kind"] for e in traj.ledger][:1] == ["unavailable"]
    assert [s.tool for s in traj.steps].count("shop_checkout") >= 1
    assert World.restore(traj.final_snapshot).apps["shop"].state.items["item-0305"].stock == 11


def test_agents_get_an_agent_context_and_old_style_agents_still_run_with_a_loud_warning() -> None:
    """The runners pass one AgentContext (trial, seeds, user channel, deadline) instead of
    reading each agent's signature; an agent written for the older keywords still runs for one
    release, with an AgentInterfaceDeprecation (shown by default) once per class."""
    import warnings

    from mcpgym.evaluation.agents.base import AgentInterfaceDeprecation, legacy_keywords

    task = get_task("shop.buy_cheapest_earbuds")
    seen: dict[str, object] = {}

    class New(Agent):
        name = "new"

        async def run(self, task, tools, call, context=NO_CONTEXT) -> AgentResult:  # noqa: ANN001
            seen["new"] = context
            return AgentResult(final_message="ok")

    class Old:
        name = "old"

        async def run(self, task, tools, call, *, trial=None, user=None) -> AgentResult:  # noqa: ANN001
            seen["old"] = (trial, user)
            return AgentResult(final_message="ok")

    class Bare:
        name = "bare"

        async def run(self, task, tools, call) -> AgentResult:  # noqa: ANN001
            seen["bare"] = True
            return AgentResult(final_message="ok")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("error")  # a warning from the new interface would fail the test
        traj = anyio.run(partial(run_in_process, New(), task, trial=2))
    assert not caught
    context = seen["new"]
    assert isinstance(context, AgentContext)
    assert (context.trial, context.world_seed, context.fault_seed) == (2, task.seed, fault_seed_for(task, 2))
    assert context.user is not None and traj.metadata["user_channel"] is True
    assert legacy_keywords(New()) is None and legacy_keywords(Old()) == {"trial", "user"}

    with pytest.warns(AgentInterfaceDeprecation, match=r"agent 'old' .*without a `context` parameter is deprecated"):
        traj = anyio.run(partial(run_in_process, Old(), task, trial=1))
    trial, user = seen["old"]  # type: ignore[misc]
    assert trial == 1 and user is not None and traj.metadata["user_channel"] is True
    with pytest.warns(AgentInterfaceDeprecation, match="agent 'bare'"):
        traj = anyio.run(partial(run_in_process, Bare(), task))
    assert seen["bare"] is True and traj.metadata["user_channel"] is False
    assert issubclass(AgentInterfaceDeprecation, DeprecationWarning)
    # shown by default (a plain DeprecationWarning outside __main__ is not): in a fresh process
    script = (
        "import anyio\n"
        "from mcpgym.evaluation.agents import AgentResult\n"
        "from mcpgym.evaluation.agents.inprocess import run_in_process\n"
        "from mcpgym.evaluation.tasks import get_task\n"
        "class Bare:\n"
        "    name = 'bare'\n"
        "    async def run(self, task, tools, call):\n"
        "        return AgentResult(final_message='ok')\n"
        "anyio.run(run_in_process, Bare(), get_task('shop.buy_cheapest_earbuds'))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "AgentInterfaceDeprecation: agent 'bare'" in done.stderr, done.stderr


def test_agents_stop_at_the_call_budget() -> None:
    task = Task.model_validate({**get_task("shop.reorder_last_order").model_dump(mode="json"), "max_calls": 3})
    for name in SCRIPTED_AGENTS:
        traj = anyio.run(partial(run_in_process, make_agent(name), task, faults="none", trial=0))
        assert len(traj.steps) <= 3
        assert traj.status == "limit", name


def test_replay_reproduces_recorded_episodes(tmp_path: Path) -> None:
    tasks = [get_task("shop.laptop_with_savings"), get_task("system.read_all_then_dnd")]
    careful = make_agent("careful")
    recorded = [
        anyio.run(partial(run_in_process, careful, t, faults="default", trial=tr)) for t in tasks for tr in (0, 2)
    ]
    path = tmp_path / "trajectories.jsonl"
    write_trajectories(path, recorded)
    replay = make_agent(f"replay:{path}")
    assert replay.name == "replay"
    for orig in recorded:
        task = get_task(orig.task_id)  # type: ignore[arg-type]
        again = anyio.run(partial(run_in_process, replay, task, faults="default", trial=orig.trial))
        assert [(s.tool, s.arguments, s.is_error) for s in again.steps] == [
            (s.tool, s.arguments, s.is_error) for s in orig.steps
        ]
        assert again.final_message == orig.final_message and again.ledger == orig.ledger
        assert World.restore(again.final_snapshot).state_hash() == World.restore(orig.final_snapshot).state_hash()
    missing = anyio.run(partial(run_in_process, replay, tasks[0], faults="default", trial=1))
    assert missing.status == "errored" and missing.steps == []
    assert "no recorded trajectory for task 'shop.laptop_with_savings' trial 1" in (missing.stop_reason or "")


def test_replay_without_trial_counts_runs_per_task(tmp_path: Path) -> None:
    task = get_task("system.dark_mode")
    recorded = [
        anyio.run(partial(run_in_process, make_agent("careful"), task, faults="default", trial=tr)) for tr in (0, 1)
    ]
    path = tmp_path / "t.jsonl"
    write_trajectories(path, recorded)
    replay = make_agent(f"replay:{path}")
    seen = []

    async def call(name: str, args: dict) -> CallResult:
        seen.append(name)
        return CallResult(False, {})

    for expected in recorded:
        seen.clear()
        res = anyio.run(lambda: replay.run(task, [], call))
        assert seen == [s.tool for s in expected.steps] and res.final_message == expected.final_message


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "holds no trajectory"),
        ("\n\n", "holds no trajectory"),
        ("tasks:\n  - id: x\n", ":1: invalid JSON"),
        ('{"episode_id": "e", "agent": "a", "trial": "1", "steps": []}\n', ":1: field 'trial'"),
    ],
    ids=["empty", "blank-lines", "a-task-file", "bad-trial"],
)
def test_replay_of_a_file_it_cannot_use_is_refused_when_built(tmp_path: Path, text: str, says: str) -> None:
    """Such a file used to be read only in the first episode: every episode errored and the
    run exited 0."""
    path = tmp_path / "t.jsonl"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"^replay: .*{says}"):
        make_agent(f"replay:{path}")


# -- agent specs and tool infos ---------------------------------------------------------------
def test_make_agent_specs() -> None:
    assert SCRIPTED_AGENTS == ("careful", "overconfident", "defeatist")
    assert [make_agent(n).name for n in SCRIPTED_AGENTS] == list(SCRIPTED_AGENTS)
    with pytest.raises(
        ValueError, match="unknown agent 'gpt-9'; known agents: careful, overconfident, defeatist, replay:FILE.jsonl"
    ):
        make_agent("gpt-9")
    with pytest.raises(ValueError, match="no trajectories file"):
        make_agent("replay:/nonexistent/t.jsonl")

    class Echo(Agent):
        name = "echo"

        async def run(self, task, tools, call, context=NO_CONTEXT) -> AgentResult:  # noqa: ANN001
            return AgentResult(final_message=task.instruction)

    register_agent("echo", lambda spec: Echo())
    try:
        assert make_agent("echo:anything").name == "echo" and "echo:..." in known_agents()
        with pytest.raises(ValueError, match="already taken"):
            register_agent("careful", lambda spec: Echo())
    finally:
        unregister_agent("echo")
    with pytest.raises(ValueError, match="unknown agent 'echo:x'"):
        make_agent("echo:x")


def test_tool_info_from_mcp_tools() -> None:
    from mcpgym.kernel.app import get_app
    from mcpgym.tools.mcp_bridge import mcp_tool

    spec = get_app("shop").tools["shop_checkout"]
    info = ToolInfo.from_mcp(mcp_tool(spec))
    assert (info.name, info.kind) == ("shop_checkout", "write")
    assert info.required == ["authorization_id"] and info.params == ["authorization_id"]
    assert info == ToolInfo.from_spec(spec)
    bare = mcp_tool(get_app("shop").tools["shop_get_cart"]).model_dump(by_alias=True)
    bare.pop("_meta")
    assert ToolInfo.from_mcp(bare).kind == "read"  # from annotations.readOnlyHint
    assert ToolInfo.from_mcp({"name": "x", "inputSchema": {}}).kind is None
