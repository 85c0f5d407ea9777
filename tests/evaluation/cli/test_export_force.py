"""What ``mcpgym export`` writes into a run directory is mcpgym's: ``mcpgym run --force`` replaces
it with the rest of the run (it refused: "holds entries mcpgym did not write; in the way:
trajectories.atif.jsonl"), and ``export --force`` replaces its own earlier output, never a file
it did not write (found by a new-user try).

Every command runs for real, in-process through :func:`mcpgym.evaluation.cli.main`, against a real
mcpgym HTTP server, on real files in ``tmp_path``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpgym.evaluation.cli import main
from mcpgym.evaluation.cli.export import ExportFormat
from mcpgym.evaluation.run.run_owner import EXPORT_FILE_NAMES, RUN_FILE_NAMES
from tests.support.cli_runs import one_episode_args

pytest.importorskip("atif", reason="mcpgym export --format atif needs the [atif] extra")


def cli(args: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    """Run ``mcpgym ARGS``; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


run_args = one_episode_args


def episode_ids(path: Path) -> list[str]:
    return [json.loads(line)["session_id"] for line in path.read_text().splitlines()]


def test_every_export_format_writes_a_run_file_by_default() -> None:
    assert set(EXPORT_FILE_NAMES) == {f.value for f in ExportFormat}
    assert set(EXPORT_FILE_NAMES.values()) <= set(RUN_FILE_NAMES)


def test_run_force_replaces_the_export_and_export_force_replaces_only_its_own(
    http_server, tmp_path: Path, capsys
) -> None:
    run = tmp_path / "r2"
    code, _, err = cli(run_args(http_server, run), capsys)
    assert code == 0, err
    code, out, err = cli(["export", "--format", "atif", str(run)], capsys)
    assert code == 0, err
    export = run / "trajectories.atif.jsonl"
    first = episode_ids(export)
    assert len(first) == 1 and "wrote 1 ATIF trajectory to" in out

    # run --force: the export is one of the run's files, replaced with the rest of the run
    code, _, err = cli(run_args(http_server, run, "--force"), capsys)
    assert code == 0, err
    assert not export.exists()

    code, _, err = cli(["export", "--format", "atif", str(run)], capsys)
    assert code == 0, err
    second = episode_ids(export)
    assert second != first

    # without --force an existing output is never replaced, and the message says what to do
    code, _, err = cli(["export", "--format", "atif", str(run)], capsys)
    assert code == 2 and "exists; pass --force to replace an earlier export" in err
    assert episode_ids(export) == second

    # with --force, mcpgym's own earlier export is replaced (after another run: new episodes)
    code, _, err = cli(run_args(http_server, tmp_path / "r3"), capsys)
    assert code == 0, err
    code, _, err = cli(["export", "--format", "atif", str(tmp_path / "r3"), "--out", str(export), "--force"], capsys)
    assert code == 0, err
    third = episode_ids(export)
    assert third not in (first, second) and len(third) == 1

    # a run directory with a file mcpgym did not write is still refused by run --force
    (run / "notes.txt").write_text("mine\n")
    code, _, err = cli(run_args(http_server, run, "--force"), capsys)
    assert code == 2 and "in the way: notes.txt" in err
    assert export.is_file() and (run / "notes.txt").read_text() == "mine\n"


