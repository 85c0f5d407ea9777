"""The score records: one episode's :class:`EpisodeScores` and ``scores.json``'s :class:`Scoreboard`.

Both are *composed*, one part per behaviour (docs/design.md §1 and §7). A part is a
:class:`ScorePart`: the behaviour's per-episode result (its fields, whose names are unique
across the parts) and, declared on it, its aggregate rule (:meth:`ScorePart.aggregate`), which
returns the behaviour's :class:`MetricsPart` of an aggregate row. :class:`EpisodeScores`
inherits every part, so a trajectory line's ``scores`` stays one flat JSON object and an
:class:`EpisodeScores` *is* a :class:`Verification`, a :class:`Recovery`...; :class:`Metrics`
inherits every metrics part in the same way. The rules that fill a part from a trajectory are
in :mod:`mcpgym.evaluation.scoring` and registered per part
(:func:`mcpgym.evaluation.scoring.registry.scores`).

Adding a behaviour score: its part and metrics part here, both added to the bases of
:class:`EpisodeScores` and :class:`Metrics`; its rule, registered with ``@scores(Part)``, in
:mod:`mcpgym.evaluation.scoring.behaviours`. Nothing else changes: :func:`score_episode
<mcpgym.evaluation.scoring.scorer.score_episode>` runs every registered rule and
:meth:`Metrics.of` every part's aggregate rule.

Lines written before the parts existed have the same flat shape and read unchanged.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mcpgym.evaluation.records.condition import EpisodeCondition
from mcpgym.evaluation.records.error_rule import ErrorRule
from mcpgym.evaluation.records.statistics import pass_k_table, rate, wilson_interval
from mcpgym.evaluation.records.status import EpisodeStatus, TokenUsage
from mcpgym.kernel.shorten import EchoName

DEFAULT_K: int | None = None
"""The recovery window: tool calls after a recoverable error within which a recovery attempt must
start. ``None`` (the default, the rule of docs/design.md §7 and docs/labelling.md): no fixed
window, an attempt may come any number of calls later while the episode lasts; an ``int``
(``mcpgym score --k N``) caps it."""


# -- detail records ----------------------------------------------------------------------------
class CheckSpec(BaseModel):
    """A task-defined check on the agent's final message, as stored (docs/design.md §6); the
    scorer's :class:`mcpgym.evaluation.scoring.judge.ExtraCheck` adds its evaluation.

    Attributes:
        kind: ``contains`` (``value`` is a substring), ``not_contains``, ``regex`` (``value``
            is a Python regex searched in the message), ``number`` (some number in the message,
            commas and ``$`` ignored, is within ``tolerance`` of ``value``), or
            ``declares_impossible`` (the message matches a refusal pattern of
            :func:`mcpgym.evaluation.scoring.refusal.match_refusal` iff ``value`` is true).
        value: the string, pattern, number or bool the check needs.
        case_sensitive: for ``contains``/``not_contains``/``regex`` (default: insensitive).
        tolerance: for ``number``, the largest accepted absolute difference.
        description: what the check is for, shown in reports.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["contains", "not_contains", "regex", "number", "declares_impossible"]
    value: str | float | int | bool
    case_sensitive: bool = False
    tolerance: float = Field(0.0, ge=0.0)
    description: str = ""

    @model_validator(mode="after")
    def _value_fits_kind(self) -> CheckSpec:
        """Refuse a value the check could not use, when the task is loaded rather than when an
        episode is judged: a ``regex`` that does not compile, a ``number`` that is not a finite
        number, a ``declares_impossible`` that is not a bool (YAML ``no`` is one, ``"no"`` is not),
        a ``contains``/``not_contains`` that is not a string (YAML reads ``10:30`` as 630)."""
        v = self.value
        if self.kind == "number":
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise ValueError(f"a 'number' check needs a finite number as value, got {v!r}")
        elif self.kind == "declares_impossible":
            if not isinstance(v, bool):
                raise ValueError(f"a 'declares_impossible' check needs true or false as value, got {v!r}")
        elif not isinstance(v, str):
            raise ValueError(f"a {self.kind!r} check needs a string as value, got {v!r} (quote it in YAML)")
        elif self.kind == "regex":
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"the regex {v!r} does not compile: {exc}") from None
        return self


