"""Indexes over an episode's calls that answer "the first later call of this kind" in
logarithmic time, so that every behaviour rule scores in time linear in the calls (up to a log
factor) instead of scanning forward from each call (quadratic: 16,000 calls took minutes).

The rules themselves are unchanged (docs/design.md §7); each index answers exactly the
question the forward scan asked, e.g. "the first call after position i of one of these tools
whose resource ids match these ids" with :func:`mcpgym.evaluation.scoring.calls.ids_match`'s
rule (either side names no id, or they share one).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Sequence


def first_after(positions: Sequence[int], after: int) -> int | None:
    """The first of the sorted ``positions`` greater than ``after``, or None."""
    k = bisect.bisect_right(positions, after)
    return positions[k] if k < len(positions) else None


def earliest(*found: int | None) -> int | None:
    """The smallest of the positions that are not None (None when all are)."""
    present = [f for f in found if f is not None]
    return min(present) if present else None


class KeyedCalls:
    """Call positions grouped by a key (a tool name, a resource family), with their ids.

    Add calls in increasing position order with :meth:`add`; :meth:`first` then answers "the
    first position after ``i`` among the calls of any of ``keys`` whose ids match ``ids``".
    """

    def __init__(self) -> None:
        self._any: dict[str, list[int]] = defaultdict(list)
        self._idless: dict[str, list[int]] = defaultdict(list)
        self._by_id: dict[tuple[str, str], list[int]] = defaultdict(list)

    def add(self, keys: Iterable[str], position: int, ids: frozenset[str]) -> None:
        """Record the call at ``position`` (increasing from one call to the next) under each of ``keys``."""
        for key in keys:
            self._any[key].append(position)
            if ids:
                for x in ids:
                    self._by_id[(key, x)].append(position)
            else:
                self._idless[key].append(position)

    def first(self, keys: Iterable[str], after: int, ids: frozenset[str] = frozenset()) -> int | None:
        """The first position after ``after`` of a call under one of ``keys`` whose ids match
        ``ids`` (``ids`` empty: any call; else a call naming no id or one of ``ids``)."""
        best: int | None = None
        for key in keys:
            if not ids:
                best = earliest(best, first_after(self._any.get(key, ()), after))
                continue
            best = earliest(best, first_after(self._idless.get(key, ()), after))
            for x in ids:
                best = earliest(best, first_after(self._by_id.get((key, x), ()), after))
        return best


__all__ = ["KeyedCalls", "earliest", "first_after"]
