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
        out: dict[str, Any] = {}
        for name, keys in _plan(type(value)):
            inner = comparable(getattr(value, name))
            if keys and isinstance(inner, dict):
                inner = sorted(inner.values(), key=lambda v: json.dumps(v, sort_keys=True))
            out[name] = inner
        return out
    if isinstance(value, dict):
        return {str(k): comparable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [comparable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(comparable(v) for v in value)
    return value
