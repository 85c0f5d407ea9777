"""Group chat tools of the ``talk`` app: create, invite, remove, rename, transfer, leave.

Administering groups needs the ``talk.group_admin`` privilege. Removing members, renaming and
transferring ownership are for the group owner only. An owner cannot leave a group that still
has members: ownership must be transferred first (remedy ``talk_transfer_group_ownership``).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.talk.common import PRIV_GROUPS, PRIVILEGE_REMEDY, ChatId, ContactId, TalkBase
from mcpgym.sandboxes.talk.models import ME, Chat, GroupView

GroupName = Annotated[str, Field(min_length=1, max_length=100, description="group name (1-100 characters)")]
ADMIN_REMEDIES = {**PRIVILEGE_REMEDY, "precondition_failed": ["talk_unblock_contact"]}


class GroupTools(TalkBase):
    """The group tools (mixed into :class:`mcpgym.sandboxes.talk.app.TalkApp`)."""

    def _group_view(self, chat: Chat) -> GroupView:
        return GroupView(
            chat_id=chat.chat_id,
            title=chat.title,
            owner=chat.owner,
            members=list(chat.members),
            member_names=[self._who(m) for m in chat.members],
            joined=chat.joined,
        )

    @tool("read", ["talk.group"])
    def talk_get_group(self, chat_id: ChatId) -> GroupView:
        """Return a group's name, owner (me or a contact id), members and whether you are in it."""
        return self._group_view(self._group(chat_id))

    @tool(
        "write", ["talk.group", "talk.chat"], preconditions=["talk.contact"], remedies=ADMIN_REMEDIES, id_args=[]
    )  # the group written gets a new id; member ids do not name it
    def talk_create_group(
        self,
        name: GroupName,
        member_ids: Annotated[
            list[Annotated[str, Field(max_length=64)]],
            Field(min_length=1, max_length=30, description="contact ids of the first members"),
        ],
    ) -> GroupView:
        """Create a group chat that you own with the given contacts. Needs talk.group_admin.

        precondition_failed when a member is blocked.
        """
        self._require(PRIV_GROUPS)
        title = self._text(name, "name", 100)
        members = sorted(set(member_ids))
        for cid in members:
            self._not_blocked(self._contact(cid, "member_ids"), "add them to a group", field="member_ids")
        chat_id = self.new_id("grp")
        chat = Chat(chat_id=chat_id, kind="group", title=title, owner=ME, members=members, created_at=self.now)
        self.state.chats[chat_id] = chat
        return self._group_view(chat)

    @tool("write", ["talk.group"], preconditions=["talk.group", "talk.contact"], remedies=ADMIN_REMEDIES)
    def talk_invite_group_member(self, chat_id: ChatId, contact_id: ContactId) -> GroupView:
        """Add a contact to a group you are in. Needs talk.group_admin.

        conflict if they are already a member; precondition_failed if they are blocked.
        """
        self._require(PRIV_GROUPS)
        chat = self._group(chat_id)
        if not chat.joined:
            raise ToolError(ErrorCode.PRECONDITION_FAILED, f"you left the group {chat.title!r}", field="chat_id")
        contact = self._contact(contact_id)
        if contact.contact_id in chat.members:
            raise ToolError(ErrorCode.CONFLICT, f"{contact.name} is already in {chat.title!r}", field="contact_id")
        self._not_blocked(contact, "invite them")
        chat.members = sorted([*chat.members, contact.contact_id])
        return self._group_view(chat)

    @tool("write", ["talk.group"], preconditions=["talk.group"], remedies=PRIVILEGE_REMEDY, destructive=True)
    def talk_remove_group_member(self, chat_id: ChatId, contact_id: ContactId) -> GroupView:
        """Remove a member from a group you own. Needs talk.group_admin."""
        self._require(PRIV_GROUPS)
        chat = self._group(chat_id)
        self._require_owner(chat, "remove members")
        if contact_id not in chat.members:
            raise ToolError(
                ErrorCode.NOT_FOUND, f"{self._who(contact_id)} is not a member of {chat.title!r}", field="contact_id"
            )
        chat.members = [m for m in chat.members if m != contact_id]
        return self._group_view(chat)

    @tool("write", ["talk.group"], preconditions=["talk.group"], remedies=PRIVILEGE_REMEDY)
    def talk_rename_group(self, chat_id: ChatId, name: GroupName) -> GroupView:
        """Rename a group you own. Needs talk.group_admin."""
        self._require(PRIV_GROUPS)
        chat = self._group(chat_id)
        self._require_owner(chat, "rename the group")
        chat.title = self._text(name, "name", 100)
        return self._group_view(chat)

    @tool("write", ["talk.group"], preconditions=["talk.group"], remedies=PRIVILEGE_REMEDY)
    def talk_transfer_group_ownership(self, chat_id: ChatId, contact_id: ContactId) -> GroupView:
        """Make another member the owner of a group you own (you stay a member). Needs talk.group_admin."""
        self._require(PRIV_GROUPS)
        chat = self._group(chat_id)
        self._require_owner(chat, "transfer ownership")
        if contact_id not in chat.members:
            raise ToolError(
                ErrorCode.NOT_FOUND, f"{self._who(contact_id)} is not a member of {chat.title!r}", field="contact_id"
            )
        chat.owner = contact_id
        return self._group_view(chat)

    @tool(
        "write",
        ["talk.group"],
        preconditions=["talk.group"],
        remedies={"precondition_failed": ["talk_transfer_group_ownership"]},
        destructive=True,
    )
    def talk_leave_group(self, chat_id: ChatId) -> GroupView:
        """Leave a group. The owner of a group with other members must transfer ownership first.

        Leaving twice is no error. An owner who is the last member leaves an ownerless group.
        """
        chat = self._group(chat_id)
        if not chat.joined:
            return self._group_view(chat)
        if chat.owner == ME:
            if chat.members:
                raise ToolError(
                    ErrorCode.PRECONDITION_FAILED,
                    f"you own {chat.title!r}: transfer ownership to a member "
                    "(talk_transfer_group_ownership) before leaving",
                    field="chat_id",
                    details={"members": list(chat.members)},
                )
            chat.owner = None
        chat.joined = False
        return self._group_view(chat)
