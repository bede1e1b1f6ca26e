"""credemu_install_shim in a real headless Chromium, through Selenium and through Playwright: a page whose CSP
(`default-src 'self'`) would block the shim's fetch registers and signs in with a passkey from the test's
profile, because the install sends the shim's requests through the driver's channel (or, with `channel=False`,
bypasses the CSP) and allows the page's origin; without either, the shim's own set-up failure shows."""
import os
import warnings

import pytest
from conftest import page_site

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")

PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>strict</title></head>
<body><form><input autocomplete="username" id="u"><input type="password" autocomplete="current-password" id="p"></form></body></html>"""

# In-page: a registration and a sign-in with the page's own navigator.credentials, the result or the error.
CEREMONIES = """
async () => {
  try {
    const created = await navigator.credentials.create({publicKey: PublicKeyCredential.parseCreationOptionsFromJSON({
      rp: {id: 'localhost', name: 'Strict'}, user: {id: 'dXNlci0x', name: 'alice', displayName: 'Alice'},
      challenge: 'AAECAwQFBgcICQoLDA0ODw', pubKeyCredParams: [{type: 'public-key', alg: -7}]})});
    const got = await navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON({
      challenge: 'AAECAwQFBgcICQoLDA0ODw', rpId: 'localhost'})});
    return {created: created.id, got: got.id};
  } catch (e) {
    return {error: e.name, reason: e.credemu ? e.credemu.reason : null};
  }
}
"""


@pytest.fixture(scope="module")
def strict_site():
    with page_site(PAGE, [("Content-Security-Policy", "default-src 'self'")]) as origin:
        yield origin


@pytest.fixture(scope="module")
def playwright_browser():
    from playwright.sync_api import sync_playwright
    manager = sync_playwright().start()
    browser = manager.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"])
    yield browser
    browser.close()
    manager.stop()


@pytest.fixture
def selenium_driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    options = Options()
    options.binary_location = CHROMIUM
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]:
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def check_signed_in(result, profile):
    assert "error" not in result, result
    assert result["created"] == result["got"]
    [passkey] = profile.passkeys()
    assert passkey["credentialId"] == result["created"] and passkey["rpId"] == "localhost"


@pytest.mark.credemu(pack="gpm")
def test_selenium_page_with_a_strict_csp_uses_the_profiles_provider(selenium_driver, strict_site, credemu_profile, credemu_install_shim):
    credemu_install_shim(selenium_driver, origin=strict_site + "/login")
    selenium_driver.get(strict_site + "/login")
    selenium_driver.set_script_timeout(30)
    result = selenium_driver.execute_async_script(f"const done = arguments[arguments.length - 1]; ({CEREMONIES})().then(done);")
    check_signed_in(result, credemu_profile)


@pytest.mark.credemu(pack="apple")
def test_playwright_page_with_a_strict_csp_uses_the_profiles_provider(playwright_browser, strict_site, credemu_profile, credemu_install_shim):
    context = playwright_browser.new_context()
    page = context.new_page()
    credemu_install_shim(page, origin=strict_site)
    page.goto(strict_site + "/")
    check_signed_in(page.evaluate(CEREMONIES), credemu_profile)
    assert credemu_profile.passkeys()[0]["aaguid"] == "00000000-0000-0000-0000-000000000000", "Apple's all-zero AAGUID"
    context.close()


@pytest.mark.credemu(pack="bitwarden")
def test_playwright_browser_gives_a_context_whose_every_page_has_the_shim(playwright_browser, strict_site, credemu_profile, credemu_install_shim):
    context = credemu_install_shim(playwright_browser, origin=strict_site, viewport={"width": 800, "height": 600})
    page = context.new_page()
    page.goto(strict_site + "/")
    assert page.viewport_size == {"width": 800, "height": 600}
    check_signed_in(page.evaluate(CEREMONIES), credemu_profile)
    context.close()


def test_playwright_context_made_with_the_bypass_needs_nothing_more(playwright_browser, strict_site, credemu_profile, credemu_install_shim):
    context = playwright_browser.new_context(bypass_csp=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert credemu_install_shim(context, origin=strict_site) is context
    page = context.new_page()
    page.goto(strict_site + "/")
    check_signed_in(page.evaluate(CEREMONIES), credemu_profile)
    context.close()


def test_playwright_context_made_without_the_bypass_needs_none_through_the_channel(playwright_browser, strict_site, credemu_profile, credemu_install_shim):
    context = playwright_browser.new_context()
    opened = context.new_page()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        credemu_install_shim(context, origin=strict_site)
    opened.goto(strict_site + "/")
    check_signed_in(opened.evaluate(CEREMONIES), credemu_profile)  # a page open at install time is covered
    assert opened.evaluate("fetch('/x').then(() => 'same origin', (e) => String(e))") == "same origin"
    assert opened.evaluate(f"fetch({credemu_profile.url!r} + '/health').then(() => 'fetched', (e) => e.name)") == "TypeError", \
        "the page's own policy still refuses its fetch to another origin"
    context.close()


def test_playwright_context_made_without_the_bypass_is_warned_about_when_the_shim_fetches(playwright_browser, strict_site, credemu_profile, credemu_install_shim):
    context = playwright_browser.new_context()
    opened = context.new_page()
    with pytest.warns(UserWarning, match="bypass_csp=True"):
        credemu_install_shim(context, origin=strict_site, channel=False)
    opened.goto(strict_site + "/")
    check_signed_in(opened.evaluate(CEREMONIES), credemu_profile)  # a page open at install time is covered
    context.close()


def test_without_the_csp_bypass_the_pages_policy_blocks_the_shim(playwright_browser, strict_site, credemu_profile, credemu_install_shim):
    context = playwright_browser.new_context()
    page = context.new_page()
    credemu_install_shim(page, origin=strict_site, bypass_csp=False, channel=False)
    page.goto(strict_site + "/")
    assert page.evaluate(CEREMONIES) == {"error": "NotReadableError", "reason": "blockedByContentSecurityPolicy"}
    assert credemu_profile.passkeys() == []
    context.close()


def test_a_page_whose_origin_was_not_allowed_gets_the_shims_set_up_failure(playwright_browser, strict_site, credemu_profile, credemu_install_shim):
    context = playwright_browser.new_context()
    page = context.new_page()
    credemu_install_shim(page)  # no origin: this page's is not allowed (unless an earlier test allowed it)
    other = strict_site.replace("localhost", "app.localhost")
    page.goto(other + "/")
    assert page.evaluate(CEREMONIES) == {"error": "NotReadableError", "reason": "originNotAllowed"}
    context.close()


def test_one_selenium_driver_serves_profile_after_profile(selenium_driver, strict_site, credemu_server):
    from credemu.shim import installed_shim
    client = credemu_server.client()
    first, second = (client.for_profile(client.create_profile(n, pack="gpm")["name"]) for n in ("first", "second"))
    _, undo = installed_shim(selenium_driver, first, origin=strict_site)
    undo()  # what credemu_install_shim does at the end of a test
    installed_shim(selenium_driver, second, origin=strict_site)
    selenium_driver.get(strict_site + "/")
    selenium_driver.set_script_timeout(30)
    result = selenium_driver.execute_async_script(f"const done = arguments[arguments.length - 1]; ({CEREMONIES})().then(done);")
    check_signed_in(result, second)
    assert first.passkeys() == [], "the first profile's shim is gone from the driver"


def test_install_refuses_what_is_neither_driver_nor_page(credemu_install_shim):
    with pytest.raises(TypeError, match="Selenium driver or a Playwright page, context or browser"):
        credemu_install_shim(object())


def test_a_device_shim_sends_the_pages_create_to_the_extensions_account(selenium_driver, strict_site, credemu_server, credemu_install_shim):
    client = credemu_server.client()
    client.create_profile("shim-dev-gpm", pack="gpm")
    client.create_profile("shim-dev-bw", pack="bitwarden")
    client.create_device("shim-laptop", providers=["shim-dev-gpm", "shim-dev-bw"])
    credemu_install_shim(selenium_driver, origin=strict_site, device="shim-laptop")
    selenium_driver.get(strict_site + "/")
    selenium_driver.set_script_timeout(30)
    result = selenium_driver.execute_async_script(f"const done = arguments[arguments.length - 1]; ({CEREMONIES})().then(done);")
    check_signed_in(result, client.for_profile("shim-dev-bw"))
    assert client.passkeys(profile="shim-dev-gpm") == []


def test_install_shim_takes_a_server_and_a_clients_device(playwright_browser, strict_site, credemu_server):
    from credemu import install_shim
    client = credemu_server.client()
    client.create_profile("shim-only", pack="gpm")
    client.create_device("shim-phone", providers=["shim-only"], platform="chrome-android")
    context = install_shim(playwright_browser, credemu_server.client(device="shim-phone"), origin=strict_site)
    page = context.new_page()
    page.goto(strict_site + "/")
    check_signed_in(page.evaluate(CEREMONIES), client.for_profile("shim-only"))
    context.close()
    other = install_shim(playwright_browser, credemu_server, origin=strict_site, device="shim-phone")
    page = other.new_page()
    page.goto(strict_site + "/")
    again = page.evaluate(CEREMONIES)
    assert "error" not in again and again["created"] in {k["credentialId"] for k in client.passkeys(profile="shim-only")}
    other.close()
