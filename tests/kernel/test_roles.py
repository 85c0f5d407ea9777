"""Roles instead of names: the generic layers find wait / reauth / grant tools, never-faulted
tools and destructive writes from what ``@tool`` declares, and an unknown app name is an error
on every path."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Annotated

import anyio
import pytest
from pydantic import BaseModel, Field

from mcpgym.evaluation.scoring.tool_catalog import Catalog
from mcpgym.kernel.app import App, AppState, UnknownAppError, get_app, register_app, unregister_app
from mcpgym.kernel.spec import build_spec, role_remedies, tool
from mcpgym.kernel.world import World, normalise_apps
from mcpgym.tools.faults import FaultProfile, exempt_tools, load_profile
from mcpgym.tools.invoke import ToolInvoker
from mcpgym.tools.mcp_bridge import annotations_for
from tests.conftest import ROOT


class Gauge(BaseModel):
    """The lab's reading."""

    now: int
    level: int


class LabState(AppState):
    """A level and whether the lab's session is fresh."""

    level: int = 0


class LabApp(App):
    """A throwaway app whose own tools carry the roles (besides the system app's)."""

    name, title, State, version = "rolelab", "Role lab", LabState, "3.1"

    @classmethod
    def generate(cls, world) -> LabState:
        return LabState(level=cls.stream(world, "level").randint(1, 9))

    @tool("read", ["rolelab.level"])
    def rolelab_read_level(self) -> Gauge:
        """Read the lab's level and the virtual time."""
        return Gauge(now=self.now, level=self.state.level)

    @tool("write", ["rolelab.level"])
    def rolelab_raise_level(self) -> Gauge:
        """Raise the lab's level by one and return it."""
        self.state.level += 1
        return self.rolelab_read_level()

    @tool("write", ["rolelab.level"], destructive=True)
    def rolelab_reset_level(self) -> Gauge:
        """Reset the lab's level to zero and return it."""
        self.state.level = 0
        return self.rolelab_read_level()

    @tool("write", ["rolelab.pause"], role="wait")
    def rolelab_pause(self, seconds: Annotated[int, Field(ge=1, le=3600, description="virtual seconds")]) -> Gauge:
        """Pause the lab: advance the virtual clock by ``seconds``."""
        self.world.clock.advance(seconds)
        return self.rolelab_read_level()

    @tool("auth", ["rolelab.session"], role="reauth")
    def rolelab_login(self) -> Gauge:
        """Log in to the lab again; clears pending authentication challenges."""
        return self.rolelab_read_level()


@pytest.fixture()
def lab():
    register_app(LabApp)
    yield LabApp
    unregister_app(LabApp.name)


def test_declarations_reach_the_spec_the_annotations_and_the_catalog(lab):
    specs = lab.tools
    assert specs["rolelab_pause"].role == "wait" and specs["rolelab_pause"].fault_exempt
    assert specs["rolelab_login"].role == "reauth" and specs["rolelab_login"].fault_exempt
    assert not specs["rolelab_raise_level"].fault_exempt
    assert annotations_for(specs["rolelab_reset_level"]).destructive_hint is True
    # "raise" is no destructive verb and "reset" is none either: only the declaration counts
    assert annotations_for(specs["rolelab_raise_level"]).destructive_hint is False
    system = get_app("system").tools
    assert annotations_for(system["system_revoke_privilege"]).destructive_hint is True
    assert system["system_get_time"].fault_exempt and system["system_get_time"].role is None
    peers = [*specs.values(), *system.values()]
    cures = role_remedies(specs["rolelab_raise_level"], peers)
    assert set(cures["rate_limited"]) == {"rolelab_pause", "system_wait"}
    assert set(cures["auth_required"]) == {"rolelab_login", "system_authenticate"}
    assert "auth_required" not in role_remedies(specs["rolelab_read_level"], peers)  # reads get no auth challenge
    assert specs["rolelab_raise_level"].remedies == {}  # declared remedies stay as declared
    cat = Catalog.from_app_classes([lab])
    assert cat.remedies_for("rolelab_raise_level", "rate_limited") == ["rolelab_pause"]
    assert cat.get("rolelab_pause").role == "wait" and cat.get("rolelab_reset_level").destructive


