"""Headless Chromium driven over the DevTools protocol through pipes (``--remote-debugging-pipe``): no
network port, no websocket or browser-automation package. Enough to open a page, run JavaScript in it
(click, pick an option) and read the DOM back, plus the console errors and network requests it made."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
         "--no-first-run", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--remote-debugging-pipe"]


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    def __init__(self, exe: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="pairaudit-chrome-")
        r_cmd, self._w_cmd = os.pipe()  # the browser reads commands on fd 3
        self._r_ev, w_ev = os.pipe()  # and writes replies and events on fd 4
        cmd = shlex.join([exe, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"])
        self.proc = subprocess.Popen(["bash", "-c", f"exec 3<&{r_cmd} 4>&{w_ev} {cmd}"], pass_fds=(r_cmd, w_ev),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(r_cmd)
        os.close(w_ev)
        self._buf, self._n, self.events = b"", 0, []
        self.session: str | None = None

    def send(self, method: str, params: dict[str, Any] | None = None, session: bool = True) -> dict[str, Any]:
        self._n += 1
        msg: dict[str, Any] = {"id": self._n, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._w_cmd, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read()
            if m.get("id") == self._n:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buf:
            chunk = os.read(self._r_ev, 1 << 16)
            if not chunk:
                raise RuntimeError("the browser closed the pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def open(self, page: Path) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Runtime", "Network", "Log"):
            self.send(f"{domain}.enable")
        self.send("Page.navigate", {"url": page.resolve().as_uri()})
        deadline = time.time() + 60
        while self.js("document.readyState") != "complete":
            if time.time() > deadline:
                raise TimeoutError(f"{page} did not load")
            time.sleep(0.1)

    def js(self, expression: str) -> Any:
        res = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in res:
            raise RuntimeError(f"{expression[:80]}: {res['exceptionDetails']}")
        return res["result"].get("value")

    def console_errors(self) -> list[str]:
        out = []
        for e in self.events:
            p = e.get("params") or {}
            if e.get("method") == "Runtime.exceptionThrown":
                out.append(json.dumps(p.get("exceptionDetails"))[:300])
            elif e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning"):
                out.append(json.dumps(p.get("args"))[:300])
            elif e.get("method") == "Log.entryAdded" and (p.get("entry") or {}).get("level") == "error":
                out.append(p["entry"].get("text", "")[:300])
        return out

    def requests(self) -> list[str]:
        """URLs the page requested other than file: / data: ones."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"
                and not e["params"]["request"]["url"].startswith(("file:", "data:"))]

    def close(self) -> None:
        try:
            self.send("Browser.close", session=False)
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w_cmd)
        os.close(self._r_ev)
        shutil.rmtree(self.profile, ignore_errors=True)
