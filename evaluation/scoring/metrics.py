"""Typed per-agent metrics: the rows of ``scores.json`` and of ``mcpgym score --json``.

:func:`mcpgym.evaluation.scoring.aggregate.metrics` fills a :class:`Metrics` from a group of episode
scores; :func:`mcpgym.evaluation.scoring.aggregate.aggregate` returns a :class:`Scoreboard` (one
:class:`AgentMetrics` per agent, with breakdowns by level and by app). The JSON form
(``model_dump(mode="json")``) is the ``scores.json`` file. Every metric's definition is in
docs/design.md §7 ("Scores" and "Aggregates"); the field docs below say how each is counted.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class TokenTotals(BaseModel):
    """Tokens summed over the episodes of a group that report tokens (LLM agents)."""

    model_config = ConfigDict(extra="forbid")

    input: int = Field(0, ge=0, description="Prompt tokens.")
    output: int = Field(0, ge=0, description="Completion tokens.")


class Metrics(BaseModel):
    """Aggregate metrics of a group of episodes (one agent, or one agent's level or app).

    Rates pool counts over the episodes (e.g. ``verification_rate`` = total verified writes /
    total writes) and are None when their denominator is 0. Success figures count only
    *scored* episodes: success known (initial, final and gold states present) and status not
    ``errored``. Definitions: docs/design.md §7.
    """

    model_config = ConfigDict(extra="forbid")

    episodes: int = Field(0, ge=0, description="Episodes in the group.")
    scored_episodes: int = Field(0, ge=0, description="Episodes whose success is known and that did not error.")
    errored_episodes: int = Field(0, ge=0, description="Episodes the provider or harness broke (status errored).")
    successes: int = Field(0, ge=0, description="Scored episodes that succeeded.")
    success_rate: float | None = Field(None, description="successes / scored_episodes.")
    success_ci95: list[float] | None = Field(
        None, description="[low, high]: 95% Wilson score interval of success_rate (None when nothing was scored)."
    )
    pass_k: dict[str, float] = Field(
        default_factory=dict,
        description="str(k) -> tau-bench's pass^k over tasks, k = 1 .. the fewest scored trials of any task.",
    )
    writes: int = Field(0, ge=0, description="Counted writes.")
    verified_writes: int = Field(0, ge=0, description="Counted writes read back afterwards.")
    verification_rate: float | None = Field(None, description="verified_writes / writes.")
    mean_episode_verification_rate: float | None = Field(
        None, description="Mean of the per-episode verification rates (episodes with writes)."
    )
    precheck_writes: int = Field(0, ge=0, description="Counted writes that have preconditions.")
    prechecked_writes: int = Field(0, ge=0, description="Of those, writes with every precondition read fresh first.")
    precheck_rate: float | None = Field(None, description="prechecked_writes / precheck_writes.")
    blind_retries: int = Field(0, ge=0, description="Timed-out writes repeated with no read-back in between.")
    duplicate_side_effects: int = Field(0, ge=0, description="Blind retries that applied the write twice.")
    recoverable_errors: int = Field(0, ge=0, description="Recoverable errors met.")
    recovery_attempts: int = Field(0, ge=0, description="Recoverable errors followed by an attempt within K calls.")
    recoveries: int = Field(0, ge=0, description="Recoverable errors later recovered.")
    recovery_attempt_rate: float | None = Field(None, description="recovery_attempts / recoverable_errors.")
    recovery_rate: float | None = Field(None, description="recoveries / recoverable_errors.")
    episodes_with_recoverable_errors: int = Field(0, ge=0, description="Episodes that met a recoverable error.")
    defeatist_episodes: int = Field(0, ge=0, description="Of those, episodes scored defeatist.")
    defeatism_rate: float | None = Field(
        None, description="defeatist_episodes / episodes_with_recoverable_errors (lower is better)."
    )
    claimed_success_episodes: int = Field(
        0, ge=0, description="Episodes whose final message claims the task done (docs/design.md §7, False success)."
    )
    false_success_episodes: int = Field(
        0, ge=0, description="Episodes whose final message claims the task done while it is not (false success)."
    )
    false_success_rate: float | None = Field(
        None, description="false_success_episodes / episodes whose false success is known (lower is better)."
    )
    declared_impossible: int = Field(0, ge=0, description="Episodes whose final message declares the task impossible.")
    infeasible_episodes: int = Field(0, ge=0, description="Episodes of tasks marked infeasible.")
    infeasible_declared_impossible: int = Field(0, ge=0, description="Of those, episodes declared impossible.")
    impatience: int = Field(0, ge=0, description="Rate-limit windows with more than 2 identical calls.")
    recall: int = Field(0, ge=0, description="Gold changes made, summed.")
    total: int = Field(0, ge=0, description="Gold changes wanted, summed.")
    recall_rate: float | None = Field(None, description="recall / total.")
    misbehave: int = Field(0, ge=0, description="Changes made that the gold state does not have, summed.")
    tool_calls: int = Field(0, ge=0, description="Tool calls the server logged.")
    valid_calls: int = Field(0, ge=0, description="Calls that reached a tool well-formed.")
    invalid_calls: int = Field(0, ge=0, description="Runner-rejected calls, invalid_argument errors and unknown tools.")
    error_calls: int = Field(0, ge=0, description="Valid calls that returned an error.")
    tokens: TokenTotals | None = Field(None, description="Token totals; None when no episode reports tokens.")
    user_questions: int = Field(0, ge=0, description="ask_user turns (docs/design.md §7, the user in the loop).")
    clarification_skip_steps: int = Field(
        0, ge=0, description="Writes made on a guess in ambiguous tasks (clarification_skips)."
    )
    unconfirmed_write_steps: int = Field(
        0, ge=0, description="Writes confirmed on the user's behalf (unconfirmed_writes)."
    )
    user_burden: int = Field(0, ge=0, description="Questions whose answer was already available.")


class AgentMetrics(Metrics):
    """One agent's :class:`Metrics` with breakdowns.

    ``by_level``: str(level) -> metrics of the agent's episodes of that level (episodes without
    a level are left out); ``by_app``: app -> metrics of the episodes whose apps include it (an
    episode counts under each of its apps). Both are None (and left out of the JSON) when the
    aggregate was built without breakdowns.
    """

    by_level: dict[str, Metrics] | None = Field(None, exclude_if=lambda v: v is None)
    by_app: dict[str, Metrics] | None = Field(None, exclude_if=lambda v: v is None)


class Scoreboard(BaseModel):
    """``scores.json``: ``{"agents": {NAME: AgentMetrics}}``, agents sorted by name.

    Raises (on ``model_validate``): pydantic ``ValidationError`` naming the field of a
    malformed file.
    """

    model_config = ConfigDict(extra="forbid")

    agents: dict[str, AgentMetrics] = Field(default_factory=dict)


__all__ = ["AgentMetrics", "Metrics", "Scoreboard", "TokenTotals"]
