"""Seeded fault injection (docs/design.md §4).

A :class:`FaultProfile` sets a rate per fault kind, with per-app and per-tool overrides.

Decision rule. For the n-th call (0-based, counting every earlier call of the same tool) of
tool T, ``u = stable_uniform("fault", fault_seed, T, n)`` is compared with the stacked rates
of the kinds that apply to T's tool kind, in the fixed order of :data:`CALL_FAULT_KINDS`
(the first kind whose cumulative rate exceeds ``u`` wins). :class:`ToolSchedule` then applies
two rules over T's own earlier decisions: ``max_consecutive`` caps faults in a row, and a run
of faults holds at most one ``stale_read`` (so the next successful read is current).
``unavailable`` is decided once per episode from ``u(fault_seed, T, "unavailable")``
(:func:`plan_unavailable`). The schedule of T is therefore a pure function of
``(profile, fault_seed, T, n)``: other tools, timing and the world seed never change it.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, ValidationError
from pydantic_core import ErrorDetails

from mcpgym.kernel.exceptions import InputError
from mcpgym.kernel.fault_kinds import CALL_FAULT_KINDS, FAULT_KINDS, FAULTS, FaultKind
from mcpgym.kernel.input_files import InputFileError, load_yaml, read_input_text, yaml_error_text
from mcpgym.kernel.rng import stable_uniform
from mcpgym.kernel.shorten import short, short_text
from mcpgym.kernel.validation_text import json_type, validation_line

APPLIES_TO: dict[str, frozenset[str]] = {kind: facts.hits for kind, facts in FAULTS.items()}
"""Which tool kinds each fault kind can hit (``unavailable`` also needs a declared alternative);
read from :data:`mcpgym.kernel.fault_kinds.FAULTS`, as :data:`FAULT_KINDS` and
:data:`CALL_FAULT_KINDS` are."""


def exempt_tools(specs: Mapping[str, Any]) -> frozenset[str]:
    """The tools of ``specs`` (name -> spec) that are never faulted: those whose spec says
    ``fault_exempt`` (declared ``never_faulted=True``, or the role ``wait`` / ``reauth`` on
    ``@tool``, so that every fault keeps a cure)."""
    return frozenset(name for name, spec in specs.items() if getattr(spec, "fault_exempt", False))


_APP_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # the rule of mcpgym.kernel.spec.TOOL_NAME_RE


class FaultProfileError(InputError, ValueError):
    """A fault profile file or mapping is invalid; the message names the file, field and value."""


def _check_rate(value: Any) -> float:
    """Accept an int or float in [0, 1] (not a bool, string, NaN or infinity)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"a rate must be a number in [0, 1], not a {json_type(value)}")
    rate = float(value)
    if math.isnan(rate) or not 0.0 <= rate <= 1.0:
        raise ValueError("a rate must be in [0, 1]")
    return rate


Rate = Annotated[float, BeforeValidator(_check_rate)]
"""A probability per call: a number in [0, 1]."""


def _check_app_name(value: str) -> str:
    if not _APP_NAME_RE.match(value):
        raise ValueError("an app name is a lowercase identifier such as 'shop'")
    return value


def _check_tool_name(value: str) -> str:
    if not _TOOL_NAME_RE.match(value):
        raise ValueError("a tool name matches ^[a-zA-Z0-9_-]{1,64}$, named <app>_<verb>_<noun>")
    return value


AppName = Annotated[str, BeforeValidator(lambda v: _check_app_name(v) if isinstance(v, str) else v)]
"""The key of an app override: a lowercase identifier."""
ToolName = Annotated[str, BeforeValidator(lambda v: _check_tool_name(v) if isinstance(v, str) else v)]
"""The key of a tool override: a valid tool name."""


