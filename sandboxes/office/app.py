"""The ``office`` app: mail, calendar and files combined into one registered app.

Opening a message (``office_read_mail``) marks it read, so it is a ``write`` tool; list,
search and show tools are ``read`` tools.
"""

from __future__ import annotations

from mcpgym.kernel.app import register_app
from mcpgym.kernel.world import World
from mcpgym.sandboxes.office.calendar import CalendarTools
from mcpgym.sandboxes.office.files import FileTools
from mcpgym.sandboxes.office.generate import generate_state
from mcpgym.sandboxes.office.mail import MailTools
from mcpgym.sandboxes.office.models import OfficeState


@register_app
class OfficeApp(MailTools, CalendarTools, FileTools):
    """Office suite: mail (labels, attachments), calendar (events, invitations, free/busy)
    and a drive of text files with sharing."""

    name = "office"
    title = "Office"
    State = OfficeState
    state: OfficeState

    @classmethod
    def generate(cls, world: World) -> OfficeState:
        """Seeded initial state (see :func:`mcpgym.sandboxes.office.generate.generate_state`)."""
        return generate_state(world, lambda purpose: cls.stream(world, purpose))
