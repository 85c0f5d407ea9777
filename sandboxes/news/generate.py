"""Seeded generation of the news corpus: sections, authors, articles, and the user's
initial bookmarks, subscriptions and read history.

Everything is drawn from the app's named streams (``(seed, "news", purpose)``) and the shared
people directory, so the corpus depends only on the world seed.
"""

from __future__ import annotations

import random
import string
from typing import TYPE_CHECKING

from mcpgym.sandboxes.news.models import (
    Article,
    Author,
    Bookmark,
    HistoryEntry,
    NewsState,
    Section,
    Subscription,
)

if TYPE_CHECKING:
    from mcpgym.kernel.world import World

ARTICLES_PER_SECTION = 9
AUTHOR_COUNT = 10
WINDOW = 30 * 86_400
"""Articles are published during the 30 virtual days before the world's start."""

SECTIONS: dict[str, tuple[str, str]] = {
    "world": ("World", "International affairs, diplomacy and elections"),
    "business": ("Business", "Companies, markets, trade and jobs"),
    "tech": ("Technology", "Gadgets, software, AI and the internet"),
    "sport": ("Sport", "Matches, tournaments and athletes"),
    "science": ("Science", "Research, space, climate and discoveries"),
    "culture": ("Culture", "Film, music, books and the arts"),
    "health": ("Health", "Medicine, fitness and public health"),
    "travel": ("Travel", "Destinations, transport and tourism"),
}
"""Section id -> (name, description), in display order."""

SLOTS: dict[str, list[str]] = {
    "city": [
        "Lisbon",
        "Berlin",
        "Paris",
        "Madrid",
        "Rome",
        "Vienna",
        "Oslo",
        "Prague",
        "Dublin",
        "Warsaw",
        "Nairobi",
        "Seoul",
        "Lima",
        "Toronto",
    ],
    "issue": [
        "water rights",
        "fishing quotas",
        "border trade",
        "refugee support",
        "grain exports",
        "arctic shipping",
        "cyber security",
        "energy prices",
    ],
    "company": [
        "Norvik Systems",
        "Altamira Foods",
        "Bluefin Logistics",
        "Corvid Labs",
        "Helix Energy",
        "Quarry Bank",
        "Solenne Motors",
        "Tessellate AI",
        "Marlow Textiles",
        "Pinecrest Pharma",
    ],
    "product": [
        "a foldable laptop",
        "an open-source chip",
        "a home battery",
        "a translation earpiece",
        "a delivery drone",
        "a privacy-first phone",
        "a solar roof tile",
        "a smart thermostat",
    ],
    "team": [
        "Lisbon Lions",
        "Berlin Bears",
        "Oslo Orcas",
        "Rome Ravens",
        "Dublin Dockers",
        "Prague Pikes",
        "Vienna Vipers",
        "Madrid Meteors",
    ],
    "sport": ["football", "basketball", "cycling", "tennis", "rowing", "athletics", "handball", "volleyball"],
    "field": [
        "marine biology",
        "particle physics",
        "glaciology",
        "genetics",
        "astronomy",
        "volcanology",
        "neuroscience",
        "ecology",
    ],
    "creature": ["deep-sea octopus", "alpine beetle", "river dolphin", "desert frog", "cave spider", "island lizard"],
    "art": [
        "jazz festival",
        "film festival",
        "poetry prize",
        "opera season",
        "street-art fair",
        "photography biennale",
        "book fair",
        "theatre marathon",
    ],
    "condition": ["migraine", "asthma", "insomnia", "back pain", "hay fever", "high blood pressure"],
    "place": [
        "the Douro valley",
        "the Dolomites",
        "the Lofoten islands",
        "the Danube delta",
        "the Algarve coast",
        "the Tatra mountains",
        "Lake Bled",
        "the Amalfi coast",
    ],
    "transport": ["night trains", "ferry routes", "cycle paths", "budget airlines", "tram lines", "e-bike rentals"],
}
"""Values for the ``{slot}`` placeholders of :data:`TEMPLATES`."""

TAG_SLOTS = ("city", "company", "team", "sport")
"""Slots whose chosen value also becomes a tag (lowercased, spaces to dashes)."""

