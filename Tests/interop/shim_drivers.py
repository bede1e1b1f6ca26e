"""The documented way to put credemu's browser shim into a page by hand, one function per browser driver (the
clients' `install_shim` does more: the shim's requests over the driver's channel, the page's CSP in force;
docs/shim.md, "Transport").

Start credemu with `--allow-origin` for the RP's origin (the shim's requests come from the page), fetch
`{server}/shim.js?profile=P`, then hand it to the driver before the page loads. The page's own
Content-Security-Policy applies to the shim's `fetch` to credemu as to any script of the page, so a page with
`default-src 'self'` (django-otp-webauthn's sandbox, for one) blocks it: the driver bypasses CSP for the shim
(CDP `Page.setBypassCSP`, Playwright `bypass_csp=True`). Without that, only pages whose CSP allows
`connect-src` to credemu's URL work. docs/shim.md shows these same lines.

And the headless Chromium the interop tests drive through Selenium (`selenium_chromium`).
"""
import os
import urllib.request

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")


def selenium_chromium(*args, window=None, console=False, script_timeout=None):
    """Headless Chromium (Debian's, or $CHROMIUM) under Selenium (chromedriver, or $CHROMEDRIVER), with `args`
    beside the usual flags; `window` a (width, height); `console` keeps the page's console for
    `get_log("browser")`; `script_timeout` in seconds for `execute_async_script`."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    options = Options()
    options.binary_location = CHROMIUM
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", *args]:
        options.add_argument(arg)
    if window:
        options.add_argument(f"--window-size={window[0]},{window[1]}")
    if console:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    if script_timeout is not None:
        driver.set_script_timeout(script_timeout)
    return driver


def fetch_shim(server, profile="default", device=None):
    """The shim for `profile` (or, given `device`, for that device), with credemu's URL baked in."""
    query = f"device={device}" if device else f"profile={profile}"
    with urllib.request.urlopen(f"{server}/shim.js?{query}", timeout=30) as response:
        return response.read().decode()


def install_in_selenium(driver, shim, bypass_csp=True):
    """Selenium with Chromium (or any driver with `execute_cdp_cmd`): every document the tab loads from now on
    runs the shim before its own scripts."""
    if bypass_csp:
        driver.execute_cdp_cmd("Page.setBypassCSP", {"enabled": True})
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": shim})


def new_playwright_context(browser, shim, bypass_csp=True, **context_options):
    """Playwright: a browser context whose every page runs the shim before its own scripts."""
    context = browser.new_context(bypass_csp=bypass_csp, **context_options)
    context.add_init_script(shim)
    return context
