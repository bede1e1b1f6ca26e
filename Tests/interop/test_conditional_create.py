"""Automatic passkey upgrades through the CLI, verified by independent RP libraries.

Every passkey made by conditional create verifies with py_webauthn when the RP skips the UP check
(require_user_presence=False, as WebAuthn L3 §7.1 says for conditional registrations) and signs in afterwards.
python-fido2's Fido2Server always demands UP, so it rejects the same registration: the integration bug seed 000
warns about, shown for real.
"""
import json

import pytest
from fido2.server import Fido2Server
from fido2.utils import websafe_encode
from fido2.webauthn import PublicKeyCredentialRpEntity
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers.exceptions import InvalidRegistrationResponse
from webauthn.helpers.structs import PublicKeyCredentialDescriptor

from conftest import ROOT, Credemu

ORIGIN = "https://shop.example.com"
RP_ID = "example.com"
USER = "alice@example.com"
SILENT = [("gpm", "chrome-desktop"), ("gpm", "chrome-android"), ("gpm", "android"), ("apple", "safari"), ("apple", "ios"),
          ("apple", "macos"), ("generic-third-party", "ios"), ("generic-third-party", "android")]


def profile(tmp_path, pack, platform, **settings):
    credemu = Credemu(tmp_path, profile="rp")
    args = ["profile", "create", "rp", "--pack", pack, "--platform", platform]
    for key, value in settings.items():
        args += [f"--{key}", value]
    credemu.json(*args)
    credemu.json("clock", "set", "2026-11-29T10:00:00Z")
    return credemu


def conditional_options(user=USER, exclude=None):
    options = generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name=user, exclude_credentials=exclude)
    return options, json.dumps({"publicKey": json.loads(options_to_json(options)), "mediation": "conditional"})


def sign_in_with_password(credemu, user=USER):
    credemu.json("password", "save", "--origin", ORIGIN, "--username", user, "--password", "hunter2")
    credemu.json("clock", "advance", "1d")
    filled = credemu.json("autofill", "--origin", ORIGIN, "--username", user, "--submit")
    assert filled["password"] == "hunter2"


@pytest.mark.parametrize("pack,platform", SILENT, ids=[f"{p}-{q}" for p, q in SILENT])
def test_upgrade_one_minute_after_autofill_verifies_without_up_and_signs_in(tmp_path, pack, platform):
    credemu = profile(tmp_path, pack, platform)
    sign_in_with_password(credemu)
    credemu.json("clock", "advance", "1m")
    options, text = conditional_options()
    response = credemu.json("create", "--origin", ORIGIN, input=text)

    with pytest.raises(InvalidRegistrationResponse):
        verify_registration_response(credential=response, expected_challenge=options.challenge, expected_origin=ORIGIN,
                                     expected_rp_id=RP_ID)
    verified = verify_registration_response(credential=response, expected_challenge=options.challenge, expected_origin=ORIGIN,
                                            expected_rp_id=RP_ID, require_user_presence=False)
    assert verified.user_verified is False

    request = generate_authentication_options(rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=verified.credential_id)])
    assertion = credemu.get(ORIGIN, request)
    verify_authentication_response(credential=assertion, expected_challenge=request.challenge, expected_origin=ORIGIN,
                                   expected_rp_id=RP_ID, credential_public_key=verified.credential_public_key,
                                   credential_current_sign_count=0)
    events = credemu.json("events", "--kind", "create")
    assert events[-1]["outcome"] == "success" and events[-1]["detail"]["silent"] is True


def test_python_fido2_rejects_every_automatic_upgrade(tmp_path):
    credemu = profile(tmp_path, "gpm", "chrome-desktop")
    sign_in_with_password(credemu)
    options, text = conditional_options()
    response = credemu.json("create", "--origin", ORIGIN, input=text)
    server = Fido2Server(PublicKeyCredentialRpEntity(name="Shop", id=RP_ID))
    state = {"challenge": websafe_encode(options.challenge), "user_verification": "preferred"}
    with pytest.raises(ValueError, match="User Present flag not set"):
        server.register_complete(state, response)


