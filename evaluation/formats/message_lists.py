"""The loader shared by the harness formats whose records are message lists of their own
shape (OpenAI Responses items, tau2-bench simulations, LangChain / LangGraph dumps,
pydantic-ai messages): each format says how to find its episodes in a file
(:class:`Split`) and how to turn one episode's items into chat-completions messages
(``to_chat``); :func:`mcpgym.evaluation.formats.openai.trajectory_from_messages` does the rest,
so every harness is scored by the same rules (batches, endings, the layered result reader).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpgym.evaluation.formats.common import (
    Episode,
    EpisodeError,
    LoadResult,
    meta_str,
    read_json_records,
    read_text,
)
from mcpgym.evaluation.records.status import EpisodeStatus


@dataclass
class Chat:
    """One episode turned into chat-completions messages.

    Attributes:
        messages: the messages (``user`` / ``assistant`` with ``tool_calls`` / ``tool``).
        tools: tool definitions the episode listed (``{"name", "description",
            "annotations"}``: a Responses ``mcp_list_tools`` item), for the classifier.
        status: the status the harness recorded (tau2-bench's ``termination_reason``), which
            overrides the one read from the transcript; None: read from the transcript.
        stop_reason: why, in words, with ``status``.
        warnings: what was left out.
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    status: EpisodeStatus | None = None
    stop_reason: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class Found:
    """One episode found in a file: its label, JSON Lines line, items and container record."""

    label: str
    line: int | None
    items: list[Any]
    record: dict[str, Any] = field(default_factory=dict)


Split = Callable[[Any, str, int | None], list[Found] | None]
"""``split(value, base_label, line)``: the episodes of one parsed record, or None when the
record is not of the format (a problem naming it)."""


def split_lists(
    value: Any, base: str, line: int | None, is_list: Callable[[Any], bool], keys: tuple[str, ...] = ("messages",)
) -> list[Found] | None:
    """The episodes of one record for a format whose episode is a list (``is_list`` says which
    lists are): the list itself, an object holding it under one of ``keys`` (the object is the
    episode's record: its ``task_id``, ``agent``, ``trial``...), or a list of such; None when
    the record holds none."""
    if is_list(value):
        return [Found(label=base if line is not None else "conversation", line=line, items=value)]
    if isinstance(value, dict):
        key = next((k for k in keys if is_list(value.get(k))), None)
        return None if key is None else [Found(label=base, line=line, items=value[key], record=value)]
    if isinstance(value, list) and value:
        out: list[Found] = []
        for i, v in enumerate(value, start=1):
            found = split_lists(v, f"{base} record {i}" if line is not None else f"record {i}", line, is_list, keys)
            if found is None:
                return None
            out.extend(found)
        return out
    return None


def load_lists(
    path: str | Path,
    fmt: str,
    is_list: Callable[[Any], bool],
    to_chat: Callable[[list[Any]], Chat],
    expected: str,
) -> LoadResult:
    """:func:`load_message_lists` for a format whose episode is one list of messages (``is_list``
    says which lists are, :func:`split_lists` finds them) converted by ``to_chat(items)``."""
    return load_message_lists(
        path,
        fmt,
        lambda value, base, line: split_lists(value, base, line, is_list),
        lambda ep: to_chat(ep.items),
        expected,
    )


def load_message_lists(
    path: str | Path, fmt: str, split: Split, to_chat: Callable[[Found], Chat], expected: str
) -> LoadResult:
    """Read a file of one harness format and convert each episode.

    Args:
        path: the file (JSON or JSON Lines). fmt: the format name.
        split: finds the episodes of a record. to_chat: converts one episode.
        expected: what a record of the format looks like, in words (for the problem of a
            record that is not one).

    Returns:
        A :class:`LoadResult`; an episode that cannot be converted is a problem naming it, the
        others are kept. A file with no episode at all is an error (never a silent zero).
    """
    from mcpgym.evaluation.formats.conversations import convert_episode, record_meta, tool_descriptions
    from mcpgym.evaluation.formats.openai import trajectory_from_messages

    p = Path(path)
    result = LoadResult(file=str(path), format=fmt)
    text = read_text(p, result)
    if text is None:
        return result
    records, _ = read_json_records(p, text, result)
    for line, value in records:
        base = f"line {line}" if line is not None else "the document"
        found = split(value, base, line)
        if found is None:
            result.problem(f"not {expected}", line=line)
            continue
        for ep in found:
            rec = ep.record
            meta: dict[str, Any] = {"format": fmt, "file": str(path), "episode": ep.label, **record_meta(rec)}
            episode_id = meta_str(rec.get("episode_id")) or meta_str(rec.get("id")) or f"{p.name}:{ep.label}"
            try:
                chat = to_chat(ep)
            except EpisodeError as exc:
                result.problem(str(exc), line=ep.line, episode=ep.label)
                continue
            except Exception as exc:  # noqa: BLE001 - a malformed episode must not stop the others
                result.problem(f"cannot be converted ({type(exc).__name__}: {exc})", line=ep.line, episode=ep.label)
                continue
            if chat.tools:
                result.descriptions.update(tool_descriptions(chat.tools))
                meta["tools"] = [t["name"] for t in chat.tools if isinstance(t.get("name"), str)]
                annotated = {
                    t["name"]: t["annotations"]
                    for t in chat.tools
                    if isinstance(t.get("name"), str) and isinstance(t.get("annotations"), dict)
                }
                if annotated:
                    meta["tool_annotations"] = annotated
            converted = convert_episode(
                result, trajectory_from_messages, chat.messages, rec, meta, episode_id, ep.label, ep.line
            )
            if converted is None:
                continue
            traj, warnings = converted
            if chat.status is not None:
                traj.status, traj.stop_reason = chat.status, chat.stop_reason
                if chat.status != EpisodeStatus.COMPLETED:
                    traj.final_message = ""  # a cut episode has no final answer
            result.add(Episode(label=ep.label, trajectory=traj, line=ep.line, warnings=chat.warnings + warnings))
    if not result.episodes and not result.problems:
        result.problem(f"no episode in the file (expected {expected})")
    return result


__all__ = ["Chat", "Found", "Split", "load_lists", "load_message_lists", "split_lists"]
