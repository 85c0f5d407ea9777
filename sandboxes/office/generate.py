"""Seeded initial state of the ``office`` app: a mailbox of messages from people of the
shared directory, a calendar with events and pending invitations, and a drive of files.

All choices come from the app's named streams; ids of seeded entities are stable
(``msg-001``, ``ev-001``, ``inv-001``, ``f-001``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcpgym.kernel.people import Person
from mcpgym.sandboxes.office.models import (
    Attachment,
    Attendee,
    Event,
    File,
    Invitation,
    Label,
    Message,
    OfficeState,
    Share,
)

if TYPE_CHECKING:
    from mcpgym.kernel.world import World

DAY = 86_400
HOUR = 3_600
PROJECTS = ["Atlas", "Beacon", "Comet", "Delta", "Ember", "Falcon"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
LABELS = {
    "work": "Work matters",
    "personal": "Family and friends",
    "finance": "Bills, invoices and budgets",
    "travel": "Trips and bookings",
    "important": "Needs attention",
}
FOLDERS = ["/", "/Attachments", "/Documents", "/Notes", "/Projects", "/Receipts"]

# (subject, body, labels, attachment (filename, content) or None); {slots} filled per message.
MAIL_TEMPLATES: dict[str, list[tuple[str, str, list[str], tuple[str, str] | None]]] = {
    "coworkers": [
        (
            "Q3 budget review",
            "Hi {user_first},\n\nAttached is the draft Q3 budget. Could you check the travel line "
            "before {weekday}? We are {n}% over plan.\n\nThanks,\n{first}",
            ["work", "finance"],
            (
                "q3-budget.csv",
                "category,planned,actual\ntravel,12000,{amount}\nsoftware,8000,7600\ntraining,5000,4100\n",
            ),
        ),
        (
            "Project {project} kickoff",
            "Hi {user_first},\n\nThe {project} kickoff is on {weekday}. The agenda is "
            "attached; please add your topics.\n\nBest,\n{first}",
            ["work"],
            ("agenda-{project_l}.md", "# {project} kickoff\n\n1. Goals\n2. Timeline\n3. Owners\n4. Risks\n"),
        ),
        (
            "Code review for {project}",
            "Hey {user_first},\n\nCould you review my change for {project} today? It "
            "touches the login flow.\n\n{first}",
            ["work"],
            None,
        ),
        (
            "Can we move our 1:1?",
            "Hi {user_first},\n\nSomething came up on {weekday}. Could we move our 1:1 to the afternoon?\n\n{first}",
            ["work"],
            None,
        ),
        (
            "Slides for the client demo",
            "Hi {user_first},\n\nHere is the outline for the client demo. Comments welcome.\n\n{first}",
            ["work", "important"],
            ("demo-outline.md", "# Client demo\n\n- Intro ({first})\n- Live walkthrough\n- Pricing\n- Q&A\n"),
        ),
        (
            "Invoice {inv} for consulting",
            "Hello {user_first},\n\nPlease find invoice {inv} attached, due in 30 days.\n\nRegards,\n{first}",
            ["finance"],
            ("invoice-{inv}.txt", "INVOICE {inv}\nConsulting services, {n} hours\nTotal due: {amount} USD\n"),
        ),
    ],
    "family": [
        (
            "Sunday lunch",
            "Hi {user_first},\n\nLunch at ours on Sunday at 1pm? Bring dessert if you can.\n\nLove,\n{first}",
            ["personal"],
            None,
        ),
        (
            "Photos from the trip",
            "Hi {user_first},\n\nI finally sorted the photos from {city}. The list is attached.\n\n{first}",
            ["personal", "travel"],
            ("photo-list.txt", "{city} trip photos\n001 harbour at dawn\n002 old town\n003 dinner by the river\n"),
        ),
        (
            "Mum's birthday present",
            "Hey {user_first},\n\nShall we split a present for Mum? I was thinking of a "
            "weekend in {city}, about {amount} USD.\n\n{first}",
            ["personal", "important"],
            None,
        ),
        (
            "Moving day help",
            "Hi {user_first},\n\nCould you help me move on {weekday}? Pizza is on me.\n\n{first}",
            ["personal"],
            None,
        ),
    ],
    "friends": [
        (
            "Concert tickets",
            "Hey {user_first}!\n\nI got two tickets for the concert in {city} on {weekday}. Want to come?\n\n{first}",
            ["personal"],
            None,
        ),
        (
            "Hiking this weekend?",
            "Hi {user_first},\n\nThinking of a {n} km hike on Saturday. In?\n\n{first}",
            ["personal"],
            None,
        ),
        (
            "Book recommendation",
            "Hi {user_first},\n\nYou have to read the novel I told you about. I can lend it "
            "to you on {weekday}.\n\n{first}",
            ["personal"],
            None,
        ),
        (
            "Trip to {city}",
            "Hey {user_first},\n\nFlights to {city} are cheap next month. Itinerary draft attached.\n\n{first}",
            ["travel", "personal"],
            ("itinerary-{city_l}.md", "# {city} trip\n\nDay 1: arrive, old town\nDay 2: museums\nDay 3: fly home\n"),
        ),
    ],
    "neighbours": [
        (
            "Parcel delivered to me",
            "Hi {user_first},\n\nA parcel for you was left at my door. Pick it up any evening.\n\n{first}",
            ["personal"],
            None,
        ),
        (
            "Building meeting on {weekday}",
            "Dear neighbours,\n\nThe building meeting is on {weekday} at 7pm. "
            "Minutes of the last one are attached.\n\n{first}",
            ["important"],
            ("minutes.txt", "Building meeting minutes\n- Roof repair quote: {amount} USD\n- Bike room cleanup\n"),
        ),
        (
            "Lost cat",
            "Hi {user_first},\n\nHave you seen a grey cat around? Ours has been missing since {weekday}.\n\n{first}",
            [],
            None,
        ),
    ],
    "classmates": [
        (
            "Reunion planning",
            "Hi {user_first},\n\nThe {n}-year reunion is coming up. Draft budget attached; thoughts?\n\n{first}",
            ["personal", "finance"],
            ("reunion-budget.csv", "item,cost\nvenue,{amount}\nfood,900\nmusic,300\n"),
        ),
        (
            "Old class photos",
            "Hi {user_first},\n\nI found our old class photos. Shall I scan them?\n\n{first}",
            ["personal"],
            None,
        ),
        (
            "Study group notes",
            "Hi {user_first},\n\nNotes from our study group are attached.\n\n{first}",
            [],
            ("study-notes.txt", "Study group\n- chapter {n} summary\n- exercises 1-5\n"),
        ),
    ],
}

SENT_TEMPLATES = [
    ("Quick question about {project}", "Hi {first},\n\nDo you have the latest numbers for {project}?\n\n{user_first}"),
    ("Dinner next week?", "Hi {first},\n\nAre you free for dinner next week?\n\n{user_first}"),
    ("Documents you asked for", "Hi {first},\n\nI will send the documents by {weekday}.\n\n{user_first}"),
    ("Thanks!", "Hi {first},\n\nThanks again for your help on {weekday}.\n\n{user_first}"),
    ("Holiday plans", "Hi {first},\n\nWe are thinking about {city} this summer. Any tips?\n\n{user_first}"),
]
REPLY_BODIES = [
    "Hi {user_first},\n\nSure, I will send them over tomorrow.\n\n{first}",
    "Hi {user_first},\n\nYes, that works for me!\n\n{first}",
    "Hi {user_first},\n\nGood idea. Let me check and get back to you.\n\n{first}",
]

# (title, attendee relation or None, attendee count, location, duration minutes)
EVENT_TEMPLATES = [
    ("Team standup", "coworkers", 3, "Room 2", 30),
    ("1:1 with {name}", "coworkers", 1, "Room 5", 30),
    ("Dentist appointment", None, 0, "Smile Clinic", 60),
    ("Project {project} review", "coworkers", 2, "Room 1", 60),
    ("Lunch with {name}", "friends", 1, "Cafe Central", 90),
    ("Gym session", None, 0, "FitHub", 60),
    ("Call with {name}", "family", 1, "Phone", 30),
    ("Budget planning", "coworkers", 2, "Room 3", 90),
    ("Yoga class", None, 0, "Studio Lotus", 60),
    ("Book club", "friends", 2, "Library cafe", 90),
    ("Haircut", None, 0, "Barber shop", 30),
    ("Sprint planning", "coworkers", 3, "Room 1", 60),
    ("Coffee with {name}", "classmates", 1, "Corner Coffee", 30),
    ("Plumber visit", "neighbours", 0, "Home", 60),
]
INVITATION_TEMPLATES = [
    ("Design review: {project}", "coworkers", "Room 4", 60),
    ("Quarterly all-hands", "coworkers", "Auditorium", 90),
    ("Offsite planning", "coworkers", "Room 6", 60),
    ("Birthday dinner", "friends", "Trattoria Roma", 120),
    ("Neighbourhood barbecue", "neighbours", "Courtyard", 120),
]


def _group(people: list[Person], relation: str) -> list[Person]:
    return [p for p in people if p.relation == relation]


def _fill(text: str, values: dict[str, str]) -> str:
    return text.format(**values)


def _values(r: random.Random, user_first: str, sender: Person) -> dict[str, str]:
    project = r.choice(PROJECTS)
    city = sender.city
    return {
        "user_first": user_first,
        "first": sender.name.split()[0],
        "weekday": r.choice(WEEKDAYS[:5]),
        "n": str(r.randint(3, 25)),
        "amount": str(r.randrange(400, 9000, 10)),
        "project": project,
        "project_l": project.lower(),
        "inv": f"INV-{r.randint(1000, 9999)}",
        "city": city,
        "city_l": city.lower(),
    }


def _mail(world: World, r: random.Random) -> dict[str, Message]:
    now = world.clock.now
    user = world.user
    user_first = user.name.split()[0]
    people = sorted(world.people, key=lambda p: p.person_id)
    drafts: list[Message] = []
    for relation, templates in MAIL_TEMPLATES.items():
        group = _group(people, relation) or people
        for subject_t, body_t, labels, att in templates:
            sender = r.choice(group)
            v = _values(r, user_first, sender)
            attachments = []
            if att is not None:
                attachments.append(
                    Attachment(
                        attachment_id="att-1",
                        filename=_fill(att[0], v),
                        mime_type="text/csv" if att[0].endswith(".csv") else "text/plain",
                        content=_fill(att[1], v),
                    )
                )
            sent_at = now - r.randrange(HOUR, 14 * DAY)
            age = now - sent_at
            drafts.append(
                Message(
                    message_id="",
                    thread_id="",
                    folder="inbox",
                    sender=sender.email,
                    sender_name=sender.name,
                    to=[user.email],
                    subject=_fill(subject_t, v),
                    body=_fill(body_t, v),
                    sent_at=sent_at,
                    read=r.random() < (0.8 if age > 3 * DAY else 0.3),
                    labels=sorted(labels),
                    attachments=attachments,
                )
            )
    # The user's sent mail; some got answers in the same thread.
    for i, (subject_t, body_t) in enumerate(SENT_TEMPLATES):
        to = r.choice(people)
        v = _values(r, user_first, to)
        sent_at = now - r.randrange(2 * DAY, 12 * DAY)
        sent = Message(
            message_id="",
            thread_id="",
            folder="sent",
            sender=user.email,
            sender_name=user.name,
            to=[to.email],
            subject=_fill(subject_t, v),
            body=_fill(body_t, v),
            sent_at=sent_at,
            read=True,
        )
        drafts.append(sent)
        if i < 3:
            drafts.append(
                Message(
                    message_id="",
                    thread_id="",
                    folder="inbox",
                    sender=to.email,
                    sender_name=to.name,
                    to=[user.email],
                    subject="Re: " + sent.subject,
                    body=_fill(REPLY_BODIES[i], v),
                    sent_at=sent_at + r.randrange(HOUR, DAY),
                    read=r.random() < 0.5,
                    in_reply_to="@" + sent.subject,
                )
            )
    drafts.sort(key=lambda m: (m.sent_at, m.subject, m.sender))
    messages: dict[str, Message] = {}
    by_subject: dict[str, Message] = {}
    for n, m in enumerate(drafts, start=1):
        m.message_id = f"msg-{n:03d}"
        if m.in_reply_to is not None:
            parent = by_subject[m.in_reply_to[1:]]
            m.in_reply_to = parent.message_id
            m.thread_id = parent.thread_id
        else:
            m.thread_id = f"thr-{n:03d}"
        if m.folder == "sent":
            by_subject[m.subject] = m
        messages[m.message_id] = m
    # Archive a few old read messages, trash one.
    old_read = [m for m in messages.values() if m.folder == "inbox" and m.read and m.in_reply_to is None]
    for m in old_read[:3]:
        m.folder = "archive"
    if len(old_read) > 3:
        old_read[3].folder = "trash"
    return messages


def _free(busy: list[tuple[int, int]], start: int, end: int) -> bool:
    return all(end <= b0 or b1 <= start for b0, b1 in busy)


def _slot(r: random.Random, now: int, busy: list[tuple[int, int]], minutes: int, days: range) -> tuple[int, int]:
    day0 = now - (now % DAY)
    for _ in range(500):
        start = day0 + r.choice(days) * DAY + 9 * HOUR + r.randrange(0, 16) * 1_800
        end = start + minutes * 60
        if _free(busy, start, end):
            return start, end
    raise RuntimeError("no free calendar slot")  # pragma: no cover - 500 tries over 17 days never fail


def _calendar(world: World, r: random.Random) -> tuple[dict[str, Event], dict[str, Invitation]]:
    now = world.clock.now
    user = world.user
    people = sorted(world.people, key=lambda p: p.person_id)
    busy: list[tuple[int, int]] = []
    drafts: list[Event] = []
    for title_t, relation, count, location, minutes in EVENT_TEMPLATES:
        group = (_group(people, relation) or people) if relation else []
        invited = sorted(r.sample(group, min(count, len(group))), key=lambda p: p.person_id) if count else []
        name = invited[0].name if invited else (r.choice(group).name if group else "")
        title = _fill(title_t, {"name": name, "project": r.choice(PROJECTS)})
        start, end = _slot(r, now, busy, minutes, range(-3, 14))
        busy.append((start, end))
        drafts.append(
            Event(
                event_id="",
                title=title,
                start=start,
                end=end,
                location=location,
                organizer=user.email,
                organizer_name=user.name,
                attendees=[
                    Attendee(email=p.email, name=p.name, response=r.choice(["accepted", "accepted", "tentative"]))
                    for p in invited
                ],
            )
        )
    invitations: dict[str, Invitation] = {}
    future = sorted((e for e in drafts if e.start > now), key=lambda e: (e.start, e.title))
    for n, (title_t, relation, location, minutes) in enumerate(INVITATION_TEMPLATES, start=1):
        group = _group(people, relation) or people
        organizer = r.choice(group)
        others = sorted(p.email for p in r.sample(people, 3) if p.person_id != organizer.person_id)
        if n == 2 and future:
            # The all-hands clashes with one of the user's own events: accepting it needs allow_overlap.
            clash = future[len(future) // 2]
            start, end = clash.start, clash.start + minutes * 60
        else:
            start, end = _slot(r, now, busy, minutes, range(1, 14))
            busy.append((start, end))
        inv = Invitation(
            invitation_id=f"inv-{n:03d}",
            organizer=organizer.email,
            organizer_name=organizer.name,
            title=_fill(title_t, {"project": r.choice(PROJECTS)}),
            start=start,
            end=end,
            location=location,
            description=f"Invitation from {organizer.name}.",
            other_attendees=others,
            received_at=now - r.randrange(HOUR, 3 * DAY),
        )
        invitations[inv.invitation_id] = inv
    # The last invitation was already accepted: its event is in the calendar.
    accepted = invitations[f"inv-{len(INVITATION_TEMPLATES):03d}"]
    accepted.status = "accepted"
    drafts.append(
        Event(
            event_id="",
            title=accepted.title,
            start=accepted.start,
            end=accepted.end,
            location=accepted.location,
            description=accepted.description,
            organizer=accepted.organizer,
            organizer_name=accepted.organizer_name,
            attendees=[
                Attendee(email=a, name=next(p.name for p in people if p.email == a), response="needs_action")
                for a in accepted.other_attendees
            ],
            invitation_id=accepted.invitation_id,
        )
    )
    drafts.sort(key=lambda e: (e.start, e.title))
    events: dict[str, Event] = {}
    for n, ev in enumerate(drafts, start=1):
        ev.event_id = f"ev-{n:03d}"
        events[ev.event_id] = ev
        if ev.invitation_id is not None:
            invitations[ev.invitation_id].event_id = ev.event_id
    return events, invitations


def _files(world: World, r: random.Random) -> dict[str, File]:
    now = world.clock.now
    user = world.user
    people = sorted(world.people, key=lambda p: p.person_id)
    project = r.choice(PROJECTS)
    stores = r.sample(["Green Grocer", "Book Nook", "Hardware Hub", "Pharma Plus", "Tech Corner"], 2)
    specs: list[tuple[str, str, str]] = [
        ("/Documents", "cv.md", f"# {user.name}\n\n{user.email}\n\nExperience\n- Project lead, {project}\n"),
        (
            "/Documents",
            "tax-notes-2025.txt",
            f"Tax notes 2025\n- donations: {r.randrange(100, 900)} USD\n- home office: {r.randrange(300, 1500)} USD\n",
        ),
        (
            "/Documents",
            "lease-agreement.txt",
            f"Lease agreement\nTenant: {user.name}\nCity: {user.city}\n"
            f"Monthly rent: {r.randrange(900, 2400, 50)} USD\n",
        ),
        ("/Notes", "shopping-list.md", "- eggs\n- coffee\n- tomatoes\n- bread\n"),
        ("/Notes", "ideas.md", "Ideas\n- learn to sail\n- start a vegetable garden\n- write a short story\n"),
        (
            "/Notes",
            f"meeting-notes-{project.lower()}.md",
            f"# {project} meeting\n\n- scope agreed\n- next review in {r.randint(2, 4)} weeks\n",
        ),
        ("/Notes", "packing-list.md", "- passport\n- charger\n- rain jacket\n"),
        (
            "/Projects",
            f"{project.lower()}-plan.md",
            f"# {project} plan\n\nMilestones\n1. Prototype\n2. Pilot\n3. Launch\n",
        ),
        (
            "/Projects",
            f"{project.lower()}-budget.csv",
            f"item,cost\nlicences,{r.randrange(1000, 5000, 100)}\nhardware,{r.randrange(2000, 9000, 100)}\n",
        ),
        (
            "/Receipts",
            f"receipt-{stores[0].lower().replace(' ', '-')}.txt",
            f"{stores[0]}\nTotal: {r.randrange(5, 120)}.{r.randrange(0, 99):02d} USD\n",
        ),
        (
            "/Receipts",
            f"receipt-{stores[1].lower().replace(' ', '-')}.txt",
            f"{stores[1]}\nTotal: {r.randrange(5, 120)}.{r.randrange(0, 99):02d} USD\n",
        ),
    ]
    files: dict[str, File] = {}
    for n, (folder, name, content) in enumerate(specs, start=1):
        at = now - r.randrange(DAY, 60 * DAY)
        files[f"f-{n:03d}"] = File(
            file_id=f"f-{n:03d}", name=name, folder=folder, content=content, created_at=at, updated_at=at
        )
    coworker = r.choice(_group(people, "coworkers") or people)
    plan = files["f-008"]
    plan.shares.append(Share(email=coworker.email, name=coworker.name, permission="edit", shared_at=plan.created_at))
    return files


def generate_state(world: World, stream: Callable[[str], random.Random]) -> OfficeState:
    """Build the seeded initial :class:`OfficeState` of ``world``.

    Args:
        world: the world (people directory, user, clock).
        stream: ``purpose -> random.Random``, the app's named streams.

    Returns:
        About 30 messages (inbox, sent, archive, trash; some with text attachments), 15
        events from 3 days ago to 2 weeks ahead, 5 invitations (4 pending, one of them
        overlapping an event; 1 accepted), 11 files in 6 folders with one share.
    """
    messages = _mail(world, stream("mail"))
    events, invitations = _calendar(world, stream("calendar"))
    files = _files(world, stream("files"))
    labels = {name: Label(name=name, description=desc) for name, desc in LABELS.items()}
    return OfficeState(
        messages=messages, labels=labels, events=events, invitations=invitations, folders=list(FOLDERS), files=files
    )
