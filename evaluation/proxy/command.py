"""``mcpgym proxy``: serve an upstream MCP server over stdio with seeded faults, recording each session.

    mcpgym proxy --faults default --fault-seed 7 --record runs/proxy --upstream mcp-server-git --repository REPO
    mcpgym proxy --faults harsh --upstream-url http://127.0.0.1:8000/mcp

Everything after ``--upstream`` is the upstream's command line (so it goes last). See
docs/proxy.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import typer

from mcpgym.server.proxy.upstream import DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, UpstreamError, UpstreamSpec

if TYPE_CHECKING:
    from mcpgym.evaluation.proxy.classify import ToolClassifier
    from mcpgym.server.proxy.plan import ProxyFaultPlan
    from mcpgym.server.proxy.server import ProxySession
    from mcpgym.tools.faults import FaultProfile


def _fail(message: str, code: int = 2) -> None:
    typer.secho(f"error: {' '.join(message.split())}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


def build(
    command: list[str] | None,
    url: str | None,
    faults: str,
    fault_seed: int,
    catalog: Path | None,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    call_timeout: float = DEFAULT_CALL_TIMEOUT,
) -> tuple[UpstreamSpec, ProxyFaultPlan, ToolClassifier]:
    """The upstream, fault plan and classifier of a proxy command line.

    Raises:
        ValueError: for a bad upstream, fault profile or catalog (the message names it).
        OSError: when the catalog cannot be read.
    """
    from pydantic import ValidationError

    from mcpgym.evaluation.proxy.classify import ToolClassifier
    from mcpgym.server.proxy.plan import ProxyFaultPlan
    from mcpgym.server.proxy.server import describe_answer

    try:
        spec = UpstreamSpec(
            command=command or None, url=url, connect_timeout=connect_timeout, call_timeout=call_timeout
        )
    except ValidationError as exc:
        raise ValueError("; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())) from None
    classifier = ToolClassifier(catalog)
    plan = ProxyFaultPlan(_profile(faults), fault_seed, describe_answer)
    return spec, plan, classifier


def _profile(faults: str) -> FaultProfile:
    """A profile for upstream tools, read like any other (:func:`mcpgym.tools.faults.load_profile`:
    bounded, one plain line for a bad field), without the registered-apps check: tool
    overrides may name tools no registered app has (they are checked against the upstream's
    tools at start). A profile file setting ``lost_write`` gets one warning line on stderr:
    the proxy never injects it."""
    from mcpgym.kernel.fault_kinds import FaultKind
    from mcpgym.tools.faults import BUILTIN_PROFILES, load_profile

    profile = load_profile(faults, check_apps=False)
    # a profile of lost writes alone would give no fault at all
    if faults not in BUILTIN_PROFILES and profile.uses(FaultKind.LOST_WRITE):
        print(
            f"warning: {faults}: lost_write is never injected by the proxy (it would fake a success the upstream "
            "did not give): its rates are ignored",
            file=sys.stderr,
        )
    return profile


def proxy(
    upstream: bool = typer.Option(
        False, "--upstream", help="The rest of the command line is the upstream server's command (stdio)."
    ),
    command: list[str] = typer.Argument(None, metavar="CMD...", help="The upstream command (after --upstream)."),
    upstream_url: str | None = typer.Option(
        None, "--upstream-url", metavar="URL", help="The upstream's streamable-HTTP endpoint."
    ),
    faults: str = typer.Option(
        "default", metavar="PROFILE", help="Fault profile: none, default, harsh, or a .toml/.json/.yaml file."
    ),
    fault_seed: int = typer.Option(0, "--fault-seed", min=0, metavar="N", help="Seed of every fault decision."),
    catalog: Path | None = typer.Option(
        None, "--catalog", metavar="FILE", help="JSON catalog classifying upstream tools (kind, role, remedies...)."
    ),
    record: str | None = typer.Option(
        None,
        "--record",
        metavar="DIR",
        help="Record each session's trajectory in DIR/trajectories.jsonl (DIR: missing, empty, or mcpgym's own).",
    ),
    resume: bool = typer.Option(
        False, "--resume", help="Append to the sessions already recorded in --record DIR (a directory mcpgym made)."
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Start over in --record DIR of mcpgym's own (its .mcpgym-run marker): only its files are deleted.",
    ),
    agent: str | None = typer.Option(
        None, metavar="NAME", help="Agent name in the trajectory (default: the client's)."
    ),
    connect_timeout: float = typer.Option(
        DEFAULT_CONNECT_TIMEOUT, min=0.1, max=3600, metavar="S", help="Wall seconds to start the upstream."
    ),
    call_timeout: float = typer.Option(
        DEFAULT_CALL_TIMEOUT, min=0.1, max=86_400, metavar="S", help="Wall seconds any one upstream request may take."
    ),
) -> None:
    """Serve an existing MCP server through seeded faults (stdio), recording each session.

    Put the proxy in a client's mcpServers entry in place of the server (README, "Faults in
    front of your own server"). Exit 1 when the upstream could not be started.
    """
    if upstream and not command:
        _fail("--upstream needs the upstream's command after it")
    if command and not upstream:
        _fail(f"unexpected argument {command[0]!r}: put the upstream command after --upstream")
    if (resume or force) and record is None:
        _fail(f"{'--resume' if resume else '--force'} needs --record DIR")
    try:
        spec, plan, classifier = build(
            command, upstream_url, faults, fault_seed, catalog, connect_timeout, call_timeout
        )
    except (ValueError, OSError) as exc:
        _fail(str(exc))

    import contextlib
    import warnings

    from mcpgym.evaluation.proxy.classify import ToolClassifier
    from mcpgym.evaluation.proxy.record import hold_record_dir, trajectory_of
    from mcpgym.tools.faults import FaultProfileError

    with contextlib.ExitStack() as stack:
        held = None
        if record is not None:  # claimed before the proxy serves, held while it serves: a refusal loses no session
            try:
                held = stack.enter_context(hold_record_dir(record, resume=resume, force=force, catalog=catalog))
                if held.user_catalog is not None and catalog is None:  # the user's own edit of it: used
                    classifier = ToolClassifier(held.user_catalog)
            except (ValueError, OSError) as exc:
                _fail(str(exc))
        from mcpgym.server.proxy.server import serve_proxy_stdio

        def on_end(session: ProxySession) -> None:
            if held is None:
                return
            try:
                traj = trajectory_of(session, classifier, agent=agent)
                with warnings.catch_warnings(record=True) as said:
                    warnings.simplefilter("always")
                    held.record(traj, classifier)
                for w in said:
                    print(f"mcpgym proxy: {w.message}", file=sys.stderr)
            except Exception as exc:  # noqa: BLE001 - the session is over; say why nothing was recorded
                print(f"mcpgym proxy: could not record the session in {record}: {exc}", file=sys.stderr)

        try:
            anyio.run(serve_proxy_stdio, spec, plan, classifier.proxied, on_end)
        except UpstreamError as exc:
            _fail(str(exc), 1)
        except FaultProfileError as exc:  # a tools override naming no tool of the upstream
            _fail(str(exc))
        except BaseExceptionGroup as group:
            refused = [e for e in group.exceptions if isinstance(e, FaultProfileError)]
            if refused:
                _fail(str(refused[0]))
            errors = [e for e in group.exceptions if isinstance(e, UpstreamError)]
            if errors:
                _fail(str(errors[0]), 1)
            raise
