"""Issue 36, the proxy: what a hostile upstream or a slow client can make ``mcpgym proxy`` hold or wait.

Each test runs the real proxy (``python -m mcpgym.evaluation.cli proxy``) as a subprocess in
front of a real upstream where one shows the case (``mcp-server-git``), else the loopback
server of tests/support/proxy_upstream.py for faults a real server cannot show (a broken
answer, a flood of notifications). Memory is the proxy process's resident set read from
``/proc``, bounded; no test times anything but its own deadline.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.conftest import ROOT
from tests.support.proxy_helpers import profile_file, proxy_params, recorded, text_of
from tests.support.proxy_upstream import BROKEN_SHAPES

UPSTREAM = [sys.executable, "-m", "tests.support.proxy_upstream"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # the SDK path and the fast path (server/proxy/fast.py)
async def test_a_broken_upstream_answer_is_unavailable_at_once(tmp_path, mode):
    """Each way an answer can break the protocol (a result of the wrong shape whose text says
    "within", neither result nor error, a malformed error, a 5,000-digit integer, a lone
    surrogate, no ``jsonrpc``) is the tool error ``unavailable``, not retryable, long before
    the 60 s ``--call-timeout`` (before: a retryable ``timeout`` after the whole deadline)."""
    notes, record = tmp_path / "notes", tmp_path / "rec"
    notes.mkdir()
    params = proxy_params(record, "--faults", "none", "--call-timeout", "60", upstream=[*UPSTREAM, str(notes)])
    async with Client(params, mode=mode) as client:
        await client.list_tools()
        for shape in BROKEN_SHAPES:
            started = time.monotonic()
            with anyio.fail_after(30):  # a deadline, half the call timeout: no timing is asserted
                answer = await client.call_tool("broken_answer", {"shape": shape})
            assert answer.is_error and '"code": "unavailable"' in text_of(answer), (shape, text_of(answer))
            assert '"retryable": false' in text_of(answer) and "broke the protocol" in text_of(answer)
            assert time.monotonic() - started < 30
        still = await client.call_tool("note_read", {"name": "missing"})  # the session goes on
        assert text_of(still) == "no note missing"
    (line,) = recorded(record)
    assert [s["error_code"] for s in line["steps"]] == ["unavailable"] * len(BROKEN_SHAPES) + [None]
    assert line["status"] == "errored" and "broke the protocol" in line["stop_reason"]
    assert line["ledger"] == []


def _status(pid: int, field: str) -> int:
    """A ``/proc/PID/status`` figure in KiB (``VmRSS``: resident now, ``VmHWM``: its peak)."""
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith(field + ":"):
            return int(row.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


class RawClient:
    """A handshake-era client on the proxy's own pipes (``upstream``: the loopback server on
    ``notes`` unless given; ``options``: ``--faults none`` unless given), reading only when told
    to (a slow client is one that does not call :meth:`read_until` for a while)."""

    def __init__(self, record: Path, notes: Path | None, *options: str, upstream: list[str] | None = None) -> None:
        command = upstream if upstream is not None else [*UPSTREAM, str(notes)]
        params = proxy_params(record, *(options or ("--faults", "none")), upstream=command)
        self.proc = subprocess.Popen(
            [params.command, *params.args],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.notifications: dict[str, int] = {}
        self._buffer = b""
        self._next = 0

    def send(self, method: str, params: dict | None = None, *, notify: bool = False) -> int:
        """Write one request (or notification) line; its id."""
        self._next += 1
        msg = {"jsonrpc": "2.0", "method": method, **({} if notify else {"id": self._next})}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({**msg, **({"params": params} if params else {})}).encode() + b"\n")
        self.proc.stdin.flush()
        return self._next

    def read_until(self, rid: int, deadline: float = 120) -> dict:
        """Read lines until the answer to ``rid`` (notifications counted by method); that answer."""
        assert self.proc.stdout is not None
        stop = time.monotonic() + deadline
        while time.monotonic() < stop:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                msg = json.loads(line)
                if "method" in msg:
                    self.notifications[msg["method"]] = self.notifications.get(msg["method"], 0) + 1
                elif msg.get("id") == rid:
                    return msg
            ready, _, _ = select.select([self.proc.stdout], [], [], 1.0)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                assert chunk, "the proxy closed its stdout"
                self._buffer += chunk
        raise AssertionError(f"no answer to request {rid} within {deadline} s")

    def start(self) -> None:
        """Initialise and list the tools."""
        info = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
        self.read_until(self.send("initialize", info))
        self.send("notifications/initialized", notify=True)
        self.read_until(self.send("tools/list"))

    def call(self, name: str, arguments: dict) -> int:
        """Send a ``tools/call``; its id."""
        return self.send("tools/call", {"name": name, "arguments": arguments})

    def close(self) -> str:
        """End the session (stdin closed); the proxy's stderr."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0
        return self.proc.stderr.read().decode()


