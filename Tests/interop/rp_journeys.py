"""Third-party RPs in headless Chromium through credemu's shim, shared by the end-to-end journeys
(test_third_party_rps.py, test_security_keys.py): an RP's sources from PyPI (`sdist`), the RP as a subprocess
(`RP`, python-fido2's example server as the `fido2_example` fixture), credemu served for the RP's origin with the
profiles and devices a journey needs (`serve_credemu`), and one `Browser` interface over Selenium and Playwright
(`open_browser`). Every process a fixture starts is stopped when its test ends. conftest.py registers this module
as a plugin, so its fixtures reach every test module without an import.

The sdists are the versions installed from Tests/interop/requirements.txt, downloaded once into a cache beside
the interpreter (`.venv/credemu-sdists/`). Screenshots of every step go to artifacts/e2e/<journey>-<driver>/.
"""
import importlib.metadata
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from api_client import Server
from conftest import BINARY, ROOT
from shim_drivers import CHROMIUM, fetch_shim, install_in_selenium, new_playwright_context, selenium_chromium

ARTIFACTS = ROOT / "artifacts" / "e2e"
# Beside the virtual environment (`make clean` removes it with the venv); else in the system's temporary directory.
SDIST_CACHE = Path(os.environ.get("CREDEMU_SDIST_CACHE") or (
    Path(sys.prefix) / "credemu-sdists" if sys.prefix != sys.base_prefix else Path(tempfile.gettempdir()) / "credemu-sdists"))
DRIVERS = ["selenium", "playwright"]


# ---- the RPs' sources, from PyPI ----

def sdist(distribution, pre=False):
    """The unpacked sdist of the installed version of `distribution`, downloaded once. Runs of the suite at the same
    time each download and unpack in a directory of their own; the first to rename its tree into place wins and the
    others use it."""
    version = importlib.metadata.version(distribution)
    unpacked = SDIST_CACHE / f"{distribution}-{version}"
    if unpacked.is_dir():
        return unpacked
    SDIST_CACHE.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{distribution}-{version}.", dir=SDIST_CACHE))
    try:
        # The build backends pip runs to read the sdist's metadata are pinned in requirements.txt: no build isolation.
        command = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                   "--no-binary", ":all:", "--no-build-isolation", *(["--pre"] if pre else []),
                   f"{distribution}=={version}", "-d", str(staging / "download")]
        subprocess.run(command, check=True, timeout=600)
        normalized = distribution.replace("-", "_")
        [archive] = [p for p in (staging / "download").iterdir()
                     if p.name.lower().startswith(f"{normalized}-{version}".lower()) and p.name.endswith(".tar.gz")]
        with tarfile.open(archive) as tar:
            tar.extractall(staging / "tree", filter="data")
        [top] = list((staging / "tree").iterdir())
        try:
            top.rename(unpacked)
        except OSError:
            if not unpacked.is_dir():  # not a concurrent run's tree already in place
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return unpacked
    downloads = SDIST_CACHE / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    # The build backends pip runs to read the sdist's metadata are pinned in requirements.txt: no build isolation.
    command = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
               "--no-binary", ":all:", "--no-build-isolation", *(["--pre"] if pre else []),
               f"{distribution}=={version}", "-d", str(downloads)]
    subprocess.run(command, check=True, timeout=600)
    normalized = distribution.replace("-", "_")
    [archive] = [p for p in downloads.iterdir() if p.name.lower().startswith(f"{normalized}-{version}".lower())
                 and p.name.endswith(".tar.gz")]
    staging = SDIST_CACHE / f".{distribution}-{version}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    with tarfile.open(archive) as tar:
        tar.extractall(staging, filter="data")
    [top] = list(staging.iterdir())
    top.rename(unpacked)
    staging.rmdir()
    return unpacked


