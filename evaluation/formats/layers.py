"""The layered result reader: one recorded tool result -> error or not, and by which named rule.

Every format but ``mcpgym`` reads its tool results through :func:`read_result`
(docs/design.md §6, "Outside trajectories"). Harnesses wrap what the server said, often
several times: the OpenAI Agents SDK hands an MCP result to the model as ``{"type": "text",
"text": "<CallToolResult JSON>"}``, whose ``content`` list holds the server's text, which may
be JSON again; LiveMCPBench stores the Python repr of the result object (``meta=None
content=[TextContent(type='text', text='...')] isError=False``). So the reader works in two
stages:

1. **Peel** (:func:`peel`), at most :data:`MAX_LAYERS` times: a text holding JSON (or a
   Python literal, or a ``CallToolResult`` repr) is parsed; a content part ``{"type": "text",
   "text": ...}`` (or ``input_text`` / ``output_text``) becomes its text; a content list
   becomes the text of its parts; a ``CallToolResult`` (an object with ``content`` and
   ``isError`` / ``structuredContent`` / ``meta``) becomes its content, and its ``isError``
   is remembered (as is a content part's own ``"error": true``); an object whose only field
   ``error`` is JSON text (pydantic-ai's ``{"error": "<the server's error JSON>"}``) becomes
   that JSON, so the server's error code is kept (the wrapper, an outer layer, still says
   "error" when the JSON inside does not). Every layer is kept (:class:`Peeled`).
2. **Decide**, by named rules (:class:`~mcpgym.evaluation.records.error_rule.ErrorRule`),
   first match wins: an ``isError: true`` at any layer (``is_error``); then on the innermost
   layer the rules of :func:`mcpgym.evaluation.formats.detector.judge_value` (``error`` field,
   ToolBench envelopes, envelope statuses, ``success: false``, HTTP statuses, REST error
   bodies, nested error objects, small error-message bodies, HTML error pages, HTTP status
   lines, a Markdown ``Error`` heading, ``Error...`` text, failure reports in words, JSON cut
   short); then the same rules on the outer layers (an error stated by a wrapper); then the
   harness's own flag (``format_flag``); last, for a shell or code runner's text output (the
   reader names the tool), a failed command on a line of its own (``command_failure``).
   Anything else is a success, whose result is the innermost value.

The rule that fired is returned (:class:`Reading`) and stored on the step
(``ToolCallStep.error_rule``).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from mcpgym.evaluation.records.error_rule import ErrorRule
from mcpgym.kernel import ast_parse

MAX_LAYERS = 6
"""Wrapper layers peeled at most (a deeper result keeps its innermost layer as text)."""
MAX_TEXT = 2_000_000
"""Characters of a text layer parsed at most (a longer text stays text)."""
TEXT_PART_TYPES: frozenset[str] = frozenset({"text", "input_text", "output_text"})
"""``type`` values of a content part that is text."""
RESULT_KEYS: frozenset[str] = frozenset({"isError", "structuredContent", "meta", "_meta"})
"""Keys that, beside ``content``, make an object an MCP ``CallToolResult``."""
_REPR_START_RE = re.compile(r"^\s*(?:CallToolResult\()?\s*(?:_?meta=\w+\s+)?content=\[")
_REPR_FIELD_RE = re.compile(r"\s+(content|structuredContent|isError|meta|_meta)=")


@dataclass
class Peeled:
    """A result with its wrappers taken off.

    Attributes:
        layers: every layer, outermost first (the raw content, then each unwrapped value).
        value: the innermost layer (a parsed JSON value or a text).
        parsed: whether ``value`` came from JSON / a literal (False: it is plain text).
        is_error_flag: an ``isError`` found on a ``CallToolResult`` layer (None: none said).
    """

    layers: list[Any] = field(default_factory=list)
    value: Any = None
    parsed: bool = False
    is_error_flag: bool | None = None


@dataclass(frozen=True)
class Reading:
    """The verdict of :func:`read_result` on one result.

    Attributes:
        is_error: the call failed. code: its error code (mcpgym's codes, guessed when the
            result names none), None when unknown or for a success. result: the value kept on
            the step (the innermost value for a success, an error payload for an error).
        rule: the rule that made it an error (None for a success).
    """

    is_error: bool
    code: str | None
    result: Any
    rule: ErrorRule | None = None


def _repr_value(node: ast.AST) -> Any:
    """A value of a parsed ``CallToolResult`` repr: literals, lists, and calls such as
    ``TextContent(type='text', text='...')`` read as objects of their keyword arguments."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return {"None": None, "True": True, "False": False}.get(node.id, node.id)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_repr_value(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _repr_value(k) if k is not None else "": _repr_value(v) for k, v in zip(node.keys, node.values, strict=True)
        }
    if isinstance(node, ast.Call):
        return {kw.arg or "": _repr_value(kw.value) for kw in node.keywords}
    raise ValueError("not a literal")


