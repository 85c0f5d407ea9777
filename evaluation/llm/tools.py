"""The episode's tools as a provider sees them: valid function names and object schemas.

OpenAI and Anthropic both require function names matching ``^[a-zA-Z0-9_-]{1,64}$`` and an
object JSON Schema for the arguments. mcpgym's tool names already match (docs/design.md §3);
other names are mapped (invalid characters -> ``_``, cut to 64, de-duplicated with a numeric
suffix) and the map is kept, so a call is always sent to the server under its MCP name.

In retrieval mode the episode starts with the ``search_tools`` meta-tool only; the tools a
successful search returns (name, description, input schema) are added to the registry and
offered to the model from its next turn on, matching what the server unlocks.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

NAME_RULE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""The function-name rule of the OpenAI and Anthropic tool APIs."""

SEARCH_TOOL_NAME = "search_tools"
"""The retrieval meta-tool (``mcpgym.server.retrieval.SEARCH_TOOL_NAME``)."""

_INVALID = re.compile(r"[^a-zA-Z0-9_-]")


def provider_name(name: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A function name valid for both APIs for MCP tool ``name``, not in ``taken``.

    ``name`` itself when it is valid and free; otherwise invalid characters become ``_``, the
    result is cut to 64 characters (``tool`` when empty) and suffixed ``_2``, ``_3``... until
    it is free.
    """
    if NAME_RULE.match(name) and name not in taken:
        return name
    base = _INVALID.sub("_", name)[:64] or "tool"
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        suffix = f"_{n}"
        candidate = base[: 64 - len(suffix)] + suffix
    return candidate


def object_schema(schema: Any) -> dict[str, Any]:
    """A deep copy of ``schema`` usable as function parameters: ``type: object`` with a
    ``properties`` mapping (some providers reject an object schema without one). A schema
    that is not an object schema is replaced by an empty object schema."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return {"type": "object", "properties": {}}
    out = copy.deepcopy(schema)
    out["type"] = "object"
    if not isinstance(out.get("properties"), dict):
        out["properties"] = {}
    return out


@dataclass(frozen=True)
class ExposedTool:
    """One tool offered to the model.

    Attributes:
        api_name: the function name the provider sees.
        name: the MCP tool name calls are sent under.
        description: the description the model reads.
        parameters: the object JSON Schema of the arguments.
    """

    api_name: str
    name: str
    description: str
    parameters: dict[str, Any]


class ToolRegistry:
    """The tools offered to the model in one episode, in a stable order.

    Args:
        tools: ``ToolInfo``-like objects (``name``, ``description``, ``input_schema``).
    """

    def __init__(self, tools: Iterable[Any]) -> None:
        self._by_api: dict[str, ExposedTool] = {}
        self._by_name: dict[str, ExposedTool] = {}
        for t in tools:
            self.add(t.name, getattr(t, "description", "") or "", getattr(t, "input_schema", None))

    def add(self, name: object, description: object, input_schema: Any) -> bool:
        """Offer MCP tool ``name`` to the model; False when it is already offered or ``name``
        is not a non-empty string (it may come straight from a server's JSON). A description
        that is not a string counts as empty."""
        if not isinstance(name, str) or not name or name in self._by_name:
            return False
        api = provider_name(name, set(self._by_api))
        tool = ExposedTool(api, name, description if isinstance(description, str) else "", object_schema(input_schema))
        self._by_api[api] = tool
        self._by_name[name] = tool
        return True

    def resolve(self, api_name: Any) -> ExposedTool | None:
        """The tool the model means by ``api_name``, or None (a hallucinated tool)."""
        return self._by_api.get(api_name) if isinstance(api_name, str) else None

    @property
    def tools(self) -> list[ExposedTool]:
        """The offered tools, in the order they were added."""
        return list(self._by_api.values())

    def __len__(self) -> int:
        return len(self._by_api)

    @property
    def has_search(self) -> bool:
        """True when the retrieval meta-tool is offered."""
        return SEARCH_TOOL_NAME in self._by_name

    def absorb_search_result(self, payload: Any) -> list[str]:
        """Add the tools of a successful ``search_tools`` payload ``{"tools": [{name,
        description, input_schema}]}``; return the MCP names newly offered."""
        added: list[str] = []
        tools = payload.get("tools") if isinstance(payload, dict) else None
        for entry in tools if isinstance(tools, list) else []:
            if isinstance(entry, dict) and self.add(
                entry.get("name"), entry.get("description", ""), entry.get("input_schema")
            ):
                added.append(entry["name"])
        return added


__all__ = ["ExposedTool", "NAME_RULE", "SEARCH_TOOL_NAME", "ToolRegistry", "object_schema", "provider_name"]
