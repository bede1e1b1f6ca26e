"""The client against a live server: one method per documented route, each reaching exactly that route, answers
that py_webauthn verifies, and every refusal one CredemuError with the error body's parts."""
import base64
import json
import re
import threading
import time
from pathlib import Path

import pytest
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers.structs import PublicKeyCredentialDescriptor

import credemu
from credemu import ROUTES, Client, CredemuError

ROOT = Path(__file__).resolve().parents[3]

ORIGIN = "https://shop.example.com"
RP_ID = "shop.example.com"


def documented_routes(client):
    document = client.openapi()
    return {(method.upper(), path) for path, item in document["paths"].items()
            for method in item if method in ("get", "post", "put", "patch", "delete")}


def test_every_documented_route_has_a_client_method_and_every_listed_method_exists(credemu_client):
    documented = documented_routes(credemu_client)
    assert documented - set(ROUTES) == set(), "routes in openapi.json with no Client method"
    assert set(ROUTES) - documented == set(), "ROUTES lists a route the server does not document"
    for route, names in ROUTES.items():
        assert names, route
        for name in names:
            assert callable(getattr(Client, name, None)), f"Client.{name} for {route}"


class Recording(Client):
    """A client that notes which documented route each request reached."""

    def __init__(self, *args, templates, **kwargs):
        super().__init__(*args, **kwargs)
        self.templates = [(re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", t) + "$"), m, t) for m, t in templates]
        self.reached = []

    def request(self, method, path, body=None, query=None):
        plain = path.split("?")[0]
        self.reached.append(next(((m, t) for pattern, m, t in self.templates if m == method and pattern.match(plain)), (method, plain)))
        return super().request(method, path, body, query)

    def for_profile(self, profile, *, origin=None):
        other = super().for_profile(profile, origin=origin)
        other.__class__, other.templates, other.reached = Recording, self.templates, self.reached
        return other


def test_each_method_reaches_the_route_it_is_listed_for(credemu_server):
    base = credemu_server.client()
    client = Recording(base.url, profile="reach", origin=ORIGIN, templates=sorted(ROUTES))
    calls = {}

    def call(name, *args, **kwargs):
        start = len(client.reached)
        try:
            return getattr(client, name)(*args, **kwargs)
        finally:
            calls.setdefault(name, set()).update(client.reached[start:])

    call("health"), call("openapi"), call("providers"), call("clock")
    assert "credemu browser shim" in call("shim")
    call("create_profile", "reach", pack="gpm")
    call("profiles"), call("get_profile"), call("update_profile", automatic_passkey_upgrades=True)
    call("set_clock", "2026-11-29T10:00:00Z"), call("advance_clock", "1m"), call("system_clock")
    call("allowed_origins"), call("allow_origin", "http://localhost:8123/login")
    if call("demo")["available"]:
        assert call("start_demo")["running"]
    else:
        with pytest.raises(CredemuError, match="DemoUnavailable"):
            call("start_demo")
    # No browser here: a DevTools port nothing listens on, and an ID no channel has.
    with pytest.raises(CredemuError, match="DevToolsUnreachable"):
        call("open_channel", "ws://127.0.0.1:1/devtools/page/X")
    assert call("channels") == []
    with pytest.raises(CredemuError, match="NotFound"):
        call("close_channel", "ch0")
    call("save_password", "alice@example.com", "pw"), call("passwords"), call("use_password", "alice@example.com")
    call("autofill", username="alice@example.com", submit=True)
    options = generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name="alice@example.com")
    created = call("create", options, mediation="conditional")
    request = generate_authentication_options(rp_id=RP_ID)
    call("get", request)
    call("passkeys"), call("passkey", created["id"])
    call("get_client_capabilities")
    call("signal_current_user_details", RP_ID, b"user", "alice@example.com", "Alice")
    call("signal_all_accepted_credentials", RP_ID, b"other-user", [])
    call("signal_unknown_credential", RP_ID, b"\x01" * 16)
    call("events"), call("findings")
    call("queue_decisions", "accept"), call("pending_decisions"), call("clear_decisions")
    call("forge_next", "badSignature"), call("pending_forgery"), call("forge_next", None)
    hold = call("hold", timeout_ms=5000)
    call("holds"), call("release_hold", hold)
    call("offers")
    waiting = threading.Thread(target=lambda: base.for_profile("reach").get(
        generate_authentication_options(rp_id=RP_ID), origin=ORIGIN, mediation="conditional", ceremony="c-1"), daemon=True)
    waiting.start()
    deadline = time.monotonic() + 20
    while not base.for_profile("reach").offers() and time.monotonic() < deadline:
        time.sleep(0.02)
    call("pick", created["id"], ceremony="c-1")
    waiting.join(20)
    assert call("abort", "not-in-flight") == {"aborted": False}
    call("hide_passkey", created["id"]), call("restore_passkey", created["id"])
    assert call("rename_passkey", created["id"], user_name="work alice")["editedByUser"] is True
    # The same ceremonies on a device whose one provider account is the profile.
    call("create_device", "reach-laptop", providers=["reach"], platform="chrome-desktop")
    call("devices"), call("get_device", "reach-laptop"), call("update_device", "reach-laptop", private_browsing=False)
    on_device = call("create", generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name="dana"), device="reach-laptop")
    assert on_device.provider == "reach"
    assert call("get", generate_authentication_options(rp_id=RP_ID), device="reach-laptop").provider == "reach"
    call("get_client_capabilities", device="reach-laptop")
    call("save_password", "dana", "pw", device="reach-laptop"), call("passwords", device="reach-laptop")
    call("use_password", "dana", device="reach-laptop"), call("autofill", username="dana", device="reach-laptop")
    with pytest.raises(CredemuError):  # GPM has no reportUnusedPasswordCredential, on a device either
        call("report_unused_password", "example.com", "dana", device="reach-laptop")
    assert call("signal_unknown_credential", RP_ID, b"\x02" * 16, device="reach-laptop") == ["reach"]
    call("signal_all_accepted_credentials", RP_ID, b"other-user", [], device="reach-laptop")
    assert call("queue_decisions", "use:reach", device="reach-laptop") == ["use:reach"]
    assert call("pending_decisions", device="reach-laptop") == ["use:reach"]
    assert call("clear_decisions", device="reach-laptop") == []
    assert call("forge_next", "otherOrigin", device="reach-laptop") == {"forgery": "otherOrigin"}
    assert call("forge_next", None, device="reach-laptop") == call("pending_forgery", device="reach-laptop") == {"forgery": None}
    assert call("attestation_root")["pem"].startswith("-----BEGIN CERTIFICATE-----")
    call("signal_current_user_details", RP_ID, b"user", "alice@example.com", "Alice", device="reach-laptop")
    call("offers", device="reach-laptop")
    waiting = threading.Thread(target=lambda: base.get(generate_authentication_options(rp_id=RP_ID), origin=ORIGIN,
                                                       mediation="conditional", ceremony="d-1", device="reach-laptop"), daemon=True)
    waiting.start()
    deadline = time.monotonic() + 20
    while not base.offers(device="reach-laptop") and time.monotonic() < deadline:
        time.sleep(0.02)
    call("pick", on_device["id"], ceremony="d-1", device="reach-laptop")
    waiting.join(20)
    assert call("abort", "not-in-flight", device="reach-laptop") == {"aborted": False}
    call("remove_device", "reach-laptop")
    with pytest.raises(CredemuError) as refused:  # GPM has no reportUnusedPasswordCredential
        call("report_unused_password", "example.com", "alice@example.com")
    assert refused.value.name == "NotSupportedError"
    scenario = next((ROOT / "scenarios").glob("*.json"))
    call("run_scenario", scenario.read_text(), providers="gpm")
    assert "<html" in call("console_file").lower()
    call("console_file", "console.js"), call("console_file", "console.css"), call("console_file", "console.svg")
    # Playwright's credentials: seeded, listed (with the ceremonies' passkeys), and deleted as any passkey.
    seeded = call("create_credential", RP_ID, sign_count=7)
    assert set(seeded) == {"id", "rpId", "userHandle", "privateKey", "publicKey", "signCount"} and seeded["signCount"] == 0
    assert [c["id"] for c in call("credentials", id=seeded["id"])] == [seeded["id"]]
    call("remove_passkey", created["id"])
    # A move through a CXF document: the seeded passkey leaves for an apple profile.
    call("create_profile", "mac", pack="apple")
    moved = call("move_credentials", "reach", "mac", rp_id=RP_ID)
    assert seeded["id"] in moved["credentialIds"] and moved["importer"]["pack"] == "apple"
    # The mac profile's credentials as files over HTTP: a list format only when the private keys are asked for.
    cxf = call("export_vault", "cxf", include_secrets=True, profile="mac")
    assert cxf["includesSecrets"] and cxf["leftOut"] == [] and cxf["document"]["accounts"][0]["items"]
    with pytest.raises(CredemuError) as refused:
        call("export_vault", "webdriver", profile="mac")
    assert refused.value.name == "TypeError" and "includeSecrets" in str(refused.value)
    listed = call("export_vault", "webdriver", include_secrets=True, profile="mac")["document"]
    assert seeded["id"] in [c["credentialId"] for c in listed]
    for c in listed:
        call("remove_passkey", c["credentialId"], profile="mac")
    assert call("import_vault", listed, format="webdriver", profile="mac") == {"imported": {"passkeys": len(listed)}}
    # WebDriver's virtual authenticators, under Selenium's names.
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    pkcs8 = ec.generate_private_key(ec.SECP256R1()).private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                                                 serialization.NoEncryption())
    key = call("add_virtual_authenticator", {"protocol": "ctap2", "transport": "usb", "hasResidentKey": True})
    assert client.virtual_authenticator_id == key
    call("add_credential", {"credentialId": "AQID", "isResidentCredential": True, "rpId": RP_ID, "userHandle": "dXNlcg",
                            "privateKey": base64.urlsafe_b64encode(pkcs8).decode(), "signCount": 0})
    assert [c["credentialId"] for c in call("get_credentials")] == ["AQID"]
    assert call("set_response_override_bits", is_bad_up=True) == {"isBogusSignature": False, "isBadUV": False, "isBadUP": True}
    call("set_user_verified", False), call("set_credential_properties", b"\x01\x02\x03", backup_state=False, sign_count=None)
    call("remove_credential", b"\x01\x02\x03"), call("remove_all_credentials"), call("remove_virtual_authenticator")
    assert client.virtual_authenticator_id is None
    call("remove_profile")

    for name, reached in calls.items():
        listed = {route for route, names in ROUTES.items() if name in names}
        assert reached == listed, f"Client.{name} reached {reached}, ROUTES lists {listed}"
    assert {name for names in ROUTES.values() for name in names} == set(calls), "a listed method this test did not call"


