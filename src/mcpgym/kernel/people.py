"""The shared people directory.

The same persons appear across apps: as contacts in ``talk``, correspondents in ``office``
mail, passengers in ``flights``, authors in ``news``. The directory depends only on the world
seed (stream ``(seed, "people", "directory")``), never on which apps are present.
"""

from __future__ import annotations

from pydantic import BaseModel

from mcpgym.kernel.rng import rng

FIRST_NAMES = [
    "Ada",
    "Bruno",
    "Chen",
    "Dana",
    "Elif",
    "Farid",
    "Greta",
    "Hiro",
    "Ines",
    "Jonas",
    "Kemi",
    "Luca",
    "Maya",
    "Nils",
    "Olga",
    "Priya",
    "Quentin",
    "Rosa",
    "Sami",
    "Tara",
    "Umar",
    "Vera",
    "Wen",
    "Xavi",
    "Yara",
    "Zoe",
    "Amir",
    "Bea",
    "Caleb",
    "Dilan",
    "Emma",
    "Felix",
]
LAST_NAMES = [
    "Novak",
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Rossi",
    "Schmidt",
    "Haddad",
    "Kowalski",
    "Silva",
    "Nguyen",
    "Petrov",
    "Garcia",
    "Jensen",
    "Costa",
    "Fischer",
    "Ibrahim",
    "Larsen",
    "Mendes",
    "Walsh",
    "Yilmaz",
    "Zhou",
    "Berg",
    "Dubois",
]
CITIES = ["Lisbon", "Berlin", "Paris", "Madrid", "Rome", "Vienna", "Oslo", "Prague", "Dublin", "Warsaw"]
RELATIONS = ["family", "classmates", "coworkers", "neighbours", "friends"]


class Person(BaseModel):
    """One person of the shared directory.

    Attributes:
        person_id: stable id ``p-NNN``.
        name: full name, unique within the directory.
        email: ``first.last@example.com``.
        phone: a fictitious number.
        city: home city (one of :data:`CITIES`).
        relation: how the user knows them (family, classmates, coworkers, neighbours, friends).
    """

    person_id: str
    name: str
    email: str
    phone: str
    city: str
    relation: str


class User(BaseModel):
    """The user on whose behalf the agent acts (the owner of every account)."""

    name: str
    email: str
    phone: str
    city: str


def generate_people(seed: int, count: int = 24) -> tuple[User, list[Person]]:
    """Generate the user and ``count`` distinct people for world ``seed``.

    Returns:
        ``(user, people)``; names are unique, ids are ``p-001``...
    """
    r = rng(seed, "people", "directory")
    pairs = [(first, last) for first in FIRST_NAMES for last in LAST_NAMES]
    chosen = r.sample(pairs, count + 1)
    first, last = chosen[0]
    user = User(
        name=f"{first} {last}",
        email=f"{first.lower()}.{last.lower()}@example.com",
        phone=f"+1-555-{r.randrange(1000, 9999)}",
        city=r.choice(CITIES),
    )
    people = []
    for i, (f, surname) in enumerate(chosen[1:], start=1):
        people.append(
            Person(
                person_id=f"p-{i:03d}",
                name=f"{f} {surname}",
                email=f"{f.lower()}.{surname.lower()}@example.com",
                phone=f"+1-555-{r.randrange(1000, 9999)}",
                city=r.choice(CITIES),
                relation=RELATIONS[i % len(RELATIONS)],
            )
        )
    return user, people
