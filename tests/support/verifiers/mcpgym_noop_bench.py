"""The baseline of the ``verifiers_rollouts`` benchmark row: verifiers' own tool environment
(verifiers 0.4's ``v1`` API has no ``ToolEnv`` class; its equivalent is a taskset whose
``Toolset`` of ``@vf.tool`` functions verifiers serves over MCP itself), with ``N`` no-op tools
(``$MCPGYM_NOOP_TOOLS``, default 32) served once for the eval (a shared toolset, the cheapest
placement verifiers has), played by the same harness as mcpgym's (:class:`McpgymHarness`) so
the model, the MCP client and the turn count are the same. Imported by verifiers' loader as the
taskset ``mcpgym-noop-bench`` (in ``.venv-vf``, with this directory on ``sys.path``).
"""

from __future__ import annotations

import os
from typing import Any

import verifiers.v1 as vf

from mcpgym.integrations.verifiers_env import McpgymHarness

NOOP_TOOLS = int(os.environ.get("MCPGYM_NOOP_TOOLS", "32"))
"""How many no-op tools the toolset offers."""
INSTRUCTION = "Call the no-op tools."
"""The one task's prompt (the replay model's script key)."""


def _noop(index: int) -> Any:
    async def noop(self: Any) -> str:
        return "ok"

    noop.__name__ = f"noop_{index}"
    noop.__doc__ = f"No-op tool {index}: answers ok."
    return vf.tool(noop)


class NoopToolset(vf.Toolset[vf.SharedToolsetConfig]):
    """``NOOP_TOOLS`` no-op tools, ``noop_0`` ... (each answers ``ok``)."""


for _i in range(NOOP_TOOLS):
    setattr(NoopToolset, f"noop_{_i}", _noop(_i))


class NoopTask(vf.Task):
    """One rollout: the model calls no-op tools; a constant reward (the figure times rollouts)."""

    @vf.reward(weight=1.0)
    async def done(self, trace: vf.Trace) -> float:
        """1.0 for a finished rollout."""
        return 1.0


class NoopTaskset(vf.Taskset):
    """``rows`` copies of the one task, over the shared no-op toolset."""

    @classmethod
    def toolsets(cls, config: Any) -> list[Any]:
        """The shared no-op toolset."""
        return [NoopToolset(vf.SharedToolsetConfig())]

    def load(self) -> Any:
        """One task per row (``$MCPGYM_NOOP_ROWS``, default 1)."""
        for i in range(int(os.environ.get("MCPGYM_NOOP_ROWS", "1"))):
            yield NoopTask(vf.TaskData(id=f"noop#{i}", name="noop", prompt=INSTRUCTION), self.config.task)


__all__ = ["McpgymHarness", "NoopTaskset"]

if __name__ == "__main__":  # verifiers launches a toolset's server as `python -m <its module>`
    NoopToolset.run()
