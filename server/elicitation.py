"""MCP elicitation for tools that need the user (:mod:`mcpgym.kernel.user`).

When a called tool has a pending :class:`mcpgym.kernel.user.UserRequest` (a confirmation, a
choice among matches, a value only the user knows) and the client declared the elicitation
capability, the server asks the client's user before running the call:

* on a handshake-era connection (2025-xx, stdio or stateful HTTP) with an
  ``elicitation/create`` request on the session (``ServerSession.elicit_form``), awaited
  inside the ``tools/call``;
* on a 2026-07-28 connection, which forbids server-initiated requests, by answering the
  ``tools/call`` with an ``InputRequiredResult`` holding the elicitation; the client fulfils
  it and retries the call with ``inputResponses`` and the echoed ``requestState`` (the
  answers given so far: the user arguments already settled and the questions asked).

One call may put up to :data:`mcpgym.tools.elicit.MAX_QUESTIONS_PER_CALL` questions (who,
then confirm). The effects of accept, decline and cancel are those of
:func:`mcpgym.tools.elicit.call_with_answer`. A client without the capability (or whose
elicitation fails) gets the call run as is, i.e. the tool error ``user_input_required``
naming what the user must provide.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpgym.kernel.user import UserAnswer
from mcpgym.server.episode import Episode
from mcpgym.tools.elicit import MAX_QUESTIONS_PER_CALL, answer_record, answered_arguments
from mcpgym.tools.mcp_bridge import call_result

INPUT_KEY = "user"
"""Key of the elicitation in ``InputRequiredResult.input_requests`` (and of its response)."""


def can_elicit(ctx: Any) -> bool:
    """True when the connected client declared form elicitation (``capabilities.elicitation``)."""
    caps = getattr(getattr(ctx, "session", None), "client_capabilities", None)
    elicitation = getattr(caps, "elicitation", None)
    return elicitation is not None


def _is_modern(ctx: Any) -> bool:
    return str(getattr(ctx, "protocol_version", "")) in MODERN_PROTOCOL_VERSIONS


def _restore(
    params: types.CallToolRequestParams, user_args: dict[str, str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Arguments and earlier questions from an echoed ``requestState`` (only user arguments are
    taken from it; anything malformed is ignored and the questions start over)."""
    args = dict(params.arguments or {})
    try:
        state = json.loads(params.request_state or "{}")
    except ValueError:
        return args, []
    if not isinstance(state, dict):
        return args, []
    settled = state.get("settled")
    if isinstance(settled, dict):
        args.update({k: v for k, v in settled.items() if k in user_args})
    asked = state.get("asked")
    return args, [a for a in asked if isinstance(a, dict)] if isinstance(asked, list) else []


async def call_asking_user(
    ctx: Any, episode: Episode, params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult | None:
    """Run ``params``' call, asking the user first when the tool needs them (module docstring).

    Returns:
        The call's result, an ``InputRequiredResult`` (2026-07-28: the client must answer and
        retry), or None when nothing is to be asked this way (the tool asks nothing, the client
        cannot elicit, the arguments are not an object): the caller then runs the call as usual.
    """
    spec = episode.invoker.specs.get(params.name)
    if spec is None or spec.user_check is None or not isinstance(params.arguments or {}, dict):
        return None
    if not can_elicit(ctx):
        return None
    modern = _is_modern(ctx)
    if modern:
        args, asked = _restore(params, spec.user_arguments)
        response = (params.input_responses or {}).get(INPUT_KEY)
    else:
        args, asked, response = dict(params.arguments or {}), [], None
    for _ in range(MAX_QUESTIONS_PER_CALL):
        request = episode.pending_user_request(params.name, args)
        if request is None:
            break
        if modern:
            if not isinstance(response, types.ElicitResult):
                settled = {k: args[k] for k in spec.user_arguments if k in args}
                return types.InputRequiredResult(
                    input_requests={
                        INPUT_KEY: types.ElicitRequest(
                            params=types.ElicitRequestFormParams(
                                message=request.message, requested_schema=request.schema_for_elicitation()
                            )
                        )
                    },
                    request_state=json.dumps({"settled": settled, "asked": asked}, separators=(",", ":")),
                )
            result, response = response, None
        else:
            try:
                result = await ctx.session.elicit_form(
                    request.message, request.schema_for_elicitation(), related_request_id=ctx.request_id
                )
            except Exception:  # noqa: BLE001 - the client could not ask: the tool error says what to ask
                return None
        answer = UserAnswer(action=result.action, content=dict(result.content or {}) or None, via="elicitation")
        filled = answered_arguments(request, answer, args)
        if answer.action != "accept" or filled is None:
            return call_result(episode.call_with_answer(params.name, args, request, answer, asked))
        asked.append(answer_record(request, answer))
        args = filled
    return call_result(episode.call_answered(params.name, args, asked))


__all__ = ["INPUT_KEY", "call_asking_user", "can_elicit"]
