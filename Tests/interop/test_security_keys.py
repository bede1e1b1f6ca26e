"""End to end: third-party RPs register and sign in with a security key and with a phone over hybrid, in headless
Chromium through the shim, the RPs unmodified (rp_journeys.py's helpers).

- python-fido2's example server asks for a cross-platform authenticator: with a security key plugged into the
  GPM profile, Chrome's sheet sends the create to the key (the only thing it offers); with a phone linked to the
  desktop device, the user picks the phone (`use:PHONE` on the device's queue) and the phone's own GPM answers.
- Flask-Security-Too with `SECURITY_WEBAUTHN = True` (flask_security_app.py, its quickstart): sign in with the
  password, register a key "as a first authentication factor" on its /wan-register page (cross-platform, UV
  preferred, residentKey preferred), sign out, sign in on /wan-signin.

What the RP stored is checked from its own side: python-fido2's example prints the registration it received and
the credential it kept; Flask-Security-Too's database row and its page's listing.
"""
import ast
import base64
import os
import sqlite3
import sys
from pathlib import Path

import pytest
from webauthn.helpers import parse_attestation_object

from conftest import html_site
from rp_journeys import DRIVERS, RP, free_port

GPM_AAGUID = "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4"
# The security-key pack's: FIDO MDS3's "YubiKey 5 Series with NFC" (providers/security-key.json).
YUBIKEY_5_NFC = "2fc0579f-8113-47ea-b116-bb5a8db9202a"
FS_USER, FS_PASSWORD = "alice@example.com", "correct horse battery staple"
HERE = Path(__file__).resolve().parent


def b64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def with_key(credemu, hardware=None, on="profile"):
    """A security key (by default YubiKey-like: CTAP 2.1, a PIN set, USB) plugged into the main profile's browser, or
    into a Chrome desktop device whose manager is the main profile (the page then runs on the device)."""
    credemu.add_profile("key1", "security-key", **({"authenticator": hardware} if hardware else {}))
    if on == "device":
        credemu.add_device("laptop", "chrome-desktop", [credemu.profile], authenticators=["key1"])
        credemu.open_on_device("laptop")
    else:
        credemu.expect("PATCH", f"/profiles/{credemu.profile}", {"authenticators": ["key1"]})
    return "key1"


def with_phone(credemu):
    """An Android phone with its own GPM account, linked to a Chrome desktop device whose manager is the main
    profile; the page runs on the desktop."""
    credemu.add_profile("pixel-gpm", "gpm", "chrome-android")
    credemu.add_device("pixel", "chrome-android", ["pixel-gpm"])
    credemu.add_device("laptop", "chrome-desktop", [credemu.profile], phones=["pixel"])
    credemu.open_on_device("laptop")
    return "pixel-gpm"


def check_from_a_key(credential, response, aaguid=YUBIKEY_5_NFC):
    """A registration the key made, as the RP received it (`response`) and credemu keeps it (`credential`)."""
    auth_data = parse_attestation_object(b64(response["response"]["attestationObject"])).auth_data
    assert credential["aaguid"] == aaguid and credential["backupEligible"] is False
    assert auth_data.attested_credential_data.aaguid.hex() == aaguid.replace("-", "")
    assert auth_data.flags.be is False and auth_data.flags.bs is False
    assert response["authenticatorAttachment"] == "cross-platform"
    assert response["response"]["transports"] == ["nfc", "usb"]


def check_from_a_phone(credential, response):
    """A registration the phone's GPM made over hybrid."""
    auth_data = parse_attestation_object(b64(response["response"]["attestationObject"])).auth_data
    assert credential["aaguid"] == GPM_AAGUID
    assert auth_data.attested_credential_data.aaguid.hex() == GPM_AAGUID.replace("-", "")
    assert auth_data.flags.be is True and auth_data.flags.bs is True  # a GPM passkey, synced
    assert response["authenticatorAttachment"] == "cross-platform"
    assert "hybrid" in response["response"]["transports"], response["response"]["transports"]


def hybrid_events(credemu, operation):
    return [e for e in credemu.events("hybrid") if e["detail"]["operation"] == operation]


