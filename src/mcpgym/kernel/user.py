"""What a tool needs from the user: a confirmation, a choice among matches, a missing value.

A sandbox tool that cannot act on the agent's word alone (a payment over a threshold, a
recipient name that matches several people) declares a *user argument*: an optional
parameter that only the user can settle (``confirmed_by_user``, ``recipient``). While it is
unsettled the tool raises :class:`UserInputRequired` before changing anything; the error
carries a :class:`UserRequest`, which says what the user must provide, as a message and a
flat JSON schema suitable for an MCP elicitation (``elicitation/create``, form mode).

Who answers is decided above the kernel: the MCP server elicits from a client that declared
the elicitation capability (``mcpgym.tools.elicit``, ``mcpgym.server.mcp_server``); a client
without it gets the error as a tool error, so the agent can ask the user in text and call
again with the argument filled in.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mcpgym.kernel.errors import ErrorCode, ToolError

UserRequestKind = Literal["confirm", "choose", "provide"]


class UserRequest(BaseModel):
    """One question a tool call puts to the user.

    Attributes:
        kind: ``confirm`` (a yes/no on the call, the argument is a boolean), ``choose`` (one of
            ``options``), ``provide`` (a value only the user knows, e.g. a one-time code).
        tool: the tool asking.
        argument: the tool argument the answer fills (also the single property of ``schema``).
        message: what the user is asked (also the tool error's message for a client that
            cannot elicit).
        topic: a short key naming what is asked (``payment``, ``recipient``); user
            simulators answer from the task's user profile by it.
        options: the choices, for ``choose``.
        decline_value: the argument value that records a refusal (``False`` for ``confirm``),
            or None when declining just ends the call with ``user_declined``.
        summary: JSON facts about the pending call (amount in cents, recipient...), for
            simulators and trajectories.
    """

    model_config = ConfigDict(extra="forbid")

    kind: UserRequestKind
    tool: str
    argument: str
    message: str
    topic: str
    options: list[str] = Field(default_factory=list)
    decline_value: Any = None
    summary: dict[str, Any] = Field(default_factory=dict)

    def schema_for_elicitation(self) -> dict[str, Any]:
        """The MCP ``requestedSchema``: a flat object with the one property ``argument``
        (boolean for ``confirm``, a string enum for ``choose``, a string for ``provide``) whose
        ``title`` is the topic (see :func:`request_from_elicitation`)."""
        prop: dict[str, Any] = {"type": "string", "title": self.topic, "description": self.message}
        if self.kind == "confirm":
            prop["type"] = "boolean"
        elif self.kind == "choose":
            prop["enum"] = list(self.options)
        return {"type": "object", "properties": {self.argument: prop}, "required": [self.argument]}


class UserInputRequired(ToolError):
    """Raised by a tool (before any change) when its user argument is unsettled.

    The error code is ``user_input_required``, ``field`` the user argument, ``details``
    ``{"user_request": UserRequest as JSON}``; not retryable as is (the same call fails again
    until the argument is given).

    Args:
        request: what the user must provide.
    """

    def __init__(self, request: UserRequest) -> None:
        hint = {
            "confirm": f"ask the user, then call again with {request.argument}=true (or false if they refuse)",
            "choose": f"ask the user which one, then call again with {request.argument} set to their choice",
            "provide": f"ask the user for it, then call again with {request.argument} set to it",
        }[request.kind]
        super().__init__(
            ErrorCode.USER_INPUT_REQUIRED,
            f"{request.message} This needs the user: {hint}.",
            retryable=False,
            field=request.argument,
            details={"user_request": request.model_dump(mode="json")},
        )
        self.request = request


class UserAnswer(BaseModel):
    """How the user answered a :class:`UserRequest` (an MCP ``ElicitResult``, or a simulator).

    Attributes:
        action: ``accept`` (``content`` holds the argument), ``decline`` (an explicit no),
            ``cancel`` (dismissed without a choice).
        content: the submitted values, by argument name (accept only).
        via: how it was obtained: ``elicitation`` (MCP), ``simulator`` (in-process).
    """

    model_config = ConfigDict(extra="forbid")

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None
    via: str = "elicitation"


def request_from_elicitation(message: str, schema: Any, tool: str = "") -> UserRequest | None:
    """Rebuild the :class:`UserRequest` of an MCP form elicitation made by
    :meth:`UserRequest.schema_for_elicitation` (one property: boolean -> ``confirm``, enum ->
    ``choose``, else ``provide``; its title is the topic), or None for any other schema."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict) or len(props) != 1:
        return None
    argument, prop = next(iter(props.items()))
    if not isinstance(prop, dict):
        return None
    kind: UserRequestKind = "confirm" if prop.get("type") == "boolean" else "choose" if prop.get("enum") else "provide"
    title = prop.get("title")
    topic = title if isinstance(title, str) and title else argument
    return UserRequest(
        kind=kind,
        tool=tool,
        argument=argument,
        message=message,
        topic=topic,
        options=[str(o) for o in prop.get("enum") or []],
        decline_value=False if kind == "confirm" else None,
    )


def user_request_of(payload: Any) -> UserRequest | None:
    """The :class:`UserRequest` inside a tool error payload (``{"error": {..., "details":
    {"user_request": ...}}}`` or the inner error dict), or None when there is none or it is malformed."""
    if not isinstance(payload, dict):
        return None
    err = payload.get("error", payload)
    details = err.get("details") if isinstance(err, dict) else None
    raw = details.get("user_request") if isinstance(details, dict) else None
    if not isinstance(raw, dict):
        return None
    try:
        return UserRequest.model_validate(raw)
    except ValueError:
        return None


__all__ = [
    "request_from_elicitation",
    "UserAnswer",
    "UserInputRequired",
    "UserRequest",
    "UserRequestKind",
    "user_request_of",
]
