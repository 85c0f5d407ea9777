"""``mcpgym complexmcp setup --dir DIR``: a folder holding ComplexMCP's apps and a virtual
environment of their own.

Their apps are fastmcp 2.x servers, which need the 1.x MCP SDK: they cannot share mcpgym's
environment. The folder gets:

* ``tree/``: a copy of the ComplexMCP tree's ``software/`` and ``benchmark/`` (the source tree
  is only read: never written, never run in place);
* ``venv/``: ``python -m venv``, then pip installs what the apps and their judge import
  (:data:`APP_PACKAGES`) at the versions their ``requirements.txt`` pins (passed to pip as a
  constraints file, so a pin is never loosened);
* ``complexmcp-setup.json``: mcpgym's record of the folder (:class:`SetupRecord`), written
  last: a folder without it holds no finished setup.

A folder that exists and holds anything without that record is refused (nothing of yours is
overwritten). A finished folder is reused as it is (a second setup only checks it), so CI sets
up once per run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcpgym.evaluation.complexmcp.apps import APP_NAMES
from mcpgym.kernel.exceptions import ServiceError

SOURCE_ENV = "MCPGYM_COMPLEXMCP_SOURCE"
"""The environment variable naming the ComplexMCP tree when ``--source`` is not given."""
RECORD = "complexmcp-setup.json"
"""mcpgym's record of a finished setup folder."""
APP_PACKAGES: tuple[str, ...] = (
    "fastmcp",
    "mcp",
    "shortuuid",
    "colorlog",
    "pyyaml",
    "levenshtein",
    "python-levenshtein",
)
"""What the apps (``software/``) and ``benchmark/judge.py`` import, as PyPI names."""
PIP_TIMEOUT = 1200.0
"""Wall seconds pip may take to build the environment (downloads included)."""
VERSION_TIMEOUT = 60.0
"""Wall seconds the environment's python may take to report its versions."""


class SetupError(ServiceError, RuntimeError):
    """A setup that cannot be done or a folder that is not set up; the message says why and what to do."""


class SetupRecord(BaseModel):
    """What ``complexmcp-setup.json`` records of a finished folder.

    Attributes:
        kind: always ``complexmcp-apps``. source: the ComplexMCP tree copied.
        versions: PyPI name -> version installed (read back from the environment).
    """

    model_config = ConfigDict(extra="forbid")

    kind: str = Field("complexmcp-apps", pattern="^complexmcp-apps$")
    source: str
    versions: dict[str, str]


def repo_root() -> Path:
    """The repository this mcpgym runs from (``evaluation/`` is one of its folders)."""
    return Path(__file__).resolve().parents[2]


def default_source() -> Path:
    """``$MCPGYM_COMPLEXMCP_SOURCE``, else the folder ``shared/complexmcp`` beside the repository."""
    given = os.environ.get(SOURCE_ENV)
    return Path(given) if given else repo_root().parent / "shared" / "complexmcp"


def check_source(source: Path) -> None:
    """Raise :class:`SetupError` unless ``source`` is a ComplexMCP tree: its seven
    ``software/<App>/app.py``, ``software/utils``, ``requirements.txt``,
    ``benchmark/data/data.parquet`` and ``benchmark/judge.py``."""
    needed = [f"software/{a}/app.py" for a in APP_NAMES] + [
        "software/utils/core.py",
        "requirements.txt",
        "benchmark/data/data.parquet",
        "benchmark/judge.py",
    ]
    missing = [n for n in needed if not (source / n).is_file()]
    if missing:
        raise SetupError(
            f"{source} is no ComplexMCP tree: it lacks {', '.join(missing[:4])}"
            f"{' ...' if len(missing) > 4 else ''} (give --source or ${SOURCE_ENV})"
        )


def refuse_linked_folder(folder: Path) -> None:
    """Raise :class:`SetupError` when one of ``folder``'s entries is a symbolic link (setup's
    writes would land where it points, somewhere the user never named), or when ``folder``
    (``--dir``) itself is a link to no directory (dangling, or a file). A ``--dir`` that links
    to a directory is the user's own name for that directory and is used as it. The error names
    the link."""
    if folder.is_symlink() and not folder.is_dir():
        raise SetupError(f"--dir {folder} is a symbolic link to no directory; give the folder itself")
    if folder.is_dir():
        for entry in folder.iterdir():
            if entry.is_symlink():
                raise SetupError(f"{entry} is a symbolic link; setup follows no link: give --dir a new folder")


def refuse_linked_source(source: Path) -> None:
    """Raise :class:`SetupError` when the source's ``requirements.txt`` or any file or folder
    under its ``software/`` and ``benchmark/`` is a symbolic link: copying it would copy
    whatever it points to (a user's private files, say) into the apps' tree. The error names
    the first link found and what to do."""
    found = [source / "requirements.txt"] if (source / "requirements.txt").is_symlink() else []
    for part in ("software", "benchmark"):
        for root, dirs, files in os.walk(source / part):
            found += [Path(root) / n for n in (*dirs, *files) if (Path(root) / n).is_symlink()]
            if found:
                break
        if found:
            break
    if found:
        raise SetupError(
            f"the ComplexMCP tree holds a symbolic link, {found[0]} (setup copies no link: it would copy "
            "what the link points to); replace it with the file itself, or give --source a tree without links"
        )


