"""The state diff of a collection by item, for the trajectory viewer (docs/design.md §7,
"State diff by item").

The judge compares a collection (a list in the comparable state: events, messages, bookings,
transactions, files...) as a multiset of items, so the viewer used to show the whole list as
one JSON cell per state: thousands of characters in which one added event hid. Here the three
versions of a collection (initial, final, gold) are matched item by item:

- **Key**: the first field every item of the three versions has, whose values are scalars and
  unique within each version, in :data:`KEY_FIELDS` order (``*_id`` fields first, then names,
  titles, subjects); with none, items are keyed by their content (then an edited item shows
  as one removed and one added).
- **Rows**: an item the agent **added** (absent initially, present finally), **removed**, or
  **changed** (present in both, different: each changed field listed with its initial, final
  and gold value), and an item gold changed that the agent left alone (**missed**).
- **Against gold**: ``as gold`` when the final item is the gold item (or both lack it), else
  ``not in gold`` (an addition or removal gold does not make), ``differs from gold``, or
  ``missed``.

Every cell is at most :data:`MAX_CELL_CHARS` characters and a collection shows at most
:data:`MAX_ITEM_ROWS` rows (the rest are counted).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mcpgym.kernel.shorten import short_text

MAX_CELL_CHARS = 240
"""Longest value shown in one cell (cut in the middle beyond it)."""

MAX_ITEM_ROWS = 40
"""Most item rows shown per collection."""

KEY_FIELDS: tuple[str, ...] = ("name", "title", "subject", "email", "symbol", "document_number", "path", "text")
"""Fields tried as an item's key after its ``*_id`` / ``id`` fields, in this order."""

ABSENT = "(absent)"
"""What a cell shows for a value a version does not have."""


@dataclass
class FieldChange:
    """One field of a changed item: its initial, final and gold values as bounded text."""

    field: str
    initial: str
    final: str
    gold: str


@dataclass
class ItemRow:
    """One item of a collection diff: ``change`` (added, removed, changed, missed), the item's
    key text, a bounded summary of the item, the field changes (changed items) and the verdict
    against gold."""

    change: str
    key: str
    summary: str
    verdict: str
    fields: list[FieldChange] = field(default_factory=list)


@dataclass
class CollectionDiff:
    """The item rows of one collection, the key used (None: by content) and the rows left out."""

    path: str
    key: str | None
    rows: list[ItemRow]
    more: int = 0


def cell(value: Any) -> str:
    """A value as one bounded cell: JSON (sorted keys) cut to :data:`MAX_CELL_CHARS`; ``(absent)``."""
    if value is _MISSING:
        return ABSENT
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return short_text(text, MAX_CELL_CHARS)


class _Missing:
    def __repr__(self) -> str:
        return ABSENT


_MISSING: Any = _Missing()


