"""The ``mcpgym`` command line: thin adapters over the Python API.

* :mod:`.app`: the typer application, its root options, the commands in ``--help`` order, and
  :func:`main`, the console script (the one place an unexpected error becomes one line).
* One module per command, each a thin adapter over a Python API: :mod:`.serve`, :mod:`.tools`,
  :mod:`.run` (its options generated from :class:`mcpgym.evaluation.run.config.RunConfig`),
  :mod:`.score`, :mod:`.export`, :mod:`.report`, :mod:`.play`, :mod:`.cat`, :mod:`.tasks`;
  ``proxy`` is :mod:`mcpgym.evaluation.proxy.command`. :mod:`.baseline` runs the published baseline.
* :mod:`.common`: the console and "was this option given"; :mod:`.style`: help formatting,
  error lines and the ``--debug`` switch shared by every command.

``python -m mcpgym.evaluation.cli`` runs :func:`main` (:mod:`.__main__`). A Ctrl-C while this
package is imported (the console script's start-up) prints ``interrupted`` and exits 130, like
an interrupt of any command (``main`` guards what follows); ``import mcpgym`` imports nothing
heavy, so no traceback is printed from mcpgym's first line on. A Ctrl-C inside a finalizer,
which Python would print as an ignored exception with its traceback, is raised again in the
main thread (:func:`_interrupt_in_a_finalizer`).
"""

import _thread
import sys


def _interrupt_in_a_finalizer(unraisable: "sys.UnraisableHookArgs") -> None:
    """``sys.unraisablehook`` of the console script: a Ctrl-C that lands inside a finalizer
    (``__del__``, a weakref callback: Python cannot raise it there and prints "Exception
    ignored in ... KeyboardInterrupt" with a traceback) is raised again in the main thread, where
    :func:`~mcpgym.evaluation.cli.app.main` turns it into ``interrupted`` and exit 130; anything
    else goes to Python's own hook."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        # From a thread: in the main thread it would be raised at once, inside this hook.
        _thread.start_new_thread(_thread.interrupt_main, ())
        return
    sys.__unraisablehook__(unraisable)


sys.unraisablehook = _interrupt_in_a_finalizer

try:
    from mcpgym.evaluation.cli.app import app, main
except KeyboardInterrupt:  # Ctrl-C while the command line is imported (about 2 s): one line, exit 130
    sys.stderr.write("interrupted\n")
    raise SystemExit(130) from None

__all__ = ["app", "main"]
