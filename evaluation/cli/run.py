"""``mcpgym run``: a thin adapter over :func:`mcpgym.evaluation.run.launch.plan` and
:class:`~mcpgym.evaluation.run.launch.RunPlan`.

The command's options are generated from :class:`~mcpgym.evaluation.run.config.RunConfig`:
every field's :class:`~mcpgym.evaluation.run.config.Flag` metadata is one option, in field
order (:func:`config_parameters`), and :func:`config_from_flags` turns the parsed options back
into a config. A new run option is therefore a field of ``RunConfig`` and nothing here; only
the ``--proxy`` options, which run something else (:mod:`mcpgym.evaluation.proxy.run`), are
declared in this module.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import typer

from mcpgym.evaluation.cli.common import console, finite_number, given
from mcpgym.evaluation.cli.style import DEBUG, INTERRUPT_SAID
from mcpgym.evaluation.run.config import Executor, Flag, RunConfig
from mcpgym.kernel.exceptions import InputError, RunDirectoryError
from mcpgym.kernel.wording import counted


def _flags() -> list[tuple[str, Flag]]:
    """``(field name, flag)`` of every ``RunConfig`` flag, in field order."""
    return [(name, m) for name, info in RunConfig.model_fields.items() for m in info.metadata if isinstance(m, Flag)]


def _param(name: str, flag: Flag) -> str:
    """The command's parameter name of ``flag`` (on field ``name``)."""
    return flag.param or flag.key or name


def config_parameters() -> list[inspect.Parameter]:
    """The ``mcpgym run`` parameters of :class:`RunConfig`'s flags (typer options), in order."""
    params = []
    for name, flag in _flags():
        info = RunConfig.model_fields[name]
        annotation: Any
        default: Any
        origin = getattr(info.annotation, "__origin__", None)
        if flag.pairs or origin is list:
            annotation, default = (list[Path] | None if flag.path else list[str] | None), None
        elif flag.key is not None:
            annotation, default = (flag.type or str) | None, None
        elif info.annotation is bool:
            annotation, default = bool, False
        else:
            annotation, default = info.annotation, info.get_default(call_default_factory=True)
        bounds: dict[str, Any] = {"min": flag.min, "max": flag.max}
        if flag.type is float or info.annotation in (float, float | None):
            # min/max stay for the help's range; the parser checks them (and refuses NaN, inf)
            bounds["parser"] = finite_number(flag.min, flag.max)
        option = typer.Option(default, *flag.names, metavar=flag.metavar, help=flag.help, **bounds)
        params.append(
            inspect.Parameter(_param(name, flag), inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation)
        )
    return params


def config_from_flags(flags: dict[str, Any]) -> tuple[RunConfig, set[str]]:
    """The :class:`RunConfig` of parsed ``mcpgym run`` options, and the fields the command
    line gave (for ``--resume``: the others are the run's own).

    Raises:
        InputError: for a bad ``--agent-option`` or LLM setting, or a value ``RunConfig`` refuses.
    """
    from mcpgym.evaluation.llm.options import agent_options

    data: dict[str, Any] = {}
    named: dict[str, dict[str, Any]] = {}
    pairs: dict[str, list[str]] = {}
    given_fields: set[str] = set()
    for name, flag in _flags():
        param = _param(name, flag)
        value = flags[param]
        if given(param):
            given_fields.add(name)
        if flag.key is not None:
            named.setdefault(name, {})[flag.key] = value
        elif flag.pairs:
            pairs[name] = list(value or [])
        elif flag.invert:
            data[name] = not value
        elif isinstance(value, list):
            data[name] = [str(v) for v in value]  # paths are recorded as text
        elif value is not None or getattr(RunConfig.model_fields[name].annotation, "__origin__", None) is not list:
            data[name] = value
    try:
        for name in {*named, *pairs}:
            data[name] = agent_options(pairs.get(name, ()), **named.get(name, {}))
    except ValueError as exc:
        raise InputError(str(exc)) from None
    return RunConfig.build(data), given_fields


