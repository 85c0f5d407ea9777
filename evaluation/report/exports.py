"""``mcpgym export --format csv | leaderboard``: a run's episodes as CSV (one row per episode,
every score) and its leaderboard as JSON (per agent and condition: every rate with its 95%
interval, pass^k, tokens, cost). Columns and fields: docs/exports.md.

Cost comes from token counts and a price table the user gives (``--prices FILE``, JSON or
YAML, US dollars per million tokens)::

    {"prices": {"openai:gpt-4o-mini": {"input_per_million": 0.15, "output_per_million": 0.60}}}

An agent is looked up by its name, then by its model (the name after the provider prefix,
``gpt-4o-mini``). A cost that cannot be computed (no tokens, no price) is empty in the CSV and
null in the JSON, with the reason in ``cost_note``: never a zero.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcpgym.evaluation.records.condition import condition_key
from mcpgym.evaluation.records.scores import AgentMetrics, EpisodeScores
from mcpgym.evaluation.records.statistics import wilson_interval
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.kernel.bounded_json import load_json
from mcpgym.kernel.exceptions import InputError
from mcpgym.kernel.input_files import load_yaml, read_input_text, yaml_error_text
from mcpgym.kernel.shorten import short

CSV_COLUMNS: tuple[str, ...] = (
    "run",
    "agent",
    "task_id",
    "trial",
    "level",
    "apps",
    "fault_profile",
    "fault_seed",
    "tools",
    "status",
    "success",
    "recall",
    "total",
    "misbehave",
    "writes",
    "verified_writes",
    "verification_rate",
    "verification_skips",
    "precheck_writes",
    "prechecked_writes",
    "precheck_rate",
    "precheck_skips",
    "blind_retries",
    "duplicate_side_effects",
    "recoverable_errors",
    "recovery_attempts",
    "recoveries",
    "claimed_success",
    "false_success",
    "declared_impossible",
    "defeatism",
    "impatience",
    "tool_calls",
    "valid_calls",
    "invalid_calls",
    "error_calls",
    "user_questions",
    "clarification_skips",
    "unconfirmed_writes",
    "user_burden",
    "tokens_input",
    "tokens_output",
    "cost_usd",
    "episode_id",
    "stop_reason",
    "unfounded_refusal",
    "unknown_kind_calls",
    "error_rules",
    "condition",
)
"""The CSV's columns, in order (stable: new columns are only ever appended; docs/exports.md
describes each). List scores (``verification_skips``, ``precheck_skips``,
``clarification_skips``, ``unconfirmed_writes``, ``error_rules``) are their counts."""

CSV_HEADER_PREFIX = "run,agent,task_id,trial,"
"""How every CSV ``export`` writes begins (how ``--force`` knows an earlier one)."""

LEADERBOARD_HEADER = '{\n  "mcpgym_leaderboard": 1,'
"""How every leaderboard JSON ``export`` writes begins."""


class Price(BaseModel):
    """One model's price: US dollars per million input and output tokens."""

    model_config = ConfigDict(extra="forbid")

    input_per_million: float = Field(ge=0, allow_inf_nan=False)
    output_per_million: float = Field(ge=0, allow_inf_nan=False)


class PriceTable(BaseModel):
    """``--prices FILE``: agent name or model -> :class:`Price`."""

    model_config = ConfigDict(extra="forbid")

    prices: dict[str, Price] = Field(default_factory=dict)

    def price_for(self, agent: str) -> Price | None:
        """The price of ``agent`` (by name, then by the model after its ``provider:`` prefix), or None."""
        if agent in self.prices:
            return self.prices[agent]
        model = agent.split(":", 1)[1] if ":" in agent else None
        return self.prices.get(model) if model is not None else None


def load_prices(path: str | Path) -> PriceTable:
    """Read a price table (JSON, or YAML by its ``.yaml`` / ``.yml`` suffix).

    Raises:
        InputError: a missing or unreadable file, or one that is not a price table (the
            message names the file and the field); a key given twice (named).
    """
    p = Path(path)
    text = read_input_text(p, what="--prices")  # bounded; a FIFO or a folder is refused by name
    is_yaml = p.suffix in (".yaml", ".yml")
    try:
        data = load_yaml(text) if is_yaml else load_json(text, unique_keys=True)
    except yaml.YAMLError as exc:
        raise InputError(f"--prices {short(str(p))}: not usable YAML ({yaml_error_text(exc)})") from None
    except ValueError as exc:
        raise InputError(f"--prices {short(str(p))}: not usable JSON ({exc})") from None
    try:
        return PriceTable.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "(top level)"
        raise InputError(f"--prices {short(str(p))}: field {where}: {first['msg']}") from None


def episode_cost(sc: EpisodeScores, prices: PriceTable | None) -> tuple[float | None, str | None]:
    """An episode's cost in US dollars and, when it cannot be computed, why."""
    if sc.tokens is None:
        return None, "no token counts (a scripted agent, or a provider that reports none)"
    if prices is None:
        return None, "no --prices given"
    price = prices.price_for(sc.agent)
    if price is None:
        return None, f"no price for {sc.agent} in --prices"
    return (sc.tokens.input * price.input_per_million + sc.tokens.output * price.output_per_million) / 1e6, None


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection"):
a text cell that starts with one is written with a ``'`` before it (docs/exports.md)."""


