"""The trajectory viewer of ``report.html``: every episode's steps, readable and filterable.

Per episode it shows the instruction, the steps in order (tool calls with their arguments and
results; agent messages and invalid calls when the trajectory records them), injected faults
marked at their step, the behaviour flags the scorer found placed at the step they concern
(verification skips, pre-check skips, blind retries, impatience), each recoverable error's
recovery window (the ``k`` calls after it, the attempt and the recovery), the agent's final
message, and the judge's state diff (every path where initial, final and gold differ, with
the judge's verdict: recalled, missed, misbehaved).

Nothing is re-derived here: flags and windows are the scorer's own results
(:class:`mcpgym.evaluation.scoring.scorer.EpisodeScores`, stored with each trajectory or computed by
:func:`mcpgym.evaluation.scoring.scorer.score_episode`); the state diff uses the judge's
:func:`mcpgym.evaluation.scoring.judge.comparable_state` and :func:`~mcpgym.evaluation.scoring.judge.flatten`, and
the verdict of each path comes from the judge's ``missed`` / ``misbehaved`` lists.

The HTML is rendered here, in Python (every text escaped); a small inline script adds the
filters (agent, task, outcome, behaviour) and keyboard navigation (``j``/``k`` or the arrow
keys move between episodes, ``/`` focuses the filters). No network, fonts or external files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from html import escape
from typing import Any

from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.report.item_diff import CollectionDiff, cell, collection_diff, is_collection, missing
from mcpgym.evaluation.scoring.scorer import EpisodeScores
from mcpgym.kernel.wording import counted

MAX_VIEWER_EPISODES = 300
"""Most episodes the viewer embeds (notable ones first, then in run order); the page says
how many were left out."""

MAX_VALUE_CHARS = 4000
"""Longest argument/result text shown in full; longer ones are cut, with their size stated."""

BEHAVIOURS: dict[str, str] = {
    "fault": "fault injected",
    "verification_skip": "verification skip",
    "precheck_skip": "pre-check skip",
    "blind_retry": "blind retry",
    "recovered": "recovered",
    "not_recovered": "not recovered",
    "defeatism": "defeatism",
    "impatience": "impatience",
    "invalid": "invalid call",
}
"""Behaviour filter key -> label (the same labels mark the steps)."""


@dataclass
class StepView:
    """One step as the viewer shows it (strings already formatted).

    Attributes:
        step: the call-log step number (0: none, e.g. a message or a call refused before the
            server). pos: 1-based position in the trajectory. kind: ``tool_call``, ``message``,
            ``invalid`` or another kind the trajectory records. title: tool name or message role.
            flags: (css class, label)
            badges. args/result: pretty JSON or text. error: error code. window: the
            recoverable-error steps whose recovery window covers this step.
    """

    step: int
    pos: int
    kind: str
    title: str
    flags: list[tuple[str, str]] = field(default_factory=list)
    args: str | None = None
    result: str | None = None
    error: str | None = None
    text: str | None = None
    window: list[int] = field(default_factory=list)


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, indent=1, ensure_ascii=False, sort_keys=False, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    if len(text) > MAX_VALUE_CHARS:
        text = text[:MAX_VALUE_CHARS] + f"\n… ({len(text):,} characters, cut)"
    return text


def _window_words(k: int | None) -> str:
    """The recovery window in words: ``"3 calls"``; ``"calls up to the attempt"`` with no window
    (``k`` None, the default: docs/design.md §7, "Recovery")."""
    return counted(k, "call") if k is not None else "calls up to the attempt"


def step_views(traj: Trajectory, sc: EpisodeScores) -> list[StepView]:
    """The steps of ``traj`` with the scorer's findings (``sc``) attached to their steps."""
    skips = set(sc.verification_skips)
    prechecks: dict[int, list[str]] = {}
    for p in sc.precheck_skips:
        prechecks.setdefault(p.step, []).append(p.family)
    retries = {b.repeat_step: b for b in sc.blind_retry_detail}
    errors = {r.step: r for r in sc.recoverable_error_detail}
    impatient = {s for w in sc.impatience_detail for s in w.steps}
    windows: dict[int, list[int]] = {}
    for r in sc.recoverable_error_detail:
        end = r.step + sc.recovery_window + 1 if sc.recovery_window is not None else (r.attempt_step or r.step) + 1
        for s in range(r.step + 1, end):
            windows.setdefault(s, []).append(r.step)
    out = []
    for pos, raw in enumerate(traj.steps, start=1):
        data = raw.model_dump(mode="json") if hasattr(raw, "model_dump") else dict(raw)
        kind = str(data.get("type") or data.get("kind") or "tool_call")
        n = data.get("step")
        if kind == "message":
            view = StepView(step=n or 0, pos=pos, kind="message", title=f"turn {data.get('turn', 0)}")
            tokens = data.get("tokens") or {}
            if tokens:
                view.flags.append(("tokens", f"tokens in/out {tokens.get('input', 0)}/{tokens.get('output', 0)}"))
            if data.get("tool_calls"):
                view.flags.append(("calls", f"asked for {counted(data['tool_calls'], 'tool call')}"))
        elif kind == "user_turn":
            view = StepView(
                step=0,
                pos=pos,
                kind="user_turn",
                title="ask_user" + (f" ({data['about']})" if data.get("about") else ""),
            )
            view.text = f"Agent asked: {data.get('question', '')}\n\nUser answered: {data.get('answer', '')}"
            if data.get("in_world"):
                view.flags.append(("user_burden", "the answer was available from a tool"))
        else:
            view = StepView(
                step=n or 0,
                pos=pos,
                kind="invalid" if data.get("invalid") else kind,
                title=str(data.get("tool") or kind),
                window=windows.get(n, []) if n else [],
            )
        if "arguments" in data:
            view.args = _pretty(data.get("arguments") if data.get("raw_arguments") is None else data["raw_arguments"])
        if data.get("result") is not None:
            view.result = _pretty(data.get("result"))
        for key, label in (("text", ""), ("content", ""), ("refusal", "refusal: "), ("reasoning", "reasoning: ")):
            if isinstance(data.get(key), str) and data[key]:
                view.text = (view.text + "\n\n" if view.text else "") + label + data[key]
        if data.get("is_error"):
            view.error = str(data.get("error_code") or "error")
            if data.get("error_rule"):  # which rule of the layered result reader said so
                view.error += f" (rule: {data['error_rule']})"
        if data.get("fault"):
            view.flags.append(
                ("fault", f"fault injected: {data['fault']}" + (" (inferred)" if data.get("fault_inferred") else ""))
            )
        if data.get("invalid"):
            view.flags.append(("invalid", "invalid call" + ("" if n else " (refused before the server)")))
        if n in skips:
            view.flags.append(("verification_skip", "verification skip: this write is never read back"))
        if n in prechecks:
            view.flags.append(("precheck_skip", f"pre-check skip: {', '.join(prechecks[n])} not read first"))
        if n in retries:
            b = retries[n]
            view.flags.append(
                ("blind_retry", f"blind retry of step {b.step}" + (" (duplicated the write)" if b.duplicate else ""))
            )
        if n in impatient:
            view.flags.append(("impatience", "impatience: repeated inside a retry-after window"))
        if n in errors:
            r = errors[n]
            what = f"recoverable error ({r.code or r.fault})"
            if r.attempt:
                what += f"; attempt: {r.attempt} at step {r.attempt_step}"
            else:
                within = counted(sc.recovery_window, "call") if sc.recovery_window is not None else "the episode"
                what += f"; no attempt within {within}" + (" (cut short)" if r.cut_short else "")
            what += f"; recovered at step {r.recovered_step}" if r.recovered_step else "; not recovered"
            view.flags.append(("recovered" if r.recovered_step else "not_recovered", what))
        out.append(view)
    return out