@pytest.mark.parametrize("pack,platform", SILENT, ids=[f"{p}-{q}" for p, q in SILENT])
def test_upgrade_six_minutes_later_is_a_silent_no_op_rendered_for_the_platform(tmp_path, pack, platform):
    credemu = profile(tmp_path, pack, platform)
    sign_in_with_password(credemu)
    credemu.json("clock", "advance", "6m")
    before = credemu.export()
    error = credemu.json("create", "--origin", ORIGIN, input=conditional_options()[1], exit_code=1)["error"]
    assert error["name"] == "NotAllowedError"
    assert error["reason"] == "noRecentlyUsedPassword"
    assert error["silent"] is True
    assert credemu.export() == before
    dialect = error["dialects"][error["dialect"]]
    if platform == "android":
        assert dialect["exception"] == "androidx.credentials.exceptions.CreateCredentialNoCreateOptionException"
    elif platform in ("ios", "macos"):
        assert dialect["code"] == 1001
    else:
        assert dialect == {"name": "NotAllowedError", "message": error["message"]}


def test_opt_out_is_a_no_op_on_every_device(tmp_path):
    credemu = profile(tmp_path, "gpm", "chrome-desktop")
    sign_in_with_password(credemu)
    credemu.json("profile", "set", "rp", "--automaticPasskeyUpgrades", "false")
    for platform in ["chrome-desktop", "chrome-android", "android"]:
        error = credemu.json("create", "--origin", ORIGIN, "--platform", platform, input=conditional_options()[1], exit_code=1)["error"]
        assert (error["reason"], error["silent"]) == ("optOut", True), platform
    assert json.loads(credemu.export())["passkeys"] == []
    settings = [e for e in credemu.json("events", "--kind", "setting")]
    assert settings[-1]["detail"] == {"automaticPasskeyUpgrades": "false"}


def test_exclusion_ids_stop_a_duplicate_upgrade(tmp_path):
    credemu = profile(tmp_path, "gpm", "chrome-desktop")
    sign_in_with_password(credemu)
    first = credemu.json("create", "--origin", ORIGIN, input=conditional_options()[1])
    credemu.json("autofill", "--origin", ORIGIN, "--username", USER, "--submit")
    excluded = [PublicKeyCredentialDescriptor(id=__import__("base64").urlsafe_b64decode(first["rawId"] + "=="))]
    # Chrome desktop: the enclave finds the excluded GPM passkey and the request completes CREDENTIAL_EXCLUDED:
    # InvalidStateError, no UI (device/fido/enclave/enclave_authenticator.cc; sources-2026-12.md).
    error = credemu.json("create", "--origin", ORIGIN, input=conditional_options(exclude=excluded)[1], exit_code=1)["error"]
    assert (error["name"], error["reason"], error["silent"]) == ("InvalidStateError", "excludedCredential", False)
    # Chrome on Android: every conditional-create failure is NotAllowedError (IdentityCredentialsHelper), a silent no-op.
    error = credemu.json("create", "--origin", ORIGIN, "--platform", "chrome-android", input=conditional_options(exclude=excluded)[1], exit_code=1)["error"]
    assert (error["name"], error["reason"], error["silent"]) == ("NotAllowedError", "excludedCredential", True)
    assert len(json.loads(credemu.export())["passkeys"]) == 1


def test_modal_packs_show_their_sheet_and_the_passkey_has_up(tmp_path):
    credemu = profile(tmp_path, "bitwarden", "chrome-desktop")
    options, text = conditional_options()
    response = credemu.json("create", "--origin", ORIGIN, input=text)
    verified = verify_registration_response(credential=response, expected_challenge=options.challenge, expected_origin=ORIGIN,
                                            expected_rp_id=RP_ID)
    assert verified.aaguid == "d548826e-79b4-db40-a3d8-11116f7e8349"


