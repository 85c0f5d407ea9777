"""A create refused because what it would make exists already: the goal holds.

``create_dataset`` answered ``409 ... Already Exists: Dataset x`` or ``mkdir`` answered
``File exists`` refuses nothing the agent needs: the object it wanted is there. Every labeller
of toolathlon's t18 (docs/labelling.md, "recovery_attempts") read such an answer as a definitive
one with nothing to overcome: no recovery attempt is owed, the agent's next use of the object is
no "alternative", and a final message naming the creation is no false success.

:func:`goal_holds` decides it for transcripts recorded elsewhere (tools known only by the name
rules): the tool is a write whose verb (among the first tokens of its name, the app prefix
skipped) is in :data:`CREATE_VERBS`, and the error text says the object exists
(:data:`ALREADY_EXISTS_RE`). An update or a rename refused that way ("name already exists") is
not covered: its goal does not hold.
"""

from __future__ import annotations

import re

from mcpgym.evaluation.scoring.calls import Call
from mcpgym.evaluation.scoring.tool_catalog import NAMESPACE_SEP_RE, name_tokens
from mcpgym.kernel.spec import ToolKind

CREATE_VERBS: frozenset[str] = frozenset(["create", "add", "insert", "make", "mkdir", "new", "register", "init"])
"""Verbs of a tool that makes a new object (``create_dataset``, ``add_label``, ``mkdir``)."""

ALREADY_EXISTS_RE = re.compile(r"\balready\s+exists?\b|\bFile exists\b|\bEEXIST\b", re.IGNORECASE)
"""An error text saying the object a create would make is there already."""

VERB_TOKENS = 3
"""The create verb must be among the first this many tokens of the tool's own name, after its
last namespace separator (:data:`~mcpgym.evaluation.scoring.tool_catalog.NAMESPACE_SEP_RE`): ``bigquery_create_dataset``."""


def goal_holds(call: Call) -> bool:
    """True when ``call`` is a failed create of a tool known only by the name rules whose error
    says its object exists already (module docstring); False for a success, a catalog tool, or
    another refusal."""
    if call.ok or call.entry.source != "heuristic" or call.entry.kind != ToolKind.WRITE:
        return False
    action = NAMESPACE_SEP_RE.split(call.tool)[-1]  # google-cloud-bigquery_create_dataset: the server's own name
    if not any(t in CREATE_VERBS for t in name_tokens(action)[:VERB_TOKENS]):
        return False
    return bool(ALREADY_EXISTS_RE.search(call.error_text[:2000]))


__all__ = ["ALREADY_EXISTS_RE", "CREATE_VERBS", "VERB_TOKENS", "goal_holds"]
