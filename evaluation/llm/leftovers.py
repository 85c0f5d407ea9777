"""Assistant text that is only what is left of a tool call once the server took the call out.

Qwen2.5-Coder-1.5B writes its calls in doubled braces (``{{"name": ..., "arguments": ...}}``);
llama.cpp b6301's parser takes the inner call out and leaves ``{}`` as the reply's content. Sent
back as the assistant's own text, the model copies it: in the trial that found this, 7 of the 9
episodes with such leftovers ended in a final message of braces. :func:`is_leftover_call_syntax`
says whether a reply's text is only such syntax; the OpenAI-compatible agent then neither
records it as the reply's text nor sends it back, and records what it removed
(``MessageStep.removed_text``).
"""

from __future__ import annotations

import re

MAX_REMOVED_SHOWN = 200
"""The most characters of removed text a trajectory keeps."""

_FENCE = re.compile(r"```[A-Za-z0-9_+-]*")
"""A code fence's opening or closing marker, with its language tag."""

_WORDS = re.compile(r"\b(?:null|none|undefined)\b|</?tool_call>", re.IGNORECASE)
"""Non-language tokens a call's leftovers hold besides punctuation (JSON ``null``, Hermes tags)."""

_SYNTAX = frozenset("{}[](),:;\"' \t\r\n")
"""The characters a leftover holds once fences and :data:`_WORDS` are taken out."""


def is_leftover_call_syntax(text: str) -> bool:
    """True when ``text`` is non-empty and holds nothing but call syntax: braces, brackets,
    punctuation, quotes, whitespace, ``null``/``none``, ``<tool_call>`` tags, and code fences
    (an empty code block). ``"{}"``, ``"{{}}"``, ``"[]"``, ``"null"``, ``"```json\\n```"`` are;
    ``"Done."``, ``'{"ok": true}'`` (a key is language-like content) and ``""`` are not."""
    if not isinstance(text, str) or not text.strip():
        return False
    rest = _WORDS.sub(" ", _FENCE.sub(" ", text))
    return all(c in _SYNTAX for c in rest)


def removed_shown(text: str) -> str:
    """``text`` as a trajectory keeps it: at most :data:`MAX_REMOVED_SHOWN` characters, a cut
    one ending in ``...``."""
    return text if len(text) <= MAX_REMOVED_SHOWN else text[: MAX_REMOVED_SHOWN - 3] + "..."


__all__ = ["MAX_REMOVED_SHOWN", "is_leftover_call_syntax", "removed_shown"]
