"""The tasks of issue 19: the tasks that need the user (tags clarification, confirmation) and
the cross-app tasks of cross_more.yaml: pinned gold states, the counts `mcpgym tasks --json`
shows, and the scripted agents' behaviour on them (careful asks, overconfident guesses)."""

from __future__ import annotations

import json

import anyio
import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.agents import make_agent
from mcpgym.evaluation.agents.inprocess import run_in_process, score_in_process
from mcpgym.evaluation.agents.scripted import catalog_for
from mcpgym.evaluation.cli import app
from mcpgym.evaluation.tasks import get_task, load_tasks
from mcpgym.evaluation.tasks.registry import gold_run, initial_snapshot
from mcpgym.kernel.world import World

# World.state_hash() of each new task's gold world (oracle on the task's seed, faults off, the
# user answering from the task's profile). Re-pin on purpose only.
GOLD_HASHES = {
    "users.confirm_payment_1": "c30fe9f6aa22484ba6346dbf98fe07ee8d3454cfa6e232c523737c225f0e65f8",
    "users.confirm_payment_2": "2d7f733e168d8f4ecff63d7ab1a82c1c092bd0742b38f1f3af42e71529cd7b8c",
    "users.confirm_payment_3": "f56ef22df0ded48dc90506cc4d31bea73ec8a63f818a8b62aeff29dc8f6df14b",
    "users.confirm_payment_4": "8d217c21356f260a805ff66586f75a895999a5f12f235e77049725a4dcacf75b",
    "users.confirm_payment_5": "ab2345556601fe32b6265c8f7b961d991ceea93c23e5518bee12deb2f69ac377",
    "users.confirm_payment_6": "8fe73825b9313ddc1526ee2a498a8218c10450888321c292c3dab7f0a6515fc2",
    "users.confirm_payment_7": "0e8470776ff25d67532ac98d38f26592d6e9dde446453367aac074395f07f6e0",
    "users.confirm_payment_8": "2648d07d83dfeed0870f9c23160ad6b7c78d4ceed9f9893edf2129e779c3d62e",
    "users.code_payment_1": "53e291774686a80000423206a794d04305bf61024e626b253fce1e3262ccd0d9",
    "users.code_payment_2": "be0327945e567a0734c1a1f3096f205a26cf82d75879bad367169e97181b320c",
    "users.which_dana_1": "3ec89b7170c9da675874eb6236ae881014ad181ed2b9fa15efbb893e65e6af9f",
    "users.which_amir_2": "24ed5ad8a6925f6a1343f6855b7b7507e161dc15de6851592b5767bff5c7b85e",
    "users.which_maya_3": "4138fb98fee39a503621140e525634521c0e6fcafc4ae8425c99f83cdc39d3aa",
    "users.which_farid_4": "2fb8082410bce054fba919b4d4b3bae8ceed4db45e181f02db7379f7a3a249cd",
    "users.which_bea_5": "982b5ed2f43092d42ffa1899f242ef771dfbdfb0fa1871ca57e9fa3f8ebd99e0",
    "users.which_caleb_6": "1f5b5247929b88ef59b51eb2b3bc1848fabcb8c50654397c96b7f7e1786a4c3f",
    "users.which_chen_7": "5dad163405e09b945c70be6af22680b22d09299518008e95c2ff94ea2ecb6593",
    "users.which_dilan_8": "75e8d5e80dd94a13632b9174ff37f1477335fab4ff4947f8dc83c880a168984b",
    "users.which_dilan_9": "dba86fa94f18c333c1698c4dd148522f4efa91d5e1516d4536d4956bf1eb66b7",
    "users.which_ada_10": "71bdb27cecc38b844df506cabc0ac87546da3c8a4d4543384d129f9c12b11f91",
    "users.tell_ines_1": "8141006dae6423f2edf36b6efbb737fb5af7abbc17b22ef06bfa85237125558c",
    "users.tell_umar_2": "ccea6f5bd26354efd22027300d30e2e1614cca8589d380c9b7618ab26560fdc7",
    "users.tell_maya_3": "76c85d8947e79e78226a86d7b5342f0e0c20100980e3cd9ef00c1494fbb38361",
    "users.tell_bruno_4": "822e3f938e43e6fa74b8b0a89dc26c1be10bdddf2b9d61511d87e70853369137",
    "users.tell_ines_5": "a12b23ee0b1194df1ef169fce6c1f5be52c214606066a90eb472641cc77a3c63",
    "users.tell_priya_6": "4bd147b419b8e601a9444466d16e3b9d7af118c036023603cf0f66f32a432d10",
    "users.tell_chen_7": "b1ba77ea17235a28f059fc5ea360251ecd5b2d82f6ad2c1bbdf9df3a815242ec",
    "users.tell_amir_8": "c40bbccde2c55aefbb26371bae6a4257ec464024bbd5fbcf68c123205e9eed8c",
    "users.pay_back_and_tell_1": "dd345444cdabb73a770d7a9bb4a1105f4707949a47de038432d22723364e4529",
    "users.pay_back_and_tell_2": "86805d96f5c1defcaf0874ad63cc40de6bdef78cee0f812f447c21095101fea4",
    "users.pay_back_and_tell_3": "147ebf8aec60d11e414771cd2f3a183961d55d5c94cf289006e66cfeecc060a5",
    "users.pay_back_and_tell_4": "1dd3f36218412eff05704f3dccb2affe1b4d2d051d24e87b0782a70829fa4201",
    "users.pay_back_and_tell_5": "75555f49c5414670c94cfcda094fad0ec38f0869288743ae22470982feb8c2f7",
    "users.pay_back_and_tell_6": "012b9f8ca2c8e746a238838caf3ff5b4af3b3b7dc3dd43320bd6f347bef460fe",
    "cross.mail_newest_tech": "5111c7222323d2e91de4df8b8843fe54091b38c4db98bbd12ef02e1dc46d9340",
    "cross.mail_newest_science": "5832444a33a9f867adc689b696115b7692e7c937fb16a0c51aab9085ccf1a990",
    "cross.mail_newest_business": "cc0ff0368b89ef37b33de31b8b017b59c19c296f1ee41c48ec6e7d24df42ab9f",
    "cross.mail_newest_sport": "796b7180509768b9ba657c340eff9ef878912cb60d8536d9f7aa989648f356f2",
    "cross.mail_newest_culture": "a3164588d3439773c3fb4d8d3310441c6f9d251b1b5f83e59648a674dc2bcff2",
    "cross.mail_newest_health": "532f56ab73695d1fac92492c39c73b41f665818d6f4ae54eb79746a0f1faf8da",
    "cross.mail_newest_travel": "adc88373339294f65cab085d5454636514b0c509244fe3479c93359aaf98fdb3",
    "cross.mail_newest_world": "27bfb31a3c577460f9be00c33381ba69eb990f2f697e0317efe38b299a0de1a9",
    "cross.post_forecast_lisbon": "e340984f73495b851d67adf1d76505532b61ff26b0f2002f93d3bd79d59619cf",
    "cross.post_forecast_paris": "ab58a3b696ffbee32988cdfa2ee4cd36735ceed5c8d868d843bbcae31bb52e7e",
    "cross.post_forecast_rome": "8f3fbd2ac2b1abced76370ffac17332dfa88d74c3545b1fc75889573a1f2ff49",
    "cross.post_forecast_berlin": "49aa3a2af8ee9a9684ab8af14069ba03adfa6651000ab278976afcd664a850c9",
    "cross.post_forecast_vienna": "1098aec4b151a0bbc9d221a638967478eacb2f9be46e4b7e479baaf253510c0d",
    "cross.post_forecast_madrid": "92ba1df041eb00c5231d14d3d6ff5c8b758e2b660e7f6283aefb3c85a10cfa17",
    "cross.weather_brief_1": "d142580b5564999b862b5f971028a0c09c0a25e991c11ae9f6dcdf83e605e667",
    "cross.weather_brief_2": "34f705d4c71115d5bbb1962e0ec5e0f2330025a4b102556ccd1cd950b326d12c",
    "cross.weather_brief_3": "4ff6eab11a569e334d3eb486f5f0b0c21d9d0258926b1915c3646055daa6c48f",
    "cross.weather_brief_4": "03ff755e16d5b7e8978474d88efca5c242e6717e35e94bfa819b7259dc619e4c",
    "cross.weather_brief_5": "ca8e6bd3984d1db4bcf4cdab5497f0c338898965c3f76861bda499597f92e93b",
    "cross.weather_brief_6": "f05cbace2bb6dfd2ad13e3e0740d2c71dd643726c4cd9741e3186a0c222f31d7",
    "cross.sport_digest": "b1aab617cc665becb97bc1e5f1da9b87c2859dff1a98f528afc3a58b6148b8cb",
    "cross.culture_digest": "d1f0fbf49d1bbce8e89b4e8c9e9a947a7ab49d219776763d0c7450a9ee53648f",
    "cross.health_digest": "f40eb8cb2ea580a9cfba8b699df8d3462b5695edb9fe4c945a1d7a976ea54bf5",
    "cross.travel_digest": "f0b2d737226344ecee4043292c933cfb2eee7700b8635a9e1f0d7204fe8fb0ba",
    "cross.world_digest": "9ee8fe2731c0c2814388eccda9c34d5532c4560cd8003dc2d721592d2dbca307",
    "cross.tech_digest": "9b72abedec5fc5519f545846fca405061a72b11363116367954e247d10496c5d",
}
USER_TAGS = {"clarification", "confirmation"}


