"""Processes for the reliability tests: an HTTP server whose stderr goes to a file (a pipe
nobody drains would block a server that logs a lot of refused requests), a raw stdio
JSON-RPC peer, and /proc readings (RSS, listening sockets)."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import secrets
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import ROOT

READY_TIMEOUT = 60.0


@dataclass
class HttpServer:
    """A running ``mcpgym serve --transport http`` process."""

    proc: subprocess.Popen
    url: str
    token: str
    stderr_path: Path

    @property
    def auth(self) -> dict[str, str]:
        """The control API's Authorization header."""
        return {"Authorization": f"Bearer {self.token}"}

    stderr_text: str | None = None

    def stderr(self) -> str:
        """Everything the server wrote on stderr so far (kept after :meth:`stop`)."""
        if self.stderr_text is not None:
            return self.stderr_text
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def rss_kb(self) -> int:
        """The server's resident set size in KiB (``VmRSS`` of /proc/<pid>/status)."""
        return rss_kb(self.proc.pid)

    def cpu_seconds(self) -> float:
        """User + system CPU seconds the server has used so far."""
        return cpu_seconds(self.proc.pid)

    def stop(self) -> int:
        """Terminate the server and return its exit code."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        if self.proc.stdout:
            self.proc.stdout.close()
        if self.stderr_text is None:
            self.stderr_text = self.stderr()
            self.stderr_path.unlink(missing_ok=True)
        return self.proc.returncode


def create(http: httpx.Client, server: HttpServer, **body: Any) -> dict[str, Any]:
    """POST /control/episodes through ``http`` (a reused client: a fresh one per request costs
    ~80 ms of CA-bundle loading) and return the answer, asserting 201."""
    r = http.post(f"{server.url}/control/episodes", json=body, headers=server.auth)
    assert r.status_code == 201, r.text
    return r.json()


def control_get(http: httpx.Client, server: HttpServer, path: str) -> Any:
    """GET a control route through ``http`` and return its JSON, asserting 200."""
    r = http.get(f"{server.url}{path}", headers=server.auth)
    assert r.status_code == 200, r.text
    return r.json()


def spawn_server(*extra: str, token: str | None = None, env: dict[str, str] | None = None) -> HttpServer:
    """Start ``mcpgym serve --transport http --port 0`` with ``extra`` flags; wait for MCPGYM_READY."""
    token = token or secrets.token_urlsafe(16)
    fd, name = tempfile.mkstemp(prefix="mcpgym-server-", suffix=".log")
    stderr = os.fdopen(fd, "wb")
    args = [sys.executable, "-m", "mcpgym.evaluation.cli", "serve", "--transport", "http", "--port", "0", *extra]
    if token != "-":
        args += ["--token", token]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=str(ROOT), env={**os.environ, **(env or {})}
    )
    stderr.close()
    line = _readline(proc, READY_TIMEOUT)
    if not line.startswith("MCPGYM_READY "):
        proc.kill()
        raise RuntimeError(f"server did not start: {line!r} {Path(name).read_text(errors='replace')[-2000:]}")
    ready = json.loads(line.split(" ", 1)[1])
    return HttpServer(proc, ready["url"], ready.get("token", token), Path(name))


def _readline(proc: subprocess.Popen, timeout: float) -> str:
    out: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: out.put(proc.stdout.readline()), daemon=True).start()
    try:
        return out.get(timeout=timeout)
    except queue.Empty:
        return ""


def rss_kb(pid: int) -> int:
    """``VmRSS`` of process ``pid`` in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def listening_addresses(pid: int) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket in LISTEN state owned by ``pid`` (IPv4 and IPv6)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table, width in (("tcp", 8), ("tcp6", 32)):
        path = Path(f"/proc/{pid}/net/{table}")
        if not path.exists():
            continue
        for row in path.read_text().splitlines()[1:]:
            cols = row.split()
            local, state, inode = cols[1], cols[3], cols[9]
            if state != "0A" or inode not in inodes:
                continue
            addr_hex, port_hex = local.split(":")
            raw = bytes.fromhex(addr_hex)
            if width == 8:
                addr = ".".join(str(b) for b in raw[::-1])
            else:
                words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
                addr = ":".join(b"".join(words)[i : i + 2].hex() for i in range(0, 16, 2))
            found.append((addr, int(port_hex, 16)))
    return found


class RawStdio:
    """``mcpgym serve --transport stdio`` driven with raw bytes, one JSON-RPC message per line.

    Args:
        args: extra ``serve`` flags.
    """

    def __init__(self, *args: str) -> None:
        fd, name = tempfile.mkstemp(prefix="mcpgym-stdio-", suffix=".log")
        self.stderr_path = Path(name)
        with os.fdopen(fd, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "mcpgym.evaluation.cli", "serve", "--transport", "stdio", *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=str(ROOT),
            )
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def send(self, line: bytes | str | dict[str, Any]) -> None:
        """Write one line (a dict is JSON-encoded) followed by a newline."""
        if isinstance(line, dict):
            line = json.dumps(line)
        data = line.encode("utf-8") if isinstance(line, str) else line
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 30.0) -> dict[str, Any]:
        """The next message the server wrote (fails after ``timeout`` seconds)."""
        line = self._lines.get(timeout=timeout)
        assert line, f"the server closed stdout; stderr: {self.stderr()[-2000:]}"
        return json.loads(line)

    def silent(self, wait: float = 0.3) -> bool:
        """True when the server writes nothing within ``wait`` seconds."""
        try:
            line = self._lines.get(timeout=wait)
        except queue.Empty:
            return True
        self._lines.put(line)
        return False

    def request(self, message: bytes | str | dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
        """Send one line and return the next message written back."""
        self.send(message)
        return self.receive(timeout)

    _stderr_text: str | None = None

    def stderr(self) -> str:
        """What the server wrote on stderr (kept after :meth:`close`)."""
        if self._stderr_text is not None:
            return self._stderr_text
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def close(self, timeout: float = 15.0) -> int:
        """Close stdin and return the exit code (the stderr file is then removed)."""
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        finally:
            self._stderr_text = self.stderr()
            self.stderr_path.unlink(missing_ok=True)