def _early_server(config: RunConfig) -> Any:
    """Start the server a local run will spawn before this process's heavy imports and task
    loading, so that the two start-ups overlap (a :class:`~mcpgym.evaluation.run.server_process.ServerStart`),
    or None when the run will not spawn one (``--server``, ``--executor ray``)."""
    if config.server_url or config.executor is not Executor.local:
        return None
    from mcpgym.evaluation.run.server_process import start_server

    return start_server(max_episodes=max(100, config.concurrency * 4))


def interrupt_message(out: Path) -> str:
    """What ``mcpgym run`` says when interrupted: the files of ``out`` that exist, and how to go on.

    Names ``trajectories.jsonl`` only when it holds a finished episode, and ``scores.json``
    only when it was written; a run stopped before its first episode says so (its directory
    can be used again as it is; ``--resume`` is named only once the manifest, the run's plan,
    was written: without it a resume is refused).
    """
    from mcpgym.evaluation.records.manifest import MANIFEST_NAME
    from mcpgym.evaluation.run.run_dir import trajectories_file

    traj = trajectories_file(out)
    has_lines = traj.is_file() and bool(traj.read_bytes().strip())
    if not has_lines:
        resume = f" (or --resume --out {out})" if (out / MANIFEST_NAME).is_file() else ""  # no plan: no resume
        return (
            f"interrupted before any episode finished: nothing to keep in {out}; run again with the same --out{resume}"
        )
    files = [str(traj)] + [str(out / name) for name in ("scores.json",) if (out / name).is_file()]
    return f"interrupted: the finished episodes are in {' and '.join(files)}; continue with --resume --out {out}"


def resolve_config(config: RunConfig, given_fields: set[str]) -> RunConfig:
    """``config`` with what ``--resume`` takes from the run in ``--out`` and what a person
    playing (``--agent human``) needs: one episode at a time, no progress bar over the
    prompt, an hour per episode unless ``--timeout`` says otherwise.

    Raises:
        InputError: ``--resume`` without ``--out``, or a run manifest that cannot be read
            (the message names the file).
    """
    from mcpgym.evaluation.records.manifest import read_manifest
    from mcpgym.evaluation.run.config import resume_config
    from mcpgym.evaluation.run.run_owner import ForeignContentError, check_unmarked_manifest

    if config.resume:
        if config.out is None:
            raise InputError("--resume needs --out DIR (the run to continue)")
        try:
            manifest = read_manifest(config.out)
        except ValueError as exc:
            raise InputError(f"cannot resume: {exc}") from None
        if manifest is not None:
            try:
                check_unmarked_manifest(config.out, manifest)
            except ForeignContentError as exc:
                raise RunDirectoryError(str(exc)) from None
            config = resume_config(config, given_fields, manifest)
    if "human" in config.agents:
        update: dict[str, Any] = {"concurrency": 1, "progress": False}
        if "episode_timeout" not in given_fields:
            update["episode_timeout"] = 3600.0
        config = config.model_copy(update=update)
    return config


def run(**flags: Any) -> None:
    """Evaluate agents on a task suite and print the comparison table.

    Runs tasks x trials x agents against an mcpgym server (spawned unless --server is given)
    and writes trajectories.jsonl.zst (one zstd frame per line; `mcpgym cat` prints it),
    snapshots/, scores.json, manifest.json, report.md and report.html into the run directory. With --proxy: agents on the --tasks file's instructions against an
    outside MCP server through mcpgym proxy (docs/proxy.md); trajectories.jsonl and
    catalog.json in --out.
    """
    proxy, catalog, fault_seed = flags.pop("proxy"), flags.pop("catalog"), flags.pop("fault_seed")
    complexmcp = flags.pop("complexmcp")
    if flags.get("suite") == "complexmcp":  # ComplexMCP's own apps and tasks (docs/complexmcp.md)
        from mcpgym.evaluation.complexmcp.command import run_complexmcp_command

        run_complexmcp_command(flags, complexmcp, fault_seed)
        return
    if proxy is not None:
        from mcpgym.evaluation.proxy.run import run_proxy_command

        run_proxy_command(
            proxy,
            flags["task_file"],
            flags["agent"],
            flags["out"],
            flags["faults"],
            fault_seed,
            flags["trials"],
            catalog,
            flags["timeout"],
            resume=flags["resume"],
            force=flags["force"],
        )
        return
    config, given_fields = config_from_flags(flags)
    early = _early_server(config)
    try:
        from mcpgym.evaluation.run.launch import plan

        checked = plan(resolve_config(config, given_fields))
    except BaseException:  # a refusal or an interrupt before the run: stop the early server
        if early is not None:
            early.cancel()
        raise
    out = checked.config.out
    assert out is not None
    try:
        result = checked.run(server_start=early)
    except OSError as exc:  # an unwritable or impossible --out (e.g. /proc/nope)
        if DEBUG["on"]:
            raise
        from mcpgym.evaluation.run.run_owner import dir_path_problem

        raise RunDirectoryError(dir_path_problem(Path(out), "--out", exc) or f"--out {out}: {exc}") from None
    except KeyboardInterrupt:
        typer.secho(interrupt_message(out), fg=typer.colors.YELLOW, err=True)
        INTERRUPT_SAID["said"] = True
        raise typer.Exit(130) from None
    _print_result(checked, result)


