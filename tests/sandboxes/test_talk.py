"""The talk app through the real call path (ToolInvoker): seeded data, privileges and their
remedy chain, blocking, unread counts, groups and ownership, posts, location sharing."""

from __future__ import annotations

from typing import Any

import pytest

from mcpgym.kernel.world import World
from mcpgym.sandboxes.talk import TalkApp
from mcpgym.tools.invoke import ToolInvoker
from tests.support.app_helpers import err, ok


def set_privilege(inv: ToolInvoker, privilege: str, granted: bool) -> None:
    ok(inv, "system_request_privilege" if granted else "system_revoke_privilege", privilege=privilege)


@pytest.fixture()
def inv() -> ToolInvoker:
    return ToolInvoker(World(42, ["talk"]))


def blocked_contact(inv: ToolInvoker) -> dict[str, Any]:
    return next(c for c in ok(inv, "talk_list_contacts")["contacts"] if c["blocked"])


def free_contacts(inv: ToolInvoker) -> list[dict[str, Any]]:
    return [c for c in ok(inv, "talk_list_contacts", include_blocked=False)["contacts"]]


def test_seeded_state_shape_and_determinism() -> None:
    a, b, c = World(42, ["talk"]), World(42, ["talk"]), World(43, ["talk"])
    assert a.state_hash() == b.state_hash() != c.state_hash()
    st = a.app("talk").state
    assert len(st.contacts) == 16
    assert sum(x.blocked for x in st.contacts.values()) == 2
    assert sum(bool(x.nickname) for x in st.contacts.values()) == 3
    for cid, contact in st.contacts.items():
        person = a.person(contact.person_id)
        assert person is not None and cid == "c-" + person.person_id[2:]
        assert (contact.name, contact.email, contact.city) == (person.name, person.email, person.city)
        assert person.relation in contact.tags
    kinds = [ch.kind for ch in st.chats.values()]
    assert kinds.count("direct") == 9 and kinds.count("group") == 3
    assert sum(ch.owner == "me" for ch in st.chats.values() if ch.kind == "group") == 1
    for ch in st.chats.values():
        times = [m.sent_at for m in ch.messages]
        assert times == sorted(times) and times[-1] < a.clock.now
    assert len(st.posts) == 7 and sum(p.author == "me" for p in st.posts.values()) == 1
    assert st.location.city == a.user.city


def test_tool_catalogue() -> None:
    tools = TalkApp.tools
    assert len(tools) == 33
    assert tools["talk_send_message"].alternatives == ("talk_send_chat_message",)
    assert tools["talk_send_chat_message"].alternatives == ("talk_send_message",)
    assert tools["talk_send_message"].remedies["precondition_failed"] == ("talk_unblock_contact",)
    assert tools["talk_leave_group"].remedies["precondition_failed"] == ("talk_transfer_group_ownership",)
    for name in ("talk_unblock_contact", "talk_create_group", "talk_get_location", "talk_create_location_share"):
        assert tools[name].remedies["permission_denied"] == ("system_request_privilege",)
    assert sum(t.kind == "read" for t in tools.values()) == 12


def test_blocked_contact_remedy_chain_needs_privilege(inv: ToolInvoker) -> None:
    set_privilege(inv, "talk.contacts_write", False)
    target = blocked_contact(inv)
    cid = target["contact_id"]

    e = err(inv, "talk_send_message", contact_id=cid, text="hi")
    assert e["code"] == "precondition_failed" and e["details"]["contact_id"] == cid
    assert "talk_unblock_contact" in e["message"]
    # the remedy itself needs a privilege: permission_denied -> system_request_privilege
    e = err(inv, "talk_unblock_contact", contact_id=cid)
    assert e["code"] == "permission_denied" and e["details"]["privilege"] == "talk.contacts_write"
    assert ok(inv, "system_request_privilege", privilege="talk.contacts_write")["privilege"]["granted"] is True
    assert ok(inv, "talk_unblock_contact", contact_id=cid)["contact"]["blocked"] is False

    sent = ok(inv, "talk_send_message", contact_id=cid, text="  sorry about that  ")
    assert sent["chat_id"] == f"dm-{cid}"
    assert sent["message"]["text"] == "sorry about that" and sent["message"]["sender"] == "me"
    msgs = ok(inv, "talk_list_chat_messages", chat_id=sent["chat_id"])["messages"]
    assert msgs[-1]["text"] == "sorry about that"


