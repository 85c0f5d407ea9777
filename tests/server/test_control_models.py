"""The control API's bodies are the models of ``mcpgym.server.control_models`` on both sides:
the real server's answers validate as them (and are the JSON the models write), the client
returns them typed, and a malformed answer or request is a clear ``MCPGymError``."""

from __future__ import annotations

import json

import httpx
import httpx2
import pytest

from mcpgym.evaluation.run.server_process import ControlClient, ServerError
from mcpgym.kernel.exceptions import InvalidValue, MCPGymError
from mcpgym.server.control_models import (
    CALL_LOG,
    LEDGER,
    ControlError,
    EpisodeCreated,
    EpisodeList,
    EpisodeSummary,
    Health,
)


async def test_the_real_server_answers_with_the_models(http_server) -> None:
    url, token = http_server
    async with ControlClient(url, token) as control:
        assert isinstance(await control.health(), Health)
        created = await control.create_episode({"seed": 3, "apps": ["shop"], "faults": "harsh", "fault_seed": 9})
        assert isinstance(created, EpisodeCreated)
        assert (created.seed, created.fault_seed, created.faults) == (3, 9, "harsh")
        assert created.mcp_url == f"{url}/episodes/{created.episode_id}/mcp"
        try:
            summary = await control.get(created.episode_id)
            assert EpisodeSummary.model_validate(summary).model_dump() == created.model_dump(exclude={"mcp_url"})
            assert CALL_LOG.validate_python(await control.get(created.episode_id, "calls")) == []
            assert LEDGER.validate_python(await control.get(created.episode_id, "ledger")) == []
            with pytest.raises(ValueError, match="unknown episode part 'nope'"):
                await control.get(created.episode_id, "nope")
        finally:
            assert await control.delete(created.episode_id)
    headers = {"Authorization": f"Bearer {token}"}
    listing = httpx.get(f"{url}/control/episodes", headers=headers, timeout=30)
    assert EpisodeList.model_validate_json(listing.content).model_dump_json() == listing.text
    gone = httpx.get(f"{url}/control/episodes/{created.episode_id}", headers=headers, timeout=30)
    assert gone.status_code == 404
    assert ControlError.model_validate_json(gone.content) == ControlError(error="no such episode")


def _client(answers: dict[tuple[str, str], tuple[int, object]], sent: list[httpx2.Request]) -> ControlClient:
    """A ControlClient whose server answers ``answers[(method, path)]`` (a misbehaving server,
    which the real one cannot be made into)."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        status, body = answers[(request.method, request.url.path)]
        return httpx2.Response(status, content=json.dumps(body).encode())

    client = ControlClient("http://127.0.0.1:9", "t")
    client._http = httpx2.AsyncClient(base_url=client.url, transport=httpx2.MockTransport(handler))
    return client


async def test_a_malformed_answer_is_a_server_error_naming_the_field() -> None:
    sent: list[httpx2.Request] = []
    answers: dict[tuple[str, str], tuple[int, object]] = {
        ("POST", "/control/episodes"): (201, {"episode_id": "e1"}),
        ("GET", "/control/episodes/e1/calls"): (
            200,
            [{"step": "one", "tool": "t", "arguments": {}, "is_error": False}],
        ),
        ("GET", "/control/episodes/e1/ledger"): (200, {"kind": "timeout"}),
    }
    async with _client(answers, sent) as control:
        with pytest.raises(ServerError, match=r"malformed answer .*: seed: Field required \(10 errors\)"):
            await control.create_episode({"seed": 1})
        assert json.loads(sent[0].content) == {"seed": 1}  # only the fields given go on the wire
        with pytest.raises(ServerError, match=r"GET /control/episodes/e1/calls: malformed answer .*0\.step"):
            await control.get("e1", "calls")
        with pytest.raises(MCPGymError, match="malformed answer"):
            await control.get("e1", "ledger")


async def test_a_bad_request_is_refused_before_it_is_sent() -> None:
    sent: list[httpx2.Request] = []
    async with _client({}, sent) as control:
        with pytest.raises(InvalidValue, match="not a valid episode request: seed"):
            await control.create_episode({"seed": True})
        with pytest.raises(InvalidValue, match="colour: Extra inputs are not permitted"):
            await control.create_episode({"colour": "red"})
    assert sent == []
