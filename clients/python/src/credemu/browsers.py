"""Headless browsers of every engine behind one small driver: `chromium()`, `firefox()`, `webkit()`.

Each returns a `Browser` with `navigate`, `evaluate`, `wait_for`, `click`, `screenshot`, `url`, preload scripts
and `close`, and `install_shim(browser, client)` takes it. Standard library only:

- Chromium: `--remote-debugging-port` and CDP over a websocket (`Page.addScriptToEvaluateOnNewDocument`,
  `Page.setBypassCSP`).
- Firefox (Debian's firefox-esr): WebDriver BiDi, which Firefox speaks itself (no geckodriver):
  `script.addPreloadScript` runs the shim before the page's scripts, and its channel argument carries the shim's
  requests to the driver (`Firefox.add_channel`), so a page's CSP has nothing to block. Firefox has no CSP bypass.
- WebKitGTK (Debian's webkit2gtk-driver, gir1.2-webkit2-4.1, python3-gi-cairo, xvfb): WebKitWebDriver under
  Xvfb, launching `webkit_browser.py` (with Debian's python3), which adds the preload scripts as document-start
  user scripts, and a script message handler with reply carries the shim's requests to the driver
  (`WebKit.add_channel`). WebKitGTK has no WebAuthn at all, so there the shim defines the whole API. No CSP bypass.
"""
import base64
import itertools
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

from .websocket import WebSocket, WebSocketError


class BrowserError(Exception):
    """The browser refused a command, or the page's script threw (`message` is the page's error)."""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wrap(expression):
    # The value as JSON text, so every engine hands back the same plain data; a promise is awaited.
    return ("(async () => { const __v = await (" + expression + "\n); "
            "return __v === undefined ? 'null' : JSON.stringify(__v); })()")


