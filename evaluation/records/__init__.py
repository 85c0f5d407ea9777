"""The persisted schemas of a run: what is written to disk and read back.

* :mod:`.trajectory`: one episode's record (``trajectories.jsonl`` lines, steps, calls).
* :mod:`.scores`: one episode's scores (a line's ``scores``) and ``scores.json``, one part
  per behaviour, each with its aggregate rule; :mod:`.statistics`: the rates, interval and pass^k.
* :mod:`.snapshots`: world-state snapshots stored beside the trajectories (``snapshots/``).
* :mod:`.manifest`: ``manifest.json``, a run's settings and versions (what resume reads).

Nothing here scores, runs or renders; every other evaluation package may import it.
"""
