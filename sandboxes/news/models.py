"""State and output models of the ``news`` app.

Times are virtual seconds since the Unix epoch (UTC); prices are integer cents (USD).
Seeded entities (sections, authors, articles) have stable ids; subscriptions are keyed by
their target (``section:tech``, ``author:p-003``) and bookmarks and history by article id, so
no dict of this app is keyed by a generated id.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from mcpgym.kernel.app import AppState
from mcpgym.kernel.volatile import VOLATILE

TargetKind = Literal["section", "author"]
Tier = Literal["free", "premium"]

PREMIUM_PERIOD = 30 * 86_400
"""Virtual seconds one premium subscription payment lasts (30 days)."""


# -- state ---------------------------------------------------------------------------------
class Section(BaseModel):
    """A news section.

    Attributes:
        section_id: short lowercase id (world, tech...).
        name: display name.
        description: what the section covers.
        premium_price_cents: price of a 30-day premium subscription to the section (cents).
    """

    section_id: str
    name: str
    description: str
    premium_price_cents: int


class Author(BaseModel):
    """A journalist: a person of the shared directory.

    Attributes:
        author_id: the person's directory id (p-007).
        name: the person's full name.
        email: the person's email.
        beats: section ids the author writes for.
        premium_price_cents: price of a 30-day premium subscription to the author (cents).
    """

    author_id: str
    name: str
    email: str
    beats: list[str]
    premium_price_cents: int


class Article(BaseModel):
    """A published article.

    Attributes:
        article_id: stable id art-NNN.
        title, summary, body: text.
        section: section id.
        author_id: the author's directory id; author_name: their name.
        published_at: publication time (virtual seconds).
        tags: lowercase tags.
        premium: readable in full only with an active premium subscription to the section or
            the author.
    """

    article_id: str
    title: str
    section: str
    author_id: str
    author_name: str
    published_at: int
    summary: str
    body: str
    tags: list[str]
    premium: bool


class Bookmark(BaseModel):
    """A bookmarked article with an optional note (added_at in virtual seconds)."""

    article_id: str
    note: str = ""
    added_at: Annotated[int, VOLATILE] = 0


class Subscription(BaseModel):
    """A subscription to a section or an author.

    Attributes:
        subscription_id: <target_kind>:<target_id>, e.g. section:tech.
        target_kind: section or author.
        target_id: section id or author (person) id.
        target_name: display name of the section or author.
        tier: free (follow: appears in the feed) or premium (also unlocks premium articles).
        price_cents: what the premium tier cost when bought (0 for free).
        started_at: when it started (virtual seconds).
        expires_at: end of the paid premium period (virtual seconds); None for free.
    """

    subscription_id: str
    target_kind: TargetKind
    target_id: str
    target_name: str
    tier: Tier
    price_cents: int = 0
    started_at: Annotated[int, VOLATILE] = 0
    expires_at: Annotated[int | None, VOLATILE] = None


class HistoryEntry(BaseModel):
    """One article in the read history.

    Attributes:
        article_id: the article read.
        read_count: how many times it was read (volatile: re-reading is harmless).
        last_read_at: last time it was read (virtual seconds).
    """

    article_id: str
    read_count: Annotated[int, VOLATILE] = 1
    last_read_at: Annotated[int, VOLATILE] = 0


class NewsState(AppState):
    """State of the news app (see the module docstring for keys)."""

    sections: dict[str, Section]
    authors: dict[str, Author]
    articles: dict[str, Article]
    bookmarks: dict[str, Bookmark] = Field(default_factory=dict)
    subscriptions: dict[str, Subscription] = Field(default_factory=dict)
    history: dict[str, HistoryEntry] = Field(default_factory=dict)


# -- outputs -------------------------------------------------------------------------------
class SectionInfo(BaseModel):
    """A section with its article count and premium price (cents)."""

    section_id: str
    name: str
    description: str
    article_count: int
    premium_price_cents: int


class SectionList(BaseModel):
    """Every section."""

    sections: list[SectionInfo]


class AuthorInfo(BaseModel):
    """An author with their sections, article count and premium price (cents)."""

    author_id: str
    name: str
    email: str
    beats: list[str]
    article_count: int
    premium_price_cents: int


class AuthorList(BaseModel):
    """Authors, by name."""

    authors: list[AuthorInfo]


class ArticleSummary(BaseModel):
    """An article without its body.

    accessible is false for a premium article the user cannot read yet (no active premium
    subscription to its section or author). published_at is virtual seconds;
    published_iso the same as ISO-8601 UTC.
    """

    article_id: str
    title: str
    section: str
    author_id: str
    author_name: str
    published_at: int
    published_iso: str
    summary: str
    tags: list[str]
    premium: bool
    accessible: bool
    bookmarked: bool


class ArticleList(BaseModel):
    """Articles (newest first unless a search ranks them), with the total before limit."""

    articles: list[ArticleSummary]
    total: int


class SearchHit(BaseModel):
    """One search result: the article and its relevance score (higher is better)."""

    article: ArticleSummary
    score: int


class SearchResults(BaseModel):
    """Search results, best first, with the number of matches before limit."""

    query: str
    results: list[SearchHit]
    total: int


class ArticleView(BaseModel):
    """A full article as read, with how often the user has read it."""

    article: ArticleSummary
    body: str
    read_count: int


class ArticleInfo(BaseModel):
    """An article's details without its body, and what it takes to read it."""

    article: ArticleSummary
    word_count: int
    unlock_options: list[str]


class BookmarkView(BaseModel):
    """A bookmark with its article."""

    article: ArticleSummary
    note: str
    added_iso: str


class BookmarkList(BaseModel):
    """Bookmarks, newest first."""

    bookmarks: list[BookmarkView]


class BookmarkResult(BaseModel):
    """Outcome of adding or removing a bookmark, and how many bookmarks remain."""

    article_id: str
    bookmarked: bool
    bookmark_count: int


class SubscriptionView(BaseModel):
    """A subscription as the user sees it (times as ISO-8601 UTC; active for premium means
    the paid period has not ended)."""

    subscription_id: str
    target_kind: TargetKind
    target_id: str
    target_name: str
    tier: Tier
    price_cents: int
    active: bool
    started_iso: str
    expires_iso: str | None


class SubscriptionList(BaseModel):
    """Subscriptions, by id."""

    subscriptions: list[SubscriptionView]


class SubscriptionResult(BaseModel):
    """A created, upgraded or cancelled subscription, with the amount charged (cents) and the
    wallet transaction id when money moved."""

    subscription: SubscriptionView
    charged_cents: int
    transaction_id: str | None
    cancelled: bool = False


class HistoryView(BaseModel):
    """One read-history entry."""

    article_id: str
    title: str
    section: str
    read_count: int
    last_read_iso: str


class HistoryList(BaseModel):
    """Read history, most recently read first."""

    history: list[HistoryView]
    total: int


class HistoryCleared(BaseModel):
    """How many history entries were removed and how many remain."""

    removed: int
    remaining: int


class TagCount(BaseModel):
    """A tag and how many articles carry it."""

    tag: str
    count: int


class TagList(BaseModel):
    """Tags, most used first."""

    tags: list[TagCount]
