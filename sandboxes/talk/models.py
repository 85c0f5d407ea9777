"""State and output models of the ``talk`` messaging app.

Who is who: the user is always ``"me"``; everyone else is named by a contact id (``c-001``
for the person ``p-001`` of the shared people directory). Times are virtual seconds since the
Unix epoch (UTC). Generated ids and timestamps are marked volatile so the judge ignores them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from mcpgym.kernel.app import AppState
from mcpgym.kernel.volatile import VOLATILE, VOLATILE_KEYS

ME = "me"
"""Sender/owner/author value that stands for the user."""

TAGS: tuple[str, ...] = ("family", "classmates", "coworkers", "neighbours", "friends")
"""The only contact tags there are."""

Tag = Literal["family", "classmates", "coworkers", "neighbours", "friends"]


def contact_id_for(person_id: str) -> str:
    """Return the stable contact id of directory person ``person_id`` (``p-007`` -> ``c-007``)."""
    return "c-" + person_id.split("-", 1)[-1]


def direct_chat_id(contact_id: str) -> str:
    """Return the stable id of the 1:1 chat with ``contact_id`` (``c-007`` -> ``dm-c-007``)."""
    return f"dm-{contact_id}"


# -- state -------------------------------------------------------------------------------
class Contact(BaseModel):
    """A contact: a person of the shared directory plus the user's own labels.

    Attributes:
        contact_id: c-NNN (stable, derived from the person id).
        person_id: the directory person (p-NNN).
        name, phone, email, city: copied from the directory.
        tags: sorted subset of family, classmates, coworkers, neighbours, friends.
        blocked: blocked contacts cannot be messaged, invited or shared a location with.
        nickname: the user's remark name for the contact ("" = none).
        note: a free-text remark ("" = none).
    """

    contact_id: str
    person_id: str
    name: str
    phone: str
    email: str
    city: str
    tags: list[str] = Field(default_factory=list)
    blocked: bool = False
    nickname: str = ""
    note: str = ""


class Message(BaseModel):
    """One message of a chat.

    Attributes:
        message_id: id of the message (volatile).
        sender: "me" or a contact id.
        text: the message text.
        sent_at: virtual seconds (volatile).
        read: whether the user has read it (always true for the user's own messages).
    """

    message_id: Annotated[str, VOLATILE]
    sender: str
    text: str
    sent_at: Annotated[int, VOLATILE]
    read: bool = True


class Chat(BaseModel):
    """A 1:1 chat (kind="direct") or a group chat (kind="group").

    Attributes:
        chat_id: dm-c-NNN for direct chats, grp-... for groups (volatile: generated
            for new groups).
        kind: direct or group.
        title: the contact's name (direct) or the group name.
        contact_id: the other person of a direct chat; None for groups.
        owner: the group owner, "me" or a contact id; None for direct chats.
        members: contact ids of the other group members, sorted (the user is not listed).
        joined: false once the user has left the group.
        messages: oldest first.
        created_at: virtual seconds (volatile).
    """

    chat_id: Annotated[str, VOLATILE]
    kind: Literal["direct", "group"]
    title: str
    contact_id: str | None = None
    owner: str | None = None
    members: list[str] = Field(default_factory=list)
    joined: bool = True
    messages: list[Message] = Field(default_factory=list)
    created_at: Annotated[int, VOLATILE] = 0


class Comment(BaseModel):
    """A comment under a post (author is "me" or a contact id)."""

    comment_id: Annotated[str, VOLATILE]
    author: str
    text: str
    created_at: Annotated[int, VOLATILE]


class Post(BaseModel):
    """A post of the feed.

    Attributes:
        post_id: post-NNN for seeded posts, generated otherwise (volatile).
        author: "me" or a contact id.
        text: the post text.
        created_at: virtual seconds (volatile).
        liked_by: who liked it ("me" and/or contact ids), sorted.
        comments: oldest first.
    """

    post_id: Annotated[str, VOLATILE]
    author: str
    text: str
    created_at: Annotated[int, VOLATILE]
    liked_by: list[str] = Field(default_factory=list)
    comments: list[Comment] = Field(default_factory=list)


class Location(BaseModel):
    """The user's current location: a city and a place in it."""

    city: str
    place: str
    updated_at: Annotated[int, VOLATILE] = 0


class LocationShare(BaseModel):
    """A location-sharing link given to one contact.

    Attributes:
        share_id: generated id (volatile).
        contact_id: who can follow the link.
        url: the link (volatile: contains the id).
        created_at, expires_at: virtual seconds (volatile).
        duration_minutes: how long the link is valid.
        revoked: true once revoked.
    """

    share_id: Annotated[str, VOLATILE]
    contact_id: str
    url: Annotated[str, VOLATILE]
    duration_minutes: int
    created_at: Annotated[int, VOLATILE]
    expires_at: Annotated[int, VOLATILE]
    revoked: bool = False


class TalkState(AppState):
    """State of the talk app (see the module docstring for the id conventions)."""

    contacts: dict[str, Contact]
    chats: Annotated[dict[str, Chat], VOLATILE_KEYS]
    posts: Annotated[dict[str, Post], VOLATILE_KEYS]
    location: Location
    shares: Annotated[dict[str, LocationShare], VOLATILE_KEYS] = Field(default_factory=dict)


# -- outputs -----------------------------------------------------------------------------
class ContactView(BaseModel):
    """One contact."""

    contact: Contact


class ContactList(BaseModel):
    """Contacts, by contact id, with their count."""

    contacts: list[Contact]
    count: int


class ChatSummary(BaseModel):
    """A chat in a listing: unread count and the latest message.

    Attributes:
        chat_id, kind, title: as in the chat.
        contact_id: for direct chats.
        member_count: group members other than the user (0 for direct chats).
        joined: whether the user is (still) in the chat.
        unread_count: messages from others not yet read.
        last_message: the newest message, if any.
    """

    chat_id: str
    kind: str
    title: str
    contact_id: str | None = None
    member_count: int = 0
    joined: bool = True
    unread_count: int
    last_message: Message | None = None


class ChatList(BaseModel):
    """Chats, most recently active first, and the total of unread messages."""

    chats: list[ChatSummary]
    total_unread: int


class ChatMessages(BaseModel):
    """Messages of one chat, oldest first (the latest limit)."""

    chat_id: str
    title: str
    messages: list[Message]
    unread_count: int


class UnreadMessage(BaseModel):
    """An unread message and the chat it is in."""

    chat_id: str
    chat_title: str
    message: Message


class UnreadList(BaseModel):
    """Every unread message, oldest first, with the total."""

    messages: list[UnreadMessage]
    total_unread: int


class SentMessage(BaseModel):
    """The message just sent and the chat it went to."""

    chat_id: str
    message: Message


class MarkReadResult(BaseModel):
    """How many messages a mark-read call changed, and what stays unread overall."""

    chat_id: str
    marked: int
    total_unread: int


class MessageHit(BaseModel):
    """A message matching a search."""

    chat_id: str
    chat_title: str
    message: Message


class MessageSearchResult(BaseModel):
    """Messages matching a search, newest first."""

    hits: list[MessageHit]
    count: int


class GroupView(BaseModel):
    """A group chat without its messages."""

    chat_id: str
    title: str
    owner: str | None
    members: list[str]
    member_names: list[str]
    joined: bool


class PostView(BaseModel):
    """One post with its like count."""

    post: Post
    like_count: int
    liked_by_me: bool


class PostList(BaseModel):
    """Posts, newest first."""

    posts: list[PostView]
    count: int


class CommentList(BaseModel):
    """Comments of one post, oldest first."""

    post_id: str
    comments: list[Comment]
    count: int


class LocationView(BaseModel):
    """The user's location."""

    location: Location


class ShareView(BaseModel):
    """A location-sharing link and whether it is active now."""

    share: LocationShare
    active: bool


class ShareList(BaseModel):
    """Location-sharing links, newest first."""

    shares: list[ShareView]
    count: int
