"""An episode's condition: the point of a run's condition axes it was played at.

``mcpgym run --faults none,default,harsh --tools task,task+20,all`` plays every (agent, task,
trial) once per condition of the axes' product (docs/design.md §1, "Conditions"). Each
episode records its :class:`EpisodeCondition` (a trajectory line's ``condition``, its
scores' ``condition``), ``scores.json`` keeps one row per agent and condition
(:func:`condition_key`), and ``manifest.json`` lists the run's conditions. A run with one
value per axis has no conditions: nothing is recorded, and its files are as before.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ConditionAxis(BaseModel):
    """What the run varies: the values of each axis, in the order given.

    Attributes:
        faults: the ``--faults`` values (built-in profile names or profile files).
        tools: the ``--tools`` values, each as :func:`mcpgym.evaluation.llm.exposure.parse_exposure`
            writes it (``task+20``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    faults: list[str] = Field(min_length=1)
    tools: list[str] = Field(min_length=1)


class EpisodeCondition(BaseModel):
    """The condition of one episode.

    Attributes:
        faults: the run's fault profile of this condition, as ``--faults`` named it (a task's own
            profile still wins: the trajectory's ``fault_profile`` is what was applied).
        tools: the tool exposure (``all``, ``task``, ``task+N``, ``retrieval``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    faults: str = Field(min_length=1)
    tools: str = Field(min_length=1)

    @property
    def label(self) -> str:
        """``faults=harsh, tools=task+20``: how tables and charts name the condition."""
        return f"faults={self.faults}, tools={self.tools}"


def condition_key(agent: str, condition: EpisodeCondition | None) -> str:
    """The ``scores.json`` row of an agent's episodes in ``condition``: the agent's name when
    the run has no conditions, else ``NAME [faults=F, tools=T]``."""
    return agent if condition is None else f"{agent} [{condition.label}]"


__all__ = ["ConditionAxis", "EpisodeCondition", "condition_key"]