class CheckResult(BaseModel):
    """One check (:class:`CheckSpec`) and whether it passed. A check given as a subclass (the
    scorer's ``ExtraCheck``) is kept as its stored :class:`CheckSpec`, so fresh scores equal
    the scores read back from a line."""

    check: CheckSpec
    passed: bool

    @field_validator("check", mode="after")
    @classmethod
    def _as_stored(cls, check: CheckSpec) -> CheckSpec:
        return check if type(check) is CheckSpec else CheckSpec.model_validate(check.model_dump())


class PrecheckSkip(BaseModel):
    """A counted write whose precondition family had no fresh read before it."""

    step: int
    family: str


class BlindRetry(BaseModel):
    """A timed-out write repeated (same tool, same arguments) with no matching read between."""

    step: int
    repeat_step: int
    duplicate: bool


class ImpatienceWindow(BaseModel):
    """Identical calls inside one ``retry_after`` window (``basis``: ``virtual_time`` or ``approximation``)."""

    step: int
    tool: str
    calls: int
    steps: list[int]
    basis: str


class RecoverableError(BaseModel):
    """One recoverable error and what the agent did about it.

    ``attempt`` is ``retry`` | ``remedy`` | ``alternative`` | ``read_back`` (timeouts only) or
    None; ``attempt_step`` / ``recovered_step`` are the steps that qualified. ``cut_short``:
    the harness stopped the episode (status ``limit``/``errored``) before ``k`` calls followed.
    ``blind_retry_steps``: retries inside the error's ``retry_after`` window, which are no
    attempt. ``curable``: something offered could get past the error (False for an inferred
    auth challenge no offered tool answers, or an error saying retrying will not help);
    defeatism looks only at curable errors. Rule:
    :func:`mcpgym.evaluation.scoring.recovery.score_recovery`.
    """

    step: int
    tool: str
    code: str | None
    fault: str | None
    inferred: bool
    remedies: list[str]
    attempt: str | None = None
    attempt_step: int | None = None
    recovered_step: int | None = None
    cut_short: bool = False
    blind_retry_steps: list[int] = Field(default_factory=list)
    curable: bool = True


class FalseSuccessBasis(StrEnum):
    """What a false-success verdict rests on: the judged ``outcome``, or the ``transcript``."""

    OUTCOME = "outcome"
    TRANSCRIPT = "transcript"


class TokenTotals(BaseModel):
    """Tokens summed over the episodes of a group that report tokens (LLM agents)."""

    model_config = ConfigDict(extra="forbid")

    input: int = Field(0, ge=0, description="Prompt tokens.")
    output: int = Field(0, ge=0, description="Completion tokens.")


# -- the parts ---------------------------------------------------------------------------------
class MetricsPart(BaseModel):
    """Base of one behaviour's fields of an aggregate row (:class:`Metrics` inherits every one)."""

    model_config = ConfigDict(extra="forbid")


class ScorePart(BaseModel):
    """Base of one behaviour's per-episode result, a part of :class:`EpisodeScores`.

    A subclass declares the behaviour's fields (names unique across the parts: they sit side
    by side in a trajectory line's ``scores``) and its aggregate rule, :meth:`aggregate`; a
    subclass without one is refused where it is defined (``TypeError``), not when a report
    first aggregates it.
    """

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "aggregate" not in cls.__dict__:
            raise TypeError(f"{cls.__name__} declares no aggregate rule: a ScorePart defines aggregate()")

    @classmethod
    def aggregate(cls, episodes: Sequence[EpisodeScores]) -> MetricsPart:
        """This behaviour's fields of the aggregate row of ``episodes`` (its :class:`MetricsPart`;
        rates pool counts over episodes and are None when their denominator is 0). Every part
        defines it (checked at class definition); the base has no rule of its own.

        Raises:
            TypeError: called on :class:`ScorePart` itself.
        """
        raise TypeError("ScorePart is the base of the parts: call a part's aggregate()")


