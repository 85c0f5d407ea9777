"""Tests of the office sandbox app (mail, calendar, files), in-process through the real
ToolInvoker (no faults)."""

from __future__ import annotations

import random

import pytest

import mcpgym.sandboxes.office  # noqa: F401 - registers the app
from mcpgym.kernel.clock import EPOCH_START, iso
from mcpgym.kernel.world import World
from mcpgym.tools.invoke import ToolInvoker
from tests.support.app_helpers import err, ok, random_value

SEED = 11
HOUR = 3_600


@pytest.fixture
def inv() -> ToolInvoker:
    return ToolInvoker(World(SEED, ["system", "office"]), "none")


def state(inv: ToolInvoker):
    return inv.world.app("office").state


def person(inv: ToolInvoker, relation: str = "coworkers"):
    return next(p for p in sorted(inv.world.people, key=lambda p: p.person_id) if p.relation == relation)


# -- mail ----------------------------------------------------------------------------------
def test_seeded_mailbox_comes_from_directory(inv):
    st = state(inv)
    emails = {p.email: p.name for p in inv.world.people}
    user = inv.world.user.email
    inbox = [m for m in st.messages.values() if m.folder == "inbox"]
    assert len(st.messages) == 28 and len(inbox) == 19
    for m in st.messages.values():
        assert m.sender == user or emails[m.sender] == m.sender_name
        assert m.sent_at < EPOCH_START
    assert sum(1 for m in st.messages.values() if m.attachments) >= 5
    assert {m.folder for m in st.messages.values()} == {"inbox", "sent", "archive", "trash"}
    replies = [m for m in inbox if m.in_reply_to]
    assert len(replies) == 3
    for r in replies:
        parent = st.messages[r.in_reply_to]
        assert parent.folder == "sent" and parent.thread_id == r.thread_id and r.subject == "Re: " + parent.subject


def test_list_mail_and_unread_counts_drop_on_reading(inv):
    st = state(inv)
    listing = ok(inv, "office_list_mail", limit=100)
    unread = sum(1 for m in st.messages.values() if m.folder == "inbox" and not m.read)
    assert listing["total"] == 19 and listing["unread_count"] == unread == listing["inbox_unread"] > 0
    assert [m["sent_at"] for m in listing["messages"]] == sorted(
        (m["sent_at"] for m in listing["messages"]), reverse=True
    )
    target = ok(inv, "office_list_mail", unread_only=True, limit=1)["messages"][0]
    assert target["read"] is False
    view = ok(inv, "office_read_mail", message_id=target["message_id"])
    assert view["body"] == st.messages[target["message_id"]].body
    assert view["message"]["read"] is True and view["inbox_unread"] == unread - 1
    assert ok(inv, "office_list_mail", unread_only=True, limit=100)["total"] == unread - 1
    # reading again changes nothing; peeking does not mark read
    assert ok(inv, "office_read_mail", message_id=target["message_id"])["inbox_unread"] == unread - 1
    other = ok(inv, "office_list_mail", unread_only=True, limit=1)["messages"][0]["message_id"]
    assert ok(inv, "office_read_mail", message_id=other, mark_read=False)["inbox_unread"] == unread - 1
    res = ok(inv, "office_mark_mail", message_id=target["message_id"], read=False)
    assert res["changed"] is True and res["inbox_unread"] == unread
    err(inv, "office_read_mail", "not_found", message_id="msg-999")


def test_send_mail_appears_in_sent_with_resolved_recipients(inv):
    colleague = person(inv)
    friend = person(inv, "friends")
    before = ok(inv, "office_list_mail", folder="sent", limit=100)["total"]
    res = ok(
        inv,
        "office_send_mail",
        to=[colleague.name],
        cc=[friend.person_id, colleague.email],
        subject="  Status report ",
        body="All green.",
    )
    msg = res["message"]
    assert msg["to"] == [colleague.email] and msg["cc"] == [friend.email]
    assert msg["folder"] == "sent" and msg["subject"] == "Status report" and msg["read"] is True
    sent = ok(inv, "office_list_mail", folder="sent", limit=100)
    assert sent["total"] == before + 1 and sent["messages"][0]["message_id"] == msg["message_id"]
    found = ok(inv, "office_search_mail", query="status report")["messages"]
    assert [m["message_id"] for m in found] == [msg["message_id"]]
    assert ok(inv, "office_list_mail", limit=100)["total"] == 19  # the inbox is unchanged
    e = err(inv, "office_send_mail", "invalid_argument", to=["not-an-address@"], subject="x", body="y")
    assert e["field"] == "to.0"
    err(inv, "office_send_mail", "not_found", to=["Nobody Known"], subject="x", body="y")
    err(inv, "office_send_mail", "invalid_argument", to=[], subject="x", body="y")
    assert set(inv.specs["office_send_mail"].alternatives) == {"office_reply_mail", "office_forward_mail"}
    assert "office_list_mail" in inv.specs["office_search_mail"].alternatives


