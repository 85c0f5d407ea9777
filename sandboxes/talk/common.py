"""Shared helpers of the ``talk`` tool mixins: lookups, privilege checks, chat summaries."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpgym.kernel.app import App
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.sandboxes.talk.models import ME, Chat, ChatSummary, Contact, Message, TalkState

ContactId = Annotated[str, Field(max_length=64, description="contact id, e.g. c-007 (see talk_list_contacts)")]
ChatId = Annotated[str, Field(max_length=64, description="chat id: dm-c-007 for a 1:1 chat, grp-... for a group")]
MessageText = Annotated[str, Field(min_length=1, max_length=2000, description="message text (1-2000 characters)")]

PRIV_CONTACTS = "talk.contacts_write"
PRIV_GROUPS = "talk.group_admin"
PRIV_LOCATION = "talk.location"
PRIVILEGE_REMEDY = {"permission_denied": ["system_request_privilege"]}
"""Remedy declaration of every tool that needs a system privilege."""


class TalkBase(App):
    """Helpers shared by the talk tool mixins (not an app by itself)."""

    state: TalkState

    def _require(self, privilege: str) -> None:
        """Raise ``permission_denied`` unless the system app granted ``privilege``."""
        self.other("system").require_privilege(privilege)

    def _contact(self, contact_id: str, field: str = "contact_id") -> Contact:
        """Return contact ``contact_id``; raise ``not_found`` (naming ``field``) otherwise."""
        c = self.state.contacts.get(contact_id)
        if c is None:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"no contact {contact_id[:64]!r}; see talk_list_contacts or talk_search_contacts",
                field=field,
            )
        return c

    def _chat(self, chat_id: str) -> Chat:
        """Return chat ``chat_id``; raise ``not_found`` otherwise."""
        chat = self.state.chats.get(chat_id)
        if chat is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"no chat {chat_id[:64]!r}; see talk_list_chats", field="chat_id")
        return chat

    def _group(self, chat_id: str) -> Chat:
        """Return group chat ``chat_id``; ``not_found`` if absent, ``invalid_argument`` for a 1:1 chat."""
        chat = self._chat(chat_id)
        if chat.kind != "group":
            raise ToolError(ErrorCode.INVALID_ARGUMENT, f"{chat_id} is a 1:1 chat, not a group", field="chat_id")
        return chat

    def _require_owner(self, chat: Chat, action: str) -> None:
        """Raise ``precondition_failed`` unless the user is in group ``chat`` and owns it."""
        if not chat.joined:
            raise ToolError(ErrorCode.PRECONDITION_FAILED, f"you left the group {chat.title!r}", field="chat_id")
        if chat.owner != ME:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"only the group owner ({self._who(chat.owner or '')}) can {action}",
                field="chat_id",
                details={"owner": chat.owner},
            )

    def _not_blocked(self, contact: Contact, action: str, field: str = "contact_id") -> None:
        """Raise ``precondition_failed`` (remedy: ``talk_unblock_contact``) if ``contact`` is blocked."""
        if contact.blocked:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"{contact.name} ({contact.contact_id}) is blocked: cannot {action}; call talk_unblock_contact first",
                field=field,
                details={"contact_id": contact.contact_id},
            )

    def _who(self, party: str) -> str:
        """Display name of ``"me"`` or a contact id (the id itself when unknown)."""
        if party == ME:
            return "me"
        c = self.state.contacts.get(party)
        return c.name if c is not None else party

    @staticmethod
    def _text(text: str, field: str = "text", limit: int = 2000) -> str:
        """Return ``text`` stripped; raise ``invalid_argument`` when blank or longer than ``limit``."""
        value = text.strip()
        if not value:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, f"{field} must not be blank", field=field)
        if len(value) > limit:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, f"{field} is longer than {limit} characters", field=field)
        return value

    @staticmethod
    def _unread(chat: Chat) -> int:
        """Messages of ``chat`` from others that the user has not read."""
        return sum(1 for m in chat.messages if not m.read and m.sender != ME)

    def _total_unread(self) -> int:
        """Unread messages over every chat."""
        return sum(self._unread(c) for c in self.state.chats.values())

    def _summary(self, chat: Chat) -> ChatSummary:
        """The listing row of ``chat``."""
        return ChatSummary(
            chat_id=chat.chat_id,
            kind=chat.kind,
            title=chat.title,
            contact_id=chat.contact_id,
            member_count=len(chat.members),
            joined=chat.joined,
            unread_count=self._unread(chat),
            last_message=chat.messages[-1] if chat.messages else None,
        )

    def _append(self, chat: Chat, text: str) -> Message:
        """Append the user's message ``text`` to ``chat`` and return it."""
        msg = Message(message_id=self.new_id("msg"), sender=ME, text=text, sent_at=self.now, read=True)
        chat.messages.append(msg)
        return msg
