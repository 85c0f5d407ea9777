"""One error base: every exception mcpgym raises on purpose is an ``MCPGymError`` of a kind
(``mcpgym.kernel.exceptions``), keeps the builtin base its callers catch, and the ``mcpgym``
command turns it into one line and the kind's exit code in one place (``MCPGymGroup``)."""

from __future__ import annotations

import ast
import importlib

import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.cli import app
from mcpgym.kernel.exceptions import (
    FormatError,
    InputError,
    MCPGymError,
    RunDirectoryError,
    ScoringError,
    ServiceError,
    UnknownName,
)
from tests.conftest import ROOT

LAYERS = {
    "src/mcpgym": "mcpgym",
    "tools": "mcpgym.tools",
    "server": "mcpgym.server",
    "sandboxes": "mcpgym.sandboxes",
    "evaluation": "mcpgym.evaluation",
    "benchmarks": "mcpgym.benchmarks",
}
BUILTIN_EXCEPTIONS = {"Exception", "ValueError", "KeyError", "RuntimeError", "AssertionError", "TypeError", "OSError"}


def _exception_classes() -> list[tuple[str, str]]:
    """(module, class) of every public class whose bases name an exception, read from the source."""
    found = []
    for folder, package in LAYERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            rel = path.relative_to(ROOT / folder).with_suffix("")
            module = ".".join([package, *rel.parts]).removesuffix(".__init__")
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                    bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                    if bases & BUILTIN_EXCEPTIONS or any(b.endswith(("Error", "Failure")) for b in bases):
                        found.append((module, node.name))
    return found


def test_every_public_exception_is_an_mcpgym_error() -> None:
    classes = _exception_classes()
    assert len(classes) >= 22, classes
    outside = []
    for module, name in classes:
        cls = getattr(importlib.import_module(module), name)
        if isinstance(cls, type) and issubclass(cls, BaseException) and not issubclass(cls, MCPGymError):
            outside.append(f"{module}.{name}")
    assert outside == []


def test_the_named_errors_keep_their_builtin_bases_and_have_a_kind() -> None:
    from mcpgym.evaluation.llm.transport import ProviderError
    from mcpgym.evaluation.records.trajectory import TrajectoryFileError
    from mcpgym.evaluation.run.run_dir import RunError
    from mcpgym.evaluation.run.server_process import ServerError
    from mcpgym.evaluation.tasks import TaskLoadError
    from mcpgym.kernel.app import UnknownAppError
    from mcpgym.kernel.errors import ToolError
    from mcpgym.tools.faults import FaultProfileError

    assert issubclass(UnknownAppError, InputError) and issubclass(UnknownAppError, KeyError)
    assert issubclass(FaultProfileError, InputError) and issubclass(FaultProfileError, ValueError)
    assert issubclass(TaskLoadError, InputError) and issubclass(TaskLoadError, ValueError)
    assert issubclass(TrajectoryFileError, FormatError) and issubclass(TrajectoryFileError, ValueError)
    assert issubclass(RunError, RunDirectoryError) and issubclass(RunError, RuntimeError)
    assert issubclass(ServerError, ServiceError) and issubclass(ServerError, RuntimeError)
    assert issubclass(ProviderError, ServiceError) and issubclass(ToolError, MCPGymError)
    assert (InputError.exit_code, RunDirectoryError.exit_code, ServiceError.exit_code, ScoringError.exit_code) == (
        2,
        2,
        1,
        1,
    )


def test_an_unknown_name_reads_without_quotes_and_is_a_key_error() -> None:
    from mcpgym.evaluation.tasks import get_task

    with pytest.raises(KeyError) as info:
        get_task("no.such_task")
    assert isinstance(info.value, UnknownName) and str(info.value).startswith("unknown task 'no.such_task'")


@pytest.mark.parametrize(
    ("error", "code"),
    [(ScoringError("no states to judge"), 1), (InputError("bad --thing"), 2), (ServiceError("provider down"), 1)],
)
def test_the_command_group_prints_one_line_and_the_kinds_exit_code(
    monkeypatch: pytest.MonkeyPatch, error: MCPGymError, code: int
) -> None:
    import mcpgym.tools.catalog

    def broken(app: str | None = None) -> list[dict[str, object]]:
        raise type(error)(f"{error}\nsecond line")

    monkeypatch.setattr(mcpgym.tools.catalog, "catalog", broken)
    result = CliRunner().invoke(app, ["tools"])
    assert result.exit_code == code
    assert result.stderr == f"error: {error} second line\n" and result.stdout == ""


def test_named_errors_reach_the_user_as_one_line_with_exit_code_2(tmp_path) -> None:  # noqa: ANN001
    unknown_app = CliRunner().invoke(app, ["tools", "--app", "nope"])
    assert unknown_app.exit_code == 2 and unknown_app.stderr.startswith("error: unknown app 'nope'")
    bad = tmp_path / "bad.toml"
    bad.write_text("[rates]\nexplode = 0.5\n", encoding="utf-8")
    profile = CliRunner().invoke(app, ["serve", "--faults", str(bad)])
    assert profile.exit_code == 2 and profile.stderr.count("\n") == 1
    assert "unknown fault kind 'explode'" in profile.stderr


def test_the_commands_do_not_catch_mcpgym_errors_one_by_one() -> None:
    """The CLI module catches only builtin errors it adds context to; the named errors are
    handled by MCPGymGroup."""
    text = (ROOT / "evaluation" / "cli" / "app.py").read_text(encoding="utf-8")
    for name in ("FaultProfileError", "RunError", "ServerError", "UnknownAppError"):
        assert f"except {name}" not in text and f"{name})" not in text, name