TEMPLATES: dict[str, list[tuple[str, str, list[str]]]] = {
    "world": [
        (
            "Leaders meet in {city} to discuss {issue}",
            "Delegations from {n} countries gathered in {city} for talks on {issue}.",
            ["diplomacy", "summit"],
        ),
        (
            "Election in {city} region ends in narrow result",
            "A recount is likely after the vote in the {city} region was decided by {n} hundred ballots.",
            ["elections", "politics"],
        ),
        (
            "New treaty on {issue} signed in {city}",
            "Ministers signed an agreement on {issue} that takes effect within {n} months.",
            ["treaty", "diplomacy"],
        ),
        (
            "Protests over {issue} spread beyond {city}",
            "Thousands marched for a {n}th day as anger over {issue} grew.",
            ["protests", "politics"],
        ),
        (
            "Aid convoy reaches {city} after flooding",
            "Relief agencies delivered {n} tonnes of supplies to families displaced by floods.",
            ["humanitarian", "floods"],
        ),
        (
            "Summit in {city} fails to agree on {issue}",
            "Talks broke up without a communique after {n} hours of negotiation on {issue}.",
            ["summit", "diplomacy"],
        ),
    ],
    "business": [
        (
            "{company} profits rise {n}% on strong demand",
            "{company} beat forecasts as quarterly profit rose {n} percent.",
            ["earnings", "markets"],
        ),
        (
            "{company} to open new plant in {city}",
            "The investment in {city} will create about {n}0 jobs, {company} said.",
            ["investment", "jobs"],
        ),
        (
            "{company} shares fall after profit warning",
            "Shares of {company} dropped {n} percent after the company cut its outlook.",
            ["markets", "stocks"],
        ),
        (
            "{company} agrees merger with rival",
            "The deal, worth {n} billion dollars, still needs approval from regulators.",
            ["mergers", "markets"],
        ),
        (
            "Workers at {company} vote to strike",
            "Staff at the {city} site backed a {n}-day strike over pay.",
            ["jobs", "labour"],
        ),
        (
            "Central bank holds rates as inflation cools to {n}%",
            "Policymakers kept borrowing costs unchanged and signalled patience.",
            ["economy", "interest-rates"],
        ),
    ],
    "tech": [
        (
            "{company} unveils {product}",
            "{company} showed {product} and said it ships in {n} weeks.",
            ["gadgets", "launch"],
        ),
        (
            "{company} fixes security flaw affecting {n} million users",
            "A patch closes a hole that exposed account data at {company}.",
            ["security", "privacy"],
        ),
        (
            "Startup in {city} raises funds for {product}",
            "The {city} startup raised {n} million dollars to build {product}.",
            ["startups", "funding"],
        ),
        (
            "Regulators probe {company} over data sharing",
            "Authorities opened an inquiry into how {company} shares user data.",
            ["privacy", "regulation"],
        ),
        (
            "{company} releases open-source AI model",
            "The model has {n} billion parameters and is free for research.",
            ["ai", "open-source"],
        ),
        (
            "Outage at {company} cloud disrupts services for {n} hours",
            "Banks and shops reported failures during the {company} outage.",
            ["cloud", "outage"],
        ),
    ],
    "sport": [
        (
            "{team} win the {sport} derby",
            "The {team} sealed the derby with a late effort in front of {n} thousand fans.",
            ["derby", "results"],
        ),
        (
            "{team} sign new {sport} coach",
            "The {team} named a new head coach on a {n}-year contract.",
            ["transfers", "coaching"],
        ),
        (
            "{sport} final goes to {city}",
            "{city} will host the {sport} final after beating {n} other bids.",
            ["tournaments", "hosting"],
        ),
        (
            "{team} captain out for {n} weeks with injury",
            "A knee injury rules the {team} captain out of the next matches.",
            ["injuries", "results"],
        ),
        (
            "Record crowd watches {sport} in {city}",
            "A record {n} thousand spectators attended the {sport} event in {city}.",
            ["attendance", "records"],
        ),
        (
            "{team} knocked out of {sport} cup",
            "The {team} lost on penalties and leave the cup in round {n}.",
            ["cup", "results"],
        ),
    ],
    "science": [
        (
            "Researchers in {city} make breakthrough in {field}",
            "A team in {city} reported results in {field} after {n} years of work.",
            ["research", "breakthrough"],
        ),
        (
            "New {creature} species found",
            "Biologists described a {creature} living at {n}00 metres.",
            ["biodiversity", "discovery"],
        ),
        (
            "Telescope spots {n} new exoplanets",
            "Astronomers confirmed {n} planets orbiting nearby stars.",
            ["space", "astronomy"],
        ),
        (
            "Glaciers lost {n}% of their ice, study finds",
            "Satellite data show glaciers shrinking faster than expected.",
            ["climate", "ice"],
        ),
        (
            "Funding boost for {field} in {city}",
            "A new institute for {field} opens in {city} with {n}0 researchers.",
            ["funding", "research"],
        ),
        (
            "Volcano monitoring improves warnings by {n} hours",
            "Sensors give communities more time to evacuate before eruptions.",
            ["volcanoes", "safety"],
        ),
    ],
    "culture": [
        ("{city} {art} draws record crowds", "The {art} in {city} sold {n} thousand tickets.", ["festivals", "arts"]),
        (
            "Debut novel wins {art} in {city}",
            "A first-time author took the prize in {city} ahead of {n} finalists.",
            ["books", "awards"],
        ),
        (
            "Museum in {city} returns {n} artefacts",
            "The museum agreed to return objects taken during the colonial era.",
            ["museums", "heritage"],
        ),
        (
            "Band announces {n}-city reunion tour starting in {city}",
            "Fans queued overnight for reunion tickets in {city}.",
            ["music", "tours"],
        ),
        (
            "Film shot in {city} tops box office",
            "The drama earned {n} million in its opening weekend.",
            ["film", "box-office"],
        ),
        (
            "{city} theatre reopens after {n}-year restoration",
            "The restored theatre opens with a sold-out gala.",
            ["theatre", "heritage"],
        ),
    ],
    "health": [
        (
            "New treatment for {condition} shows promise",
            "A trial with {n}00 patients found fewer symptoms of {condition}.",
            ["medicine", "trials"],
        ),
        (
            "Doctors in {city} warn of {condition} surge",
            "Clinics in {city} saw {n}% more {condition} cases this month.",
            ["public-health", "clinics"],
        ),
        (
            "Walking {n} thousand steps a day cuts risk, study says",
            "Researchers followed adults for a decade to measure the effect.",
            ["fitness", "research"],
        ),
        (
            "Hospital in {city} cuts waiting times by {n}%",
            "A new triage system shortened waits in the emergency department.",
            ["hospitals", "public-health"],
        ),
        (
            "Sleep study links screens to {condition}",
            "Volunteers using screens late reported more {condition}.",
            ["sleep", "research"],
        ),
        (
            "Vaccination drive reaches {n} million people",
            "Health officials hailed the campaign as the fastest yet.",
            ["vaccines", "public-health"],
        ),
    ],
    "travel": [
        (
            "Why {place} is the trip of the summer",
            "Visitor numbers to {place} rose {n}% as travellers seek quieter spots.",
            ["destinations", "summer"],
        ),
        (
            "New {transport} link {city} with the coast",
            "Operators added {n} weekly departures from {city}.",
            ["transport", "routes"],
        ),
        (
            "{city} introduces tourist tax of {n} euros",
            "The levy funds cleaning and housing in central {city}.",
            ["tourism", "policy"],
        ),
        (
            "Hiking {place} on a budget",
            "A {n}-day route with huts and local buses keeps costs low.",
            ["hiking", "budget"],
        ),
        (
            "Airport in {city} expands with new terminal",
            "The terminal adds capacity for {n} million passengers a year.",
            ["airports", "transport"],
        ),
        (
            "Rail pass makes {transport} cheaper for {n}-day trips",
            "A new pass bundles {transport} across several countries.",
            ["rail", "budget"],
        ),
    ],
}
"""Section -> (title template, summary template, tags). ``{n}`` is a number 2-40."""

