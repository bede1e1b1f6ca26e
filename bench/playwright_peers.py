"""The in-page loop under Playwright (sync Python API), for `side_by_side.py`: Playwright's own authenticator
(`context.credentials.install()`) and credemu through its Playwright surface (`credemu.credentials(context,
pack="gpm").install()`), each in a context of its own in a Playwright-launched Chromium (the same binary as the CDP
peers'), on the same page. credemu twice: in a Chromium launched with a DevTools port (`--remote-debugging-port=0`,
as the pytest plugin launches it), where `credemu serve` answers the page itself over a paired channel (the
server's `answeringMs` per ceremony taken alongside), and in one without, where the shim's calls cross
Playwright's `expose_binding` to the Python client, which relays them to credemu.

Where a client-relayed ceremony spends its time, three figures taken alongside the loops:
- the relay's work per ceremony: its HTTP request to credemu (`Relay.timings`) and the whole of `Relay.answer`
  (the request, JSON, the route and origin checks), counted by a bench-only subclass of the relay (below);
- the binding's own round trip: an in-page loop calling a no-op binding of the channel's shape (`expose_binding`
  answered with an awaitable run on a thread pool, as `credemu.shim._channel_binding` does, whose value is a dict
  the size of a registration's reply, which Playwright's Python side serializes), and the floor of any binding
  call: one answered in place with a string;
- the rest is the page: the shim's JS, the page's own ceremony code.
"""
import concurrent.futures
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import credemu.shim
from credemu import Client
from credemu.playwright import credentials as credemu_credentials
from credemu.relay import Relay
from worker import Worker

# A no-op binding's in-page loop: calls/s of `window[name](message)` with a message of a ceremony's size.
ECHO_LOOP = """(async ([name, seconds]) => {
  const message = JSON.stringify({ id: "x", method: "POST", path: "/credentials/create", body: { pad: "x".repeat(600) } });
  let n = 0;
  const t0 = performance.now(), end = t0 + seconds * 1000;
  while (performance.now() < end) { await window[name](message); n++; }
  return n / ((performance.now() - t0) / 1000);
})"""


# A relayed registration's reply as the relay returns it (`{"id", "status", "body"}`), its fields of their usual sizes.
REPLY = {"id": "x", "status": 200, "body": {
    "id": "A" * 43, "rawId": "A" * 43, "type": "public-key", "authenticatorAttachment": "platform",
    "response": {"clientDataJSON": "B" * 160, "attestationObject": "C" * 400, "authenticatorData": "D" * 200,
                 "publicKey": "E" * 120, "publicKeyAlgorithm": -7, "transports": ["internal", "hybrid"]},
    "clientExtensionResults": {"credProps": {"rk": True}}}}


class _Counted(Relay):
    """The channel's relay, counting its answers and their seconds (bench only: `credemu.shim` makes it through
    its module's `Relay` name while the bench installs)."""
    made = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.answers = None   # [count, seconds] while measuring
        _Counted.made.append(self)

    def answer(self, message, origin):
        started = time.perf_counter()
        try:
            return super().answer(message, origin)
        finally:
            if self.answers is not None:
                self.answers[0] += 1
                self.answers[1] += time.perf_counter() - started


