"""A damaged compressed run loses nothing but the damaged bytes (issue 36, compressed runs and
run-directory files).

A real run of the smoke suite (8 episodes, one zstd frame each) is damaged as a disk, a stray
write or a full disk would damage it, and then read through the real ``mcpgym`` command
(a subprocess, so its stderr is what a user sees): ``cat``, ``report``, ``score`` and
``run --resume``. The frame reader itself is checked on hypothesis-generated damage of any
offset and length. See docs/guarantees.md, "Compressed runs".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgym.evaluation.records.compressed import TRAJECTORIES_ZST, compress_line, read_frames

RUN = ["run", "--suite", "smoke", "--trials", "1", "--agent", "careful", "--quiet"]
EPISODES = 8


def mcpgym(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real command line, in a subprocess (stdout, stderr and the exit code as a user gets them)."""
    cmd = [sys.executable, "-c", "from mcpgym.evaluation.cli.app import main; main()", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.fixture(scope="module")
def server(http_server: tuple[str, str]) -> list[str]:
    url, token = http_server
    return ["--server", url, "--token", token]


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory: pytest.TempPathFactory, server: list[str]) -> Path:
    out = tmp_path_factory.mktemp("whole") / "run"
    res = mcpgym(*RUN, *server, "--out", str(out))
    assert res.returncode == 0, res.stderr
    return out


def copy_run(whole: Path, dest: Path) -> Path:
    run = dest / "run"
    shutil.copytree(whole, run, symlinks=True)
    return run


def spans(path: Path) -> list[tuple[int, int]]:
    found = read_frames(path.read_bytes())
    assert not found.damaged
    return [(f.start, f.end) for f in found.frames]


def episode_ids(text: str) -> list[str]:
    return [json.loads(line)["episode_id"] for line in text.splitlines() if line.strip()]


