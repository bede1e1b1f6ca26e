"""The shim over the driver's own channel (issue 26): in Chromium, installed by the project's clients with no CSP
bypass, a page served with `default-src 'self'; script-src 'self' 'unsafe-inline'` registers and signs in
through the shim while its own policy stays in force; a page script finds no channel to call; and the relay
refuses every route but the shim's own, and any frame without an http(s) origin (docs/shim.md, "Transport")."""
import concurrent.futures
import contextlib
import json
import socket
import threading
import time

import pytest

from conftest import STRICT_CSP, example_rp_serving, html_site
from rp_journeys import playwright_manager
from shim_drivers import CHROMIUM, selenium_chromium

from credemu import browsers
from credemu.relay import Relay, frame_origin


# In the page: a registration and a sign-in through its navigator.credentials, then the page's own fetch to
# credemu (another origin: its CSP must refuse it) and to itself.
CEREMONIES = """(async () => {
  const out = {};
  try {
    const created = await navigator.credentials.create({publicKey: PublicKeyCredential.parseCreationOptionsFromJSON({
      rp: {id: 'localhost', name: 'Strict'}, user: {id: 'dXNlci0x', name: 'alice', displayName: 'Alice'},
      challenge: 'AAECAwQFBgcICQoLDA0ODw', pubKeyCredParams: [{type: 'public-key', alg: -7}],
      authenticatorSelection: {residentKey: 'required'}})});
    const got = await navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON({
      challenge: 'AAECAwQFBgcICQoLDA0ODw', rpId: 'localhost'})});
    Object.assign(out, {created: created.id, got: got.id});
  } catch (e) {
    Object.assign(out, {error: e.name, reason: e.credemu ? e.credemu.reason : null});
  }
  const violations = [];
  document.addEventListener('securitypolicyviolation', (e) => violations.push(e.effectiveDirective));
  out.foreignFetch = await fetch(SERVER + '/health').then(() => 'fetched', (e) => e.name);
  out.ownFetch = await fetch('/login').then((r) => r.status, (e) => e.name);
  await new Promise((r) => setTimeout(r, 50));
  out.violations = violations;
  out.policy = document.querySelector('meta[http-equiv]') ? 'meta' : 'header';
  return out;
})()"""

# What a page script can find of credemu's on window, and what calling the names it might know gives.
LOOK_AROUND = """(() => {
  const names = new Set([...Object.getOwnPropertyNames(window), ...Reflect.ownKeys(window).map(String)]);
  for (const k in window) names.add(k);
  let proto = Object.getPrototypeOf(window);
  while (proto) { Object.getOwnPropertyNames(proto).forEach((n) => names.add(n)); proto = Object.getPrototypeOf(proto); }
  const found = [...names].filter((n) => (/credemu/i.test(n) && n !== '__credemuShim') || n === CHANNEL || n === REPLY);
  const call = (name) => { try { const f = window[name]; if (typeof f !== 'function') return typeof f; f('{}'); return 'called'; }
                           catch (e) { return e.name; } };
  return {found, debug: Object.keys(window.__credemuShim || {}).sort(), channel: call(CHANNEL), typeofReply: typeof window[REPLY]};
})()"""


@contextlib.contextmanager
def chromium_over_cdp(client, origin, relay=None):
    with browsers.chromium() as browser:
        from credemu import install_shim
        install_shim(browser, client, origin=origin, relay=relay)
        yield lambda path: browser.navigate(origin + path), browser.evaluate, browser


@contextlib.contextmanager
def chromium_in_playwright(client, origin):
    from credemu import install_shim
    browser = playwright_manager().chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"])
    try:
        context = install_shim(browser, client, origin=origin)
        page = context.new_page()
        yield lambda path: page.goto(origin + path), lambda script: page.evaluate(script), page
    finally:
        browser.close()


@contextlib.contextmanager
def chromium_in_selenium(client, origin, relay=None):
    from credemu import install_shim
    driver = selenium_chromium(script_timeout=30)
    try:
        install_shim(driver, client, origin=origin, relay=relay)
        yield (lambda path: driver.get(origin + path),
               lambda script: driver.execute_async_script("const done = arguments[0]; Promise.resolve(" + script + ").then(done, (e) => done(String(e)));"),
               driver)
    finally:
        driver.quit()


# credemu.browsers and Selenium hand the tab to credemu serve's own relay (the server is local); the client's relay too.
DRIVERS = {"credemu.browsers": chromium_over_cdp, "credemu.browsers-client-relay": lambda c, o: chromium_over_cdp(c, o, relay="client"),
           "playwright": chromium_in_playwright, "selenium": chromium_in_selenium}


