"""``mcpgym view``: the run list, comparison, condition curves and episode pages over HTTP on
loopback; a real run with condition axes (``--faults none,harsh --tools task,all``) whose run
page draws the curves of its ``report.html`` (the same section, checked against a hand count of
its episodes); the hostile cases (a foreign Host header, path traversal, a damaged or empty run,
huge names, other methods); read-only; and a headless Chromium clicking run list -> compare ->
episode and to the condition curves under the page's own Content-Security-Policy.

The browser test needs Chromium (Debian's ``chromium``; ``.ci/run`` installs it). Without it the
test is skipped, unless ``MCPGYM_REQUIRE_BROWSER=1`` (set by ``.ci/run``), where it fails.
"""

from __future__ import annotations

import hashlib
import http.client
import re
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.cli.app import app
from mcpgym.evaluation.records.condition import ConditionAxis, EpisodeCondition
from mcpgym.evaluation.report.browser import CSP, BrowserServer, ResultsBrowser, bounded_figures, check_pages
from mcpgym.evaluation.report.compare import build_comparison, comparison_html
from mcpgym.evaluation.report.conditions import CurveMetric, condition_figures
from mcpgym.evaluation.report.html import conditions_html
from mcpgym.evaluation.report.run_list import summarize_runs
from mcpgym.evaluation.run.run_dir import compute_scores, load_run
from mcpgym.evaluation.scoring.scorer import EpisodeScores
from mcpgym.kernel.exceptions import InputError
from mcpgym.kernel.shorten import MAX_NAME_CHARS, short_name
from tests.conftest import ROOT
from tests.support.cdp import Browser, require_browser
from tests.support.run_dirs import write_run_dir

RECORDED = ROOT / "tests" / "data" / "recorded_run" / "smoke-scripted.tar.gz"
HUGE = "agent-" + "x" * 5000
FAULTS, TOOLS = ["none", "harsh"], ["task", "all"]
"""The condition axes of the real run (:func:`_conditions_run`)."""


def _scores(agent: str, task: str, trial: int, success: bool, **extra: object) -> EpisodeScores:
    return EpisodeScores(
        episode_id=f"{agent[:20]}-{task[:20]}-{trial}",
        task_id=task,
        agent=agent,
        trial=trial,
        level=1,
        apps=["system"],
        success=success,
        recall=int(success),
        total=1,
        misbehave=0,
        tool_calls=2,
        valid_calls=2,
        **extra,
    )


def _recorded(path: Path) -> Path:
    path.mkdir(parents=True)
    with tarfile.open(RECORDED) as tar:
        tar.extractall(path, filter="data")
    return path


