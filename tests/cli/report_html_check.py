#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that a `parity accept` report.html renders in headless Chromium.

Usage:
    report_html_check.py REPORT_HTML [--chromium PATH] [--timeout 60] [--json OUT]

Opens REPORT_HTML from file:// in headless Chromium, driven over the DevTools protocol through
--remote-debugging-pipe (Chromium reads fd 3 and writes fd 4; NUL-terminated JSON messages),
waits for the page to set <html data-ready="1"> (or for --timeout seconds), and collects as
errors: uncaught exceptions, console.error/console.assert calls, error log entries, requests
for anything but file:/data:/blob: URLs (the page must open offline), and the page's own
window.__parityErrors. It then counts the <canvas class="parity-chart"> elements, those marked
data-drawn="1", and <html data-charts-expected>, and reads the paint timings.

Prints a JSON summary to stdout (and to OUT with --json):
    {"errors": [...], "charts": n, "drawn": n, "expected": n, "first_paint_ms": ms,
     "first_contentful_paint_ms": ms, "ready_ms": ms, "ready": bool, "reasons": [...], "ok": bool}

Exit status: 0 when ok (no errors, ready, charts == expected == drawn, charts > 0); 1 when not
(the reasons on stderr); 2 on a usage error or a missing REPORT_HTML; 3 when Chromium is missing
or does not start. The Chromium path defaults to $PARITY_CHROMIUM, /usr/bin/chromium, then
chromium, chromium-browser or google-chrome on PATH.
"""
import argparse
import fcntl
import json
import os
import pathlib
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_NO_CHROMIUM = 0, 1, 2, 3
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")
DRAW_GRACE_S = 3.0  # after ready, how long charts may take to report drawn
EXCEPTION_GRACE_S = 3.0  # after load and an uncaught exception, how long to wait for ready

SUMMARY_JS = """(() => {
  const d = document.documentElement.dataset;
  const paint = {};
  for (const e of performance.getEntriesByType('paint')) paint[e.name] = e.startTime;
  return {
    charts: document.querySelectorAll('canvas.parity-chart').length,
    drawn: document.querySelectorAll('canvas.parity-chart[data-drawn="1"]').length,
    expected: d.chartsExpected === undefined ? null : Number(d.chartsExpected),
    ready: d.ready === '1',
    ready_ms: d.readyMs === undefined ? null : Number(d.readyMs),
    paint: paint,
    page_errors: Array.isArray(window.__parityErrors) ? window.__parityErrors.map(String) : [],
    url: location.href,
  };
})()"""

STATE_JS = """(() => {
  const d = document.documentElement.dataset;
  return [location.protocol, d.ready === '1',
          document.querySelectorAll('canvas.parity-chart[data-drawn="1"]').length,
          Number(d.chartsExpected || 0), performance.now()];
})()"""


class CdpError(Exception):
    """A DevTools protocol failure: an error reply, no reply in time, or a closed pipe."""


class Cdp:
    """A minimal DevTools protocol client over Chromium's debugging pipe."""

    def __init__(self, write_fd, read_fd, on_event):
        self.write_fd = write_fd
        self.read_fd = read_fd
        self.on_event = on_event
        self.next_id = 0
        self.replies = {}
        self.buffer = b""

    def send(self, method, params=None, session=None):
        """Sends a command; returns its id."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self.write_fd, data):]
        except OSError as e:
            raise CdpError(f"{method}: cannot write to chromium: {e}") from e
        return self.next_id

    def pump(self, timeout):
        """Reads and dispatches what arrives within timeout seconds."""
        ready, _, _ = select.select([self.read_fd], [], [], max(0.0, timeout))
        if not ready:
            return
        chunk = os.read(self.read_fd, 1 << 20)
        if not chunk:
            raise CdpError("chromium closed the debugging pipe")
        self.buffer += chunk
        *messages, self.buffer = self.buffer.split(b"\0")
        for raw in messages:
            message = json.loads(raw)
            if "id" in message:
                self.replies[message["id"]] = message
            else:
                self.on_event(message.get("method", ""), message.get("params", {}),
                              message.get("sessionId"))

    def call(self, method, params=None, session=None, timeout=30.0):
        """Sends a command and returns its result."""
        ident = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while ident not in self.replies:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CdpError(f"{method}: no reply within {timeout:.0f} s")
            self.pump(left)
        reply = self.replies.pop(ident)
        if "error" in reply:
            raise CdpError(f"{method}: {reply['error'].get('message', reply['error'])}")
        return reply.get("result", {})

    def evaluate(self, session, expression, timeout=10.0):
        """Evaluates expression in the page; returns its JSON value."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                           session, timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise CdpError(f"evaluate: {text}")
        return result.get("result", {}).get("value")


