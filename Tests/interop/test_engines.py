"""The example RP's journeys in every engine: headless Chromium (CDP), Firefox ESR (WebDriver BiDi, no geckodriver)
and WebKitGTK (WebKitWebDriver under Xvfb), each through `credemu.browsers` and the plugin's
`credemu_install_shim`, each with its engine's platform pack:

| engine   | pack and platform                                         | the page's API                     |
|----------|-----------------------------------------------------------|------------------------------------|
| chromium | gpm, chrome-desktop                                       | the shim over Chromium's own       |
| firefox  | webauthn-spec, firefox (chrome-desktop where no pack has it) | the shim over Firefox's own     |
| webkit   | apple, safari                                             | the shim's alone (WebKitGTK has none) |

What each journey must show follows from the profile (`EXPECTED`), not from what the page happens to do: an
automatic upgrade where the platform has conditional create, else the nudge; a revoked passkey hidden by the
RP's signal where the platform has signal methods. Each journey runs over both of the shim's transports
(docs/shim.md, "Transport"): the driver's channel (`install_shim`'s default), against the RP as it is and against
the RP serving a strict CSP (`default-src 'self'; script-src 'self' 'unsafe-inline'`), and the page's fetch
(`channel=False`) against the RP as it is (a strict CSP blocks the page's fetch to credemu); never with a CSP
bypass. Screenshots of each step go to .build/artifacts/engines/<engine>/<transport>/<test>/.
"""

import pytest

from conftest import ROOT, STRICT_CSP, example_rp_serving, launched_engine

from credemu import browsers

ARTIFACTS = ROOT / ".build" / "artifacts" / "engines"
USER, PASSWORD = "alice@example.com", "correct horse battery staple"


def engine_pack(engine, packs):
    """(pack, platform) for an engine: its platform's pack; Firefox on a `firefox` platform where one exists."""
    if engine == "chromium":
        return "gpm", "chrome-desktop"
    if engine == "webkit":
        return "apple", "safari"
    return "webauthn-spec", "firefox" if "firefox" in packs.get("webauthn-spec", []) else "chrome-desktop"


@pytest.fixture(scope="module", params=["chromium", "firefox", "webkit"])
def engine(request):
    with launched_engine(request.param) as browser:
        yield browser


def _engine_profile(request, index):
    """The marker's pack and platform where it names them, else the journey's engine's."""
    marker = request.node.get_closest_marker("credemu")
    if marker and "pack" in marker.kwargs:
        return (marker.kwargs["pack"], marker.kwargs.get("platform"))[index]
    engine = request.getfixturevalue("engine")
    return engine_pack(engine.name, request.config.pluginmanager.get_plugin("credemu-session").packs())[index]


@pytest.fixture
def credemu_pack(request):
    return _engine_profile(request, 0)


@pytest.fixture
def credemu_platform(request):
    return _engine_profile(request, 1)


class Journey:
    """One engine on the example RP, the shim of the test's profile installed, the user's password saved."""

    def __init__(self, browser, rp, profile, shots, strict_csp=False):
        self.browser, self.rp, self.profile, self.shots, self.step = browser, rp, profile, shots, 0
        self.strict_csp = strict_csp
        shots.mkdir(parents=True, exist_ok=True)
        caps = profile.get_client_capabilities()
        self.conditional_create = bool(caps["getClientCapabilities"].get("conditionalCreate"))

    def shot(self, name):
        self.step += 1
        self.browser.screenshot(self.shots / f"{self.step:02d}-{name}.png")

    def text(self, element_id):
        return self.browser.evaluate(f"document.getElementById({element_id!r}).textContent")

    def wait_text(self, element_id, prefix):
        return self.browser.wait_for(f"(document.getElementById({element_id!r}) || {{}}).textContent?.startsWith({prefix!r}) "
                                     f"&& document.getElementById({element_id!r}).textContent")

    def ready(self, path="/account"):
        self.browser.wait_for(f"location.pathname === {path!r} && document.body && document.body.dataset.ready === '1'")

    def own_fetch_to_credemu(self):
        """The page's own fetch to another origin (credemu's): what its CSP, if any, makes of it."""
        return self.browser.evaluate(f"fetch({self.profile.url!r} + '/health').then(() => 'fetched', (e) => e.name)")

    def signal_methods(self):
        return self.browser.evaluate("typeof PublicKeyCredential.signalAllAcceptedCredentials === 'function'")

    def sign_in_with_password(self):
        self.browser.navigate(self.rp + "/login")
        self.browser.wait_for(f"document.getElementById('password').value === {PASSWORD!r}")
        assert self.browser.evaluate("document.getElementById('username').value") == USER
        self.shot("password-autofilled")
        self.browser.click("#sign-in")
        self.ready()
        self.wait_text("upgrade-status", "upgrade: ")
        self.shot("signed-in-with-password")

    def sign_out(self):
        self.browser.click("#sign-out")
        self.browser.wait_for("location.pathname === '/login' && document.readyState === 'complete'")

    def take_the_nudge(self):
        self.browser.click("#save-profile")
        self.browser.wait_for("!document.getElementById('nudge').hidden")
        self.shot("nudge-after-key-action")
        self.browser.evaluate("document.getElementById('nudge-status').textContent = ''")
        self.browser.click("#nudge-accept")
        status = self.wait_text("nudge-status", "nudge:")
        self.shot("nudge-answered")
        return status

    def get_a_passkey(self):
        """The automatic upgrade where the platform has conditional create, else the nudge."""
        if self.conditional_create:
            assert self.text("upgrade-status").startswith("upgrade: created "), self.text("upgrade-status")
        else:
            assert self.text("upgrade-status") == "upgrade: not supported"
            assert self.take_the_nudge().startswith("nudge: created"), self.text("nudge-status")
        assert len(self.profile.passkeys()) == 1


