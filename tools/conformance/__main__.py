"""Command line of the conformance checks.

``python -m mcpgym.tools.conformance APP [APP ...] [--examples N] [--no-subprocess]`` runs every check
and prints the problems (exit status 1 if any). ``--probe APP [APP ...] --seed S`` is the internal mode
of the cross-process determinism check: it imports the modules named in
``MCPGYM_CONFORMANCE_IMPORTS``, runs :func:`mcpgym.tools.conformance.checks.probe` and prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable


def _at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``low`` (a smaller one is a usage error, exit 2)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    return parse


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status (0 = every app conforms)."""
    parser = argparse.ArgumentParser(prog="python -m mcpgym.conformance", description=__doc__.splitlines()[0])
    parser.add_argument("apps", nargs="*", help="app names (default: every registered app)")
    parser.add_argument(
        "--probe", metavar="APP", nargs="+", help="internal: print the determinism probes of APPs as JSON"
    )
    parser.add_argument("--seed", type=_at_least(0), default=7, help="world seed of --probe")
    parser.add_argument("--examples", type=_at_least(1), default=15, help="hypothesis examples per tool (at least 1)")
    parser.add_argument("--no-subprocess", action="store_true", help="skip the cross-process determinism check")
    args = parser.parse_args(argv)

    from mcpgym.tools.conformance.checks import IMPORTS_ENV, import_extra, probe, run_all

    import_extra(os.environ.get(IMPORTS_ENV, "").split(os.pathsep))
    if args.probe:
        json.dump({app: probe(app, args.seed) for app in args.probe}, sys.stdout, allow_nan=False)
        return 0
    from mcpgym.kernel.app import app_names, broken_apps, unknown_app_message

    known = app_names()
    unknown = [a for a in args.apps if a not in known]
    if unknown:
        hint = (
            "" if unknown[0] in broken_apps() else f" (an app outside this repository: set {IMPORTS_ENV}=your_module)"
        )
        print(f"error: {unknown_app_message(unknown[0], known)}{hint}", file=sys.stderr)
        return 2
    try:
        import hypothesis  # noqa: F401 - the fuzz check needs it
    except ImportError:
        print("error: the conformance checks need the dev extra: pip install -e '.[dev]'", file=sys.stderr)
        return 2
    failed = False
    for app in args.apps or known:
        results = run_all(app, max_examples=args.examples, cross_process=not args.no_subprocess)
        count = sum(len(p) for p in results.values())
        print(f"{app}: {'ok' if count == 0 else f'{count} problem(s)'}")
        for check, problems in results.items():
            for p in problems:
                print(f"  [{check}] {p}")
        failed = failed or count > 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
