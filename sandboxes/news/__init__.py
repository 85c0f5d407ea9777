"""The ``news`` app: sections, articles by authors from the shared people directory,
keyword and author/tag search, bookmarks, free and premium subscriptions (premium needs the
``news.subscriptions`` privilege and a one-use payment authorisation), and read history.

Importing this package registers the app (see :mod:`sandboxes.news.app`).
"""

from sandboxes.news.app import NewsApp
from sandboxes.news.models import NewsState

__all__ = ["NewsApp", "NewsState"]
