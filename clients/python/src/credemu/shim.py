"""The browser shim in a Selenium driver or a Playwright page or context (sync API), before the page's scripts.

Where the driver has a channel (Playwright, `credemu.browsers`' `chromium()`, `firefox()`, `webkit()`), the shim's requests go through the
driver (`credemu.relay`), and the page's Content-Security-Policy stays in force. Elsewhere the page's own CSP
applies to the shim's `fetch` to credemu as to any of the page's scripts, so a page with `default-src 'self'`
would block it: there the shim is installed with CSP bypassed (CDP `Page.setBypassCSP`). Either way the page's
origin is allowed on the server (`POST /origins`), since the shim's requests are the page's.
"""
import inspect
import secrets
import urllib.parse
import warnings
import weakref
from pathlib import Path

from .client import origin_of
from .errors import CredemuError
from .relay import Relay


def install_shim(target, client, *, origin=None, profile=None, device=None, autofill=True, bypass_csp=None,
                 autofill_events=False, channel=True, relay=None, **context_options):
    """Every document `target` loads from now on runs credemu's shim for `profile` (default: the client's), or
    for `device` (default: the client's device, when it has one and no `profile` is given): the page's ceremonies
    then run on the device, which routes them among its provider accounts (`/shim.js?device=NAME`).

    `target` is a `credemu.browsers` browser (`chromium()`, `firefox()`, `webkit()`), a Selenium WebDriver with
    `execute_cdp_cmd` (Chromium), or Playwright's (sync API) `Page`,
    `BrowserContext` or `Browser`; for a `Browser`, a new context is made (with `context_options`) and returned.
    `origin` (a URL is cut to its origin) is allowed on the server; without it the page's origin must be allowed
    already (`--allow-origin`, `Server(allow_origins=...)`). Returns what the shim is installed in.

    Transport (`channel=True`, where the driver has one): the shim sends its requests to credemu through the
    driver, not with the page's `fetch`: a binding of a random name the shim takes off `window` before the page's
    scripts run (Playwright `expose_binding`; `browsers.chromium()` CDP `Runtime.addBinding`; Selenium with
    Chromium the same over a DevTools connection of its own to the driver's tab, `browsers.ChromiumTab`, since
    `execute_cdp_cmd` gets no events back; `browsers.firefox()` a WebDriver BiDi channel of a preload script;
    `browsers.webkit()` a script message handler with reply, in the top frame only), relayed by
    `credemu.relay.Relay` with the frame's origin as the driver reports it. The page's Content-Security-Policy
    then has nothing to block and stays in force: no bypass. (Selenium's channel is on the tab the driver is on
    when the shim is installed; a window it opens later gets no shim, as with `execute_cdp_cmd`.)
    With `channel=False`, and in a WebKitGTK subframe, the shim fetches, and a page whose CSP `connect-src` leaves
    out credemu's URL blocks it unless the driver can bypass the CSP.

    CSP: `bypass_csp` defaults to bypassing only where the shim fetches (with `channel=False`: Selenium and
    `browsers.chromium()` CDP's `Page.setBypassCSP`, Playwright the context's `bypass_csp`); `bypass_csp=True`
    bypasses it anyway. Firefox and WebKitGTK have no bypass. Playwright sets a context's CSP bypass
    only when it is made (`bypass_csp=True`), so a context made without it gets the bypass in the pages it has
    open now, and a warning: the pages it opens later keep their CSP (pass the Browser instead).

    Autofill: in Playwright and in `credemu.browsers`' Chromium and Firefox the shim fills a saved password through
    the driver (a binding of a random name, which the shim takes off `window` before the page's scripts run; the
    driver types the text: Playwright `keyboard.insert_text`, CDP `Input.insertText`, BiDi `input.performActions`),
    so the page gets trusted `input` and `change` events, as from the browser's own autofill; elsewhere (Selenium's
    CDP commands, which get no events back, and WebKitGTK) it sets the value and fires untrusted ones. A
    `credemu.browsers` browser reads the binding's calls with the traffic of its next command (`wait_for` polls). The page never gets an event of credemu's own
    unless `autofill_events=True` (a debug switch: `credemu:autofilled` on `document`). No driver can make the
    field match `:autofill`.

    Who relays Chromium's channel (`relay`, for `browsers.chromium()` and Selenium with Chromium): `"server"`
    hands the tab's DevTools websocket URL to credemu (`POST /channels`), whose own DevTools connection adds the
    binding and the shim and answers the page in-process; `"client"` relays it here (`credemu.relay.Relay` on
    this client's DevTools connection). The default is the server when it is local (the client's URL is on a
    loopback host, so it can reach the browser's loopback DevTools port), else the client; an older server without
    `/channels` falls back to the client. Firefox and WebKitGTK relay in the client; Playwright does too, and in a
    Chromium launched with a DevTools port (`args=["--remote-debugging-port=0"]`) each page also gets a paired
    channel of the server's, which the shim prefers (`_Pairing`; docs/shim.md, "Transport").

    `client` may also be a `credemu.Server` (its `client()` is used).
    """
    return installed_shim(target, client, origin=origin, profile=profile, device=device, autofill=autofill,
                          bypass_csp=bypass_csp, autofill_events=autofill_events, channel=channel, relay=relay,
                          **context_options)[0]


