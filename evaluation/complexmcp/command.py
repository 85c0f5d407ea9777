"""The command lines of the complexmcp suite: ``mcpgym complexmcp setup`` and
``mcpgym run --suite complexmcp --complexmcp DIR`` (docs/complexmcp.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from mcpgym.kernel.wording import counted

complexmcp_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    help="ComplexMCP's own benchmark (its seven apps, 47 tasks and judge) under mcpgym (docs/complexmcp.md).",
)

LOCK_COMMAND = "mcpgym run --suite complexmcp"
"""What the lock of an output directory of the complexmcp suite names as its holder."""


def _fail(message: str, code: int = 2) -> None:
    typer.secho(f"error: {' '.join(message.split())}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


@complexmcp_app.command("setup")
def setup_command(
    folder: Path = typer.Option(..., "--dir", metavar="DIR", help="The folder to set up (new or empty)."),
    source: Path | None = typer.Option(
        None,
        "--source",
        metavar="TREE",
        help="The ComplexMCP tree (default: $MCPGYM_COMPLEXMCP_SOURCE, else the folder shared/complexmcp beside the repository).",
    ),
) -> None:
    """Copy ComplexMCP's apps into DIR and build their own virtual environment (the versions
    their requirements.txt pins); a DIR set up before is checked and reused."""
    from mcpgym.evaluation.complexmcp.install import SetupError, setup

    try:
        setup(folder, source, echo=typer.echo)
    except SetupError as exc:
        _fail(str(exc), 1)


def summary_lines(trajs: list[Any]) -> list[str]:
    """Their judge beside mcpgym's behaviour scores, per agent: accuracy (solved tasks),
    mean completion and misbehave rates (their per-task rates), then mcpgym's success rate,
    verification, recovery and defeatism rates (:class:`~mcpgym.evaluation.records.scores.Metrics`)."""
    from mcpgym.evaluation.records.scores import EpisodeScores
    from mcpgym.evaluation.scoring.complexmcp_rule import ComplexJudgement

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.0f}%"

    lines = [
        "agent | episodes | accuracy | completion | misbehave rate | verification | recovery | defeatism",
        "--- | ---: | ---: | ---: | ---: | ---: | ---: | ---:",
    ]
    for agent in sorted({t.agent for t in trajs}):
        mine = [t for t in trajs if t.agent == agent and t.scores is not None]
        judged = [
            ComplexJudgement(total=t.scores.total or 0, recall=t.scores.recall or 0, misbehave=t.scores.misbehave or 0)
            for t in mine
        ]
        n = len(judged)
        metrics = EpisodeScores.aggregate([t.scores for t in mine])
        acc = sum(j.solved for j in judged) / n if n else None
        completion = sum(j.recall_rate for j in judged) / n if n else None
        misbehave = sum(j.misbehave_rate for j in judged) / n if n else None
        lines.append(
            f"{agent} | {n} | {pct(acc)} | {pct(completion)} | {misbehave if misbehave is None else f'{misbehave:.2f}'} | "
            f"{pct(metrics.verification_rate)} | {pct(metrics.recovery_rate)} | {pct(metrics.defeatism_rate)}"
        )
    return lines


def run_complexmcp_command(flags: dict[str, Any], folder: Path | None, fault_seed: int) -> None:
    """``mcpgym run --suite complexmcp --complexmcp DIR``: check the options, run, record into
    ``--out``, print one line per episode and the summary.

    Raises:
        typer.Exit: 2 for bad input, 1 when the apps or their sessions failed.
    """
    from mcpgym.evaluation.complexmcp.apps import AppsError
    from mcpgym.evaluation.complexmcp.install import SetupError
    from mcpgym.evaluation.complexmcp.sessions import SessionError
    from mcpgym.evaluation.complexmcp.suite import run_suite
    from mcpgym.evaluation.proxy.record import hold_record_dir

    if folder is None:
        _fail("--suite complexmcp needs --complexmcp DIR, a folder made by: mcpgym complexmcp setup --dir DIR")
    if not flags.get("agent"):
        _fail("--suite complexmcp needs --agent SPEC (complexmcp-replay, or an LLM spec such as local:...)")
    out = flags.get("out")
    if out is None:
        _fail("--suite complexmcp needs --out DIR")
    assert folder is not None and out is not None
    trajs: list[Any] = []
    try:
        with hold_record_dir(
            out, resume=False, force=bool(flags.get("force")), option="--out", command=LOCK_COMMAND
        ) as held:

            def record(traj: Any, classifier: Any) -> None:
                held.record(traj, classifier)
                trajs.append(traj)
                s = traj.scores
                typer.echo(
                    f"{traj.task_id} {traj.agent} trial {traj.trial}: {traj.status}, solved {s.success} "
                    f"(recall {s.recall}/{s.total}, misbehave {s.misbehave}), "
                    f"{counted(s.tool_calls, 'call')}, {counted(len(traj.ledger or []), 'fault')}"
                )

            run_suite(
                folder,
                list(flags["agent"]),
                faults=flags.get("faults") or "none",
                fault_seed=fault_seed,
                trials=int(flags.get("trials") or 1),
                tools=flags.get("tools_mode") or "list_all",
                task_ids=list(flags.get("task") or []) or None,
                timeout=float(flags.get("timeout") or 600.0),
                on_episode=record,
                model_context=flags.get("model_context"),
            )
    except (SetupError, AppsError, SessionError, RuntimeError) as exc:
        _fail(str(exc), 1)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    for line in summary_lines(trajs):
        typer.echo(line)
    typer.echo(f"trajectories: {Path(out) / 'trajectories.jsonl'} (rescore: mcpgym score {out})")
