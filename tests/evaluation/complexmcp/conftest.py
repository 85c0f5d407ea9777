"""Fixtures of the complexmcp suite's tests: ComplexMCP's tree and a set-up folder of its apps.

The tree is ``$MCPGYM_COMPLEXMCP_SOURCE``, else the folder ``shared/complexmcp`` beside the repository
(CI has it). Where it is absent the tests that need it skip, saying so; with
``MCPGYM_REQUIRE_COMPLEXMCP=1`` (set by .ci/run) they fail instead. The set-up folder is
``$MCPGYM_COMPLEXMCP_DIR`` when given (.ci/run sets one up once per run), else one made for
the test session (pip's cache makes that about 30 s).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcpgym.evaluation.complexmcp.install import SetupError, check_source, default_source, setup


def complexmcp_source() -> Path:
    """The ComplexMCP tree; skips (or fails with MCPGYM_REQUIRE_COMPLEXMCP=1) without it."""
    source = default_source()
    try:
        check_source(source)
    except SetupError as exc:
        if os.environ.get("MCPGYM_REQUIRE_COMPLEXMCP") == "1":
            pytest.fail(f"MCPGYM_REQUIRE_COMPLEXMCP=1 and there is no ComplexMCP tree: {exc}")
        pytest.skip(
            f"no ComplexMCP tree (shared/complexmcp beside the repository, or $MCPGYM_COMPLEXMCP_SOURCE): {exc}"
        )
    return source


@pytest.fixture(scope="session")
def complexmcp_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A set-up folder of ComplexMCP's apps (module docstring)."""
    source = complexmcp_source()
    given = os.environ.get("MCPGYM_COMPLEXMCP_DIR")
    folder = Path(given) if given else tmp_path_factory.mktemp("complexmcp") / "apps"
    setup(folder, source, echo=lambda _line: None)
    return folder