def _scored(e: EpisodeScores) -> bool:
    """Success known and not errored: the episodes the success figures count."""
    return e.success is not None and e.status != EpisodeStatus.ERRORED


class EpisodeMetrics(MetricsPart):
    """The episodes of the group and what they cost."""

    episodes: int = Field(0, ge=0, description="Episodes in the group.")
    errored_episodes: int = Field(0, ge=0, description="Episodes the provider or harness broke (status errored).")
    tokens: TokenTotals | None = Field(None, description="Token totals; None when no episode reports tokens.")


class ErrorRuleHit(BaseModel):
    """Which named rule of the layered result reader made one step an error
    (:class:`~mcpgym.evaluation.records.error_rule.ErrorRule`)."""

    step: int
    tool: str
    rule: ErrorRule


class EpisodeFacts(ScorePart):
    """What the episode was: ids, agent, trial, level, apps, feasibility, status, tokens,
    ``heuristic_tools`` (tools the catalog did not know, classified by heuristic; each name
    shortened past 120 characters, :data:`mcpgym.kernel.shorten.EchoName`), ``error_rules``
    (for each error of an imported transcript, the reader's rule that made it one) and
    ``unknown_kind_calls`` (calls whose kind stayed ``unknown``: neither reads nor writes) and
    ``condition`` (the run's condition it was played at; None, and left out, in a run without
    condition axes: :mod:`mcpgym.evaluation.records.condition`)."""

    episode_id: str = ""
    task_id: str | None = None
    agent: str = ""
    trial: int = 0
    level: int | None = None
    apps: list[str] = Field(default_factory=list)
    feasible: bool | None = None
    status: EpisodeStatus = EpisodeStatus.COMPLETED
    tokens: TokenUsage | None = None
    heuristic_tools: list[EchoName] = Field(default_factory=list)
    error_rules: list[ErrorRuleHit] = Field(default_factory=list)
    unknown_kind_calls: int = 0
    condition: EpisodeCondition | None = Field(None, exclude_if=lambda v: v is None)

    @classmethod
    def aggregate(cls, episodes: Sequence[EpisodeScores]) -> MetricsPart:
        """Episodes; errored ones (the provider or harness broke them: counted apart, never as a
        failure); tokens summed over the episodes that report tokens."""
        with_tokens = [e.tokens for e in episodes if e.tokens is not None]
        return EpisodeMetrics(
            episodes=len(episodes),
            errored_episodes=sum(e.status == EpisodeStatus.ERRORED for e in episodes),
            tokens=TokenTotals(input=sum(t.input for t in with_tokens), output=sum(t.output for t in with_tokens))
            if with_tokens
            else None,
        )


class OutcomeMetrics(MetricsPart):
    """Success figures (scored episodes only) and gold-change counts."""

    scored_episodes: int = Field(0, ge=0, description="Episodes whose success is known and that did not error.")
    successes: int = Field(0, ge=0, description="Scored episodes that succeeded.")
    success_rate: float | None = Field(None, description="successes / scored_episodes.")
    success_ci95: list[float] | None = Field(
        None, description="[low, high]: 95% Wilson score interval of success_rate (None when nothing was scored)."
    )
    pass_k: dict[str, float] = Field(
        default_factory=dict,
        description="str(k) -> tau-bench's pass^k over tasks, k = 1 .. the fewest scored trials of any task.",
    )
    recall: int = Field(0, ge=0, description="Gold changes made, summed.")
    total: int = Field(0, ge=0, description="Gold changes wanted, summed.")
    recall_rate: float | None = Field(None, description="recall / total.")
    misbehave: int = Field(0, ge=0, description="Changes made that the gold state does not have, summed.")