def test_reply_threads_and_forward_keeps_attachments(inv):
    st = state(inv)
    orig = next(
        m
        for m in sorted(st.messages.values(), key=lambda m: m.message_id)
        if m.folder == "inbox" and m.attachments and not m.in_reply_to
    )
    res = ok(inv, "office_reply_mail", message_id=orig.message_id, body="Thanks, will do.")["message"]
    assert res["thread_id"] == orig.thread_id and res["in_reply_to"] == orig.message_id
    assert res["to"] == [orig.sender] and res["subject"] == "Re: " + orig.subject and res["folder"] == "sent"
    body = ok(inv, "office_read_mail", message_id=res["message_id"])["body"]
    assert body.startswith("Thanks, will do.") and "> " + orig.body.splitlines()[0] in body
    thread = [m for m in st.messages.values() if m.thread_id == orig.thread_id]
    assert len(thread) == 2
    # replying to the reply keeps the thread and the subject
    again = ok(inv, "office_reply_mail", message_id=res["message_id"], body="PS")["message"]
    assert again["thread_id"] == orig.thread_id and again["subject"] == res["subject"] and again["to"] == [orig.sender]
    friend = person(inv, "friends")
    fwd = ok(inv, "office_forward_mail", message_id=orig.message_id, to=[friend.email], note="FYI")["message"]
    assert fwd["subject"] == "Fwd: " + orig.subject and fwd["attachment_count"] == len(orig.attachments)
    assert fwd["thread_id"] != orig.thread_id
    atts = ok(inv, "office_list_attachments", message_id=fwd["message_id"])["attachments"]
    assert [a["filename"] for a in atts] == [a.filename for a in orig.attachments]


def test_labels_archive_and_delete(inv):
    st = state(inv)
    mid = sorted(m for m, v in st.messages.items() if v.folder == "inbox")[0]
    e = err(inv, "office_add_label", "not_found", message_id=mid, label="urgent")
    assert e["field"] == "label"
    assert "office_create_label" in inv.specs["office_add_label"].remedies["not_found"]
    assert ok(inv, "office_create_label", name="Urgent", description="now")["message_count"] == 0
    err(inv, "office_create_label", "conflict", name="urgent")
    res = ok(inv, "office_add_label", message_id=mid, label="urgent")
    assert "Urgent" in res["message"]["labels"] and res["changed"] is True
    assert ok(inv, "office_add_label", message_id=mid, label="Urgent")["changed"] is False
    labelled = ok(inv, "office_list_mail", label="urgent")
    assert [m["message_id"] for m in labelled["messages"]] == [mid]
    labels = {lb["name"]: lb for lb in ok(inv, "office_list_labels")["labels"]}
    assert labels["Urgent"]["message_count"] == 1 and len(labels) == 6
    work = sum(1 for m in st.messages.values() if "work" in m.labels and m.folder != "trash")
    assert labels["work"]["message_count"] == work
    ok(inv, "office_remove_label", message_id=mid, label="urgent")
    err(inv, "office_remove_label", "not_found", message_id=mid, label="urgent")
    assert ok(inv, "office_list_mail", label="urgent")["total"] == 0
    # archive, then delete to trash, then permanently
    assert ok(inv, "office_archive_mail", message_id=mid)["message"]["folder"] == "archive"
    assert mid in [m["message_id"] for m in ok(inv, "office_list_mail", folder="archive", limit=100)["messages"]]
    assert ok(inv, "office_list_mail", limit=100)["total"] == 18
    assert ok(inv, "office_delete_mail", message_id=mid) == {"message_id": mid, "folder": "trash", "permanently": False}
    assert ok(inv, "office_move_mail", message_id=mid, folder="inbox")["message"]["folder"] == "inbox"
    ok(inv, "office_delete_mail", message_id=mid)
    assert ok(inv, "office_delete_mail", message_id=mid)["permanently"] is True
    assert mid not in st.messages
    err(inv, "office_archive_mail", "not_found", message_id=mid)


