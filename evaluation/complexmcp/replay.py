"""The replay agent of ComplexMCP's human transcripts (the parquet's ``output``).

``complexmcp-replay`` (``--agent complexmcp-replay``) reads the task's own transcript with
mcpgym's ``complexmcp`` format (:func:`mcpgym.evaluation.formats.complexmcp.trajectory_from_text`:
a call is a ``<tool>`` block answered by a ``<response>``) and makes its calls one by one, in
order, with the recorded arguments, whatever the live apps answer; it ends with the
transcript's final message. A call of a tool the episode does not list (a tool of one of
ComplexMCP's eight utility servers, ``sha256`` or ``days_diff``, which mcpgym does not start;
or a name no server has) is not made: it is counted and named in the stop reason, since the
human's later calls carry the values it returned in their arguments already.
"""

from __future__ import annotations

from typing import Any

from mcpgym.evaluation.agents.base import NO_CONTEXT, Agent, AgentContext, AgentResult, CallLimitReached
from mcpgym.evaluation.records.status import EpisodeStatus

AGENT_NAME = "complexmcp-replay"
"""The agent spec and name of :class:`TranscriptReplay`."""


def transcript_calls(text: str) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """``([(tool, arguments), ...], final message)`` of a ComplexMCP transcript.

    Raises:
        mcpgym.evaluation.formats.common.EpisodeError: a ``<tool>`` block never closed.
    """
    from mcpgym.evaluation.formats.complexmcp import trajectory_from_text
    from mcpgym.evaluation.records.trajectory import ToolCallStep

    traj, _ = trajectory_from_text(text, episode_id="transcript")
    calls = [
        (s.tool, s.arguments if isinstance(s.arguments, dict) else {})
        for s in traj.steps
        if isinstance(s, ToolCallStep)
    ]
    return calls, traj.final_message


class TranscriptReplay(Agent):
    """Replays the task's human transcript call by call (module docstring)."""

    name = AGENT_NAME

    async def run(self, task: Any, tools: Any, call: Any, context: AgentContext = NO_CONTEXT) -> AgentResult:
        """Make the transcript's calls of ``task`` (a :class:`~mcpgym.evaluation.complexmcp.tasks.ComplexTask`)."""
        transcript = getattr(task, "transcript", None)
        if not isinstance(transcript, str):
            return AgentResult(
                final_message="", status=EpisodeStatus.ERRORED, error=f"task {task.id!r} has no ComplexMCP transcript"
            )
        try:
            calls, final = transcript_calls(transcript)
        except ValueError as exc:
            return AgentResult(final_message="", status=EpisodeStatus.ERRORED, error=f"unreplayable transcript: {exc}")
        listed = {t.name for t in tools}
        skipped: list[str] = []
        made = 0
        for tool, arguments in calls:
            if tool not in listed:
                skipped.append(tool)
                continue
            try:
                await call(tool, dict(arguments))
            except CallLimitReached as exc:
                return AgentResult(final_message=final, status=EpisodeStatus.LIMIT, stop_reason=str(exc))
            made += 1
        reason = f"replayed {made} of the transcript's {len(calls)} calls"
        if skipped:
            reason += f"; not made (no such tool here): {', '.join(sorted(set(skipped)))}"
        return AgentResult(final_message=final, stop_reason=reason)