@pytest.fixture(scope="module")
def strict_rp():
    with example_rp_serving(STRICT_CSP) as origin:
        yield origin


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.credemu(pack="gpm")
def test_a_strict_csp_page_registers_and_signs_in_through_the_channel_and_keeps_its_policy(driver, strict_rp, credemu_profile):
    with DRIVERS[driver](credemu_profile, strict_rp) as (navigate, evaluate, _):
        navigate("/login")
        result = evaluate(CEREMONIES.replace("SERVER", json.dumps(credemu_profile.url)))
    assert "error" not in result, result
    assert result["created"] == result["got"]
    [passkey] = credemu_profile.passkeys()
    assert passkey["credentialId"] == result["created"] and passkey["rpId"] == "localhost"
    assert credemu_profile.events("get")[-1]["outcome"] == "success"
    # No bypass: the page's own fetch to credemu's origin is refused by its policy, its fetch to itself is not.
    assert result["foreignFetch"] == "TypeError" and result["violations"] == ["connect-src"], result
    assert result["ownFetch"] == 200


def test_a_page_script_finds_no_channel_on_window_and_the_names_call_nothing(strict_rp, credemu_profile):
    with chromium_over_cdp(credemu_profile, strict_rp, relay="client") as (navigate, evaluate, browser):
        [(channel, (_, reply))] = browser._channels.items()
        navigate("/login")
        browser.wait_for("document.readyState === 'complete'")
        before = len(credemu_profile.events())
        seen = evaluate(LOOK_AROUND.replace("CHANNEL", json.dumps(channel)).replace("REPLY", json.dumps(reply)))
        # The reply receiver is a top-level const: no property of window, reachable only by its random name, and
        # settling nothing but a pending request of the shim's own, by its random ID.
        forged = evaluate(f"[typeof {reply}, {reply}({{id: 'guessed', status: 200, body: {{}}}}), {reply}(null)]")
        after = len(credemu_profile.events())
        capabilities = evaluate("PublicKeyCredential.getClientCapabilities().then((c) => typeof c.conditionalCreate)")
    # The install mark is empty: the calls' log and autofill() only with the test code's debug=1 (issue 31).
    assert seen == {"found": [], "debug": [], "channel": "undefined", "typeofReply": "undefined"}, seen
    assert forged == ["function", False, False]
    assert after == before, "the forged replies asked credemu nothing"
    assert capabilities == "boolean", "the channel still answers the shim"


@pytest.mark.credemu(pack="gpm")
def test_in_playwright_a_page_that_digs_out_the_channel_reaches_only_the_shims_routes_for_its_own_origin(strict_rp, credemu_profile):
    """Playwright keeps its bindings' names in its own controller in the page's world: a page script can find the
    channel there. What it reaches through it is what its own fetch could, were its CSP to allow it."""
    with chromium_in_playwright(credemu_profile, strict_rp) as (navigate, evaluate, page):
        navigate("/login")
        found = evaluate("""(async () => {
          const controller = window.__playwright__binding__controller__;
          const name = [...controller._bindings.keys()].find((n) => n.startsWith('__credemuChannel_'));
          const send = (message) => controller.callBinding(name, JSON.stringify(message));
          return {
            operator: await send({id: 'a', method: 'POST', path: '/user', body: {decisions: ['accept']}}),
            escape: await send({id: 'b', method: 'POST', path: '/../../profiles/other/credentials/create', body: {}}),
            passkeys: await send({id: 'c', method: 'GET', path: '/passkeys', body: null}),
            otherSite: await send({id: 'd', method: 'POST', path: '/passwords', body: {origin: 'https://bank.example', username: 'u', password: 'p'}}),
            ownCapabilities: (await send({id: 'e', method: 'GET', path: '/capabilities', body: null})).status,
          };
        })()""")
    for key in ("operator", "escape", "passkeys"):
        assert found[key]["status"] == 403 and found[key]["body"]["error"]["name"] == "RouteNotRelayed", (key, found[key])
    assert found["otherSite"]["status"] == 403, found["otherSite"]
    assert found["ownCapabilities"] == 200
    assert credemu_profile.passwords() == [] and credemu_profile.pending_decisions() == []


