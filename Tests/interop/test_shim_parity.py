"""The browser is the reference: in one headless Chromium, the same battery of in-page checks
(shim_parity_checks.js) runs once where Chromium's own credential manager answers (its virtual authenticator, over
CDP) and once where credemu's shim does, and the two summaries must be equal. The checks record only what both
must give alike: interface shapes, WebIDL conversions, error names and messages, pending and abort behaviour, the
JSON forms and key orders. Values that legitimately differ (credential IDs, keys, AAGUIDs, flags, transports) are
never recorded.

Then what only the shim has: set-up failures (one console line naming the fix, a browser-like rejection) and
password recording with autofill off.

Every test runs three ways (the module's `session`): the shim over the page's fetch with the CSP bypassed, as
before the driver's channel; and over the channel (a DevTools connection of the test's own to Selenium's tab,
`credemu.browsers.ChromiumTab`, relayed by `credemu.relay.Relay`) with no bypass, on the page as served and on
the page serving a strict CSP (`default-src 'self'; script-src 'self' 'unsafe-inline'`).
"""
import http.server
import json
import os
import re
import socketserver
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from api_client import Server
from conftest import BINARY, STRICT_CSP
from shim_drivers import selenium_chromium

from credemu import Client
from credemu.browsers import ChromiumTab
from credemu.relay import Relay

CHECKS = (Path(__file__).parent / "shim_parity_checks.js").read_text()
RUN = CHECKS + """
const done = arguments[arguments.length - 1];
runParity(arguments[0]).then(done, (e) => done({crashed: String(e && e.stack || e)}));
"""
WARNING = re.compile(r'"?((?:Ignoring unknown publicKey|publicKey\.pubKeyCredParams is missing)[^"]*)"?$')
VIRTUAL_AUTHENTICATOR = {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
                         "isUserVerified": True, "automaticPresenceSimulation": True}

# Checks whose values differ for a reason outside the shim, each with the reason. Keep this list short and honest.
DIFFERENCES = {
    # Chromium accepts an empty user.id (it checks only the 64-byte maximum); the server refuses it as WebAuthn L3
    # §5.1.3 asks of a client. Server change: accept 0 bytes.
    "conversion/an empty user.id": "server",
}

PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>parity</title></head><body>
<form id="sign-in" action="/signed-in" method="get"><input id="username" name="username" autocomplete="username">
<input id="password" name="password" type="password" autocomplete="current-password"><button id="go">Sign in</button></form>
</body></html>"""


class Page(http.server.BaseHTTPRequestHandler):
    policy = None   # a Content-Security-Policy on every page, when set

    def do_GET(self):
        body = PAGE if not self.path.startswith("/blank") else b"<!doctype html><title>blank</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        if self.policy:
            self.send_header("Content-Security-Policy", self.policy)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Session:
    """One headless Chromium, a page on http://localhost:PORT (a secure context), and credemu allowing it."""

    def __init__(self, tmp, transport="fetch", policy=None):
        self.transport = transport
        self.tab = None
        handler = type("PolicyPage", (Page,), {"policy": policy})
        self.httpd = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.origin = f"http://localhost:{self.httpd.server_address[1]}"
        self.tmp = tmp
        self.servers = []
        # The reference is Chromium's testing API with its UI off, where a get that finds no credential fails at once
        # (AdjustTimeout takes the page's timeout as given, no sheet is shown); real Chrome shows its sheet until the
        # user dismisses it. So the compared server plays GPM with that one knob as the testing API behaves.
        packs = tmp / "testing-api-packs"
        packs.mkdir()
        gpm = json.loads((Path(__file__).resolve().parents[2] / "providers" / "gpm.json").read_text())
        gpm["knobs"]["modalGet.noCredential"] = {"value": "failsAtOnce", "source": "credemu-model"}
        (packs / "gpm.json").write_text(json.dumps(gpm))
        self.server = self.start_server("main", "--allow-origin", self.origin, env=dict(os.environ, CREDEMU_PROVIDERS=str(packs)))
        # No name resolves but loopback's: Chromium's related-origins fetch for a foreign RP ID fails at once.
        self.driver = selenium_chromium("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
                                        console=True, script_timeout=90)
        self.scripts = []

    def start_server(self, name, *extra, env=None):
        directory = self.tmp / name
        directory.mkdir()
        server = Server(BINARY, directory, *extra, env=env)
        self.servers.append(server)
        return server

    def shim(self, server, query="profile=default"):
        """Loads the shim from `server` into every new document of the page, instead of any shim before."""
        for identifier in self.scripts:
            self.driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": identifier})
        self.scripts = []
        if self.tab is not None:
            self.tab.close()
            self.tab = None
        if self.transport == "channel":
            # The relay holds what the shim's query names: its target, and the token if it was given one.
            given = dict(urllib.parse.parse_qsl(query))
            relay = Relay(Client(server.url, token=given.get("token")), profile=given.get("profile"), device=given.get("device"))
            self.tab = ChromiumTab.of_selenium(self.driver)
            channel, reply = self.tab.add_channel(relay)
            status, source = server.call("GET", f"/shim.js?{query}&debug=1&channel={channel}&channelReply={reply}")
            assert status == 200
            self.tab.add_preload_script(source.decode())
            return
        # debug=1: the checks read which calls reached credemu from the shim's log (no page can without it).
        status, source = server.call("GET", "/shim.js?" + query + "&debug=1")
        assert status == 200
        self.driver.execute_cdp_cmd("Page.setBypassCSP", {"enabled": True})
        self.scripts.append(self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": source.decode()})["identifier"])

    def open(self, path="/blank"):
        self.driver.get(self.origin + path)
        self.driver.get_log("browser")  # what loading printed is not the checks'

    def run(self, phase):
        out = self.driver.execute_async_script(RUN, phase)
        assert "crashed" not in out, out["crashed"]
        # Chromium's console warnings about the options (unknown values ignored, default algorithms missing).
        out[f"console/warnings ({phase})"] = [WARNING.search(line).group(1) for line in self.console() if WARNING.search(line)]
        return out

    def console(self):
        return [entry["message"] for entry in self.driver.get_log("browser")]

    def close(self):
        if self.tab is not None:
            self.tab.close()
        self.driver.quit()
        for server in self.servers:
            server.stop()
        self.httpd.shutdown()


TRANSPORTS = {"fetch": ("fetch", None), "channel": ("channel", None), "channel-strict-csp": ("channel", STRICT_CSP)}


@pytest.fixture(scope="module", params=TRANSPORTS)
def session(request, tmp_path_factory):
    s = Session(tmp_path_factory.mktemp("parity"), *TRANSPORTS[request.param])
    yield s
    s.close()


def chromium_summary(s):
    driver = s.driver
    driver.execute_cdp_cmd("WebAuthn.enable", {"enableUI": False})
    options = dict(VIRTUAL_AUTHENTICATOR, automaticPresenceSimulation=False)  # requests wait: nobody touches it
    authenticator = driver.execute_cdp_cmd("WebAuthn.addVirtualAuthenticator", {"options": options})["authenticatorId"]
    try:
        s.open()
        summary = s.run("pending")
        driver.execute_cdp_cmd("WebAuthn.setAutomaticPresenceSimulation", {"authenticatorId": authenticator, "enabled": True})
        s.open()
        summary.update(s.run("idle"))
    finally:
        driver.execute_cdp_cmd("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": authenticator})
    # CTAP 2.1 with hmac-secret and largeBlob, fresh: its outputs are what GPM's pack answers (the PRF evaluated at creation
    # and assertion, large blobs stored), so their shapes must be the shim's.
    options = dict(VIRTUAL_AUTHENTICATOR, ctap2Version="ctap2_1", hasPrf=True, hasLargeBlob=True)
    authenticator = driver.execute_cdp_cmd("WebAuthn.addVirtualAuthenticator", {"options": options})["authenticatorId"]
    try:
        s.open()
        summary.update(s.run("extensions"))
        return summary
    finally:
        driver.execute_cdp_cmd("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": authenticator})
        driver.execute_cdp_cmd("WebAuthn.disable", {})


