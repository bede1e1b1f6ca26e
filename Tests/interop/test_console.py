"""The console (`GET /`) in headless Chromium, beside the example RP driven through the shim.

The seed's journey: an automatic upgrade in the RP raises the pack's notification as a toast in the console,
the passkey appears there, removing it in the console removes it from the vault and the RP's next passkey
sign-in is offered nothing; the opt-out turned on in the console makes the next upgrade a no-op. Then the test
controls, a scenario's matrix, the phone-sized layout, and that every fetch the console made is a documented
route. Screenshots of each state go to artifacts/console/ (CI keeps artifacts/).
"""
import base64
import json
import re
import subprocess
import sys
import urllib.request

import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from webauthn import generate_authentication_options, generate_registration_options, options_to_json

from api_client import OPENAPI, Server, template_for
from conftest import BINARY, ROOT
from shim_drivers import install_in_selenium, selenium_chromium

ARTIFACTS = ROOT / "artifacts" / "console"
USER, PASSWORD = "alice@example.com", "correct horse battery staple"
NOTIFICATION = json.loads((ROOT / "providers" / "gpm.json").read_text())["knobs"]["conditionalCreate.notification"]["value"]

# Every fetch the console makes, recorded before its own script runs (DevTools scripts are not subject to its CSP).
RECORD_FETCHES = """
window.__fetches = [];
const original = window.fetch;
window.fetch = function (input, init) {
  window.__fetches.push([(init && init.method) || 'GET', String(input)]);
  return original.apply(this, arguments);
};
"""


def chromium(width=1000, height=900):
    return selenium_chromium(window=(width, height), console=True)


