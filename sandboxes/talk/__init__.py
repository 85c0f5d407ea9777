"""The ``talk`` messaging app (see :mod:`mcpgym.sandboxes.talk.app`)."""

from mcpgym.sandboxes.talk.app import TalkApp
from mcpgym.sandboxes.talk.models import TalkState

__all__ = ["TalkApp", "TalkState"]
