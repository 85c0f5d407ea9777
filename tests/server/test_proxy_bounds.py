"""Issue 36, the proxy: what a hostile upstream or a slow client can make ``mcpgym proxy`` hold or wait.

Each test runs the real proxy (``python -m mcpgym.evaluation.cli proxy``) as a subprocess in
front of a real upstream where one shows the case (``mcp-server-git``), else the loopback
server of tests/support/proxy_upstream.py for faults a real server cannot show (a broken
answer, a flood of notifications). Memory is the proxy process's resident set read from
``/proc``, bounded; no test times anything but its own deadline.
"""

from __future__ import annotations

import sys
import time

import anyio
import pytest
from mcp import Client

from tests.support.proxy_helpers import proxy_params, recorded, text_of
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