def find_chromium(requested):
    """The Chromium executable to use, or None."""
    candidates = [requested] if requested else [os.environ.get("PARITY_CHROMIUM"),
                                                "/usr/bin/chromium", "chromium",
                                                "chromium-browser", "google-chrome"]
    for name in candidates:
        if not name:
            continue
        path = shutil.which(name) if os.sep not in name else name
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _high_dup(fd):
    """A close-on-exec duplicate of fd numbered 10 or above."""
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)


def spawn_with_pipe_fds(cmd, child_read, child_write, **kwargs):
    """Popen(cmd) with child_read as the child's fd 3 and child_write as its fd 4.

    pass_fds keeps descriptor numbers, so the two ends are placed at 3 and 4 here for the
    duration of the call; whatever this process held at 3 or 4 is put back afterwards.
    """
    sources = {3: _high_dup(child_read), 4: _high_dup(child_write)}
    parked = {}
    placed = []
    try:
        for target in (3, 4):
            try:
                parked[target] = (_high_dup(target), os.get_inheritable(target))
            except OSError:
                pass  # free
            os.dup2(sources[target], target, inheritable=False)
            placed.append(target)
        return subprocess.Popen(cmd, pass_fds=(3, 4), **kwargs)
    finally:
        for target in placed:
            if target in parked:
                fd, inheritable = parked.pop(target)
                os.dup2(fd, target, inheritable=inheritable)
                os.close(fd)
            else:
                os.close(target)
        for fd, _ in parked.values():
            os.close(fd)
        for fd in sources.values():
            os.close(fd)


class Browser:
    """Headless Chromium with its debugging pipe; stop() always kills it and its profile."""

    def __init__(self, executable, window="1400,1000"):
        self.tmp = tempfile.mkdtemp(prefix="parity-report-check-")
        self.proc = None
        self.cdp = None
        self.fds = []
        self.log_path = os.path.join(self.tmp, "chromium.log")
        self.executable = executable
        self.window = window

    def start(self, on_event):
        to_read, to_write = os.pipe()  # chromium reads fd 3
        from_read, from_write = os.pipe()  # chromium writes fd 4
        self.fds = [to_write, from_read]
        cmd = [self.executable, "--headless=new", "--no-sandbox", "--disable-gpu",
               "--no-first-run", f"--user-data-dir={os.path.join(self.tmp, 'profile')}",
               "--remote-debugging-pipe",
               "--no-default-browser-check", "--disable-extensions", "--disable-sync",
               "--disable-background-networking", "--disable-component-update",
               "--disable-crash-reporter", "--disable-dev-shm-usage", "--mute-audio",
               "--hide-scrollbars", "--force-device-scale-factor=1",
               f"--window-size={self.window}", "about:blank"]
        env = dict(os.environ, HOME=self.tmp, XDG_CONFIG_HOME=os.path.join(self.tmp, "config"),
                   XDG_CACHE_HOME=os.path.join(self.tmp, "cache"))
        with open(self.log_path, "wb") as log:
            try:
                self.proc = spawn_with_pipe_fds(cmd, to_read, from_write, stdin=subprocess.DEVNULL,
                                                stdout=log, stderr=log, env=env,
                                                start_new_session=True)
            finally:
                os.close(to_read)
                os.close(from_write)
        self.cdp = Cdp(to_write, from_read, on_event)
        return self.cdp

    def log_tail(self, lines=15):
        try:
            text = pathlib.Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _exited(self):
        """Whether chromium has exited, without reaping it (its group id stays reserved)."""
        try:
            flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
            return os.waitid(os.P_PID, self.proc.pid, flags) is not None
        except ChildProcessError:
            return True

    def _wait_exit(self, seconds):
        deadline = time.monotonic() + seconds
        while not self._exited():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def stop(self):
        try:
            if self.proc is not None:
                if self.cdp is not None and not self._exited():
                    try:
                        self.cdp.send("Browser.close")
                    except CdpError:
                        pass
                if not self._wait_exit(3.0):
                    self._signal_group(signal.SIGTERM)
                    if not self._wait_exit(3.0):
                        self._signal_group(signal.SIGKILL)
                        self._wait_exit(3.0)
                # Helpers left behind in chromium's session go too, before the leader is reaped.
                self._signal_group(signal.SIGKILL)
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            for fd in self.fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.fds = []
            shutil.rmtree(self.tmp, ignore_errors=True)

    def _signal_group(self, sig):
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _remote_text(obj):
    if "value" in obj:
        value = obj["value"]
        return value if isinstance(value, str) else json.dumps(value)
    return obj.get("description") or obj.get("unserializableValue") or obj.get("type", "")


