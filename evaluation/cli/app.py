"""The ``mcpgym`` command line.

Subcommands: ``serve`` (MCP server over stdio or HTTP, or OpenEnv's reset/step/state),
``tools`` (the tool catalog), ``tasks`` (the task registry), ``run`` (evaluate agents),
``score`` (score runs or external trajectories), ``export`` (a run as ATIF), ``report``
(Markdown + HTML report of a run).
"""

from __future__ import annotations

import contextlib
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mcpgym.evaluation.cli.style import DEBUG, MCPGymGroup
from mcpgym.evaluation.proxy.command import proxy as _proxy_command
from mcpgym.kernel.shorten import cap_message, short

if TYPE_CHECKING:
    from mcpgym.evaluation.tasks import Task

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=MCPGymGroup,
    pretty_exceptions_enable=False,
    help="mcpgym: stateful MCP sandboxes with seeded faults, and an agent evaluation harness.",
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"mcpgym {version('mcpgym')}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_version, help="Print the installed mcpgym version and exit."
    ),
    debug: bool = typer.Option(
        False, "--debug", help="On an unexpected error, show the full traceback (accepted after any command too)."
    ),
) -> None:
    """mcpgym: stateful MCP sandboxes with seeded faults, and an agent evaluation harness.

    Start with `mcpgym run` (scripted agents on the core suite), then open the report it names.
    Every command has --help.
    """
    if debug:
        DEBUG["on"] = True


class Executor(StrEnum):
    """Where ``mcpgym run`` plays its episodes."""

    local = "local"
    ray = "ray"


class Transport(StrEnum):
    """Server transports."""

    stdio = "stdio"
    http = "http"


def _message(exc: BaseException) -> str:
    """The text of an exception; a KeyError's message without the quotes ``str()`` adds."""
    if isinstance(exc, KeyError) and exc.args and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


