"""Scoring: from a recorded trajectory to scores (definitions: docs/design.md §7).

* :mod:`.tool_catalog`: what the scorer knows of each tool (:class:`~.tool_catalog.CatalogEntry`:
  kind, resource families, preconditions, remedies), from the apps or inferred by heuristic.
* :mod:`.foreign_catalogs`: other benchmarks' tool catalogs shipped as data (``--catalog NAME``).
* :mod:`.calls`: a trajectory's steps resolved for scoring (:class:`~.calls.Call`: catalog
  entry, fault, applied flag, resource families and ids).
* :mod:`.behaviours`: one function per behaviour (verification, pre-check, blind retries,
  recovery, defeatism, impatience, call counts, outcome), each with its definition, and the
  rule of each part of :class:`~mcpgym.evaluation.records.scores.EpisodeScores`, registered
  with :func:`.registry.scores` (recovery, false success and the user scores register theirs
  in their own modules).
* :mod:`.registry`: the rules by part, and :class:`~.registry.EpisodeInput`, what they read.
* :mod:`.judge`: the outcome oracle (final world state against the gold state).
* :mod:`.refusal`: whether a final answer declares the task impossible.
* :mod:`.user_scores`: the user-in-the-loop scores.
* :mod:`.scorer`: :func:`~.scorer.score_episode` runs every registered rule and composes
  their parts into :class:`~mcpgym.evaluation.records.scores.EpisodeScores`.
* :mod:`.aggregate`: :func:`~.aggregate.aggregate` fills the per-agent metrics (the typed
  rows of ``scores.json``, :mod:`mcpgym.evaluation.records.scores`, each part by its own rule).
"""
