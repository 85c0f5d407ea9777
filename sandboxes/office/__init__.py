"""The ``office`` app: mail (inbox, labels, attachments), calendar (events, invitations,
free/busy) and files (folders, notes, sharing).

The tools live in three mixins, :mod:`sandboxes.office.mail`, :mod:`sandboxes.office.calendar`
and :mod:`sandboxes.office.files`; :mod:`sandboxes.office.app` combines and registers them.
"""

from sandboxes.office.app import OfficeApp
from sandboxes.office.models import OfficeState

__all__ = ["OfficeApp", "OfficeState"]
