"""Seeded fault injection (DESIGN section 4).

A :class:`FaultProfile` sets a rate per fault kind, with per-app and per-tool overrides. The
decision for the n-th call (0-based) of tool T is a pure function of ``(fault_seed, T, n)``:
``u = stable_uniform("fault", fault_seed, T, n)`` is compared with the cumulative rates of the
kinds that apply to T, in the fixed order of :data:`CALL_FAULT_KINDS`. ``unavailable`` is
decided once per episode from ``u(fault_seed, T, "unavailable")``. The schedule of T therefore
depends only on how many times T was called before, never on other tools, timing or the world
seed. ``max_consecutive`` caps faults in a row per tool, so every injected fault stays
recoverable.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sandboxes.rng import stable_uniform

FaultKind = Literal["transient", "rate_limited", "timeout", "unavailable", "auth_challenge", "lost_write", "stale_read"]
FAULT_KINDS: tuple[str, ...] = get_args(FaultKind)
CALL_FAULT_KINDS: tuple[str, ...] = ("transient", "rate_limited", "timeout", "auth_challenge", "lost_write", "stale_read")
"""Kinds decided per call, in the order their rates are stacked."""

APPLIES_TO: dict[str, frozenset[str]] = {
    "transient": frozenset({"read", "write", "auth"}),
    "rate_limited": frozenset({"read", "write"}),
    "timeout": frozenset({"write"}),
    "unavailable": frozenset({"read", "write"}),
    "auth_challenge": frozenset({"write"}),
    "lost_write": frozenset({"write"}),
    "stale_read": frozenset({"read"}),
}
"""Which tool kinds each fault kind can hit (``unavailable`` also needs a declared alternative)."""

EXEMPT_TOOLS = frozenset({"system_wait", "system_authenticate", "system_get_time", "search_tools"})
"""Remedy tools that are never faulted, so that every fault keeps a cure."""


class FaultProfileError(ValueError):
    """A fault profile file or mapping is invalid; the message names the file, field and value."""


class FaultRates(BaseModel):
    """Probability per call of each fault kind, each in [0, 1]."""

    model_config = ConfigDict(extra="forbid")

    transient: float = Field(0.0, ge=0.0, le=1.0)
    rate_limited: float = Field(0.0, ge=0.0, le=1.0)
    timeout: float = Field(0.0, ge=0.0, le=1.0)
    unavailable: float = Field(0.0, ge=0.0, le=1.0)
    auth_challenge: float = Field(0.0, ge=0.0, le=1.0)
    lost_write: float = Field(0.0, ge=0.0, le=1.0)
    stale_read: float = Field(0.0, ge=0.0, le=1.0)


class FaultProfile(BaseModel):
    """A fault profile: rates per kind, overrides per app and per tool.

    Attributes:
        name: profile name (``none``, ``default``, ``harsh`` or the file stem).
        rates: base rates (:class:`FaultRates`).
        apps: app name -> {kind: rate} overriding ``rates`` for that app's tools.
        tools: tool name -> {kind: rate} overriding app and base rates.
        max_consecutive: most injected faults in a row for one tool (>= 1).
        retry_after: virtual seconds a ``rate_limited`` fault blocks its tool.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = "custom"
    rates: FaultRates = Field(default_factory=FaultRates)
    apps: dict[str, dict[FaultKind, float]] = Field(default_factory=dict)
    tools: dict[str, dict[FaultKind, float]] = Field(default_factory=dict)
    max_consecutive: int = Field(2, ge=1, le=100)
    retry_after: int = Field(30, ge=1, le=86_400)

    @field_validator("apps", "tools")
    @classmethod
    def _rates_in_range(cls, value: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        for target, kinds in value.items():
            for kind, rate in kinds.items():
                if not (0.0 <= float(rate) <= 1.0):
                    raise ValueError(f"rate for {target}.{kind} must be in [0, 1], got {rate}")
        return value

    def rate(self, tool: str, app: str, kind: str) -> float:
        """Rate of fault ``kind`` for ``tool`` of ``app``: tool override, else app, else base."""
        if kind in self.tools.get(tool, {}):
            return float(self.tools[tool][kind])  # type: ignore[index]
        if kind in self.apps.get(app, {}):
            return float(self.apps[app][kind])  # type: ignore[index]
        return float(getattr(self.rates, kind))

    @property
    def enabled(self) -> bool:
        """True when any rate is above zero."""
        if any(getattr(self.rates, k) > 0 for k in FAULT_KINDS):
            return True
        return any(r > 0 for over in (*self.apps.values(), *self.tools.values()) for r in over.values())

    def uses(self, kind: str) -> bool:
        """True when ``kind`` has a non-zero rate anywhere in the profile."""
        if getattr(self.rates, kind) > 0:
            return True
        return any(over.get(kind, 0) > 0 for over in (*self.apps.values(), *self.tools.values()))  # type: ignore[call-overload]


BUILTIN_PROFILES: dict[str, FaultProfile] = {
    "none": FaultProfile(name="none"),
    # A typical 10-call episode (about half writes) meets 1-2 faults: expected
    # 10 * (0.06 + 0.02 + 0.5 * (0.04 + 0.02)) + unavailable ~= 1.1.
    "default": FaultProfile(
        name="default",
        rates=FaultRates(transient=0.06, rate_limited=0.02, timeout=0.04, unavailable=0.05, auth_challenge=0.02),
    ),
    "harsh": FaultProfile(
        name="harsh",
        rates=FaultRates(
            transient=0.12, rate_limited=0.05, timeout=0.08, unavailable=0.10, auth_challenge=0.05,
            lost_write=0.06, stale_read=0.08,
        ),
    ),
}


def _format_loc(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc)


def load_profile(spec: str | Path | FaultProfile | dict[str, Any] | None) -> FaultProfile:
    """Return a fault profile from a built-in name, a TOML/JSON/YAML file path, or a mapping.

    Args:
        spec: ``"none"`` | ``"default"`` | ``"harsh"``, a path ending in ``.toml``, ``.json``,
            ``.yaml`` or ``.yml``, a mapping of :class:`FaultProfile` fields, or a profile.
            None means ``default``.

    Raises:
        FaultProfileError: for an unknown name, an unreadable file, or invalid content; the
            message names the file, the field (e.g. ``rates.transient``) and the bad value.
    """
    if spec is None:
        return BUILTIN_PROFILES["default"]
    if isinstance(spec, FaultProfile):
        return spec
    source = "<mapping>"
    if isinstance(spec, dict):
        data = spec
    else:
        text = str(spec)
        if text in BUILTIN_PROFILES:
            return BUILTIN_PROFILES[text]
        path = Path(text)
        if not path.suffix:
            raise FaultProfileError(
                f"unknown fault profile {text!r}: use one of {', '.join(BUILTIN_PROFILES)} or a .toml/.json/.yaml file"
            )
        source = str(path)
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise FaultProfileError(f"{source}: cannot read fault profile: {exc.strerror or exc}") from None
        try:
            if path.suffix == ".toml":
                data = tomllib.loads(raw)
            elif path.suffix == ".json":
                data = json.loads(raw)
            elif path.suffix in (".yaml", ".yml"):
                data = yaml.safe_load(raw) or {}
            else:
                raise FaultProfileError(f"{source}: fault profile must be .toml, .json, .yaml or .yml")
        except FaultProfileError:
            raise
        except Exception as exc:  # parse errors of three libraries
            raise FaultProfileError(f"{source}: not valid {path.suffix[1:].upper()}: {exc}") from None
        if not isinstance(data, dict):
            raise FaultProfileError(f"{source}: a fault profile must be a table/object at the top level")
        data = {"name": path.stem, **data}
    try:
        return FaultProfile.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False):
            field = _format_loc(err["loc"])
            value = err.get("input")
            problems.append(f"field {field!r} = {value!r}: {err['msg']}")
        raise FaultProfileError(f"{source}: invalid fault profile: " + "; ".join(problems)) from None


def unavailable_draw(fault_seed: int, tool: str) -> float:
    """The episode-long draw deciding whether ``tool`` is down (compared with its rate)."""
    return stable_uniform("fault", fault_seed, tool, "unavailable")


def call_draw(fault_seed: int, tool: str, n: int) -> float:
    """The draw ``u(fault_seed, tool, n)`` for the n-th (0-based) call of ``tool``."""
    return stable_uniform("fault", fault_seed, tool, n)


def scheduled_kind(profile: FaultProfile, fault_seed: int, tool: str, app: str, tool_kind: str, n: int) -> str | None:
    """Return the fault kind scheduled for the n-th call of ``tool``, or None.

    Pure: depends only on the arguments (``max_consecutive`` is applied by the caller,
    which knows the tool's own history).
    """
    if tool in EXEMPT_TOOLS:
        return None
    u = call_draw(fault_seed, tool, n)
    edge = 0.0
    for kind in CALL_FAULT_KINDS:
        if tool_kind not in APPLIES_TO[kind]:
            continue
        edge += profile.rate(tool, app, kind)
        if u < edge:
            return kind
    return None
