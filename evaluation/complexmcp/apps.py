"""ComplexMCP's seven apps, each a fastmcp server on a loopback port, run from a set-up folder.

The apps run in the folder's own virtual environment (:mod:`mcpgym.evaluation.complexmcp.install`)
with ``fastmcp run software/<App>/app.py --transport http`` in the folder's copy of their tree
(they read their corpora from paths relative to the working directory, and import
``software.utils``). Each is started on a free port of 127.0.0.1 and waited for, with a
deadline, until its streamable-HTTP endpoint answers; their output goes to
``DIR/logs/<App>.<port>.log``. :func:`running_apps` stops exactly the processes it started.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from mcpgym.kernel.exceptions import ServiceError

APP_NAMES: tuple[str, ...] = (
    "LightSystem",
    "LightTalk",
    "LightShop",
    "LightWeather",
    "LightFlight",
    "LightStock",
    "LightNews",
)
"""The apps, in the order their harness registers them (``config/general.yaml``): the order
decides which of two apps' equal tool names gets the app's name as a prefix."""
SYSTEM_APP = "LightSystem"
"""The clock app every other app logs into (their ``os_cfg``)."""
DEFAULT_START_TIMEOUT = 90.0
"""Wall seconds one app may take to answer after its start (fastmcp imports are slow on a busy machine)."""
STOP_TIMEOUT = 10.0
"""Wall seconds an app has to exit after SIGTERM before it is killed."""


class AppsError(ServiceError, RuntimeError):
    """An app could not be started or did not answer in time; the message names it and its log."""


class RunningApps(BaseModel):
    """Where the started apps listen: app name -> its ``http://127.0.0.1:PORT/mcp`` endpoint."""

    urls: dict[str, str]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(port: int) -> bool:
    """True when ``port`` takes a connection and answers an HTTP GET of ``/mcp`` (any status)."""
    import httpx

    try:
        httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=2.0)
    except httpx.HTTPError:
        return False
    return True


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + STOP_TIMEOUT
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=STOP_TIMEOUT)


@contextlib.contextmanager
def running_apps(
    folder: Path, apps: tuple[str, ...] = APP_NAMES, *, start_timeout: float = DEFAULT_START_TIMEOUT
) -> Iterator[RunningApps]:
    """Start ``apps`` from the set-up ``folder`` (``mcpgym complexmcp setup --dir``) and stop them on exit.

    Args:
        folder: the set-up folder (its ``venv/`` and ``tree/``).
        apps: which apps (LightSystem is always started: the others log into it).
        start_timeout: wall seconds each app has to answer, counted from its start.

    Raises:
        AppsError: the folder is not set up, an app exited, or one did not answer within
            ``start_timeout`` (the message names the app and the end of its log). Every app
            started is stopped first.
    """
    from mcpgym.evaluation.complexmcp.install import SetupFolder

    setup = SetupFolder.open(folder)
    wanted = [a for a in APP_NAMES if a in apps or a == SYSTEM_APP]
    logs = setup.folder / "logs"
    logs.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"}
    env.pop("VIRTUAL_ENV", None)
    procs: list[subprocess.Popen[bytes]] = []
    started: dict[str, tuple[subprocess.Popen[bytes], int, float, Path]] = {}
    try:
        for app in wanted:
            port = _free_port()
            log = logs / f"{app}.{port}.log"  # two runs of one folder write apart
            with log.open("wb") as out:
                proc = subprocess.Popen(
                    [str(setup.fastmcp), "run", f"software/{app}/app.py", "--transport", "http"]
                    + ["--host", "127.0.0.1", "--port", str(port), "--no-banner"],
                    cwd=setup.tree,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            procs.append(proc)
            started[app] = (proc, port, time.monotonic(), log)
        for app, (proc, port, since, log) in started.items():
            _wait_for(app, proc, port, since + start_timeout, log)
        yield RunningApps(urls={app: f"http://127.0.0.1:{port}/mcp" for app, (_, port, _, _) in started.items()})
    finally:
        _stop(procs)


def _wait_for(app: str, proc: subprocess.Popen[bytes], port: int, deadline: float, log: Path) -> None:
    """Wait until ``app`` answers on ``port``, at the latest until ``deadline`` (monotonic seconds).

    Raises:
        AppsError: it exited, or the deadline passed.
    """
    while True:
        if proc.poll() is not None:
            raise AppsError(f"{app} exited with status {proc.returncode} before answering; its log: {_tail(log)}")
        if _answers(port):
            return
        if time.monotonic() > deadline:
            raise AppsError(f"{app} did not answer on 127.0.0.1:{port} in time; its log: {_tail(log)}")
        time.sleep(0.2)


def _tail(log: Path, size: int = 600) -> str:
    try:
        text = log.read_bytes()[-size:].decode("utf-8", "replace")
    except OSError:
        return f"{log} (unreadable)"
    return f"{log}: ...{' '.join(text.split())}"
