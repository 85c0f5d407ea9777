"""``mcpgym compare --out`` into a run directory (the hostile pass of issue 36): the comparison
there stood in the way of that run's ``--force`` ever after. It is refused, exit 2, naming the
run directory and what to do, with nothing written; beside the runs it is written, and the
runs' own ``--force`` and ``--resume`` still work."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli_runs import mcpgym_process

ARGS = ["run", "--task", "system.dark_mode", "--agent", "careful", "--faults", "none", "-q"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("runs")
    for name in ("a", "b"):
        done = mcpgym_process(*ARGS, "--trials", "1", "-o", str(root / name))
        assert done.returncode == 0, done.stderr
    return root / "a", root / "b"


def test_compare_out_inside_a_run_directory_is_refused_and_the_run_stays_usable(runs: tuple[Path, Path]) -> None:
    a, b = runs
    before = sorted(p.name for p in a.iterdir())
    for out in (a, a / "cmp", a / "snapshots" / "x"):
        done = mcpgym_process("compare", str(a), str(b), "--out", str(out))
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert done.stderr.startswith(f"error: --out {out} is") and "give --out another folder" in done.stderr
        assert str(a) in done.stderr
    assert sorted(p.name for p in a.iterdir()) == before  # nothing written
    beside = a.parent / "comparison"
    done = mcpgym_process("compare", str(a), str(b), "--out", str(beside))
    assert done.returncode == 0 and (beside / "compare.md").is_file(), done.stderr
    for extra in (["--trials", "2", "--resume"], ["--trials", "1", "--force"]):
        again = mcpgym_process(*ARGS, *extra, "-o", str(a))
        assert again.returncode == 0, (extra, again.stderr)
    assert (beside / "compare.md").is_file()  # the user's comparison is untouched