def test_export_force_never_overwrites_a_file_it_did_not_write(http_server, tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    code, _, err = cli(run_args(http_server, run), capsys)
    assert code == 0, err
    ours = tmp_path / "ours.jsonl"
    code, _, err = cli(["export", "--format", "atif", str(run), "--out", str(ours)], capsys)
    assert code == 0, err
    doc = json.loads(ours.read_text())
    foreign_doc = {k: v for k, v in doc.items() if k != "extra"}  # an ATIF document of another tool

    targets = {
        "notes.txt": "my precious notes\n",
        "other-tool.atif.jsonl": json.dumps(foreign_doc) + "\n",
        "edited.jsonl": ours.read_text() + "my own note\n",  # an export the user added to
        "empty.jsonl": "",
        "list.jsonl": "[1, 2]\n",
    }
    for name, text in targets.items():
        path = tmp_path / name
        path.write_text(text)
        code, _, err = cli(["export", "--format", "atif", str(run), "--out", str(path), "--force"], capsys)
        assert code == 2, (name, err)
        assert "is not an ATIF export written by mcpgym" in err and "nothing was overwritten" in err
        assert path.read_text() == text, name

    # a symlink to mcpgym's own export is not replaced either (nor written through)
    link = tmp_path / "link.jsonl"
    link.symlink_to(ours)
    before = ours.read_text()
    code, _, err = cli(["export", "--format", "atif", str(run), "--out", str(link), "--force"], capsys)
    assert code == 2 and "is not an ATIF export written by mcpgym" in err
    assert link.is_symlink() and ours.read_text() == before

    # a folder in the way
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    code, _, err = cli(["export", "--format", "atif", str(run), "--out", str(folder), "--force"], capsys)
    assert code == 2 and folder.is_dir() and not any(folder.iterdir())


def test_a_run_without_episodes_is_not_exported(tmp_path: Path, capsys) -> None:
    """An export of nothing would be an empty file that no later --force could prove mcpgym's."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "trajectories.jsonl.zst").write_bytes(b"")
    code, _, err = cli(["export", "--format", "atif", str(run)], capsys)
    assert code == 2 and "holds no episode: nothing to export" in err
    assert not (run / "trajectories.atif.jsonl").exists()


@pytest.mark.parametrize("name", ["report.md", "report.html", "trajectories.atif.jsonl"])
def test_run_force_leaves_a_run_file_mcpgym_did_not_write(http_server, tmp_path, capsys, name):
    """A file under one of mcpgym's run-file names that mcpgym did not write (a report edited
    past its header, the user's own text) is in the way of ``run --force``, as it is of
    ``mcpgym report`` and ``export --force``: refused, unchanged (a hostile try's finding)."""
    run = tmp_path / "run"
    code, _, err = cli(run_args(http_server, run), capsys)
    assert code == 0, err
    user = run / name
    user.write_text("my own notes, not mcpgym's\n", encoding="utf-8")
    code, _, err = cli(run_args(http_server, run, "--force"), capsys)
    assert code == 2 and name in err, err
    assert user.read_text(encoding="utf-8") == "my own notes, not mcpgym's\n"
    user.unlink()
    code, _, err = cli(run_args(http_server, run, "--force"), capsys)  # mcpgym's own are replaced
    assert code == 0, err
    assert (run / "report.md").read_text(encoding="utf-8").startswith("# mcpgym run report\n")


def test_export_counts_in_words_writes_standard_output_on_dash_and_names_a_missing_folder(
    http_server, tmp_path: Path, capsys, monkeypatch
) -> None:
    """ "wrote 1 ATIF trajectory" (not "1 atif trajectories"); ``--out -`` is standard output (no
    file named "-"); an --out in a missing folder or naming a folder is one plain line."""
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    code, _, err = cli(run_args(http_server, run), capsys)
    assert code == 0, err
    code, out, err = cli(["export", "--format", "atif", str(run)], capsys)
    assert code == 0 and out == f"wrote 1 ATIF trajectory to {run / 'trajectories.atif.jsonl'}\n", (out, err)

    code, out, err = cli(["export", "--format", "atif", str(run), "--out", "-"], capsys)
    assert code == 0, err
    [doc] = [json.loads(line) for line in out.splitlines()]
    assert doc == json.loads((run / "trajectories.atif.jsonl").read_text())
    assert err == "wrote 1 ATIF trajectory to standard output\n"
    assert not (tmp_path / "-").exists()

    code, out, err = cli(["export", "--format", "atif", str(run), "--out", "nodir/x.jsonl"], capsys)
    assert code == 2 and "Errno" not in err and len(err.splitlines()) == 1, err
    assert "cannot write nodir/x.jsonl: its folder nodir does not exist" in err
    code, out, err = cli(["export", "--format", "atif", str(run), "--out", str(run)], capsys)
    assert code == 2 and f"--out {run} is a directory: give a file name (or - for standard output)" in err
