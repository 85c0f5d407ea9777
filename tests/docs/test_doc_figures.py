"""Figures and claims of README.md and docs/ that can be computed are computed here.

Each test quotes the sentence it checks, so that a change of the figure fails here first (the
README's tool counts are in tests/docs/test_doc_commands.py; measured figures of agents are
asserted by the tests the docs name, e.g. tests/evaluation/agents/test_agents.py).
"""

from __future__ import annotations

import json
import re
import tarfile

from tests.conftest import ROOT

TASKS_MD = (ROOT / "docs" / "tasks.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
DATA = ROOT / "evaluation" / "tasks" / "data"


def _say(text: str, pattern: str) -> tuple[str, ...]:
    """The groups of ``pattern`` in ``text`` (spaces in the pattern match any white space);
    fails when the documents no longer say it."""
    m = re.search(pattern.replace(" ", r"\s+"), text)
    assert m, f"the documents no longer say {pattern!r}"
    return m.groups()


def _int(s: str) -> int:
    return int(s.replace(",", ""))


def test_tasks_md_counts_of_the_suites() -> None:
    from mcpgym.evaluation.tasks import load_tasks

    core, smoke, full = load_tasks("core"), load_tasks("smoke"), load_tasks("full")
    n_core, n_smoke, n_apps = _say(
        TASKS_MD, r"every hand-written task \((\d+)\); \"smoke\": (\d+) of them over (\d+) apps"
    )
    assert (_int(n_core), _int(n_smoke), _int(n_apps)) == (
        len(core),
        len(smoke),
        len({a for t in smoke for a in t.apps}),
    )
    templates = [t for t in full if t.id.startswith("tmpl.")]
    n_tmpl, n_infeasible = _say(TASKS_MD, r"([\d,]+) instances \((\d+) of them infeasible\)")
    assert (_int(n_tmpl), _int(n_infeasible)) == (len(templates), sum(not t.feasible for t in templates))
    assert len(full) == len(core) + len(templates)


def test_tasks_md_counts_of_the_travel_files() -> None:
    from mcpgym.evaluation.tasks import load_file

    flights, stocks, cross = (load_file(DATA / f) for f in ("flights.yaml", "stocks.yaml", "cross_travel.yaml"))
    said = _say(TASKS_MD, r"`flights.yaml` \((\d+)\), `stocks.yaml` \((\d+)\) and `cross_travel.yaml` \((\d+) tasks")
    assert tuple(map(_int, said)) == (len(flights), len(stocks), len(cross))
    (infeasible,) = _say(TASKS_MD, r"and (\d+) infeasible requests")
    assert _int(infeasible) == sum(not t.feasible for t in [*flights, *stocks, *cross])
    (episodes,) = _say(TASKS_MD, r"3 trials \((\d+) episodes per agent\)")
    assert _int(episodes) == 3 * (len(flights) + len(stocks) + len(cross))


def test_tasks_md_the_measured_base_tasks() -> None:
    from tests.evaluation.agents.test_agents import BASE_TASKS

    base = BASE_TASKS()
    n, feasible, infeasible = _say(
        TASKS_MD, r"the (\d+) system and shop tasks of the core suite \((\d+) feasible, (\d+) infeasible"
    )
    assert (_int(n), _int(feasible), _int(infeasible)) == (
        len(base),
        sum(t.feasible for t in base),
        sum(not t.feasible for t in base),
    )
    (episodes,) = _say(TASKS_MD, r"of the (\d+) careful episodes under `default`")
    assert _int(episodes) == 3 * len(base)


def test_readme_trajectory_lines_point_into_snapshots() -> None:
    """README: "Each line refers to its initial and gold world snapshots (stored once per
    distinct state in `snapshots/`, zstd) and carries its final state as a diff"."""
    _say(
        README,
        r"Each line refers to its initial and gold world snapshots \(stored once per distinct state in `snapshots/`",
    )
    reference = ROOT / "tests" / "data" / "recorded_run" / "smoke-scripted.tar.gz"
    with tarfile.open(reference, "r:gz") as tar:
        member = tar.extractfile("trajectories.jsonl")
        assert member is not None
        lines = [json.loads(line) for line in member.read().decode("utf-8").splitlines()]
        names = set(tar.getnames())
    for t in lines:
        assert t["initial_snapshot"] is None and t["final_snapshot"] is None and t["gold_snapshot"] is None
        assert (
            re.fullmatch(r"snapshots/[0-9a-f]{20}\.json(?:\.zst)?", t["stored"]["initial"])
            and t["stored"]["initial"] in names
        )
        assert t["stored"]["gold"] in names and isinstance(t["stored"]["final_diff"], dict)


def test_readme_app_check_error_is_importable_from_mcpgym() -> None:
    """README: "`check_app(NotesApp)` from `mcpgym` raises `mcpgym.AppCheckError`"."""
    import mcpgym
    from mcpgym.tools.conformance import AppCheckError

    _say(README, r"raises `mcpgym.AppCheckError`")
    assert mcpgym.AppCheckError is AppCheckError and "AppCheckError" in mcpgym.__all__


def test_readme_call_tool_result_field_is_is_error() -> None:
    """README: tool errors come back "as a `CallToolResult` with `is_error=True` (`isError` on the wire)"."""
    from mcp.types import CallToolResult

    _say(README, r"`CallToolResult` with `is_error=True` \(`isError` on the wire\)")
    result = CallToolResult(content=[], is_error=True)
    assert result.model_dump(by_alias=True)["isError"] is True
