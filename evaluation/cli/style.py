"""How every ``mcpgym`` command's ``--help`` reads: one place, so options added later inherit it.

:class:`MCPGymGroup` is the ``cls`` of the Typer app. When Typer builds the click group it
hands over every subcommand, and :func:`polish_command` then

- names every value an option takes the way ``argparse`` and well-kept CLIs do
  (``--out DIR``, ``--trials N``, ``--format FORMAT``) instead of Typer's ``<list[str]>``;
  boolean flags show no value at all; a path option names a path (``PATH``, ``DIR``,
  ``FILE``) unless it set its own ``metavar``;
- writes arguments click-style in the usage line (``PATH...``, ``[RUN_DIR]``), not ``{paths}...``;
- states number bounds in words (``at least 1``, ``0 to 65535``) next to the default;
- gives each command a short help (the first paragraph of its docstring) for the command list;
- reads docstrings' reStructuredText markup as plain text (:func:`plain_help`);
- wraps help text at the terminal width at spaces only, never inside a word or at a hyphen
  (``mcp-log`` stays whole).

Help is plain text (Typer's ``rich_markup_mode=None``): click's formatter rewraps every
paragraph to the terminal width (``COLUMNS``), so docstrings may be wrapped anywhere in the
source.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Iterable
from typing import Any

import typer
from typer import _click as click  # Typer 0.29 vendors click; its parameters are Typer's own
from typer.core import TyperArgument, TyperGroup, TyperOption

from mcpgym.kernel.exceptions import MCPGymError
from mcpgym.kernel.shorten import cap_message

INTERRUPTED = 130
"""The exit code of an interrupted command (128 + SIGINT, as a shell reports it)."""

INTERRUPT_SAID = {"said": False}
"""Whether a command already said on stderr that it was interrupted (``mcpgym run`` names the
files kept and how to go on); :func:`mcpgym.evaluation.cli.main` then adds no line of its own."""

DEBUG = {"on": False}
"""Whether ``--debug`` was given anywhere on the command line (set by
:func:`mcpgym.evaluation.cli.main`, which takes the flag out before click parses the rest)."""


def _wrap(text: str, width: int, indent: str = "", subsequent: str | None = None) -> list[str]:
    """Wrap one paragraph at spaces only (no word or hyphenated name is ever split)."""
    subsequent = indent if subsequent is None else subsequent
    wrapper = textwrap.TextWrapper(
        width=max(width, 10),
        initial_indent=indent,
        subsequent_indent=subsequent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return wrapper.wrap(" ".join(text.split())) or [indent.rstrip()]


def _paragraphs(text: str) -> list[tuple[bool, str]]:
    """Split help text into ``(verbatim, text)`` paragraphs; click's ``\\b`` marks verbatim ones."""
    out = []
    for block in re.split(r"\n\s*\n", inspect.cleandoc(text)):
        if block.startswith("\b"):
            out.append((True, block.lstrip("\b").strip("\n")))
        elif block.strip():
            out.append((False, block))
    return out


class PlainFormatter(click.formatting.HelpFormatter):
    """click's help formatter, wrapping at spaces only (``break_on_hyphens=False``)."""

    def write_text(self, text: str) -> None:
        """Write re-indented, re-wrapped paragraphs (``\\b`` paragraphs verbatim)."""
        indent = " " * self.current_indent
        lines: list[str] = []
        for i, (verbatim, para) in enumerate(_paragraphs(text)):
            if i:
                lines.append("")
            if verbatim:
                lines += [indent + ln for ln in para.splitlines()]
            else:
                lines += _wrap(para, self.width, indent)
        self.write("\n".join(lines) + "\n")

    def write_dl(self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        """Write a definition list (options, commands): terms left, help wrapped beside them."""
        rows = list(rows)
        first_col = min(max((len(a) for a, _ in rows), default=0), col_max) + col_spacing
        pad = " " * (self.current_indent + first_col)
        for term, help_text in rows:
            head = " " * self.current_indent + term
            if not help_text:
                self.write(head + "\n")
                continue
            lines: list[str] = []
            for i, (verbatim, para) in enumerate(_paragraphs(help_text)):
                if i:
                    lines.append("")
                lines += para.splitlines() if verbatim else _wrap(para, self.width - len(pad))
            if len(term) <= first_col - col_spacing:
                self.write(head + " " * (first_col - len(term)) + lines[0] + "\n")
                rest = lines[1:]
            else:
                self.write(head + "\n")
                rest = lines
            for ln in rest:
                self.write((pad + ln).rstrip() + "\n")


class PlainContext(typer.Context):
    """A click context whose help formatter is :class:`PlainFormatter`."""

    formatter_class = PlainFormatter


def metavar_for(param: TyperOption | TyperArgument) -> str:
    """The value name shown for an option or argument: its own ``metavar``; else a path kind
    (``DIR`` when only directories are allowed, ``FILE`` when only files, else ``PATH``) for
    ``Path`` parameters; else ``[a|b]`` for choices; else its name in capitals
    (``--suite SUITE``, ``--k K``)."""
    if param.metavar:
        return param.metavar
    desc = param.type_descriptor
    if desc.is_choice:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in desc.choices or ()) + "]"
    if desc.is_path:
        info = desc.parameter_info
        if getattr(info, "dir_okay", True) and not getattr(info, "file_okay", True):
            return "DIR"
        if getattr(info, "file_okay", True) and not getattr(info, "dir_okay", True):
            return "FILE"
        return "PATH"
    return (param.name or "value").upper()


