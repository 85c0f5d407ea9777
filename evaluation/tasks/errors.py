"""Errors of the oracle expression language (see :mod:`mcpgym.evaluation.tasks.expr`)."""

from __future__ import annotations

from mcpgym.kernel.exceptions import InputError


class ExprError(InputError, ValueError):
    """An expression or template uses syntax outside the whitelist (raised at load time)."""


class EvalError(InputError, ValueError):
    """An expression failed at run time (missing field, wrong type, undefined name...)."""


__all__ = ["EvalError", "ExprError"]
