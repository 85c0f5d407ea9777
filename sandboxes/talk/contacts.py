"""Contact tools of the ``talk`` app: list, search, add, block/unblock, remarks, tags.

Every change to a contact needs the ``talk.contacts_write`` privilege of the system app.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.talk.common import PRIV_CONTACTS, PRIVILEGE_REMEDY, ContactId, TalkBase
from mcpgym.sandboxes.talk.models import Contact, ContactList, ContactView, Tag, contact_id_for


class ContactTools(TalkBase):
    """The contact tools (mixed into :class:`mcpgym.sandboxes.talk.app.TalkApp`)."""

    @tool("read", ["talk.contact"], alternatives=["talk_search_contacts"])
    def talk_list_contacts(
        self,
        tag: Annotated[Tag | None, Field(description="only contacts with this tag")] = None,
        include_blocked: Annotated[bool, Field(description="also list blocked contacts")] = True,
    ) -> ContactList:
        """List the user's contacts (id, name, phone, email, city, tags, blocked flag, nickname, note), by contact id.

        Optionally only those with one tag (family, classmates, coworkers, neighbours, friends).
        """
        items = [
            c
            for _, c in sorted(self.state.contacts.items())
            if (tag is None or tag in c.tags) and (include_blocked or not c.blocked)
        ]
        return ContactList(contacts=items, count=len(items))

    @tool("read", ["talk.contact"], alternatives=["talk_list_contacts"])
    def talk_search_contacts(
        self, query: Annotated[str, Field(min_length=1, max_length=200, description="text to look for")]
    ) -> ContactList:
        """Search contacts by name, nickname, note, phone, email or city (case-insensitive substring)."""
        q = query.strip().lower()
        if not q:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "query must not be blank", field="query")
        items = [
            c
            for _, c in sorted(self.state.contacts.items())
            if any(q in v.lower() for v in (c.name, c.nickname, c.note, c.phone, c.email, c.city))
        ]
        return ContactList(contacts=items, count=len(items))

    @tool("read", ["talk.contact"])
    def talk_get_contact(self, contact_id: ContactId) -> ContactView:
        """Return one contact by id."""
        return ContactView(contact=self._contact(contact_id))

    @tool("write", ["talk.contact"], remedies=PRIVILEGE_REMEDY, id_args=[])  # creates c-NNN from p-NNN
    def talk_add_contact(
        self,
        person_id: Annotated[str, Field(max_length=64, description="directory person id, e.g. p-017")],
        tags: Annotated[list[Tag], Field(max_length=5, description="tags to give the new contact")] = [],  # noqa: B006
    ) -> ContactView:
        """Add a person of the shared directory as a contact (contact id c-NNN for p-NNN).

        Needs the talk.contacts_write privilege. conflict when already a contact.
        """
        self._require(PRIV_CONTACTS)
        person = self.world.person(person_id)
        if person is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"no person {person_id[:64]!r} in the directory", field="person_id")
        cid = contact_id_for(person.person_id)
        if cid in self.state.contacts:
            raise ToolError(
                ErrorCode.CONFLICT,
                f"{person.name} is already contact {cid}",
                field="person_id",
                details={"contact_id": cid},
            )
        contact = Contact(
            contact_id=cid,
            person_id=person.person_id,
            name=person.name,
            phone=person.phone,
            email=person.email,
            city=person.city,
            tags=sorted(set(tags)),
        )
        self.state.contacts[cid] = contact
        return ContactView(contact=contact)

    @tool("write", ["talk.contact"], remedies=PRIVILEGE_REMEDY, destructive=True)
    def talk_block_contact(self, contact_id: ContactId) -> ContactView:
        """Block a contact: no messages, group invitations or location shares to them. Needs talk.contacts_write."""
        self._require(PRIV_CONTACTS)
        c = self._contact(contact_id)
        c.blocked = True
        return ContactView(contact=c)

    @tool("write", ["talk.contact"], remedies=PRIVILEGE_REMEDY, destructive=True)
    def talk_unblock_contact(self, contact_id: ContactId) -> ContactView:
        """Unblock a blocked contact so they can be messaged again. Needs talk.contacts_write."""
        self._require(PRIV_CONTACTS)
        c = self._contact(contact_id)
        c.blocked = False
        return ContactView(contact=c)

    @tool("write", ["talk.contact"], remedies=PRIVILEGE_REMEDY)
    def talk_set_contact_remark(
        self,
        contact_id: ContactId,
        nickname: Annotated[str | None, Field(max_length=100, description="nickname; empty string clears it")] = None,
        note: Annotated[str | None, Field(max_length=500, description="free-text note; empty string clears it")] = None,
    ) -> ContactView:
        """Set a contact's remarks: a nickname and/or a note (give at least one). Needs talk.contacts_write."""
        self._require(PRIV_CONTACTS)
        if nickname is None and note is None:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, "give a nickname or a note (an empty string clears one)", field="nickname"
            )
        c = self._contact(contact_id)
        if nickname is not None:
            c.nickname = nickname.strip()
        if note is not None:
            c.note = note.strip()
        return ContactView(contact=c)

    @tool("write", ["talk.contact"], remedies=PRIVILEGE_REMEDY)
    def talk_add_contact_tag(
        self,
        contact_id: ContactId,
        tag: Annotated[Tag, Field(description="family | classmates | coworkers | neighbours | friends")],
    ) -> ContactView:
        """Give a contact a tag (no change if it has it already). Needs talk.contacts_write."""
        self._require(PRIV_CONTACTS)
        c = self._contact(contact_id)
        c.tags = sorted(set(c.tags) | {tag})
        return ContactView(contact=c)

    @tool("write", ["talk.contact"], remedies=PRIVILEGE_REMEDY, destructive=True)
    def talk_remove_contact_tag(
        self,
        contact_id: ContactId,
        tag: Annotated[Tag, Field(description="family | classmates | coworkers | neighbours | friends")],
    ) -> ContactView:
        """Remove a tag from a contact (no change if it does not have it). Needs talk.contacts_write."""
        self._require(PRIV_CONTACTS)
        c = self._contact(contact_id)
        c.tags = [t for t in c.tags if t != tag]
        return ContactView(contact=c)
