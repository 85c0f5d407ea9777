"""Chat and message tools of the ``talk`` app: list chats, read, send, mark read, search.

Two tools send a message: :meth:`ChatTools.talk_send_message` addresses a contact (and opens
the 1:1 chat if needed), :meth:`ChatTools.talk_send_chat_message` posts into an existing chat
(1:1 or group). They are declared alternatives of each other.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.talk.common import ChatId, ContactId, MessageText, TalkBase
from mcpgym.sandboxes.talk.models import (
    ME,
    Chat,
    ChatList,
    ChatMessages,
    MarkReadResult,
    MessageHit,
    MessageSearchResult,
    SentMessage,
    UnreadList,
    UnreadMessage,
    direct_chat_id,
)

UNBLOCK_REMEDY = {"precondition_failed": ["talk_unblock_contact"]}


def _last_at(chat: Chat) -> int:
    return chat.messages[-1].sent_at if chat.messages else chat.created_at


class ChatTools(TalkBase):
    """The chat tools (mixed into :class:`mcpgym.sandboxes.talk.app.TalkApp`)."""

    @tool("read", ["talk.chat", "talk.message"])
    def talk_list_chats(
        self,
        unread_only: Annotated[bool, Field(description="only chats with unread messages")] = False,
        kind: Annotated[
            Literal["direct", "group"] | None, Field(description="only 1:1 (direct) or group chats")
        ] = None,
    ) -> ChatList:
        """List chats, most recently active first, each with its unread count and latest message.

        Also returns the total number of unread messages over all chats.
        """
        chats = [
            c
            for c in self.state.chats.values()
            if (kind is None or c.kind == kind) and (not unread_only or self._unread(c) > 0)
        ]
        chats.sort(key=lambda c: (-_last_at(c), c.chat_id))
        return ChatList(chats=[self._summary(c) for c in chats], total_unread=self._total_unread())

    @tool("read", ["talk.message"])
    def talk_list_chat_messages(
        self,
        chat_id: ChatId,
        limit: Annotated[int, Field(ge=1, le=200, description="how many of the latest messages")] = 50,
    ) -> ChatMessages:
        """Return the latest limit messages of a chat, oldest first (does not mark them read)."""
        chat = self._chat(chat_id)
        return ChatMessages(
            chat_id=chat.chat_id, title=chat.title, messages=chat.messages[-limit:], unread_count=self._unread(chat)
        )

    @tool("read", ["talk.message"])
    def talk_list_unread_messages(self) -> UnreadList:
        """List every unread message (from others) over all chats, oldest first, with the total count."""
        items = [
            UnreadMessage(chat_id=c.chat_id, chat_title=c.title, message=m)
            for c in self.state.chats.values()
            for m in c.messages
            if not m.read and m.sender != ME
        ]
        items.sort(key=lambda u: (u.message.sent_at, u.chat_id, u.message.message_id))
        return UnreadList(messages=items, total_unread=len(items))

    # No id_args: the chat written (dm-c-NNN) is not the contact id named, so reads of the chat
    # (talk_list_chat_messages) and the alternative talk_send_chat_message must still match.
    @tool(
        "write",
        ["talk.message", "talk.chat"],
        preconditions=["talk.contact"],
        remedies=UNBLOCK_REMEDY,
        alternatives=["talk_send_chat_message"],
        id_args=[],
    )
    def talk_send_message(self, contact_id: ContactId, text: MessageText) -> SentMessage:
        """Send a text message to a contact in your 1:1 chat with them (opened if there is none yet).

        precondition_failed when the contact is blocked: unblock them first.
        """
        body = self._text(text)
        contact = self._contact(contact_id)
        self._not_blocked(contact, "send them messages")
        chat_id = direct_chat_id(contact.contact_id)
        chat = self.state.chats.get(chat_id)
        if chat is None:
            chat = Chat(
                chat_id=chat_id, kind="direct", title=contact.name, contact_id=contact.contact_id, created_at=self.now
            )
            self.state.chats[chat_id] = chat
        return SentMessage(chat_id=chat_id, message=self._append(chat, body))

    @tool(
        "write",
        ["talk.message", "talk.chat"],
        preconditions=["talk.contact", "talk.group"],
        remedies=UNBLOCK_REMEDY,
        alternatives=["talk_send_message"],
    )
    def talk_send_chat_message(self, chat_id: ChatId, text: MessageText) -> SentMessage:
        """Send a text message into an existing chat: a 1:1 chat (dm-c-NNN) or a group you are in.

        precondition_failed when the 1:1 contact is blocked or you left the group.
        """
        body = self._text(text)
        chat = self._chat(chat_id)
        if chat.kind == "direct" and chat.contact_id is not None:
            self._not_blocked(self._contact(chat.contact_id), "send them messages", field="chat_id")
        if not chat.joined:
            raise ToolError(ErrorCode.PRECONDITION_FAILED, f"you left the group {chat.title!r}", field="chat_id")
        return SentMessage(chat_id=chat.chat_id, message=self._append(chat, body))

    @tool("write", ["talk.message"])
    def talk_mark_chat_read(self, chat_id: ChatId) -> MarkReadResult:
        """Mark every message of a chat as read; returns how many changed and the unread total left."""
        chat = self._chat(chat_id)
        marked = 0
        for m in chat.messages:
            if not m.read:
                m.read = True
                marked += 1
        return MarkReadResult(chat_id=chat.chat_id, marked=marked, total_unread=self._total_unread())

    @tool("read", ["talk.message"])
    def talk_search_messages(
        self,
        query: Annotated[str, Field(min_length=1, max_length=200, description="text to look for")],
        chat_id: Annotated[str | None, Field(max_length=64, description="only this chat")] = None,
    ) -> MessageSearchResult:
        """Search message texts (case-insensitive substring), newest first, optionally in one chat."""
        q = query.strip().lower()
        if not q:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "query must not be blank", field="query")
        chats = [self._chat(chat_id)] if chat_id is not None else list(self.state.chats.values())
        hits = [
            MessageHit(chat_id=c.chat_id, chat_title=c.title, message=m)
            for c in chats
            for m in c.messages
            if q in m.text.lower()
        ]
        hits.sort(key=lambda h: (-h.message.sent_at, h.chat_id, h.message.message_id))
        return MessageSearchResult(hits=hits, count=len(hits))
