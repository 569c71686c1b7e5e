"""Drives headless Chromium through the Chrome DevTools Protocol (aiohttp's WebSocket client,
already in the interop venv) against the server's own pages, for Tests/InteropTests/BrowserTests.

Scenarios (one JSON line each on stdout: {"scenario", "ok", "detail", ...}):
  welcome   -- loads /, waits for the stock list to change, the portfolio to have rows, sends a
               chat message and waits to see it; screenshot.
  dashboard -- loads /dashboard (with --auth user:password sent as HTTP Basic), waits for live
               figures, destroys the session --destroy-session from its row's button, then
               blocks new sessions with the button; screenshot.
"""
import argparse
import asyncio
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import aiohttp


class CDP:
    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0
        self.pending = {}
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self):
        async for msg in self.ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                continue
            data = json.loads(msg.data)
            fut = self.pending.pop(data.get("id"), None)
            if fut and not fut.done():
                fut.set_result(data)

    async def call(self, method, params=None, session=None, timeout=20):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        fut = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = fut
        await self.ws.send_str(json.dumps(msg))
        data = await asyncio.wait_for(fut, timeout)
        if "error" in data:
            raise RuntimeError(f"{method}: {data['error']}")
        return data.get("result", {})


class Page:
    def __init__(self, cdp, session):
        self.cdp = cdp
        self.session = session

    async def eval(self, expression):
        r = await self.cdp.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                      "awaitPromise": True}, self.session)
        if "exceptionDetails" in r:
            raise RuntimeError(f"JS error in {expression[:80]}: {r['exceptionDetails']}")
        return r.get("result", {}).get("value")

    async def wait_for(self, expression, timeout, what):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                last = await self.eval(expression)
            except RuntimeError as e:  # the page is not there yet
                last = str(e)[:200]
                await asyncio.sleep(0.2)
                continue
            if last is True or (last and not isinstance(last, str)):
                return last
            await asyncio.sleep(0.2)
        raise TimeoutError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")

    async def screenshot(self, path):
        height = await self.eval("Math.ceil(document.documentElement.scrollHeight)")
        await self.cdp.call("Emulation.setDeviceMetricsOverride",
                            {"width": 1280, "height": int(min(max(height, 600), 4000)), "deviceScaleFactor": 1,
                             "mobile": False}, self.session)
        await asyncio.sleep(0.5)
        r = await self.cdp.call("Page.captureScreenshot", {"format": "png"}, self.session, timeout=30)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))


def report(scenario, ok, detail, **extra):
    print(json.dumps({"scenario": scenario, "ok": ok, "detail": detail, **extra}), flush=True)


DECODER_CHECKS = """import(new URL('web/tlcp.js', location.href).href).then(m => {
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const r = {};
  const a = m.decodeUpdate('bar%c3%a0%C3%A8%25%23%24%5E|#|$|x', undefined, 4);
  r.values = same(a && a.values, ['bar\u00e0\u00e8%#$^', null, '', 'x']);
  const b = m.decodeUpdate('^2|y|', ['p', 'q', 'r', 's'], 4);
  r.runs = same(b && b.values, ['p', 'q', 'y', 's']) && same(b.changed, [false, false, true, false]);
  r.tooFew = m.decodeUpdate('a|b', undefined, 3) === null;
  r.tooMany = m.decodeUpdate('a|b|c|d', undefined, 3) === null;
  r.diffRefused = m.decodeUpdate('^Tabc', ['x'], 1) === null;
  r.plusIsLiteral = m.percentDecode('a%2Cb+c') === 'a,b+c';
  return r;
})"""


async def welcome(page, args):
    await page.wait_for("document.getElementById('status').dataset.status === 'CONNECTED'", 20, "CONNECTED")
    # The page's own TLCP decoder, on the fixtures of docs/protocol/TLCP.md §1.6 and on malformed lines.
    decoder = await page.eval(DECODER_CHECKS)
    await page.wait_for("[...document.querySelectorAll('#stocks tbody tr')].every(r => r.cells[1].textContent !== '')",
                        20, "the snapshot of all 30 stocks")
    before = await page.eval("[...document.querySelectorAll('#stocks tbody tr')].map(r => r.cells[1].textContent)")
    names = await page.eval("[...document.querySelectorAll('#stocks tbody tr')].map(r => r.cells[0].textContent)")
    changed = await page.wait_for(
        f"(() => {{ const b = {json.dumps(before)}; const now = [...document.querySelectorAll('#stocks tbody tr')]"
        ".map(r => r.cells[1].textContent); return now.filter((v, i) => v !== b[i]).length; })()",
        20, "a stock price to change")
    flashed = await page.wait_for("document.querySelectorAll('#stocks td.flash').length", 10, "a flashing cell")
    rows = await page.wait_for("document.querySelectorAll('#portfolio tbody tr').length", 20, "portfolio rows")
    text = f"hello from chromium {int(time.time())}"
    await page.eval("(() => { document.getElementById('chat-text').value = " + json.dumps(text) +
                    "; document.getElementById('chat-form').requestSubmit(); return true; })()")
    await page.wait_for("[...document.querySelectorAll('#chat li .text')].some(e => e.textContent === " +
                        json.dumps(text) + ")", 20, "the chat message to come back")
    await asyncio.sleep(1.0)  # let a few more cells change and flash for the screenshot
    await page.screenshot(args.screenshot)
    reconnected = None
    if args.auth:
        # The server ends the page's session with END 41 (retry): the page makes a new session,
        # subscribes again and the prices move again.
        first = await page.eval("window.lsClient.sessionId")
        async with aiohttp.ClientSession() as http:
            async with http.post(args.url.rstrip('/') + "/admin/api/sessions/destroy",
                                 json={"session": first, "code": 41, "message": "test reconnect"},
                                 headers={"Authorization": "Basic " + base64.b64encode(args.auth.encode()).decode()}) as r:
                if r.status != 200:
                    raise RuntimeError(f"destroy answered {r.status}: {await r.text()}")
        second = await page.wait_for(
            f"window.lsClient.status === 'CONNECTED' && window.lsClient.sessionId !== {json.dumps(first)}"
            " && {sid: window.lsClient.sessionId}", 30, "a new session after END 41")
        before = await page.eval("[...document.querySelectorAll('#stocks tbody tr')].map(r => r.cells[2].textContent)")
        await page.wait_for(
            f"(() => {{ const b = {json.dumps(before)}; return [...document.querySelectorAll('#stocks tbody tr')]"
            ".some((r, i) => r.cells[2].textContent !== b[i]); })()", 20, "updates on the new session")
        # The chat history came again with the new session's snapshot: shown once.
        await asyncio.sleep(1.0)
        copies = await page.eval("[...document.querySelectorAll('#chat li .text')].filter(e => e.textContent === " +
                                 json.dumps(text) + ").length")
        reconnected = {"first": first, "second": second["sid"], "chatCopies": copies}
    report("welcome", True, f"{changed} prices changed, {flashed} cells flashing, {rows} portfolio rows, chat echoed",
           stocks=names, chat=text, portfolioRows=rows, changed=changed, decoder=decoder, reconnected=reconnected)


