"""Episodes: one world, one fault plan, one ledger and call log, bound to one MCP session.

An :class:`Episode` is what an MCP connection acts on. :class:`EpisodeStore` creates, finds,
expires and caps them; the HTTP transport and the in-process API share it.
"""

from __future__ import annotations

import enum
import secrets
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcpgym.kernel.exceptions import InputError, ServiceError
from mcpgym.kernel.shorten import short_name, short_text
from mcpgym.kernel.spec import ToolSpec
from mcpgym.kernel.user import UserAnswer, UserRequest
from mcpgym.kernel.world import World, normalise_apps, template
from mcpgym.server.control_models import EpisodeSummary
from mcpgym.server.input_state import InputStates
from mcpgym.tools import elicit
from mcpgym.tools.faults import FaultProfile, load_profile, plan_unavailable
from mcpgym.tools.invoke import CallOutcome, ToolInvoker

DEFAULT_WAIT_LIMIT = 600.0
"""Most wall seconds the server waits on a client (an elicitation answer) and keeps a
``requestState`` good, for an episode outside an :class:`EpisodeStore` (stdio, in-process);
a store lowers it to :data:`WAIT_SHARE_OF_IDLE` of its idle timeout."""


WAIT_SHARE_OF_IDLE = 0.75
"""An HTTP episode waits on its client at most this share of the store's idle timeout, so the
answer to a wait that ran out (``user_input_required``) is sent before the silent episode
expires (idle time runs from the client's last message)."""


class EpisodeEnd(enum.StrEnum):
    """Why an episode ended while one of its calls waited on the client (an elicitation): the
    waiting call is answered at once with the tool error ``not_found`` naming it
    (:func:`mcpgym.server.elicitation.ended_result`), nothing run, before its session ends."""

    DELETED = "deleted"
    """``DELETE /control/episodes/{id}``."""
    EXPIRED = "expired"
    """Idle expiry (``--idle-timeout``)."""
    SERVER_STOPPING = "server_stopping"
    """The server is stopping (SIGINT, SIGTERM)."""

    @property
    def said(self) -> str:
        """The words the answer uses for this end."""
        return {
            EpisodeEnd.DELETED: "it was deleted on the control API",
            EpisodeEnd.EXPIRED: "it expired (idle)",
            EpisodeEnd.SERVER_STOPPING: "the server is stopping",
        }[self]


class UnknownToolsError(InputError, ValueError):
    """``tools`` names tools the episode's apps do not have (the message names the first ten
    and counts them all)."""


class EpisodeLimitError(ServiceError, RuntimeError):
    """The store already holds its maximum number of live episodes."""


_NOTHING_HIDDEN: frozenset[str] = frozenset()


