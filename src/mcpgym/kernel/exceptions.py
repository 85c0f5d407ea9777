"""The exceptions mcpgym raises on purpose: one base, a few kinds (docs/design.md §8).

Every error mcpgym raises deliberately derives from :class:`MCPGymError`, so a caller can
catch them all in one clause and the ``mcpgym`` command handles them in one place (the
command group of :mod:`mcpgym.evaluation.cli.style`: one line on stderr, the kind's
:attr:`~MCPGymError.exit_code`). The kinds say whose fault it is and what to do:

- :class:`InputError` (exit code 2): what the user gave is wrong (an option, a file, a name,
  a task, a fault profile); the message names the input, the field and the value.
- :class:`FormatError` (an :class:`InputError`): a file cannot be read as the format it
  claims (a trajectory file, a run manifest, another harness's transcript).
- :class:`RunDirectoryError` (exit code 2): the run directory given cannot be used as asked
  (locked by another run, not empty, inconsistent with the options, unwritable).
- :class:`ServiceError` (exit code 1): something mcpgym depends on failed (the spawned
  server, an LLM provider, a worker).
- :class:`InvalidValue` and :class:`UnknownName` (both :class:`InputError`): a value out of
  its domain, a name nobody registered; also a ``ValueError`` / ``KeyError``.
- :class:`ScoringError` (exit code 1): a number the benchmark cannot compute (never a silent
  zero).

The named errors of each layer (``FaultProfileError``, ``TaskError``, ``ProviderError``,
``RunError``...) keep their names and their builtin bases (``ValueError``, ``KeyError``,
``RuntimeError``) where callers catch those, and add one of these kinds.
"""

from __future__ import annotations

from typing import ClassVar


class MCPGymError(Exception):
    """Base of every exception mcpgym raises on purpose.

    Attributes:
        exit_code: the ``mcpgym`` command's exit code when this error ends it (1; 2 for bad input).
    """

    exit_code: ClassVar[int] = 1


class InputError(MCPGymError):
    """What the user gave is wrong: an option, a file, a name, a task, a profile (exit code 2)."""

    exit_code: ClassVar[int] = 2


class FormatError(InputError):
    """A file that cannot be read as the format it claims (exit code 2)."""


class RunDirectoryError(MCPGymError):
    """The run directory given cannot be used as asked (exit code 2: the user chose it)."""

    exit_code: ClassVar[int] = 2


class ServiceError(MCPGymError):
    """Something mcpgym depends on failed: the spawned server, an LLM provider, a worker (exit code 1)."""


class InvalidValue(InputError, ValueError):
    """A value the user gave that is out of its domain (a ``ValueError`` too, for callers that catch one)."""


class UnknownName(InputError, KeyError):
    """A name (task id, suite, app, agent) that is not known; the message names the known ones.
    A ``KeyError`` too, for callers that catch one; ``str()`` is the plain message (no quotes)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ScoringError(MCPGymError):
    """A score the benchmark cannot compute from what it was given (exit code 1)."""


__all__ = [
    "FormatError",
    "InputError",
    "InvalidValue",
    "MCPGymError",
    "RunDirectoryError",
    "ScoringError",
    "ServiceError",
    "UnknownName",
]
