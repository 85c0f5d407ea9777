"""``python -m mcpgym.evaluation.cli``: the ``mcpgym`` command."""

from mcpgym.evaluation.cli.app import main

if __name__ == "__main__":  # pragma: no cover
    main()
