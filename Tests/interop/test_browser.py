"""The end-to-end journey in a real browser: headless Chromium, the example RP, credemu's shim and server.

GPM: autofill the password, sign in, the automatic upgrade creates a passkey silently, sign out, sign in with
the passkey, revoke it on the RP, the RP's signal hides it in credemu, the next sign-in no longer offers it.
Bitwarden shows the modal path instead; a profile with the opt-out set gets no passkey. Screenshots of every
step go to artifacts/e2e/<journey>/.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.support.ui import WebDriverWait

from api_client import Server
from conftest import BINARY, ROOT
from shim_drivers import install_in_selenium

ARTIFACTS = ROOT / "artifacts" / "e2e"
USER, PASSWORD = "alice@example.com", "correct horse battery staple"


class Stack:
    def __init__(self, tmp_path, journey, pack, **settings):
        self.rp = subprocess.Popen([sys.executable, str(ROOT / "examples" / "relying-party" / "app.py"), "--port", "0"],
                                   stdout=subprocess.PIPE, text=True)
        self.rp_url = self.rp.stdout.readline().strip()
        self.server = Server(BINARY, tmp_path, "--allow-origin", self.rp_url)
        status, _ = self.server.call("POST", "/profiles", dict({"name": "browser", "pack": pack}, **settings))
        assert status == 201
        assert self.server.call("POST", "/profiles/browser/passwords", {"origin": self.rp_url, "username": USER, "password": PASSWORD})[0] == 201
        shim = self.server.call("GET", "/shim.js?profile=browser")[1].decode()
        options = Options()
        options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1000,800", "--disable-gpu"]:
            options.add_argument(arg)
        self.driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
        install_in_selenium(self.driver, shim)
        self.shots = ARTIFACTS / journey
        self.shots.mkdir(parents=True, exist_ok=True)
        self.step = 0

    def screenshot(self, name):
        self.step += 1
        self.driver.save_screenshot(str(self.shots / f"{self.step:02d}-{name}.png"))

    def wait(self, condition, timeout=20):
        # Pages navigate under the test: an element looked up mid-navigation is retried, not a failure.
        return WebDriverWait(self.driver, timeout, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException, WebDriverException)).until(
            lambda d: condition(d))

    def text(self, element_id):
        return self.driver.find_element(By.ID, element_id).text

    def sign_in_with_password(self):
        self.driver.get(self.rp_url + "/login")
        self.wait(lambda d: d.find_element(By.ID, "password").get_attribute("value") == PASSWORD)
        assert self.driver.find_element(By.ID, "username").get_attribute("value") == USER
        self.screenshot("password-autofilled")
        self.driver.find_element(By.ID, "sign-in").click()
        self.wait(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
        self.screenshot("signed-in-with-password")

    def passkeys(self):
        return self.server.call("GET", "/profiles/browser/passkeys")[1]["passkeys"]

    def events(self, kind):
        return self.server.call("GET", f"/profiles/browser/events?kind={kind}")[1]["events"]

    def close(self):
        self.driver.quit()
        self.server.stop()
        self.rp.terminate()
        self.rp.wait(10)


@pytest.fixture
def stack(tmp_path, request):
    created = []

    def make(journey, pack, **settings):
        s = Stack(tmp_path / journey, journey, pack, **settings)
        created.append(s)
        return s

    for journey in ["gpm", "bitwarden", "opt-out", "shim", "held", "keepassxc", "firefox"]:
        (tmp_path / journey).mkdir()
    yield make
    for s in created:
        s.close()


def test_gpm_journey_upgrade_passkey_sign_in_revoke_and_signal(stack):
    s = stack("gpm", "gpm")
    s.sign_in_with_password()
    assert s.text("upgrade-status").startswith("upgrade: created "), s.text("upgrade-status")
    created = s.events("create")[-1]
    assert created["outcome"] == "success" and created["detail"]["silent"] is True
    assert s.events("autofill")[0]["outcome"] == "filled"
    [passkey] = s.passkeys()
    assert passkey["hidden"] is False and passkey["aaguid"] == "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4"

    s.driver.find_element(By.ID, "sign-out").click()
    s.wait(lambda d: d.current_url.endswith("/login"))
    s.driver.find_element(By.ID, "passkey").click()
    s.wait(lambda d: "/account" in d.current_url and d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    assert s.text("who") == USER
    s.screenshot("signed-in-with-passkey")
    assert s.events("get")[-1]["outcome"] == "success"

    s.driver.find_element(By.CSS_SELECTOR, "button.revoke").click()
    s.wait(lambda d: d.find_elements(By.ID, "none"))
    s.screenshot("passkey-revoked-on-rp")
    s.wait(lambda d: s.passkeys()[0]["hidden"] is True)
    assert [e["outcome"] for e in s.events("signal")][-1] == "applied"

    s.driver.find_element(By.ID, "sign-out").click()
    s.wait(lambda d: d.current_url.endswith("/login"))
    s.driver.find_element(By.ID, "passkey").click()
    s.wait(lambda d: d.find_element(By.ID, "login-status").text.startswith("No passkey used"))
    assert s.text("login-status") == "No passkey used: NotAllowedError"
    s.screenshot("passkey-no-longer-offered")
    assert s.events("get")[-1]["reason"] == "noCredential"


def test_bitwarden_journey_shows_the_modal_path(stack):
    s = stack("bitwarden", "bitwarden")
    s.sign_in_with_password()
    assert s.text("upgrade-status").startswith("upgrade: created "), s.text("upgrade-status")
    created = s.events("create")[-1]
    assert "mediation ignored" in created["detail"]["note"]
    assert s.passkeys()[0]["aaguid"] == "d548826e-79b4-db40-a3d8-11116f7e8349"


def test_opted_out_profile_gets_no_passkey(stack):
    s = stack("opt-out", "gpm", automaticPasskeyUpgrades=False)
    s.sign_in_with_password()
    assert s.text("upgrade-status") == "upgrade: skipped (NotAllowedError)"
    assert s.passkeys() == []
    assert s.events("create")[-1]["reason"] == "optOut"

    # The nudge after a named key action still works, and skip creates nothing.
    s.driver.find_element(By.ID, "save-profile").click()
    s.wait(lambda d: d.find_element(By.ID, "nudge").is_displayed())
    s.screenshot("nudge-after-key-action")
    s.driver.find_element(By.ID, "nudge-skip").click()
    s.wait(lambda d: d.find_element(By.ID, "nudge-status").text == "nudge: skipped")
    assert s.passkeys() == []
    s.driver.find_element(By.ID, "save-profile").click()
    s.wait(lambda d: d.find_element(By.ID, "nudge").is_displayed())
    s.driver.find_element(By.ID, "nudge-accept").click()
    s.wait(lambda d: d.find_element(By.ID, "nudge-status").text.startswith("nudge: created"))
    s.screenshot("nudge-accepted")
    assert len(s.passkeys()) == 1


SHIM_CHECKS = r"""
const done = arguments[arguments.length - 1];
(async () => {
  const out = {};
  const caps = await PublicKeyCredential.getClientCapabilities();
  out.capsSorted = JSON.stringify(Object.keys(caps)) === JSON.stringify(Object.keys(caps).sort());
  out.conditionalGet = await PublicKeyCredential.isConditionalMediationAvailable();
  out.uvpaa = await PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable();
  const options = PublicKeyCredential.parseCreationOptionsFromJSON({
    rp: {id: 'localhost', name: 'Shim test'}, user: {id: 'c2hpbS11c2Vy', name: 'shim@example.com', displayName: 'Shim'},
    challenge: 'AAECAwQFBgcICQoLDA0ODw', pubKeyCredParams: [{type: 'public-key', alg: -7}], extensions: {credProps: true}});
  out.challengeIsBuffer = options.challenge instanceof ArrayBuffer;
  const created = await navigator.credentials.create({publicKey: options});
  out.isPublicKeyCredential = created instanceof PublicKeyCredential;
  out.rawIdIsBuffer = created.rawId instanceof ArrayBuffer;
  out.attestationIsBuffer = created.response.attestationObject instanceof ArrayBuffer;
  out.transports = created.response.getTransports();
  out.publicKeyBytes = created.response.getPublicKey().byteLength;
  out.algorithm = created.response.getPublicKeyAlgorithm();
  out.authDataBytes = created.response.getAuthenticatorData().byteLength;
  out.credProps = created.getClientExtensionResults().credProps;
  out.json = created.toJSON();
  const request = PublicKeyCredential.parseRequestOptionsFromJSON({challenge: 'AAECAwQFBgcICQoLDA0ODw', rpId: 'localhost',
    allowCredentials: [{type: 'public-key', id: created.id}]});
  const asserted = await navigator.credentials.get({publicKey: request});
  out.assertedSame = asserted.id === created.id;
  out.userHandleIsBuffer = asserted.response.userHandle instanceof ArrayBuffer;
  out.signatureBytes = asserted.response.signature.byteLength;
  try {
    await navigator.credentials.create({publicKey: options, mediation: 'conditional'});
    out.conditional = 'created';
  } catch (e) { out.conditional = [e instanceof DOMException, e.name]; }
  try {
    await navigator.credentials.create({publicKey: Object.assign({}, options, {excludeCredentials: [{type: 'public-key', id: created.rawId}]})});
  } catch (e) { out.excluded = [e instanceof DOMException, e.name]; }
  try { await PublicKeyCredential.signalUnknownCredential({rpId: 'localhost', credentialId: 'not+base64'}); }
  catch (e) { out.badSignal = [e instanceof TypeError, e.message]; }
  try { await PublicKeyCredential.signalUnknownCredential({rpId: 'example.com', credentialId: created.id}); }
  catch (e) { out.foreignSignal = [e instanceof DOMException, e.name]; }
  out.signalResult = await PublicKeyCredential.signalUnknownCredential({rpId: 'localhost', credentialId: created.id});
  return out;
})().then(done, e => done({failed: String(e)}));
"""


def test_shim_objects_behave_like_the_browsers_own(stack):
    s = stack("shim", "gpm")
    s.driver.get(s.rp_url + "/login")
    s.driver.set_script_timeout(30)
    out = s.driver.execute_async_script(SHIM_CHECKS)
    assert "failed" not in out, out
    assert out["capsSorted"] and out["conditionalGet"] is True and out["uvpaa"] is True
    assert out["challengeIsBuffer"] and out["isPublicKeyCredential"] and out["rawIdIsBuffer"] and out["attestationIsBuffer"]
    # getTransports() is unique and sorted (L3 §5.2.1 [[transports]]), as in Chromium, not in the provider's order.
    assert out["transports"] == ["hybrid", "internal"] and out["algorithm"] == -7
    assert out["publicKeyBytes"] == 91 and out["authDataBytes"] > 37 + 16
    assert out["credProps"] == {"rk": True}
    assert out["json"]["type"] == "public-key" and out["json"]["response"]["publicKeyAlgorithm"] == -7
    assert out["assertedSame"] and out["userHandleIsBuffer"] and out["signatureBytes"] > 64
    assert out["conditional"] == [True, "NotAllowedError"], "no password was autofilled for this account"
    assert out["excluded"] == [True, "InvalidStateError"]
    assert out["badSignal"] == [True, "Failed to execute 'signalUnknownCredential' on 'PublicKeyCredential': Invalid base64url string for credentialId."]
    assert out["foreignSignal"] == [True, "SecurityError"]
    assert out["signalResult"] is None
    assert s.passkeys()[0]["hidden"] is True


KEEPASSXC_CHECKS = """
const done = arguments[arguments.length - 1];
(async () => {
  const created = await navigator.credentials.create({publicKey: {rp: {name: 'x'}, user: {id: new Uint8Array([7]), name: 'k', displayName: 'K'},
    challenge: new Uint8Array(32), pubKeyCredParams: [{type: 'public-key', alg: -7}]}});
  return {publicKey: created.response.getPublicKey(), transports: created.response.getTransports(),
          jsonKeys: Object.keys(created.toJSON().response), algorithm: created.response.getPublicKeyAlgorithm()};
})().then(done, e => done({failed: String(e)}));
"""


def test_keepassxc_responses_have_no_public_key_and_the_internal_transport(stack):
    """keepassxc-browser content/passkeys.js: getPublicKey: () => null, getTransports: () => ['internal']."""
    s = stack("keepassxc", "keepassxc")
    s.driver.get(s.rp_url + "/login")
    s.driver.set_script_timeout(30)
    out = s.driver.execute_async_script(KEEPASSXC_CHECKS)
    assert out == {"publicKey": None, "transports": ["internal"], "algorithm": -7,
                   "jsonKeys": ["attestationObject", "authenticatorData", "clientDataJSON", "publicKeyAlgorithm", "transports"]}, out


FIREFOX_CHECKS = """
const done = arguments[arguments.length - 1];
(async () => {
  const out = {};
  out.types = ['signalUnknownCredential', 'signalAllAcceptedCredentials', 'signalCurrentUserDetails'].map((m) => [typeof PublicKeyCredential[m], m in PublicKeyCredential]);
  try { await PublicKeyCredential.signalUnknownCredential({rpId: 'localhost', credentialId: 'AQID'}); out.call = 'resolved'; }
  catch (e) { out.call = [e instanceof TypeError, e.message]; }
  const caps = await PublicKeyCredential.getClientCapabilities();
  out.caps = [caps.conditionalCreate, caps.signalUnknownCredential, caps['extension:prf']];
  out.others = [typeof PublicKeyCredential.getClientCapabilities, typeof PublicKeyCredential.parseCreationOptionsFromJSON];
  return out;
})().then(done, e => done({failed: String(e)}));
"""


def test_a_firefox_profile_has_no_signal_methods(stack):
    """Gecko has no signal methods (its WebIDL) and reports conditionalCreate false: a page calling one gets "not a function"."""
    s = stack("firefox", "bitwarden", platform="firefox")
    s.driver.get(s.rp_url + "/login")
    s.driver.set_script_timeout(30)
    out = s.driver.execute_async_script(FIREFOX_CHECKS)
    assert out["types"] == [["undefined", False]] * 3, out
    assert out["call"] == [True, "PublicKeyCredential.signalUnknownCredential is not a function"], out
    assert out["caps"] == [False, False, True] and out["others"] == ["function", "function"], out


def test_held_registration_made_stale_by_sign_out_is_refused_by_the_rp(stack):
    """N2.5-AC03: the ceremony is held while the user signs out; the RP refuses the late response."""
    s = stack("held", "gpm", automaticPasskeyUpgrades=False)
    s.sign_in_with_password()
    s.driver.find_element(By.ID, "save-profile").click()
    s.wait(lambda d: d.find_element(By.ID, "nudge").is_displayed())
    hold = s.server.call("POST", "/profiles/browser/holds", {"timeoutMs": 20000})[1]
    s.driver.find_element(By.ID, "nudge-accept").click()
    s.wait(lambda d: s.server.call("GET", "/holds")[1]["holds"][-1]["state"] == "holding")
    s.driver.execute_script("fetch('/logout', {redirect: 'manual'})")  # the session ends meanwhile
    time.sleep(0.3)
    s.server.call("POST", f"/holds/{hold['id']}/release", {"outcome": "proceed"})
    s.wait(lambda d: d.find_element(By.ID, "nudge-status").text.startswith("nudge:"))
    s.screenshot("stale-registration-refused")
    assert s.text("nudge-status") == "nudge: not created (Error)"
    assert len(s.passkeys()) == 1, "the provider made the passkey; the RP refused to register it"