@pytest.mark.parametrize("task_id", list(GOLD_HASHES))
def test_gold_state_is_pinned(task_id: str) -> None:
    task = get_task(task_id)
    run = gold_run(task)
    assert run.state_hash == GOLD_HASHES[task_id]
    assert run.outcome.kind == "answer"
    assert run.state_hash != World.restore(initial_snapshot(task)).state_hash()
    if task.user is not None and "payment" in task.user.refuses:  # refused: nothing sent, the refusal recorded
        before, after = initial_snapshot(task)["state"]["system"], run.snapshot["state"]["system"]
        assert after["wallet"] == before["wallet"]
        assert [n["text"] for k, n in after["notifications"].items() if k not in before["notifications"]] == [
            next(n["text"] for n in after["notifications"].values() if n["text"].startswith("You declined a payment"))
        ]


def test_tasks_json_shows_the_counts() -> None:
    out = CliRunner().invoke(app, ["tasks", "--suite", "core", "--json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)
    needing = [r for r in rows if USER_TAGS & set(r["tags"])]
    assert len(needing) >= 30 and all(r["needs_user"] for r in needing)
    assert {t for r in needing for t in r["tags"]} >= USER_TAGS
    spanning = [r for r in rows if len(set(r["oracle_apps"]) - {"system"}) >= 2]
    assert len(spanning) >= 60
    deep = [r for r in rows if r["level"] == 3 and r["oracle_calls"] >= 8]
    assert len(deep) >= 6 and all(
        len(set(r["oracle_apps"]) - {"system"}) >= 2 for r in deep if r["id"].startswith("cross.weather_brief")
    )


def _run(agent_name: str, tasks: list, trial: int = 0) -> list[tuple]:
    agent = make_agent(agent_name)

    async def main() -> list[tuple]:
        out = []
        for task in tasks:
            traj = await run_in_process(agent, task, faults="default", trial=trial)
            out.append((task, traj, score_in_process(traj, task)))
        return out

    return anyio.run(main)


@pytest.fixture(scope="module")
def user_runs() -> dict[str, list[tuple]]:
    tasks = [t for t in load_tasks("core") if USER_TAGS & set(t.tags)]
    return {name: _run(name, tasks) for name in ("careful", "overconfident")}


def test_careful_asks_and_succeeds_overconfident_guesses_and_falls_behind(user_runs) -> None:  # noqa: ANN001
    careful, over = user_runs["careful"], user_runs["overconfident"]
    rate = lambda runs: sum(bool(sc.success) for _, _, sc in runs) / len(runs)  # noqa: E731
    assert rate(careful) >= 0.95 and rate(over) <= rate(careful) - 0.3, (rate(careful), rate(over))
    for task, traj, sc in careful:
        assert sc.user_questions >= 1 and traj.user_turns[0].value is not None, task.id
        assert sc.clarification_skips == [] and sc.unconfirmed_writes == [] and sc.user_burden == 0, task.id
    for task, traj, sc in over:
        assert sc.user_questions == 0 and traj.user_turns == []
        kinds = catalog_for(task.apps)
        wrote = [s.step for s in traj.steps if not s.is_error and kinds.get(s.tool).kind == "write"]
        if "clarification" in task.tags:
            assert sc.clarification_skips[:1] == wrote[:1], task.id  # its first write rests on a guess
        if "confirmation" in task.tags:
            sent = [s.step for s in traj.steps if not s.is_error and s.tool == "system_send_money"]
            assert sc.unconfirmed_writes == sent, task.id  # it confirmed the payment itself


def test_same_task_and_seeds_give_the_same_trajectory_and_scores() -> None:
    tasks = [get_task("users.pay_back_and_tell_1"), get_task("users.tell_maya_3"), get_task("users.confirm_payment_2")]
    for name in ("careful", "overconfident"):
        first, again = _run(name, tasks, trial=1), _run(name, tasks, trial=1)
        for (_, t1, s1), (_, t2, s2) in zip(first, again, strict=True):
            assert t1.model_dump(mode="json") == t2.model_dump(mode="json")
            assert s1.model_dump(mode="json") == s2.model_dump(mode="json")


def test_gym_episodes_have_the_user_too() -> None:
    from mcpgym.evaluation.run.gym import GymEpisode

    task = get_task("users.which_dana_1")
    ep = GymEpisode.create(task.id, trial=0, faults="default")
    traj = anyio.run(lambda: ep.run_agent(make_agent("careful")))
    assert traj.scores.success is True and traj.scores.user_questions == 1
    assert [t.value for t in traj.user_turns] == [task.user.facts["recipient"]]