def test_eight_bytes_flipped_in_frame_3_cost_only_frame_3(tmp_path: Path, whole_run: Path, server: list[str]) -> None:
    run = copy_run(whole_run, tmp_path)
    path = run / TRAJECTORIES_ZST
    frames = spans(path)
    assert len(frames) == EPISODES
    data = bytearray(path.read_bytes())
    start, end = frames[2]
    middle = (start + end) // 2
    data[middle : middle + 8] = bytes(b ^ 0xFF for b in data[middle : middle + 8])  # bit rot inside frame 3
    path.write_bytes(bytes(data))
    all_ids = episode_ids(mcpgym("cat", str(whole_run)).stdout)

    cat = mcpgym("cat", str(run))
    assert cat.returncode == 0, cat.stderr
    assert episode_ids(cat.stdout) == all_ids[:2] + all_ids[3:]  # the 5 valid frames after it are kept and read
    assert "1 damaged frame left out" in cat.stderr and "frame 3 (bytes" in cat.stderr, cat.stderr

    report = mcpgym("report", str(run))
    assert report.returncode == 0, report.stderr
    assert "frame 3" in report.stderr, report.stderr
    md = (run / "report.md").read_text(encoding="utf-8")
    assert "Damaged frames" in md and "frame 3" in md and "7 of 8 planned" in md

    score = mcpgym("score", str(run), "--json")
    assert "frame 3" in score.stdout + score.stderr

    before = bytes(data)
    resumed = mcpgym(*RUN, *server, "--out", str(run), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    aside = run / f"{TRAJECTORIES_ZST}.damaged-1"
    assert aside.read_bytes() == before[start:end]  # the damaged bytes moved aside, whole
    assert "moved aside" in resumed.stderr and "frame 3" in resumed.stderr, resumed.stderr
    after = path.read_bytes()
    kept = b"".join(before[a:b] for a, b in frames if (a, b) != (start, end))
    assert after.startswith(kept)  # every valid frame kept byte for byte, in order
    assert len(spans(path)) == EPISODES  # and the damaged episode run again
    assert sorted(episode_ids(mcpgym("cat", str(run)).stdout)[:7]) == sorted(all_ids[:2] + all_ids[3:])


@pytest.mark.parametrize("cut", [2, 6])
def test_a_frame_header_cut_anywhere_is_a_torn_tail(
    tmp_path: Path, whole_run: Path, server: list[str], cut: int
) -> None:
    run = copy_run(whole_run, tmp_path)
    path = run / TRAJECTORIES_ZST
    whole = path.read_bytes()
    path.write_bytes(whole + compress_line(b'{"a": 1}\n')[:cut])  # a write stopped by a full disk
    cat = mcpgym("cat", str(run))
    assert cat.returncode == 0 and len(episode_ids(cat.stdout)) == EPISODES, cat.stderr
    assert "torn" in cat.stderr and "unexpected" not in cat.stderr
    report = mcpgym("report", str(run))
    assert report.returncode == 0 and "unexpected" not in report.stderr, report.stderr
    score = mcpgym("score", str(run))  # exit 1: a problem is listed, every episode scored
    assert score.returncode == 1 and "8 episodes" in score.stdout and "torn" in score.stdout, score.stdout[-800:]
    resumed = mcpgym(*RUN, *server, "--out", str(run), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert path.read_bytes() == whole  # the torn header cut, nothing else touched
    assert not list(run.glob("*.damaged-*"))


@settings(max_examples=150, deadline=None)
@given(
    st.integers(min_value=0, max_value=10_000),
    st.integers(min_value=1, max_value=40),
    st.sampled_from(["flip", "zero", "cut", "insert"]),
)
def test_any_damage_costs_only_the_frames_it_touches(offset: int, length: int, how: str) -> None:
    lines = [json.dumps({"n": n, "pad": "x" * (50 * n)}).encode() + b"\n" for n in range(12)]
    frames = [compress_line(line) for line in lines]
    data = b"".join(frames)
    bounds, at = [], 0
    for f in frames:
        bounds.append((at, at + len(f)))
        at += len(f)
    offset %= len(data)
    stop = min(len(data), offset + length)
    if how == "flip":
        hurt = data[:offset] + bytes(b ^ 0x5A for b in data[offset:stop]) + data[stop:]
    elif how == "zero":
        hurt = data[:offset] + b"\0" * (stop - offset) + data[stop:]
    elif how == "cut":
        hurt = data[:offset]
    else:
        hurt = data[:offset] + b"garbage!" * length + data[offset:]
    found = read_frames(hurt)
    got = [f.data for f in found.frames]
    if how == "cut":
        untouched = [lines[i] for i, (a, b) in enumerate(bounds) if b <= offset]
    elif how == "insert":
        untouched = [lines[i] for i, (a, b) in enumerate(bounds) if b <= offset or a >= offset]
    else:
        untouched = [lines[i] for i, (a, b) in enumerate(bounds) if b <= offset or a >= stop]
    assert all(line in got for line in untouched)  # every frame the damage did not touch is read
    assert all(d in lines for d in got)  # nothing read that was not written (checksums)
    if len(got) < len(lines) and how != "cut":
        assert found.damaged  # what is missing is reported


def test_decompression_stops_at_the_cap_whatever_the_header_says() -> None:
    kept = compress_line(b"after the bomb\n")
    # a frame that does not say its size, holding 64 MiB of zeros (a few KB on disk)
    writer = zstandard.ZstdCompressor(level=1, write_content_size=False).compressobj()
    quiet_bomb = b"".join(writer.compress(b"\0" * (1 << 20)) for _ in range(64)) + writer.flush()
    # a frame whose header claims 4 GiB (its bytes are 1 MiB of zeros)
    loud = bytearray(zstandard.ZstdCompressor(level=1).compress(b"\0" * (1 << 20)))
    assert zstandard.frame_content_size(bytes(loud)) == 1 << 20
    header = zstandard.get_frame_parameters(bytes(loud))
    assert header.content_size == 1 << 20
    fcs_at = loud.index((1 << 20).to_bytes(4, "little"), 4)
    loud[fcs_at : fcs_at + 4] = (0xFFFFFFFF).to_bytes(4, "little")
    tracemalloc.start()
    found = read_frames(quiet_bomb + kept + bytes(loud) + kept, limit=8 << 20)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [f.data for f in found.frames] == [b"after the bomb\n"] * 2
    assert [d.frame for d in found.damaged] == [1, 3]
    assert "more than the 8,388,608 bytes" in found.damaged[0].reason
    assert "claims 4,294,967,295 bytes" in found.damaged[1].reason
    assert peak < 24 << 20  # the bomb was read a chunk at a time and dropped at the cap


def test_run_files_replaced_by_symlinks_are_never_written_through(
    tmp_path: Path, whole_run: Path, server: list[str]
) -> None:
    spawned = tmp_path / "spawned"  # a run whose server mcpgym started: it has a server.log
    res = mcpgym(
        "run", "--task", "system.dark_mode", "--trials", "1", "--agent", "careful", "--quiet", "--out", str(spawned)
    )
    assert res.returncode == 0 and (spawned / "server.log").is_file(), res.stderr
    cases = {"server.log": (spawned, []), TRAJECTORIES_ZST: (copy_run(whole_run, tmp_path / "traj"), server)}
    for name, (run, where) in cases.items():
        victim = tmp_path / f"{name}.bashrc"
        victim.write_text("# my shell settings\n")
        (run / name).unlink()
        os.symlink(victim, run / name)
        args = ["run", "--task", "system.dark_mode", "--trials", "2", "--agent", "careful", "--quiet"]
        res = mcpgym(*args, *where, "--out", str(run), "--resume")
        assert res.returncode == 2, (name, res.stdout, res.stderr)
        assert "symlink" in res.stderr and "unexpected" not in res.stderr, res.stderr
        assert victim.read_text() == "# my shell settings\n"
    report = mcpgym("report", str(run))
    assert report.returncode == 2 and "symlink" in report.stderr, report.stderr


def test_snapshots_are_checked_against_their_hash_and_shape(tmp_path: Path, whole_run: Path) -> None:
    from mcpgym.evaluation.records.snapshots import snapshot_name

    snaps = sorted((copy_run(whole_run, tmp_path / "names") / "snapshots").iterdir())
    assert snaps
    cases = {}
    # a file of the wrong shape stored under its own (correct) hash
    run = copy_run(whole_run, tmp_path / "shape")
    wrong = {"not": "a snapshot"}
    name = snapshot_name(wrong).removeprefix("snapshots/")
    victim = sorted((run / "snapshots").iterdir())[0]
    ref = victim.name
    victim.unlink()
    (run / "snapshots" / ref).write_bytes(compress_line(json.dumps(wrong).encode()))
    cases["shape"] = (run, "is not a snapshot of mcpgym's")
    assert name != ref
    # a snapshot whose content changed after it was written
    run = copy_run(whole_run, tmp_path / "hash")
    first, second = sorted((run / "snapshots").iterdir())[:2]
    first.write_bytes(second.read_bytes())
    cases["hash"] = (run, "does not hold the snapshot its name says")
    # a symlinked snapshot
    run = copy_run(whole_run, tmp_path / "link")
    first = sorted((run / "snapshots").iterdir())[0]
    outside = tmp_path / "outside.json.zst"
    first.rename(outside)
    os.symlink(outside, first)
    cases["link"] = (run, "symlink")
    for what, (run, said) in cases.items():
        res = mcpgym("report", str(run))
        assert res.returncode == 2, (what, res.stderr)
        assert said in res.stderr and "unexpected" not in res.stderr and "KeyError" not in res.stderr, (
            what,
            res.stderr,
        )


def test_a_run_without_its_manifest_is_not_resumed(tmp_path: Path, whole_run: Path, server: list[str]) -> None:
    run = copy_run(whole_run, tmp_path)
    (run / "manifest.json").unlink()  # killed before the manifest was written
    before = (run / TRAJECTORIES_ZST).read_bytes()
    res = mcpgym(*RUN, *server, "--out", str(run), "--resume")
    assert res.returncode == 2, res.stderr
    assert "has no manifest.json" in res.stderr and "--force" in res.stderr, res.stderr
    assert (run / TRAJECTORIES_ZST).read_bytes() == before