@pytest.fixture(scope="session")
def fido2_example_dir():
    path = sdist("fido2") / "examples" / "server"
    assert (path / "server" / "server.py").is_file() and (path / "server" / "static" / "register.html").is_file()
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RP:
    """A third-party RP as a subprocess on http://localhost:PORT; its output goes to a log kept for failures."""

    def __init__(self, name, command, cwd, env, port, log_dir):
        self.name, self.port = name, port
        self.origin = f"http://localhost:{port}"
        self.log_path = Path(log_dir) / f"{name}.log"
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(command, cwd=cwd, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen(self.origin + "/", timeout=2):
                    break
            except urllib.error.HTTPError:
                break
            except OSError:
                if self.process.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"{name} did not start:\n{self.output()}")
                time.sleep(0.1)

    def output(self):
        self.log.flush()
        return self.log_path.read_text()[-6000:]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


@pytest.fixture
def fido2_example(fido2_example_dir, tmp_path):
    # Flask's own CLI runs the example's app object as it ships; only the port is ours (the script's main() fixes 5000).
    port = free_port()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    rp = RP("fido2-example", [sys.executable, "-m", "flask", "--app", "server.server", "run", "--host", "localhost",
                              "--port", str(port)], fido2_example_dir, env, port, tmp_path)
    yield rp
    rp.stop()


# ---- credemu ----

class Credemu:
    """`credemu serve` for one RP origin, with one profile made; `shim` is the page's, for that profile until
    `open_on_device` points it at a device."""

    def __init__(self, directory, origin, profile, pack, platform, **settings):
        directory.mkdir(parents=True, exist_ok=True)
        self.server = Server(BINARY, directory, "--allow-origin", origin)
        self.profile = profile
        try:
            self.add_profile(profile, pack, platform, **settings)
            self.shim = fetch_shim(self.server.url, profile)
        except BaseException:
            self.server.stop()  # no fixture holds it yet
            raise

    def expect(self, method, path, body=None, status=200):
        answered, payload = self.server.call(method, path, body)
        assert answered == status, (method, path, answered, payload)
        return payload

    def add_profile(self, name, pack, platform="chrome-desktop", **settings):
        """A profile: a provider account, or (pack security-key) a security key with `authenticator` options."""
        return self.expect("POST", "/profiles", {"name": name, "pack": pack, "platform": platform, **settings}, 201)

    def add_device(self, name, platform, providers, **settings):
        return self.expect("POST", "/devices", {"name": name, "platform": platform, "providers": providers, **settings}, 201)

    def open_on_device(self, name):
        """The page's ceremonies go to the device from now on (`/shim.js?device=NAME`)."""
        self.shim = fetch_shim(self.server.url, device=name)
        self.device = name

    def client(self):
        """A `credemu.Client` of this server for the shim's profile or device: what `credemu.install_shim` takes to
        install the shim over the driver's channel."""
        from credemu import Client
        return Client(self.server.url, profile=self.profile, device=getattr(self, "device", None))

    def queue(self, *decisions, profile=None, device=None):
        """The simulated user's next decisions: at `profile`'s prompts and sheet (default: the main profile's), or at
        `device`'s browser sheet (`use:NAME`, a cancel of a sheet offering only keys and phones)."""
        owner = f"/devices/{device}" if device else f"/profiles/{profile or self.profile}"
        return self.expect("POST", f"{owner}/user", {"decisions": list(decisions)})

    def passkeys(self, profile=None):
        return self.expect("GET", f"/profiles/{profile or self.profile}/passkeys")["passkeys"]

    def events(self, kind=None, profile=None):
        query = f"?kind={kind}" if kind else ""
        return self.expect("GET", f"/profiles/{profile or self.profile}/events{query}")["events"]

    def stop(self):
        self.server.stop()


