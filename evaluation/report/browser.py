"""``mcpgym view``: a local, read-only results browser over run directories, on loopback.

Pages (every one rendered here, in Python; every value HTML-escaped, every name shortened by
:func:`mcpgym.kernel.shorten.short_name`):

- ``/``: the run list (:mod:`mcpgym.evaluation.report.run_list`): per run its agents, tasks,
  episodes, each agent's success with its 95% Wilson interval, date and fault profile; a run
  that cannot be read is an error row. Checkboxes select runs for the comparison.
- ``/compare?run=I&run=J[&axis=A]``: the paired comparison of the selected runs, built and
  rendered by :mod:`mcpgym.evaluation.report.compare` (``build_comparison`` and
  ``comparison_html``, as ``mcpgym compare`` does; a refusal is shown as its message).
- ``/run/I``: one run: its facts, agents and, for a run with condition axes, the report's
  "Conditions" section (:func:`mcpgym.evaluation.report.html.conditions_html`: the same curves
  and tables as its ``report.html``, from the same :class:`~mcpgym.evaluation.report.run_report.Report`;
  a run of one condition says so).
- ``/run/I/episodes``: the run's episodes in the existing trajectory viewer
  (:func:`mcpgym.evaluation.report.viewer.render_viewer`).
- ``/static/style.css``, ``/static/viewer.js``: the report's styles and the viewer's script.

Runs are named in URLs by their position on the command line, never by a path: no URL can
reach a file outside the listed runs. Nothing is written into a run directory.

The server (:class:`BrowserServer`) is the standard library's ``ThreadingHTTPServer`` bound to a
loopback address (any other is refused); a request whose ``Host`` header is not that address
and port is answered 421 (a DNS-rebinding page cannot read it); every answer carries a strict
Content-Security-Policy (no inline script or style, nothing from elsewhere). Only GET and HEAD.
"""

from __future__ import annotations

import http.client
import re
import socket
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcpgym.evaluation.records.condition import ConditionAxis, EpisodeCondition
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.report.compare import Comparison
from mcpgym.evaluation.report.conditions import ConditionFigures
from mcpgym.evaluation.report.run_list import RunSummary, summarize_runs
from mcpgym.evaluation.scoring.scorer import EpisodeScores
from mcpgym.kernel.exceptions import InputError, MCPGymError
from mcpgym.kernel.shorten import MAX_NAME_CHARS, cap_message, short_name, short_text

LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
"""The only addresses ``mcpgym view`` binds to."""

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
"""The Content-Security-Policy of every answer: the page's own script and stylesheet, nothing else."""

SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
}
"""Headers sent with every answer."""

MAX_QUERY_FIELDS = 64
"""Most query-string fields a request may carry (more: 400)."""

MAX_TEXT_CHARS = 4000
"""Longest instruction or final message the episode pages show (longer: start ``...`` end)."""

REPORT_CACHE = 4
"""Runs whose full report (trajectories with their states) is kept in memory at once."""

SHUTDOWN_DEADLINE = 5.0
"""Seconds the server is given to finish its requests on shutdown."""

REQUEST_TIMEOUT = 30.0
"""Seconds a connection may sit idle before it is closed (a slow client holds no thread)."""

BROWSER_CSS = """
nav.top{font-size:.9rem;margin-bottom:1rem}nav.top a{margin-right:1rem}
.error{color:#b00020;font-weight:600;overflow-wrap:anywhere}tr.damaged td{background:#fde4d6}
td{overflow-wrap:anywhere}.actions{margin:1rem 0;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center}
button{font-size:1rem;padding:.3rem .8rem}
""".strip()
"""Styles of the browser's own pages (appended to the report's and the viewer's)."""


@dataclass(frozen=True)
class Answer:
    """One HTTP answer: status, content type and body (bytes)."""

    status: int
    content_type: str
    body: bytes


def _html(status: int, title: str, body: str) -> Answer:
    page = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{escape(title)} · mcpgym view</title><link rel="stylesheet" href="/static/style.css">'
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml"></head>'
        '<body><nav class="top"><a href="/">Runs</a></nav>'
        f"{body}</body></html>\n"
    )
    return Answer(status, "text/html; charset=utf-8", page.encode("utf-8"))