def state_diff(traj: Trajectory, sc: EpisodeScores) -> list[tuple[str, str, str, str, str]] | None:
    """(path, initial, final, gold, verdict) for every path where the three states differ, or
    None when the trajectory lacks a state. Verdicts come from the judge's lists: ``missed``,
    ``misbehaved``, else ``recalled`` (gold changed it and the agent got it right)."""
    from mcpgym.evaluation.scoring.judge import MISSING, _prune, comparable_state, flatten, shared_comparable_state

    initial, final, gold = traj.initial_snapshot, traj.final_snapshot, traj.gold_snapshot
    if initial is None or final is None or gold is None:
        return None
    try:
        # initial and gold states are shared by a run's episodes (restored once); subtrees
        # equal in all three states show no row, so they are pruned before flattening
        states = _prune(shared_comparable_state(initial), comparable_state(final), shared_comparable_state(gold))
        flat = [flatten(s) for s in states]
    except Exception:  # noqa: BLE001 - a state the registered apps cannot restore: no diff shown
        return None
    missed = {p.split("[")[0] for p in sc.missed}
    misbehaved = {p.split("[")[0] for p in sc.misbehaved}
    rows = []

    def show(v: Any) -> str:
        return "(absent)" if v is MISSING else json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)

    for path in sorted(set().union(*flat)):
        values = [f.get(path, MISSING) for f in flat]
        texts = [show(v) for v in values]
        if texts[0] == texts[1] == texts[2]:
            continue
        verdict = (
            "missed"
            if path in missed
            else "misbehaved"
            if path in misbehaved
            else ("recalled" if texts[2] != texts[0] else "changed")
        )
        rows.append((path, texts[0], texts[1], texts[2], verdict))
    return rows


