"""Inspect AI (the real ``inspect-ai``): ``mcpgym_task`` evaluated by ``inspect_ai.eval`` with
Inspect's ``mockllm/model``, whose tool calls reach mcpgym episodes through Inspect's own MCP
client (streamable HTTP); the log's scores equal ``mcpgym score --format inspect`` of the same
log, its metrics equal our aggregates, epochs are trials, and a log without our record still
scores from its messages.

The mock model plays a fixed plan for the flights task, reading ids from the tool results and
retrying an error that says it is retryable (so both outcomes and recoveries occur). It states
its token usage: mockllm would otherwise count tokens with tiktoken, which downloads its
encoding at run time (no network here).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

pytest.importorskip("inspect_ai", reason="needs the [inspect] extra (pip install 'mcpgym[inspect]')")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from mcpgym.evaluation.cli import app  # noqa: E402
from mcpgym.evaluation.formats import inspect_log, score_files  # noqa: E402
from mcpgym.evaluation.scoring.aggregate import metrics  # noqa: E402
from mcpgym.evaluation.scoring.scorer import EpisodeScores  # noqa: E402
from mcpgym.evaluation.tasks import fault_seed_for, get_task  # noqa: E402
from mcpgym.integrations.inspect_task import RATES, mcpgym_task  # noqa: E402

TASK = "flights.book_cheapest_berlin_paris"
TRIALS = 3


def _last_result(messages: list[Any]) -> tuple[bool, dict[str, Any]]:
    last = messages[-1]
    if last.role != "tool":
        return False, {}
    try:
        data = json.loads(last.text or (last.error.message if last.error else "{}"))
    except ValueError:
        data = {}
    return last.error is not None, data if isinstance(data, dict) else {}


def policy(messages: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> ModelOutput:
    """The next call of the plan (retrying a retryable error), then the answer."""
    names = {t.name for t in tools}
    calls = [tc for m in messages if m.role == "assistant" for tc in (m.tool_calls or [])]
    failed, data = _last_result(messages) if calls else (False, {})

    def result_of(tool: str) -> Any:
        return next(
            (json.loads(m.text) for m in messages if m.role == "tool" and m.function == tool and not m.error), None
        )

    found = result_of("flights_find_cheapest_flight")
    listed = result_of("flights_search_flights_by_city")
    if found is None and listed is not None:  # the alternative's answer, in find_cheapest's shape
        offers = [
            (c["price_cents"], f)
            for f in listed["flights"]
            if f["bookable"]
            for c in f["classes"]
            if c["seat_class"] == "economy"
        ]
        price, flight = min(offers, key=lambda o: o[0])
        found = {"flight": flight, "price_cents": price}
    auth = result_of("system_authorize_payment")
    down = any(m.role == "tool" and m.error and '"unavailable"' in m.error.message for m in messages)
    if failed and data.get("error", {}).get("retryable") and len(calls) < 12:
        call = (calls[-1].function, calls[-1].arguments)
    elif found is None and down:
        args = {
            "origin_city": "Berlin",
            "destination_city": "Paris",
            "date": "2026-06-04",
            "seat_class": "economy",
            "passengers": 1,
        }
        call = ("flights_search_flights_by_city", args)
    elif found is None:
        args = {
            "origin": "Berlin",
            "destination": "Paris",
            "date_from": "2026-06-04",
            "seat_class": "economy",
            "passengers": 1,
        }
        call = ("flights_find_cheapest_flight", args)
    elif not any(c.function == "system_request_privilege" for c in calls):
        call = ("system_request_privilege", {"privilege": "flights.booking"})
    elif auth is None and not any(c.function == "system_authorize_payment" for c in calls[-1:]):
        call = ("system_authorize_payment", {"limit_cents": found["price_cents"], "purpose": "flight booking"})
    elif auth is not None and not any(c.function == "flights_book_flight" for c in calls):
        args = {
            "flight_id": found["flight"]["flight_id"],
            "seat_class": "economy",
            "passenger_ids": ["pax-000"],
            "authorization_id": auth["authorization"]["auth_id"],
        }
        call = ("flights_book_flight", args)
    else:
        call = None
    if call is not None and call[0] in names:
        out = ModelOutput.for_tool_call("mockllm/model", call[0], dict(call[1]))
    else:
        fare = f" for ${found['price_cents'] / 100:.2f}" if found else ""
        out = ModelOutput.from_content("mockllm/model", f"Booked the cheapest economy seat from Berlin to Paris{fare}.")
    out.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
    return out


@pytest.fixture(scope="module")
def log_path(http_server: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    url, token = http_server
    logs = tmp_path_factory.mktemp("inspect")
    task = mcpgym_task(suite="smoke", tasks=[TASK], faults="harsh", trials=TRIALS, server=url, token=token)
    [log] = inspect_eval(
        task, model=get_model("mockllm/model", custom_outputs=policy), log_dir=str(logs), display="none"
    )
    assert log.status == "success", log.error
    return Path(log.location)


def test_the_log_scores_equal_mcpgym_score_of_the_same_log(log_path: Path) -> None:
    log = read_eval_log(str(log_path))
    samples = log.samples or []
    assert sorted(s.epoch for s in samples) == list(range(1, TRIALS + 1))  # epochs are trials
    report = score_files([log_path], "inspect")
    assert [p for p in report.problems if p.severity == "error"] == []
    ours = {e.scores.episode_id: e.scores.model_dump(mode="json") for e in report.episodes}
    task = get_task(TASK)
    for sample in samples:
        score = sample.scores["mcpgym_scorer"]
        record = sample.store["mcpgym"]
        assert record["fault_seed"] == fault_seed_for(task, sample.epoch - 1)
        assert ours[score.metadata["episode_id"]] == score.metadata  # every score, outcome included
        assert score.value == (1.0 if score.metadata["success"] else 0.0)
        assert score.metadata["tool_calls"] == sum(
            len(m.tool_calls or []) for m in sample.messages if m.role == "assistant"
        )
    episodes = [EpisodeScores.model_validate(s.scores["mcpgym_scorer"].metadata) for s in samples]
    assert any(e.success for e in episodes), "the plan books the flight"
    assert sum(e.recoverable_errors for e in episodes) > 0, "harsh faults were met"
    # The metrics are our aggregates of the same episodes (NaN where a rate has no denominator).
    shown = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    want = metrics(episodes)
    assert set(shown) == set(RATES)
    for name in RATES:
        value = getattr(want, name)
        assert math.isnan(shown[name]) if value is None else shown[name] == pytest.approx(value), name
    # The command line, with the format sniffed from the .eval suffix.
    res = CliRunner().invoke(app, ["score", str(log_path), "--json"])
    assert res.exit_code == 0, res.output
    assert {e["scores"]["episode_id"]: e["scores"] for e in json.loads(res.stdout)["episodes"]} == ours


def test_a_log_without_our_record_scores_from_its_messages(log_path: Path) -> None:
    """An Inspect run against any MCP server: the calls, errors and answer come from the
    messages; faults are inferred; no outcome without world states."""
    log = read_eval_log(str(log_path))
    for sample in log.samples or []:
        full = sample.scores["mcpgym_scorer"].metadata
        bare = sample.model_copy(update={"store": {}})
        traj, warnings = inspect_log.sample_trajectory(bare, model="mockllm/model")
        assert warnings == [] and traj.ledger is None and traj.trial == sample.epoch - 1
        assert len(traj.steps) == full["tool_calls"]
        assert [s.is_error for s in traj.steps].count(True) == full["error_calls"]
        assert traj.final_message == sample.store["mcpgym"]["final_message"]


# -- every epoch counts; a hallucinated tool; the task by its registered name ------------------

PLAN = [
    ("no_such_tool", {"x": 1}),  # not offered: Inspect answers "Tool no_such_tool not found" itself
    ("system_update_setting", {"key": "dark_mode", "value": "on"}),
    ("system_update_setting", {"key": "dark_mode", "value": "on"}),
    ("system_get_settings", {}),
]

BY_NAME = """
import json, sys
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