def _server_is_local(client):
    host = (urllib.parse.urlsplit(client.url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def _server_channel(client, relay, devtools_url, *, profile, device, autofill, fill_binding, autofill_events):
    """The channel relayed by credemu serve itself (`POST /channels`), or None where the client relays it."""
    if relay not in (None, "server", "client"):
        raise ValueError(f"relay is 'server' or 'client', not {relay!r}")
    if relay == "client" or (relay is None and not _server_is_local(client)):
        return None
    try:
        return client.open_channel(devtools_url, profile=None if device else profile, device=device, autofill=autofill,
                                   fill_binding=fill_binding, autofill_events=autofill_events)["id"]
    except CredemuError as error:
        if relay is None and error.status in (404, 405):   # a server from before /channels
            return None
        raise


def _closer(client, ident):
    def close():
        try:
            client.close_channel(ident)
        except CredemuError:
            pass   # gone with its tab already
    return close


def installed_shim(target, client, *, origin=None, profile=None, device=None, autofill=True, bypass_csp=None,
                   autofill_events=False, channel=True, relay=None, allow_frame_origins=False, **context_options):
    """`install_shim`, and a function that undoes it: removes the preload or Selenium init script, or closes the context made
    from a Playwright Browser (None for a Playwright page or context, whose init scripts stay).
    `allow_frame_origins`: a channel the client relays allows each calling frame's origin on first use
    (`credemu.relay.Relay`; `credemu.playwright`, whose authenticator answers every page, as Playwright's does)."""
    if not hasattr(client, "shim") and hasattr(client, "client"):  # a credemu.Server
        client = client.client()
    if origin is not None:
        client.allow_origin(origin_of(origin))
    if device is None and profile is None:
        device = getattr(client, "device", None)
    shim_profile = profile or (None if device else client.profile)

    def client_relay():
        return Relay(client, profile=None if device else shim_profile, device=device, allow_frame_origins=allow_frame_origins)

    def script(fill_binding=None, channel_binding=None, channel_reply=None, server=(None, None)):
        return client.shim(shim_profile, autofill=autofill, device=device, fill_binding=fill_binding,
                           autofill_events=autofill_events, channel=channel_binding, channel_reply=channel_reply,
                           server_channel=server[0], server_handoff=server[1])
    if hasattr(target, "add_init_script") or hasattr(target, "new_context"):
        if _is_coroutine_function(getattr(target, "add_init_script", None) or target.new_context):
            raise TypeError(_ASYNC)
        bypass = (not channel) if bypass_csp is None else bypass_csp
        made = None
        if not hasattr(target, "add_init_script"):
            target = made = target.new_context(bypass_csp=bypass, **context_options)
        fill = _fill_binding(target) if autofill else None
        binding = _channel_binding(target, client_relay()) if channel else None
        pairing = _Pairing.of(target, client, relay, profile=None if device else shim_profile, device=device,
                              allow_frame_origins=allow_frame_origins) if channel else None
        names = pairing.names if pairing else (None, None)
        if made is not None:
            made.add_init_script(script=script(fill, binding, server=names))
        else:
            _playwright(target, script(fill, binding, server=names), bypass)
        if pairing:
            pairing.start()
        return target, (made.close if made is not None else None)
    if hasattr(target, "add_preload_script"):  # credemu.browsers: Chromium, Firefox, WebKitGTK
        devtools = getattr(target, "devtools_url", None) if channel else None
        if devtools:   # Chromium: credemu serve relays the channel itself where it can reach the tab
            binding = target.add_fill_binding() if autofill else None
            ident = _server_channel(client, relay, devtools, profile=shim_profile, device=device, autofill=autofill,
                                    fill_binding=binding, autofill_events=autofill_events)
            if ident is not None:
                if bypass_csp:
                    target.bypass_csp()
                close = _closer(client, ident)

                def undo_server():
                    close()
                    if binding:
                        target.remove_fill_binding(binding)
                return target, undo_server
            if binding:
                target.remove_fill_binding(binding)
        # The driver's channel where the browser has one (Chromium: CDP Runtime.addBinding), else the page's fetch.
        names = target.add_channel(client_relay()) if channel and hasattr(target, "add_channel") else None
        if bypass_csp or (bypass_csp is None and names is None):
            target.bypass_csp()  # False in Firefox and WebKitGTK: a page whose CSP blocks credemu gets the shim's console line
        # Chromium (CDP Input.insertText) and Firefox (BiDi input.performActions) type a fill; WebKitGTK cannot.
        binding = target.add_fill_binding() if autofill and hasattr(target, "add_fill_binding") else None
        handle = target.add_preload_script(script(binding, *(names or (None, None))))

        def undo():
            target.remove_preload_script(handle)
            if binding:
                target.remove_fill_binding(binding)
            if names:
                target.remove_channel(names)
        return target, undo
    if hasattr(target, "execute_cdp_cmd"):
        if channel:
            # Selenium's execute_cdp_cmd gets no CDP events back: the channel runs on a DevTools connection of its
            # own to the driver's tab (chromedriver's debuggerAddress), which holds the binding and the preload.
            from .browsers import ChromiumTab
            address, handle = ChromiumTab.selenium_address(target)
            ident = _server_channel(client, relay, ChromiumTab.page_url(address, handle), profile=shim_profile, device=device,
                                    autofill=autofill, fill_binding=None, autofill_events=autofill_events)
            if ident is not None:
                if bypass_csp:
                    target.execute_cdp_cmd("Page.setBypassCSP", {"enabled": True})
                return target, _closer(client, ident)
            tab = ChromiumTab(address, handle)
            names = tab.add_channel(client_relay())
            if bypass_csp:
                target.execute_cdp_cmd("Page.setBypassCSP", {"enabled": True})
            tab.add_preload_script(script(None, *names))
            return target, tab.close
        identifier = _selenium(target, script(), True if bypass_csp is None else bypass_csp)
        return target, lambda: target.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": identifier})
    raise TypeError(f"install_shim takes a credemu.browsers browser, a Selenium driver or a Playwright page, context or browser, not {type(target).__name__}")


def _sync(steps):
    """Runs a generator of Playwright calls (`_Pairing`'s steps) on the sync API: each call's value is its result."""
    result = None
    while True:
        try:
            result = steps.send(result)
        except StopIteration as done:
            return done.value


async def _async(steps):
    """The same steps on the async API: each yielded call is awaited, its error thrown back at the step."""
    result, error = None, None
    while True:
        try:
            step = steps.throw(error) if error is not None else steps.send(result)
        except StopIteration as done:
            return done.value
        try:
            result, error = (await step) if inspect.isawaitable(step) else step, None
        except Exception as failure:   # noqa: BLE001 - the step decides
            result, error = None, failure


class _Pairing:
    """Playwright's Chromium with a DevTools port: credemu serve relays each page's shim itself. The shim stays
    Playwright's init script, with its `expose_binding` channel relayed here; each page of the context also gets a
    paired channel of the server's (`POST /channels` with `paired`: the server adds a binding of these names and a
    handoff script, no shim), which the shim prefers in every document the server reached: the page's calls then
    cross no driver and no client (docs/shim.md, "Transport"). A page the server cannot take (no port, the server's
    channels full, a page closed meanwhile) keeps the driver's channel, as does a document open before its page
    was reached. One set of steps for both APIs (`_sync`, `_async`): each Playwright call is a `yield`."""

    def __init__(self, context, page, client, port, *, profile, device, allow_frame_origins, asynchronous):
        self.context, self.page, self.client, self.port = context, page, client, port
        self.profile, self.device, self.allow_frame_origins = profile, device, allow_frame_origins
        self.run = _async if asynchronous else _sync
        self.names = ("__credemuServer_" + secrets.token_hex(16), "__credemuHandoff_" + secrets.token_hex(16))
        self.attached = weakref.WeakSet()
        self.opening = 0

    @classmethod
    def of(cls, target, client, relay, *, profile, device, allow_frame_origins, asynchronous=False):
        """The pairing for a Playwright context or page (awaitable with `asynchronous`), or None where the server
        cannot relay it: `relay="client"`, a server that is not on loopback, a browser that is not Chromium or has no
        DevTools port."""
        def steps():
            if relay == "client" or (relay is None and not _server_is_local(client)):
                return None
            page = target if hasattr(target, "goto") else None
            context = page.context if page is not None else target
            if not hasattr(context, "new_cdp_session"):
                return None
            port = yield from _devtools_port_steps(getattr(context, "browser", None))
            if port is None:
                return None
            return cls(context, page, client, port, profile=profile, device=device,
                       allow_frame_origins=allow_frame_origins, asynchronous=asynchronous)
        return (_async if asynchronous else _sync)(steps())

    def start(self):
        """Each page of the context, now and as it opens (a Page target: that page only); awaitable on the async
        API. The `page` event comes while the test's next call runs, after its first navigation may have begun;
        `credemu.playwright`'s `new_page` attaches the page before it returns it (`context._credemu_pairing`)."""
        def steps():
            if self.page is not None:
                yield from self._attach_steps(self.page)
                return
            self.context._credemu_pairing = self
            for page in list(self.context.pages):
                yield from self._attach_steps(page)
            self.context.on("page", self._opened)
        return self.run(steps())

    def _opened(self, page):
        # Inside `new_page` (credemu.playwright's), which attaches its page itself once it has it: the event's
        # handler would be suspended at its first Playwright call while `new_page` returns.
        if self.opening:
            return
        attached = self.run(self._attach_steps(page))
        if inspect.isawaitable(attached):
            import asyncio
            asyncio.ensure_future(attached)

    def new_page(self, open_page):
        """`open_page()`'s page, attached before it is returned (awaitable on the async API)."""
        def steps():
            self.opening += 1
            try:
                page = yield open_page()
            finally:
                self.opening -= 1
            yield from self._attach_steps(page)
            return page
        return self.run(steps())

    def _attach_steps(self, page):
        """Opens the page's paired channel, once."""
        if page in self.attached:
            return
        self.attached.add(page)
        try:
            session = yield self.context.new_cdp_session(page)
            try:
                target = (yield session.send("Target.getTargetInfo"))["targetInfo"]["targetId"]
            finally:
                yield session.detach()
            url = f"ws://127.0.0.1:{self.port}/devtools/page/{target}"
            yield self._offload(lambda: self.client.open_channel(url, profile=self.profile, device=self.device,
                                                                 paired=self.names,
                                                                 allow_frame_origins=self.allow_frame_origins))
        except Exception:   # noqa: BLE001 - the page keeps the driver's channel (closed meanwhile, channels full)
            pass

    def _offload(self, function):
        """`function()` (an HTTP request to credemu): on the async API on a thread, off the event loop."""
        if self.run is _async:
            import asyncio
            return asyncio.to_thread(function)
        return function()


def chromium_devtools_port(browser):
    """The DevTools port of a Playwright-launched Chromium (sync API), or None: see `_devtools_port_steps`."""
    return _sync(_devtools_port_steps(browser))


def _devtools_port_steps(browser):
    """The DevTools port of a Playwright-launched Chromium (`launch(args=["--remote-debugging-port=N"])`, N or 0),
    read from its command line (CDP `Browser.getBrowserCommandLine`, which Chromium answers only with
    --enable-automation, which Playwright leaves out; else the browser process's /proc cmdline, its pid from
    `SystemInfo.getProcessInfo`: the browser runs on this machine, as its loopback port must; port 0: the
    `DevToolsActivePort` file of its user data directory), or None: not Chromium, no port, or no browser (a
    persistent context). Kept per browser."""
    if browser is None or getattr(getattr(browser, "browser_type", None), "name", None) != "chromium":
        return None
    known = getattr(browser, "_credemu_devtools_port", False)
    if known is not False:
        return known
    port = None
    try:
        session = yield browser.new_browser_cdp_session()
        try:
            try:
                arguments = (yield session.send("Browser.getBrowserCommandLine"))["arguments"]
            except Exception:   # noqa: BLE001 - no --enable-automation
                processes = (yield session.send("SystemInfo.getProcessInfo"))["processInfo"]
                pids = [p["id"] for p in processes if p.get("type") == "browser"]
                arguments = Path(f"/proc/{pids[0]}/cmdline").read_text().split("\0") if pids else []
        finally:
            yield session.detach()
        switches = dict(a[2:].split("=", 1) for a in arguments if a.startswith("--") and "=" in a)
        given = switches.get("remote-debugging-port")
        if given is not None and given.isdigit():
            port = int(given)
            if port == 0 and switches.get("user-data-dir"):
                active = Path(switches["user-data-dir"]) / "DevToolsActivePort"
                port = int(active.read_text().split()[0]) if active.exists() else None
    except Exception:   # noqa: BLE001 - no such process, no file
        port = None
    try:
        browser._credemu_devtools_port = port
    except AttributeError:
        pass
    return port or None


def _channel_binding(target, relay):
    """A Playwright binding the shim sends its requests through: its calls are relayed to credemu on the relay's
    worker threads (the binding answers with an awaitable, so a conditional get waiting for a pick holds no
    Playwright dispatcher), with the origin of the calling frame as Playwright reports it (`frame.url`). Its name is
    random, and exposed before the shim's init script, which takes it off `window` first thing."""
    name = "__credemuChannel_" + secrets.token_hex(16)

    def call(source, message):
        import asyncio
        return asyncio.get_running_loop().run_in_executor(relay.pool, relay.answer, message, source["frame"].url)
    target.expose_binding(name, call)
    return name


_ASYNC = "install_shim drives Playwright's sync API; with the async API, `await credemu.shim.install_shim_async(context, client)`"


async def install_shim_async(target, client, *, profile=None, autofill=True, allow_frame_origins=False):
    """`install_shim` for Playwright's async API: a `BrowserContext` or `Page` of `playwright.async_api`, through
    the driver's channel (the page's CSP stays in force), for `profile` (default: the client's). Returns the relay
    (close it when done; a closed context drops it anyway). The same bindings as the sync API's, awaited."""
    import asyncio
    shim_profile = profile or client.profile
    relay = Relay(client, profile=shim_profile, allow_frame_origins=allow_frame_origins)
    loop = asyncio.get_running_loop()
    fill = None
    if autofill:
        fill = "__credemuFill_" + secrets.token_hex(8)

        async def insert(source, text):
            await source["page"].keyboard.insert_text(str(text))
        await target.expose_binding(fill, insert)
    channel = "__credemuChannel_" + secrets.token_hex(16)
    await target.expose_binding(channel, lambda source, message: loop.run_in_executor(relay.pool, relay.answer, message,
                                                                                        source["frame"].url))
    pairing = await _Pairing.of(target, client, None, profile=shim_profile, device=None,
                                allow_frame_origins=allow_frame_origins, asynchronous=True)
    names = pairing.names if pairing else (None, None)
    script = await loop.run_in_executor(None, lambda: client.shim(shim_profile, autofill=autofill, fill_binding=fill,
                                                                  channel=channel, server_channel=names[0],
                                                                  server_handoff=names[1]))
    await target.add_init_script(script=script)
    if pairing:
        await pairing.start()
    return relay


def _fill_binding(target):
    """A Playwright binding the shim fills through: the driver inserts the text into the focused field as typed
    input (`Input.insertText` in Chromium), so the page's events are trusted. Its name is random, and exposed
    before the shim's init script, which takes it off `window` first thing."""
    name = "__credemuFill_" + secrets.token_hex(8)
    target.expose_binding(name, lambda source, text: source["page"].keyboard.insert_text(str(text)))
    return name


def _selenium(driver, script, bypass_csp):
    if bypass_csp:
        driver.execute_cdp_cmd("Page.setBypassCSP", {"enabled": True})
    return driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": script})["identifier"]


def _is_coroutine_function(function):
    import inspect
    return inspect.iscoroutinefunction(function)


def _playwright(target, script, bypass_csp):
    if _is_coroutine_function(target.add_init_script):
        raise TypeError(_ASYNC)
    target.add_init_script(script=script)
    if not bypass_csp:
        return
    if hasattr(target, "new_page"):  # a BrowserContext
        if _context_bypasses_csp(target):
            return
        for page in target.pages:
            _bypass_csp(target, page)
        warnings.warn("credemu: this Playwright context was made without bypass_csp=True, so the pages it opens from now "
                      "on keep their Content-Security-Policy, which may block the shim's requests; make the context with "
                      "bypass_csp=True, or pass the Browser to get such a context", stacklevel=3)
    else:
        if not _context_bypasses_csp(target.context):
            _bypass_csp(target.context, target)


def _context_bypasses_csp(context):
    """Whether the context was made with `bypass_csp=True` (Playwright keeps its options; no public accessor)."""
    try:
        return bool(context._impl_obj._options.get("bypassCSP"))
    except AttributeError:
        return False


def _bypass_csp(context, page):
    """Page.setBypassCSP over a CDP session (Chromium)."""
    try:
        session = context.new_cdp_session(page)
        session.send("Page.setBypassCSP", {"enabled": True})
    except Exception as error:  # noqa: BLE001 - Firefox and WebKit have no CDP
        warnings.warn(f"credemu: could not bypass the page's Content-Security-Policy ({error}); make the Playwright "
                      "context with bypass_csp=True, or a strict CSP will block the shim's requests", stacklevel=4)
