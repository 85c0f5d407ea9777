"""Rendering for people: what a run or a set of scored files looks like on a terminal, in
Markdown and in HTML. Reads records and scores; never scores or runs anything itself.

* :mod:`.run_report`: a run directory's comparison table and ``report.md`` / ``report.html``.
* :mod:`.html` / :mod:`.viewer`: the HTML report and its per-episode trajectory viewer.
* :mod:`.score_text`: the plain-text tables of ``mcpgym score`` (a :class:`ScoreReport`).
* :mod:`.listings`: what ``mcpgym tools`` and ``mcpgym tasks`` print.
* :mod:`.tables`: terminal tables that fit the width they are given.
"""
