"""Compressed run directories (issue 30): trajectory lines as independent zstd frames and
snapshot files as zstd, read transparently; a torn last frame is skipped and repaired; an
older, uncompressed run directory still loads; ``mcpgym cat`` prints plain JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.agents import make_agent
from mcpgym.evaluation.cli.app import app
from mcpgym.evaluation.records.compressed import (
    compress_line,
    decompress_frames,
    is_compressed,
    read_frames,
)
from mcpgym.evaluation.records.snapshots import SnapshotStore
from mcpgym.evaluation.records.trajectory import (
    TrajectoryFileError,
    append_trajectory,
    read_trajectories,
    write_trajectories,
)
from mcpgym.evaluation.run.gym import GymEpisode
from mcpgym.evaluation.run.run_dir import TRAJECTORIES, TRAJECTORIES_ZST, load_run, trajectories_file
from mcpgym.evaluation.tasks import load_tasks


@pytest.fixture(scope="module")
def trajs():
    out = []
    for task in load_tasks("smoke")[:3]:
        ep = GymEpisode.create(task, trial=0, agent_name="careful")
        out.append(anyio.run(ep.run_agent, make_agent("careful")))
    return out


def _compact_run(root: Path, trajs) -> Path:
    store = SnapshotStore(root)
    for t in trajs:
        append_trajectory(root / TRAJECTORIES_ZST, t.compacted(store))
    return root


def test_lines_and_snapshots_are_zstd_and_read_back_the_same(tmp_path: Path, trajs) -> None:
    run = _compact_run(tmp_path, trajs)
    raw = (run / TRAJECTORIES_ZST).read_bytes()
    assert is_compressed(raw)
    text, good, torn = decompress_frames(raw)
    assert good == len(raw) and not torn and text.count(b"\n") == len(trajs)
    snaps = list((run / "snapshots").iterdir())
    assert snaps and all(p.name.endswith(".json.zst") and is_compressed(p.read_bytes()) for p in snaps)
    back = load_run(run)
    assert [t.final_snapshot for t in back] == [t.final_snapshot for t in trajs]
    assert [t.scores for t in back] == [t.scores for t in trajs]
    assert trajectories_file(run) == run / TRAJECTORIES_ZST


def test_a_torn_last_frame_keeps_every_finished_episode_and_is_repaired(tmp_path: Path, trajs) -> None:
    run = _compact_run(tmp_path, trajs)
    path = run / TRAJECTORIES_ZST
    whole = path.read_bytes()
    extra = compress_line((trajs[0].model_dump_json() + "\n").encode())
    path.write_bytes(whole + extra[: len(extra) // 2])  # a write killed half-way
    assert len(load_run(run)) == len(trajs)
    assert path.read_bytes() != whole  # reading alone changes nothing
    with pytest.raises(TrajectoryFileError, match="torn"):
        read_trajectories(path)
    assert len(load_run(run, repair=True)) == len(trajs)
    assert path.read_bytes() == whole
    append_trajectory(path, trajs[0].compacted(SnapshotStore(run)))  # later appends stay readable
    assert decompress_frames(path.read_bytes())[0].count(b"\n") == len(trajs) + 1


def test_an_old_uncompressed_run_directory_still_loads(tmp_path: Path, trajs) -> None:
    store = SnapshotStore(tmp_path, compress=False)
    write_trajectories(tmp_path / TRAJECTORIES, [t.compacted(store) for t in trajs])
    assert all(p.name.endswith(".json") for p in (tmp_path / "snapshots").iterdir())
    assert trajectories_file(tmp_path) == tmp_path / TRAJECTORIES
    assert [t.final_snapshot for t in load_run(tmp_path)] == [t.final_snapshot for t in trajs]


def test_mcpgym_cat_prints_plain_json_lines(tmp_path: Path, trajs) -> None:
    run = _compact_run(tmp_path, trajs)
    res = CliRunner().invoke(app, ["cat", str(run)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert [r["episode_id"] for r in rows] == [t.episode_id for t in trajs]
    missing = CliRunner().invoke(app, ["cat", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "no such file or directory" in missing.output


def test_a_frame_claiming_too_much_is_damage_read_no_further() -> None:
    import zstandard

    bomb = zstandard.ZstdCompressor(level=1).compress(b"\0" * (1 << 20))  # its header says 1 MiB
    after = compress_line(b"kept\n")
    found = read_frames(bomb + after, limit=1 << 19)
    assert [f.data for f in found.frames] == [b"kept\n"]
    assert found.damaged[0].frame == 1 and "claims 1,048,576 bytes" in found.damaged[0].reason
