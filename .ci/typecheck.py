"""Run mypy over the `mcpgym` package as the repository lays it out.

setuptools maps the repository's folders onto `mcpgym.*` (pyproject.toml, [tool.setuptools.package-dir]);
mypy cannot follow that mapping, so this script builds a temporary tree of symbolic links in the
package's own shape, runs mypy on it with the settings of pyproject.toml ([tool.mypy]) and prints
every message with the repository path of the file (`server/episode.py:12: error: ...`).
Exit status: mypy's.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build_view(target: Path) -> dict[str, Path]:
    """Link every mapped folder into ``target`` as the package tree; return view prefix -> repo folder."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    prefixes: dict[str, Path] = {}
    # Shallow packages first, so a sub-package's link lands inside its parent's directory.
    for package, folder in sorted(mapping.items(), key=lambda kv: kv[0].count(".")):
        dest = target.joinpath(*package.split("."))
        source = ROOT / folder
        if package.count(".") == 0:
            dest.mkdir(parents=True)
            for entry in source.iterdir():
                if entry.name != "__pycache__":
                    (dest / entry.name).symlink_to(entry)
        else:
            dest.symlink_to(source, target_is_directory=True)
        prefixes["/".join(package.split("."))] = source
    return prefixes


def main() -> int:
    """Build the view, run mypy, map the paths back; return mypy's exit status."""
    with tempfile.TemporaryDirectory(prefix="mcpgym-typecheck-") as tmp:
        prefixes = build_view(Path(tmp))
        out = subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "mcpgym"],
            cwd=tmp,
            capture_output=True,
            text=True,
        )
        longest_first = sorted(prefixes, key=len, reverse=True)

        def repo_path(match: re.Match[str]) -> str:
            path = match.group(0)
            for prefix in longest_first:
                if path == prefix or path.startswith(prefix + "/"):
                    return str((prefixes[prefix] / path[len(prefix) + 1 :]).relative_to(ROOT))
            return path

        for stream, text in ((sys.stdout, out.stdout), (sys.stderr, out.stderr)):
            stream.write(re.sub(r"(?m)^mcpgym/[\w/]+\.py", repo_path, text))
        return out.returncode


if __name__ == "__main__":
    sys.exit(main())