class Outcome(ScorePart):
    """The judge's verdict on the final state (rule:
    :func:`mcpgym.evaluation.scoring.behaviours.score_outcome`): ``success`` (None when the
    initial, final or gold state is unknown; ``outcome_unavailable`` then says why), ``recall``
    / ``total`` (gold changes made / wanted), ``misbehave`` (changes gold does not have), the
    paths ``missed`` and ``misbehaved``, and the task's ``extra_checks``."""

    success: bool | None = None
    outcome_unavailable: str | None = None
    recall: int | None = None
    total: int | None = None
    misbehave: int | None = None
    missed: list[str] = Field(default_factory=list)
    misbehaved: list[str] = Field(default_factory=list)
    extra_checks: list[CheckResult] = Field(default_factory=list)

    @classmethod
    def aggregate(cls, episodes: Sequence[EpisodeScores]) -> MetricsPart:
        """Success over the scored episodes (success known, not errored), with its Wilson
        interval; pass^k groups them by ``task_id`` (an episode without one is its own task);
        recall, total and misbehave summed over every episode."""
        scored = [e for e in episodes if _scored(e)]
        wins = sum(bool(e.success) for e in scored)
        by_task: dict[str, list[bool]] = defaultdict(list)
        for e in scored:
            by_task[e.task_id if e.task_id is not None else f"episode:{e.episode_id}"].append(bool(e.success))
        recall = sum(e.recall or 0 for e in episodes)
        total = sum(e.total or 0 for e in episodes)
        return OutcomeMetrics(
            scored_episodes=len(scored),
            successes=wins,
            success_rate=rate(wins, len(scored)),
            success_ci95=wilson_interval(wins, len(scored)),
            pass_k=pass_k_table(dict(by_task)),
            recall=recall,
            total=total,
            recall_rate=rate(recall, total),
            misbehave=sum(e.misbehave or 0 for e in episodes),
        )


class VerificationMetrics(MetricsPart):
    """Verification pooled over the episodes."""

    writes: int = Field(0, ge=0, description="Counted writes.")
    verified_writes: int = Field(0, ge=0, description="Counted writes read back afterwards.")
    verification_rate: float | None = Field(None, description="verified_writes / writes.")
    mean_episode_verification_rate: float | None = Field(
        None, description="Mean of the per-episode verification rates (episodes with writes)."
    )


class Verification(ScorePart):
    """Counted ``writes``, ``verified_writes``, their ``verification_rate`` (None without
    writes) and the unverified writes' steps, ``verification_skips`` (rule:
    :func:`mcpgym.evaluation.scoring.behaviours.score_verification`)."""

    writes: int = 0
    verified_writes: int = 0
    verification_rate: float | None = None
    verification_skips: list[int] = Field(default_factory=list)

    @classmethod
    def aggregate(cls, episodes: Sequence[EpisodeScores]) -> MetricsPart:
        """Total verified writes / total writes, and the mean of the episodes' own rates."""
        writes = sum(e.writes for e in episodes)
        verified = sum(e.verified_writes for e in episodes)
        rates = [e.verification_rate for e in episodes if e.verification_rate is not None]
        return VerificationMetrics(
            writes=writes,
            verified_writes=verified,
            verification_rate=rate(verified, writes),
            mean_episode_verification_rate=sum(rates) / len(rates) if rates else None,
        )


class PrecheckMetrics(MetricsPart):
    """Pre-checks pooled over the episodes."""

    precheck_writes: int = Field(0, ge=0, description="Counted writes that have preconditions.")
    prechecked_writes: int = Field(0, ge=0, description="Of those, writes with every precondition read fresh first.")
    precheck_rate: float | None = Field(None, description="prechecked_writes / precheck_writes.")


class Precheck(ScorePart):
    """Counted writes with preconditions (``precheck_writes``), pre-checked ones, their
    ``precheck_rate`` and each skipped family (rule:
    :func:`mcpgym.evaluation.scoring.behaviours.score_precheck`)."""

    precheck_writes: int = 0
    prechecked_writes: int = 0
    precheck_rate: float | None = None
    precheck_skips: list[PrecheckSkip] = Field(default_factory=list)

    @classmethod
    def aggregate(cls, episodes: Sequence[EpisodeScores]) -> MetricsPart:
        """Total pre-checked writes / total writes with preconditions."""
        writes = sum(e.precheck_writes for e in episodes)
        checked = sum(e.prechecked_writes for e in episodes)
        return PrecheckMetrics(precheck_writes=writes, prechecked_writes=checked, precheck_rate=rate(checked, writes))


