"""Server truth, live (issue 35): mcpgym episodes played through the real harness packages,
each transcript saved as that harness's users save it and scored by ``mcpgym score`` against
the server's own trajectory of the same episode.

One ``mcpgym serve --transport http`` and one scripted model (tests/support/harnesses) serve
every harness; per harness three episodes of ``system.dark_mode``: ``careful`` under
``default``, ``overconfident`` and ``defeatist`` under ``harsh`` (blind retries, a rate limit,
an auth challenge, a give-up). With mcpgym's catalog every field must be equal, for the
harness's own transcript and for the same conversation as an OpenAI chat client logs it;
without a catalog every field must agree on at least 95% of the harness's episodes.

Inspect AI runs mcpgym's own Inspect task (``mcpgym_task``) with Inspect's ``openai-api``
provider on the scripted model; its ``.eval`` log, less mcpgym's record, is the transcript.

The harnesses come from the ``harnesses`` extra (Inspect from ``inspect``) (LangGraph from its own virtual environment,
``.venv-langgraph``: its ``langchain-mcp-adapters`` does not import with ``mcp>=2.3``); a
missing one skips naming what to install, and fails with ``MCPGYM_REQUIRE_HARNESSES=1`` (set
by ``.ci/run``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mcpgym.evaluation.formats.server_truth import NO_CATALOG_TARGET, agreement, compare_episode, transcripts_of
from tests.support.harnesses.episodes import HARNESSES, REQUIRE_ENV, play
from tests.support.harnesses.scripted_model import ScriptedModelServer
from tests.support.servers import HttpServer, spawn_server

EPISODES = (("careful", "default"), ("overconfident", "harsh"), ("defeatist", "harsh"))
TASK = "system.dark_mode"


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[HttpServer, ScriptedModelServer, httpx.Client]]:
    server = spawn_server()
    try:
        with ScriptedModelServer() as model, httpx.Client(timeout=30) as http:
            yield server, model, http
    finally:
        server.stop()


def _python(name: str) -> str:
    harness = HARNESSES[name]
    python = harness.python()
    if python is None:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 and {harness.why_missing()}")
        pytest.skip(harness.why_missing())
    return python


@pytest.mark.parametrize("name", sorted(HARNESSES))
def test_harness_transcripts_score_as_the_server_saw_the_episode(
    name: str, served: tuple[HttpServer, ScriptedModelServer, httpx.Client], tmp_path: Path
) -> None:
    python = _python(name)
    server, model, http = served
    folders = []
    for agent, faults in EPISODES:
        played = play(server, model, HARNESSES[name], python, TASK, agent, faults, tmp_path / f"{agent}-{faults}", http)
        assert played.episode["server_calls"] >= 1 and played.final
        folders.append(played.folder)
    with_catalog = [compare_episode(f, catalog=True, transcript_name=t) for f in folders for t in transcripts_of(f)]
    bare = [compare_episode(f, catalog=False, transcript_name=t) for f in folders for t in transcripts_of(f)]
    problems = {
        f"{Path(c.folder).name}/{c.harness}": c.problem or [d.model_dump() for d in c.differences]
        for c in with_catalog
        if c.differences
    }
    low = {
        h: {f: v for f, v in a.per_field.items() if v < NO_CATALOG_TARGET}
        for h, a in agreement(bare).items()
        if any(v < NO_CATALOG_TARGET for v in a.per_field.values())
    }
    assert not problems and not low, {"with mcpgym's catalog": problems, "without a catalog, fields under 95%": low}


def test_inspect_logs_score_as_the_server_saw_the_episode(
    served: tuple[HttpServer, ScriptedModelServer, httpx.Client], tmp_path: Path
) -> None:
    import importlib.util

    if importlib.util.find_spec("inspect_ai") is None:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 and inspect: needs the 'inspect' extra")
        pytest.skip("inspect: needs the 'inspect' extra (pip install -e '.[inspect]')")
    from tests.support.harnesses.inspect_episode import play_inspect

    server, model, _ = served
    folders = []
    for agent, faults in EPISODES:
        folder = tmp_path / f"{agent}-{faults}"
        episode = play_inspect(server, model, TASK, agent, faults, folder)
        assert episode["server_calls"] >= 1
        folders.append(folder)
    with_catalog = [compare_episode(f, catalog=True, transcript_name="transcript.eval") for f in folders]
    problems = [c.problem or [d.model_dump() for d in c.differences] for c in with_catalog if c.differences]
    bare = [compare_episode(f, catalog=False, transcript_name="transcript.eval") for f in folders]
    low = {f: v for a in agreement(bare).values() for f, v in a.per_field.items() if v < NO_CATALOG_TARGET}
    differences = [d.model_dump() for c in bare for d in c.differences]
    assert not problems and not low, {"with mcpgym's catalog": problems, "without a catalog": (low, differences)}
