"""What several ``mcpgym`` commands share: the terminal console, whether an option was given
on the command line, and the parser of float options (finite, in range).

Errors are not printed here: a command raises an
:class:`~mcpgym.kernel.exceptions.MCPGymError` and the command group
(:class:`mcpgym.evaluation.cli.style.MCPGymGroup`) prints it as one line with its exit code.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import typer


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


def _shown(bound: float) -> str:
    """A bound as the user would write it (``2``, not ``2.0``)."""
    return str(int(bound)) if bound == int(bound) else str(bound)


def finite_number(minimum: float | None, maximum: float | None) -> Callable[[str], float]:
    """A typer ``parser`` for a float option: the text as a finite number from ``minimum`` to
    ``maximum`` (either None: unbounded on that side).

    Typer checks a float option's ``min``/``max`` with comparisons a NaN passes or fails for the
    wrong reason (``--temperature nan``: "should be less than or equal to 2"), so a float flag
    parses here instead and says what is wrong: not a number, not finite, or out of range.

    Raises (from the parser):
        typer.BadParameter: naming the value and the range.
    """
    if minimum is not None and maximum is not None:
        span = f" from {_shown(minimum)} to {_shown(maximum)}"
    elif minimum is not None:
        span = f" of at least {_shown(minimum)}"
    elif maximum is not None:
        span = f" of at most {_shown(maximum)}"
    else:
        span = ""

    def parse(text: Any) -> float:
        if isinstance(text, int | float) and not isinstance(text, bool):
            value = float(text)
        else:
            try:
                value = float(str(text).strip())
            except ValueError:
                raise typer.BadParameter(f"must be a finite number{span}, got {str(text)[:40]!r}") from None
        if not math.isfinite(value):
            raise typer.BadParameter(f"must be a finite number{span}, got {str(text)[:40]!r}")
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise typer.BadParameter(f"must be a number{span}, got {str(text)[:40]!r}")
        return value

    return parse


__all__ = ["console", "finite_number", "given"]