def test_providers_and_capabilities_match_the_packs(tmp_path):
    credemu = profile(tmp_path, "keepassxc", "chrome-desktop")
    listing = credemu.json("providers")
    ids = {p["id"]: p for p in listing["providers"]}
    assert {"gpm", "apple", "bitwarden", "keepassxc", "1password", "generic-third-party", "webauthn-spec"} <= set(ids)
    assert all(p["version"] and p["sources"] and p["origin"] == "built-in" for p in listing["providers"])
    assert listing["directory"] is None
    caps = credemu.json("capabilities")
    pack = json.load(open(ROOT / "providers" / "keepassxc.json"))
    assert caps["getClientCapabilities"] == pack["knobs"]["capabilities.client"]["value"]
    assert list(caps["getClientCapabilities"]) == sorted(caps["getClientCapabilities"])
    assert caps["isConditionalMediationAvailable"] is pack["knobs"]["capabilities.conditionalMediation"]["value"] is False
    shown = credemu.json("providers", "show", "gpm", "--platform", "android")
    knob = {k["knob"]: k for k in shown["knobs"]}
    assert knob["signals.rateLimit.unknownCredential"]["value"]["overQuota"] == "reject"
    assert knob["conditionalCreate.minimumPlayServices"]["unconfirmed"]


def test_signal_resolves_and_the_event_log_says_what_happened(tmp_path):
    credemu = profile(tmp_path, "gpm", "chrome-desktop")
    options = generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name=USER)
    created = credemu.create(ORIGIN, options)
    signal = json.dumps({"rpId": RP_ID, "credentialId": created["id"]})
    assert credemu.json("signal", "unknown", "--origin", ORIGIN, input=signal) == {"resolved": True}
    event = credemu.json("events", "--kind", "signal")[-1]
    assert event["outcome"] == "applied" and event["detail"]["changes"] == [{"credentialId": created["id"], "action": "hidden"}]
    bad = credemu.json("signal", "unknown", "--origin", ORIGIN, input=json.dumps({"rpId": RP_ID, "credentialId": "a+b"}), exit_code=1)
    assert bad["error"]["name"] == "TypeError"
    request = generate_authentication_options(rp_id=RP_ID)
    # The hidden passkey leaves GPM nothing to offer: Chrome's sheet waits for the user (modalGet.noCredential), who
    # closes it at once.
    credemu.json("user", "next", "accept")
    assert credemu.get(ORIGIN, request, exit_code=1)["error"]["reason"] == "noCredential"


def test_android_request_shape_with_is_conditional_verifies(tmp_path):
    credemu = profile(tmp_path, "gpm", "android")
    apk = "android:apk-key-hash:" + __import__("base64").urlsafe_b64encode(b"\xa5" * 32).decode().rstrip("=")
    realm = "android://" + apk.split(":")[-1] + "@com.example.shop"
    credemu.json("password", "save", "--origin", realm, "--username", USER, "--password", "pw")
    credemu.json("autofill", "--origin", apk, "--android-package", "com.example.shop", "--submit")
    options, _ = conditional_options()
    request = json.dumps({"requestJson": options_to_json(options), "isConditional": True, "origin": apk})
    response = credemu.json("create", "--android-package", "com.example.shop", input=request)
    verified = verify_registration_response(credential=response, expected_challenge=options.challenge, expected_origin=apk,
                                            expected_rp_id=RP_ID, require_user_presence=False)
    client_data = json.loads(__import__("base64").urlsafe_b64decode(response["response"]["clientDataJSON"] + "=="))
    assert client_data["androidPackageName"] == "com.example.shop"
    assert verified.user_verified is False


