"""A run's condition axes: ``--faults`` and ``--tools`` given as comma-separated lists.

``mcpgym run --faults none,default,harsh --tools task,task+20,all`` plays every (agent, task,
trial) once per condition of the product (3 x 3 = 9 here), in one run directory
(docs/design.md §1, "Conditions"). A condition changes nothing but the episode's fault
profile and tool exposure: the world seed and the fault seed of (task, trial) are the same in
every condition, so that the conditions are paired (a difference between two conditions is
the condition's, not the draw's); the recorded condition makes an episode's set-up
reproducible from its line alone. With one value per axis there are no conditions
(:func:`condition_axis` returns None) and a run is exactly a run without axes.
"""

from __future__ import annotations

from mcpgym.evaluation.records.condition import ConditionAxis, EpisodeCondition

MAX_AXIS_VALUES = 16
"""Most values one axis may list (each multiplies the run's episodes)."""


def axis_values(text: str, flag: str) -> list[str]:
    """The values of a comma-separated axis (``none,default,harsh``), blanks stripped.

    Raises:
        ValueError: an empty value, a value given twice, or more than :data:`MAX_AXIS_VALUES`;
            the message names ``flag``.
    """
    values = [v.strip() for v in text.split(",")]
    if any(not v for v in values):
        raise ValueError(f"{flag} {text!r}: an empty value in the list (write e.g. {flag} none,default,harsh)")
    if len(values) > MAX_AXIS_VALUES:
        raise ValueError(
            f"{flag}: {len(values)} values; at most {MAX_AXIS_VALUES} (each multiplies the run's episodes)"
        )
    twice = sorted({v for v in values if values.count(v) > 1})
    if twice:
        raise ValueError(f"{flag} {text!r} lists {', '.join(twice)} twice")
    return values


def tool_values(text: str) -> list[str]:
    """The ``--tools`` values of ``text``, each in its canonical form (``task+0`` is ``task``).

    Raises:
        ValueError: see :func:`axis_values`, or an unknown exposure mode (the message lists the modes).
    """
    from mcpgym.evaluation.llm.exposure import parse_exposure

    modes = [parse_exposure(v).mode for v in axis_values(text, "--tools")]
    twice = sorted({m for m in modes if modes.count(m) > 1})
    if twice:
        raise ValueError(f"--tools {text!r} lists {', '.join(twice)} twice")
    return modes


def condition_axis(faults: str, tools: str) -> ConditionAxis | None:
    """The run's axes, or None when each of ``--faults`` and ``--tools`` names one value.

    Raises:
        ValueError: see :func:`axis_values` and :func:`tool_values`.
    """
    fault_list, tool_list = axis_values(faults, "--faults"), tool_values(tools)
    if len(fault_list) == 1 and len(tool_list) == 1:
        return None
    return ConditionAxis(faults=fault_list, tools=tool_list)


def conditions_of(axis: ConditionAxis | None) -> list[EpisodeCondition | None]:
    """Every condition of ``axis``, faults-major (``[None]`` for a run without axes)."""
    if axis is None:
        return [None]
    return [EpisodeCondition(faults=f, tools=t) for f in axis.faults for t in axis.tools]


__all__ = ["MAX_AXIS_VALUES", "axis_values", "condition_axis", "conditions_of", "tool_values"]
