"""Errors of the oracle expression language (see :mod:`mcpgym.evaluation.tasks.expr`)."""

from __future__ import annotations


class ExprError(ValueError):
    """An expression or template uses syntax outside the whitelist (raised at load time)."""


class EvalError(ValueError):
    """An expression failed at run time (missing field, wrong type, undefined name...)."""


__all__ = ["EvalError", "ExprError"]