def _write_new(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, a file that must not exist yet: opened with ``O_EXCL`` and
    ``O_NOFOLLOW``, so a link put there is refused (:class:`SetupError`), never written through."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except FileExistsError:
        raise SetupError(
            f"{path} appeared while setting up (a link or a file of another's); nothing was written"
        ) from None
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def pins(requirements: Path) -> dict[str, str]:
    """``name==version`` lines of a requirements file, as lower-case name -> version."""
    found: dict[str, str] = {}
    for line in requirements.read_text(encoding="utf-8").splitlines():
        name, sep, version = line.split("#", 1)[0].strip().partition("==")
        if sep and name and version:
            found[name.strip().lower()] = version.strip()
    return found


class SetupFolder:
    """A finished setup folder: its paths and record (:meth:`open` checks it)."""

    def __init__(self, folder: Path, record: SetupRecord) -> None:
        folder = folder.absolute()  # the apps run in its tree: a relative path would move with them
        self.folder = folder
        self.record = record
        self.tree = folder / "tree"
        self.python = folder / "venv" / "bin" / "python"
        self.fastmcp = folder / "venv" / "bin" / "fastmcp"

    @classmethod
    def open(cls, folder: Path) -> SetupFolder:
        """The setup in ``folder``.

        Raises:
            SetupError: no finished setup there (no record, a record that is a symbolic link,
                an invalid one, or its venv or tree gone), naming the command that makes one.
        """
        path = folder / RECORD
        hint = f"run: mcpgym complexmcp setup --dir {folder}"
        if path.is_symlink():
            raise SetupError(f"{path} is a symbolic link, not mcpgym's setup record (no link is followed); {hint}")
        try:
            record = SetupRecord.model_validate_json(path.read_text(encoding="utf-8"))
        except OSError:
            raise SetupError(f"{folder} holds no ComplexMCP setup (no {RECORD}); {hint}") from None
        except ValidationError as exc:
            raise SetupError(f"{path} is not mcpgym's setup record ({exc.error_count()} errors); {hint}") from None
        made = cls(folder, record)
        for needed in (made.python, made.fastmcp, made.tree / "software"):
            if not needed.exists():
                raise SetupError(f"{folder}: {needed.relative_to(folder)} is gone; {hint} into a new folder")
        return made


def _versions(python: Path) -> dict[str, str]:
    code = "import importlib.metadata as m, json, sys; print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))"
    out = subprocess.run(
        [str(python), "-c", code, *APP_PACKAGES], capture_output=True, text=True, timeout=VERSION_TIMEOUT, check=False
    )
    if out.returncode != 0:
        raise SetupError(f"the apps' environment lacks a package: {' '.join(out.stderr.split())[-400:]}")
    import json

    return dict(json.loads(out.stdout))


def setup(folder: Path, source: Path | None = None, *, echo: object = print) -> SetupFolder:
    """Make (or check) the setup folder ``folder`` from the ComplexMCP tree ``source``.

    Args:
        folder: the folder to fill (created; must be new, empty, or an earlier setup).
        source: the ComplexMCP tree (default :func:`default_source`).
        echo: where progress lines go (a callable of one string).

    Returns:
        The finished :class:`SetupFolder`.

    Raises:
        SetupError: a source that is no ComplexMCP tree, a symbolic link in the source's
            files or as ``folder`` or its entries (:func:`refuse_linked_folder`, :func:`refuse_linked_source`), a folder holding other things, or a
            pip that failed or overran :data:`PIP_TIMEOUT` (the message ends with pip's last
            output).
    """
    say = echo if callable(echo) else print
    refuse_linked_folder(folder)
    if (folder / RECORD).exists():
        done = SetupFolder.open(folder)
        say(f"{folder} is set up already (apps from {done.record.source}); nothing to do")
        return done
    src = (source or default_source()).resolve()
    check_source(src)
    refuse_linked_source(src)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise SetupError(f"{folder} exists and holds other things; give --dir a new or empty folder")
    if folder.resolve().is_relative_to(src):
        raise SetupError(f"--dir {folder} is inside the ComplexMCP tree {src}, which is never written")
    folder.mkdir(parents=True, exist_ok=True)
    tree = folder / "tree"
    say(f"copying software/ and benchmark/ of {src} to {tree}")
    for part in ("software", "benchmark"):
        shutil.copytree(src / part, tree / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy2(src / "requirements.txt", folder / "constraints.txt")
    wanted = pins(folder / "constraints.txt")
    unpinned = [p for p in APP_PACKAGES if p not in wanted]
    if unpinned:
        raise SetupError(f"{src / 'requirements.txt'} pins no version of {', '.join(unpinned)}")
    say(f"building {folder / 'venv'}: {', '.join(f'{p}=={wanted[p]}' for p in APP_PACKAGES)}")
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True, timeout=PIP_TIMEOUT)
    python = folder / "venv" / "bin" / "python"
    try:
        pip = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            + ["-c", str(folder / "constraints.txt"), *APP_PACKAGES],
            capture_output=True,
            text=True,
            timeout=PIP_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SetupError(f"pip did not finish within {PIP_TIMEOUT:g} s") from None
    if pip.returncode != 0:
        tail = " ".join(ln for ln in pip.stderr.splitlines() if not ln.startswith("WARNING: Location"))
        raise SetupError(f"pip could not install the apps' packages: {tail[-600:]}")
    versions = _versions(python)
    record = SetupRecord(source=str(src), versions=versions)
    _write_new(folder / RECORD, record.model_dump_json(indent=1) + "\n")
    say(f"set up: {folder} ({', '.join(f'{k} {v}' for k, v in versions.items())})")
    return SetupFolder.open(folder)