def test_role_contracts_are_checked_when_the_spec_is_built():
    def wait_without_seconds(self) -> Gauge:
        """Wait."""

    def grant(self, privilege: str, extra: int) -> Gauge:
        """Grant."""

    def login(self, user: str) -> Gauge:
        """Log in."""

    with pytest.raises(ValueError, match="a wait tool takes exactly one required integer parameter"):
        build_spec(wait_without_seconds, kind="write", resources=("x.y",), role="wait")
    with pytest.raises(ValueError, match="a grant tool takes exactly one required string parameter"):
        build_spec(grant, kind="auth", resources=("x.y",), role="grant")
    with pytest.raises(ValueError, match="a reauth tool takes no required parameters"):
        build_spec(login, kind="auth", resources=("x.y",), role="reauth")
    with pytest.raises(ValueError, match="role must be one of wait, reauth, grant"):
        build_spec(login, kind="auth", resources=("x.y",), role="sleep")
    with pytest.raises(ValueError, match="only a write tool can be destructive"):
        build_spec(login, kind="read", resources=("x.y",), destructive=True)


def test_the_invoker_uses_the_roles_not_the_names(lab):
    profile = FaultProfile.model_validate({"name": "lab", "rates": {"rate_limited": 1.0}, "max_consecutive": 1})
    world = World(4, ["rolelab"])
    inv = ToolInvoker(world, profile, 9)
    assert inv.wait_tool == "system_wait" and inv.reauth_tool == "system_authenticate"  # system comes first
    assert exempt_tools(inv.specs) >= {"rolelab_pause", "rolelab_login", "system_wait", "system_get_time"}
    first = inv.call("rolelab_raise_level")
    assert (
        first.payload["error"]["code"] == "rate_limited"
        and "system_wait advances the clock" in first.payload["error"]["message"]
    )
    before = world.clock.now
    for _ in range(5):  # a wait tool is never faulted and moves the clock by exactly what it is asked
        out = inv.call("rolelab_pause", {"seconds": 7})
        assert not out.is_error
    assert world.clock.now == before + 35
    assert not inv.call(
        "rolelab_raise_level"
    ).is_error  # the window has passed: call 1 is not faulted (max_consecutive)
    auth = FaultProfile.model_validate({"name": "auth", "rates": {"auth_challenge": 1.0}, "max_consecutive": 1})
    inv2 = ToolInvoker(World(4, ["rolelab"]), auth, 9)
    err = inv2.call("rolelab_reset_level").payload["error"]
    assert err["code"] == "auth_required" and "call system_authenticate first" in err["message"]
    assert inv2.call("rolelab_reset_level").payload["error"]["code"] == "auth_required"  # still in force
    assert inv2.ledger[-1].persisting is True
    assert not inv2.call("rolelab_login").is_error  # the lab's own reauth tool cures it too
    inv2.call("rolelab_reset_level")  # a new draw (rate 1.0 may challenge again), not the old one in force
    assert inv2.ledger[-1].step == 4 and inv2.ledger[-1].persisting is False


def test_a_profile_cannot_override_a_never_faulted_tool(lab):
    with pytest.raises(ValueError, match="tools.rolelab_pause.*declared never faulted"):
        load_profile({"name": "x", "tools": {"rolelab_pause": {"transient": 0.5}}})


def test_careful_cures_through_the_role_tools(lab):
    """The careful agent's cures come from the catalog's roles: a rate limit is waited out with
    the episode's wait tool, its one parameter set to retry_after."""
    from mcpgym.evaluation.agents.base import CallResult, ToolInfo
    from mcpgym.evaluation.agents.scripted import _Session
    from mcpgym.evaluation.tasks import parse_task

    task = parse_task(
        {
            "id": "lab.raise",
            "instruction": "Raise the level.",
            "apps": ["rolelab"],
            "seed": 1,
            "level": 1,
            "oracle": [{"call": "rolelab_raise_level"}, {"answer": "done"}],
        }
    )
    made: list[tuple[str, dict]] = []

    async def call(name, args):
        made.append((name, args))
        return CallResult(False, {})

    infos = [
        ToolInfo(name=n, description=s.description, input_schema=s.input_schema(), kind=s.kind)
        for n, s in {**get_app("system").tools, **LabApp.tools}.items()
        if n != "system_wait"
    ]
    session = _Session(task, infos, call)
    err = {"error": {"code": "rate_limited", "retry_after": 99999, "message": "slow down"}}
    assert anyio.run(session.cure, CallResult(True, err))
    assert made == [("rolelab_pause", {"seconds": 3600})]  # clamped to the schema's maximum
    assert anyio.run(session.cure, CallResult(True, {"error": {"code": "auth_required", "message": "again"}}))
    assert made[-1] == ("system_authenticate", {})
    denied = {"error": {"code": "permission_denied", "message": "no", "details": {"privilege": "talk.location"}}}
    assert anyio.run(session.cure, CallResult(True, denied))
    assert made[-1] == ("system_request_privilege", {"privilege": "talk.location"})


