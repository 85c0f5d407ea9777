"""Format ``inspect``: Inspect AI logs (``.eval`` archives, or ``.json`` logs), read with Inspect's
own reader (``inspect_ai.log.read_eval_log``; ``pip install 'mcpgym[inspect]'``).

One episode per sample and epoch (trial = epoch - 1; agent = the log's model). The sample's
messages are read as a chat conversation with the ``openai`` format's rules
(:func:`mcpgym.evaluation.formats.openai.trajectory_from_messages`): each assistant tool call
is a step, matched to its tool message by id; a tool message with an ``error`` (Inspect's
``ToolCallError``, e.g. an MCP result with ``isError``) is an error result whose text the
shared detector reads (an mcpgym ``{"error": {"code", ...}}`` keeps its code); the final message
is the last assistant text after the last tool result. So an Inspect run against any MCP
server scores with our rules (faults inferred, no outcome).

A sample that :mod:`mcpgym.integrations.inspect_task` played carries the episode's record in
its store (key ``mcpgym``): task id, fault seed and profile, the fault ledger and the initial,
final and gold world states. With it the episode is scored as ``mcpgym run`` scores its own:
faults from the ledger, the outcome judged from the states (the same judge as the scorer's).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcpgym.evaluation.formats.common import Episode, EpisodeError, LoadResult
from mcpgym.evaluation.formats.openai import trajectory_from_messages

FORMAT = "inspect"
STORE_KEY = "mcpgym"
"""Key of the episode record in an Inspect sample's store (written by the mcpgym solver)."""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        text = getattr(part, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts)


def chat_messages(messages: list[Any]) -> list[dict[str, Any]]:
    """Inspect ``ChatMessage`` objects as chat-completions message dicts (the ``openai`` shape)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role = getattr(m, "role", None)
        if role == "assistant":
            calls = [
                {
                    "id": tc.id,
                    "type": "function",
                    "function": {
                        "name": tc.function,
                        "arguments": tc.arguments,
                    },
                }
                for tc in (m.tool_calls or [])
            ]
            out.append({"role": "assistant", "content": _text(m.content), **({"tool_calls": calls} if calls else {})})
        elif role == "tool":
            error = getattr(m, "error", None)
            text = _text(m.content)
            if error is not None and not text:
                text = error.message
            msg: dict[str, Any] = {"role": "tool", "tool_call_id": m.tool_call_id, "name": m.function, "content": text}
            if error is not None:
                msg["error"] = True
            out.append(msg)
        elif role in ("user", "system"):
            out.append({"role": role, "content": _text(m.content)})
    return out


def sample_trajectory(sample: Any, *, model: str) -> tuple[Any, list[str]]:
    """One Inspect sample (``EvalSample``) as a trajectory (module docstring).

    Raises:
        EpisodeError: a message the ``openai`` rules cannot convert, or an mcpgym record in
            the store that is not one.
    """
    record = (sample.store or {}).get(STORE_KEY)
    trial = max(int(sample.epoch or 1) - 1, 0)
    metadata: dict[str, Any] = {"inspect_sample_id": sample.id, "inspect_epoch": sample.epoch}
    task_id = None
    episode_id = f"{sample.id}@{sample.epoch}"
    if isinstance(record, dict):
        task_id = record.get("task_id")
        episode_id = str(record.get("episode_id") or episode_id)
        metadata["extra_checks"] = record.get("extra_checks") or []
    traj, warnings = trajectory_from_messages(
        chat_messages(list(sample.messages)),
        episode_id=episode_id,
        agent=model,
        task_id=task_id,
        trial=trial,
        metadata=metadata,
    )
    if isinstance(record, dict):
        try:
            traj = traj.model_copy(
                update={
                    "world_seed": record["world_seed"],
                    "fault_seed": record["fault_seed"],
                    "fault_profile": record["fault_profile"],
                    "apps": list(record["apps"]),
                    "level": record.get("level"),
                    "feasible": record.get("feasible"),
                    "ledger": list(record["ledger"]),
                    "initial_snapshot": record["initial_snapshot"],
                    "final_snapshot": record["final_snapshot"],
                    "gold_snapshot": record["gold_snapshot"],
                    "status": record.get("status") or traj.status,
                    "stop_reason": record.get("stop_reason", traj.stop_reason),
                }
            )
        except (KeyError, TypeError) as exc:
            raise EpisodeError(f"its store's {STORE_KEY!r} record lacks {exc}") from None
    return traj, warnings


def load(path: str | Path) -> LoadResult:
    """Read an Inspect log file (module docstring)."""
    result = LoadResult(file=str(path), format=FORMAT)
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        result.problem("reading Inspect logs needs inspect-ai: pip install 'mcpgym[inspect]'")
        return result
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - any reader failure is this file's problem
        result.problem(f"not a readable Inspect log ({type(exc).__name__}: {exc})")
        return result
    model = str(getattr(log.eval, "model", "") or "inspect")
    for sample in log.samples or []:
        label = f"sample {sample.id} epoch {sample.epoch}"
        try:
            traj, warnings = sample_trajectory(sample, model=model)
        except EpisodeError as exc:
            result.problem(str(exc), episode=label)
            continue
        result.add(Episode(label=label, trajectory=traj, warnings=warnings))
    return result


__all__ = ["FORMAT", "STORE_KEY", "chat_messages", "load", "sample_trajectory"]
