"""Asking the user during a tool call: the pending question of a call, and the call made
with the user's answer.

The transport decides how the user is reached (MCP elicitation in :mod:`mcpgym.server.mcp_server`,
a user simulator in the evaluation client's in-process harness); this module holds what they
share, over a :class:`mcpgym.tools.invoke.ToolInvoker`:

* :func:`pending_request`: the :class:`mcpgym.kernel.user.UserRequest` a call would raise, found
  with the tool's ``user_check`` (no change to the world, nothing logged);
* :func:`call_with_answer`: the call made with the answer applied. Effects: ``accept`` fills
  the user argument with the submitted value and runs the call; ``decline`` fills it with the
  request's ``decline_value`` when it has one (the tool records the refusal and answers
  ``user_declined``), else ends the call with ``user_declined``; ``cancel`` ends it with
  ``user_input_required`` (nothing changed). An accepted value that does not fit the request
  (not a boolean for a confirmation, not one of the options) counts as ``cancel``. The call's
  record keeps the question and the answer (``CallRecord.user``).
"""

from __future__ import annotations

from typing import Any

from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.user import UserAnswer, UserRequest
from mcpgym.tools.invoke import CallOutcome, ToolInvoker

MAX_QUESTIONS_PER_CALL = 3
"""Most questions one tool call may put (e.g. which recipient, then confirm the amount)."""


def pending_request(invoker: ToolInvoker, name: str, arguments: Any) -> UserRequest | None:
    """The question the call ``name(arguments)`` would put to the user now, or None (the tool
    asks nothing, is unknown or hidden, or the arguments are invalid: the call itself will say)."""
    spec = invoker.specs.get(name) if isinstance(name, str) and name not in invoker.hidden else None
    if spec is None or spec.user_check is None:
        return None
    try:
        kwargs = spec.validate_arguments(arguments)
        return getattr(invoker.world.apps[spec.app], spec.user_check)(**kwargs)
    except ToolError:
        return None


def answered_arguments(request: UserRequest, answer: UserAnswer, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """``arguments`` with the user argument set from an ``accept`` (the submitted value) or a
    ``decline`` with a ``decline_value``; None when the answer sets nothing (a cancel, a
    decline without a decline value, or an accepted value that does not fit the request)."""
    if answer.action == "decline":
        return None if request.decline_value is None else {**arguments, request.argument: request.decline_value}
    if answer.action != "accept":
        return None
    value = (answer.content or {}).get(request.argument)
    if request.kind == "confirm" and not isinstance(value, bool):
        return None
    if request.kind == "choose" and value not in request.options:
        return None
    if request.kind == "provide" and not (isinstance(value, str) and value.strip()):
        return None
    return {**arguments, request.argument: value}


def answer_record(request: UserRequest, answer: UserAnswer) -> dict[str, Any]:
    """What a call's record keeps of one question and its answer."""
    return {
        "request": request.model_dump(mode="json"),
        "action": answer.action,
        "content": answer.content,
        "via": answer.via,
    }


def call_with_answer(
    invoker: ToolInvoker,
    name: str,
    arguments: dict[str, Any],
    request: UserRequest,
    answer: UserAnswer,
    earlier: list[dict[str, Any]] | None = None,
) -> CallOutcome:
    """Make the call with the user's ``answer`` to ``request`` applied (effects: module
    docstring). ``earlier``: records of questions this call already put (:func:`answer_record`);
    the call's record keeps them all as ``{"asked": [...]}``."""
    record = {"asked": [*(earlier or []), answer_record(request, answer)]}
    filled = answered_arguments(request, answer, arguments)
    if filled is not None:
        return invoker.call(name, filled, user=record)
    if answer.action == "decline":
        err = ToolError(
            ErrorCode.USER_DECLINED,
            f"the user declined: {request.message} Nothing was changed.",
            field=request.argument,
        )
    else:
        err = ToolError(
            ErrorCode.USER_INPUT_REQUIRED,
            f"the user gave no usable answer to: {request.message} Nothing was changed; ask again or leave it.",
            field=request.argument,
            details={"user_request": request.model_dump(mode="json")},
        )
    return invoker.call(name, arguments, user=record, refuse=err)


def call_answered_so_far(
    invoker: ToolInvoker, name: str, arguments: dict[str, Any], asked: list[dict[str, Any]]
) -> CallOutcome:
    """Make the call once every question was answered (``asked``: their records, possibly empty)."""
    return invoker.call(name, arguments, user={"asked": asked} if asked else None)


async def call_asking(invoker: ToolInvoker, name: str, arguments: dict[str, Any], ask: Any) -> CallOutcome:
    """Make a call, first putting its questions to ``await ask(request) -> UserAnswer`` (up
    to :data:`MAX_QUESTIONS_PER_CALL`), as a client with the elicitation capability would
    answer them; effects as in :func:`call_with_answer`."""
    args: dict[str, Any] = dict(arguments)
    asked: list[dict[str, Any]] = []
    for _ in range(MAX_QUESTIONS_PER_CALL):
        request = pending_request(invoker, name, args)
        if request is None:
            break
        answer = await ask(request)
        filled = answered_arguments(request, answer, args)
        if answer.action != "accept" or filled is None:
            return call_with_answer(invoker, name, args, request, answer, asked)
        asked.append(answer_record(request, answer))
        args = filled
    return call_answered_so_far(invoker, name, args, asked)


__all__ = [
    "call_asking",
    "call_answered_so_far",
    "MAX_QUESTIONS_PER_CALL",
    "answer_record",
    "answered_arguments",
    "call_with_answer",
    "pending_request",
]
