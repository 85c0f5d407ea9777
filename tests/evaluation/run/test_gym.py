"""The in-process episode API (mcpgym.evaluation.run.gym) against the MCP path: the same task,
world seed and fault seed give the same trajectory steps, final state and scores as an
episode `mcpgym run` plays over streamable HTTP; plus stepping by hand, the call budget and
malformed calls."""

from __future__ import annotations

import anyio
import pytest

from mcpgym.evaluation.agents import SCRIPTED_AGENTS, CallLimitReached, make_agent
from mcpgym.evaluation.records.scores import EpisodeScores
from mcpgym.evaluation.run.gym import EpisodeFinished, GymEpisode
from mcpgym.evaluation.run.run_dir import load_run
from mcpgym.evaluation.run.runner import AgentEntry, RunConfig, run_evaluation
from mcpgym.evaluation.tasks import fault_seed_for, get_task, load_tasks

TASKS = [t.id for t in load_tasks("smoke")[:2]]
TRIALS = 1
STEP_KEYS = ("tool", "arguments", "is_error", "error_code", "fault", "call_index", "time", "result")


def _steps(traj) -> list[dict]:  # noqa: ANN001
    return [{k: getattr(s, k, None) for k in STEP_KEYS} | {"step": s.step} for s in traj.steps]


def _scores(traj) -> dict:  # noqa: ANN001
    assert traj.scores is not None
    return traj.scores.model_dump(mode="json", exclude={"episode_id"})


