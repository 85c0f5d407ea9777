"""``mcpgym serve``: a thin adapter over :func:`mcpgym.server.serve.serve_stdio`,
:func:`mcpgym.server.serve.serve_http` and the OpenEnv server (the ``mcpgym.serve`` entry point
``openenv``)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import typer

from mcpgym.evaluation.cli.common import finite_number
from mcpgym.kernel.exceptions import InputError


class Transport(StrEnum):
    """Server transports."""

    stdio = "stdio"
    http = "http"


def serve(
    transport: Transport = typer.Option(
        Transport.stdio,
        help="stdio: one episode per process; http: control API + per-episode MCP URLs, and /mcp, where each MCP session (with the token) is a new episode.",
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
        None,
        help="HTTP control token (default: $MCPGYM_TOKEN, else generated and printed at start: on the MCPGYM_READY line and on stderr).",
    ),
    max_episodes: int = typer.Option(1000, min=1, metavar="N", help="HTTP: most live episodes."),
    idle_timeout: float = typer.Option(
        1800.0,
        min=0.1,
        parser=finite_number(0.1, None),
        metavar="SECONDS",
        help="HTTP: wall seconds before an idle episode expires.",
    ),
    search_tools: bool = typer.Option(
        False,
        "--search-tools",
        help="Retrieval mode (only the search_tools meta-tool at first): of the stdio episode; with http, the default of created episodes.",
    ),
    openenv: bool = typer.Option(
        False,
        "--openenv",
        help="Serve OpenEnv's reset/step/state instead of MCP: over the WebSocket /ws, one episode per client session, up to --max-episodes at once (HTTP /reset only shows an episode's start, HTTP /step answers 409: OpenEnv's HTTP endpoints keep no episode); needs mcpgym[openenv].",
    ),
    reward: str | None = typer.Option(
        None,
        metavar="PROFILE",
        help="With --openenv: the reward profile of the episodes (outcome, shaped, or a .json/.toml/.yaml file; default outcome; docs/rl.md).",
    ),
) -> None:
    """Run the MCP server.

    With --transport http, --seed, --apps, --faults, --fault-seed and --search-tools are the
    defaults of the episodes created on the control API (POST /control/episodes): a field
    the request body gives wins.
    """
    import anyio

    from mcpgym.kernel.world import names_no_app, normalise_apps
    from mcpgym.server.serve import serve_http, serve_stdio
    from mcpgym.tools.faults import load_profile

    profile = load_profile(faults)  # a bad profile or app name: MCPGymGroup prints it, exit 2
    if names_no_app(apps):  # the control API's rule for its `apps` field
        raise InputError("--apps names no app; give at least one (system is always included) or 'all'")
    normalise_apps(apps)
    if reward is not None and not openenv:
        raise InputError("--reward applies to --openenv only (MCP episodes are scored by mcpgym run and score)")
    if openenv:
        from mcpgym.evaluation.scoring.reward import load_profile as load_reward

        try:
            load_reward(reward)
        except ValueError as exc:
            raise InputError(f"--reward: {exc}"[:500]) from None
        _serve_openenv(
            host=host,
            port=port,
            max_envs=max_episodes,
            faults=faults,
            token=token,
            idle_timeout=idle_timeout,
            reward=reward or "outcome",
        )
        return
    if transport is Transport.http:
        from mcpgym.evaluation.run.served_rl import ServedRL
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
                rl=ServedRL(),  # /control/tasks, /control/task-episodes, /control/episodes/{id}/reward
            )
        except OSError as exc:
            raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
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
        raise InputError("no OpenEnv server is installed (the mcpgym.serve entry point 'openenv'); reinstall mcpgym")
    try:
        serve_openenv = found[0].load()
    except ImportError as exc:
        raise InputError(f"--openenv needs the openenv extra: pip install 'mcpgym[openenv]' ({exc})") from None
    try:
        serve_openenv(**options)
    except OSError as exc:
        raise InputError(f"cannot listen on {options['host']}:{options['port']}: {exc.strerror or exc}") from None


__all__ = ["Transport", "serve"]