def _print_result(checked: Any, result: Any) -> None:
    """The comparison table, the report's paths and the warnings of a finished run; exits 1
    when episodes could not be run, or when most episodes errored (their first causes on stderr)."""
    from mcpgym.evaluation.records.manifest import read_manifest
    from mcpgym.evaluation.report.run_report import (
        pass_k_warning,
        print_comparison,
        with_listed_agents,
        write_report,
    )
    from mcpgym.evaluation.run.run_dir import trajectories_file
    from mcpgym.evaluation.run.run_owner import ForeignContentError

    if result.failures and not result.scores.agents:
        # No episode finished: there is nothing to report, and the failures are the news.
        _print_failures(result.failures, nothing_written=True)
        raise typer.Exit(1)
    try:
        md, html = write_report(result.out, rescore=False)  # its scores were computed just now
    except ForeignContentError as exc:
        raise RunDirectoryError(f"the run is recorded, but its report was not written: {exc}") from None
    config = checked.config
    picked = (
        f"suite {checked.suite}: "
        if checked.suite and not config.task_ids
        else f"{', '.join(Path(f).name for f in config.task_files)}: "
        if config.task_files
        else ""
    )
    scored = sum(row.scored_episodes for row in result.scores.agents.values())
    errored_n = sum(row.errored_episodes for row in result.scores.agents.values())
    axis = config.condition_axis()
    setup = (
        f"faults {config.faults}"
        if axis is None
        else f"{counted(len(axis.faults) * len(axis.tools), 'condition')} (faults {','.join(axis.faults)} x tools {','.join(axis.tools)})"
    )
    title = (
        f"{picked}{counted(len(checked.tasks), 'task')} x {counted(config.trials, 'trial')}, {setup}: "
        f"{counted(result.ran, 'episode')} run"
        + (f", {result.skipped} resumed" if result.skipped else "")
        + f" in {result.wall_seconds:.1f} s; {scored} scored, {errored_n} errored in all"
        + (f" ({result.retried} sent again after a lost Ray worker)" if result.retried else "")
    )
    listed = with_listed_agents(result.scores, read_manifest(result.out))  # a row for an agent with no episode
    print_comparison(console(), listed, title=title)
    pk_warning = pass_k_warning(listed)
    if pk_warning:
        typer.secho(pk_warning, fg=typer.colors.RED, err=True)
    failed = _warn_errored(result.out)
    _warn_text_calls(result.out)
    typer.echo(
        f"report: {html} (and {md.name})\ntrajectories: {trajectories_file(result.out)}\n"
        f"scores: {result.out / 'scores.json'}"
    )
    if result.failures:
        _print_failures(result.failures)
        raise typer.Exit(1)
    if failed:
        raise typer.Exit(1)