def parse_result_repr(text: str) -> dict[str, Any] | None:
    """A ``CallToolResult`` printed by Python (``meta=None content=[TextContent(type='text',
    text='...')] structuredContent=None isError=False``, or with ``CallToolResult(...)``
    around it) read back as ``{"content": [...], "isError": ...}``; None when ``text`` is not
    one (or does not parse)."""
    if not _REPR_START_RE.match(text) or len(text) > MAX_TEXT:
        return None
    body = text.strip()
    if body.startswith("CallToolResult(") and body.endswith(")"):
        body = body[len("CallToolResult(") : -1]
    # the printed fields are separated by spaces: make them keyword arguments of one call
    source = "f(" + _REPR_FIELD_RE.sub(lambda m: f", {m.group(1)}=", " " + body).lstrip(", ") + ")"
    try:
        tree = ast_parse.parse_expression(source)  # one thread at a time (CPython 3.11)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    call = tree.body
    if not isinstance(call, ast.Call):
        return None
    try:
        out = {kw.arg or "": _repr_value(kw.value) for kw in call.keywords}
    except (ValueError, RecursionError):
        return None
    return out if "content" in out else None


def _parse_text(text: str) -> tuple[bool, Any]:
    from mcpgym.evaluation.formats.results import parse_result_text

    if len(text) > MAX_TEXT:
        return False, text
    parsed, value = parse_result_text(text)
    if parsed:
        return True, value
    rep = parse_result_repr(text)
    return (True, rep) if rep is not None else (False, text)


def _parts_text(parts: list[Any]) -> str | None:
    """The text of a content list made of text parts (and strings); None when some part is
    neither (a list of records is data, not a content list)."""
    texts = []
    for p in parts:
        if isinstance(p, str):
            texts.append(p)
        elif isinstance(p, dict) and p.get("type") in TEXT_PART_TYPES and isinstance(p.get("text"), str):
            texts.append(p["text"])
        elif isinstance(p, dict) and p.get("type") in ("image", "input_image", "resource", "resource_link", "audio"):
            continue
        else:
            return None
    return "\n".join(texts)


def _is_call_result(v: dict[str, Any]) -> bool:
    return "content" in v and bool(RESULT_KEYS & set(v)) and isinstance(v.get("content"), (list, str))


def _is_error_text_wrapper(v: Any) -> bool:
    """``{"error": "<JSON text>"}`` and nothing else: how pydantic-ai hands an MCP error to the
    model (the server's error object, serialised, under ``error``)."""
    return (
        isinstance(v, dict)
        and len(v) == 1
        and isinstance(v.get("error"), str)
        and v["error"].lstrip().startswith(("{", "["))
    )


