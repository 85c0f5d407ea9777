"""``ast`` parsing one thread at a time, for every caller in the package.

CPython 3.11 keeps the AST constructor's recursion depth per interpreter, not per thread: two
threads parsing at once can make one of them fail with ``SystemError: AST constructor recursion
depth mismatch``, and so can a later parse in the same process. It was seen in CI twice: task
templates parsed in a benchmark's threads, and a benchmark figure failing after readers had
parsed Python reprs of tool results. Every ``ast.parse`` / ``ast.literal_eval`` of mcpgym goes
through :func:`parse`, :func:`parse_expression` and :func:`literal_eval`, which hold :data:`AST_LOCK`.
"""

from __future__ import annotations

import ast
import threading
from typing import Any, Literal

AST_LOCK = threading.Lock()
"""Held while the standard library's AST constructor runs (module docstring)."""


def parse(source: str, mode: Literal["exec", "eval", "single"] = "exec", filename: str = "<unknown>") -> ast.AST:
    """:func:`ast.parse` under :data:`AST_LOCK`; raises what it raises (``SyntaxError``,
    ``ValueError``, ``RecursionError``, ``MemoryError``)."""
    with AST_LOCK:
        return ast.parse(source, filename=filename, mode=mode)


def parse_expression(source: str) -> ast.Expression:
    """``ast.parse(source, mode="eval")`` under :data:`AST_LOCK`: the expression's tree. Raises
    what :func:`ast.parse` raises."""
    with AST_LOCK:
        return ast.parse(source, mode="eval")


def literal_eval(source: str) -> Any:
    """:func:`ast.literal_eval` under :data:`AST_LOCK`; raises what it raises."""
    with AST_LOCK:
        return ast.literal_eval(source)


__all__ = ["AST_LOCK", "literal_eval", "parse", "parse_expression"]
