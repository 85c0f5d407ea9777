"""The scorer's parts (definitions: docs/design.md §7).

* :mod:`.calls`: a trajectory's steps resolved for scoring (:class:`~.calls.Call`: catalog
  entry, fault, applied flag, resource families and ids).
* :mod:`.behaviours`: one function per behaviour (verification, pre-check, blind retries,
  recovery, defeatism, impatience, call counts, outcome), each with its definition.
* :mod:`.metrics`: the typed per-agent metrics of ``scores.json``.

:func:`mcpgym.evaluation.scorer.score_episode` puts the behaviours together and
:func:`mcpgym.evaluation.aggregate.aggregate` fills the metrics.
"""
