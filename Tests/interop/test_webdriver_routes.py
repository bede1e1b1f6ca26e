"""The WebDriver virtual-authenticator routes (WebAuthn L3 §11, without `/session/{id}`) over a running server, every
answer checked against the OpenAPI document: WebDriver's `{"value": ...}` on success, a named 4xx otherwise, and a
refused request leaves the vault as it was. What a key's credential gives back (its PKCS#8) is what signed.
"""
import base64
import json

import pytest
from cryptography.hazmat.primitives import serialization
from fido2.cose import CoseKey
from fido2 import cbor
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers.structs import AttestationConveyancePreference, PublicKeyCredentialDescriptor

from api_client import Server
from conftest import BINARY

ORIGIN = "https://shop.example.com"
RP_ID = "shop.example.com"
KEY = {"protocol": "ctap2_1", "transport": "usb", "hasResidentKey": True, "hasUserVerification": True, "isUserVerified": True}


@pytest.fixture
def server(tmp_path):
    s = Server(BINARY, tmp_path, "--allow-origin", "https://rp.example")
    yield s
    assert s.stop() == 0, "the server survived every request and stops cleanly"


def b64(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def state(server):
    """What a refused request must not change: the profiles and every authenticator's credentials."""
    _, profiles = server.call("GET", "/profiles")
    names = sorted(p["name"] for p in profiles["profiles"])
    credentials = {}
    for name in names:
        if name.startswith("wd-"):
            credentials[name] = server.call("GET", f"/webauthn/authenticator/{name}/credentials")[1]["value"]
    return names, credentials


def add(server, options=KEY):
    status, body = server.call("POST", "/webauthn/authenticator", options)
    assert status == 200, body
    return body["value"]


def test_bad_configurations_are_named_refusals_and_make_nothing(server):
    add(server)
    before = state(server)
    cases = [
        ({}, "InvalidArgument"), ({"protocol": "ctap2"}, "InvalidArgument"), ({"transport": "usb"}, "InvalidArgument"),
        ({"protocol": "ctap9", "transport": "usb"}, "InvalidArgument"), ({"protocol": "ctap2", "transport": "wifi"}, "InvalidArgument"),
        ({"protocol": "ctap2", "transport": "usb", "hasResidentKey": 1}, "InvalidArgument"),
        ({"protocol": "ctap2", "transport": "usb", "hasResidentKey": None}, "InvalidArgument"),
        ({"protocol": "ctap2", "transport": "usb", "extensions": ["credBlob"]}, "InvalidArgument"),
        ({"protocol": "ctap2", "transport": "usb", "hasHMACSecret": "yes"}, "InvalidArgument"),
        ({"protocol": "ctap2", "transport": "usb", "extensions": ["hmac-secret"]}, "UnsupportedOperation"),
        ({"protocol": "ctap2_1", "transport": "usb", "extensions": ["largeBlob"]}, "InvalidArgument"),
        ({"protocol": "ctap2_1", "transport": "usb", "extensions": ["credProtect"]}, "UnsupportedOperation"),
        ({"protocol": "ctap2_1", "transport": "usb", "extensions": [7]}, "InvalidArgument"),
        ([], "InvalidArgument"), ("ctap2", "InvalidArgument"),
    ]
    for body, name in cases:
        status, answer = server.call("POST", "/webauthn/authenticator", body)
        assert (status, answer["error"]["name"]) == (400, name), (body, answer)
    status, answer = server.call("POST", "/webauthn/authenticator", raw=b"{not json")
    assert (status, answer["error"]["name"]) == (400, "TypeError")
    assert state(server) == before


def test_unknown_authenticators_and_credentials_are_404_and_a_provider_is_no_authenticator(server):
    key = add(server)
    for target in ["wd-missing", "default", "..", "a%2Fb"]:
        for method, tail, body in [("DELETE", "", None), ("POST", "/credential", {}), ("GET", "/credentials", None),
                                   ("DELETE", "/credentials", None), ("DELETE", "/credentials/AQID", None),
                                   ("POST", "/uv", {"isUserVerified": False}), ("POST", "/credentials/AQID/props", {})]:
            status, answer = server.call(method, f"/webauthn/authenticator/{target}{tail}", body)
            assert status == 404, (method, target, tail, answer)
            assert answer["error"]["name"] == "NotFound"
    before = state(server)
    for method, tail, body in [("DELETE", "/credentials/AQID", None), ("POST", "/credentials/AQID/props", {"backupState": True})]:
        status, answer = server.call(method, f"/webauthn/authenticator/{key}{tail}", body)
        assert (status, answer["error"]["name"]) == (404, "NotFound")
    assert server.call("GET", "/profiles/default")[0] == 200, "the provider's profile is still there"
    assert state(server) == before


def test_a_page_cannot_reach_the_authenticator_routes(server):
    key = add(server)
    status, _ = server.call("POST", "/webauthn/authenticator", KEY, headers={"Origin": "https://rp.example"})
    assert status == 403
    status, _ = server.call("GET", f"/webauthn/authenticator/{key}/credentials", headers={"Origin": "https://rp.example"})
    assert status == 403


def test_a_keys_credentials_are_what_signed_and_their_properties_change(server):
    key = add(server)
    options = generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name="alice", attestation=AttestationConveyancePreference.DIRECT)
    status, created = server.call("POST", f"/profiles/{key}/credentials/create", {"options": json.loads(options_to_json(options)), "origin": ORIGIN})
    assert status == 200, created
    registered = verify_registration_response(credential=created, expected_challenge=options.challenge, expected_origin=ORIGIN,
                                              expected_rp_id=RP_ID)
    status, listed = server.call("GET", f"/webauthn/authenticator/{key}/credentials")
    [credential] = listed["value"]
    assert credential["credentialId"] == b64(registered.credential_id)
    private = serialization.load_der_private_key(base64.urlsafe_b64decode(credential["privateKey"] + "=="), None)
    public_key = CoseKey.parse(cbor.decode(registered.credential_public_key))
    assert type(public_key).from_cryptography_key(private.public_key()) == public_key, "the PKCS#8 given back is the key that signed"
    assert (credential["backupEligibility"], credential["backupState"]) == (False, False)

    status, answer = server.call("POST", f"/webauthn/authenticator/{key}/credentials/{credential['credentialId']}/props",
                                 {"backupEligibility": True, "backupState": True, "signCount": 100})
    assert (status, answer) == (200, {"value": None})
    request = generate_authentication_options(rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=registered.credential_id)])
    status, assertion = server.call("POST", f"/profiles/{key}/credentials/get", {"options": json.loads(options_to_json(request)), "origin": ORIGIN})
    verified = verify_authentication_response(credential=assertion, expected_challenge=request.challenge, expected_origin=ORIGIN, expected_rp_id=RP_ID,
                                              credential_public_key=registered.credential_public_key, credential_current_sign_count=100)
    assert verified.new_sign_count == 101
    assert verified.credential_backed_up and verified.credential_device_type == "multi_device"

    before = state(server)
    for body in [{"signCount": -1}, {"signCount": "1"}, {"backupState": "yes"}, {"colour": 1}, []]:
        status, answer = server.call("POST", f"/webauthn/authenticator/{key}/credentials/{credential['credentialId']}/props", body)
        assert (status, answer["error"]["name"]) == (400, "InvalidArgument"), body
    for body in [{}, {"isUserVerified": "no"}, {"isUserVerified": None}]:
        status, answer = server.call("POST", f"/webauthn/authenticator/{key}/uv", body)
        assert (status, answer["error"]["name"]) == (400, "InvalidArgument"), body
    for body in [{"credentialId": "AQID"}, {"credentialId": "AQID", "isResidentCredential": False, "rpId": RP_ID, "privateKey": "AAAA", "signCount": 0}]:
        status, answer = server.call("POST", f"/webauthn/authenticator/{key}/credential", body)
        assert (status, answer["error"]["name"]) == (400, "InvalidArgument"), body
    duplicate = dict(credential, privateKey=credential["privateKey"])
    status, answer = server.call("POST", f"/webauthn/authenticator/{key}/credential", duplicate)
    assert (status, answer["error"]["name"]) == (409, "Conflict")
    assert state(server) == before

    assert server.call("POST", f"/webauthn/authenticator/{key}/uv", {"isUserVerified": False}) == (200, {"value": None})
    assert server.call("GET", f"/profiles/{key}")[1]["authenticator"]["isUserVerified"] is False
    padded = credential["credentialId"] + "=" * (-len(credential["credentialId"]) % 4)  # as Selenium sends it
    assert padded != credential["credentialId"]
    assert server.call("DELETE", f"/webauthn/authenticator/{key}/credentials/{padded}") == (200, {"value": None})
    status, answer = server.call("POST", f"/webauthn/authenticator/{key}/credential", credential)
    assert status == 200, answer
    assert server.call("DELETE", f"/webauthn/authenticator/{key}/credentials") == (200, {"value": None})
    assert server.call("GET", f"/webauthn/authenticator/{key}/credentials")[1] == {"value": []}
    assert server.call("DELETE", f"/webauthn/authenticator/{key}") == (200, {"value": None})
    assert server.call("GET", f"/profiles/{key}")[0] == 404


