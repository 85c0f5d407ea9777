"""State models of the ``office`` app (outputs live next to their tools).

Times are virtual seconds since the Unix epoch (UTC). Seeded entities have stable ids
(``msg-001``, ``ev-001``, ``inv-001``, ``f-001``); entities the agent creates get generated
ids, so the message, event and file dicts are ``VOLATILE_KEYS`` and their id fields
``VOLATILE``: the judge compares them by content. Shares live on their file.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from mcpgym.kernel.app import AppState
from mcpgym.kernel.volatile import VOLATILE, VOLATILE_KEYS

Folder = Literal["inbox", "sent", "archive", "trash"]
Response = Literal["needs_action", "accepted", "declined", "tentative"]
InvitationStatus = Literal["pending", "accepted", "declined"]
Permission = Literal["view", "edit"]


class Attachment(BaseModel):
    """A (text) attachment of a message.

    Attributes:
        attachment_id: id within its message (att-1...).
        filename: file name.
        mime_type: e.g. text/plain.
        content: the text content.
    """

    attachment_id: str
    filename: str
    mime_type: str = "text/plain"
    content: str


class Message(BaseModel):
    """A mail message.

    Attributes:
        message_id: msg-NNN (seeded) or generated.
        thread_id: conversation id shared by a message and its replies.
        folder: inbox | sent | archive | trash.
        sender, sender_name: author's address and name.
        to, cc: recipient addresses.
        subject, body: text.
        sent_at: when it was sent (virtual seconds).
        read: whether the user has read it.
        labels: user label names, sorted.
        attachments: text attachments.
        in_reply_to: the message this one answers, if any (volatile: it may be a generated
            id; subject, recipients and quoted body carry the reply for the judge).
        forwarded_from: the message this one forwards, if any (volatile, likewise).
    """

    message_id: Annotated[str, VOLATILE]
    thread_id: Annotated[str, VOLATILE]
    folder: Folder
    sender: str
    sender_name: str
    to: list[str]
    cc: list[str] = Field(default_factory=list)
    subject: str
    body: str
    sent_at: Annotated[int, VOLATILE]
    read: bool = False
    labels: list[str] = Field(default_factory=list)
    attachments: list[Attachment] = Field(default_factory=list)
    in_reply_to: Annotated[str | None, VOLATILE] = None
    forwarded_from: Annotated[str | None, VOLATILE] = None


class Label(BaseModel):
    """A user mail label (name is its id)."""

    name: str
    description: str = ""


class Attendee(BaseModel):
    """An event attendee and their response."""

    email: str
    name: str
    response: Response = "needs_action"


class Event(BaseModel):
    """A calendar event of the user.

    Attributes:
        event_id: ev-NNN (seeded) or generated.
        title, location, description: text.
        start, end: virtual seconds, start < end.
        organizer, organizer_name: who owns the event (the user, or the inviter for an
            accepted invitation).
        attendees: invited people (the user is implicit).
        invitation_id: the invitation it came from, when it was accepted from one.
    """

    event_id: Annotated[str, VOLATILE]
    title: str
    start: int
    end: int
    location: str = ""
    description: str = ""
    organizer: str
    organizer_name: str
    attendees: list[Attendee] = Field(default_factory=list)
    invitation_id: str | None = None


class Invitation(BaseModel):
    """An invitation the user received to someone else's event.

    Attributes:
        invitation_id: inv-NNN.
        organizer, organizer_name: the inviter.
        title, location, description, start, end: the proposed event (virtual seconds).
        other_attendees: other invitees' addresses.
        status: pending | accepted | declined.
        event_id: the calendar event created on acceptance.
        received_at: when it arrived (virtual seconds).
    """

    invitation_id: str
    organizer: str
    organizer_name: str
    title: str
    start: int
    end: int
    location: str = ""
    description: str = ""
    other_attendees: list[str] = Field(default_factory=list)
    status: InvitationStatus = "pending"
    event_id: Annotated[str | None, VOLATILE] = None
    received_at: Annotated[int, VOLATILE] = 0


class Share(BaseModel):
    """A file shared with a person of the directory."""

    email: str
    name: str
    permission: Permission = "view"
    shared_at: Annotated[int, VOLATILE] = 0


class File(BaseModel):
    """A file (text document or note) in the user's drive.

    Attributes:
        file_id: f-NNN (seeded) or generated.
        name: file name, unique within its folder.
        folder: folder path, e.g. /Documents.
        content: text content.
        created_at, updated_at: virtual seconds.
        shares: who it is shared with.
    """

    file_id: Annotated[str, VOLATILE]
    name: str
    folder: str
    content: str = ""
    created_at: Annotated[int, VOLATILE] = 0
    updated_at: Annotated[int, VOLATILE] = 0
    shares: list[Share] = Field(default_factory=list)


class OfficeState(AppState):
    """State of the office app."""

    messages: Annotated[dict[str, Message], VOLATILE_KEYS]
    labels: dict[str, Label]
    events: Annotated[dict[str, Event], VOLATILE_KEYS]
    invitations: dict[str, Invitation]
    folders: list[str]
    files: Annotated[dict[str, File], VOLATILE_KEYS]
