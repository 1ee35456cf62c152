"""Open a page of the lab in headless Chromium (Debian's `chromium`, installed by setup.sh) as a
person would from the file system, and say what it saw: every request the page made, its images'
natural sizes, its tables, its text and a screenshot.

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: commands on its
fd 3, replies and events on its fd 4, each a JSON message ended by a NUL byte), so the test opens
no port and needs no driver package. Every run gets a fresh profile directory.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# as the tests' brief asks: no sandbox (root), no GPU, nothing Chromium fetches for itself
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--remote-debugging-pipe")
WIDTH = 1280            # the screenshot's width, px; its height is the page's
MAX_HEIGHT = 16384      # Chromium's largest capture
LOCAL = ("file://", "data:", "about:")   # what a request may ask for without leaving the machine
SHOWN = 200             # characters of a URL kept (an embedded image's data: URL is its whole PNG)
PAGE_FACTS = """JSON.stringify({
  images: [...document.images].map(i => ({src: i.src.slice(0, 40), width: i.naturalWidth, done: i.complete})),
  tables: [...document.querySelectorAll('table')].map(t => t.innerText.split('\\n')[0]),
  text: document.body.innerText,
  resources: performance.getEntriesByType('resource').map(e => e.name),
})"""


@dataclass
class Visit:
    requests: list[str]     # every URL the page asked for (Network.requestWillBeSent), the page first, cut short
    images: list[dict]      # {src, width (natural), done} of each <img>
    tables: list[str]       # each <table>'s first line
    text: str               # the page's visible text
    screenshot: Path
    size: tuple[int, int]   # the screenshot's width and height, px

    @property
    def remote(self) -> list[str]:
        """The requests that would have left the file system."""
        return [url for url in self.requests if not url.startswith(LOCAL)]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "no chromium on PATH: `sudo ./setup.sh` installs it (Debian's chromium)"
    return found


class DevTools:
    """One Chromium process and its protocol pipe."""

    def __init__(self, timeout: float = 60.0):
        self.profile = Path(tempfile.mkdtemp(prefix="mrclab-chromium-"))
        commands_r, self.commands = os.pipe()
        self.replies, replies_w = os.pipe()
        # bash (dash takes no fd above 9) puts the pipe's ends on fds 3 and 4, where Chromium looks
        # for them; from above them, so that neither redirection overwrites the other's source
        commands_r, replies_w = (high_fd(fd) for fd in (commands_r, replies_w))
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$@" 3<&{commands_r} 4>&{replies_w}', "bash", chromium(), *FLAGS,
             f"--user-data-dir={self.profile}", f"--window-size={WIDTH},900", "about:blank"],
            pass_fds=(commands_r, replies_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(commands_r)
        os.close(replies_w)
        self.timeout, self.buffer, self.next_id, self.events = timeout, b"", 0, []

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        """The result of one command; the events that arrive meanwhile are kept in `events`."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        while True:
            reply = self.receive()
            if reply.get("id") == self.next_id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return reply["result"]
            self.events.append(reply)

    def receive(self) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0 and select.select([self.replies], [], [], left)[0], "Chromium did not answer"
            chunk = os.read(self.replies, 1 << 20)
            assert chunk, f"Chromium exited ({self.proc.poll()})"
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)

    def wait_for(self, method: str, session: str) -> dict:
        """The first event `method` of `session`, from those kept or those still to come."""
        while True:
            for event in self.events:
                if event.get("method") == method and event.get("sessionId") == session:
                    return event
            self.events.append(self.receive())

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except AssertionError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.commands, self.replies):
            os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)


def high_fd(fd: int, lowest: int = 10) -> int:
    """`fd` moved to a number at least `lowest`."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, lowest)
    os.close(fd)
    return moved


def png_size(data: bytes) -> tuple[int, int]:
    return struct.unpack(">II", data[16:24])


def visit(page: Path, screenshot: Path) -> Visit:
    """Open `page` from the file system, wait for its load event, read it and capture all of it."""
    browser = DevTools()
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Network", "Page", "Runtime"):
            browser.send(f"{domain}.enable", session=session)
        browser.send("Page.navigate", {"url": page.absolute().as_uri()}, session)
        browser.wait_for("Page.loadEventFired", session)
        facts = json.loads(browser.send("Runtime.evaluate", {"expression": PAGE_FACTS, "returnByValue": True},
                                        session)["result"]["value"])
        content = browser.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
        height = min(MAX_HEIGHT, int(content["height"]))
        browser.send("Emulation.setDeviceMetricsOverride", {"width": WIDTH, "height": height, "deviceScaleFactor": 1,
                                                            "mobile": False}, session)
        shot = base64.b64decode(browser.send("Page.captureScreenshot", {"format": "png"}, session)["data"])
        screenshot.write_bytes(shot)
        requests = [e["params"]["request"]["url"][:SHOWN] for e in browser.events
                    if e.get("method") == "Network.requestWillBeSent" and e.get("sessionId") == session]
    finally:
        browser.close()
    # what the page's own Performance API saw load, in case an event was missed
    requests += [url[:SHOWN] for url in facts["resources"] if url[:SHOWN] not in requests]
    return Visit(requests, facts["images"], facts["tables"], facts["text"], screenshot, png_size(shot))
