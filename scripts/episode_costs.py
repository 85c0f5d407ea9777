"""Time and tokens per episode of agents in run directories (docs/baselines.md).

``python scripts/episode_costs.py RUN_DIR AGENT [RUN_DIR AGENT ...]`` prints one Markdown row per
``(run directory, agent)``: the episodes counted (errored ones left out: their time is the
harness's deadline, not the agent's), the median and mean wall seconds of an episode (the
trajectory's ``metadata["wall_seconds"]``: from the world's creation to the judgement, so model
turns, tool calls and the simulated user's turns), and the mean input and output tokens the
provider reported. :func:`cost_rows` returns the same figures.

Raises (as a one-line error): an agent with no scored episode in its run, or an episode without
``wall_seconds`` or without a token count (a figure that cannot be computed is no zero).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from pydantic import BaseModel

from mcpgym.evaluation.records.trajectory import Trajectory

HEADER = (
    "| Agent | Episodes | Seconds per episode, median | mean | Input tokens per episode, mean | "
    "Output tokens per episode, mean |\n|---|---|---|---|---|---|"
)
"""The table's header and rule lines."""


class CostRow(BaseModel):
    """One agent's cost: episodes counted, wall seconds (median, mean), tokens (means)."""

    agent: str
    episodes: int
    seconds_median: float
    seconds_mean: float
    input_tokens_mean: float
    output_tokens_mean: float

    def markdown(self) -> str:
        """The row as a Markdown table line (seconds and tokens rounded to units)."""
        return (
            f"| {self.agent} | {self.episodes} | {self.seconds_median:,.0f} | {self.seconds_mean:,.0f} | "
            f"{self.input_tokens_mean:,.0f} | {self.output_tokens_mean:,.0f} |"
        )


def cost_row(agent: str, trajectories: list[Trajectory]) -> CostRow:
    """The cost of ``agent``'s episodes among ``trajectories`` (module docstring).

    Raises:
        ValueError: no non-errored episode of ``agent``, or one without wall seconds or tokens.
    """
    done = [t for t in trajectories if t.agent == agent and t.status != "errored"]
    if not done:
        raise ValueError(f"no scored episode of agent {agent!r}")
    walls, inputs, outputs = [], [], []
    for t in done:
        wall = t.metadata.get("wall_seconds")
        if wall is None or t.tokens is None:
            raise ValueError(f"episode {t.task_id} trial {t.trial} of {agent} has no wall_seconds or no tokens")
        walls.append(float(wall))
        inputs.append(t.tokens.input)
        outputs.append(t.tokens.output)
    return CostRow(
        agent=agent,
        episodes=len(done),
        seconds_median=statistics.median(walls),
        seconds_mean=statistics.fmean(walls),
        input_tokens_mean=statistics.fmean(inputs),
        output_tokens_mean=statistics.fmean(outputs),
    )


def cost_rows(pairs: list[tuple[Path, str]]) -> list[CostRow]:
    """:func:`cost_row` of each ``(run directory, agent)``, read with ``load_run``."""
    from mcpgym.evaluation.run.run_dir import load_run

    return [cost_row(agent, load_run(run, states=False)) for run, agent in pairs]


def main(argv: list[str] | None = None) -> None:
    """``RUN_DIR AGENT [RUN_DIR AGENT ...]``: print the Markdown table."""
    args = argv if argv is not None else sys.argv[1:]
    if not args or len(args) % 2:
        raise SystemExit("usage: python scripts/episode_costs.py RUN_DIR AGENT [RUN_DIR AGENT ...]")
    try:
        rows = cost_rows([(Path(args[i]), args[i + 1]) for i in range(0, len(args), 2)])
    except (ValueError, FileNotFoundError) as exc:
        raise SystemExit(f"error: {exc}") from None
    print(HEADER)
    for row in rows:
        print(row.markdown())


if __name__ == "__main__":
    main()