# ---- python-fido2's example server ----

def received_registration(rp):
    """The RegistrationResponse python-fido2's example printed when it received it (a dict's repr)."""
    [line] = [line for line in rp.output().splitlines() if line.startswith("RegistrationResponse: ")]
    return ast.literal_eval(line.removeprefix("RegistrationResponse: "))


def fido2_register_then_authenticate(b, rp, before_each=lambda: None):
    """The example's two pages, each through its own button; `before_each` runs before each click."""
    for page, heading, done in [("/register.html", "Register a credential", "Registration"),
                                ("/authenticate.html", "Authenticate using a credential", "Authentication")]:
        b.goto(rp.origin + page)
        b.wait_text("h2", heading)
        before_each()
        b.click("#initial button")
        message = b.next_dialog()
        assert message == f"{done} successful More details in server log...", message + "\n" + b.diagnostics()
        b.wait_text("h2", "Available actions")
        b.screenshot(done.lower())
    assert "ASSERTION OK" in rp.output()


U2F_AAGUID = "00000000-0000-0000-0000-000000000000"  # a U2F-only key has none
KEY_SETUPS = {  # the key's hardware, where it is plugged in, the AAGUID its credentials carry
    "ctap2_1 key in the profile": (None, "profile", YUBIKEY_5_NFC),
    "ctap2_1 key in a device": (None, "device", YUBIKEY_5_NFC),
    "u2f key in the profile": ({"protocol": "ctap1/u2f"}, "profile", U2F_AAGUID),
}


@pytest.mark.parametrize("setup", list(KEY_SETUPS))
@pytest.mark.parametrize("driver", DRIVERS)
def test_python_fido2_example_registers_and_authenticates_with_a_security_key(driver, setup, fido2_example, open_browser, serve_credemu):
    # Nothing queued: the example's cross-platform create is not offered to GPM, so the user touches the one key;
    # its sign-in lists the credential (allowCredentials), which GPM does not hold and the key does, U2F or not.
    hardware, on, aaguid = KEY_SETUPS[setup]
    credemu = serve_credemu(fido2_example.origin, "gpm", "gpm", "chrome-desktop")
    key = with_key(credemu, hardware, on)
    b = open_browser(driver, "fido2-example-" + setup.replace(" ", "-"), fido2_example, credemu.shim)
    fido2_register_then_authenticate(b, fido2_example)

    assert credemu.passkeys() == []
    [credential] = credemu.passkeys(key)
    assert credential["rpId"] == "localhost" and credential["userName"] == "a_user"
    assert credential["discoverable"] is False  # the example asks residentKey "discouraged"
    received = received_registration(fido2_example)
    assert received["id"] == credential["credentialId"]
    check_from_a_key(credential, received, aaguid)
    kept = fido2_example.output().split("REGISTERED CREDENTIAL: ")[1].splitlines()[0]
    assert aaguid.replace("-", "") in kept.replace("-", "").lower(), kept  # the AAGUID the example stored
    [created] = credemu.events("create", profile=key)
    assert created["outcome"] == "success" and created["detail"].get("device") == ("laptop" if on == "device" else None)
    [got] = credemu.events("get", profile=key)
    assert got["outcome"] == "success" and got["detail"]["credentialId"] == credential["credentialId"]
    assert credemu.passkeys(key)[0]["signCount"] == 1


@pytest.mark.parametrize("driver", DRIVERS)
def test_python_fido2_example_registers_and_authenticates_with_a_phone_over_hybrid(driver, fido2_example, open_browser, serve_credemu):
    credemu = serve_credemu(fido2_example.origin, "gpm", "gpm", "chrome-desktop")
    phone_account = with_phone(credemu)
    b = open_browser(driver, "fido2-example-phone", fido2_example, credemu.shim)
    # At each of Chrome's sheets the user picks the linked phone.
    fido2_register_then_authenticate(b, fido2_example, before_each=lambda: credemu.queue("use:pixel", device="laptop"))

    assert credemu.passkeys() == []  # the desktop's GPM was not involved
    [credential] = credemu.passkeys(phone_account)
    received = received_registration(fido2_example)
    assert received["id"] == credential["credentialId"]
    check_from_a_phone(credential, received)
    for operation in ("create", "get"):
        [hybrid] = hybrid_events(credemu, operation)
        assert hybrid["detail"]["phone"] == "pixel" and hybrid["detail"]["reachedBy"] == "linked phone", hybrid
    [got] = credemu.events("get", profile=phone_account)
    assert got["outcome"] == "success" and got["detail"]["credentialId"] == credential["credentialId"]


