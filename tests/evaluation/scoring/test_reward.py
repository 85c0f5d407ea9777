"""The one reward (mcpgym.evaluation.scoring.reward): the ``outcome`` profile is the judge's
success, ``shaped`` adds its terms by the rule of docs/design.md ("Reward"), process rewards sit
at the steps that earned them, and a reward that cannot be computed is an error."""

from __future__ import annotations

import json

import anyio
import pytest

from mcpgym.evaluation.agents import make_agent
from mcpgym.evaluation.run.gym import GymEpisode
from mcpgym.evaluation.scoring.reward import (
    OUTCOME,
    SHAPED,
    ProcessKind,
    RewardProfile,
    RewardUnavailable,
    episode_reward,
    load_profile,
)

TASK = "flights.book_cheapest_berlin_paris"


def _played(agent: str, *, faults: str = "default", fault_seed: int = 5) -> GymEpisode:
    ep = GymEpisode.create(TASK, faults=faults, fault_seed=fault_seed, agent_name=agent)
    anyio.run(ep.run_agent, make_agent(agent))
    return ep


def test_outcome_profile_is_the_judges_success() -> None:
    good, idle = _played("careful"), GymEpisode.create(TASK, fault_seed=5)
    idle.finish("I did nothing.")
    for ep in (good, idle):
        breakdown = episode_reward(ep.trajectory(), "outcome")
        assert breakdown.total == ep.reward == (1.0 if ep.scores.success else 0.0)
        assert [t.name for t in breakdown.terms] == ["outcome"] and breakdown.process == []
    assert episode_reward(good.trajectory()).total == 1.0  # None is `outcome`


def test_shaped_follows_the_rule_term_by_term() -> None:
    ep = _played("careful", faults="harsh", fault_seed=7)
    s = ep.scores
    b = episode_reward(ep.trajectory(), SHAPED)
    terms = {t.name: t for t in b.terms}
    expected = 1.0 * (1.0 if s.success else 0.0)
    if s.writes:
        assert terms["verification"].value == s.verified_writes / s.writes
        expected += 0.1 * s.verified_writes / s.writes
    else:
        assert not terms["verification"].applicable and terms["verification"].contribution == 0.0
    if s.recoverable_errors:
        expected += 0.1 * s.recoveries / s.recoverable_errors
    expected -= 0.2 if s.false_success else 0.0
    expected -= 0.05 * s.blind_retries
    expected += sum(p.value for p in b.process)
    assert b.total == pytest.approx(expected, abs=1e-9)
    assert b.total == pytest.approx(sum(b.components().values()), abs=1e-9)
    assert b.profile == SHAPED  # the rollout metadata records the weights
    # docs/design.md's worked example: success, 1/1 writes verified, 4/4 faults recovered
    assert b.total == pytest.approx(1.0 + 0.1 + 0.1 + 0.02 * (1 + 4))


def test_process_rewards_sit_at_the_steps_that_earned_them() -> None:
    ep = _played("careful", faults="harsh", fault_seed=7)
    traj, s = ep.trajectory(), ep.scores
    b = episode_reward(traj, RewardProfile(name="p", process_verified_write=1.0, process_recovered_fault=0.5))
    verified = [p.step for p in b.process if p.kind is ProcessKind.VERIFIED_WRITE]
    recovered = [p.step for p in b.process if p.kind is ProcessKind.RECOVERED_FAULT]
    assert len(verified) == s.verified_writes and not set(verified) & set(s.verification_skips)
    assert verified, "the careful agent reads back its booking"
    assert len(recovered) == 4, "harsh faults at seed 7: four injected faults, each recovered"
    want = sorted(
        e.recovered_step for e in s.recoverable_error_detail if e.fault and not e.inferred and e.recovered_step
    )
    assert sorted(recovered) == want
    steps = {st.step for st in traj.steps}
    assert {p.step for p in b.process} <= steps
    assert b.total == pytest.approx(s.success + len(verified) + 0.5 * len(recovered))


def test_recall_outcome_reads_the_gold_changes() -> None:
    ep = GymEpisode.create(TASK, fault_seed=5)
    ep.finish("nothing")
    b = episode_reward(ep.trajectory(), RewardProfile(name="r", outcome="recall"))
    s = ep.scores
    assert s.total and b.terms[0].value == (s.recall or 0) / s.total
    assert b.terms[0].basis.startswith("recall ")


def test_unscored_or_undecided_is_an_error_and_bad_profiles_are_refused(tmp_path) -> None:
    ep = GymEpisode.create(TASK, fault_seed=5)
    with pytest.raises(RewardUnavailable, match="not scored"):
        episode_reward(ep.trajectory())
    ep.finish("x")
    traj = ep.trajectory().model_copy(deep=True)
    assert traj.scores is not None
    traj.scores.success, traj.scores.outcome_unavailable = None, "no gold state"
    with pytest.raises(RewardUnavailable, match="no gold state"):
        episode_reward(traj)
    with pytest.raises(ValueError, match="unknown reward profile"):
        load_profile("shapd")
    with pytest.raises(ValueError):
        RewardProfile(name="neg", false_success=-1.0)
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"name": "mine", "verification": 0.5}))
    assert load_profile(path).verification == 0.5 and load_profile(None) is OUTCOME
