"""Named, stable random streams.

Every random choice in a sandbox comes from ``rng(seed, app, purpose)``: a
:class:`random.Random` seeded from a SHA-256 of its name, so a stream never depends on
``PYTHONHASHSEED``, on which other apps exist, on dict order or on the machine.
"""

from __future__ import annotations

import hashlib
import random


def stable_hash(*parts: object) -> int:
    """Return a 64-bit integer hash of ``parts`` that is stable across processes.

    Args:
        parts: values joined by their ``str()`` with a unit separator.

    Returns:
        An int in ``[0, 2**64)``.
    """
    text = "\x1f".join(str(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big")


def stable_uniform(*parts: object) -> float:
    """Return a float in ``[0, 1)`` derived only from ``parts`` (see :func:`stable_hash`)."""
    return stable_hash(*parts) / 2**64


def rng(seed: int, app: str, purpose: str) -> random.Random:
    """Return the named random stream ``(seed, app, purpose)``.

    Args:
        seed: the world seed.
        app: the app (or shared component, e.g. ``"people"``) drawing from the stream.
        purpose: what the stream is for (``"catalog"``, ``"ids"``...).
    """
    return random.Random(stable_hash("mcpgym", seed, app, purpose))


def stable_id(seed: int, app: str, prefix: str, counter: int, length: int = 8) -> str:
    """Return a deterministic id such as ``ord-3f9a01bc`` for the ``counter``-th id of ``app``.

    Ids are drawn from the app's own stream, so they are reproducible from the seed and the
    number of ids created before, and independent of other apps.
    """
    digest = hashlib.sha256(f"mcpgym\x1f{seed}\x1f{app}\x1fid\x1f{prefix}\x1f{counter}".encode()).hexdigest()
    return f"{prefix}-{digest[:length]}"