def _leaves(state: Any, prefix: str = "") -> dict[str, Any]:
    """``{path: value}`` of a comparable state as the judge flattens it (dict keys escaped as in
    a JSON pointer), except that a list stays a list (a collection, diffed by item)."""
    if isinstance(state, dict):
        out: dict[str, Any] = {}
        for k, v in state.items():
            out.update(_leaves(v, f"{prefix}/{str(k).replace('~', '~0').replace('/', '~1')}"))
        return out
    return {prefix or "/": list(state) if isinstance(state, tuple) else state}


def state_diff_by_item(
    traj: Trajectory, sc: EpisodeScores
) -> tuple[list[tuple[str, str, str, str, str]], list[CollectionDiff]] | None:
    """The judge's state diff as the viewer shows it: the scalar rows of :func:`state_diff`
    (path, initial, final, gold, verdict; every cell at most
    :data:`~mcpgym.evaluation.report.item_diff.MAX_CELL_CHARS` characters) and, for every
    collection (a list) that differs, its diff by item
    (:func:`mcpgym.evaluation.report.item_diff.collection_diff`). None when the trajectory
    lacks a state or the registered apps cannot restore it."""
    from mcpgym.evaluation.scoring.judge import _prune, comparable_state, shared_comparable_state

    initial, final, gold = traj.initial_snapshot, traj.final_snapshot, traj.gold_snapshot
    if initial is None or final is None or gold is None:
        return None
    try:
        states = _prune(shared_comparable_state(initial), comparable_state(final), shared_comparable_state(gold))
    except Exception:  # noqa: BLE001 - a state the registered apps cannot restore: no diff shown
        return None
    flat = [_leaves(x) for x in states]
    absent = missing()
    collections = []
    scalar_paths = set()
    for path in sorted(set().union(*flat)):
        values = [f.get(path, absent) for f in flat]
        if is_collection(*values):
            diff = collection_diff(path, *values)
            if diff.rows:
                collections.append(diff)
        else:
            scalar_paths.add(path)
    full = state_diff(traj, sc) or []
    rows = [(p, cell(i), cell(f), cell(g), v) for p, i, f, g, v in full if p in scalar_paths]
    return rows, collections


