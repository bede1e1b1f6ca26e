"""The shim over the driver's own channel in Firefox ESR (WebDriver BiDi) and WebKitGTK (a script message handler
with reply), both from `credemu.browsers` and `credemu.install_shim` as a user calls them, no CSP bypass: a page
served with a strict Content-Security-Policy registers and signs in through the shim, the credentials verified by
py_webauthn and python-fido2 for the page's own origin, while the page's policy stays in force (its own fetch to
another origin is refused, and the shim over the page's fetch is blocked on the same page); and nothing of the
channel lets a page script reach credemu (docs/shim.md, "Transport").
"""
import contextlib
import json

import pytest
from webauthn import generate_authentication_options, generate_registration_options, options_to_json
from webauthn.helpers.structs import PublicKeyCredentialDescriptor

from conftest import html_site, launched_engine, verify_authentication_both, verify_registration_both

from credemu import browsers
from credemu.relay import Relay
from credemu.shim import installed_shim

STRICT_CSP = "default-src 'self'; script-src 'self' 'unsafe-inline'"
# Each engine's platform pack, as test_engines.py has them.
PACKS = {"firefox": ("webauthn-spec", None), "webkit": ("apple", "safari")}
PAGE = b"<!doctype html><html><head><title>strict</title></head><body><p>A page with a strict CSP.</p></body></html>"


@pytest.fixture(scope="module")
def strict_site():
    """A page with `Content-Security-Policy: default-src 'self'; script-src 'self' 'unsafe-inline'` at every path of
    http://localhost:PORT: its origin."""
    with html_site(PAGE, csp=STRICT_CSP) as origin:
        yield origin


@pytest.fixture(scope="module", params=["firefox", "webkit"])
def engine(request):
    with launched_engine(request.param) as browser:
        yield browser


def _pack(request):
    """The engine's platform pack; WebKitGTK's for a test that starts its own WebKitGTK."""
    return PACKS[request.getfixturevalue("engine").name if "engine" in request.fixturenames else "webkit"]


@pytest.fixture
def credemu_pack(request):
    return _pack(request)[0]


@pytest.fixture
def credemu_platform(request):
    return _pack(request)[1]


@pytest.fixture
def shim(engine, credemu_profile, strict_site):
    """Installs the shim as a user does (`install_shim`'s defaults: the channel, no bypass); undone after."""
    undos = []

    def install(**options):
        undos.append(installed_shim(engine, credemu_profile, origin=strict_site, **options)[1])
        engine.navigate(strict_site + "/")
        return engine
    yield install
    for undo in reversed(undos):
        undo()
    engine.navigate("about:blank")


CEREMONY = """(async () => {
  const violations = [];
  document.addEventListener('securitypolicyviolation', (e) => violations.push(e.effectiveDirective));
  const out = {};
  try {
    const created = await navigator.credentials.create({publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(CREATE)});
    out.created = created.toJSON();
  } catch (e) { out.created = e.name; }
  let own;
  try { await fetch(ELSEWHERE + '/health'); own = 'fetched'; } catch (e) { own = e.name; }
  out.own = own;
  await new Promise((r) => setTimeout(r, 50));
  out.violations = violations;
  return out;
})()"""
SIGN_IN = """(async () => {
  try {
    const got = await navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(GET)});
    return got.toJSON();
  } catch (e) { return e.name; }
})()"""


def _ceremony(browser, options, elsewhere):
    return browser.evaluate(CEREMONY.replace("CREATE", options_to_json(options)).replace("ELSEWHERE", json.dumps(elsewhere)))


def test_a_strict_csp_page_registers_and_signs_in_through_the_channel_with_its_policy_in_force(shim, credemu_profile, strict_site):
    browser = shim()
    rp_id = "localhost"
    options = generate_registration_options(rp_id=rp_id, rp_name="Strict", user_name="alice@example.com")
    out = _ceremony(browser, options, credemu_profile.url)
    assert isinstance(out["created"], dict), out
    verified, fido2_credential = verify_registration_both(out["created"], options, strict_site, rp_id)
    # The page's own request to another origin is still refused by its policy: the policy was not switched off.
    assert out["own"] == "TypeError" and "connect-src" in out["violations"], out
    request = generate_authentication_options(rp_id=rp_id, allow_credentials=[PublicKeyCredentialDescriptor(id=verified.credential_id)])
    got = browser.evaluate(SIGN_IN.replace("GET", options_to_json(request)))
    assert isinstance(got, dict), got
    verify_authentication_both(got, request, strict_site, rp_id, verified, fido2_credential)
    assert [e["outcome"] for e in credemu_profile.events("get")][-1:] == ["success"]


def test_over_the_pages_fetch_the_same_strict_csp_page_blocks_the_shim(shim, credemu_profile):
    """The control: with the channel off the shim fetches, the page's policy blocks it, and nothing is made."""
    browser = shim(channel=False)
    options = generate_registration_options(rp_id="localhost", rp_name="Strict", user_name="alice@example.com")
    out = _ceremony(browser, options, credemu_profile.url)
    assert out["created"] == "NotReadableError", out
    assert credemu_profile.passkeys() == []


PAGE_VIEW = """(() => {
  const handlers = window.webkit && window.webkit.messageHandlers;
  const listed = [];
  if (handlers) { for (const k in handlers) listed.push(k); listed.push(...Reflect.ownKeys(handlers).map(String)); }
  return {
    window: Reflect.ownKeys(window).map(String).filter((n) => /credemu/i.test(n)),
    named: typeof window[NAME], handlers: listed,
  };
})()"""