def test_block_stops_messages_invites_and_location_shares(inv: ToolInvoker) -> None:
    for p in ("talk.contacts_write", "talk.group_admin", "talk.location"):
        set_privilege(inv, p, True)
    first, second = free_contacts(inv)[:2]
    cid = first["contact_id"]
    assert ok(inv, "talk_block_contact", contact_id=cid)["contact"]["blocked"] is True
    assert ok(inv, "talk_block_contact", contact_id=cid)["contact"]["blocked"] is True  # idempotent
    assert err(inv, "talk_send_message", contact_id=cid, text="x")["code"] == "precondition_failed"
    assert err(inv, "talk_create_location_share", contact_id=cid)["code"] == "precondition_failed"
    before = len(inv.world.app("talk").state.chats)
    e = err(inv, "talk_create_group", name="Trip", member_ids=[second["contact_id"], cid])
    assert e["code"] == "precondition_failed" and e["field"] == "member_ids"
    assert len(inv.world.app("talk").state.chats) == before  # nothing half-created
    ok(inv, "talk_unblock_contact", contact_id=cid)
    assert ok(inv, "talk_send_message", contact_id=cid, text="back")["chat_id"] == f"dm-{cid}"


def test_unread_counts_and_mark_read(inv: ToolInvoker) -> None:
    listing = ok(inv, "talk_list_chats")
    unread = ok(inv, "talk_list_unread_messages")
    total = unread["total_unread"]
    assert total > 0
    assert (
        listing["total_unread"] == total == sum(c["unread_count"] for c in listing["chats"]) == len(unread["messages"])
    )
    assert all(m["message"]["sender"] != "me" and m["message"]["read"] is False for m in unread["messages"])
    only_unread = ok(inv, "talk_list_chats", unread_only=True)["chats"]
    assert {c["chat_id"] for c in only_unread} == {m["chat_id"] for m in unread["messages"]}

    chat = only_unread[0]
    marked = ok(inv, "talk_mark_chat_read", chat_id=chat["chat_id"])
    assert marked["marked"] == chat["unread_count"]
    assert marked["total_unread"] == total - chat["unread_count"]
    assert ok(inv, "talk_mark_chat_read", chat_id=chat["chat_id"])["marked"] == 0
    assert ok(inv, "talk_list_chat_messages", chat_id=chat["chat_id"])["unread_count"] == 0
    # sending does not create unread messages; the chat becomes the most recent one
    target = next(
        c
        for c in ok(inv, "talk_list_chats", kind="direct")["chats"]
        if not inv.world.app("talk").state.contacts[c["contact_id"]].blocked
    )
    ok(inv, "talk_send_chat_message", chat_id=target["chat_id"], text="ping")
    after = ok(inv, "talk_list_chats")
    assert after["total_unread"] == total - chat["unread_count"]
    assert after["chats"][0]["chat_id"] == target["chat_id"]
    assert after["chats"][0]["last_message"]["text"] == "ping"


def test_send_alternatives_reach_the_same_chat(inv: ToolInvoker) -> None:
    contact = free_contacts(inv)[0]
    a = ok(inv, "talk_send_message", contact_id=contact["contact_id"], text="one")
    b = ok(inv, "talk_send_chat_message", chat_id=a["chat_id"], text="two")
    assert a["chat_id"] == b["chat_id"]
    texts = [m["text"] for m in ok(inv, "talk_list_chat_messages", chat_id=a["chat_id"], limit=2)["messages"]]
    assert texts == ["one", "two"]
    assert err(inv, "talk_send_chat_message", chat_id="dm-c-999", text="x")["code"] == "not_found"
    assert err(inv, "talk_send_message", contact_id=contact["contact_id"], text="   ")["code"] == "invalid_argument"