@pytest.fixture(params=[("channel", False), ("channel", True), ("fetch", False)],
                ids=["channel", "channel-strict-csp", "fetch"])
def transport(request):
    """How the shim reaches credemu (the driver's channel, or the page's fetch), and whether the RP serves a
    strict CSP, which only the channel gets through: it blocks the page's fetch to another origin."""
    return request.param


@pytest.fixture
def example_rp(transport):
    """The example RP, as it is or serving a strict CSP on every answer."""
    with example_rp_serving(STRICT_CSP if transport[1] else None) as origin:
        yield origin


@pytest.fixture
def journey(request, engine, transport, example_rp, credemu_profile, credemu_install_shim):
    if request.node.get_closest_marker("credemu") is None or "pack" not in request.node.get_closest_marker("credemu").kwargs:
        expected = engine_pack(engine.name, request.config.pluginmanager.get_plugin("credemu-session").packs())
        assert (credemu_profile.pack, credemu_profile.platform) == expected
    credemu_profile.save_password(USER, PASSWORD, origin=example_rp)
    if transport[0] == "channel":   # the plugin's defaults, as a user calls it: the channel, no bypass
        credemu_install_shim(engine, origin=example_rp)
    else:
        credemu_install_shim(engine, origin=example_rp, channel=False, bypass_csp=False)
    yield Journey(engine, example_rp, credemu_profile, ARTIFACTS / engine.name / transport[0]
                  / request.node.originalname / ("strict-csp" if transport[1] else "as-served"), strict_csp=transport[1])
    engine.navigate("about:blank")
    engine.clear_cookies()


def test_a_password_sign_in_is_followed_by_a_passkey_and_a_passkey_sign_in(journey):
    journey.sign_in_with_password()
    journey.get_a_passkey()
    journey.sign_out()
    journey.browser.click("#passkey")
    journey.ready()
    journey.shot("signed-in-with-passkey")
    assert journey.text("who") == USER
    assert journey.profile.events("get")[-1]["outcome"] == "success"
    # The RP's strict CSP stayed in force through it all: no bypass, its own cross-origin fetch refused.
    assert journey.own_fetch_to_credemu() == ("TypeError" if journey.strict_csp else "fetched")


def test_a_revoked_passkey_is_hidden_by_the_rps_signal_and_shown_again_when_restored(journey):
    journey.sign_in_with_password()
    journey.get_a_passkey()
    journey.browser.navigate(journey.rp + "/account")
    journey.browser.wait_for("document.querySelector('button.revoke') !== null")
    journey.browser.click("button.revoke")
    journey.browser.wait_for("document.getElementById('none') !== null && document.body.dataset.ready === '1'")
    journey.shot("passkey-revoked-on-rp")
    has_signals = journey.signal_methods()
    assert [p["hidden"] for p in journey.profile.passkeys()] == [has_signals]
    # Still signed in, the user tries the passkey on the sign-in page: not offered where the platform has signals.
    journey.browser.navigate(journey.rp + "/login")
    journey.browser.wait_for("document.getElementById('passkey') !== null")
    if has_signals:
        # Nothing to offer: GPM's Chrome keeps its sheet open until the user closes it (modalGet.noCredential); the
        # user's decision, queued, closes it at once with the provider's "nothing to offer".
        journey.profile.queue_decisions("accept")
    journey.browser.click("#passkey")
    if has_signals:
        status = journey.wait_text("login-status", "No passkey used")
        assert status == "No passkey used: NotAllowedError"
    else:  # the provider still offers it; the RP refuses it
        status = journey.wait_text("login-status", "Passkey sign-in failed")
    journey.shot("after-revocation")
    # The user restores it on the RP: the complete accepted list names it again, and the provider shows it again.
    journey.browser.navigate(journey.rp + "/account")
    journey.browser.wait_for("document.querySelector('button.restore') !== null && document.body.dataset.ready === '1'")
    journey.browser.click("button.restore")
    journey.browser.wait_for("document.querySelector('button.revoke') !== null && document.querySelector('button.restore') === null"
                             " && document.body.dataset.ready === '1'")
    journey.shot("passkey-restored-on-rp")
    assert [p["hidden"] for p in journey.profile.passkeys()] == [False]
    journey.sign_out()
    journey.browser.click("#passkey")
    journey.browser.wait_for("location.pathname === '/account' && document.body.dataset.ready === '1' && document.getElementById('who') !== null")
    assert journey.text("who") == USER
    journey.shot("signed-in-with-the-restored-passkey")