FLOOD = 40_000
"""Notifications in one flood (the issue's count)."""
MAX_RELISTINGS = 400
"""Re-listings a flood may cause (the 40,000 arrive faster than one listing answers)."""


def test_a_flood_of_tool_list_changes_is_relisted_coalesced(tmp_path):
    """40,000 ``notifications/tools/list_changed`` start a handful of re-listings (one in
    flight, one pending: 13 when measured; before: 40,000 listings and +670 MB), the proxy's
    peak memory grows by less than 64 MiB, and the session goes on."""
    notes, record = tmp_path / "notes", tmp_path / "rec"
    notes.mkdir()
    client = RawClient(record, notes)
    client.start()
    before = _status(client.proc.pid, "VmRSS")
    answer = client.read_until(client.call("flood", {"method": "notifications/tools/list_changed", "count": FLOOD}))
    assert answer["result"]["content"][0]["text"] == f"flooded {FLOOD}"
    after = client.read_until(client.call("note_read", {"name": "missing"}))
    assert after["result"]["content"][0]["text"] == "no note missing"
    grown = _status(client.proc.pid, "VmHWM") - before
    client.close()
    (line,) = recorded(record)
    notices = line["metadata"]["proxy"]["notifications"]
    assert notices["tools_list_changed"] == FLOOD
    assert 1 <= notices["relistings"] <= MAX_RELISTINGS, notices
    # each re-listing tells the client once (the last may come after the client stopped reading)
    assert 1 <= client.notifications.get("notifications/tools/list_changed", 0) <= notices["relistings"]
    print(f"relistings {notices['relistings']}, proxy grew {grown} KiB")
    assert grown < 64 * 1024, f"the proxy grew {grown} KiB"


def test_log_messages_to_a_client_that_does_not_read_are_bounded_and_counted(tmp_path):
    """40,000 log notifications of 256 characters to a client that reads nothing while they
    come: the proxy holds at most ``MAX_CLIENT_BUFFER`` of them and drops the rest, counted in
    the recording and on stderr; every one is either delivered or counted (before: +484 MB)."""
    from mcpgym.server.proxy.server import MAX_CLIENT_BUFFER

    notes, record = tmp_path / "notes", tmp_path / "rec"
    notes.mkdir()
    client = RawClient(record, notes)
    client.start()
    before = _status(client.proc.pid, "VmRSS")
    flood = client.call("flood", {"method": "notifications/message", "count": FLOOD, "size": 256})
    deadline = time.monotonic() + 120
    while not (notes / "flood.done").exists():  # the upstream wrote them all; the client read none
        assert time.monotonic() < deadline, "the flood did not end within 120 s"
        time.sleep(0.2)
    assert client.read_until(flood)["result"]["content"][0]["text"] == f"flooded {FLOOD}"
    grown = _status(client.proc.pid, "VmHWM") - before
    stderr = client.close()
    (line,) = recorded(record)
    dropped = line["metadata"]["proxy"]["notifications"]["dropped_log_messages"]
    delivered = client.notifications.get("notifications/message", 0)
    assert delivered + dropped == FLOOD and dropped > 0 and delivered > 0, (delivered, dropped)
    assert delivered * 256 < 4 * MAX_CLIENT_BUFFER  # what the pipe and the buffer held, no more
    assert f"dropped {dropped} log_messages" in stderr
    print(f"delivered {delivered}, dropped {dropped}, proxy grew {grown} KiB")
    assert grown < 64 * 1024, f"the proxy grew {grown} KiB"