@dataclass
class Episode:
    """A live episode.

    Attributes:
        episode_id: 32 hex characters (128 random bits); also the secret part of its MCP URL.
        seed: world seed; fault_seed: fault seed; apps: app names; profile: the fault profile.
        world: the :class:`World`; invoker: the :class:`ToolInvoker` (call log and ledger).
        visible: tool names this episode exposes (None = every tool of its apps).
        search_tools: whether the ``search_tools`` meta-tool is exposed (retrieval mode).
        initial_snapshot: the world as created, for the judge: the template's snapshot, shared
            by every episode of the same (seed, apps), so read-only.
        busy: MCP requests (POSTs) being served right now; an episode with one the server is
            working on is never idle.
        waiting: of those, requests waiting on the client (an elicitation): not work, so they
            do not keep the episode alive.
        last_used: monotonic wall time of the client's last message or of the end of the
            server's last work for it (for idle expiry; never seen by the sandbox).
        wait_limit: most wall seconds the server waits on the client's answer to a question
            (:data:`DEFAULT_WAIT_LIMIT`, or less under a store's idle timeout) and keeps a
            requestState good.
        input_states: the requestState tokens issued to the client (:mod:`mcpgym.server.input_state`).
        wait_scopes: cancel scopes of the waits on the client in progress (:meth:`end_waits`).
        ended: why the episode ended while a call waited on the client (:class:`EpisodeEnd`),
            else None.
        plays: ``(task id, trial)`` of an episode made from a task
            (``POST /control/task-episodes``, :mod:`mcpgym.server.rl_routes`), else None.
    """

    episode_id: str
    seed: int
    fault_seed: int
    apps: list[str]
    profile: FaultProfile
    world: World
    invoker: ToolInvoker
    initial_snapshot: dict[str, Any]
    visible: frozenset[str] | None = None
    search_tools: bool = False
    unlocked: set[str] = field(default_factory=set)
    last_used: float = field(default_factory=time.monotonic)
    busy: int = 0
    waiting: int = 0
    wait_limit: float = DEFAULT_WAIT_LIMIT
    input_states: InputStates = field(default_factory=lambda: InputStates(DEFAULT_WAIT_LIMIT))
    wait_scopes: set[anyio.CancelScope] = field(default_factory=set)
    ended: EpisodeEnd | None = None
    plays: tuple[str, int] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    park_listener: weakref.ref[Any] | None = None
    """A weak reference to an object whose ``episode_parked()`` is called after :meth:`park`
    parked something (the in-process :class:`GymEpisode` keeps its last observation as text
    then): weak, so that the episode's owner is freed as soon as it is dropped, not by a later
    garbage collection."""

    @classmethod
    def create(
        cls,
        seed: int = 0,
        apps: Iterable[str] | str | None = None,
        faults: FaultProfile | str | dict[str, Any] | None = "none",
        fault_seed: int | None = None,
        *,
        episode_id: str | None = None,
        tools: Iterable[str] | None = None,
        search_tools: bool = False,
    ) -> Episode:
        """Build a fresh episode.

        Args:
            seed: world seed. apps: app names (the always-included apps, ``system``, are added).
            faults: fault profile (name, path, mapping or profile); fault_seed defaults to ``seed``.
            tools: restrict the visible tools to these names (None: all tools of the apps).
            search_tools: expose the ``search_tools`` meta-tool (retrieval mode).

        Raises:
            KeyError: unknown app. mcpgym.tools.faults.FaultProfileError: bad profile. ValueError:
            unknown tool name in ``tools`` (:class:`UnknownToolsError`).
        """
        names = normalise_apps(apps)
        profile = load_profile(faults)
        made = template(int(seed), names)  # generated once per process per (seed, apps)
        world = made.world()  # copy on write: an app no call touches is never copied
        invoker = ToolInvoker(world, profile, fault_seed)
        visible = None
        if tools is not None:
            visible = frozenset(tools)
            unknown = sorted(visible - set(invoker.specs))
            if unknown:
                shown = ", ".join(short_text(u) for u in unknown[:10]) + (
                    f" (and {len(unknown) - 10} more)" if len(unknown) > 10 else ""
                )
                plural = "s" if len(unknown) > 1 else ""
                raise UnknownToolsError(f"{len(unknown)} unknown tool{plural} for this episode: {shown}")
            # Plan outages over the visible tools only, so a down tool keeps a visible alternative.
            invoker.down = plan_unavailable(
                profile, invoker.fault_seed, {n: s for n, s in invoker.specs.items() if n in visible}
            )
        episode = cls(
            episode_id=episode_id or secrets.token_hex(16),
            seed=int(seed),
            fault_seed=invoker.fault_seed,
            apps=names,
            profile=profile,
            world=world,
            invoker=invoker,
            initial_snapshot=made.snapshot,  # one object per (seed, apps): read-only
            visible=visible,
            search_tools=search_tools,
        )
        episode.refresh_exposure()
        return episode

    # -- tools --------------------------------------------------------------------------
    def tool_specs(self) -> list[ToolSpec]:
        """The specs this episode currently exposes, in catalog order."""
        specs = list(self.invoker.specs.values())
        if self.search_tools:
            return [s for s in specs if s.name in self.unlocked]
        if self.visible is not None:
            return [s for s in specs if s.name in self.visible]
        return specs

    def is_exposed(self, name: str) -> bool:
        """True when ``name`` may be called in this episode."""
        return any(s.name == name for s in self.tool_specs())

    def call(self, name: str, arguments: Any, *, touch: bool = True) -> CallOutcome:
        """Run one tool call (serialised per episode) and return the outcome.

        A tool that exists in the world but is not exposed in this episode is refused as
        ``not_found``, exactly like an unknown tool. ``touch``: the call counts as activity
        (False for the call run because the client did not answer a question in time).
        """
        with self.lock:
            if touch:
                self.last_used = time.monotonic()
            out = self.invoker.call(name, arguments)
        keep_hot(self)
        return out

    def park(self) -> bool:
        """Park what this idle episode holds (:meth:`World.park` and the call log,
        :meth:`ToolInvoker.park`): kept as JSON text until next read, so that a process holding
        many idle episodes gives its garbage collector little to scan. Nothing observable
        changes (same snapshots, hashes, call log, trajectory). Skipped, returning False, while
        a call runs on the episode (its lock is held) or a request is being served.
        """
        if not self.lock.acquire(blocking=False):
            return False
        try:
            if self.busy > self.waiting:
                return False
            parked = self.world.park() > 0
            parked = self.invoker.park() or parked
        finally:
            self.lock.release()
        listener = self.park_listener() if parked and self.park_listener is not None else None
        if listener is not None:
            listener.episode_parked()
        return parked

    def pending_user_request(self, name: str, arguments: Any) -> UserRequest | None:
        """The question ``name(arguments)`` would put to the user now (see
        :func:`mcpgym.tools.elicit.pending_request`); nothing is logged or changed."""
        with self.lock:
            return elicit.pending_request(self.invoker, name, arguments)

    def call_with_answer(
        self,
        name: str,
        arguments: dict[str, Any],
        request: UserRequest,
        answer: UserAnswer,
        asked: list[dict[str, Any]] | None = None,
    ) -> CallOutcome:
        """Run the call with the user's ``answer`` to ``request`` applied (effects:
        :mod:`mcpgym.tools.elicit`); ``asked``: earlier questions of the same call."""
        with self.lock:
            self.last_used = time.monotonic()
            out = elicit.call_with_answer(self.invoker, name, arguments, request, answer, asked)
        keep_hot(self)
        return out

    def call_answered(self, name: str, arguments: dict[str, Any], asked: list[dict[str, Any]]) -> CallOutcome:
        """Run the call once the user answered every question it put (``asked``: their records)."""
        with self.lock:
            self.last_used = time.monotonic()
            out = elicit.call_answered_so_far(self.invoker, name, arguments, asked)
        keep_hot(self)
        return out

    def limit_waits(self, seconds: float) -> None:
        """Wait at most ``seconds`` on the client (and keep requestState tokens that long)."""
        self.wait_limit = min(DEFAULT_WAIT_LIMIT, float(seconds))
        self.input_states.ttl = self.wait_limit

    def end_waits(self, reason: EpisodeEnd) -> int:
        """The episode ends (``reason``): end its waits on the client now, each such call then
        answered with :func:`mcpgym.server.elicitation.ended_result`. Returns how many waits
        were ended. Call it from the event loop the waits run on."""
        if self.ended is None:
            self.ended = reason
        scopes = list(self.wait_scopes)
        for scope in scopes:
            scope.cancel()
        return len(scopes)

    def is_idle(self, now: float, idle_timeout: float) -> bool:
        """True when no request of this episode is being worked on (a request waiting on the
        client is not work) and nothing happened for more than ``idle_timeout`` seconds."""
        return self.busy <= self.waiting and now - self.last_used > idle_timeout

    def refresh_exposure(self) -> None:
        """Recompute which world tools are hidden from the agent (after an unlock)."""
        if not self.search_tools and self.visible is None:  # every tool shown
            self.invoker.hidden = _NOTHING_HIDDEN
            return
        exposed = {s.name for s in self.tool_specs()}
        hidden = set(self.invoker.specs) - exposed
        self.invoker.hidden = hidden if hidden else _NOTHING_HIDDEN  # most episodes show every tool

    # -- views for the harness ----------------------------------------------------------
    def view(self) -> EpisodeSummary:
        """The control API's episode view (``GET /control/episodes/{id}``)."""
        return EpisodeSummary(
            episode_id=self.episode_id,
            seed=self.seed,
            fault_seed=self.fault_seed,
            apps=self.apps,
            app_versions={name: type(app).version for name, app in self.world.apps.items()},
            faults=short_name(self.profile.name),  # an inline profile's name is the client's: echoed bounded
            state_hash=self.world.state_hash(),
            calls=len(self.invoker.calls),
            faults_injected=sum(1 for e in self.invoker.ledger if not e.persisting),
            tools=len(self.tool_specs()),
        )

    def summary(self) -> dict[str, Any]:
        """The control API's episode view as JSON (:meth:`view` dumped)."""
        return self.view().model_dump(mode="json")

    def calls(self) -> list[dict[str, Any]]:
        """The server-side call log as JSON rows."""
        return [c.model_dump(mode="json") for c in self.invoker.calls]

    def ledger(self) -> list[dict[str, Any]]:
        """The fault ledger as JSON rows."""
        return [e.model_dump(mode="json") for e in self.invoker.ledger]


