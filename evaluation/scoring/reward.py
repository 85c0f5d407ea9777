"""The one reward of an episode, for every RL door (Gymnasium, OpenEnv, verifiers, NeMo Gym).

Rule (docs/design.md, "Reward"): a scored trajectory and a :class:`RewardProfile` give

    reward = outcome_weight * outcome
           + verification * verification_rate          (only when the episode wrote)
           + recovery * recovery_rate                   (only when it met a recoverable error)
           - false_success * [false success]            (only when the judge could decide)
           - blind_retries * blind_retries              (a count)
           + sum of the per-step process rewards:
               process_verified_write   for each counted write read back later,
               process_recovered_fault  for each injected fault (ledger) later recovered.

``outcome`` is 1.0/0.0 from the judge's ``success`` (``OutcomeBasis.SUCCESS``) or
``recall / total`` of the gold changes (``OutcomeBasis.RECALL``; a task whose gold state wants no
change has no recall rate, so its outcome is its success, and the breakdown says so). A behaviour
term whose rate has no basis (no write to verify, no error to recover from) adds nothing and is
recorded as not applicable, never as a silent 0.0 rate. An outcome the judge could not decide
(no gold state) is an error (:class:`RewardUnavailable`).

Process rewards are credited to the step that earned them (the verified write's step, the
recovering call's step); they are known only in hindsight (a write is verified by a later read),
so every door reports them with the finished episode, as :attr:`RewardBreakdown.process`.

Built-in profiles (:data:`BUILTIN_PROFILES`): ``outcome`` (the judge's success, nothing else:
the default of every door) and ``shaped`` (success plus small behaviour and process terms).
The breakdown carries the profile it used, so a rollout's metadata records its weights.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mcpgym.evaluation.records.scores import EpisodeScores
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.scoring.behaviours import counted_writes
from mcpgym.evaluation.scoring.calls import resolve_calls
from mcpgym.evaluation.scoring.tool_catalog import Catalog, installed_catalog
from mcpgym.kernel.exceptions import MCPGymError


class RewardUnavailable(MCPGymError, RuntimeError):
    """The reward cannot be computed: the episode is unscored or its outcome is unknown."""


class OutcomeBasis(StrEnum):
    """What the outcome term reads: the judge's ``success`` (1/0) or the gold ``recall`` rate."""

    SUCCESS = "success"
    RECALL = "recall"


class ProcessKind(StrEnum):
    """The kinds of per-step process reward."""

    VERIFIED_WRITE = "verified_write"
    RECOVERED_FAULT = "recovered_fault"


