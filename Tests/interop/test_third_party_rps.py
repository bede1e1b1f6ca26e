"""End to end with two relying parties written by others, taken from PyPI at test time and run unmodified, in
headless Chromium (Debian's) through Selenium and through Playwright for Python, with credemu's shim installed
the documented way (shim_drivers.py).

- python-fido2's example server (`examples/server/` of the fido2 sdist, a Flask app, RP ID "localhost", pages
  using the @github/webauthn-json ponyfill): register, then authenticate, through its own pages and buttons.
- django-otp-webauthn's sandbox (`sandbox/` of its sdist; pages bundling @simplewebauthn/browser, sent with
  `Content-Security-Policy: default-src 'self'`): migrate, create a user, sign in with the password, register
  a passkey through its UI, sign out, sign in with the passkey.

The sdists are the versions installed from Tests/interop/requirements.txt, downloaded once into a cache beside
the interpreter (`.venv/credemu-sdists/`). Each test starts its own RP on a free port and its own credemu.
Screenshots of every step go to artifacts/e2e/<rp>-<driver>/.
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
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from api_client import Server
from conftest import BINARY, ROOT
from shim_drivers import fetch_shim, install_in_selenium, new_playwright_context

ARTIFACTS = ROOT / "artifacts" / "e2e"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
# Beside the virtual environment (`make clean` removes it with the venv); else in the system's temporary directory.
SDIST_CACHE = Path(os.environ.get("CREDEMU_SDIST_CACHE") or (
    Path(sys.prefix) / "credemu-sdists" if sys.prefix != sys.base_prefix else Path(tempfile.gettempdir()) / "credemu-sdists"))
DRIVERS = ["selenium", "playwright"]
GPM_AAGUID = "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4"
BITWARDEN_AAGUID = "d548826e-79b4-db40-a3d8-11116f7e8349"
USER, PASSWORD = "alice", "correct horse battery staple"


# ---- the RPs' sources, from PyPI ----

def sdist(distribution, pre=False):
    """The unpacked sdist of the installed version of `distribution`, downloaded once."""
    version = importlib.metadata.version(distribution)
    unpacked = SDIST_CACHE / f"{distribution}-{version}"
    if unpacked.is_dir():
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


# The sandbox's settings name one http origin, http://localhost:8000 (what `manage.py runserver` serves). To run on
# a free port we set OTP_WEBAUTHN_ALLOWED_ORIGINS, the setting the package's README (step 5) tells every deployment
# to set, to the origin we serve; everything else, CSP included, is the sandbox's as shipped.
SANDBOX_SETTINGS = '''\
import os
from sandbox.settings import *  # noqa: F403
OTP_WEBAUTHN_ALLOWED_ORIGINS = [os.environ["CREDEMU_RP_ORIGIN"]]
'''


@pytest.fixture(scope="session")
def django_sandbox_setup(tmp_path_factory):
    """The sandbox's sdist, its settings for our origin, and a database migrated with one user, to copy per test."""
    source = sdist("django-otp-webauthn", pre=True)
    assert (source / "sandbox" / "settings.py").is_file()
    work = tmp_path_factory.mktemp("django-sandbox")
    (work / "credemu_sandbox_settings.py").write_text(SANDBOX_SETTINGS)
    database = work / "template.sqlite3"

    def env(db, origin="http://localhost:8000"):
        return dict(os.environ, PYTHONPATH=os.pathsep.join([str(source), str(work)]), PYTHONDONTWRITEBYTECODE="1",
                    DJANGO_SETTINGS_MODULE="credemu_sandbox_settings", DATABASE_URL=f"sqlite:///{db}",
                    CREDEMU_RP_ORIGIN=origin, DJANGO_SUPERUSER_PASSWORD=PASSWORD)

    # DEVELOPMENT.md: migrate, createsuperuser, runserver (`python -m django` is manage.py without the file).
    django = [sys.executable, "-m", "django"]
    subprocess.run([*django, "migrate", "-v", "0"], cwd=source, env=env(database), check=True, timeout=120)
    subprocess.run([*django, "createsuperuser", "--noinput", "--username", USER, "--email", "alice@example.com"],
                   cwd=source, env=env(database), check=True, timeout=60, capture_output=True)
    return source, database, env