def test_a_ceremony_answer_is_what_py_webauthn_verifies(credemu_server):
    client = credemu_server.client(origin=ORIGIN)
    client.create_profile("verify", pack="webauthn-spec")
    alice = client.for_profile("verify")
    options = generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name="alice")
    registration = alice.create(options_to_json(options))  # JSON text, as an RP's endpoint would send it
    verified = verify_registration_response(credential=registration, expected_challenge=options.challenge,
                                            expected_origin=ORIGIN, expected_rp_id=RP_ID)
    request = generate_authentication_options(rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=verified.credential_id)])
    assertion = alice.get(json.loads(options_to_json(request)))  # a dict
    verify_authentication_response(credential=assertion, expected_challenge=request.challenge, expected_origin=ORIGIN, expected_rp_id=RP_ID,
                                   credential_public_key=verified.credential_public_key, credential_current_sign_count=0)


def test_forge_next_gives_the_next_sign_in_one_fault_py_webauthn_refuses_once(credemu_server):
    client = credemu_server.client(origin=ORIGIN)
    client.create_profile("forged", pack="gpm")
    alice = client.for_profile("forged")
    options = generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name="alice")
    verified = verify_registration_response(credential=alice.create(options), expected_challenge=options.challenge,
                                            expected_origin=ORIGIN, expected_rp_id=RP_ID)
    with pytest.raises(CredemuError) as unknown:
        alice.forge_next("badSig")
    assert unknown.value.status == 400 and "badSignature" in str(unknown.value)
    assert alice.forge_next("badSignature")["forgery"] == "badSignature"

    def sign_in():
        request = generate_authentication_options(rp_id=RP_ID)
        verify_authentication_response(credential=alice.get(request), expected_challenge=request.challenge, expected_origin=ORIGIN,
                                       expected_rp_id=RP_ID, credential_public_key=verified.credential_public_key,
                                       credential_current_sign_count=0)

    with pytest.raises(Exception, match="(?i)signature"):
        sign_in()
    assert alice.pending_forgery()["forgery"] is None
    sign_in()  # once: the next answer is honest
    assert [e["outcome"] for e in alice.events(kind="get")].count("forged") == 1