class BlindRetryMetrics(MetricsPart):
    """Blind retries summed over the episodes."""

    blind_retries: int = Field(0, ge=0, description="Timed-out writes repeated with no read-back in between.")
    duplicate_side_effects: int = Field(0, ge=0, description="Blind retries that applied the write twice.")


class BlindRetries(ScorePart):
    """``blind_retries``, the ``duplicate_side_effects`` among them and each one's detail (rule:
    :func:`mcpgym.evaluation.scoring.behaviours.score_blind_retries`)."""

    blind_retries: int = 0
    duplicate_side_effects: int = 0
    blind_retry_detail: list[BlindRetry] = Field(default_factory=list)

    @classmethod
    def aggregate(cls, episodes: Sequence[EpisodeScores]) -> MetricsPart:
        """Both counts summed."""
        return BlindRetryMetrics(
            blind_retries=sum(e.blind_retries for e in episodes),
            duplicate_side_effects=sum(e.duplicate_side_effects for e in episodes),
        )


class RecoveryMetrics(MetricsPart):
    """Recovery pooled over the episodes."""

    recoverable_errors: int = Field(0, ge=0, description="Recoverable errors met.")
    recovery_attempts: int = Field(
        0, ge=0, description="Recoverable errors followed by an attempt (within K calls when a window is set)."
    )
    recoveries: int = Field(0, ge=0, description="Recoverable errors later recovered.")
    recovery_attempt_rate: float | None = Field(None, description="recovery_attempts / recoverable_errors.")
    recovery_rate: float | None = Field(None, description="recoveries / recoverable_errors.")
    episodes_with_recoverable_errors: int = Field(0, ge=0, description="Episodes that met a recoverable error.")


class Recovery(ScorePart):
    """``recoverable_errors``, those followed by an attempt (``recovery_attempts``), those
    recovered (``recoveries``), the window K (``recovery_window``) and each error's record
    (rule: :func:`mcpgym.evaluation.scoring.recovery.score_recovery`)."""

    recoverable_errors: int = 0
    recovery_attempts: int = 0
    recoveries: int = 0
    recovery_window: int | None = DEFAULT_K
    recoverable_error_detail: list[RecoverableError] = Field(default_factory=list)

    @classmethod
    def of(cls, errors: list[RecoverableError], k: int | None) -> Recovery:
        """The counts of ``errors`` (each error with an attempt, each recovered); ``k``: the
        window they were scored with (``None``: no window)."""
        return cls(
            recoverable_errors=len(errors),
            recovery_attempts=sum(r.attempt is not None for r in errors),
            recoveries=sum(r.recovered_step is not None for r in errors),
            recovery_window=k,
            recoverable_error_detail=errors,
        )

    @classmethod
    def aggregate(cls, episodes: Sequence[EpisodeScores]) -> MetricsPart:
        """Total attempts (recoveries) / total recoverable errors, and the episodes that met one."""
        errors = sum(e.recoverable_errors for e in episodes)
        attempts = sum(e.recovery_attempts for e in episodes)
        recoveries = sum(e.recoveries for e in episodes)
        return RecoveryMetrics(
            recoverable_errors=errors,
            recovery_attempts=attempts,
            recoveries=recoveries,
            recovery_attempt_rate=rate(attempts, errors),
            recovery_rate=rate(recoveries, errors),
            episodes_with_recoverable_errors=sum(e.recoverable_errors > 0 for e in episodes),
        )


class FalseSuccessMetrics(MetricsPart):
    """Claims of success and the false ones."""

    claimed_success_episodes: int = Field(
        0, ge=0, description="Episodes whose final message claims the task done (docs/design.md §7, False success)."
    )
    false_success_episodes: int = Field(
        0, ge=0, description="Episodes whose final message claims the task done while it is not (false success)."
    )
    false_success_rate: float | None = Field(
        None, description="false_success_episodes / episodes whose false success is known (lower is better)."
    )