GENERIC = [
    "src/mcpgym/kernel",
    "tools/faults.py",
    "tools/invoke.py",
    "tools/mcp_bridge.py",
    "tools/catalog.py",
    "evaluation/scoring/scorer.py",
    "evaluation/scoring",
    "evaluation/scoring/tool_catalog.py",
    "evaluation/agents",
    "server/mcp_server.py",
]


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """String constants of a module that are not docstrings, with their line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


def test_generic_layers_name_no_app_tool():
    tool_names = {
        t
        for a in ("system", "shop", "talk", "flights", "stocks", "weather", "news", "office")
        for t in get_app(a).tools
    }
    found = []
    for rel in GENERIC:
        base = ROOT / rel
        for path in [base] if base.is_file() else sorted(base.rglob("*.py")):
            for line, text in _code_strings(path):
                hits = [t for t in tool_names if t in text]
                if hits:
                    found.append(f"{path.relative_to(ROOT)}:{line}: {sorted(hits)}")
    assert found == []


def test_a_typo_in_an_app_list_is_an_error_naming_it_and_the_known_apps():
    want = r"unknown app 'shpo'; known apps: system, shop, talk"
    with pytest.raises(UnknownAppError, match=want):
        World(1, ["system", "shpo"])
    with pytest.raises(UnknownAppError, match=want):
        World(1, "system,shpo")
    with pytest.raises(UnknownAppError, match=want):
        normalise_apps(["shpo"])
    with pytest.raises(UnknownAppError, match=r"unknown app 3"):
        normalise_apps(["system", 3])
    with pytest.raises(KeyError, match=want):
        Catalog.from_apps(["shop", "shpo"])
    with pytest.raises(UnknownAppError, match=want):
        World.restore({**World(1, ["shop"]).snapshot(), "apps": ["system", "shpo"]})
    from mcpgym.evaluation.tasks import TaskLoadError, parse_task

    with pytest.raises(
        TaskLoadError, match=r"mine.yaml: task 'x.y': field 'apps': .*unknown app 'shpo'; known apps: system"
    ):
        parse_task(
            {"id": "x.y", "instruction": "i", "apps": ["shpo"], "seed": 1, "level": 1, "oracle": [{"answer": "a"}]},
            "mine.yaml",
        )
    from mcpgym.server.episode import Episode

    with pytest.raises(KeyError, match=want):
        Episode.create(seed=1, apps=["shpo"])
    with pytest.raises(ValueError, match=r"no app named 'shpo'"):
        load_profile({"name": "x", "apps": {"shpo": {"transient": 0.1}}})


def test_the_control_api_refuses_an_unknown_app():
    from starlette.testclient import TestClient

    from mcpgym.server.http_app import create_app

    with TestClient(create_app("t"), base_url="http://127.0.0.1:9") as client:
        r = client.post("/control/episodes", json={"apps": ["system", "shpo"]}, headers={"Authorization": "Bearer t"})
    assert r.status_code == 422
    assert "unknown app 'shpo'; known apps: system, shop" in r.text


def test_cli_refuses_unknown_apps(tmp_path):
    from typer.testing import CliRunner

    from mcpgym.evaluation.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["serve", "--apps", "system,shpo"])
    assert res.exit_code == 2 and "unknown app 'shpo'; known apps: system" in res.output
    res = runner.invoke(app, ["tools", "--app", "shpo"])
    assert res.exit_code == 2 and "unknown app 'shpo'" in res.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "tasks:\n  - id: a.b\n    instruction: i\n    apps: [shop, wether]\n    seed: 1\n    level: 1\n"
        "    oracle: [{answer: a}]\n"
    )
    for cmd in (["tasks", "--tasks", str(bad)], ["run", "--tasks", str(bad), "--out", str(tmp_path / "r")]):
        res = runner.invoke(app, cmd)
        assert res.exit_code == 2, res.output
        assert f"{bad}: task 'a.b': field 'apps'" in res.output and "unknown app 'wether'" in res.output
    assert not (tmp_path / "r").exists()