class Browser:
    """What the engines share; subclasses give `_evaluate_text`, `_navigate`, `_screenshot_bytes`, the preload
    scripts and `_quit`."""

    name = "browser"

    def __init__(self):
        self._temp = tempfile.mkdtemp(prefix=f"credemu-{self.name}-")
        self._processes = []

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (a promise awaited), as JSON data."""
        return json.loads(self._evaluate_text(_wrap(expression)))

    def navigate(self, url):
        """Loads `url` and waits for its load event."""
        self._navigate(url)

    @property
    def url(self):
        return self.evaluate("location.href")

    def wait_for(self, expression, timeout=20, interval=0.05):
        """Polls `expression` until it is truthy and returns its value; errors meanwhile (a page navigating) are
        retried, the last one reported at the timeout."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            try:
                value = self.evaluate(expression)
                if value:
                    return value
            except BrowserError as error:
                last = error
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}: `{expression}` stayed false for {timeout} s" + (f" (last error: {last})" if last else ""))
            time.sleep(interval)

    def click(self, selector):
        """Clicks the element (a CSS selector, or `#id`) after the evaluation returns, so a click that navigates
        does not cut the evaluation off."""
        found = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
                              "if (!e) return false; setTimeout(() => e.click(), 0); return true; })()")
        if not found:
            raise BrowserError(f"{self.name}: no element matches {selector!r}")

    def screenshot(self, path):
        """The viewport as PNG at `path`, after two animation frames (WebKit paints late)."""
        self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")
        data = self._screenshot_bytes()
        with open(path, "wb") as out:
            out.write(data)
        return path

    def bypass_csp(self):
        """Bypasses the page's Content-Security-Policy where the engine can (Chromium); False where it cannot."""
        return False

    def clear_cookies(self):
        pass

    def close(self):
        for relay, _ in getattr(self, "_channels", {}).values():
            relay.close()
        try:
            self._quit()
        except Exception:  # noqa: BLE001 - the browser may be gone already
            pass
        for process in reversed(self._processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        shutil.rmtree(self._temp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _spawn(self, command, **kwargs):
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, **kwargs)
        self._processes.append(process)
        return process


class _WebSocketBrowser(Browser):
    """A browser driven by JSON commands with IDs over one websocket (CDP, BiDi)."""

    def _connect(self, url, deadline):
        while True:
            try:
                self._ws = WebSocket(url)
                break
            except (OSError, WebSocketError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self._ids = itertools.count(1)
        self._events = []
        self._fills = []       # texts the shim asked the driver to insert, typed after the command in hand
        self._filling = False
        self._reader = None    # the thread that reads the socket once a channel needs events read at once

    def _start_reader(self):
        """From now on one thread reads the socket: replies go to the command that waits for them, the channel's
        binding calls to their relay at once (a page's request must not wait for the test's next command), other
        events to the list `_wait_event` reads."""
        if self._reader is not None:
            return
        self._lock = threading.Condition()
        self._awaited = {}     # command id -> its reply, None until it comes
        self._gone = None
        self._ws.settimeout(None)
        self._reader = threading.Thread(target=self._read_loop, name=f"credemu-{self.name}-reader", daemon=True)
        self._reader.start()

    def _read_loop(self):
        while True:
            try:
                message = json.loads(self._ws.recv())
            except (OSError, ValueError, WebSocketError) as error:
                with self._lock:
                    self._gone = error
                    self._lock.notify_all()
                return
            if "method" in message:
                if self._channel_event(message):
                    continue
                with self._lock:
                    self._note(message)
                    self._lock.notify_all()
            else:
                with self._lock:
                    if message.get("id") in self._awaited:
                        self._awaited[message["id"]] = message
                        self._lock.notify_all()
                        continue
                    then = self._replied.pop(message.get("id"), None) if hasattr(self, "_replied") else None
                if then is not None:
                    then(message.get("result") or {})

    def _post(self, method, params=None, session=None, then=None):
        """A command whose reply nobody waits for (a channel's reply to the page, a frame's set-up), from any
        thread; `then(result)` runs on the reader thread when its reply comes."""
        message = {"id": next(self._ids), "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        if then is not None:
            with self._lock:
                if not hasattr(self, "_replied"):
                    self._replied = {}
                self._replied[message["id"]] = then
        try:
            self._ws.send(json.dumps(message))
        except OSError:
            pass   # the browser is gone: the page is too

    def _channel_event(self, event):
        """True when `event` is a call of the shim's channel, handed to its relay (subclasses)."""
        return False

    def _send_threaded(self, ident, message, method, timeout):
        with self._lock:
            self._awaited[ident] = None
        self._ws.send(json.dumps(message))
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._awaited[ident] is None:
                if self._gone is not None:
                    del self._awaited[ident]
                    raise BrowserError(f"{self.name}: {method}: the connection closed ({self._gone})")
                left = deadline - time.monotonic()
                if left <= 0:
                    del self._awaited[ident]
                    raise TimeoutError(f"{self.name}: no reply to {method} within {timeout} s")
                self._lock.wait(left)
            return self._awaited.pop(ident)

    def _send(self, method, params=None, session=None, timeout=60):
        ident = next(self._ids)
        message = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        if self._reader is not None:
            reply = self._send_threaded(ident, message, method, timeout)
            if "error" in reply and reply.get("type") != "success":
                error = reply["error"]
                raise BrowserError(f"{self.name}: {method}: {error if isinstance(error, str) else error.get('message', error)} "
                                   f"{reply.get('message', '')}".strip())
            self._run_fills()
            return reply.get("result", {})
        self._ws.settimeout(timeout)
        self._ws.send(json.dumps(message))
        while True:
            reply = json.loads(self._ws.recv())
            if reply.get("id") == ident:
                if "error" in reply and reply.get("type") != "success":
                    error = reply["error"]
                    raise BrowserError(f"{self.name}: {method}: {error if isinstance(error, str) else error.get('message', error)} "
                                       f"{reply.get('message', '')}".strip())
                self._run_fills()
                return reply.get("result", {})
            if "method" in reply:
                self._note(reply)

    def _wait_event(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        if self._reader is not None:
            with self._lock:
                while True:
                    for i, event in enumerate(self._events):
                        if event["method"] == method:
                            del self._events[: i + 1]
                            break
                    else:
                        left = deadline - time.monotonic()
                        if left <= 0 or self._gone is not None:
                            raise TimeoutError(f"{self.name}: no {method} within {timeout} s")
                        self._lock.wait(left)
                        continue
                    break
            self._run_fills()
            return event
        while True:
            for i, event in enumerate(self._events):
                if event["method"] == method:
                    del self._events[: i + 1]
                    self._run_fills()
                    return event
            self._ws.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                reply = json.loads(self._ws.recv())
            except socket.timeout:
                raise TimeoutError(f"{self.name}: no {method} within {timeout} s") from None
            if "method" in reply:
                self._note(reply)

    def _note(self, event):
        text = self._fill_request(event)
        if text is None:
            self._events.append(event)
        else:
            self._fills.append(text)

    def _run_fills(self):
        """Types what the shim's fill binding asked for, as the browser's own input (the shim waits for the value;
        the driver reads the request with the next command's traffic)."""
        if self._filling:
            return
        self._filling = True
        try:
            while self._fills:
                if self._reader is not None:
                    with self._lock:
                        text = self._fills.pop(0) if self._fills else None
                    if text is None:
                        break
                    self._insert_text(text)
                    continue
                self._insert_text(self._fills.pop(0))
        finally:
            self._filling = False

    def _fill_request(self, event):
        return None


class Chromium(_WebSocketBrowser):
    name = "chromium"

    def __init__(self, binary=None, window=(1000, 800)):
        super().__init__()
        binary = binary or os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
        port = _free_port()
        self._spawn([binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                     f"--window-size={window[0]},{window[1]}", f"--remote-debugging-port={port}",
                     f"--user-data-dir={self._temp}", "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        page = None
        while page is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                    page = next((t for t in json.load(r) if t["type"] == "page"), None)
            except (OSError, ValueError):
                pass
            if page is None:
                if time.monotonic() > deadline:
                    raise BrowserError("chromium: no DevTools page within 30 s")
                time.sleep(0.1)
        self._connect(page["webSocketDebuggerUrl"], deadline)
        self.devtools_url = page["webSocketDebuggerUrl"]   # the page target's, which credemu serve can open too
        self._on_every_frame("Page.enable", {})   # a session's preload scripts run only with its Page domain on

    def _evaluate_text(self, script):
        result = self._send("Runtime.evaluate", {"expression": script, "awaitPromise": True, "returnByValue": True})
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise BrowserError(details.get("exception", {}).get("description") or details.get("text"))
        return result["result"]["value"]

    def _navigate(self, url):
        if self._reader is not None:
            with self._lock:
                self._events.clear()
        else:
            self._events.clear()
        result = self._send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise BrowserError(f"chromium: {url}: {result['errorText']}")
        self._wait_event("Page.loadEventFired")

    def _screenshot_bytes(self):
        return base64.b64decode(self._send("Page.captureScreenshot", {"format": "png"})["data"])

    # Cross-site iframes (site isolation) run out of process: CDP targets of their own, which a session on the
    # page's target does not reach. Once a channel is open, the page's session auto-attaches to them (flat sessions,
    # each paused until set up), and every frame gets what the page's session has: what `_on_every_frame` sends is
    # kept and replayed on each attached iframe's session, then the frame runs (docs/shim.md, "Frames of another
    # origin"). At most MAX_FRAMES iframe sessions at once; another target is let run unattached.
    MAX_FRAMES = 64

    def _on_every_frame(self, method, params, key=None):
        """`method` on the page's session and on every attached iframe's, now and in each attached later. A
        command kept under `key` (a preload script's handle, a binding's name) is undone by `_off_every_frame`."""
        result = self._send(method, params)
        if not hasattr(self, "_frame_setup"):
            self._frame_setup = []   # (key, method, params) replayed on each iframe session
            self._frames = {}        # iframe session id -> {key: that session's preload script identifier}
        entry = (key if key is not None else (result or {}).get("identifier"), method, params)
        self._frame_setup.append(entry)
        for session in list(self._frames):
            self._set_up_frame(session, [entry])
        return result

    def _off_every_frame(self, key, method, params):
        """Undoes what `_on_every_frame` kept under `key`: `method` on the page's session and every iframe's (with
        that session's own identifier for a preload script)."""
        self._send(method, params)
        for entry in [e for e in getattr(self, "_frame_setup", []) if e[0] == key]:
            self._frame_setup.remove(entry)
        for session, identifiers in list(getattr(self, "_frames", {}).items()):
            if "identifier" in params:
                if key in identifiers:
                    self._post(method, {"identifier": identifiers.pop(key)}, session)
            else:
                self._post(method, params, session)

    def _set_up_frame(self, session, entries):
        # Posted, not awaited: this may be the reader thread. CDP runs a session's commands in order.
        identifiers = self._frames[session]
        for key, method, params in entries:
            then = None
            if method == "Page.addScriptToEvaluateOnNewDocument":
                def then(result, key=key):
                    if "identifier" in result:
                        identifiers[key] = result["identifier"]
            self._post(method, params, session, then)

    def _auto_attach(self, session=None):
        self._post("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}, session)

    def _frame_event(self, event):
        """An event of an attached target's session, or the page's session's attach and detach events: the
        frames' bookkeeping. An event of a session this connection never attached is ignored."""
        method, params = event.get("method"), event.get("params") or {}
        if method == "Target.attachedToTarget":
            session, kind = params.get("sessionId"), (params.get("targetInfo") or {}).get("type")
            if not isinstance(session, str):
                return True
            if kind == "iframe" and len(self._frames) < self.MAX_FRAMES and event.get("sessionId", None) in (None, *self._frames):
                self._frames[session] = {}
                self._set_up_frame(session, list(self._frame_setup))
                self._auto_attach(session)   # its own cross-site iframes
                self._post("Runtime.runIfWaitingForDebugger", {}, session)
            else:
                self._post("Runtime.runIfWaitingForDebugger", {}, session)
                self._post("Target.detachFromTarget", {"sessionId": session}, event.get("sessionId"))
            return True
        if method == "Target.detachedFromTarget":
            session = params.get("sessionId")
            if session in self._frames:
                del self._frames[session]
                for context in [c for c in self._origins if c[0] == session]:
                    del self._origins[context]
            return True
        return event.get("sessionId") is not None

    def add_preload_script(self, source):
        return self._on_every_frame("Page.addScriptToEvaluateOnNewDocument", {"source": source})["identifier"]

    def remove_preload_script(self, handle):
        self._off_every_frame(handle, "Page.removeScriptToEvaluateOnNewDocument", {"identifier": handle})

    def bypass_csp(self):
        self._send("Page.setBypassCSP", {"enabled": True})
        return True

    def add_fill_binding(self):
        """A binding of a random name on every document (CDP `Runtime.addBinding`) the shim fills passwords through:
        each call is typed into the focused field with `Input.insertText`, so the page's events are trusted."""
        self._binding = "__credemuFill_" + os.urandom(8).hex()
        self._on_every_frame("Runtime.enable", {})   # bindingCalled is a Runtime event
        self._on_every_frame("Runtime.addBinding", {"name": self._binding}, key=self._binding)
        return self._binding

    def remove_fill_binding(self, name):
        self._off_every_frame(name, "Runtime.removeBinding", {"name": name})

    def add_channel(self, relay):
        """The shim's channel (docs/shim.md, "Transport"): a binding of a random name on every document (CDP
        `Runtime.addBinding`), taken off `window` by the shim before the page's scripts run. Each call is relayed
        by `relay` on its worker threads with the origin of the calling execution context as Chromium reports it
        (`Runtime.executionContextCreated` on the session the call came from), and answered with
        `Runtime.callFunctionOn` in that context on that session, calling the receiver the served script keeps in
        a top-level const of a second random name. Cross-site iframes are attached and set up as the page
        (`_frame_event`). A reader thread reads the socket from now on, so a page's request never waits for the
        test's next command. Returns both names (for `/shim.js?channel=...&channelReply=...`)."""
        names = ("__credemuChannel_" + os.urandom(16).hex(), "__credemuReply_" + os.urandom(16).hex())
        if not hasattr(self, "_channels"):
            self._channels = {}
            self._origins = {}     # (session id or None for the page's, execution context id) -> origin, as Chromium reports it
        self._channels[names[0]] = (relay, names[1])
        self._start_reader()
        self._on_every_frame("Runtime.enable", {})   # bindingCalled and executionContextCreated are Runtime events
        self._on_every_frame("Runtime.addBinding", {"name": names[0]}, key=names[0])
        if not getattr(self, "_attaching", False):
            self._attaching = True
            self._send("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True})
        return names

    def remove_channel(self, names):
        self._off_every_frame(names[0], "Runtime.removeBinding", {"name": names[0]})
        relay, _ = self._channels.pop(names[0], (None, None))
        if relay is not None:
            relay.close()

    def _channel_event(self, event):
        method, params = event.get("method"), event.get("params", {})
        channels = getattr(self, "_channels", None)
        if channels is None:
            return False
        session = event.get("sessionId")
        if method in ("Target.attachedToTarget", "Target.detachedFromTarget"):
            return self._frame_event(event)
        if session is not None and session not in self._frames:
            return True   # a session this connection never attached: ignored
        if method == "Runtime.executionContextCreated":
            context = params.get("context", {})
            if len(self._origins) < 4096 or (session, context.get("id")) in self._origins:
                self._origins[(session, context.get("id"))] = context.get("origin")
            return session is not None
        if method == "Runtime.executionContextDestroyed":
            self._origins.pop((session, params.get("executionContextId")), None)
            return session is not None
        if method == "Runtime.executionContextsCleared":
            for context in [c for c in self._origins if c[0] == session]:
                del self._origins[context]
            return session is not None
        if method != "Runtime.bindingCalled" or params.get("name") not in channels:
            return session is not None and method != "Runtime.bindingCalled"
        relay, reply = channels[params["name"]]
        context = params.get("executionContextId")

        def answer(result):
            self._post("Runtime.callFunctionOn", {"functionDeclaration": f"function (reply) {{ {reply}(reply); }}",
                                                  "executionContextId": context, "arguments": [{"value": result}]}, session)
        relay.submit(params.get("payload"), self._origins.get((session, context)), answer)
        return True

    def _fill_request(self, event):
        params = event.get("params", {})
        if event.get("method") == "Runtime.bindingCalled" and params.get("name") == getattr(self, "_binding", None):
            return str(params.get("payload", ""))
        return None

    def _insert_text(self, text):
        self._send("Input.insertText", {"text": text})

    def clear_cookies(self):
        self._send("Network.clearBrowserCookies")

    def _quit(self):
        try:
            self._send("Browser.close", timeout=5)
        finally:
            self._ws.close()


class ChromiumTab(Chromium):
    """A page of a Chromium another driver started (Selenium's chromedriver), over a DevTools connection of its own
    to the page's target: what the shim's channel needs of CDP (bindings and their events, preload scripts), which
    Selenium's `execute_cdp_cmd` cannot give (it gets no events). Its preload scripts and bindings last as long as
    this connection; `close` ends the connection only, never the browser."""

    def __init__(self, debugger_address, target_id=None):
        Browser.__init__(self)
        deadline = time.monotonic() + 30
        self._connect(self.page_url(debugger_address, target_id), deadline)
        self.devtools_url = self.page_url(debugger_address, target_id)
        self._on_every_frame("Page.enable", {})   # a session's preload scripts run only with its Page domain on

    @staticmethod
    def page_url(debugger_address, target_id=None):
        """The DevTools websocket URL of the page `target_id` (or the only page) at `debugger_address`."""
        with urllib.request.urlopen(f"http://{debugger_address}/json/list", timeout=10) as r:
            pages = [t for t in json.load(r) if t["type"] == "page"]
        page = next((t for t in pages if target_id and t["id"].lower() == str(target_id).lower()), None)
        if page is None:
            if len(pages) != 1:
                raise BrowserError(f"chromium: {len(pages)} pages at {debugger_address} and none is {target_id!r}")
            page = pages[0]
        return page["webSocketDebuggerUrl"]

    @staticmethod
    def selenium_address(driver):
        """A Selenium Chromium driver's DevTools address (chromedriver's `goog:chromeOptions.debuggerAddress`) and the
        tab it is on (its window handle is the page's target ID)."""
        address = (driver.capabilities.get("goog:chromeOptions") or {}).get("debuggerAddress")
        if not address:
            raise BrowserError("chromium: the Selenium driver names no debuggerAddress (goog:chromeOptions)")
        return address, driver.current_window_handle

    @classmethod
    def of_selenium(cls, driver):
        """The tab a Selenium Chromium driver is on, over a DevTools connection of this client's own."""
        return cls(*cls.selenium_address(driver))

    def _quit(self):
        self._ws.close()


# Skips first-run pages and remote settings downloads; keeps the headless profile quiet.
_FIREFOX_PREFS = {
    "browser.shell.checkDefaultBrowser": False, "browser.startup.homepage_override.mstone": "ignore",
    "datareporting.policy.dataSubmissionEnabled": False, "toolkit.telemetry.reportingpolicy.firstRun": False,
    "browser.aboutwelcome.enabled": False, "app.update.auto": False, "app.update.enabled": False,
    "signon.rememberSignons": False, "extensions.update.enabled": False, "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False, "network.captive-portal-service.enabled": False,
    "browser.newtabpage.enabled": False, "remote.prefs.recommended": True,
}


# The preload script of Firefox's channel for the shim (Firefox.add_channel), called with its two BiDi channels: a
# function of a random name (NAME), which the shim takes off `window` before the page's scripts run, sends the
# shim's message with a number of its own and answers a promise; the realm's receiver, a closure nothing of the page
# can reach, goes to the driver as a handle with the realm's first request; the driver calls it with the reply's
# JSON text. What the page could replace later (JSON.parse, Map, Promise) is taken now, before its scripts run.
_FIREFOX_CHANNEL = """(send, hand) => {
  const parse = JSON.parse, waits = new Map(), get = Map.prototype.get, set = Map.prototype.set, remove = Map.prototype.delete;
  const call = Function.prototype.call.bind(Function.prototype.call), Promise_ = Promise;
  let next = 0, handed = false;
  const receive = (k, text) => {
    const settle = call(get, waits, k);
    if (!settle) return;
    call(remove, waits, k);
    settle(parse(text));
  };
  Object.defineProperty(window, NAME, { configurable: true, writable: true, value: function (message) {
    if (typeof message !== 'string') throw new TypeError('credemu: the channel carries JSON text');
    if (!handed) { handed = true; hand(receive); }
    const k = ++next;
    return new Promise_((resolve) => { call(set, waits, k, resolve); send([k, message]); });
  } });
}"""


class Firefox(_WebSocketBrowser):
    name = "firefox"

    def __init__(self, binary=None, window=(1000, 800)):
        super().__init__()
        binary = binary or os.environ.get("FIREFOX") or shutil.which("firefox-esr") or shutil.which("firefox") or "/usr/bin/firefox-esr"
        profile = os.path.join(self._temp, "profile")
        os.makedirs(profile)
        with open(os.path.join(profile, "user.js"), "w") as prefs:
            for key, value in _FIREFOX_PREFS.items():
                prefs.write(f"user_pref({json.dumps(key)}, {json.dumps(value)});\n")
        port = _free_port()
        env = dict(os.environ, MOZ_HEADLESS="1", MOZ_HEADLESS_WIDTH=str(window[0]), MOZ_HEADLESS_HEIGHT=str(window[1]))
        self._spawn([binary, "--headless", "--no-remote", "--profile", profile, f"--remote-debugging-port={port}", "about:blank"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        self._connect(f"ws://127.0.0.1:{port}/session", time.monotonic() + 60)
        self._send("session.new", {"capabilities": {}})
        self._context = self._send("browsingContext.getTree", {})["contexts"][0]["context"]

    def _evaluate_text(self, script):
        result = self._send("script.evaluate", {"expression": script, "target": {"context": self._context},
                                                "awaitPromise": True, "resultOwnership": "none"})
        if result.get("type") == "exception":
            details = result["exceptionDetails"]
            raise BrowserError(details.get("text") or json.dumps(details.get("exception")))
        return result["result"]["value"]

    def _navigate(self, url):
        self._send("browsingContext.navigate", {"context": self._context, "url": url, "wait": "complete"})

    def _screenshot_bytes(self):
        return base64.b64decode(self._send("browsingContext.captureScreenshot", {"context": self._context})["data"])

    def add_preload_script(self, source):
        # A preload script is a function declaration; the shim is a statement list, so it goes in a body.
        return self._send("script.addPreloadScript", {"functionDeclaration": "() => {\n" + source + "\n}"})["script"]

    def remove_preload_script(self, handle):
        self._send("script.removePreloadScript", {"script": handle})

    def _add_channel_script(self, declaration, *channels, events=("script.message",)):
        """A preload script `declaration` (a function) called with one BiDi channel argument per `(name, options)`
        of `channels` (`script.addPreloadScript`: each call of a channel is a `script.message` event), `events`
        subscribed. Returns the preload script's handle."""
        self._send("session.subscribe", {"events": list(events)})
        return self._send("script.addPreloadScript", {
            "functionDeclaration": declaration,
            "arguments": [{"type": "channel", "value": dict(options, channel=name)} for name, options in channels]})["script"]

    def add_fill_binding(self):
        """A function of a random name on every document, a BiDi channel (`script.addPreloadScript` with a channel
        argument, its calls `script.message` events), the shim fills passwords through: each call is typed into
        the focused field with `input.performActions` key actions, so the page's events are trusted. (Headless
        Firefox fires no `change` when the shim then blurs the field: measured, with or without
        `browsingContext.activate`.)"""
        name = "__credemuFill_" + os.urandom(8).hex()
        self._channel = name
        self._binding_script = self._add_channel_script(
            "(channel) => { Object.defineProperty(window, " + json.dumps(name)
            + ", { value: channel, configurable: true, writable: true }); }", (name, {}))
        return name

    def remove_fill_binding(self, name):
        self._send("script.removePreloadScript", {"script": self._binding_script})

    def add_channel(self, relay):
        """The shim's channel (docs/shim.md, "Transport") over two BiDi channels of one preload script, added
        before the shim's: on every document it defines a function of a random name, which the shim takes off
        `window` before the page's scripts run, and which answers a promise (the shim's promise kind of
        binding). Each call sends `[k, message]` on the first channel (`script.message`), relayed by `relay` on its
        worker threads with the origin of the message's source realm as Firefox reports it
        (`script.realmCreated`, else `script.getRealms`); the reply goes back by `script.callFunction` in that
        realm, calling the realm's receiver: a closure of the preload script that settles promise `k`, handed to
        the driver once a realm as a handle on the second channel (ownership root) with the realm's first
        request. So nothing of the channel is a property of anything the page can reach. Returns the binding's
        name and None (the shim needs no `channelReply`)."""
        name = "__credemuChannel_" + os.urandom(16).hex()
        hand = "__credemuHand_" + os.urandom(16).hex()
        if not hasattr(self, "_channels"):
            self._channels = {}
            self._realms = {}      # realm id -> origin, as Firefox reports it
            self._receivers = {}   # realm id -> the handle of that realm's receiver
        self._channels[name] = (relay, hand)
        self._start_reader()
        script = self._add_channel_script(_FIREFOX_CHANNEL.replace("NAME", json.dumps(name)),
                                          (name, {"ownership": "none", "serializationOptions": {"maxObjectDepth": 1}}),
                                          (hand, {"ownership": "root", "serializationOptions": {"maxObjectDepth": 0}}),
                                          events=("script.message", "script.realmCreated", "script.realmDestroyed"))
        self._channel_scripts = getattr(self, "_channel_scripts", {})
        self._channel_scripts[name] = script
        return name, None

    def remove_channel(self, names):
        script = self._channel_scripts.pop(names[0], None)
        if script is not None:
            self._send("script.removePreloadScript", {"script": script})
        relay, _ = self._channels.pop(names[0], (None, None))
        if relay is not None:
            relay.close()

    def _channel_event(self, event):
        channels = getattr(self, "_channels", None)
        if channels is None:
            return False
        method, params = event.get("method"), event.get("params", {})
        if method == "script.realmCreated":
            self._realms[params.get("realm")] = params.get("origin")
            return True
        if method == "script.realmDestroyed":
            self._realms.pop(params.get("realm"), None)
            self._receivers.pop(params.get("realm"), None)
            return True
        if method != "script.message":
            return False
        channel, data, realm = params.get("channel"), params.get("data") or {}, (params.get("source") or {}).get("realm")
        if any(channel == hand for _, hand in channels.values()):
            if data.get("type") == "function" and data.get("handle") and realm not in self._receivers:
                self._receivers[realm] = data["handle"]
            return True
        if channel not in channels:
            return False
        relay = channels[channel][0]
        values = data.get("value") if data.get("type") == "array" else None
        if not (isinstance(values, list) and len(values) == 2 and values[0].get("type") == "number"
                and values[1].get("type") == "string"):
            return True   # not what the preload script sends: nothing to answer
        k, message = values[0].get("value"), values[1].get("value")
        receiver, origin = self._receivers.get(realm), self._realms.get(realm)

        def run():
            realm_origin = origin if origin is not None else self._realm_origin(realm)
            result = relay.answer(message, realm_origin)
            if receiver is not None:
                self._post("script.callFunction", {
                    "functionDeclaration": "(receive, k, reply) => { receive(k, reply); }", "awaitPromise": False,
                    "target": {"realm": realm}, "resultOwnership": "none",
                    "arguments": [{"handle": receiver}, {"type": "number", "value": k}, {"type": "string", "value": json.dumps(result)}]})
        relay.pool.submit(run)
        return True

    def _realm_origin(self, realm):
        """The origin of a realm Firefox reported no `script.realmCreated` for (one made before the subscription)."""
        # The command straight on the socket (not `_send`, which types pending fills): this is a relay's thread.
        ident = next(self._ids)
        try:
            reply = self._send_threaded(ident, {"id": ident, "method": "script.getRealms", "params": {}}, "script.getRealms", 10)
        except (BrowserError, TimeoutError, OSError):
            return None
        realms = (reply.get("result") or {}).get("realms", [])
        return next((r.get("origin") for r in realms if r.get("realm") == realm), None)

    def _fill_request(self, event):
        params = event.get("params", {})
        if event.get("method") == "script.message" and params.get("channel") == getattr(self, "_channel", None):
            return str((params.get("data") or {}).get("value", ""))
        return None

    def _insert_text(self, text):
        keys = []
        for character in text:
            keys += [{"type": "keyDown", "value": character}, {"type": "keyUp", "value": character}]
        self._send("input.performActions", {"context": self._context,
                                            "actions": [{"type": "key", "id": "credemu-keyboard", "actions": keys}]})

    def _quit(self):
        try:
            self._send("session.end", timeout=5)
        finally:
            self._ws.close()


class WebKit(Browser):
    name = "webkit"
    APPLICATION = "credemu-webkit"

    def __init__(self, driver=None, python="/usr/bin/python3", window=(1000, 800)):
        super().__init__()
        driver = driver or os.environ.get("WEBKIT_WEBDRIVER") or shutil.which("WebKitWebDriver") or "/usr/bin/WebKitWebDriver"
        env = dict(os.environ)
        if not env.get("CREDEMU_WEBKIT_DISPLAY"):
            env["DISPLAY"] = self._start_xvfb(window)
        else:
            env["DISPLAY"] = env["CREDEMU_WEBKIT_DISPLAY"]
        self._scripts = os.path.join(self._temp, "scripts")
        os.makedirs(self._scripts)
        self._names = itertools.count(1)
        port = _free_port()
        self._spawn([driver, f"--port={port}"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._base = f"http://127.0.0.1:{port}"
        program = os.path.join(os.path.dirname(os.path.abspath(__file__)), "webkit_browser.py")
        capabilities = {"browserName": self.APPLICATION, "webkitgtk:browserOptions": {
            "binary": python, "args": [program, "--scripts", self._scripts, "--name", self.APPLICATION]}}
        deadline = time.monotonic() + 30
        while True:
            try:
                self._session = self._request("POST", "/session", {"capabilities": {"alwaysMatch": capabilities}}, timeout=60)["sessionId"]
                break
            except (urllib.error.URLError, ConnectionError) as error:
                if isinstance(error, urllib.error.HTTPError) or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def _start_xvfb(self, window):
        read, write = os.pipe()
        self._spawn(["Xvfb", "-displayfd", str(write), "-screen", "0", f"{window[0]}x{window[1]}x24", "-nolisten", "tcp"],
                    pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write)
        number = b""
        with os.fdopen(read, "rb") as pipe:
            while not number.endswith(b"\n"):
                chunk = pipe.read(1)
                if not chunk:
                    raise BrowserError("webkit: Xvfb gave no display")
                number += chunk
        return ":" + number.decode().strip()

    def _request(self, method, path, body=None, timeout=60):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self._base + path, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.load(response).get("value")
        except urllib.error.HTTPError as error:
            try:
                value = json.load(error).get("value", {})
            except ValueError:
                value = {}
            if path == "/session":
                raise BrowserError(f"webkit: no session: {value.get('message', error)}") from None
            raise BrowserError(value.get("message") or str(error)) from None

    def _command(self, method, path, body=None, timeout=60):
        return self._request(method, f"/session/{self._session}{path}", body, timeout)

    def _evaluate_text(self, script):
        return self._command("POST", "/execute/sync", {"script": "return " + script, "args": []})

    def _navigate(self, url):
        self._command("POST", "/url", {"url": url})

    def _screenshot_bytes(self):
        return base64.b64decode(self._command("GET", "/screenshot"))

    def add_preload_script(self, source):
        # Read by webkit_browser.py before the next top-level navigation.
        handle = os.path.join(self._scripts, f"{next(self._names):04d}.js")
        with open(handle + ".tmp", "w", encoding="utf-8") as out:
            out.write(source)
        os.replace(handle + ".tmp", handle)
        return handle

    def remove_preload_script(self, handle):
        try:
            os.remove(handle)
        except FileNotFoundError:
            pass

    def add_channel(self, relay):
        """The shim's channel (docs/shim.md, "Transport"): a script message handler with reply of a random name in
        the browser (`webkit_browser.py`, a `*.channel` file read before the next top-level navigation), behind a
        function of that name on the top frame's `window` that the shim takes off before the page's scripts run.
        Each message comes to this process on a Unix socket with the URI of the view's committed top-level document
        as WebKit reports it, is relayed by `relay` on its worker threads with that origin, and its answer goes
        back as the handler's reply (the shim's promise kind of binding). WebKitGTK tells a handler nothing of the
        frame that posted, so only the top frame has the channel; a subframe's shim uses its page's fetch.
        Returns the binding's name and None (the shim needs no `channelReply`)."""
        name = "__credemuChannel_" + os.urandom(16).hex()
        if not hasattr(self, "_channels"):
            self._channels = {}
            self._listen()
        self._channels[name] = (relay, None)
        handle = os.path.join(self._scripts, f"{next(self._names):04d}.channel")
        with open(handle + ".tmp", "w", encoding="utf-8") as out:
            json.dump({"name": name, "socket": self._socket_path}, out)
        os.replace(handle + ".tmp", handle)
        self._channel_files = getattr(self, "_channel_files", {})
        self._channel_files[name] = handle
        return name, None

    def remove_channel(self, names):
        self.remove_preload_script(self._channel_files.pop(names[0], ""))
        relay, _ = self._channels.pop(names[0], (None, None))
        if relay is not None:
            relay.close()

    def _listen(self):
        """The Unix socket `webkit_browser.py` sends the channels' messages to (one connection, the browser's), read
        by a thread of its own: each line `{"id", "channel", "url", "message"}` is relayed by its channel's relay
        and answered `{"id", "reply"}` from the relay's worker thread."""
        self._socket_path = os.path.join(self._temp, "channel.sock")
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self._socket_path)
        self._listener.listen(4)
        threading.Thread(target=self._accept, name="credemu-webkit-channel", daemon=True).start()

    def _accept(self):
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve_channel, args=(connection,), name="credemu-webkit-channel", daemon=True).start()

    def _serve_channel(self, connection):
        lock = threading.Lock()

        def answer(ident, result):
            with lock:
                try:
                    connection.sendall((json.dumps({"id": ident, "reply": result}) + "\n").encode())
                except OSError:
                    pass   # the browser is gone: the page is too
        with connection, connection.makefile("rb") as lines:
            for line in lines:
                try:
                    message = json.loads(line)
                    ident = message["id"]
                except (ValueError, KeyError, TypeError):
                    continue
                relay = self._channels.get(message.get("channel"), (None, None))[0]
                if relay is None:   # a removed channel: no reply object, which the shim reports as the channel gone
                    answer(ident, None)
                    continue
                relay.submit(message.get("message"), message.get("url"), lambda result, ident=ident: answer(ident, result))

    def clear_cookies(self):
        try:
            self._command("DELETE", "/cookie")
        except BrowserError:
            pass

    def _quit(self):
        try:
            self._request("DELETE", f"/session/{self._session}", timeout=10)
        finally:
            listener = getattr(self, "_listener", None)
            if listener is not None:
                try:
                    listener.shutdown(socket.SHUT_RDWR)   # wakes the accepting thread
                except OSError:
                    pass
                listener.close()


def chromium(**options):
    """Headless Chromium over CDP."""
    return Chromium(**options)


def firefox(**options):
    """Headless Firefox over WebDriver BiDi (no geckodriver)."""
    return Firefox(**options)


def webkit(**options):
    """WebKitGTK through WebKitWebDriver under its own Xvfb."""
    return WebKit(**options)


LAUNCHERS = {"chromium": chromium, "firefox": firefox, "webkit": webkit}


def launch(engine, **options):
    """`chromium`, `firefox` or `webkit` by name."""
    try:
        return LAUNCHERS[engine](**options)
    except KeyError:
        raise ValueError(f"unknown engine {engine!r}: one of {sorted(LAUNCHERS)}") from None
