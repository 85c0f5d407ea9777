"""The hand-written tasks over the talk, weather, news and office apps (task files talk.yaml,
weather.yaml, news.yaml, office.yaml and cross_social.yaml; docs/tasks.md).

Their gold states are pinned like those of tests/evaluation/tasks/test_tasks.py, their oracles are checked to
read only before they write (so the overconfident agent's verification stays low), and the
scripted ``careful`` agent must reach every gold state in-process with faults off.
"""

from __future__ import annotations

from collections import Counter

import anyio
import pytest

from mcpgym.evaluation.agents import make_agent
from mcpgym.evaluation.agents.inprocess import run_in_process, score_in_process
from mcpgym.evaluation.agents.scripted import catalog_for
from mcpgym.evaluation.scoring.judge import comparable_state, diff_states
from mcpgym.evaluation.scoring.refusal import match_refusal
from mcpgym.evaluation.tasks import Task, gold_run, gold_snapshot, initial_snapshot, load_file, load_tasks
from mcpgym.evaluation.tasks.registry import DATA_DIR
from mcpgym.kernel.world import World

FILES = ("talk.yaml", "weather.yaml", "news.yaml", "office.yaml", "cross_social.yaml")
SOCIAL_APPS = {"system", "talk", "weather", "news", "office"}