def _error(status: int, title: str, message: str) -> Answer:
    return _html(status, title, f'<h1>{escape(title)}</h1><p class="error">{escape(cap_message(message))}</p>')


def _success_cell(rate: float | None, ci: list[float] | None, successes: int, scored: int) -> str:
    from mcpgym.evaluation.report.run_report import ci_text

    return f"{ci_text(rate, ci)} ({successes}/{scored})" if scored else "– (none scored)"


def bounded_comparison(comp: Comparison) -> Comparison:
    """A copy of ``comp`` whose run labels, paths, agents, contestants and tasks are shortened
    (:func:`~mcpgym.kernel.shorten.short_name`); every figure is left as computed."""
    runs = [
        r.model_copy(
            update={
                "label": short_name(r.label),
                "path": short_name(r.path),
                "agents": [short_name(a) for a in r.agents],
                "conditions": r.conditions.model_copy(
                    update={
                        "tasks": [short_name(t) for t in r.conditions.tasks],
                        "faults": short_name(r.conditions.faults),
                        "tools": short_name(r.conditions.tools),
                    }
                ),
            }
        )
        for r in comp.runs
    ]
    pairs = [
        c.model_copy(
            update={
                "a": short_name(c.a),
                "b": short_name(c.b),
                "by_task": [t.model_copy(update={"task": short_name(t.task)}) for t in c.by_task],
            }
        )
        for c in comp.comparisons
    ]
    return comp.model_copy(update={"runs": runs, "comparisons": pairs})


def _bounded_step(step: Any) -> Any:
    tool = getattr(step, "tool", None)
    if isinstance(tool, str) and len(tool) > len(short_name(tool)):
        return step.model_copy(update={"tool": short_name(tool)})
    return step


def bounded_episode(traj: Trajectory, sc: EpisodeScores) -> tuple[Trajectory, EpisodeScores]:
    """Copies of an episode whose names (agent, task, episode id, fault profile, apps, tool
    names) are shortened and whose instruction and final message are at most
    :data:`MAX_TEXT_CHARS` characters, for the viewer (its figures are the scorer's, untouched)."""
    names = {
        "agent": short_name(traj.agent),
        "task_id": short_name(traj.task_id) if traj.task_id else traj.task_id,
        "episode_id": short_name(traj.episode_id),
    }
    t = traj.model_copy(
        update={
            **names,
            "fault_profile": short_name(traj.fault_profile) if traj.fault_profile else traj.fault_profile,
            "apps": [short_name(a) for a in traj.apps],
            "instruction": short_text(traj.instruction, MAX_TEXT_CHARS) if traj.instruction else traj.instruction,
            "final_message": short_text(traj.final_message, MAX_TEXT_CHARS)
            if traj.final_message
            else traj.final_message,
            "steps": [_bounded_step(s) for s in traj.steps],
        }
    )
    s = sc.model_copy(update={**names, "agent": short_name(sc.agent) if sc.agent else sc.agent})
    return t, s


