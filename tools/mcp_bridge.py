"""Map tool specs and call outcomes onto MCP SDK types.

The only module of ``tools`` that imports the MCP SDK (sandboxes never do).
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from tools.invoke import CallOutcome
from tools.spec import ToolSpec

DESTRUCTIVE_VERBS = frozenset(
    {"delete", "cancel", "remove", "revoke", "clear", "leave", "block", "unstar", "archive", "sell", "withdraw", "unsubscribe", "close", "short"}
)


def annotations_for(spec: ToolSpec) -> types.ToolAnnotations:
    """MCP ``ToolAnnotations`` of a spec.

    ``read`` -> readOnly, idempotent; ``write`` -> not read-only, destructive when its verb
    deletes, cancels, removes, revokes... (second word of the name); ``auth`` -> neither.
    ``openWorldHint`` is always False: every tool acts on a closed sandbox.
    """
    verb = spec.name.split("_")[1] if "_" in spec.name else spec.name
    if spec.kind == "read":
        return types.ToolAnnotations(
            title=spec.name.replace("_", " "), read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        )
    return types.ToolAnnotations(
        title=spec.name.replace("_", " "),
        read_only_hint=False,
        destructive_hint=spec.kind == "write" and verb in DESTRUCTIVE_VERBS,
        idempotent_hint=False,
        open_world_hint=False,
    )


def mcp_tool(spec: ToolSpec) -> types.Tool:
    """The MCP ``Tool`` (name, description, input and output schema, annotations, and the
    mcpgym metadata under ``_meta["mcpgym/..."]``) for ``spec``."""
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.input_schema(),
        output_schema=spec.output_schema(),
        annotations=annotations_for(spec),
        _meta={
            "mcpgym/app": spec.app,
            "mcpgym/kind": spec.kind,
            "mcpgym/resources": list(spec.resources),
        },
    )


def call_result(outcome: CallOutcome) -> types.CallToolResult:
    """The MCP ``CallToolResult`` of an outcome: JSON text content plus structured content;
    ``isError`` set for tool errors (payload ``{"error": {code, message, retryable,
    retry_after, field}}``)."""
    text = json.dumps(outcome.payload, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=outcome.payload,
        is_error=outcome.is_error,
    )


def error_result(code: str, message: str, field: str | None = None) -> types.CallToolResult:
    """A tool-error result built outside the invoker (e.g. an unknown episode)."""
    payload: dict[str, Any] = {"error": {"code": code, "message": message, "retryable": False, "retry_after": None, "field": field}}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(payload))], structured_content=payload, is_error=True
    )
