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
* ``seeds``: per task, the world seed, the task's own fault profile when it sets one, and the
  fault seed of each trial;
* ``concurrency``, ``episode_timeout`` (wall seconds), ``server`` (its URL and whether the
  runner spawned it; the control token is never written), ``client`` (the MCP client's
  ``mcp_mode`` and ``validate_output``), ``command`` (argv), and wall-clock
  ``started_at`` / ``finished_at`` (ISO 8601, UTC; outside the sandboxes, so wall time is fine);
* ``invocations``: per invocation (a resumed run adds one), its argv, resolved settings
  (``RunSettings.public()``: no token) and start / finish times.

A resumed run keeps the first run's fields and appends each invocation to ``invocations``.
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

from mcpgym.kernel.input_files import InputFileError, read_input_text
from mcpgym.kernel.shorten import short

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


def describe_agent(agent: Any, spec: str) -> dict[str, Any]:
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
    return {"name": str(getattr(agent, "name", spec)), "spec": spec, "describe": described}


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
    agents: list[dict[str, Any]],
    profile: Any,
    fault_seeds: dict[str, list[int]],
    concurrency: int,
    episode_timeout: float,
    server_url: str,
    server_spawned: bool,
    recovery_window: int,
    client: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    command: list[str] | None = None,
) -> dict[str, Any]:
    """Build a new manifest dict (see the module docstring for the fields).

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
        settings: the run's resolved options (``RunSettings.public()``: no token).
        command: argv of the process (default ``sys.argv``).
    """
    tasks = list(tasks)
    seeds = {}
    for t in tasks:
        row: dict[str, Any] = {"world_seed": t.seed, "fault_seeds": fault_seeds.get(t.id, [])}
        if getattr(t, "faults", None):
            row["faults"] = t.faults
        seeds[t.id] = row
    started = utc_now()
    command = list(sys.argv if command is None else command)
    from mcpgym.kernel.app import app_versions

    used = dict.fromkeys(app for t in tasks for app in (getattr(t, "apps", None) or []))
    return {
        "manifest_version": MANIFEST_VERSION,
        "versions": {**versions(), "apps": app_versions(used)},
        "suite": suite,
        "task_ids": [t.id for t in tasks],
        "trials": trials,
        "agents": agents,
        "fault_profile": profile_entry(profile),
        "seeds": seeds,
        "concurrency": concurrency,
        "episode_timeout": episode_timeout,
        "recovery_window": recovery_window,
        "server": {"url": server_url, "spawned": server_spawned},
        "client": dict(client or {}),
        "command": command,
        "cwd": os.getcwd(),
        "started_at": started,
        "finished_at": None,
        "invocations": [
            {"command": command, "settings": dict(settings or {}), "started_at": started, "finished_at": None}
        ],
    }