def _warn_errored(out: Path) -> bool:
    """Print on stderr how many episodes of the run in ``out`` errored and their first causes
    (endpoint, status, attempts: :mod:`mcpgym.evaluation.report.errored`); True when most of
    them errored (the run failed: exit 1)."""
    from mcpgym.evaluation.records.compressed import trajectories_file
    from mcpgym.evaluation.records.trajectory import read_trajectories
    from mcpgym.evaluation.report.errored import errored_causes, errored_lines, mostly_errored

    causes, errored, total = errored_causes(
        read_trajectories(trajectories_file(out), tolerate_truncated_tail=True, states=False)
    )
    failed = mostly_errored(errored, total)
    lines = errored_lines(causes, errored, total)
    if lines:
        lines[0] = ("ERROR: " if failed else "WARNING: ") + lines[0]
        colour = typer.colors.RED if failed else typer.colors.YELLOW
        for i, line in enumerate(lines):
            typer.secho(line if i == 0 else f"  {line}", fg=colour, err=True)
    return failed


def _warn_text_calls(out: Path) -> None:
    """Warn loudly (stderr) when episodes of the run in ``out`` ended with a tool call written
    as text that the model's server did not parse (:mod:`mcpgym.evaluation.llm.flags`)."""
    from mcpgym.evaluation.llm.flags import count_flags, text_call_warning
    from mcpgym.evaluation.records.compressed import trajectories_file
    from mcpgym.evaluation.records.trajectory import read_trajectories

    counts = count_flags(read_trajectories(trajectories_file(out), tolerate_truncated_tail=True, states=False))
    if counts["tool_calls_as_text"]:
        typer.secho(f"WARNING: {text_call_warning(counts['tool_calls_as_text'])}", fg=typer.colors.RED, err=True)
    quiet = {k: v for k, v in counts.items() if v and k != "tool_calls_as_text"}
    if quiet:
        typer.secho(
            "episodes flagged: " + ", ".join(f"{k} {v}" for k, v in quiet.items()) + " (see the report)",
            fg=typer.colors.YELLOW,
            err=True,
        )


def _print_failures(failures: list[tuple[str, str]], nothing_written: bool = False) -> None:
    """List on stderr the episodes the harness could not run (``(label, message)`` pairs, at
    most 20 shown); ``nothing_written``: no episode finished, so no report was written."""
    err = console(stderr=True)
    head = f"{counted(len(failures), 'episode')} could not be run (not written; --resume retries them)"
    if nothing_written:
        head = f"no episode finished, so there is no report: {head}"
    err.print(f"[red]{head}:")
    for label, message in failures[:20]:
        err.print(f"  {label}: {message}", markup=False)
    if len(failures) > 20:
        err.print(f"  ... and {len(failures) - 20} more", markup=False)


_PROXY_PARAMETERS = [
    inspect.Parameter(
        "proxy",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=str | None,
        default=typer.Option(
            None,
            "--proxy",
            metavar="UPSTREAM",
            help="Run against this MCP server through mcpgym proxy: its command line (one quoted argument) or its streamable-HTTP URL; --tasks gives instructions and checks (docs/proxy.md).",
        ),
    ),
    inspect.Parameter(
        "catalog",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=Path | None,
        default=typer.Option(
            None, "--catalog", metavar="FILE", help="--proxy: a JSON catalog classifying the server's tools."
        ),
    ),
    inspect.Parameter(
        "fault_seed",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=int,
        default=typer.Option(
            0, "--fault-seed", min=0, metavar="N", help="--proxy: fault seed of trial 0 (trial t: N + t)."
        ),
    ),
    inspect.Parameter(
        "complexmcp",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=Path | None,
        default=typer.Option(
            None,
            "--complexmcp",
            metavar="DIR",
            help="--suite complexmcp: the folder of `mcpgym complexmcp setup --dir DIR` (docs/complexmcp.md).",
        ),
    ),
]
"""The options of ``mcpgym run --proxy`` (:mod:`mcpgym.evaluation.proxy.run`), after the config's."""

_PARAMETERS = [*config_parameters(), *_PROXY_PARAMETERS]
run.__signature__ = inspect.Signature(_PARAMETERS, return_annotation=None)  # type: ignore[attr-defined]
run.__annotations__ = {p.name: p.annotation for p in _PARAMETERS} | {"return": None}


__all__ = ["config_from_flags", "config_parameters", "interrupt_message", "resolve_config", "run"]