def range_words(param: TyperOption | TyperArgument) -> str | None:
    """Number bounds in words: ``at least 1``, ``at most 9``, ``0 to 65535``; None without bounds."""
    lo, hi = getattr(param, "min", None), getattr(param, "max", None)
    if getattr(param, "count", False) and lo == 0 and hi is None:
        return None
    if lo is not None and hi is not None:
        return f"{lo} to {hi}"
    if lo is not None:
        return f"at least {lo}"
    if hi is not None:
        return f"at most {hi}"
    return None


class PlainOption(TyperOption):
    """A Typer option whose help names its value (``--out DIR``) and states bounds in words."""

    def display_type_rich(self, ctx: click.Context) -> str | None:  # noqa: D102 - see class
        return metavar_for(self)

    def _get_number_range_help_str(self) -> str | None:
        return range_words(self)


class PlainArgument(TyperArgument):
    """A Typer argument shown click-style: ``PATH...`` when required, ``[PATH]`` when optional."""

    def _rich_display_name(self) -> str:
        name = metavar_for(self)
        return name + ("..." if self.nargs != 1 else "")

    def _usage_display_name(self) -> str:
        name = metavar_for(self)
        if not self.required:
            name = f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    def get_usage_pieces(self, ctx: click.Context) -> list[str]:  # noqa: D102 - see class
        return [self._usage_display_name()]

    def display_type_rich(self, ctx: click.Context) -> str | None:  # noqa: D102 - see class
        return None


_ROLE = re.compile(r":(?:py:)?(?:func|mod|class|meth|attr|data|obj|exc):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain_help(text: str | None) -> str | None:
    """Help text as a reader sees it: docstrings are reStructuredText, so their markup is
    turned into plain text here, once for every command and option: an RST literal (a word in
    double backticks) becomes the word in single backticks, as the hand-written help spells
    commands; a role such as ``:func:`~a.b``` becomes its target ``a.b``."""
    if not text:
        return text
    return _LITERAL.sub(r"`\1`", _ROLE.sub(r"\1", text))


def short_help(text: str | None) -> str | None:
    """The first paragraph of a docstring, on one line (the command list shows it whole)."""
    if not text:
        return None
    return " ".join(inspect.cleandoc(text).split("\n\n")[0].split())


def polish_command(cmd: click.Command) -> click.Command:
    """Apply this module's help conventions to one command (and its subcommands), in place."""
    cmd.context_class = PlainContext
    cmd.help = plain_help(cmd.help)
    cmd.epilog = plain_help(cmd.epilog)
    cmd.short_help = plain_help(cmd.short_help) if cmd.short_help is not None else short_help(cmd.help)
    for p in cmd.params:
        if getattr(p, "help", None):
            p.help = plain_help(p.help)  # type: ignore[attr-defined]
        if isinstance(p, TyperOption) and not isinstance(p, PlainOption):
            p.__class__ = PlainOption
        elif isinstance(p, TyperArgument) and not isinstance(p, PlainArgument):
            p.__class__ = PlainArgument
    if isinstance(cmd, TyperGroup):
        for sub in cmd.commands.values():
            polish_command(sub)
    return cmd


def message(exc: BaseException) -> str:
    """The text of an exception; a KeyError's message without the quotes ``str()`` adds."""
    if isinstance(exc, KeyError) and exc.args and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


def one_line(text: str) -> str:
    """``text`` with its lines joined (an error is one line on stderr)."""
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def error_line(exc: BaseException) -> str:
    """``error: <message>`` on one line (the message's lines joined; a ``KeyError``'s without
    the quotes ``str()`` adds), cut at :data:`mcpgym.kernel.shorten.MAX_MESSAGE_CHARS`."""
    return "error: " + cap_message(one_line(message(exc)))


class MCPGymGroup(TyperGroup):
    """The ``mcpgym`` click group: lists commands in the order they were defined and applies
    :func:`polish_command` to itself and every subcommand.

    It is also the one place where the commands' errors become exit codes: an
    :class:`~mcpgym.kernel.exceptions.MCPGymError` a command raises is printed as one line on
    stderr (:func:`error_line`) and ends the command with the error's ``exit_code`` (2 for bad
    input, 1 otherwise), with or without ``--debug`` (whose traceback is for unexpected errors).
    Commands catch only what they add context to.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.context_class = PlainContext
        self.help = plain_help(self.help)
        for sub in self.commands.values():
            polish_command(sub)
        for p in self.params:
            if isinstance(p, TyperOption):
                p.__class__ = PlainOption

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; an :class:`MCPGymError` ends it as one line and its exit code."""
        try:
            return super().invoke(ctx)
        except MCPGymError as exc:  # deliberate: one line even with --debug (kept for the unexpected)
            typer.secho(error_line(exc), fg=typer.colors.RED, err=True)
            raise typer.Exit(exc.exit_code) from None


__all__ = [
    "DEBUG",
    "MCPGymGroup",
    "PlainArgument",
    "PlainContext",
    "PlainFormatter",
    "PlainOption",
    "error_line",
    "message",
    "one_line",
    "metavar_for",
    "plain_help",
    "polish_command",
    "range_words",
    "short_help",
]