def _collection_html(diff: CollectionDiff) -> str:
    """One collection's item table (every cell bounded and escaped)."""
    key = f"key: {diff.key}" if diff.key else "no id: items matched by content"
    body = []
    for r in diff.rows:
        fields = "".join(
            f"<li><code>{escape(c.field)}</code>: {escape(c.initial)} → {escape(c.final)} (gold: {escape(c.gold)})</li>"
            for c in r.fields
        )
        detail = f"<ul>{fields}</ul>" if fields else escape(r.summary)
        verdict_class = "recalled" if r.verdict == "as gold" else "missed" if r.verdict == "missed" else "misbehaved"
        body.append(
            f'<tr class="v-{verdict_class}"><td>{escape(r.change)}</td><td><code>{escape(r.key)}</code></td>'
            f"<td>{detail}</td><td>{escape(r.verdict)}</td></tr>"
        )
    more = f'<p class="note">… and {diff.more} more item rows</p>' if diff.more else ""
    return (
        f'<h5><code>{escape(diff.path)}</code> <span class="note">({escape(key)})</span></h5>'
        '<div class="scroll"><table class="diff items"><thead><tr><th>Change</th><th>Item</th>'
        f"<th>Fields / item</th><th>Against gold</th></tr></thead><tbody>{''.join(body)}</tbody></table></div>{more}"
    )


def outcome(sc: EpisodeScores) -> str:
    """``success``, ``failure``, ``unknown`` (no states) or the status (``errored``/``limit``)."""
    if sc.status != EpisodeStatus.COMPLETED:
        return sc.status
    return "unknown" if sc.success is None else ("success" if sc.success else "failure")


def behaviours(views: list[StepView], sc: EpisodeScores) -> list[str]:
    """Behaviour filter keys that apply to an episode."""
    found = {cls for v in views for cls, _ in v.flags}
    if sc.defeatism:
        found.add("defeatism")
    return [k for k in BEHAVIOURS if k in found]


def _episode_html(idx: int, traj: Trajectory, sc: EpisodeScores) -> str:
    views = step_views(traj, sc)
    kinds = behaviours(views, sc)
    out_come = outcome(sc)
    head = (
        f'<section class="episode" id="ep-{idx}" tabindex="-1" data-agent="{escape(sc.agent or traj.agent)}" '
        f'data-task="{escape(traj.task_id or "")}" data-outcome="{out_come}" data-behaviours="{" ".join(kinds)}" '
        f'aria-labelledby="ep-{idx}-h">'
    )
    parts = [
        head,
        f'<h3 id="ep-{idx}-h">{escape(traj.task_id or traj.episode_id)} '
        f'<span class="sub">{escape(traj.agent)} · trial {traj.trial} · '
        f'<span class="outcome o-{out_come}">{out_come}</span></span></h3>',
    ]
    facts = [
        ("Episode", traj.episode_id),
        ("World seed", str(traj.world_seed)),
        ("Fault seed", str(traj.fault_seed)),
        ("Fault profile", str(traj.fault_profile)),
        ("Apps", ", ".join(traj.apps)),
        ("Calls", f"{sc.tool_calls} ({sc.valid_calls} valid, {sc.invalid_calls} invalid, {sc.error_calls} errors)"),
    ]
    if sc.success is not None:
        facts.append(("Outcome", f"{sc.recall}/{sc.total} gold changes made, {sc.misbehave} unwanted"))
    if sc.defeatism:
        facts.append(("Defeatism", sc.defeatism_reason or "gave up on a recoverable error"))
    if traj.stop_reason:
        facts.append(("Stopped", traj.stop_reason))
    parts.append(
        '<dl class="facts">' + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts) + "</dl>"
    )
    if traj.instruction:
        parts.append(f'<p class="instruction"><b>Instruction:</b> {escape(traj.instruction)}</p>')
    parts.append('<ol class="steps">')
    for v in views:
        cls = " ".join(["step", f"k-{v.kind}"] + [f"f-{c}" for c, _ in v.flags] + (["in-window"] if v.window else []))
        anchor = f"ep-{idx}-s{v.step}" if v.step else f"ep-{idx}-p{v.pos}"
        parts.append(f'<li class="{cls}" id="{anchor}" data-step="{v.step or ""}" tabindex="0">')
        parts.append(
            f'<div class="sh"><span class="n">{v.step or "·"}</span> '
            f'<span class="kind">{escape(v.kind.replace("_", " "))}'
            f'</span> <code class="tool">{escape(v.title)}</code>'
            + (f' <span class="err">error: {escape(v.error)}</span>' if v.error else "")
            + "</div>"
        )
        if v.flags:
            parts.append(
                '<ul class="flags">'
                + "".join(f'<li class="flag f-{c}">{escape(label)}</li>' for c, label in v.flags)
                + "</ul>"
            )
        if v.window:
            parts.append(f'<p class="win">in the recovery window of step {", ".join(map(str, v.window))}</p>')
        if v.text:
            parts.append(f'<p class="text">{escape(v.text)}</p>')
        if v.args is not None:
            parts.append(f"<details open><summary>arguments</summary><pre>{escape(v.args)}</pre></details>")
        if v.result is not None:
            parts.append(f"<details><summary>result</summary><pre>{escape(v.result)}</pre></details>")
        parts.append("</li>")
    parts.append("</ol>")
    if not views:
        parts.append("<p>No steps: the agent made no tool call.</p>")
    parts.append(f'<div class="final"><b>Final message:</b> {escape(traj.final_message or "(none)")}</div>')
    by_item = state_diff_by_item(traj, sc)
    if by_item is None:
        parts.append(
            '<p class="note">State diff: not available (the trajectory carries no initial, final and gold states).</p>'
        )
    elif not by_item[0] and not by_item[1]:
        parts.append('<p class="note">State diff: initial, final and gold states are equal.</p>')
    else:
        diff, collections = by_item
        parts.append("<h4>State diff (judge)</h4>")
        if diff:
            rows = "".join(
                f'<tr class="v-{escape(vd)}"><td><code>{escape(p)}</code></td><td>{escape(i)}</td>'
                f"<td>{escape(f)}</td><td>{escape(g)}</td><td>{escape(vd)}</td></tr>"
                for p, i, f, g, vd in diff
            )
            parts.append(
                '<div class="scroll"><table class="diff"><thead><tr><th>Path</th>'
                "<th>Initial</th><th>Final</th><th>Gold</th><th>Verdict</th></tr></thead>"
                f"<tbody>{rows}</tbody></table></div>"
            )
        parts += [_collection_html(c) for c in collections]
    parts.append("</section>")
    return "".join(parts)


