"""One call record, one step: ``step_from_record`` turns a server call-log record into the
trajectory's ``ToolCallStep``, copying every field but the two it lists as left out, so a new
``CallRecord`` field that the step does not follow fails here."""

from __future__ import annotations

from mcpgym.evaluation.records.trajectory import (
    RECORD_FIELDS_NOT_IN_STEPS,
    ToolCallStep,
    step_from_record,
    steps_from_call_log,
)
from mcpgym.server.control_models import CALL_LOG
from mcpgym.tools.invoke import CallRecord

USER = {"asked": [{"request": {"kind": "confirm"}, "action": "accept", "content": None, "via": "elicitation"}]}
RECORDS = [
    CallRecord(
        step=1, tool="shop_search", arguments={"q": "lamp"}, is_error=False, call_index=0, time=60, result={"items": []}
    ),
    CallRecord(
        step=2,
        tool="shop_buy",
        arguments={"sku": "x"},
        is_error=True,
        error_code="timeout",
        fault="timeout",
        call_index=0,
        time=120,
        result={"error": {"code": "timeout", "message": "timed out"}},
        user=USER,
    ),
    CallRecord(
        step=3,
        tool="nope",
        arguments={},
        is_error=True,
        error_code="not_found",
        time=180,
        result={"error": {"code": "not_found", "field": "name", "message": "no tool nope"}},
        internal=True,
    ),
]


def test_every_record_field_is_carried_or_listed_as_left_out() -> None:
    carried = set(CallRecord.model_fields) - RECORD_FIELDS_NOT_IN_STEPS
    assert set(CallRecord.model_fields) >= RECORD_FIELDS_NOT_IN_STEPS
    assert carried <= set(ToolCallStep.model_fields)
    for record in RECORDS:
        step = step_from_record(record)
        for name in carried:
            assert getattr(step, name) == getattr(record, name), name
        assert not step.fault_inferred


def test_invalid_is_computed_from_the_error_and_json_records_give_the_same_steps() -> None:
    steps = steps_from_call_log(RECORDS)
    assert [s.invalid for s in steps] == [False, False, True]  # not_found on `name`: an unknown tool
    wire = CALL_LOG.validate_json(CALL_LOG.dump_json(RECORDS))  # as GET /calls answers it
    assert steps_from_call_log([r.model_dump(mode="json") for r in wire]) == steps