DETAILS = [
    "Officials said more details would follow in the coming days.",
    "Analysts expect the decision to shape plans for the rest of the year.",
    "Critics argued the move came too late, while supporters called it overdue.",
    "The announcement followed months of speculation.",
    "Independent experts urged caution until the full data are published.",
]
ROLES = ["an analyst", "a spokesperson", "a local resident", "a professor", "an organiser", "a senior official"]
CLOSINGS = {
    "world": "Diplomats will meet again next month to review progress.",
    "business": "Markets will watch the next quarterly figures closely.",
    "tech": "The company said updates will roll out gradually.",
    "sport": "The next fixture is scheduled for the coming weekend.",
    "science": "The findings were published in a peer-reviewed journal.",
    "culture": "Tickets for the remaining dates are on sale now.",
    "health": "Doctors advise patients to speak to their physician before changing treatment.",
    "travel": "Prices are expected to rise as the high season begins.",
}


def _fill(template: str, values: dict[str, str]) -> str:
    return template.format(**values)


def _slots_of(*templates: str) -> list[str]:
    names: list[str] = []
    for t in templates:
        for _, name, _, _ in string.Formatter().parse(t):
            if name and name not in names:
                names.append(name)
    return names


def _tagify(value: str) -> str:
    return value.lower().replace(" ", "-")