def test_attachments_save_to_files(inv):
    st = state(inv)
    msg = next(m for m in sorted(st.messages.values(), key=lambda m: m.message_id) if m.attachments)
    atts = ok(inv, "office_list_attachments", message_id=msg.message_id)["attachments"]
    assert atts[0]["attachment_id"] == "att-1" and atts[0]["size_bytes"] == len(msg.attachments[0].content.encode())
    saved = ok(inv, "office_save_attachment", message_id=msg.message_id, attachment_id="att-1")["file"]
    assert saved["path"] == "/Attachments/" + msg.attachments[0].filename
    assert ok(inv, "office_read_file", file_id=saved["file_id"])["content"] == msg.attachments[0].content
    listing = ok(inv, "office_list_files", folder="/Attachments")
    assert [f["file_id"] for f in listing["files"]] == [saved["file_id"]]
    err(inv, "office_save_attachment", "conflict", message_id=msg.message_id, attachment_id="att-1")
    copy = ok(
        inv,
        "office_save_attachment",
        message_id=msg.message_id,
        attachment_id="att-1",
        folder="Documents",
        name="copy.txt",
    )["file"]
    assert copy["path"] == "/Documents/copy.txt"
    err(inv, "office_save_attachment", "not_found", message_id=msg.message_id, attachment_id="att-9")
    err(inv, "office_save_attachment", "not_found", message_id=msg.message_id, attachment_id="att-1", folder="/Nope")
    # and a drive file can be attached to a new mail
    sent = ok(inv, "office_send_mail", to=[person(inv).email], subject="file", body="see", file_ids=[copy["file_id"]])
    assert sent["message"]["attachment_count"] == 1


# -- calendar ------------------------------------------------------------------------------
def _future_event(inv: ToolInvoker):
    st = state(inv)
    return next(
        e
        for e in sorted(st.events.values(), key=lambda e: e.start)
        if e.start > EPOCH_START and e.organizer == inv.world.user.email
    )


def test_calendar_conflict_detection(inv):
    st = state(inv)
    ev = _future_event(inv)
    n = len(st.events)
    e = err(inv, "office_create_event", "conflict", title="Clash", start=iso(ev.start + 600), end=iso(ev.end + 600))
    assert ev.event_id in e["details"]["conflicts"]
    assert "office_get_free_busy" in inv.specs["office_create_event"].remedies["conflict"]
    assert len(st.events) == n
    # back-to-back is not an overlap
    fb = ok(inv, "office_get_free_busy", start=iso(ev.end), end=iso(ev.end + 1800))
    if not fb["busy"]:
        ok(inv, "office_create_event", title="Right after", start=iso(ev.end), end=iso(ev.end + 1800))
        n += 1
    forced = ok(
        inv,
        "office_create_event",
        title="Clash",
        start=iso(ev.start),
        end=iso(ev.end),
        allow_overlap=True,
        attendees=[person(inv).name],
    )
    assert forced["event"]["is_organizer"] is True and forced["added"] == [person(inv).email]
    assert len(st.events) == n + 1
    listed = ok(inv, "office_list_events", start=iso(ev.start), end=iso(ev.end))["events"]
    assert {ev.event_id, forced["event"]["event_id"]} <= {x["event_id"] for x in listed}
    err(inv, "office_create_event", "invalid_argument", title="bad", start=iso(ev.end), end=iso(ev.start))
    err(inv, "office_create_event", "invalid_argument", title="bad", start="tomorrow", end="later")


def test_free_busy_matches_events_and_finds_a_slot(inv):
    st = state(inv)
    lo, hi = EPOCH_START, EPOCH_START + 3 * 86_400
    fb = ok(inv, "office_get_free_busy", start=iso(lo), end=iso(hi))
    inside = sorted((e for e in st.events.values() if e.start < hi and lo < e.end), key=lambda e: e.start)
    covered = {i for b in fb["busy"] for i in b["event_ids"]}
    assert covered == {e.event_id for e in inside}
    assert fb["busy_seconds"] + fb["free_seconds"] == hi - lo
    union = set()
    for e in inside:
        union |= set(range(max(e.start, lo), min(e.end, hi), 60))
    assert fb["busy_seconds"] == len(union) * 60
    for b in fb["busy"]:  # no busy interval overlaps a free one
        assert all(f["end"] <= b["start"] or b["end"] <= f["start"] for f in fb["free"])
    slot = ok(inv, "office_get_free_busy", start=iso(lo), end=iso(hi), min_free_minutes=120)["free"][0]
    assert slot["end"] - slot["start"] >= 7_200
    made = ok(inv, "office_create_event", title="Focus time", start=slot["start_iso"], end=iso(slot["start"] + 7_200))[
        "event"
    ]
    assert made["start"] == slot["start"] and made["end"] == slot["start"] + 7_200
    after = ok(inv, "office_get_free_busy", start=iso(lo), end=iso(hi))
    assert after["busy_seconds"] == fb["busy_seconds"] + 7_200


