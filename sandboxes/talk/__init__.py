"""The ``talk`` messaging app (see :mod:`sandboxes.talk.app`)."""

from sandboxes.talk.app import TalkApp
from sandboxes.talk.models import TalkState

__all__ = ["TalkApp", "TalkState"]
