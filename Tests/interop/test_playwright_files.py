"""Passkeys move between credemu and the browser's own virtual authenticators through their files (issue 33.2).

(a) A passkey a page registers under Playwright's `context.credentials` authenticator (Playwright 1.61+), saved with
`credentials.get()` and `storage_state(credentials=True)`, imported with `credemu vault import --format playwright`,
signs in through `credemu get`; (b) one credemu made, exported with `--format playwright`, seeded with
`context.credentials.create(...)` or a storage state, signs in under Playwright's authenticator; (c) the same both
ways with Chromium's virtual authenticator over CDP (`WebAuthn.getCredentials` / `addCredential`, standard base64)
and `--format webdriver`. The RP's side is py_webauthn throughout, with the public key it kept at registration.
"""
import base64
import json

import pytest
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers.cose import COSEAlgorithmIdentifier
from webauthn.helpers.structs import AuthenticatorSelectionCriteria, ResidentKeyRequirement, UserVerificationRequirement

from conftest import html_site

RP_ID = "localhost"

PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>rp</title></head><body>
<script>
window.ceremony = async (kind, json) => {
  try {
    const credential = kind === "create"
      ? await navigator.credentials.create({publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(json)})
      : await navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(json)});
    return {ok: credential.toJSON ? credential.toJSON() : {
      id: credential.id, rawId: credential.id, type: credential.type, clientExtensionResults: {},
      response: Object.fromEntries(Object.entries({
        clientDataJSON: credential.response.clientDataJSON, attestationObject: credential.response.attestationObject,
        authenticatorData: credential.response.authenticatorData, signature: credential.response.signature,
        userHandle: credential.response.userHandle}).filter(([, v]) => v).map(([k, v]) =>
          [k, btoa(String.fromCharCode(...new Uint8Array(v))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "")]))}};
  } catch (e) {
    return {error: e.name + ": " + e.message};
  }
};
</script></body></html>"""


@pytest.fixture(scope="module")
def rp_url():
    with html_site(PAGE, content_type="text/html; charset=utf-8") as origin:
        yield origin


def registration_options(user, algorithms=None):
    return generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name=user, timeout=8000, supported_pub_key_algs=algorithms,
                                         authenticator_selection=AuthenticatorSelectionCriteria(
                                             resident_key=ResidentKeyRequirement.REQUIRED,
                                             user_verification=UserVerificationRequirement.PREFERRED))


def in_page(page, kind, options):
    answer = page.evaluate("([kind, json]) => window.ceremony(kind, json)", [kind, json.loads(options_to_json(options))])
    assert "ok" in answer, answer
    return answer["ok"]


def register_in_page(page, origin, user):
    options = registration_options(user)
    return verify_registration_response(credential=in_page(page, "create", options), expected_challenge=options.challenge,
                                        expected_origin=origin, expected_rp_id=RP_ID)


def sign_in_in_page(page, origin, registered, sign_count=0):
    options = generate_authentication_options(rp_id=RP_ID, timeout=8000)
    return verify_authentication_response(credential=in_page(page, "get", options), expected_challenge=options.challenge,
                                          expected_origin=origin, expected_rp_id=RP_ID,
                                          credential_public_key=registered.credential_public_key,
                                          credential_current_sign_count=sign_count)


def sign_in_through_credemu(credemu, origin, public_key, credential_id, sign_count=0):
    options = generate_authentication_options(rp_id=RP_ID)
    answer = credemu.get(origin, options)
    assert base64.urlsafe_b64decode(answer["rawId"] + "==") == credential_id
    return verify_authentication_response(credential=answer, expected_challenge=options.challenge, expected_origin=origin,
                                          expected_rp_id=RP_ID, credential_public_key=public_key,
                                          credential_current_sign_count=sign_count)


def made_by_credemu(credemu, origin, user, algorithms=None):
    options = registration_options(user, algorithms)
    answer = credemu.create(origin, options)
    return verify_registration_response(credential=answer, expected_challenge=options.challenge, expected_origin=origin,
                                        expected_rp_id=RP_ID)


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


@pytest.fixture(params=["gpm", "security-key"])
def vault(credemu, request):
    """A credemu vault whose profile plays a synced provider (GPM: the counter stays zero) or a security key."""
    credemu.run("profile", "create", request.param, "--pack", request.param, check_exit=0, profile="default")
    credemu.profile = request.param
    return credemu


# ---- (a) and (b): Playwright's own authenticator ----

def test_a_passkey_registered_under_playwrights_authenticator_signs_in_through_credemu(playwright_browser, rp_url, vault, tmp_path):
    context = playwright_browser.new_context()
    try:
        context.credentials.install()
        page = context.new_page()
        page.goto(rp_url)
        registered = register_in_page(page, rp_url, "alice")
        listed = context.credentials.get(rp_id=RP_ID)
        assert [c["id"] for c in listed] == [b64url(registered.credential_id)]
        state = context.storage_state(credentials=True)
    finally:
        context.close()
    assert state["credentials"] == listed, "the storage state's credentials are get()'s list"
    (tmp_path / "state.json").write_text(json.dumps(state))
    (tmp_path / "list.json").write_text(json.dumps(listed))

    imported = vault.json("vault", "import", "--format", "playwright", str(tmp_path / "state.json"))
    assert imported == {"imported": {"passkeys": 1}}
    refused = vault.run("vault", "import", "--format", "playwright", str(tmp_path / "list.json"))
    assert refused.returncode == 3 and "already in the vault" in refused.stderr, "a second import is all or nothing"
    first = sign_in_through_credemu(vault, rp_url, registered.credential_public_key, registered.credential_id)
    second = sign_in_through_credemu(vault, rp_url, registered.credential_public_key, registered.credential_id,
                                     sign_count=first.new_sign_count)
    if vault.profile == "gpm":
        assert (first.new_sign_count, second.new_sign_count) == (0, 0), "GPM's counter stays zero"
    else:
        assert second.new_sign_count == first.new_sign_count + 1 > 0


@pytest.mark.parametrize("seeding", ["create", "storage_state"])
def test_a_passkey_credemu_made_signs_in_under_playwrights_authenticator(playwright_browser, rp_url, vault, tmp_path, seeding):
    registered = made_by_credemu(vault, rp_url, "bob", [COSEAlgorithmIdentifier.ECDSA_SHA_256])
    sign_in_through_credemu(vault, rp_url, registered.credential_public_key, registered.credential_id)
    if vault.profile == "security-key":
        # Playwright's authenticator signs SHA-256 digests only: an Ed25519 passkey is left out of its file, and named.
        eddsa = made_by_credemu(vault, rp_url, "erin", [COSEAlgorithmIdentifier.EDDSA])
        noted = vault.run("vault", "export", "--format", "playwright", check_exit=0)
        assert b64url(eddsa.credential_id) in noted.stderr and b64url(eddsa.credential_id) not in noted.stdout
    exported = vault.json("vault", "export", "--format", "playwright")
    assert [set(c) for c in exported] == [{"id", "rpId", "userHandle", "privateKey", "publicKey", "signCount"}]
    if seeding == "create":
        context = playwright_browser.new_context()
        for c in exported:
            made = context.credentials.create(c["rpId"], id=c["id"], user_handle=c["userHandle"], private_key=c["privateKey"],
                                              public_key=c["publicKey"], sign_count=c["signCount"])
            assert made == c, "Playwright keeps the credential as credemu gave it"
        context.credentials.install()
    else:
        (tmp_path / "empty.json").write_text(json.dumps({"cookies": [], "origins": []}))
        state = vault.json("vault", "export", "--format", "playwright", "--storage-state", str(tmp_path / "empty.json"))
        context = playwright_browser.new_context(storage_state=state)
    try:
        page = context.new_page()
        page.goto(rp_url)
        verified = sign_in_in_page(page, rp_url, registered, sign_count=exported[0]["signCount"])
        assert verified.credential_id == registered.credential_id
        assert verified.new_sign_count == exported[0]["signCount"] + 1, "Playwright's authenticator counts on from the file"
    finally:
        context.close()


# ---- (c): Chromium's virtual authenticator over CDP, WebDriver's format ----

def cdp_authenticator(context, page):
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    added = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "usb", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True}})
    return cdp, added["authenticatorId"]


def test_the_webdriver_format_carries_passkeys_both_ways_with_chromiums_virtual_authenticator(playwright_browser, rp_url, vault, tmp_path):
    context = playwright_browser.new_context()
    try:
        page = context.new_page()
        page.goto(rp_url)
        cdp, authenticator = cdp_authenticator(context, page)
        registered = register_in_page(page, rp_url, "carol")
        # CDP's getCredentials, as it comes: {"credentials": [...]}, byte strings in standard base64.
        got = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})
        (tmp_path / "cdp.json").write_text(json.dumps(got))
        assert vault.json("vault", "import", "--format", "webdriver", str(tmp_path / "cdp.json")) == {"imported": {"passkeys": 1}}
        sign_in_through_credemu(vault, rp_url, registered.credential_public_key, registered.credential_id,
                                sign_count=got["credentials"][0]["signCount"] if vault.profile != "gpm" else 0)

        # The other way: credemu's own passkey into a fresh authenticator through addCredential.
        made = made_by_credemu(vault, rp_url, "dave")
        exported = vault.json("vault", "export", "--format", "webdriver")
        [mine] = [c for c in exported if c["credentialId"] == b64url(made.credential_id)]
        assert isinstance(mine["signCount"], int)
        cdp.send("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": authenticator})
        _, fresh = cdp_authenticator(context, page)
        standard = {k: base64.b64encode(base64.urlsafe_b64decode(v + "==")).decode() if k in ("credentialId", "privateKey", "userHandle") else v
                    for k, v in mine.items() if k not in ("userName", "userDisplayName")}
        cdp.send("WebAuthn.addCredential", {"authenticatorId": fresh, "credential": standard})
        verified = sign_in_in_page(page, rp_url, made, sign_count=mine["signCount"])
        assert verified.credential_id == made.credential_id
    finally:
        context.close()


def test_playwrights_create_and_get_over_http_are_the_test_codes_and_answer_in_its_shape(tmp_path):
    """`POST` and `GET /profiles/{p}/credentials` through the OpenAPI-checking client: Playwright's six members, a
    seeded credential listed back and filtered, an import that is not all four members a named 400, a page refused."""
    from api_client import Server
    from conftest import BINARY
    server = Server(BINARY, tmp_path, "--allow-origin", "http://localhost:8000")
    try:
        status, seeded = server.call("POST", "/profiles/default/credentials", {"rpId": "localhost"})
        assert status == 201 and sorted(seeded) == ["id", "privateKey", "publicKey", "rpId", "signCount", "userHandle"], seeded
        status, listed = server.call("GET", f"/profiles/default/credentials?rpId=localhost&id={seeded['id']}")
        assert status == 200 and listed["credentials"] == [seeded], listed
        assert server.call("GET", "/profiles/default/credentials?rpId=example.com") == (200, {"credentials": []})
        status, refused = server.call("POST", "/profiles/default/credentials", {"rpId": "localhost", "id": seeded["id"]})
        assert status == 400 and refused["error"]["name"] == "TypeError", refused
        page = {"Origin": "http://localhost:8000"}
        assert server.call("GET", "/profiles/default/credentials", headers=page)[0] == 403
        assert server.call("POST", "/profiles/default/credentials", {"rpId": "localhost"}, headers=page)[0] == 403
    finally:
        assert server.stop() == 0
