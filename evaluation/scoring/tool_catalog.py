"""The scorer's view of tools: kind, resource families, preconditions, remedies, ids.

A :class:`Catalog` maps a tool name to a :class:`CatalogEntry`. It is built from the
registered apps (each ``ToolSpec.catalog_entry()``, source ``"catalog"``) or loaded from a JSON
file in the format ``mcpgym tools --json`` prints (source ``"file"``). A tool found in
neither is classified by :func:`classify_tool`, a documented heuristic on its name and
description (source ``"heuristic"``), so trajectories recorded elsewhere can be scored.

Heuristic (:func:`classify_tool`), in order:

1. Split the name into lowercase tokens (``_``, ``-``, spaces, camelCase). When the first
   token is a registered app name (and more tokens follow), it is the app; else the app is
   the catalog's ``default_app`` (``"external"``).
2. Kind (a closed set, :class:`mcpgym.kernel.spec.ToolKind`), conservatively: the *action
   part* is the tokens before a ``for`` that follows them (ToolBench's
   ``<action>_for_<provider>``). ``end`` when the whole name is in :data:`END_NAMES`
   (``Finish``, ``submit``); ``handoff`` when the name holds a :data:`HANDOFF_VERBS` token and a
   :data:`HANDOFF_TARGETS` token (``transfer_to_human_agents``); ``auth`` when the name contains
   an :data:`AUTH_PHRASES` phrase; else the first of the first :data:`VERB_POSITIONS` tokens of
   the action part found in :data:`AUTH_VERBS`, :data:`WRITE_VERBS` or :data:`READ_VERBS`
   decides (``request`` is ``auth`` only before an :data:`AUTH_OBJECTS` token, else a
   ``write``); else the description's first word (``Cancels ...`` -> write); else ``unknown``.
   A verb elsewhere in the name is no evidence (``api_tracking_for_pack_send`` is ``unknown``,
   not a write for its provider's "send"): guessing ``write`` would invent verification
   duties, guessing ``read`` would invent verifications. ``unknown`` tools are neither reads
   nor writes and are counted in the scorability summary.
3. Resource family: ``<app>.<noun>``, the noun being the tokens after the verb, cut at the
   first preposition (:data:`PREPOSITIONS`), without filler tokens (:data:`FILLER`), with
   aliases (:data:`NOUN_ALIASES`, e.g. ``uid`` -> ``user``) and every token made
   singular (``get_stations_code_in_city`` and ``get_station_code_by_names`` look up one
   resource). No noun left: the family is ``<app>.<verb>`` (``block`` -> ``external.block``).
   A write whose verb makes a record (:data:`PRODUCT_NOUNS`: ``book`` -> ``booking``) has
   that record's family too (``book_flight``: ``<app>.flight`` and ``<app>.booking``).
4. ``id_args`` is None: ids are then taken, call by call, from the arguments whose value
   has the shape of an id token (:func:`looks_like_id`: ``item_3f9``, ``mo_2``,
   ``user_AAA``, ``ord-aaaa1111``...), plus any argument whose name says it is one
   (:data:`ID_ARG_RE`: ``id``, ``uid``, ``*_id``, ``*_ids``, and short ``<1-4 letters>id``
   names such as ``moid``, ``tid``, ``caid``, ``gid``). See :meth:`Catalog.ids`.
5. Remedies (resolved by :meth:`Catalog.remedies_for`): ``permission_denied`` and
   ``auth_required`` are cured by any auth tool of the same app the catalog knows;
   ``rate_limited`` by any tool of the same app with the role ``wait`` (declared; for tools
   known only heuristically, any tool whose name contains ``wait``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcpgym.kernel.bounded_json import JSONLimitError, load_json
from mcpgym.kernel.errors import ErrorCode
from mcpgym.kernel.input_files import InputFileError, read_input_text
from mcpgym.kernel.shorten import short_text
from mcpgym.kernel.spec import ToolKind
from mcpgym.kernel.validation_text import validation_line

if TYPE_CHECKING:
    from mcpgym.kernel.app import App

READ_VERBS: frozenset[str] = frozenset(
    [
        "get",
        "list",
        "search",
        "check",
        "find",
        "view",
        "read",
        "show",
        "query",
        "lookup",
        "fetch",
        "count",
        "retrieve",
        "browse",
        "describe",
        "inspect",
        "calculate",
        "compute",
        "convert",
        "think",
        "verify",
        "track",
        "estimate",
        "discover",
        "analyze",
        "analyse",
        "explain",
        "diff",
        "log",
        "preview",
        "summarize",
        "retrieval",
    ]
)
AGENT_NOTE_NAMES: frozenset[str] = frozenset(
    {"todowrite", "todo_write", "todoread", "todo_read", "sequentialthinking", "sequential_thinking"}
)
"""Names (whole, or the last token of a namespaced name) of the tools an agent keeps its own
notes with (Claude Code's ``TodoWrite``, opencode's ``todowrite``, the ``sequentialthinking``
server): like ``think``, a read of nothing in the world, never a write (docs/labelling.md,
"writes"). A to-do app's ``create_todo_item`` is a write."""