FORGED = [
    ("not JSON", "{", "https://rp.example", 400, "BadChannelMessage"),
    ("no id", {"method": "GET", "path": "/capabilities"}, "https://rp.example", 400, "BadChannelMessage"),
    ("an operator route", {"id": "1", "method": "POST", "path": "/user", "body": {"decisions": ["accept"]}}, "https://rp.example", 403, "RouteNotRelayed"),
    ("a dot segment", {"id": "2", "method": "POST", "path": "/ceremonies/../../../user", "body": {}}, "https://rp.example", 403, "RouteNotRelayed"),
    ("an encoded slash", {"id": "3", "method": "POST", "path": "/ceremonies/a%2F..%2Fb/abort", "body": {}}, "https://rp.example", 403, "RouteNotRelayed"),
    ("another target", {"id": "4", "method": "POST", "path": "//profiles/other/credentials/create", "body": {}}, "https://rp.example", 403, "RouteNotRelayed"),
    ("a query", {"id": "5", "method": "GET", "path": "/capabilities?profile=other"}, "https://rp.example", 403, "RouteNotRelayed"),
    ("a page route the shim never calls", {"id": "6", "method": "DELETE", "path": "/passkeys/abc"}, "https://rp.example", 403, "RouteNotRelayed"),
    ("the wrong method", {"id": "7", "method": "GET", "path": "/credentials/create"}, "https://rp.example", 403, "RouteNotRelayed"),
    ("an opaque frame", {"id": "8", "method": "GET", "path": "/capabilities"}, "null", 403, "OriginNotRelayed"),
    ("about:blank", {"id": "9", "method": "GET", "path": "/capabilities"}, "about:blank", 403, "OriginNotRelayed"),
    ("a file", {"id": "10", "method": "GET", "path": "/capabilities"}, "file:///etc/passwd", 403, "OriginNotRelayed"),
    ("a GET with a body", {"id": "11", "method": "GET", "path": "/capabilities", "body": {"x": 1}}, "https://rp.example", 400, "BadChannelMessage"),
]


@pytest.mark.parametrize("message, origin, status, name", [f[1:] for f in FORGED], ids=[f[0] for f in FORGED])
def test_the_relay_refuses_a_forged_message_and_asks_credemu_nothing(message, origin, status, name, credemu_profile):
    before = len(credemu_profile.events())
    answer = Relay(credemu_profile, profile=credemu_profile.profile).answer(json.dumps(message) if isinstance(message, dict) else message, origin)
    assert (answer["status"], answer["body"]["error"]["name"]) == (status, name), answer
    assert len(credemu_profile.events()) == before and credemu_profile.passkeys() == [] and credemu_profile.pending_decisions() == []


def test_the_relay_speaks_for_the_frames_origin_as_the_driver_reports_it(credemu_server, credemu_profile):
    """The origin is the driver's, never the page's: a request the server must refuse for that origin is refused."""
    relay = Relay(credemu_profile, profile=credemu_profile.profile)
    message = {"id": "x", "method": "POST", "path": "/passwords",
               "body": {"origin": "https://shop.example", "username": "alice", "password": "p"}}
    unlisted = relay.answer(json.dumps(message), "https://unlisted.example/login")
    assert unlisted["status"] == 403 and unlisted["id"] == "x", unlisted
    credemu_server.client().allow_origin("https://shop.example")
    credemu_server.client().allow_origin("https://elsewhere.example")
    mismatched = relay.answer(json.dumps(message), "https://elsewhere.example")
    assert mismatched["status"] in (400, 403) and mismatched["body"]["error"], mismatched
    assert credemu_profile.passwords() == []
    assert relay.answer(json.dumps(message), "https://shop.example/sign-in")["status"] == 201
    assert [p["origin"] for p in credemu_profile.passwords()] == ["https://shop.example"]
    relay.close()


def test_a_closed_relay_relays_nothing_submitted_after_it(credemu_server, credemu_profile):
    """close() is final (issue 31.12): a message the driver's reader hands over after it is dropped, not sent on a new
    worker pool."""
    relay = Relay(credemu_profile, profile=credemu_profile.profile)
    message = {"id": "late", "method": "POST", "path": "/passwords", "body": {"origin": "https://shop.example", "username": "a", "password": "p"}}
    credemu_server.client().allow_origin("https://shop.example")
    assert relay.answer(json.dumps(message), "https://shop.example")["status"] == 201
    relay.close()
    replies = []
    assert relay.submit(json.dumps(dict(message, id="after")), "https://shop.example", replies.append) is None
    time.sleep(0.3)
    assert replies == [] and relay.pool is None
    assert len(credemu_profile.passwords()) == 1


