"""Output models of the office tools (what the agent sees). Times are given both as virtual
seconds and as ISO-8601 UTC strings."""

from __future__ import annotations

from pydantic import BaseModel

from mcpgym.sandboxes.office.models import Attendee, Folder, InvitationStatus, Permission


# -- mail ------------------------------------------------------------------------------------
class MailSummary(BaseModel):
    """A message without its full body (snippet = its first 120 characters)."""

    message_id: str
    thread_id: str
    folder: Folder
    sender: str
    sender_name: str
    to: list[str]
    cc: list[str]
    subject: str
    snippet: str
    sent_at: int
    sent_iso: str
    read: bool
    labels: list[str]
    attachment_count: int
    in_reply_to: str | None


class MailList(BaseModel):
    """Messages, newest first. total matched before limit; unread_count counts the
    unread among the matches; inbox_unread is the unread count of the whole inbox."""

    messages: list[MailSummary]
    total: int
    unread_count: int
    inbox_unread: int


class AttachmentInfo(BaseModel):
    """An attachment's metadata (sizes in bytes)."""

    attachment_id: str
    filename: str
    mime_type: str
    size_bytes: int


class AttachmentList(BaseModel):
    """The attachments of one message."""

    message_id: str
    attachments: list[AttachmentInfo]


class MailView(BaseModel):
    """A full message as read."""

    message: MailSummary
    body: str
    attachments: list[AttachmentInfo]
    inbox_unread: int


class MailResult(BaseModel):
    """A message that was sent, moved, marked or relabelled; changed is false when the
    request was already satisfied."""

    message: MailSummary
    changed: bool = True
    inbox_unread: int


class MailDeleted(BaseModel):
    """Result of deleting a message: moved to trash, or permanently removed."""

    message_id: str
    folder: str | None
    permanently: bool


class LabelInfo(BaseModel):
    """A label with how many messages carry it and how many of those are unread."""

    name: str
    description: str
    message_count: int
    unread_count: int


class LabelList(BaseModel):
    """Every mail label, by name."""

    labels: list[LabelInfo]


class Contact(BaseModel):
    """A person of the shared directory."""

    person_id: str
    name: str
    email: str
    phone: str
    city: str
    relation: str


class ContactList(BaseModel):
    """Matching people, by name."""

    contacts: list[Contact]


# -- calendar ----------------------------------------------------------------------------------
class EventView(BaseModel):
    """A calendar event (is_organizer: the user owns it and may change it)."""

    event_id: str
    title: str
    start: int
    end: int
    start_iso: str
    end_iso: str
    location: str
    description: str
    organizer: str
    organizer_name: str
    is_organizer: bool
    attendees: list[Attendee]
    invitation_id: str | None


class EventList(BaseModel):
    """Events overlapping the requested range, by start time."""

    range_start_iso: str
    range_end_iso: str
    events: list[EventView]


class EventResult(BaseModel):
    """An event created, changed or shown; added lists newly invited addresses."""

    event: EventView
    added: list[str] = []


class EventDeleted(BaseModel):
    """A deleted event (and the invitation it declined, if it came from one)."""

    event_id: str
    title: str
    declined_invitation: str | None


class InvitationView(BaseModel):
    """An invitation with the user's events it overlaps (conflicts: event ids)."""

    invitation_id: str
    organizer: str
    organizer_name: str
    title: str
    start: int
    end: int
    start_iso: str
    end_iso: str
    location: str
    description: str
    other_attendees: list[str]
    status: InvitationStatus
    event_id: str | None
    conflicts: list[str]


class InvitationList(BaseModel):
    """Invitations, by start time."""

    invitations: list[InvitationView]


class InvitationResult(BaseModel):
    """The answered invitation and, when accepted, its calendar event."""

    invitation: InvitationView
    event: EventView | None
    changed: bool


class Interval(BaseModel):
    """A time interval [start, end) (virtual seconds and ISO-8601)."""

    start: int
    end: int
    start_iso: str
    end_iso: str
    event_ids: list[str] = []


class FreeBusy(BaseModel):
    """Busy intervals (merged events) and free gaps within the queried range."""

    range_start_iso: str
    range_end_iso: str
    busy: list[Interval]
    free: list[Interval]
    busy_seconds: int
    free_seconds: int


# -- files -------------------------------------------------------------------------------------
class ShareView(BaseModel):
    """A file shared with a person."""

    file_id: str
    path: str
    email: str
    name: str
    permission: Permission
    shared_iso: str


class FileInfo(BaseModel):
    """A file's metadata (path = folder + name; sizes in bytes)."""

    file_id: str
    name: str
    folder: str
    path: str
    size_bytes: int
    updated_iso: str
    shared_with: list[str]


class FileView(BaseModel):
    """A file with its text content."""

    file: FileInfo
    content: str


class FileResult(BaseModel):
    """A file created, edited, renamed or moved."""

    file: FileInfo


class FileDeleted(BaseModel):
    """A deleted file."""

    file_id: str
    path: str


class FolderListing(BaseModel):
    """A folder's direct subfolders and files (or every file below it when recursive)."""

    folder: str
    subfolders: list[str]
    files: list[FileInfo]


class FileList(BaseModel):
    """Files matching a search, by path."""

    query: str
    files: list[FileInfo]


class FolderResult(BaseModel):
    """A folder path and whether it was newly created."""

    path: str
    created: bool
    folders: list[str]


class ShareList(BaseModel):
    """File shares, by path then person."""

    shares: list[ShareView]


class ShareResult(BaseModel):
    """A share created, changed or removed; changed is false when nothing had to change."""

    share: ShareView
    changed: bool
    removed: bool = False
