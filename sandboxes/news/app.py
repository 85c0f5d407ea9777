"""The ``news`` app: the article and account tool mixins combined into one registered app.

Reading an article in full (``news_read_article``) records it in the read history, so it is a
``write`` tool; listing, searching and article details are ``read`` tools. Premium articles
need an active premium subscription to their section or author; buying one needs the
``news.subscriptions`` privilege and a one-use payment authorisation of the system app.
"""

from __future__ import annotations

from mcpgym.kernel.app import register_app
from mcpgym.kernel.world import World
from mcpgym.sandboxes.news.account import AccountTools
from mcpgym.sandboxes.news.articles import ArticleTools
from mcpgym.sandboxes.news.generate import generate_state
from mcpgym.sandboxes.news.models import NewsState


@register_app
class NewsApp(ArticleTools, AccountTools):
    """News: sections, articles, search, bookmarks, subscriptions and read history."""

    name = "news"
    title = "News"
    State = NewsState
    state: NewsState

    @classmethod
    def generate(cls, world: World) -> NewsState:
        """Seeded initial state (see :func:`mcpgym.sandboxes.news.generate.generate_state`)."""
        return generate_state(world, lambda purpose: cls.stream(world, purpose))
