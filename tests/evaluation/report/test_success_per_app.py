"""report.md's "Success per app" table and ``scores.json``'s ``by_app`` (docs/design.md §7,
"Aggregates", "Per app"): an episode counts under each app its task names besides ``system``,
and under ``system`` only for a system-only task (every world holds ``system``; before, its row
held every episode of the run).

A small real run (``mcpgym run`` through typer's CliRunner, its own server), hand-counted:

==========================  ======================  =========  ==========
task                        apps                    careful    defeatist
==========================  ======================  =========  ==========
system.dark_mode            system                  success    fails (gives up at the fault)
weather.use_fahrenheit      system, weather         success    success
cross.post_forecast_paris   system, talk, weather   success    success
==========================  ======================  =========  ==========

so ``system``: dark_mode only (careful 1/1, defeatist 0/1); ``talk``: the forecast post (1/1
each); ``weather``: use_fahrenheit and the forecast post (2/2 each).
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from mcpgym.evaluation.cli import app
from mcpgym.evaluation.records.compressed import trajectories_file
from mcpgym.evaluation.records.trajectory import read_trajectories
from mcpgym.evaluation.scoring.aggregate import counted_apps

# the first call of system_update_setting fails (transient); the defeatist agent gives up there
PROFILE = "max_consecutive = 1\n[tools.system_update_setting]\ntransient = 1.0\n"
TASKS = ["system.dark_mode", "weather.use_fahrenheit", "cross.post_forecast_paris"]


def test_counted_apps_leaves_system_out_unless_it_is_the_only_app():
    assert counted_apps(["system", "talk", "weather"]) == ["talk", "weather"]
    assert counted_apps(["system"]) == ["system"]
    assert counted_apps(["system", "shop", "shop"]) == ["shop"]
    assert counted_apps(["github"]) == ["github"]  # an app no registry knows: its own row
    assert counted_apps([]) == []


def test_success_per_app_counts_an_episode_under_its_task_apps_not_system(tmp_path):
    profile = tmp_path / "once.toml"
    profile.write_text(PROFILE, encoding="utf-8")
    out = tmp_path / "run"
    args = ["run", "--agent", "careful", "--agent", "defeatist", "--trials", "1", "--faults", str(profile)]
    args += [x for t in TASKS for x in ("--task", t)] + ["--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output

    # the trajectories the hand count above reads
    seen = {
        (t.agent, t.task_id): (t.apps, t.scores.success)
        for t in read_trajectories(trajectories_file(out), states=False)
    }
    assert seen == {
        ("careful", "system.dark_mode"): (["system"], True),
        ("defeatist", "system.dark_mode"): (["system"], False),
        ("careful", "weather.use_fahrenheit"): (["system", "weather"], True),
        ("defeatist", "weather.use_fahrenheit"): (["system", "weather"], True),
        ("careful", "cross.post_forecast_paris"): (["system", "talk", "weather"], True),
        ("defeatist", "cross.post_forecast_paris"): (["system", "talk", "weather"], True),
    }

    report = (out / "report.md").read_text(encoding="utf-8")
    table = report.split("## Success per app\n", 1)[1].split("\n## ", 1)[0].strip().splitlines()
    assert table == [
        "| App | careful | defeatist |",
        "|---|---|---|",
        "| system | 100% (n=1) | 0% (n=1) |",
        "| talk | 100% (n=1) | 100% (n=1) |",
        "| weather | 100% (n=2) | 100% (n=2) |",
    ]
    scores = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    for agent, system_successes in (("careful", 1), ("defeatist", 0)):
        by_app = scores["agents"][agent]["by_app"]
        counts = {a: (m["successes"], m["scored_episodes"]) for a, m in by_app.items()}
        assert counts == {"system": (system_successes, 1), "talk": (1, 1), "weather": (2, 2)}
        assert scores["agents"][agent]["episodes"] == 3  # the whole run is still counted once
