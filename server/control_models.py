"""The control API's wire contract: one pydantic model per request and answer body.

The server (:mod:`mcpgym.server.http_app`) validates requests and builds answers with these
models; the client (:class:`mcpgym.evaluation.run.server_process.ControlClient`) builds
requests and validates answers with the same ones, so the two cannot drift. The JSON Schemas
are published in ``docs/schemas/control-*.schema.json`` (docs/design.md §5).

Routes and bodies:

- ``POST /control/episodes``: :class:`CreateEpisode` -> 201 :class:`EpisodeCreated`.
- ``GET /control/episodes``: :class:`EpisodeList`.
- ``GET /control/episodes/{id}``: :class:`EpisodeSummary`.
- ``GET /control/episodes/{id}/calls``: :data:`CALL_LOG` (a list of
  :class:`mcpgym.tools.invoke.CallRecord`); ``/ledger``: :data:`LEDGER` (a list of
  :class:`mcpgym.tools.invoke.LedgerEntry`); ``/snapshot`` and ``/initial``: :data:`SNAPSHOT`
  (a ``World.snapshot()`` object).
- ``DELETE /control/episodes/{id}``: 204, no body.
- ``GET /health``: :class:`Health`.
- Every refusal (4xx): :class:`ControlError`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from mcpgym.tools.invoke import CallRecord, LedgerEntry

MAX_SEED = 2**63 - 1
"""Largest world or fault seed a request may name."""


class CreateEpisode(BaseModel):
    """Body of ``POST /control/episodes`` (every field optional: a missing one takes the
    server's default, :class:`mcpgym.server.http_app.EpisodeDefaults`).

    Attributes:
        seed: world seed (0 .. 2**63-1). apps: app names, as a list or a comma-separated
            string. faults: a built-in fault profile name (``none``, ``default``, ``harsh``) or
            an inline profile object. fault_seed: fault seed (0 .. 2**63-1). tools: the only
            tools the episode offers (None: all of its apps'). search_tools: retrieval mode.
    """

    model_config = ConfigDict(extra="forbid")

    # strict: a JSON true is no seed and "yes" no flag (the documented types are the contract)
    seed: int | None = Field(None, ge=0, le=MAX_SEED, strict=True)
    apps: list[str] | str | None = None
    faults: str | dict[str, Any] | None = None
    fault_seed: int | None = Field(None, ge=0, le=MAX_SEED, strict=True)
    tools: list[str] | None = None
    search_tools: bool | None = Field(None, strict=True)


class EpisodeSummary(BaseModel):
    """Answer of ``GET /control/episodes/{id}``: one live episode.

    Attributes:
        episode_id: the 128-bit episode id (hex). seed: world seed. fault_seed: fault seed.
        apps: the episode's apps. app_versions: app name -> ``App.version``. faults: the fault
            profile's name. state_hash: hash of the world state now. calls: tool calls logged so
            far. faults_injected: calls whose own fault decision injected a fault. tools: how
            many tools the episode offers.
    """

    model_config = ConfigDict(extra="forbid")

    episode_id: str
    seed: int
    fault_seed: int
    apps: list[str]
    app_versions: dict[str, str]
    faults: str
    state_hash: str
    calls: int = Field(ge=0)
    faults_injected: int = Field(ge=0)
    tools: int = Field(ge=0)


class EpisodeCreated(EpisodeSummary):
    """Answer of ``POST /control/episodes`` (201): the new episode's summary and its MCP URL.

    Attributes:
        mcp_url: the episode's streamable-HTTP MCP endpoint (``{base}/episodes/{id}/mcp``).
    """

    mcp_url: str


class EpisodeList(BaseModel):
    """Answer of ``GET /control/episodes``.

    Attributes:
        episodes: ids of the live episodes. max_episodes: the server's cap on live episodes.
        mcp_sessions: MCP sessions open on live episodes.
    """

    model_config = ConfigDict(extra="forbid")

    episodes: list[str]
    max_episodes: int = Field(ge=0)
    mcp_sessions: int = Field(ge=0)


class Health(BaseModel):
    """Answer of ``GET /health`` (no token needed).

    Attributes:
        status: always ``"ok"``. episodes: how many episodes are live.
    """

    model_config = ConfigDict(extra="forbid")

    status: Literal["ok"] = "ok"
    episodes: int = Field(ge=0)


class ControlError(BaseModel):
    """Body of every control-API refusal (4xx): one line saying what was wrong.

    Attributes:
        error: the message (bounded: values it quotes are shortened).
    """

    model_config = ConfigDict(extra="forbid")

    error: str


CALL_LOG: TypeAdapter[list[CallRecord]] = TypeAdapter(list[CallRecord])
"""Answer of ``GET /control/episodes/{id}/calls``: the server's call log, in step order."""
LEDGER: TypeAdapter[list[LedgerEntry]] = TypeAdapter(list[LedgerEntry])
"""Answer of ``GET /control/episodes/{id}/ledger``: the fault ledger, in step order."""
SNAPSHOT: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
"""Answer of ``GET /control/episodes/{id}/snapshot`` and ``/initial``: a ``World.snapshot()``."""


class EpisodeFinal(BaseModel):
    """Answer of ``GET /control/episodes/{id}/final``: what a harness reads when an episode
    ends, taken at one instant (under the episode's lock), in one request instead of three.

    Attributes:
        calls: the call log, in step order (as ``/calls``). ledger: the fault ledger (as
            ``/ledger``). snapshot: the world now (as ``/snapshot``).
    """

    model_config = ConfigDict(extra="forbid")

    calls: list[CallRecord]
    ledger: list[LedgerEntry]
    snapshot: dict[str, Any]


EPISODE_PARTS: dict[str, TypeAdapter[Any]] = {
    "": TypeAdapter(EpisodeSummary),
    "final": TypeAdapter(EpisodeFinal),
    "calls": CALL_LOG,
    "ledger": LEDGER,
    "snapshot": SNAPSHOT,
    "initial": SNAPSHOT,
}
"""``GET /control/episodes/{id}[/part]``: part -> the adapter its answer validates with."""

__all__ = [
    "CALL_LOG",
    "EPISODE_PARTS",
    "LEDGER",
    "SNAPSHOT",
    "ControlError",
    "CreateEpisode",
    "EpisodeCreated",
    "EpisodeFinal",
    "EpisodeList",
    "EpisodeSummary",
    "Health",
]
