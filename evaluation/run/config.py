"""One run's settings: :class:`RunConfig`, the single model the run's other shapes come from.

A run option is a field of :class:`RunConfig`, declared once, and everything else follows it:

* the ``mcpgym run`` flag: the field's :class:`Flag` metadata (names, metavar, help, bounds)
  is what :mod:`mcpgym.evaluation.cli.run` turns into the command's options;
* ``manifest.json``: every invocation records :meth:`RunConfig.recorded` (the whole model,
  without the control token) under ``settings``;
* ``--resume``: :func:`resume_config` takes every field marked ``resume=True`` that the
  command line does not give from the run's manifest (:meth:`RunConfig.from_manifest`);
* every episode: :class:`mcpgym.evaluation.run.episode_runner.EpisodeContext` carries the
  config (``ctx.config``), on this machine and on Ray workers (which get it as JSON).

docs/design.md §1 walks through adding one.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.json_schema import SkipJsonSchema

from mcpgym.evaluation.llm.local_model import DEFAULT_CONTEXT, DEFAULT_THREADS, MAX_CONTEXT, MAX_THREADS, MIN_CONTEXT
from mcpgym.evaluation.records.condition import ConditionAxis
from mcpgym.evaluation.records.manifest import Manifest, validation_message
from mcpgym.evaluation.scoring.scorer import DEFAULT_K
from mcpgym.kernel.exceptions import InvalidValue

CORE_DEFAULT_LIMIT = 30
"""A bare ``mcpgym run`` takes the ``core`` suite while it has at most this many tasks, else
``smoke``: it must stay under ~90 s on two cores. Measured: the 3 scripted agents x 23 core
tasks x 3 trials (207 episodes) took 52-56 s of wall time on 2 cores shared with other work
(about 4 episodes/s plus ~6 s of start-up), so 30 tasks (270 episodes) keeps a margin for
tasks with larger worlds."""

DEFAULT_EPISODE_TIMEOUT = 600.0
"""Wall seconds an agent may take for one episode before it is stopped (status ``limit``)."""


class Executor(StrEnum):
    """Where ``mcpgym run`` plays its episodes."""

    local = "local"
    ray = "ray"


@dataclass(frozen=True)
class Flag:
    """How a :class:`RunConfig` field is given on the ``mcpgym run`` command line.

    Attributes:
        names: the option's names (``("--agent", "-a")``).
        help: its help text (``mcpgym run --help``).
        param: the command's parameter name (default: the field's name); its upper-cased form
            is the metavar when ``metavar`` is None.
        metavar: the placeholder shown in the help (``N``, ``SECONDS``...).
        min, max: the bounds the flag checks (shown in the help: ``[at least 1]``).
        invert: a boolean flag that sets the field to False (``--quiet`` -> ``progress``).
        key: for a flag filling one entry of a dict field (``agent_options``): its key;
            ``type``: the entry's type (``int``, ``float``).
        pairs: for a repeatable ``KEY=VALUE`` flag filling a dict field.
        path: the flag takes file paths (recorded as text).
    """

    names: tuple[str, ...]
    help: str
    param: str | None = None
    metavar: str | None = None
    min: float | None = None
    max: float | None = None
    invert: bool = False
    key: str | None = None
    type: type | None = None
    pairs: bool = False
    path: bool = False


class Condition(StrEnum):
    """Which episodes of a run a setting conditions (:attr:`Resume.condition`): ``--resume``
    refuses another value of it while the run holds such episodes' agents, since one run
    would then mix two conditions under one score."""

    every = "every"
    """Every episode (``--tools``, ``--timeout``, ``--validate-output``)."""
    llm = "llm"
    """The episodes of LLM agents (their settings: ``--max-turns``, ``--temperature``...)."""
    local = "local"
    """The episodes of ``local:`` agents (the model server's ``--model-context``)."""


@dataclass(frozen=True)
class Resume:
    """Marks a :class:`RunConfig` field a bare ``--resume`` takes from the run's manifest.

    Attributes:
        group: fields of one group are taken together or not at all (the task selection:
            a command line naming a suite, tasks or task files picks them all).
        path: what in the value is a path, resolved against the directory the run was started
            from: ``file`` (every entry), ``profile`` (a fault profile named by a
            ``.toml``/``.json``/``.yaml`` file) or ``agent`` (a ``replay:PATH`` spec); None: no path.
        condition: the field is a condition of the episodes :class:`Condition` names: a
            ``--resume`` giving another value than the run's is refused (:func:`resume_config`)
            while the run has such agents. None: a given value simply wins (or extends the run).
    """

    group: str | None = None
    path: str | None = None
    condition: Condition | None = None


class RunConfig(BaseModel):
    """How to run: every ``mcpgym run`` option, and the settings a run records and resumes.

    Field order is the order of the flags in ``mcpgym run --help``. Each field's metadata says
    how it is given (:class:`Flag`) and whether ``--resume`` restores it (:class:`Resume`); the
    field's description says what it does. :meth:`recorded` is what ``manifest.json`` keeps.

    Raises:
        pydantic.ValidationError: for a value out of its field's domain.
    """

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    agents: Annotated[
        list[str],
        Flag(
            ("--agent", "-a"),
            "Agent spec, repeatable (default: careful, overconfident, defeatist). Scripted names, replay:FILE.jsonl, an LLM spec, or human (you play, as in mcpgym play).",
            param="agent",
            metavar="SPEC",
        ),
        Resume(path="agent"),
    ] = Field(default_factory=list, description="Agent specs (empty: the three scripted agents).")
    suite: Annotated[
        str | None,
        Flag(
            ("--suite",),
            f"Task suite (default: core while it has at most {CORE_DEFAULT_LIMIT} tasks, else smoke; `mcpgym tasks --suite S` lists one).",
            metavar="NAME",
        ),
        Resume(group="tasks"),
    ] = Field(default=None, description="The suite the tasks came from (None: picked by id or from files).")
    task_ids: Annotated[
        list[str],
        Flag(
            ("--task", "-t"),
            "Run only this task id (repeatable; from any suite, or from the task files given).",
            param="task",
            metavar="TASK_ID",
        ),
        Resume(group="tasks"),
    ] = Field(default_factory=list, description="Task ids to run (empty: the whole suite or files).")
    task_files: Annotated[
        list[str],
        Flag(
            ("--tasks",),
            "Run the tasks of this YAML/JSON task file (repeatable; any file, e.g. an outside app's own tasks).",
            param="task_file",
            metavar="FILE",
            path=True,
        ),
        Resume(group="tasks", path="file"),
    ] = Field(default_factory=list, description="The --tasks files the tasks came from.")
    trials: Annotated[
        int,
        Flag(("--trials",), "Trials per agent and task (each trial has its own fault seed).", metavar="N", min=1),
        Resume(),
    ] = Field(default=3, ge=1, description="Trials per (agent, task).")
    faults: Annotated[
        str,
        Flag(
            ("--faults",),
            "Fault profile: none, default, harsh, or a .toml/.json/.yaml file. A task's own profile wins. A comma-separated list (none,default,harsh) is a condition axis: every episode once per profile.",
            metavar="PROFILE",
        ),
        Resume(path="profile"),
    ] = Field(
        default="default",
        description="The run's fault profile (a task's own wins); a comma-separated list: one condition per profile.",
    )
    out: Annotated[
        Path | None,
        Flag(("--out", "-o"), "Run directory (default: runs/run-<UTC time>).", metavar="DIR"),
    ] = Field(default=None, description="The run directory.")
    concurrency: Annotated[int, Flag(("--concurrency",), "Most episodes at once.", metavar="N", min=1)] = Field(
        default=4, ge=1, description="Most episodes at once."
    )
    server_url: Annotated[
        str | None,
        Flag(
            ("--server",),
            "Use this mcpgym HTTP server (base URL) instead of spawning one.",
            param="server",
            metavar="URL",
        ),
    ] = Field(default=None, description="An mcpgym HTTP server to use instead of spawning one.")
    token: Annotated[
        SkipJsonSchema[str | None],
        Flag(("--token",), "Control token of --server (default: $MCPGYM_TOKEN).", metavar="TOKEN"),
    ] = Field(default=None, exclude=True, repr=False, description="Control token of the server (never recorded).")
    resume: Annotated[
        bool,
        Flag(
            ("--resume",),
            "Continue the run in --out: skip episodes already written; options not given are the run's own.",
        ),
    ] = Field(default=False, description="Skip the (agent, task, trial) triples already written.")
    force: Annotated[
        bool,
        Flag(
            ("--force",),
            "Start over in a run directory of mcpgym's own (its .mcpgym-run marker): only its files are deleted; anything else is refused.",
        ),
    ] = Field(default=False, description="Start over in a run directory of mcpgym's own.")
    episode_timeout: Annotated[
        float,
        Flag(
            ("--timeout",),
            "Wall seconds per episode before it is stopped (status limit).",
            param="timeout",
            metavar="SECONDS",
            min=1.0,
        ),
        Resume(condition=Condition.every),
    ] = Field(default=DEFAULT_EPISODE_TIMEOUT, gt=0, description="Wall seconds per episode.")
    progress: Annotated[bool, Flag(("--quiet", "-q"), "No progress bar.", param="quiet", invert=True)] = Field(
        default=True, description="Show a progress bar on stderr."
    )
    tool_exposure: Annotated[
        str,
        Flag(
            ("--tools",),
            "Tool exposure: all | task (the oracle's tools) | task+N (plus N seeded distractors) | retrieval (only search_tools, which unlocks what it finds). A comma-separated list (task,task+20,all) is a condition axis.",
            param="tools_mode",
            metavar="MODE",
        ),
        Resume(condition=Condition.every),
    ] = Field(
        default="all",
        description="Which tools an episode exposes: all, task, task+N or retrieval; a comma-separated list: one condition per mode.",
    )
    agent_options: Annotated[
        dict[str, Any],
        Flag(
            ("--max-turns",),
            "LLM agents: model turns per episode (default 40).",
            metavar="N",
            min=1,
            key="max_turns",
            type=int,
        ),
        Flag(
            ("--max-output-tokens",),
            "LLM agents: output tokens per reply (default: the provider's; a reply cut at it ends the episode truncated).",
            metavar="N",
            min=1,
            key="max_output_tokens",
            type=int,
        ),
        Flag(
            ("--request-timeout",),
            "LLM agents: wall seconds for one provider request before it is retried (default 120).",
            metavar="SECONDS",
            min=0.001,
            key="request_timeout",
            type=float,
        ),
        Flag(
            ("--temperature",),
            "LLM agents: sampling temperature (default 0).",
            metavar="T",
            min=0.0,
            max=2.0,
            key="temperature",
            type=float,
        ),
        Flag(
            ("--seed",),
            "LLM agents: the provider's sampling seed (default: not sent).",
            metavar="N",
            key="seed",
            type=int,
        ),
        Flag(
            ("--agent-option",),
            "LLM agents: any other setting as KEY=VALUE (max_tool_calls, max_tokens, max_retries, backoff_base, system_prompt...), repeatable.",
            param="agent_option",
            metavar="KEY_VALUE",
            pairs=True,
        ),
        Resume(condition=Condition.llm),
    ] = Field(
        default_factory=dict,
        description="LLM agent settings (max_turns, temperature...; mcpgym.evaluation.llm.options).",
    )
    model_context: Annotated[
        int | None,
        Flag(
            ("--model-context",),
            f"local: agents: the context window (tokens) of the model server the run starts for them (default {DEFAULT_CONTEXT}; a longer prompt is refused, the episode errored).",
            metavar="N",
            min=MIN_CONTEXT,
            max=MAX_CONTEXT,
        ),
        Resume(condition=Condition.local),
    ] = Field(
        default=None,
        ge=MIN_CONTEXT,
        le=MAX_CONTEXT,
        strict=True,
        description=f"The local model server's context window in tokens (None: {DEFAULT_CONTEXT}; mcpgym.evaluation.llm.local_agent).",
    )
    model_threads: Annotated[
        int | None,
        Flag(
            ("--model-threads",),
            f"local: agents: llama.cpp CPU threads of the model server the run starts for them (default {DEFAULT_THREADS}, measured by benchmarks/local_generation.py).",
            metavar="N",
            min=1,
            max=MAX_THREADS,
        ),
        Resume(condition=Condition.local),
    ] = Field(
        default=None,
        ge=1,
        le=MAX_THREADS,
        strict=True,
        description=f"The local model server's CPU threads (None: {DEFAULT_THREADS}; mcpgym.evaluation.llm.local_agent).",
    )
    model_path: Annotated[
        str | None,
        Flag(
            ("--model-path",),
            "local: agents: serve this GGUF file; its name (local:NAME) is read from its metadata (general.name).",
            metavar="FILE",
        ),
        Resume(path="model", condition=Condition.local),
    ] = Field(
        default=None,
        max_length=4096,
        description="A GGUF file served for local: agents (mcpgym.evaluation.llm.local_models.model_from_path).",
    )
    validate_output: Annotated[
        bool,
        Flag(
            ("--validate-output",),
            "Check every tool result against its output schema in the client (slower; a mismatch ends the episode as errored).",
        ),
        Resume(condition=Condition.every),
    ] = Field(default=False, description="Check every result against its tool's output schema in the client.")
    executor: Annotated[
        Executor,
        Flag(
            ("--executor",),
            "local: one server on this machine; ray: Ray actors, each with its own server (pip install 'mcpgym[ray]').",
        ),
    ] = Field(default=Executor.local, description="Where episodes are played.")
    ray_address: Annotated[
        str | None,
        Flag(
            ("--ray-address",),
            "--executor ray: the cluster to join (auto, HOST:6379, ray://HOST:10001; default: $RAY_ADDRESS, else a local cluster).",
        ),
    ] = Field(default=None, description="The Ray cluster to join.")
    ray_workers: Annotated[
        int | None,
        Flag(
            ("--ray-workers",),
            "--executor ray: worker actors, one CPU each (default: the cluster's CPUs, at most --concurrency).",
            min=1,
        ),
    ] = Field(default=None, ge=1, description="Ray actors to start.")
    k: int | None = Field(
        default=DEFAULT_K, ge=1, description="The scorer's recovery window (tool calls); None: no window (the default)."
    )
    mcp_mode: str = Field(
        default="auto",
        description="mcp.Client connect mode: auto (discover, newest protocol) or legacy (initialize handshake). "
        "On this server auto reuses HTTP connections; a 69-episode run took 25 s instead of 37 s of wall time.",
    )
    retries: int = Field(default=2, ge=0, description="Times an episode whose Ray worker was lost is sent again.")
    user_simulator: str = Field(
        default="scripted", description="Who plays the user: scripted, or PROVIDER:MODEL (mcpgym.evaluation.users)."
    )

    @field_validator("agent_options")
    @classmethod
    def _check_agent_options(cls, value: dict[str, Any]) -> dict[str, Any]:
        from mcpgym.evaluation.llm.options import check_agent_options

        return check_agent_options(value)

    @field_validator("tool_exposure")
    @classmethod
    def _check_exposure(cls, value: str) -> str:
        from mcpgym.evaluation.run.conditions import tool_values

        tool_values(value)
        return value

    @field_validator("faults")
    @classmethod
    def _check_fault_axis(cls, value: str) -> str:
        from mcpgym.evaluation.run.conditions import axis_values

        axis_values(value, "--faults")
        return value

    def condition_axis(self) -> ConditionAxis | None:
        """The run's condition axes (:func:`mcpgym.evaluation.run.conditions.condition_axis`):
        None when ``faults`` and ``tool_exposure`` each name one value."""
        from mcpgym.evaluation.run.conditions import condition_axis

        return condition_axis(self.faults, self.tool_exposure)

    @classmethod
    def build(cls, data: dict[str, Any]) -> RunConfig:
        """``RunConfig.model_validate(data)`` with an error for people.

        Raises:
            InvalidValue: naming the field and the value refused (a validator's own message,
                such as an unknown tool exposure, as it is).
        """
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            if err["type"] == "value_error":
                raise InvalidValue(str(err["msg"]).removeprefix("Value error, ")) from None
            raise InvalidValue(validation_message(exc, data)) from None

    def recorded(self) -> dict[str, Any]:
        """The config as ``manifest.json`` records it (JSON; never the control token)."""
        return self.model_dump(mode="json")

    @classmethod
    def from_manifest(cls, manifest: Manifest) -> RunConfig:
        """The config a run recorded: its last invocation's ``settings``, with the run-wide
        ``agents``, ``task_ids``, ``trials`` and ``episode_timeout`` of the manifest (a resumed
        run's union; older manifests record them only there), and the ``--tasks`` files of
        every invocation. Fields the manifest does not hold are left unset
        (``model_fields_set`` tells them apart).

        Raises:
            InvalidValue: when the recorded settings do not validate (the message names the field).
        """
        settings: dict[str, Any] = dict(manifest.invocations[-1].settings) if manifest.invocations else {}
        specs = [a.spec or a.name for a in manifest.agents]
        if specs:
            settings["agents"] = specs
        if manifest.task_ids:
            settings["task_ids"] = list(manifest.task_ids)
        if manifest.suite:
            settings["suite"] = manifest.suite
        files = [f for inv in manifest.invocations for f in inv.settings.get("task_files") or []]
        if files:
            settings["task_files"] = list(dict.fromkeys(files))
        settings["trials"] = manifest.trials
        if manifest.episode_timeout is not None:
            settings["episode_timeout"] = manifest.episode_timeout
        for name in ("resume", "force", "out"):  # this invocation's, never the recorded ones
            settings.pop(name, None)
        try:
            return cls.build(settings)
        except InvalidValue as exc:
            raise InvalidValue(f"the run's recorded settings do not validate: {exc}") from None


def resumable() -> dict[str, Resume]:
    """Field name -> its :class:`Resume` marker, for every field ``--resume`` restores."""
    out = {}
    for name, info in RunConfig.model_fields.items():
        marks = [m for m in info.metadata if isinstance(m, Resume)]
        if marks:
            out[name] = marks[0]
    return out


def _resolve(kind: str, value: Any, cwd: Path) -> Any:
    """A recorded value with its paths (:attr:`Resume.path` ``kind``) resolved against ``cwd``;
    a list's entries each, without repeats."""
    if isinstance(value, list):
        return list(dict.fromkeys(_resolve(kind, v, cwd) for v in value))
    if not isinstance(value, str):
        return value
    if kind == "agent":
        if not value.startswith("replay:"):
            return value
        path = Path(value[7:])
        return value if path.is_absolute() else f"replay:{cwd / path}"
    if kind == "profile" and "," in value:  # a condition axis: each profile file resolved
        return ",".join(_resolve(kind, v.strip(), cwd) for v in value.split(","))
    path = Path(value)
    if kind == "profile" and path.suffix not in (".toml", ".json", ".yaml", ".yml"):
        return value  # a built-in profile's name
    return value if path.is_absolute() else str(cwd / path)


def agent_uses(condition: Condition, spec: str) -> bool:
    """Whether the episodes of the agent ``spec`` depend on a setting of ``condition``:
    every agent for ``every``; LLM agents (not scripted, human or ``replay:``) for ``llm``;
    ``local:MODEL`` agents for ``local``."""
    from mcpgym.evaluation.agents import HUMAN, SCRIPTED_AGENTS

    prefix, colon, _ = spec.partition(":")
    if condition is Condition.local:
        return bool(colon) and prefix.strip().lower() == "local"
    if condition is Condition.llm:
        return spec not in SCRIPTED_AGENTS and spec != HUMAN and not spec.startswith("replay:")
    return True


def _option_names(name: str) -> dict[str | None, str]:
    """The flag of each entry of the field ``name`` (``key`` -> ``--flag``; None -> the field's own flag)."""
    flags = [m for m in RunConfig.model_fields[name].metadata if isinstance(m, Flag)]
    return {f.key: f.names[0] for f in flags if not f.pairs} | {
        None: next((f.names[0] for f in flags if f.pairs or f.key is None), f"--{name}")
    }


def _shown(value: Any) -> str:
    """A setting's value as a command line gives it (``0.5``, ``60``, ``task``)."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _check_conditions(given: RunConfig, given_fields: set[str], recorded: RunConfig, manifest: Manifest) -> None:
    """Refuse a ``--resume`` whose given settings would mix conditions in the run of
    ``manifest`` (see :func:`resume_config`).

    Raises:
        InputError: naming the flag, the given value and the run's.
    """
    from mcpgym.kernel.exceptions import InputError

    run_specs = [a.spec or a.name for a in manifest.agents]
    if "trials" in given_fields and manifest.trials and given.trials < manifest.trials:
        raise InputError(
            f"--trials {given.trials} is below this run's {manifest.trials} trials per agent and task: a resume "
            f"continues the run's trials and cannot lower them (its pass^{manifest.trials} needs "
            f"{manifest.trials} trials of each); leave --trials out, give {manifest.trials} or more, or use another --out"
        )
    for name, mark in resumable().items():
        if mark.condition is None or name not in given_fields or name not in recorded.model_fields_set:
            continue
        flags = _option_names(name)
        users = [s for s in run_specs if agent_uses(mark.condition, s)]
        new, old = getattr(given, name), getattr(recorded, name)
        if name == "model_context":
            new, old = new or DEFAULT_CONTEXT, old or DEFAULT_CONTEXT
        if name == "model_threads":
            new, old = new or DEFAULT_THREADS, old or DEFAULT_THREADS
        if name == "agent_options":
            changed = [(key, value, old.get(key)) for key, value in new.items() if old.get(key) != value]
        else:
            changed = [(None, new, old)] if new != old else []
        if not changed or not users:
            continue
        key, value, before = changed[0]
        flag = flags.get(key) or f"{flags[None]} {key}="
        given_text = flag if isinstance(value, bool) else f"{flag}{'' if flag.endswith('=') else ' '}{_shown(value)}"
        flag = flag.removesuffix("=")
        whose = "its episodes" if mark.condition is Condition.every else f"the episodes of {', '.join(users)}"
        if isinstance(value, bool) or before is None:
            ran = ("with it" if before else "without it") + (
                "" if isinstance(value, bool) else " (the agent's default)"
            )
            head = f"{given_text} differs from this run: {whose} ran {ran}"
        else:
            head = f"{given_text} differs from this run's {_shown(before)}: {whose} ran with {_shown(before)}"
        raise InputError(
            f"{head}, and one run must not mix two conditions; resume without {flag}"
            f"{'' if isinstance(value, bool) or before is None else ' (or with the same value)'}, "
            f"or use another --out for {given_text}"
        )
    from mcpgym.evaluation.run.launch import LLM_FLAGS

    every = [*run_specs, *given.agents]
    for name, says in (
        ("model_context", "--model-context sets the model server of local: agents"),
        ("model_threads", "--model-threads sets the model server of local: agents"),
        ("model_path", "--model-path sets the model server of local: agents"),
        ("agent_options", f"{LLM_FLAGS} set LLM agents"),
    ):
        condition = resumable()[name].condition
        assert condition is not None
        if name in given_fields and not any(agent_uses(condition, s) for s in every):
            raise InputError(f"{says}, and this run has none")


def resume_config(given: RunConfig, given_fields: set[str], manifest: Manifest) -> RunConfig:
    """The config of ``mcpgym run --resume``: what the command line gives, then the run's own.

    A bare ``--resume --out DIR`` continues the run as it was started rather than extending it
    with the defaults (3 trials, the three scripted agents, another suite). Every field marked
    :class:`Resume` that is not in ``given_fields`` (the fields the command line set) takes the
    run's recorded value; fields of one group (the task selection) only all together, when
    none of them was given. Recorded paths are resolved against the directory the run was
    started from. ``agent_options`` merge: the run's, then the keys the command line gives.

    A resume may extend the run, never change its conditions: a given ``--trials`` below the
    run's, or another value of a field marked with a :attr:`Resume.condition` (``--model-context``,
    ``--tools``, ``--timeout``, ``--validate-output``, the LLM settings) while the run has the
    agents it conditions, is refused naming both values (as merging another fault profile is,
    :func:`~mcpgym.evaluation.records.manifest.merge_for_resume`). ``--model-context`` or an
    LLM setting given for a run that has, and gets, no such agent is refused as for a new run;
    restored from the run, they are kept (recorded) for the run's other agents.

    Raises:
        InvalidValue: when the recorded settings do not validate.
        InputError: a given setting that would mix conditions, or one no agent of the run uses.
    """
    recorded = RunConfig.from_manifest(manifest)
    cwd = Path(manifest.cwd) if manifest.cwd else Path()
    marks = resumable()
    _check_conditions(given, given_fields, recorded, manifest)
    groups_given = {m.group for name, m in marks.items() if m.group and name in given_fields}
    update: dict[str, Any] = {}
    for name, mark in marks.items():
        if name not in recorded.model_fields_set or (mark.group and mark.group in groups_given):
            continue
        value = getattr(recorded, name)
        if mark.path:
            value = _resolve(mark.path, value, cwd)
        if name == "agent_options":
            update[name] = {**value, **(given.agent_options if name in given_fields else {})}
        elif name not in given_fields:
            update[name] = value
    if "task_ids" in update or "task_files" in update or "suite" in update:
        for name in ("suite", "task_ids", "task_files"):  # the group is replaced whole
            update.setdefault(name, RunConfig.model_fields[name].get_default(call_default_factory=True))
        if update["task_files"]:
            update["suite"] = None
    data = given.model_dump()
    data.update(update)
    return RunConfig.model_validate({**data, "token": given.token})


__all__ = [
    "CORE_DEFAULT_LIMIT",
    "DEFAULT_EPISODE_TIMEOUT",
    "Condition",
    "Executor",
    "Flag",
    "Resume",
    "RunConfig",
    "agent_uses",
    "resumable",
    "resume_config",
]
