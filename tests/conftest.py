"""Shared pytest configuration."""

import json as _json
import os
import secrets as _secrets
import subprocess as _subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

os.environ.setdefault("HYPOTHESIS_PROFILE", "ci")

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