def test_group_lifecycle_and_ownership_transfer(inv: ToolInvoker) -> None:
    set_privilege(inv, "talk.group_admin", False)
    members = [c["contact_id"] for c in free_contacts(inv)[:3]]
    e = err(inv, "talk_create_group", name="Book club", member_ids=members[:2])
    assert e["code"] == "permission_denied" and e["details"]["privilege"] == "talk.group_admin"
    set_privilege(inv, "talk.group_admin", True)
    group = ok(inv, "talk_create_group", name="Book club", member_ids=[members[1], members[0], members[0]])
    gid = group["chat_id"]
    assert group["owner"] == "me" and group["members"] == sorted(members[:2]) and group["joined"] is True

    assert ok(inv, "talk_invite_group_member", chat_id=gid, contact_id=members[2])["members"] == sorted(members)
    assert err(inv, "talk_invite_group_member", chat_id=gid, contact_id=members[2])["code"] == "conflict"
    assert ok(inv, "talk_remove_group_member", chat_id=gid, contact_id=members[2])["members"] == sorted(members[:2])
    assert ok(inv, "talk_rename_group", chat_id=gid, name="Books & wine")["title"] == "Books & wine"

    e = err(inv, "talk_leave_group", chat_id=gid)
    assert e["code"] == "precondition_failed" and "talk_transfer_group_ownership" in e["message"]
    assert err(inv, "talk_transfer_group_ownership", chat_id=gid, contact_id=members[2])["code"] == "not_found"
    moved = ok(inv, "talk_transfer_group_ownership", chat_id=gid, contact_id=members[1])
    assert moved["owner"] == members[1] and moved["joined"] is True
    assert err(inv, "talk_rename_group", chat_id=gid, name="Mine again")["code"] == "precondition_failed"

    left = ok(inv, "talk_leave_group", chat_id=gid)
    assert left["joined"] is False and left["owner"] == members[1]
    assert ok(inv, "talk_get_group", chat_id=gid)["joined"] is False
    assert err(inv, "talk_send_chat_message", chat_id=gid, text="hello?")["code"] == "precondition_failed"
    assert ok(inv, "talk_leave_group", chat_id=gid)["joined"] is False  # leaving twice is no error
    dm = next(c["chat_id"] for c in ok(inv, "talk_list_chats", kind="direct")["chats"])
    assert err(inv, "talk_get_group", chat_id=dm)["code"] == "invalid_argument"


def test_seeded_group_owned_by_someone_else(inv: ToolInvoker) -> None:
    set_privilege(inv, "talk.group_admin", True)
    state = inv.world.app("talk").state
    foreign = next(c for c in state.chats.values() if c.kind == "group" and c.owner != "me")
    e = err(inv, "talk_remove_group_member", chat_id=foreign.chat_id, contact_id=foreign.members[0])
    assert e["code"] == "precondition_failed" and e["details"]["owner"] == foreign.owner
    assert ok(inv, "talk_leave_group", chat_id=foreign.chat_id)["joined"] is False


def test_contact_edits_need_privilege_and_apply(inv: ToolInvoker) -> None:
    set_privilege(inv, "talk.contacts_write", False)
    cid = free_contacts(inv)[0]["contact_id"]
    assert err(inv, "talk_add_contact_tag", contact_id=cid, tag="friends")["code"] == "permission_denied"
    set_privilege(inv, "talk.contacts_write", True)
    tags = ok(inv, "talk_add_contact_tag", contact_id=cid, tag="neighbours")["contact"]["tags"]
    assert "neighbours" in tags and tags == sorted(tags)
    assert "neighbours" not in ok(inv, "talk_remove_contact_tag", contact_id=cid, tag="neighbours")["contact"]["tags"]
    assert err(inv, "talk_add_contact_tag", contact_id=cid, tag="enemies")["code"] == "invalid_argument"

    c = ok(inv, "talk_set_contact_remark", contact_id=cid, nickname=" Captain ", note="met at the lake")["contact"]
    assert (c["nickname"], c["note"]) == ("Captain", "met at the lake")
    hits = ok(inv, "talk_search_contacts", query="capt")["contacts"]
    assert [h["contact_id"] for h in hits] == [cid]
    assert err(inv, "talk_set_contact_remark", contact_id=cid)["code"] == "invalid_argument"
    assert ok(inv, "talk_list_contacts", tag="family")["count"] == sum(
        "family" in x.tags for x in inv.world.app("talk").state.contacts.values()
    )

    state = inv.world.app("talk").state
    stranger = next(p for p in inv.world.people if "c-" + p.person_id[2:] not in state.contacts)
    added = ok(inv, "talk_add_contact", person_id=stranger.person_id, tags=["coworkers"])["contact"]
    assert added["contact_id"] == "c-" + stranger.person_id[2:] and added["name"] == stranger.name
    assert err(inv, "talk_add_contact", person_id=stranger.person_id)["code"] == "conflict"
    assert err(inv, "talk_add_contact", person_id="p-999")["code"] == "not_found"


