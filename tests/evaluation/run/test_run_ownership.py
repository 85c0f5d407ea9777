"""Nothing of the user's is lost: a run directory is mcpgym's only by proof (issue 29).

Every path that deletes or replaces files is driven through the real CLI (``mcpgym run`` with
and without ``--force`` and ``--resume``, ``mcpgym report``) over a real HTTP server, on
directories holding what a user might keep there; each test compares a content hash of the
user's entries before and after. See docs/guarantees.md, "No user file is deleted".
"""

from __future__ import annotations

import hashlib
import json
import os
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from mcpgym.evaluation.cli.app import app
from mcpgym.evaluation.run.run_lock import LOCK_NAME
from mcpgym.evaluation.run.run_owner import MARKER_NAME, SERVER_LOG_HEADER, read_marker, write_marker
from mcpgym.evaluation.tasks import load_tasks

TASK = load_tasks("smoke")[0].id
UNREACHABLE = ["--server", "http://127.0.0.1:9", "--token", "t"]  # a refusal must come before any server use
RUN = ["run", "--task", TASK, "--trials", "1", "--agent", "careful", "--quiet"]


def tree_hash(root: Path, *, skip: frozenset[str] = frozenset()) -> dict[str, str]:
    """Every entry under ``root`` (relative path -> sha256 of a file's bytes, ``dir`` for a
    folder, ``-> target`` for a symlink), leaving out top-level names in ``skip``."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if rel.split("/")[0] in skip:
                continue
            if p.is_symlink():
                out[rel] = f"-> {os.readlink(p)}"
            elif p.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def run_cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.output


def refused(out: Path, *extra: str) -> str:
    """Run into ``out`` (server unreachable: a refusal comes first) and return the message."""
    code, text = run_cli(*RUN, *UNREACHABLE, "--out", str(out), *extra)
    assert code == 2, text
    assert "Nothing was deleted" in text or "leaves it alone" in text, text
    return " ".join(text.split())


# -- the cases of the issue, and their neighbours -------------------------------------------
def write_files(root: Path, files: dict[str, bytes | str]) -> None:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)


USER_DIRS = {
    "a snapshots/ backup": {"snapshots/2025-backup/db.sql": "CREATE TABLE t (x int);"},
    "manifest and report": {"manifest.json": '{"mine": true}', "report.md": "# my notes\n"},
    "run-file names only": {
        "trajectories.jsonl": "",
        "scores.json": "{}",
        "server.log": "x",
        "report.html": "<p>mine</p>",
    },
    "a snapshot-named file": {"snapshots/0123456789abcdef0123.json": "{}"},
    "an mcpgym-like manifest": {"manifest.json": json.dumps({"manifest_version": 1, "run_id": "0" * 32})},
    "a forged marker": {MARKER_NAME: '{"mcpgym_run": 1, "run_id": "not-hex"}', "data.csv": "a,b\n"},
    "a lone binary file": {"photo.jpg": bytes(range(256))},
}


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
@pytest.mark.parametrize("files", list(USER_DIRS.values()), ids=list(USER_DIRS))
def test_a_directory_mcpgym_did_not_write_is_refused_and_kept(tmp_path: Path, files: dict, force: bool) -> None:
    out = tmp_path / "out"
    write_files(out, files)
    before = tree_hash(out)
    msg = refused(out, *(["--force"] if force else []))
    assert "no .mcpgym-run marker" in msg
    top = sorted({rel.split("/")[0] for rel in files})
    assert all(name in msg for name in top), msg  # what is in the way is listed
    assert tree_hash(out) == before  # not even a lock file is left behind


def test_resume_of_a_directory_that_is_no_run_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_files(out, {"trajectories.jsonl": "my own lines\n", "notes.txt": "keep"})
    before = tree_hash(out)
    msg = refused(out, "--resume")
    assert "is not an mcpgym run directory" in msg and "notes.txt" in msg
    assert tree_hash(out) == before


def test_resume_of_a_directory_with_a_manifest_of_its_own_is_refused_as_no_run(tmp_path: Path) -> None:
    # a user's own manifest.json (no marker, not mcpgym's shape) is named as such, not read for
    # run settings ("the run's recorded settings do not validate: field 'trials'...")
    out = tmp_path / "out"
    write_files(out, {"manifest.json": json.dumps({"name": "my app", "trials": None}), "notes.txt": "keep"})
    before = tree_hash(out)
    msg = refused(out, "--resume")
    assert "lacks what every mcpgym manifest holds" in msg and "notes.txt" in msg, msg
    assert "do not validate" not in msg
    assert tree_hash(out) == before


def test_symlinks_and_special_entries_are_never_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    for link_name in ("report.md", "manifest.json", LOCK_NAME, "snapshots"):
        out = tmp_path / f"out-{link_name.strip('.')}"
        out.mkdir()
        (out / link_name).symlink_to(victim)
        before = tree_hash(out)
        for extra in ([], ["--force"]):
            refused(out, *extra)
        assert tree_hash(out) == before and victim.read_text() == "precious"
    # a FIFO named like a run file neither blocks nor is removed
    fifo_dir = tmp_path / "fifo"
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / "scores.json")
    assert "scores.json" in refused(fifo_dir, "--force")
    assert (fifo_dir / "scores.json").exists()


def test_a_lock_file_mcpgym_did_not_write_is_not_truncated(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_files(out, {LOCK_NAME: "my lock notes"})
    msg = refused(out)
    assert LOCK_NAME in msg
    assert (out / LOCK_NAME).read_text() == "my lock notes"


# -- a proven run directory --------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(http_server: tuple[str, str]) -> list[str]:
    url, token = http_server
    return ["--server", url, "--token", token]


def real_run(out: Path, server: list[str], *extra: str) -> None:
    code, text = run_cli(*RUN, *server, "--out", str(out), *extra)
    assert code == 0, text


def test_force_needs_the_same_proof_and_deletes_only_its_own_files(tmp_path: Path, server: list[str]) -> None:
    out = tmp_path / "run"
    real_run(out, server)
    first_id = read_marker(out)
    assert first_id is not None
    assert json.loads((out / "manifest.json").read_text())["run_id"] == first_id
    snaps = sorted(p.name for p in (out / "snapshots").iterdir())
    assert snaps  # a compact run: snapshot files by content hash
    # a file of the user's inside the run, in each place: --force refuses, lists it, deletes nothing
    for rel in ("notes.txt", "snapshots/notes.txt", "snapshots/2025-backup/db.sql"):
        write_files(out, {rel: "mine"})
        before = tree_hash(out, skip=frozenset({LOCK_NAME}))
        msg = refused(out, "--force")
        assert rel.split("/2025")[0] in msg or "snapshots/2025-backup/" in msg, msg
        assert tree_hash(out, skip=frozenset({LOCK_NAME})) == before
        target = out / rel
        target.unlink()
        if target.parent.name == "2025-backup":
            target.parent.rmdir()
    # a manifest of another run under this marker: not ours
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "run_id": "f" * 32}))
    assert "belongs to run ffff" in refused(out, "--force")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
    # without --force a finished run is refused; with it, replaced: a new run id, only own files
    assert "--resume" in refused(out)
    real_run(out, server, "--force")
    assert read_marker(out) not in (None, first_id)
    assert sorted(p.name for p in out.iterdir()) == sorted(  # the run's lock file went with it
        [
            MARKER_NAME,
            "manifest.json",
            "report.html",
            "report.md",
            "scores.json",
            "snapshots",
            "trajectories.jsonl.zst",
        ]
    )


def test_force_deletes_a_file_by_its_name_only_with_a_proof_of_its_content(tmp_path: Path, server: list[str]) -> None:
    """Each run file ``--force`` deletes needs a proof it holds what mcpgym wrote there: a
    ``scores.json`` that parses as mcpgym's scores, a ``server.log`` starting with mcpgym's first
    line, trajectory records, a snapshot whose name is its content's hash, a temporary file
    starting as its document does (docs/guarantees.md). A user's file under any of those names
    is in the way: refused, named, nothing deleted."""
    out = tmp_path / "run"
    real_run(out, server)
    snap = sorted((out / "snapshots").iterdir())[0].relative_to(out).as_posix()
    for rel, mine in (
        ("scores.json", '{"mine": 1}\n'),
        ("scores.json", '{"agents": {"me": "not scores"}}\n'),
        ("server.log", "my own log\n"),
        ("trajectories.jsonl.zst", "keep\n"),
        ("trajectories.jsonl", '{"a": 1}\n'),
        (".scores.json.tmp", "my notes\n"),
        (snap, "{}"),
    ):
        path = out / rel
        kept = path.read_bytes() if path.exists() else None
        path.write_text(mine)
        before = tree_hash(out, skip=frozenset({LOCK_NAME}))
        msg = refused(out, "--force")
        assert f"in the way: {rel}" in msg, (rel, msg)
        assert tree_hash(out, skip=frozenset({LOCK_NAME})) == before
        if kept is None:
            path.unlink()
        else:
            path.write_bytes(kept)
    (out / "server.log").write_text(SERVER_LOG_HEADER + "boom\n")  # what mcpgym writes: deleted
    (out / ".scores.json.tmp").write_text('{\n  "agents": {')  # an interrupted write of scores
    real_run(out, server, "--force")
    assert not (out / "server.log").exists() and not (out / ".scores.json.tmp").exists()


def test_a_run_marker_without_a_manifest_proves_only_a_server_log(tmp_path: Path) -> None:
    """A marker alone (copied, or of a run that failed before its manifest) lets ``--force``
    delete only what a run writes before its manifest: its ``server.log``. Run files that pass
    their content proof, a ``scores.json`` mcpgym could have written among them, are in the way."""
    out = tmp_path / "out"
    out.mkdir()
    write_marker(out)
    write_files(out, {"scores.json": '{"agents": {}}\n', "server.log": SERVER_LOG_HEADER})
    before = tree_hash(out)
    assert "in the way: scores.json" in refused(out, "--force")
    assert tree_hash(out) == before
    (out / "scores.json").unlink()
    code, text = run_cli(*RUN, *UNREACHABLE, "--out", str(out), "--force")  # claimed, then the server fails
    assert "in the way" not in text and not (out / "server.log").exists(), text


def test_resume_refuses_an_unknown_manifest_version_naming_the_one_it_reads(tmp_path: Path, server: list[str]) -> None:
    out = tmp_path / "run"
    real_run(out, server)
    manifest = json.loads((out / "manifest.json").read_text())
    for version in (99, 0, "1", None):
        (out / "manifest.json").write_text(json.dumps({**manifest, "manifest_version": version}))
        before = tree_hash(out, skip=frozenset({LOCK_NAME}))
        code, text = run_cli(*RUN, *server, "--out", str(out), "--resume")
        assert code == 2, text
        flat = " ".join(text.split())
        assert "this mcpgym reads manifest_version 1" in flat or "it reads manifest_version 1" in flat, flat
        assert tree_hash(out, skip=frozenset({LOCK_NAME})) == before


def test_a_run_written_before_markers_is_resumed_and_claimed(tmp_path: Path, server: list[str]) -> None:
    out = tmp_path / "run"
    real_run(out, server)
    (out / MARKER_NAME).unlink()  # what a run of an earlier mcpgym looks like
    manifest = json.loads((out / "manifest.json").read_text())
    manifest.pop("run_id")
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert "no .mcpgym-run marker" in refused(out, "--force")  # not enough proof to delete
    real_run(out, server, "--resume")
    assert read_marker(out) == json.loads((out / "manifest.json").read_text())["run_id"]


def test_report_replaces_only_its_own_report_files(tmp_path: Path, server: list[str]) -> None:
    out = tmp_path / "run"
    real_run(out, server)
    code, text = run_cli("report", str(out))
    assert code == 0, text  # its own files: replaced
    for name, mine in (("report.md", "# My analysis\n"), ("report.html", "<html>mine</html>")):
        (out / name).write_text(mine)
        before = tree_hash(out, skip=frozenset({LOCK_NAME}))
        code, text = run_cli("report", str(out))
        assert code == 2 and name in text and "was not written by mcpgym" in " ".join(text.split()), text
        assert tree_hash(out, skip=frozenset({LOCK_NAME})) == before  # neither file was written
        (out / name).unlink()
    victim = tmp_path / "victim.md"
    victim.write_text("# mcpgym run report\nbut a symlink's target is never written through\n")
    (out / "report.md").symlink_to(victim)
    code, text = run_cli("report", str(out))
    assert code == 2 and victim.read_text().endswith("never written through\n")


# -- the property --------------------------------------------------------------------------------
NAMES = st.sampled_from(
    [
        "manifest.json",
        "report.md",
        "report.html",
        "scores.json",
        "trajectories.jsonl",
        "trajectories.jsonl.zst",
        "0123456789abcdef0123.json.zst",
        "server.log",
        "snapshots",
        MARKER_NAME,
        ".manifest.json.tmp",
        "0123456789abcdef0123.json",
        ".tmp-abc.json",
        "2025-backup",
        "db.sql",
    ]
) | st.text(string.ascii_letters + string.digits + "._-", min_size=1, max_size=12).filter(
    lambda s: s not in (".", "..", LOCK_NAME)
)
CONTENT = st.one_of(
    st.binary(max_size=64),
    st.sampled_from(['{"manifest_version": 1}', '{"mcpgym_run": 1, "run_id": "zz"}', "", "# mcpgym run report\n"]),
)
TREE = st.recursive(
    CONTENT,
    lambda children: st.dictionaries(NAMES, children, min_size=1, max_size=4),
    max_leaves=8,
)


def materialise(root: Path, tree: dict) -> None:
    for name, node in tree.items():
        p = root / name
        if isinstance(node, dict):
            p.mkdir()
            materialise(p, node)
        else:
            p.write_bytes(node.encode() if isinstance(node, str) else node)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=st.dictionaries(NAMES, TREE, min_size=1, max_size=5), force=st.booleans())
def test_property_run_out_deletes_or_changes_nothing_it_did_not_write(
    tmp_path_factory: pytest.TempPathFactory, tree: dict, force: bool
) -> None:
    out = tmp_path_factory.mktemp("user") / "out"
    out.mkdir()
    materialise(out, tree)
    before = tree_hash(out)
    code, text = run_cli(*RUN, *UNREACHABLE, "--out", str(out), *(["--force"] if force else []))
    assert code != 0, text  # never a run over the user's files
    assert tree_hash(out) == before, text


def test_atomic_run_files_get_the_users_usual_mode(tmp_path: Path) -> None:
    """Files written whole (report.md/html, the marker, snapshots) get 0666 less the umask, as
    ``open`` would give them, not mkstemp's owner-only 0600 (a new user found report.html 0600)."""
    import os

    from mcpgym.evaluation.records.atomic import write_atomic

    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "report.md", b"# r\n", prefix=".report.md.", suffix=".tmp")
    finally:
        os.umask(old)
    assert (tmp_path / "report.md").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "report.md").read_bytes() == b"# r\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]
