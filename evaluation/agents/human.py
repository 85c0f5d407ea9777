"""A person as the agent (``mcpgym play``, ``mcpgym run --agent human``): a human baseline.

The player reads the task's instruction and works through the same tools an agent gets,
typing one command a line:

* ``TOOL {"arg": value}`` calls a tool (``TOOL`` alone: no arguments). The result is printed as
  JSON, and a tool error exactly as an agent gets it (``{"error": {code, message, retryable,
  retry_after, field}}``): injected faults look the same to a person as to a model;
* ``tools [WORDS]`` lists the tools, or those whose name or description holds every word;
* ``show TOOL`` prints a tool's description and argument schema;
* ``ask QUESTION`` asks the simulated user (tasks that have one);
* ``answer TEXT`` ends the episode with TEXT as the final message to the user;
* ``help`` lists the commands; end of input (Ctrl-D) leaves without an answer (status ``limit``).

A line whose first word is no command is a tool call. One that names a tool the episode does
not offer (``not_found``), or whose arguments are not a JSON object (``invalid_argument``), is
refused before the server exactly as an LLM agent's is: the player sees the tool error (and a
hint), and the call is recorded as an invalid step (``step`` null, ``invalid`` true) through
:func:`mcpgym.evaluation.agents.base.record_refused_call`, so it counts in ``invalid_calls``.
Every call that is sent is recorded by the runner like any agent's, and the episode is scored
the same way. A line over :data:`MAX_LINE` characters is not sent; unless its first word is a
command it is an attempted call, refused (``invalid_argument``) and counted as an invalid call
like the others. A malformed command (``answer`` or ``ask`` without text or over the limit,
``show`` of an unknown tool) is no call: it is answered with a hint only. Whatever bytes the
input holds, the episode goes on: bytes that are not UTF-8 are read as U+FFFD (the default
reader reads standard input with ``surrogateescape``, so no decoding error can end the episode).
At a terminal, Tab completes commands and tool names (the standard ``readline`` module).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import sys
from collections.abc import Callable
from typing import Any

import anyio
from rich.markup import escape

from mcpgym.evaluation.agents.base import (
    NO_CONTEXT,
    Agent,
    AgentContext,
    AgentResult,
    record_refused_call,
    recorder_of,
)
from mcpgym.evaluation.llm.replies import error_payload, parse_arguments, raw_text, shown_name
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.kernel.wording import counted

COMMANDS = ("tools", "show", "ask", "answer", "help")
"""The player's commands besides tool names."""

MAX_LINE = 100_000
"""The longest input line taken (characters); a longer one is not sent (a call: refused and
counted as an invalid call)."""

HELP = (
    'Commands: TOOL {"arg": value} calls a tool (TOOL alone: no arguments); tools [WORDS] lists tools '
    "(those whose name or description has every word); show TOOL prints its arguments; ask QUESTION asks "
    "the user (when the task has one); answer TEXT ends the episode with your final message; Ctrl-D leaves "
    "without an answer. A call naming no tool of the episode, or whose arguments are not a JSON object, is "
    "refused and counted as an invalid call, as an agent's is; so is a call line over 100,000 characters."
)


def _read_stdin(prompt: str) -> str:
    """:func:`input`, with standard input decoded with ``surrogateescape``: a byte that is not
    valid in its encoding becomes a lone surrogate (made U+FFFD by the caller) instead of a
    ``UnicodeDecodeError`` that would end the episode (standard input is strict under
    ``PYTHONIOENCODING=utf-8`` or a UTF-8 locale other than C.UTF-8). Raises ``EOFError`` at
    the end of input."""
    reconfigure = getattr(sys.stdin, "reconfigure", None)
    if callable(reconfigure) and getattr(sys.stdin, "errors", None) != "surrogateescape":
        with contextlib.suppress(ValueError, OSError):  # a detached or closed stream: input() says so
            reconfigure(errors="surrogateescape")
    return input(prompt)