PLAN = json.loads(sys.argv[3])

def policy(messages, tools, tool_choice, config):
    made = sum(len(m.tool_calls or []) for m in messages if m.role == "assistant")
    if made < len(PLAN):
        out = ModelOutput.for_tool_call("mockllm/model", PLAN[made][0], dict(PLAN[made][1]))
    else:
        out = ModelOutput.from_content("mockllm/model", "Dark mode is on.")
    out.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)
    return out

args = {"suite": "smoke", "tasks": "system.dark_mode", "faults": "harsh", "trials": 3,
        "server": sys.argv[1], "token": sys.argv[2]}
[log] = eval("mcpgym/mcpgym_task", task_args=args, model=get_model("mockllm/model", custom_outputs=policy),
             log_dir="logs", display="none")
assert log.status == "success", log.error
print(log.location)
"""
"""The fixed PLAN, one call per turn, then "Dark mode is on." (which it never is), with the
task named as Inspect's command line names it: ``mcpgym/mcpgym_task``, found through the
package's ``inspect_ai`` entry point. Run from a fresh directory: in the repository's root
Inspect takes the package for a local one (its ``mcpgym.egg-info``) and registers the task
without the ``mcpgym/`` prefix."""


@pytest.fixture(scope="module")
def hallucinated_log(http_server: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three epochs of ``system.dark_mode`` under harsh faults (:data:`BY_NAME`)."""
    url, token = http_server
    cwd = tmp_path_factory.mktemp("inspect-hallucinated")
    done = subprocess.run(
        [sys.executable, "-c", BY_NAME, url, token, json.dumps(PLAN)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return Path(done.stdout.strip().splitlines()[-1])


def test_live_scores_and_metrics_count_every_epoch_and_the_hallucinated_call(hallucinated_log: Path) -> None:
    """Hand count, per epoch, from the log's messages: 4 tool calls asked for; the first names
    a tool the episode does not offer and Inspect refuses it ("Tool no_such_tool not found"),
    so 3 reach the server (``tool_calls`` counts the calls that reached the server, as in
    ``mcpgym run``) and 1 is invalid. The server answers the writes (harsh faults, fault seeds
    of trials 0-2): epoch 1 two injected faults (``recoverable_errors`` 2), the second write
    being the retry of the first (1 attempt); epochs 2 and 3 one fault, retried (1 attempt), the
    retry answered ``invalid_argument`` "unknown setting" (invalid: 2 in all). Pooled over the
    three trials: 3 attempts / 4 recoverable errors = 0.75; epoch 1 alone would say 0.5."""
    log = read_eval_log(str(hallucinated_log))
    samples = sorted(log.samples or [], key=lambda s: s.epoch)
    assert [s.epoch for s in samples] == [1, 2, 3]
    live = [s.scores["mcpgym_scorer"].metadata for s in samples]
    for sample in samples:
        asked = [tc.function for m in sample.messages if m.role == "assistant" for tc in (m.tool_calls or [])]
        assert asked == [name for name, _ in PLAN]
        refused = [m for m in sample.messages if m.role == "tool" and m.error and m.error.type == "parsing"]
        assert [m.error.message for m in refused] == ["Tool no_such_tool not found"]
        assert len(sample.store["mcpgym"]["calls"]) == 3  # the server saw three calls
        codes = [
            json.loads(m.error.message)["error"]["code"] if m.error and m.error.type != "parsing" else None
            for m in sample.messages
            if m.role == "tool"
        ]
        ledger = sample.store["mcpgym"]["ledger"]
        assert codes[0] is None and codes[3] is None  # the refused call; get_settings succeeds
        if sample.epoch == 1:
            assert len(ledger) == 2 and [r["step"] for r in ledger] == [1, 2]
        else:
            assert len(ledger) == 1 and ledger[0]["step"] == 1 and codes[2] == "invalid_argument"
    assert [e["tool_calls"] for e in live] == [3, 3, 3]
    assert [e["invalid_calls"] for e in live] == [1, 2, 2]
    assert [e["recoverable_errors"] for e in live] == [2, 1, 1]
    assert [e["recovery_attempts"] for e in live] == [1, 1, 1]
    assert [e["false_success"] for e in live] == [True, True, True]
    shown = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert shown["recovery_attempt_rate"] == pytest.approx(3 / 4)
    assert shown["success_rate"] == 0.0 and shown["false_success_rate"] == 1.0
    # `mcpgym score --format inspect` of the same log: the same episodes, the same rates.
    res = CliRunner().invoke(app, ["score", "--format", "inspect", str(hallucinated_log), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert {e["scores"]["episode_id"]: e["scores"] for e in report["episodes"]} == {e["episode_id"]: e for e in live}
    pooled = report["agents"]["mockllm/model"]
    for name in RATES:
        assert math.isnan(shown[name]) if pooled[name] is None else shown[name] == pytest.approx(pooled[name]), name


def test_bad_task_arguments_are_refused_before_the_eval(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each names the argument; none waits for a sample to fail."""
    monkeypatch.delenv("MCPGYM_TOKEN", raising=False)
    from mcpgym.tools.faults import FaultProfileError

    one = {"suite": "smoke", "tasks": ["system.dark_mode"]}
    with pytest.raises(FaultProfileError, match="unknown fault profile 'nope'"):
        mcpgym_task(**one, faults="nope")
    with pytest.raises(ValueError, match="tool exposure mode 'bogus'"):
        mcpgym_task(**one, tool_exposure="bogus")
    with pytest.raises(ValueError, match=r"^k must be a whole number >= 1, got -1$"):
        mcpgym_task(**one, k=-1)
    with pytest.raises(ValueError, match=r"^trials must be a whole number >= 1, got '2'$"):
        mcpgym_task(**one, trials="2")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^message_limit must be a whole number >= 1, got 0$"):
        mcpgym_task(**one, message_limit=0)
    with pytest.raises(ValueError, match="tasks names no task"):
        mcpgym_task(suite="smoke", tasks=[])
    with pytest.raises(KeyError, match="not in suite 'smoke': nope.x"):
        mcpgym_task(suite="smoke", tasks="system.dark_mode,nope.x")
    # server= without a token (finding: "Illegal header value b'Bearer '" from inside the eval)
    with pytest.raises(ValueError, match=r"server= needs token= \(or \$MCPGYM_TOKEN\)"):
        mcpgym_task(**one, server="http://127.0.0.1:9")
    with pytest.raises(ValueError, match="server= needs token="):
        mcpgym_task(**one, server="http://127.0.0.1:9", token="  ")
    monkeypatch.setenv("MCPGYM_TOKEN", "from-the-environment")
    assert mcpgym_task(**one, server="http://127.0.0.1:9").name == "mcpgym_smoke"


def test_inspect_command_line_finds_the_task_and_refuses_a_bad_argument(tmp_path: Path) -> None:
    """Inspect's own ``inspect eval`` resolves ``mcpgym/mcpgym_task`` (the package's
    ``inspect_ai`` entry point) and calls it with ``-T``; a bad argument ends the command with
    the task's own message, one line and exit 2 (not Inspect's traceback), before any sample runs."""
    inspect_cli = Path(sys.executable).parent / "inspect"
    env = {k: v for k, v in os.environ.items() if k != "MCPGYM_TOKEN"}
    argv = [str(inspect_cli), "eval", "mcpgym/mcpgym_task", "-T", "tasks=system.dark_mode", "--model", "mockllm/model"]
    for extra, message in [
        (["-T", "faults=nope"], "unknown fault profile 'nope'"),
        (["-T", "server=http://127.0.0.1:9"], "server= needs token= (or $MCPGYM_TOKEN)"),
    ]:
        done = subprocess.run(
            [*argv, *extra, "--log-dir", str(tmp_path / "logs")],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 2, done.stdout[-1500:] + done.stderr[-1500:]
        assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr[-1500:]
        assert "not found" not in done.stderr  # the task was found
    assert not list((tmp_path / "logs").glob("*.eval")) if (tmp_path / "logs").exists() else True
