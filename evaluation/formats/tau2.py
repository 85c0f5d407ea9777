"""Format ``tau2``: tau2-bench simulation files (``tau2 run`` results, leaderboard
submissions' trajectories).

Shapes (``tau2.data_model.simulation`` / ``message``, checked against tau2-bench's source):
a results file ``{"info", "tasks", "simulations": [SimulationRun, ...]}``, a list of
``SimulationRun`` objects, or one. A ``SimulationRun`` has ``id``, ``task_id``, ``trial``,
``termination_reason`` and ``messages``:

* ``{"role": "assistant" | "user", "content", "tool_calls": [{"id", "name", "arguments"
  (an object), "requestor"}]}``: a turn; the user's own tool calls (``requestor: "user"``,
  the telecom domain's device tools) are the simulated user's actions, not the agent's, and
  are left out with their results;
* ``{"role": "tool", "id" (the call's id), "content", "requestor", "error"}``: a result;
  ``error: true`` is the harness's flag (rule ``format_flag`` when nothing in the content
  says more);
* ``{"role": "system", "content"}``.

Status from ``termination_reason`` (:data:`TERMINATION_STATUS`): ``user_stop`` and
``agent_stop`` end the episode ``completed`` (the simulated user's ``###STOP###``,
``###TRANSFER###`` or ``###OUT-OF-SCOPE###``, or the agent's own stop); ``max_steps``,
``timeout``, ``too_many_errors`` and ``context_window_exceeded`` are harness cuts, ``limit``;
``agent_error``, ``user_error``, ``infrastructure_error`` and ``unexpected_error`` are
``errored``. Without a known reason the status is read from the transcript as in the
``openai`` format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcpgym.evaluation.formats.common import EpisodeError, LoadResult
from mcpgym.evaluation.formats.message_lists import Chat, Found, load_message_lists
from mcpgym.evaluation.records.status import EpisodeStatus

FORMAT = "tau2"
TERMINATION_STATUS: dict[str, EpisodeStatus] = {
    "user_stop": EpisodeStatus.COMPLETED,
    "agent_stop": EpisodeStatus.COMPLETED,
    "max_steps": EpisodeStatus.LIMIT,
    "timeout": EpisodeStatus.LIMIT,
    "too_many_errors": EpisodeStatus.LIMIT,
    "context_window_exceeded": EpisodeStatus.LIMIT,
    "agent_error": EpisodeStatus.ERRORED,
    "user_error": EpisodeStatus.ERRORED,
    "infrastructure_error": EpisodeStatus.ERRORED,
    "unexpected_error": EpisodeStatus.ERRORED,
}
"""tau2-bench's ``TerminationReason`` -> the episode status."""


def is_simulation(v: Any) -> bool:
    """True for a tau2-bench ``SimulationRun`` (``messages`` and ``termination_reason``)."""
    return isinstance(v, dict) and isinstance(v.get("messages"), list) and "termination_reason" in v


def simulation_to_chat(run: dict[str, Any]) -> Chat:
    """One ``SimulationRun`` -> chat-completions messages plus its status (module docstring).

    Raises:
        EpisodeError: a message that is not an object.
    """
    out: list[dict[str, Any]] = []
    user_calls: set[str] = set()
    for i, m in enumerate(run.get("messages") or [], start=1):
        if not isinstance(m, dict):
            raise EpisodeError(f"message {i} is not an object (got {type(m).__name__})")
        role = m.get("role")
        if role == "tool":
            cid = m.get("tool_call_id", m.get("id"))
            if m.get("requestor") == "user" or cid in user_calls:
                continue  # the simulated user's own device call
            out.append(
                {"role": "tool", "tool_call_id": cid, "content": m.get("content"), "error": m.get("error") is True}
            )
        elif role in ("assistant", "user"):
            calls = list(m.get("tool_calls") or [])  # a call that is no object: counted as malformed downstream
            mine = [
                c
                for c in calls
                if role == "assistant" and (not isinstance(c, dict) or c.get("requestor", role) == "assistant")
            ]
            user_calls.update(str(c.get("id")) for c in calls if c not in mine and isinstance(c, dict))
            msg: dict[str, Any] = {"role": role, "content": m.get("content") or ""}
            if mine:
                msg["tool_calls"] = [
                    {
                        "id": c.get("id"),
                        "type": "function",
                        "function": {"name": c.get("name"), "arguments": c.get("arguments")},
                    }
                    if isinstance(c, dict)
                    else c
                    for c in mine
                ]
            if role == "user" and not msg["content"] and calls:
                continue  # a user turn that only ran the user's tools
            out.append(msg)
        elif role == "system":
            out.append({"role": "system", "content": m.get("content") or ""})
    reason = str(run.get("termination_reason") or "").strip().lower()
    status = TERMINATION_STATUS.get(reason)
    return Chat(messages=out, status=status, stop_reason=f"tau2 termination_reason {reason}" if status else None)


def split(value: Any, base: str, line: int | None) -> list[Found] | None:
    """The simulations of one record (module docstring); None when it holds none."""
    if is_simulation(value):
        return [
            Found(label=base if line is not None else "simulation", line=line, items=value["messages"], record=value)
        ]
    runs = value.get("simulations") if isinstance(value, dict) else value
    if isinstance(runs, list) and runs and all(is_simulation(r) for r in runs):
        return [
            Found(label=f"simulation {i} task {r.get('task_id')}", line=line, items=r["messages"], record=r)
            for i, r in enumerate(runs, start=1)
        ]
    return None


def load(path: str | Path) -> LoadResult:
    """Read a tau2-bench results file (module docstring)."""
    return load_message_lists(
        path,
        FORMAT,
        split,
        lambda ep: simulation_to_chat(ep.record),
        "a tau2-bench simulation (an object with messages and termination_reason, or a results file's simulations)",
    )


__all__ = ["FORMAT", "TERMINATION_STATUS", "is_simulation", "load", "simulation_to_chat", "split"]