# ---- page-visible: credemu's key against Chromium's own virtual authenticator, in the same browser ----

RK_PAGE = b"""<!doctype html><html><body><script>
window.make = async (selection, extensions) => {
  try {
    const c = await navigator.credentials.create({publicKey: {rp: {name: "x"}, user: {id: new Uint8Array(16), name: "a", displayName: "a"},
      challenge: new Uint8Array(16), pubKeyCredParams: [{type: "public-key", alg: -7}], timeout: 3000,
      authenticatorSelection: Object.assign({userVerification: "discouraged"}, selection), extensions}});
    return {extensions: c.getClientExtensionResults(), uv: !!(new Uint8Array(c.response.getAuthenticatorData())[32] & 4)};
  } catch (e) { return {error: e.name}; }
};
</script></body></html>"""
RK_KEYS = [{"protocol": p, "transport": "usb", "hasResidentKey": True, "hasUserVerification": uv, "isUserVerified": uv}
           for p, uv in [("ctap2", True), ("ctap2", False), ("ctap2_1", False)]]
RK_SELECTIONS = [{"residentKey": "required"}, {"residentKey": "preferred"}, {"residentKey": "discouraged"}, {"requireResidentKey": True}, {}]


def page_outcomes(driver, url, selections, extensions):
    """Each create's outcome; the UV flag only for a resident credential (Chromium's virtual key with built-in UV also
    verifies a non-resident create the RP asked "discouraged" for, which credemu's key, like a YubiKey's PIN, does not)."""
    driver.get(url)
    outcomes = [driver.execute_async_script("const done = arguments[arguments.length - 1]; window.make(arguments[0], arguments[1]).then(done);",
                                            selection, extensions) for selection in selections]
    for outcome in outcomes:
        if outcome.get("extensions", {}).get("credProps", {}).get("rk") is not True:
            outcome.pop("uv", None)
    return outcomes