def test_posts_likes_and_comments(inv: ToolInvoker) -> None:
    post = ok(inv, "talk_publish_post", text="Hello world")
    pid = post["post"]["post_id"]
    feed = ok(inv, "talk_list_posts")
    assert feed["posts"][0]["post"]["post_id"] == pid and feed["count"] == 8
    assert ok(inv, "talk_list_posts", author="me")["count"] == 2
    other = next(p for p in feed["posts"] if p["post"]["author"] != "me" and not p["liked_by_me"])
    likes = other["like_count"]
    liked = ok(inv, "talk_like_post", post_id=other["post"]["post_id"])
    assert liked["liked_by_me"] is True and liked["like_count"] == likes + 1
    assert ok(inv, "talk_like_post", post_id=other["post"]["post_id"])["like_count"] == likes + 1
    n = ok(inv, "talk_list_post_comments", post_id=pid)["count"]
    comments = ok(inv, "talk_add_post_comment", post_id=pid, text="first!")
    assert comments["count"] == n + 1 and comments["comments"][-1]["author"] == "me"
    assert err(inv, "talk_like_post", post_id="post-404")["code"] == "not_found"


def test_location_privilege_and_share_links(inv: ToolInvoker) -> None:
    set_privilege(inv, "talk.location", False)
    e = err(inv, "talk_get_location")
    assert e["code"] == "permission_denied" and e["details"]["privilege"] == "talk.location"
    assert "permission_denied" in TalkApp.tools["talk_get_location"].remedies
    set_privilege(inv, "talk.location", True)
    assert ok(inv, "talk_get_location")["location"]["city"] == inv.world.user.city
    assert ok(inv, "talk_update_location", city="Porto", place="the harbour")["location"]["city"] == "Porto"

    seeded = ok(inv, "talk_list_location_shares", active_only=True)
    assert seeded["count"] == 1  # the seeded 2-hour share, created 30 minutes before the start
    cid = free_contacts(inv)[0]["contact_id"]
    share = ok(inv, "talk_create_location_share", contact_id=cid, duration_minutes=30)
    assert share["active"] is True and share["share"]["url"].endswith(share["share"]["share_id"])
    assert share["share"]["expires_at"] - share["share"]["created_at"] == 30 * 60
    assert ok(inv, "talk_list_location_shares", active_only=True)["count"] == 2

    revoked = ok(inv, "talk_revoke_location_share", share_id=share["share"]["share_id"])
    assert revoked["active"] is False and revoked["share"]["revoked"] is True
    ok(inv, "system_wait", seconds=2 * 3600)  # the seeded share expires on the virtual clock
    listing = ok(inv, "talk_list_location_shares")
    assert listing["count"] == 2 and not any(s["active"] for s in listing["shares"])
    assert err(inv, "talk_revoke_location_share", share_id="ls-nope")["code"] == "not_found"


def test_id_args_let_reads_and_alternatives_match_writes() -> None:
    tools = TalkApp.tools
    # writes whose target is not the id they name declare no ids (see docs/design.md §7 matching)
    assert tools["talk_send_message"].id_args == ()
    assert tools["talk_create_group"].id_args == ()
    assert tools["talk_add_contact"].id_args == ()
    assert tools["talk_send_chat_message"].id_args == ("chat_id",)
    assert tools["talk_invite_group_member"].id_args == ("chat_id", "contact_id")