# World.state_hash() of every task's gold world (oracle on the task's seed, faults off).
# A change here means the seed data, a tool's effect or an oracle changed: re-pin on purpose.
GOLD_HASHES = {
    # talk.yaml
    "talk.text_by_nickname": "85e5e278eac3024b3d2259e3afd0eb546056878debc6af34a5eb1c0b214a2617",
    "talk.mark_groups_read": "1db956ceb40b934c27d1bf6898f215de43123fc27fb000c0f90968c60bb44966",
    "talk.like_neighbour_posts": "cf2c044261feea2899cddf5da1bc031063db15b802770279ef31d2132bf3c27c",
    "talk.comment_newest_post": "38ce77d10701929ca09dea4a00269bd8af6d1e321737f3ba27dea30c471718f7",
    "talk.lunch_club_group": "f77602a54152218dd582dde7a176caa422346c92eaac854ef7ee3c4b194f87f7",
    "talk.unblock_and_message": "cf4bb3eb20b42872866c6ef7c9bbedf61ea594bca7514350ea03861ceef72197",
    "talk.leave_owned_group": "45f92bde192e62ba84b153b3fae04f2f7245f9a002cf6525fc04baada4b675b7",
    "talk.home_and_stop_sharing": "ad3e84e964a861dee336570f13baddae3200c2b8edba4c06d35c70baa6b0163e",
    "talk.nickname_contact": "d91781eede69dbccd297ac74f793b904659cb4a0fd1c343d244684d7e5e34e05",
    "talk.remove_member_not_owner": "327a8d027f585709fcc3fd74451150f1a831abefbb4728065bf253d290ee26fc",
    "talk.unread_summary": "40e6314e36c1ac3d9c1fea5ca3de980b7f5d2c166db3085f9b0e2838d64560c7",
    "talk.share_location_with_family": "14bc98dfb14e7c38a6fef31862acd41cb77c07afadca5a4239532ac147c50d79",
    "talk.publish_post": "5648fb173f7b81b5b997450dae8d62a5181bb9b11be94df7916de1290078a125",
    # weather.yaml
    "weather.use_fahrenheit": "61f7b4d99eedcead4f42d343b32aa9f00870603d9b891aa11e4ace834c71f0be",
    "weather.save_holiday_city": "661720f8aa8776466fb7bf9b41e5f14207fb888381caf5cd1112756c915928be",
    "weather.severe_alerts_rome": "d816999774756f597a46b7af087ee2c8a02f133174eff0c44d7ce0c828618beb",
    "weather.make_madrid_primary": "32cbc2824dd45912835288f4684dfc71a2fe4340ca443b2daa12e86b3a98e8ef",
    "weather.keep_only_home": "a6b93556d6cba780b424b776676db30306c958f11704d8032da0ba76b843282b",
    "weather.warmest_day_athens": "32c65e0bfd35df279dc4a8bda4d3cb01412ae86feca0c627407c7b6f1d88c2b5",
    "weather.sunset_oslo": "7fbbc6201e206bdb4922c19b5770df82f272ef14d2ec680c392106a5e1905e78",
    "weather.stop_home_alerts": "d3fab597308d1c5bd82e4fa28e58347cae7eaa5e6bbf83fab22fbe88e8ed2a38",
    "weather.save_unknown_city": "c010d7f61311017cc6c21e4e664ebf3081e40c1726130987e81c0b9370d4ca8f",
    "weather.minor_alerts_if_upcoming": "0d171f02bb6291ef1c36e6c00e4ec17fdb2c268ac3937de5575a8d28d48e8cba",
    # news.yaml
    "news.bookmark_latest_tech": "2fdcd60781f33444531da3b35fc3085080ffbc60ec6e4924e0a46a65e90be7b7",
    "news.follow_science": "d3cee841c8efe8d4539466ea8d1ce94a5c1a3b65139567e2b97f4be1452ca1e3",
    "news.premium_glaciers_article": "89406dfb67a12e37071848346d96fc832961b90b8e445f80b7e395dd03c5261d",
    "news.forget_travel_history": "f4f31c0265091befc29d802425c83c0e9816347ac7ee02c5fec1ed7904846afa",
    "news.follow_author_of_last_bookmark": "1bacf72672797a97f725e01cf8da53f20cc4f05c25fda9b8c645bd611e8d7a82",
    "news.cancel_sport_not_subscribed": "731c7f40a2e7c4fa97acd1fa5d1aff26a8ab8e8dfaf4f4a764049cb6c1e934c2",
    "news.most_prolific_author": "feb1743844e0f70e3f28f6dd1073323a8fa1e2ab368c31c83b639322eb2e324f",
    "news.read_newest_free_in_feed": "fb173d2dcb40b9b690751deac5b7e44df50137c8b0d09949a9e1a00a05a0e7c6",
    "news.bookmark_with_note": "fdbd5486a986cb98f32fa1ef3792691423cb13607b0f42727c81fbae5f2066a1",
    "news.drop_old_bookmarks": "7e50be0fd3ad60fd92a8da9f15cb30ac004612eb2d41795a970a5d1de3ca5234",
    # office.yaml
    "office.label_invoice_important": "f9a951064b41a0ed21c85ec00c205e740e1691b0cb4dcead7c2e9bf549f06e0b",
    "office.archive_read_personal": "af4712b8bd542e1f24366a1e2573f693873687965d1454fd98a2d3a5d8b7a66a",
    "office.answer_invitations": "3c14ecbb952e5970f14289ffc19955e15fe58d995bb90a256100a7e07af54bb2",
    "office.move_dentist_if_free": "2a6817366cf23e0dd18c6fba0e0da41f65cd6c22e1985c4bca6650296163509f",
    "office.share_plan_for_editing": "887b6a3b69d473761bf6dc4fb1f6c6bdf2c8d786843346e2a68a70bc24675bc4",
    "office.save_budget_attachment": "5d407ab67af58e5d7efc4b1d53ec26ea80a57ba01f6fab443be107c43878e263",
    "office.reply_sunday_lunch": "15be17e76728b1db1c046c95c64c483ae768cb1b857c6795b575c2096dfebbe2",
    "office.move_barbecue_not_mine": "01fbd2db70e9a2d66482758b6a4ca718f38d5c12e0d52a188efc9f77a9eef8cd",
    "office.book_nook_receipt": "ed436700bf621859ad31f35460b1136ece2e51356be66577854b68eb259f5425",
    "office.plumber_note": "a1cfd2e14445cf50b9bd49de9d06304f4526954dc9d1c4fc5300daa26163a6bf",
    "office.focus_time_tomorrow": "e24b80aa4de79c57fbc2dc0912078bab8ec30fdadc3505bae7daec62dd8f137b",
    "office.invite_to_book_club": "dfd997572ec3e62b16ed362ff0ca14042f05c44d446a628c1fdde0633bbfcd25",
    "office.accept_allhands_clash": "c3fdec466e3e2d036e0626d5cc6288643604cc3c72643e0837167fbf519560cc",
    # cross_social.yaml
    "cross.rain_umbrellas_family": "c0a863db0656bee5b735c68e4f7a67e8b49aa49ec17f78311f73ed7d7d345603",
    "cross.thank_tech_author": "117926b3482a1b1556b712b3d84c7d917297cfc9fbbbdb58f5865277aed241fc",
    "cross.location_for_todays_meetings": "83d67c38ef5fb1fb5a704d88b109effeca73b6f090601940892ad4d5c16b71ea",
    "cross.bookmark_neighbour_article": "e2d818814ff813ad728c22ac161badd588b620d06d37721c0d22fe3ca4877806",
    "cross.follow_journalist_contacts": "916e68250f548d81b696ed74715a4292480179e51b47e14278984e4295353ba6",
    "cross.late_for_next_meeting": "83dc6ba001a9494b2200ca066fe5eafb4ba2adcf58eef0f30ba2542515405cfa",
    "cross.picnic_driest_day": "74143ae001ee10e6eed374707a927b43746f0f8e3399472bf8476c70cea558cc",
    "cross.premium_friend_column": "488c59c1323631b0ecbc974b532d14abea74b9f21732426b2f56d7b24263e4aa",
    "cross.storm_warning_contacts": "4b50826cdb166341bdbe80529cac2adf52375d66cf3bcedd06d4d280f31d03cd",
    "cross.invite_team_to_sprint": "e90e99b39c288961bc047987521c0bdbe1af81caa75624e7f2629956996d7256",
    "cross.share_packing_list_with_crew": "8a0aa086d2bded8e0e6233967436adb7084ab5415a95cf70148b3b01e44c320b",
    "cross.family_to_barbecue": "e404c79066ec67bb30927f1425654ed85943118b2f67441cb9bace2338457a7f",
    "cross.morning_run_without_rain": "0afdb8c6c4cd11e9d861aa2abfc34d480892dc33374e104f4f994d511dc61c1d",
    "cross.email_article_title": "44fc3217aa68b9788e1b4e87fa06f553b736f3715b27ae988985eebbcb2a67a0",
}


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return [t for f in FILES for t in load_file(DATA_DIR / f)]