def shim_summary(s):
    server = s.server
    s.shim(server)
    # The pending phase's two ceremonies that reach the server (a modal create, a conditional get) are held.
    holds = [server.call("POST", "/profiles/default/holds", {"timeoutMs": 60000})[1]["id"] for _ in range(2)]
    try:
        s.open()
        summary = s.run("pending")
    finally:
        for hold in holds:
            server.call("POST", f"/holds/{hold}/release", {"outcome": "cancel"})
    s.open()
    summary.update(s.run("idle"))
    answered = s.driver.execute_script("return window.__credemuShim.log.map((e) => e.path)")
    s.open()
    summary.update(s.run("extensions"))
    assert "/credentials/create" in answered and "/credentials/get" in answered, "the shim, not Chromium, answered"
    return summary


def test_the_shim_is_indistinguishable_from_chromiums_own_credential_manager(session):
    reference = chromium_summary(session)
    emulated = shim_summary(session)
    if os.environ.get("PARITY_DUMP"):   # both summaries, to read a difference in full
        Path(os.environ["PARITY_DUMP"]).write_text(json.dumps({"chromium": reference, "shim": emulated}, indent=1))
    assert len(reference) >= 40
    assert set(reference) == set(emulated), sorted(set(reference) ^ set(emulated))
    differing = {name: (reference[name], emulated[name]) for name in reference if reference[name] != emulated[name]}
    unexpected = {name: pair for name, pair in differing.items() if name not in DIFFERENCES}
    report = "\n".join(f"{name}\n   chromium: {json.dumps(a)[:600]}\n   shim:     {json.dumps(b)[:600]}" for name, (a, b) in sorted(unexpected.items()))
    assert not unexpected, f"{len(unexpected)} of {len(reference)} checks differ:\n{report}"
    stale = [name for name in DIFFERENCES if name in reference and name not in differing]
    assert not stale, f"these no longer differ: take them out of DIFFERENCES: {stale}"
    print(f"{len(reference)} checks compared; {len(differing)} known differences: {sorted(differing)}")