@pytest.fixture
def django_sandbox(django_sandbox_setup, tmp_path):
    source, template, env = django_sandbox_setup
    database = tmp_path / "db.sqlite3"
    shutil.copy(template, database)
    port = free_port()
    # Its sessions are files in the temporary directory (SESSION_ENGINE "file"): this test's, through TMPDIR.
    rp = RP("django-sandbox", [sys.executable, "-m", "django", "runserver", "--noreload", f"127.0.0.1:{port}"],
            source, dict(env(database, f"http://localhost:{port}"), TMPDIR=str(tmp_path)), port, tmp_path)
    yield rp
    rp.stop()


# ---- credemu ----

class Credemu:
    def __init__(self, directory, origin, profile, pack, platform):
        directory.mkdir(parents=True, exist_ok=True)
        self.server = Server(BINARY, directory, "--allow-origin", origin)
        self.profile = profile
        status, body = self.server.call("POST", "/profiles", {"name": profile, "pack": pack, "platform": platform})
        assert status == 201, body
        self.shim = fetch_shim(self.server.url, profile)

    def passkeys(self):
        return self.server.call("GET", f"/profiles/{self.profile}/passkeys")[1]["passkeys"]

    def events(self, kind=None):
        query = f"?kind={kind}" if kind else ""
        return self.server.call("GET", f"/profiles/{self.profile}/events{query}")[1]["events"]


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

    def __init__(self, shots, rp, shim, bypass_csp=True):
        super().__init__(shots, rp)
        options = Options()
        options.binary_location = CHROMIUM
        for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1000,800", "--disable-gpu"]:
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.logs = []
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

    def __init__(self, shots, rp, shim, browser, bypass_csp=True):
        super().__init__(shots, rp)
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


@pytest.fixture(scope="session")
def playwright_browser():
    from playwright.sync_api import sync_playwright
    # Debian's Chromium, never `playwright install`: CI reaches PyPI and Debian only.
    manager = sync_playwright().start()
    browser = manager.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"])
    yield browser
    browser.close()
    manager.stop()


@pytest.fixture
def open_browser(request):
    opened = []

    def make(driver, journey, rp, shim, bypass_csp=True):
        shots = ARTIFACTS / f"{journey}-{driver}"
        if driver == "selenium":
            browser = SeleniumBrowser(shots, rp, shim, bypass_csp=bypass_csp)
        else:
            browser = PlaywrightBrowser(shots, rp, shim, request.getfixturevalue("playwright_browser"), bypass_csp=bypass_csp)
        opened.append(browser)
        return browser

    yield make
    for browser in opened:
        browser.close()


# ---- python-fido2's example server ----

@pytest.mark.parametrize("driver", DRIVERS)
def test_python_fido2_example_registers_then_authenticates(driver, fido2_example, open_browser, tmp_path):
    # The example asks authenticatorAttachment "cross-platform" (and userVerification "discouraged"). Chrome does not
    # offer GPM, a platform authenticator, for that (the gpm pack's authenticator.otherAttachment: notOffered; see
    # test_python_fido2_examples_cross_platform_request_is_not_offered_to_gpm), so this is the user whose Bitwarden
    # extension answers every create: ES256, `none` attestation, UP=1 in a modal create (Fido2Server.register_complete
    # rejects UP=0, so never a conditional create here).
    credemu = Credemu(tmp_path / "credemu", fido2_example.origin, "bitwarden", "bitwarden", "chrome-desktop")
    b = open_browser(driver, "fido2-example", fido2_example, credemu.shim)

    b.goto(fido2_example.origin + "/")
    b.wait_text("h1", "WebAuthn demo using python-fido2")
    b.screenshot("index")
    b.click("a[href='/register.html']")
    b.wait_text("h2", "Register a credential")
    b.screenshot("register-page")
    b.click("#initial button")
    message = b.next_dialog()
    assert message == "Registration successful More details in server log...", message + "\n" + b.diagnostics()
    b.wait_text("h2", "Available actions")  # the page went back to the index
    b.screenshot("registered")

    [passkey] = credemu.passkeys()
    assert passkey["rpId"] == "localhost" and passkey["userName"] == "a_user" and passkey["displayName"] == "A. User"
    assert passkey["userHandle"] == "dXNlcl9pZA" and passkey["algorithm"] == "ES256"  # b"user_id"
    assert passkey["aaguid"] == BITWARDEN_AAGUID
    [created] = credemu.events("create")
    assert created["outcome"] == "success" and created["detail"]["mediation"] == "modal"
    assert created["detail"]["origin"] == fido2_example.origin
    assert "REGISTERED CREDENTIAL" in fido2_example.output()

    b.click("a[href='/authenticate.html']")
    b.wait_text("h2", "Authenticate using a credential")
    b.screenshot("authenticate-page")
    b.click("#initial button")
    message = b.next_dialog()
    assert message == "Authentication successful More details in server log...", message + "\n" + b.diagnostics()
    b.wait_text("h2", "Available actions")
    b.screenshot("authenticated")

    [got] = credemu.events("get")
    assert got["outcome"] == "success" and got["detail"]["credentialId"] == passkey["credentialId"]
    assert got["detail"]["allowCredentials"] == 1  # the example lists its one credential
    assert credemu.passkeys()[0]["lastUsed"] is not None
    assert "ASSERTION OK" in fido2_example.output()


