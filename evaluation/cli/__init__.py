"""The ``mcpgym`` command line: thin adapters over the Python API.

* :mod:`.app`: the typer application, its root options, the commands in ``--help`` order, and
  :func:`main`, the console script (the one place an unexpected error becomes one line).
* One module per command, each a thin adapter over a Python API: :mod:`.serve`, :mod:`.tools`,
  :mod:`.run` (its options generated from :class:`mcpgym.evaluation.run.config.RunConfig`),
  :mod:`.score`, :mod:`.export`, :mod:`.report`, :mod:`.play`, :mod:`.cat`, :mod:`.tasks`;
  ``proxy`` is :mod:`mcpgym.evaluation.proxy.command`. :mod:`.baseline` runs the published baseline.
* :mod:`.common`: the console and "was this option given"; :mod:`.style`: help formatting,
  error lines and the ``--debug`` switch shared by every command.

``python -m mcpgym.evaluation.cli`` runs :func:`main` (:mod:`.__main__`).
"""

from mcpgym.evaluation.cli.app import app, main

__all__ = ["app", "main"]
