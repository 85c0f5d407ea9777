"""A headless Chromium driven over the DevTools protocol through a pipe (``--remote-debugging-pipe``).

No websocket library and no fixed port: Chromium reads commands on file descriptor 3 and
writes replies and events on 4, one JSON message per NUL-terminated record. Used by the
report's browser test to load a page, collect console errors and uncaught exceptions,
evaluate JavaScript, press keys and take screenshots.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome-headless-shell", "headless_shell")


def find_chromium() -> str | None:
    """The browser to use: ``$CHROMIUM`` when set, else the first of :data:`CANDIDATES` on PATH."""
    env = os.environ.get("CHROMIUM")
    if env:
        return env
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def require_browser() -> str:
    """The Chromium to test with; skips without one, or fails when ``MCPGYM_REQUIRE_BROWSER=1`` (CI)."""
    import pytest

    exe = find_chromium()
    if exe is None:
        if os.environ.get("MCPGYM_REQUIRE_BROWSER") == "1":
            pytest.fail("MCPGYM_REQUIRE_BROWSER=1 but no chromium found (apt-get install chromium)")
        pytest.skip("no chromium on PATH (.ci/run installs Debian's chromium)")
    return exe


class Browser:
    """One headless Chromium with one page, attached over a DevTools pipe.

    Attributes:
        errors: console messages of level error, uncaught exceptions and failed loads, as text.
    """

    def __init__(self, executable: str, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="mcpgym-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def child_fds() -> None:  # runs in the child: the pipe ends become fds 3 and 4
            high_r, high_w = os.dup2(to_browser_r, 200), os.dup2(from_browser_w, 201)  # no clobbering
            os.dup2(high_r, 3, inheritable=True)
            os.dup2(high_w, 4, inheritable=True)

        self.proc = subprocess.Popen(
            [
                executable,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--remote-debugging-pipe",
                f"--user-data-dir={self._profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=child_fds,
            pass_fds=(3, 4),  # kept open past exec (set up by child_fds)
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buf = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        self.errors: list[str] = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=True)

    # -- protocol -----------------------------------------------------------------------------
    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            ready, _, _ = select.select([self._from_browser], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError(f"chromium closed the pipe (exit code {self.proc.poll()})")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        msg = json.loads(raw)
        if "method" in msg:
            self._note(msg)
        return msg

    def _note(self, msg: dict[str, Any]) -> None:
        self._events.append(msg)
        method, params = msg["method"], msg.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            self.errors.append(f"uncaught: {d.get('exception', {}).get('description') or d.get('text')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(
                "console.error: " + " ".join(str(a.get("value", a.get("description"))) for a in params.get("args", []))
            )
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}".strip())

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: bool = False) -> dict[str, Any]:
        """Send one command (to the page when ``session``) and return its result.

        Raises:
            RuntimeError: when the browser answers with an error; TimeoutError after ``timeout``.
        """
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def wait_for(self, method: str, since: int = 0) -> dict[str, Any]:
        """Wait for an event (e.g. ``Page.loadEventFired``) received after the first ``since``
        events (so one that came in while a command waited for its reply counts) and return
        its params."""
        deadline = time.monotonic() + self.timeout
        seen = since
        while True:
            for ev in self._events[seen:]:
                if ev["method"] == method:
                    return ev.get("params", {})
            seen = len(self._events)
            self._read_message(deadline)

    # -- page ---------------------------------------------------------------------------------
    def open(self, url: str, width: int, height: int = 900, mobile: bool = False) -> None:
        """Set the viewport (CSS pixels) and load ``url`` afresh until its load event (via
        about:blank, so that a URL differing only in its #fragment is a real load)."""
        start = len(self._events)
        self.send("Page.navigate", {"url": "about:blank"}, session=True)
        self.wait_for("Page.loadEventFired", start)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
            session=True,
        )
        start = len(self._events)
        self.send("Page.navigate", {"url": url}, session=True)
        self.wait_for("Page.loadEventFired", start)

    def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable values).

        Raises:
            RuntimeError: when the expression throws.
        """
        res = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in res:
            raise RuntimeError(f"{expression!r} threw: {res['exceptionDetails'].get('text')}")
        return res.get("result", {}).get("value")

    def press(self, key: str) -> None:
        """Press and release a printable key (``j``, ``/``) in the page."""
        for kind in ("keyDown", "keyUp"):
            params = {"type": kind, "key": key, "text": key if kind == "keyDown" else ""}
            self.send("Input.dispatchKeyEvent", params, session=True)

    def screenshot(self, path: Path, full_page: bool = False, clip: dict[str, float] | None = None) -> Path:
        """Save a PNG of the viewport (or the whole page; or the page's region ``clip``:
        ``{"x", "y", "width", "height"}`` in CSS pixels of the document) to ``path``."""
        params: dict[str, Any] = {"format": "png"}
        if full_page or clip is not None:
            params["captureBeyondViewport"] = True
        if clip is not None:
            params["clip"] = {**clip, "scale": 1}
        data = self.send("Page.captureScreenshot", params, session=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        """Close the browser and remove its profile directory."""
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.send("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
