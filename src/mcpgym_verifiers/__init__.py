"""The verifiers taskset ``mcpgym-verifiers`` (``vf-eval mcpgym-verifiers``): verifiers finds a
taskset by importing the top-level module its id names, and takes the ``Taskset`` and
``Harness`` subclasses this module exports (the harness is then the taskset's default). The
environment itself is :mod:`mcpgym.integrations.verifiers_env`; this module only names it.
"""

from mcpgym.integrations.verifiers_env import McpgymHarness, McpgymTaskset, load_environment

__all__ = ["McpgymHarness", "McpgymTaskset", "load_environment"]
