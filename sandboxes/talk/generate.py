"""Seeded initial state of the ``talk`` app.

Everything is drawn from the app's named streams (``contacts``, ``chats``, ``groups``,
``posts``, ``location``), so the state depends only on the world seed and the shared people
directory, never on which other apps exist. Seeded entities get stable ids; timestamps lie in
the hours before the clock's start.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from mcpgym.sandboxes.talk.models import (
    ME,
    TAGS,
    Chat,
    Comment,
    Contact,
    Location,
    LocationShare,
    Message,
    Post,
    TalkState,
    contact_id_for,
    direct_chat_id,
)

if TYPE_CHECKING:
    from mcpgym.kernel.world import World

CONTACT_COUNT = 16
"""How many of the directory's people are contacts at the start (the rest can be added)."""

PLACES = ("home", "office", "the gym", "a cafe", "the train station", "the park", "a bookshop")

_LINES: dict[str, list[str]] = {
    "family": [
        "Are you coming for dinner on Sunday?",
        "Call grandma, it's her birthday",
        "Did you get the photos?",
        "Don't forget your keys this time",
        "Love you, talk soon",
    ],
    "classmates": [
        "Do you have the notes from Tuesday?",
        "Reunion planning is on!",
        "Remember our old teacher?",
        "Study group tonight?",
        "Found our class photo",
    ],
    "coworkers": [
        "Can you review my draft?",
        "Meeting moved to 3 pm",
        "Lunch today?",
        "The client replied",
        "I pushed the fix",
    ],
    "neighbours": [
        "Your parcel is with me",
        "The lift is broken again",
        "Can you water my plants?",
        "Street party on Saturday",
        "Thanks for the ladder",
    ],
    "friends": [
        "Drinks on Friday?",
        "Did you watch the match?",
        "Hiking this weekend?",
        "Happy birthday!!",
        "Send me that song",
    ],
}
_MY_LINES = ["Sure!", "Sounds good", "On my way", "Thanks!", "Let me check", "Maybe next week?", "Haha yes"]
_POSTS = [
    "Sunset from the balcony tonight",
    "Finally finished that marathon",
    "New recipe: lemon risotto",
    "Back from a week by the sea",
    "Our cat discovered the printer",
    "First day at the new job",
    "Anyone up for a board game night?",
    "The garden is blooming",
    "Concert was amazing",
]
_COMMENTS = ["Wow!", "So jealous", "Congrats!", "Love this", "Looks great", "Count me in"]
_GROUPS = {
    "family": "Family",
    "coworkers": "Team",
    "classmates": "Class reunion",
    "friends": "Weekend crew",
    "neighbours": "Building",
}


def _contacts(world: World, r: random.Random) -> dict[str, Contact]:
    people = sorted(r.sample(world.people, min(CONTACT_COUNT, len(world.people))), key=lambda p: p.person_id)
    contacts: dict[str, Contact] = {}
    for p in people:
        tags = {p.relation} if p.relation in TAGS else set()
        if r.random() < 0.25:
            tags.add(r.choice(TAGS))
        cid = contact_id_for(p.person_id)
        contacts[cid] = Contact(
            contact_id=cid,
            person_id=p.person_id,
            name=p.name,
            phone=p.phone,
            email=p.email,
            city=p.city,
            tags=sorted(tags),
        )
    ids = sorted(contacts)
    for cid in r.sample(ids, 2):
        contacts[cid].blocked = True
    for cid in r.sample(ids, 3):
        first = contacts[cid].name.split()[0]
        contacts[cid].nickname = r.choice([f"{first}y", f"Big {first}", f"{first} from work", f"Auntie {first}"])
    for cid in r.sample(ids, 2):
        contacts[cid].note = r.choice(["owes me 20 EUR", "allergic to nuts", "birthday in March", "vegetarian"])
    return contacts


def _direct_chats(contacts: dict[str, Contact], r: random.Random, now: int) -> dict[str, Chat]:
    chats: dict[str, Chat] = {}
    ids = sorted(contacts)
    for n, cid in enumerate(sorted(r.sample(ids, 9))):
        c = contacts[cid]
        tag = c.tags[0] if c.tags else "friends"
        count = r.randint(2, 6)
        start = now - r.randint(2, 72) * 3600 - count * 1800  # the last message is >= 2 h old
        unread_tail = r.choice([0, 0, 1, 2, 3])
        msgs: list[Message] = []
        at = start
        lines = r.sample(_LINES.get(tag, _LINES["friends"]), 5)
        for i in range(count):
            at += r.randint(60, 1800)
            mine = i % 2 == 1
            from_tail = i >= count - unread_tail
            if from_tail:
                mine = False
            msgs.append(
                Message(
                    message_id=f"m-{n + 1:02d}{i + 1:02d}",
                    sender=ME if mine else cid,
                    text=r.choice(_MY_LINES) if mine else lines[i % len(lines)],
                    sent_at=at,
                    read=mine or not from_tail,
                )
            )
        chat_id = direct_chat_id(cid)
        chats[chat_id] = Chat(
            chat_id=chat_id, kind="direct", title=c.name, contact_id=cid, messages=msgs, created_at=start
        )
    return chats