def _article(r: random.Random, section: str, author: Author, speaker: str, now: int, taken: set[str]) -> Article | None:
    """Draw one article of ``section`` (None when the drawn title is already taken)."""
    title_t, summary_t, base_tags = r.choice(TEMPLATES[section])
    values: dict[str, str] = {}
    for slot in _slots_of(title_t, summary_t):
        values[slot] = str(r.randint(2, 40)) if slot == "n" else r.choice(SLOTS[slot])
    title = _fill(title_t, values)
    title = title[0].upper() + title[1:]
    if title in taken:
        return None
    taken.add(title)
    summary = _fill(summary_t, values)
    summary = summary[0].upper() + summary[1:]
    tags = [section, *base_tags] + [_tagify(values[s]) for s in TAG_SLOTS if s in values]
    tags = list(dict.fromkeys(tags))
    quote_subject = values.get("city") or values.get("company") or values.get("team") or "everyone"
    body = "\n\n".join(
        [
            f"{summary} {r.choice(DETAILS)}",
            f'"This matters for {quote_subject}, and we will keep watching it," said {speaker}, {r.choice(ROLES)}. '
            f"{author.name} reports for the {SECTIONS[section][0]} desk.",
            CLOSINGS[section],
        ]
    )
    return Article(
        article_id="",
        title=title,
        section=section,
        author_id=author.author_id,
        author_name=author.name,
        published_at=now - r.randrange(3_600, WINDOW),
        summary=summary,
        body=body,
        tags=tags,
        premium=r.random() < 0.3,
    )


def generate_state(world: World, stream) -> NewsState:  # noqa: ANN001 - callable(purpose) -> Random
    """Build the seeded initial :class:`NewsState` of ``world``.

    Args:
        world: the world (its people directory and clock).
        stream: ``purpose -> random.Random``, the app's named streams.

    Returns:
        72 articles over 8 sections by 10 directory authors, published within the 30 virtual
        days before ``world.clock.now``; two bookmarks, two free subscriptions and three
        history entries.
    """
    now = world.clock.now
    r = stream("sections")
    sections = {
        sid: Section(section_id=sid, name=name, description=desc, premium_price_cents=r.choice([399, 499, 599, 799]))
        for sid, (name, desc) in SECTIONS.items()
    }

    r = stream("authors")
    people = sorted(world.people, key=lambda p: p.person_id)
    chosen = sorted(r.sample(people, AUTHOR_COUNT), key=lambda p: p.person_id)
    section_ids = list(SECTIONS)
    beats: dict[str, list[str]] = {p.person_id: [section_ids[i % len(section_ids)]] for i, p in enumerate(chosen)}
    for p in chosen:
        extra = r.choice(section_ids)
        if extra not in beats[p.person_id]:
            beats[p.person_id].append(extra)
    authors = {
        p.person_id: Author(
            author_id=p.person_id,
            name=p.name,
            email=p.email,
            beats=beats[p.person_id],
            premium_price_cents=r.choice([199, 299, 349]),
        )
        for p in chosen
    }

    r = stream("articles")
    drafts: list[Article] = []
    taken: set[str] = set()
    for sid in section_ids:
        writers = [a for a in authors.values() if sid in a.beats]
        made = 0
        while made < ARTICLES_PER_SECTION:
            author = r.choice(writers)
            speaker = r.choice([p for p in people if p.person_id != author.author_id]).name
            art = _article(r, sid, author, speaker, now, taken)
            if art is not None:
                drafts.append(art)
                made += 1
    drafts.sort(key=lambda a: (a.published_at, a.title))
    articles: dict[str, Article] = {}
    for i, art in enumerate(drafts, start=1):
        art.article_id = f"art-{i:03d}"
        articles[art.article_id] = art

    r = stream("user")
    ids = sorted(articles)
    free_ids = [a for a in ids if not articles[a].premium]
    bookmarks = {}
    for aid in sorted(r.sample(free_ids, 2)):
        bookmarks[aid] = Bookmark(article_id=aid, note="", added_at=articles[aid].published_at + 600)
    history = {}
    for aid in sorted(r.sample(free_ids, 3)):
        history[aid] = HistoryEntry(article_id=aid, read_count=1, last_read_at=articles[aid].published_at + 1_200)
    follow_section = r.choice(section_ids)
    follow_author = r.choice(sorted(authors))
    subscriptions = {
        f"section:{follow_section}": Subscription(
            subscription_id=f"section:{follow_section}",
            target_kind="section",
            target_id=follow_section,
            target_name=sections[follow_section].name,
            tier="free",
            started_at=now - WINDOW,
        ),
        f"author:{follow_author}": Subscription(
            subscription_id=f"author:{follow_author}",
            target_kind="author",
            target_id=follow_author,
            target_name=authors[follow_author].name,
            tier="free",
            started_at=now - WINDOW // 2,
        ),
    }
    return NewsState(
        sections=sections,
        authors=authors,
        articles=articles,
        bookmarks=bookmarks,
        subscriptions=subscriptions,
        history=history,
    )
