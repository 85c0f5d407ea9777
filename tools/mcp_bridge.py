"""Map tool specs and call outcomes onto MCP SDK types.

The only module of ``tools`` that imports the MCP SDK (sandboxes never do).
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from mcpgym.kernel.errors import ErrorPayload
from mcpgym.kernel.spec import ToolKind, ToolSpec
from mcpgym.tools.invoke import CallOutcome


def annotations_for(spec: ToolSpec) -> types.ToolAnnotations:
    """MCP ``ToolAnnotations`` of a spec.

    ``read`` -> readOnly, idempotent; ``write`` -> not read-only, destructive when the tool
    declares ``destructive=True`` on ``@tool`` (never guessed from its name); ``auth`` ->
    neither. ``openWorldHint`` is always False: every tool acts on a closed sandbox.
    """
    if spec.kind == ToolKind.READ:
        return types.ToolAnnotations(
            title=spec.name.replace("_", " "),
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        )
    return types.ToolAnnotations(
        title=spec.name.replace("_", " "),
        read_only_hint=False,
        destructive_hint=spec.kind == ToolKind.WRITE and spec.destructive,
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
            **({"mcpgym/role": spec.role} if spec.role else {}),
        },
    )


def call_result(outcome: CallOutcome) -> types.CallToolResult:
    """The MCP ``CallToolResult`` of an outcome.

    Success: JSON text content plus structured content matching the tool's output schema.
    Tool error: ``isError`` set and the payload ``{"error": {code, message, retryable,
    retry_after, field}}`` as JSON text only: clients (the TypeScript SDK among them) validate
    any structured content against the output schema, which describes the success shape.
    Read either with :func:`payload_of`.
    """
    text = json.dumps(outcome.payload, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=None if outcome.is_error else outcome.payload,
        is_error=outcome.is_error,
    )


def payload_of(result: Any) -> dict[str, Any]:
    """The JSON payload of a ``CallToolResult``: its structured content, else its first text
    content parsed as JSON (``{"text": ...}`` when it is not JSON)."""
    structured = getattr(result, "structured_content", None)
    if isinstance(structured, dict):
        return structured
    for block in getattr(result, "content", None) or []:
        text = getattr(block, "text", None)
        if text is None:
            continue
        try:
            data = json.loads(text)
        except ValueError:
            return {"text": text}
        return data if isinstance(data, dict) else {"value": data}
    return {}


def error_result(code: str, message: str, field: str | None = None) -> types.CallToolResult:
    """A tool-error result built outside the invoker (e.g. an unknown episode)."""
    payload = ErrorPayload(code=code, message=message, field=field).result()
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(payload))], is_error=True)
