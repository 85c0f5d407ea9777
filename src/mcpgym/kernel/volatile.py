"""The volatile-field marker and helpers that read it.

A field whose value is incidental (a generated id, a timestamp) is declared on the model as
``Annotated[T, VOLATILE]`` (or ``Field(json_schema_extra={"volatile": True})``). A dict field
whose *keys* are generated ids is declared ``Annotated[dict[str, M], VOLATILE_KEYS]``: the
judge compares its values as a multiset instead of by key. The judge reads these markers from
the models themselves; no list of key names is kept by hand.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<{self.name}>"


VOLATILE = _Marker("volatile")
"""Annotate a field with this to exclude its value from outcome comparison."""

VOLATILE_KEYS = _Marker("volatile_keys")
"""Annotate a ``dict[str, Model]`` field whose keys are generated ids."""


def _field_flags(field: Any) -> tuple[bool, bool]:
    volatile = VOLATILE in field.metadata
    keys = VOLATILE_KEYS in field.metadata
    extra = field.json_schema_extra
    if isinstance(extra, dict):
        volatile = volatile or bool(extra.get("volatile"))
        keys = keys or bool(extra.get("volatile_keys"))
    return volatile, keys


_PLANS: dict[type[BaseModel], tuple[tuple[str, bool], ...]] = {}


def _plan(cls: type[BaseModel]) -> tuple[tuple[str, bool], ...]:
    """The compared fields of model class ``cls``: ``(name, keys_are_volatile)`` in field order,
    volatile fields left out. Read once per class (a model's fields do not change after its
    class is built)."""
    plan = _PLANS.get(cls)
    if plan is None:
        entries = []
        for name, field in cls.model_fields.items():
            volatile, keys = _field_flags(field)
            if not volatile:
                entries.append((name, keys))
        plan = _PLANS[cls] = tuple(entries)
    return plan


def comparable(value: Any) -> Any:
    """Return a JSON-able view of ``value`` with volatile fields removed.

    Args:
        value: a pydantic model, or a list/dict/scalar containing models.

    Returns:
        Plain JSON data. Volatile fields are dropped; dicts marked ``VOLATILE_KEYS`` become a
        sorted list of their comparable values, so two states that differ only in generated
        ids compare equal.
    """
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, BaseModel):
        return {name: _field_view(value, name, keys) for name, keys in _plan(type(value))}
    if isinstance(value, dict):
        return {str(k): comparable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [comparable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(comparable(v) for v in value)
    return value


def _field_view(model: BaseModel, name: str, keys: bool) -> Any:
    inner = comparable(getattr(model, name))
    if keys and isinstance(inner, dict):
        inner = sorted(inner.values(), key=lambda v: json.dumps(v, sort_keys=True))
    return inner


def comparable_changed(
    model: BaseModel, prior: dict[str, Any], before: dict[str, Any], dump: dict[str, Any]
) -> dict[str, Any]:
    """:func:`comparable` of ``model``, reusing the view ``prior`` of an earlier state of the
    same model class wherever the dumped data did not change: whole fields (collections) whose
    dumped value is equal, and, inside a changed ``dict`` field whose keys are not volatile, the
    entries whose dumped value is equal. The judge so recomputes only what a write changed.

    Args:
        model: a pydantic model; dump: its ``model_dump(mode="json")``.
        prior: ``comparable(earlier)``; before: ``earlier.model_dump(mode="json")``.

    Returns:
        What ``comparable(model)`` returns (reused parts are shared with ``prior``).
    """
    out: dict[str, Any] = {}
    for name, keys in _plan(type(model)):
        old, new, view = before.get(name, _ABSENT), dump.get(name, _ABSENT), prior.get(name, _ABSENT)
        if old is not _ABSENT and view is not _ABSENT and (old is new or old == new):
            out[name] = view
            continue
        value = getattr(model, name)
        if (
            not keys
            and isinstance(value, dict)
            and isinstance(old, dict)
            and isinstance(new, dict)
            and isinstance(view, dict)
        ):
            entries: dict[str, Any] = {}
            for k, v in value.items():
                key = str(k)
                o, n = old.get(key, _ABSENT), new.get(key, _ABSENT)
                if o is not _ABSENT and key in view and (o is n or o == n):
                    entries[key] = view[key]
                else:
                    entries[key] = comparable(v)
            out[name] = entries
            continue
        out[name] = _field_view(model, name, keys)
    return out


_ABSENT: Any = object()
