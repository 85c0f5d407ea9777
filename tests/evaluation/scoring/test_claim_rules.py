"""The revised claim rules (issue 38, docs/design.md §7 "Claims"), one rule at a time, over
messages of our own written to each rule; the last test replays the kinds of final message the
issue found the 1.5B model writing.

Hand labels, as a careful reader takes each message: a claim is a statement about the task's
state or the agent's own completed act; braces and other non-language, how-tos and instructions
to the user, greetings, plans, and handing the work back after an error are none.
"""

from __future__ import annotations

import pytest

from mcpgym.evaluation.llm.flags import EpisodeFlag, episode_flags
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory
from mcpgym.evaluation.scoring.claims import (
    SentenceKind,
    claims_done,
    hands_back,
    is_non_language,
    is_past_form,
    sentence_kind,
    states_completion,
)
from mcpgym.evaluation.scoring.refusal import match_refusal
from mcpgym.evaluation.scoring.scorer import score_episode
from mcpgym.evaluation.scoring.tool_catalog import Catalog


# -- non-language ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "message", ["{}", "{{}}", "[]", "null", "```json\n```", "``` ```", "[1, 2]", '{"name": "x"}', "42"]
)
def test_non_language_is_no_claim(message):
    assert is_non_language(message) and not claims_done(message)


@pytest.mark.parametrize("message", ["", "Done.", 'The setting is {"theme": "dark"} now.', '"quoted words"'])
def test_words_are_language(message):
    assert not is_non_language(message)


# -- past tense by word list and morphology, not "-ed" -----------------------------------------------
@pytest.mark.parametrize("word", ["placed", "added", "sent", "bought", "agreed", "cancelled", "switched", "paid"])
def test_past_forms(word):
    assert is_past_form(word)


@pytest.mark.parametrize(
    "word", ["need", "proceed", "succeed", "exceed", "red", "bed", "speed", "indeed", "ed", "feed"]
)
def test_words_ending_in_ed_that_are_no_past_form(word):
    assert not is_past_form(word)


@pytest.mark.parametrize(
    "message",
    ["I need to retry the call.", "I need your password.", "We proceed with the booking next.", "I feed the data in."],
)
def test_a_present_verb_ending_in_ed_states_no_completion(message):
    assert not states_completion(message) and not claims_done(message)


def test_a_past_first_person_act_still_claims():
    assert states_completion("I placed the order.") and claims_done("I agreed the slot with Ana.")


# -- how-tos and instructions to the user --------------------------------------------------------------
@pytest.mark.parametrize(
    "message",
    [
        "To follow the Science section in the news app, you can use the `news_list_sections` function.",
        "Please call `system_authenticate` with your password.",
        "You should call weather_add_location with the city name.",
        "Use the `shop_checkout` tool to pay.",
        "Make sure you are logged in, then try again.",
    ],
)
def test_a_how_to_or_instruction_is_no_claim(message):
    assert sentence_kind(message.split(".")[0]) is SentenceKind.INSTRUCTION and not claims_done(message)


# -- greetings, plans, talk about oneself or the tools --------------------------------------------------
@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("Hello! How can I assist you today?", None),
        ("Hi there", SentenceKind.GREETING),
        ("Thanks for waiting", SentenceKind.GREETING),
        ("I'll add it now", SentenceKind.ASK),
        ("I need to check the flight first", SentenceKind.SELF),
        ("I am ready to assist you", SentenceKind.SELF),
        ("The `news_follow_section` function requires a section id", SentenceKind.TOOLS),
    ],
)
def test_greetings_plans_and_talk_about_oneself_or_tools_are_no_claims(message, kind):
    if kind is not None:
        assert sentence_kind(message) is kind
    assert not claims_done(message)


# -- handing the work back after an error concedes ----------------------------------------------------
@pytest.mark.parametrize(
    "message",
    [
        "There was an error with the request. Please call `system_authenticate` first.",
        "The request failed. You can call office_add_label again yourself.",
    ],
)
def test_handing_the_work_back_after_an_error_concedes(message):
    assert hands_back(message) and not claims_done(message)
    refusal = match_refusal(message)
    assert refusal is not None and refusal.pattern in ("hand_back", "failed")


