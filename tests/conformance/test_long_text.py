"""The conformance fuzzer reaches every string length a tool accepts, and all of unicode.

A plugin tool that breaks past some length, or on non-ASCII text, must fail the suite: the
hostile 12 000-character value is refused by the 10 000-character limit before any tool runs,
so only valid long strings can show such a bug. The apps here are throwaway plugins
registered for one test (as ``check_app`` does; no ``from __future__ import annotations``
here: the tool's ``max_length`` is a closure variable its annotation reads) whose ``notes_add_note`` raises a plain
``ValueError`` (an internal error) on the text that breaks it.
"""

from collections.abc import Callable, Iterator
from typing import Annotated

import pytest
from hypothesis import given, settings
from pydantic import BaseModel, Field

from mcpgym import AppCheckError, check_app
from mcpgym.kernel.app import App, AppState, register_app, unregister_app
from mcpgym.kernel.spec import MAX_STRING, tool
from mcpgym.tools.conformance import check_tool_fuzz
from mcpgym.tools.conformance.args import text_strategy


class _Notes(AppState):
    """The user's notes, oldest first."""

    notes: list[str] = Field(default_factory=list)


class _NoteList(BaseModel):
    """Every note of the user, oldest first."""

    notes: list[str]


def _notes_app(breaks: Callable[[str], bool], max_length: int | None = None) -> type[App]:
    """A notes app whose add tool raises ValueError when ``breaks(text)`` (an internal error)."""

    class NotesApp(App):
        """Notes the user keeps."""

        name, title, State, version = "notes", "Notes", _Notes, "1.0.0"

        @classmethod
        def generate(cls, world) -> _Notes:  # noqa: ANN001
            """One note drawn from the world seed."""
            return _Notes(notes=[cls.stream(world, "initial").choice(["buy milk", "call Ada"])])

        @tool("read", ["notes.note"])
        def notes_list_notes(self) -> _NoteList:
            """List every note of the user, oldest first."""
            return _NoteList(notes=list(self.state.notes))

        @tool("write", ["notes.note"], alternatives=[])
        def notes_add_note(
            self, text: Annotated[str, Field(description="the note's text", max_length=max_length)]
        ) -> _NoteList:
            """Add a note with the given text and return the note list."""
            if breaks(text):
                raise ValueError("cannot take this text")
            self.state.notes.append(text)
            return self.notes_list_notes()

    return NotesApp


@pytest.fixture()
def registered() -> Iterator[Callable[[type[App]], str]]:
    names: list[str] = []

    def register(cls: type[App]) -> str:
        register_app(cls)
        names.append(cls.name)
        return cls.name

    yield register
    for name in names:
        unregister_app(name)


BREAKS = {
    "over 50 characters": lambda text: len(text) > 50,
    "at the 10 000-character limit": lambda text: len(text) >= MAX_STRING,
    "non-ASCII text": lambda text: not text.isascii(),
}


@pytest.mark.parametrize("what", sorted(BREAKS))
def test_a_tool_breaking_on_long_or_unicode_text_fails_the_fuzz_check(registered, what):
    app = registered(_notes_app(BREAKS[what]))
    generated, fixed = check_tool_fuzz(app, "notes_add_note", max_examples=15)
    # the first from hypothesis (shrunk), the second from the hostile and long-text calls
    for problem in (generated, fixed):
        assert problem.startswith("notes: notes_add_note("), problem
        assert "raised a non-tool error" in problem and "ValueError: cannot take this text" in problem
        assert len(problem) < 1_000  # the long argument is shortened in the message
    # hypothesis alone reaches it too
    assert check_tool_fuzz(app, "notes_add_note", max_examples=15, hostile=False) == [generated]


def test_check_app_refuses_the_plugin_that_crashes_past_50_characters(registered):
    cls = _notes_app(lambda text: len(text) > 50)
    with pytest.raises(AppCheckError) as caught:
        check_app(cls, max_examples=5, cross_process=False)
    assert set(caught.value.problems) == {"tool_fuzz"}, caught.value.problems
    for problem in caught.value.problems["tool_fuzz"]:
        assert "notes_add_note(" in problem and "ValueError: cannot take this text" in problem
    # the same app without the bug conforms: the long strings are within what it accepts
    assert not any(check_app(_notes_app(lambda text: False), max_examples=5, cross_process=False).values())


def test_a_tool_may_break_past_its_own_declared_limit(registered):
    """Strings longer than a tool's ``max_length`` are refused before it runs: no problem; at the
    limit itself it must work."""
    fine = registered(_notes_app(lambda text: len(text) > 200, max_length=200))
    assert check_tool_fuzz(fine, "notes_add_note", max_examples=15) == []
    unregister_app(fine)
    broken = registered(_notes_app(lambda text: len(text) >= 200, max_length=200))
    assert check_tool_fuzz(broken, "notes_add_note", max_examples=15)


@pytest.mark.parametrize(("lo", "hi"), [(0, MAX_STRING), (1, 200), (40, 40), (0, 12)])
def test_generated_strings_cover_the_accepted_range(lo, hi):
    drawn: list[str] = []

    @settings(max_examples=120, derandomize=True, database=None, deadline=None)
    @given(text=text_strategy(lo, hi))
    def draw(text: str) -> None:
        drawn.append(text)

    draw()
    lengths = [len(t) for t in drawn]
    assert min(lengths) >= lo and max(lengths) == hi
    assert any(not t.isascii() for t in drawn)
    if hi >= 500:
        assert any(50 <= n <= 500 for n in lengths) and any(500 < n < hi - 2 for n in lengths)
        assert sum(n <= 30 for n in lengths) >= len(lengths) // 5  # short strings stay common
    elif hi > 30:
        assert any(31 <= n <= hi for n in lengths) and (lo > 30 or any(n <= 30 for n in lengths))
