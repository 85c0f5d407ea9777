"""MCP elicitation for tools that need the user (:mod:`mcpgym.kernel.user`).

When a called tool has a pending :class:`mcpgym.kernel.user.UserRequest` (a confirmation, a
choice among matches, a value only the user knows) and the client declared the elicitation
capability, the server asks the client's user before running the call:

* on a handshake-era connection (2025-xx, stdio or stateful HTTP) with an
  ``elicitation/create`` request on the session (``ServerSession.elicit_form``), awaited
  inside the ``tools/call``;
* on a 2026-07-28 connection, which forbids server-initiated requests, by answering the
  ``tools/call`` with an ``InputRequiredResult`` holding the elicitation; the client fulfils
  it and retries the call with ``inputResponses`` and the echoed ``requestState``. The
  ``requestState`` is an opaque token: the answers given so far and the question asked stay
  on the server (:mod:`mcpgym.server.input_state`), so a client can neither forge a user's
  answer nor replay one; a refused token is the JSON-RPC error -32602 naming why, and nothing
  is run or logged. ``inputResponses`` without a ``requestState`` answer no question and are
  refused the same way; a response to a question that has since changed is not used (the
  user is asked the new question).

A wait on the client has a deadline (the episode's ``wait_limit``, at most the HTTP idle
timeout): a client that does not answer in time gets the tool error ``user_input_required``,
as one without the capability does, and its silence is not activity (:data:`CLIENT_SILENT`).
An episode that ends during the wait (deleted on the control API, expired, or the server
stopping: :class:`mcpgym.server.episode.EpisodeEnd`) ends the wait at once, and the call is
answered :func:`ended_result` before the episode's sessions end.

One call may put up to :data:`mcpgym.tools.elicit.MAX_QUESTIONS_PER_CALL` questions (who,
then confirm). The effects of accept, decline and cancel are those of
:func:`mcpgym.tools.elicit.call_with_answer`. A client without the capability (or whose
elicitation fails) gets the call run as is, i.e. the tool error ``user_input_required``
naming what the user must provide.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpgym.kernel.user import UserAnswer
from mcpgym.server.episode import Episode, EpisodeEnd
from mcpgym.server.input_state import InputStateError
from mcpgym.tools.elicit import MAX_QUESTIONS_PER_CALL, answer_record, answered_arguments
from mcpgym.tools.mcp_bridge import call_result, error_result

INPUT_KEY = "user"
"""Key of the elicitation in ``InputRequiredResult.input_requests`` (and of its response)."""

CLIENT_SILENT = "mcpgym.client_silent"
"""ASGI scope key of a set the HTTP transport gives every request; a wait on the client that
ran out adds to it, and the end of that request is then not activity of the episode (idle time
runs from the client's last message)."""

logger = logging.getLogger(__name__)


def can_elicit(ctx: Any) -> bool:
    """True when the connected client declared form elicitation (``capabilities.elicitation``)."""
    caps = getattr(getattr(ctx, "session", None), "client_capabilities", None)
    elicitation = getattr(caps, "elicitation", None)
    return elicitation is not None


def _is_modern(ctx: Any) -> bool:
    return str(getattr(ctx, "protocol_version", "")) in MODERN_PROTOCOL_VERSIONS


def _refuse(exc: InputStateError) -> MCPError:
    logger.info("requestState refused (%s)", exc.reason)
    return MCPError(code=types.INVALID_PARAMS, message=str(exc), data={"reason": f"request_state_{exc.reason}"})


def ended_result(reason: EpisodeEnd) -> types.CallToolResult:
    """The answer to a call whose wait on the client ended because its episode ended
    (``reason``): the tool error ``not_found`` naming why; nothing was run or logged. It is
    written before the episode's sessions end, so the client's request never goes unanswered."""
    return error_result(
        "not_found",
        f"this episode ended while the call waited on the user's answer ({reason.said}); nothing was run",
    )


async def _ask_session(ctx: Any, episode: Episode, request: Any) -> types.ElicitResult | None:
    """Put ``request`` to the client over its session, waiting at most ``episode.wait_limit``
    seconds; None when the client cannot ask, fails, does not answer in time, or the server
    stops meanwhile."""
    if episode.ended is not None:  # ended before the question could be put
        return None
    episode.waiting += 1
    result: types.ElicitResult | None = None
    try:
        with anyio.CancelScope() as scope:  # cancelled when the episode ends (Episode.end_waits)
            episode.wait_scopes.add(scope)
            try:
                result = await ctx.session.send_request(
                    types.ElicitRequest(
                        params=types.ElicitRequestFormParams(
                            message=request.message, requested_schema=request.schema_for_elicitation()
                        )
                    ),
                    types.ElicitResult,
                    request_read_timeout_seconds=episode.wait_limit,
                    metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
                )
            except Exception:  # noqa: BLE001 - the client could not ask or did not answer: the tool error says what to ask
                result = None
            finally:
                episode.wait_scopes.discard(scope)
    finally:
        episode.waiting -= 1
    if result is None:
        silent = getattr(getattr(ctx, "request", None), "scope", {}).get(CLIENT_SILENT)
        if isinstance(silent, set):
            silent.add("elicitation")
        return None
    episode.last_used = time.monotonic()  # the client's answer is a message
    return result


async def call_asking_user(
    ctx: Any, episode: Episode, params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult | None:
    """Run ``params``' call, asking the user first when the tool needs them (module docstring).

    Returns:
        The call's result, an ``InputRequiredResult`` (2026-07-28: the client must answer and
        retry), or None when nothing is to be asked this way (the tool asks nothing, the client
        cannot elicit, the arguments are not an object): the caller then runs the call as
        usual. A client that cannot be asked or does not answer in time gets the call run as
        is (the tool error ``user_input_required``), which is no activity of the episode.

    Raises:
        MCPError: -32602 for a refused ``requestState`` or ``inputResponses`` without one
        (:class:`mcpgym.server.input_state.InputStateError` says why); nothing was run or logged.
    """
    modern = _is_modern(ctx)
    args: dict[str, Any] = dict(params.arguments or {}) if isinstance(params.arguments, dict) else {}
    asked: list[dict[str, Any]] = []
    response: Any = None
    state = None
    if modern:
        try:
            if params.request_state is not None:
                state = episode.input_states.redeem(params.request_state, params.name, params.arguments)
            elif params.input_responses:
                raise InputStateError(
                    "unanswered",
                    "inputResponses came without a requestState: they answer no question this server asked; "
                    "call the tool without them to be asked",
                )
        except InputStateError as exc:
            raise _refuse(exc) from None
    spec = episode.invoker.specs.get(params.name)
    if spec is None or spec.user_check is None or not isinstance(params.arguments or {}, dict):
        return None
    if not can_elicit(ctx):
        return None
    if state is not None:
        args.update(state.settled)
        asked = list(state.asked)
        response = (params.input_responses or {}).get(INPUT_KEY)
    for _ in range(MAX_QUESTIONS_PER_CALL):
        request = episode.pending_user_request(params.name, args)
        if request is None:
            break
        if modern:
            if not isinstance(response, types.ElicitResult) or state is None or not state.answers(request):
                settled = {k: args[k] for k in spec.user_arguments if k in args}
                token = episode.input_states.issue(params.name, params.arguments, settled, asked, request)
                return types.InputRequiredResult(
                    input_requests={
                        INPUT_KEY: types.ElicitRequest(
                            params=types.ElicitRequestFormParams(
                                message=request.message, requested_schema=request.schema_for_elicitation()
                            )
                        )
                    },
                    request_state=token,
                )
            result, response, state = response, None, None
        else:
            asked_result = await _ask_session(ctx, episode, request)
            if asked_result is None and episode.ended is not None:
                return ended_result(episode.ended)
            if asked_result is None:  # the call as is: the tool error says what the user must give
                return call_result(episode.call(params.name, params.arguments, touch=False))
            result = asked_result
        answer = UserAnswer(action=result.action, content=dict(result.content or {}) or None, via="elicitation")
        filled = answered_arguments(request, answer, args)
        if answer.action != "accept" or filled is None:
            return call_result(episode.call_with_answer(params.name, args, request, answer, asked))
        asked.append(answer_record(request, answer))
        args = filled
    return call_result(episode.call_answered(params.name, args, asked))


__all__ = ["CLIENT_SILENT", "INPUT_KEY", "call_asking_user", "can_elicit", "ended_result"]