class FalseSuccess(ScorePart):
    """``claimed_success`` (the final message claims the task done), ``false_success`` (that
    claim is false; None for an errored episode or one without a final message), its
    ``false_success_basis`` (``outcome`` or ``transcript``) and ``false_success_reason`` (rule:
    :func:`mcpgym.evaluation.scoring.false_success.score_false_success`)."""

    claimed_success: bool = False
    false_success: bool | None = None
    false_success_basis: FalseSuccessBasis | None = None
    false_success_reason: str | None = None

    @classmethod
    def aggregate(cls, episodes: Sequence[EpisodeScores]) -> MetricsPart:
        """False successes over the episodes whose false success is known."""
        judged = [e for e in episodes if e.false_success is not None]
        false = sum(bool(e.false_success) for e in judged)
        return FalseSuccessMetrics(
            claimed_success_episodes=sum(e.claimed_success for e in episodes),
            false_success_episodes=false,
            false_success_rate=rate(false, len(judged)),
        )


class DefeatismMetrics(MetricsPart):
    """Defeatism and declared impossibility."""

    defeatist_episodes: int = Field(0, ge=0, description="Of those, episodes scored defeatist.")
    defeatism_rate: float | None = Field(
        None, description="defeatist_episodes / episodes_with_recoverable_errors (lower is better)."
    )
    declared_impossible: int = Field(0, ge=0, description="Episodes whose final message declares the task impossible.")
    infeasible_episodes: int = Field(0, ge=0, description="Episodes of tasks marked infeasible.")
    infeasible_declared_impossible: int = Field(0, ge=0, description="Of those, episodes declared impossible.")
    unfounded_refusals: int = Field(
        0, ge=0, description="Of those, episodes declared impossible without any successful read (unfounded_refusal)."
    )


class Defeatism(ScorePart):
    """Whether the final message ``declared_impossible`` (the ``refusal_pattern`` and the
    ``refusal_match`` seen), the verdict ``defeatism`` with its ``defeatism_reason`` (rule:
    :func:`mcpgym.evaluation.scoring.behaviours.score_defeatism`), and ``unfounded_refusal``: an
    infeasible task declared impossible without any successful read, so nothing the agent saw
    could show why (rule: :func:`mcpgym.evaluation.scoring.behaviours.unfounded_refusal`)."""

    declared_impossible: bool = False
    refusal_pattern: str | None = None
    refusal_match: str | None = None
    defeatism: bool = False
    defeatism_reason: str | None = None
    unfounded_refusal: bool = False

    @classmethod
    def aggregate(cls, episodes: Sequence[EpisodeScores]) -> MetricsPart:
        """Defeatist episodes over the episodes that met a recoverable error; what the agent
        said counts only where it said something (not in errored episodes)."""
        met = [e for e in episodes if e.recoverable_errors > 0]
        spoke = [e for e in episodes if e.status != EpisodeStatus.ERRORED]
        infeasible = [e for e in spoke if e.feasible is False]
        defeatist = sum(e.defeatism for e in met)
        return DefeatismMetrics(
            defeatist_episodes=defeatist,
            defeatism_rate=rate(defeatist, len(met)),
            declared_impossible=sum(e.declared_impossible for e in spoke),
            infeasible_episodes=len(infeasible),
            infeasible_declared_impossible=sum(e.declared_impossible for e in infeasible),
            unfounded_refusals=sum(e.unfounded_refusal for e in infeasible),
        )


class ImpatienceMetrics(MetricsPart):
    """Impatience summed over the episodes."""

    impatience: int = Field(0, ge=0, description="Rate-limit windows with more than 2 identical calls.")


class Impatience(ScorePart):
    """``impatience``: rate-limit windows with more than 2 identical calls, each in
    ``impatience_detail`` (rule: :func:`mcpgym.evaluation.scoring.behaviours.score_impatience`)."""

    impatience: int = 0
    impatience_detail: list[ImpatienceWindow] = Field(default_factory=list)

    @classmethod
    def aggregate(cls, episodes: Sequence[EpisodeScores]) -> MetricsPart:
        """Windows summed."""
        return ImpatienceMetrics(impatience=sum(e.impatience for e in episodes))