def error_of(s, script):
    return s.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        (async () => { %s })().then((v) => done(['resolved', String(v)]),
          (e) => done([e.constructor.name, e.name, e.message, e.credemu ? e.credemu.reason : null, Object.keys(e)]));
    """ % script)


CREATE = """return navigator.credentials.create({publicKey: {rp: {name: 'x'}, user: {id: new Uint8Array(4), name: 'a', displayName: 'a'},
            challenge: new Uint8Array(16), pubKeyCredParams: [{type: 'public-key', alg: -7}]}});"""
NOT_READABLE = ["DOMException", "NotReadableError", "An unknown error occurred while talking to the credential manager."]


def test_set_up_failures_say_how_to_fix_them_once_and_reject_like_a_browser(session):
    s = session
    # The origin is not allowed (the page sees a CORS failure, "Failed to fetch").
    closed = s.start_server("closed")
    s.shim(closed)
    s.open()
    assert error_of(s, CREATE) == NOT_READABLE + ["originNotAllowed", []]
    assert error_of(s, "return PublicKeyCredential.getClientCapabilities();")[:4] == NOT_READABLE + ["originNotAllowed"]
    lines = [line for line in s.console() if "credemu:" in line]
    assert len(lines) == 1 and f"start it with --allow-origin {s.origin}" in lines[0], lines

    # Nothing answers at all.
    closed.stop()
    s.open()
    assert error_of(s, CREATE)[:4] == NOT_READABLE + ["serverUnreachable"]
    lines = [line for line in s.console() if "credemu:" in line]
    assert len(lines) == 1 and "no credemu server answers" in lines[0] and f"--allow-origin {s.origin}" in lines[0], lines

    # The profile does not exist.
    s.shim(s.server, "profile=nobody")
    s.open()
    assert error_of(s, CREATE)[:4] == NOT_READABLE + ["unknownProfile"]
    lines = [line for line in s.console() if "credemu:" in line]
    assert len(lines) == 1 and "no profile 'nobody'" in lines[0], lines

    # The server wants a token the shim was not given.
    guarded = s.start_server("guarded", "--allow-origin", s.origin, "--token", "sesame")
    s.shim(guarded)
    s.open()
    assert error_of(s, CREATE)[:4] == NOT_READABLE + ["tokenMissing"]
    lines = [line for line in s.console() if "credemu:" in line]
    assert len(lines) == 1 and "token=" in lines[0], lines
    s.shim(guarded, "profile=default&token=sesame")
    s.open()
    assert error_of(s, CREATE) == ["resolved", "[object PublicKeyCredential]"]
    guarded.stop()   # started by this test, stopped by it (the session's own server outlives it)

    # A WebAuthn refusal is no set-up failure: no console line, and credemu's detail stays off the enumerable keys.
    s.shim(s.server)
    s.open()
    refused = error_of(s, CREATE.replace("alg: -7", "alg: -999"))
    assert refused[:3] == ["DOMException", "NotAllowedError", "The operation either timed out or was not allowed. See: https://www.w3.org/TR/webauthn-2/#sctn-privacy-considerations-client."]
    assert refused[3:] == ["unsupportedAlgorithm", []]
    assert not [line for line in s.console() if "credemu:" in line]


def test_chromes_sheet_with_no_credential_stays_until_the_user_dismisses_it_or_the_page_aborts(session):
    s = session
    shipped = s.start_server("shipped-gpm", "--allow-origin", s.origin)
    try:
        s.shim(shipped)
        s.open()
        begin = """
            window.__sheet = {abort: new AbortController(), started: performance.now()};
            window.__sheet.got = navigator.credentials.get({signal: window.__sheet.abort.signal, publicKey: {challenge: new Uint8Array(16),
                timeout: 600000, allowCredentials: [{type: 'public-key', id: new Uint8Array(8)}]}}).then(() => 'resolved', (e) => e.name);
        """
        state = """
            const done = arguments[arguments.length - 1];
            Promise.race([window.__sheet.got, new Promise((r) => setTimeout(() => r('pending'), arguments[0]))])
              .then((v) => done([v, Math.round(performance.now() - window.__sheet.started)]));
        """
        # No credential anywhere: the sheet waits (no longer NotAllowedError at once); the page's abort ends it.
        s.driver.execute_script(begin)
        assert s.driver.execute_async_script(state, 1500)[0] == "pending"
        s.driver.execute_script("window.__sheet.abort.abort()")
        ended, elapsed = s.driver.execute_async_script(state, 3000)
        assert ended == "AbortError" and elapsed < 4000, (ended, elapsed)
        # The user's dismissal, queued before (the server answers a modal get on a pool thread, where it does not wait),
        # gives the old failure at once.
        assert shipped.call("POST", "/profiles/default/user", {"decisions": ["cancel"]})[0] == 200
        s.driver.execute_script(begin)
        ended, elapsed = s.driver.execute_async_script(state, 3000)
        assert ended == "NotAllowedError" and elapsed < 3000, (ended, elapsed)
        events = shipped.call("GET", "/profiles/default/events?kind=get")[1]["events"]
        assert [e["reason"] for e in events][-2:] == ["timedOut", "userCancelled"], events
    finally:
        shipped.stop()
        s.shim(s.server)


def test_autofill_off_still_records_a_typed_password(session):
    s = session
    s.shim(s.server, "profile=default&autofill=0")
    origin = s.origin
    assert s.server.call("POST", "/profiles/default/passwords", {"origin": origin, "username": "saved@example.com", "password": "saved"})[0] == 201
    s.open("/sign-in")
    # Nothing is filled with autofill=0, though a password is saved for the origin.
    assert s.driver.execute_script("return [username.value, password.value]") == ["", ""]
    s.driver.execute_script("username.value = 'typed@example.com'; password.value = 'typed secret'; go.click();")
    deadline = time.time() + 10
    while time.time() < deadline:
        passwords = s.server.call("GET", "/profiles/default/passwords")[1]["passwords"]
        names = sorted(p["username"] for p in passwords if p["origin"] == origin)
        if "typed@example.com" in names:
            break
        time.sleep(0.05)
    assert names == ["saved@example.com", "typed@example.com"]
    assert s.server.call("GET", "/profiles/default/events?kind=autofill")[1]["events"] == [], "autofill=0 fills nothing"


def test_a_prompt_left_to_time_out_settles_at_the_timeout_and_an_abort_ends_it_sooner(session):
    s = session
    s.shim(s.server)
    s.open()
    settle = """
        const done = arguments[arguments.length - 1];
        const signal = arguments[0] ? AbortSignal.timeout(arguments[0]) : undefined;
        const started = performance.now();
        navigator.credentials.create({signal, publicKey: {rp: {name: 'x'}, user: {id: new Uint8Array(4), name: 'a', displayName: 'a'},
            challenge: new Uint8Array(16), pubKeyCredParams: [{type: 'public-key', alg: -7}], timeout: 1500}})
          .then(() => done(['resolved']), (e) => done([e.name, Math.round(performance.now() - started), e.credemu ? e.credemu.reason : null]));
    """
    assert s.server.call("POST", "/profiles/default/user", {"decisions": ["timeout", "timeout"]})[0] == 200
    name, elapsed, reason = s.driver.execute_async_script(settle, 0)
    assert (name, reason) == ("NotAllowedError", "timedOut") and 1400 <= elapsed < 5000, (name, elapsed, reason)
    name, elapsed, _ = s.driver.execute_async_script(settle, 300)
    assert name == "TimeoutError" and elapsed < 1200, (name, elapsed)
    s.server.call("DELETE", "/profiles/default/user")


# A browser whose CredentialMediationRequirement has "immediate" (Chrome 148+ as Google ships it), for the shim's probe:
# its get() converts the members in order, "immediate" among the values, and rejects an aborted signal. Debian's
# Chromium 156 has no such value, so the accepting path is shown against this stand-in, installed before the shim.
BROWSER_WITH_IMMEDIATE = """
(() => {
  const original = CredentialsContainer.prototype.get;
  const values = ['silent', 'optional', 'conditional', 'required', 'immediate'];
  CredentialsContainer.prototype.get = function (options) {
    for (const key of ['digital', 'federated', 'identity', 'mediation', 'otp', 'password', 'publicKey', 'signal', 'uiMode']) {
      const value = options == null ? undefined : options[key];
      if (key === 'mediation' && value !== undefined && !values.includes(String(value))) return Promise.reject(new TypeError('not a mediation'));
      if (key === 'signal' && value && value.aborted) return Promise.reject(value.reason);
    }
    window.__standInCalled = (window.__standInCalled || 0) + 1;
    return original.apply(this, arguments);
  };
})();
"""

IMMEDIATE_GET = """
    const started = performance.now();
    try {
      const c = await navigator.credentials.get({mediation: 'immediate', publicKey: {challenge: new Uint8Array(16), timeout: 60000}});
      return ['resolved', String(c), c.response.userHandle ? c.response.userHandle.byteLength : null];
    } catch (e) {
      return [e.name, e.credemu ? e.credemu.reason : null, performance.now() - started < 450];
    }