@pytest.fixture
def serve_credemu(tmp_path):
    """Starts credemu for an RP: `serve_credemu(origin, profile, pack, platform, **settings)`; stopped after the test."""
    started = []

    def make(origin, profile, pack, platform="chrome-desktop", **settings):
        credemu = Credemu(tmp_path / f"credemu-{len(started)}", origin, profile, pack, platform, **settings)
        started.append(credemu)
        return credemu

    yield make
    for credemu in started:
        credemu.stop()


# ---- one interface over both drivers ----

class Browser:
    """What a journey does in a page, the same through Selenium and Playwright. Failures say what the page's
    console and the RP's log said, since that is where a shim problem shows."""

    def __init__(self, shots, rp):
        self.shots, self.rp, self.step = shots, rp, 0
        shutil.rmtree(shots, ignore_errors=True)
        shots.mkdir(parents=True)

    def wait_until(self, condition, what, timeout=20):
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            try:
                value = condition()
                if value:
                    return value
            except Exception as error:  # the page navigates under the test; retried until the deadline
                last = error
            self.pause(0.1)
        self.screenshot("timed-out")
        raise AssertionError(f"timed out waiting for {what} (last error: {last!r})\n" + self.diagnostics())

    def diagnostics(self):
        return ("page console:\n  " + "\n  ".join(self.console()) +
                f"\n{self.rp.name} log (tail):\n{self.rp.output()[-3000:]}")

    def wait_text(self, css, expected, timeout=20):
        """Waits until the element's text contains `expected`; returns the text."""
        return self.wait_until(lambda: expected in self.text(css) and self.text(css), f"{css!r} to show {expected!r}", timeout)