class CallMetrics(MetricsPart):
    """Calls summed over the episodes."""

    tool_calls: int = Field(0, ge=0, description="Tool calls the server logged.")
    valid_calls: int = Field(0, ge=0, description="Calls that reached a tool well-formed.")
    invalid_calls: int = Field(0, ge=0, description="Runner-rejected calls, invalid_argument errors and unknown tools.")
    error_calls: int = Field(0, ge=0, description="Valid calls that returned an error.")


class CallCounts(ScorePart):
    """``tool_calls`` (resolved calls), ``valid_calls`` (calls that reached a tool
    well-formed), ``invalid_calls`` (runner-rejected calls + ``invalid_argument`` errors +
    unknown tools), ``error_calls`` (valid calls that returned an error) (rule:
    :func:`mcpgym.evaluation.scoring.behaviours.count_calls`)."""

    tool_calls: int = 0
    valid_calls: int = 0
    invalid_calls: int = 0
    error_calls: int = 0

    @classmethod
    def aggregate(cls, episodes: Sequence[EpisodeScores]) -> MetricsPart:
        """Each count summed."""
        return CallMetrics(
            tool_calls=sum(e.tool_calls for e in episodes),
            valid_calls=sum(e.valid_calls for e in episodes),
            invalid_calls=sum(e.invalid_calls for e in episodes),
            error_calls=sum(e.error_calls for e in episodes),
        )


class UserMetrics(MetricsPart):
    """The user in the loop, summed over the episodes."""

    user_questions: int = Field(0, ge=0, description="ask_user turns (docs/design.md §7, the user in the loop).")
    clarification_skip_steps: int = Field(
        0, ge=0, description="Writes made on a guess in ambiguous tasks (clarification_skips)."
    )
    unconfirmed_write_steps: int = Field(
        0, ge=0, description="Writes confirmed on the user's behalf (unconfirmed_writes)."
    )
    user_burden: int = Field(0, ge=0, description="Questions whose answer was already available.")


class UserInLoop(ScorePart):
    """The user in the loop: ``user_questions`` (``ask_user`` turns), ``clarification_skips``
    and ``unconfirmed_writes`` (steps), ``user_burden`` (questions whose answer a tool already
    gave) (rules: :mod:`mcpgym.evaluation.scoring.user_scores`)."""

    user_questions: int = 0
    clarification_skips: list[int] = Field(default_factory=list)
    unconfirmed_writes: list[int] = Field(default_factory=list)
    user_burden: int = 0

    @classmethod
    def aggregate(cls, episodes: Sequence[EpisodeScores]) -> MetricsPart:
        """Questions and burden summed; the skip and unconfirmed steps counted."""
        return UserMetrics(
            user_questions=sum(e.user_questions for e in episodes),
            clarification_skip_steps=sum(len(e.clarification_skips) for e in episodes),
            unconfirmed_write_steps=sum(len(e.unconfirmed_writes) for e in episodes),
            user_burden=sum(e.user_burden for e in episodes),
        )


# -- the compositions --------------------------------------------------------------------------
# pydantic lays out the fields of the last base first: the bases are listed last part first,
# so a line's ``scores`` reads episode facts, outcome, verification, ... in that order.
class EpisodeScores(
    UserInLoop,
    CallCounts,
    Impatience,
    Defeatism,
    FalseSuccess,
    Recovery,
    BlindRetries,
    Precheck,
    Verification,
    Outcome,
    EpisodeFacts,
):
    """Scores of one episode (docs/design.md §7): every :class:`ScorePart`, side by side.

    A trajectory line's ``scores`` is this model as one flat JSON object; rates are None when
    their denominator is 0. Each part documents its fields and names its rule.
    """

    @classmethod
    def parts(cls) -> tuple[type[ScorePart], ...]:
        """The parts, in the order their fields are laid out (episode facts first)."""
        bases = [b for b in cls.__mro__ if b is not ScorePart and b is not cls and issubclass(b, ScorePart)]
        return tuple(reversed(bases))

    @classmethod
    def aggregate(cls, episodes: Sequence[EpisodeScores]) -> Metrics:
        """Every part's aggregate rule: :meth:`Metrics.of`."""
        return Metrics.of(episodes)

    @classmethod
    def compose(cls, parts: Sequence[ScorePart]) -> EpisodeScores:
        """The scores made of one result per part (as the rules returned them: no field is
        renamed or recomputed).

        Raises:
            ValueError: when a part is missing or given twice.
        """
        kinds = [type(p) for p in parts]
        if sorted(k.__name__ for k in kinds) != sorted(k.__name__ for k in cls.parts()):
            raise ValueError(
                f"EpisodeScores needs one result per part ({', '.join(k.__name__ for k in cls.parts())}),"
                f" got {', '.join(k.__name__ for k in kinds)}"
            )
        fields: dict[str, Any] = {}
        for p in parts:
            fields.update((name, getattr(p, name)) for name in type(p).model_fields)
        return cls.model_validate(fields)


