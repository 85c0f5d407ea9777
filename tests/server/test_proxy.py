"""``mcpgym proxy`` against an SDK server in the tests (tests/support/proxy_upstream.py): over streamable
HTTP (faults, resources, prompts, elicitation through the proxy) and over stdio as a hostile
upstream (it crashes, hangs, writes garbage), plus a client that sends garbage to the proxy.
Every case ends with a clear error to the client and a complete trajectory up to that point.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.conftest import ROOT
from tests.support.proxy_helpers import profile_file, proxy_params, recorded, text_of

UPSTREAM = [sys.executable, "-m", "tests.support.proxy_upstream"]


@pytest.fixture
def http_upstream(tmp_path):
    """The test server over streamable HTTP on a free loopback port: (url, its notes folder)."""
    notes = tmp_path / "notes"
    notes.mkdir()
    proc = subprocess.Popen(
        [*UPSTREAM, str(notes), "--http"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("READY "), line
        yield line.split()[1], notes
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def test_http_upstream_faults_resources_prompts_and_elicitation_pass_through(tmp_path, http_upstream):
    url, notes = http_upstream
    record = tmp_path / "rec"
    faults = profile_file(tmp_path, "write-timeout", {"tools": {"note_write": {"timeout": 1.0}}, "max_consecutive": 1})
    asked: list[str] = []

    async def elicitation(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})

    params = proxy_params(record, "--faults", faults, url=url)
    # a handshake-era client (Claude Desktop's kind): the upstream's elicitation/create reaches it
    async with Client(params, elicitation_callback=elicitation, mode="legacy") as client:
        assert client.instructions == "Notes in a folder."  # the upstream's own
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["note_write"].annotations.read_only_hint is False
        first = await client.call_tool("note_write", {"name": "n", "text": "one"})  # call 0: timeout, applied
        assert first.is_error and '"code": "timeout"' in text_of(first)
        assert (notes / "n").read_text() == "one\n"
        second = await client.call_tool("note_write", {"name": "n", "text": "two"})  # call 1: no fault in a row
        assert not second.is_error and text_of(second) == "wrote n"
        read = await client.call_tool("note_read", {"name": "n"})
        assert text_of(read) == "one\ntwo\n"
        confirmed = await client.call_tool("confirm_write", {"name": "c", "text": "yes"})
        assert text_of(confirmed) == "confirmed and wrote c" and asked == ["write c?"]
        assert (notes / "c").read_text() == "yes\n"
        resources = await client.list_resources()
        assert [str(r.uri) for r in resources.resources] == ["note://readme"]
        contents = await client.read_resource("note://readme")
        assert contents.contents[0].text == "read me"
        prompt = await client.get_prompt("greet", {"name": "Ada"})
        assert prompt.messages[0].content.text == "Hello Ada"
    # a 2026-07-28 client takes no server requests: the upstream's question reaches it as the
    # call's InputRequiredResult, its answer goes up with the retry (one call in the log)
    async with Client(proxy_params(tmp_path / "rec-modern", url=url), elicitation_callback=elicitation) as client:
        assert client.protocol_version == "2026-07-28"
        confirmed = await client.call_tool("confirm_write", {"name": "m", "text": "modern"})
        assert text_of(confirmed) == "confirmed and wrote m" and asked == ["write c?", "write m?"]
    assert (notes / "m").read_text() == "modern\n"
    (modern,) = recorded(tmp_path / "rec-modern")
    assert [(s["tool"], s["is_error"]) for s in modern["steps"]] == [("confirm_write", False)]
    (line,) = recorded(record)
    assert [(s["tool"], s["is_error"]) for s in line["steps"]] == [
        ("note_write", True),
        ("note_write", False),
        ("note_read", False),
        ("confirm_write", False),
    ]
    assert line["ledger"] == [
        {"step": 1, "tool": "note_write", "call_index": 0, "kind": "timeout", "applied": True, "persisting": False}
    ]
    assert line["metadata"]["proxy"]["upstream"] == url and line["status"] == "completed"


async def test_a_handshake_era_client_over_stdio_takes_the_fast_path_with_faults_and_elicitation(tmp_path):
    # server/proxy/fast.py: a legacy client's tools/call goes to a stdio upstream as a line with
    # the proxy's own id; faults, the call log and the upstream's elicitation work as on the SDK path
    notes, record = tmp_path / "notes", tmp_path / "rec"
    notes.mkdir()
    faults = profile_file(tmp_path, "write-timeout", {"tools": {"note_write": {"timeout": 1.0}}, "max_consecutive": 1})
    asked: list[str] = []

    async def elicitation(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})

    params = proxy_params(record, "--faults", faults, upstream=[*UPSTREAM, str(notes)])
    async with Client(params, elicitation_callback=elicitation, mode="legacy") as client:
        await client.list_tools()
        first = await client.call_tool("note_write", {"name": "n", "text": "one"})  # timeout, applied
        assert first.is_error and '"code": "timeout"' in text_of(first)
        assert (notes / "n").read_text() == "one\n"
        second = await client.call_tool("note_write", {"name": "n", "text": "two"})
        assert text_of(second) == "wrote n"
        assert text_of(await client.call_tool("request_id", {})).startswith("mcpgym-fast-")
        confirmed = await client.call_tool("confirm_write", {"name": "c", "text": "yes"})
        assert text_of(confirmed) == "confirmed and wrote c" and asked == ["write c?"]
        missing = await client.call_tool("note_read", {"name": "missing"})
        assert text_of(missing) == "no note missing"
        with pytest.raises(MCPError) as fast_error:  # the upstream's JSON-RPC error, passed on
            await client.call_tool("rpc_error", {})
    async with Client(proxy_params(tmp_path / "rec-modern", upstream=[*UPSTREAM, str(notes)])) as client:
        assert client.protocol_version == "2026-07-28"  # the SDK path: the SDK client's own integer ids
        assert text_of(await client.call_tool("request_id", {})).isdigit()
        with pytest.raises(MCPError) as sdk_error:
            await client.call_tool("rpc_error", {})
    assert fast_error.value.error == sdk_error.value.error
    assert fast_error.value.error.code == types.INVALID_PARAMS and fast_error.value.error.data == {"why": "a test"}
    (line,) = recorded(record)
    assert [(s["tool"], s["error_code"]) for s in line["steps"]] == [
        ("note_write", "timeout"),
        ("note_write", None),
        ("request_id", None),
        ("confirm_write", None),
        ("note_read", None),
        ("rpc_error", "invalid_argument"),
    ]
    assert line["ledger"] == [
        {"step": 1, "tool": "note_write", "call_index": 0, "kind": "timeout", "applied": True, "persisting": False}
    ]
    assert line["status"] == "completed"


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # the SDK path and the fast path (server/proxy/fast.py)
async def test_an_upstream_that_crashes_gives_a_clear_error_and_a_complete_trajectory(tmp_path, mode):
    notes, record = tmp_path / "notes", tmp_path / "rec"
    notes.mkdir()
    async with Client(proxy_params(record, "--faults", "none", upstream=[*UPSTREAM, str(notes)]), mode=mode) as client:
        ok = await client.call_tool("note_write", {"name": "n", "text": "one"})
        assert not ok.is_error
        crashed = await client.call_tool("crash", {})
        assert crashed.is_error and '"code": "unavailable"' in text_of(crashed) and "upstream" in text_of(crashed)
        after = await client.call_tool("note_read", {"name": "n"})  # the upstream is gone: said so, no hang
        assert after.is_error and "upstream" in text_of(after)
    (line,) = recorded(record)
    assert [s["tool"] for s in line["steps"]] == ["note_write", "crash", "note_read"]
    assert line["status"] == "errored" and "upstream" in line["stop_reason"]
    assert line["ledger"] == []  # failures of the upstream are no injected faults


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_upstream_that_hangs_or_sends_garbage_meets_a_deadline(tmp_path, mode):
    notes, record = tmp_path / "notes", tmp_path / "rec"
    notes.mkdir()
    params = proxy_params(record, "--faults", "none", "--call-timeout", "2", upstream=[*UPSTREAM, str(notes)])
    async with Client(params, mode=mode) as client:
        with anyio.fail_after(30):
            hung = await client.call_tool("hang", {})
        assert hung.is_error and "did not answer" in text_of(hung) and "within 2 s" in text_of(hung)
        garbage = await client.call_tool("garbage", {})  # a non-message line, then the real answer
        assert not garbage.is_error and text_of(garbage) == "answered after garbage"
        still = await client.call_tool("note_read", {"name": "missing"})
        assert text_of(still) == "no note missing"
    (line,) = recorded(record)
    assert [(s["tool"], s["error_code"]) for s in line["steps"]] == [
        ("hang", "timeout"),
        ("garbage", None),
        ("note_read", None),
    ]
    assert line["status"] == "errored" and "within 2 s" in line["stop_reason"]


async def test_garbage_from_the_client_is_answered_and_the_session_still_records(tmp_path):
    notes, record = tmp_path / "notes", tmp_path / "rec"
    notes.mkdir()
    params = proxy_params(record, "--faults", "none", upstream=[*UPSTREAM, str(notes)])
    initialize = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}
    call = {"name": "note_read", "arguments": {"name": "x"}}
    lines = [
        "not json at all {{{",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}),
        "\x00\x01\x02",
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps([1, 2, 3]),
        json.dumps({"jsonrpc": "2.0", "id": True, "method": "tools/list"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}),
    ]
    answers: list[dict] = []
    async with await anyio.open_process([params.command, *params.args], cwd=ROOT) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        await proc.stdin.send(("\n".join(lines) + "\n").encode())
        buffer = b""
        with anyio.fail_after(60):
            while not any(a.get("id") == 2 for a in answers):
                buffer += await proc.stdout.receive()
                *complete, buffer = buffer.split(b"\n")
                answers += [json.loads(line) for line in complete if line.strip()]
        await proc.stdin.aclose()  # the client leaves: the proxy ends the session and records it
        with anyio.fail_after(60):
            assert await proc.wait() == 0
    errors = [a["error"]["code"] for a in answers if "error" in a]
    assert errors.count(types.PARSE_ERROR) == 2 and errors.count(types.INVALID_REQUEST) == 2, answers
    by_id = {a.get("id"): a for a in answers if a.get("id") is not None}
    assert by_id[2]["result"]["content"][0]["text"] == "no note x"
    (line,) = recorded(record)
    assert [s["tool"] for s in line["steps"]] == ["note_read"] and line["agent"] == "fuzz"


def test_an_upstream_that_cannot_start_is_a_clear_error_and_an_errored_trajectory(tmp_path):
    record = tmp_path / "rec"
    params = proxy_params(record, "--connect-timeout", "20", upstream=[str(tmp_path / "no-such-server")])
    proc = subprocess.run(
        [params.command, *params.args], input="", capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert proc.returncode == 1 and proc.stderr.startswith("error: the upstream"), proc.stderr
    assert "no-such-server" in proc.stderr
    (line,) = recorded(record)
    assert line["status"] == "errored" and line["steps"] == [] and "no-such-server" in line["stop_reason"]


def test_bad_command_lines_are_one_line_errors(tmp_path, capsys):
    from mcpgym.evaluation.cli import main

    def run(*args: str) -> str:
        with pytest.raises(SystemExit) as exit_:
            main(["proxy", *args])
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1, err
        return err

    assert "needs the upstream's command" in run("--upstream")
    assert "http(s) URL" in run("--upstream-url", "ftp://x")
    assert "not both" in run("--upstream-url", "http://127.0.0.1:1/mcp", "--upstream", "x")
    assert "unknown fault profile" in run("--faults", "nope", "--upstream", "x")
    bad = Path(tmp_path / "cat.json")
    bad.write_text("{")
    assert "invalid JSON" in run("--catalog", str(bad), "--upstream", "x")


def fuzz_lines(seed: int, n: int) -> list[bytes]:
    """``n`` seeded hostile lines: random bytes (invalid UTF-8 too), JSON of the wrong shape,
    JSON-RPC requests with wrong ids, methods or params, one line of 200 KB."""
    import random

    rng = random.Random(seed)
    shapes = [
        lambda: bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80))).replace(b"\n", b" "),
        lambda: json.dumps(rng.choice([None, 1, "x", [], {}, [{"jsonrpc": "2.0"}]])).encode(),
        lambda: json.dumps(
            {"jsonrpc": "2.0", "id": rng.choice([None, True, 1.5, [], {}]), "method": "tools/list"}
        ).encode(),
        lambda: json.dumps({"jsonrpc": "2.0", "id": rng.randrange(1000, 9999), "method": "no/such/method"}).encode(),
        lambda: json.dumps(
            {
                "jsonrpc": "2.0",
                "id": rng.randrange(1000, 9999),
                "method": "tools/call",
                "params": rng.choice([{"name": 7}, {"name": "note_read", "arguments": [1]}, {"arguments": {}}, "x"]),
            }
        ).encode(),
        lambda: b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "' + b"a" * 200_000 + b'"}}',
    ]
    return [rng.choice(shapes)() for _ in range(n)]


async def test_fuzzed_client_traffic_is_answered_and_a_valid_call_still_works(tmp_path):
    notes, record = tmp_path / "notes", tmp_path / "rec"
    notes.mkdir()
    params = proxy_params(record, "--faults", "none", "--call-timeout", "20", upstream=[*UPSTREAM, str(notes)])
    initialize = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}
    head = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}).encode(),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(),
    ]
    last = {
        "jsonrpc": "2.0",
        "id": "last",
        "method": "tools/call",
        "params": {"name": "note_read", "arguments": {"name": "x"}},
    }
    payload = b"\n".join([*head, *fuzz_lines(28, 60), json.dumps(last).encode()]) + b"\n"
    answers: list[dict] = []
    async with await anyio.open_process([params.command, *params.args], cwd=ROOT) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        await proc.stdin.send(payload)
        buffer = b""
        with anyio.fail_after(120):
            while not any(a.get("id") == "last" for a in answers):
                buffer += await proc.stdout.receive()
                *complete, buffer = buffer.split(b"\n")
                answers += [json.loads(line) for line in complete if line.strip()]
        await proc.stdin.aclose()
        with anyio.fail_after(60):
            assert await proc.wait() == 0
    by_id = {a.get("id"): a for a in answers}
    assert by_id["last"]["result"]["content"][0]["text"] == "no note x"
    assert sum("error" in a for a in answers) >= 20  # the garbage was answered, not swallowed
    (line,) = recorded(record)
    assert line["steps"][-1]["tool"] == "note_read" and line["status"] == "completed"
    too_long = [s for s in line["steps"] if s["tool"].startswith("aaaa")]
    assert too_long and all(len(s["tool"]) == 131 and s["error_code"] == "invalid_argument" for s in too_long)


async def test_a_proxy_stopped_by_sigterm_still_records_its_session(tmp_path):
    import signal

    notes, record = tmp_path / "notes", tmp_path / "rec"
    notes.mkdir()
    params = proxy_params(record, "--faults", "none", upstream=[*UPSTREAM, str(notes)])
    initialize = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "desk", "version": "0"}}
    call = {"name": "note_write", "arguments": {"name": "n", "text": "one"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
    ]
    async with await anyio.open_process([params.command, *params.args], cwd=ROOT) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        await proc.stdin.send(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
        buffer = b""
        with anyio.fail_after(60):
            while b'"id":2' not in buffer:
                buffer += await proc.stdout.receive()
        proc.send_signal(signal.SIGTERM)  # stdin still open: the client just stops the proxy
        with anyio.fail_after(60):
            await proc.wait()
    (line,) = recorded(record)
    assert [s["tool"] for s in line["steps"]] == ["note_write"] and line["agent"] == "desk"
    assert "SIGTERM" in (line["stop_reason"] or "")
    assert (notes / "n").read_text() == "one\n"


@pytest.mark.parametrize("stdin", ["devnull", "empty_pipe"])
def test_a_proxy_whose_stdin_is_empty_ends_at_once(tmp_path, stdin):
    """stdin ``/dev/null`` (a character device epoll refuses) or an empty pipe: end of input at
    once, so the proxy ends, exit 0 and no traceback (with /dev/null it waited forever, its read
    failing in an event-loop callback)."""
    command = [
        sys.executable,
        "-m",
        "mcpgym.evaluation.cli",
        "proxy",
        "--faults",
        "none",
        "--upstream",
        sys.executable,
        "-m",
        "mcpgym.evaluation.cli",
        "serve",
    ]
    if stdin == "devnull":
        out = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, cwd=ROOT)
    else:
        out = subprocess.run(command, input="", capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert out.stdout == ""


def _closed_stdin_session(tmp_path: Path, calls: list[dict], *options: str) -> tuple[dict, dict, str]:
    """Pipe initialize, initialized, tools/list and ``calls`` (ids 3, 4, ...) into ``mcpgym proxy
    --faults none --record REC OPTIONS --upstream proxy_upstream NOTES``, stdin closed right after
    the last line (the issue's ``printf ... | mcpgym proxy``); return (answers by id, the recorded
    trajectory, stderr)."""
    notes, record = tmp_path / "notes", tmp_path / "rec"
    notes.mkdir()
    initialize = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "eof", "version": "0"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        *({"jsonrpc": "2.0", "id": 3 + k, "method": "tools/call", "params": c} for k, c in enumerate(calls)),
    ]
    params = proxy_params(record, "--faults", "none", *options, upstream=[*UPSTREAM, str(notes)])
    done = subprocess.run(
        [params.command, *params.args],
        input="".join(json.dumps(m) + "\n" for m in lines),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    ids = [a.get("id") for a in answers]
    assert sorted(ids) == list(range(1, 3 + len(calls))), answers  # each request answered once
    (line,) = recorded(record)
    return {a["id"]: a for a in answers}, line, done.stderr


def test_calls_in_flight_at_the_end_of_stdin_are_answered_and_recorded_as_answered(tmp_path):
    """The client closes stdin with a write and a read in flight: both are answered before the
    proxy exits, and the trajectory holds what the client got (before: one call was never
    answered, another got "Connection closed", and the trajectory said both succeeded)."""
    write = {"name": "note_write", "arguments": {"name": "a", "text": "hello"}}
    read = {"name": "note_read", "arguments": {"name": "a"}}
    by_id, line, _ = _closed_stdin_session(tmp_path, [write, read])
    assert "tools" in by_id[2]["result"]
    got = {3: by_id[3]["result"]["content"][0]["text"], 4: by_id[4]["result"]["content"][0]["text"]}
    assert got[3] == "wrote a" and got[4] in ("hello\n", "no note a"), by_id
    steps = {s["tool"]: s for s in line["steps"]}
    assert sorted(steps) == ["note_read", "note_write"] and not any(s["is_error"] for s in line["steps"])
    assert steps["note_write"]["result"] == {"content": ["wrote a"]}
    assert steps["note_read"]["result"] == {"content": [got[4]]}
    assert "undelivered" not in line["metadata"]["proxy"]


def test_a_call_in_flight_at_the_end_of_stdin_is_answered_within_its_deadline(tmp_path):
    """A call the upstream never answers: at the end of stdin the proxy waits at most its
    ``--call-timeout`` (and a second), answers the call ``timeout`` and records exactly that."""
    by_id, line, _ = _closed_stdin_session(tmp_path, [{"name": "hang", "arguments": {}}], "--call-timeout", "1")
    error = json.loads(by_id[3]["result"]["content"][0]["text"])["error"]
    assert by_id[3]["result"]["isError"] and error["code"] == "timeout", by_id[3]
    (step,) = line["steps"]
    assert step["tool"] == "hang" and step["error_code"] == "timeout"


async def test_an_answer_the_client_never_got_is_left_out_of_the_trajectory():
    """Past the wait at the end of input, the SDK answers a call still in progress ``-32000
    Connection closed``: the drain keeps its id as undelivered, and the trajectory leaves its
    step out (listing it in ``metadata.proxy.undelivered``) even when the upstream's success was
    logged meanwhile. A real SDK server over memory streams; the proxied session is real too."""
    from mcp.server.lowlevel import Server
    from mcp.shared.message import SessionMessage

    from mcpgym.evaluation.proxy.classify import ToolClassifier
    from mcpgym.evaluation.proxy.record import trajectory_of
    from mcpgym.server.proxy.drain import DrainOnEnd
    from mcpgym.server.proxy.plan import ProxyFaultPlan
    from mcpgym.server.proxy.server import ProxySession, describe_answer
    from mcpgym.server.proxy.upstream import Upstream, UpstreamSpec

    session = ProxySession(
        upstream=Upstream(UpstreamSpec(command=["true"])),
        plan=ProxyFaultPlan("none", 0, describe_answer),
        classify=ToolClassifier().proxied,
    )
    session.take_tools([types.Tool(name="slow_write", input_schema={"type": "object"})])

    async def on_call_tool(ctx, params):  # noqa: ANN001, ANN202 - the SDK's handler shape
        decision = session.plan.decide(params.name)
        session.note_request(ctx.request_id, decision.step)
        done = types.CallToolResult(content=[types.TextContent(type="text", text="written")])
        session.plan.settle(decision, params.arguments, done)  # the upstream's success, logged
        await anyio.sleep_forever()  # ...whose answer never reaches the client

    server = Server("slow", on_call_tool=on_call_tool)
    to_server, server_reads = anyio.create_memory_object_stream(16)
    server_writes, from_server = anyio.create_memory_object_stream(16)
    drain = DrainOnEnd(server_reads, server_writes, lambda: 0, deadline=0.3)
    initialize = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "0"}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "slow_write", "arguments": {}}},
    ]
    answers: list[dict] = []
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run, drain, drain.write, server.create_initialization_options())
            for m in messages:
                await to_server.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(m, by_name=False)))
            while len(session.plan.calls) < 1:
                await anyio.sleep(0.01)
            await to_server.aclose()  # the end of the client's input
            async for item in from_server:
                answers.append(item.message.model_dump(mode="json", by_alias=True, exclude_none=True))
                if answers[-1].get("id") == 7:
                    break
    assert answers[-1]["error"]["message"] == "Connection closed", answers
    assert drain.undelivered == [7]
    session.not_delivered(drain.undelivered)
    traj = trajectory_of(session, ToolClassifier())
    assert traj.steps == [] and traj.metadata["proxy"]["undelivered"] == [{"step": 1, "tool": "slow_write"}]
