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
- :func:`check_source`: no wall clock, global ``random``, ``uuid``, ``os.urandom`` or ``hash()``
  in the app's source files.
"""

from __future__ import annotations

from tools.conformance.calls import (
    ConformanceFailure,
    StateKeeper,
    check_read_tools_pure,
    check_tool_fuzz,
    outcome_problem,
)
from tools.conformance.common import (
    HASH_SEEDS,
    IMPORTS_ENV,
    ROOT,
    app_state_json,
    first_difference,
    grant_all_privileges,
    run_script,
    world_apps,
)
from tools.conformance.determinism import (
    check_determinism,
    check_determinism_many,
    check_in_process_determinism,
    check_snapshot_roundtrip,
    compare_probes,
    import_extra,
    probe,
)
from tools.conformance.metadata import check_metadata, check_source, lint_source, source_files


def run_all(app: str, max_examples: int = 15, cross_process: bool = True) -> dict[str, list[str]]:
    """Run every check on ``app``; returns check name -> problems (empty lists when it conforms)."""
    out = {
        "metadata": check_metadata(app),
        "source": check_source(app),
        "in_process_determinism": check_in_process_determinism(app),
        "snapshot_roundtrip": check_snapshot_roundtrip(app),
        "read_tools_pure": check_read_tools_pure(app),
        "tool_fuzz": check_tool_fuzz(app, max_examples=max_examples),
    }
    if cross_process:
        out["determinism"] = check_determinism(app)
    return out


__all__ = [
    "HASH_SEEDS", "IMPORTS_ENV", "ROOT", "ConformanceFailure", "StateKeeper", "app_state_json",
    "check_determinism", "check_determinism_many", "check_in_process_determinism", "check_metadata",
    "check_read_tools_pure", "check_snapshot_roundtrip", "check_source", "check_tool_fuzz",
    "compare_probes", "first_difference", "grant_all_privileges", "import_extra", "lint_source",
    "outcome_problem", "probe", "run_all", "run_script", "source_files", "world_apps",
]
