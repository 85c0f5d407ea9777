"""The ``mcpgym`` command line: the typer application, its root options, and :func:`main`.

One module per command, each a thin adapter over a Python API: :mod:`.serve`, :mod:`.tools`,
:mod:`.run`, :mod:`.score`, :mod:`.compare`, :mod:`.view`, :mod:`.export`, :mod:`.report`, :mod:`.play`, :mod:`.cat`,
:mod:`.tasks` and ``proxy`` (:mod:`mcpgym.evaluation.proxy.command`); what they share is in
:mod:`.common` and :mod:`.style`. Errors are handled in one place: a command raises an
:class:`~mcpgym.kernel.exceptions.MCPGymError`, the command group (:class:`.style.MCPGymGroup`)
prints it as one line with its exit code, and :func:`main` turns anything else into one line.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings

import typer

from mcpgym.evaluation.cli.cat import cat
from mcpgym.evaluation.cli.compare import compare
from mcpgym.evaluation.cli.export import export
from mcpgym.evaluation.cli.play import play
from mcpgym.evaluation.cli.report import report
from mcpgym.evaluation.cli.run import run
from mcpgym.evaluation.cli.score import score
from mcpgym.evaluation.cli.serve import serve
from mcpgym.evaluation.cli.style import DEBUG, INTERRUPT_SAID, INTERRUPTED, MCPGymGroup, message, one_line
from mcpgym.evaluation.cli.tasks import tasks
from mcpgym.evaluation.cli.tools import tools
from mcpgym.evaluation.cli.view import view
from mcpgym.evaluation.complexmcp.command import complexmcp_app as _complexmcp_app
from mcpgym.evaluation.proxy.command import proxy as _proxy_command

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


# The commands, in the order `mcpgym --help` lists them.
app.command()(serve)
app.command()(tools)
app.command()(run)
app.command()(score)
app.command()(export)
app.command()(report)
app.command()(compare)
app.command()(view)
app.command()(play)
app.command()(cat)
app.command()(tasks)
# `mcpgym proxy` (docs/proxy.md): everything after --upstream is the upstream's command line.
app.command(name="proxy", context_settings={"allow_interspersed_args": False})(_proxy_command)
# `mcpgym complexmcp setup` (docs/complexmcp.md): ComplexMCP's own apps in a venv of their own.
app.add_typer(_complexmcp_app, name="complexmcp")


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


def _warning_line(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, line: str | None = None
) -> str:
    """mcpgym's own warnings as one line, ``warning: ...`` (no source file and line: they are
    about the user's files, not the code); others as Python shows them."""
    if category.__module__.startswith("mcpgym."):
        return f"warning: {message}\n"
    return _PYTHON_FORMATWARNING(message, category, filename, lineno, line)


_PYTHON_FORMATWARNING = warnings.formatwarning


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the command in ``argv`` (default: ``sys.argv[1:]``).

    Every user error (a bad option value, a missing file, an unwritable path: click usage
    errors and ``OSError``) is one line on stderr, ``error: ...``, with exit code 2; any other
    exception is one line with exit code 1 and a pointer to ``--debug``, which shows the
    traceback instead; an interrupt (Ctrl-C) is one line, ``interrupted``, exit 130. Exits via
    ``SystemExit`` with the command's exit code.
    """
    try:
        code = _main(argv)
    except KeyboardInterrupt:  # in the setup, while typer builds the command, or in a handler below
        typer.secho("interrupted", fg=typer.colors.YELLOW, err=True)
        code = INTERRUPTED
    raise SystemExit(code)


def _main(argv: list[str] | None) -> int:
    """:func:`main`'s work: run the command and return its exit code, each error as one line."""
    from typer import _click as click  # Typer 0.29 vendors click: its exceptions are these

    _escape_unencodable_output()
    warnings.formatwarning = _warning_line
    args = list(sys.argv[1:] if argv is None else argv)
    DEBUG["on"] = "--debug" in args  # accepted anywhere: `mcpgym run ... --debug` too
    args = [a for a in args if a != "--debug"]
    try:
        command = typer.main.get_command(app)
        code = command.main(args, prog_name="mcpgym", standalone_mode=False)
        if code == INTERRUPTED and not INTERRUPT_SAID["said"]:  # typer turns Ctrl-C into exit 130, silently
            typer.secho("interrupted", fg=typer.colors.YELLOW, err=True)
    except click.exceptions.NoArgsIsHelpError as exc:
        typer.echo(exc.ctx.get_help())
        code = 0
    except click.ClickException as exc:
        ctx = getattr(exc, "ctx", None)
        where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        typer.secho(f"error: {one_line(exc.format_message())}{where}", fg=typer.colors.RED, err=True)
        code = exc.exit_code
    except BrokenPipeError:
        # `mcpgym tasks | head -1`: the reader has what it wanted. Quietly, exit 0, and point
        # stdout at /dev/null so that the interpreter's last flush does not fail again.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    except typer.Abort:
        typer.secho("interrupted", fg=typer.colors.YELLOW, err=True)
        code = INTERRUPTED
    except KeyboardInterrupt:
        typer.secho("interrupted", fg=typer.colors.YELLOW, err=True)
        code = INTERRUPTED
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
            f"error: unexpected {type(exc).__name__}: {one_line(message(exc))} "
            "(run again with --debug for the traceback)",
            fg=typer.colors.RED,
            err=True,
        )
        code = 1
    return code if isinstance(code, int) else 0


__all__ = ["app", "main"]


if __name__ == "__main__":  # pragma: no cover
    main()
