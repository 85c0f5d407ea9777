"""How much of the input a ``score`` run could actually read: no silent zeros.

Every ``mcpgym score`` prints a scorability summary (and puts it in ``--json``): episodes
read, tool calls parsed, call blocks and records that failed to parse, and the share of
tools classified by a catalog (mcpgym's, ``--catalog`` or a built-in one) versus guessed by
name; the episodes that errored (in no success figure) and those flagged by
:mod:`mcpgym.evaluation.llm.flags` (``tool_calls_as_text``, ``empty_final_message``,
``truncated``). A run whose input mostly failed to parse, whose tools were mostly guessed, or
in which a model wrote a tool call as text gets a loud warning; ``--strict`` turns such a
warning into a failing exit code.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from mcpgym.evaluation.formats.common import LoadResult
from mcpgym.evaluation.llm.flags import count_flags, text_call_warning
from mcpgym.kernel.wording import counted

MOSTLY = 0.5
"""A share above this is "most" (of the call blocks failing, of the tools guessed)."""


class Scorability(BaseModel):
    """The scorability summary of one ``score`` run.

    Attributes:
        episodes_read: episodes converted into trajectories.
        records_failed: lines, records or episodes that could not be read at all (problems
            of severity ``error``), in the files that could be opened.
        files_unread: files that could not be opened at all (missing, not a regular file, too
            large): their records were never tried, so they count in no parse figure.
        calls_parsed: tool calls read with a tool name (the tool-call steps scored; model
            replies and user turns recorded between them are not calls).
        blocks_failed: tool-call blocks that failed to parse: the trajectories'
            ``invalid_calls`` (no JSON, no tool name) plus blocks a reader saw but could not
            read as calls (``metadata["unparsed_tool_blocks"]``).
        tools: distinct tool names called.
        tools_classified: of those, classified by a catalog (source ``catalog`` or ``file``).
        tools_guessed: classified by the name heuristic (source ``heuristic``).
        guessed_share: ``tools_guessed / tools`` (None without tools).
        calls_guessed: calls of guessed tools.
        tools_unknown: tools whose kind stayed ``unknown`` (the name gave no strong evidence:
            neither reads nor writes, left out of verification; docs/design.md §7, "Terms").
        calls_unknown: calls of those tools.
        failed_share: ``blocks_failed / (calls_parsed + blocks_failed)`` (None without blocks).
        classified_share: the share of parsed calls whose kind is known (read, write, auth,
            hand-off or end; not ``unknown``), call by call (an ``execute_action`` is its inner
            action's kind); None without calls.
        errored: episodes with status ``errored`` (read, but in no success figure).
        flags: episodes per flag of :class:`mcpgym.evaluation.llm.flags.EpisodeFlag`.
        warnings: the loud warnings (most blocks failed, most records failed, most tools
            guessed, tool calls written as text); empty when the input was read and
            classified well.
    """

    episodes_read: int = 0
    records_failed: int = 0
    files_unread: int = 0
    calls_parsed: int = 0
    blocks_failed: int = 0
    tools: int = 0
    tools_classified: int = 0
    tools_guessed: int = 0
    guessed_share: float | None = None
    calls_guessed: int = 0
    tools_unknown: int = 0
    calls_unknown: int = 0
    failed_share: float | None = None
    classified_share: float | None = None
    errored: int = 0
    flags: dict[str, int] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)

    def line(self) -> str:
        """The summary as one line of text."""
        share = "-" if self.guessed_share is None else f"{100 * self.guessed_share:.0f}%"
        kinds = (
            "" if self.classified_share is None else f"; {100 * self.classified_share:.0f}% of calls of a known kind"
        )
        return (
            f"scorability: {counted(self.episodes_read, 'episode')} read, {counted(self.calls_parsed, 'call')} parsed, "
            f"{counted(self.blocks_failed, 'call block')} and {counted(self.records_failed, 'record')} failed to parse; "
            f"tools: {self.tools_classified} of {self.tools} classified by a catalog, {self.tools_guessed} "
            f"guessed by name ({share}), {self.tools_unknown} of unknown kind ({counted(self.calls_unknown, 'call')} "
            f"left out of verification){kinds}; {self.errored} errored"
            + "".join(f", {v} {k}" for k, v in self.flags.items())
            + (f"; {counted(self.files_unread, 'file')} could not be opened" if self.files_unread else "")
        )


def scorability(loaded: Iterable[LoadResult], tools: Iterable[Any]) -> Scorability:
    """Summarise what was read (module docstring).

    Args:
        loaded: the readers' results, one per file.
        tools: the report's tool rows (``source``, ``kind`` and ``calls`` attributes).

    Returns:
        A :class:`Scorability` with its warnings filled in.
    """
    sc = Scorability()
    trajs = []
    for res in loaded:
        sc.episodes_read += len(res.episodes)
        trajs += [ep.trajectory for ep in res.episodes]
        if res.unread:
            sc.files_unread += 1
            continue
        sc.records_failed += sum(p.severity == "error" for p in res.problems)
        for ep in res.episodes:
            sc.calls_parsed += sum(getattr(s, "type", "tool_call") == "tool_call" for s in ep.trajectory.steps)
            sc.blocks_failed += ep.trajectory.invalid_calls + int(ep.trajectory.metadata.get("unparsed_tool_blocks", 0))
    for t in tools:
        sc.tools += 1
        if t.source == "heuristic":
            sc.tools_guessed += 1
            sc.calls_guessed += t.calls
        else:
            sc.tools_classified += 1
        if t.kind == "unknown":
            sc.tools_unknown += 1
            sc.calls_unknown += t.calls
    sc.errored = sum(1 for t in trajs if t.status == "errored")
    sc.flags = count_flags(trajs)
    blocks = sc.calls_parsed + sc.blocks_failed
    sc.failed_share = sc.blocks_failed / blocks if blocks else None
    sc.guessed_share = sc.tools_guessed / sc.tools if sc.tools else None
    if sc.failed_share is not None and sc.failed_share > MOSTLY:
        sc.warnings.append(
            f"most tool-call blocks failed to parse: {sc.blocks_failed} of {blocks} "
            f"({sc.calls_parsed} parsed); check --format and the file's encoding"
        )
    records = sc.episodes_read + sc.records_failed
    if records and sc.records_failed / records > MOSTLY:
        sc.warnings.append(f"most records failed to parse: {sc.records_failed} of {records}")
    if sc.guessed_share is not None and sc.guessed_share > MOSTLY:
        sc.warnings.append(
            f"most tools were guessed by name: {sc.tools_guessed} of {sc.tools} tools "
            f"({sc.calls_guessed} of {sc.calls_parsed} calls); pass --catalog FILE or a built-in "
            "catalog name"
        )
    if sc.flags.get("tool_calls_as_text"):
        sc.warnings.append(text_call_warning(sc.flags["tool_calls_as_text"]))
    return sc


__all__ = ["MOSTLY", "Scorability", "scorability"]
