#!/usr/bin/python3
"""Open a page (HTML or SVG) in headless Chromium and report what a check
script saw, for t510.

  lib-browser.py PAGE CHECK.js            -> prints {"result": R, "console": [...]}
  lib-browser.py --screenshot PNG PAGE    -> saves a screenshot of PAGE

CHECK.js is the body of a function run at the page's load event; it returns
a JSON-able value R (an exception becomes {"error": "..."}). A copy of PAGE
with the check injected is opened with --dump-dom, so nothing is left
behind. "console" lists every console message of the page (Chromium logs
them to stderr as CONSOLE lines): the report is quiet when it works, so
any message is a finding. Chromium runs with no network use of its own
and a fresh profile directory.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHROMIUM = os.environ.get("CHROMIUM", "chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-default-apps", "--hide-scrollbars",
         "--virtual-time-budget=10000"]

HTML_HOOK = """<script>window.addEventListener('load', function () {
  var r; try { r = (function () { %s })(); } catch (e) { r = {error: String(e && e.stack || e)}; }
  var pre = document.createElement('pre'); pre.id = 'xs-test-result';
  pre.textContent = JSON.stringify(r); document.body.appendChild(pre); });</script>"""
SVG_HOOK = """<script type="text/ecmascript"><![CDATA[window.addEventListener('load', function () {
  var r; try { r = (function () { %s })(); } catch (e) { r = {error: String(e && e.stack || e)}; }
  var t = document.createElementNS('http://www.w3.org/2000/svg', 'text'); t.setAttribute('id', 'xs-test-result');
  t.textContent = JSON.stringify(r); document.documentElement.appendChild(t); });]]></script>"""


def run_chromium(args, workdir):
    profile = os.path.join(workdir, "profile")
    cmd = [CHROMIUM] + FLAGS + ["--user-data-dir=" + profile,
                                "--enable-logging=stderr", "--v=0"] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def check(page, check_js):
    # surrogateescape: a page that is not valid UTF-8 reaches the browser
    # byte for byte (that is a finding for the browser to show, not a crash)
    with open(page, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    with open(check_js, encoding="utf-8") as f:
        body = f.read()
    svg = page.endswith(".svg")
    hook = (SVG_HOOK if svg else HTML_HOOK) % body
    end = "</svg>" if svg else "</body>"
    at = text.rfind(end)
    if at < 0:
        sys.exit("lib-browser: %s has no %s" % (page, end))
    work = tempfile.mkdtemp(prefix="xs-browser.")
    try:
        copy = os.path.join(work, "page" + (".svg" if svg else ".html"))
        with open(copy, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text[:at] + hook + text[at:])
        done = run_chromium(["--dump-dom", "file://" + copy], work)
        m = re.search(r'id="xs-test-result"[^>]*>([^<]*)<', done.stdout)
        result = None
        if m:
            raw = (m.group(1).replace("&quot;", '"').replace("&lt;", "<")
                   .replace("&gt;", ">").replace("&amp;", "&"))
            result = json.loads(raw)
        console = [l for l in done.stderr.splitlines() if ":CONSOLE" in l]
        print(json.dumps({"result": result, "console": console,
                          "status": done.returncode}))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def screenshot(png, page, height):
    work = tempfile.mkdtemp(prefix="xs-browser.")
    try:
        done = run_chromium(["--screenshot=" + os.path.abspath(png),
                             "--window-size=1280,%d" % height,
                             "file://" + os.path.abspath(page)], work)
        if done.returncode != 0 or not os.path.exists(png):
            sys.exit("lib-browser: no screenshot: " + done.stderr[-500:])
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "--screenshot":
        screenshot(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 3000)
    elif len(sys.argv) == 3:
        check(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
