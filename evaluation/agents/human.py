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

A line that is no command, names no tool or holds arguments that are not a JSON object is
answered with a hint and not sent: a typing slip is not a tool call. Every call that is sent is
recorded by the runner like any agent's, and the episode is scored the same way. At a
terminal, Tab completes commands and tool names (the standard ``readline`` module).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import anyio
from rich.markup import escape

from mcpgym.evaluation.agents.base import NO_CONTEXT, Agent, AgentContext, AgentResult
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.kernel.wording import counted

COMMANDS = ("tools", "show", "ask", "answer", "help")
"""The player's commands besides tool names."""

MAX_LINE = 100_000
"""The longest input line read (characters); a longer one is refused, not sent."""

HELP = (
    'Commands: TOOL {"arg": value} calls a tool (TOOL alone: no arguments); tools [WORDS] lists tools '
    "(those whose name or description has every word); show TOOL prints its arguments; ask QUESTION asks "
    "the user (when the task has one); answer TEXT ends the episode with your final message; Ctrl-D leaves "
    "without an answer."
)


class HumanAgent(Agent):
    """An agent whose every step a person types (module docstring).

    Args:
        read: ``read(prompt) -> line``; raises ``EOFError`` at the end of input (default:
            :func:`input`, with ``readline`` completion at a terminal).
        console: a ``rich`` console for the output (default: one on stdout).
        name: the agent's name in trajectories (default ``human``).
    """

    def __init__(self, *, read: Callable[[str], str] | None = None, console: Any = None, name: str = "human") -> None:
        from rich.console import Console

        self.name = name
        self._read = read or input
        self.console = console or Console(highlight=False)

    def describe(self) -> dict[str, Any]:
        """For the manifest: who plays and how calls are typed."""
        return {"kind": "human", "interface": "terminal: TOOL {json} per line, answer TEXT to finish"}

    async def run(self, task: Any, tools: list[Any], call: Any, context: AgentContext = NO_CONTEXT) -> AgentResult:
        """Play one episode at the terminal; returns ``completed`` with the player's answer, or
        ``limit`` when the input ends first. Never raises for what the player types."""
        by_name = {t.name: t for t in tools}
        out = self.console
        out.rule(f"task {getattr(task, 'id', '')}".strip())
        out.print(getattr(task, "instruction", str(task)), markup=False)
        out.print(f"[dim]{counted(len(tools), 'tool')}; type help for the commands[/dim]")
        self._complete(list(by_name))
        while True:
            try:
                line = await anyio.to_thread.run_sync(self._read, "> ", abandon_on_cancel=True)
            except EOFError:
                out.print("[yellow]input ended: no final message[/yellow]")
                return AgentResult(
                    final_message="", status=EpisodeStatus.LIMIT, stop_reason="the player left without an answer"
                )
            line = line.strip()
            if not line:
                continue
            if len(line) > MAX_LINE:
                out.print(f"[red]that line is over {MAX_LINE} characters: not sent[/red]")
                continue
            word, _, rest = line.partition(" ")
            rest = rest.strip()
            if word == "answer":
                if not rest:
                    out.print("[red]answer needs your final message: answer TEXT[/red]")
                    continue
                return AgentResult(
                    final_message=rest, status=EpisodeStatus.COMPLETED, stop_reason="the player answered"
                )
            if word == "help":
                out.print(HELP, markup=False)
            elif word == "tools":
                self._list(tools, rest)
            elif word == "show":
                self._show(by_name.get(rest), rest)
            elif word == "ask":
                await self._ask(context.user, rest)
            elif word in by_name:
                await self._call(call, word, rest)
            else:
                close = [n for n in by_name if word.lower() in n.lower()][:5]
                hint = f"; did you mean {', '.join(close)}?" if close else "; type tools to list them"
                out.print(f"[red]{escape(f'no command or tool named {word!r}{hint}')}[/red]")

    async def _call(self, call: Any, name: str, text: str) -> None:
        out = self.console
        try:
            arguments = json.loads(text) if text else {}
        except ValueError as exc:
            out.print(f"[red]{escape(f'the arguments are not JSON ({exc}): not sent')}[/red]")
            return
        if not isinstance(arguments, dict):
            out.print("[red]the arguments must be a JSON object: not sent[/red]")
            return
        result = await call(name, arguments)
        payload = getattr(result, "payload", None)
        style = "red" if getattr(result, "is_error", False) else "green"
        out.print(f"[{style}]{'error' if style == 'red' else 'ok'}[/{style}]")
        out.print_json(json.dumps(payload, default=str, ensure_ascii=False))

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
        if self._read is not input or not sys.stdin.isatty():
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
