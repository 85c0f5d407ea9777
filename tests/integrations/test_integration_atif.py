"""ATIF (the real ``atif`` package's models): ``mcpgym export --format atif RUN_DIR`` writes
documents the models accept, ``mcpgym score --format atif`` reads them back to the same scores,
and a round trip keeps every step, call, error and message; a foreign ATIF document (no mcpgym
records) is read as a conversation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

atif_models = pytest.importorskip("atif", reason="needs the [atif] extra (pip install 'mcpgym[atif]')")

from mcpgym.evaluation.agents import SCRIPTED_AGENTS, make_agent  # noqa: E402
from mcpgym.evaluation.cli import app  # noqa: E402
from mcpgym.evaluation.formats import atif, score_files  # noqa: E402
from mcpgym.evaluation.records.trajectory import MessageStep, TokenUsage, ToolCallStep, Trajectory, UserTurnStep  # noqa: E402
from mcpgym.evaluation.run.run_dir import load_run  # noqa: E402
from mcpgym.evaluation.run.runner import AgentEntry, RunConfig, run_evaluation  # noqa: E402
from mcpgym.evaluation.tasks import get_task, load_tasks  # noqa: E402

runner = CliRunner()


@pytest.fixture(scope="module")
def run_dir(http_server: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripted agents on two smoke tasks, harsh faults (so errors and recoveries happen)."""
    url, token = http_server
    out = tmp_path_factory.mktemp("atif") / "run"
    agents = [AgentEntry(s, make_agent(s)) for s in SCRIPTED_AGENTS]
    tasks = [get_task(t.id) for t in load_tasks("smoke")[:2]]
    settings = RunConfig(out=out, trials=1, faults="harsh", server_url=url, token=token, progress=False)
    result = run_evaluation(tasks, agents, settings)
    assert not result.failures
    return out


def _scores(path: Path, fmt: str) -> dict[str, dict]:
    report = score_files([path], fmt)
    assert [p for p in report.problems if p.severity == "error"] == []
    return {e.scores.episode_id: e.scores.model_dump(mode="json") for e in report.episodes}


