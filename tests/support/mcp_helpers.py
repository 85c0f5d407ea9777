"""Helpers for tests that talk to the server through the official MCP SDK client."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import httpx
from mcp.client.stdio import StdioServerParameters

from tests.conftest import ROOT


def stdio_params(*args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    """Parameters that spawn ``mcpgym serve --transport stdio`` with ``args``."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpgym.evaluation.cli", "serve", "--transport", "stdio", *args],
        cwd=str(ROOT),
        env=env,
    )


def create_episode(base: str, token: str, **body: Any) -> dict[str, Any]:
    """POST /control/episodes and return the JSON answer (asserting 201)."""
    r = httpx.post(f"{base}/control/episodes", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert r.status_code == 201, r.text
    return r.json()


def control_get(base: str, token: str, path: str) -> Any:
    """GET a control route and return its JSON (asserting 200)."""
    r = httpx.get(f"{base}{path}", headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


class SilentUser:
    """An elicitation callback that never answers; ``asked`` counts the questions it got."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self, context, params):  # noqa: ANN001, ANN204 - the SDK's callback shape
        self.asked += 1
        await anyio.sleep_forever()
