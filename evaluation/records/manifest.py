"""``manifest.json`` of a run: what was run, with which versions, seeds and settings.

The manifest is written when a run starts (``finished_at`` null) and rewritten when it ends.
It records (docs/design.md §6, "Runner"):

* ``versions``: mcpgym, the MCP SDK, Python, the platform, and ``apps``: the version
  (``App.version``) of every app the run's tasks use;
* ``suite``, ``task_ids``, ``trials``, ``recovery_window`` (the scorer's K);
* ``agents``: one entry per agent, ``{"name", "spec", "describe"}``. ``describe`` is what the
  agent's optional ``describe() -> dict`` hook returned (None when it has none): LLM agents
  put their model, provider, sampling settings, ``system_prompt_sha256`` and prompt template
  there, so two runs can be told apart. The hook must return JSON-able values;
* ``fault_profile``: the run's profile with every rate and override, and where it came from;
* ``conditions`` and ``fault_profiles``: only in a run with condition axes (``--faults A,B``,
  ``--tools X,Y``; :mod:`mcpgym.evaluation.records.condition`): the values of each axis, and
  every profile of the ``faults`` axis as ``fault_profile`` records one (``fault_profile`` is
  then the first);
* ``seeds``: per task, the world seed, the task's own fault profile when it sets one, and the
  fault seed of each trial;
* ``concurrency``, ``episode_timeout`` (wall seconds), ``server`` (its URL and whether the
  runner spawned it; the control token is never written), ``client`` (the MCP client's
  ``mcp_mode`` and ``validate_output``), ``command`` (argv), and wall-clock
  ``started_at`` / ``finished_at`` (ISO 8601, UTC; outside the sandboxes, so wall time is fine);
* ``invocations``: per invocation (a resumed run adds one), its argv, resolved settings
  (the run's :class:`mcpgym.evaluation.run.config.RunConfig`, ``RunConfig.recorded()``: no
  token) and start / finish times.

A resumed run keeps the first run's fields and appends each invocation to ``invocations``.
:class:`Manifest` is the file's model: :func:`read_manifest` validates a file into it (fields
a writer did not set stay unset and are not written back), ``docs/schemas/manifest.schema.json``
is generated from it.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mcpgym.evaluation.records.condition import ConditionAxis
from mcpgym.kernel.exceptions import FormatError
from mcpgym.kernel.input_files import InputFileError, read_input_text
from mcpgym.kernel.shorten import short
from mcpgym.kernel.validation_text import json_type, validation_line

MANIFEST_NAME = "manifest.json"
MANIFEST_VERSION = 1
"""The ``manifest_version`` this mcpgym writes and reads; a run of another version is refused."""


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def versions() -> dict[str, Any]:
    """Versions of mcpgym, the MCP SDK and Python, and the platform string."""
    return {
        "mcpgym": _version("mcpgym"),
        "mcp": _version("mcp"),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
    }


def utc_now() -> str:
    """The wall-clock time now, ISO 8601 in UTC with seconds (e.g. ``2026-01-31T12:00:00Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def sha256_text(text: str) -> str:
    """Hex sha256 of ``text`` (UTF-8): the hash LLM agents report for their system prompt."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class AgentRecord(BaseModel):
    """One agent of a run: ``{"name", "spec", "describe"}`` (see the module docstring)."""

    model_config = ConfigDict(extra="allow")

    name: str
    spec: str | None = None
    describe: dict[str, Any] | None = None


class SeedRecord(BaseModel):
    """A task's seeds: its world seed, the fault seed of each trial, its own profile if it sets one."""

    model_config = ConfigDict(extra="allow")

    world_seed: int | None = None
    fault_seeds: list[int] = Field(default_factory=list)
    faults: str | dict[str, Any] | None = None


class ServerRecord(BaseModel):
    """The server a run used: its base URL and whether the runner spawned it (never its token)."""

    model_config = ConfigDict(extra="allow")

    url: str = ""
    spawned: bool = False


class Invocation(BaseModel):
    """One ``mcpgym run`` invocation of a run (a resumed run adds one).

    Attributes:
        command: argv. settings: the invocation's resolved settings, a
            :class:`mcpgym.evaluation.run.config.RunConfig` as ``RunConfig.recorded()`` writes
            it (validated by that model when read back: this layer does not know it).
        executor: what the executor reported (``{"kind": "local"}``...).
        resent_after_lost_worker: episodes sent again after their Ray worker was lost.
    """

    model_config = ConfigDict(extra="allow")

    command: list[str] = Field(default_factory=list)
    settings: dict[str, Any] = Field(default_factory=dict)
    started_at: str | None = None
    finished_at: str | None = None
    executor: dict[str, Any] | None = None
    resent_after_lost_worker: int | None = None


class Manifest(BaseModel):
    """``manifest.json`` (module docstring). Every field but the version is optional, so that
    the manifests of older runs (and hand-written ones) load; a field that is present has to
    have its type (counts are integers of at least 1, not ``true`` nor ``"3"``).

    Raises:
        pydantic.ValidationError: for a field of the wrong shape, or a ``manifest_version``
            other than :data:`MANIFEST_VERSION` (the message names the one this mcpgym reads).
    """

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    manifest_version: int = MANIFEST_VERSION
    versions: dict[str, Any] = Field(default_factory=dict)
    suite: str | None = None
    task_ids: list[str] = Field(default_factory=list)
    trials: int | None = Field(default=None, ge=1, strict=True)
    agents: list[AgentRecord] = Field(default_factory=list)
    fault_profile: dict[str, Any] | None = None
    seeds: dict[str, SeedRecord] = Field(default_factory=dict)
    concurrency: int | None = None
    episode_timeout: float | None = None
    recovery_window: int | None = Field(default=None, ge=1, strict=True)
    server: ServerRecord | None = None
    client: dict[str, Any] = Field(default_factory=dict)
    command: list[str] = Field(default_factory=list)
    cwd: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    invocations: list[Invocation] = Field(default_factory=list)
    run_id: str | None = None
    conditions: ConditionAxis | None = None
    fault_profiles: list[dict[str, Any]] | None = None

    @field_validator("manifest_version", mode="before")
    @classmethod
    def _known_version(cls, value: Any) -> Any:
        if value != MANIFEST_VERSION or type(value) is not int:
            raise ValueError(
                f"manifest_version {short(value)} is not one this mcpgym reads "
                f"(it reads manifest_version {MANIFEST_VERSION}); use the mcpgym that wrote it"
            )
        return value

    def to_json(self) -> dict[str, Any]:
        """The manifest as written: JSON, the fields that were set (an older manifest keeps its shape)."""
        return self.model_dump(mode="json", exclude_unset=True)


def describe_agent(agent: Any, spec: str) -> AgentRecord:
    """The manifest entry of one agent: ``{"name", "spec", "describe"}``.

    Args:
        agent: an :class:`mcpgym.evaluation.agents.Agent` (anything with ``name``; ``describe()`` optional).
        spec: the string the agent was made from (``careful``, ``openai:gpt-4o``...).

    ``describe`` is the agent's ``describe()`` result passed through JSON (so it is exactly
    what is written), or None when the agent has no such method. A hook that raises or
    returns something that is not a JSON object is recorded as ``{"error": ...}`` rather
    than stopping the run.
    """
    hook = getattr(agent, "describe", None)
    described: Any = None
    if callable(hook):
        try:
            value = hook()
            described = json.loads(json.dumps(value, default=str))
            if not isinstance(described, dict):
                described = {"error": f"describe() returned {type(value).__name__}, expected a dict"}
        except Exception as exc:  # noqa: BLE001 - a broken hook must not stop the run
            described = {"error": f"describe() raised {type(exc).__name__}: {exc}"}
    return AgentRecord(name=str(getattr(agent, "name", spec)), spec=spec, describe=described)


def profile_entry(profile: Any) -> dict[str, Any]:
    """A :class:`mcpgym.tools.faults.FaultProfile` as the manifest records it: every field plus ``source``."""
    data: dict[str, Any] = profile.model_dump(mode="json")
    data["source"] = getattr(profile, "source", None)
    return data


def build_manifest(
    *,
    suite: str | None,
    tasks: Iterable[Any],
    trials: int,
    agents: list[AgentRecord],
    profile: Any,
    fault_seeds: dict[str, list[int]],
    concurrency: int,
    episode_timeout: float,
    server_url: str,
    server_spawned: bool,
    recovery_window: int | None,
    client: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    command: list[str] | None = None,
    conditions: ConditionAxis | None = None,
    profiles: list[Any] | None = None,
) -> Manifest:
    """Build a new manifest (see the module docstring for the fields).

    Args:
        suite: suite name, or None when tasks were picked by id.
        tasks: the run's tasks (``mcpgym.evaluation.tasks.Task``: ``id``, ``seed``, ``faults``, ``apps``, ``level``).
        trials: trials per (agent, task).
        agents: entries from :func:`describe_agent`.
        profile: the run's :class:`mcpgym.tools.faults.FaultProfile`.
        fault_seeds: task id -> fault seed of trial 0, 1, ...
        concurrency: most episodes at once.
        episode_timeout: wall seconds an agent may take per episode.
        server_url: the server's base URL; server_spawned: whether the runner started it.
        recovery_window: the scorer's K (tool calls).
        client: how the runner's MCP client was set up (``mcp_mode``, ``validate_output``).
        settings: the run's resolved options (``RunConfig.recorded()``: no token).
        command: argv of the process (default ``sys.argv``).
        conditions: the run's condition axes (None: a run without them; nothing is recorded).
        profiles: with ``conditions``, the :class:`~mcpgym.tools.faults.FaultProfile` of each
            value of its ``faults`` axis, in order.
    """
    tasks = list(tasks)
    seeds = {}
    for t in tasks:
        row = SeedRecord(world_seed=t.seed, fault_seeds=fault_seeds.get(t.id, []))
        if getattr(t, "faults", None):
            row.faults = t.faults
        seeds[t.id] = row
    started = utc_now()
    command = list(sys.argv if command is None else command)
    from mcpgym.kernel.app import app_versions

    used = dict.fromkeys(app for t in tasks for app in (getattr(t, "apps", None) or []))
    extra: dict[str, Any] = {}
    if conditions is not None:
        extra = {"conditions": conditions, "fault_profiles": [profile_entry(p) for p in profiles or []]}
    return Manifest(
        **extra,
        manifest_version=MANIFEST_VERSION,
        versions={**versions(), "apps": app_versions(used)},
        suite=suite,
        task_ids=[t.id for t in tasks],
        trials=trials,
        agents=agents,
        fault_profile=profile_entry(profile),
        seeds=seeds,
        concurrency=concurrency,
        episode_timeout=episode_timeout,
        recovery_window=recovery_window,
        server=ServerRecord(url=server_url, spawned=server_spawned),
        client=dict(client or {}),
        command=command,
        cwd=os.getcwd(),
        started_at=started,
        finished_at=None,
        invocations=[Invocation(command=command, settings=dict(settings or {}), started_at=started, finished_at=None)],
    )


def merge_for_resume(old: Manifest, new: Manifest) -> Manifest:
    """The manifest of a resumed run: ``old`` extended with ``new``'s agents, tasks and trials.

    Keeps the first run's ``started_at``; takes the larger ``trials``; unions agents (by name)
    and task ids (first-run order, then new ones); takes the newer versions, server and
    concurrency; appends ``new``'s invocation.

    Raises:
        ValueError: when the fault profile differs (mixing profiles in one run would make
            its scores meaningless; use another output directory), or the condition axes
            (``--faults A,B``, ``--tools X,Y``) or any of their profiles do.
    """
    if old.conditions != new.conditions or (old.conditions and old.fault_profiles != new.fault_profiles):

        def said(axis: ConditionAxis | None) -> str:
            return (
                "no condition axes"
                if axis is None
                else f"--faults {','.join(axis.faults)} --tools {','.join(axis.tools)}"
            )

        raise ValueError(
            f"this run's conditions are {said(old.conditions)}; cannot resume it with {said(new.conditions)}"
            + (" (same names, other rates)" if old.conditions == new.conditions else "")
            + ": one run keeps one set of conditions (resume without --faults and --tools, or use another --out directory)"
        )
    if old.fault_profile and old.fault_profile != new.fault_profile:
        raise ValueError(
            f"this run used fault profile {old.fault_profile.get('name')!r} with other rates; "
            f"cannot resume it with {(new.fault_profile or {}).get('name')!r} (use another --out directory)"
        )
    merged = old.model_copy(deep=True)
    names = {a.name for a in old.agents}
    merged.agents = list(old.agents) + [a for a in new.agents if a.name not in names]
    ids = list(old.task_ids)
    merged.task_ids = ids + [t for t in new.task_ids if t not in set(ids)]
    seeds = dict(old.seeds)
    for tid, row in new.seeds.items():
        if tid in seeds and len(seeds[tid].fault_seeds) >= len(row.fault_seeds):
            continue
        seeds[tid] = row
    merged.seeds = seeds
    merged.trials = max(old.trials or 0, new.trials or 0) or None
    suites = [s for s in (*(old.suite or "").split("+"), new.suite) if s]
    merged.suite = "+".join(dict.fromkeys(suites)) or None
    merged.versions = new.versions
    if new.server is not None and new.server.url:  # else nothing was left to run: no server was used
        merged.server = new.server
    merged.client = new.client
    merged.concurrency = new.concurrency
    merged.episode_timeout = new.episode_timeout
    merged.recovery_window = new.recovery_window
    merged.finished_at = None
    merged.invocations = list(old.invocations) + list(new.invocations)
    return merged


def resume_left_out(old: Manifest, task_ids: Iterable[str], agent_names: Iterable[str], trials: int) -> str | None:
    """Why a resume of the run ``old`` with ``trials`` trials of ``agent_names`` on ``task_ids``
    would leave the run short, or None when it would not.

    A resume that raises the run's trials raises them for every agent and task of the run
    (:func:`merge_for_resume` takes the larger ``trials``), so it must run the new trials of
    all of them: a resume narrowed to some agents or tasks would leave the others with fewer
    finished trials than the manifest says, and their pass^k uncomputable. The text names the
    agents and tasks left out, and what to type instead.
    """
    if old.trials is None or trials <= old.trials:
        return None
    names, ids = set(agent_names), set(task_ids)
    agents = [a.name for a in old.agents if a.name not in names]
    tasks = [t for t in old.task_ids if t not in ids]
    if not agents and not tasks:
        return None
    missing = []
    if agents:
        missing.append(f"agent{'s' if len(agents) > 1 else ''} {', '.join(agents)}")
    if tasks:
        shown = ", ".join(tasks[:5]) + (f" and {len(tasks) - 5} more" if len(tasks) > 5 else "")
        missing.append(f"task{'s' if len(tasks) > 1 else ''} {shown}")
    return (
        f"--trials {trials} raises the run's trials from {old.trials} to {trials} for every agent and task of the "
        f"run, but this resume leaves out {' and '.join(missing)}: resume without --agent/--task/--suite to run "
        "the missing trials of the whole run (or name them all), or use another --out"
    )


def write_json_atomic(path: str | Path, data: Any) -> None:
    """Write ``data`` as indented JSON to ``path`` through a temporary file and ``os.replace``,
    fsynced, so a killed process leaves either the old or the new file, never half of one.

    Raises:
        OSError: when the file cannot be written.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=False, ensure_ascii=False)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, p)


def read_manifest(run_dir: str | Path) -> Manifest | None:
    """The manifest of a run directory, or None when it has none.

    Raises:
        FormatError: (a ``ValueError`` too) when the file is not a regular file of at most
            16 MiB of UTF-8 text, not valid JSON, not a JSON object, of a ``manifest_version``
            other than :data:`MANIFEST_VERSION` (the message names the one this mcpgym reads),
            or a field of the wrong shape (:class:`Manifest`); the message names the file and
            the field.
    """
    p = Path(run_dir) / MANIFEST_NAME
    if not p.exists():
        return None
    try:
        data = json.loads(read_input_text(p, what="run manifest"))
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{p}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except InputFileError as exc:
        raise ManifestError(str(exc)) from None
    if not isinstance(data, dict):  # the one shape check before the model: its error names the type
        raise ManifestError(f"{p}: expected a JSON object, got a JSON {json_type(data)}")
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise ManifestError(f"{p}: {validation_message(exc, data)}") from None


class ManifestError(FormatError, ValueError):
    """A ``manifest.json`` that cannot be read as a :class:`Manifest` (the message names the file)."""


def validation_message(exc: ValidationError, data: Any = None) -> str:
    """The first error of ``exc`` (validating ``data``) as one plain line
    (:func:`mcpgym.kernel.validation_text.validation_line`): ``field 'trials' = 0: input should
    be greater than or equal to 1`` (a ``manifest_version`` error as it is: it names the
    version read)."""
    err = exc.errors(include_url=False)[0]
    if err["loc"] and err["loc"][0] == "manifest_version" and err["type"] == "value_error":
        return str(err["msg"]).removeprefix("Value error, ")
    return validation_line(exc, data, limit=1)


def finish_manifest(manifest: Manifest) -> Manifest:
    """Stamp ``finished_at`` (run and last invocation) with the wall-clock time now."""
    now = utc_now()
    manifest.finished_at = now
    if manifest.invocations:
        manifest.invocations[-1].finished_at = now
    return manifest


__all__ = [
    "MANIFEST_NAME",
    "MANIFEST_VERSION",
    "AgentRecord",
    "Invocation",
    "Manifest",
    "ManifestError",
    "SeedRecord",
    "ServerRecord",
    "build_manifest",
    "describe_agent",
    "finish_manifest",
    "merge_for_resume",
    "profile_entry",
    "read_manifest",
    "resume_left_out",
    "sha256_text",
    "utc_now",
    "validation_message",
    "versions",
    "write_json_atomic",
]
