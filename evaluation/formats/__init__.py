"""Score trajectories recorded elsewhere: one reader per file format, and a front door.

Formats (one module each; each ``load(path) -> LoadResult`` turns a file into
:class:`~mcpgym.evaluation.records.trajectory.Trajectory` objects plus problems):

* ``mcpgym`` (:mod:`.mcpgym`): our own ``trajectories.jsonl``;
* ``openai`` (:mod:`.openai`): chat-completions message lists (tau-bench and most harnesses);
* ``anthropic`` (:mod:`.anthropic`): Messages-API lists with ``tool_use`` / ``tool_result``;
* ``mcp-log`` (:mod:`.mcp_log`): JSON-RPC messages as an MCP client sees them;
* ``complexmcp`` (:mod:`.complexmcp`): ComplexMCP text transcripts;
* ``atif`` (:mod:`.atif`): ATIF trajectories (read, and written by ``mcpgym export``);
* ``inspect`` (:mod:`.inspect_log`): Inspect AI ``.eval`` logs;
* ``responses``, ``tau2``, ``langchain``, ``pydantic-ai`` (:mod:`.responses`, :mod:`.tau2`,
  :mod:`.langchain`, :mod:`.pydantic_ai`): what those harnesses store;
* ``claude-code`` (:mod:`.claude_code`): Claude Code's session logs and ``stream-json`` output;
* ``auto`` (:mod:`.detect`): sniffed from extension and content.

Front door (:mod:`.score`): :func:`score_files` -> :class:`ScoreReport` (what
``mcpgym score FILE...`` scores; :mod:`mcpgym.evaluation.report.score_text` renders it and
:mod:`mcpgym.evaluation.cli.score` is the command).
"""

from mcpgym.evaluation.formats.common import Episode, EpisodeError, LoadResult, Problem
from mcpgym.evaluation.formats.detect import detect_format
from mcpgym.evaluation.formats.score import (
    FORMATS,
    EpisodeReport,
    FileReport,
    ScoreReport,
    ToolClassification,
    build_catalog,
    load_file,
    score_files,
)

__all__ = [
    "FORMATS",
    "Episode",
    "EpisodeError",
    "EpisodeReport",
    "FileReport",
    "LoadResult",
    "Problem",
    "ScoreReport",
    "ToolClassification",
    "build_catalog",
    "detect_format",
    "load_file",
    "score_files",
]