def test_update_and_delete_event(inv):
    st = state(inv)
    ev = _future_event(inv)
    dur = ev.end - ev.start
    fb = ok(inv, "office_get_free_busy", start=iso(ev.start + 86_400 * 20), end=iso(ev.start + 86_400 * 21))
    new_start = fb["free"][0]["start"]
    res = ok(inv, "office_update_event", event_id=ev.event_id, start=iso(new_start), title="Moved")["event"]
    assert res["start"] == new_start and res["end"] == new_start + dur and res["title"] == "Moved"
    other = next(
        e
        for e in sorted(st.events.values(), key=lambda e: e.start)
        if e.event_id != ev.event_id and e.start > EPOCH_START
    )
    err(inv, "office_update_event", "conflict", event_id=ev.event_id, start=iso(other.start))
    invited = ok(inv, "office_invite_attendees", event_id=ev.event_id, attendees=[person(inv, "family").email])
    assert invited["added"] == [person(inv, "family").email]
    assert invited["event"]["attendees"][-1]["response"] == "needs_action"
    assert (
        ok(inv, "office_invite_attendees", event_id=ev.event_id, attendees=[person(inv, "family").email])["added"] == []
    )
    accepted = next(e for e in st.events.values() if e.invitation_id)
    err(inv, "office_update_event", "precondition_failed", event_id=accepted.event_id, title="mine now")
    assert ok(inv, "office_delete_event", event_id=ev.event_id)["declined_invitation"] is None
    err(inv, "office_get_event", "not_found", event_id=ev.event_id)
    gone = ok(inv, "office_delete_event", event_id=accepted.event_id)
    assert gone["declined_invitation"] == accepted.invitation_id
    assert st.invitations[accepted.invitation_id].status == "declined"


def test_invitations_accept_decline_and_conflict(inv):
    st = state(inv)
    pending = ok(inv, "office_list_invitations")["invitations"]
    assert len(pending) == 4 and all(p["status"] == "pending" for p in pending)
    clash = [p for p in pending if p["conflicts"]]
    free = [p for p in pending if not p["conflicts"]]
    assert clash and free
    target = free[0]
    res = ok(inv, "office_respond_invitation", invitation_id=target["invitation_id"], response="accept")
    assert res["changed"] is True and res["invitation"]["status"] == "accepted"
    ev = res["event"]
    assert ev["title"] == target["title"] and ev["start"] == target["start"] and ev["is_organizer"] is False
    listed = ok(inv, "office_list_events", start=target["start_iso"], end=target["end_iso"])["events"]
    assert [x["invitation_id"] for x in listed] == [target["invitation_id"]]
    again = ok(inv, "office_respond_invitation", invitation_id=target["invitation_id"], response="accept")
    assert again["changed"] is False and again["event"]["event_id"] == ev["event_id"]
    assert len(ok(inv, "office_list_invitations")["invitations"]) == 3
    # the clashing one needs allow_overlap
    c = clash[0]
    e = err(inv, "office_respond_invitation", "conflict", invitation_id=c["invitation_id"], response="accept")
    assert e["details"]["conflicts"] == c["conflicts"]
    assert st.invitations[c["invitation_id"]].status == "pending"
    ok(inv, "office_respond_invitation", invitation_id=c["invitation_id"], response="accept", allow_overlap=True)
    # declining an accepted invitation removes its event
    n = len(st.events)
    dec = ok(inv, "office_respond_invitation", invitation_id=target["invitation_id"], response="decline")
    assert dec["invitation"]["status"] == "declined" and dec["event"] is None and len(st.events) == n - 1
    assert (
        ok(inv, "office_list_invitations", status="declined")["invitations"][0]["invitation_id"]
        == target["invitation_id"]
    )
    err(inv, "office_respond_invitation", "not_found", invitation_id="inv-999", response="accept")