class SeleniumBrowser(Browser):
    name = "selenium"

    def __init__(self, shots, rp, shim, bypass_csp=True, client=None):
        super().__init__(shots, rp)
        self.driver = selenium_chromium(window=(1000, 800), console=True)
        self.logs = []
        if client is not None:   # the client's install, its defaults: the shim over the driver's channel, no CSP bypass
            from credemu import install_shim
            install_shim(self.driver, client)
        else:
            install_in_selenium(self.driver, shim, bypass_csp=bypass_csp)

    def pause(self, seconds):
        time.sleep(seconds)

    def goto(self, url):
        self.driver.get(url)

    def element(self, css):
        return self.wait_until(lambda: self.driver.find_element(By.CSS_SELECTOR, css), f"element {css!r}")

    def click(self, css):
        self.element(css).click()

    def fill(self, css, value):
        element = self.element(css)
        element.clear()
        element.send_keys(value)

    def text(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css).text

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (a promise's, once it settles)."""
        return self.driver.execute_async_script("const done = arguments[0]; Promise.resolve(" + expression + ").then(done, (e) => done(String(e)));")

    def next_dialog(self, timeout=20):
        """Accepts the next alert() and returns its message; an uncaught page error first is a failure."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                alert = WebDriverWait(self.driver, 0.5).until(expected_conditions.alert_is_present())
            except TimeoutException:
                if self.uncaught():
                    break
                continue
            message = alert.text
            alert.accept()
            return message
        self.screenshot("no-alert")
        raise AssertionError("no alert() came\n" + self.diagnostics())

    def uncaught(self):
        return [line for line in self.console() if "Uncaught" in line]

    def console(self):
        try:
            self.logs += [f"{entry['level']} {entry['message']}" for entry in self.driver.get_log("browser")]
        except Exception as error:  # an open alert, a closed window: keep what we have
            self.logs.append(f"(console unavailable: {error!r})")
        return self.logs

    def screenshot(self, name):
        self.step += 1
        try:
            self.driver.save_screenshot(str(self.shots / f"{self.step:02d}-{name}.png"))
        except Exception:
            pass

    def close(self):
        self.driver.quit()


class PlaywrightBrowser(Browser):
    name = "playwright"

    def __init__(self, shots, rp, shim, browser, bypass_csp=True, client=None):
        super().__init__(shots, rp)
        if client is not None:   # the client's install, its defaults: the shim over the driver's channel, no CSP bypass
            from credemu import install_shim
            self.context = install_shim(browser, client, viewport={"width": 1000, "height": 800})
        else:
            self.context = new_playwright_context(browser, shim, bypass_csp=bypass_csp, viewport={"width": 1000, "height": 800})
        self.page = self.context.new_page()
        self.logs, self.dialogs = [], []
        self.page.on("console", lambda m: self.logs.append(f"{m.type} {m.text} ({m.location.get('url', '')})"))
        self.page.on("pageerror", lambda e: self.logs.append(f"pageerror {e}"))
        self.page.on("dialog", self.on_dialog)

    def on_dialog(self, dialog):
        self.dialogs.append(dialog.message)
        dialog.accept()

    def pause(self, seconds):
        self.page.wait_for_timeout(seconds * 1000)  # lets Playwright deliver events meanwhile

    def goto(self, url):
        self.page.goto(url)

    def click(self, css):
        self.page.locator(css).first.click()

    def fill(self, css, value):
        self.page.locator(css).first.fill(value)

    def text(self, css):
        return self.page.locator(css).first.inner_text(timeout=1000)

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (a promise's, once it settles)."""
        return self.page.evaluate(expression)

    def next_dialog(self, timeout=20):
        """The message of the next alert() (on_dialog accepted it); an uncaught page error first is a failure."""
        seen = self.consumed = getattr(self, "consumed", 0)
        self.wait_until(lambda: len(self.dialogs) > seen or self.uncaught(), "an alert()", timeout)
        if len(self.dialogs) == seen:
            self.screenshot("no-alert")
            raise AssertionError("no alert() came\n" + self.diagnostics())
        self.consumed += 1
        return self.dialogs[seen]

    def uncaught(self):
        return [line for line in self.logs if line.startswith("pageerror")]

    def console(self):
        return self.logs

    def screenshot(self, name):
        # A screenshot taken while the page navigates can fail ("Unable to capture screenshot"): retry; a
        # screenshot never fails the test.
        self.step += 1
        for _ in range(3):
            try:
                self.page.wait_for_load_state()
                self.page.screenshot(path=str(self.shots / f"{self.step:02d}-{name}.png"))
                return
            except Exception:
                self.page.wait_for_timeout(200)

    def close(self):
        self.context.close()


_PLAYWRIGHT = []


def playwright_manager():
    """The test process's one sync Playwright, started on first use and stopped when the session ends: a second
    `sync_playwright()` while one runs is Playwright's "Sync API inside the asyncio loop" error."""
    if not _PLAYWRIGHT:
        from playwright.sync_api import sync_playwright
        _PLAYWRIGHT.append(sync_playwright().start())
    return _PLAYWRIGHT[0]


def pytest_sessionfinish(session):
    while _PLAYWRIGHT:
        _PLAYWRIGHT.pop().stop()


@pytest.fixture(scope="session")
def playwright_browser():
    # Debian's Chromium, never `playwright install`: CI reaches PyPI and Debian only.
    browser = playwright_manager().chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"])
    yield browser
    browser.close()


@pytest.fixture
def open_browser(request):
    opened = []

    def make(driver, journey, rp, shim, bypass_csp=True, client=None):
        """`shim` installed as docs/shim.md's lines do (fetch, CSP bypassed unless `bypass_csp=False`), or, given a
        `client`, by `credemu.install_shim` over the driver's channel with no bypass."""
        shots = ARTIFACTS / f"{journey}-{driver}" if client is None else ARTIFACTS / f"{journey}-{driver}-channel"
        if driver == "selenium":
            browser = SeleniumBrowser(shots, rp, shim, bypass_csp=bypass_csp, client=client)
        else:
            browser = PlaywrightBrowser(shots, rp, shim, request.getfixturevalue("playwright_browser"), bypass_csp=bypass_csp, client=client)
        opened.append(browser)
        return browser

    yield make
    for browser in opened:
        browser.close()