def merge_for_resume(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The manifest of a resumed run: ``old`` extended with ``new``'s agents, tasks and trials.

    Keeps the first run's ``started_at``; takes the larger ``trials``; unions agents (by name)
    and task ids (first-run order, then new ones); takes the newer versions, server and
    concurrency; appends ``new``'s invocation.

    Raises:
        ValueError: when the fault profile differs (mixing profiles in one run would make
            its scores meaningless; use another output directory).
    """
    if old.get("fault_profile") and old["fault_profile"] != new["fault_profile"]:
        raise ValueError(
            f"this run used fault profile {old['fault_profile'].get('name')!r} with other rates; "
            f"cannot resume it with {new['fault_profile'].get('name')!r} (use another --out directory)"
        )
    merged = dict(old)
    names = {a["name"] for a in old.get("agents", [])}
    merged["agents"] = list(old.get("agents", [])) + [a for a in new["agents"] if a["name"] not in names]
    ids = list(old.get("task_ids", []))
    merged["task_ids"] = ids + [t for t in new["task_ids"] if t not in set(ids)]
    seeds = dict(old.get("seeds", {}))
    for tid, row in new["seeds"].items():
        if tid in seeds and len(seeds[tid].get("fault_seeds", [])) >= len(row.get("fault_seeds", [])):
            continue
        seeds[tid] = row
    merged["seeds"] = seeds
    merged["trials"] = max(int(old.get("trials") or 0), int(new["trials"]))
    suites = [s for s in (*(old.get("suite") or "").split("+"), new.get("suite")) if s]
    merged["suite"] = "+".join(dict.fromkeys(suites)) or None
    for key in ("versions", "server", "client", "concurrency", "episode_timeout", "recovery_window"):
        if key == "server" and not new[key].get("url"):
            continue  # nothing was left to run: no server was used
        merged[key] = new[key]
    merged["finished_at"] = None
    merged["invocations"] = list(old.get("invocations", [])) + new["invocations"]
    return merged


def resume_options(manifest: dict[str, Any]) -> dict[str, Any]:
    """What ``mcpgym run --resume`` takes from a run's manifest for the options its command
    line does not give, so that a bare ``--resume --out DIR`` continues the run as it was
    started rather than extending it with the defaults (3 trials, the three scripted agents,
    another suite).

    Args:
        manifest: a run's manifest (as :func:`read_manifest` returns it).

    Returns:
        Any of ``trials`` (int), ``agents`` (agent specs), ``task_ids``, ``task_files`` (the
        ``--tasks`` files of every invocation, relative paths resolved against the directory
        the run was started from), ``suite``, ``faults`` (the profile as last given) and
        ``episode_timeout`` (wall s), ``tool_exposure`` and ``agent_options`` (the LLM agent
        settings, as last given): only those the manifest holds.
    """
    out: dict[str, Any] = {}
    if isinstance(manifest.get("trials"), int) and manifest["trials"] >= 1:
        out["trials"] = manifest["trials"]
    cwd = Path(manifest["cwd"]) if isinstance(manifest.get("cwd"), str) else Path()
    named = [a.get("spec") or a.get("name") for a in manifest.get("agents") or [] if isinstance(a, dict)]
    specs = [s for s in named if isinstance(s, str)]
    if specs and len(specs) == len(named):
        # a replay file named relative to where the run was started
        out["agents"] = [
            f"replay:{cwd / s[7:]}" if s.startswith("replay:") and not Path(s[7:]).is_absolute() else s for s in specs
        ]
    if manifest.get("task_ids"):
        out["task_ids"] = list(manifest["task_ids"])
    if isinstance(manifest.get("suite"), str) and manifest["suite"]:
        out["suite"] = manifest["suite"]
    settings = [i.get("settings") or {} for i in manifest.get("invocations") or [] if isinstance(i, dict)]
    files = [f for s in settings for f in s.get("task_files") or [] if isinstance(f, str)]
    if files:
        out["task_files"] = list(dict.fromkeys(str(f if Path(f).is_absolute() else cwd / f) for f in files))
    faults = [s["faults"] for s in settings if isinstance(s.get("faults"), str)]
    if faults:
        given = Path(faults[-1])
        is_file = given.suffix in (".toml", ".json", ".yaml", ".yml")
        out["faults"] = str(cwd / given) if is_file and not given.is_absolute() else faults[-1]
    timeout = manifest.get("episode_timeout")
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout >= 1:
        out["episode_timeout"] = float(timeout)
    exposures = [s["tool_exposure"] for s in settings if isinstance(s.get("tool_exposure"), str)]
    if exposures:
        out["tool_exposure"] = exposures[-1]
    options = [s["agent_options"] for s in settings if isinstance(s.get("agent_options"), dict)]
    if options:
        out["agent_options"] = dict(options[-1])
    return out


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


def read_manifest(run_dir: str | Path) -> dict[str, Any] | None:
    """The manifest of a run directory, or None when it has none.

    Raises:
        ValueError: when the file is not a regular file of at most 16 MiB of UTF-8 text, not
            valid JSON, not a JSON object, of a ``manifest_version`` other than
            :data:`MANIFEST_VERSION` (the message names the one this mcpgym reads), or one of the fields a
            resume merges (``agents``, ``task_ids``, ``seeds``, ``invocations``,
            ``fault_profile``, ``trials``) or the ``recovery_window`` the scores use has the
            wrong shape; the message names the file and the field.
    """
    p = Path(run_dir) / MANIFEST_NAME
    if not p.exists():
        return None
    try:
        data = json.loads(read_input_text(p, what="run manifest"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except InputFileError as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(data, dict):
        raise ValueError(f"{p}: expected a JSON object, got {type(data).__name__}")
    version = data.get("manifest_version", MANIFEST_VERSION)
    if version != MANIFEST_VERSION or isinstance(version, bool):
        raise ValueError(
            f"{p}: manifest_version {short(version)} is not one this mcpgym reads "
            f"(it reads manifest_version {MANIFEST_VERSION}); use the mcpgym that wrote it"
        )
    for field, kind in _MANIFEST_SHAPES.items():
        value = data.get(field)
        if value is not None and not isinstance(value, kind):
            raise ValueError(f"{p}: field {field!r}: expected {_KIND_NAMES[kind]}, got {type(value).__name__}")
    for field in ("trials", "recovery_window"):  # counts: a bool or "3" is not one (True is an int)
        value = data.get(field)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"{p}: field {field!r}: expected an integer of at least 1, got {json.dumps(value)}")
    agents = data.get("agents") or []
    if not all(isinstance(a, dict) and isinstance(a.get("name"), str) for a in agents):
        raise ValueError(f"{p}: field 'agents': every entry must be an object with a string 'name'")
    if not all(isinstance(row, dict) for row in (data.get("seeds") or {}).values()):
        raise ValueError(f"{p}: field 'seeds': every entry must be an object")
    return data


_MANIFEST_SHAPES: dict[str, type | tuple[type, ...]] = {
    "agents": list,
    "task_ids": list,
    "seeds": dict,
    "invocations": list,
    "fault_profile": dict,
    "suite": str,
}
_KIND_NAMES: dict[type | tuple[type, ...], str] = {
    list: "a list",
    dict: "an object",
    int: "an integer",
    str: "a string",
}


def finish_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """Stamp ``finished_at`` (run and last invocation) with the wall-clock time now."""
    now = utc_now()
    manifest["finished_at"] = now
    if manifest.get("invocations"):
        manifest["invocations"][-1]["finished_at"] = now
    return manifest


__all__ = [
    "MANIFEST_NAME",
    "MANIFEST_VERSION",
    "build_manifest",
    "describe_agent",
    "finish_manifest",
    "merge_for_resume",
    "profile_entry",
    "read_manifest",
    "resume_options",
    "sha256_text",
    "utc_now",
    "versions",
    "write_json_atomic",
]
