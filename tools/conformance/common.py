"""Helpers shared by the conformance checks: worlds for one app, the deterministic call script,
and readable differences between JSON values."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from mcpgym.kernel.app import App, get_app
from mcpgym.kernel.spec import ToolKind, role_parameter
from mcpgym.kernel.world import World, canonical_json, normalise_apps
from mcpgym.tools.conformance.args import example_arguments, known_values
from mcpgym.tools.invoke import ToolInvoker

ROOT = Path(__file__).resolve().parents[2]
IMPORTS_ENV = "MCPGYM_CONFORMANCE_IMPORTS"
"""Environment variable: extra modules (dotted names or ``.py`` paths, ``os.pathsep``-separated)
that the determinism probe imports before building worlds (e.g. a test's throwaway app)."""
HASH_SEEDS = ("0", "4242")
"""The two ``PYTHONHASHSEED`` values of the cross-process determinism check."""


def app_cls(app: str | type[App]) -> type[App]:
    """The app class of ``app`` (a registered name or the class itself)."""
    return get_app(app) if isinstance(app, str) else app


def world_apps(app: str) -> list[str]:
    """The apps of a conformance world for ``app``: the always-included apps (``system``)
    plus the app itself."""
    return normalise_apps([app])


def app_state_json(world: World, app: str) -> str:
    """Canonical JSON of one app's state."""
    return canonical_json(world.apps[app].state.model_dump(mode="json"))


def first_difference(a: Any, b: Any, path: str = "state") -> str | None:
    """Return the first path where JSON data ``a`` and ``b`` differ, with both values (or None)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                return f"{path}.{k}: {'missing' if k not in a else short(a[k])} vs {'missing' if k not in b else short(b[k])}"
            found = first_difference(a[k], b[k], f"{path}.{k}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        if len(a) != len(b):
            return f"{path}: {len(a)} items vs {len(b)} items"
        return None
    return None if a == b else f"{path}: {short(a)} vs {short(b)}"


def short(value: Any) -> str:
    """Compact JSON of ``value`` for messages (at most 80 characters)."""
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _role_tool(invoker: ToolInvoker, role: str) -> tuple[str, str | None] | None:
    """The episode's first tool declaring ``role`` and its one required parameter, or None."""
    for name, spec in invoker.specs.items():
        if spec.role == role:
            return name, role_parameter(spec)
    return None


def grant_all_privileges(invoker: ToolInvoker) -> None:
    """Grant every privilege through the episode's ``grant`` tool (no-op without one): the
    privileges are the ``name`` of every item listed by the read tool of the grant tool's
    first resource family that takes no required arguments (e.g. a privilege listing)."""
    grant = _role_tool(invoker, "grant")
    if grant is None or grant[1] is None:
        return
    family = invoker.specs[grant[0]].resources[0]
    listing_tool = next(
        (
            n
            for n, s in invoker.specs.items()
            if s.kind == ToolKind.READ and s.resources[:1] == (family,) and not s.input_schema().get("required")
        ),
        None,
    )
    if listing_tool is None:
        return
    listing = invoker.call(listing_tool, {})
    for value in listing.payload.values():
        for item in value if isinstance(value, list) else []:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                invoker.call(grant[0], {grant[1]: item["name"]})


def run_script(invoker: ToolInvoker, app: str, rounds: Sequence[int] = (0, 1)) -> list[dict[str, Any]]:
    """Run the deterministic conformance script: every tool of ``app`` in name order, twice per
    round with :func:`example_arguments` (ids known at the start of the round); before round 1
    every privilege is granted and the clock advanced one virtual hour.

    Returns:
        One ``{"tool", "arguments", "is_error", "result"}`` per call (JSON-able).
    """
    log: list[dict[str, Any]] = []
    specs = sorted(name for name, s in invoker.specs.items() if s.app == app)
    for rnd in rounds:
        if rnd == 1:
            grant_all_privileges(invoker)
            wait = _role_tool(invoker, "wait")
            if wait is not None and wait[1] is not None:
                invoker.call(wait[0], {wait[1]: 3600})
        known = known_values(invoker.world, app)
        for name in specs:
            for rep in range(2):
                args = example_arguments(invoker.specs[name], invoker.world, f"round-{rnd}-{rep}", known)
                out = invoker.call(name, args)
                log.append(
                    {
                        "tool": name,
                        "arguments": args,
                        "is_error": out.is_error,
                        "result": out.payload,
                        "internal": out.record.internal,
                    }
                )
    return log


def internal_errors(log: Iterable[dict[str, Any]]) -> list[str]:
    """Problems for the calls of a :func:`run_script` log that raised a non-tool exception."""
    return [
        f"{c['tool']}({short(c['arguments'])}) raised a non-tool error: "
        f"{c['result'].get('error', {}).get('message', '')[:300]}"
        for c in log
        if c.get("internal")
    ]