class Desk:
    """The example RP in one browser (with the shim), the console in another, one credemu server."""

    def __init__(self, tmp_path, name, *server_args):
        self.rp = subprocess.Popen([sys.executable, str(ROOT / "examples" / "relying-party" / "app.py"), "--port", "0"],
                                   stdout=subprocess.PIPE, text=True)
        self.rp_url = self.rp.stdout.readline().strip()
        self.server = Server(BINARY, tmp_path, "--allow-origin", self.rp_url, *server_args)
        self.page = None
        self.console = chromium()
        self.console.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_FETCHES})
        self.shots = ARTIFACTS / name
        self.shots.mkdir(parents=True, exist_ok=True)
        self.step = 0

    def open_rp(self):
        status, _ = self.server.call("POST", "/profiles", {"name": "browser", "pack": "gpm"})
        assert status == 201
        assert self.server.call("POST", "/profiles/browser/passwords", {"origin": self.rp_url, "username": USER, "password": PASSWORD})[0] == 201
        self.page = chromium()
        install_in_selenium(self.page, self.server.call("GET", "/shim.js?profile=browser")[1].decode())

    def open_console(self, profile="browser", suffix="/"):
        self.console.get(self.server.url + suffix)
        self.wait(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
        if profile:
            select = self.console.find_element(By.ID, "profile")
            select.find_element(By.CSS_SELECTOR, f"option[value='{profile}']").click()
            self.wait(lambda d: d.find_element(By.ID, "settings-name").text == profile)

    def shot(self, name, driver=None):
        self.step += 1
        (driver or self.console).save_screenshot(str(self.shots / f"{self.step:02d}-{name}.png"))

    def wait(self, condition, timeout=20, driver=None):
        return WebDriverWait(driver or self.console, timeout,
                             ignored_exceptions=(NoSuchElementException, StaleElementReferenceException, WebDriverException)).until(condition)

    def rows(self, table):
        return self.console.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr")

    def toasts(self):
        return self.console.execute_script("return [...document.querySelectorAll('#toasts .toast')].map((t) => t.innerText)")

    def click(self, css):
        """Clicks the element once it can be: the console re-renders its lists as the log moves."""
        def attempt(d):
            d.find_element(By.CSS_SELECTOR, css).click()
            return True
        self.wait(attempt)

    def passkeys(self):
        return self.server.call("GET", "/profiles/browser/passkeys")[1]["passkeys"]

    def sign_in_with_password(self):
        self.page.get(self.rp_url + "/login")
        self.wait(lambda d: d.find_element(By.ID, "password").get_attribute("value") == PASSWORD, driver=self.page)
        self.page.find_element(By.ID, "sign-in").click()
        self.wait(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1", driver=self.page)
        return self.page.find_element(By.ID, "upgrade-status").text

    def sign_out(self):
        self.page.find_element(By.ID, "sign-out").click()
        self.wait(lambda d: d.current_url.endswith("/login"), driver=self.page)

    def fetches(self):
        return self.console.execute_script("return window.__fetches")

    def console_errors(self):
        """What the console's page logged as an error (a failed load such as /favicon.ico, a CSP violation)."""
        return [e["message"] for e in self.console.get_log("browser") if e["level"] == "SEVERE"]

    def cards(self, table):
        """Each row's cells as the phone layout shows them: the label drawn before the cell, then its text."""
        return self.console.execute_script("""
          return [...document.querySelectorAll(`#${arguments[0]} tbody tr`)].map((r) => [...r.cells].map((c) => {
            const before = getComputedStyle(c, '::before').content;
            return [before === 'none' ? '' : JSON.parse(before).trim(), c.innerText.trim()];
          }));""", table)

    def close(self):
        for driver in (self.console, self.page):
            if driver:
                driver.quit()
        self.server.stop()
        self.rp.terminate()
        self.rp.wait(10)


@pytest.fixture
def desk(tmp_path):
    created = []

    def make(name, *server_args):
        (tmp_path / name).mkdir()
        d = Desk(tmp_path / name, name, *server_args)
        created.append(d)
        return d

    yield make
    for d in created:
        d.close()


def assert_documented(fetches):
    assert fetches, "the console made no request"
    for method, url in fetches:
        path = re.sub(r"^https?://[^/]+", "", url)
        template = template_for(path)
        assert template, f"the console fetched {path}, which openapi.json does not document"
        assert method.lower() in OPENAPI["paths"][template], f"the console sent {method} {template}, which openapi.json does not document"


def test_an_upgrade_toasts_and_a_passkey_removed_in_the_console_is_no_longer_offered_then_the_opt_out_holds(desk):
    d = desk("journey")
    d.open_rp()
    d.open_console()
    assert d.console.find_element(By.ID, "set-automaticPasskeyUpgrades").is_selected()
    assert d.console.find_element(By.ID, "passkeys-empty").is_displayed()
    d.shot("console-before-the-upgrade")

    assert d.sign_in_with_password().startswith("upgrade: created "), "the RP's automatic upgrade did not create a passkey"
    d.wait(lambda _: any(NOTIFICATION in t for t in d.toasts()))
    d.wait(lambda _: len(d.rows("passkeys")) == 1)
    [passkey] = d.passkeys()
    credential, text = d.console.execute_script("const r = document.querySelector('#passkeys tbody tr'); return [r.dataset.credential, r.innerText]")
    assert credential == passkey["credentialId"]
    assert passkey["rpId"] in text and USER in text and "ES256" in text and "1/1/0" in text, text
    d.shot("toast-after-the-automatic-upgrade")
    # The user dismisses the notification (it lies over the list, as a system notification would).
    d.console.find_element(By.CSS_SELECTOR, "#toasts .toast button").click()
    d.wait(lambda _: d.toasts() == [])

    # The passkey's history comes from the event log: its silent creation.
    d.click("#passkeys button.passkey-history")
    d.wait(lambda dr: "create: success" in dr.find_element(By.ID, "history-list").text)
    d.shot("passkey-history")

    # Hide and restore, through PATCH /profiles/{p}/passkeys/{id}.
    d.click("#passkeys button.hide-passkey")
    d.wait(lambda _: d.passkeys()[0]["hidden"] is True)
    d.wait(lambda dr: dr.execute_script("return document.querySelector('#passkeys tbody tr.hidden-passkey') !== null"))
    d.shot("passkey-hidden")
    d.click("#passkeys button.hide-passkey")
    d.wait(lambda _: d.passkeys()[0]["hidden"] is False)
    # The same route from a script: a named 400 for a wrong value, and restoring a visible passkey changes nothing.
    path = "/profiles/browser/passkeys/" + passkey["credentialId"]
    status, body = d.server.call("PATCH", path, {"hidden": "yes"})
    assert status == 400 and body["error"]["name"] == "TypeError", body
    status, body = d.server.call("PATCH", path, {"hidden": False})
    assert status == 200 and body["hidden"] is False and body["credentialId"] == passkey["credentialId"]
    outcomes = [e["outcome"] for e in d.server.call("GET", "/profiles/browser/events?kind=vault")[1]["events"]]
    assert outcomes == ["hidden", "restored"], outcomes

    # The password is masked until revealed; filled and used times are shown.
    cells = d.console.execute_script("return [...document.querySelectorAll('#passwords tbody tr:first-child td')].map((c) => c.innerText)")
    assert PASSWORD not in " ".join(cells) and cells[1] == USER and cells[4] != "never", cells
    d.click("#passwords button.reveal")
    d.wait(lambda dr: PASSWORD in dr.find_element(By.ID, "passwords").text)
    d.shot("password-revealed")
    d.click("#passwords button.reveal")
    d.wait(lambda dr: PASSWORD not in dr.find_element(By.ID, "passwords").text)

    # Removing it in the console removes it from the vault; the RP's next passkey sign-in is offered nothing.
    d.click("#passkeys button.remove-passkey")
    d.console.switch_to.alert.accept()
    d.wait(lambda _: d.passkeys() == [])
    d.wait(lambda _: d.console.find_element(By.ID, "passkeys-empty").is_displayed())
    d.shot("passkey-removed-in-the-console")
    d.sign_out()
    # With no passkey GPM's Chrome keeps its sheet open until the user closes it (modalGet.noCredential): the user's
    # decision, queued, closes it at once with the provider's "nothing to offer".
    assert d.server.call("POST", "/profiles/browser/user", {"decisions": ["accept"]})[0] == 200
    d.page.find_element(By.ID, "passkey").click()
    d.wait(lambda dr: dr.find_element(By.ID, "login-status").text.startswith("No passkey used"), driver=d.page)
    assert d.page.find_element(By.ID, "login-status").text == "No passkey used: NotAllowedError"
    d.shot("rp-offered-no-passkey", driver=d.page)
    assert d.server.call("GET", "/profiles/browser/events?kind=get")[1]["events"][-1]["reason"] == "noCredential"

    # The opt-out, turned on in the console by keyboard, makes the next upgrade a no-op.
    toggle = d.console.find_element(By.ID, "set-automaticPasskeyUpgrades")
    toggle.send_keys(Keys.SPACE)
    d.wait(lambda _: d.server.call("GET", "/profiles/browser")[1]["automaticPasskeyUpgrades"] is False)
    d.wait(lambda dr: "automatic upgrades off" in dr.find_element(By.ID, "profile-summary").text)
    d.shot("opt-out-set-in-the-console")
    saved_toasts = sum(NOTIFICATION in t for t in d.toasts())
    assert d.sign_in_with_password() == "upgrade: skipped (NotAllowedError)"
    assert d.server.call("GET", "/profiles/browser/events?kind=create")[1]["events"][-1]["reason"] == "optOut"
    d.wait(lambda dr: dr.execute_script(
        "return [...document.querySelectorAll('#events tbody tr')].some((r) => r.dataset.kind === 'create' && r.innerText.includes('optOut'))"))
    assert d.passkeys() == [] and d.rows("passkeys") == []
    assert sum(NOTIFICATION in t for t in d.toasts()) <= saved_toasts
    d.shot("upgrade-skipped-after-the-opt-out")

    # The log filters by kind.
    d.click("#kind-filter option[value='create']")
    d.wait(lambda dr: dr.execute_script("return [...new Set([...document.querySelectorAll('#events tbody tr')].map((r) => r.dataset.kind))]") == ["create"])
    d.shot("event-log-filtered-to-create")
    assert_documented(d.fetches())
    assert d.console_errors() == [], "the console's page logged errors (a /favicon.ico 404 among them?)"


def test_test_controls_drive_the_clock_the_user_and_holds(desk):
    d = desk("controls")
    d.open_console(profile="default")
    d.console.find_element(By.CSS_SELECTOR, "button[data-advance='1d']").click()
    d.wait(lambda _: d.server.call("GET", "/clock")[1]["mode"] == "virtual")
    before = d.server.call("GET", "/clock")[1]["now"]
    d.console.find_element(By.CSS_SELECTOR, "button[data-advance='1h']").click()
    d.wait(lambda _: d.server.call("GET", "/clock")[1]["now"] > before)
    d.console.execute_script("document.getElementById('clock-set').value = '2030-01-01T12:00:00'")
    d.console.find_element(By.ID, "clock-set-go").click()
    d.wait(lambda _: d.server.call("GET", "/clock")[1]["now"].startswith("2030-01-01T12:00:00"))
    d.wait(lambda dr: "2030-01-01 12:00:00" in dr.find_element(By.ID, "clock-state").text)
    d.shot("virtual-clock")
    d.console.find_element(By.ID, "clock-system").click()
    d.wait(lambda _: d.server.call("GET", "/clock")[1]["mode"] == "system")

    d.console.find_element(By.CSS_SELECTOR, "button[data-decision='cancel']").click()
    d.console.find_element(By.CSS_SELECTOR, "button[data-decision='accept']").click()
    d.wait(lambda _: d.server.call("GET", "/profiles/default/user")[1]["pending"] == ["cancel", "accept"])
    d.wait(lambda dr: dr.find_element(By.ID, "decisions").text == "cancel, accept")
    d.shot("queued-decisions")
    d.console.find_element(By.ID, "decisions-clear").click()
    d.wait(lambda _: d.server.call("GET", "/profiles/default/user")[1]["pending"] == [])
    assert "No open dropdown." in d.console.find_element(By.ID, "offers").text

    d.console.find_element(By.ID, "hold-arm").click()
    d.wait(lambda _: len(d.server.call("GET", "/holds")[1]["holds"]) == 1)
    d.wait(lambda dr: dr.find_elements(By.CSS_SELECTOR, "#hold-list button.release"))
    d.shot("hold-armed")
    d.click("#hold-list button.release")
    d.wait(lambda _: d.server.call("GET", "/holds")[1]["holds"] == [] or d.server.call("GET", "/holds")[1]["holds"][0]["state"] != "armed")

    # A profile created and removed in the console.
    d.console.find_element(By.ID, "new-name").send_keys("made-here")
    d.console.find_element(By.ID, "new-pack").find_element(By.CSS_SELECTOR, "option[value='bitwarden']").click()
    d.console.find_element(By.CSS_SELECTOR, "#profile-create button[type=submit]").click()
    d.wait(lambda _: d.server.call("GET", "/profiles/made-here")[0] == 200)
    assert d.server.call("GET", "/profiles/made-here")[1]["pack"] == "bitwarden"
    d.wait(lambda dr: dr.find_element(By.ID, "settings-name").text == "made-here")
    d.shot("profile-created")
    d.console.find_element(By.ID, "profile-remove").click()
    d.console.switch_to.alert.accept()
    d.wait(lambda _: d.server.call("GET", "/profiles/made-here")[0] == 404)
    assert_documented(d.fetches())


def test_a_scenario_runs_across_packs_and_its_matrix_is_the_expected_one(desk):
    d = desk("report")
    d.open_console(profile="default")
    name = "upgrade-with-opt-out"
    d.console.find_element(By.ID, "scenario-file").send_keys(str(ROOT / "scenarios" / f"{name}.json"))
    d.console.find_element(By.ID, "scenario-run").click()
    d.wait(lambda dr: dr.find_elements(By.CSS_SELECTOR, "#matrix-table tbody tr"), timeout=120)
    expected = json.loads((ROOT / "scenarios" / "expected" / f"{name}.json").read_text())
    headers = [th.text for th in d.console.find_elements(By.CSS_SELECTOR, "#matrix-table thead th")][1:]
    assert headers == [f"{p['pack']}@{p['platform']}" for p in expected["providers"]]
    rows = d.console.find_elements(By.CSS_SELECTOR, "#matrix-table tbody tr")
    assert len(rows) == len(expected["steps"])
    for row, step in zip(rows, expected["steps"]):
        cells = row.find_elements(By.TAG_NAME, "td")
        outcomes = [c.find_element(By.TAG_NAME, "strong").text for c in cells]
        assert outcomes == [step["cells"][h]["outcome"] for h in headers], step["step"]
        assert ("diverges" in row.get_attribute("class")) == step["diverges"]
    d.console.execute_script("document.getElementById('reports').scrollIntoView()")
    d.shot("scenario-matrix")
    # The same route from a script: documented, and a malformed scenario is a named 400.
    status, body = d.server.call("POST", "/scenarios/run", {"scenario": {"format": "credemu-scenario"}})
    assert status == 400 and body["error"]["name"] == "InvalidScenario", body
    assert_documented(d.fetches())


def test_the_console_reads_at_phone_width_and_at_1000_px_and_no_page_may_frame_it(desk):
    d = desk("layout")
    d.open_rp()
    d.open_console()
    d.sign_in_with_password()
    d.wait(lambda _: len(d.rows("passkeys")) == 1)
    for width, height, name in [(1000, 900, "1000px"), (390, 844, "phone")]:
        d.console.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
        overflow = d.console.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"the console scrolls sideways by {overflow} px at {width} px"
        d.shot(f"layout-{name}")
    # Every control is labelled: a button's text or aria-label, an input's label.
    unlabelled = d.console.execute_script("""
      return [...document.querySelectorAll('button, input, select, textarea')].filter((e) => {
        if (e.type === 'hidden') return false;
        const name = e.getAttribute('aria-label') || (e.labels && [...e.labels].map((l) => l.textContent).join('')) || e.textContent;
        return !name.trim();
      }).map((e) => e.outerHTML);""")
    assert unlabelled == []

    # The footer names every page of docs/, and each named page exists.
    named = d.console.execute_script("return [...document.querySelectorAll('#docs li code')].map((c) => c.textContent)")
    assert sorted(named) == sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md") if p.name != "architecture.md"), named

    # The headers that keep other pages from framing it, and a strict CSP of its own.
    for path in ["/", "/console.js", "/console.css", "/console.svg"]:
        status, _ = d.server.call("GET", path)
        assert status == 200
        assert d.server.last_headers["X-Frame-Options"] == "DENY"
        csp = d.server.last_headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp


def test_the_console_asks_for_the_token_and_takes_it_from_the_fragment(desk):
    d = desk("token", "--token", "s3cret-token")
    d.server.token = "s3cret-token"
    assert "#token=s3cret-token" in d.server.process.stdout.readline()
    d.console.get(d.server.url + "/")
    d.wait(lambda dr: dr.find_element(By.ID, "auth").is_displayed())
    # Behind the prompt nothing is shown that the server has not said: no unticked box reads as an opt-out.
    assert not d.console.find_element(By.ID, "set-automaticPasskeyUpgrades").is_displayed()
    assert not d.console.find_element(By.ID, "main").is_displayed()
    d.shot("token-asked")
    d.open_console(profile="default", suffix="/#token=s3cret-token")
    assert "token" not in d.console.current_url
    assert d.console.find_element(By.ID, "settings-name").text == "default"
    assert d.console.find_element(By.ID, "set-automaticPasskeyUpgrades").is_selected()


def options_json(user=USER, **kw):
    return json.loads(options_to_json(generate_registration_options(rp_id="localhost", rp_name="Shop", user_name=user, **kw)))


def test_the_first_events_of_a_fresh_profile_are_news_and_the_upgrade_toasts(desk):
    # The console opens on a profile with no event yet; then, within a second, a password is saved and used and an
    # automatic upgrade follows: one batch for the console's next poll, which used to be taken as history.
    d = desk("fresh-profile")
    d.open_console(profile="default")
    assert d.server.call("GET", "/profiles/default/events")[1]["events"] == [], "the profile must start with an empty log"
    origin = "http://localhost:8000"
    assert d.server.call("POST", "/profiles/default/passwords", {"origin": origin, "username": USER, "password": PASSWORD})[0] == 201
    assert d.server.call("POST", "/profiles/default/autofill", {"origin": origin, "submit": True})[0] == 200
    status, body = d.server.call("POST", "/profiles/default/credentials/create", {"origin": origin, "options": options_json(), "mediation": "conditional"})
    assert status == 200, body
    d.wait(lambda _: any(NOTIFICATION in t for t in d.toasts()))
    d.wait(lambda _: len(d.rows("passkeys")) == 1)
    d.shot("toast-on-a-fresh-profile")


def test_a_modal_registration_shows_the_flags_it_was_made_with(desk):
    d = desk("modal-flags")
    d.open_console(profile="default")
    status, body = d.server.call("POST", "/profiles/default/credentials/create",
                                 {"origin": "http://localhost:8000", "options": options_json()})
    assert status == 200, body
    d.wait(lambda _: len(d.rows("passkeys")) == 1)
    d.wait(lambda dr: "1/1/1" in dr.find_element(By.CSS_SELECTOR, "#passkeys tbody tr").text)
    # GPM reports UV in a modal create: the authenticator data the RP got says so too.
    auth_data = body["response"]["authenticatorData"]
    flags = base64.urlsafe_b64decode(auth_data + "=" * (-len(auth_data) % 4))[32]
    assert flags & 0x04 and flags & 0x08 and flags & 0x10, hex(flags)
    assert d.console_errors() == []


def test_the_console_reads_as_a_person_would_at_phone_width(desk):
    d = desk("readable")
    d.open_rp()
    d.open_console()
    assert d.sign_in_with_password().startswith("upgrade: created ")
    d.wait(lambda _: len(d.rows("passkeys")) == 1)
    # The password just used to sign in says so; the console follows the vault as the log moves.
    d.wait(lambda _: d.console.execute_script(
        "return document.querySelector('#passwords tbody tr td:last-child').innerText") != "never", timeout=10)

    # The event log's Detail is labelled lines, not JSON (which stays one click away).
    detail = d.console.execute_script("""
      const row = [...document.querySelectorAll('#events tbody tr')].find((r) => r.dataset.kind === 'create');
      const cell = row.cells[5];
      return [cell.innerText, !!cell.querySelector('dl.detail'), cell.querySelector('details').open];""")
    text, has_list, json_open = detail
    assert has_list and json_open is False, detail
    assert '{"' not in text and "Credential ID" in text and "Notification" in text and "UV: no" in text, text

    d.console.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    for table, expected in [("passkeys", ["RP", "User", "Created", "Last used", "Algorithm"]),
                            ("passwords", ["Origin", "User name", "Password", "Created", "Last filled", "Last used"]),
                            ("events", ["#", "Time", "Kind", "Outcome", "Reason", "Detail"])]:
        cards = d.cards(table)
        assert cards, table
        for card in cards:
            labels = [label.rstrip(":") for label, _ in card]
            assert labels[:len(expected)] == expected, (table, card)
    passkey = d.cards("passkeys")[0]
    assert any(label.startswith("BE/BS/UV") and text == "1/1/0" for label, text in passkey), passkey
    d.shot("cards-at-phone-width")

    # The opt-out's confirmation is in the words of the label the person clicked.
    d.console.find_element(By.ID, "set-automaticPasskeyUpgrades").send_keys(Keys.SPACE)
    d.wait(lambda dr: dr.find_element(By.ID, "settings-status").text
           == "Saved: Automatic passkey upgrades off (the user's opt-out).")
    d.console.find_element(By.ID, "set-osVersion").send_keys("14", Keys.TAB)
    d.wait(lambda dr: dr.find_element(By.ID, "settings-status").text == "Saved: OS version: 14.")
    d.shot("opt-out-confirmed-at-phone-width")
    assert d.console_errors() == []


def test_a_passkey_renamed_in_the_console_keeps_its_names_through_gpms_details_signal_and_a_shadowed_one_says_so(desk):
    # Two registrations of one account (the RP sends no excludeCredentials): GPM shadows the first, which the console
    # still lists, as Google Password Manager's list does, saying which passkey shadows it.
    d = desk("rename")
    d.open_console(profile="default")
    origin = "http://localhost:8000"
    made = []
    for _ in range(2):
        status, body = d.server.call("POST", "/profiles/default/credentials/create",
                                     {"origin": origin, "options": options_json(user_id=b"alice-account-7")})
        assert status == 200, body
        made.append(body["id"])
    old, new = made
    d.wait(lambda _: len(d.rows("passkeys")) == 2)
    row = f"#passkeys tbody tr[data-credential='{{}}']".format
    d.wait(lambda dr: f"shadowed by {new[:8]}" in dr.find_element(By.CSS_SELECTOR, row(old)).text)
    assert "shadowed-passkey" in d.console.find_element(By.CSS_SELECTOR, row(old)).get_attribute("class")
    assert "shadowed-passkey" not in d.console.find_element(By.CSS_SELECTOR, row(new)).get_attribute("class")
    assert "shadowed by" not in d.console.find_element(By.CSS_SELECTOR, row(new)).text
    d.shot("a-shadowed-passkey")

    def field(credential, name):
        return d.console.find_element(By.CSS_SELECTOR, f"{row(credential)} form.rename-passkey input[name={name}]")

    def type_into(credential, name, value):
        def attempt(_):
            box = field(credential, name)
            box.clear()
            box.send_keys(value)
            return field(credential, name).get_attribute("value") == value
        d.wait(attempt)

    def rename(credential, user_name, display_name):
        type_into(credential, "userName", user_name)
        type_into(credential, "displayName", display_name)
        d.click(f"{row(credential)} form.rename-passkey button[type=submit]")

    # The user starts typing a new name; meanwhile the RP signs in with the passkey, so the console rebuilds the list
    # as the log moves: what the user typed, and where, stays.
    type_into(new, "userName", "alice at w")
    events = len(d.rows("events"))
    request = json.loads(options_to_json(generate_authentication_options(rp_id="localhost")))
    status, body = d.server.call("POST", "/profiles/default/credentials/get", {"origin": origin, "options": request})
    assert status == 200 and body["id"] == new, body
    d.wait(lambda _: len(d.rows("events")) > events)
    d.wait(lambda dr: dr.find_element(By.CSS_SELECTOR, row(new)).find_elements(By.TAG_NAME, "td")[3].text != "never")
    assert field(new, "userName").get_attribute("value") == "alice at w"
    assert d.console.execute_script("return document.activeElement.name") == "userName"
    d.console.switch_to.active_element.send_keys("ork")
    assert field(new, "userName").get_attribute("value") == "alice at work"

    # The user renames the newer passkey in the console's form: the vault marks it edited by the user.
    rename(new, "alice at work", "Alice (work)")
    d.wait(lambda _: d.server.call("GET", f"/profiles/default/passkeys/{new}")[1]["userName"] == "alice at work")
    renamed = d.server.call("GET", f"/profiles/default/passkeys/{new}")[1]
    assert renamed["displayName"] == "Alice (work)" and renamed["editedByUser"] is True, renamed
    d.wait(lambda dr: "edited by the user" in dr.find_element(By.CSS_SELECTOR, row(new)).text)
    assert "alice at work" in d.console.find_element(By.CSS_SELECTOR, row(new)).text
    assert "edited by the user" not in d.console.find_element(By.CSS_SELECTOR, row(old)).text
    d.wait(lambda _: any("Passkey renamed" in t for t in d.toasts()))
    events = d.server.call("GET", "/profiles/default/events?kind=vault")[1]["events"]
    assert [(e["outcome"], e["detail"]["credentialId"], e["detail"]["userName"]) for e in events] == [("renamed", new, "alice at work")]
    d.shot("renamed-in-the-console")

    # The RP's details signal: GPM leaves the user's names alone (signals.currentUserDetailsRespectsUserEdit).
    status, body = d.server.call("POST", "/profiles/default/signals/details", {"origin": origin, "options": {
        "rpId": "localhost", "userId": base64.urlsafe_b64encode(b"alice-account-7").decode().rstrip("="),
        "name": "alice@new.example", "displayName": "Alice New"}})
    assert status == 200 and body == {"resolved": True}, body
    assert d.server.call("GET", f"/profiles/default/passkeys/{new}")[1]["userName"] == "alice at work"
    d.wait(lambda _: any(e["kind"] == "signal" for e in d.server.call("GET", "/profiles/default/events")[1]["events"]))
    assert "alice at work" in d.console.find_element(By.CSS_SELECTOR, row(new)).text
    assert_documented(d.fetches())
    assert d.console_errors() == []

    # A name the browser's own form refuses (empty) is never sent; one the server refuses (over 1024 bytes of UTF-8,
    # though 600 characters fit the field) is its named error in the console, the vault unchanged.
    before = d.server.call("GET", "/profiles/default/passkeys")[1]
    sent = len(d.fetches())
    rename(new, "", "Alice (work)")
    assert not [f for f in d.fetches()[sent:] if f[0] == "PATCH"], "an empty user name was sent"
    rename(new, "é" * 600, "Alice (work)")
    d.wait(lambda dr: dr.find_element(By.ID, "error").is_displayed())
    assert "1024 bytes" in d.console.find_element(By.ID, "error").text
    assert d.server.call("GET", "/profiles/default/passkeys")[1] == before
    d.shot("rename-refused")
