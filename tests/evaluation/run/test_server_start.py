"""An early-started server (``server_process.start_server``): adopted by a run or stopped."""

from __future__ import annotations

import httpx

from mcpgym.evaluation.run.run_owner import SERVER_LOG_HEADER
from mcpgym.evaluation.run.server_process import READY_PREFIX, start_server


def test_an_early_server_buffers_its_output_until_adopted_and_serves(tmp_path):
    start = start_server(max_episodes=5)
    log = tmp_path / "run" / "server.log"
    assert not log.exists()  # nothing is written before the run names its log
    handle = start.ready(log)
    try:
        assert handle.spawned and handle.url.startswith("http://127.0.0.1:")
        # mcpgym's header line (the proof run --force needs to delete it), then the buffered ready line
        assert log.read_text(encoding="utf-8").startswith(SERVER_LOG_HEADER + READY_PREFIX)
        r = httpx.get(f"{handle.url}/control/episodes", headers={"Authorization": f"Bearer {handle.token}"}, timeout=10)
        assert r.status_code == 200
        start.cancel()  # adopted: the handle owns the process, cancel leaves it running
        assert handle.exit_code() is None
    finally:
        handle.stop()
    assert handle.exit_code() is not None


def test_an_early_server_nobody_adopts_is_stopped():
    start = start_server(max_episodes=5)
    start.cancel()
    assert start.process.poll() is not None