def csv_cell(value: Any) -> str:
    """One CSV cell: empty for None, ``true`` / ``false``, a float by its ``repr``, an integer
    as is; any other value as text, prefixed with ``'`` when it starts with one of
    :data:`FORMULA_STARTS` (a task id, an agent name or a stop reason from a transcript
    ``=HYPERLINK(...)`` is shown, never run, by a spreadsheet). Numbers mcpgym computed
    (``-0.5``) are not prefixed: they are numbers, not formulas."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        return str(value)
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def episodes_csv(
    pairs: Sequence[tuple[Trajectory, EpisodeScores]], run: str, tools: str, prices: PriceTable | None = None
) -> str:
    """The CSV text: :data:`CSV_COLUMNS` then one row per episode (empty cell: unknown; every
    cell through :func:`csv_cell`, so none starts as a formula)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")  # RFC 4180: a CR or LF inside a cell is then quoted
    writer.writerow(CSV_COLUMNS)
    for traj, sc in pairs:
        cost, _ = episode_cost(sc, prices)
        row: dict[str, Any] = {name: getattr(sc, name, None) for name in CSV_COLUMNS}
        row.update(
            run=run,
            agent=sc.agent or "external",
            apps=";".join(sc.apps),
            fault_profile=traj.fault_profile,
            fault_seed=traj.fault_seed,
            tools=traj.condition.tools if traj.condition is not None else tools,
            status=sc.status.value,
            verification_skips=len(sc.verification_skips),
            precheck_skips=len(sc.precheck_skips),
            clarification_skips=len(sc.clarification_skips),
            unconfirmed_writes=len(sc.unconfirmed_writes),
            error_rules=len(sc.error_rules),
            tokens_input=sc.tokens.input if sc.tokens else None,
            tokens_output=sc.tokens.output if sc.tokens else None,
            cost_usd=cost,
            stop_reason=traj.stop_reason,
            condition=traj.condition.label if traj.condition is not None else None,
        )
        writer.writerow([csv_cell(row[name]) for name in CSV_COLUMNS])
    return buf.getvalue()


class RateEntry(BaseModel):
    """A rate with its counts and 95% Wilson interval (None when its denominator is 0)."""

    rate: float | None
    ci95: list[float] | None
    numerator: int
    denominator: int


def _rate(num: int, den: int) -> RateEntry:
    return RateEntry(rate=num / den if den else None, ci95=wilson_interval(num, den), numerator=num, denominator=den)


class LeaderboardRow(BaseModel):
    """One agent under one condition: episodes, every rate with its interval, pass^k, tokens, cost."""

    agent: str
    condition: dict[str, str]
    episodes: int
    scored_episodes: int
    errored_episodes: int
    rates: dict[str, RateEntry]
    pass_k: dict[str, float]
    tokens: dict[str, int] | None
    cost_usd: float | None
    cost_per_episode_usd: float | None
    cost_per_success_usd: float | None
    cost_note: str | None = None


RATE_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("success", "successes", "scored_episodes"),
    ("recall", "recall", "total"),
    ("verification", "verified_writes", "writes"),
    ("precheck", "prechecked_writes", "precheck_writes"),
    ("recovery_attempt", "recovery_attempts", "recoverable_errors"),
    ("recovery", "recoveries", "recoverable_errors"),
    ("defeatism", "defeatist_episodes", "episodes_with_recoverable_errors"),
    ("false_success", "false_success_episodes", "__known_claims"),
)
"""Leaderboard rate name -> its numerator and denominator fields of the agent's aggregate."""


def leaderboard_rows(
    scores: dict[str, AgentMetrics],
    episodes: Sequence[EpisodeScores],
    condition: dict[str, str],
    prices: PriceTable | None = None,
) -> list[LeaderboardRow]:
    """One :class:`LeaderboardRow` per agent of ``scores`` (the run's aggregates): per agent and
    condition in a run with condition axes (a row's ``condition`` is then its own, else the
    run's ``condition``)."""
    rows = []
    for name, m in scores.items():
        mine = [
            e
            for e in episodes
            if condition_key(e.agent or "external", e.condition) == name and e.status != EpisodeStatus.ERRORED
        ]
        rates = {}
        for key, num, den in RATE_FIELDS:
            d = m.episodes - m.errored_episodes if den == "__known_claims" else getattr(m, den)
            rates[key] = _rate(int(getattr(m, num)), int(d))
        costs = [episode_cost(e, prices) for e in mine]
        known = [c for c, _ in costs if c is not None]
        note = next((why for c, why in costs if c is None), None)
        total = sum(known) if known and len(known) == len(costs) else None
        rows.append(
            LeaderboardRow(
                agent=m.agent or name,
                condition={"faults": m.condition.faults, "tools": m.condition.tools} if m.condition else condition,
                episodes=m.episodes,
                scored_episodes=m.scored_episodes,
                errored_episodes=m.errored_episodes,
                rates=rates,
                pass_k=m.pass_k,
                tokens={"input": m.tokens.input, "output": m.tokens.output} if m.tokens else None,
                cost_usd=total,
                cost_per_episode_usd=total / len(mine) if total is not None and mine else None,
                cost_per_success_usd=total / m.successes if total is not None and m.successes else None,
                cost_note=None if total is not None else note,
            )
        )
    return rows


def leaderboard_json(rows: list[LeaderboardRow], run: str) -> str:
    """The leaderboard document: ``{"mcpgym_leaderboard": 1, "run": ..., "rows": [...]}``."""
    doc = {"mcpgym_leaderboard": 1, "run": run, "rows": [r.model_dump(mode="json") for r in rows]}
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    assert text.startswith(LEADERBOARD_HEADER)
    return text


__all__ = [
    "CSV_COLUMNS",
    "CSV_HEADER_PREFIX",
    "FORMULA_STARTS",
    "LEADERBOARD_HEADER",
    "LeaderboardRow",
    "Price",
    "PriceTable",
    "RATE_FIELDS",
    "RateEntry",
    "csv_cell",
    "episode_cost",
    "episodes_csv",
    "leaderboard_json",
    "leaderboard_rows",
    "load_prices",
]
