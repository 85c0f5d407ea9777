"""The ``news`` app: sections, articles by authors from the shared people directory,
keyword and author/tag search, bookmarks, free and premium subscriptions (premium needs the
``news.subscriptions`` privilege and a one-use payment authorisation), and read history.

Importing this package registers the app (see :mod:`mcpgym.sandboxes.news.app`).
"""

from mcpgym.sandboxes.news.app import NewsApp
from mcpgym.sandboxes.news.models import NewsState

__all__ = ["NewsApp", "NewsState"]
