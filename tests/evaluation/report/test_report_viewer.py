"""The trajectory viewer of report.html: its content from a known episode, then the page in a real
headless Chromium (no console errors, the known step shown, keyboard and filters working,
readable at 1280 and 390 px; screenshots saved under the test's temp directory).

The browser test needs Chromium (Debian's ``chromium``; ``.ci/run`` installs it). Without it the
test is skipped, unless ``MCPGYM_REQUIRE_BROWSER=1`` (set by ``.ci/run``), where it fails.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mcpgym.evaluation.records.trajectory import MessageStep, TokenUsage, ToolCallStep, Trajectory, write_trajectories
from mcpgym.evaluation.report.run_report import write_report
from mcpgym.evaluation.report.viewer import state_diff, step_views
from mcpgym.evaluation.scoring.scorer import score_episode
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from mcpgym.kernel.world import World
from mcpgym.tools.invoke import ToolInvoker
from tests.support.cdp import Browser, require_browser

ITEM = "item-0101"
TASK = "shop.two_card_games"


def _world_after(calls: list[tuple[str, dict]]) -> dict:
    world = World(7, ["system", "shop"])
    inv = ToolInvoker(world, "none")
    for name, args in calls:
        assert not inv.call(name, args).is_error
    return world.snapshot()


def known_episode() -> Trajectory:
    """A careless agent asked for two card games: a transient fault it retries (recovered), a
    timed-out add it repeats blind (duplicated), no read-back, and one game short of gold."""
    err = {"error": {"code": "transient", "message": "temporary failure, try again"}}
    timeout = {"error": {"code": "timeout", "message": "the call timed out"}}
    steps = [
        MessageStep(
            turn=0, text="I will look the game up first.", tool_calls=1, tokens=TokenUsage(input=120, output=14)
        ),
        ToolCallStep(step=1, tool="shop_get_item", arguments={"item_id": ITEM}, result={"item_id": ITEM, "stock": 28}),
        ToolCallStep(
            tool="shop_teleport_item",
            arguments={"item_id": ITEM},
            invalid=True,
            is_error=True,
            error_code="not_found",
            result={"error": {"code": "not_found", "message": "no such tool", "field": "name"}},
        ),
        ToolCallStep(
            step=2,
            tool="shop_add_to_cart",
            arguments={"item_id": ITEM, "quantity": 1},
            is_error=True,
            error_code="transient",
            fault="transient",
            result=err,
        ),
        ToolCallStep(
            step=3, tool="shop_add_to_cart", arguments={"item_id": ITEM, "quantity": 1}, result={"item_count": 1}
        ),
        ToolCallStep(
            step=4,
            tool="shop_apply_coupon",
            arguments={"code": "SAVE10"},
            is_error=True,
            error_code="timeout",
            fault="timeout",
            result=timeout,
        ),
        ToolCallStep(step=5, tool="shop_apply_coupon", arguments={"code": "SAVE10"}, result={"coupon_code": "SAVE10"}),
    ]
    return Trajectory(
        episode_id="ep-known",
        task_id=TASK,
        agent="careless",
        trial=1,
        world_seed=7,
        fault_seed=3,
        fault_profile="default",
        apps=["system", "shop"],
        level=1,
        instruction="Put two Family Card Games in my cart.",
        steps=steps,
        final_message="Done: the card game is in your cart.",
        ledger=[
            {"step": 2, "tool": "shop_add_to_cart", "call_index": 1, "kind": "transient", "applied": False},
            {"step": 4, "tool": "shop_apply_coupon", "call_index": 0, "kind": "timeout", "applied": True},
        ],
        initial_snapshot=_world_after([]),
        final_snapshot=_world_after([("shop_add_to_cart", {"item_id": ITEM, "quantity": 1})]),
        gold_snapshot=_world_after([("shop_add_to_cart", {"item_id": ITEM, "quantity": 2})]),
    )


def other_episode(agent: str, trial: int) -> Trajectory:
    return Trajectory(
        episode_id=f"ep-{agent}-{trial}",
        task_id="shop.look_only",
        agent=agent,
        trial=trial,
        apps=["system", "shop"],
        steps=[ToolCallStep(step=1, tool="shop_get_item", arguments={"item_id": ITEM}, result={})],
        final_message="It costs $17.29.",
        ledger=[],
    )


@pytest.fixture(scope="module")
def report_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory of scored episodes (the known one among others) and its report.html."""
    catalog = Catalog.from_apps()
    trajs = [known_episode()] + [other_episode(a, t) for a in ("careful", "careless") for t in range(2)]
    scored = [t.model_copy(update={"scores": score_episode(t, catalog)}) for t in trajs]
    run = tmp_path_factory.mktemp("viewer") / "run"
    write_trajectories(run / "trajectories.jsonl", scored)
    _, html = write_report(run)
    return html


