"""Compact world states in a run directory: shared snapshot files and state diffs.

Every episode of a task starts from the same initial state (the task's world seed) and is
judged against the same gold state, so a compact run directory stores each distinct snapshot
once, as ``snapshots/<sha256 prefix>.json`` (content-addressed: the same state is one file,
written once, whatever the number of episodes, trials or agents), and each trajectory line
keeps only references to them plus its final state as a diff against the initial one
(:class:`StoredStates`). A line written this way is about 20 times smaller.

:func:`state_diff` / :func:`apply_diff` are exact: ``apply_diff(a, state_diff(a, b)) == b``
for JSON data (dicts are compared key by key; lists and scalars are replaced whole).
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcpgym.evaluation.records.atomic import write_atomic
from mcpgym.evaluation.records.compressed import SNAPSHOT_LEVEL, compress_line, read_text
from mcpgym.kernel.bounded_json import load_json
from mcpgym.kernel.input_files import MAX_CONFIG_BYTES, InputFileError
from mcpgym.kernel.validation_text import validation_line

SNAPSHOT_DIR = "snapshots"
"""Folder of a run directory holding the shared snapshot files."""


class StoredStates(BaseModel):
    """Where the states of a compact trajectory line are.

    Attributes:
        initial: the initial snapshot's file, relative to the trajectories file's folder
            (``snapshots/<hash>.json``).
        gold: the gold snapshot's file (same form), or None when there is no gold state.
        final_diff: the final snapshot as :func:`state_diff` against the initial one, or None
            when the final state is unknown.
    """

    model_config = ConfigDict(extra="forbid")

    initial: str
    gold: str | None = None
    final_diff: dict[str, Any] | None = Field(default=None)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def state_diff(base: Any, new: Any) -> dict[str, Any]:
    """The difference from JSON data ``base`` to ``new``.

    Returns:
        ``{"set": {pointer: value}, "del": [pointer, ...]}``, pointers in JSON-pointer form
        (``/state/shop/cart``; ``""`` for the whole value); only dicts are descended into.
    """
    sets: dict[str, Any] = {}
    dels: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for key, value in b.items():
                here = f"{path}/{_escape(str(key))}"
                if key not in a:
                    sets[here] = value
                elif a[key] != value:
                    walk(a[key], value, here)
            for key in a:
                if key not in b:
                    dels.append(f"{path}/{_escape(str(key))}")
        elif a != b or type(a) is not type(b):
            sets[path] = b

    walk(base, new, "")
    return {"set": sets, "del": dels}


def apply_diff(base: Any, diff: dict[str, Any]) -> Any:
    """``base`` with :func:`state_diff` output ``diff`` applied (``base`` itself is not changed).

    Copy on write: only the dicts on the path to a changed pointer are copied; every untouched
    subtree of the result is the same object as in ``base`` (a run's initial state is shared
    by its episodes, so their final states are read cheaply). Callers must not modify the
    result in place (:meth:`SnapshotStore.expand` hands it out read-only, as the shared
    initial and gold states).

    Raises:
        ValueError: when ``diff`` is malformed or a pointer does not fit ``base``.
    """
    if (
        not isinstance(diff, dict)
        or not isinstance(diff.get("set", {}), dict)
        or not isinstance(diff.get("del", []), list)
    ):
        raise ValueError("a state diff must be {'set': {pointer: value}, 'del': [pointer]}")
    out = dict(base) if isinstance(base, dict) else copy.deepcopy(base)
    owned = {id(out)}  # the dicts that belong to ``out`` (copied or new), safe to change

    def own(node: dict[str, Any], part: str, pointer: str, create: bool) -> dict[str, Any]:
        child = node.get(part)
        if child is None and create and part not in node:
            child = node[part] = {}
            owned.add(id(child))
        if not isinstance(child, dict):
            _fail(pointer)
        if id(child) not in owned:
            child = node[part] = dict(child)
            owned.add(id(child))
        return child

    for pointer, value in diff.get("set", {}).items():
        if pointer == "":
            out = copy.deepcopy(value)
            owned = {id(out)}
            continue
        *parents, last = _parts(pointer)
        node = out
        if not isinstance(node, dict):
            _fail(pointer)
        for part in parents:
            node = own(node, part, pointer, create=True)
        node[last] = copy.deepcopy(value)
    for pointer in diff.get("del", []):
        *parents, last = _parts(pointer)
        node = out
        if not isinstance(node, dict):
            _fail(pointer)
        for part in parents:
            node = own(node, part, pointer, create=False)
        if last not in node:
            _fail(pointer)
        del node[last]
    return out


def _parts(pointer: Any) -> list[str]:
    if not isinstance(pointer, str) or not pointer.startswith("/"):
        _fail(pointer)
    return [_unescape(p) for p in pointer[1:].split("/")]


def _fail(pointer: Any) -> NoReturn:
    raise ValueError(f"state diff pointer {pointer!r} does not fit the initial state")


def snapshot_name(snapshot: dict[str, Any]) -> str:
    """``snapshots/<first 20 hex digits of the sha256 of the canonical JSON>.json``."""
    text = json.dumps(snapshot, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"{SNAPSHOT_DIR}/{hashlib.sha256(text.encode('utf-8')).hexdigest()[:20]}.json"


class WorldSnapshot(BaseModel):
    """The shape of a stored snapshot (what :meth:`mcpgym.kernel.world.World.snapshot` writes):
    checked before a snapshot file is used, so a file of another shape is refused naming its
    field instead of failing later (``KeyError: apps`` in a report)."""

    model_config = ConfigDict(extra="allow")

    seed: int
    apps: list[str]
    clock: dict[str, Any]
    user: dict[str, Any]
    people: list[Any]
    state: dict[str, Any]


def check_snapshot(path: Path, ref: str, data: Any) -> dict[str, Any]:
    """``data`` read from the snapshot file ``path`` (reference ``ref``), checked: a JSON
    object of the shape :class:`WorldSnapshot` whose name is the hash of its content
    (:func:`snapshot_name`; a snapshot is stored under its own hash, so a file whose content
    changed, or that holds another snapshot, is refused).

    Raises:
        ValueError: naming the file and what is wrong.
    """
    if not isinstance(data, dict):
        raise ValueError(f"snapshot file {path} must hold a JSON object")
    try:
        WorldSnapshot.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"snapshot file {path} is not a snapshot of mcpgym's: {validation_line(exc, data)}") from None
    want = ref.removesuffix(".zst")
    if snapshot_name(data) != want:
        raise ValueError(
            f"snapshot file {path} does not hold the snapshot its name says: its content hashes to "
            f"{snapshot_name(data).removeprefix(SNAPSHOT_DIR + '/')} (changed after it was written)"
        )
    return data


class SnapshotStore:
    """The snapshot files of one folder (a run directory), written once and read through a cache.

    Args:
        root: the folder holding ``trajectories.jsonl``; snapshot references are relative to it.
        compress: write new snapshot files zstd-compressed, ``snapshots/<hash>.json.zst``
            (:mod:`mcpgym.evaluation.records.compressed`); plain ``.json`` files are read either way.

    Thread-safe: the runner stores from worker threads.
    """

    def __init__(self, root: str | Path, *, compress: bool = True) -> None:
        self.root = Path(root)
        self.compress = compress
        self._cache: dict[str, dict[str, Any]] = {}
        self._by_id: dict[int, tuple[dict[str, Any], str]] = {}  # snapshots stored before, by object
        self._lock = threading.Lock()

    def put(self, snapshot: dict[str, Any]) -> str:
        """Store ``snapshot`` (once per distinct content) and return its reference.

        Raises:
            OSError: when the file cannot be written.
        """
        seen = self._by_id.get(id(snapshot))
        if seen is not None and seen[0] is snapshot:  # the same shared object again: no hashing
            return seen[1]
        ref = snapshot_name(snapshot) + (".zst" if self.compress else "")
        with self._lock:
            self._by_id[id(snapshot)] = (snapshot, ref)
            if ref in self._cache:
                return ref
            path = self.root / ref
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                text = json.dumps(snapshot, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
                if self.compress:
                    text = compress_line(text, SNAPSHOT_LEVEL)
                write_atomic(path, text, prefix=".tmp-", suffix=".json")
            self._cache[ref] = snapshot
        return ref

    def get(self, ref: str) -> dict[str, Any]:
        """The snapshot stored under ``ref`` (shared: do not modify it).

        Raises:
            ValueError: for a reference outside the folder, a missing or malformed file.
        """
        with self._lock:
            hit = self._cache.get(ref)
        if hit is not None:
            return hit
        if not isinstance(ref, str) or not ref.startswith(f"{SNAPSHOT_DIR}/") or ".." in ref or "\\" in ref:
            raise ValueError(f"snapshot reference {ref!r} must be {SNAPSHOT_DIR}/<name>.json")
        path = self.root / ref
        try:
            text, torn = read_text(path, what="snapshot file", limit=MAX_CONFIG_BYTES)  # .json.zst or .json
            if torn:
                raise ValueError("its zstd frame is damaged or torn")
            data = load_json(text, str(path), limit=None)
        except InputFileError as exc:
            if exc.reason == "no such file":
                raise ValueError(f"snapshot file {path} is missing") from None
            raise ValueError(str(exc)) from None
        except ValueError as exc:
            raise ValueError(f"snapshot file {path} is not valid JSON: {exc}") from None
        data = check_snapshot(path, ref, data)
        with self._lock:
            self._cache[ref] = data
        return data

    def compact(
        self, initial: dict[str, Any], final: dict[str, Any] | None, gold: dict[str, Any] | None
    ) -> StoredStates:
        """Store ``initial`` and ``gold`` and return the references plus the final state's diff."""
        return StoredStates(
            initial=self.put(initial),
            gold=self.put(gold) if gold is not None else None,
            final_diff=state_diff(initial, final) if final is not None else None,
        )

    def expand(self, stored: StoredStates) -> tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]:
        """(initial, final, gold) snapshots of ``stored``; initial and gold are shared objects.

        Raises:
            ValueError: for a missing or malformed snapshot file or diff.
        """
        initial = self.get(stored.initial)
        gold = self.get(stored.gold) if stored.gold is not None else None
        final = apply_diff(initial, stored.final_diff) if stored.final_diff is not None else None
        return initial, final, gold


__all__ = [
    "SNAPSHOT_DIR",
    "SnapshotStore",
    "StoredStates",
    "WorldSnapshot",
    "apply_diff",
    "check_snapshot",
    "snapshot_name",
    "state_diff",
]