def test_a_refusal_is_one_error_type_with_name_reason_dialects_and_status(credemu_server):
    client = credemu_server.client(origin=ORIGIN)
    client.create_profile("refusals", pack="gpm", platform="android")
    droid = client.for_profile("refusals")
    with pytest.raises(CredemuError) as caught:
        droid.create(generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name="nobody"), mediation="conditional")
    error = caught.value
    assert (error.status, error.name, error.reason, error.silent) == (422, "NotAllowedError", "noMatchingPassword", True)
    assert error.dialect == "android"
    assert error.dialects["android"]["exception"].startswith("androidx.credentials.exceptions.")
    assert set(error.dialects) == {"web", "android", "apple"}
    assert "noMatchingPassword" in str(error) and "POST /profiles/refusals/credentials/create" in str(error)

    with pytest.raises(CredemuError) as caught:
        client.get_profile("ghost")
    assert (caught.value.status, caught.value.name, caught.value.reason) == (404, "NotFound", None)
    with pytest.raises(CredemuError) as caught:
        client.create_profile("refusals")
    assert (caught.value.status, caught.value.name) == (409, "Conflict")
    with pytest.raises(CredemuError) as caught:
        client.create_profile("bad-pack", pack="no-such-pack")
    assert (caught.value.status, caught.value.name) == (422, "InvalidPolicyPack")
    with pytest.raises(CredemuError) as caught:
        droid.get({"challenge": "not base64url!"})
    assert (caught.value.status, caught.value.name) == (400, "TypeError")


