"""The step contract the RL integrations share (Gymnasium, OpenEnv): one action -> one
observation, a reward, ``terminated`` / ``truncated``, and info; over one :class:`GymEpisode`.

An action is a tool call or the agent's final message, as a JSON object (or a mapping):

* ``{"tool": NAME, "arguments": {...}}``: one tool call (``arguments`` may be omitted: ``{}``);
* ``{"final": TEXT}``: the agent's last message to the user; it ends the episode (terminated).

Anything else (not JSON, not an object, both or neither of ``tool`` / ``final``, arguments
that are no object) is an invalid call: the observation is an ``invalid_argument`` error that
says what is wrong, the episode goes on, and the call counts in ``invalid_calls`` (as the MCP
runner counts malformed model output). A step past the step limit is not possible: the step
that reaches it (or the one the call budget refuses) ends the episode with status ``limit``
(truncated).

Reward: 0.0 on every step until the episode ends; then the episode's reward under the stepper's
reward profile (:func:`mcpgym.evaluation.scoring.reward.episode_reward`; the default profile,
``outcome``, is 1.0 when the judge says success, else 0.0). Info at the end: ``scores``, every
field of :class:`mcpgym.evaluation.scoring.scorer.EpisodeScores` as JSON (the behaviour scores:
verification, recovery, defeatism, ... and whatever the scorer adds), ``reward`` (the
:class:`~mcpgym.evaluation.scoring.reward.RewardBreakdown`: total, profile, terms, per-step
process rewards) and ``status``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcpgym.evaluation.agents.base import CallLimitReached
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.run.gym import GymEpisode, whole_number
from mcpgym.evaluation.scoring.reward import RewardProfile, episode_reward, load_profile
from mcpgym.kernel.bounded_json import JSONLimitError, load_json

MAX_ACTION_CHARS = 65_536
"""Longest action text accepted (characters); a longer one is an invalid call."""

MAX_OBSERVATION_CHARS = 65_536
"""Longest observation text (characters); a longer tool result is cut, and the cut is marked
in the text (``...[cut: N more characters]``) and in the step's info (``observation_cut``)."""

DEFAULT_MAX_STEPS = 50
"""Step limit of a task that sets no ``max_calls``."""


class EpisodeAction(BaseModel):
    """One action: a tool call (``tool`` + ``arguments``) or the final message (``final``).

    Raises (on validation): ``ValidationError`` when both or neither are given."""

    model_config = ConfigDict(extra="forbid")

    tool: str | None = Field(default=None, max_length=256)
    arguments: dict[str, Any] = Field(default_factory=dict)
    final: str | None = Field(default=None, max_length=MAX_ACTION_CHARS)

    def model_post_init(self, _context: Any) -> None:
        """Exactly one of ``tool`` and ``final``."""
        if (self.tool is None) == (self.final is None):
            raise ValueError('give exactly one of "tool" (with "arguments") and "final"')


def _plain_call(action: Any) -> tuple[str, dict[str, Any]] | None:
    """``(tool, arguments)`` of a well-formed tool call, checked by hand (the common action,
    kept off pydantic's path); None for anything else (then :class:`EpisodeAction` decides)."""
    if type(action) is dict and action.keys() <= {"tool", "arguments"}:
        tool, arguments = action.get("tool"), action.get("arguments", {})
        if type(tool) is str and len(tool) <= 256 and type(arguments) is dict:
            return tool, arguments
    return None


def parse_action(action: Any) -> EpisodeAction | tuple[str, dict[str, Any]] | str:
    """An action from its JSON text or mapping: a well-formed tool call as ``(tool,
    arguments)``, any other valid action as :class:`EpisodeAction`; on bad input (invalid JSON,
    nesting past :data:`mcpgym.kernel.bounded_json.MAX_JSON_DEPTH`, an integer of more than 4,300
    digits, a bad field), the reason as a string: never an exception, so a trainer's loop goes on."""
    if isinstance(action, str):
        if len(action) > MAX_ACTION_CHARS:
            return f"the action is longer than {MAX_ACTION_CHARS} characters"
        try:
            action = load_json(action)  # bounded: nesting past 200 levels, 5,000-digit integers
        except JSONLimitError as exc:
            return f"the action is not JSON mcpgym reads ({exc.reason})"
    plain = _plain_call(action)
    if plain is not None:
        return plain
    if isinstance(action, BaseModel):
        action = action.model_dump(exclude_none=True)
    if not isinstance(action, dict):
        return f'the action must be a JSON object {{"tool", "arguments"}} or {{"final"}}, got {type(action).__name__}'
    try:
        return EpisodeAction.model_validate(action)
    except RecursionError:
        return "invalid action: nested too deeply to read"
    except (ValidationError, ValueError) as exc:
        errors = exc.errors() if isinstance(exc, ValidationError) else [{"msg": str(exc), "loc": ()}]
        first = errors[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"invalid action{f' field {where!r}' if where else ''}: {first['msg']}"


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _ascii(text: str) -> str:
    """Printable ASCII (non-ASCII characters and control characters but newline and tab escaped).
    A tool result's JSON text is ASCII already (``ensure_ascii``): returned as it is."""
    if not text.isascii():
        text = text.encode("ascii", "backslashreplace").decode("ascii")
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


@dataclass
class StepOutcome:
    """What one step returns: Gymnasium's ``(observation, reward, terminated, truncated, info)``."""

    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)


