"""Procedural task templates: parameterised task generators over world seeds.

Each template (:class:`~mcpgym.evaluation.tasks.templates.common.Template`) reads the world of a seed
and draws its parameters from the stream ``rng(seed, "templates", <name>)``, then emits a full
:class:`mcpgym.evaluation.tasks.Task` whose oracle is written in the same step language as the task
files and validated by the same loader. Instances are deterministic per seed; their gold
states are computed lazily by the registry, like those of hand-written tasks.

Templates (10; :data:`TEMPLATES`), each instantiated on seeds ``0..SEEDS_PER_TEMPLATE-1``
(ids ``tmpl.<template>.s0042``):

========================== ======================================================================
``shop_buy_if_affordable``  buy one in-stock item of a named shop if the wallet balance covers it
``system_top_up``           move the missing amount from savings to reach a target balance
``stocks_buy_cheapest_sector`` buy N shares of a sector's cheapest stock once the market opens
``stocks_watchlist_add``    make sure a company is on the watchlist
``stocks_limit_buy``        a limit buy some percent below the quote
``flights_book_cheapest``   book the cheapest seat of a class on a route and date, if affordable
``flights_fare_lookup``     the cheapest economy fare of a route and date (retrieval)
``weather_move_home``       new home city in the profile and as primary weather location
``news_bookmark_latest``    bookmark the latest article of a section
``talk_message_contact``    message a contact named by their tag (refuse if blocked)
========================== ======================================================================

Suite ``full`` (registered on import) = ``core`` + every template instance: 1,000 template
instances plus the hand-written tasks. Loading it builds each seed's small worlds once (no
gold runs). API: :func:`template_task`, :func:`template_tasks`, :func:`full_suite`.
"""

from __future__ import annotations

from collections.abc import Iterable

from mcpgym.evaluation.tasks.model import Task
from mcpgym.evaluation.tasks.templates import commerce, social, travel
from mcpgym.evaluation.tasks.templates.common import ID_PREFIX, Instance, Template, instance_id

TEMPLATES: dict[str, Template] = {t.name: t for t in (*commerce.TEMPLATES, *travel.TEMPLATES, *social.TEMPLATES)}
"""Every template by name, in suite order."""

SEEDS_PER_TEMPLATE = 100
"""Instances per template in the ``full`` suite (seeds 0..99)."""

FULL = "full"


def template_task(name: str, seed: int) -> Task:
    """The instance of template ``name`` on world seed ``seed``.

    Raises:
        KeyError: for an unknown template (naming the known ones).
        evaluation.tasks.TaskLoadError: when the generated task does not validate (a template bug).
    """
    from mcpgym.evaluation.tasks.registry import parse_task

    if name not in TEMPLATES:
        raise KeyError(f"unknown template {name!r}; templates: {', '.join(TEMPLATES)}")
    return parse_task(TEMPLATES[name].task_data(seed), f"template {name!r}")


def template_tasks(names: Iterable[str] | None = None, seeds: Iterable[int] | None = None) -> list[Task]:
    """Instances of the templates ``names`` (default: all) on ``seeds`` (default:
    ``range(SEEDS_PER_TEMPLATE)``), ordered by template, then seed.

    Seeds are the outer loop while building, so each seed's worlds are built once and shared
    by the templates that read them.
    """
    wanted = list(TEMPLATES) if names is None else list(names)
    seed_list = list(range(SEEDS_PER_TEMPLATE) if seeds is None else seeds)
    built: dict[tuple[str, int], Task] = {}
    for seed in seed_list:
        for name in wanted:
            built[(name, seed)] = template_task(name, seed)
    return [built[(name, seed)] for name in wanted for seed in seed_list]


def full_suite() -> list[Task]:
    """Suite ``full``: every hand-written task (``core``) followed by every template instance."""
    from mcpgym.evaluation.tasks.registry import load_tasks

    return [*load_tasks("core"), *template_tasks()]


def _register() -> None:
    from mcpgym.evaluation.tasks.registry import register_suite, suite_names

    if FULL not in suite_names():
        register_suite(FULL, full_suite)


_register()

__all__ = [
    "FULL",
    "ID_PREFIX",
    "Instance",
    "SEEDS_PER_TEMPLATE",
    "TEMPLATES",
    "Template",
    "full_suite",
    "instance_id",
    "template_task",
    "template_tasks",
]
