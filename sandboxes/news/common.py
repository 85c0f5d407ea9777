"""Shared helpers of the news tool mixins: lookups, premium access, views.

:class:`NewsBase` is the common base of :mod:`mcpgym.sandboxes.news.articles`,
:mod:`mcpgym.sandboxes.news.account` and the app class.
"""

from __future__ import annotations

from mcpgym.kernel.app import App
from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.sandboxes.news.models import Article, ArticleSummary, NewsState, Subscription, SubscriptionView


class NewsBase(App):
    """Common base of the news mixins: typed state and helpers (no tools)."""

    state: NewsState

    def _article(self, article_id: str) -> Article:
        art = self.state.articles.get(article_id)
        if art is None:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"no article {article_id!r}; find ids with news_search_articles or news_list_latest",
                field="article_id",
            )
        return art

    def _section_id(self, section: str, field: str = "section") -> str:
        key = section.strip().lower()
        if key in self.state.sections:
            return key
        for sec in self.state.sections.values():
            if sec.name.lower() == key:
                return sec.section_id
        raise ToolError(
            ErrorCode.NOT_FOUND, f"no section {section!r}; sections: {', '.join(self.state.sections)}", field=field
        )

    def _author_id(self, author: str, field: str = "author") -> str:
        key = author.strip().lower()
        if key in self.state.authors:
            return key
        exact = [a.author_id for a in self.state.authors.values() if a.name.lower() == key]
        if exact:
            return exact[0]
        partial = sorted(a.author_id for a in self.state.authors.values() if key and key in a.name.lower())
        if len(partial) == 1:
            return partial[0]
        if len(partial) > 1:
            names = ", ".join(self.state.authors[a].name for a in partial)
            raise ToolError(ErrorCode.INVALID_ARGUMENT, f"author {author!r} is ambiguous: {names}", field=field)
        raise ToolError(ErrorCode.NOT_FOUND, f"no author {author!r}; see news_list_authors", field=field)

    def _premium_active(self, sub: Subscription) -> bool:
        return sub.tier == "premium" and (sub.expires_at is None or sub.expires_at > self.now)

    def _accessible(self, art: Article) -> bool:
        if not art.premium:
            return True
        for key in (f"section:{art.section}", f"author:{art.author_id}"):
            sub = self.state.subscriptions.get(key)
            if sub is not None and self._premium_active(sub):
                return True
        return False

    def _summary(self, art: Article) -> ArticleSummary:
        return ArticleSummary(
            article_id=art.article_id,
            title=art.title,
            section=art.section,
            author_id=art.author_id,
            author_name=art.author_name,
            published_at=art.published_at,
            published_iso=iso(art.published_at),
            summary=art.summary,
            tags=list(art.tags),
            premium=art.premium,
            accessible=self._accessible(art),
            bookmarked=art.article_id in self.state.bookmarks,
        )

    def _newest(self, arts: list[Article]) -> list[Article]:
        return sorted(arts, key=lambda a: (-a.published_at, a.article_id))

    def _sub_view(self, sub: Subscription) -> SubscriptionView:
        active = self._premium_active(sub) if sub.tier == "premium" else True
        return SubscriptionView(
            subscription_id=sub.subscription_id,
            target_kind=sub.target_kind,
            target_id=sub.target_id,
            target_name=sub.target_name,
            tier=sub.tier,
            price_cents=sub.price_cents,
            active=active,
            started_iso=iso(sub.started_at),
            expires_iso=None if sub.expires_at is None else iso(sub.expires_at),
        )

    def _unlock_options(self, art: Article) -> list[str]:
        if self._accessible(art):
            return []
        sec = self.state.sections[art.section]
        opts = [f"premium subscription to section {sec.section_id} ({sec.premium_price_cents} cents / 30 days)"]
        author = self.state.authors.get(art.author_id)
        if author is not None:
            opts.append(
                f"premium subscription to author {author.author_id} {author.name} "
                f"({author.premium_price_cents} cents / 30 days)"
            )
        return opts