class FaultRates(BaseModel):
    """Probability per call of each fault kind, each in [0, 1] (``unavailable``: per episode)."""

    model_config = ConfigDict(extra="forbid")

    transient: Rate = 0.0
    rate_limited: Rate = 0.0
    timeout: Rate = 0.0
    unavailable: Rate = 0.0
    auth_challenge: Rate = 0.0
    lost_write: Rate = 0.0
    stale_read: Rate = 0.0


class FaultProfile(BaseModel):
    """A fault profile: rates per kind, overrides per app and per tool.

    Attributes:
        name: profile name (``none``, ``default``, ``harsh`` or the file stem).
        rates: base rates (:class:`FaultRates`).
        apps: app name -> {kind: rate} overriding ``rates`` for that app's tools.
        tools: tool name -> {kind: rate} overriding app and base rates.
        max_consecutive: most injected faults in a row for one tool (>= 1).
        retry_after: virtual seconds a ``rate_limited`` fault blocks its tool.

    For every tool, the per-call rates that apply to its kind (see :data:`APPLIES_TO`) must
    add up to at most 1; :func:`check_profile` enforces it against the registered tools.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = "custom"
    rates: FaultRates = Field(default_factory=FaultRates)
    apps: dict[AppName, dict[FaultKind, Rate]] = Field(default_factory=dict)
    tools: dict[ToolName, dict[FaultKind, Rate]] = Field(default_factory=dict)
    max_consecutive: int = Field(2, ge=1, le=100, strict=True)  # strict: `true` is no count
    retry_after: int = Field(30, ge=1, le=86_400, strict=True)

    _source: str = PrivateAttr("<mapping>")

    @property
    def source(self) -> str:
        """Where the profile came from: a file path, ``<mapping>`` or ``builtin:<name>``."""
        return self._source

    def rate(self, tool: str, app: str, kind: FaultKind) -> float:
        """Rate of fault ``kind`` for ``tool`` of ``app``: tool override, else app, else base."""
        if kind in self.tools.get(tool, {}):
            return float(self.tools[tool][kind])
        if kind in self.apps.get(app, {}):
            return float(self.apps[app][kind])
        return float(getattr(self.rates, kind))

    def rate_and_field(self, tool: str, app: str, kind: FaultKind) -> tuple[float, str]:
        """Like :meth:`rate`, plus the profile field it comes from (e.g. ``mcpgym.tools.shop_checkout.timeout``)."""
        if kind in self.tools.get(tool, {}):
            return float(self.tools[tool][kind]), f"tools.{tool}.{kind}"
        if kind in self.apps.get(app, {}):
            return float(self.apps[app][kind]), f"apps.{app}.{kind}"
        return float(getattr(self.rates, kind)), f"rates.{kind}"

    @property
    def enabled(self) -> bool:
        """True when any rate is above zero."""
        return any(self.uses(kind) for kind in FAULT_KINDS)

    def uses(self, kind: FaultKind) -> bool:
        """True when ``kind`` has a non-zero rate anywhere in the profile."""
        if getattr(self.rates, kind) > 0:
            return True
        return any(over.get(kind, 0) > 0 for over in (*self.apps.values(), *self.tools.values()))


def _builtin(profile: FaultProfile) -> FaultProfile:
    profile._source = f"builtin:{profile.name}"
    return profile


BUILTIN_PROFILES: dict[str, FaultProfile] = {
    "none": _builtin(FaultProfile(name="none")),
    # Measured (docs/faults.md; kept in range by tests/tools/test_faults.py): a 10-call episode with
    # half writes meets 1.40 distinct faults on average over 2000 fault seeds (the previous
    # 0.06/0.02/0.04/0.02, unavailable 0.05 gave 1.10 and left 31 % of episodes fault-free).
    "default": _builtin(
        FaultProfile(
            name="default",
            rates=FaultRates(transient=0.07, rate_limited=0.03, timeout=0.05, unavailable=0.08, auth_challenge=0.03),
        )
    ),
    "harsh": _builtin(
        FaultProfile(
            name="harsh",
            rates=FaultRates(
                transient=0.12,
                rate_limited=0.05,
                timeout=0.08,
                unavailable=0.10,
                auth_challenge=0.05,
                lost_write=0.06,
                stale_read=0.08,
            ),
        )
    ),
}


# -- loading -------------------------------------------------------------------------------
def _lookup(data: Any, loc: tuple[Any, ...]) -> Any:
    for part in loc:
        if isinstance(data, dict) and part in data:
            data = data[part]
        else:
            return None
    return data


def _explain(err: ErrorDetails, loc: tuple[Any, ...]) -> str | None:
    """A fault profile's own wording of a validation problem (the fault kinds or fields it
    takes), or None for the plain one of :func:`mcpgym.kernel.validation_text.describe_error`."""
    kinds = ", ".join(FAULT_KINDS)
    if loc and loc[-1] == "[key]":
        if len(loc) == 4 and loc[0] in ("apps", "tools"):
            return f"unknown fault kind {short(err.get('input'))}; expected one of {kinds}"
        return None
    if err["type"] == "extra_forbidden":
        if len(loc) == 2 and loc[0] == "rates":
            return f"unknown fault kind {short(loc[1])}; expected one of {kinds}"
        if len(loc) == 1:
            return f"unknown field; expected one of {', '.join(FaultProfile.model_fields)}"
    if err["type"] == "dict_type" and len(loc) == 2 and loc[0] in ("apps", "tools"):
        return "an override must be a table of {kind: rate}, e.g. {timeout = 0.1}"
    return None


def _exists(path: Path) -> bool:
    """Whether ``path`` names something (False for a name the OS refuses, e.g. too long)."""
    try:
        return path.exists()
    except OSError:
        return False


def load_profile(spec: str | Path | FaultProfile | dict[str, Any] | None, *, check_apps: bool = True) -> FaultProfile:
    """Return a fault profile from a built-in name, a TOML/JSON/YAML file path, or a mapping.

    Args:
        spec: ``"none"`` | ``"default"`` | ``"harsh"``, a path ending in ``.toml``, ``.json``,
            ``.yaml`` or ``.yml``, a mapping of :class:`FaultProfile` fields, or a profile.
            None means ``default``.
        check_apps: check overrides against the registered apps (:func:`check_profile`);
            False for ``mcpgym proxy``, whose tools are an outside server's.

    Raises:
        FaultProfileError: for an unknown name, an unreadable file, or invalid content; the
            message names the file, the field (e.g. ``rates.transient``) and the bad value.
            Overrides are also checked against the registered apps (see :func:`check_profile`).
    """
    if spec is None:
        return BUILTIN_PROFILES["default"]
    if isinstance(spec, FaultProfile):
        return _checked(spec) if check_apps else spec
    source = "<mapping>"
    if isinstance(spec, dict):
        data = spec
    else:
        text = str(spec)
        if text in BUILTIN_PROFILES:
            return BUILTIN_PROFILES[text]
        path = Path(text)
        if not path.suffix and _exists(path):
            raise FaultProfileError(
                f"{short_text(text)}: not a fault profile: a profile file ends in .toml, .json, .yaml or .yml "
                f"(or give a built-in profile: {', '.join(BUILTIN_PROFILES)})"
            )
        if not path.suffix:
            raise FaultProfileError(
                f"unknown fault profile {short(text)}: use one of {', '.join(BUILTIN_PROFILES)} or a .toml/.json/.yaml file"
            )
        source = str(path)
        if path.suffix not in (".toml", ".json", ".yaml", ".yml"):
            raise FaultProfileError(f"{source}: fault profile must be .toml, .json, .yaml or .yml")
        try:
            raw = read_input_text(path, what="fault profile")
        except InputFileError as exc:
            raise FaultProfileError(str(exc)) from None
        try:
            if path.suffix == ".toml":
                data = tomllib.loads(raw)
            elif path.suffix == ".json":
                data = json.loads(raw)
            else:
                data = load_yaml(raw) or {}
        except yaml.YAMLError as exc:
            raise FaultProfileError(f"{source}: not valid YAML: {yaml_error_text(exc)}") from None
        except Exception as exc:  # parse errors of the TOML and JSON libraries
            raise FaultProfileError(f"{source}: not valid {path.suffix[1:].upper()}: {exc}") from None
        if not isinstance(data, dict):
            raise FaultProfileError(f"{source}: a fault profile must be a table/object at the top level")
        data = {"name": path.stem, **data}
    try:
        profile = FaultProfile.model_validate(data)
    except ValidationError as exc:
        raise FaultProfileError(f"{source}: invalid fault profile: {validation_line(exc, data, _explain)}") from None
    profile._source = source
    return _checked(profile) if check_apps else profile


def _listing(names: Any) -> str:
    """Sorted ``names``, comma-separated, at most :data:`MAX_LISTED_TOOLS` (then how many more)."""
    ordered = sorted(names)
    more = len(ordered) - MAX_LISTED_TOOLS
    return ", ".join(ordered[:MAX_LISTED_TOOLS]) + (f" (and {more} more)" if more > 0 else "")


def _plain(override: Mapping[FaultKind, float]) -> dict[str, float]:
    """An override as the user wrote it (kind names as plain strings), for messages."""
    return {str(kind): rate for kind, rate in override.items()}


def _checked(profile: FaultProfile) -> FaultProfile:
    if profile.apps or profile.tools or profile.enabled:
        from mcpgym.kernel.app import load_apps  # late: sandboxes.base imports tools.spec

        check_profile(profile, {name: cls.tools for name, cls in load_apps().items()})
    return profile


MAX_LISTED_TOOLS = 40
"""Most tool names an unknown-tool error lists (then how many more there are)."""


def check_profile(
    profile: FaultProfile, registry: Mapping[str, Mapping[str, Any]], tools_label: str | None = None
) -> None:
    """Check a profile's overrides and rate sums against the registered apps and tools.

    Args:
        profile: the profile.
        registry: app name -> {tool name: spec with ``.kind``} of every registered app (for the
            proxy: of the upstream's tools, as its fault plan classified them).
        tools_label: when given, an unknown tool's error lists every tool under this label
            (``"tools of the upstream"``) rather than the tools of the app its name starts with.

    Raises:
        FaultProfileError: naming the profile's source, the field and the value, when an app
            override names no registered app, a tool override names no registered tool (the
            message gives the closest names, up to 3, and the known tools or apps) or a tool
            that is never faulted (see :func:`exempt_tools`), or the per-call rates of some
            tool add up to more than 1.
    """
    src = profile.source
    known_tools = {tool for tools in registry.values() for tool in tools}
    exempt = {tool for tools in registry.values() for tool in exempt_tools(tools)}
    for app, over in profile.apps.items():
        if app not in registry:
            raise FaultProfileError(
                f"{src}: invalid fault profile: field {short('apps.' + app)} = {short(_plain(over))}: no app named "
                f"{short(app)}; known apps: {', '.join(sorted(registry))}"
            )
    for tool, over in profile.tools.items():
        if tool in exempt:
            raise FaultProfileError(
                f"{src}: invalid fault profile: field {short('tools.' + tool)} = {short(_plain(over))}: {tool} is "
                "declared never faulted (a wait/reauth remedy or never_faulted tool)"
            )
        if tool not in known_tools:
            close = difflib.get_close_matches(tool, sorted(known_tools), n=3, cutoff=0.6)
            hint = f"; closest: {', '.join(close)}" if close else ""
            prefix = [a for a in registry if tool.startswith(a + "_")]
            if tools_label is not None:
                hint += f"; {tools_label}: {_listing(known_tools)}"
            elif prefix:
                hint += f"; tools of {prefix[0]}: {_listing(registry[prefix[0]])}"
            else:
                hint += f"; known apps: {', '.join(sorted(registry))}"
            raise FaultProfileError(
                f"{src}: invalid fault profile: field {short('tools.' + tool)} = {short(_plain(over))}: "
                f"no tool named {short(tool)}{hint}"
            )
    for app, tools in registry.items():
        # tools without a tool override share their app's rates: check one of each tool kind
        shared: dict[str, str] = {}
        for tool in sorted(tools):
            if tool not in profile.tools and tool not in exempt:
                shared.setdefault(tools[tool].kind, tool)
        for tool in [*shared.values(), *(t for t in tools if t in profile.tools)]:
            spec = tools[tool]
            parts = [
                (kind, *profile.rate_and_field(tool, app, kind))
                for kind in CALL_FAULT_KINDS
                if spec.kind in APPLIES_TO[kind]
            ]
            total = sum(rate for _, rate, _ in parts)
            if total > 1.0 + 1e-9:
                terms = " + ".join(f"{field} = {rate:g}" for _, rate, field in parts if rate > 0)
                raise FaultProfileError(
                    f"{src}: invalid fault profile: the per-call fault rates of {spec.kind} tool "
                    f"{tool} add up to {total:g} > 1: {terms}"
                )


# -- the schedule ----------------------------------------------------------------------------
def unavailable_draw(fault_seed: int, tool: str) -> float:
    """The episode-long draw deciding whether ``tool`` is down (compared with its rate)."""
    return stable_uniform("fault", fault_seed, tool, "unavailable")


def call_draw(fault_seed: int, tool: str, n: int) -> float:
    """The draw ``u(fault_seed, tool, n)`` for the n-th (0-based) call of ``tool``."""
    return stable_uniform("fault", fault_seed, tool, n)


def scheduled_kind(
    profile: FaultProfile, fault_seed: int, tool: str, app: str, tool_kind: str, n: int
) -> FaultKind | None:
    """Return the fault kind drawn for the n-th call of ``tool``, or None (the raw draw).

    Pure: depends only on the arguments. ``max_consecutive`` and the one-stale-read-per-run
    rule are applied on top by :class:`ToolSchedule`, which is what the invoker uses. The
    caller skips tools that are never faulted (:func:`exempt_tools`).
    """
    return _pick(_edges(profile, tool, app, tool_kind), call_draw(fault_seed, tool, n))


def _edges(profile: FaultProfile, tool: str, app: str, tool_kind: str) -> tuple[tuple[FaultKind, float], ...]:
    """(kind, cumulative rate) for the per-call kinds that can hit ``tool``, in stacking order."""
    edges, edge = [], 0.0
    for kind in CALL_FAULT_KINDS:
        if tool_kind in APPLIES_TO[kind]:
            edge += profile.rate(tool, app, kind)
            edges.append((kind, edge))
    return tuple(edges)


def _pick(edges: tuple[tuple[FaultKind, float], ...], u: float) -> FaultKind | None:
    for kind, edge in edges:
        if u < edge:
            return kind
    return None


class ToolSchedule:
    """The fault decisions for the calls of one tool: ``decision(n)`` for n = 0, 1, 2...

    ``decision(n)`` is :func:`scheduled_kind` unless the ``max_consecutive`` decisions just
    before n are all faults (then None), or the draw is ``stale_read`` and the run of faults
    just before n already holds one (then None). It depends only on the constructor's
    arguments and n, so no other tool, clock or world state can change it.

    Args:
        profile, fault_seed, tool, app, tool_kind: as for :func:`scheduled_kind`.
        exempt: the tool is never faulted (every decision is None); see :func:`exempt_tools`.
    """

    def __init__(
        self, profile: FaultProfile, fault_seed: int, tool: str, app: str, tool_kind: str, *, exempt: bool = False
    ) -> None:
        self.profile = profile
        self.fault_seed = int(fault_seed)
        self.tool = tool
        self.app = app
        self.tool_kind = tool_kind
        self._edges = () if exempt else _edges(profile, tool, app, tool_kind)
        # call_draw(fault_seed, tool, n) hashes "fault<US>seed<US>tool<US>n": hash the constant
        # prefix once and finish a copy per call (same digest, a third of the cost).
        self._prefix = hashlib.sha256(f"fault\x1f{self.fault_seed}\x1f{tool}\x1f".encode())
        self._decisions: list[FaultKind | None] = []
        self._run = 0  # faults in a row at the end of _decisions
        self._stale_in_run = False

    def decision(self, n: int) -> FaultKind | None:
        """The fault kind for the n-th (0-based) call of the tool, or None."""
        decisions = self._decisions
        if n < len(decisions):
            return decisions[n]
        max_consecutive = self.profile.max_consecutive
        while len(decisions) <= n:
            kind = _pick(self._edges, self._draw(len(decisions))) if self._edges else None
            if self._run >= max_consecutive or (kind == FaultKind.STALE_READ and self._stale_in_run):
                kind = None
            if kind is None:
                self._run, self._stale_in_run = 0, False
            else:
                self._run += 1
                self._stale_in_run = self._stale_in_run or kind == FaultKind.STALE_READ
            decisions.append(kind)
        return decisions[n]

    def _draw(self, n: int) -> float:
        """``call_draw(fault_seed, tool, n)``, from the precomputed prefix hash."""
        h = self._prefix.copy()
        h.update(str(n).encode("utf-8"))
        return int.from_bytes(h.digest()[:8], "big") / 2**64

    def first(self, count: int) -> list[FaultKind | None]:
        """The decisions for calls 0 .. count-1."""
        if count > 0:
            self.decision(count - 1)
        return self._decisions[:count]


def fault_schedule(
    profile: FaultProfile, fault_seed: int, tool: str, app: str, tool_kind: str, count: int, *, exempt: bool = False
) -> list[FaultKind | None]:
    """The first ``count`` decisions of ``tool`` (see :class:`ToolSchedule`)."""
    return ToolSchedule(profile, fault_seed, tool, app, tool_kind, exempt=exempt).first(count)


_NONE_DOWN: frozenset[str] = frozenset()
"""No tool down: one object for every episode (an empty frozenset per episode is one more
object for the garbage collector to scan)."""


def plan_unavailable(profile: FaultProfile, fault_seed: int, specs: Mapping[str, Any]) -> frozenset[str]:
    """Return the tools that are down for the whole episode.

    A read or write tool (not :func:`exempt_tools`) with at least one declared alternative among ``specs``
    is a candidate when ``unavailable_draw(fault_seed, T) < rate(T, "unavailable")``.
    Candidates are taken in order of their draw (then name); one goes down only if it keeps
    an alternative that is not down and no tool already down loses its last working
    alternative. So every down tool has a declared alternative that works.

    Args:
        profile: the fault profile.
        fault_seed: the episode's fault seed.
        specs: tool name -> spec with ``.app``, ``.kind`` and ``.alternatives`` (the tools of
            the episode).
    """
    if not profile.uses(FaultKind.UNAVAILABLE):
        return _NONE_DOWN
    alts = {name: [a for a in spec.alternatives if a in specs and a != name] for name, spec in specs.items()}
    exempt = exempt_tools(specs)
    candidates = []
    for name, spec in specs.items():
        if name in exempt or spec.kind not in APPLIES_TO[FaultKind.UNAVAILABLE] or not alts[name]:
            continue
        u = unavailable_draw(fault_seed, name)
        if u < profile.rate(name, spec.app, FaultKind.UNAVAILABLE):
            candidates.append((u, name))
    down: set[str] = set()
    for _, name in sorted(candidates):
        after = down | {name}
        if all(any(a not in after for a in alts[t]) for t in after):
            down = after
    return frozenset(down) if down else _NONE_DOWN