@pytest.mark.parametrize("driver", DRIVERS)
def test_python_fido2_examples_cross_platform_request_is_not_offered_to_gpm(driver, fido2_example, open_browser, tmp_path):
    # GPM is a platform authenticator: for the example's cross-platform create the user sees only Chrome's sheet of
    # security keys and phones, cancels it, and the page's create() rejects with NotAllowedError; nothing is stored.
    # (Left alone, the sheet would settle at the request's timeout: test_security_keys.py.)
    credemu = Credemu(tmp_path / "credemu", fido2_example.origin, "gpm", "gpm", "chrome-desktop")
    assert credemu.server.call("POST", "/profiles/gpm/user", {"decisions": ["cancel"]})[0] == 200
    b = open_browser(driver, "fido2-example-gpm", fido2_example, credemu.shim)
    b.goto(fido2_example.origin + "/register.html")
    b.wait_text("h2", "Register a credential")
    b.click("#initial button")
    b.wait_until(lambda: credemu.events("create"), "credemu's create event")
    [refused] = credemu.events("create")
    assert refused["outcome"] == "error" and refused["reason"] == "userCancelled", refused
    assert refused["detail"]["error"] == "NotAllowedError"
    refusal = "The operation either timed out or was not allowed"  # Selenium: "Uncaught DOMException: ...", Playwright: "pageerror ..."
    b.wait_until(lambda: any(refusal in line for line in b.console()), "the page's unhandled NotAllowedError")
    b.screenshot("not-offered")
    assert credemu.passkeys() == []
    assert not [line for line in b.console() if credemu.server.url in line], "no failed fetch of credemu's shows in the console"


# ---- django-otp-webauthn's sandbox ----

def sign_in_with_password(b, origin):
    b.goto(origin + "/auth/login/")
    b.wait_text("h1", "Login")
    b.fill("input[name='username']", USER)
    b.fill("input[name='password']", PASSWORD)
    b.screenshot("password-typed")
    b.click("form button[type='submit']")
    return b.wait_text("body", f"Hi {USER}!")


