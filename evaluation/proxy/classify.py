"""Classifying an upstream's tools for the proxy's faults and for the scorer.

Order (the first that says something wins):

1. a row of the ``--catalog FILE`` (a JSON catalog, the rows ``mcpgym tools --json`` prints:
   ``name, kind, role, resources, remedies, alternatives, ...``): the user's word;
2. the tool's MCP annotations, by the scorer's own rule
   (:func:`mcpgym.evaluation.scoring.call_kinds.kind_from_annotations`: ``readOnlyHint: true``
   is a ``read``, ``readOnlyHint: false`` or ``destructiveHint: true`` a ``write``). Without a catalog row the proxy
   knows no resource families, so such a tool reads or writes the one family
   ``external.upstream`` (any later read verifies a write: the lenient reading);
3. otherwise the scorer's own name rules, by one call of
   :meth:`mcpgym.evaluation.scoring.tool_catalog.Catalog.get` (which falls back to
   :func:`mcpgym.evaluation.scoring.tool_catalog.classify_tool`), so a change of those rules reaches the proxy.

``sources`` records which of the three classified each tool (``catalog``, ``annotations``,
``name rules``): the trajectory's metadata keeps it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcpgym.evaluation.scoring.call_kinds import kind_from_annotations
from mcpgym.evaluation.scoring.tool_catalog import Catalog, CatalogEntry
from mcpgym.server.proxy.plan import ProxiedTool

UPSTREAM_APP = "external"
"""The app name of upstream tools (fault-profile ``apps`` overrides use it)."""
UPSTREAM_FAMILY = f"{UPSTREAM_APP}.upstream"
"""The resource family of a tool classified by its annotations alone."""


class ToolClassifier:
    """Classifies upstream tools (see the module docstring) and remembers the entries.

    Args:
        catalog_path: a JSON catalog file (None: none).

    Raises:
        ValueError: naming the file, for an invalid catalog; OSError when it is unreadable.
    """

    def __init__(self, catalog_path: str | Path | None = None) -> None:
        self.catalog = Catalog.from_file(catalog_path) if catalog_path is not None else Catalog([])
        self.catalog_path = str(catalog_path) if catalog_path is not None else None
        self.entries: dict[str, CatalogEntry] = {}
        self.sources: dict[str, str] = {}

    def entry(self, tool: Any) -> CatalogEntry:
        """The catalog entry of an MCP ``Tool`` (``name``, ``description``, ``annotations``)."""
        name = tool.name
        if name in self.catalog:
            entry, source = self.catalog.get(name), "catalog"
        else:
            hints = getattr(tool, "annotations", None)
            kind, destructive = kind_from_annotations(hints) if hints is not None else (None, False)
            if kind is not None:
                entry = CatalogEntry(
                    name=name,
                    app=UPSTREAM_APP,
                    kind=kind,
                    destructive=destructive,
                    resources=[UPSTREAM_FAMILY],
                    description=tool.description or "",
                    source="file",
                )
                source = "annotations"
            else:
                entry, source = self.catalog.get(name, tool.description), "name rules"
        self.entries[name], self.sources[name] = entry, source
        return entry

    def proxied(self, tool: Any) -> ProxiedTool:
        """What the fault plan needs of ``tool`` (its kind, role, alternatives)."""
        entry = self.entry(tool)
        return ProxiedTool(
            name=entry.name,
            kind=str(entry.kind),
            app=UPSTREAM_APP,
            role=entry.role,
            never_faulted=entry.never_faulted,
            alternatives=list(entry.alternatives),
        )

    def rows(self) -> list[dict[str, Any]]:
        """The entries classified so far as catalog rows (what ``--catalog`` reads back)."""
        return [e.model_dump(mode="json", exclude={"source"}) for e in self.entries.values()]
