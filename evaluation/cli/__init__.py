"""The ``mcpgym`` command line: thin adapters over the Python API.

* :mod:`.app`: the typer application, its root options and the commands ``serve``, ``tools``,
  ``tasks``, ``run``, ``score`` and ``report``; :func:`main` is the console script.
* :mod:`.score`: ``mcpgym score FILE...`` over :func:`mcpgym.evaluation.formats.score.score_files`.
* :mod:`.style`: help formatting and the ``--debug`` switch shared by every command.

``python -m mcpgym.evaluation.cli`` runs :func:`main` (:mod:`.__main__`).
"""

from mcpgym.evaluation.cli.app import app, main

__all__ = ["app", "main"]