class ResultsBrowser:
    """The pages of ``mcpgym view`` over ``paths`` (see the module docstring), without HTTP:
    :meth:`answer` maps a request target (path and query) to an :class:`Answer`.

    The run list is read once, at construction; a run's full report (for its episodes) on first
    use, at most :data:`REPORT_CACHE` kept. Thread-safe.
    """

    def __init__(self, paths: Sequence[str | Path]) -> None:
        self.paths = [Path(p) for p in paths]
        if not self.paths:
            raise InputError("give at least one run directory")
        if len({p.resolve() for p in self.paths}) != len(self.paths):
            raise InputError("a run directory is given twice")
        self.runs: list[RunSummary] = summarize_runs(self.paths)
        self._reports: OrderedDict[int, Any] = OrderedDict()
        self._lock = threading.Lock()

    # -- routing ---------------------------------------------------------------------------------
    def answer(self, target: str) -> Answer:
        """The answer to a GET of ``target`` (``/path?query``): a page, a static file, 404 for
        any other path, 400 for a bad query."""
        parts = urlsplit(target)
        path = parts.path
        if path == "/":
            return self.run_list_page()
        if path in STATIC:
            content_type, text = STATIC[path]
            return Answer(200, content_type, text.encode("utf-8"))
        if path == "/compare":
            try:
                query = parse_qs(parts.query, max_num_fields=MAX_QUERY_FIELDS, strict_parsing=False)
            except ValueError:
                return _error(400, "Bad request", f"at most {MAX_QUERY_FIELDS} query fields")
            return self.compare_page(query.get("run", []), query.get("axis", []))
        m = re.fullmatch(r"/run/(\d{1,6})(/episodes)?", path)
        if m and int(m.group(1)) < len(self.runs):
            i = int(m.group(1))
            return self.episodes_page(i) if m.group(2) else self.run_page(i)
        return _error(404, "Not found", "no such page: the pages are /, /compare, /run/N and /run/N/episodes")

    def pages(self) -> list[str]:
        """Every page once (what ``mcpgym view --check`` fetches): the list, each run's page and
        episodes, and the comparison of every readable run."""
        out = ["/", *STATIC]
        for r in self.runs:
            out += [f"/run/{r.index}", f"/run/{r.index}/episodes"]
        readable = [r.index for r in self.runs if r.ok]
        if readable:
            out.append("/compare?" + "&".join(f"run={i}" for i in readable))
        return out

    # -- pages -----------------------------------------------------------------------------------
    def run_list_page(self) -> Answer:
        """``/``: one row per run (an error row for a run that cannot be read) and the form that
        compares the selected runs."""
        rows = []
        for r in self.runs:
            pick = (
                f'<input type="checkbox" name="run" value="{r.index}" id="pick-{r.index}" '
                f'aria-label="select {escape(r.label)}">'
                if r.ok
                else ""
            )
            name = f'<a href="/run/{r.index}">{escape(r.label)}</a>'
            if not r.ok:
                rows.append(
                    f'<tr class="damaged"><td>{pick}</td><td>{name}</td>'
                    f'<td colspan="7" class="error">cannot be shown: {escape(r.problem or "")}</td></tr>'
                )
                continue
            success = "<br>".join(
                f"{escape(a.agent)}: {escape(_success_cell(a.success_rate, a.success_ci95, a.successes, a.scored))}"
                for a in r.agents
            )
            episodes = f"{r.episodes}" + (f" ({r.errored} errored)" if r.errored else "")
            cond = ", ".join(f"{k} {v}" for k, v in r.condition.items())
            axes = "; ".join(f"{axis}: {', '.join(short_name(v) for v in values)}" for axis, values in r.axes.items())
            rows.append(
                f"<tr><td>{pick}</td><td>{name}</td><td>{escape(', '.join(a.agent for a in r.agents))}</td>"
                f"<td>{r.tasks}</td><td>{escape(episodes)}</td><td>{success}</td>"
                f"<td>{escape(r.date or 'unknown')}</td><td>{escape(short_name(cond))}</td>"
                f"<td>{escape(axes or 'one condition')}</td></tr>"
            )
        head = "".join(
            f"<th>{h}</th>"
            for h in (
                "",
                "Run",
                "Agents",
                "Tasks",
                "Episodes",
                "Success [95% CI] (successes/scored)",
                "Date",
                "Fault profile, tools",
                "Condition axes",
            )
        )
        axes = "".join(
            f'<label><input type="checkbox" name="axis" value="{a}"> may differ in {a}</label>'
            for a in ("tasks", "faults", "tools")
        )
        bad = sum(1 for r in self.runs if not r.ok)
        note = f'<p class="error">{bad} of {len(self.runs)} runs cannot be shown (see their rows).</p>' if bad else ""
        body = (
            f"<h1>mcpgym runs</h1>{note}"
            '<form id="compare-form" action="/compare" method="get">'
            f'<div class="scroll"><table id="runs"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
            "</table></div>"
            f'<div class="actions"><button type="submit" id="compare">Compare selected runs</button>{axes}</div>'
            '<p class="note">One run selected: its agents are compared with each other. Several: the same agent '
            "across runs (else every pair of agents of different runs), over the same (task, trial) episodes.</p>"
            "</form>"
        )
        return _html(200, "Runs", body)

    def _run_or_error(self, i: int) -> RunSummary | Answer:
        r = self.runs[i]
        if r.ok:
            return r
        return _error(422, f"Run {r.label} cannot be shown", f"{r.path}: {r.problem}")

    def run_page(self, i: int) -> Answer:
        """``/run/I``: the run's facts, agents and condition charts (or why it cannot be shown)."""
        r = self._run_or_error(i)
        if isinstance(r, Answer):
            return r
        facts = [
            ("Path", r.path),
            ("Date", r.date or "unknown"),
            ("Suite", r.suite or "unknown"),
            *((f"Condition: {k}", v) for k, v in r.condition.items()),
            ("Tasks", str(r.tasks)),
            ("Episodes", f"{r.episodes} ({r.errored} errored)"),
        ]
        facts += [("Damaged", d) for d in r.damaged]
        dl = "".join(f"<dt>{escape(k)}</dt><dd>{escape(short_text(v, 2000))}</dd>" for k, v in facts)
        agent_rows = "".join(
            f"<tr><td>{escape(a.agent)}</td><td>{a.episodes}</td><td>{a.scored}</td><td>{a.errored}</td>"
            f"<td>{escape(_success_cell(a.success_rate, a.success_ci95, a.successes, a.scored))}</td></tr>"
            for a in r.agents
        )
        body = (
            f"<h1>Run {escape(r.label)}</h1><dl>{dl}</dl>"
            f'<p class="actions"><a id="episodes-link" href="/run/{i}/episodes">Episodes (trajectory viewer)</a>'
            f'<a href="/compare?run={i}">Compare this run\'s agents</a></p>'
            '<h2>Agents</h2><div class="scroll"><table><thead><tr><th>Agent</th><th>Episodes</th><th>Scored</th>'
            f"<th>Errored</th><th>Success [95% CI]</th></tr></thead><tbody>{agent_rows}</tbody></table></div>"
            f"{self._conditions_html(i, r)}"
        )
        return _html(200, f"Run {r.label}", body)

    def _conditions_html(self, i: int, r: RunSummary) -> str:
        """The run page's "Conditions" section: the report's own (its figures built by
        :func:`~mcpgym.evaluation.report.run_report.build_report`, names shortened), the note
        that a run of one condition has no curve, or why the curves cannot be drawn."""
        from mcpgym.evaluation.report.html import conditions_html

        head = '<h2 id="conditions">Conditions</h2>'
        if r.conditions is None:
            fixed = ", ".join(f"{k} {v}" for k, v in r.condition.items())
            return (
                f'{head}<p class="note" id="one-condition">One condition ({escape(short_name(fixed))}): nothing to '
                "draw against an axis. A run of several fault profiles or tool exposures (mcpgym run --faults "
                "none,harsh) draws each score against them here; separate runs of one condition each are compared "
                "on the run list (may differ in faults/tools).</p>"
            )
        try:
            figs = self._report(i).conditions
            if figs is None:
                raise ValueError("the run's manifest lists condition axes, but its report has no condition figures")
            return conditions_html(bounded_figures(figs))
        except (MCPGymError, ValueError, OSError) as exc:
            return f'{head}<p class="error" id="conditions-error">The condition curves cannot be drawn: {escape(cap_message(str(exc)))}</p>'

    def _report(self, i: int) -> Any:
        from mcpgym.evaluation.report.run_report import build_report

        with self._lock:
            if i in self._reports:
                self._reports.move_to_end(i)
                return self._reports[i]
        built = build_report(self.paths[i], rescore=False)
        with self._lock:
            self._reports[i] = built
            while len(self._reports) > REPORT_CACHE:
                self._reports.popitem(last=False)
        return built

    def episodes_page(self, i: int) -> Answer:
        """``/run/I/episodes``: the run's episodes in the trajectory viewer (names shortened)."""
        from mcpgym.evaluation.report.viewer import render_viewer

        r = self._run_or_error(i)
        if isinstance(r, Answer):
            return r
        try:
            built = self._report(i)
        except (MCPGymError, ValueError, OSError) as exc:
            return _error(422, f"Run {r.label} cannot be shown", str(exc))
        pairs = [bounded_episode(t, sc) for t, sc in built.trajectories]
        body = (
            f'<h1>Episodes of <a href="/run/{i}">{escape(r.label)}</a></h1>{render_viewer(pairs)}'
            '<script src="/static/viewer.js"></script>'
        )
        return _html(200, f"Episodes of {r.label}", body)

    def compare_page(self, runs: list[str], axes: list[str]) -> Answer:
        """``/compare``: the paired comparison of the runs numbered ``runs`` (query values), the
        conditions in ``axes`` allowed to differ; 400 for a bad selection, 422 for a run that
        cannot be shown, the refusal's message (400) for runs that cannot be compared."""
        from mcpgym.evaluation.report.compare import Axis, build_comparison, comparison_html

        if not runs:
            return _error(400, "Nothing selected", "select at least one run to compare (one: its agents)")
        if not all(v.isdigit() and len(v) <= 6 and int(v) < len(self.runs) for v in runs):
            return _error(400, "Bad selection", f"run must be a number below {len(self.runs)}")
        picked = list(dict.fromkeys(int(v) for v in runs))
        try:
            chosen = [Axis(a) for a in dict.fromkeys(axes)]
        except ValueError:
            return _error(400, "Bad selection", "axis must be one of " + ", ".join(a.value for a in Axis))
        for i in picked:
            r = self._run_or_error(i)
            if isinstance(r, Answer):
                return r
        try:
            comp = build_comparison([self.paths[i] for i in picked], axes=chosen)
        except (MCPGymError, ValueError, OSError) as exc:
            return _error(400, "These runs cannot be compared", str(exc))
        links = "".join(
            f'<li><a class="episodes" href="/run/{i}/episodes">episodes of {escape(self.runs[i].label)}</a></li>'
            for i in picked
        )
        body = (
            f"<h1>mcpgym comparison</h1>{comparison_html(bounded_comparison(comp))}"
            f'<h2>Episodes</h2><ul id="episode-links">{links}</ul>'
        )
        return _html(200, "Comparison", body)