def test_closing_the_relay_while_a_worker_connects_leaves_no_request_waiting(monkeypatch):
    """A worker still connecting when close() runs must not then send its request to a server that never answers
    (a conditional get may wait ten minutes): it is refused once connected, and the worker ends."""
    import http.client
    from credemu import Client
    stuck = socket.socket()
    stuck.bind(("127.0.0.1", 0))
    stuck.listen(8)   # accepts, never answers
    connecting, go_on = threading.Event(), threading.Event()
    real_connect = http.client.HTTPConnection.connect

    def slow_connect(connection):
        connecting.set()
        go_on.wait(10)
        real_connect(connection)

    monkeypatch.setattr(http.client.HTTPConnection, "connect", slow_connect)
    relay = Relay(Client(f"http://127.0.0.1:{stuck.getsockname()[1]}"), profile="default")
    replies = []
    message = {"id": "c", "method": "POST", "path": "/credentials/get", "body": {"mediation": "conditional", "options": {}}}
    future = relay.submit(json.dumps(message), "https://shop.example", replies.append)
    assert connecting.wait(10)
    relay.close()
    go_on.set()
    started = time.monotonic()
    concurrent.futures.wait([future], timeout=20)
    assert future.done() and time.monotonic() - started < 5, "the worker ended at once, not at the request's timeout"
    assert replies and replies[0]["status"] == 0 and replies[0]["body"]["error"]["name"] == "ServerUnreachable", replies
    stuck.close()



# An iframe's page serving the strict CSP: it asks the shim for the capabilities, submits a sign-in form (which the
# shim records as a password saved for the frame's origin: the server takes it only from a caller of that origin),
# and posts its origin, whether the shim is in it, and the outcome to its parent, which keeps them in `answers`.
INNER = """<!doctype html><title>inner</title>
<form id="f" action="/inner"><input name="username" autocomplete="username"><input type="password" name="password" autocomplete="current-password"></form>
<script>
const form = document.getElementById('f');
form.addEventListener('submit', (e) => e.preventDefault());
PublicKeyCredential.getClientCapabilities().then(() => 'capabilities', (e) => e.name).then((r) => {
  form.username.value = 'frame-user'; form.password.value = 'frame-password'; form.requestSubmit();
  parent.postMessage([location.origin, typeof window.__credemuShim, r], '*');
});
</script>"""
TOP = """<!doctype html><title>top</title><script>window.answers = []; addEventListener('message', (e) => answers.push(e.data));</script>
<iframe src="INNER/inner" allow="publickey-credentials-create *; publickey-credentials-get *"></iframe>"""
# Chromium runs a cross-site iframe in a process of its own (site isolation), a CDP target of its own: both relays
# auto-attach to it (Target.setAutoAttach, flat sessions, paused until set up) and give it the binding and the shim,
# answering each call on the session it came from with that session's context's origin.
FRAMED_DRIVERS = dict(DRIVERS, **{"selenium-client-relay": lambda c, o: chromium_in_selenium(c, o, relay="client")})