async def dashboard(page, args):
    await page.wait_for("document.getElementById('status').dataset.status === 'CONNECTED'", 20, "CONNECTED")
    await page.wait_for("Number(document.querySelector('.figure[data-field=sessions] .value').textContent) >= 1",
                        20, "a live session count")
    if args.destroy_session:
        sid = json.dumps(args.destroy_session)
        await page.wait_for(f"!!document.querySelector('#sessions tr[data-key=' + JSON.stringify({sid}) + '] button')",
                            20, "the row of the session to destroy")
        await page.wait_for(f"!document.querySelector('#sessions tr[data-key=' + JSON.stringify({sid}) + '] button').disabled",
                            20, "the destroy button to be enabled")
        await page.eval(f"(document.querySelector('#sessions tr[data-key=' + JSON.stringify({sid}) + '] button').click(), true)")
        await page.wait_for(f"!document.querySelector('#sessions tr[data-key=' + JSON.stringify({sid}) + ']')", 20,
                            "the destroyed session's row to go")
    if args.block:
        await page.eval("(document.getElementById('block').click(), true)")
        await page.wait_for("document.getElementById('admission').textContent === 'BLOCKED'", 20, "BLOCKED")
    # Let the plots gather a few points.
    await asyncio.sleep(args.settle)
    figures = await page.eval("Object.fromEntries([...document.querySelectorAll('.figure')]"
                              ".map(f => [f.dataset.field, f.querySelector('.value').textContent]))")
    await page.screenshot(args.screenshot)
    report("dashboard", True, "live figures, action done", figures=figures,
           result=await page.eval("document.getElementById('action-result').textContent"))


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    p.add_argument("--url", required=True)
    p.add_argument("--scenario", choices=["welcome", "dashboard"], required=True)
    p.add_argument("--screenshot", required=True)
    p.add_argument("--auth", help="user:password sent as HTTP Basic on every request")
    p.add_argument("--destroy-session")
    p.add_argument("--block", action="store_true")
    p.add_argument("--settle", type=float, default=3.0)
    args = p.parse_args()

    profile = tempfile.mkdtemp(prefix="ls-chromium-")
    cmd = [args.chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
           "--hide-scrollbars", f"--user-data-dir={profile}", "--remote-debugging-port=0", "--window-size=1280,900",
           "about:blank"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        endpoint = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = await asyncio.get_running_loop().run_in_executor(None, proc.stderr.readline)
            if not line:
                break
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                endpoint = m.group(1)
                break
        # Keep reading chromium's stderr so that a full pipe never blocks it.
        threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
        if not endpoint:
            report(args.scenario, False, "chromium did not start (no DevTools endpoint)")
            return 1
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(endpoint, max_msg_size=64 * 1024 * 1024) as ws:
                cdp = CDP(ws)
                target = await cdp.call("Target.createTarget", {"url": "about:blank"})
                attached = await cdp.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
                page = Page(cdp, attached["sessionId"])
                await cdp.call("Page.enable", session=page.session)
                await cdp.call("Runtime.enable", session=page.session)
                await cdp.call("Network.enable", session=page.session)
                if args.auth:
                    token = base64.b64encode(args.auth.encode()).decode()
                    await cdp.call("Network.setExtraHTTPHeaders", {"headers": {"Authorization": f"Basic {token}"}},
                                   page.session)
                await cdp.call("Emulation.setDeviceMetricsOverride",
                               {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}, page.session)
                await cdp.call("Page.navigate", {"url": args.url}, page.session)
                try:
                    await (welcome(page, args) if args.scenario == "welcome" else dashboard(page, args))
                except Exception as e:  # report, and keep a screenshot of what the page showed
                    try:
                        await page.screenshot(args.screenshot)
                    except Exception:
                        pass
                    status = None
                    try:
                        status = await page.eval("document.getElementById('status') && document.getElementById('status').textContent")
                    except Exception:
                        pass
                    import traceback
                    report(args.scenario, False, f"{type(e).__name__}: {e}", status=status,
                           trace=traceback.format_exc()[-1500:])
                    return 1
        return 0
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
