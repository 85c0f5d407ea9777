"""Clock-derived state (issue 14): a write replayed at a shifted virtual clock must leave the
same comparable state, unless the field is VOLATILE or the tool declares ``time_dependent``."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel

from mcpgym.kernel.app import App, AppState, app_names, register_app, unregister_app
from mcpgym.kernel.spec import tool
from mcpgym.kernel.volatile import VOLATILE
from mcpgym.tools.conformance import check_clock_shift


@pytest.mark.parametrize("app", app_names())
def test_builtin_writes_do_not_depend_on_the_exact_clock(app: str) -> None:
    assert check_clock_shift(app) == []


class _Note(BaseModel):
    """A note."""

    text: str
    created_at: int


class _VolatileNote(BaseModel):
    """A note whose timestamp is marked volatile."""

    text: str
    created_at: Annotated[int, VOLATILE]


class _Saved(BaseModel):
    """How many notes there are."""

    count: int


def _stamping_app(note_model: type[BaseModel], time_dependent: str | None = None) -> type[App]:
    class StampState(AppState):
        """Notes with the virtual time they were written at."""

        notes: list[note_model] = []  # type: ignore[valid-type]

    class StampApp(App):
        """Stores the virtual time of every note it writes."""

        name = "stamp"
        title = "Stamp"
        State = StampState

        @classmethod
        def generate(cls, world):  # noqa: ANN001
            """No notes at first."""
            return StampState()

        @tool("write", ["stamp.notes"], time_dependent=time_dependent)
        def stamp_add_note(self, text: str) -> _Saved:
            """Store a note with the current virtual time (seconds)."""
            self.state.notes.append(note_model(text=text, created_at=self.world.clock.now))
            return _Saved(count=len(self.state.notes))

    return StampApp


@pytest.fixture()
def register():
    registered: list[str] = []

    def add(cls: type[App]) -> str:
        register_app(cls)
        registered.append(cls.name)
        return cls.name

    yield add
    for name in registered:
        unregister_app(name)


def test_a_time_stamping_app_fails_until_its_field_is_volatile(register) -> None:
    name = register(_stamping_app(_Note))
    problems = check_clock_shift(name)
    assert len(problems) == 1, problems
    assert problems[0].startswith("stamp_add_note(")
    assert "state.stamp.notes[0].created_at: 1780304440 vs 1780304447" in problems[0]
    assert "7 s later" in problems[0] and "mark the field VOLATILE" in problems[0]
    unregister_app(name)
    name = register(_stamping_app(_VolatileNote))
    assert check_clock_shift(name) == []


def test_a_declared_time_dependent_tool_is_skipped_and_shown_in_the_catalog(register) -> None:
    name = register(_stamping_app(_Note, time_dependent="the note keeps the oracle's clock: compare texts only"))
    assert check_clock_shift(name) == []
    from mcpgym.kernel.app import get_app

    entry = get_app(name).tools["stamp_add_note"].catalog_entry()
    assert entry["time_dependent"] == "the note keeps the oracle's clock: compare texts only"
