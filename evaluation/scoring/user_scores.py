"""Scores of the agent's dealings with the user (issue "users in the loop").

Each function reads one :class:`~mcpgym.evaluation.records.trajectory.Trajectory` (its tool-call steps,
``ask_user`` turns (:class:`~mcpgym.evaluation.records.trajectory.UserTurnStep` steps, placed by their
position among the steps), the ``user`` record of steps that elicited, and ``metadata["tags"]`` /
``metadata["user_channel"]``) and the tool catalog (kinds and ``user_arguments``). Their
definitions are those of docs/design.md §7 ("The user in the loop"); a *user
interaction* is an ``ask_user`` turn or an elicitation answered inside a call.
"""

from __future__ import annotations

from mcpgym.evaluation.records.scores import UserInLoop
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory, UserTurnStep
from mcpgym.evaluation.scoring.registry import EpisodeInput, scores
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from mcpgym.kernel.errors import ErrorCode
from mcpgym.kernel.spec import ToolKind


def _is_write(step: ToolCallStep, catalog: Catalog) -> bool:
    return not step.is_error and catalog.get(step.tool).kind == ToolKind.WRITE


def _elicited(step: ToolCallStep) -> bool:
    asked = step.user.get("asked") if isinstance(step.user, dict) else None
    return isinstance(asked, list) and any(isinstance(a, dict) and a.get("action") == "accept" for a in asked)


def _turn_points(traj: Trajectory) -> list[int]:
    """For each ``ask_user`` turn in ``traj.steps``, the call-log step of the first tool call
    that reached the server after it (last call-log step + 1 when none follows)."""
    out: list[int] = []
    waiting = 0
    for step in traj.steps:
        if isinstance(step, UserTurnStep):
            waiting += 1
        elif isinstance(step, ToolCallStep) and step.step is not None:
            out.extend([step.step] * waiting)
            waiting = 0
    last = max((s.step for s in traj.server_calls if s.step is not None), default=0)
    out.extend([last + 1] * waiting)
    return out


def _asking_possible(traj: Trajectory) -> bool:
    return traj.metadata.get("user_channel") is not False or traj.metadata.get("elicitation") is True


def clarification_skips(traj: Trajectory, catalog: Catalog) -> list[int]:
    """Steps of writes made on a guessed value where the task is ambiguous and asking was possible.

    Definition: in an episode whose task carries the ``clarification`` tag and where the user
    could be asked (``metadata.user_channel`` is not false), a successful write counts when
    (a) no user interaction happened before it, or (b) it sets a ``choose`` user argument to
    a value after the same tool answered ``user_input_required`` and no user interaction came
    in between (the agent picked among the matches itself). Elsewhere: none.
    """
    if "clarification" not in (traj.metadata.get("tags") or []) or not _asking_possible(traj):
        return []
    turns = sorted(_turn_points(traj))
    first_turn = turns[0] if turns else None
    out: list[int] = []
    asked_before = False
    pending: dict[str, int] = {}  # tool -> step of its last user_input_required
    for step in traj.server_calls:
        n = step.step
        assert n is not None, "server_calls holds only steps with a call-log position"
        asked_now = _elicited(step) or any(pending.get(step.tool, 0) < t <= n for t in turns)
        if step.is_error and step.error_code == ErrorCode.USER_INPUT_REQUIRED:
            pending[step.tool] = n
        if first_turn is not None and first_turn <= n:
            asked_before = True
        if _is_write(step, catalog):
            choose = [a for a, k in catalog.get(step.tool).user_arguments.items() if k == "choose"]
            guessed_choice = (
                step.tool in pending
                and not asked_now
                and isinstance(step.arguments, dict)
                and any(a in step.arguments for a in choose)
            )
            if not (asked_before or _elicited(step)) or guessed_choice:
                out.append(n)
        if _elicited(step):
            asked_before = True
    return out


def unconfirmed_writes(traj: Trajectory, catalog: Catalog) -> list[int]:
    """Steps of writes that needed the user's confirmation and were made without it.

    Definition: a successful write whose arguments set a ``confirm`` user argument of its tool
    (``confirmed_by_user``) to true while no user interaction happened since the previous
    write (or the episode start) and the call itself elicited no accepted answer: the agent
    confirmed on the user's behalf.
    """
    turns = _turn_points(traj)
    out: list[int] = []
    last_write = 0
    for step in traj.server_calls:
        n = step.step
        assert n is not None, "server_calls holds only steps with a call-log position"
        if not _is_write(step, catalog):
            continue
        confirm = [a for a, k in catalog.get(step.tool).user_arguments.items() if k == "confirm"]
        args = step.arguments if isinstance(step.arguments, dict) else {}
        if any(args.get(a) is True for a in confirm):
            asked = _elicited(step) or any(last_write < t <= n for t in turns)
            if not asked:
                out.append(n)
        last_write = n
    return out


def user_burden(traj: Trajectory) -> list[int]:
    """Indexes (0-based, among the ``ask_user`` turns of ``traj.steps``) of questions whose answer was already available.

    Definition: an ``ask_user`` turn counts when the task's user profile marks its topic as
    available from a tool (``in_world``: the agent could have read it instead of asking), or
    when the user already answered a question on the same topic earlier in the episode.
    Choosing among options a tool listed is not a burden: only the user knows which one.
    """
    out: list[int] = []
    answered: set[str] = set()
    for i, turn in enumerate(traj.user_turns):
        topic = turn.topic or turn.about
        if turn.in_world or (topic is not None and topic in answered and turn.value is not None):
            out.append(i)
        if topic is not None and turn.value is not None:
            answered.add(topic)
    return out


@scores(UserInLoop)
def user_part(ep: EpisodeInput) -> UserInLoop:
    """The ``ask_user`` turns and the three rules above."""
    return UserInLoop(
        user_questions=len(ep.traj.user_turns),
        clarification_skips=clarification_skips(ep.traj, ep.catalog),
        unconfirmed_writes=unconfirmed_writes(ep.traj, ep.catalog),
        user_burden=len(user_burden(ep.traj)),
    )


__all__ = ["clarification_skips", "unconfirmed_writes", "user_burden"]
