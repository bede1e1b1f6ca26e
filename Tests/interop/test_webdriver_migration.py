"""A suite written for Selenium's virtual-authenticator API runs on credemu by changing one fixture.

The tests below are what an RP's end-to-end suite does with Chrome's virtual authenticator (WebAuthn L3 §11 through
Selenium's `add_virtual_authenticator`, `add_credential`, `get_credentials`, `remove_credential`,
`remove_all_credentials`, `set_user_verified`): register and sign in on a local page, the RP's side played by
py_webauthn; inject a credential with a known private key and sign in with it; watch the counter grow; remove a
credential and see the sign-in fail; turn user verification off and see a UV-required sign-in fail; resident and
server-side credentials. The `driver` fixture is the one thing that differs: Chromium's own virtual authenticator,
or `credemu_client.selenium(driver)`, whose authenticator methods go to credemu and whose pages get the shim of the
key. The same test bodies pass on both; that is the proof. docs/webdriver.md describes the switch.
"""
import base64
import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from fido2 import cbor
from fido2.cose import ES256
from selenium.webdriver.common.virtual_authenticator import Credential, VirtualAuthenticatorOptions
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

import credemu
from conftest import BINARY, html_site
from shim_drivers import selenium_chromium

if not hasattr(credemu.Client, "selenium"):  # an older installed client shadows clients/python: `make deps-python`
    pytest.fail(f"the credemu client at {credemu.__file__} predates the WebDriver methods; reinstall it (make deps-python)",
                pytrace=False)

RP_ID = "localhost"
TIMEOUT_MS = 8000

PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>rp</title></head><body>
<script>
window.ceremony = async (kind, json) => {
  try {
    const credential = kind === "create"
      ? await navigator.credentials.create({publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(json)})
      : await navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(json)});
    return {ok: credential.toJSON()};
  } catch (e) {
    return {error: e.name};
  }
};
</script></body></html>"""


@pytest.fixture(scope="module")
def rp_url():
    with html_site(PAGE, content_type="text/html; charset=utf-8") as origin:
        yield origin + "/"


def chromium():
    return selenium_chromium(script_timeout=60)


@pytest.fixture(scope="module")
def credemu_server(tmp_path_factory):
    with credemu.Server(BINARY, vault=str(tmp_path_factory.mktemp("webdriver") / "vault.db")) as server:
        yield server


@pytest.fixture(params=["chrome", "credemu"])
def driver(request):
    """THE fixture a suite changes: Chromium's own virtual authenticator, or the same driver through credemu."""
    plain = chromium()
    try:
        if request.param == "chrome":
            yield plain
        else:
            yield request.getfixturevalue("credemu_server").client().selenium(plain)
    finally:
        plain.quit()


# ---- the suite, as written for Selenium's virtual authenticator ----

def key_options(**overrides):
    options = VirtualAuthenticatorOptions()
    options.protocol = VirtualAuthenticatorOptions.Protocol.CTAP2
    options.transport = VirtualAuthenticatorOptions.Transport.USB
    options.has_resident_key = True
    options.has_user_verification = True
    options.is_user_verified = True
    for name, value in overrides.items():
        setattr(options, name, value)
    return options


def run(driver, kind, options):
    answer = driver.execute_async_script(
        "const done = arguments[arguments.length - 1]; window.ceremony(arguments[0], arguments[1]).then(done);",
        kind, json.loads(options_to_json(options)))
    return answer


def register(driver, user, resident=ResidentKeyRequirement.REQUIRED, uv=UserVerificationRequirement.PREFERRED):
    options = generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name=user, timeout=TIMEOUT_MS,
                                            authenticator_selection=AuthenticatorSelectionCriteria(resident_key=resident, user_verification=uv))
    answer = run(driver, "create", options)
    assert "ok" in answer, answer
    return verify_registration_response(credential=answer["ok"], expected_challenge=options.challenge,
                                        expected_origin=driver.current_url.rstrip("/"), expected_rp_id=RP_ID)


def sign_in(driver, public_key, credential_id=None, uv=UserVerificationRequirement.PREFERRED, sign_count=0):
    allow = [PublicKeyCredentialDescriptor(id=credential_id)] if credential_id else None
    options = generate_authentication_options(rp_id=RP_ID, allow_credentials=allow, user_verification=uv, timeout=TIMEOUT_MS)
    answer = run(driver, "get", options)
    if "error" in answer:
        return answer["error"]
    return verify_authentication_response(credential=answer["ok"], expected_challenge=options.challenge,
                                          expected_origin=driver.current_url.rstrip("/"), expected_rp_id=RP_ID,
                                          credential_public_key=public_key, credential_current_sign_count=sign_count,
                                          require_user_verification=uv == UserVerificationRequirement.REQUIRED)