def _core(text):
    """The first line of an error message without its source's prefix (to spot duplicates)."""
    for prefix in ("console.error: ", "console.assert: ", "exception: ", "uncaught: ",
                   "Uncaught "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return text.strip().splitlines()[0].strip() if text.strip() else ""


class Check:
    """Loads one page and gathers what report_html_check reports."""

    def __init__(self):
        self.errors = []
        self.loaded = False
        self.exception_seen = False
        self.session = None

    def on_event(self, method, params, session):
        if session != self.session:
            return
        if method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            text = d.get("exception", {}).get("description") or d.get("text", "exception")
            where = f" ({d.get('url')}:{d.get('lineNumber', 0) + 1})" if d.get("url") else ""
            self.errors.append(f"exception: {text}{where}")
            self.exception_seen = True
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            text = " ".join(_remote_text(a) for a in params.get("args", []))
            self.errors.append(f"console.{params['type']}: {text}")
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            if entry.get("level") == "error":
                url = f" ({entry['url']})" if entry.get("url") else ""
                source = entry.get("source", "?")
                self.errors.append(f"log ({source}): {entry.get('text', '')}{url}")
        elif method == "Network.requestWillBeSent":
            url = params.get("request", {}).get("url", "")
            if not url.startswith(LOCAL_SCHEMES):
                self.errors.append("network request (the page must be self-contained): "
                                   + url[:200])
        elif method == "Page.loadEventFired":
            self.loaded = True

    def run(self, cdp, url, timeout):
        start = time.monotonic()
        deadline = start + timeout
        targets = cdp.call("Target.getTargets", timeout=min(30.0, timeout))["targetInfos"]
        pages = [t for t in targets if t.get("type") == "page"]
        if pages:
            target = pages[0]["targetId"]
        else:
            target = cdp.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = cdp.call("Target.attachToTarget",
                                {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page", "Network"):
            cdp.call(f"{domain}.enable", session=self.session)
        nav_start = time.monotonic()
        nav = cdp.call("Page.navigate", {"url": url}, self.session,
                       timeout=max(1.0, deadline - time.monotonic()))
        if nav.get("errorText"):
            self.errors.append(f"navigation failed: {nav['errorText']}")
            return None
        ready_at = None
        exception_deadline = None
        while True:
            cdp.pump(0.05)
            try:
                left = max(1.0, min(10.0, deadline - time.monotonic()))
                protocol, ready, drawn, expected, _ = cdp.evaluate(self.session, STATE_JS, left)
            except CdpError:  # e.g. between documents
                protocol, ready, drawn, expected = None, False, 0, 0
            now = time.monotonic()
            if protocol == "file:" and ready:
                ready_at = ready_at or now
                if drawn >= expected or now - ready_at > DRAW_GRACE_S:
                    break
            if self.loaded and self.exception_seen and not ready:
                exception_deadline = exception_deadline or now + EXCEPTION_GRACE_S
                if now > exception_deadline:
                    break
            if now > deadline:
                break
        cdp.pump(0.1)  # late console messages
        summary = cdp.evaluate(self.session, SUMMARY_JS)
        if summary.get("ready_ms") is None and ready_at is not None:
            summary["ready_ms"] = round((ready_at - nav_start) * 1000.0, 1)
        return summary


def summarize(check, summary):
    errors = list(check.errors)
    seen = {_core(e) for e in errors}
    for e in (summary or {}).get("page_errors", []):
        if _core(e) not in seen:
            errors.append(f"page: {e}")
            seen.add(_core(e))
    summary = summary or {}
    paint = summary.get("paint", {})
    out = {
        "errors": errors,
        "charts": summary.get("charts", 0),
        "drawn": summary.get("drawn", 0),
        "expected": summary.get("expected"),
        "first_paint_ms": _ms(paint.get("first-paint")),
        "first_contentful_paint_ms": _ms(paint.get("first-contentful-paint")),
        "ready_ms": _ms(summary.get("ready_ms")),
        "ready": bool(summary.get("ready")),
    }
    reasons = []
    if errors:
        reasons.append(f"{len(errors)} error(s) in the page")
    if not out["ready"]:
        reasons.append("the page never set data-ready=\"1\"")
    if out["charts"] == 0:
        reasons.append("the page has no canvas.parity-chart")
    if out["expected"] != out["charts"]:
        expected = "missing" if out["expected"] is None else out["expected"]
        reasons.append(f"data-charts-expected is {expected} but the page has {out['charts']}"
                       " chart canvases")
    if out["drawn"] != out["charts"]:
        reasons.append(f"{out['charts'] - out['drawn']} of {out['charts']} charts never drew")
    out["reasons"] = reasons
    out["ok"] = not reasons
    return out


def _ms(value):
    return round(float(value), 1) if isinstance(value, (int, float)) else None


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report_html", help="the report.html to check")
    parser.add_argument("--chromium", help="the Chromium executable")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds to wait for the page to be ready (default 60)")
    parser.add_argument("--json", metavar="OUT", help="also write the summary to OUT")
    args = parser.parse_args(argv)
    if args.timeout <= 0:
        parser.error("--timeout must be positive")
    return args


def _terminate(signum, frame):
    raise SystemExit(128 + signum)  # unwinds through the finally that stops chromium


def main(argv=None):
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)
    path = pathlib.Path(args.report_html)
    if not path.is_file():
        print(f"report_html_check: {path}: no such file", file=sys.stderr)
        return EXIT_USAGE
    chromium = find_chromium(args.chromium)
    if chromium is None:
        where = f" at {args.chromium}" if args.chromium else ""
        print(f"report_html_check: chromium not found{where}", file=sys.stderr)
        return EXIT_NO_CHROMIUM
    check = Check()
    browser = Browser(chromium)
    summary = None
    try:
        try:
            cdp = browser.start(check.on_event)
            cdp.call("Browser.getVersion", timeout=min(30.0, args.timeout))
        except (OSError, CdpError) as e:
            print(f"report_html_check: chromium did not start ({chromium}): {e}\n"
                  f"{browser.log_tail()}", file=sys.stderr)
            return EXIT_NO_CHROMIUM
        try:
            summary = check.run(cdp, path.resolve().as_uri(), args.timeout)
        except CdpError as e:
            check.errors.append(f"devtools: {e}")
    finally:
        browser.stop()
    out = summarize(check, summary)
    text = json.dumps(out, indent=2, ensure_ascii=False)
    print(text)
    if args.json:
        pathlib.Path(args.json).write_text(text + "\n", encoding="utf-8")
    if not out["ok"]:
        for reason in out["reasons"]:
            print(f"report_html_check: {reason}", file=sys.stderr)
        for error in out["errors"]:
            print(f"report_html_check: error: {error}", file=sys.stderr)
        return EXIT_FAIL
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
