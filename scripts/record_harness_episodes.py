"""Play mcpgym episodes through real agent harnesses and keep both sides (issue 35, server truth).

``python scripts/record_harness_episodes.py OUT_DIR [--harness NAME ...]`` writes
``OUT_DIR/<harness>/<task>-<agent>-<faults>/`` episode folders (transcript.json as the harness's
users save it, openai_messages.json for Chat Completions harnesses, server_trajectory.jsonl,
episode.json: :mod:`tests.support.harnesses.episodes`) for :data:`EPISODES` under every
harness installed (:data:`tests.support.harnesses.episodes.HARNESSES`). It refuses an OUT_DIR
folder that already holds an episode folder of the same name (nothing is overwritten).
``tests/data/harness/`` was recorded so; ``mcpgym.evaluation.formats.server_truth`` compares them.
Run from the repository root with the dev venv (``PYTHONPATH=.``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import httpx

from tests.support.harnesses.episodes import HARNESSES, play
from tests.support.harnesses.scripted_model import ScriptedModelServer
from tests.support.servers import spawn_server

EPISODES = [
    *[
        ("system.dark_mode", agent, faults)
        for agent in ("careful", "overconfident", "defeatist")
        for faults in ("default", "harsh")
    ],
    ("flights.book_cheapest_berlin_paris", "careful", "harsh"),
    ("flights.book_cheapest_berlin_paris", "overconfident", "harsh"),
]
"""(task, scripted agent, fault profile) of every recorded episode: the three behaviours under
both profiles, and two episodes with timeouts, transient errors and auth challenges."""


def _inspect(server: object, model: ScriptedModelServer, out: Path) -> int:
    """Record :data:`EPISODES` through Inspect AI (mcpgym's Inspect task); the number that failed."""
    import importlib.util

    if importlib.util.find_spec("inspect_ai") is None:
        print("skipped: inspect: needs the 'inspect' extra", file=sys.stderr)
        return 0
    from tests.support.harnesses.inspect_episode import play_inspect

    failed = 0
    for task, agent, faults in EPISODES:
        folder = out / "inspect" / f"{task}-{agent}-{faults}"
        if folder.exists():
            print(f"refused: {folder} exists", file=sys.stderr)
            failed += 1
            continue
        try:
            episode = play_inspect(server, model, task, agent, faults, folder)  # type: ignore[arg-type]
        except RuntimeError as exc:
            print(f"failed: {exc}", file=sys.stderr)
            failed += 1
            continue
        print(f"inspect {task} {agent} {faults}: {episode['server_calls']} calls")
    return failed


def main() -> int:
    """Record the episodes; exit 1 when a harness run failed or a folder already exists."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--harness", action="append", choices=[*sorted(HARNESSES), "inspect"])
    args = ap.parse_args()
    failed = 0
    server = spawn_server()
    try:
        with ScriptedModelServer() as model, httpx.Client(timeout=30) as http:
            for name in args.harness or [*sorted(HARNESSES), "inspect"]:
                if name == "inspect":
                    failed += _inspect(server, model, args.out)
                    continue
                harness = HARNESSES[name]
                python = harness.python()
                if python is None:
                    print(f"skipped: {harness.why_missing()}", file=sys.stderr)
                    continue
                for task, agent, faults in EPISODES:
                    folder = args.out / name / f"{task}-{agent}-{faults}"
                    if folder.exists():
                        print(f"refused: {folder} exists", file=sys.stderr)
                        failed += 1
                        continue
                    try:
                        played = play(server, model, harness, python, task, agent, faults, folder, http)
                    except RuntimeError as exc:
                        print(f"failed: {exc}", file=sys.stderr)
                        failed += 1
                        continue
                    print(f"{name} {task} {agent} {faults}: {played.episode['server_calls']} calls")
    finally:
        server.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