def pick_episodes(
    pairs: list[tuple[Trajectory, EpisodeScores]], limit: int = MAX_VIEWER_EPISODES
) -> list[tuple[Trajectory, EpisodeScores]]:
    """At most ``limit`` episodes: notable ones (not a clean success) first, in run order."""
    if len(pairs) <= limit:
        return pairs
    notable = [p for p in pairs if outcome(p[1]) != "success" or p[1].blind_retries or p[1].verification_skips]
    rest = [p for p in pairs if p not in notable]
    keep = {id(p) for p in (notable + rest)[:limit]}
    return [p for p in pairs if id(p) in keep]


def _options(values: Iterable[str]) -> str:
    return "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)


def render_viewer(pairs: list[tuple[Trajectory, EpisodeScores]]) -> str:
    """The viewer's HTML (a ``<section id="viewer">``): filters, episode list, episodes.

    Args:
        pairs: (trajectory, its scores) per episode, in the order to list them.
    """
    shown = pick_episodes(pairs)
    agents = sorted({sc.agent or t.agent for t, sc in shown})
    tasks = sorted({t.task_id for t, _ in shown if t.task_id})
    items = []
    for i, (t, sc) in enumerate(shown):
        oc = outcome(sc)
        items.append(
            f'<li><a href="#ep-{i}" data-ep="ep-{i}"><span class="o-{oc}">{oc}</span> '
            f'{escape(t.task_id or t.episode_id)} <span class="sub">{escape(t.agent)} #{t.trial}</span></a></li>'
        )
    left_out = len(pairs) - len(shown)
    note = (
        f'<p class="note">{counted(left_out, "clean episode")} left out of the viewer '
        f"(it embeds at most {MAX_VIEWER_EPISODES}).</p>"
        if left_out
        else ""
    )
    return (
        '<section id="viewer" aria-label="Trajectory viewer"><h2>Trajectories</h2>'
        '<p class="note">Keys: <kbd>j</kbd>/<kbd>k</kbd> or <kbd>↓</kbd>/<kbd>↑</kbd> next/previous episode, '
        "<kbd>/</kbd> filters. Flags come from the scorer; recovery windows span the "
        f"{_window_words(pairs[0][1].recovery_window if pairs else None)} after a recoverable error.</p>{note}"
        '<form id="filters" class="filters">'
        f'<label>Agent <select id="f-agent"><option value="">all</option>{_options(agents)}</select></label>'
        f'<label>Task <select id="f-task"><option value="">all</option>{_options(tasks)}</select></label>'
        '<label>Outcome <select id="f-outcome"><option value="">all</option>'
        f"{_options(['success', 'failure', 'unknown', 'errored', 'limit'])}</select></label>"
        '<label>Behaviour <select id="f-behaviour"><option value="">all</option>'
        + "".join(f'<option value="{k}">{escape(v)}</option>' for k, v in BEHAVIOURS.items())
        + '</select></label> <output id="f-count"></output></form>'
        '<div class="viewer"><nav aria-label="Episodes"><ul id="episode-list">' + "".join(items) + "</ul></nav>"
        '<div id="episodes">' + "".join(_episode_html(i, t, sc) for i, (t, sc) in enumerate(shown)) + "</div></div>"
        "</section>"
    )