@pytest.mark.parametrize("driver", DRIVERS)
def test_django_otp_webauthn_sandbox_password_then_passkey(driver, django_sandbox, open_browser, tmp_path):
    # GPM on Chrome desktop again: the sandbox asks residentKey "required" and attestation "indirect"; GPM answers
    # a discoverable ES256 passkey with `none` attestation, which py_webauthn (under django-otp-webauthn) accepts.
    origin = django_sandbox.origin
    credemu = Credemu(tmp_path / "credemu", origin, "gpm", "gpm", "chrome-desktop")
    b = open_browser(driver, "django-sandbox", django_sandbox, credemu.shim)

    page = sign_in_with_password(b, origin)
    assert "No registered Passkeys." in page
    b.screenshot("signed-in-with-password")
    b.click("#passkey-register-button")
    b.wait_text("#passkey-register-status-message", "Registration successful!")
    b.screenshot("passkey-registered")

    [passkey] = credemu.passkeys()
    assert passkey["rpId"] == "localhost" and passkey["userName"] == USER and passkey["discoverable"] is True
    [created] = credemu.events("create")
    assert created["outcome"] == "success" and created["detail"]["mediation"] == "modal"

    b.goto(origin + "/")  # the sandbox lists the passkey the RP stored, with the AAGUID it saw
    page = b.wait_text("table", GPM_AAGUID)
    b.screenshot("passkey-listed")
    # Its pages send the WebAuthn signals: all accepted credentials (this one) and the user's current details.
    b.wait_until(lambda: {e["detail"]["signal"] for e in credemu.events("signal")} >= {"accepted", "details"},
                 "the sandbox's signals to reach credemu")
    assert all(e["outcome"] == "noop" for e in credemu.events("signal")), credemu.events("signal")
    assert credemu.passkeys()[0]["hidden"] is False

    b.click("form[action='/auth/logout/'] button[type='submit']")
    b.wait_text("body", "Login")
    b.screenshot("signed-out")

    b.goto(origin + "/auth/login/")
    b.wait_text("#passkey-verification-button", "Login using a Passkey")
    # The page started a conditional get for the username field's autofill; credemu's dropdown offers the passkey.
    b.wait_until(lambda: any(e["detail"].get("credentialIds") == [passkey["credentialId"]] for e in credemu.events("offer")),
                 "the autofill dropdown to offer the passkey")
    b.screenshot("login-page-with-passkey-offered")
    b.click("#passkey-verification-button")
    page = b.wait_text("body", f"Hi {USER}!")
    assert "verified" in b.text(".verified")
    b.screenshot("signed-in-with-passkey")

    gets = credemu.events("get")
    assert [e["outcome"] for e in gets if e["detail"].get("mediation") == "modal"] == ["success"], gets
    [used] = [e for e in gets if e["outcome"] == "success"]
    assert used["detail"]["credentialId"] == passkey["credentialId"] and used["detail"]["userName"] == USER
    # @simplewebauthn/browser aborted its conditional request to start the modal one; credemu ended it unused.
    assert "aborted" in [e["outcome"] for e in gets]
    assert credemu.passkeys()[0]["lastUsed"] is not None


@pytest.mark.parametrize("driver", DRIVERS)
def test_django_sandbox_csp_blocks_the_shim_unless_the_driver_bypasses_it(driver, django_sandbox, open_browser, tmp_path):
    """The page's CSP is honoured: without the driver's bypass, the shim's fetch to credemu is blocked by
    `default-src 'self'` exactly as any other script's would be, and nothing reaches credemu."""
    origin = django_sandbox.origin
    with urllib.request.urlopen(origin + "/auth/login/") as response:
        policy = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy, policy
    credemu = Credemu(tmp_path / "credemu", origin, "gpm", "gpm", "chrome-desktop")
    b = open_browser(driver, "django-sandbox-csp", django_sandbox, credemu.shim, bypass_csp=False)

    sign_in_with_password(b, origin)
    b.click("#passkey-register-button")
    status = b.wait_text("#passkey-register-status-message", "Registration failed.")
    b.screenshot("registration-blocked-by-csp")
    assert status == "Registration failed. An unknown error occurred.", status
    blocked = f"Connecting to '{credemu.server.url}/profiles/gpm/credentials/create' violates the following " \
              f"Content Security Policy directive: \"default-src 'self'\""
    b.wait_until(lambda: any(blocked in line for line in b.console()), "Chromium's CSP report for the shim's fetch")
    # The shim's set-up failure, as the README documents it, reached the page's own error handling.
    refused = "NotReadableError: An unknown error occurred while talking to the credential manager."
    assert any(refused in line for line in b.console()), b.diagnostics()
    # And credemu's one console line names the fix for this, not a server that is not running.
    fix = "blocks the shim's requests to " + credemu.server.url
    assert any(fix in line and "bypass_csp=True" in line for line in b.console()), b.diagnostics()
    assert credemu.passkeys() == []
    assert credemu.events("create") == []