# -- files ---------------------------------------------------------------------------------
def test_files_create_edit_rename_move(inv):
    root = ok(inv, "office_list_files")
    assert root["subfolders"] == ["/Attachments", "/Documents", "/Notes", "/Projects", "/Receipts"]
    assert root["files"] == []
    assert len(ok(inv, "office_list_files", recursive=True)["files"]) == 11
    f = ok(inv, "office_create_file", name="todo.md", content="- call bank", folder="/Notes")["file"]
    assert f["path"] == "/Notes/todo.md" and f["size_bytes"] == len("- call bank")
    err(inv, "office_create_file", "conflict", name="TODO.md", folder="Notes")
    err(inv, "office_create_file", "not_found", name="x.md", folder="/Missing")
    err(inv, "office_create_file", "invalid_argument", name="a/b", folder="/Notes")
    edited = ok(inv, "office_edit_file", file_id=f["file_id"], content="- pay rent", mode="append")
    assert edited["content"] == "- call bank\n- pay rent"
    assert ok(inv, "office_search_files", query="pay rent")["files"][0]["file_id"] == f["file_id"]
    assert ok(inv, "office_rename_file", file_id=f["file_id"], new_name="tasks.md")["file"]["path"] == "/Notes/tasks.md"
    e = err(inv, "office_move_file", "not_found", file_id=f["file_id"], folder="/Archive/2026")
    assert "office_create_folder" in inv.specs["office_move_file"].remedies["not_found"]
    assert e["field"] == "folder"
    made = ok(inv, "office_create_folder", path="Archive/2026/")
    assert made["path"] == "/Archive/2026" and made["created"] is True and "/Archive" in made["folders"]
    assert ok(inv, "office_create_folder", path="/Archive/2026")["created"] is False
    moved = ok(inv, "office_move_file", file_id=f["file_id"], folder="/Archive/2026")["file"]
    assert moved["path"] == "/Archive/2026/tasks.md"
    assert ok(inv, "office_list_files", folder="/Notes")["files"] == [
        x for x in ok(inv, "office_list_files", folder="/Notes")["files"] if x["file_id"] != f["file_id"]
    ]
    assert [x["name"] for x in ok(inv, "office_list_files", folder="/Archive/2026")["files"]] == ["tasks.md"]
    assert ok(inv, "office_list_files", folder="/Archive")["subfolders"] == ["/Archive/2026"]
    ok(inv, "office_delete_file", file_id=f["file_id"])
    err(inv, "office_read_file", "not_found", file_id=f["file_id"])
    err(inv, "office_list_files", "invalid_argument", folder="/../etc")


def test_share_needs_privilege_chain(inv):
    st = state(inv)
    ok(inv, "system_revoke_privilege", privilege="office.share")
    f = next(x for x in sorted(st.files.values(), key=lambda x: x.file_id) if not x.shares)
    friend = person(inv, "friends")
    e = err(inv, "office_share_file", "permission_denied", file_id=f.file_id, person=friend.name)
    assert e["details"]["privilege"] == "office.share"
    assert inv.specs["office_share_file"].remedies["permission_denied"] == ("system_request_privilege",)
    assert f.shares == []
    ok(inv, "system_request_privilege", privilege="office.share")
    res = ok(inv, "office_share_file", file_id=f.file_id, person=friend.name, permission="edit")
    assert res["changed"] is True and res["share"]["email"] == friend.email and res["share"]["permission"] == "edit"
    assert ok(inv, "office_share_file", file_id=f.file_id, person=friend.email, permission="edit")["changed"] is False
    shares = ok(inv, "office_list_shares", file_id=f.file_id)["shares"]
    assert [(s["email"], s["permission"]) for s in shares] == [(friend.email, "edit")]
    assert len(ok(inv, "office_list_shares")["shares"]) == 2  # plus the seeded share
    err(inv, "office_share_file", "not_found", file_id=f.file_id, person="stranger@elsewhere.org")
    ok(inv, "office_unshare_file", file_id=f.file_id, person=friend.person_id)
    err(inv, "office_unshare_file", "not_found", file_id=f.file_id, person=friend.person_id)
    assert ok(inv, "office_list_shares", file_id=f.file_id)["shares"] == []