def bounded_figures(figs: ConditionFigures) -> ConditionFigures:
    """A copy of ``figs`` whose agents, axis values and task ids are shortened
    (:func:`~mcpgym.kernel.shorten.short_name`); every figure is left as computed.

    Raises:
        ValueError: when two agents, or two values of an axis, are the same once shortened (their
            figures would be drawn as one).
    """
    agents = [short_name(a) for a in figs.agents]
    faults = [short_name(v) for v in figs.axis.faults]
    tools = [short_name(v) for v in figs.axis.tools]
    for what, names in (("agents", agents), ("fault profiles", faults), ("tool exposures", tools)):
        if len(set(names)) < len(names):
            raise ValueError(f"two {what} of this run have the same name once shortened to {MAX_NAME_CHARS} characters")

    def cond(c: EpisodeCondition) -> EpisodeCondition:
        return EpisodeCondition(faults=short_name(c.faults), tools=short_name(c.tools))

    return ConditionFigures(
        axis=ConditionAxis(faults=faults, tools=tools),
        agents=agents,
        points={(short_name(a), cond(c), m): p for (a, c, m), p in figs.points.items()},
        tools_listed={short_name(t): n for t, n in figs.tools_listed.items()},
        unknown_tasks=[short_name(t) for t in figs.unknown_tasks],
    )


FAVICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#0072B2"/>'
    '<path d="M3 12V4h2l3 4 3-4h2v8h-2V7l-3 4-3-4v5z" fill="#fff"/></svg>\n'
)
"""The page icon (served, so that no browser asks for a missing ``/favicon.ico``)."""


def _static() -> dict[str, tuple[str, str]]:
    from mcpgym.evaluation.report.html import CSS
    from mcpgym.evaluation.report.viewer import VIEWER_CSS, VIEWER_JS

    return {
        "/static/style.css": ("text/css; charset=utf-8", f"{CSS}\n{VIEWER_CSS}\n{BROWSER_CSS}\n"),
        "/static/viewer.js": ("text/javascript; charset=utf-8", VIEWER_JS + "\n"),
        "/static/favicon.svg": ("image/svg+xml", FAVICON),
    }


STATIC = _static()
"""Path -> (content type, text) of the static files."""


# -- HTTP ----------------------------------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = REQUEST_TIMEOUT
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet: a browser's requests are not worth a line each."""

    def _send(self, answer: Answer, *, body: bool = True) -> None:
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(answer.body)))
        for k, v in SECURITY_HEADERS.items():
            self.send_header(k, v)
        self.end_headers()
        if body:
            self.wfile.write(answer.body)

    def _host_ok(self) -> bool:
        host = self.headers.get("Host", "")
        return host.lower() in self.server.allowed_hosts

    def _get(self, body: bool) -> None:
        if not self._host_ok():
            self._send(
                _error(421, "Misdirected request", "this server answers only its own loopback address"), body=body
            )
            return
        try:
            answer = self.server.browser.answer(self.path)
        except Exception as exc:  # noqa: BLE001 - one page's failure is a 500 page, not a dead server
            answer = _error(500, "Internal error", f"{type(exc).__name__}: {exc}")
        self._send(answer, body=body)

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        """Answer a GET."""
        self._get(True)

    def do_HEAD(self) -> None:  # noqa: N802
        """Answer a HEAD (a GET without its body)."""
        self._get(False)

    def _refuse(self) -> None:
        self._send(_error(405, "Method not allowed", "mcpgym view is read-only: GET and HEAD only"))

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse  # noqa: N815


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    browser: ResultsBrowser
    allowed_hosts: set[str]