def test_a_page_script_finds_nothing_of_the_channel(engine, credemu_profile, strict_site):
    """The channel's binding is taken off `window` before the page's scripts run, and WebKit's handlers list no
    name: the page's window holds only the shim's debug handle (no configuration, no channel)."""
    relay = Relay(credemu_profile, profile=credemu_profile.profile)
    credemu_profile.allow_origin(strict_site)
    name, _ = engine.add_channel(relay)
    script = engine.add_preload_script(credemu_profile.shim(credemu_profile.profile, channel=name))
    try:
        engine.navigate(strict_site + "/")
        view = engine.evaluate(PAGE_VIEW.replace("NAME", json.dumps(name)))
        assert view == {"window": ["__credemuShim"], "named": "undefined", "handlers": []}
        assert engine.evaluate("PublicKeyCredential.getClientCapabilities().then((c) => typeof c)") == "object"
    finally:
        engine.remove_preload_script(script)
        engine.remove_channel((name, None))
        engine.navigate("about:blank")


FORGED = """(async () => {
  const post = (m) => window.webkit.messageHandlers[NAME].postMessage(JSON.stringify(m));
  const answers = [];
  for (const [method, path] of [['GET', '/passkeys'], ['POST', '/../other/credentials/create'], ['GET', '/../../health'],
                                ['POST', '/credentials/create?profile=other']]) {
    answers.push(await post({id: 'x', method: method, path: path, body: null}));
  }
  return answers;
})()"""


def test_in_webkitgtk_a_page_that_knew_the_handlers_name_reaches_only_the_shims_routes(credemu_profile, strict_site, credemu_server):
    """WebKitGTK keeps a named handler reachable (`window.webkit.messageHandlers[NAME]`) though it lists none: a
    page that had the name gets the relay's refusal for every route but the shim's own of its target, and no
    other profile's vault changes."""
    other = credemu_server.client()
    with browsers.webkit() as webkit:
        relay = Relay(credemu_profile, profile=credemu_profile.profile)
        credemu_profile.allow_origin(strict_site)
        name, _ = webkit.add_channel(relay)
        webkit.navigate(strict_site + "/")
        before = other.passkeys()
        answers = webkit.evaluate(FORGED.replace("NAME", json.dumps(name)))
    assert [(a["status"], a["body"]["error"]["name"]) for a in answers] == [(403, "RouteNotRelayed")] * 4
    assert other.passkeys() == before and credemu_profile.passkeys() == []


class RecordingRelay(Relay):
    """The relay, noting the origin each message came with (as the driver reported it)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.origins = []

    def answer(self, message, origin):
        self.origins.append(origin)
        return super().answer(message, origin)


@pytest.fixture(params=["localhost", "127.0.0.1"], ids=["same-site", "cross-site"])
def framed_site(request, strict_site):
    """A page of another origin embedding the strict page in an iframe, of the same site (another port) or of
    another site: (its origin, the strict page's)."""
    inner = strict_site.replace("localhost", request.param)
    page = f"<!doctype html><iframe src='{inner}/inner' allow='publickey-credentials-create; publickey-credentials-get'></iframe>".encode()
    with html_site(page) as origin:
        yield origin, inner


@contextlib.contextmanager
def framed_channel(engine, credemu_server, framed_site):
    """`engine` on the framed page, the shim's channel relayed by a RecordingRelay, the top's shim answered
    through it: (the browser, the relay, the top's origin, the iframe's)."""
    top, inner = framed_site
    client = credemu_server.client()
    client.allow_origin(top)
    client.allow_origin(inner)
    with launched_engine(engine) as browser:
        relay = RecordingRelay(client, profile=client.profile)
        name, _ = browser.add_channel(relay)
        browser.add_preload_script(client.shim(client.profile, channel=name))
        browser.navigate(top + "/")
        assert browser.evaluate(CAPABILITIES) == "object"
        yield browser, relay, top, inner


CAPABILITIES = "PublicKeyCredential.getClientCapabilities().then((c) => typeof c)"


def test_in_firefox_a_frames_requests_are_relayed_with_that_frames_origin(credemu_server, framed_site):
    """BiDi reports the realm of each message: the iframe's calls carry the iframe's origin, never the top's."""
    with framed_channel("firefox", credemu_server, framed_site) as (firefox, relay, top, inner):
        assert relay.origins == [top]
        frame = firefox._send("browsingContext.getTree", {"root": firefox._context})["contexts"][0]["children"][0]["context"]
        result = firefox._send("script.evaluate", {"expression": CAPABILITIES, "target": {"context": frame}, "awaitPromise": True})
    assert result["result"]["value"] == "object"
    assert relay.origins == [top, inner]


def test_in_webkitgtk_only_the_top_frame_has_the_channel(credemu_server, framed_site):
    """WebKitGTK tells a handler nothing of the frame that posted, so a subframe gets no channel: its shim uses the
    page's fetch (which the framed page's strict CSP blocks), and every message the relay sees is the top
    document's."""
    with framed_channel("webkit", credemu_server, framed_site) as (webkit, relay, top, inner):
        webkit.wait_for("document.querySelector('iframe').contentDocument === null")   # cross-origin: loaded
        webkit._command("POST", "/frame", {"id": 0})
        assert webkit.evaluate("location.origin") == inner
        # The iframe's shim fetches, and the iframe's own strict CSP blocks it: the shim's set-up failure.
        with pytest.raises(browsers.BrowserError, match="while talking to the credential manager"):
            webkit.evaluate(CAPABILITIES)
    assert relay.origins == [top + "/"]