def test_apple_request_shape_verifies_with_the_https_rp_origin(tmp_path):
    credemu = profile(tmp_path, "apple", "ios")
    import base64
    challenge = b"\x11" * 32
    b64 = lambda b: base64.urlsafe_b64encode(b).decode().rstrip("=")
    request = json.dumps({"relyingPartyIdentifier": RP_ID, "challenge": b64(challenge), "name": USER, "userID": b64(b"alice")})
    response = credemu.json("create", input=request)
    verify_registration_response(credential=response, expected_challenge=challenge, expected_origin="https://" + RP_ID, expected_rp_id=RP_ID)


def test_gpm_desktop_upgrades_only_from_its_own_passwords_in_a_signed_in_syncing_profile(tmp_path):
    """passkey_upgrade_request_controller.cc: only passwords stored in GPM count, and the profile must be signed in
    with password sync (kPasswordStoreError otherwise): both silent no-ops, as the CLI reports them."""
    credemu = profile(tmp_path, "gpm", "chrome-desktop", browserSignedIn="false")
    credemu.json("password", "save", "--origin", ORIGIN, "--username", USER, "--password", "pw", "--savedIn", "bitwarden")
    assert [p.get("savedIn") for p in credemu.json("password", "list")] == ["bitwarden"]
    credemu.json("clock", "advance", "1d")
    credemu.json("autofill", "--origin", ORIGIN, "--username", USER, "--submit")
    error = credemu.json("create", "--origin", ORIGIN, input=conditional_options()[1], exit_code=1)["error"]
    assert (error["reason"], error["silent"]) == ("passwordStoreUnavailable", True)
    credemu.json("profile", "set", "rp", "--browserSignedIn", "true")
    error = credemu.json("create", "--origin", ORIGIN, input=conditional_options()[1], exit_code=1)["error"]
    assert (error["reason"], error["silent"]) == ("noMatchingPassword", True) and "saved in bitwarden" in error["message"]
    credemu.json("password", "save", "--origin", ORIGIN, "--username", USER, "--password", "pw")
    credemu.json("autofill", "--origin", ORIGIN, "--username", USER, "--submit")
    assert credemu.json("create", "--origin", ORIGIN, input=conditional_options()[1])["type"] == "public-key"


@pytest.mark.parametrize("pack,platform,upgrades", [("gpm", "chrome-desktop", True), ("apple", "safari", False)])
def test_a_password_used_on_another_subdomain_qualifies_only_where_the_pack_counts_public_suffix_matches(tmp_path, pack, platform, upgrades):
    """conditionalCreate.passwordMatch: Chrome's controller loops over GetLogins' exact and PSL matches, checking
    only the username and the time, so a password used on login.example.com makes GPM upgrade on shop.example.com;
    Apple's pack counts the caller's own realm (unconfirmed). The upgrade still verifies with py_webauthn."""
    credemu = profile(tmp_path, pack, platform)
    login = "https://login.example.com"
    credemu.json("password", "save", "--origin", login, "--username", USER, "--password", "hunter2")
    credemu.json("clock", "advance", "1d")
    credemu.json("autofill", "--origin", login, "--username", USER, "--submit")
    credemu.json("clock", "advance", "1m")
    options, text = conditional_options()
    if not upgrades:
        error = credemu.json("create", "--origin", ORIGIN, input=text, exit_code=1)["error"]
        assert (error["reason"], error["silent"]) == ("noMatchingPassword", True)
        assert "conditionalCreate.passwordMatch = exact" in error["message"]
        return
    response = credemu.json("create", "--origin", ORIGIN, input=text)
    verify_registration_response(credential=response, expected_challenge=options.challenge, expected_origin=ORIGIN,
                                 expected_rp_id=RP_ID, require_user_presence=False)
    # Another port is another site: no match.
    other = profile(tmp_path / "port", pack, platform)
    other.json("password", "save", "--origin", "https://login.example.com:8443", "--username", USER, "--password", "hunter2")
    other.json("autofill", "--origin", "https://login.example.com:8443", "--username", USER, "--submit")
    assert other.json("create", "--origin", ORIGIN, input=conditional_options()[1], exit_code=1)["error"]["reason"] == "noMatchingPassword"
