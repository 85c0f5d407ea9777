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
heavy, so no traceback is printed from mcpgym's first line on.
"""

import sys

try:
    from mcpgym.evaluation.cli.app import app, main
except KeyboardInterrupt:  # Ctrl-C while the command line is imported (about 2 s): one line, exit 130
    sys.stderr.write("interrupted\n")
    raise SystemExit(130) from None

__all__ = ["app", "main"]