def test_contacts_are_the_shared_directory(inv):
    contacts = ok(inv, "office_list_contacts")["contacts"]
    assert {c["person_id"] for c in contacts} == {p.person_id for p in inv.world.people}
    one = inv.world.people[3]
    assert [c["email"] for c in ok(inv, "office_list_contacts", query=one.name.upper())["contacts"]] == [one.email]


# -- determinism ---------------------------------------------------------------------------
def _script(inv: ToolInvoker) -> None:
    st = state(inv)
    mid = sorted(m for m, v in st.messages.items() if v.folder == "inbox")[0]
    ok(inv, "office_read_mail", message_id=mid)
    ok(inv, "office_reply_mail", message_id=mid, body="ok")
    ok(
        inv,
        "office_create_event",
        title="x",
        start=iso(EPOCH_START + 40 * 86_400),
        end=iso(EPOCH_START + 40 * 86_400 + HOUR),
    )
    ok(inv, "office_create_file", name="n.md", content="c", folder="/Notes")


def test_same_seed_same_state_hash_and_snapshot_round_trip():
    a, b = World(SEED, ["system", "office"]), World(SEED, ["system", "office"])
    assert a.state_hash() == b.state_hash()
    assert World(SEED + 1, ["system", "office"]).state_hash() != a.state_hash()
    assert World(SEED, ["system", "office", "news"]).snapshot()["state"]["office"] == a.snapshot()["state"]["office"]
    ia, ib = ToolInvoker(a, "none"), ToolInvoker(b, "none")
    _script(ia)
    _script(ib)
    assert a.state_hash() == b.state_hash()
    restored = World.restore(a.snapshot())
    assert restored.state_hash() == a.state_hash()
    ir = ToolInvoker(restored, "none")
    for i in (ia, ir):
        res = ok(i, "office_send_mail", to=["p-002"], subject="after restore", body="b")
    assert restored.state_hash() == a.state_hash()
    assert state(ir).messages[res["message"]["message_id"]].subject == "after restore"
    # generated ids differ from a different history, but the judge's comparable view does not
    c = World(SEED, ["system", "office"])
    ic = ToolInvoker(c, "none")
    ok(ic, "office_create_label", name="tmp")
    zz = ok(ic, "office_send_mail", to=["p-001"], subject="zz", body="zz")["message"]["message_id"]
    ok(ic, "office_delete_mail", message_id=zz)
    ok(ic, "office_delete_mail", message_id=zz)  # from the trash: gone for good
    _script(ic)
    assert ic.world.state_hash() != a.state_hash()
    ok(ic, "office_send_mail", to=["p-002"], subject="after restore", body="b")
    cmp_a, cmp_c = a.comparable()["office"], c.comparable()["office"]
    cmp_c["labels"].pop("tmp")
    assert cmp_a == cmp_c


def test_read_tools_do_not_change_state(inv):
    h = inv.world.state_hash()
    args = {
        "office_get_event": {"event_id": "ev-001"},
        "office_read_file": {"file_id": "f-001"},
        "office_list_attachments": {"message_id": "msg-001"},
        "office_search_mail": {"query": "the"},
        "office_search_files": {"query": "a"},
        "office_get_free_busy": {"start": iso(EPOCH_START), "end": iso(EPOCH_START + 86_400)},
    }
    n = 0
    for name, spec in inv.specs.items():
        if spec.app == "office" and spec.kind == "read":
            ok(inv, name, **args.get(name, {}))
            n += 1
    assert n == 13
    assert inv.world.state_hash() == h


VALUES = {
    "string": [
        "",
        " ",
        "zz",
        "msg-001",
        "ev-001",
        "inv-001",
        "f-001",
        "att-1",
        "p-001",
        "/Notes",
        "../x",
        "2026-06-02T10:00:00Z",
        "9999-12-31T23:59:59",
        "a@b.co",
        "Z" * 300,
    ],
    "integer": [0, 1, -3, 10**12],
    "boolean": [True, False],
}


def _value(r: random.Random, schema: dict):
    return random_value(r, schema, VALUES)


def test_no_input_crashes_an_office_tool(inv):
    r = random.Random(0)
    tools = 0
    for name, spec in sorted(inv.specs.items()):
        if spec.app != "office":
            continue
        tools += 1
        props = spec.input_schema().get("properties", {})
        for _ in range(25):
            args = {k: _value(r, v) for k, v in props.items() if r.random() < 0.8}
            out = inv.call(name, args)
            assert not out.record.internal, (name, args, out.payload)
        assert not inv.call(name, {"unexpected": 1}).record.internal
    assert tools == 38