def _fail(message: str, code: int = 2) -> None:
    """Print ``error: <message>`` as one line on stderr and exit with ``code`` (2: bad input); a
    message past :data:`mcpgym.kernel.shorten.MAX_MESSAGE_CHARS` characters is cut there."""
    typer.secho(f"error: {cap_message(one_line(message))}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


def one_line(message: str) -> str:
    """``message`` with its lines joined (an error is one line on stderr)."""
    return " ".join(part.strip() for part in str(message).splitlines() if part.strip())


@app.command()
def serve(
    transport: Transport = typer.Option(
        Transport.stdio, help="stdio: one episode per process; http: control API + per-episode MCP URLs."
    ),
    host: str = typer.Option("127.0.0.1", metavar="HOST", help="HTTP bind address (loopback unless told otherwise)."),
    port: int = typer.Option(
        8765, min=0, max=65535, metavar="PORT", help="HTTP port (0: any free port, printed on the MCPGYM_READY line)."
    ),
    seed: int = typer.Option(
        0,
        min=0,
        metavar="N",
        help="World seed: of the stdio episode; with http, of each episode whose create request omits it.",
    ),
    apps: str = typer.Option(
        "system,shop",
        metavar="APPS",
        help="Comma-separated apps, or 'all': of the stdio episode; with http, the default of created episodes.",
    ),
    faults: str = typer.Option(
        "none",
        metavar="PROFILE",
        help="Fault profile (none, default, harsh, or a .toml/.json/.yaml file): of the stdio episode; with http, the default of created episodes.",
    ),
    fault_seed: int | None = typer.Option(
        None,
        min=0,
        metavar="N",
        help="Fault seed (default: the world seed): of the stdio episode; with http, the default of created episodes.",
    ),
    token: str | None = typer.Option(
        None, help="HTTP control token (default: $MCPGYM_TOKEN, else generated and printed once)."
    ),
    max_episodes: int = typer.Option(1000, min=1, metavar="N", help="HTTP: most live episodes."),
    idle_timeout: float = typer.Option(
        1800.0, min=0.1, metavar="SECONDS", help="HTTP: wall seconds before an idle episode expires."
    ),
    search_tools: bool = typer.Option(
        False,
        "--search-tools",
        help="Retrieval mode (only the search_tools meta-tool at first): of the stdio episode; with http, the default of created episodes.",
    ),
    openenv: bool = typer.Option(
        False,
        "--openenv",
        help="Serve OpenEnv's reset/step/state (WebSocket /ws, HTTP /reset /step /state) instead of MCP: one episode per client session, up to --max-episodes at once; needs mcpgym[openenv].",
    ),
) -> None:
    """Run the MCP server.

    With --transport http, --seed, --apps, --faults, --fault-seed and --search-tools are the
    defaults of the episodes created on the control API (POST /control/episodes): a field
    the request body gives wins.
    """
    import anyio

    from mcpgym.kernel.world import normalise_apps
    from mcpgym.server.serve import serve_http, serve_stdio
    from mcpgym.tools.faults import load_profile

    profile = load_profile(faults)  # a bad profile or app name: MCPGymGroup prints it, exit 2
    normalise_apps(apps)
    if openenv:
        _serve_openenv(host=host, port=port, max_envs=max_episodes, faults=faults)
        return
    if transport is Transport.http:
        from mcpgym.server.http_app import EpisodeDefaults

        # A built-in profile goes by name (the episode view shows it); a file's is loaded here,
        # once, as requests cannot name files.
        default_faults = faults if faults in ("none", "default", "harsh") else profile
        defaults = EpisodeDefaults(
            seed=seed, apps=apps, faults=default_faults, fault_seed=fault_seed, search_tools=search_tools
        )
        try:
            serve_http(
                host=host,
                port=port,
                token=token,
                max_episodes=max_episodes,
                idle_timeout=idle_timeout,
                defaults=defaults,
            )
        except OSError as exc:
            _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
        return
    anyio.run(
        lambda: serve_stdio(seed=seed, apps=apps, faults=faults, fault_seed=fault_seed, search_tools=search_tools)
    )


def _serve_openenv(**options: Any) -> None:
    """Run the OpenEnv server, found through the ``mcpgym.serve`` entry point ``openenv``
    (:mod:`mcpgym.integrations.openenv_env` sits above this layer)."""
    from importlib.metadata import entry_points

    found = [ep for ep in entry_points(group="mcpgym.serve") if ep.name == "openenv"]
    if not found:
        _fail("no OpenEnv server is installed (the mcpgym.serve entry point 'openenv'); reinstall mcpgym")
    try:
        serve_openenv = found[0].load()
    except ImportError as exc:
        _fail(f"--openenv needs the openenv extra: pip install 'mcpgym[openenv]' ({exc})")
    try:
        serve_openenv(**options)
    except OSError as exc:
        _fail(f"cannot listen on {options['host']}:{options['port']}: {exc.strerror or exc}")


@app.command()
def tools(
    app_name: str | None = typer.Option(None, "--app", metavar="APP", help="Only this app's tools."),
    full: bool = typer.Option(
        False,
        "--full",
        help="One block per tool: whole description, arguments, resources, preconditions, remedies, alternatives.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the catalog as JSON."),
) -> None:
    """List the tools: one line each (name, kind, what it does); --full for everything.

    The full view adds each tool's resources, preconditions, remedies and alternatives.
    """
    from mcpgym.tools.catalog import catalog

    rows = catalog(app_name)  # an unknown app: UnknownAppError, printed by MCPGymGroup
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    from mcpgym.evaluation.report.listings import print_tools_compact, print_tools_full

    (print_tools_full if full else print_tools_compact)(_console(), rows)


MAX_EPISODES = 1_000_000
"""Most episodes one ``mcpgym run`` plans (tasks x trials x agents): the run lists every
episode up front, so a mistyped ``--trials 10000000000`` would hang filling memory; a million
episodes is already about 110 GB of trajectories."""

CORE_DEFAULT_LIMIT = 30
"""A bare ``mcpgym run`` takes the ``core`` suite while it has at most this many tasks, else
``smoke``: it must stay under ~90 s on two cores. Measured: the 3 scripted agents x 23 core
tasks x 3 trials (207 episodes) took 52-56 s of wall time on 2 cores shared with other work
(about 4 episodes/s plus ~6 s of start-up), so 30 tasks (270 episodes) keeps a margin for
tasks with larger worlds."""


def default_suite(names: list[str], core_size: int) -> str:
    """The suite of a bare ``mcpgym run`` (see :data:`CORE_DEFAULT_LIMIT`)."""
    if core_size <= CORE_DEFAULT_LIMIT or "smoke" not in names:
        return "core"
    return "smoke"


def interrupt_message(out: Path) -> str:
    """What ``mcpgym run`` says when interrupted: the files of ``out`` that exist, and how to go on.

    Names ``trajectories.jsonl`` only when it holds a finished episode, and ``scores.json``
    only when it was written; a run stopped before its first episode says so (its directory
    can be used again as it is).
    """
    from mcpgym.evaluation.run.run_dir import trajectories_file

    traj = trajectories_file(out)
    has_lines = traj.is_file() and bool(traj.read_bytes().strip())
    if not has_lines:
        return (
            f"interrupted before any episode finished: nothing to keep in {out}; "
            f"run again with the same --out (or --resume --out {out})"
        )
    files = [str(traj)] + [str(out / name) for name in ("scores.json",) if (out / name).is_file()]
    return f"interrupted: the finished episodes are in {' and '.join(files)}; continue with --resume --out {out}"


def _console(stderr: bool = False) -> Any:
    from mcpgym.evaluation.report.tables import terminal_console

    return terminal_console(stderr)


def _load_task_files(files: list[Path]) -> list[Task]:
    """The tasks of ``--tasks`` files, in order; exits with a message (file, task, field) on
    a malformed file or an id found in two files."""
    from mcpgym.evaluation import tasks as registry

    out: list[Task] = []
    seen: dict[str, Path] = {}
    try:
        for f in files:
            for t in registry.load_file(f):
                if t.id in seen:
                    _fail(f"{f}: task {t.id!r}: field 'id': duplicate id (also in {seen[t.id]})")
                seen[t.id] = f
                out.append(t)
    except (KeyError, ValueError) as exc:
        _fail(_message(exc))
    return out


def _load_tasks(
    suite: str | None, task_ids: list[str] | None, task_files: list[Path] | None = None
) -> tuple[list[Task], str | None]:
    """Tasks of ``--tasks`` files (``--task`` ids then pick among them), of ``--task`` ids (from
    any suite), or of a suite; exits with a message on errors."""
    from mcpgym.evaluation import tasks as registry

    if task_files:
        if suite:
            _fail("--tasks FILE and --suite are exclusive: give one")
        found = _load_task_files(task_files)
        if not task_ids:
            return found, None
        by_id = {t.id: t for t in found}
        missing = [t for t in task_ids if t not in by_id]
        if missing:
            _fail(
                f"task {missing[0]!r} is not in {', '.join(map(str, task_files))}; its tasks: "
                f"{', '.join(by_id) or '(none)'}"
            )
        return [by_id[t] for t in task_ids], None
    try:
        if task_ids:
            return [registry.get_task(t) for t in task_ids], suite
        names = registry.suite_names()
        name = suite or default_suite(names, len(registry.load_tasks("core")))
        if name not in names:
            _fail(f"unknown suite {short(name)}; suites: {', '.join(registry.suite_names())}")
        return registry.load_tasks(name), name
    except (KeyError, ValueError) as exc:
        _fail(_message(exc))
    raise AssertionError("unreachable")


def _given(param: str) -> bool:
    """Whether the running command's option ``param`` (its Python name) was given on the
    command line (or the environment), not left at its default."""
    from typer._click.core import ParameterSource
    from typer._click.globals import get_current_context

    source = get_current_context().get_parameter_source(param)
    return source is not None and source is not ParameterSource.DEFAULT


def _resume_options(out: Path) -> dict[str, Any]:
    """:func:`mcpgym.evaluation.records.manifest.resume_options` of the run in ``out`` ({} without a
    manifest); exits naming the file when the manifest is malformed."""
    from mcpgym.evaluation.records.manifest import read_manifest, resume_options

    try:
        manifest = read_manifest(out)
    except ValueError as exc:
        _fail(f"cannot resume: {exc}")
        raise AssertionError("unreachable") from None
    return resume_options(manifest) if manifest else {}


def _early_server(server: str | None, executor: Executor, concurrency: int) -> Any:
    """Start the server a local run will spawn before this process's heavy imports and task
    loading, so that the two start-ups overlap (a :class:`~mcpgym.evaluation.run.server_process.ServerStart`),
    or None when the run will not spawn one (``--server``, ``--executor ray``)."""
    if server or executor is not Executor.local:
        return None
    from mcpgym.evaluation.run.server_process import start_server

    return start_server(max_episodes=max(100, concurrency * 4))


@app.command()
def run(
    agent: list[str] | None = typer.Option(
        None,
        "--agent",
        "-a",
        metavar="SPEC",
        help="Agent spec, repeatable (default: careful, overconfident, defeatist). Scripted names, replay:FILE.jsonl, an LLM spec, or human (you play, as in mcpgym play).",
    ),
    suite: str | None = typer.Option(
        None,
        metavar="NAME",
        help=f"Task suite (default: core while it has at most {CORE_DEFAULT_LIMIT} tasks, else smoke; `mcpgym tasks --suite S` lists one).",
    ),
    task: list[str] | None = typer.Option(
        None,
        "--task",
        "-t",
        metavar="TASK_ID",
        help="Run only this task id (repeatable; from any suite, or from the task files given).",
    ),
    task_file: list[Path] | None = typer.Option(
        None,
        "--tasks",
        metavar="FILE",
        help="Run the tasks of this YAML/JSON task file (repeatable; any file, e.g. an outside app's own tasks).",
    ),
    trials: int = typer.Option(
        3, min=1, metavar="N", help="Trials per agent and task (each trial has its own fault seed)."
    ),
    faults: str = typer.Option(
        "default",
        metavar="PROFILE",
        help="Fault profile: none, default, harsh, or a .toml/.json/.yaml file. A task's own profile wins.",
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", metavar="DIR", help="Run directory (default: runs/run-<UTC time>)."
    ),
    concurrency: int = typer.Option(4, min=1, metavar="N", help="Most episodes at once."),
    server: str | None = typer.Option(
        None, metavar="URL", help="Use this mcpgym HTTP server (base URL) instead of spawning one."
    ),
    token: str | None = typer.Option(None, metavar="TOKEN", help="Control token of --server (default: $MCPGYM_TOKEN)."),
    resume: bool = typer.Option(
        False,
        "--resume",
        help="Continue the run in --out: skip episodes already written; options not given are the run's own.",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Start over in a run directory of mcpgym's own (its .mcpgym-run marker): only its files are deleted; anything else is refused.",
    ),
    timeout: float = typer.Option(
        600.0, min=1.0, metavar="SECONDS", help="Wall seconds per episode before it is stopped (status limit)."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    tools_mode: str = typer.Option(
        "all",
        "--tools",
        metavar="MODE",
        help="Tool exposure: all | task (the oracle's tools) | task+N (plus N seeded distractors) | retrieval (only search_tools, which unlocks what it finds).",
    ),
    max_turns: int | None = typer.Option(
        None, "--max-turns", min=1, metavar="N", help="LLM agents: model turns per episode (default 40)."
    ),
    max_output_tokens: int | None = typer.Option(
        None,
        "--max-output-tokens",
        min=1,
        metavar="N",
        help="LLM agents: output tokens per reply (default: the provider's; a reply cut at it ends the episode truncated).",
    ),
    request_timeout: float | None = typer.Option(
        None,
        "--request-timeout",
        min=0.001,
        metavar="SECONDS",
        help="LLM agents: wall seconds for one provider request before it is retried (default 120).",
    ),
    temperature: float | None = typer.Option(
        None, "--temperature", min=0.0, max=2.0, metavar="T", help="LLM agents: sampling temperature (default 0)."
    ),
    seed: int | None = typer.Option(
        None, "--seed", metavar="N", help="LLM agents: the provider's sampling seed (default: not sent)."
    ),
    agent_option: list[str] | None = typer.Option(
        None,
        "--agent-option",
        metavar="KEY_VALUE",
        help="LLM agents: any other setting as KEY=VALUE (max_tool_calls, max_tokens, max_retries, backoff_base, system_prompt...), repeatable.",
    ),
    validate_output: bool = typer.Option(
        False,
        "--validate-output",
        help="Check every tool result against its output schema in the client (slower; a mismatch ends the episode as errored).",
    ),
    executor: Executor = typer.Option(
        Executor.local,
        "--executor",
        help="local: one server on this machine; ray: Ray actors, each with its own server (pip install 'mcpgym[ray]').",
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        help="--executor ray: the cluster to join (auto, HOST:6379, ray://HOST:10001; default: $RAY_ADDRESS, else a local cluster).",
    ),
    ray_workers: int | None = typer.Option(
        None,
        "--ray-workers",
        min=1,
        help="--executor ray: worker actors, one CPU each (default: the cluster's CPUs, at most --concurrency).",
    ),
    proxy: str | None = typer.Option(
        None,
        "--proxy",
        metavar="UPSTREAM",
        help="Run against this MCP server through mcpgym proxy: its command line (one quoted argument) or its streamable-HTTP URL; --tasks gives instructions and checks (docs/proxy.md).",
    ),
    catalog: Path | None = typer.Option(
        None, "--catalog", metavar="FILE", help="--proxy: a JSON catalog classifying the server's tools."
    ),
    fault_seed: int = typer.Option(
        0, "--fault-seed", min=0, metavar="N", help="--proxy: fault seed of trial 0 (trial t: N + t)."
    ),
) -> None:
    """Evaluate agents on a task suite and print the comparison table.

    Runs tasks x trials x agents against an mcpgym server (spawned unless --server is given)
    and writes trajectories.jsonl.zst (one zstd frame per line; `mcpgym cat` prints it),
    snapshots/, scores.json, manifest.json, report.md and report.html into the run directory. With --proxy: agents on the --tasks file's instructions against an
    outside MCP server through mcpgym proxy (docs/proxy.md); trajectories.jsonl and
    catalog.json in --out.
    """
    if proxy is not None:
        from mcpgym.evaluation.proxy.run import run_proxy_command

        run_proxy_command(proxy, task_file, agent, out, faults, fault_seed, trials, catalog, timeout)
        return
    early = _early_server(server, executor, concurrency)
    try:
        import os
        import time

        from mcpgym.evaluation.agents import SCRIPTED_AGENTS, make_agent
        from mcpgym.evaluation.report.run_report import print_comparison, write_report
        from mcpgym.evaluation.run.runner import AgentEntry, RunSettings, run_evaluation
        from mcpgym.tools.faults import load_profile

        resumed_options: dict[str, Any] = {}
        if resume and out is None:
            _fail("--resume needs --out DIR (the run to continue)")
        if resume and out is not None:
            # what the command line does not say is the run's own: a bare `--resume --out D`
            # continues the run, it does not extend it with the defaults
            prior = _resume_options(out)
            if "trials" in prior and not _given("trials"):
                trials = prior["trials"]
            if "faults" in prior and not _given("faults"):
                faults = prior["faults"]
            if "episode_timeout" in prior and not _given("timeout"):
                timeout = prior["episode_timeout"]
            if "tool_exposure" in prior and not _given("tools_mode"):
                tools_mode = prior["tool_exposure"]
            resumed_options = prior.get("agent_options") or {}
            agent = agent or prior.get("agents")
            if not (suite or task or task_file) and prior.get("task_ids"):
                task, suite = prior["task_ids"], prior.get("suite")
                task_file = [Path(f) for f in prior.get("task_files", [])]
                if task_file:
                    suite = None
        from mcpgym.evaluation.llm.exposure import parse_exposure
        from mcpgym.evaluation.llm.options import agent_options as llm_options

        try:
            parse_exposure(tools_mode)
            # the run's own settings, then what this command line says
            llm_settings = {
                **resumed_options,
                **llm_options(
                    agent_option or (),
                    max_turns=max_turns,
                    max_output_tokens=max_output_tokens,
                    request_timeout=request_timeout,
                    temperature=temperature,
                    seed=seed,
                ),
            }
        except ValueError as exc:
            _fail(str(exc))
        if executor is Executor.local and (ray_address or ray_workers):
            _fail("--ray-address and --ray-workers need --executor ray")
        if executor is Executor.ray and server:
            _fail("--server and --executor ray exclude each other: each Ray worker runs its own server")
        if executor is Executor.ray:
            from mcpgym.evaluation.run.ray_executor import import_ray

            import_ray()
        if server and not (token or os.environ.get("MCPGYM_TOKEN")):
            _fail("--server needs --token (or $MCPGYM_TOKEN)")
        load_profile(faults)
        tasks, suite_name = _load_tasks(suite, task, task_file)
        if not tasks:
            _fail(
                "no tasks to run"
                + (f" (the file{'s hold' if len(task_file) > 1 else ' holds'} none)" if task_file else "")
            )
        specs = list(agent or SCRIPTED_AGENTS)
        if "human" in specs:  # a person plays: one episode at a time, no progress bar over the prompt
            concurrency, quiet = 1, True
            if not _given("timeout"):
                timeout = 3600.0
        planned = len(tasks) * trials * len(specs)
        if planned > MAX_EPISODES:
            _fail(
                f"{len(tasks)} tasks x {trials} trials x {len(specs)} agents is {planned:,} episodes; "
                f"a run holds at most {MAX_EPISODES:,} (give fewer --trials, or split the run)"
            )
        if any(s not in SCRIPTED_AGENTS and s != "human" and not s.startswith("replay:") for s in specs):
            from mcpgym.evaluation.llm import register_llm_agents  # the openai:/anthropic: prefixes

            register_llm_agents(replace=True, tool_exposure=tools_mode, **llm_settings)
        elif llm_settings:
            _fail(
                "--max-turns, --max-output-tokens, --request-timeout, --temperature, --seed and --agent-option set LLM agents, and this run has none"
            )
        try:
            from mcpgym.evaluation.agents.human import HumanAgent

            agents = [AgentEntry(spec, HumanAgent() if spec == "human" else make_agent(spec)) for spec in specs]
        except ValueError as exc:
            _fail(str(exc))
        out = out or Path("runs") / time.strftime("run-%Y%m%d-%H%M%S", time.gmtime())
        settings = RunSettings(
            out=out,
            trials=trials,
            faults=faults,
            concurrency=concurrency,
            server_url=server,
            token=token or os.environ.get("MCPGYM_TOKEN"),
            resume=resume,
            force=force,
            episode_timeout=timeout,
            suite=suite_name if not task else suite,
            progress=not quiet,
            task_files=[str(f) for f in task_file or []],
            validate_output=validate_output,
            tool_exposure=tools_mode,
            agent_options=llm_settings,
            executor=executor.value,
            ray_address=ray_address,
            ray_workers=ray_workers,
        )
    except BaseException:  # a refusal or an interrupt before the run: stop the early server
        if early is not None:
            early.cancel()
        raise
    try:
        result = run_evaluation(tasks, agents, settings, server_start=early)
    except OSError as exc:  # an unwritable or impossible --out (e.g. /proc/nope)
        if DEBUG["on"]:
            raise
        _fail(
            f"cannot write the run directory {out}: {exc.strerror or exc}"
            + (f" ({exc.filename})" if exc.filename and str(exc.filename) != str(out) else "")
        )
    except KeyboardInterrupt:
        typer.secho(interrupt_message(out), fg=typer.colors.YELLOW, err=True)
        raise typer.Exit(130) from None
    if result.failures and not result.scores.agents:
        # No episode finished: there is nothing to report, and the failures are the news.
        _print_failures(result.failures, nothing_written=True)
        raise typer.Exit(1)
    from mcpgym.evaluation.run.run_owner import ForeignContentError

    try:
        md, html = write_report(result.out, rescore=False)  # its scores were computed just now
    except ForeignContentError as exc:
        _fail(f"the run is recorded, but its report was not written: {exc}")
    picked = (
        f"suite {suite_name}: "
        if suite_name and not task
        else f"{', '.join(f.name for f in task_file)}: "
        if task_file
        else ""
    )
    scored = sum(row.scored_episodes for row in result.scores.agents.values())
    errored_n = sum(row.errored_episodes for row in result.scores.agents.values())
    title = (
        f"{picked}{len(tasks)} tasks x {trials} trials, faults {faults}: {result.ran} episodes run"
        + (f", {result.skipped} resumed" if result.skipped else "")
        + f" in {result.wall_seconds:.1f} s; {scored} scored, {errored_n} errored in all"
        + (f" ({result.retried} sent again after a lost Ray worker)" if result.retried else "")
    )
    print_comparison(_console(), result.scores, title=title)
    errored = {name: row.errored_episodes for name, row in result.scores.agents.items()}
    if any(errored.values()):
        detail = ", ".join(f"{name}: {n}" for name, n in errored.items() if n)
        typer.secho(
            f"errored episodes (provider or harness failures, left out of success rates): {detail}; "
            "their stop_reason is in the trajectories (mcpgym cat RUN_DIR) and the report",
            fg=typer.colors.YELLOW,
            err=True,
        )
    _warn_text_calls(result.out)
    from mcpgym.evaluation.run.run_dir import trajectories_file

    typer.echo(
        f"report: {html} (and {md.name})\ntrajectories: {trajectories_file(result.out)}\n"
        f"scores: {result.out / 'scores.json'}"
    )
    if result.failures:
        _print_failures(result.failures)
        raise typer.Exit(1)


def _warn_text_calls(out: Path) -> None:
    """Warn loudly (stderr) when episodes of the run in ``out`` ended with a tool call written
    as text that the model's server did not parse (:mod:`mcpgym.evaluation.llm.flags`)."""
    from mcpgym.evaluation.llm.flags import TEXT_CALL_WARNING, count_flags
    from mcpgym.evaluation.records.compressed import trajectories_file
    from mcpgym.evaluation.records.trajectory import read_trajectories

    counts = count_flags(read_trajectories(trajectories_file(out), tolerate_truncated_tail=True, states=False))
    if counts["tool_calls_as_text"]:
        typer.secho(
            f"WARNING: {TEXT_CALL_WARNING.format(n=counts['tool_calls_as_text'])}", fg=typer.colors.RED, err=True
        )
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
    err = _console(stderr=True)
    head = f"{len(failures)} episode(s) could not be run (not written; --resume retries them)"
    if nothing_written:
        head = f"no episode finished, so there is no report: {head}"
    err.print(f"[red]{head}:")
    for label, message in failures[:20]:
        err.print(f"  {label}: {message}", markup=False)
    if len(failures) > 20:
        err.print(f"  ... and {len(failures) - 20} more", markup=False)


@app.command()
def score(
    paths: list[Path] = typer.Argument(
        ..., metavar="PATH", help="Run directories, trajectory files of our own, or files recorded elsewhere."
    ),
    fmt: str = typer.Option(
        "auto",
        "--format",
        "-f",
        metavar="FORMAT",
        help="auto | mcpgym | openai | anthropic | complexmcp | mcp-log | atif | inspect (an Inspect AI .eval log).",
    ),
    catalog: str | None = typer.Option(
        None,
        "--catalog",
        metavar="CATALOG",
        help="JSON catalog file (name -> kind, resources, remedies, alternatives) for tools not in ours, or a built-in catalog: complexmcp (the default for --format complexmcp).",
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help='Print {"agents": aggregates, "episodes": [...], "tools": [...], "problems": [...]} as JSON.',
    ),
    k: int | None = typer.Option(
        None, min=1, metavar="N", help="Recovery window in tool calls (default: the run's, else 3)."
    ),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="Exit 1 when the scorability summary warns (most call blocks failed to parse, or most tools were guessed by name).",
    ),
) -> None:
    """Score trajectories: run directories, or files recorded in another harness.

    Uses docs/design.md §7's definitions: per-episode behaviour scores, outcome where states
    are given, aggregates per agent, and a scorability summary (episodes read, calls parsed,
    blocks that failed, tools classified vs guessed).

    Exit code 0: every input read cleanly; 1: some input was malformed (the rest is still
    scored and printed), or --strict and the scorability summary warns; 2: nothing could be
    scored.
    """
    from mcpgym.evaluation.cli.score import run_score
    from mcpgym.evaluation.formats import FORMATS
    from mcpgym.evaluation.records.manifest import read_manifest
    from mcpgym.evaluation.scoring.scorer import DEFAULT_K

    if fmt not in FORMATS:
        _fail(f"unknown format {short(fmt)}; one of {', '.join(FORMATS)}")
    try:
        if k is None:
            windows = {(read_manifest(p) or {}).get("recovery_window") for p in paths if p.is_dir()} - {None}
            k = windows.pop() if len(windows) == 1 else DEFAULT_K
        assert k is not None
        code = run_score([str(p) for p in paths], fmt, catalog, as_json, k=k, strict=strict)
    except ValueError as exc:
        _fail(str(exc))
    raise typer.Exit(code)


class ExportFormat(StrEnum):
    """Formats ``mcpgym export`` writes."""

    atif = "atif"


@app.command()
def export(
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run directory (from `mcpgym run`)."),
    fmt: ExportFormat = typer.Option(
        ExportFormat.atif, "--format", "-f", help="atif: one ATIF v1.8 trajectory per line."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        metavar="FILE",
        help="Output file (default: RUN_DIR/trajectories.atif.jsonl); never overwritten.",
    ),
) -> None:
    """Write a run's episodes in another format (ATIF: every step, call, error and message, and
    mcpgym's own record of the episode in each document's `extra`, so `mcpgym score --format
    atif` gives the same scores). Needs mcpgym[atif].
    """
    from mcpgym.evaluation.formats import atif
    from mcpgym.evaluation.records.trajectory import TrajectoryFileError
    from mcpgym.evaluation.run.run_dir import load_run

    target = out or run_dir / "trajectories.atif.jsonl"
    if target.exists():
        _fail(f"{target} exists; choose another --out (nothing was overwritten)")
    try:
        n = atif.write_atif(load_run(run_dir), target)
    except ImportError as exc:
        _fail(str(exc))
    except (FileExistsError, FileNotFoundError, TrajectoryFileError, ValueError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {n} {fmt.value} trajectories to {target}")


@app.command()
def report(run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run directory (from `mcpgym run`).")) -> None:
    """Write report.md and report.html (with the trajectory viewer) into RUN_DIR.

    report.html is self-contained: tables, SVG charts and every episode's steps, with no
    network access needed to open it. Every figure is computed again from the trajectories,
    as `score` does (the report says how many differ from the scores stored in the lines).
    """
    from mcpgym.evaluation.records.trajectory import TrajectoryFileError
    from mcpgym.evaluation.report.run_report import write_report
    from mcpgym.evaluation.run.run_owner import ForeignContentError

    try:
        md, html = write_report(run_dir)
    except (FileNotFoundError, TrajectoryFileError, ValueError, ForeignContentError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {md} and {html}")


def _register_play() -> None:
    from mcpgym.evaluation.cli.play import play

    app.command()(play)


_register_play()


@app.command()
def cat(
    path: Path = typer.Argument(
        ..., metavar="RUN_DIR|FILE", help="A run directory, or a trajectories file (.jsonl or .jsonl.zst)."
    ),
) -> None:
    """Print a run's trajectory lines as plain JSON Lines, for jq and friends.

    A run directory's trajectories.jsonl.zst holds one zstd frame per line; this prints them
    decompressed, exactly as written (compact lines keep their snapshot references). A plain
    trajectories.jsonl (an older run) is printed as it is. A torn last frame (a killed run) is
    left out and said on stderr; exit 2 for a missing file.
    """
    import sys

    from mcpgym.evaluation.records.compressed import CompressedFileError, read_text
    from mcpgym.evaluation.run.run_dir import trajectories_file

    file = trajectories_file(path) if path.is_dir() else path
    if not file.is_file():
        _fail(f"{path}: no trajectories file (a run directory holds trajectories.jsonl.zst)")
    try:
        text, torn = read_text(file)
    except (OSError, UnicodeDecodeError, CompressedFileError) as exc:
        _fail(f"{file}: {exc}")
    sys.stdout.write(text)
    sys.stdout.flush()
    if torn:
        typer.secho(f"{file}: the last zstd frame is torn (a write cut short); left out", err=True, fg="yellow")


@app.command()
def tasks(
    suite: str | None = typer.Option(
        None, metavar="NAME", help="List only this suite (see the error of an unknown name for the list)."
    ),
    task_file: list[Path] | None = typer.Option(
        None, "--tasks", metavar="FILE", help="List the tasks of this YAML/JSON task file (repeatable)."
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print a JSON list of {id, source, apps, level, tags, feasible, oracle_apps, oracle_calls, needs_user}.",
    ),
) -> None:
    """List tasks: by default the built-in ``core`` suite and every app bundle's own tasks
    (source: the suite, or the file); ``--suite S`` one suite; ``--tasks FILE`` a file's.
    JSON rows also carry ``oracle_apps`` (the apps whose tools the oracle calls),
    ``oracle_calls`` (the calls of its gold run; None for the generated ``full`` suite) and
    ``needs_user`` (the oracle asks the user)."""
    from mcpgym.evaluation import tasks as registry

    groups: list[tuple[str, list[Task]]] = []
    if task_file:
        if suite:
            _fail("--tasks FILE and --suite are exclusive: give one")
        groups = [(str(f), _load_task_files([f])) for f in task_file]
    else:
        try:
            names = registry.suite_names()
            if suite is not None and suite not in names:
                _fail(f"unknown suite {short(suite)}; suites: {', '.join(names)}")
            picked = [suite] if suite is not None else ["core", *registry.bundled_suites()]
            groups = [(name, registry.load_tasks(name)) for name in picked]
        except (KeyError, ValueError) as exc:
            _fail(_message(exc))
    from mcpgym.evaluation.tasks.model import AskStep
    from mcpgym.evaluation.tasks.oracle import iter_steps
    from mcpgym.kernel.app import load_apps

    owner = {name: app for app, cls in load_apps().items() for name in cls.tools}

    def gold_calls(source: str, index: int, t: Any) -> int | None:
        """Calls of the task's gold run; exits naming the file, task and line when its oracle fails."""
        if source == "full":
            return None
        try:
            return len(registry.gold_run(t).calls)
        except registry.OracleRuntimeError as exc:
            line = registry.task_field_line(source, index, "oracle") if task_file else None
            _fail(f"{source}: {exc}" + (f" (line {line})" if line else ""))
            raise AssertionError("unreachable") from None

    rows = [
        {
            "id": t.id,
            "source": source,
            "apps": list(t.apps),
            "level": t.level,
            "tags": list(t.tags),
            "feasible": t.feasible,
            "oracle_apps": sorted({owner.get(n, "?") for n in registry.oracle_calls(t)}),
            "oracle_calls": gold_calls(source, i, t),
            "needs_user": any(isinstance(s, AskStep) for s in iter_steps(t.oracle)),
        }
        for source, items in groups
        for i, t in enumerate(items)
    ]
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    from mcpgym.evaluation.report.listings import print_tasks

    for source, items in groups:
        print_tasks(_console(), source, [r for r in rows if r["source"] == source][: len(items)])


# `mcpgym proxy` (docs/proxy.md): everything after --upstream is the upstream's command line.
app.command(name="proxy", context_settings={"allow_interspersed_args": False})(_proxy_command)


def _escape_unencodable_output() -> None:
    """Print what the terminal's encoding cannot hold as escapes (``\\xe9``, ``\\ud800``) rather
    than fail: an ASCII stdout (``PYTHONIOENCODING=ascii``, some CI and containers) met the
    table's dashes, and a JSON string holding a lone surrogate (``"\\ud800"``, valid JSON) met
    any stdout, and the command died after its work was done."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            with contextlib.suppress(ValueError, OSError):  # a detached or closed stream
                reconfigure(errors="backslashreplace")


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the command in ``argv`` (default: ``sys.argv[1:]``).

    Every user error (a bad option value, a missing file, an unwritable path: click usage
    errors and ``OSError``) is one line on stderr, ``error: ...``, with exit code 2; any other
    exception is one line with exit code 1 and a pointer to ``--debug``, which shows the
    traceback instead. Exits via ``SystemExit`` with the command's exit code.
    """
    from typer import _click as click  # Typer 0.29 vendors click: its exceptions are these

    _escape_unencodable_output()
    args = list(sys.argv[1:] if argv is None else argv)
    DEBUG["on"] = "--debug" in args  # accepted anywhere: `mcpgym run ... --debug` too
    args = [a for a in args if a != "--debug"]
    command = typer.main.get_command(app)
    try:
        code = command.main(args, prog_name="mcpgym", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        typer.echo(exc.ctx.get_help())
        code = 0
    except click.ClickException as exc:
        ctx = getattr(exc, "ctx", None)
        where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        typer.secho(f"error: {one_line(exc.format_message())}{where}", fg=typer.colors.RED, err=True)
        code = exc.exit_code
    except typer.Abort:
        typer.secho("interrupted", fg=typer.colors.YELLOW, err=True)
        code = 130
    except KeyboardInterrupt:
        typer.secho("interrupted", fg=typer.colors.YELLOW, err=True)
        code = 130
    except OSError as exc:
        if DEBUG["on"]:
            raise
        target = f"{exc.filename}: " if exc.filename else ""
        typer.secho(f"error: {target}{exc.strerror or exc}", fg=typer.colors.RED, err=True)
        code = 2
    except Exception as exc:  # noqa: BLE001 - the one place an unexpected error becomes one line
        if DEBUG["on"]:
            raise
        typer.secho(
            f"error: unexpected {type(exc).__name__}: {one_line(_message(exc))} "
            "(run again with --debug for the traceback)",
            fg=typer.colors.RED,
            err=True,
        )
        code = 1
    raise SystemExit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