def _canon(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def is_collection(*versions: Any) -> bool:
    """True when every present version is a list and at least one holds an item (the viewer
    then shows the path by item)."""
    present = [v for v in versions if v is not _MISSING and v is not None]
    return bool(present) and all(isinstance(v, list) for v in present) and any(present)


def choose_key(*versions: list[Any]) -> str | None:
    """The key field of the items of ``versions`` (see the module docstring), or None."""
    items = [item for v in versions for item in v]
    if not items or not all(isinstance(i, dict) for i in items):
        return None
    common = set(items[0])
    for item in items[1:]:
        common &= set(item)
    ordered = sorted(f for f in common if f == "id" or f.endswith("_id")) + [f for f in KEY_FIELDS if f in common]
    for name in ordered:
        ok = True
        for v in versions:
            values = [item[name] for item in v]
            if any(not isinstance(x, (str, int)) or isinstance(x, bool) for x in values) or len(set(values)) != len(
                values
            ):
                ok = False
                break
        if ok:
            return str(name)
    return None


def _summary(item: Any, key: str | None) -> str:
    if isinstance(item, dict) and key is not None:
        rest = {k: v for k, v in item.items() if k != key}
        return cell(rest)
    return cell(item)


def _by_key(items: list[Any], key: str) -> dict[str, Any]:
    return {str(item[key]): item for item in items}


def _keyed_rows(initial: list[Any], final: list[Any], gold: list[Any], key: str) -> list[ItemRow]:
    ini, fin, gol = _by_key(initial, key), _by_key(final, key), _by_key(gold, key)
    rows: list[ItemRow] = []
    for k in sorted(ini.keys() | fin.keys() | gol.keys()):
        i, f, g = ini.get(k, _MISSING), fin.get(k, _MISSING), gol.get(k, _MISSING)
        same_fg = (f is _MISSING and g is _MISSING) or (
            f is not _MISSING and g is not _MISSING and _canon(f) == _canon(g)
        )
        if i is _MISSING and f is not _MISSING:
            rows.append(ItemRow("added", k, _summary(f, key), "as gold" if same_fg else _verdict(g)))
        elif i is not _MISSING and f is _MISSING:
            rows.append(ItemRow("removed", k, _summary(i, key), "as gold" if same_fg else _verdict(g)))
        elif i is not _MISSING and f is not _MISSING and _canon(i) != _canon(f):
            changes = _field_changes(i, f, g)
            rows.append(ItemRow("changed", k, _summary(f, key), "as gold" if same_fg else _verdict(g), changes))
        elif not same_fg:  # the agent left it as it was; gold changed it
            changes = _field_changes(i, f, g) if i is not _MISSING and g is not _MISSING else []
            rows.append(ItemRow("missed", k, _summary(g if g is not _MISSING else i, key), "missed", changes))
    return rows


def _verdict(gold_item: Any) -> str:
    return "not in gold" if gold_item is _MISSING else "differs from gold"


def _field_changes(i: Any, f: Any, g: Any) -> list[FieldChange]:
    if not isinstance(i, dict) or not isinstance(f, dict):
        return [FieldChange("(item)", cell(i), cell(f), cell(g))]
    gd = g if isinstance(g, dict) else {}
    out = []
    for name in sorted(i.keys() | f.keys() | gd.keys()):
        vi, vf, vg = i.get(name, _MISSING), f.get(name, _MISSING), gd.get(name, _MISSING)
        if _canon(vi) != _canon(vf) or _canon(vf) != _canon(vg):
            out.append(FieldChange(name, cell(vi), cell(vf), cell(vg) if isinstance(g, dict) else ABSENT))
    return out


def _content_rows(initial: list[Any], final: list[Any], gold: list[Any]) -> list[ItemRow]:
    ci, cf, cg = (Counter(_canon(x) for x in v) for v in (initial, final, gold))
    items = {_canon(x): x for v in (initial, final, gold) for x in v}
    added, removed = cf - ci, ci - cf
    gold_added, gold_removed = cg - ci, ci - cg
    rows: list[ItemRow] = []
    for text in sorted(added):
        ok = gold_added[text] >= added[text]
        rows += [ItemRow("added", "(by content)", cell(items[text]), "as gold" if ok else "not in gold")] * added[text]
    for text in sorted(removed):
        ok = gold_removed[text] >= removed[text]
        rows += [ItemRow("removed", "(by content)", cell(items[text]), "as gold" if ok else "not in gold")] * removed[
            text
        ]
    for text in sorted((gold_added - added) + (gold_removed - removed)):
        rows.append(ItemRow("missed", "(by content)", cell(items[text]), "missed"))
    return rows


def collection_diff(path: str, initial: Any, final: Any, gold: Any) -> CollectionDiff:
    """The item rows of the collection at ``path`` in its three versions (a missing version
    is an empty collection). See the module docstring."""
    versions = [v if isinstance(v, list) else [] for v in (initial, final, gold)]
    key = choose_key(*versions)
    initial_items, final_items, gold_items = versions
    rows = (
        _keyed_rows(initial_items, final_items, gold_items, key)
        if key is not None
        else _content_rows(initial_items, final_items, gold_items)
    )
    return CollectionDiff(path, key, rows[:MAX_ITEM_ROWS], max(0, len(rows) - MAX_ITEM_ROWS))


def missing() -> Any:
    """The marker of a version that lacks a value (what :func:`cell` shows as ``(absent)``)."""
    return _MISSING


__all__ = [
    "ABSENT",
    "KEY_FIELDS",
    "MAX_CELL_CHARS",
    "MAX_ITEM_ROWS",
    "CollectionDiff",
    "FieldChange",
    "ItemRow",
    "cell",
    "choose_key",
    "collection_diff",
    "is_collection",
    "missing",
]
