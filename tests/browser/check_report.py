#!/usr/bin/env python3
"""Loads a schedlab HTML report in headless Chromium and checks it as a reader would see it.

Speaks the DevTools protocol over --remote-debugging-pipe (file descriptors 3 and 4, messages
ended by NUL), Python's standard library only. Checks:
  * the page loads with no console error or warning, no uncaught exception, no log entry of level
    error (a Content-Security-Policy violation, a failed load), and no request other than the
    report itself (nothing fetched from the network or the disk);
  * the DOM: the expected number of plots (svg.plot), each rendered with a size, with its x and
    y axis titles present, non-empty and inside the plot, and marks drawn; the JSON data block
    parses and names its schema; no script element other than the data block;
  * a screenshot (PNG) that is not blank.
Exit status 0 when every check passes; otherwise one line per failure on stderr and status 1.

Usage: check_report.py --chromium PATH --report FILE.html --plots N [--kinds strip,cdf,...]
                       [--screenshot OUT.png] [--width 1280] [--height 1600]
"""
import argparse
import json
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

DOM_CHECK = r"""
(() => {
  const out = {plots: [], scripts: document.scripts.length, title: document.title, json: null};
  for (const svg of document.querySelectorAll('svg.plot')) {
    const r = svg.getBoundingClientRect();
    const p = {id: svg.id, kind: svg.dataset.kind, width: r.width, height: r.height, axes: {}, marks: 0};
    for (const axis of ['x', 'y']) {
      const t = svg.querySelector('text.axis-title.' + axis);
      if (!t) { p.axes[axis] = null; continue; }
      const b = t.getBoundingClientRect();
      p.axes[axis] = {text: t.textContent.trim(), inside: b.width > 0 && b.height > 0 &&
                      b.left >= r.left - 1 && b.right <= r.right + 1 && b.top >= r.top - 1 &&
                      b.bottom <= r.bottom + 1};
    }
    for (const m of svg.querySelectorAll('circle, path, rect')) {
      const b = m.getBoundingClientRect();
      if (b.width > 0 || b.height > 0) p.marks++;
    }
    out.plots.push(p);
  }
  const data = document.getElementById('schedlab-data');
  if (data) { try { out.json = JSON.parse(data.textContent).schema; } catch (e) { out.json = 'error: ' + e; } }
  return out;
})()
"""


class Browser:
    def __init__(self, chromium, width, height):
        self.profile = tempfile.mkdtemp(prefix="schedlab-chromium-")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # The child's ends, moved above 4 first so that placing them at 3 and 4 clobbers nothing.
        import fcntl
        for name in ("to_browser_r", "from_browser_w"):
            fd = locals()[name]
            high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
            os.close(fd)
            if name == "to_browser_r":
                to_browser_r = high
            else:
                from_browser_w = high

        def child_fds():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
                f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
                "--remote-debugging-pipe", "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, pass_fds=(3, 4, to_browser_r, from_browser_w),
                                     preexec_fn=child_fds)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.next_id = 0
        self.buf = b""
        self.events = []

    def send(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        want = self.next_id
        deadline = time.monotonic() + timeout
        while True:
            m = self.read(deadline)
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            r, _, _ = select.select([self.from_browser], [], [], left)
            if r:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def wait_event(self, method, timeout=30):
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            m = self.read(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def close(self):
        try:
            self.send("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def png_is_blank(data):
    """True if the PNG is not a PNG or every pixel row is the same."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return True
    pos, idat, width = 8, b"", 0
    bpp = 4
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width = struct.unpack(">I", body[:4])[0]
            bpp = {2: 3, 6: 4}.get(body[9], 4)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = 1 + width * bpp
    rows = {raw[i + 1:i + stride] for i in range(0, len(raw), stride)}
    # Filtered rows: identical filtered rows means a uniform image; a report has many kinds.
    return len(rows) < 20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--plots", type=int, required=True)
    ap.add_argument("--kinds", default="")
    ap.add_argument("--screenshot")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=1600)
    a = ap.parse_args()
    url = "file://" + os.path.abspath(a.report)
    failures = []
    b = Browser(a.chromium, a.width, a.height)
    try:
        target = b.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = b.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            b.send(domain + ".enable", session=s)
        b.send("Emulation.setDeviceMetricsOverride",
               {"width": a.width, "height": a.height, "deviceScaleFactor": 1, "mobile": False}, session=s)
        b.send("Page.navigate", {"url": url}, session=s)
        b.wait_event("Page.loadEventFired")
        dom = b.send("Runtime.evaluate", {"expression": DOM_CHECK, "returnByValue": True}, session=s)
        if "exceptionDetails" in dom:
            failures.append(f"DOM check threw: {dom['exceptionDetails']}")
            dom = {}
        else:
            dom = dom["result"]["value"]
        shot = b.send("Page.captureScreenshot", {"format": "png"}, session=s)
        png = __import__("base64").b64decode(shot["data"])
        # Events that arrived while the page loaded and rendered.
        b.send("Runtime.evaluate", {"expression": "1"}, session=s)
        for e in b.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                failures.append(f"console {p['type']}: {[x.get('value', x.get('description')) for x in p.get('args', [])]}")
            elif m == "Runtime.exceptionThrown":
                failures.append(f"exception: {p.get('exceptionDetails', {}).get('text')}")
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                failures.append(f"log {p['entry']['level']}: {p['entry'].get('text')} {p['entry'].get('url', '')}")
            elif m == "Network.requestWillBeSent" and p.get("request", {}).get("url") != url:
                failures.append(f"request: {p['request']['url']}")
    finally:
        b.close()

    plots = dom.get("plots", [])
    if len(plots) != a.plots:
        failures.append(f"{len(plots)} plots, expected {a.plots}")
    if a.kinds:
        for k in a.kinds.split(","):
            if not any(p["kind"] == k for p in plots):
                failures.append(f"no plot of kind {k}")
    for p in plots:
        if p["width"] < 200 or p["height"] < 150:
            failures.append(f"{p['id']}: rendered {p['width']}x{p['height']}")
        for axis in ("x", "y"):
            t = p["axes"].get(axis)
            if not t or not t["text"]:
                failures.append(f"{p['id']} ({p['kind']}): no {axis} axis title")
            elif not t["inside"]:
                failures.append(f"{p['id']} ({p['kind']}): {axis} axis title '{t['text']}' is not inside the plot")
        if p["marks"] < 2:
            failures.append(f"{p['id']} ({p['kind']}): {p['marks']} marks drawn")
    if dom.get("json") != "schedlab.report.v1":
        failures.append(f"data block: {dom.get('json')}")
    if dom.get("scripts") != 1:
        failures.append(f"{dom.get('scripts')} script elements (only the JSON data block expected)")
    if png_is_blank(png):
        failures.append("the screenshot is blank")
    if a.screenshot:
        with open(a.screenshot, "wb") as f:
            f.write(png)
    for f in failures:
        print(f"check_report: {a.report}: {f}", file=sys.stderr)
    print(f"check_report: {a.report}: {len(plots)} plots ({','.join(p['kind'] for p in plots)}), "
          f"{'FAIL' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
