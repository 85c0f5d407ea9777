"""What several ``mcpgym`` commands share: the terminal console and whether an option was
given on the command line.

Errors are not printed here: a command raises an
:class:`~mcpgym.kernel.exceptions.MCPGymError` and the command group
(:class:`mcpgym.evaluation.cli.style.MCPGymGroup`) prints it as one line with its exit code.
"""

from __future__ import annotations

from typing import Any


def console(stderr: bool = False) -> Any:
    """The ``rich`` console commands print tables to (stdout, or stderr)."""
    from mcpgym.evaluation.report.tables import terminal_console

    return terminal_console(stderr)


def given(param: str) -> bool:
    """Whether the running command's option ``param`` (its Python name) was given on the
    command line (or the environment), not left at its default."""
    from typer._click.core import ParameterSource
    from typer._click.globals import get_current_context

    source = get_current_context().get_parameter_source(param)
    return source is not None and source is not ParameterSource.DEFAULT


__all__ = ["console", "given"]
