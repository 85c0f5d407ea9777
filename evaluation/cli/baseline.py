"""The published baseline runs (docs/baselines.md): the three scripted agents and one local
model (:mod:`mcpgym.evaluation.llm.local_model`) on the fixed ``baseline`` suite, with
``default`` faults, in one run directory, so that one report sets them side by side.

``python -m mcpgym.evaluation.cli.baseline --out runs/baseline [--model NAME | --model-path
FILE.gguf]`` starts the model server on loopback (under ``nice``; the 0.5B when no model is
named), then runs ``mcpgym run`` with :data:`MODEL_SETTINGS`; ``--resume`` continues a run that
was stopped, ``--trials`` / ``--model-threads`` / ``--model-context`` set what they say. Options
after ``--`` go to ``mcpgym run`` as they are.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from mcpgym.evaluation.llm.local_model import DEFAULT_CONTEXT, DEFAULT_THREADS, MODEL_NAME, serve_local_model

SUITE = "baseline"
"""The suite the baseline is published on (``evaluation/tasks/data/suites.yaml``)."""

SCRIPTED = ("careful", "overconfident", "defeatist")

MODEL_SETTINGS = (
    "--tools",
    "task",
    "--temperature",
    "0",
    "--seed",
    "0",
    "--max-turns",
    "8",
    "--max-output-tokens",
    "128",
    "--request-timeout",
    "600",
    "--agent-option",
    "max_retries=1",
    "--timeout",
    "1800",
    "--concurrency",
    "1",
)
"""How the model is run: only the oracle's tools are offered (``--tools task``: a CPU model
reads a prompt of every tool of four apps in minutes), greedy decoding with a fixed seed, at
most 8 turns of 128 output tokens, one episode at a time (the server has one slot)."""


def command(out: Path, trials: int, resume: bool, extra: list[str], model: str = MODEL_NAME) -> list[str]:
    """The ``mcpgym run`` arguments of the baseline run into ``out``, the model agent being
    ``openai:<model>`` (the served model's name)."""
    args = ["run", "--suite", SUITE, "--trials", str(trials), "--faults", "default", "--out", str(out)]
    for agent in (*SCRIPTED, f"openai:{model}"):
        args += ["--agent", agent]
    args += list(MODEL_SETTINGS)
    if resume:
        args.append("--resume")
    return args + extra


def main(argv: list[str] | None = None) -> None:
    """Run the baseline (see the module docstring); exits with ``mcpgym run``'s exit code.

    Raises:
        SystemExit: (a one-line error) when the model is not installed, is unknown, or its file
            is no GGUF.
    """
    from mcpgym.evaluation.cli.app import main as cli_main
    from mcpgym.evaluation.llm.local_model import ModelUnavailable, resolve_model
    from mcpgym.kernel.exceptions import InputError

    parser = argparse.ArgumentParser(prog="python -m mcpgym.evaluation.cli.baseline", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("runs/baseline"), help="the run directory")
    parser.add_argument("--trials", type=int, default=3, help="trials per agent and task")
    parser.add_argument("--model", default=None, help=f"a bundled model's name (default {MODEL_NAME})")
    parser.add_argument("--model-path", type=Path, default=None, help="any GGUF file to run instead")
    parser.add_argument(
        "--model-threads",
        "--threads",
        dest="threads",
        type=int,
        default=DEFAULT_THREADS,
        help=f"llama.cpp CPU threads (default {DEFAULT_THREADS}, from benchmarks/local_generation.py)",
    )
    parser.add_argument(
        "--model-context", type=int, default=DEFAULT_CONTEXT, help="the model server's context window in tokens"
    )
    parser.add_argument("--nice", type=int, default=19, help="the model server's nice increment")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out")
    parser.add_argument("rest", nargs="*", help="more mcpgym run options (after --)")
    args = parser.parse_args(argv)
    try:
        model = resolve_model(args.model, args.model_path)
        log = args.out.parent / f"{args.out.name}.model.log"  # beside the run ("baseline-1.5b" has a dot)
        with serve_local_model(
            threads=args.threads, context=args.model_context, niceness=args.nice, log=log, model=model
        ) as url:
            os.environ["OPENAI_BASE_URL"] = url
            cli_main(command(args.out, args.trials, args.resume, args.rest, model=model.name))
    except (ModelUnavailable, InputError, ValueError) as exc:
        raise SystemExit(f"error: {exc}") from None


__all__ = ["MODEL_SETTINGS", "SCRIPTED", "SUITE", "command", "main"]

if __name__ == "__main__":
    main()
