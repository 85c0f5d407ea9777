"""Conformance checks for sandbox apps (docs/design.md §2-§3), reusable outside the test suite.

Each ``check_*`` returns a list of problems (empty = conforms). Run them all on an app with
``python -m mcpgym.tools.conformance APP [APP ...]`` or :func:`run_all`; the pytest suite
``tests/conformance`` runs them over every registered app.
"""

from mcpgym.tools.conformance.args import (
    arguments_strategy,
    example_arguments,
    hostile_arguments,
    known_values,
    long_text_arguments,
    text_strategy,
)
from mcpgym.tools.conformance.checks import (
    AppCheckError,
    check_app,
    check_clock_shift,
    check_determinism,
    check_determinism_many,
    check_in_process_determinism,
    check_metadata,
    check_read_tools_pure,
    check_schema_agreement,
    check_snapshot_roundtrip,
    check_source,
    check_tool_fuzz,
    lint_source,
    outcome_problem,
    run_all,
    run_script,
)

__all__ = [
    "AppCheckError",
    "check_app",
    "check_clock_shift",
    "check_schema_agreement",
    "arguments_strategy",
    "example_arguments",
    "hostile_arguments",
    "known_values",
    "long_text_arguments",
    "text_strategy",
    "check_determinism",
    "check_determinism_many",
    "check_in_process_determinism",
    "check_metadata",
    "check_read_tools_pure",
    "check_snapshot_roundtrip",
    "check_source",
    "check_tool_fuzz",
    "lint_source",
    "outcome_problem",
    "run_all",
    "run_script",
]
