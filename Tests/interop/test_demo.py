"""The console's demo shop (`POST /demo`) in headless Chromium: seed 000's journey in a browser with no driver's shim.

The console offers "Try the demo shop"; one click opens the shop, a relying party `credemu serve` runs on a port of
its own, whose page loads the shim itself. The password manager fills the password, the sign-in is followed by a
silent passkey (UP=0 UV=0, which the shop's server verifies and accepts), the pack's notification toasts in the
console and the passkey is in its vault; a passkey sign-in verifies; then the opt-out, set in the console, makes
the next upgrade a no-op the log calls optOut. Then the shop's front door as an attacker sees it. Screenshots of
each step go to .build/artifacts/demo/.
"""
import json
import urllib.error
import urllib.request

import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from api_client import Server
from conftest import BINARY, ROOT
from shim_drivers import selenium_chromium
from test_console import RECORD_FETCHES, assert_documented

ARTIFACTS = ROOT / ".build" / "artifacts" / "demo"
NOTIFICATION = json.loads((ROOT / "providers" / "gpm.json").read_text())["knobs"]["conditionalCreate.notification"]["value"]
USER = "alice@shop.example"


class Journey:
    def __init__(self, server, driver):
        self.server, self.driver = server, driver
        self.step = 0
        ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def wait(self, condition, timeout=20):
        return WebDriverWait(self.driver, timeout,
                             ignored_exceptions=(NoSuchElementException, StaleElementReferenceException, WebDriverException)).until(condition)

    def shot(self, name):
        self.step += 1
        self.driver.save_screenshot(str(ARTIFACTS / f"{self.step:02d}-{name}.png"))

    def text(self, element_id):
        return self.driver.find_element(By.ID, element_id).text

    def filled(self):
        """Waits for the shop's sign-in form, filled by the password manager."""
        self.wait(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-view") == "signin")
        self.wait(lambda d: d.find_element(By.ID, "password").get_attribute("value") != "")
        return self.driver.find_element(By.ID, "username").get_attribute("value"), self.driver.find_element(By.ID, "password").get_attribute("value")

    def sign_in_with_password(self):
        self.driver.find_element(By.ID, "sign-in").click()
        return self.wait(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-upgrade"))

    def sign_out(self):
        self.driver.find_element(By.ID, "sign-out").click()
        return self.filled()

    def passkeys(self):
        return self.server.call("GET", "/profiles/default/passkeys")[1]["passkeys"]

    def events(self, kind):
        return self.server.call("GET", f"/profiles/default/events?kind={kind}")[1]["events"]


@pytest.fixture
def journey(tmp_path):
    server = Server(BINARY, tmp_path)
    driver = selenium_chromium(window=(1200, 900), console=True)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_FETCHES})
    yield Journey(server, driver)
    driver.quit()
    server.stop()


