"""Conformance checks every sandbox app must pass (used by tests/conformance, usable by app authors).

Every ``check_*`` function takes an app name (or class) and returns a list of problems as
human-readable strings; an empty list means the app conforms. Nothing here raises for a
misbehaving app: a crash of the app under test is reported as a problem.

- :func:`check_metadata`: tool names, kinds, resources, remedies/alternatives, schemas, docs.
- :func:`check_determinism`: the same seed and calls give the same state and results in two
  processes with different ``PYTHONHASHSEED``; another seed gives another state.
- :func:`check_snapshot_roundtrip`: snapshot -> JSON -> restore keeps the hash, and both worlds
  stay equal under further identical calls.
- :func:`check_read_tools_pure`: read tools never change the state.
- :func:`check_tool_fuzz`: hypothesis-generated and hostile arguments never crash a tool;
  successes match the output model, errors carry a known code, failed writes change nothing.
- :func:`check_schema_agreement`: the input schema a client sees and the server's argument
  validation accept and refuse the same calls (no silent coercion of wrong JSON types).
- :func:`check_clock_shift`: every write leaves the same comparable state at a slightly later
  virtual clock (clock-derived fields are ``VOLATILE``, or the tool declares ``time_dependent``).
- :func:`check_source`: no wall clock, global ``random``, ``uuid``, ``os.urandom`` or ``hash()``
  in the app's source files.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from mcpgym.kernel.app import App, load_apps, register_app, unregister_app
from mcpgym.kernel.exceptions import MCPGymError
from mcpgym.tools.conformance.calls import (
    ConformanceFailure,
    StateKeeper,
    check_read_tools_pure,
    check_tool_fuzz,
    outcome_problem,
)
from mcpgym.tools.conformance.clock_shift import check_clock_shift
from mcpgym.tools.conformance.common import (
    HASH_SEEDS,
    IMPORTS_ENV,
    ROOT,
    app_state_json,
    first_difference,
    grant_all_privileges,
    run_script,
    world_apps,
)
from mcpgym.tools.conformance.determinism import (
    check_determinism,
    check_determinism_many,
    check_in_process_determinism,
    check_snapshot_roundtrip,
    compare_probes,
    import_extra,
    probe,
)
from mcpgym.tools.conformance.metadata import check_metadata, check_source, lint_source, source_files
from mcpgym.tools.conformance.schema_agreement import check_schema_agreement


def run_all(
    app: str, max_examples: int = 15, cross_process: bool = True, imports: Sequence[str] = ()
) -> dict[str, list[str]]:
    """Run every check on the registered app ``app``; returns check name -> problems (empty lists
    when it conforms). ``imports`` names modules the cross-process check imports first (for an
    app outside the registered plugins)."""
    out = {
        "metadata": check_metadata(app),
        "source": check_source(app),
        "in_process_determinism": check_in_process_determinism(app),
        "snapshot_roundtrip": check_snapshot_roundtrip(app),
        "read_tools_pure": check_read_tools_pure(app),
        "tool_fuzz": check_tool_fuzz(app, max_examples=max_examples),
        "schema_agreement": check_schema_agreement(app),
        "clock_shift": check_clock_shift(app),
    }
    if cross_process:
        out["determinism"] = check_determinism(app, imports=imports)
    return out


class AppCheckError(MCPGymError, AssertionError):
    """Raised by :func:`check_app` when an app does not conform.

    Attributes:
        problems: check name -> the problems it found (only checks with problems).
    """

    def __init__(self, app: str, problems: dict[str, list[str]]) -> None:
        self.problems = problems
        lines = [f"[{check}] {p}" for check, found in problems.items() for p in found]
        super().__init__(f"app {app!r} does not conform ({len(lines)} problem(s)):\n  " + "\n  ".join(lines))


def check_app(app_cls: type[App], max_examples: int = 15, cross_process: bool = True) -> dict[str, list[str]]:
    """Run the whole conformance suite on an app class (the counterpart of Gymnasium's ``check_env``).

    The class need not be registered: it is registered for the duration of the check (and left
    as it was afterwards). The cross-process determinism check re-imports ``app_cls.__module__``
    in fresh interpreters, so it runs only when that module is importable by name; otherwise it
    is reported as skipped in the result (``{"determinism": []}`` is then absent).

    Args:
        app_cls: an :class:`~mcpgym.kernel.app.App` subclass.
        max_examples: hypothesis examples per tool for the fuzz check.
        cross_process: run the cross-process determinism check (two fresh interpreters with
            different ``PYTHONHASHSEED``).

    Returns:
        check name -> problems (all empty) when the app conforms.

    Raises:
        TypeError: when ``app_cls`` is not an App subclass.
        AppCheckError: listing every problem when the app does not conform.
    """
    if not (isinstance(app_cls, type) and issubclass(app_cls, App)):
        raise TypeError(f"check_app takes an App subclass, got {app_cls!r}")
    registered = load_apps().get(app_cls.name)
    if registered is not None and registered is not app_cls:
        unregister_app(app_cls.name)
    if registered is not app_cls:
        register_app(app_cls)
    module = app_cls.__module__
    importable = module != "__main__" and importlib.util.find_spec(module) is not None
    try:
        results = run_all(
            app_cls.name,
            max_examples=max_examples,
            cross_process=cross_process and importable,
            imports=(module,) if importable else (),
        )
    finally:
        if registered is not app_cls:
            unregister_app(app_cls.name)
            if registered is not None:
                register_app(registered)
    failed = {check: found for check, found in results.items() if found}
    if failed:
        raise AppCheckError(app_cls.name, failed)
    return results


__all__ = [
    "AppCheckError",
    "HASH_SEEDS",
    "IMPORTS_ENV",
    "ROOT",
    "ConformanceFailure",
    "check_app",
    "StateKeeper",
    "app_state_json",
    "check_clock_shift",
    "check_schema_agreement",
    "check_determinism",
    "check_determinism_many",
    "check_in_process_determinism",
    "check_metadata",
    "check_read_tools_pure",
    "check_snapshot_roundtrip",
    "check_source",
    "check_tool_fuzz",
    "compare_probes",
    "first_difference",
    "grant_all_privileges",
    "import_extra",
    "lint_source",
    "outcome_problem",
    "probe",
    "run_all",
    "run_script",
    "source_files",
    "world_apps",
]
