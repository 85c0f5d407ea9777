"""One vocabulary: the closed sets (fault kinds, tool kinds, error codes, episode statuses) are
``StrEnum``s defined once; each fault kind's facts live in one table that the fault profile,
the invoker, the scorer and the scripted agents read; stored JSON spells them as before."""

from __future__ import annotations

import json
import re

from mcpgym.evaluation.agents.base import AgentResult
from mcpgym.evaluation.agents.scripted import FAULT_CODES
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.scoring.calls import ERROR_FAULT_KINDS, INFERRED_FAULTS
from mcpgym.evaluation.scoring.scorer import EpisodeScores
from mcpgym.kernel.errors import ERROR_CODES, ErrorCode, ToolError
from mcpgym.kernel.fault_kinds import FAULTS, FaultKind
from mcpgym.kernel.spec import ToolKind
from mcpgym.tools.faults import APPLIES_TO, CALL_FAULT_KINDS, FAULT_KINDS, FaultRates
from tests.conftest import ROOT

SOURCE_FOLDERS = ("src", "tools", "server", "evaluation", "sandboxes")


def test_every_fault_kind_has_one_row_and_one_rate() -> None:
    assert list(FAULTS) == list(FaultKind) == list(FAULT_KINDS)
    assert list(FaultRates.model_fields) == [k.value for k in FaultKind]


def test_what_the_modules_read_from_the_table_is_what_they_spelled_out_before() -> None:
    """The values the five modules wrote out by hand before the table (issue 27)."""
    assert CALL_FAULT_KINDS == ("transient", "rate_limited", "timeout", "auth_challenge", "lost_write", "stale_read")
    assert {
        "transient": {"read", "write", "auth"},
        "rate_limited": {"read", "write"},
        "timeout": {"write"},
        "unavailable": {"read", "write"},
        "auth_challenge": {"write"},
        "lost_write": {"write"},
        "stale_read": {"read"},
    } == APPLIES_TO
    assert {"transient", "rate_limited", "timeout", "unavailable", "auth_challenge"} == ERROR_FAULT_KINDS
    assert INFERRED_FAULTS == {
        "transient": "transient",
        "rate_limited": "rate_limited",
        "timeout": "timeout",
        "unavailable": "unavailable",
        "auth_required": "auth_challenge",
    }
    assert {"transient", "rate_limited", "timeout", "unavailable", "auth_required"} == FAULT_CODES
    from mcpgym.server.proxy.plan import FAULT_KINDS_OF_KIND, NEVER_FORWARDED

    assert {
        "read": {"transient", "rate_limited", "stale_read"},
        "write": {"transient", "rate_limited", "timeout", "auth_challenge"},
        "auth": {"transient"},
    } == FAULT_KINDS_OF_KIND
    assert {"transient", "rate_limited"} == NEVER_FORWARDED


def test_a_fault_rows_error_is_the_one_the_agent_saw_before() -> None:
    transient = FAULTS[FaultKind.TRANSIENT].error("shop_checkout")
    assert transient.payload() == {
        "code": "transient",
        "message": "shop_checkout: temporary failure, nothing was changed; retry",
        "retryable": True,
        "retry_after": None,
        "field": None,
    }
    timeout = FAULTS[FaultKind.TIMEOUT].error("shop_checkout")
    assert (timeout.code, timeout.retryable, FAULTS[FaultKind.TIMEOUT].applied) == ("timeout", True, True)
    down = FAULTS[FaultKind.UNAVAILABLE].error("x", "x is down", details={"alternatives": ["y"]})
    assert (down.code, down.retryable, down.details) == ("unavailable", False, {"alternatives": ["y"]})
    assert not FAULTS[FaultKind.LOST_WRITE].is_error and not FAULTS[FaultKind.STALE_READ].is_error


def test_error_codes_are_an_enum_stored_as_their_names() -> None:
    err = ToolError("not_found", "no such item", field="item_id")
    assert err.code is ErrorCode.NOT_FOUND and repr(err) == "ToolError('not_found', 'no such item')"
    assert json.dumps(err.payload()) == json.dumps(
        {"code": "not_found", "message": "no such item", "retryable": False, "retry_after": None, "field": "item_id"}
    )
    assert list(ERROR_CODES) == [c.value for c in ErrorCode]


