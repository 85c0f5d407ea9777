"""A count with its noun in the right number, for every message and report line.

``f"{n} trials"`` read "1 trials" when n was 1, and ``"episode(s)"`` hedged where the count was
known: :func:`counted` writes ``"1 trial"``, ``"2 trials"``, ``"0 trials"``.
"""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, singular for exactly one: ``counted(1, "trial") == "1 trial"``,
    ``counted(3, "trial") == "3 trials"``, ``counted(2, "retry", "retries") == "2 retries"``.

    Args:
        n: the count (any int; only 1 and -1 take the singular). noun: the singular.
        plural: the plural when it is not ``noun + "s"``.
    """
    return f"{n} {noun if abs(n) == 1 else (plural or noun + 's')}"


__all__ = ["counted"]