def peel(content: Any) -> Peeled:
    """Take the wrappers off a recorded result (module docstring, stage 1).

    Args:
        content: the result as the format stores it (a string, a content list, an object).

    Returns:
        The :class:`Peeled` layers; ``is_error_flag`` is True when any ``CallToolResult`` layer
        said ``isError: true`` (False when one said false and none true).
    """
    out = Peeled(layers=[content])
    value: Any = content
    parsed = not isinstance(content, str)
    for _ in range(MAX_LAYERS):
        nxt: Any
        if isinstance(value, str):
            ok, nxt = _parse_text(value)
            if not ok:
                break
            parsed = True
        elif isinstance(value, dict) and value.get("type") in TEXT_PART_TYPES and isinstance(value.get("text"), str):
            nxt, parsed = value["text"], False
        elif isinstance(value, dict) and _is_call_result(value):
            flag = value.get("isError")
            if isinstance(flag, bool):
                out.is_error_flag = bool(flag or out.is_error_flag)
            inner = value["content"]
            structured = value.get("structuredContent")
            if isinstance(inner, list) and not inner and isinstance(structured, (dict, list)):
                nxt, parsed = structured, True
            elif isinstance(inner, list):
                text = _parts_text(inner)
                if text is None:
                    break
                nxt, parsed = text, False
            else:
                nxt, parsed = inner, False
        elif _is_error_text_wrapper(value):
            ok, nxt = _parse_text(value["error"])
            if not ok or not isinstance(nxt, (dict, list)):
                break  # a plain message: the ``error`` field rule reads the wrapper itself
            parsed = True
        elif isinstance(value, list) and value and all(isinstance(p, (dict, str)) for p in value):
            text = _parts_text(value)
            if text is None:
                break
            if any(isinstance(p, dict) and (p.get("error") is True or p.get("isError") is True) for p in value):
                out.is_error_flag = True  # a content part flagged as an error (Toolathlon's terminal)
            nxt, parsed = text, False
        else:
            break
        out.layers.append(nxt)
        value = nxt
    out.value, out.parsed = value, parsed
    return out


def read_result(content: Any, *, flag: bool | None = None, tool: str | None = None) -> Reading:
    """Decide whether a recorded tool result is an error, with its code, kept result and rule.

    Args:
        content: the result as the format stores it.
        flag: the format's own error flag (True: the harness says the call failed; False or
            None: the content decides).
        tool: the called tool's name, when the reader knows it: the output of a shell or code
            runner (:func:`~mcpgym.evaluation.scoring.call_kinds.is_runner`) that the
            other rules pass is read last for a failed command (rule ``command_failure``).

    Returns:
        A :class:`Reading` (rules and their order: the module docstring, stage 2).
    """
    from mcpgym.evaluation.formats.detector import command_failure, judge_value, text_error
    from mcpgym.evaluation.formats.results import error_payload, guess_error_code
    from mcpgym.evaluation.scoring.call_kinds import is_runner

    peeled = peel(content)
    if peeled.is_error_flag:
        inner = judge_value(peeled.value, parsed=peeled.parsed)
        if inner is not None:
            return Reading(True, inner.code, inner.result, ErrorRule.IS_ERROR)
        is_err, code, payload = text_error(_text_of(peeled.value) or "isError: true")
        return Reading(is_err, code, payload, ErrorRule.IS_ERROR)
    found = judge_value(peeled.value, parsed=peeled.parsed)
    if found is None:
        for layer in reversed(peeled.layers[:-1]):  # a wrapper's own error (an envelope's status)
            if isinstance(layer, dict):
                found = judge_value(layer, parsed=True)
                if found is not None:
                    break
    if found is not None:
        return Reading(True, found.code, found.result, found.rule)
    if flag:
        is_err, code, payload = text_error(_text_of(peeled.value).strip())
        return Reading(is_err, code, payload, ErrorRule.FORMAT_FLAG)
    if tool is not None and is_runner(tool) and isinstance(peeled.value, str):
        line = command_failure(peeled.value)
        if line is not None:
            code = guess_error_code(line)
            return Reading(True, code, error_payload(code, peeled.value.strip()[:500]), ErrorRule.COMMAND_FAILURE)
    return Reading(False, None, peeled.value)


def _text_of(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


__all__ = ["MAX_LAYERS", "Peeled", "Reading", "parse_result_repr", "peel", "read_result"]