def check_max_steps(max_steps: Any) -> int:
    """``max_steps`` as an ``int`` when it is a whole number of at least 1 (one action).

    Raises:
        ValueError: anything else, naming the value (None means the task's limit: give that).
    """
    try:
        return whole_number(max_steps, "max_steps", minimum=1)
    except ValueError as exc:
        raise ValueError(f"{exc} (None: the task's own limit)") from None


class EpisodeStepper:
    """Steps one :class:`GymEpisode` with actions (module docstring for the contract).

    Args:
        episode: a fresh episode. max_steps: step limit, at least 1 (None: the task's
            ``max_calls``, else :data:`DEFAULT_MAX_STEPS`); every action counts, valid or not.
        reward: the reward profile (a :class:`RewardProfile`, a built-in name or a file; None:
            ``outcome``).

    Raises:
        ValueError: a ``max_steps`` that is not a whole number of at least 1 (0 is refused,
            not read as "the task's limit"), or a bad reward profile.
    """

    def __init__(
        self, episode: GymEpisode, *, max_steps: int | None = None, reward: str | RewardProfile | None = None
    ) -> None:
        self.episode = episode
        self.reward_profile = load_profile(reward)
        if max_steps is not None:
            self.max_steps = check_max_steps(max_steps)
        else:
            self.max_steps = int(getattr(episode.task, "max_calls", None) or DEFAULT_MAX_STEPS)
        self.steps = 0

    def first(self) -> tuple[str, dict[str, Any]]:
        """The first observation (the instruction) and the reset info: ``task_id``, ``trial``,
        ``fault_seed``, ``max_steps`` and ``tools`` (name, description, input_schema, kind)."""
        ep = self.episode
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema, "kind": t.kind}
            for t in ep.tools
        ]
        info = {
            "task_id": ep.task.id,
            "trial": ep.trial,
            "fault_seed": ep.fault_seed,
            "max_steps": self.max_steps,
            "tools": tools,
        }
        return self.text(ep.instruction)[0], info

    @staticmethod
    def text(observation: str) -> tuple[str, bool]:
        """``observation`` as printable ASCII, cut at :data:`MAX_OBSERVATION_CHARS` (marked);
        returns ``(text, cut)``."""
        text = _ascii(observation)
        if len(text) <= MAX_OBSERVATION_CHARS:
            return text, False
        marker = f"...[cut: {len(text) - MAX_OBSERVATION_CHARS} more characters]"
        return text[: MAX_OBSERVATION_CHARS - len(marker)] + marker, True

    def step(self, action: Any) -> StepOutcome:
        """Apply one action (module docstring).

        Raises:
            mcpgym.evaluation.run.gym.EpisodeFinished: the episode already ended (reset first).
        """
        ep = self.episode
        if ep.done:
            from mcpgym.evaluation.run.gym import EpisodeFinished

            raise EpisodeFinished("the episode is finished; reset to start another")
        self.steps += 1
        parsed = parse_action(action)
        info: dict[str, Any] = {"step": self.steps}
        if isinstance(parsed, str):
            ep.invalid_calls += 1
            observation = json.dumps(
                {
                    "is_error": True,
                    "result": {
                        "error": {
                            "code": "invalid_argument",
                            "message": parsed,
                            "retryable": False,
                            "retry_after": None,
                            "field": None,
                        }
                    },
                }
            )
            info["invalid_action"] = parsed
        elif isinstance(parsed, EpisodeAction) and parsed.final is not None:
            ep.finish(parsed.final)
            return self._end(json.dumps({"done": True, "status": ep.trajectory().status}), terminated=True, info=info)
        else:
            tool, arguments = parsed if isinstance(parsed, tuple) else (parsed.tool, parsed.arguments)
            assert tool is not None
            try:
                result = ep.step(tool, arguments)
            except CallLimitReached as exc:
                ep.finish("", status=EpisodeStatus.LIMIT, stop_reason=str(exc))
                return self._end(ep.observation, terminated=False, info=info)
            info["is_error"] = result.is_error
            observation = ep.observation
        if self.steps >= self.max_steps:
            ep.finish("", status=EpisodeStatus.LIMIT, stop_reason=f"step limit of {self.max_steps} reached")
            return self._end(observation, terminated=False, info=info)
        text, cut = self.text(observation)
        if cut:
            info["observation_cut"] = True
        return StepOutcome(text, 0.0, False, False, info)

    def _end(self, observation: str, *, terminated: bool, info: dict[str, Any]) -> StepOutcome:
        ep = self.episode
        text, cut = self.text(observation)
        if cut:
            info["observation_cut"] = True
        traj = ep.trajectory()
        breakdown = episode_reward(traj, self.reward_profile)
        info["status"] = traj.status
        info["scores"] = ep.scores.model_dump(mode="json")
        info["reward"] = breakdown.model_dump(mode="json")
        return StepOutcome(text, breakdown.total, terminated, not terminated, info)


__all__ = [
    "DEFAULT_MAX_STEPS",
    "MAX_ACTION_CHARS",
    "MAX_OBSERVATION_CHARS",
    "EpisodeAction",
    "EpisodeStepper",
    "StepOutcome",
    "check_max_steps",
    "parse_action",
]