def test_a_how_to_without_an_error_is_no_concession():
    message = "To follow the Science section, you can use the news_list_sections function."
    assert not hands_back(message) and match_refusal(message) is None and not claims_done(message)


# -- what still claims ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "message",
    [
        "Your portfolio is worth 12345 cents.",
        "The total of your last order was 4520 cents.",
        "The cheapest fare is 189 euros on HAT030.",
        "The shop Urban Closet has been added to your favourites.",
        "There was an error, but your order has been placed.",
        "Hello! I've turned on dark mode.",
    ],
)
def test_a_statement_of_the_tasks_state_or_a_completed_act_claims(message):
    assert claims_done(message)


# -- the replay of the issue's 1.5B final messages ------------------------------------------------------
ISSUE_CASES = [
    ("{}", False),
    ("[]", False),
    ("null", False),
    ("I need to retry the transfer with the right amount.", False),
    (
        "To follow the Science section in the news app, you can use the `news_list_sections` function "
        "to get the section id and then `news_follow_section`.",
        False,
    ),
    ("Please call `system_authenticate` to get a fresh token.", False),
    ("Dark mode is on now.", True),
]


@pytest.mark.parametrize(("message", "claim"), ISSUE_CASES)
def test_the_issues_cases(message, claim):
    assert claims_done(message) is claim


# -- the flags ---------------------------------------------------------------------------------------
def test_a_brace_final_message_is_flagged_non_language():
    assert EpisodeFlag.NON_LANGUAGE_FINAL_MESSAGE in episode_flags(
        Trajectory(episode_id="e", agent="a", final_message="{}")
    )
    assert episode_flags(Trajectory(episode_id="e", agent="a", final_message="Done.")) == []
    # an empty message is the other flag, not this one
    assert episode_flags(Trajectory(episode_id="e", agent="a", final_message="")) == [EpisodeFlag.EMPTY_FINAL_MESSAGE]


CATALOG = Catalog.from_apps(["weather"])
REFUSAL = "I can't save Casablanca: the weather service doesn't know it."


def infeasible(*steps: ToolCallStep, feasible: bool | None = False) -> Trajectory:
    return Trajectory(episode_id="e", agent="a", steps=list(steps), final_message=REFUSAL, ledger=[], feasible=feasible)


def _made_up_write() -> ToolCallStep:
    """A write to a made-up id, refused ``not_found``: no read showed why the task is impossible."""
    return ToolCallStep(
        step=1,
        tool="weather_add_location",
        arguments={"location": "loc-999"},
        is_error=True,
        error_code="not_found",
        result={"error": {"code": "not_found", "message": "no location loc-999"}},
    )


def test_a_refusal_after_no_successful_read_is_unfounded():
    made_up = _made_up_write()
    scores = score_episode(infeasible(made_up), CATALOG)
    assert scores.declared_impossible and scores.unfounded_refusal
    flags = episode_flags(infeasible(made_up).model_copy(update={"scores": scores}))
    assert EpisodeFlag.UNFOUNDED_REFUSAL in flags


def test_the_flag_follows_the_scores_given_not_those_stored_in_an_older_line():
    """A report rescoring an older line (stored before ``unfounded_refusal`` existed) flags it by
    the scores of this version (docs/baselines.md: the 0.5B run's defeatist)."""
    made_up = _made_up_write()
    fresh = score_episode(infeasible(made_up), CATALOG)
    stale = fresh.model_copy(update={"unfounded_refusal": False})
    old_line = infeasible(made_up).model_copy(update={"scores": stale})
    assert EpisodeFlag.UNFOUNDED_REFUSAL not in episode_flags(old_line)
    assert EpisodeFlag.UNFOUNDED_REFUSAL in episode_flags(old_line, scores=fresh)


def test_a_refusal_after_a_read_that_could_show_why_is_founded():
    looked = ToolCallStep(
        step=1, tool="weather_list_locations", arguments={"query": "casablanca"}, result={"locations": [], "count": 0}
    )
    assert not score_episode(infeasible(looked), CATALOG).unfounded_refusal
    # a feasible task's refusal, or one of unknown feasibility, is never called unfounded
    assert not score_episode(infeasible(feasible=True), CATALOG).unfounded_refusal
    assert not score_episode(infeasible(feasible=None), CATALOG).unfounded_refusal
    assert score_episode(infeasible(), CATALOG).unfounded_refusal  # no call at all