"""
DISCOVERABLE = """return String(await navigator.credentials.create({publicKey: {rp: {name: 'x'}, user: {id: new Uint8Array([9, 9]), name: 'a', displayName: 'a'},
            challenge: new Uint8Array(16), pubKeyCredParams: [{type: 'public-key', alg: -7}], authenticatorSelection: {residentKey: 'required'}}}));"""
IMMEDIATE_TYPE_ERROR = ["TypeError", "TypeError", "Failed to execute 'get' on 'CredentialsContainer': Failed to read the 'mediation' property from "
                        "'CredentialRequestOptions': The provided value 'immediate' is not a valid enum value of type CredentialMediationRequirement."]


def activate(s):
    """A real click on the page (trusted input): the document has transient user activation for a few seconds."""
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(s.driver).move_by_offset(5, 5).click().move_by_offset(-5, -5).perform()


def run_in_page(s, script):
    return s.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        (async () => { %s })().then(done, (e) => done(['threw', e.constructor.name, e.name, e.message]));
    """ % script)


def shim_requests(s):
    return s.driver.execute_script("return window.__credemuShim.log.map((e) => e.path)")


def test_immediate_mediation_is_accepted_only_where_both_the_browser_and_the_pack_have_it(session):
    s = session
    for name, settings in [("immediate", {}), ("immediate-m147", {"browserVersion": "147"})]:
        assert s.server.call("POST", "/profiles", {"name": name, "pack": "gpm", **settings})[0] == 201
    # This Chromium (156, Debian's) has no "immediate": the shim throws its TypeError though the pack has it, and
    # asks the server nothing.
    s.shim(s.server, "profile=immediate")
    s.open()
    assert error_of(s, "return navigator.credentials.get({mediation: 'immediate', publicKey: {challenge: new Uint8Array(16)}});")[:3] == IMMEDIATE_TYPE_ERROR
    assert "/credentials/get" not in shim_requests(s)

    stand_in = s.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": BROWSER_WITH_IMMEDIATE})["identifier"]
    try:
        s.shim(s.server, "profile=immediate")   # after the stand-in, as a browser's own get comes before the shim
        s.open()
        # Accepted, the engine's immediate path: no credential, NotAllowedError at once (no 500 ms prompt waited for).
        activate(s)
        assert run_in_page(s, IMMEDIATE_GET) == ["NotAllowedError", "noCredential", True]
        assert run_in_page(s, DISCOVERABLE) == "[object PublicKeyCredential]"
        # With a passkey it signs in; the page on localhost is exempt from the rate limit (2 in 5 s).
        for _ in range(3):
            activate(s)
            assert run_in_page(s, IMMEDIATE_GET) == ["resolved", "[object PublicKeyCredential]", 2]
        events = s.server.call("GET", "/profiles/immediate/events?kind=get")[1]["events"]
        assert [e["detail"].get("mediation") for e in events][-3:] == ["immediate"] * 3, events

        # Blink's checks, in its order, before anything reaches credemu: an allow list, then the user activation,
        # which the get consumed (the page still reads it as active: only the shim knows it was spent).
        asked = len(shim_requests(s))
        activate(s)
        assert error_of(s, "return navigator.credentials.get({mediation: 'immediate', publicKey: {challenge: new Uint8Array(16), "
                           "allowCredentials: [{type: 'public-key', id: new Uint8Array(4)}]}});")[:3] == \
            ["DOMException", "NotAllowedError", "An allowCredentials is not allowed with immediate mediation."]
        assert run_in_page(s, IMMEDIATE_GET)[:2] == ["resolved", "[object PublicKeyCredential]"], "the refused request consumed nothing"
        assert s.driver.execute_script("return navigator.userActivation.isActive") is True
        assert error_of(s, "return navigator.credentials.get({mediation: 'immediate', publicKey: {challenge: new Uint8Array(16), "
                           "extensions: {credProps: true}}});")[:3] == \
            ["DOMException", "NotAllowedError", "A user activation is required to request immediate credentials."]
        assert len(shim_requests(s)) == asked + 1, "only the one signed in reached credemu"
        activate(s)
        assert error_of(s, "return navigator.credentials.get({mediation: 'immediate', publicKey: {challenge: new Uint8Array(16), "
                           "extensions: {credProps: true}}});")[:3] == \
            ["DOMException", "NotSupportedError", "The 'credProps' extension is only valid when creating a credential"], "a new click, a new activation"
        assert s.driver.execute_script("return window.__standInCalled || 0") == 0, "the probe never reached the stand-in's real get"

        # The pack's browser version before M148: the shim's own TypeError, though this browser has the value.
        s.shim(s.server, "profile=immediate-m147")
        s.open()
        assert error_of(s, "return navigator.credentials.get({mediation: 'immediate', publicKey: {challenge: new Uint8Array(16)}});")[:3] == IMMEDIATE_TYPE_ERROR
        assert "/credentials/get" not in shim_requests(s)
    finally:
        s.driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": stand_in})


