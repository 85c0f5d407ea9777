"""The registry of behaviour rules: one rule per part of :class:`EpisodeScores`.

A rule takes the :class:`EpisodeInput` of one episode (the trajectory, its resolved calls, the
catalog and the scoring options) and returns its part
(:class:`mcpgym.evaluation.records.scores.ScorePart`); :func:`scores` registers it for that
part. :func:`mcpgym.evaluation.scoring.scorer.score_episode` asks the input for every part of
:class:`EpisodeScores`; a rule that needs another part's result asks the input for it too
(:meth:`EpisodeInput.result`), so rules are computed once each, in whatever order they need.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from mcpgym.evaluation.records.scores import EpisodeScores, ScorePart
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.scoring.calls import Call
from mcpgym.evaluation.scoring.claims import claims_done
from mcpgym.evaluation.scoring.refusal import RefusalMatch, match_refusal
from mcpgym.evaluation.scoring.tool_catalog import Catalog

P = TypeVar("P", bound=ScorePart)

RULES: dict[type[ScorePart], Callable[[EpisodeInput], ScorePart]] = {}
"""Part -> the rule that fills it (filled by :func:`scores` as the rule modules are imported)."""


def scores(part: type[P]) -> Callable[[Callable[[EpisodeInput], P]], Callable[[EpisodeInput], P]]:
    """Register the decorated function as the rule of ``part``.

    Raises:
        ValueError: when ``part`` is no part of :class:`EpisodeScores`, or has a rule already.
    """

    def register(rule: Callable[[EpisodeInput], P]) -> Callable[[EpisodeInput], P]:
        if part not in EpisodeScores.parts():
            raise ValueError(f"{part.__name__} is no part of EpisodeScores (add it to its bases)")
        if part in RULES:
            raise ValueError(f"{part.__name__} has a rule already: {RULES[part].__qualname__}")
        RULES[part] = rule
        return rule

    return register


@dataclass
class EpisodeInput:
    """What the rules score one episode from, and the parts computed so far.

    Attributes:
        traj: the trajectory. catalog: tool metadata. calls: the resolved calls
        (:func:`mcpgym.evaluation.scoring.calls.resolve_calls`). counted: indexes of the counted
        writes among them. k: the recovery window, in calls. checks: the task's checks on the
        final message (None: ``traj.metadata["extra_checks"]``). timeout_read_recovers: see
        :func:`mcpgym.evaluation.scoring.recovery.score_recovery`.
    """

    traj: Trajectory
    catalog: Catalog
    calls: list[Call]
    counted: list[int]
    k: int | None
    checks: Iterable[Any] | None = None
    timeout_read_recovers: bool = True
    _results: dict[type[ScorePart], ScorePart] = field(default_factory=dict)
    _running: set[type[ScorePart]] = field(default_factory=set)

    @functools.cached_property
    def refusal(self) -> RefusalMatch | None:
        """:func:`~mcpgym.evaluation.scoring.refusal.match_refusal` of the final message (matched once)."""
        return match_refusal(self.traj.answer)

    @property
    def claims_done(self) -> bool:
        """The final message says something, declares nothing impossible and does not only
        ask or offer (:func:`~mcpgym.evaluation.scoring.claims.claims_done`, from :attr:`refusal`)."""
        return claims_done(self.traj.answer, self.refusal)

    def result(self, part: type[P]) -> P:
        """The result of ``part``'s rule for this episode (computed on first use).

        Raises:
            LookupError: when no rule is registered for ``part``.
            RecursionError: when two rules ask for each other's result.
        """
        if part not in self._results:
            rule = RULES.get(part)
            if rule is None:
                raise LookupError(f"no rule is registered for {part.__name__} (decorate one with @scores)")
            if part in self._running:
                raise RecursionError(f"the rule of {part.__name__} needs its own result")
            self._running.add(part)
            try:
                self._results[part] = rule(self)
            finally:
                self._running.discard(part)
        return cast(P, self._results[part])


__all__ = ["EpisodeInput", "RULES", "scores"]
