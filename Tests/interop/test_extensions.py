"""The prf and largeBlob extensions through the CLI, checked independently: the PRF results are recomputed with
Python's hmac and hashlib from the passkey's secret in the exported vault (WebAuthn L3 §10.1.4:
HMAC-SHA-256(secret, SHA-256("WebAuthn PRF" || 0x00 || input))), the registrations and assertions that carry the
outputs still verify with py_webauthn and python-fido2, and a pack that claims an extension credemu cannot answer is
refused by `providers validate`."""
import base64
import hashlib
import hmac
import json
from pathlib import Path

from webauthn import generate_authentication_options, generate_registration_options, options_to_json
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from conftest import ROOT, Credemu, verify_authentication_both, verify_registration_both

ORIGIN, RP_ID = "https://shop.example.com", "example.com"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def expected_prf(secret: bytes, salt: bytes) -> str:
    """WebAuthn L3 §10.1.4, written here without credemu's code."""
    return b64url(hmac.new(secret, hashlib.sha256(b"WebAuthn PRF" + b"\x00" + salt).digest(), hashlib.sha256).digest())


def with_extensions(options, extensions) -> str:
    document = json.loads(options_to_json(options))
    document["extensions"] = extensions
    return json.dumps(document)


def registration(user="alice@example.com", user_id=b"alice"):
    return generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name=user, user_id=user_id,
                                         authenticator_selection=AuthenticatorSelectionCriteria(resident_key=ResidentKeyRequirement.REQUIRED,
                                                                                                user_verification=UserVerificationRequirement.PREFERRED))


def authentication(credential_id):
    return generate_authentication_options(rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=credential_id)])


def prf_secret(credemu, credential_id: str) -> bytes:
    passkey = next(p for p in json.loads(credemu.export())["passkeys"] if p["credentialId"] == credential_id)
    return unb64url(passkey["prfSecret"])


def gpm(tmp_path, name="gpm"):
    credemu = Credemu(tmp_path, profile=name)
    credemu.json("profile", "create", name, "--pack", "gpm")
    return credemu


def test_gpm_prf_results_are_the_hmac_of_the_passkeys_secret_at_creation_and_assertion(tmp_path):
    credemu = gpm(tmp_path)
    salt1, salt2 = b"first salt", b"second salt"
    options = registration()
    response = credemu.create(ORIGIN, with_extensions(options, {"prf": {"eval": {"first": b64url(salt1)}}}))
    outputs = response["clientExtensionResults"]
    secret = prf_secret(credemu, response["id"])
    assert len(secret) == 32
    assert outputs["prf"] == {"enabled": True, "results": {"first": expected_prf(secret, salt1)}}
    verified, fido2_credential = verify_registration_both(response, options, ORIGIN, RP_ID)

    request = authentication(verified.credential_id)
    asserted = credemu.get(ORIGIN, with_extensions(request, {"prf": {"eval": {"first": b64url(salt1), "second": b64url(salt2)}}}))
    assert asserted["clientExtensionResults"]["prf"] == {"results": {"first": expected_prf(secret, salt1), "second": expected_prf(secret, salt2)}}
    verify_authentication_both(asserted, request, ORIGIN, RP_ID, verified, fido2_credential)

    # evalByCredential names the credential by its base64url ID and wins over eval.
    by_credential = {"eval": {"first": b64url(salt2)}, "evalByCredential": {response["id"]: {"first": b64url(b"per credential")}}}
    asserted = credemu.get(ORIGIN, with_extensions(authentication(verified.credential_id), {"prf": by_credential}))
    assert asserted["clientExtensionResults"]["prf"]["results"]["first"] == expected_prf(secret, b"per credential")


def test_each_passkey_has_its_own_secret_and_an_imported_vault_keeps_it(tmp_path):
    credemu = gpm(tmp_path / "a")
    (tmp_path / "b").mkdir()
    first = credemu.create(ORIGIN, with_extensions(registration("a@example.com", b"a"), {"prf": {}}))
    second = credemu.create(ORIGIN, with_extensions(registration("b@example.com", b"b"), {"prf": {}}))
    assert first["clientExtensionResults"] == {"prf": {"enabled": True}}
    assert prf_secret(credemu, first["id"]) != prf_secret(credemu, second["id"])
    salt = b64url(b"salt")
    before = credemu.get(ORIGIN, with_extensions(authentication(unb64url(first["id"])), {"prf": {"eval": {"first": salt}}}))
    # The fixture carries the secret: a vault imported from it evaluates the same PRF.
    fixture = tmp_path / "fixture.json"
    fixture.write_text(credemu.export())
    copy = gpm(tmp_path / "b", "copy")
    copy.json("vault", "import", str(fixture))
    after = copy.get(ORIGIN, with_extensions(authentication(unb64url(first["id"])), {"prf": {"eval": {"first": salt}}}))
    assert after["clientExtensionResults"]["prf"] == before["clientExtensionResults"]["prf"]