GIT_SERVER = shutil.which("mcp-server-git")
BIG = 2**20
"""Characters of the file each stale-read test read shows (1 MiB)."""


def _git_repo(folder: Path) -> Path:
    """A repository whose one commit holds ``big.txt`` (:data:`BIG` characters) and ``a.txt``."""
    folder.mkdir()
    (folder / "big.txt").write_text(("0123456789abcde\n" * (BIG // 16))[:BIG])
    (folder / "a.txt").write_text("v1\n")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=folder, check=True)
    return folder


def _read_big_300_times(client: RawClient, repo: Path) -> int:
    """300 ``git_show`` reads of 1 MiB, each under other arguments (``HEAD~0~0...:big.txt``);
    the proxy's resident memory after them minus before, in KiB."""
    before = _status(client.proc.pid, "VmRSS")
    for i in range(300):
        answer = client.read_until(
            client.call("git_show", {"repo_path": str(repo), "revision": f"HEAD{'~0' * i}:big.txt"})
        )
        assert len(answer["result"]["content"][0]["text"]) >= BIG, answer
    return _status(client.proc.pid, "VmRSS") - before


@pytest.mark.skipif(GIT_SERVER is None, reason="mcp-server-git is not installed (pip install -e '.[dev]' installs it)")
def test_read_answers_are_kept_only_for_stale_reads_and_then_capped(tmp_path):
    """In front of ``mcp-server-git``: 300 reads of 1 MiB under ``--faults none`` keep nothing
    (before: every answer, +291 MB); under a profile that injects ``stale_read`` into the tool,
    at most ``MAX_STALE_BYTES`` are kept, and a stale read is still shown when its tool's
    answer changed."""
    from mcpgym.server.proxy.plan import MAX_STALE_BYTES

    repo = _git_repo(tmp_path / "repo")
    none = RawClient(
        tmp_path / "rec-none", None, "--faults", "none", upstream=[str(GIT_SERVER), "--repository", str(repo)]
    )
    none.start()
    kept_none = _read_big_300_times(none, repo)
    none.close()
    assert kept_none < 24 * 1024, f"--faults none kept {kept_none} KiB"

    stale = profile_file(tmp_path, "stale", {"tools": {"git_show": {"stale_read": 1.0}}})
    client = RawClient(
        tmp_path / "rec-stale", None, "--faults", stale, upstream=[str(GIT_SERVER), "--repository", str(repo)]
    )
    client.start()
    kept_stale = _read_big_300_times(client, repo)
    shown = []
    for version in ("v2", "v3", "v4"):  # a.txt changes between reads of HEAD:a.txt
        (repo / "a.txt").write_text(f"{version}\n")
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qam", version], cwd=repo, check=True
        )
        answer = client.read_until(client.call("git_show", {"repo_path": str(repo), "revision": "HEAD:a.txt"}))
        shown.append((version, answer["result"]["content"][0]["text"].strip()))
    client.close()
    assert kept_stale < 3 * MAX_STALE_BYTES // 1024, f"a stale_read profile kept {kept_stale} KiB"
    print(f"kept under --faults none: {kept_none} KiB; under stale_read: {kept_stale} KiB; shown {shown}")
    assert any(seen != version for version, seen in shown), shown  # an older answer was shown
    (line,) = recorded(tmp_path / "rec-stale")
    assert [e["kind"] for e in line["ledger"]] and {e["kind"] for e in line["ledger"]} == {"stale_read"}