@pytest.mark.credemu(automaticPasskeyUpgrades=False)
def test_an_opted_out_user_gets_no_automatic_passkey_but_can_take_the_nudge(journey):
    journey.sign_in_with_password()
    assert not journey.text("upgrade-status").startswith("upgrade: created"), journey.text("upgrade-status")
    assert journey.profile.passkeys() == []
    journey.browser.click("#save-profile")
    journey.browser.wait_for("!document.getElementById('nudge').hidden")
    journey.browser.click("#nudge-skip")
    journey.wait_text("nudge-status", "nudge: skipped")
    assert journey.profile.passkeys() == []
    assert journey.take_the_nudge().startswith("nudge: created"), journey.text("nudge-status")
    assert len(journey.profile.passkeys()) == 1


def test_a_second_passkey_for_the_account_is_excluded(journey):
    """The nudge's create carries the account's passkey in excludeCredentials: InvalidStateError, nothing made."""
    journey.sign_in_with_password()
    journey.get_a_passkey()
    out = journey.browser.evaluate("""(async () => {
      const r = await fetch('/api/register/options', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                                         body: JSON.stringify({mode: 'nudge'})});
      const options = PublicKeyCredential.parseCreationOptionsFromJSON(await r.json());
      try { await navigator.credentials.create({publicKey: options}); return 'created'; }
      catch (e) { return [e instanceof DOMException, e.name, options.excludeCredentials.length]; }
    })()""")
    journey.shot("excluded")
    assert out == [True, "InvalidStateError", 1]
    assert len(journey.profile.passkeys()) == 1


WEBKIT_SHAPE = """(() => {
  const own = (o) => Object.getOwnPropertyNames(o).filter((n) => !['length', 'name', 'prototype', 'constructor'].includes(n)).sort();
  const d = Object.getOwnPropertyDescriptor(Navigator.prototype, 'credentials');
  let ctor; try { new PublicKeyCredential(); } catch (e) { ctor = [e.constructor.name, e.message]; }
  return {statics: own(PublicKeyCredential), container: own(CredentialsContainer.prototype), credential: own(Credential.prototype),
          navigator: [typeof d.get, d.enumerable, navigator.credentials === navigator.credentials, String(navigator.credentials)],
          ctor: ctor, native: String(navigator.credentials.create).includes('[native code]')};
})()"""


@pytest.mark.credemu(pack="apple", platform="safari")
def test_in_webkitgtk_the_shim_defines_the_whole_api_shaped_as_safaris(example_rp, credemu_profile, credemu_install_shim):
    """WebKitGTK has no WebAuthn: without the shim nothing is there; with it, Safari's interfaces and statics."""
    assert credemu_profile.pack == "apple" and credemu_profile.platform == "safari"
    with browsers.webkit() as webkit:
        webkit.navigate(example_rp + "/login")
        assert webkit.evaluate("[typeof navigator.credentials, typeof PublicKeyCredential]") == ["undefined", "undefined"]
        credemu_install_shim(webkit, origin=example_rp)
        webkit.navigate(example_rp + "/login")
        shape = webkit.evaluate(WEBKIT_SHAPE)
    assert shape["statics"] == ["getClientCapabilities", "isConditionalMediationAvailable", "isUserVerifyingPlatformAuthenticatorAvailable",
                                "parseCreationOptionsFromJSON", "parseRequestOptionsFromJSON", "signalAllAcceptedCredentials",
                                "signalCurrentUserDetails", "signalUnknownCredential"]
    assert shape["container"] == ["create", "get", "preventSilentAccess", "store"]
    assert shape["credential"] == ["id", "type"]
    assert shape["navigator"] == ["function", True, True, "[object CredentialsContainer]"]
    assert shape["ctor"] == ["TypeError", "Illegal constructor"] and shape["native"] is True