class HumanAgent(Agent):
    """An agent whose every step a person types (module docstring).

    Args:
        read: ``read(prompt) -> line``; raises ``EOFError`` at the end of input (default:
            :func:`input` decoding with ``surrogateescape``, with ``readline`` completion at a terminal).
        console: a ``rich`` console for the output (default: one on stdout).
        name: the agent's name in trajectories (default ``human``).
    """

    def __init__(self, *, read: Callable[[str], str] | None = None, console: Any = None, name: str = "human") -> None:
        from rich.console import Console

        self.name = name
        self._read = read or _read_stdin
        self.console = console or Console(highlight=False)

    def describe(self) -> dict[str, Any]:
        """For the manifest: who plays and how calls are typed."""
        return {"kind": "human", "interface": "terminal: TOOL {json} per line, answer TEXT to finish"}

    async def run(self, task: Any, tools: list[Any], call: Any, context: AgentContext = NO_CONTEXT) -> AgentResult:
        """Play one episode at the terminal; returns ``completed`` with the player's answer, or
        ``limit`` when the input ends first. Never raises for what the player types. Refused
        calls the call function cannot record are counted in ``invalid_calls`` (module docstring)."""
        by_name = {t.name: t for t in tools}
        record = recorder_of(call)
        unrecorded = 0
        out = self.console
        out.rule(f"task {getattr(task, 'id', '')}".strip())
        out.print(getattr(task, "instruction", str(task)), markup=False)
        out.print(f"[dim]{counted(len(tools), 'tool')}; type help for the commands[/dim]")
        self._complete(list(by_name))
        while True:
            try:
                line = await anyio.to_thread.run_sync(self._read, "> ", abandon_on_cancel=True)
            except UnicodeDecodeError:  # a reader that decodes strictly: the line is lost, not the episode
                out.print("[red]that line is not text in the input's encoding: not read[/red]")
                continue
            except EOFError:
                out.print("[yellow]input ended: no final message[/yellow]")
                return AgentResult(
                    final_message="",
                    status=EpisodeStatus.LIMIT,
                    stop_reason="the player left without an answer",
                    invalid_calls=unrecorded,
                )
            # Bytes that are not UTF-8 come from the terminal as lone surrogates, which no JSON
            # record can hold (the episode was lost at the end): each becomes U+FFFD.
            line = line.encode("utf-8", "surrogateescape").decode("utf-8", "replace").strip()
            if not line:
                continue
            word, _, rest = line.partition(" ")
            rest = rest.strip()
            if len(line) > MAX_LINE:
                unrecorded += self._refuse_long_line(record, word, rest)
                continue
            if word == "answer":
                if not rest:
                    out.print("[red]answer needs your final message: answer TEXT[/red]")
                    continue
                return AgentResult(
                    final_message=rest,
                    status=EpisodeStatus.COMPLETED,
                    stop_reason="the player answered",
                    invalid_calls=unrecorded,
                )
            if word == "help":
                out.print(HELP, markup=False)
            elif word == "tools":
                self._list(tools, rest)
            elif word == "show":
                self._show(by_name.get(rest), rest)
            elif word == "ask":
                await self._ask(context.user, rest)
            else:
                unrecorded += await self._call(call, record, by_name, word, rest)

    async def _call(
        self, call: Any, record: Callable[[Any], None] | None, by_name: dict[str, Any], name: str, text: str
    ) -> int:
        """Send the call ``name text``, or refuse it as an LLM agent's is refused (an unknown tool:
        ``not_found``; arguments that are no JSON object: ``invalid_argument``) and record it
        invalid; returns 1 for a refused call the call function could not record, else 0."""
        arguments, problem = parse_arguments(text)
        if name not in by_name:
            # the names holding what was typed, else the nearest spellings (a slip of a letter)
            close = [n for n in by_name if name.lower() in n.lower()][:5] or difflib.get_close_matches(name, by_name, 5)
            hint = f"did you mean {', '.join(close)}?" if close else "type tools to list them"
            what = f"there is no tool named {shown_name(name)!r} in this episode; call one of the tools you were given."
            payload = error_payload("not_found", what, "name")
        elif arguments is None:
            hint = 'type TOOL {"arg": value}, the arguments one JSON object'
            payload = error_payload("invalid_argument", f"{name}: {problem}")
        else:
            self._print_result(await call(name, arguments))
            return 0
        recorded = record_refused_call(
            record,
            shown_name(name),
            payload,
            arguments=arguments,
            raw_arguments=raw_text(text) if arguments is None else None,
        )
        self._print_result(None, payload)
        self.console.print(f"[red]{escape(f'not sent: counted as an invalid call; {hint}')}[/red]")
        return 0 if recorded else 1

    def _refuse_long_line(self, record: Callable[[Any], None] | None, word: str, rest: str) -> int:
        """Refuse a line over :data:`MAX_LINE` characters: a command's with a hint only (0), an
        attempted call's as an invalid call (``invalid_argument``), recorded like any refused
        call; returns 1 when the call function could not record it, else 0."""
        too_long = f"the line is over {MAX_LINE:,} characters, the limit: not sent"
        if word in COMMANDS:
            self.console.print(f"[red]{escape(too_long)}[/red]")
            return 0
        payload = error_payload(
            "invalid_argument", f"{shown_name(word)}: {too_long}; send arguments of fewer characters"
        )
        recorded = record_refused_call(record, shown_name(word), payload, raw_arguments=raw_text(rest))
        self._print_result(None, payload)
        self.console.print(f"[red]{escape('not sent: counted as an invalid call')}[/red]")
        return 0 if recorded else 1

    def _print_result(self, result: Any, refused: dict[str, Any] | None = None) -> None:
        """Print a call's result as the agent gets it: ``ok`` or ``error``, then the payload."""
        payload = refused if refused is not None else getattr(result, "payload", None)
        is_error = refused is not None or bool(getattr(result, "is_error", False))
        style = "red" if is_error else "green"
        self.console.print(f"[{style}]{'error' if is_error else 'ok'}[/{style}]")
        self.console.print_json(json.dumps(payload, default=str, ensure_ascii=False))

    async def _ask(self, user: Any, question: str) -> None:
        if user is None:
            self.console.print("[red]this task has no user to ask[/red]")
            return
        if not question:
            self.console.print("[red]ask needs a question: ask QUESTION[/red]")
            return
        reply = await user.ask(question)
        self.console.print(f"[cyan]user:[/cyan] {escape(str(reply.text))}", highlight=False)

    def _list(self, tools: list[Any], words: str) -> None:
        wanted = words.lower().split()
        found = [t for t in tools if all(w in f"{t.name} {getattr(t, 'description', '')}".lower() for w in wanted)]
        if not found:
            self.console.print(f"[yellow]{escape(f'no tool has every word of {words!r}')}[/yellow]")
        for t in found:
            first = (getattr(t, "description", "") or "").strip().splitlines()
            self.console.print(f"[bold]{escape(t.name)}[/bold]  {escape(first[0] if first else '')}", highlight=False)

    def _show(self, tool: Any, name: str) -> None:
        if tool is None:
            self.console.print(f"[red]{escape(f'no tool named {name!r}')}[/red]")
            return
        self.console.print(f"[bold]{escape(tool.name)}[/bold]: {escape(str(tool.description))}", highlight=False)
        self.console.print_json(json.dumps(getattr(tool, "input_schema", {}) or {}, default=str))

    def _complete(self, names: list[str]) -> None:
        """Tab completion of commands and tool names at a terminal (nothing otherwise); a
        completed name comes with the space before its arguments."""
        if self._read is not _read_stdin or not sys.stdin.isatty():
            return
        try:
            import readline
        except ImportError:  # pragma: no cover - platforms without readline: no completion
            return
        words = sorted([*COMMANDS, *names])

        # each match ends with the space that separates the name from its arguments: Python's
        # readline appends nothing to a unique match, so `system_upd<Tab>{...}` would otherwise
        # read as one unknown word (the common part of several matches stops before the space)
        def complete(text: str, state: int) -> str | None:
            matches = [f"{w} " for w in words if w.startswith(text)]
            return matches[state] if state < len(matches) else None

        readline.set_completer(complete)
        readline.parse_and_bind("tab: complete")


__all__ = ["COMMANDS", "HELP", "HumanAgent", "MAX_LINE"]
