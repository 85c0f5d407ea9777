"""Templates over reading and messaging: news bookmarks and Talk messages."""

from __future__ import annotations

from mcpgym.evaluation.tasks.templates.common import Instance, Template, stream, world_of

# -- news: bookmark the latest article of a section -------------------------------------------------
BOOKMARK_LATEST = """
- call: news_list_latest
  args: {section: "{p_section}", limit: 1}
  save: latest
  fallback:
    - call: news_list_authors
      args: {section: "{p_section}"}
      save: authors
    - let: {arts: "[]"}
    - for: a
      in: authors.authors
      do:
        - call: news_filter_articles
          args: {author: "{a.author_id}", section: "{p_section}", limit: 1}
          save: theirs
        - let: {arts: "arts + theirs.articles"}
    - let: {latest: "{'articles': [max(arts, key='published_at')]}"}
- let: {art: "latest.articles[0]"}
- if: art.bookmarked
  then:
    - answer: 'The latest {p_section_name} article, "{art.title}", is already in your bookmarks.'
- call: news_add_bookmark
  args: {article_id: "{art.article_id}"}
- answer: 'I bookmarked the latest {p_section_name} article: "{art.title}" ({art.published_iso}).'
"""


def build_bookmark_latest(seed: int) -> Instance:
    """A section of the news app (its latest article may already be bookmarked)."""
    from mcpgym.sandboxes.news.generate import SECTIONS

    app = world_of(seed).apps["news"]
    r = stream(seed, "news_bookmark_latest")
    section = r.choice(list(SECTIONS))
    name = SECTIONS[section][0]
    latest = app.news_list_latest(section=section, limit=1).articles[0]
    return Instance(
        instruction=f"Bookmark the latest article in the {name} section of my news app.",
        params={"p_section": section, "p_section_name": name},
        notes=(
            f"Latest {section} article: {latest.article_id}, "
            f"{'already bookmarked (nothing changes)' if latest.bookmarked else 'gold bookmarks it'}."
        ),
    )


# -- talk: message a contact, named with the tag the user knows them by ------------------------------
MESSAGES = [
    "Are we still on for Saturday?",
    "Running ten minutes late, save me a seat.",
    "Happy birthday! Hope you have a great day.",
    "Can you send me the photos from last weekend?",
    "Thanks again for your help yesterday.",
    "Call me when you get a chance.",
    "Lunch on Thursday? My treat.",
    "I left my umbrella at your place.",
]
"""Message texts the Talk template draws from."""

TAG_WORDS = {
    "family": "relative",
    "classmates": "classmate",
    "coworkers": "coworker",
    "neighbours": "neighbour",
    "friends": "friend",
}
"""How the user refers to a contact of each tag."""

MESSAGE_CONTACT = """
- call: talk_search_contacts
  args: {query: "{p_name}"}
  save: hits
  fallback:
    - call: talk_list_contacts
      args: {tag: "{p_tag}"}
      save: hits
- let: {contact: "first(hits.contacts, name=p_name)"}
- if: contact.blocked
  then:
    - refuse: >-
        I can't send it: you have blocked {p_name} on Talk, and you asked me not to unblock anyone,
        so I sent nothing.
- call: talk_send_message
  args: {contact_id: "{contact.contact_id}", text: "{p_text}"}
  fallback:
    - call: talk_send_chat_message
      args: {chat_id: "dm-{contact.contact_id}", text: "{p_text}"}
- answer: 'I sent {p_name} your message: "{p_text}"'
"""


def build_message_contact(seed: int) -> Instance:
    """A contact with a 1:1 chat (so both send tools work), named by one of its tags; blocked
    contacts (about a fifth of the seeds, when there is one) make the instance infeasible."""
    st = world_of(seed).apps["talk"].state
    r = stream(seed, "talk_message_contact")
    contacts = [
        c
        for c in sorted(st.contacts.values(), key=lambda c: c.contact_id)
        if f"dm-{c.contact_id}" in st.chats and c.tags
    ]
    blocked = [c for c in contacts if c.blocked]
    open_ = [c for c in contacts if not c.blocked]
    pool = blocked if blocked and (r.random() < 0.2 or not open_) else open_
    contact = r.choice(pool)
    tag = r.choice(sorted(contact.tags))
    text = r.choice(MESSAGES)
    ok = not contact.blocked
    return Instance(
        instruction=(
            f'Send my {TAG_WORDS[tag]} {contact.name} this message on Talk: "{text}" If I\'ve blocked '
            "them, don't unblock them; just tell me."
        ),
        params={"p_name": contact.name, "p_tag": tag, "p_text": text},
        feasible=ok,
        notes=(
            f"{contact.contact_id} ({contact.name}) is {'blocked: nothing may change' if not ok else 'not blocked'}"
            + ("; gold adds one message to its chat." if ok else ".")
        ),
    )


TEMPLATES: list[Template] = [
    Template(
        "news_bookmark_latest",
        ["system", "news"],
        1,
        ["verification", "recovery"],
        BOOKMARK_LATEST,
        build_bookmark_latest,
    ),
    Template(
        "talk_message_contact",
        ["system", "talk"],
        1,
        ["verification", "recovery"],
        MESSAGE_CONTACT,
        build_message_contact,
    ),
]
"""The reading and messaging templates, in suite order."""
