"""README's install and server lines as a newcomer on a fresh clone runs them (issue 37): mcpgym
is installed from the clone, so every ``pip install`` of it is ``pip install -e '.[EXTRA]'`` with
an extra pyproject declares (``pip install 'mcpgym[X]'`` asked PyPI for a package that is not
there); ``MCPGYM_READY`` is on stdout, as the README now says (it said stderr)."""

from __future__ import annotations

import re
import time
import tomllib
from pathlib import Path

from tests.support.servers import spawn_server

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_pip_install_of_mcpgym_is_from_the_clone() -> None:
    extras = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    )
    flat = " ".join(README.split())
    lines = re.findall(r"pip install (\S+(?: \S+)?)", flat)
    assert lines, "the README installs nothing?"
    assert "mcpgym[" not in " ".join(lines), [x for x in lines if "mcpgym[" in x]
    wanted = re.findall(r"pip install -e '\.\[([a-z-]+)\]'", flat)
    assert set(wanted) <= extras and {"dev", "inspect", "gym", "openenv", "atif", "ray", "local-model"} <= set(wanted)


def test_the_ready_line_is_on_stdout_as_the_readme_says() -> None:
    assert "MCPGYM_READY {url, token} on stdout" in README and "MCPGYM_READY line, stderr" not in README
    server = spawn_server(token="-")  # reads MCPGYM_READY from the process's stdout (a pipe of its own)
    try:
        assert server.url.startswith("http://127.0.0.1:") and server.token
        deadline = time.monotonic() + 10  # the token line follows the ready line
        while "control token" not in (err := server.stderr()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert f"control token (generated; also on the MCPGYM_READY line): {server.token}" in err
        assert "MCPGYM_READY {" not in err  # the ready line itself is on stdout only
    finally:
        server.stop()