def test_tool_kinds_are_an_enum_and_the_catalog_spells_them_as_before() -> None:
    from mcpgym.kernel.app import get_app, load_apps
    from mcpgym.tools.catalog import catalog

    specs = [spec for name in load_apps() for spec in get_app(name).tools.values()]
    assert specs and all(type(spec.kind) is ToolKind for spec in specs)
    rows = json.loads(json.dumps(catalog()))
    assert {row["kind"] for row in rows} == {"read", "write", "auth"}


def test_the_episode_status_is_one_enum_in_every_record() -> None:
    for model in (Trajectory, AgentResult, EpisodeScores):
        assert model.model_fields["status"].annotation is EpisodeStatus, model
    traj = Trajectory.model_validate({"episode_id": "e", "agent": "a", "status": "limit"})
    assert traj.status is EpisodeStatus.LIMIT and json.loads(traj.model_dump_json())["status"] == "limit"


def test_no_module_spells_a_closed_set_out_again() -> None:
    """No ``kind == "write"``-, ``code == "timeout"``- or ``fault == "timeout"``-style comparison
    and no ``Literal["completed", ...]`` copy is left: they name the enum member."""
    comparison = re.compile(r"\bkind (?:==|!=) \"(?:read|write|auth)\"|\b(?:code|fault) (?:==|!=) \"")
    status_copy = re.compile(r"Literal\[\"completed\"")
    found = []
    for folder in SOURCE_FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if comparison.search(text) or status_copy.search(text):
                found.append(str(path.relative_to(ROOT)))
    assert found == []


def test_the_score_command_lists_every_reader() -> None:
    """``--format`` takes ``auto`` and every reader of ``LOADERS``; its help names them all."""
    from typer.testing import CliRunner

    from mcpgym.evaluation.cli import app
    from mcpgym.evaluation.formats.score import FORMATS, LOADERS

    assert ("auto", *LOADERS) == FORMATS
    helptext = CliRunner().invoke(app, ["score", "--help"], env={"COLUMNS": "300"}).output
    assert " | ".join(FORMATS) in " ".join(helptext.split())


def test_every_error_payload_is_built_by_the_error_payload_model() -> None:
    """The server, the invoker, the runners and the LLM replies build ``{"error": ...}`` through
    ``ErrorPayload``; its JSON is the documented shape, key order included."""
    from mcpgym.evaluation.llm.replies import error_payload
    from mcpgym.kernel.errors import ErrorPayload
    from mcpgym.tools.mcp_bridge import error_result

    expected = {"code": "not_found", "message": "m", "retryable": False, "retry_after": None, "field": "name"}
    assert json.dumps(ErrorPayload(code="not_found", message="m", field="name").result()) == json.dumps(
        {"error": expected}
    )
    assert json.dumps(error_payload("not_found", "m", "name")) == json.dumps({"error": expected})
    assert json.loads(error_result("not_found", "m", "name").content[0].text) == {"error": expected}
    assert ToolError("not_found", "m", field="name").payload() == expected
    built_by_hand = re.compile(r"\"retryable\": (?:False|True),\s*\"retry_after\"")
    found = [
        str(p.relative_to(ROOT))
        for folder in SOURCE_FOLDERS
        for p in (ROOT / folder).rglob("*.py")
        if built_by_hand.search(p.read_text(encoding="utf-8")) and "formats" not in p.parts
    ]
    assert found == []  # formats/ normalise other harnesses' errors, whose codes are not ours


def test_every_tool_error_names_its_code_by_the_enum() -> None:
    """``ToolError(code, ...)`` takes an ``ErrorCode``: no module of ours passes the code as a string."""
    by_string = re.compile(r"ToolError\(\s*\"")
    found = [
        str(p.relative_to(ROOT))
        for folder in (*SOURCE_FOLDERS, "integrations")
        for p in (ROOT / folder).rglob("*.py")
        if by_string.search(p.read_text(encoding="utf-8"))
    ]
    assert found == []
