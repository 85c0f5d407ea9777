"""Mail tools of the office app: list, search, read, send, reply, forward, move, labels,
attachments, and the contacts directory."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.office.common import OfficeBase
from mcpgym.sandboxes.office.models import Attachment, Label, Message
from mcpgym.sandboxes.office.views import (
    AttachmentInfo,
    AttachmentList,
    Contact,
    ContactList,
    FileResult,
    LabelInfo,
    LabelList,
    MailDeleted,
    MailList,
    MailResult,
    MailSummary,
    MailView,
)

MessageId = Annotated[str, Field(description="message id, e.g. msg-004")]
Recipients = Annotated[
    list[str],
    Field(min_length=1, max_length=20, description="recipients: email addresses, directory ids (p-003) or full names"),
]
LabelName = Annotated[str, Field(min_length=1, max_length=40, description="label name, e.g. work")]
Limit = Annotated[int, Field(ge=1, le=100, description="most messages to return (1-100)")]
MAIL_NOT_FOUND = ["office_search_mail", "office_list_mail"]


class MailTools(OfficeBase):
    """Mixin: the mail tools (see the module docstring)."""

    # -- helpers ---------------------------------------------------------------------------
    def _message(self, message_id: str) -> Message:
        m = self.state.messages.get(message_id)
        if m is None:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"no message {message_id!r}; find ids with office_list_mail or office_search_mail",
                field="message_id",
            )
        return m

    def _inbox_unread(self) -> int:
        return sum(1 for m in self.state.messages.values() if m.folder == "inbox" and not m.read)

    def _mail_summary(self, m: Message) -> MailSummary:
        snippet = " ".join(m.body.split())[:120]
        return MailSummary(
            message_id=m.message_id,
            thread_id=m.thread_id,
            folder=m.folder,
            sender=m.sender,
            sender_name=m.sender_name,
            to=list(m.to),
            cc=list(m.cc),
            subject=m.subject,
            snippet=snippet,
            sent_at=m.sent_at,
            sent_iso=iso(m.sent_at),
            read=m.read,
            labels=list(m.labels),
            attachment_count=len(m.attachments),
            in_reply_to=m.in_reply_to,
        )

    def _attachment_infos(self, m: Message) -> list[AttachmentInfo]:
        return [
            AttachmentInfo(
                attachment_id=a.attachment_id,
                filename=a.filename,
                mime_type=a.mime_type,
                size_bytes=len(a.content.encode("utf-8")),
            )
            for a in m.attachments
        ]

    def _mail_list(self, msgs: list[Message], limit: int, offset: int = 0) -> MailList:
        msgs = sorted(msgs, key=lambda m: (-m.sent_at, m.message_id))
        return MailList(
            messages=[self._mail_summary(m) for m in msgs[offset : offset + limit]],
            total=len(msgs),
            unread_count=sum(1 for m in msgs if not m.read),
            inbox_unread=self._inbox_unread(),
        )

    def _label(self, label: str) -> Label:
        key = label.strip().lower()
        for lab in self.state.labels.values():
            if lab.name.lower() == key:
                return lab
        raise ToolError(
            ErrorCode.NOT_FOUND,
            f"no label {label!r}; create it with office_create_label or see office_list_labels",
            field="label",
        )

    def _new_message(
        self,
        to: list[str],
        cc: list[str],
        subject: str,
        body: str,
        *,
        thread_id: str | None = None,
        in_reply_to: str | None = None,
        forwarded_from: str | None = None,
        attachments: list[Attachment] | None = None,
    ) -> Message:
        mid = self.new_id("msg")
        m = Message(
            message_id=mid,
            thread_id=thread_id or self.new_id("thr"),
            folder="sent",
            sender=self.user_email,
            sender_name=self.world.user.name,
            to=to,
            cc=cc,
            subject=subject,
            body=body,
            sent_at=self.now,
            read=True,
            attachments=attachments or [],
            in_reply_to=in_reply_to,
            forwarded_from=forwarded_from,
        )
        self.state.messages[mid] = m
        return m

    def _addresses(self, values: list[str], field: str) -> list[str]:
        out: list[str] = []
        for i, v in enumerate(values):
            addr = self.resolve_person(v, f"{field}.{i}")
            if addr not in out:
                out.append(addr)
        return out

    # -- reading ---------------------------------------------------------------------------
    @tool("read", ["office.mail"], alternatives=["office_search_mail"], remedies={"not_found": ["office_list_labels"]})
    def office_list_mail(
        self,
        folder: Annotated[
            Literal["inbox", "sent", "archive", "trash", "all"],
            Field(description="mail folder; all = every folder except trash"),
        ] = "inbox",
        unread_only: Annotated[bool, Field(description="only unread messages")] = False,
        label: Annotated[str | None, Field(description="only messages with this label")] = None,
        sender: Annotated[
            str | None, Field(description="only messages whose sender address or name contains this text")
        ] = None,
        limit: Limit = 20,
        offset: Annotated[int, Field(ge=0, le=10_000, description="skip this many messages (paging)")] = 0,
    ) -> MailList:
        """List messages of a folder, newest first, with optional filters (unread, label, sender).

        Returns summaries (snippet, no full body), the number of matches, how many of them are
        unread, and the inbox's unread count.
        """
        lab = None if label is None else self._label(label).name
        needle = None if sender is None else sender.strip().lower()
        msgs = [
            m
            for m in self.state.messages.values()
            if (m.folder == folder or (folder == "all" and m.folder != "trash"))
            and not (unread_only and m.read)
            and (lab is None or lab in m.labels)
            and (needle is None or needle in m.sender.lower() or needle in m.sender_name.lower())
        ]
        return self._mail_list(msgs, limit, offset)

    @tool("read", ["office.mail"], alternatives=["office_list_mail"])
    def office_search_mail(
        self,
        query: Annotated[str, Field(min_length=1, max_length=200, description="words that must all occur")],
        folder: Annotated[
            Literal["inbox", "sent", "archive", "trash", "all"],
            Field(description="where to search; all = every folder except trash"),
        ] = "all",
        limit: Limit = 20,
    ) -> MailList:
        """Search messages whose subject, body, sender, recipients or attachment names contain
        every word of the query (case-insensitive), newest first."""
        words = query.lower().split()
        if not words:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "the query must contain a word", field="query")
        out = []
        for m in self.state.messages.values():
            if not (m.folder == folder or (folder == "all" and m.folder != "trash")):
                continue
            text = " ".join(
                [m.subject, m.body, m.sender, m.sender_name, *m.to, *m.cc, *(a.filename for a in m.attachments)]
            ).lower()
            if all(w in text for w in words):
                out.append(m)
        return self._mail_list(out, limit)

    @tool("write", ["office.mail"], remedies={"not_found": MAIL_NOT_FOUND}, id_args=["message_id"])
    def office_read_mail(
        self,
        message_id: MessageId,
        mark_read: Annotated[bool, Field(description="mark the message as read (default true)")] = True,
    ) -> MailView:
        """Open a message: full body and attachment list. Marks it as read unless mark_read is
        false."""
        m = self._message(message_id)
        if mark_read:
            m.read = True
        return MailView(
            message=self._mail_summary(m),
            body=m.body,
            attachments=self._attachment_infos(m),
            inbox_unread=self._inbox_unread(),
        )

    @tool("write", ["office.mail"], remedies={"not_found": MAIL_NOT_FOUND})
    def office_mark_mail(
        self,
        message_id: MessageId,
        read: Annotated[bool, Field(description="true = read, false = unread")],
    ) -> MailResult:
        """Mark a message as read or unread."""
        m = self._message(message_id)
        changed = m.read != read
        m.read = read
        return MailResult(message=self._mail_summary(m), changed=changed, inbox_unread=self._inbox_unread())

    # -- sending ---------------------------------------------------------------------------
    @tool(
        "write",
        ["office.mail"],
        alternatives=["office_reply_mail", "office_forward_mail"],
        remedies={"not_found": ["office_list_contacts", "office_list_files"]},
        id_args=[],
    )
    def office_send_mail(
        self,
        to: Recipients,
        subject: Annotated[str, Field(min_length=1, max_length=200, description="subject line")],
        body: Annotated[str, Field(max_length=10_000, description="message text")],
        cc: Annotated[list[str], Field(max_length=20, description="cc recipients (addresses, ids or names)")] = [],
        file_ids: Annotated[list[str], Field(max_length=10, description="drive files to attach (file ids)")] = [],
    ) -> MailResult:
        """Send a new message. It appears in the sent folder (a new thread). Recipients may be
        email addresses or people of the directory (id or full name); drive files can be attached."""
        to_addr = self._addresses(to, "to")
        cc_addr = [a for a in self._addresses(cc, "cc") if a not in to_addr]
        if not subject.strip():
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "the subject must not be blank", field="subject")
        attachments = []
        for i, fid in enumerate(file_ids):
            f = self.state.files.get(fid)
            if f is None:
                raise ToolError(ErrorCode.NOT_FOUND, f"no file {fid!r}; see office_list_files", field=f"file_ids.{i}")
            attachments.append(
                Attachment(
                    attachment_id=f"att-{i + 1}",
                    filename=f.name,
                    content=f.content,
                    mime_type="text/csv" if f.name.endswith(".csv") else "text/plain",
                )
            )
        m = self._new_message(to_addr, cc_addr, subject.strip(), body, attachments=attachments)
        return MailResult(message=self._mail_summary(m), inbox_unread=self._inbox_unread())

    @tool("write", ["office.mail"], alternatives=["office_send_mail"], remedies={"not_found": MAIL_NOT_FOUND})
    def office_reply_mail(
        self,
        message_id: MessageId,
        body: Annotated[str, Field(max_length=10_000, description="reply text (the original is quoted below it)")],
        reply_all: Annotated[bool, Field(description="also reply to the other recipients")] = False,
    ) -> MailResult:
        """Reply to a message in the same thread: to its sender (or, for the user's own sent
        message, to its recipients), subject prefixed "Re:", original quoted. reply_all also
        copies the other recipients."""
        orig = self._message(message_id)
        me = self.user_email
        if orig.sender == me:
            to, cc = list(orig.to), (list(orig.cc) if reply_all else [])
        else:
            to = [orig.sender]
            cc = [a for a in [*orig.to, *orig.cc] if a not in (me, orig.sender)] if reply_all else []
        cc = [a for a in dict.fromkeys(cc) if a not in to]
        subject = orig.subject if orig.subject.lower().startswith("re:") else "Re: " + orig.subject
        quoted = "\n".join("> " + line for line in orig.body.splitlines())
        text = f"{body}\n\nOn {iso(orig.sent_at)}, {orig.sender_name} wrote:\n{quoted}"
        m = self._new_message(to, cc, subject, text, thread_id=orig.thread_id, in_reply_to=orig.message_id)
        return MailResult(message=self._mail_summary(m), inbox_unread=self._inbox_unread())

    @tool(
        "write",
        ["office.mail"],
        alternatives=["office_send_mail"],
        remedies={"not_found": [*MAIL_NOT_FOUND, "office_list_contacts"]},
    )
    def office_forward_mail(
        self,
        message_id: MessageId,
        to: Recipients,
        note: Annotated[str, Field(max_length=10_000, description="text above the forwarded message")] = "",
    ) -> MailResult:
        """Forward a message (with its attachments) to new recipients; subject prefixed "Fwd:"."""
        orig = self._message(message_id)
        to_addr = self._addresses(to, "to")
        subject = orig.subject if orig.subject.lower().startswith("fwd:") else "Fwd: " + orig.subject
        text = (
            f"{note}\n\n---------- Forwarded message ----------\nFrom: {orig.sender_name} <{orig.sender}>\n"
            f"Date: {iso(orig.sent_at)}\nSubject: {orig.subject}\n\n{orig.body}"
        )
        m = self._new_message(
            to_addr,
            [],
            subject,
            text,
            forwarded_from=orig.message_id,
            attachments=[a.model_copy() for a in orig.attachments],
        )
        return MailResult(message=self._mail_summary(m), inbox_unread=self._inbox_unread())

    # -- organising ------------------------------------------------------------------------
    @tool(
        "write",
        ["office.mail"],
        alternatives=["office_archive_mail", "office_delete_mail"],
        remedies={"not_found": MAIL_NOT_FOUND},
    )
    def office_move_mail(
        self,
        message_id: MessageId,
        folder: Annotated[Literal["inbox", "sent", "archive", "trash"], Field(description="destination folder")],
    ) -> MailResult:
        """Move a message to the inbox, sent, archive or trash folder (e.g. restore it from the
        trash). Only the user's own messages go to sent; those cannot go to the inbox unless
        the user is a recipient."""
        m = self._message(message_id)
        mine = m.sender == self.user_email
        if folder == "inbox" and mine and self.user_email not in m.to + m.cc:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, "a message the user sent cannot be moved to the inbox", field="folder"
            )
        if folder == "sent" and not mine:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, "only messages the user sent can go to the sent folder", field="folder"
            )
        changed = m.folder != folder
        m.folder = folder
        return MailResult(message=self._mail_summary(m), changed=changed, inbox_unread=self._inbox_unread())

    @tool(
        "write",
        ["office.mail"],
        alternatives=["office_move_mail"],
        remedies={"not_found": MAIL_NOT_FOUND},
        destructive=True,
    )
    def office_archive_mail(self, message_id: MessageId) -> MailResult:
        """Archive a message (move it out of the inbox into the archive folder)."""
        m = self._message(message_id)
        changed = m.folder != "archive"
        m.folder = "archive"
        return MailResult(message=self._mail_summary(m), changed=changed, inbox_unread=self._inbox_unread())

    @tool(
        "write",
        ["office.mail"],
        alternatives=["office_move_mail"],
        remedies={"not_found": MAIL_NOT_FOUND},
        destructive=True,
    )
    def office_delete_mail(self, message_id: MessageId) -> MailDeleted:
        """Delete a message: it moves to the trash; deleting a message already in the trash
        removes it permanently."""
        m = self._message(message_id)
        if m.folder == "trash":
            del self.state.messages[message_id]
            return MailDeleted(message_id=message_id, folder=None, permanently=True)
        m.folder = "trash"
        return MailDeleted(message_id=message_id, folder="trash", permanently=False)

    # -- labels ----------------------------------------------------------------------------
    @tool("read", ["office.label"])
    def office_list_labels(self) -> LabelList:
        """List mail labels with how many messages (outside the trash) carry each and how many
        of those are unread."""
        out = []
        for lab in sorted(self.state.labels.values(), key=lambda lb: lb.name.lower()):
            msgs = [m for m in self.state.messages.values() if lab.name in m.labels and m.folder != "trash"]
            out.append(
                LabelInfo(
                    name=lab.name,
                    description=lab.description,
                    message_count=len(msgs),
                    unread_count=sum(1 for m in msgs if not m.read),
                )
            )
        return LabelList(labels=out)

    @tool("write", ["office.label"], id_args=["name"])
    def office_create_label(
        self,
        name: LabelName,
        description: Annotated[str, Field(max_length=200, description="what the label is for")] = "",
    ) -> LabelInfo:
        """Create a mail label. Errors: conflict when a label of that name (any case) exists."""
        clean = " ".join(name.split())
        if not clean or "/" in clean:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, "a label name needs a visible character and no slash", field="name"
            )
        if any(lab.name.lower() == clean.lower() for lab in self.state.labels.values()):
            raise ToolError(ErrorCode.CONFLICT, f"label {clean!r} already exists", field="name")
        self.state.labels[clean] = Label(name=clean, description=description.strip())
        return LabelInfo(name=clean, description=description.strip(), message_count=0, unread_count=0)

    @tool(
        "write",
        ["office.mail", "office.label"],
        preconditions=["office.label"],
        remedies={"not_found": ["office_create_label", "office_list_labels", *MAIL_NOT_FOUND]},
    )
    def office_add_label(self, message_id: MessageId, label: LabelName) -> MailResult:
        """Put an existing label on a message (create labels with office_create_label)."""
        m = self._message(message_id)
        lab = self._label(label)
        changed = lab.name not in m.labels
        if changed:
            m.labels = sorted([*m.labels, lab.name])
        return MailResult(message=self._mail_summary(m), changed=changed, inbox_unread=self._inbox_unread())

    @tool(
        "write",
        ["office.mail", "office.label"],
        remedies={"not_found": ["office_list_labels", *MAIL_NOT_FOUND]},
        destructive=True,
    )
    def office_remove_label(self, message_id: MessageId, label: LabelName) -> MailResult:
        """Take a label off a message. Errors: not_found when the message does not carry it."""
        m = self._message(message_id)
        lab = self._label(label)
        if lab.name not in m.labels:
            raise ToolError(ErrorCode.NOT_FOUND, f"{message_id} has no label {lab.name!r}", field="label")
        m.labels = [x for x in m.labels if x != lab.name]
        return MailResult(message=self._mail_summary(m), inbox_unread=self._inbox_unread())

    # -- attachments -----------------------------------------------------------------------
    # Its own family: attachments never change, so listing them verifies no write to a message.
    @tool("read", ["office.attachment"], remedies={"not_found": MAIL_NOT_FOUND})
    def office_list_attachments(self, message_id: MessageId) -> AttachmentList:
        """List a message's attachments (id, file name, type, size in bytes)."""
        m = self._message(message_id)
        return AttachmentList(message_id=message_id, attachments=self._attachment_infos(m))

    @tool(
        "write",
        ["office.file"],
        preconditions=["office.attachment", "office.folder", "office.file"],
        remedies={"not_found": ["office_list_attachments", "office_create_folder", *MAIL_NOT_FOUND]},
        id_args=["message_id", "attachment_id"],
    )
    def office_save_attachment(
        self,
        message_id: MessageId,
        attachment_id: Annotated[str, Field(description="attachment id from office_list_attachments, e.g. att-1")],
        folder: Annotated[str, Field(description="drive folder to save into")] = "/Attachments",
        name: Annotated[str | None, Field(description="file name (default: the attachment's)")] = None,
    ) -> FileResult:
        """Save a message attachment as a file in the drive. Errors: conflict when the folder
        already has a file of that name (pass another name)."""
        m = self._message(message_id)
        att = next((a for a in m.attachments if a.attachment_id == attachment_id), None)
        if att is None:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"{message_id} has no attachment {attachment_id!r}; see office_list_attachments",
                field="attachment_id",
            )
        path = self.require_folder(folder)
        f = self.add_file(att.filename if name is None else name, path, att.content)
        return FileResult(file=self.file_info(f))

    # -- contacts --------------------------------------------------------------------------
    @tool("read", ["office.contact"])
    def office_list_contacts(
        self,
        query: Annotated[str | None, Field(max_length=100, description="text in the name, email or city")] = None,
    ) -> ContactList:
        """List people of the directory (name, email, phone, city, relation), optionally
        filtered by a text in their name, email or city."""
        needle = None if query is None else query.strip().lower()
        people = sorted(self.world.people, key=lambda p: (p.name, p.person_id))
        return ContactList(
            contacts=[
                Contact(
                    person_id=p.person_id, name=p.name, email=p.email, phone=p.phone, city=p.city, relation=p.relation
                )
                for p in people
                if not needle or needle in p.name.lower() or needle in p.email or needle in p.city.lower()
            ]
        )