class PlaywrightPeers:
    """One Playwright, its Chromium, and a page per peer at `page_url`; `api` is the bench's `credemu serve`."""

    def __init__(self, api, page_url, loop):
        from playwright.sync_api import sync_playwright
        self.loop = loop
        self.playwright = sync_playwright().start()
        try:
            chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
            self.browser = self.playwright.chromium.launch(executable_path=chromium,
                                                           args=["--no-sandbox", "--remote-debugging-port=0"])
            self.plain = self.playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            own = self.browser.new_context()
            own.credentials.install()
            self.own = own.new_page()
            self.client = Client(api)
            served = self.browser.new_context()
            self.served_profile = credemu_credentials(served, client=self.client, pack="gpm").profile.profile
            served.credentials.install()
            self.ours = served.new_page()
            relayed = self.plain.new_context()
            original, credemu.shim.Relay = credemu.shim.Relay, _Counted
            try:
                credemu_credentials(relayed, client=self.client, pack="gpm").install()
            finally:
                credemu.shim.Relay = original
            [self.relay] = [r for r in _Counted.made if r.target.startswith("/profiles/pw-")][-1:]
            self.relayed = relayed.new_page()
            echo = self.plain.new_context()
            self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=4)

            def threaded(source, message):
                import asyncio
                return asyncio.get_running_loop().run_in_executor(self.pool, lambda: REPLY)
            echo.expose_binding("benchEchoThreaded", threaded)
            echo.expose_binding("benchEchoInPlace", lambda source, message: message)
            self.echo = echo.new_page()
            for page in (self.own, self.ours, self.relayed, self.echo):
                page.goto(page_url)
        except BaseException:
            self.close()
            raise

    def run(self, page, mode, seconds):
        return page.evaluate(f"({self.loop})('{mode}', {seconds})")

    def warm(self, create, loop_seconds):
        for page in (self.own, self.ours, self.relayed):
            page.evaluate(create)
            self.run(page, "get", loop_seconds)

    def _answered(self):
        channels = [c for c in self.client.channels() if c["profile"] == self.served_profile]
        return sum(c["answered"] for c in channels), sum(c["answeringMs"] for c in channels)

    def served_loop(self, mode, seconds, results):
        """credemu's in-page loop over the paired channel; meanwhile the server's milliseconds per answer."""
        count, ms = self._answered()
        rate = self.run(self.ours, mode, seconds)
        now, now_ms = self._answered()
        if now > count:
            results[f"pw-served-answer-{mode}"].append((now_ms - ms) / 1000 / (now - count))
            results[f"pw-served-share-{mode}"].append((now - count) / max(rate * seconds, 1))
        return rate

    def credemu_loop(self, mode, seconds, results):
        """credemu's in-page loop over the client's relay; meanwhile the relay's HTTP seconds and answers, per
        ceremony, into `results`."""
        self.relay.timings, self.relay.answers = [], [0, 0.0]
        rate = self.run(self.relayed, mode, seconds)
        ceremonies = rate * seconds
        if ceremonies >= 1 and self.relay.timings:
            results[f"pw-http-{mode}"].append(sum(self.relay.timings) / ceremonies)
            results[f"pw-answer-{mode}"].append(self.relay.answers[1] / ceremonies)
            results[f"pw-messages-{mode}"].append(self.relay.answers[0] / ceremonies)
        self.relay.timings, self.relay.answers = None, None
        return rate

    def figures(self, results):
        return {
            "pw-own-create": lambda s: self.run(self.own, "create", s),
            "pw-own-get": lambda s: self.run(self.own, "get", s),
            "pw-credemu-create": lambda s: self.served_loop("create", s, results),
            "pw-credemu-get": lambda s: self.served_loop("get", s, results),
            "pw-client-create": lambda s: self.credemu_loop("create", s, results),
            "pw-client-get": lambda s: self.credemu_loop("get", s, results),
            "pw-binding-threaded": lambda s: self.echo.evaluate(ECHO_LOOP, ["benchEchoThreaded", s]),
            "pw-binding-in-place": lambda s: self.echo.evaluate(ECHO_LOOP, ["benchEchoInPlace", s]),
        }

    SIDE_FIGURES = ("pw-http-create", "pw-http-get", "pw-answer-create", "pw-answer-get",
                    "pw-messages-create", "pw-messages-get", "pw-served-answer-create", "pw-served-answer-get",
                    "pw-served-share-create", "pw-served-share-get")

    def close(self):
        if getattr(self, "pool", None):
            self.pool.shutdown(wait=False)
        for browser in (getattr(self, "browser", None), getattr(self, "plain", None)):
            if browser:
                browser.close()
        self.playwright.stop()


class JsPeers:
    """The same two loops through the JS client (`bench/playwright_js.mjs` under Node, playwright-core from the
    Python wheel's driver, as `make test-clients` runs it), or None where Node 20 is missing."""

    @staticmethod
    def start(api, page_url, loop, create):
        node = shutil.which("node")
        if not node or int(subprocess.run([node, "-p", "process.versions.node.split('.')[0]"], capture_output=True,
                                          text=True).stdout.strip() or 0) < 20:
            return None
        import playwright
        directory = tempfile.mkdtemp(prefix="credemu-bench-js-")
        (Path(directory) / "loop.js").write_text(loop)
        (Path(directory) / "create.js").write_text(create)
        env = dict(os.environ, PLAYWRIGHT_CORE=str(Path(playwright.__file__).parent / "driver" / "package"))
        script = Path(__file__).resolve().parent / "playwright_js.mjs"
        worker = Worker(None, command=[node, str(script), api, page_url, f"{directory}/loop.js", f"{directory}/create.js"],
                        env=env)
        ready = worker.process.stdout.readline().split()
        if ready != ["ready", "0"]:
            raise SystemExit(f"bench/playwright_js.mjs did not start: {' '.join(ready) or 'no answer'}")
        return worker

    @staticmethod
    def figures(worker):
        if worker is None:
            return {}
        return {name: (lambda s, name=name: worker.figure(name, s))
                for name in ("js-own-create", "js-own-get", "js-credemu-create", "js-credemu-get", "js-client-create",
                             "js-client-get")}
