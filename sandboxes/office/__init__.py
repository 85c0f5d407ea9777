"""The ``office`` app: mail (inbox, labels, attachments), calendar (events, invitations,
free/busy) and files (folders, notes, sharing).

The tools live in three mixins, :mod:`mcpgym.sandboxes.office.mail`, :mod:`mcpgym.sandboxes.office.calendar`
and :mod:`mcpgym.sandboxes.office.files`; :mod:`mcpgym.sandboxes.office.app` combines and registers them.
"""

from mcpgym.sandboxes.office.app import OfficeApp
from mcpgym.sandboxes.office.models import OfficeState

__all__ = ["OfficeApp", "OfficeState"]
