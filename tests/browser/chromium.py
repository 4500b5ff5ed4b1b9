"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
commands on file descriptor 3, replies and events on 4, each a JSON text ended by a NUL byte), so
nothing beyond the standard library is needed: Chromium (the browser) and Tab (one page of it, at a
chosen width, with or without scripts). Without Chromium the browser tests fail, saying how to
install it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL = (
    "headless Chromium is needed for the browser tests and was not found (looked for "
    + ", ".join(NAMES)
    + ", or the CHROMIUM variable): install it, e.g. `apt-get install -y chromium chromium-driver`"
)
WAIT = 30.0
PLACED = (
    "import os, sys\n"
    "for fd, at in zip(map(int, sys.argv[1:3]), (3, 4)):\n"
    "    os.dup2(fd, at)\n"
    "    os.close(fd)\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)
"""Starts Chromium with the pipe's ends where --remote-debugging-pipe wants them: fds 3 and 4."""


class Chromium:
    """A headless Chromium and its DevTools pipe."""

    def __init__(self, executable: str, profile: Path) -> None:
        self._executable = executable
        self._profile = profile
        self._next = 0
        self._buffer = b""
        self.events: list[dict[str, Any]] = []

    def __enter__(self) -> Chromium:
        commands, self._commands = os.pipe()
        self._replies, replies = os.pipe()
        theirs = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (commands, replies)]
        for fd in (commands, replies):
            os.close(fd)
        flags = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            f"--user-data-dir={self._profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self._log = (self._profile.parent / "chromium.log").open("wb")
        self._process = subprocess.Popen(
            [sys.executable, "-c", PLACED, *map(str, theirs), self._executable, *flags],
            pass_fds=theirs,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
        )
        for fd in theirs:
            os.close(fd)
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            self.send("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._commands)
        os.close(self._replies)
        self._log.close()

    def send(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> dict[str, Any]:
        """Send a command and wait for its reply; events that come meanwhile are kept."""
        number = self.post(method, params, session)
        deadline = time.monotonic() + WAIT
        while True:
            message = self.receive(deadline)
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result

    def post(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> int:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        return self._next

    def receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._replies], [], [], max(0.0, left))
            if not ready:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._replies, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        text, _, self._buffer = self._buffer.partition(b"\0")
        message: dict[str, Any] = json.loads(text)
        if "method" in message:
            self.events.append(message)
            if message["method"] == "Page.javascriptDialogOpening":
                self.post("Page.handleJavaScriptDialog", {"accept": True}, message.get("sessionId", ""))
        return message

    def tab(self) -> Tab:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        tab = Tab(self, session)
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=session)
        return tab


class Tab:
    """One page of the browser."""

    def __init__(self, browser: Chromium, session: str) -> None:
        self._browser = browser
        self._session = session

    def open(self, url: str) -> None:
        seen = len(self._browser.events)
        self._browser.send("Page.navigate", {"url": url}, self._session)
        deadline = time.monotonic() + WAIT
        while not any(
            e["method"] == "Page.loadEventFired" and e.get("sessionId") == self._session
            for e in self._browser.events[seen:]
        ):
            self._browser.receive(deadline)

    def value(self, expression: str) -> Any:
        result = self._browser.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, self._session
        )
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def until(self, expression: str) -> Any:
        """The expression's value once it is truthy (events such as a dialog's close come later)."""
        deadline = time.monotonic() + WAIT
        while not (value := self.value(expression)):
            if time.monotonic() > deadline:
                raise AssertionError(f"never true: {expression}")
            time.sleep(0.02)
        return value

    def type(self, selector: str, text: str) -> None:
        """Focus an input and type into it as a user would."""
        assert self.value(f"document.querySelector({json.dumps(selector)}).focus(), true")
        self._browser.send("Input.insertText", {"text": text}, self._session)

    def viewport(self, width: int, height: int = 900) -> None:
        """Lay the page out as a screen `width` CSS pixels wide (a phone's below 600)."""
        self._browser.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
            self._session,
        )

    def without_scripts(self) -> None:
        """Block the pages' scripts, as a browser may for a file it opened (the DevTools' own
        evaluations still run)."""
        self._browser.send("Emulation.setScriptExecutionDisabled", {"value": True}, self._session)

    def problems(self) -> list[str]:
        """Script errors, blocked content and dialogs this tab had."""
        found = []
        for event in self._browser.events:
            if event.get("sessionId") != self._session:
                continue
            match event["method"]:
                case "Runtime.exceptionThrown":
                    found.append(json.dumps(event["params"]["exceptionDetails"])[:500])
                case "Log.entryAdded" if event["params"]["entry"]["level"] == "error":
                    found.append(event["params"]["entry"]["text"])
                case "Page.javascriptDialogOpening":
                    found.append("dialog: " + event["params"]["message"])
        return found