VIEWER_CSS = """
.filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;margin:.5rem 0;font-size:.9rem}
.filters select{max-width:16rem;font-size:.9rem}
.viewer{display:grid;grid-template-columns:minmax(12rem,18rem) minmax(0,1fr);gap:1rem;align-items:start}
.viewer>nav{position:sticky;top:.5rem}
#episode-list{list-style:none;margin:0;padding:0;max-height:80vh;overflow:auto;font-size:.85rem;border:1px solid #ddd}
#episode-list a{display:block;padding:.3rem .5rem;color:#123;text-decoration:none;border-bottom:1px solid #eee;
  overflow-wrap:anywhere}
#episode-list a[aria-current=true]{background:#e8f0fe;font-weight:600}
#episode-list a:focus{outline:2px solid #0072B2;outline-offset:-2px}
.sub{color:#555;font-weight:400;font-size:.85em}
.episode{min-width:0}.episode h3{margin:.2rem 0 .5rem;overflow-wrap:anywhere}
.facts{font-size:.85rem}.instruction,.final{background:#f7f7f7;padding:.5rem;border-radius:4px;overflow-wrap:anywhere}
.steps{list-style:none;padding:0;margin:.5rem 0}
.step{border:1px solid #ddd;border-left:4px solid #bbb;border-radius:4px;padding:.4rem .6rem;margin:.4rem 0;
  background:#fff}
.step:focus{outline:2px solid #0072B2}
.step.in-window{border-left-color:#009E73;background:#f3fbf8}
.step.f-fault{border-left-color:#D55E00}.step.k-message{background:#f8f8ff}.step.k-user_turn{background:#f8fff8}.step.k-invalid{border-left-color:#CC79A7}
.sh{display:flex;flex-wrap:wrap;gap:.4rem;align-items:baseline}.n{font-weight:700;min-width:1.5rem}
.kind{color:#555;font-size:.8rem;text-transform:uppercase}.tool{font-weight:600;overflow-wrap:anywhere}
.err{color:#b00020;font-weight:600}
.flags{list-style:none;padding:0;margin:.3rem 0;display:flex;flex-wrap:wrap;gap:.3rem}
.flag{font-size:.8rem;padding:.05rem .4rem;border-radius:3px;background:#eee}
.flag.f-fault{background:#fde4d6}.flag.f-verification_skip,.flag.f-precheck_skip{background:#fff2cc}
.flag.f-blind_retry,.flag.f-impatience,.flag.f-not_recovered,.flag.f-invalid{background:#f9d9e8}.flag.f-recovered{background:#d7f2e8}
.win{font-size:.8rem;color:#00694d;margin:.2rem 0}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:.8rem;background:#fafafa;padding:.3rem;margin:.2rem 0;
  max-height:24rem;overflow:auto}
summary{cursor:pointer;font-size:.85rem;color:#333}
.scroll{overflow-x:auto}.diff td{text-align:left;overflow-wrap:anywhere;max-width:22rem}
.v-missed td{background:#fde4d6}.v-misbehaved td{background:#f9d9e8}.v-recalled td{background:#d7f2e8}
.o-success{color:#00694d}.o-failure,.o-errored,.o-limit{color:#b00020}.o-unknown{color:#555}
@media (max-width:700px){.viewer{grid-template-columns:1fr}.viewer>nav{position:static}#episode-list{max-height:14rem}}
""".strip()
"""Styles of the viewer (appended to the report's)."""