def test_rename_passkey_is_the_users_edit_that_gpms_details_signal_keeps(credemu_server):
    client = credemu_server.client().for_profile("default", origin=ORIGIN)
    for name, pack in (("rename-gpm", "gpm"), ("rename-apple", "apple")):
        client.create_profile(name, pack=pack)
        profile = client.for_profile(name, origin=ORIGIN)
        made = profile.create(generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name="alice", user_id=b"alice-7"))
        renamed = profile.rename_passkey(made["id"], user_name="work alice", display_name="Alice at work")
        assert (renamed["userName"], renamed["displayName"], renamed["editedByUser"]) == ("work alice", "Alice at work", True)
        assert profile.rename_passkey(made["id"], display_name="A. at work")["userName"] == "work alice", "a name left out is kept"
        profile.signal_current_user_details(RP_ID, b"alice-7", "alice@new.example", "Alice New")
        after = profile.passkey(made["id"])
        # GPM keeps the user's edit (UpdatePasskey); Apple's signal renames the name only.
        assert after["userName"] == ("work alice" if pack == "gpm" else "alice@new.example"), (pack, after)
        assert after["displayName"] == "A. at work"
        for bad in ({"user_name": ""}, {"display_name": "a\u0007"}, {"user_name": "a" * 1025}, {}):
            with pytest.raises(CredemuError) as refused:
                profile.rename_passkey(made["id"], **bad)
            assert (refused.value.name, refused.value.status) == ("TypeError", 400), bad
        assert profile.passkey(made["id"]) == after, "a refused rename changes nothing"
        client.remove_profile(name)


def test_a_rate_limited_signal_carries_retry_millis(credemu_server):
    client = credemu_server.client(origin=ORIGIN)
    client.create_profile("quota", pack="gpm", platform="android")
    droid = client.for_profile("quota")
    with pytest.raises(CredemuError) as caught:
        for i in range(20):
            droid.signal_unknown_credential(RP_ID, bytes([i]) * 16)
    error = caught.value
    assert (error.status, error.reason) == (429, "rateLimited")
    assert error.retry_millis > 0
    # An Android app sees Play services' message and androidx's retryMillis parsed from it: the minute count, taken
    # as milliseconds unconverted (SignalCredentialStateController.parseRefillMinutesRegex).
    minutes = -(-error.retry_millis // 60000)
    android = error.dialects["android"]
    assert android["message"] == f"SignalCredentialState has been called too frequently. Please retry later after {minutes} minutes."
    assert android["retryMillis"] == minutes


def test_an_unreachable_server_is_a_credemu_error():
    with pytest.raises(CredemuError) as caught:
        Client("http://127.0.0.1:9", timeout=5).health()
    assert caught.value.name == "ServerUnreachable" and caught.value.status is None


def test_errors_survive_pickling_for_parallel_runners():
    import pickle
    error = CredemuError("NotAllowedError", "no", status=422, body={"name": "NotAllowedError", "reason": "optOut"}, method="POST", path="/x")
    again = pickle.loads(pickle.dumps(error))
    assert (again.name, again.reason, again.status, str(again)) == ("NotAllowedError", "optOut", 422, str(error))


def test_ids_in_bytes_are_sent_as_base64url(credemu_server):
    client = credemu_server.client(origin=ORIGIN)
    client.create_profile("ids", pack="webauthn-spec")
    spec = client.for_profile("ids")
    created = spec.create(generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name="bob"))
    raw = base64.urlsafe_b64decode(created["rawId"] + "=" * (-len(created["rawId"]) % 4))
    assert spec.passkey(raw)["credentialId"] == created["id"]
    assert credemu.origin_of("HTTP://LocalHost:8000/a/b?c") == "http://localhost:8000"


