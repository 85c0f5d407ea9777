"""Article tools of the news app: sections, authors, latest, details, full reading (which
records the read history), keyword search and its alternative, filtering by author or tag."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field

from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.news.common import NewsBase
from mcpgym.sandboxes.news.models import (
    Article,
    ArticleInfo,
    ArticleList,
    ArticleView,
    AuthorInfo,
    AuthorList,
    HistoryEntry,
    SearchHit,
    SearchResults,
    SectionInfo,
    SectionList,
    TagCount,
    TagList,
)

STOPWORDS = frozenset({"a", "an", "the", "of", "in", "on", "for", "and", "to", "at", "by", "with", "is", "about"})
FIELD_WEIGHTS = (("title", 5), ("tags", 4), ("author", 3), ("section", 3), ("summary", 2), ("body", 1))
"""Search score per article field in which a query term occurs (summed over terms)."""

Limit = Annotated[int, Field(ge=1, le=100, description="most results to return (1-100)")]
ArticleId = Annotated[str, Field(description="article id, e.g. art-012")]


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


class ArticleTools(NewsBase):
    """Mixin: browsing, reading and searching articles."""

    # -- browsing --------------------------------------------------------------------------
    @tool("read", ["news.section"])
    def news_list_sections(self) -> SectionList:
        """List the news sections (world, business, tech, sport, science, culture, health, travel)
        with their article counts and the price of a 30-day premium subscription, in cents."""
        counts: dict[str, int] = {}
        for art in self.state.articles.values():
            counts[art.section] = counts.get(art.section, 0) + 1
        return SectionList(
            sections=[
                SectionInfo(
                    section_id=s.section_id,
                    name=s.name,
                    description=s.description,
                    article_count=counts.get(s.section_id, 0),
                    premium_price_cents=s.premium_price_cents,
                )
                for s in self.state.sections.values()
            ]
        )

    @tool("read", ["news.author"])
    def news_list_authors(
        self,
        section: Annotated[str | None, Field(description="only authors writing for this section id")] = None,
    ) -> AuthorList:
        """List the journalists (people of the shared directory) with their sections, article
        counts and the price of a 30-day premium subscription to them, in cents."""
        sid = None if section is None else self._section_id(section)
        counts: dict[str, int] = {}
        for art in self.state.articles.values():
            counts[art.author_id] = counts.get(art.author_id, 0) + 1
        authors = sorted(self.state.authors.values(), key=lambda a: (a.name, a.author_id))
        return AuthorList(
            authors=[
                AuthorInfo(
                    author_id=a.author_id,
                    name=a.name,
                    email=a.email,
                    beats=list(a.beats),
                    article_count=counts.get(a.author_id, 0),
                    premium_price_cents=a.premium_price_cents,
                )
                for a in authors
                if sid is None or sid in a.beats
            ]
        )

    @tool(
        "read", ["news.article"], alternatives=["news_filter_articles"], remedies={"not_found": ["news_list_sections"]}
    )
    def news_list_latest(
        self,
        section: Annotated[str | None, Field(description="section id, e.g. tech; omit for every section")] = None,
        limit: Limit = 10,
        free_only: Annotated[bool, Field(description="skip premium articles")] = False,
    ) -> ArticleList:
        """List the latest articles, newest first, optionally of one section. Returns summaries
        without bodies; publication times are virtual seconds and ISO-8601 UTC."""
        sid = None if section is None else self._section_id(section)
        arts = [
            a
            for a in self.state.articles.values()
            if (sid is None or a.section == sid) and not (free_only and a.premium)
        ]
        arts = self._newest(arts)
        return ArticleList(articles=[self._summary(a) for a in arts[:limit]], total=len(arts))

    @tool(
        "read",
        ["news.article", "news.subscription"],
        remedies={"not_found": ["news_search_articles", "news_list_latest"]},
    )
    def news_get_article(self, article_id: ArticleId) -> ArticleInfo:
        """Show an article's details without its body: title, section, author, date, tags,
        premium flag, whether the user can read it, and how to unlock it if not. Does not touch
        the read history."""
        art = self._article(article_id)
        return ArticleInfo(
            article=self._summary(art), word_count=len(art.body.split()), unlock_options=self._unlock_options(art)
        )

    @tool(
        "write",
        ["news.article", "news.history"],
        preconditions=["news.subscription"],
        remedies={
            "precondition_failed": ["news_add_subscription"],
            "not_found": ["news_search_articles", "news_list_latest"],
        },
    )
    def news_read_article(self, article_id: ArticleId) -> ArticleView:
        """Read an article in full (title, body, metadata) and record it in the read history.

        Premium articles need an active premium subscription to the article's section or
        author; otherwise the error is precondition_failed and news_add_subscription (tier
        premium) unlocks it.
        """
        art = self._article(article_id)
        if not self._accessible(art):
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"{article_id} is a premium article: subscribe (tier premium) to section {art.section!r} or author "
                f"{art.author_id!r} with news_add_subscription first",
                field="article_id",
                details={"section": art.section, "author_id": art.author_id, "options": self._unlock_options(art)},
            )
        entry = self.state.history.get(article_id)
        if entry is None:
            entry = HistoryEntry(article_id=article_id, read_count=0, last_read_at=self.now)
            self.state.history[article_id] = entry
        entry.read_count += 1
        entry.last_read_at = self.now
        return ArticleView(article=self._summary(art), body=art.body, read_count=entry.read_count)

    # -- search ----------------------------------------------------------------------------
    @tool(
        "read", ["news.article"], alternatives=["news_filter_articles"], remedies={"not_found": ["news_list_sections"]}
    )
    def news_search_articles(
        self,
        query: Annotated[str, Field(min_length=1, max_length=200, description="keywords; every keyword must match")],
        section: Annotated[str | None, Field(description="restrict to this section id")] = None,
        limit: Limit = 10,
    ) -> SearchResults:
        """Keyword search over titles, tags, author names, sections, summaries and bodies.

        Every keyword must occur (as a word or word prefix, case-insensitive); results are
        ranked by relevance (title matches weigh most), then newest first.
        """
        terms = [t for t in _tokens(query) if t not in STOPWORDS]
        if not terms:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, "the query needs at least one keyword (letters or digits)", field="query"
            )
        sid = None if section is None else self._section_id(section)
        hits: list[tuple[int, Article]] = []
        for art in self.state.articles.values():
            if sid is not None and art.section != sid:
                continue
            fields = {
                "title": _tokens(art.title),
                "tags": _tokens(" ".join(art.tags)),
                "author": _tokens(art.author_name),
                "section": _tokens(f"{art.section} {self.state.sections[art.section].name}"),
                "summary": _tokens(art.summary),
                "body": _tokens(art.body),
            }
            score = 0
            for term in terms:
                term_score = sum(w for f, w in FIELD_WEIGHTS if any(tok.startswith(term) for tok in fields[f]))
                if term_score == 0:
                    break
                score += term_score
            else:
                hits.append((score, art))
        hits.sort(key=lambda h: (-h[0], -h[1].published_at, h[1].article_id))
        return SearchResults(
            query=query,
            total=len(hits),
            results=[SearchHit(article=self._summary(a), score=s) for s, a in hits[:limit]],
        )

    @tool(
        "read",
        ["news.article"],
        alternatives=["news_search_articles", "news_list_latest"],
        remedies={"not_found": ["news_list_authors", "news_list_tags", "news_list_sections"]},
    )
    def news_filter_articles(
        self,
        author: Annotated[str | None, Field(description="author id (p-007) or name")] = None,
        tag: Annotated[str | None, Field(description="exact tag, e.g. privacy")] = None,
        section: Annotated[str | None, Field(description="section id")] = None,
        limit: Limit = 20,
    ) -> ArticleList:
        """Find articles by author and/or tag (and optionally section), newest first. At least
        one of author or tag is required. An alternative to keyword search."""
        if author is None and tag is None:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "give an author or a tag (or both)", field="author")
        aid = None if author is None else self._author_id(author)
        wanted = None if tag is None else tag.strip().lower()
        if wanted is not None and not any(wanted in a.tags for a in self.state.articles.values()):
            raise ToolError(ErrorCode.NOT_FOUND, f"no article is tagged {tag!r}; see news_list_tags", field="tag")
        sid = None if section is None else self._section_id(section)
        arts = [
            a
            for a in self.state.articles.values()
            if (aid is None or a.author_id == aid)
            and (wanted is None or wanted in a.tags)
            and (sid is None or a.section == sid)
        ]
        arts = self._newest(arts)
        return ArticleList(articles=[self._summary(a) for a in arts[:limit]], total=len(arts))

    @tool("read", ["news.article"])
    def news_list_tags(
        self, limit: Annotated[int, Field(ge=1, le=500, description="most tags to return")] = 50
    ) -> TagList:
        """List article tags with how many articles carry each, most used first."""
        counts: dict[str, int] = {}
        for art in self.state.articles.values():
            for t in art.tags:
                counts[t] = counts.get(t, 0) + 1
        ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return TagList(tags=[TagCount(tag=t, count=c) for t, c in ordered[:limit]])

    @tool("read", ["news.article", "news.subscription"])
    def news_list_feed(self, limit: Limit = 20) -> ArticleList:
        """List the newest articles from the sections and authors the user subscribes to (free
        or premium), newest first."""
        sections = {s.target_id for s in self.state.subscriptions.values() if s.target_kind == "section"}
        authors = {s.target_id for s in self.state.subscriptions.values() if s.target_kind == "author"}
        arts = self._newest(
            [a for a in self.state.articles.values() if a.section in sections or a.author_id in authors]
        )
        return ArticleList(articles=[self._summary(a) for a in arts[:limit]], total=len(arts))
