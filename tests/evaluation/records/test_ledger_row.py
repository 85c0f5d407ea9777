"""One ledger entry: the trajectory's ``LedgerRow`` is the server's ``LedgerEntry`` as stored
(same keys, same types; only ``call_index``, ``applied`` and ``persisting`` may be missing in
lines written elsewhere), so a change to one that the other does not follow fails here."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from mcpgym.evaluation.records.trajectory import LedgerRow, Trajectory
from mcpgym.server.control_models import LEDGER
from mcpgym.tools.invoke import LedgerEntry

ROW: TypeAdapter[LedgerRow] = TypeAdapter(LedgerRow)


def _fields(schema: dict[str, Any]) -> dict[str, Any]:
    """Property name -> its JSON type, without the titles and defaults that differ by kind of model."""
    return {
        name: {k: v for k, v in prop.items() if k not in ("title", "default")}
        for name, prop in schema["properties"].items()
    }


def test_the_row_has_the_entrys_keys_and_types() -> None:
    row, entry = ROW.json_schema(), LedgerEntry.model_json_schema()
    assert _fields(row) == _fields(entry)
    assert set(row["required"]) == {"step", "tool", "kind"} <= set(entry["required"])


@pytest.mark.parametrize(
    "entry",
    [
        LedgerEntry(step=1, tool="shop_get_item", call_index=0, kind="transient", applied=None),
        LedgerEntry(step=4, tool="shop_buy", call_index=2, kind="timeout", applied=True),
        LedgerEntry(step=5, tool="shop_buy", call_index=3, kind="lost_write", applied=False),
        LedgerEntry(step=9, tool="shop_search", call_index=1, kind="rate_limited", applied=None, persisting=True),
    ],
)
def test_an_entry_is_stored_and_read_back_unchanged(entry: LedgerEntry) -> None:
    wire = LEDGER.dump_json([entry])  # as GET /control/episodes/{id}/ledger answers it
    traj = Trajectory.model_validate({"episode_id": "e", "agent": "a", "ledger": LEDGER.validate_json(wire)})
    stored = Trajectory.model_validate_json(traj.model_dump_json())
    assert stored.ledger == [entry.model_dump(mode="json")]
    assert stored.ledger is not None and LedgerEntry.model_validate(stored.ledger[0]) == entry


def test_old_rows_without_the_optional_keys_still_load() -> None:
    traj = Trajectory.model_validate(
        {"episode_id": "e", "agent": "a", "ledger": [{"step": 2, "tool": "t", "kind": "transient"}]}
    )
    assert traj.ledger == [{"step": 2, "tool": "t", "kind": "transient"}]