def test_a_provider_without_its_own_get_public_key_leaves_the_page_the_browsers_illegal_invocation(session, tmp_path):
    s = session
    # keepassxc-browser before #2323 (response.getPublicKey absent), as a pack from a directory replacing the shipped one.
    pack = json.loads((Path(__file__).resolve().parents[2] / "providers" / "keepassxc.json").read_text())
    pack["knobs"]["response.getPublicKey"]["value"] = "absent"
    (tmp_path / "packs").mkdir()
    (tmp_path / "packs" / "keepassxc.json").write_text(json.dumps(pack))
    old = s.start_server("keepassxc-before-2323", "--allow-origin", s.origin, env=dict(os.environ, CREDEMU_PROVIDERS=str(tmp_path / "packs")))
    shipped = s.start_server("keepassxc-shipped", "--allow-origin", s.origin)
    probe = """
        const c = await navigator.credentials.create({publicKey: {rp: {name: 'x'}, user: {id: new Uint8Array(4), name: 'a', displayName: 'a'},
            challenge: new Uint8Array(16), pubKeyCredParams: [{type: 'public-key', alg: -7}]}});
        let called;
        try { const key = c.response.getPublicKey(); called = ['returned', key === null ? 'null' : String(key)]; } catch (e) { called = [e.constructor.name, e.message]; }
        // The browser's own method on an object that is not the browser's: what the page gets where no member shadows it.
        let native;
        try { AuthenticatorAttestationResponse.prototype.getPublicKey.call(Object.create(AuthenticatorAttestationResponse.prototype)); } catch (e) { native = [e.constructor.name, e.message]; }
        return [called, native, Object.getOwnPropertyNames(c.response), 'getPublicKey' in c.response, c.response.getPublicKeyAlgorithm(),
                'publicKey' in c.toJSON().response];
    """
    try:
        for server in (old, shipped):
            assert server.call("POST", "/profiles", {"name": "kp", "pack": "keepassxc"})[0] == 201
        s.shim(old, "profile=kp")
        s.open()
        called, native, own, reachable, algorithm, in_json = run_in_page(s, probe)
        assert called == ["TypeError", "Illegal invocation"] == native
        assert (own, reachable, algorithm, in_json) == ([], True, -7, False)
        # The newest keepassxc-browser (the shipped pack): its own member answers null.
        s.shim(shipped, "profile=kp")
        s.open()
        called, native, own, reachable, algorithm, in_json = run_in_page(s, probe)
        assert called == ["returned", "null"] and native == ["TypeError", "Illegal invocation"]
        assert (own, reachable, algorithm, in_json) == ([], True, -7, False)
    finally:
        old.stop()
        shipped.stop()
        s.shim(s.server)
