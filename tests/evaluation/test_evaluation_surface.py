"""The public surface of ``mcpgym.evaluation`` (evaluation/__init__.py): every exported name
resolves to the object of the module that defines it, and importing the package loads none
of its subpackages (the CLI's start-up stays cheap)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import mcpgym.evaluation as evaluation


def test_every_public_name_is_the_defining_modules_object():
    assert evaluation.__all__ == sorted(evaluation._EXPORTS)
    for name, module in evaluation._EXPORTS.items():
        assert getattr(evaluation, name) is getattr(importlib.import_module(module), name), name
    assert {"run_evaluation", "score_episode", "GymEpisode", "Agent", "Trajectory", "EpisodeScores"} <= set(
        evaluation.__all__
    )


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        evaluation.no_such_name  # noqa: B018


def test_importing_the_package_loads_no_subpackage():
    code = (
        "import sys, mcpgym.evaluation\nprint(sorted(m for m in sys.modules if m.startswith('mcpgym.evaluation.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
