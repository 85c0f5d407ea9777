"""Shared pytest configuration."""

import json as _json
import os
import secrets as _secrets
import signal
import subprocess as _subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

os.environ.setdefault("HYPOTHESIS_PROFILE", "ci")

# A suite started in the background (`nohup python -m pytest &`) inherits SIGINT and SIGQUIT
# ignored, and so would every server and run it spawns: a test that interrupts one would find it
# deaf (shared/cases: "SIGINT ignored by inheritance"). The tests set the dispositions they need
# instead: Python's own handler here, so that children start with the default one (a handler is
# not inherited across exec; an ignored signal is).
for _sig, _handler in ((signal.SIGINT, signal.default_int_handler), (signal.SIGQUIT, signal.SIG_DFL)):
    if signal.getsignal(_sig) == signal.SIG_IGN:
        signal.signal(_sig, _handler)

try:
    from hypothesis import HealthCheck, settings

    settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
except ImportError:  # pragma: no cover
    pass


def spawn_http_server(*extra: str, token: str | None = None) -> tuple[_subprocess.Popen, str, str]:
    """Start ``mcpgym serve --transport http --port 0`` and return (process, base_url, token)."""
    token = token or _secrets.token_urlsafe(16)
    # A file, not a pipe: a chatty server never blocks. It lives as long as the server.
    errlog = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
    proc = _subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcpgym.evaluation.cli",
            "serve",
            "--transport",
            "http",
            "--port",
            "0",
            "--token",
            token,
            *extra,
        ],
        stdout=_subprocess.PIPE,
        stderr=errlog,
        text=True,
        cwd=str(ROOT),
    )
    line = proc.stdout.readline()
    if not line.startswith("MCPGYM_READY "):
        proc.kill()
        proc.wait()
        errlog.seek(0)
        raise RuntimeError(f"server did not start: {line!r} {errlog.read()}")
    url = _json.loads(line.split(" ", 1)[1])["url"]
    return proc, url, token


@pytest.fixture(scope="session")
def http_server():
    """A real mcpgym HTTP server on a loopback port for the whole session: (base_url, token)."""
    proc, url, token = spawn_http_server()
    try:
        yield url, token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except _subprocess.TimeoutExpired:
            proc.kill()


# -- parallel runs (pytest-xdist, `-n 2 --dist loadfile` in pyproject's addopts) --------------
SLOW_FIRST = (
    "tests/evaluation/llm/test_real_model.py",
    "tests/benchmarks/test_benchmarks.py",
    "tests/integrations/test_harness_server_truth.py",
    "tests/reliability/test_load.py",
    "tests/evaluation/tasks/test_task_suite.py",
    "tests/reliability/test_crash_safety.py",
    "tests/evaluation/run/test_ray_executor.py",
    "tests/sandboxes/test_plugin_bundle.py",
    "tests/kernel/test_broken_plugin.py",
    "tests/evaluation/run/test_runner.py",
    "tests/docs/test_readme_integrations.py",
    "tests/integrations/test_integration_inspect.py",
    "tests/integrations/test_integration_openenv.py",
    # ComplexMCP's apps (each module starts them once, about 30 s) and their judge on 94 states
    "tests/evaluation/complexmcp/test_complexmcp_suite.py",
    "tests/evaluation/complexmcp/test_complexmcp_docs.py",
    "tests/evaluation/complexmcp/test_complexmcp_judge.py",
    "tests/integrations/test_rl_concurrency.py",
)
"""Modules of half a minute or more (a long module-scoped fixture, a Ray cluster, hundreds of
episodes): they start first, longest first, so that no worker is left running one of them
alone at the end of the run. The two that start Ray clusters (the benchmarks' tiny run and
the Ray executor) are apart in the order, so they seldom run at the same time."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the slow modules first (the others keep their file order).

    With ``--dist loadfile --no-loadscope-reorder`` (pyproject's addopts) xdist hands whole
    modules to its workers in this order, so module-scoped fixtures (a server, a Ray cluster, a
    whole suite of episodes) are built once, on one worker, as in a serial run.
    """
    rank = {path: i for i, path in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


# -- the reliability suite's figures (tests/reliability/conftest.py records them) ---------------
FIGURE_PROPERTY = "reliability_figure"
"""``user_properties`` key of a figure: ``(name, text)``, recorded in the call phase."""
CPU_PROPERTY = "reliability_cpu_seconds"
"""``user_properties`` key of a reliability test's CPU seconds, recorded in its teardown."""
_FIGURES: dict[str, str] = {}
_CPU: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the reliability figures and CPU seconds from the reports, xdist workers' too."""
    for key, value in report.user_properties:
        if key == FIGURE_PROPERTY and report.when == "call":
            _FIGURES[value[0]] = value[1]
        elif key == CPU_PROPERTY and report.when == "teardown":
            _CPU[report.nodeid.split("::", 1)[-1]] = value


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the reliability figures and the CPU seconds per reliability test."""
    if not _FIGURES and not _CPU:
        return
    write = terminalreporter.write_line
    terminalreporter.section("reliability figures")
    for name, text in _FIGURES.items():
        write(f"{name}: {text}")
    if _CPU:
        write(
            f"CPU seconds (pytest + servers and runners it started): {sum(_CPU.values()):.1f} in all; "
            + ", ".join(f"{k} {v:.1f}" for k, v in sorted(_CPU.items(), key=lambda kv: -kv[1]))
        )


@pytest.fixture
def fake():
    """A loopback fake LLM provider (:class:`tests.support.fake_provider.FakeProvider`) for one test;
    a scripted action that raised fails the test."""
    from tests.support.fake_provider import FakeProvider

    provider = FakeProvider()
    try:
        yield provider
    finally:
        provider.close()
    assert provider.errors == [], provider.errors


def run_text(run_dir: Path) -> str:
    """The trajectory lines of a run directory as plain JSON Lines text (its
    ``trajectories.jsonl.zst`` decompressed; an older run's ``trajectories.jsonl`` as it is)."""
    from mcpgym.evaluation.records.compressed import read_text
    from mcpgym.evaluation.run.run_dir import trajectories_file

    return read_text(trajectories_file(run_dir))[0]