def _by_id(tasks: list[Task]) -> dict[str, Task]:
    return {t.id: t for t in tasks}


def test_social_files_load_with_the_promised_mix(tasks: list[Task]) -> None:
    assert [t.id for t in tasks] == list(GOLD_HASHES)
    assert len(tasks) >= 45
    assert {t.id for t in tasks} <= {t.id for t in load_tasks()}  # part of core, ids unique there
    for t in tasks:
        assert set(t.apps) <= SOCIAL_APPS and t.apps[0] == "system", t.id
        assert t.id.split(".")[0] in {"talk", "weather", "news", "office", "cross"}
        if t.id.startswith("cross."):
            assert len(set(t.apps) - {"system"}) >= 2, t.id
        else:
            assert t.apps == ["system", t.id.split(".")[0]], t.id
        if not t.feasible:
            assert "infeasible" in t.tags
            assert any(c.kind == "declares_impossible" and c.value is True for c in t.checks)
    per_app = Counter(t.id.split(".")[0] for t in tasks)
    assert per_app == {"talk": 13, "weather": 10, "news": 10, "office": 13, "cross": 14}
    assert Counter(t.level for t in tasks) == {1: 22, 2: 30, 3: 8}
    assert sum(not t.feasible for t in tasks) == 7
    tags = Counter(tag for t in tasks for tag in t.tags)
    assert tags["verification"] >= 30 and tags["recovery"] >= 40 and tags["interdependency"] >= 10
    assert tags["retrieval"] >= 10 and tags["infeasible"] == 7 and tags["payment"] == 2


@pytest.mark.parametrize("task_id", list(GOLD_HASHES))
def test_gold_state_is_pinned_and_consistent(tasks: list[Task], task_id: str) -> None:
    task = _by_id(tasks)[task_id]
    run = gold_run(task)
    assert run.state_hash == GOLD_HASHES[task_id]
    assert World.restore(gold_snapshot(task)).state_hash() == GOLD_HASHES[task_id]
    res = diff_states(
        comparable_state(initial_snapshot(task)),
        comparable_state(gold_snapshot(task)),
        comparable_state(gold_snapshot(task)),
    )
    message = run.outcome.message or ""
    if task.feasible:
        assert run.outcome.kind == "answer" and match_refusal(message) is None, message
        assert res.total >= (0 if "retrieval" in task.tags else 1)
    else:
        assert run.outcome.kind == "refuse" and match_refusal(message) is not None, message
        assert res.total == 0  # change nothing
    assert all(c.evaluate(message) for c in task.checks), (task_id, message)


def test_oracles_read_only_before_they_write(tasks: list[Task]) -> None:
    """No oracle reads a resource family after writing it: the overconfident agent runs the
    oracle's calls only, so a read-back in an oracle would give it verification for free."""
    for task in tasks:
        catalog = catalog_for(task.apps)
        written: set[str] = set()
        for name in gold_run(task).calls:
            entry = catalog.get(name)
            if entry.kind == "read":
                assert not set(entry.resources) & written, (task.id, name, sorted(written))
            elif entry.kind == "write":
                written |= set(entry.resources)


def test_careful_reaches_gold_without_faults(tasks: list[Task]) -> None:
    agent = make_agent("careful")

    async def main() -> list[tuple[Task, object, object]]:
        out = []
        for task in tasks:
            traj = await run_in_process(agent, task, faults="none", trial=0)
            out.append((task, traj, score_in_process(traj, task)))
        return out

    writes = 0
    for task, traj, sc in anyio.run(main):
        assert traj.ledger == [] and traj.status == "completed", task.id
        assert sc.success is True, (task.id, sc.missed, sc.misbehaved, traj.final_message)
        assert sc.error_calls == 0 and sc.verification_skips == [] and sc.precheck_skips == [], task.id
        assert sc.declared_impossible is (not task.feasible), (task.id, traj.final_message)
        writes += sc.writes
    assert writes >= 60
