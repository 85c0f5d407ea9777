"""Why a recorded tool result counts as an error: :class:`ErrorRule`, the closed set of named
rules of the layered result reader (:mod:`mcpgym.evaluation.formats.layers`).

Each error step of an imported transcript records the rule that fired
(``ToolCallStep.error_rule``); ``mcpgym score --json`` lists them per episode
(``error_rules``) and the viewer shows them beside the error.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorRule(StrEnum):
    """The rule that made a recorded tool result an error (first match wins, in this order of
    the reader's checks; docs/design.md §6, "Outside trajectories")."""

    FORMAT_FLAG = "format_flag"
    """The harness flagged the result (a tool message's ``"error": true``, Anthropic's
    ``is_error``, LangChain's ``status: "error"``, pydantic-ai's retry prompt, a Responses
    ``mcp_call`` with an ``error``)."""
    IS_ERROR = "is_error"
    """An MCP ``CallToolResult`` with ``isError: true`` at some wrapper layer."""
    ERROR_FIELD = "error_field"
    """A truthy ``error`` member of the result object (``{"error": {...}}``)."""
    ENVELOPE = "envelope"
    """A ``{"error": <flag>, "response": ...}`` envelope (ToolBench) flagged as an error."""
    ENVELOPE_STATUS = "envelope_status"
    """An envelope ``status`` naming an error (``failed``, ``error``, ``internal error``)."""
    SUCCESS_FALSE = "success_false"
    """``success`` / ``ok`` false."""
    HTTP_STATUS = "http_status"
    """An HTTP status 400-599 under ``status`` / ``status_code`` (or ``code`` beside a message)."""
    REST_ERROR_BODY = "rest_error_body"
    """A REST error body: ``{"object": "error", "status": 400, ...}`` (Notion's API) or
    ``{"message": ..., "documentation_url": ...}`` (GitHub's)."""
    NESTED_ERROR = "nested_error"
    """An error object or HTTP error status nested below the top level
    (``execution_result.error``, ``response.error``)."""
    ERROR_MESSAGE = "error_message"
    """A small body that is nothing but an error report (``{"message": "Not Found"}``)."""
    HTML_ERROR_PAGE = "html_error_page"
    """An HTML page whose title is an HTTP error."""
    HTTP_STATUS_LINE = "http_status_line"
    """A text that is an HTTP error status line (``404 Not Found``)."""
    ERROR_PREFIX = "error_prefix"
    """A text starting ``Error`` / ``ERROR`` / ``error:``."""
    ERROR_TEXT = "error_text"
    """A text that reports a failure in a harness's or server's words (``failed to get file:
    404``, ``MCP error -32602: ...``, ``An error occurred while running the tool``)."""
    ERROR_HEADING = "error_heading"
    """A text whose first line is a Markdown heading ``Error`` (``### Error``: the Playwright MCP
    server's failed call)."""
    COMMAND_FAILURE = "command_failure"
    """The output of a shell or code runner (``bash``, ``run_command``, ``python``) that shows
    the command failed on a line of its own: a Python traceback or exception line, ``command
    not found``, ``No such file or directory``, a CLI's ``✗`` / ``error:`` / ``fatal:`` line,
    an HTTP error object printed by a CLI."""
    BROKEN_JSON = "broken_json"
    """JSON cut short whose readable part shows an error status, ``success: false`` or an
    ``error`` field."""


__all__ = ["ErrorRule"]
