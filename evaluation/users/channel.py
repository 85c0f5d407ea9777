"""The channel between an agent (or the MCP client) and the user simulator of one episode.

An agent asks in text with :meth:`UserChannel.ask` (an ``ask_user`` turn, recorded as a
:class:`mcpgym.evaluation.records.trajectory.UserTurnStep`, a step of the trajectory); the MCP client relays the server's
elicitations with :meth:`UserChannel.elicitation_callback` (recorded by the server in the
call's log entry, so not here).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpgym.evaluation.records.trajectory import UserTurnStep
from mcpgym.evaluation.users.simulator import UserReply, UserSimulator
from mcpgym.kernel.user import UserAnswer, UserRequest, request_from_elicitation

MAX_QUESTIONS = 20
"""Most text questions an agent may ask in one episode; later ones get a refusal reply."""


class UserChannel:
    """One episode's way to the user.

    Args:
        simulator: answers the questions.
        calls_made: returns how many tool calls the episode has made so far (places each turn
            before the next step).

    Attributes:
        turns: every turn so far (:class:`UserTurnStep`), in order.
        record: when set (a runner's step recorder, e.g. ``EpisodeCaller.record``), each turn
            is also handed to it as it happens, so it lands among the episode's steps in order.
    """

    def __init__(self, simulator: UserSimulator, calls_made: Callable[[], int]) -> None:
        self.simulator = simulator
        self.calls_made = calls_made
        self.turns: list[UserTurnStep] = []
        self.record: Callable[[UserTurnStep], None] | None = None

    async def ask(self, question: str, about: str | None = None) -> UserReply:
        """Ask the user ``question`` in text (``about``: the topic, when the asker knows it) and
        record the turn. Past :data:`MAX_QUESTIONS` the user stops answering."""
        if len(self.turns) >= MAX_QUESTIONS:
            reply = UserReply(
                text="I've answered enough questions; please go on with what you have.", value=None, topic=None
            )
        else:
            reply = await self.simulator.reply(str(question), about)
        turn = UserTurnStep(
            before_step=self.calls_made() + 1,
            question=str(question),
            about=about,
            answer=reply.text,
            value=reply.value,
            topic=reply.topic,
            in_world=reply.in_world,
        )
        self.turns.append(turn)
        if self.record is not None:
            self.record(turn)
        return reply

    def replay(self, turn: UserTurnStep) -> None:
        """Record a turn as it was recorded before (the replay agent): no question goes to the
        simulator; the turn is kept (placed before the next call) and handed to :attr:`record`."""
        turn = turn.model_copy(update={"before_step": self.calls_made() + 1})
        self.turns.append(turn)
        if self.record is not None:
            self.record(turn)

    async def answer_request(self, request: UserRequest) -> UserAnswer:
        """The user's answer to a tool's request (in-process elicitation)."""
        return await self.simulator.answer_request(request)

    async def elicitation_callback(self, context: Any, params: Any) -> Any:
        """An MCP client ``elicitation_callback``: form requests are answered by the simulator;
        anything else (URL mode, a schema it cannot read) is cancelled."""
        import mcp_types as types

        request = None
        if getattr(params, "mode", "form") == "form":
            request = request_from_elicitation(
                getattr(params, "message", ""), getattr(params, "requested_schema", None)
            )
        if request is None:
            return types.ElicitResult(action="cancel")
        answer = await self.simulator.answer_request(request)
        return types.ElicitResult(action=answer.action, content=answer.content)


__all__ = ["MAX_QUESTIONS", "UserChannel"]
