"""The state diff by item: every collection of every app diffed as added, removed and changed
items with field-level changes, each against gold, every cell bounded; and the viewer of a real
run showing the one added event instead of the whole calendar (issue 37: ~5,700 characters of
escaped JSON per cell)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from mcpgym.evaluation.report.item_diff import MAX_CELL_CHARS, choose_key, collection_diff
from mcpgym.evaluation.report.viewer import state_diff, state_diff_by_item
from mcpgym.kernel.app import app_names
from mcpgym.kernel.world import World


def _collections(state: Any, prefix: str = "") -> dict[str, list[Any]]:
    if isinstance(state, dict):
        out: dict[str, list[Any]] = {}
        for k, v in state.items():
            out.update(_collections(v, f"{prefix}/{k}"))
        return out
    return {prefix: list(state)} if isinstance(state, (list, tuple)) else {}


def _edit(item: dict[str, Any], key: str | None) -> tuple[dict[str, Any], str]:
    """The item with one field (not its key) changed, and that field's name."""
    name = next(k for k in sorted(item) if k != key)
    changed = dict(item)
    changed[name] = f"{item[name]!r} edited"
    return changed, name


def test_every_collection_of_every_app_is_diffed_by_item() -> None:
    state = World(7, app_names()).comparable()
    found = {p: items for p, items in _collections(state).items() if len(items) >= 3}
    assert {"/office/events", "/office/messages", "/office/files", "/flights/passengers"} <= set(found)
    for path, items in found.items():
        if not all(isinstance(i, dict) and len(i) >= 2 for i in items):
            continue
        key = choose_key(items)
        edited, kept = items[1], items[2:]  # items[0] is removed
        changed, field_name = _edit(edited, key)
        new = dict(kept[0])
        if key is not None:
            new[key] = f"{new[key]}-new" if isinstance(new[key], str) else new[key] + 10**6
        else:
            new, _ = _edit(new, None)
        final = [changed, *kept, new]
        gold = [changed, *copy.deepcopy(kept)]
        diff = collection_diff(path, items, final, gold)
        got = sorted((r.change, r.verdict) for r in diff.rows)
        if key is not None:
            assert got == [("added", "not in gold"), ("changed", "as gold"), ("removed", "as gold")], (path, got)
            [row] = [r for r in diff.rows if r.change == "changed"]
            assert row.key == str(edited[key]) and [f.field for f in row.fields] == [field_name], path
            assert row.fields[0].final == row.fields[0].gold != row.fields[0].initial
        else:  # by content: the edit is one removal and one addition, both as gold
            assert got == [
                ("added", "as gold"),
                ("added", "not in gold"),
                ("removed", "as gold"),
                ("removed", "as gold"),
            ]
        # a gold that also made the addition: every row as gold; one that did not remove: missed
        assert {r.verdict for r in collection_diff(path, items, final, final).rows} == {"as gold"}, path
        missed = collection_diff(path, items, items, gold).rows
        assert missed and {r.verdict for r in missed} == {"missed"}, path
        for r in diff.rows:
            cells = [r.key, r.summary] + [c for f in r.fields for c in (f.initial, f.final, f.gold)]
            assert all(len(c) <= MAX_CELL_CHARS for c in cells), path


def test_a_huge_item_stays_bounded() -> None:
    big = [{"event_id": "e1", "body": "x" * 50_000}]
    diff = collection_diff("/office/events", [], big, big)
    [row] = diff.rows
    assert (row.change, row.key, row.verdict) == ("added", "e1", "as gold") and len(row.summary) <= MAX_CELL_CHARS


def test_the_viewer_of_a_real_run_shows_the_added_event(
    http_server: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from mcpgym.evaluation.run.run_dir import load_run
    from tests.support.cli_runs import cli_at_width

    url, token = http_server
    run = tmp_path / "run"
    args = ["run", "--task", "cross.flight_into_calendar", "--agent", "careful", "--trials", "1", "--faults", "none"]
    code, _, err = cli_at_width(
        [*args, "--server", url, "--token", token, "-q", "--out", str(run)], 120, monkeypatch, capsys
    )
    assert code == 0, err
    [traj] = load_run(run)
    old = state_diff(traj, traj.scores)
    assert old and max(len(c) for row in old for c in row) > 2000  # the whole calendar in one cell
    rows, collections = state_diff_by_item(traj, traj.scores)
    by_path = {c.path: c for c in collections}
    events = by_path["/office/events"]
    assert [(r.change, r.verdict) for r in events.rows] == [("added", "as gold")]
    assert [(r.change, r.verdict) for r in by_path["/flights/bookings"].rows] == [("added", "as gold")]
    assert [(r.change, r.verdict) for r in by_path["/system/transactions"].rows] == [("added", "as gold")]
    assert all(len(c) <= MAX_CELL_CHARS for row in rows for c in row)
    assert ("/system/wallet/balance_cents", "recalled") in {(r[0], r[4]) for r in rows}
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "<code>/office/events</code>" in html and "Against gold" in html