def test_the_consoles_demo_shop_does_seed_000s_journey_in_a_browser_with_no_driver(journey):
    j, d = journey, journey.driver
    status, offered = j.server.call("GET", "/demo")
    assert status == 200 and offered["available"] is True and offered["running"] is False, offered

    d.get(j.server.url + "/")
    j.wait(lambda dr: dr.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    j.wait(lambda dr: dr.find_element(By.ID, "demo").is_displayed())
    assert d.find_element(By.ID, "passkeys-empty").is_displayed()
    j.shot("console-offers-the-demo-shop")
    console = d.current_window_handle

    # One click: the server starts the shop, saves its account's password in the vault, and the shop opens.
    d.find_element(By.ID, "demo-open").click()
    j.wait(lambda dr: len(dr.window_handles) == 2)
    shop = next(h for h in d.window_handles if h != console)
    demo = j.server.call("GET", "/demo")[1]
    assert demo["running"] is True and demo["profile"] == "default" and demo["url"].startswith("http://localhost:"), demo
    assert demo["url"] != j.server.url + "/", "the shop must not be the console's origin"
    j.wait(lambda dr: demo["url"] in dr.find_element(By.ID, "demo-status").text)
    saved = j.server.call("GET", "/profiles/default/passwords?reveal=true")[1]["passwords"]
    assert [(p["origin"] + "/", p["username"]) for p in saved] == [(demo["url"], USER)], saved

    # The password manager fills the form; the sign-in is followed at once by the silent upgrade.
    d.switch_to.window(shop)
    assert d.current_url == demo["url"]
    assert j.filled() == (USER, saved[0]["password"])
    j.shot("shop-password-filled")
    assert j.sign_in_with_password().startswith("created "), j.text("server-log")
    log = j.text("server-log")
    assert "Password sign-in accepted" in log and "UP=0 UV=0 BE=1 BS=1" in log and "UP=0 and UV=0 accepted" in log, log
    assert "automatic upgrade" in j.text("passkeys")
    j.shot("shop-signed-in-upgraded-silently")
    [passkey] = j.passkeys()
    assert passkey["rpId"] == "localhost" and passkey["userName"] == USER
    created = j.events("create")[-1]
    assert created["outcome"] == "success" and created["detail"]["silent"] is True, created
    assert created["detail"]["authenticatorFlags"]["UP"] is False and created["detail"]["authenticatorFlags"]["UV"] is False, created

    # The password manager's notification, and the passkey in its vault.
    d.switch_to.window(console)
    j.wait(lambda dr: any(NOTIFICATION in t for t in dr.execute_script("return [...document.querySelectorAll('#toasts .toast')].map((t) => t.innerText)")))
    j.wait(lambda dr: len(dr.find_elements(By.CSS_SELECTOR, "#passkeys tbody tr")) == 1)
    assert "localhost" in d.find_element(By.CSS_SELECTOR, "#passkeys tbody tr").text
    j.shot("console-toast-and-passkey-in-the-vault")

    # A passkey sign-in, verified by the shop under the key it registered.
    d.switch_to.window(shop)
    j.sign_out()
    d.find_element(By.ID, "passkey-signin").click()
    j.wait(lambda dr: dr.find_element(By.TAG_NAME, "body").get_attribute("data-view") == "account")
    assert "with a passkey" in j.text("account-how")
    assert "Passkey sign-in verified" in j.text("server-log")
    j.shot("shop-signed-in-with-the-passkey")
    assert j.events("get")[-1]["outcome"] == "success"

    # The opt-out, in the console's settings; the next password sign-in's upgrade is a silent no-op.
    d.switch_to.window(console)
    d.find_element(By.ID, "set-automaticPasskeyUpgrades").click()
    j.wait(lambda _: j.server.call("GET", "/profiles/default")[1]["automaticPasskeyUpgrades"] is False)
    d.switch_to.window(shop)
    j.sign_out()
    assert j.sign_in_with_password() == "skipped (NotAllowedError)", j.text("server-log")
    assert "declined silently" in j.text("server-log")
    j.shot("shop-upgrade-skipped-after-the-opt-out")
    assert len(j.passkeys()) == 1
    assert j.events("create")[-1]["reason"] == "optOut"
    d.switch_to.window(console)
    j.wait(lambda dr: dr.execute_script(
        "return [...document.querySelectorAll('#events tbody tr')].some((r) => r.dataset.kind === 'create' && r.innerText.includes('optOut'))"))
    d.execute_script("document.getElementById('activity').scrollIntoView()")
    j.shot("console-log-says-opt-out")
    assert_documented(d.execute_script("return window.__fetches"))
    errors = [e["message"] for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == [], errors


def request(url, method="GET", body=None, headers=None):
    data = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url, data=data, method=method)
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def error_name(payload):
    return json.loads(payload)["error"]["name"]


def test_the_demo_shop_is_a_page_like_any_other_and_its_door_refuses_hostile_requests(tmp_path):
    server = Server(BINARY, tmp_path)
    try:
        # No page starts it, not even the shop's future origin; a page gets 403 for both routes.
        status, body = server.call("POST", "/demo", {}, headers={"Origin": "http://localhost:1"})
        assert status == 403 and body["error"]["name"] == "Forbidden"
        status, body = server.call("POST", "/demo", {"profile": "nobody"})
        assert status == 404, body
        status, body = server.call("POST", "/demo", {"profile": "default", "port": 1})
        assert status == 400 and body["error"]["name"] == "TypeError", body
        status, demo = server.call("POST", "/demo", {})
        assert status == 200 and demo["running"], demo
        shop = demo["url"].rstrip("/")
        json_headers = {"Content-Type": "application/json", "Origin": shop}

        # A page of the shop reaches the page routes for its own origin only: no operator route, no secret.
        status, body = server.call("GET", "/profiles", headers={"Origin": shop})
        assert status == 403 and body["error"]["name"] == "Forbidden"
        status, body = server.call("GET", "/profiles/default/passwords?reveal=true", headers={"Origin": shop})
        assert status == 403 and body["error"]["name"] == "SecurityError", body
        status, body = server.call("GET", "/profiles/default/passwords", headers={"Origin": shop})
        assert status == 200 and [p["username"] for p in body["passwords"]] == [USER] and "password" not in body["passwords"][0], body
        status, body = server.call("POST", "/profiles/default/autofill", {"origin": "http://localhost:8000"}, headers={"Origin": shop})
        assert status == 403 and body["error"]["name"] == "SecurityError", body

        # The shop's own door: its origin only, JSON only, bounded, its host only; it serves none of the API.
        status, payload = request(shop + "/api/signin", "POST", {"username": USER, "password": "x"}, {"Content-Type": "application/json", "Origin": "https://evil.example"})
        assert (status, error_name(payload)) == (403, "CrossOriginRequest")
        status, payload = request(shop + "/api/signin", "POST", b"username=a", {"Content-Type": "text/plain", "Origin": shop})
        assert (status, error_name(payload)) == (415, "UnsupportedMediaType")
        status, payload = request(shop + "/api/signin", "POST", b"{" + b" " * (64 * 1024) + b"}", json_headers)
        assert (status, error_name(payload)) == (413, "PayloadTooLarge")
        status, payload = request(shop + "/api/signin", "POST", {"username": USER, "password": "wrong"}, json_headers)
        assert (status, error_name(payload)) == (401, "WrongPassword")
        status, payload = request(shop + "/api/signin", "POST", [1, 2], json_headers)
        assert (status, error_name(payload)) == (400, "BadJSON")
        status, payload = request(shop + "/", headers={"Host": "rebound.example"})
        assert status == 403
        status, payload = request(shop + "/profiles")
        assert (status, error_name(payload)) == (404, "NotFound")
        status, payload = request(shop + "/api/account", "POST", {"session": "forged"}, json_headers)
        assert (status, error_name(payload)) == (401, "SignedOut")
        # A registration for a session that never was, and a sign-in answering no challenge, change nothing.
        status, payload = request(shop + "/api/register/options", "POST", {"session": "forged"}, json_headers)
        assert (status, error_name(payload)) == (401, "SignedOut")
        fake = {"type": "public-key", "id": "AAAA", "rawId": "AAAA",
                "response": {"clientDataJSON": "e30", "authenticatorData": "AAAA", "signature": "AAAA"}}
        status, payload = request(shop + "/api/passkey-signin", "POST", {"credential": fake}, json_headers)
        assert (status, error_name(payload)) == (400, "WrongCeremonyType")
        assert server.call("GET", "/profiles/default/passkeys")[1]["passkeys"] == []
    finally:
        server.stop()


def test_the_demo_is_not_offered_where_a_token_guards_the_api(tmp_path):
    server = Server(BINARY, tmp_path, "--token", "s3cret-token")
    server.token = "s3cret-token"
    try:
        status, demo = server.call("GET", "/demo")
        assert status == 200 and demo["available"] is False and "--token" in demo["reason"], demo
        status, body = server.call("POST", "/demo", {})
        assert status == 409 and body["error"]["name"] == "DemoUnavailable", body
    finally:
        server.stop()