VIEWER_JS = """
(function(){
  var list=document.getElementById('episode-list'); if(!list){return;}
  var links=Array.prototype.slice.call(list.querySelectorAll('a'));
  var eps={}; document.querySelectorAll('#episodes .episode').forEach(function(s){eps[s.id]=s;});
  var f={agent:document.getElementById('f-agent'),task:document.getElementById('f-task'),
         outcome:document.getElementById('f-outcome'),behaviour:document.getElementById('f-behaviour')};
  var count=document.getElementById('f-count'); var current=null;
  function visible(){return links.filter(function(a){return !a.parentNode.hidden;});}
  function show(id,focus){
    Object.keys(eps).forEach(function(k){eps[k].hidden=(k!==id);});
    links.forEach(function(a){a.setAttribute('aria-current',a.dataset.ep===id?'true':'false');});
    current=id;
    if(focus){var a=list.querySelector('a[data-ep="'+id+'"]'); if(a){a.focus();}}
  }
  function apply(){
    var shown=0, first=null;
    links.forEach(function(a){
      var s=eps[a.dataset.ep], ok=true;
      if(f.agent.value&&s.dataset.agent!==f.agent.value){ok=false;}
      if(f.task.value&&s.dataset.task!==f.task.value){ok=false;}
      if(f.outcome.value&&s.dataset.outcome!==f.outcome.value){ok=false;}
      if(f.behaviour.value&&(' '+s.dataset.behaviours+' ').indexOf(' '+f.behaviour.value+' ')<0){ok=false;}
      a.parentNode.hidden=!ok; if(ok){shown+=1; if(first===null){first=a.dataset.ep;}}
    });
    count.textContent=shown+' of '+links.length+' episodes';
    if(first===null){Object.keys(eps).forEach(function(k){eps[k].hidden=true;});current=null;}
    else if(current===null||list.querySelector('a[data-ep="'+current+'"]').parentNode.hidden){show(first,false);}
  }
  function move(d){
    var v=visible(); if(!v.length){return;}
    var i=v.findIndex(function(a){return a.dataset.ep===current;});
    var j=Math.max(0,Math.min(v.length-1,(i<0?0:i+d))); show(v[j].dataset.ep,true);
  }
  document.getElementById('filters').addEventListener('submit',function(e){e.preventDefault();});
  links.forEach(function(a){a.addEventListener('click',function(e){e.preventDefault();show(a.dataset.ep,false);
    history.replaceState(null,'','#'+a.dataset.ep);});});
  Object.keys(f).forEach(function(k){f[k].addEventListener('change',apply);});
  document.addEventListener('keydown',function(e){
    var t=e.target.tagName; if(t==='SELECT'||t==='INPUT'||t==='TEXTAREA'||e.altKey||e.ctrlKey||e.metaKey){return;}
    if(e.key==='j'||(e.key==='ArrowDown'&&list.contains(e.target))){e.preventDefault();move(1);}
    else if(e.key==='k'||(e.key==='ArrowUp'&&list.contains(e.target))){e.preventDefault();move(-1);}
    else if(e.key==='/'){e.preventDefault();f.agent.focus();}
  });
  apply();
  var h=(location.hash||'').slice(1), id=h.split('-s')[0];
  if(eps[id]){show(id,false); var st=document.getElementById(h); if(st){st.scrollIntoView();}}
})();
""".strip()
"""The viewer's script: filters and keyboard navigation (no network, no libraries)."""

__all__ = [
    "BEHAVIOURS",
    "MAX_VIEWER_EPISODES",
    "StepView",
    "VIEWER_CSS",
    "VIEWER_JS",
    "behaviours",
    "outcome",
    "pick_episodes",
    "render_viewer",
    "state_diff",
    "state_diff_by_item",
    "step_views",
]