class _Server6(_Server):
    address_family = socket.AF_INET6


class BrowserServer:
    """``mcpgym view``'s HTTP server on ``host`` (loopback only) and ``port`` (0: any free one).

    Raises:
        InputError: a host that is not a loopback address. OSError: the port cannot be bound.
    """

    def __init__(self, browser: ResultsBrowser, host: str = "127.0.0.1", port: int = 0) -> None:
        if host not in LOOPBACK_HOSTS:
            raise InputError(
                f"mcpgym view serves on loopback only ({', '.join(LOOPBACK_HOSTS)}), not {short_name(host)}: "
                "it has no authentication"
            )
        if not 0 <= port <= 65535:
            raise InputError(f"--port {port} is not a port (0 to 65535; 0 picks a free one)")
        bind = "127.0.0.1" if host == "localhost" else host
        server_class = _Server6 if ":" in bind else _Server
        self._httpd = server_class((bind, port), _Handler)
        self._httpd.browser = browser
        self.browser = browser
        self.port = int(self._httpd.server_address[1])
        self.host = bind
        shown = f"[{bind}]" if ":" in bind else bind
        self._httpd.allowed_hosts = {f"{shown}:{self.port}", f"localhost:{self.port}"}
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/``."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}/"

    def start(self) -> None:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="mcpgym-view", daemon=True)
        self._thread.start()

    def stop(self, deadline: float = SHUTDOWN_DEADLINE) -> None:
        """Stop serving within ``deadline`` seconds and close the socket (requests still running
        after it are abandoned: their threads are daemons)."""
        stopper = threading.Thread(target=self._httpd.shutdown, daemon=True)
        stopper.start()
        stopper.join(deadline)
        if self._thread is not None:
            self._thread.join(max(0.1, deadline / 5))
        self._httpd.server_close()

    def fetch(self, target: str, timeout: float = 120.0) -> tuple[int, bytes]:
        """GET ``target`` from this server over loopback, as a browser would (status, body)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            conn.request("GET", target, headers={"Host": f"{urlsplit(self.url).netloc}"})
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()


def check_pages(server: BrowserServer) -> list[tuple[str, int]]:
    """Fetch every page of the server's browser once (:meth:`ResultsBrowser.pages`) over HTTP:
    (target, status) each, in order."""
    return [(target, server.fetch(target)[0]) for target in server.browser.pages()]


__all__ = [
    "BROWSER_CSS",
    "CSP",
    "LOOPBACK_HOSTS",
    "MAX_QUERY_FIELDS",
    "MAX_TEXT_CHARS",
    "REPORT_CACHE",
    "SECURITY_HEADERS",
    "SHUTDOWN_DEADLINE",
    "STATIC",
    "Answer",
    "BrowserServer",
    "ResultsBrowser",
    "bounded_comparison",
    "bounded_episode",
    "check_pages",
    "bounded_figures",
]