def test_scorer_findings_are_placed_at_their_steps():
    traj = known_episode()
    sc = score_episode(traj, Catalog.from_apps())
    ordered = step_views(traj, sc)
    assert [(v.pos, v.step, v.kind) for v in ordered[:3]] == [(1, 0, "message"), (2, 1, "tool_call"), (3, 0, "invalid")]
    assert (
        ordered[0].text == "I will look the game up first." and ("tokens", "tokens in/out 120/14") in ordered[0].flags
    )
    assert ("invalid", "invalid call (refused before the server)") in ordered[2].flags
    assert sc.invalid_calls == 1  # counted by the scorer from the recorded step
    views = {v.step: v for v in ordered if v.step}
    labels = {n: [label for _, label in v.flags] for n, v in views.items()}
    assert labels[2] == [
        "fault injected: transient",
        "recoverable error (transient); attempt: retry at step 3; recovered at step 3",
    ]
    assert "blind retry of step 4 (duplicated the write)" in labels[5]
    # no recovery window (the default): an error's window spans the calls up to its attempt
    assert views[3].window == [2] and views[5].window == [4] and views[4].window == []
    capped = step_views(traj, score_episode(traj, Catalog.from_apps(), k=3))
    assert {v.step: v.window for v in capped if v.step}[5] == [2, 4]  # windows of k=3 calls
    assert sc.verification_skips and all("verification skip" in " ".join(labels[s]) for s in sc.verification_skips)
    diff = state_diff(traj, sc)
    assert diff is not None
    rows = {row[0]: row[1:] for row in diff}
    assert rows[f"/shop/cart/{ITEM}/quantity"] == ("(absent)", "1", "2", "missed")  # 1 in the cart, gold 2
    assert rows[f"/shop/cart/{ITEM}/item_id"] == ("(absent)", f'"{ITEM}"', f'"{ITEM}"', "recalled")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self.links: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):  # noqa: ANN001
        a = dict(attrs)
        if tag == "script":
            self._in_script = True
            if a.get("src"):
                self.links.append(a["src"])
        for key in ("href", "src"):
            if a.get(key) and not a[key].startswith("#"):
                self.links.append(a[key])

    def handle_endtag(self, tag):  # noqa: ANN001
        self._in_script = False


def test_report_is_self_contained_and_prose_is_left_aligned(report_html: Path):
    text = report_html.read_text()
    parser = _Text()
    parser.feed(text)
    assert parser.links == []  # no external file, font or script: nothing to fetch
    assert not re.search(r"https?://", text.split("<script>")[0].replace('xmlns="http://www.w3.org/2000/svg"', ""))
    # the notable-episodes note (prose) is left-aligned; figures stay right-aligned
    assert re.search(r'<td class="l">[^<]*blind retr', text)
    assert re.search(r'<td class="r">\d+%', text)


def test_viewer_in_headless_chromium(report_html: Path, tmp_path: Path):
    exe = require_browser()
    url = report_html.resolve().as_uri()
    with Browser(exe) as b:
        b.open(url, 1280)
        assert b.errors == []
        assert b.eval("document.getElementById('f-count').textContent") == "5 of 5 episodes"
        # open the known episode from the list, as a user would, and find step 5 on screen
        b.eval(
            "Array.from(document.querySelectorAll('#episode-list a'))"
            ".find(a => a.textContent.includes('shop.two_card_games')).click()"
        )
        step = "document.querySelector('.episode:not([hidden]) li.step[data-step=\"5\"]')"
        assert b.eval(f"{step}.querySelector('.tool').textContent") == "shop_apply_coupon"
        flags = b.eval(f"Array.from({step}.querySelectorAll('.flag')).map(f => f.textContent)")
        assert "blind retry of step 4 (duplicated the write)" in flags
        b.eval(f"{step}.scrollIntoView({{block: 'center'}})")
        box = b.eval(f"(r => [r.top, r.bottom, r.width])({step}.getBoundingClientRect())")
        assert 0 <= box[0] < 900 and box[1] > 0 and box[2] > 300  # in the viewport, at a readable width
        fault = b.eval("document.querySelector('.episode:not([hidden]) li.step[data-step=\"2\"] .flag').textContent")
        assert fault == "fault injected: transient"
        # the agent's text and the invalid call are steps too, in order
        kinds = b.eval(
            "Array.from(document.querySelectorAll('.episode:not([hidden]) li.step .kind')).map(k => k.textContent)"
        )
        assert kinds[:3] == ["message", "tool call", "invalid"]
        assert (
            b.eval("document.querySelector('.episode:not([hidden]) li.k-message .text').textContent")
            == "I will look the game up first."
        )
        shot = b.screenshot(tmp_path / "viewer-1280.png")
        assert shot.stat().st_size > 10_000

        # keyboard: k moves to the previous episode (the known one is listed last), j back
        known = b.eval("document.querySelector('.episode:not([hidden])').id")
        b.eval("document.activeElement && document.activeElement.blur()")
        b.press("k")
        previous = b.eval("document.querySelector('.episode:not([hidden])').id")
        assert previous != known and b.eval("document.activeElement.dataset.ep") == previous
        b.press("j")
        assert b.eval("document.querySelector('.episode:not([hidden])').id") == known

        # filters: behaviour "blind retry" leaves the known episode alone; agent filter narrows the list
        b.eval(
            "var s=document.getElementById('f-behaviour'); s.value='blind_retry';s.dispatchEvent(new Event('change'))"
        )
        assert b.eval("document.getElementById('f-count').textContent") == "1 of 5 episodes"
        assert b.eval("document.querySelector('.episode:not([hidden]) h3').textContent").startswith(TASK)
        b.eval(
            "var s=document.getElementById('f-behaviour'); s.value=''; s.dispatchEvent(new Event('change'));"
            "var a=document.getElementById('f-agent'); a.value='careful'; a.dispatchEvent(new Event('change'))"
        )
        assert b.eval("document.getElementById('f-count').textContent") == "2 of 5 episodes"

        # 390 px (a phone): nothing wider than the screen, the list above the episode
        b.open(url + f"#{known}-s5", 390, 844, mobile=True)
        assert b.errors == []
        assert b.eval("document.documentElement.scrollWidth") <= 390
        assert b.eval(f"document.getElementById('{known}').hidden") is False
        b.eval(f"document.getElementById('{known}-s2').scrollIntoView()")
        shot = b.screenshot(tmp_path / "viewer-390.png")
        assert shot.stat().st_size > 5_000
    assert b.errors == []
