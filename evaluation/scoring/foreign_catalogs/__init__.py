"""Built-in catalogs of other benchmarks' tools, shipped as data (``--catalog NAME``).

Each catalog is a JSON file in this package, ``{"name", "source", "tools": [rows]}``, whose
rows are :class:`~mcpgym.evaluation.scoring.tool_catalog.CatalogEntry` fields as ``mcpgym tools --json``
prints them (``name, app, kind, resources, preconditions, remedies, alternatives, id_args,
description``).

* ``complexmcp``: every tool of the ComplexMCP benchmark (its seven Light* apps and eight
  utility servers), under the names its harness registers them (a name an earlier server
  already took is prefixed with the server's name: ``LightFlight_check_balance``). Written
  from ComplexMCP's tool descriptions and source: kinds and resource families (the shop's
  cart is one family ``lightshop.cart`` for ``add_to_cart``, ``delete_item_in_cart``,
  ``get_cart_summary`` and ``checkout_all``; ``upgrade_to_vip`` writes
  ``lightstock.account``; a family is read only by the tools whose output shows it:
  ``lighttalk.block`` by ``get_contact_info`` alone, ``lighttalk.remark`` and the unread
  flags by none, so such writes can never be verified), id arguments (``uid``, ``sid``, ``tid``, ``caid``, ``moid``,
  ``gid``, ``fid``, ``bid``...), preconditions, and remedies: ``acc_network`` cures the
  network error (``transient``) of every LightTalk tool its source marks as network-bound,
  ``ask_for_privilege`` the privilege error (``permission_denied``) of the privileged
  ones, ``wait_payment_password`` / ``wait_trade_password`` the password-first refusals
  (``precondition_failed``) of checkouts, orders, transfers and ``upgrade_to_vip``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

BUILTIN_CATALOGS: tuple[str, ...] = ("complexmcp",)
"""Names accepted by ``--catalog`` besides a file path."""


def builtin_catalog_path(name: str) -> Path:
    """The JSON file of built-in catalog ``name``.

    Raises:
        KeyError: for a name not in :data:`BUILTIN_CATALOGS` (the message lists them).
    """
    if name not in BUILTIN_CATALOGS:
        raise KeyError(f"unknown built-in catalog {name!r}; built-in catalogs: {', '.join(BUILTIN_CATALOGS)}")
    return Path(str(resources.files(__name__).joinpath(f"{name}.json")))


__all__ = ["BUILTIN_CATALOGS", "builtin_catalog_path"]