def known_key():
    """A P-256 key the test holds: its PKCS#8 for add_credential, its COSE public key for the RP."""
    private = ec.generate_private_key(ec.SECP256R1())
    pkcs8 = private.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return pkcs8, cbor.encode(dict(ES256.from_cryptography_key(private.public_key())))


def test_register_sign_in_and_the_counter_grows(driver, rp_url):
    driver.add_virtual_authenticator(key_options())
    driver.get(rp_url)
    registered = register(driver, "alice")
    [credential] = driver.get_credentials()
    assert credential.id.rstrip("=") == base64.urlsafe_b64encode(registered.credential_id).decode().rstrip("=")
    assert credential.is_resident_credential and credential.rp_id == RP_ID
    before = credential.sign_count
    verified = sign_in(driver, registered.credential_public_key, sign_count=before)
    assert verified.new_sign_count > before
    assert driver.get_credentials()[0].sign_count == verified.new_sign_count
    again = sign_in(driver, registered.credential_public_key, registered.credential_id, sign_count=verified.new_sign_count)
    assert again.new_sign_count > verified.new_sign_count
    driver.remove_virtual_authenticator()


def test_a_credential_added_with_a_known_private_key_signs_in(driver, rp_url):
    driver.add_virtual_authenticator(key_options())
    driver.get(rp_url)
    pkcs8, public_key = known_key()
    resident = Credential.create_resident_credential(b"resident-1", RP_ID, b"user-handle-1", pkcs8, 5)
    driver.add_credential(resident)
    verified = sign_in(driver, public_key, sign_count=5)
    assert verified.credential_id == b"resident-1" and verified.new_sign_count == 6
    other_pkcs8, other_public_key = known_key()
    driver.add_credential(Credential.create_non_resident_credential(b"server-side-1", RP_ID, other_pkcs8, 0))
    verified = sign_in(driver, other_public_key, b"server-side-1")
    assert verified.credential_id == b"server-side-1"
    by_id = {c.id.rstrip("="): c for c in driver.get_credentials()}
    assert by_id[base64.urlsafe_b64encode(b"resident-1").decode().rstrip("=")].private_key == Credential(
        b"x", True, RP_ID, None, pkcs8, 0).private_key, "the private key comes back as it went in (PKCS#8)"
    assert by_id[base64.urlsafe_b64encode(b"resident-1").decode().rstrip("=")].user_handle is not None
    assert not by_id[base64.urlsafe_b64encode(b"server-side-1").decode().rstrip("=")].is_resident_credential
    driver.remove_virtual_authenticator()


def test_a_removed_credential_no_longer_signs_in(driver, rp_url):
    driver.add_virtual_authenticator(key_options())
    driver.get(rp_url)
    first, second = register(driver, "alice"), register(driver, "bob")
    assert len(driver.get_credentials()) == 2
    driver.remove_credential(base64.urlsafe_b64encode(first.credential_id).decode())
    assert [c.id.rstrip("=") for c in driver.get_credentials()] == [base64.urlsafe_b64encode(second.credential_id).decode().rstrip("=")]
    assert sign_in(driver, first.credential_public_key, first.credential_id) == "NotAllowedError"
    assert sign_in(driver, second.credential_public_key, second.credential_id).credential_id == second.credential_id
    driver.remove_all_credentials()
    assert driver.get_credentials() == []
    assert sign_in(driver, second.credential_public_key, second.credential_id) == "NotAllowedError"
    driver.remove_virtual_authenticator()


def test_user_verification_turned_off_fails_a_sign_in_that_requires_it(driver, rp_url):
    driver.add_virtual_authenticator(key_options())
    driver.get(rp_url)
    registered = register(driver, "alice", uv=UserVerificationRequirement.REQUIRED)
    required = UserVerificationRequirement.REQUIRED
    assert sign_in(driver, registered.credential_public_key, registered.credential_id, uv=required).user_verified
    driver.set_user_verified(False)
    assert sign_in(driver, registered.credential_public_key, registered.credential_id, uv=required) == "NotAllowedError"
    driver.set_user_verified(True)
    assert sign_in(driver, registered.credential_public_key, registered.credential_id, uv=required).user_verified
    driver.remove_virtual_authenticator()


def test_resident_and_server_side_credentials(driver, rp_url):
    driver.add_virtual_authenticator(key_options())
    driver.get(rp_url)
    resident = register(driver, "alice", resident=ResidentKeyRequirement.REQUIRED)
    server_side = register(driver, "bob", resident=ResidentKeyRequirement.DISCOURAGED)
    kinds = {base64.urlsafe_b64decode(c.id + "=" * (-len(c.id) % 4)): c.is_resident_credential for c in driver.get_credentials()}
    assert kinds == {resident.credential_id: True, server_side.credential_id: False}
    # Without an allow list only the resident credential can answer.
    assert sign_in(driver, resident.credential_public_key).credential_id == resident.credential_id
    driver.remove_virtual_authenticator()
    assert driver.virtual_authenticator_id is None