def wait(probe, timeout=10):
    deadline = time.monotonic() + timeout
    while not (value := probe()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return value


@contextlib.contextmanager
def framed(driver, credemu_profile, inner_host, inner_page=INNER):
    """A top page on localhost with an iframe of `inner_page` on `inner_host` (another port) under the strict CSP,
    loaded in `driver` with the shim installed; yields the iframe's origin, `evaluate` in the top page and the
    driver's object."""
    with html_site(inner_page.encode(), csp=STRICT_CSP) as inner:
        inner = inner.replace("localhost", inner_host)
        credemu_profile.allow_origin(inner)
        with html_site(TOP.replace("INNER", inner).encode()) as top, FRAMED_DRIVERS[driver](credemu_profile, top) as (navigate, evaluate, handle):
            navigate("/")
            yield inner, top, evaluate, handle


@pytest.mark.parametrize("inner_host", ["localhost", "frame.localhost", "127.0.0.1"], ids=["same-site", "cross-site", "cross-site-ip"])
@pytest.mark.parametrize("driver", FRAMED_DRIVERS)
def test_a_cross_origin_iframes_requests_carry_the_iframes_origin(driver, inner_host, credemu_profile):
    """The driver reports the calling frame's origin: an iframe of another origin (same site, another port; or
    another site, out of process) calls with its own, never its parent's, and its own strict CSP stays in force
    (its shim's requests leave through the channel). `frame.localhost` is a site of its own (no registrable domain
    under `localhost`) and a secure context; `127.0.0.1` is another site too, but no origin credemu takes a password
    for (not https, not localhost), so there only the capabilities are asked."""
    with framed(driver, credemu_profile, inner_host) as (inner, _, evaluate, _):
        answers = wait(lambda: evaluate("window.answers"))
        saved = wait(credemu_profile.passwords, timeout=10 if inner_host != "127.0.0.1" else 0.5)
    assert answers == [[inner, "object", "capabilities"]], "the iframe's shim answered through the channel"
    # The server took the password only from a caller of the frame's origin: the relay spoke for the frame.
    expected = [] if inner_host == "127.0.0.1" else [(inner, "frame-user")]
    assert [(p["origin"], p["username"]) for p in saved] == expected, saved


# The iframe of another site asks for the parent's RP ID: refused, as Chromium refuses it (the origin the relay
# speaks for is the frame's), and its shim answers no request of the parent's.
CLAIMS_THE_PARENT = """<!doctype html><title>inner</title><script>
const options = {rp: {id: 'localhost', name: 'Parent'}, user: {id: 'dXNlci0y', name: 'mallory', displayName: 'M'},
  challenge: 'AAECAwQFBgcICQoLDA0ODw', pubKeyCredParams: [{type: 'public-key', alg: -7}]};
(async () => {
  const out = [location.origin, typeof window.__credemuShim];
  for (const attempt of [
    () => navigator.credentials.create({publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options)}),
    () => navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON({challenge: options.challenge, rpId: 'localhost'})}),
  ]) {
    out.push(await attempt().then((c) => 'got ' + c.id, (e) => e.name + (e.credemu ? ' ' + e.credemu.reason : '')));
  }
  parent.postMessage(out, '*');
})();
</script>"""


@pytest.mark.parametrize("driver", FRAMED_DRIVERS)
@pytest.mark.credemu(pack="gpm")
def test_a_cross_site_iframes_shim_cannot_act_for_the_parents_origin(driver, credemu_profile):
    with framed(driver, credemu_profile, "frame.localhost", CLAIMS_THE_PARENT) as (inner, top, evaluate, _):
        answers = wait(lambda: evaluate("window.answers"), timeout=20)
        # The parent's own shim, in the same tab, still registers for its RP ID.
        parents = evaluate(CEREMONIES.replace("SERVER", json.dumps(credemu_profile.url)))
    assert answers and answers[0][:2] == [inner, "object"], answers
    assert [a.split(" ")[0] for a in answers[0][2:]] == ["SecurityError", "SecurityError"], answers
    [passkey] = credemu_profile.passkeys()
    assert "error" not in parents, parents
    assert passkey["credentialId"] == parents["created"] and passkey["rpId"] == "localhost", passkey


def test_a_forged_message_from_a_cross_site_iframe_is_relayed_with_the_frames_origin(credemu_profile, monkeypatch):
    """The client's relay keys contexts by session: a message sent through the channel's binding in the iframe's
    context, claiming the parent's origin, goes to credemu with the iframe's (the server refuses the claim); an
    event of a session it never attached is ignored. (The server's relay: ServerChannelTests.)"""
    origins = []
    answer = Relay.answer
    monkeypatch.setattr(Relay, "answer", lambda self, message, origin: (origins.append(origin), answer(self, message, origin))[1])
    with framed("credemu.browsers-client-relay", credemu_profile, "frame.localhost") as (inner, top, evaluate, browser):
        wait(credemu_profile.passwords)
        [(channel, _)] = browser._channels.items()
        [session] = browser._frames
        origins.clear()
        # An event of a session the driver never attached is ignored: nothing relayed, nothing answered.
        assert browser._channel_event({"method": "Runtime.bindingCalled", "sessionId": "NOT-ATTACHED", "params": {
            "name": channel, "executionContextId": 1, "payload": json.dumps({"id": "x", "method": "GET", "path": "/capabilities", "body": None})}})
        time.sleep(0.2)
        assert origins == []
        # The binding again in the frame's live context (the shim took it off window): as a page that had it would call it.
        browser._send("Runtime.removeBinding", {"name": channel}, session)
        browser._send("Runtime.addBinding", {"name": channel}, session)
        forged = {"id": "forged", "method": "POST", "path": "/passwords", "body": {"origin": top, "username": "mallory", "password": "p"}}
        browser._send("Runtime.evaluate", {"expression": f"window[{json.dumps(channel)}]({json.dumps(json.dumps(forged))})"}, session)
        wait(lambda: origins)
        time.sleep(0.3)
    assert [frame_origin(o) for o in origins] == [inner], origins
    assert [p["username"] for p in credemu_profile.passwords()] == ["frame-user"], "the parent's origin was not spoken for"