def test_export_validates_and_scores_as_the_run(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.atif.jsonl"
    res = runner.invoke(app, ["export", "--format", "atif", str(run_dir), "--out", str(out)])
    assert res.exit_code == 0, res.output
    lines = out.read_text(encoding="utf-8").splitlines()
    trajs = load_run(run_dir)
    assert len(lines) == len(trajs) == 6
    for line in lines:
        atif_models.Trajectory.model_validate_json(line)  # the ATIF package's own models accept it
    # Read back: every trajectory as it was, and the scores `mcpgym score` gives the run.
    loaded = atif.load(out)
    assert [e.trajectory for e in loaded.episodes] == trajs
    assert _scores(out, "atif") == _scores(run_dir, "mcpgym")
    assert _scores(out, "auto") == _scores(out, "atif")  # detected by its schema_version
    res = runner.invoke(app, ["score", "--format", "atif", str(out), "--json"])
    assert res.exit_code == 0 and len(json.loads(res.stdout)["episodes"]) == 6
    # An existing file is never overwritten.
    again = runner.invoke(app, ["export", "--format", "atif", str(run_dir), "--out", str(out)])
    assert again.exit_code == 2 and "exists" in again.output
    assert out.read_text(encoding="utf-8").splitlines() == lines


def _strip_extra(doc: dict) -> dict:
    """``doc`` as another harness writes ATIF: without mcpgym's ``extra`` records anywhere."""
    doc.pop("extra", None)
    for step in doc["steps"]:
        step.pop("extra", None)
        for tc in step.get("tool_calls") or []:
            tc.pop("extra", None)
        for r in (step.get("observation") or {}).get("results") or []:
            r.pop("extra", None)
    return doc


def test_a_false_success_survives_an_atif_without_our_records(run_dir: Path, tmp_path: Path) -> None:
    """newuser3 finding 5: the scripted ``overconfident`` agent's "... is on now." / "Done"
    after failed writes was a false success from the outcome, and none once the ATIF lacked
    mcpgym's ``extra`` (transcript basis: its claim named no write verb). Hand count: its
    only write tool failed at every call, and "... is on now." claims the resulting state, so
    the transcript rule names that write: a false success from the transcript too."""
    out = tmp_path / "run.atif.jsonl"
    assert runner.invoke(app, ["export", "--format", "atif", str(run_dir), "--out", str(out)]).exit_code == 0
    bare = tmp_path / "bare.atif.jsonl"
    bare.write_text(
        "".join(json.dumps(_strip_extra(json.loads(line))) + "\n" for line in out.read_text("utf-8").splitlines()),
        encoding="utf-8",
    )
    ours, theirs = _scores(out, "atif"), _scores(bare, "atif")
    assert len(ours) == len(theirs) == 6
    [dark] = [e for e, s in ours.items() if s["agent"] == "overconfident" and s["task_id"] == "system.dark_mode"]
    # the run: system_update_setting failed every time it was called, then "Dark mode is on now."
    assert ours[dark]["false_success"] is True and ours[dark]["writes"] == 0
    assert (theirs[dark]["false_success_basis"], theirs[dark]["false_success"]) == ("transcript", True)
    assert "system_update_setting" in theirs[dark]["false_success_reason"]
    # the careful agent tells the truth with and without the record
    for episode, s in ours.items():
        if s["agent"] == "careful":
            assert (s["false_success"], theirs[episode]["false_success"]) == (False, False)


def _llm_like() -> Trajectory:
    """A trajectory with every kind of step: model messages (reasoning, tokens), a malformed
    call, an injected fault, a success, a user turn and a final message."""
    return Trajectory(
        episode_id="ep-1",
        task_id="shop.buy_cheapest_mouse",
        agent="openai:some-model",
        trial=2,
        world_seed=3,
        fault_seed=99,
        fault_profile="default",
        apps=["system", "shop"],
        instruction="Buy the cheapest mouse.",
        steps=[
            MessageStep(
                turn=1,
                text="Let me search.",
                reasoning="search first",
                tool_calls=2,
                tokens=TokenUsage(input=10, output=5),
            ),
            ToolCallStep(
                step=1,
                tool="shop_search_products",
                arguments='{"query": ',
                raw_arguments='{"query": ',
                call_id="a",
                is_error=True,
                error_code="invalid_argument",
                result={"error": {"code": "invalid_argument", "message": "bad JSON"}},
                invalid=True,
            ),
            ToolCallStep(
                step=2,
                tool="shop_search_products",
                arguments={"query": "mouse"},
                call_id="b",
                is_error=True,
                error_code="transient",
                result={"error": {"code": "transient", "message": "try again", "retryable": True}},
                fault="transient",
            ),
            UserTurnStep(before_step=3, question="Which colour?", answer="Black", topic="colour"),
            ToolCallStep(
                step=3,
                tool="shop_search_products",
                arguments={"query": "black mouse"},
                call_id="c",
                result={"items": [{"id": "item-1", "price_cents": 999}]},
            ),
            MessageStep(turn=2, text="Found it: item-1 for 9.99.", tokens=TokenUsage(input=30, output=8)),
        ],
        final_message="Found it: item-1 for 9.99.",
        ledger=[{"step": 2, "tool": "shop_search_products", "kind": "transient", "call_index": 1}],
        status="completed",
        tokens=TokenUsage(input=40, output=13),
        invalid_calls=1,
        metadata={"extra_checks": []},
    )


def test_round_trip_keeps_every_step_call_error_and_message() -> None:
    traj = _llm_like()
    doc = atif.to_atif(traj)
    atif_models.Trajectory.model_validate(doc)
    kinds = [(s["source"], bool(s.get("tool_calls")), s.get("message")) for s in doc["steps"]]
    assert kinds == [
        ("user", False, "Buy the cheapest mouse."),
        ("agent", False, "Let me search."),
        ("agent", True, ""),
        ("agent", True, ""),
        ("user", False, "Black"),
        ("agent", True, ""),
        ("agent", False, "Found it: item-1 for 9.99."),
        ("agent", False, "Found it: item-1 for 9.99."),
    ]
    assert doc["steps"][2]["tool_calls"][0]["extra"] == {"raw_arguments": '{"query": '}
    assert doc["steps"][3]["observation"]["results"][0]["extra"] == {"is_error": True, "error_code": "transient"}
    assert doc["steps"][1]["metrics"] == {"prompt_tokens": 10, "completion_tokens": 5}
    back, warnings = atif.from_atif(json.loads(json.dumps(doc)))
    assert warnings == [] and back == traj


def test_a_foreign_document_reads_as_a_conversation() -> None:
    """Without our records (another harness's ATIF), the calls, their errors, the instruction and
    the final message still come through; faults are inferred."""
    doc = atif.to_atif(_llm_like())
    doc.pop("extra")
    for step in doc["steps"]:
        step.pop("extra", None)
    back, warnings = atif.from_atif(doc)
    assert warnings == []
    calls = [(s.tool, s.arguments, s.is_error, s.error_code, s.result) for s in back.steps]
    assert calls == [
        (
            "shop_search_products",
            '{"query": ',
            True,
            "invalid_argument",
            {"error": {"code": "invalid_argument", "message": "bad JSON"}},
        ),
        (
            "shop_search_products",
            {"query": "mouse"},
            True,
            "transient",
            {"error": {"code": "transient", "message": "try again", "retryable": True}},
        ),
        (
            "shop_search_products",
            {"query": "black mouse"},
            False,
            None,
            {"items": [{"id": "item-1", "price_cents": 999}]},
        ),
    ]
    assert (back.instruction, back.final_message, back.status) == (
        "Buy the cheapest mouse.",
        "Found it: item-1 for 9.99.",
        "completed",
    )
    assert back.ledger is None and back.steps[1].fault_inferred


def test_a_foreign_documents_parallel_calls_are_one_batch(tmp_path: Path) -> None:
    """An agent step of another harness with two ``tool_calls`` issued them together: the read
    among them verifies nothing of the write (docs/design.md §7, "Verification"; hand count:
    1 write, step 1, not verified)."""
    doc = {
        "schema_version": "ATIF-v1.4",
        "session_id": "s",
        "agent": {"name": "other", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "Say hi to c-002."},
            {
                "step_id": 2,
                "source": "agent",
                "message": "",
                "tool_calls": [
                    {
                        "tool_call_id": "a",
                        "function_name": "talk_send_message",
                        "arguments": {"contact_id": "c-002", "text": "hi"},
                    },
                    {"tool_call_id": "b", "function_name": "talk_get_chat", "arguments": {"contact_id": "c-002"}},
                ],
                "observation": {
                    "results": [
                        {"source_call_id": "a", "content": '{"message_id": "m-1"}'},
                        {"source_call_id": "b", "content": '{"messages": []}'},
                    ]
                },
            },
            {"step_id": 3, "source": "agent", "message": "Sent."},
        ],
    }
    back, warnings = atif.from_atif(doc)
    assert warnings == [] and [s.batch for s in back.steps] == [2, 2]
    path = tmp_path / "par.atif.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    [sc] = _scores(path, "atif").values()
    assert (sc["writes"], sc["verified_writes"], sc["verification_skips"]) == (1, 0, [1])


def test_a_document_the_models_refuse_is_a_problem_naming_the_field(tmp_path: Path) -> None:
    bad = atif.to_atif(_llm_like())
    bad["steps"][1]["step_id"] = 7
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([bad, atif.to_atif(_llm_like())]), encoding="utf-8")
    loaded = atif.load(path)
    assert len(loaded.episodes) == 1
    assert [p.message for p in loaded.problems] == [
        "not a valid ATIF trajectory: field (document): Value error, steps[1].step_id=7 is not sequential; expected 2."
    ]