def is_agent_note(tool: str) -> bool:
    """``tool`` is one the agent keeps its own notes with (:data:`AGENT_NOTE_NAMES`, whole or
    as the last token of a namespaced name)."""
    toks = _tokens(tool)
    return "_".join(toks) in AGENT_NOTE_NAMES or (bool(toks) and toks[-1] in AGENT_NOTE_NAMES)


WRITE_VERBS: frozenset[str] = frozenset(
    [
        "send",
        "create",
        "delete",
        "add",
        "update",
        "book",
        "buy",
        "place",
        "cancel",
        "mark",
        "block",
        "unblock",
        "remove",
        "set",
        "post",
        "reply",
        "transfer",
        "checkout",
        "pay",
        "star",
        "like",
        "invite",
        "edit",
        "modify",
        "move",
        "rename",
        "share",
        "submit",
        "write",
        "upload",
        "archive",
        "forward",
        "revoke",
        "change",
        "merge",
        "push",
        "commit",
        "fork",
        "close",
        "reopen",
        "assign",
        "append",
        "insert",
        "replace",
        "patch",
        "put",
        "save",
        "copy",
        "duplicate",
        "restore",
        "publish",
        "enable",
        "disable",
        "install",
        "uninstall",
        "grant",
        "approve",
        "reject",
        "deploy",
        "scale",
        "apply",
        "mkdir",
        "upsert",
        "drop",
        "truncate",
        "alter",
        # leaving, undoing, changing a membership, subscription or account: writes too (not
        # "rate", "join", "pin": nouns as often as verbs, "exchange_rate" is a read)
        "leave",
        "unshare",
        "follow",
        "unfollow",
        "subscribe",
        "unsubscribe",
        "unstar",
        "unlike",
        "mute",
        "unmute",
        "reset",
        "clear",
        "purge",
        "sell",
        "upgrade",
        "downgrade",
        "respond",
        "reserve",
        "accept",
        "decline",
        "dismiss",
        "vote",
        # moving a booking or an event in time, re-doing or undoing a payment, (de)activating
        "schedule",
        "reschedule",
        "rebook",
        "refund",
        "renew",
        "register",
        "activate",
        "deactivate",
        "unassign",
    ]
)
AUTH_VERBS: frozenset[str] = frozenset(
    ["request", "authorize", "authorise", "authenticate", "login", "logon", "signin"]
)
AUTH_OBJECTS: frozenset[str] = frozenset(
    ["privilege", "privileges", "permission", "permissions", "access", "token", "tokens", "scope", "scopes"]
    + ["credential", "credentials", "authorization", "authorisation", "auth", "consent", "elevation"]
)
"""What an auth request asks for: ``request`` is an ``auth`` verb only before one of these
(``request_privilege``); before anything else it asks for an effect (``request_return``):
a ``write``."""
AUTH_PHRASES: tuple[str, ...] = ("ask_for_privilege", "ask_for_permission", "log_in", "sign_in")
HANDOFF_VERBS: frozenset[str] = frozenset(["transfer", "escalate", "handoff", "handover"])
"""Verbs of a hand-off; with a :data:`HANDOFF_TARGETS` token the tool is a ``handoff``."""
HANDOFF_TARGETS: frozenset[str] = frozenset(
    ["human", "humans", "agent", "agents", "operator", "operators", "representative", "supervisor", "person", "staff"]
)
"""Who a hand-off goes to (``transfer_money`` names none: a write)."""
END_NAMES: frozenset[str] = frozenset(
    ["finish", "submit", "final_answer", "submit_answer", "done", "end_conversation", "claim_done", "task_done"]
)
"""Whole tool names (app prefix removed) of a call that ends the episode: kind ``end``."""
HTTP_VERBS: frozenset[str] = frozenset(["get", "head", "post", "put", "patch", "delete", "options"])
"""HTTP methods at the head of a REST-wrapper tool name (``API-post-search``)."""
REST_PREFIXES: frozenset[str] = frozenset(["api", "rest", "http"])
"""First tokens of a REST-wrapper tool name (OpenAPI-generated MCP servers: Notion's)."""
REST_READ_ACTIONS: frozenset[str] = frozenset(
    ["search", "query", "list", "find", "retrieve", "get", "lookup", "filter"]
)
"""Actions after ``post`` that make a REST call a read (``API-post-database-query``)."""
VERB_POSITIONS = 2
"""The verb must be among the first this many tokens of the action part (``v1_search``)."""
PREPOSITIONS: frozenset[str] = frozenset(["from", "by", "for", "to", "of", "in", "on", "with", "at", "into", "via"])
FILLER: frozenset[str] = frozenset(
    ["id", "ids", "info", "information", "details", "detail", "list", "all", "my", "the", "a", "an"]
)
PRODUCT_NOUNS: dict[str, str] = {
    "book": "booking",
    "reserve": "reservation",
    "pay": "payment",
    "subscribe": "subscription",
    "invite": "invitation",
}
"""Write verb -> the record it makes (``book_flight`` makes a booking): a second resource family
of a heuristic write, so a read of that record (``list_bookings``) reads the write back."""
NOUN_ALIASES: dict[str, str] = {"uid": "user", "uids": "user", "msg": "message", "msgs": "message", "dm": "message"}
ID_ARG_RE = re.compile(
    r"^(?:id|ids|uid|uids)$|_(?:id|ids|uid|uids)$"
    r"|^(?!(?:valid|paid|void|avoid|said|laid|raid|acid|amid|rapid|fluid|solid|humid|vivid)$)[a-z]{1,4}ids?$",
    re.IGNORECASE,
)
"""Argument names taken as resource ids when a tool's ``id_args`` are not known (``moid``,
``tid``, ``caid``... match the last alternative: up to four letters before ``id``, except
English words such as ``valid`` or ``paid``)."""
ID_VALUE_RE = re.compile(
    r"^[a-z][a-z0-9]{0,15}(?:[_-][a-z0-9]{1,15}){0,2}[_-](?=[A-Za-z0-9]*[0-9A-Z])[A-Za-z0-9]{1,64}$"
)
"""The shape of an id token: a lowercase prefix (``item``, ``mo``, ``user``, ``ord``...), ``_``
or ``-``, and a token holding a digit or a capital letter (``item_3f9``, ``mo_2``,
``user_AAA``, ``ord-aaaa1111``). Lowercase words (``new_york``) and free text do not match."""


