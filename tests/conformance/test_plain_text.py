"""Tool descriptions and schema texts are plain text a model reads well (no RST or Markdown markup)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from mcpgym.kernel.app import App, AppState, app_names, register_app, unregister_app
from mcpgym.kernel.spec import tool
from mcpgym.tools.conformance.metadata import check_metadata, check_plain_text, markup_problems


class _State(AppState):
    """State of the markup app."""

    count: int = 0


class _View(BaseModel):
    """The count, **bold** in a docstring a schema carries."""

    count: int = Field(description="units, as in ``count``")


class _MarkupApp(App):
    """An app whose tool texts carry markup."""

    name = "markup"
    title = "Markup"
    State = _State

    @classmethod
    def generate(cls, world):  # noqa: ANN001
        """Deterministic state from the seed."""
        return _State()

    @tool("write", ["markup.count"])
    def markup_add(self, quantity: int = Field(1, description="how many; see :data:`LIMIT`")) -> _View:
        """Add ``quantity`` units to the count (plain elsewhere)."""
        self.state.count += quantity
        return _View(count=self.state.count)

    @tool("read", ["markup.count"])
    def markup_get(self) -> _View:
        """Return the count of units added so far, as a number."""
        return _View(count=self.state.count)


@pytest.fixture()
def markup_app():
    """_MarkupApp registered (its tool specs built) for one test."""
    register_app(_MarkupApp)
    try:
        yield _MarkupApp
    finally:
        unregister_app("markup")


def test_markup_in_descriptions_and_schemas_is_reported_where_it_is(markup_app):
    problems = check_plain_text(markup_app)
    assert any(
        p.startswith("markup.markup_add description: reStructuredText literal") and "Add ``quantity``" in p
        for p in problems
    ), problems
    assert any(
        p.startswith("markup.markup_add input schema /properties/quantity/description: reStructuredText role")
        for p in problems
    ), problems
    for tool_name in ("markup_add", "markup_get"):  # both return _View: its texts are checked for each tool
        assert any(p.startswith(f"markup.{tool_name} output schema /description: bold") for p in problems), problems
        assert any(
            p.startswith(f"markup.{tool_name} output schema /properties/count/description: reStructuredText literal")
            for p in problems
        ), problems
    assert not any("markup_get description" in p for p in problems)  # its own description is plain
    assert set(problems) <= set(check_metadata(markup_app))  # part of the metadata conformance check


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("Plain text: ids like shop-01, rates 1-5, a*b and 3 * 4.", []),
        ("Use ``x``.", ["literal"]),
        ("See :func:`f` and `Link`_.", ["role", "link", "backtick"]),
        (".. note:: careful", ["directive"]),
        ("A `code` span and **bold**.", ["backtick", "bold"]),
    ],
)
def test_markup_kinds(text, kinds):
    found = markup_problems(text, "t")
    for kind in kinds:
        assert any(kind in p for p in found), (kind, found)
    if not kinds:
        assert found == []


@pytest.mark.parametrize("app", app_names())
def test_every_registered_app_has_plain_tool_texts(app):
    assert check_plain_text(app) == []