@pytest.fixture(scope="module")
def mcp_run(http_server: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The scripted agents x TASKS x TRIALS over MCP (harsh faults, so recoveries happen)."""
    url, token = http_server
    out = tmp_path_factory.mktemp("gym") / "mcp"
    agents = [AgentEntry(s, make_agent(s)) for s in SCRIPTED_AGENTS]
    settings = RunConfig(out=out, trials=TRIALS, faults="harsh", server_url=url, token=token, progress=False)
    result = run_evaluation([get_task(t) for t in TASKS], agents, settings)
    assert not result.failures and result.ran == len(agents) * len(TASKS) * TRIALS
    return {(t.agent, t.task_id, t.trial): t for t in load_run(out)}


def test_gym_episodes_match_the_mcp_path(mcp_run: dict) -> None:
    faults_seen = 0
    for (agent, task_id, trial), over_mcp in sorted(mcp_run.items()):
        ep = GymEpisode.create(task_id, trial=trial, faults="harsh", agent_name=agent)
        local = anyio.run(ep.run_agent, make_agent(agent))
        assert local.fault_seed == over_mcp.fault_seed == fault_seed_for(get_task(task_id), trial)
        assert local.apps == over_mcp.apps and local.fault_profile == over_mcp.fault_profile == "harsh"
        assert _steps(local) == _steps(over_mcp), (agent, task_id, trial)
        assert local.ledger == over_mcp.ledger
        assert local.final_snapshot == over_mcp.final_snapshot
        assert local.initial_snapshot == over_mcp.initial_snapshot
        assert local.gold_snapshot == over_mcp.gold_snapshot
        assert (local.status, local.final_message, local.invalid_calls) == (
            over_mcp.status,
            over_mcp.final_message,
            over_mcp.invalid_calls,
        )
        assert _scores(local) == _scores(over_mcp), (agent, task_id, trial)
        assert ep.scores == local.scores
        faults_seen += len(local.ledger)
    assert faults_seen > 0, "the comparison should cover episodes with injected faults"
    assert any(t.scores.success for t in mcp_run.values())


def test_step_by_step_reward_and_budget() -> None:
    task = get_task(TASKS[0])
    ep = GymEpisode.create(task, trial=0, faults="none")
    from mcpgym.kernel.app import get_app
    from mcpgym.kernel.world import normalise_apps

    assert [t.name for t in ep.tools] == [n for a in normalise_apps(task.apps) for n in get_app(a).tools]
    # A malformed call is refused locally and counted, as the MCP runner does.
    bad = ep.step("shop_view_cart", ["not", "an", "object"])  # type: ignore[arg-type]
    assert bad.is_error and bad.payload["error"]["code"] == "invalid_argument"
    unknown = ep.step("no_such_tool", {})
    assert unknown.is_error and unknown.payload["error"]["code"] == "not_found"
    before = ep.scores
    assert before.tool_calls == 1 and before.invalid_calls == 2
    assert ep.trajectory().scores is None
    for _ in range(task.max_calls - 1):
        ep.step("no_such_tool", {})
    with pytest.raises(CallLimitReached):
        ep.step("no_such_tool", {})
    reward = ep.finish("I could not do it.")
    traj = ep.trajectory()
    assert traj.status == "limit" and traj.stop_reason == f"call budget of {task.max_calls} spent"
    assert len(traj.steps) == task.max_calls and reward.success is False
    assert reward == traj.scores
    with pytest.raises(EpisodeFinished):
        ep.step("no_such_tool", {})
    with pytest.raises(EpisodeFinished):
        ep.finish("again")


def test_careful_agent_solves_a_task_in_process_without_faults() -> None:
    ep = GymEpisode.create(TASKS[0], faults="none", agent_name="careful")
    traj = anyio.run(ep.run_agent, make_agent("careful"))
    assert traj.status == "completed" and traj.scores.success is True
    assert traj.final_snapshot != traj.initial_snapshot or get_task(TASKS[0]).feasible is False


def test_bad_inputs_are_clear() -> None:
    with pytest.raises(KeyError):
        GymEpisode.create("no.such_task")
    with pytest.raises(ValueError):
        GymEpisode.create(TASKS[0], tool_exposure="sometimes")


def test_a_shared_gold_state_scores_the_same_and_is_validated_once(monkeypatch) -> None:
    from mcpgym.evaluation.scoring import judge as judge_mod
    from mcpgym.evaluation.tasks import gold_snapshot

    task = load_tasks("smoke")[0]
    own = [anyio.run(GymEpisode.create(task, trial=t).run_agent, make_agent("careful")) for t in range(2)]
    computed: list[str] = []
    real = judge_mod.comparable
    monkeypatch.setattr(judge_mod, "comparable", lambda s: computed.append(type(s).__name__) or real(s))
    gold = gold_snapshot(task)
    shared = []
    for t in range(2):
        ep = GymEpisode.create(task, trial=t, gold=gold)
        shared.append(anyio.run(ep.run_agent, make_agent("careful")))
        assert ep.harness_seconds["create"] > 0 and ep.harness_seconds["judge"] > 0

    def drop_id(scores: EpisodeScores | None) -> dict:
        return scores.model_dump(exclude={"episode_id"}) if scores else {}  # a random id per episode

    assert [drop_id(s.scores) for s in shared] == [drop_id(o.scores) for o in own]
    # the initial and gold views were kept from the first two episodes (by content, although
    # each of those had its own gold copy): no app state is wholly recomputed again
    assert computed == []


def test_public_api_done_reward_observation_instruction() -> None:
    """``from mcpgym.evaluation import GymEpisode``: the instruction is the first observation, a
    step's result the next one (ASCII JSON); done and reward follow the finish; scores are typed."""
    import json

    from mcpgym.evaluation import EpisodeScores as PublicEpisodeScores
    from mcpgym.evaluation import GymEpisode as Public

    assert Public is GymEpisode and PublicEpisodeScores is EpisodeScores
    ep = Public.create("flights.book_cheapest_berlin_paris", trial=0, faults="none")
    assert ep.observation == ep.instruction == get_task("flights.book_cheapest_berlin_paris").instruction
    assert (ep.done, ep.reward) == (False, 0.0)
    obs = ep.step(
        "flights_search_flights_by_city", {"origin_city": "Berlin", "destination_city": "Paris", "date": "2026-06-04"}
    )
    assert not obs.is_error and obs.payload["count"] > 0  # the README's search reaches real flights
    seen = json.loads(ep.observation)
    assert seen == {"is_error": False, "result": obs.payload} and ep.observation.isascii()
    scores = ep.finish("I only looked.")
    assert isinstance(ep.scores, EpisodeScores) and ep.scores == scores
    assert (ep.done, scores.success, ep.reward) == (True, False, 0.0)
    solved = Public.create("flights.book_cheapest_berlin_paris", faults="none")
    anyio.run(solved.run_agent, make_agent("careful"))
    assert (solved.done, solved.scores.success, solved.reward) == (True, True, 1.0)