def looks_like_id(value: object) -> bool:
    """True when ``value`` is a string shaped like an id token (:data:`ID_VALUE_RE`)."""
    return isinstance(value, str) and len(value) <= 96 and ID_VALUE_RE.match(value) is not None


Source = Literal["catalog", "file", "heuristic"]


class CatalogEntry(BaseModel):
    """What the scorer knows about one tool.

    Attributes:
        name: tool name.
        app: owning app (``"external"`` for unknown tools without an app prefix).
        kind: ``read`` | ``write`` | ``auth``.
        role: the role the tool declares on ``@tool`` (``wait``, ``reauth``, ``grant``; see
            :data:`mcpgym.kernel.spec.ROLES`), or None.
        destructive: declared destructive (a write that destroys or undoes something).
        never_faulted: fault injection never hits it.
        resources: resource families read or written (``shop.cart``...).
        preconditions: families whose state decides whether a write is valid.
        remedies: error code -> tools that cure it.
        alternatives: tools reaching the same goal another way.
        id_args: argument names naming resources; None = guess from argument names
            (:data:`ID_ARG_RE`).
        description: what the tool does.
        source: ``catalog`` (registered apps), ``file`` (a JSON catalog) or ``heuristic``.
        user_arguments: argument -> ``confirm`` | ``choose`` | ``provide``: arguments only the
            user may settle (``mcpgym.kernel.user``).
    """

    model_config = ConfigDict(extra="ignore")

    name: str
    app: str = "external"
    kind: ToolKind
    role: Literal["wait", "reauth", "grant"] | None = None
    destructive: bool = False
    never_faulted: bool = False
    resources: list[str] = Field(default_factory=list)
    preconditions: list[str] = Field(default_factory=list)
    remedies: dict[str, list[str]] = Field(default_factory=dict)
    alternatives: list[str] = Field(default_factory=list)
    id_args: list[str] | None = None
    description: str = ""
    source: Source = "file"
    user_arguments: dict[str, str] = Field(default_factory=dict)


