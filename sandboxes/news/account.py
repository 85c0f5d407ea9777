"""Account tools of the news app: bookmarks, free and premium subscriptions (premium needs
the ``news.subscriptions`` privilege and a one-use payment authorisation), read history."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.news.articles import ArticleId, Limit
from mcpgym.sandboxes.news.common import NewsBase
from mcpgym.sandboxes.news.models import (
    PREMIUM_PERIOD,
    Bookmark,
    BookmarkList,
    BookmarkResult,
    BookmarkView,
    HistoryCleared,
    HistoryList,
    HistoryView,
    Subscription,
    SubscriptionList,
    SubscriptionResult,
)

PRIVILEGE = "news.subscriptions"


class AccountTools(NewsBase):
    """Mixin: bookmarks, subscriptions and read history."""

    # -- bookmarks -------------------------------------------------------------------------
    @tool("write", ["news.bookmark"], remedies={"not_found": ["news_search_articles"]})
    def news_add_bookmark(
        self,
        article_id: ArticleId,
        note: Annotated[str, Field(max_length=500, description="optional note")] = "",
    ) -> BookmarkResult:
        """Bookmark an article (premium articles may be bookmarked without a subscription).

        Errors: conflict when it is already bookmarked.
        """
        self._article(article_id)
        if article_id in self.state.bookmarks:
            raise ToolError(ErrorCode.CONFLICT, f"{article_id} is already bookmarked", field="article_id")
        self.state.bookmarks[article_id] = Bookmark(article_id=article_id, note=note.strip(), added_at=self.now)
        return BookmarkResult(article_id=article_id, bookmarked=True, bookmark_count=len(self.state.bookmarks))

    @tool("write", ["news.bookmark"], remedies={"not_found": ["news_list_bookmarks"]}, destructive=True)
    def news_remove_bookmark(self, article_id: ArticleId) -> BookmarkResult:
        """Remove an article from the bookmarks. Errors: not_found when it is not bookmarked."""
        if self.state.bookmarks.pop(article_id, None) is None:
            raise ToolError(
                ErrorCode.NOT_FOUND, f"{article_id!r} is not bookmarked; see news_list_bookmarks", field="article_id"
            )
        return BookmarkResult(article_id=article_id, bookmarked=False, bookmark_count=len(self.state.bookmarks))

    @tool("read", ["news.bookmark"])
    def news_list_bookmarks(self) -> BookmarkList:
        """List bookmarked articles with their notes, most recently bookmarked first."""
        marks = sorted(self.state.bookmarks.values(), key=lambda b: (-b.added_at, b.article_id))
        return BookmarkList(
            bookmarks=[
                BookmarkView(
                    article=self._summary(self.state.articles[b.article_id]), note=b.note, added_iso=iso(b.added_at)
                )
                for b in marks
                if b.article_id in self.state.articles
            ]
        )

    # -- subscriptions ---------------------------------------------------------------------
    @tool(
        "write",
        ["news.subscription"],
        preconditions=["news.subscription", "system.privilege", "wallet.balance", "system.payment_auth"],
        remedies={
            "permission_denied": ["system_request_privilege"],
            "precondition_failed": ["system_authorize_payment", "system_transfer_from_savings"],
            "not_found": ["news_list_sections", "news_list_authors", "system_authorize_payment"],
        },
        id_args=["target_id"],
    )
    def news_add_subscription(
        self,
        target_kind: Annotated[Literal["section", "author"], Field(description="subscribe to a section or an author")],
        target_id: Annotated[str, Field(description="section id (e.g. tech) or author id (e.g. p-007)")],
        tier: Annotated[
            Literal["free", "premium"],
            Field(description="free follows; premium also unlocks premium articles for 30 days"),
        ] = "free",
        authorization_id: Annotated[
            str | None, Field(description="for premium: a payment authorisation id from system_authorize_payment")
        ] = None,
    ) -> SubscriptionResult:
        """Subscribe to a section or an author. Free subscriptions cost nothing and fill the feed.

        A premium subscription unlocks that section's or author's premium articles for 30
        virtual days. It needs the news.subscriptions privilege (permission_denied ->
        system_request_privilege) and charges exactly the listed premium price (cents; see
        news_list_sections / news_list_authors) through a one-use payment authorisation
        (system_authorize_payment). A free subscription can be upgraded to premium.
        Errors: conflict when already subscribed at that tier.
        """
        if target_kind == "section":
            tid = self._section_id(target_id, "target_id")
            name = self.state.sections[tid].name
            price = self.state.sections[tid].premium_price_cents
        else:
            tid = self._author_id(target_id, "target_id")
            name = self.state.authors[tid].name
            price = self.state.authors[tid].premium_price_cents
        key = f"{target_kind}:{tid}"
        existing = self.state.subscriptions.get(key)
        if tier == "free":
            if existing is not None:
                raise ToolError(ErrorCode.CONFLICT, f"already subscribed to {key} ({existing.tier})", field="target_id")
            sub = Subscription(
                subscription_id=key,
                target_kind=target_kind,
                target_id=tid,
                target_name=name,
                tier="free",
                started_at=self.now,
            )
            self.state.subscriptions[key] = sub
            return SubscriptionResult(subscription=self._sub_view(sub), charged_cents=0, transaction_id=None)
        if existing is not None and self._premium_active(existing):
            raise ToolError(
                ErrorCode.CONFLICT, f"already holding an active premium subscription to {key}", field="target_id"
            )
        system = self.other("system")
        system.require_privilege(PRIVILEGE)
        if authorization_id is None:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"a premium subscription to {key} costs {price} cents: obtain a payment authorisation with "
                "system_authorize_payment and pass its authorization_id",
                field="authorization_id",
                details={"price_cents": price},
            )
        txn = system.charge(authorization_id, price, f"news premium subscription: {name} (30 days)", reference=key)
        sub = Subscription(
            subscription_id=key,
            target_kind=target_kind,
            target_id=tid,
            target_name=name,
            tier="premium",
            price_cents=price,
            started_at=self.now,
            expires_at=self.now + PREMIUM_PERIOD,
        )
        self.state.subscriptions[key] = sub
        return SubscriptionResult(subscription=self._sub_view(sub), charged_cents=price, transaction_id=txn)

    @tool("write", ["news.subscription"], remedies={"not_found": ["news_list_subscriptions"]}, destructive=True)
    def news_remove_subscription(
        self,
        subscription_id: Annotated[
            str, Field(description="e.g. section:tech or author:p-007 (see news_list_subscriptions)")
        ],
    ) -> SubscriptionResult:
        """Cancel a subscription. A premium subscription ends at once and is not refunded."""
        sub = self.state.subscriptions.pop(subscription_id.strip(), None)
        if sub is None:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"no subscription {subscription_id!r}; see news_list_subscriptions",
                field="subscription_id",
            )
        return SubscriptionResult(
            subscription=self._sub_view(sub), charged_cents=0, transaction_id=None, cancelled=True
        )

    @tool("read", ["news.subscription"])
    def news_list_subscriptions(self) -> SubscriptionList:
        """List the user's subscriptions (free and premium, with price paid in cents and expiry)."""
        return SubscriptionList(subscriptions=[self._sub_view(s) for _, s in sorted(self.state.subscriptions.items())])

    # -- history ---------------------------------------------------------------------------
    @tool("read", ["news.history"])
    def news_list_history(self, limit: Limit = 50) -> HistoryList:
        """List the articles the user has read, most recently read first, with read counts."""
        entries = sorted(self.state.history.values(), key=lambda h: (-h.last_read_at, h.article_id))
        views = []
        for h in entries[:limit]:
            art = self.state.articles.get(h.article_id)
            if art is None:
                continue
            views.append(
                HistoryView(
                    article_id=h.article_id,
                    title=art.title,
                    section=art.section,
                    read_count=h.read_count,
                    last_read_iso=iso(h.last_read_at),
                )
            )
        return HistoryList(history=views, total=len(self.state.history))

    @tool("write", ["news.history"], remedies={"not_found": ["news_list_history"]}, destructive=True)
    def news_clear_history(
        self,
        article_id: Annotated[
            str | None, Field(description="remove only this article; omit to clear everything")
        ] = None,
    ) -> HistoryCleared:
        """Clear the read history, or remove one article from it.

        Errors: not_found when the given article is not in the history.
        """
        if article_id is None:
            removed = len(self.state.history)
            self.state.history.clear()
        else:
            if self.state.history.pop(article_id, None) is None:
                raise ToolError(ErrorCode.NOT_FOUND, f"{article_id!r} is not in the read history", field="article_id")
            removed = 1
        return HistoryCleared(removed=removed, remaining=len(self.state.history))