HOT_EPISODES = 16
"""Most episodes of a process kept *hot*: the last ones called, whose changed app states and
call logs stay live objects between calls. A call to an episode makes it the most recent; the
least recent beyond this many is parked (:meth:`Episode.park`) and unparks on its next call
(about one copy of its changed apps). A serving process holding 1,000 idle episodes so gives
its garbage collector the hot ones' objects plus a small header per episode to scan."""

_hot: OrderedDict[int, weakref.ref[Episode]] = OrderedDict()
_hot_lock = threading.Lock()


def keep_hot(episode: Episode) -> None:
    """Make ``episode`` the most recently called of the process's hot episodes
    (:data:`HOT_EPISODES`) and park the least recent beyond the limit that are still alive."""
    key = id(episode)
    cold: list[weakref.ref[Episode]] = []
    with _hot_lock:
        ref = _hot.get(key)
        if ref is not None and ref() is episode:
            _hot.move_to_end(key)
        else:
            _hot.pop(key, None)
            _hot[key] = weakref.ref(episode)
        while len(_hot) > HOT_EPISODES:
            cold.append(_hot.popitem(last=False)[1])
    for ref in cold:
        other = ref()
        if other is not None:
            other.park()


class EpisodeStore:
    """Live episodes by id, with a cap and idle expiry.

    Args:
        max_episodes: most live episodes; creating one more raises :class:`EpisodeLimitError`.
        idle_timeout: wall seconds after which an unused episode is dropped by :meth:`expire`.
    """

    def __init__(self, max_episodes: int = 1000, idle_timeout: float = 1800.0) -> None:
        self.max_episodes = max_episodes
        self.idle_timeout = idle_timeout
        self._episodes: dict[str, Episode] = {}
        self._lock = threading.Lock()

    def create(self, **kwargs: Any) -> Episode:
        """Create and store an episode (arguments of :meth:`Episode.create`).

        Raises:
            EpisodeLimitError: when the cap is reached (after expiring idle episodes).
        """
        self.expire()
        with self._lock:
            if len(self._episodes) >= self.max_episodes:
                raise EpisodeLimitError(
                    f"episode limit reached ({self.max_episodes} live episodes); delete finished ones or wait for idle ones to expire"
                )
        episode = Episode.create(**kwargs)
        episode.limit_waits(self.idle_timeout * WAIT_SHARE_OF_IDLE)
        with self._lock:
            if len(self._episodes) >= self.max_episodes:
                raise EpisodeLimitError(f"episode limit reached ({self.max_episodes} live episodes)")
            self._episodes[episode.episode_id] = episode
        return episode

    def get(self, episode_id: str) -> Episode | None:
        """The live episode ``episode_id``, or None."""
        return self._episodes.get(episode_id)

    def delete(self, episode_id: str) -> bool:
        """Drop an episode; True when it existed."""
        with self._lock:
            return self._episodes.pop(episode_id, None) is not None

    def expire(self, now: float | None = None) -> list[str]:
        """Drop episodes idle for more than ``idle_timeout`` wall seconds; return their ids.

        An episode the server is working for (``busy``) is not idle, however long the request
        takes; one whose requests only wait on the client is (:meth:`Episode.is_idle`).
        """
        return [ep.episode_id for ep in self.expire_episodes(now)]

    def expire_episodes(self, now: float | None = None) -> list[Episode]:
        """:meth:`expire`, returning the dropped episodes themselves (whose waits on the client
        the caller ends: :meth:`Episode.end_waits`)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            dead = [ep for ep in self._episodes.values() if ep.is_idle(now, self.idle_timeout)]
            for ep in dead:
                del self._episodes[ep.episode_id]
        return dead

    def end_waits(self, reason: EpisodeEnd = EpisodeEnd.SERVER_STOPPING) -> int:
        """End every wait on a client now (the server is stopping): each such call is answered
        that its episode ended (:meth:`Episode.end_waits`). Returns how many waits were ended.
        Call it from the event loop the waits run on."""
        return sum(episode.end_waits(reason) for episode in list(self._episodes.values()))

    def serving(self) -> int:
        """MCP requests being served across the live episodes (:attr:`Episode.busy`)."""
        return sum(episode.busy for episode in list(self._episodes.values()))

    def __len__(self) -> int:
        return len(self._episodes)

    def ids(self) -> list[str]:
        """Ids of the live episodes."""
        return list(self._episodes)
