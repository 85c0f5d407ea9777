"""Episodes by spec (what a Ray worker receives): a planned job survives the JSON round trip,
and a spec a worker cannot rebuild fails with a clear HarnessFailure, not a crash."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from mcpgym.evaluation.agents import SCRIPTED_AGENTS, make_agent
from mcpgym.evaluation.run.config import RunConfig
from mcpgym.evaluation.run.episode_runner import HarnessFailure
from mcpgym.evaluation.run.episode_spec import EpisodeSpec, job_from_spec, spec_for
from mcpgym.evaluation.run.runner import AgentEntry, plan_jobs
from mcpgym.evaluation.tasks import fault_seed_for, get_task, load_tasks

OPTIONS = RunConfig(episode_timeout=60)


def _jobs(faults="default"):  # noqa: ANN001, ANN202
    tasks = [get_task(t.id) for t in load_tasks("smoke")[:2]]
    return plan_jobs(tasks, [AgentEntry(s, make_agent(s)) for s in SCRIPTED_AGENTS], 2, faults, fault_seed_for)


def test_jobs_round_trip_through_json() -> None:
    jobs = _jobs()
    assert len(jobs) == 2 * 2 * len(SCRIPTED_AGENTS)
    for job in jobs:
        wire = json.loads(json.dumps(spec_for(job).model_dump(mode="json")))
        back = job_from_spec(wire, OPTIONS)
        assert (back.agent.name, back.agent.spec, back.trial, back.fault_seed, back.faults, back.profile_name) == (
            job.agent.name,
            job.agent.spec,
            job.trial,
            job.fault_seed,
            job.faults,
            job.profile_name,
        )
        assert back.task == job.task and back.task is not job.task
        assert type(back.agent.agent) is type(job.agent.agent) and back.agent.agent is not job.agent.agent
        assert EpisodeSpec.model_validate(wire).key == (job.agent.name, job.task.id, job.trial, None)


def test_an_inline_fault_profile_travels_whole() -> None:
    from mcpgym.tools.faults import load_profile

    custom = load_profile("harsh").model_copy(update={"name": "custom"})
    job = _jobs(custom)[0]
    wire = spec_for(job).model_dump(mode="json")
    assert isinstance(wire["faults"], dict) and wire["faults"]["name"] == "custom"
    assert job_from_spec(wire, OPTIONS).faults == job.faults


def test_specs_a_worker_cannot_rebuild_fail_clearly() -> None:
    wire = spec_for(_jobs()[0]).model_dump(mode="json")
    with pytest.raises(HarnessFailure, match="cannot rebuild the episode on this worker: unknown agent 'nobody'"):
        job_from_spec({**wire, "agent": "nobody"}, OPTIONS)
    with pytest.raises(HarnessFailure, match="builds an agent named 'careful' on this worker, not 'other'"):
        job_from_spec({**wire, "agent": "careful", "agent_name": "other"}, OPTIONS)
    with pytest.raises(HarnessFailure, match="cannot rebuild"):
        job_from_spec({**wire, "task": {**wire["task"], "level": 9}}, OPTIONS)
    with pytest.raises(ValidationError):
        job_from_spec({**wire, "trial": -1}, OPTIONS)
    with pytest.raises(HarnessFailure, match="replay"):
        job_from_spec({**wire, "agent": "replay:/no/such/file.jsonl", "agent_name": "x"}, OPTIONS)