def test_a_device_answer_names_the_account_that_answered_and_a_refusal_the_one_that_refused(credemu_server):
    client = credemu_server.client(origin=ORIGIN)
    client.create_profile("acct-gpm", pack="gpm")
    client.create_profile("acct-bw", pack="bitwarden")
    created = client.create_device("desk", providers=["acct-gpm", "acct-bw"], browser_signed_in=True)
    assert (created["platform"], created["providers"], created["preferred"]) == ("chrome-desktop", ["acct-gpm", "acct-bw"], None)
    desk = client.for_device("desk")
    options = generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name="erin")
    registration = desk.create(options)
    # Bitwarden's page script takes navigator.credentials.create on desktop Chrome.
    assert isinstance(registration, credemu.Answer) and registration.provider == "acct-bw"
    verify_registration_response(credential=registration, expected_challenge=options.challenge, expected_origin=ORIGIN,
                                 expected_rp_id=RP_ID)
    assert [k["credentialId"] for k in client.passkeys(profile="acct-bw")] == [registration["id"]]
    assert client.passkeys(profile="acct-gpm") == []
    # The extension never gets signals; the browser's own manager does.
    assert desk.signal_unknown_credential(RP_ID, b"\x03" * 16) == ["acct-gpm"]
    assert client.signal_unknown_credential(RP_ID, b"\x03" * 16, profile="acct-gpm") is None
    assert desk.get_client_capabilities()["profile"] == "acct-bw"
    # A profile named in the call wins over the client's device; naming both is the caller's mistake.
    assert desk.get_client_capabilities(profile="acct-gpm")["profile"] == "acct-gpm"
    with pytest.raises(TypeError):
        desk.create(options, profile="acct-gpm", device="desk")
    with pytest.raises(TypeError):
        client.get_device()

    client.create_device("droid", providers="acct-gpm", platform="chrome-android")
    with pytest.raises(CredemuError) as caught:
        client.create(generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name="nobody"), device="droid",
                      mediation="conditional")
    assert (caught.value.reason, caught.value.silent, caught.value.profile) == ("noMatchingPassword", True, "acct-gpm")

    with pytest.raises(CredemuError) as caught:
        client.remove_profile("acct-gpm")
    assert (caught.value.status, caught.value.name) == (409, "Conflict")
    with pytest.raises(CredemuError) as caught:
        client.update_device("desk", preferred="nobody")
    assert (caught.value.status, caught.value.name) == (400, "InvalidDeviceSetting")
    assert client.update_device("desk", providers=["acct-gpm"])["providers"] == ["acct-gpm"]
    assert {d["name"] for d in client.devices()} == {"desk", "droid"}
    client.remove_device("droid"), client.remove_device("desk")
    assert client.remove_profile("acct-gpm") is not None


def test_the_shim_for_a_device_routes_its_ceremonies_and_keeps_passwords_with_the_creating_account(credemu_server):
    client = credemu_server.client()
    client.create_profile("shim-gpm", pack="gpm")
    client.create_profile("shim-bw", pack="bitwarden")
    client.create_device("shim-desk", providers=["shim-gpm", "shim-bw"])
    script = client.for_device("shim-desk").shim()
    config = shim_config(script)
    # The page's script names the device only; the server sends its passwords to the account behind it.
    assert config["device"] == "shim-desk" and "profile" not in config and "shim-" not in json.dumps({k: v for k, v in config.items() if k != "device"})
    assert "device" not in shim_config(client.shim("shim-gpm"))
    client.for_device("shim-desk").save_password("ann", "pw", origin="https://shop.example")
    assert [p["username"] for p in client.passwords(profile="shim-bw")] == ["ann"]


def shim_config(script):
    """The configuration the server baked into the shim: the wrapper function's argument, on its last line."""
    last = script.rstrip().splitlines()[-1]
    assert last.startswith("})(") and last.endswith(");"), last
    return json.loads(last[3:-2])