def _id_shaped(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return bool(value) and all(looks_like_id(v) for v in value)
    return looks_like_id(value)


def name_tokens(text: str) -> list[str]:
    """The lower-case word tokens of a tool name (camelCase split: ``createDataset`` ->
    ``["create", "dataset"]``)."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text)
    return [t for t in re.split(r"[^A-Za-z0-9]+", text.lower()) if t]


_tokens = name_tokens


def _singular(word: str) -> str:
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _action_part(toks: list[str]) -> list[str]:
    """The tokens naming the tool's own action: those before a ``for`` that follows them
    (ToolBench names a tool ``<action>_for_<provider>``: ``api_tracking_for_pack_send`` acts
    ``api_tracking``; the provider's name, ``pack_send``, says nothing about the action)."""
    if "for" in toks[1:]:
        return toks[: toks.index("for", 1)]
    return toks


def _is_handoff(toks: list[str]) -> bool:
    """A hand-off: a :data:`HANDOFF_VERBS` token and a :data:`HANDOFF_TARGETS` token
    (``transfer_to_human_agents``, ``escalate_to_supervisor``, ``handoff_to_agent``)."""
    verbs = any(t in HANDOFF_VERBS for t in toks) or any(
        a == "hand" and b in ("off", "over") for a, b in zip(toks, toks[1:], strict=False)
    )
    return verbs and any(t in HANDOFF_TARGETS for t in toks)


def _description_kind(description: str | None) -> ToolKind | None:
    """The kind the description's first word says (``Cancels a reservation`` -> write,
    ``Returns the weather`` -> read), or None."""
    words = _tokens(description or "")[:1]
    if not words:
        return None
    w = words[0]
    stem = w[:-1] if w.endswith("s") and w[:-1] in (READ_VERBS | WRITE_VERBS | AUTH_VERBS | {"return"}) else w
    if stem in AUTH_VERBS:
        return ToolKind.AUTH
    if stem in WRITE_VERBS:
        return ToolKind.WRITE
    if stem in READ_VERBS or stem in ("return", "display"):
        return ToolKind.READ
    return None


def _namespaced_end(name: str) -> bool:
    """A namespaced end call (``local-claim_done``: the name after its last namespace
    separator is in :data:`END_NAMES`)."""
    parts = NAMESPACE_SEP_RE.split(name)
    return len(parts) > 1 and "_".join(_tokens(parts[-1])) in END_NAMES


def _verb_kind(tokens: list[str]) -> tuple[ToolKind | None, int]:
    """The kind the first verb among the first :data:`VERB_POSITIONS` tokens says, and its
    index; ``(None, -1)`` without one."""
    for i, t in enumerate(tokens[:VERB_POSITIONS]):
        if t == "request" and not any(o in AUTH_OBJECTS for o in tokens[i + 1 :]):
            return ToolKind.WRITE, i
        if t in AUTH_VERBS:
            return ToolKind.AUTH, i
        if t in WRITE_VERBS:
            return ToolKind.WRITE, i
        if t in READ_VERBS:
            return ToolKind.READ, i
    return None, -1


def _rest_kind(method: str, rest: list[str]) -> ToolKind:
    """A REST-wrapper name read as verb + resource + action: ``get`` / ``head`` / ``options``
    read; ``post`` reads when an action token is a search or query (``API-post-search``,
    ``API-post-database-query``), else writes; ``put`` / ``patch`` / ``delete`` write."""
    if method in ("get", "head", "options"):
        return ToolKind.READ
    if method == "post" and any(t in REST_READ_ACTIONS for t in rest):
        return ToolKind.READ
    return ToolKind.WRITE


NAMESPACE_SEP_RE = re.compile(r"__|[-.:/]")
"""What separates a server's namespace from its tool's own name (``google-cloud-bigquery_create_dataset``,
``github__create_issue``, ``notion:get-page``)."""


def _namespaced(name: str, action: list[str]) -> list[list[str]]:
    """Token lists to look for the verb in: the action part, then the name after each
    namespace separator (``__``, ``-``, ``.``, ``:``, ``/``: ``mcp__github__merge_pull_request``,
    ``google_calendar-create_event``), then, for a name mixing ``-`` and ``_``, after each
    ``_`` that follows the last ``-`` (``google-cloud-bigquery_run_query``: the server's
    name holds the hyphens)."""
    out = [action]
    for m in NAMESPACE_SEP_RE.finditer(name):
        out.append(_action_part(_tokens(name[m.end() :])))
    last = name.rfind("-")
    if last >= 0 and "_" in name[last:]:
        tail = name[last + 1 :]
        for m in re.finditer("_", tail):
            out.append(_action_part(_tokens(tail[m.end() :])))
    return [t for t in out if t]


def classify_tool(
    name: str, description: str | None = None, *, known_apps: Iterable[str] = (), default_app: str = "external"
) -> CatalogEntry:
    """Classify an unknown tool by the module's documented heuristic (see the module docstring).

    Conservative: a tool is a ``write`` only when the action part of its name starts with a
    write verb (or, for a name without a known verb, the description's first word is one);
    hand-offs and end calls are their own kinds; a name without strong evidence is
    ``unknown`` (docs/design.md §7, "Terms").

    Args:
        name: the tool name, e.g. ``get_uid_from_name`` or ``shop_view_cart``.
        description: its description, if known (used when the name has no known verb).
        known_apps: app names recognised as a name prefix.
        default_app: app of a tool without a known prefix.

    Returns:
        A :class:`CatalogEntry` with ``source="heuristic"`` and ``id_args=None``.
    """
    toks = _tokens(name)
    app = default_app
    if len(toks) > 1 and toks[0] in set(known_apps):
        app, toks = toks[0], toks[1:]
    joined = "_".join(toks)
    kind: ToolKind | None = None
    verb_at = -1
    action = _action_part(toks)
    if joined in END_NAMES or _namespaced_end(name):
        kind, verb_at = ToolKind.END, 0
    elif is_agent_note(name):
        kind, verb_at = ToolKind.READ, 0  # the agent's own to-do list or thoughts, like think
    elif _is_handoff(toks):
        kind = ToolKind.HANDOFF
        verb_at = next((i for i, t in enumerate(toks) if t in HANDOFF_VERBS or t == "hand"), 0)
    elif any(p in joined for p in AUTH_PHRASES):
        kind = ToolKind.AUTH
        # the verb of "ask_for_x" is "ask": the noun follows it (leading prepositions skipped)
        verb_at = next((i for i, t in enumerate(toks) if t in ("ask", "log", "sign")), 0)
    named = toks  # the tokens the verb index points into
    if kind is None and len(toks) > 2 and toks[0] in REST_PREFIXES and toks[1] in HTTP_VERBS:
        kind, verb_at, named = _rest_kind(toks[1], toks[2:]), 1, toks
    elif kind is None and len(toks) > 1 and toks[0] == "post" and any(t in REST_READ_ACTIONS for t in toks[1:]):
        kind, verb_at, named = ToolKind.READ, 0, toks  # an HTTP POST of a search (post_database_query)
    if kind is None:
        for candidate in _namespaced(name, action):
            kind, verb_at = _verb_kind(candidate)
            if kind is not None:
                named = candidate
                break
    if kind is None:
        kind = _description_kind(description) or ToolKind.UNKNOWN
    rest = named[verb_at + 1 :] if verb_at >= 0 else list(action)
    noun: list[str] = []
    for t in rest:
        if t in PREPOSITIONS:
            if noun:
                break
            continue
        if t in FILLER:
            continue
        noun.append(NOUN_ALIASES.get(t, t))
    if noun:
        noun = [_singular(t) for t in noun]  # stations_code and station_code name one resource
        family = f"{app}.{'_'.join(noun)}"
    else:
        verb = named[verb_at] if 0 <= verb_at < len(named) else (joined or name)
        family = f"{app}.{verb}"
    resources = [family]
    product = PRODUCT_NOUNS.get(named[verb_at]) if kind == ToolKind.WRITE and 0 <= verb_at < len(named) else None
    if product is not None and f"{app}.{product}" != family:
        resources.append(f"{app}.{product}")
    return CatalogEntry(
        name=name,
        app=app,
        kind=kind,
        resources=resources,
        description=description or "",
        id_args=None,
        source="heuristic",
    )


def is_wait_entry(entry: CatalogEntry) -> bool:
    """True for a tool that waits out a rate limit: one declaring the role ``wait``, or (for a
    tool known only by the heuristic, or from a catalog row that has no ``role`` field, as
    written before roles existed) one whose name holds the token ``wait``."""
    if entry.source == "catalog" or "role" in entry.model_fields_set:
        return entry.role == "wait"
    return "wait" in _tokens(entry.name)


def _id_args_from_schema(schema: Any) -> list[str] | None:
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        return [p for p in schema["properties"] if ID_ARG_RE.search(p)]
    return None


def _json_type(value: Any) -> str:
    """The JSON name of a decoded value's type (``null``, ``a number``, ``an array``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else type(value).__name__


class Catalog:
    """Tool name -> :class:`CatalogEntry`, with a heuristic fallback for unknown tools.

    Args:
        entries: :class:`CatalogEntry` objects or catalog rows (dicts as ``mcpgym tools
            --json`` prints: ``name, app, kind, resources, preconditions, remedies,
            alternatives, description, input_schema`` and optionally ``id_args``).
        source: the ``source`` given to dict rows that do not name one.
        default_app: app of unknown tools without a known app prefix.

    Raises:
        ValueError: for a row that is not an object or does not validate, or a second row
            for one tool (the message names the row and field).
    """

    def __init__(
        self,
        entries: Iterable[CatalogEntry | dict[str, Any]] = (),
        *,
        source: Source = "file",
        default_app: str = "external",
    ) -> None:
        self._entries: dict[str, CatalogEntry] = {}
        self._heuristic: dict[str, CatalogEntry] = {}
        self._listed_by: tuple[int, dict[str, set[str]]] | None = None
        self.default_app = default_app
        rows_of: dict[str, int] = {}
        for i, row in enumerate(entries):
            if isinstance(row, CatalogEntry):
                entry = row
            else:
                if not isinstance(row, dict):
                    raise ValueError(f"catalog row {i}: expected an object with name and kind, got {_json_type(row)}")
                data = dict(row)
                data.setdefault("source", source)
                if "id_args" not in data:
                    data["id_args"] = _id_args_from_schema(data.get("input_schema"))
                try:
                    entry = CatalogEntry.model_validate(data)
                except ValidationError as exc:
                    raise ValueError(
                        f"catalog row {i} ({short_text(str(data.get('name', '?')), 80)}): {validation_line(exc, data)}"
                    ) from None
            if entry.name in rows_of:  # two rows for one tool: which one classifies it?
                raise ValueError(
                    f"catalog row {i} ({entry.name}): field name: the tool already has row {rows_of[entry.name]}"
                )
            rows_of[entry.name] = i
            self._entries[entry.name] = entry

    # -- construction --------------------------------------------------------------------
    @classmethod
    def from_app_classes(cls, app_classes: Iterable[type[App]]) -> Catalog:
        """Build from app classes (each with ``.tools``: name -> ``ToolSpec``); source ``catalog``.

        Remedies are the declared ones plus those derived from the roles of these classes'
        tools (:func:`mcpgym.kernel.spec.role_remedies`: ``rate_limited`` -> the ``wait``
        tools, ``auth_required`` -> the ``reauth`` tools)."""
        specs = [spec for c in app_classes for spec in c.tools.values()]
        rows = [spec.catalog_entry(specs) for spec in specs]
        return cls(rows, source="catalog")

    @classmethod
    def from_apps(cls, apps: Iterable[str] | None = None) -> Catalog:
        """Build from the registered apps (``mcpgym.kernel.app.load_apps()``); source ``catalog``.

        Args:
            apps: only these app names (None: every registered app).

        Raises:
            mcpgym.kernel.app.UnknownAppError: (a KeyError) for an app name that is not registered.
        """
        from mcpgym.kernel.app import check_app_names, load_apps

        registry = load_apps()
        names = list(registry) if apps is None else check_app_names(apps)
        return cls.from_app_classes(registry[n] for n in names)

    @classmethod
    def from_file(cls, path: str | Path) -> Catalog:
        """Load a JSON catalog: a list of rows, or ``{"tools": [...]}``; source ``file``.

        Raises:
            ValueError: naming the file for invalid JSON, a bad row (one that is not an object,
                a field of the wrong type) or two rows for one tool, and for a file that is
                missing, unreadable, not a regular file, over 16 MiB, not UTF-8, nested more
                than 200 levels deep, holding an integer of more than 4,300 digits or a key given twice.
        """
        p = Path(path)
        try:
            data = load_json(read_input_text(p), str(p), unique_keys=True)  # bounded: depth, digits, a key twice
        except InputFileError as exc:
            raise ValueError(f"{p}: cannot read the catalog: {exc.reason}") from None
        except JSONLimitError as exc:
            raise ValueError(f"{p}: cannot read the catalog: {exc.reason}") from None
        if isinstance(data, dict) and isinstance(data.get("tools"), list):
            data = data["tools"]
        if not isinstance(data, list):
            raise ValueError(f"{p}: a catalog must be a JSON list of tool rows")
        try:
            return cls(data, source="file")
        except ValueError as exc:
            raise ValueError(f"{p}: {exc}") from None

    # -- lookup --------------------------------------------------------------------------
    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def known_apps(self) -> set[str]:
        """Apps named by the catalog's entries plus the registered apps (if loadable)."""
        apps = {e.app for e in self._entries.values()}
        try:
            from mcpgym.kernel.app import app_names

            apps.update(app_names())
        except Exception:  # noqa: BLE001 - a broken app module must not break external scoring
            pass
        return apps

    def get(self, name: str, description: str | None = None) -> CatalogEntry:
        """Return the entry of ``name``; an unknown tool is classified (and cached) heuristically."""
        entry = self._entries.get(name)
        if entry is not None:
            return entry
        entry = self._heuristic.get(name)
        if entry is None:
            entry = classify_tool(name, description, known_apps=self.known_apps(), default_app=self.default_app)
            self._heuristic[name] = entry
        return entry

    def __getitem__(self, name: str) -> CatalogEntry:
        return self.get(name)

    def entries(self) -> list[CatalogEntry]:
        """Every catalog/file entry plus the heuristic ones classified so far."""
        return [*self._entries.values(), *self._heuristic.values()]

    def to_json(self) -> list[dict[str, Any]]:
        """Rows of :meth:`entries` as JSON-able dicts (loadable with :meth:`from_file`)."""
        return [e.model_dump(mode="json") for e in self.entries()]

    def ids(self, name: str, arguments: Any) -> frozenset[str]:
        """Resource ids a call names: the values of the tool's ``id_args`` in ``arguments``.

        Lists are flattened; values are compared as strings. For entries with ``id_args``
        None (tools no catalog knows), an argument is an id when its name matches
        :data:`ID_ARG_RE` or its value (or every item of its list value) has the shape of an
        id token (:func:`looks_like_id`), so ``{"moid": "mo_2"}`` and ``{"target":
        "item_3f9"}`` both name a resource whatever the argument is called.
        """
        if not isinstance(arguments, dict):
            return frozenset()
        id_args = self.get(name).id_args
        if id_args is None:
            keys = [k for k, v in arguments.items() if ID_ARG_RE.search(str(k)) or _id_shaped(v)]
        else:
            keys = id_args
        out: set[str] = set()
        for k in keys:
            v = arguments.get(k)
            for item in v if isinstance(v, (list, tuple)) else [v]:
                if item is not None and not isinstance(item, (dict, list)):
                    out.add(str(item))
        return frozenset(out)

    def remedies_for(self, name: str, code: str | None) -> list[str]:
        """Tools that cure error ``code`` of tool ``name`` (heuristic entries: module rule 5)."""
        if code is None:
            return []
        entry = self.get(name)
        cures = list(entry.remedies.get(code, []))
        if entry.source == "heuristic":
            known = self.entries()
            # cures come from the tool's own app: mcpgym's system_wait is no cure of an
            # outside API's rate limit
            if code in (ErrorCode.PERMISSION_DENIED, ErrorCode.AUTH_REQUIRED):
                cures += [e.name for e in known if e.kind == ToolKind.AUTH and e.name != name and e.app == entry.app]
            elif code == ErrorCode.RATE_LIMITED:
                cures += [e.name for e in known if is_wait_entry(e) and e.app == entry.app]
        return list(dict.fromkeys(cures))

    def alternatives_of(self, name: str) -> set[str]:
        """Declared alternatives of ``name``, in both directions (A lists B, or B lists A)."""
        alts = set(self.get(name).alternatives)
        alts.update(self._listing(name))
        alts.discard(name)
        return alts

    def _listing(self, name: str) -> set[str]:
        """Names of the entries that list ``name`` among their alternatives.

        The reverse index is built once and rebuilt when a heuristic entry was added since.
        """
        cached = self._listed_by
        if cached is None or cached[0] != len(self._heuristic):
            index: dict[str, set[str]] = {}
            for e in self.entries():
                for alt in e.alternatives:
                    index.setdefault(alt, set()).add(e.name)
            cached = self._listed_by = (len(self._heuristic), index)
        return cached[1].get(name, set())


@functools.cache
def installed_catalog() -> Catalog:
    """The registered apps' catalog (:meth:`Catalog.from_apps`), built once per process: the
    one the in-process episodes, the Inspect scorer and the RL reward score with."""
    return Catalog.from_apps()


__all__ = [
    "NAMESPACE_SEP_RE",
    "name_tokens",
    "AUTH_PHRASES",
    "AUTH_VERBS",
    "Catalog",
    "installed_catalog",
    "CatalogEntry",
    "ID_ARG_RE",
    "ID_VALUE_RE",
    "READ_VERBS",
    "WRITE_VERBS",
    "classify_tool",
    "looks_like_id",
    "is_wait_entry",
]