def _groups(contacts: dict[str, Contact], r: random.Random, now: int) -> dict[str, Chat]:
    groups: dict[str, Chat] = {}
    by_tag: dict[str, list[str]] = {t: [] for t in TAGS}
    for cid, c in sorted(contacts.items()):
        for t in c.tags:
            by_tag[t].append(cid)
    usable = [t for t in TAGS if len(by_tag[t]) >= 2]
    if len(usable) < 3:
        usable = list(TAGS)
    for n, tag in enumerate(sorted(r.sample(usable, 3)), start=1):
        pool = by_tag[tag] if len(by_tag[tag]) >= 2 else sorted(contacts)
        members = sorted(r.sample(pool, min(len(pool), r.randint(2, 4))))
        owner = ME if n == 1 else r.choice(members)
        start = now - r.randint(24, 240) * 3600
        msgs = []
        unread_tail = r.randint(0, 3)
        count = r.randint(3, 6)
        at = start
        lines = r.sample(_LINES[tag], 5)
        for i in range(count):
            at += r.randint(300, 7200)
            from_tail = i >= count - unread_tail
            sender = r.choice(members) if (from_tail or i % 3 != 2) else ME
            msgs.append(
                Message(
                    message_id=f"gm-{n}{i + 1:02d}",
                    sender=sender,
                    text=r.choice(_MY_LINES) if sender == ME else lines[i % len(lines)],
                    sent_at=at,
                    read=sender == ME or not from_tail,
                )
            )
        chat_id = f"grp-{n:03d}"
        groups[chat_id] = Chat(
            chat_id=chat_id,
            kind="group",
            title=f"{_GROUPS[tag]} {r.choice(['chat', 'group', '2026'])}",
            owner=owner,
            members=members,
            messages=msgs,
            created_at=start,
        )
    return groups


def _posts(contacts: dict[str, Contact], r: random.Random, now: int) -> dict[str, Post]:
    ids = sorted(contacts)
    posts: dict[str, Post] = {}
    authors = [ME] + r.sample(ids, 6)
    texts = r.sample(_POSTS, len(authors))
    for n, (author, text) in enumerate(zip(authors, texts, strict=False), start=1):
        created = now - r.randint(1, 96) * 3600
        likers = set(r.sample(ids, r.randint(0, 4)))
        if author != ME and r.random() < 0.3:
            likers.add(ME)
        likers.discard(author)
        comments = []
        for k in range(r.randint(0, 3)):
            commenter = r.choice(ids)
            comments.append(
                Comment(
                    comment_id=f"cm-{n}{k + 1}",
                    author=commenter,
                    text=r.choice(_COMMENTS),
                    created_at=created + (k + 1) * 600,
                )
            )
        post_id = f"post-{n:03d}"
        posts[post_id] = Post(
            post_id=post_id, author=author, text=text, created_at=created, liked_by=sorted(likers), comments=comments
        )
    return posts


def generate_state(world: World, stream) -> TalkState:  # noqa: ANN001 - the App.stream callable
    """Build the seeded initial :class:`TalkState` of ``world``.

    Args:
        world: the world (its people directory, user and clock are read).
        stream: ``purpose -> random.Random`` (the app's :meth:`~mcpgym.kernel.app.App.stream`).

    Returns:
        16 contacts (2 blocked, 3 with nicknames), 9 direct chats and 3 groups with some unread
        messages, 7 posts (one by the user), the user's location in their home city and one
        active location share.
    """
    now = world.clock.now
    contacts = _contacts(world, stream("contacts"))
    chats = _direct_chats(contacts, stream("chats"), now)
    chats.update(_groups(contacts, stream("groups"), now))
    posts = _posts(contacts, stream("posts"), now)
    r = stream("location")
    location = Location(city=world.user.city, place=r.choice(PLACES), updated_at=now - 600)
    friendly = sorted(cid for cid, c in contacts.items() if not c.blocked)
    sharee = r.choice(friendly)
    share = LocationShare(
        share_id="ls-001",
        contact_id=sharee,
        url="https://talk.example/loc/ls-001",
        duration_minutes=120,
        created_at=now - 1800,
        expires_at=now - 1800 + 120 * 60,
    )
    return TalkState(contacts=contacts, chats=chats, posts=posts, location=location, shares={"ls-001": share})