def test_a_large_blob_is_written_read_back_and_exported(tmp_path):
    credemu = gpm(tmp_path)
    options = registration()
    response = credemu.create(ORIGIN, with_extensions(options, {"largeBlob": {"support": "required"}, "credProps": True}))
    assert response["clientExtensionResults"] == {"credProps": {"rk": True}, "largeBlob": {"supported": True}}
    verified, fido2_credential = verify_registration_both(response, options, ORIGIN, RP_ID)
    blob = b64url(b"a certificate, say")
    request = authentication(verified.credential_id)
    written = credemu.get(ORIGIN, with_extensions(request, {"largeBlob": {"write": blob}}))
    assert written["clientExtensionResults"] == {"largeBlob": {"written": True}}
    verify_authentication_both(written, request, ORIGIN, RP_ID, verified, fido2_credential)
    read = credemu.get(ORIGIN, with_extensions(authentication(verified.credential_id), {"largeBlob": {"read": True}}))
    assert read["clientExtensionResults"] == {"largeBlob": {"blob": blob}}
    assert json.loads(credemu.export())["passkeys"][0]["largeBlob"] == blob
    two = generate_authentication_options(rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=verified.credential_id),
                                                                          PublicKeyCredentialDescriptor(id=b"x" * 16)])
    refused = credemu.get(ORIGIN, with_extensions(two, {"largeBlob": {"write": blob}}), exit_code=1)["error"]
    assert refused["name"] == "NotSupportedError" and refused["reason"] == "invalidExtensionInput"


def test_bitwarden_answers_neither_extension_and_keepassxc_gives_no_public_key(tmp_path):
    credemu = Credemu(tmp_path, profile="bw")
    credemu.json("profile", "create", "bw", "--pack", "bitwarden")
    credemu.json("profile", "create", "kp", "--pack", "keepassxc")
    options = registration()
    response = credemu.create(ORIGIN, with_extensions(options, {"prf": {"eval": {"first": "AQID"}}, "largeBlob": {"support": "preferred"}, "credProps": True}))
    assert response["clientExtensionResults"] == {"credProps": {"rk": True}}
    options = registration("k@example.com", b"k")
    proc = credemu.run("create", "--origin", ORIGIN, input=options_to_json(options), profile="kp", check_exit=0)
    keepass = json.loads(proc.stdout)
    assert "publicKey" not in keepass["response"] and keepass["response"]["transports"] == ["internal"]
    verify_registration_both(keepass, options, ORIGIN, RP_ID)  # both RP libraries read the key from the attestation object


def test_providers_validate_refuses_a_claim_of_an_extension_credemu_cannot_answer(credemu, tmp_path):
    pack = json.loads((ROOT / "providers" / "gpm.json").read_text())
    # Every extension Chromium reports is answered now: the shipped map validates, a made-up one does not.
    assert pack["knobs"]["capabilities.client"]["value"]["extension:getCredBlob"] is True
    pack["knobs"]["capabilities.client"]["value"]["extension:madeUpExtension"] = True
    (tmp_path / "claims.json").write_text(json.dumps(pack))
    result = credemu.json("providers", "validate", str(tmp_path / "claims.json"), exit_code=2)
    assert result["error"]["name"] == "UnansweredExtension"
    assert '"extension:madeUpExtension": true' in result["error"]["message"] and "credProps" in result["error"]["message"]
    pack["knobs"]["capabilities.client"]["value"]["extension:madeUpExtension"] = False   # known unsupported: no claim
    (tmp_path / "fine.json").write_text(json.dumps(pack))
    assert credemu.json("providers", "validate", str(tmp_path / "fine.json"))["valid"] is True


def key(tmp_path, name="key1"):
    credemu = Credemu(tmp_path, profile=name)
    credemu.json("profile", "create", name, "--pack", "security-key")
    return credemu


def authenticator_extensions(response) -> dict:
    """The authenticator data's extensions, read by python-fido2, not credemu."""
    from fido2.webauthn import AuthenticatorData
    return dict(AuthenticatorData(unb64url(response["response"]["authenticatorData"])).extensions or {})