class RewardProfile(BaseModel):
    """The weights of the reward (module docstring for the rule). All weights are finite; the
    penalties (``false_success``, ``blind_retries``) are given as positive numbers and
    subtracted."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    outcome: OutcomeBasis = OutcomeBasis.SUCCESS
    outcome_weight: float = Field(1.0, allow_inf_nan=False)
    verification: float = Field(0.0, allow_inf_nan=False, description="Weight of the verification rate.")
    recovery: float = Field(0.0, allow_inf_nan=False, description="Weight of the recovery rate.")
    false_success: float = Field(0.0, ge=0.0, allow_inf_nan=False, description="Penalty of a false success claim.")
    blind_retries: float = Field(0.0, ge=0.0, allow_inf_nan=False, description="Penalty per blind retry.")
    process_verified_write: float = Field(0.0, allow_inf_nan=False, description="Per verified write (at its step).")
    process_recovered_fault: float = Field(
        0.0, allow_inf_nan=False, description="Per recovered injected fault (at the recovering step)."
    )

    @property
    def has_process(self) -> bool:
        """True when a per-step process weight is not zero."""
        return bool(self.process_verified_write or self.process_recovered_fault)


OUTCOME = RewardProfile(name="outcome")
"""The judge's success, 1.0 or 0.0, and nothing else: every door's default."""

SHAPED = RewardProfile(
    name="shaped",
    verification=0.1,
    recovery=0.1,
    false_success=0.2,
    blind_retries=0.05,
    process_verified_write=0.02,
    process_recovered_fault=0.02,
)
"""Success plus small behaviour terms (each at most a tenth of the outcome) and process rewards."""

BUILTIN_PROFILES: dict[str, RewardProfile] = {p.name: p for p in (OUTCOME, SHAPED)}
"""The built-in profiles by name."""


def load_profile(spec: str | Path | dict[str, Any] | RewardProfile | None) -> RewardProfile:
    """A :class:`RewardProfile` from a built-in name, a JSON/TOML/YAML file, a mapping of its
    fields, or a profile (returned as it is); None is ``outcome``.

    Raises:
        ValueError: an unknown name, an unreadable file, or fields the profile refuses (the
            message names them).
    """
    if spec is None:
        return OUTCOME
    if isinstance(spec, RewardProfile):
        return spec
    if isinstance(spec, dict):
        return RewardProfile.model_validate(spec)
    text = str(spec)
    if text in BUILTIN_PROFILES:
        return BUILTIN_PROFILES[text]
    path = Path(text)
    if not path.is_file():
        raise ValueError(f"unknown reward profile {text[:200]!r}: give one of {sorted(BUILTIN_PROFILES)} or a file")
    return RewardProfile.model_validate(_read_mapping(path))


def _read_mapping(path: Path) -> Any:
    """A profile file's mapping (by suffix: .toml, .yaml/.yml, else JSON), read bounded, a key
    given twice refused (ValueError naming the file)."""
    import yaml

    from mcpgym.kernel.bounded_json import load_json
    from mcpgym.kernel.input_files import load_yaml, read_input_text, yaml_error_text

    try:
        raw = read_input_text(path, what="reward profile", limit=1_000_000)
        if path.suffix == ".toml":
            import tomllib

            return tomllib.loads(raw)  # TOML itself refuses a key given twice
        if path.suffix in (".yaml", ".yml"):
            return load_yaml(raw)
        return load_json(raw, unique_keys=True)
    except yaml.YAMLError as exc:
        raise ValueError(f"cannot read reward profile {str(path)[:200]}: {yaml_error_text(exc)}"[:500]) from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read reward profile {str(path)[:200]}: {exc}"[:500]) from None


class RewardTerm(BaseModel):
    """One term of the reward: its ``value`` (a rate, a count or 1/0), ``weight``, signed
    ``contribution`` to the total, and whether it applied (a rate with no basis does not)."""

    name: str
    weight: float
    value: float | None
    contribution: float
    applicable: bool = True
    basis: str = ""


class StepReward(BaseModel):
    """One per-step process reward: the ``step`` (1-based, the trajectory's) that earned it."""

    step: int = Field(ge=1)
    kind: ProcessKind
    value: float


class RewardBreakdown(BaseModel):
    """The reward of one finished episode with its components and the profile that made it
    (the rollout metadata every door returns)."""

    total: float
    profile: RewardProfile
    terms: list[RewardTerm] = Field(default_factory=list)
    process: list[StepReward] = Field(default_factory=list)

    def components(self) -> dict[str, float]:
        """``{term name: contribution}`` plus ``process`` (the sum of the per-step rewards)."""
        out = {t.name: t.contribution for t in self.terms}
        out["process"] = sum(s.value for s in self.process)
        return out


def _outcome_term(scores: EpisodeScores, profile: RewardProfile) -> RewardTerm:
    if scores.success is None:
        raise RewardUnavailable(
            f"episode {scores.episode_id}: the outcome is unknown ({scores.outcome_unavailable or 'no gold state'})"
        )
    value, basis = (1.0 if scores.success else 0.0), "judge success"
    if profile.outcome is OutcomeBasis.RECALL:
        if scores.total:
            value, basis = (scores.recall or 0) / scores.total, f"recall {scores.recall}/{scores.total}"
        else:
            basis = "judge success (the gold state wants no change: no recall rate)"
    return RewardTerm(
        name="outcome",
        weight=profile.outcome_weight,
        value=value,
        contribution=profile.outcome_weight * value,
        basis=basis,
    )


def _rate_term(name: str, weight: float, done: int, out_of: int, done_what: str, base_what: str) -> RewardTerm:
    if not out_of:
        return RewardTerm(
            name=name, weight=weight, value=None, contribution=0.0, applicable=False, basis=f"no {base_what}: no rate"
        )
    rate = done / out_of
    return RewardTerm(
        name=name,
        weight=weight,
        value=rate,
        contribution=weight * rate,
        basis=f"{done}/{out_of} {base_what} {done_what}",
    )


def behaviour_terms(scores: EpisodeScores, profile: RewardProfile) -> list[RewardTerm]:
    """The weighted behaviour terms (module docstring), in a fixed order; terms of weight 0
    are left out."""
    terms: list[RewardTerm] = []
    if profile.verification:
        terms.append(
            _rate_term(
                "verification",
                profile.verification,
                scores.verified_writes,
                scores.writes,
                "verified",
                "counted writes",
            )
        )
    if profile.recovery:
        terms.append(
            _rate_term(
                "recovery",
                profile.recovery,
                scores.recoveries,
                scores.recoverable_errors,
                "recovered",
                "recoverable errors",
            )
        )
    if profile.false_success:
        fs = scores.false_success
        terms.append(
            RewardTerm(
                name="false_success",
                weight=profile.false_success,
                value=None if fs is None else float(fs),
                contribution=-profile.false_success if fs else 0.0,
                applicable=fs is not None,
                basis="false success undecided"
                if fs is None
                else ("claimed success falsely" if fs else "no false claim"),
            )
        )
    if profile.blind_retries:
        n = scores.blind_retries
        terms.append(
            RewardTerm(
                name="blind_retries",
                weight=profile.blind_retries,
                value=float(n),
                contribution=0.0 - profile.blind_retries * n,
                basis=f"{n} blind retries",
            )
        )
    return terms


def process_rewards(
    traj: Trajectory, scores: EpisodeScores, profile: RewardProfile, catalog: Catalog | None = None
) -> list[StepReward]:
    """The per-step process rewards, sorted by step: a verified write (a counted write not in
    ``scores.verification_skips``) at the write's step, a recovered injected fault (a
    recoverable error with a ledger or call-log fault and a ``recovered_step``) at the
    recovering step. Empty when the profile's process weights are 0."""
    out: list[StepReward] = []
    if profile.process_verified_write:
        calls = resolve_calls(traj, catalog or installed_catalog())
        skipped = set(scores.verification_skips)
        for i in counted_writes(calls):
            if calls[i].step not in skipped:
                out.append(
                    StepReward(
                        step=calls[i].step, kind=ProcessKind.VERIFIED_WRITE, value=profile.process_verified_write
                    )
                )
    if profile.process_recovered_fault:
        for err in scores.recoverable_error_detail:
            if err.fault is not None and not err.inferred and err.recovered_step is not None:
                out.append(
                    StepReward(
                        step=err.recovered_step, kind=ProcessKind.RECOVERED_FAULT, value=profile.process_recovered_fault
                    )
                )
    out.sort(key=lambda s: (s.step, s.kind))
    return out


def episode_reward(
    traj: Trajectory, profile: str | RewardProfile | None = None, *, catalog: Catalog | None = None
) -> RewardBreakdown:
    """The reward of a finished, scored trajectory under ``profile`` (module docstring).

    Args:
        traj: a trajectory whose ``scores`` are set (``mcpgym run`` records, or a finished
            :class:`mcpgym.evaluation.run.gym.GymEpisode`'s ``trajectory()``).
        profile: a :class:`RewardProfile` or anything :func:`load_profile` takes (None: ``outcome``).
        catalog: the tool catalog for process rewards (None: the installed apps').

    Raises:
        RewardUnavailable: unscored trajectory, or an outcome the judge could not decide.
        ValueError: a bad profile.
    """
    prof = load_profile(profile)
    scores = traj.scores
    if scores is None:
        raise RewardUnavailable(f"episode {traj.episode_id} is not scored yet (finish it first)")
    terms = [_outcome_term(scores, prof), *behaviour_terms(scores, prof)]
    process = process_rewards(traj, scores, prof, catalog) if prof.has_process else []
    total = sum(t.contribution for t in terms) + sum(s.value for s in process)
    return RewardBreakdown(total=round(total, 12), profile=prof, terms=terms, process=process)


__all__ = [
    "BUILTIN_PROFILES",
    "OUTCOME",
    "SHAPED",
    "OutcomeBasis",
    "ProcessKind",
    "RewardBreakdown",
    "RewardProfile",
    "RewardTerm",
    "RewardUnavailable",
    "StepReward",
    "behaviour_terms",
    "episode_reward",
    "load_profile",
    "process_rewards",
]