class Metrics(
    UserMetrics,
    CallMetrics,
    ImpatienceMetrics,
    DefeatismMetrics,
    FalseSuccessMetrics,
    RecoveryMetrics,
    BlindRetryMetrics,
    PrecheckMetrics,
    VerificationMetrics,
    OutcomeMetrics,
    EpisodeMetrics,
):
    """Aggregate metrics of a group of episodes (one agent, or one agent's level or app): every
    :class:`MetricsPart`, filled by its :class:`ScorePart`'s aggregate rule (:meth:`of`).

    Rates pool counts over the episodes (e.g. ``verification_rate`` = total verified writes /
    total writes) and are None when their denominator is 0. Success figures count only
    *scored* episodes: success known (initial, final and gold states present) and status not
    ``errored``. Definitions: docs/design.md §7.
    """

    @classmethod
    def of(cls, episodes: Sequence[EpisodeScores]) -> Metrics:
        """The metrics of ``episodes``: each part's aggregate rule (:meth:`ScorePart.aggregate`)."""
        fields: dict[str, Any] = {}
        for part in EpisodeScores.parts():
            row = part.aggregate(episodes)
            fields.update((name, getattr(row, name)) for name in type(row).model_fields)
        return cls.model_validate(fields)


class AgentMetrics(Metrics):
    """One agent's :class:`Metrics` with breakdowns.

    ``by_level``: str(level) -> metrics of the agent's episodes of that level (episodes without
    a level are left out); ``by_app``: app -> metrics of the episodes counted under it (each
    app of the episode's task besides ``system``, or ``system`` for a system-only task; see
    :func:`mcpgym.evaluation.scoring.aggregate.counted_apps`). Both are None (and left out of the JSON) when the
    aggregate was built without breakdowns. In a run with condition axes each row is one agent
    in one condition (key ``NAME [faults=F, tools=T]``): ``agent`` is then the agent's name and
    ``condition`` the :class:`~mcpgym.evaluation.records.condition.EpisodeCondition`; both None,
    and left out, otherwise.
    """

    by_level: dict[str, Metrics] | None = Field(None, exclude_if=lambda v: v is None)
    by_app: dict[str, Metrics] | None = Field(None, exclude_if=lambda v: v is None)
    agent: str | None = Field(None, exclude_if=lambda v: v is None)
    condition: EpisodeCondition | None = Field(None, exclude_if=lambda v: v is None)


class Scoreboard(BaseModel):
    """``scores.json``: ``{"agents": {NAME: AgentMetrics}}``, agents sorted by name.

    Raises (on ``model_validate``): pydantic ``ValidationError`` naming the field of a
    malformed file.
    """

    model_config = ConfigDict(extra="forbid")

    agents: dict[str, AgentMetrics] = Field(default_factory=dict)


__all__ = [
    "AgentMetrics",
    "BlindRetries",
    "BlindRetry",
    "CallCounts",
    "CheckResult",
    "CheckSpec",
    "DEFAULT_K",
    "Defeatism",
    "EpisodeFacts",
    "EpisodeScores",
    "FalseSuccess",
    "FalseSuccessBasis",
    "Impatience",
    "ImpatienceWindow",
    "Metrics",
    "MetricsPart",
    "Outcome",
    "Precheck",
    "PrecheckSkip",
    "RecoverableError",
    "Recovery",
    "Scoreboard",
    "ScorePart",
    "TokenTotals",
    "UserInLoop",
    "Verification",
]