def _conditions_run(out: Path) -> Path:
    """A real ``mcpgym run`` of the three scripted agents over two smoke tasks, one trial, with
    the condition axes :data:`FAULTS` x :data:`TOOLS` (24 episodes)."""
    args = ["run", "--task", "system.dark_mode", "--task", "shop.buy_sold_out_mouse", "--trials", "1", "--quiet"]
    result = CliRunner().invoke(
        app, [*args, "--faults", ",".join(FAULTS), "--tools", ",".join(TOOLS), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    return out


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        h.update(f"{p.relative_to(root)} {st.st_size} {st.st_mtime_ns}\n".encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two copies of the recorded smoke run (three scripted agents), a hand-made run whose agent
    and task have 5,000-character names, an empty run, a run of garbage bytes, a missing one,
    and a real run with condition axes."""
    root = tmp_path_factory.mktemp("view")
    out = {"a": _recorded(root / "smoke-a"), "b": _recorded(root / "smoke-b")}
    out["huge"] = write_run_dir(
        root / "huge", [_scores(HUGE, "t." + "y" * 5000, 0, True), _scores("bot", "t." + "y" * 5000, 0, False)]
    )
    (root / "empty").mkdir()
    (root / "empty" / "trajectories.jsonl.zst").write_bytes(b"")
    (root / "garbage").mkdir()
    (root / "garbage" / "trajectories.jsonl.zst").write_bytes(bytes(range(256)) * 20)
    (root / "zstd-garbage").mkdir()
    (root / "zstd-garbage" / "trajectories.jsonl.zst").write_bytes(b"\x28\xb5\x2f\xfd" + b"garbage" * 10)
    out |= {k: root / k for k in ("empty", "garbage", "zstd-garbage")}
    out["missing"] = root / "missing"
    out["conditions"] = _conditions_run(root / "conditions")
    return out


ORDER = ("a", "b", "huge", "empty", "garbage", "zstd-garbage", "missing", "conditions")
COND = ORDER.index("conditions")


@pytest.fixture(scope="module")
def server(runs: dict[str, Path]) -> Iterator[BrowserServer]:
    srv = BrowserServer(ResultsBrowser([runs[k] for k in ORDER]))
    srv.start()
    yield srv
    srv.stop()


def _get(srv: BrowserServer, target: str, host: str | None = None, method: str = "GET") -> tuple[int, dict, str]:
    conn = http.client.HTTPConnection(srv.host, srv.port, timeout=60)
    try:
        conn.putrequest(method, target, skip_host=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{srv.port}")
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read().decode("utf-8")
    finally:
        conn.close()


def test_the_run_list_has_a_row_per_run_and_an_error_row_for_each_unreadable_one(runs):
    rows = summarize_runs([runs[k] for k in ORDER])
    a = rows[0]
    assert a.ok and a.label == "smoke-a" and a.tasks == 8 and a.episodes == 24
    assert [x.agent for x in a.agents] == ["careful", "defeatist", "overconfident"]
    careful = a.agents[0]
    assert careful.success_rate is not None and careful.success_ci95 is not None
    assert careful.success_ci95[0] <= careful.success_rate <= careful.success_ci95[1]
    assert a.condition["faults"] == "default" and a.conditions is None and a.axes == {}  # one condition: no curve
    problems = {k: r.problem for k, r in zip(ORDER, rows, strict=True)}
    assert problems["empty"] and "holds no episode" in problems["empty"]
    assert problems["garbage"] and problems["garbage"].startswith("damaged:")
    assert problems["zstd-garbage"] and problems["zstd-garbage"].startswith("damaged:")
    assert "holds no episode" not in problems["zstd-garbage"]
    assert problems["missing"] and "no such file or directory" in problems["missing"]
    assert rows[2].ok and all(len(x.agent) <= MAX_NAME_CHARS for x in rows[2].agents)


def _curves(html: str) -> list[str]:
    return re.findall(r'<svg[^>]*class="curve".*?</svg>', html, flags=re.S)


def _section(html: str) -> str:
    """The "Conditions" section of a page: from its heading to the next ``<h2`` or ``</body>``."""
    part = html[html.index('<h2 id="conditions">') :]
    return part[: min(i for i in (part.find("<h2", 5), part.find("</body>"), len(part)) if i >= 0)].strip()


def test_a_run_with_condition_axes_lists_its_axes_from_the_manifest(runs, server: BrowserServer):
    row = summarize_runs([runs["conditions"]])[0]
    assert row.ok and row.conditions == ConditionAxis(faults=FAULTS, tools=TOOLS)
    assert row.axes == {"faults": FAULTS, "tools": TOOLS} and row.episodes == 24
    # one row per agent and condition, as scores.json has them
    assert len(row.agents) == 3 * 4 and row.agents[0].agent == "careful [faults=harsh, tools=all]"
    status, _, body = _get(server, "/")
    assert status == 200 and "faults: none, harsh; tools: task, all" in body
    assert body.count("<td>one condition</td>") == 3  # the smoke runs and the huge run


def test_the_run_page_draws_the_curves_of_the_runs_report(runs, server: BrowserServer):
    """The run page's Conditions section is report.html's, and each drawn point is a hand
    count of its condition's episodes."""
    run = runs["conditions"]
    status, headers, body = _get(server, f"/run/{COND}")
    assert status == 200 and headers["Content-Security-Policy"] == CSP
    section = _section(body)
    assert section == _section((run / "report.html").read_text())  # the same figures, drawn the same way
    assert "<script" not in section and "style=" not in section  # inline SVG that the strict CSP allows
    svgs = _curves(section)
    assert len(svgs) == 2 * len(TOOLS) + 3 * len(FAULTS)  # success, recovery x tools; success, errors, tokens x faults
    by = {}
    for t in load_run(run, states=False):
        assert t.condition is not None and t.scores is not None
        by.setdefault((t.agent, t.condition), []).append(t.scores)
    drawn = 0
    for svg in svgs:
        axis = re.search(r'data-axis="(\w+)"', svg).group(1)
        metric = CurveMetric(re.search(r'data-metric="(\w+)"', svg).group(1))
        other = re.search(r'data-fixed="\w+=([^"]+)"', svg).group(1)
        points = re.findall(r'data-agent="([^"]+)" data-x="([^"]+)" data-value="([^"]+)"', svg)
        if metric is CurveMetric.tokens:
            assert points == [] and "not computable:" in svg  # scripted agents report no tokens: a gap, not 0
        for agent, x, value in points:
            cond = (
                EpisodeCondition(faults=x, tools=other) if axis == "faults" else EpisodeCondition(faults=other, tools=x)
            )
            mine = by[(agent, cond)]
            assert len(mine) == 2
            if metric is CurveMetric.success:
                want = sum(bool(e.success) for e in mine) / len(mine)
            elif metric is CurveMetric.recovery:
                want = sum(e.recoveries for e in mine) / sum(e.recoverable_errors for e in mine)
            else:
                continue
            assert abs(float(value) - want) < 1e-5, (agent, cond, metric)
            drawn += 1
    assert drawn >= 3 * 4  # every agent's success in every condition at least
    # no recoverable error without faults: that recovery point is a gap, never drawn as 0
    recovery = [s for s in svgs if 'data-metric="recovery"' in s]
    assert recovery and all('data-x="none"' not in s for s in recovery)


def test_condition_figures_are_shortened_for_the_page():
    long_agent = HUGE + "-b"
    eps = [
        _scores(agent, "t.a", trial, won).model_copy(update={"condition": EpisodeCondition(faults=f, tools="all")})
        for agent in (HUGE, long_agent, "bot")
        for f, won in (("none", True), ("harsh", False))
        for trial in (0, 1)
    ]
    axis = ConditionAxis(faults=["none", "harsh"], tools=["all"])
    figs = condition_figures(axis, compute_scores(eps), [])
    short = bounded_figures(figs)
    assert short.agents == [short_name(a) for a in figs.agents] and len(set(short.agents)) == 3
    assert sorted(p.value for p in short.points.values() if p.value is not None) == sorted(
        p.value for p in figs.points.values() if p.value is not None
    )
    html = conditions_html(short)
    assert "x" * (MAX_NAME_CHARS + 1) not in html and short_name(HUGE) in html
    assert html.count('data-agent="bot"') == 2  # success at none and harsh (no recovery point: none met)
    twins = ConditionAxis(faults=["a" * 200 + "1" + "z" * 200, "a" * 200 + "2" + "z" * 200], tools=["all"])
    with pytest.raises(ValueError, match="same name once shortened"):
        bounded_figures(condition_figures(twins, compute_scores([]), []))


def test_pages_over_http_with_their_security_headers(server: BrowserServer, runs):
    status, headers, body = _get(server, "/")
    assert status == 200 and headers["Content-Security-Policy"] == CSP
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert body.count('class="damaged"') == 4 and "smoke-a" in body
    status, _, body = _get(server, "/run/0")
    assert status == 200 and 'id="one-condition"' in body and "careful" in body
    status, _, body = _get(server, "/run/0/episodes")
    assert status == 200 and 'id="episode-list"' in body and '<script src="/static/viewer.js">' in body
    assert "<script>" not in body and "style=" not in body  # nothing inline: the CSP allows none
    # the comparison page is compare.py's own rendering of build_comparison
    status, _, body = _get(server, "/compare?run=0&run=1")
    assert status == 200
    expected = comparison_html(build_comparison([runs["a"], runs["b"]]))
    assert expected in body


def test_hostile_requests(server: BrowserServer):
    # DNS rebinding: a page of evil.example resolving to 127.0.0.1 sends its own Host
    for host in ("evil.example", f"evil.example:{server.port}", "127.0.0.1", f"127.0.0.1:{server.port + 1}", ""):
        status, _, body = _get(server, "/", host=host)
        assert status == 421, host
        assert "smoke-a" not in body
    for target in (
        "/../../etc/passwd",
        "/run/0/../../../etc/passwd",
        "/static/../../pyproject.toml",
        "/run/%2e%2e/%2e%2e/etc/passwd",
        "/run/8",
        "/run/99999999999",
        "/run/-1",
        "//etc/passwd",
        "/run/0/episodes/../../x",
    ):
        status, _, body = _get(server, target)
        assert status == 404, target
        assert "root:" not in body and "[project]" not in body
    assert _get(server, "/compare?run=../../x")[0] == 400
    assert _get(server, "/compare?run=9")[0] == 400
    assert _get(server, "/compare?run=0&axis=nonsense")[0] == 400
    assert _get(server, "/compare?" + "&".join(["run=0"] * 500))[0] == 400
    assert _get(server, "/", method="POST")[0] == 405
    assert _get(server, "/", method="DELETE")[0] == 405
    # a damaged run: an error page, not a crash; and it cannot join a comparison
    for i in (3, 4, 5, 6):
        status, _, body = _get(server, f"/run/{i}")
        assert status == 422 and 'class="error"' in body
        assert _get(server, f"/run/{i}/episodes")[0] == 422
    assert _get(server, "/compare?run=0&run=4")[0] == 422
    status, _, body = _get(server, "/")
    assert status == 200  # the server still serves


def test_huge_names_are_shortened_on_every_page(server: BrowserServer):
    for target in ("/", "/run/2", "/run/2/episodes", "/compare?run=2"):
        status, _, body = _get(server, target)
        assert status == 200, target
        assert "x" * (MAX_NAME_CHARS + 1) not in body and "y" * (MAX_NAME_CHARS + 1) not in body, target
        assert short_name(HUGE) in body or short_name(HUGE).replace("...", "…") in body, target


def test_the_browser_never_writes_into_run_dirs(runs, server: BrowserServer):
    before = {k: _tree_digest(runs[k]) for k in ("a", "huge", "garbage", "zstd-garbage", "empty")}
    results = check_pages(server)
    assert {s for _, s in results} <= {200, 400, 422}  # 400: runs of other tasks refused, as compare does
    assert {k: _tree_digest(runs[k]) for k in before} == before


def test_only_loopback_is_served(runs):
    browser = ResultsBrowser([runs["a"]])
    for host in ("0.0.0.0", "192.168.1.10", "example.com", "::"):
        with pytest.raises(InputError, match="loopback only"):
            BrowserServer(browser, host=host)


def test_the_command_prints_its_url_serves_and_stops_on_ctrl_c(runs):
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpgym.evaluation.cli", "view", str(runs["a"]), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/"), url
        port = int(url.rsplit(":", 1)[1].rstrip("/"))
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/")
        assert conn.getresponse().status == 200
        conn.close()
        started = time.monotonic()
        proc.send_signal(2)  # SIGINT, as Ctrl-C
        proc.wait(timeout=15)
        assert proc.returncode == 0 and time.monotonic() - started < 10
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def test_check_renders_every_page_and_fails_on_a_damaged_run(runs):
    ok = subprocess.run(
        [sys.executable, "-m", "mcpgym.evaluation.cli", "view", str(runs["a"]), str(runs["b"]), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ok.returncode == 0, ok.stderr
    assert "200 /compare?run=0&run=1" in ok.stdout and "200 /run/1/episodes" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "mcpgym.evaluation.cli", "view", str(runs["a"]), str(runs["garbage"]), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 1 and "garbage cannot be shown: damaged" in bad.stderr


def test_run_list_to_compare_to_episode_in_headless_chromium(server: BrowserServer, tmp_path: Path):
    exe = require_browser()
    with Browser(exe) as b:
        b.open(server.url, 1280)
        assert b.errors == []
        assert b.eval("document.querySelectorAll('#runs tbody tr').length") == len(ORDER)
        assert b.eval("document.querySelectorAll('#runs tr.damaged').length") == 4
        b.screenshot(tmp_path / "view-runs.png")
        # select both smoke runs and compare them, as a user would
        b.eval("document.getElementById('pick-0').click(); document.getElementById('pick-1').click()")
        b.eval("document.getElementById('compare').click()")
        deadline = time.monotonic() + 30
        while b.eval("location.pathname") != "/compare" or b.eval("document.readyState") != "complete":
            assert time.monotonic() < deadline, "the comparison page did not load"
            time.sleep(0.1)
        assert b.eval("location.search") == "?run=0&run=1"
        assert b.eval("document.getElementById('paired-comparison').textContent") == "Paired comparison"
        assert "careful@smoke-a" in b.eval("document.body.textContent")
        b.screenshot(tmp_path / "view-compare.png")
        # from the comparison into run b's episodes, then one episode's steps
        b.eval("document.querySelectorAll('#episode-links a.episodes')[1].click()")
        deadline = time.monotonic() + 60
        while b.eval("document.getElementById('episode-list') === null || document.readyState !== 'complete'"):
            assert time.monotonic() < deadline, "the episodes page did not load"
            time.sleep(0.1)
        assert b.eval("location.pathname") == "/run/1/episodes"
        # the viewer's script ran: its filters counted the episodes
        assert b.eval("document.getElementById('f-count').textContent") == "24 of 24 episodes"
        b.eval(
            "Array.from(document.querySelectorAll('#episode-list a'))"
            ".find(a => a.textContent.includes('shop.buy_sold_out_mouse')).click()"
        )
        shown = b.eval("document.querySelector('.episode:not([hidden]) h3').textContent")
        assert shown.startswith("shop.buy_sold_out_mouse")
        assert b.eval("document.querySelectorAll('.episode:not([hidden]) li.step').length") > 0
        b.screenshot(tmp_path / "view-episode.png")
        b.open(server.url + "run/0", 390, 844, mobile=True)
        assert b.eval("document.documentElement.scrollWidth") <= 390
        # a run with condition axes: its page draws the report's curves under the strict CSP
        b.open(server.url + f"run/{COND}", 1280)
        assert b.eval("document.querySelectorAll('#conditions ~ .curves svg.curve').length") == 10
        sizes = b.eval("Array.from(document.querySelectorAll('svg.curve')).map(s => s.getBoundingClientRect().width)")
        assert len(sizes) == 10 and all(w > 300 for w in sizes), sizes
        assert b.eval("document.querySelectorAll('svg.curve circle[data-value]').length") > 0
        b.screenshot(tmp_path / "view-conditions.png")
        b.open(server.url + f"run/{COND}", 390, 844, mobile=True)
        assert b.eval("document.documentElement.scrollWidth") <= 390
    assert b.errors == []  # no console error, no CSP violation