def test_a_security_key_answers_chromiums_ctap_extensions_and_both_rp_libraries_verify(tmp_path):
    credemu = key(tmp_path)
    options = registration()
    blob = b"32 bytes or fewer"
    inputs = {"hmacCreateSecret": True, "credBlob": b64url(blob), "minPinLength": True, "credProps": True,
              "credentialProtectionPolicy": "userVerificationOptionalWithCredentialIDList", "enforceCredentialProtectionPolicy": True}
    response = credemu.create(ORIGIN, with_extensions(options, inputs))
    assert response["clientExtensionResults"] == {"credBlob": True, "credProps": {"rk": True}, "hmacCreateSecret": True}
    assert authenticator_extensions(response) == {"credBlob": True, "credProtect": 2, "hmac-secret": True, "minPinLength": 4}
    verified, fido2_credential = verify_registration_both(response, options, ORIGIN, RP_ID)

    request = authentication(verified.credential_id)
    asserted = credemu.get(ORIGIN, with_extensions(request, {"getCredBlob": True}))
    assert asserted["clientExtensionResults"] == {"getCredBlob": b64url(blob)}
    assert authenticator_extensions(asserted) == {"credBlob": blob}
    verify_authentication_both(asserted, request, ORIGIN, RP_ID, verified, fido2_credential, sign_count=0)
    # The level and the blob are in the export, and come back with an import.
    exported = json.loads(credemu.export())["passkeys"][0]
    assert exported["credProtect"] == 2 and exported["credBlob"] == b64url(blob)


def test_credprotect_level_three_is_not_usable_without_user_verification(tmp_path):
    credemu = key(tmp_path)
    options = generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name="a@example.com", user_id=b"a",
                                            authenticator_selection=AuthenticatorSelectionCriteria(resident_key=ResidentKeyRequirement.REQUIRED,
                                                                                                   user_verification=UserVerificationRequirement.PREFERRED))
    response = credemu.create(ORIGIN, options_to_json(options))
    assert authenticator_extensions(response)["credProtect"] == 3, "Chromium: rk required with uv preferred asks level 3"
    request = generate_authentication_options(rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=unb64url(response["id"]))],
                                              user_verification=UserVerificationRequirement.DISCOURAGED)
    # The user touches the key, which has no credential it may use without UV: Chrome's sheet says so and waits until
    # the user closes it (modalGet.noCredential); the decision queued here is that close, the immediate refusal.
    credemu.json("user", "next", "accept")
    refused = credemu.get(ORIGIN, options_to_json(request), exit_code=1)["error"]
    assert refused["name"] == "NotAllowedError" and refused["reason"] == "noCredential"


def u2f_fixture(appid, private_key):
    from cryptography.hazmat.primitives import serialization
    der = private_key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return {"format": "credemu-vault", "version": 1, "passwords": [], "passkeys": [{
        "credentialId": b64url(b"u2f-era key handle, 32 bytes...."), "rpId": appid, "userHandle": "", "userName": "",
        "algorithm": "ES256", "privateKey": b64url(der), "signCount": 41, "counter": "increment", "backupEligible": False,
        "backupState": False, "discoverable": False, "created": "2019-05-01T00:00:00Z"}]}