def test_a_keys_resident_credentials_and_prf_are_what_chromiums_virtual_authenticator_gives(tmp_path):
    """The page's view of a create on credemu's key and on Chromium's own (chromedriver's Add Virtual Authenticator, or
    DevTools' hasHmacSecret where chromedriver drops hasHMACSecret): a resident credential needs UV, a CTAP 2.0 key's
    non-resident one has no credProps.rk, and a key with hmac-secret enables prf."""
    import credemu
    from conftest import html_site
    from shim_drivers import selenium_chromium
    with html_site(RK_PAGE, content_type="text/html; charset=utf-8") as origin, \
            credemu.Server(BINARY, vault=str(tmp_path / "vault.db")) as server:
        url = origin + "/"
        for key in RK_KEYS + [{"protocol": "ctap2", "transport": "usb", "hasHMACSecret": True}]:
            hmac = key.get("hasHMACSecret", False)
            selections, extensions = ([{}], {"prf": {}, "credProps": True}) if hmac else (RK_SELECTIONS, {"credProps": True})
            chrome = selenium_chromium(script_timeout=30)
            try:
                if hmac:
                    chrome.execute_cdp_cmd("WebAuthn.enable", {})
                    chrome.execute_cdp_cmd("WebAuthn.addVirtualAuthenticator",
                                           {"options": {"protocol": "ctap2", "ctap2Version": "ctap2_0", "transport": "usb", "hasHmacSecret": True}})
                else:
                    chrome.execute("addVirtualAuthenticator", key)
                reference = page_outcomes(chrome, url, selections, extensions)
            finally:
                chrome.quit()
            plain = selenium_chromium(script_timeout=30)
            try:
                driver = server.client().selenium(plain)
                driver.add_virtual_authenticator(key)
                assert page_outcomes(driver, url, selections, extensions) == reference, key
            finally:
                plain.quit()
            if hmac:
                assert reference[0]["extensions"]["prf"] == {"enabled": True}, reference
            elif key["protocol"] == "ctap2" and key["hasUserVerification"]:
                assert reference[2] == {"extensions": {"credProps": {}}}, reference  # no rk: Chromium cannot tell