# ---- Flask-Security-Too ----

@pytest.fixture
def flask_security(tmp_path):
    port = free_port()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", FLASK_SECURITY_DB=str(tmp_path / "fs.sqlite3"),
               FS_USER=FS_USER, FS_PASSWORD=FS_PASSWORD)
    rp = RP("flask-security", [sys.executable, "-m", "flask", "--app", "flask_security_app", "run", "--host", "localhost",
                               "--port", str(port)], HERE, env, port, tmp_path)
    rp.database = tmp_path / "fs.sqlite3"
    yield rp
    rp.stop()


def stored_webauthn(rp):
    """Flask-Security-Too's rows of registered keys (its fsqla_v3 WebAuthn model)."""
    with sqlite3.connect(rp.database) as db:
        db.row_factory = sqlite3.Row
        [table] = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%authn%'")]
        return [dict(r) for r in db.execute(f"SELECT * FROM {table}")]


def flask_security_journey(b, rp, before_each=lambda: None, identity=None):
    """Password sign-in, a key registered as a first factor, sign out, sign in with the key (typing `identity` on
    /wan-signin when given: the RP then lists the user's credentials); returns the listing of the registered key
    on /wan-register."""
    b.goto(rp.origin + "/login")
    b.fill("input#email", FS_USER)
    b.fill("input#password", FS_PASSWORD)
    b.click("input#submit")
    b.wait_text("#hello", f"Hello {FS_USER}")
    b.goto(rp.origin + "/wan-register")
    b.wait_text("h1", "Setup New WebAuthn Security Key")
    b.fill("input#name", "my-key")
    b.click("input[name='usage'][value='first']")
    before_each()
    b.screenshot("register-form")
    b.click("input#wan_register")
    listing = b.wait_text("body", "Currently registered security keys:")
    b.screenshot("registered")
    b.goto(rp.origin + "/logout")
    b.goto(rp.origin + "/wan-signin")
    b.wait_text("h1", "Sign In Using WebAuthn Security Key")
    if identity:
        b.fill("input#identity", identity)
    before_each()
    b.click("input#wan_signin")
    b.wait_text("#hello", f"Hello {FS_USER}")
    b.screenshot("signed-in-with-key")
    return listing


@pytest.mark.parametrize("hardware", ["ctap2_1", "ctap1/u2f"])
@pytest.mark.parametrize("driver", DRIVERS)
def test_flask_security_registers_a_security_key_as_first_factor_and_signs_in_with_it(driver, hardware, flask_security, open_browser, serve_credemu):
    # A CTAP 2.1 key stores a discoverable credential (residentKey preferred): /wan-signin with no identity finds it.
    # A U2F-only key cannot: the user types the identity and the RP lists the credential.
    u2f = hardware == "ctap1/u2f"
    credemu = serve_credemu(flask_security.origin, "gpm", "gpm", "chrome-desktop")
    key = with_key(credemu, {"protocol": hardware})
    b = open_browser(driver, "flask-security-" + hardware.replace("/", "-"), flask_security, credemu.shim)
    listing = flask_security_journey(b, flask_security, identity=FS_USER if u2f else None)

    assert credemu.passkeys() == []
    [credential] = credemu.passkeys(key)
    assert credential["discoverable"] is not u2f
    assert f'Usage: "first" Transports: "nfc, usb" Discoverable: "{not u2f}" Device Type: "single_device" Backed up? "False"' in listing, listing
    [row] = stored_webauthn(flask_security)
    assert base64.urlsafe_b64encode(row["credential_id"]).rstrip(b"=").decode() == credential["credentialId"]
    assert row["usage"] == "first" and row["device_type"] == "single_device" and row["backup_state"] == 0
    assert row["sign_count"] == 1 == credemu.passkeys(key)[0]["signCount"]
    [created] = credemu.events("create", profile=key)
    assert created["outcome"] == "success"
    # GPM holds nothing for the RP; the key answers the get.
    [got] = credemu.events("get", profile=key)
    assert got["outcome"] == "success" and got["detail"]["allowCredentials"] == (1 if u2f else 0)