def test_a_u2f_era_credential_under_an_appid_signs_in_through_the_appid_extension(tmp_path):
    """A credential registered with the legacy U2F API (imported under its AppID URL) is asserted with the AppID's
    hash, appid: true; py_webauthn and python-fido2 verify it against the AppID, as a U2F-migrating RP does."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from fido2.server import Fido2Server
    from fido2.webauthn import AttestedCredentialData, PublicKeyCredentialRpEntity
    from fido2.cose import ES256
    from fido2.utils import websafe_encode
    from webauthn import verify_authentication_response
    appid = "https://example.com/u2f/app-id.json"
    credemu = key(tmp_path)
    private_key = ec.generate_private_key(ec.SECP256R1())
    (tmp_path / "u2f.json").write_text(json.dumps(u2f_fixture(appid, private_key)))
    credemu.json("vault", "import", str(tmp_path / "u2f.json"))
    credential_id = b"u2f-era key handle, 32 bytes...."
    request = authentication(credential_id)
    # Without the AppID the key finds nothing under the RP ID and Chrome's sheet waits for the user (modalGet.noCredential):
    # the user closes it at once.
    credemu.json("user", "next", "accept")
    assert credemu.get(ORIGIN, options_to_json(request), exit_code=1)["error"]["reason"] == "noCredential", "not under the RP ID"
    asserted = credemu.get(ORIGIN, with_extensions(request, {"appid": appid}))
    assert asserted["clientExtensionResults"] == {"appid": True}
    public_key = ES256.from_cryptography_key(private_key.public_key())
    import cbor2  # py_webauthn's own dependency: the COSE key as the RP stored it
    result = verify_authentication_response(credential=asserted, expected_challenge=request.challenge, expected_origin=ORIGIN,
                                            expected_rp_id=appid, credential_public_key=cbor2.dumps(dict(public_key)),
                                            credential_current_sign_count=41)
    assert result.new_sign_count == 42
    server = Fido2Server(PublicKeyCredentialRpEntity(name="Shop", id=appid), verify_origin=lambda origin: origin == ORIGIN)
    credential = AttestedCredentialData.create(b"\0" * 16, credential_id, public_key)
    state = {"challenge": websafe_encode(request.challenge), "user_verification": "discouraged"}
    assert server.authenticate_complete(state, [credential], asserted).credential_id == credential_id
    # Another site's AppID is refused as Chromium does.
    refused = credemu.get(ORIGIN, with_extensions(request, {"appid": "https://u2f.example.org/app-id.json"}), exit_code=1)["error"]
    assert refused["name"] == "SecurityError" and refused["message"] == "This is an invalid domain."


# ---- The browser is the reference: the shim on a security key against Chromium's own virtual authenticator ----

PAGE_CALLS = r"""
const done = arguments[arguments.length - 1];
(async () => {
  const enc = (ab) => btoa(String.fromCharCode(...new Uint8Array(ab))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const plain = (v) => v instanceof ArrayBuffer ? {arrayBuffer: enc(v)}
    : (v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, plain(v[k])])) : v);
  const failure = (p) => p.then(() => 'resolved', (e) => [e.name, e.message]);
  const user = {id: new Uint8Array([1, 2, 3, 4]), name: 'a@example.com', displayName: 'A'};
  const create = (extensions, selection) => navigator.credentials.create({publicKey: {rp: {name: 'Shop'}, user,
    challenge: new Uint8Array(32), pubKeyCredParams: [{type: 'public-key', alg: -7}],
    authenticatorSelection: selection || {residentKey: 'required', userVerification: 'preferred'}, extensions}});
  const out = {};
  out['an enforced policy'] = await failure(create({credentialProtectionPolicy: 'userVerificationOptionalWithCredentialIDList',
                                                    enforceCredentialProtectionPolicy: true}));
  const made = await create({hmacCreateSecret: true, credBlob: new Uint8Array([1, 2, 3]), minPinLength: true, credProps: true,
                             credentialProtectionPolicy: 'userVerificationOptionalWithCredentialIDList'});
  out['create outputs'] = plain(made.getClientExtensionResults());
  out['create outputs in JSON'] = made.toJSON().clientExtensionResults;
  out['create flags UP UV AT ED'] = new Uint8Array(made.response.getAuthenticatorData())[32] & 0xC5;
  const get = (extensions) => navigator.credentials.get({publicKey: {challenge: new Uint8Array(32),
    allowCredentials: [{type: 'public-key', id: made.rawId}], extensions}});
  const got = await get({getCredBlob: true});
  out['get outputs'] = plain(got.getClientExtensionResults());
  out['get outputs in JSON'] = got.toJSON().clientExtensionResults;
  out['get flags UP UV ED'] = new Uint8Array(got.response.authenticatorData)[32] & 0x85;
  out['get without extensions'] = plain((await get(undefined)).getClientExtensionResults());
  const large = await create({credBlob: new Uint8Array(33)}, {residentKey: 'discouraged'});
  out['a 33-byte credBlob'] = plain(large.getClientExtensionResults());
  out['appid on an http origin'] = await failure(get({appid: location.origin + '/app-id.json'}));
  out['appid at creation'] = await failure(create({appid: 'https://example.com/app-id.json'}));
  out['appidExclude not a URL'] = await failure(create({appidExclude: 'not a url'}));
  out['enforced without a policy'] = await failure(create({enforceCredentialProtectionPolicy: true}));
  out['level 3 without UV required'] = await failure(create({credentialProtectionPolicy: 'userVerificationRequired'}));
  out['an unknown policy'] = await failure(create({credentialProtectionPolicy: 'sometimes'}));
  return out;
})().then(done, (e) => done({crashed: String(e && e.stack || e)}));
"""

KEY = {"protocol": "ctap2", "ctap2Version": "ctap2_1", "transport": "usb", "hasResidentKey": True, "hasUserVerification": True,
       "isUserVerified": True, "automaticPresenceSimulation": True, "hasCredBlob": True, "hasMinPinLength": True, "hasPrf": True,
       "hasLargeBlob": True}


def compare(session, name, virtual_options, key_options):
    """The page's calls answered by Chromium's virtual authenticator configured with `virtual_options`, then by the shim
    on a security-key profile `name` with `key_options`; returns both results, which must be equal."""
    driver = session.driver
    for identifier in session.scripts:   # an earlier comparison's shim: Chromium's own credential manager answers now
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": identifier})
    session.scripts = []
    driver.execute_cdp_cmd("WebAuthn.enable", {"enableUI": False})
    authenticator = driver.execute_cdp_cmd("WebAuthn.addVirtualAuthenticator", {"options": virtual_options})["authenticatorId"]
    try:
        session.open()
        reference = driver.execute_async_script(PAGE_CALLS)
    finally:
        driver.execute_cdp_cmd("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": authenticator})
        driver.execute_cdp_cmd("WebAuthn.disable", {})
    status, _ = session.server.call("POST", "/profiles", {"name": name, "pack": "security-key", "authenticator": key_options})
    assert status in (200, 201)
    session.shim(session.server, "profile=" + name)
    session.open()
    emulated = driver.execute_async_script(PAGE_CALLS)
    assert "crashed" not in reference and "crashed" not in emulated, (reference, emulated)
    differing = {call: (reference[call], emulated.get(call)) for call in reference if reference[call] != emulated.get(call)}
    assert not differing, json.dumps(differing, indent=1)
    return reference


def test_a_security_key_through_the_shim_answers_as_chromiums_virtual_authenticator(tmp_path):
    from test_shim_parity import Session
    session = Session(tmp_path)
    try:
        reference = compare(session, "key1", KEY, {})
        assert reference["create outputs"] == {"credBlob": True, "credProps": {"rk": True}, "hmacCreateSecret": True}, reference
        assert reference["get outputs"] == {"getCredBlob": {"arrayBuffer": "AQID"}}, reference
        assert reference["an enforced policy"] == "resolved"
        # A key without credBlob, hmac-secret and credProtect (Chromium's virtual authenticator has credProtect only with
        # hasCredBlob): Chromium echoes false for both outputs, getCredBlob is an empty buffer, an enforced policy fails.
        reference = compare(session, "key2", dict(KEY, hasCredBlob=False, hasPrf=False), {"extensions": ["largeBlob", "minPinLength"]})
        assert reference["create outputs"] == {"credBlob": False, "credProps": {"rk": True}, "hmacCreateSecret": False}, reference
        assert reference["get outputs"] == {"getCredBlob": {"arrayBuffer": ""}}, reference
        assert reference["an enforced policy"][0] == "NotAllowedError", reference
    finally:
        session.close()


def test_a_get_with_appid_on_a_password_manager_reaches_the_plugged_key_that_holds_the_u2f_credential(tmp_path):
    """Chrome's sheet: GPM holds no credential for the allow list, the plugged key does under the AppID, so the key
    answers, with the AppID's hash and appid: true."""
    from cryptography.hazmat.primitives.asymmetric import ec
    appid = "https://example.com/u2f/app-id.json"
    credemu = key(tmp_path)
    (tmp_path / "u2f.json").write_text(json.dumps(u2f_fixture(appid, ec.generate_private_key(ec.SECP256R1()))))
    credemu.json("vault", "import", str(tmp_path / "u2f.json"))
    credemu.json("profile", "create", "desk", "--pack", "gpm")
    credemu.json("profile", "set", "desk", "--authenticators", "key1")
    request = authentication(b"u2f-era key handle, 32 bytes....")
    proc = credemu.run("get", "--origin", ORIGIN, input=with_extensions(request, {"appid": appid}), profile="desk", check_exit=0)
    asserted = json.loads(proc.stdout)
    assert asserted["clientExtensionResults"] == {"appid": True}
    assert unb64url(asserted["response"]["authenticatorData"])[:32] == hashlib.sha256(appid.encode()).digest()
    assert asserted["authenticatorAttachment"] == "cross-platform"
