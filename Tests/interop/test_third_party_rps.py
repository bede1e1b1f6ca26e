"""End to end with two relying parties written by others, taken from PyPI at test time and run unmodified, in
headless Chromium (Debian's) through Selenium and through Playwright for Python, with credemu's shim installed
the documented way (shim_drivers.py).

- python-fido2's example server (`examples/server/` of the fido2 sdist, a Flask app, RP ID "localhost", pages
  using the @github/webauthn-json ponyfill): register, then authenticate, through its own pages and buttons.
- django-otp-webauthn's sandbox (`sandbox/` of its sdist; pages bundling @simplewebauthn/browser, sent with
  `Content-Security-Policy: default-src 'self'`): migrate, create a user, sign in with the password, register
  a passkey through its UI, sign out, sign in with the passkey.

Each test starts its own RP on a free port and its own credemu (the helpers, fixtures included, are rp_journeys.py's).
"""
import os
import shutil
import subprocess
import sys
import urllib.request

import pytest

from rp_journeys import DRIVERS, RP, free_port, sdist

GPM_AAGUID = "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4"
BITWARDEN_AAGUID = "d548826e-79b4-db40-a3d8-11116f7e8349"
USER, PASSWORD = "alice", "correct horse battery staple"


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



# ---- python-fido2's example server ----

@pytest.mark.parametrize("driver", DRIVERS)
def test_python_fido2_example_registers_then_authenticates(driver, fido2_example, open_browser, serve_credemu):
    # The example asks authenticatorAttachment "cross-platform" (and userVerification "discouraged"). Chrome does not
    # offer GPM, a platform authenticator, for that (the gpm pack's authenticator.otherAttachment: notOffered; see
    # test_python_fido2_examples_cross_platform_request_is_not_offered_to_gpm), so this is the user whose Bitwarden
    # extension answers every create: ES256, `none` attestation, UP=1 in a modal create (Fido2Server.register_complete
    # rejects UP=0, so never a conditional create here).
    credemu = serve_credemu(fido2_example.origin, "bitwarden", "bitwarden", "chrome-desktop")
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
def test_python_fido2_examples_cross_platform_request_is_not_offered_to_gpm(driver, fido2_example, open_browser, serve_credemu):
    # GPM is a platform authenticator: for the example's cross-platform create the user sees only Chrome's sheet of
    # security keys and phones, cancels it, and the page's create() rejects with NotAllowedError; nothing is stored.
    # (Left alone, the sheet would settle at the request's timeout: test_security_keys.py.)
    credemu = serve_credemu(fido2_example.origin, "gpm", "gpm", "chrome-desktop")
    credemu.queue("cancel")
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


@pytest.mark.parametrize("transport", ["fetch-bypassing-csp", "channel"])
@pytest.mark.parametrize("driver", DRIVERS)
def test_django_otp_webauthn_sandbox_password_then_passkey(driver, transport, django_sandbox, open_browser, serve_credemu):
    # GPM on Chrome desktop again: the sandbox asks residentKey "required" and attestation "indirect"; GPM answers
    # a discoverable ES256 passkey with `none` attestation, which py_webauthn (under django-otp-webauthn) accepts.
    # Through the driver's channel (credemu.install_shim) the sandbox's `default-src 'self'` stays in force.
    origin = django_sandbox.origin
    credemu = serve_credemu(origin, "gpm", "gpm", "chrome-desktop")
    b = open_browser(driver, "django-sandbox", django_sandbox, credemu.shim,
                     client=credemu.client() if transport == "channel" else None)

    page = sign_in_with_password(b, origin)
    assert "No registered Passkeys." in page
    b.screenshot("signed-in-with-password")
    b.click("#passkey-register-button")
    b.wait_text("#passkey-register-status-message", "Registration successful!")
    b.screenshot("passkey-registered")
    # The sandbox's own policy: in force through the channel (its fetch to another origin refused), switched off
    # by the bypass.
    own_fetch = b.evaluate(f"fetch({credemu.server.url!r} + '/health').then(() => 'fetched', (e) => e.name)")
    assert own_fetch == ("TypeError" if transport == "channel" else "fetched"), own_fetch

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
def test_django_sandbox_csp_blocks_the_shim_unless_the_driver_bypasses_it(driver, django_sandbox, open_browser, serve_credemu):
    """The page's CSP is honoured: without the driver's bypass, the shim's fetch to credemu is blocked by
    `default-src 'self'` exactly as any other script's would be, and nothing reaches credemu."""
    origin = django_sandbox.origin
    with urllib.request.urlopen(origin + "/auth/login/") as response:
        policy = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy, policy
    credemu = serve_credemu(origin, "gpm", "gpm", "chrome-desktop")
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
