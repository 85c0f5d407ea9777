"""``mcpgym complexmcp setup`` follows no symbolic link (the hostile pass of issue 36): a link in
the ComplexMCP tree it copies (it copied what the link pointed to, a user's private file, into
the apps' tree), ``--dir`` given as a link, or a link planted among the folder's entries (its
setup record) is refused with one error line naming it, exit 1 (a setup error), before anything is copied."""

from __future__ import annotations

from pathlib import Path

from mcpgym.evaluation.complexmcp.apps import APP_NAMES
from mcpgym.evaluation.complexmcp.install import RECORD
from tests.support.cli_runs import cli_at_width


def _tree(root: Path) -> Path:
    """A source with every file :func:`check_source` asks for (no setup gets as far as pip)."""
    for name in [f"software/{a}/app.py" for a in APP_NAMES] + ["software/utils/core.py", "benchmark/judge.py"]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("# app\n", encoding="utf-8")
    (root / "benchmark" / "data").mkdir(parents=True, exist_ok=True)
    (root / "benchmark" / "data" / "data.parquet").write_bytes(b"PAR1")
    (root / "requirements.txt").write_text("fastmcp==2.0\n", encoding="utf-8")
    return root


def _setup(folder: Path, source: Path, monkeypatch, capsys) -> tuple[int, str]:
    code, _, err = cli_at_width(
        ["complexmcp", "setup", "--dir", str(folder), "--source", str(source)], 160, monkeypatch, capsys
    )
    return code, err


def test_a_link_in_the_source_tree_is_refused_and_nothing_is_copied(tmp_path: Path, monkeypatch, capsys) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("client_secret=xyz\n", encoding="utf-8")
    for where in ("software/utils/creds.txt", "benchmark/data", "requirements.txt"):
        src = _tree(tmp_path / f"src-{where.replace('/', '-')}")
        link = src / where
        if link.is_dir():
            link.rename(link.with_name("data-real"))
            link.symlink_to(link.with_name("data-real"), target_is_directory=True)
        else:
            link.unlink(missing_ok=True)
            link.symlink_to(secret)
        folder = tmp_path / f"setup-{where.replace('/', '-')}"
        code, err = _setup(folder, src, monkeypatch, capsys)
        assert code == 1 and len(err.strip().splitlines()) == 1, err
        assert "holds a symbolic link" in err and where.split("/")[-1] in err, err
        assert not folder.exists() or not any(folder.iterdir()), "copied before the refusal"


def test_dir_as_a_dangling_link_or_a_planted_record_link_is_refused(tmp_path: Path, monkeypatch, capsys) -> None:
    """A --dir linking to a directory is the user's own name for it (tests/evaluation/complexmcp's
    docs test sets up through one); a --dir linking to nothing or to a file, and any link among
    the folder's entries, is refused and nothing is written through it."""
    src = _tree(tmp_path / "src")
    for target in (tmp_path / "gone", tmp_path / "a-file"):
        if target.name == "a-file":
            target.write_text("mine\n")
        as_link = tmp_path / f"setup-link-{target.name}"
        as_link.symlink_to(target)
        code, err = _setup(as_link, src, monkeypatch, capsys)
        assert code == 1 and "is a symbolic link to no directory" in err, err
        assert not (tmp_path / "gone").exists()
    assert (tmp_path / "a-file").read_text() == "mine\n"
    planted = tmp_path / "setup-planted"
    planted.mkdir()
    (planted / RECORD).symlink_to(tmp_path / "nowhere.json")  # a dangling link: a write would follow it
    code, err = _setup(planted, src, monkeypatch, capsys)
    assert code == 1 and f"{RECORD} is a symbolic link" in err, err
    assert not (tmp_path / "nowhere.json").exists()
