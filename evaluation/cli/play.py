"""``mcpgym play TASK``: a person plays one task as the agent, in the terminal (a human baseline).

The episode runs like any other (its own server, the task's world and fault seeds, the fault
profile), with :class:`mcpgym.evaluation.agents.human.HumanAgent` as the agent; it is recorded
in a run directory and scored like any trajectory, and its scores are printed at the end.
``mcpgym run --agent human`` plays a whole suite the same way.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer

from mcpgym.evaluation.cli.common import finite_number
from mcpgym.evaluation.cli.style import message as error_text
from mcpgym.evaluation.run.run_owner import DirFlags
from mcpgym.kernel.exceptions import UnknownName

PLAY_FLAGS = DirFlags(command="mcpgym play", option="--out", resume=None, force="--force")
"""``mcpgym play``'s directory options, for the refusals of its --out: it has no --resume."""


def play(
    task_id: str = typer.Argument(..., metavar="TASK_ID", help="The task to play (`mcpgym tasks` lists them)."),
    faults: str = typer.Option("default", metavar="PROFILE", help="Fault profile: none, default, harsh, or a file."),
    trials: int = typer.Option(1, min=1, max=20, metavar="N", help="Trials in a row (each its own fault seed)."),
    out: Path | None = typer.Option(
        None, "--out", "-o", metavar="DIR", help="Run directory (default: runs/play-<UTC time>)."
    ),
    timeout: float = typer.Option(
        3600.0, min=10.0, parser=finite_number(10.0, None), metavar="SECONDS", help="Wall seconds per episode."
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace the run files of an --out that holds an earlier mcpgym run (an --out holding "
        "files mcpgym did not write is refused, and nothing in it is deleted).",
    ),
) -> None:
    """Play a task as the agent: read the instruction, call tools as TOOL {json}, answer TEXT.

    The episode is recorded in --out (trajectories.jsonl.zst, scores.json, manifest.json,
    report.md, report.html) and scored like any agent's; type help during play for the commands.
    """
    from mcpgym.evaluation import tasks as registry
    from mcpgym.evaluation.agents.human import HumanAgent
    from mcpgym.evaluation.records.compressed import trajectories_file
    from mcpgym.evaluation.records.scores import EpisodeScores
    from mcpgym.evaluation.records.trajectory import read_trajectories
    from mcpgym.evaluation.report.run_report import write_report
    from mcpgym.evaluation.run.config import RunConfig
    from mcpgym.evaluation.run.runner import AgentEntry, run_evaluation
    from mcpgym.tools.faults import load_profile

    try:
        task = registry.get_task(task_id)
    except KeyError as exc:  # the closest known ids, without the quotes str() adds
        raise UnknownName(error_text(exc)) from None
    load_profile(faults)  # FaultProfileError: an InputError naming the profile
    human = HumanAgent()
    out = out or Path("runs") / time.strftime("play-%Y%m%d-%H%M%S", time.gmtime())
    settings = RunConfig(
        out=out,
        trials=trials,
        faults=faults,
        concurrency=1,
        episode_timeout=timeout,
        progress=False,
        force=force,
    )
    result = run_evaluation([task], [AgentEntry(human.name, human)], settings, flags=PLAY_FLAGS)
    if result.failures:
        for label, message in result.failures:
            typer.secho(f"{label}: {message}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1)
    write_report(result.out, rescore=False)
    console = human.console
    console.rule("scores")
    for traj in read_trajectories(trajectories_file(result.out), states=False):
        sc = traj.scores or EpisodeScores()
        console.print(
            f"trial {traj.trial}: status {traj.status}, success {sc.success}, "
            f"{sc.valid_calls} valid / {sc.invalid_calls} invalid / "
            f"{sc.error_calls} error calls, verification {sc.verification_rate}, "
            f"recoverable errors {sc.recoverable_errors} (recovered {sc.recoveries}), "
            f"defeatism {sc.defeatism}",
            markup=False,
            highlight=False,
        )
    typer.echo(f"trajectory: {trajectories_file(result.out)}\nreport: {result.out / 'report.html'}")


__all__ = ["PLAY_FLAGS", "play"]