@pytest.mark.parametrize("driver", DRIVERS)
def test_flask_security_registers_a_phone_as_first_factor_and_signs_in_with_it(driver, flask_security, open_browser, serve_credemu):
    credemu = serve_credemu(flask_security.origin, "gpm", "gpm", "chrome-desktop")
    phone_account = with_phone(credemu)
    b = open_browser(driver, "flask-security-phone", flask_security, credemu.shim)
    listing = flask_security_journey(b, flask_security, before_each=lambda: credemu.queue("use:pixel", device="laptop"))

    assert credemu.passkeys() == []
    [credential] = credemu.passkeys(phone_account)
    assert 'Usage: "first"' in listing and 'Device Type: "multi_device" Backed up? "True"' in listing, listing
    assert "hybrid" in listing.split("Transports: ")[1].split('"')[1], listing
    [row] = stored_webauthn(flask_security)
    assert base64.urlsafe_b64encode(row["credential_id"]).rstrip(b"=").decode() == credential["credentialId"]
    assert row["device_type"] == "multi_device" and row["backup_state"] == 1
    for operation in ("create", "get"):
        assert len(hybrid_events(credemu, operation)) == 1, credemu.events("hybrid")
    [got] = credemu.events("get", profile=phone_account)
    assert got["outcome"] == "success" and got["detail"]["credentialId"] == credential["credentialId"]


# ---- a sheet nobody answers ----

SHEET_PAGE = b"""<!doctype html><meta charset="utf-8"><title>sheet</title>
<button id="go">register</button><p id="out"></p>
<script>
document.getElementById("go").onclick = async () => {
  const started = performance.now();
  const out = document.getElementById("out");
  try {
    await navigator.credentials.create({publicKey: {
      rp: {name: "Page"}, user: {id: new Uint8Array([1, 2, 3]), name: "alice", displayName: "Alice"},
      challenge: new Uint8Array(32), pubKeyCredParams: [{type: "public-key", alg: -7}], timeout: 1500,
      authenticatorSelection: {authenticatorAttachment: "cross-platform"}}});
    out.textContent = "created";
  } catch (e) {
    out.textContent = "rejected " + e.name + " after " + Math.round(performance.now() - started) + " ms";
  }
};
</script>"""


class StaticSite:
    """A page of ours (conftest.html_site) standing where Browser expects an RP."""

    name = "page"

    def __init__(self, origin):
        self.origin = origin

    def output(self):
        return ""


@pytest.mark.parametrize("plugged", ["nothing", "a key nobody touches"])
def test_a_cross_platform_create_nobody_answers_settles_at_its_timeout(plugged, open_browser, serve_credemu):
    # Chrome's sheet stays open (a key to touch, a phone to pick) until the user acts or the timeout passes.
    with html_site(SHEET_PAGE) as origin:
        credemu = serve_credemu(origin, "gpm", "gpm", "chrome-desktop")
        answering = "gpm"
        if plugged != "nothing":
            credemu.add_profile("key1", "security-key", authenticator={"isUserConsenting": False})
            credemu.expect("PATCH", "/profiles/gpm", {"authenticators": ["key1"]})
            answering = "key1"
        b = open_browser("selenium", f"sheet-timeout-{answering}", StaticSite(origin), credemu.shim)
        b.goto(origin + "/")
        b.click("#go")
        outcome = b.wait_text("#out", "rejected", timeout=30)
        b.screenshot("settled")
    name, millis = outcome.split()[1], int(outcome.split()[3])
    assert name == "NotAllowedError" and millis >= 1500, outcome
    [refused] = credemu.events("create", profile=answering)
    assert refused["reason"] == ("attachmentNotOffered" if plugged == "nothing" else "userNotPresent"), refused
    assert credemu.passkeys(answering) == []
