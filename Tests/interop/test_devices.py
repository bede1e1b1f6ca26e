"""Devices over the HTTP API (issue 12): every /devices route on a running `credemu serve`, each answer checked
against the OpenAPI document (api_client), the answering provider account in X-Credemu-Provider, the settings a
device cannot have refused by name with the vault unchanged, a page acting for another origin refused, and two
devices sharing one GPM account (its passkeys and its opt-out)."""
import json
import subprocess
import threading
import time

import pytest
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import base64url_to_bytes
from webauthn.helpers.structs import PublicKeyCredentialDescriptor

from api_client import Server
from conftest import BINARY

ORIGIN = "https://shop.example.com"
RP_ID = "shop.example.com"
PAGE = "https://rp.example"


@pytest.fixture
def server(tmp_path):
    s = Server(BINARY, tmp_path)
    yield s
    assert s.stop() == 0, "the server survived every request and stops cleanly"


def registration(user):
    options = generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name=user)
    return options, json.loads(options_to_json(options))


def request_options(allow=()):
    options = generate_authentication_options(rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=i) for i in allow])
    return options, json.loads(options_to_json(options))


def profiles(server, *specs):
    for name, pack in specs:
        status, body = server.call("POST", "/profiles", {"name": name, "pack": pack})
        assert status == 201, body


def provider(server):
    return server.last_headers.get("X-Credemu-Provider")


def wait_for_offer(server, device, ceremony):
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        status, body = server.call("GET", f"/devices/{device}/offer")
        assert status == 200, body
        offer = next((o for o in body["offers"] if o["ceremony"] == ceremony), None)
        if offer:
            return offer
        time.sleep(0.02)
    raise AssertionError(f"no dropdown for ceremony {ceremony} on {device}")


def in_background(call):
    """A request that waits (a conditional get), on its own thread; its (status, body) lands in result["answer"]."""
    result = {}
    thread = threading.Thread(target=lambda: result.update(answer=call()), daemon=True)
    thread.start()
    return thread, result


def test_every_device_route_and_the_account_each_answer_names(server):
    profiles(server, ("g", "gpm"), ("bw", "bitwarden"))
    assert server.call("GET", "/devices") == (200, {"devices": []})
    status, laptop = server.call("POST", "/devices", {"name": "laptop", "providers": ["g", "bw"], "browserSignedIn": True})
    assert status == 201 and (laptop["platform"], laptop["providers"], laptop["preferred"]) == ("chrome-desktop", ["g", "bw"], None)
    assert server.call("GET", "/devices/laptop") == (200, laptop)
    status, changed = server.call("PATCH", "/devices/laptop", {"syncEnabled": True, "privateBrowsing": False})
    assert status == 200 and changed == laptop
    assert [d["name"] for d in server.call("GET", "/devices")[1]["devices"]] == ["laptop"]

    # Desktop Chrome: Bitwarden's page script takes the create.
    options, body = registration("alice")
    status, created = server.call("POST", "/devices/laptop/credentials/create", {"origin": ORIGIN, "options": body})
    assert status == 200 and provider(server) == "bw", created
    verified = verify_registration_response(credential=created, expected_challenge=options.challenge, expected_origin=ORIGIN,
                                            expected_rp_id=RP_ID)
    assert [k["credentialId"] for k in server.call("GET", "/profiles/bw/passkeys")[1]["passkeys"]] == [created["id"]]
    assert server.call("GET", "/profiles/g/passkeys")[1]["passkeys"] == []
    events = server.call("GET", "/profiles/bw/events?kind=create")[1]["events"]
    assert events[-1]["detail"]["device"] == "laptop"

    options, body = request_options([verified.credential_id])
    status, assertion = server.call("POST", "/devices/laptop/credentials/get", {"origin": ORIGIN, "options": body})
    assert status == 200 and provider(server) == "bw"
    verify_authentication_response(credential=assertion, expected_challenge=options.challenge, expected_origin=ORIGIN, expected_rp_id=RP_ID,
                                   credential_public_key=verified.credential_public_key, credential_current_sign_count=0)

    # The page's API is the extension's; its answer is the profile route's for that account.
    status, capabilities = server.call("GET", "/devices/laptop/capabilities")
    assert status == 200 and capabilities["profile"] == "bw"
    assert capabilities == server.call("GET", "/profiles/bw/capabilities")[1]

    # The extension never gets signals: the browser's own manager does.
    signal = {"origin": ORIGIN, "options": {"rpId": RP_ID, "credentialId": created["id"]}}
    assert server.call("POST", "/devices/laptop/signals/unknown", signal) == (200, {"resolved": True})
    assert provider(server) == "g"
    assert [k["credentialId"] for k in server.call("GET", "/profiles/bw/passkeys")[1]["passkeys"]] == [created["id"]]
    assert server.call("GET", "/profiles/bw/events?kind=signal")[1]["events"] == []
    assert server.call("GET", "/profiles/g/events?kind=signal")[1]["events"], "GPM got the signal"

    # A conditional get waits for the simulated user's pick from the device's dropdown.
    _, body = request_options()
    thread, result = in_background(lambda: server.call("POST", "/devices/laptop/credentials/get",
                                                       {"origin": ORIGIN, "options": body, "mediation": "conditional", "ceremony": "c-1"}))
    offer = wait_for_offer(server, "laptop", "c-1")
    assert [(p["credentialId"], p["provider"]) for p in offer["passkeys"]] == [(created["id"], "bw")]
    assert server.call("POST", "/devices/laptop/offer/pick", {"credentialId": created["id"], "ceremony": "c-1"}) == \
        (200, {"picked": created["id"], "ceremony": "c-1"})
    thread.join(20)
    assert result["answer"][0] == 200 and result["answer"][1]["id"] == created["id"]

    # The page aborts a waiting one.
    thread, result = in_background(lambda: server.call("POST", "/devices/laptop/credentials/get",
                                                       {"origin": ORIGIN, "options": body, "mediation": "conditional", "ceremony": "c-2"}))
    wait_for_offer(server, "laptop", "c-2")
    assert server.call("POST", "/devices/laptop/ceremonies/c-2/abort") == (200, {"aborted": True})
    thread.join(20)
    status, error = result["answer"]
    assert status >= 400 and error["error"]["name"] == "AbortError", error
    assert server.call("POST", "/devices/laptop/ceremonies/c-2/abort") == (200, {"aborted": False})
    assert server.call("POST", "/devices/laptop/offer/pick", {"credentialId": created["id"]})[0] == 404, "no dropdown open"

    # An account a device names cannot go; the device can, and its accounts stay.
    status, error = server.call("DELETE", "/profiles/g")
    assert status == 409 and error["error"]["name"] == "Conflict" and "laptop" in error["error"]["message"]
    assert server.call("DELETE", "/devices/laptop") == (200, {"removed": "laptop"})
    assert server.call("DELETE", "/devices/laptop")[0] == 404
    assert server.call("DELETE", "/profiles/g")[0] == 200
    assert server.call("GET", "/profiles/bw/passkeys")[1]["passkeys"], "the account outlives the device"


def test_a_device_that_does_not_exist_is_404_on_every_route(server):
    _, body = registration("nobody")
    for method, path, payload in [
        ("GET", "/devices/ghost", None), ("PATCH", "/devices/ghost", {"privateBrowsing": True}), ("DELETE", "/devices/ghost", None),
        ("POST", "/devices/ghost/credentials/create", {"origin": ORIGIN, "options": body}),
        ("POST", "/devices/ghost/credentials/get", {"origin": ORIGIN, "options": request_options()[1]}),
        ("POST", "/devices/ghost/ceremonies/c-1/abort", {}), ("GET", "/devices/ghost/offer", None),
        ("POST", "/devices/ghost/offer/pick", {"credentialId": "AAAA"}),
        ("POST", "/devices/ghost/signals/unknown", {"origin": ORIGIN, "options": {"rpId": RP_ID, "credentialId": "AAAA"}}),
        ("GET", "/devices/ghost/capabilities", None), ("GET", "/devices/ghost/passwords", None),
        ("POST", "/devices/ghost/passwords", {"origin": ORIGIN, "username": "u", "password": "p"}),
        ("POST", "/devices/ghost/passwords/use", {"origin": ORIGIN, "username": "u"}),
        ("POST", "/devices/ghost/passwords/report-unused", {"domain": RP_ID, "userName": "u"}),
        ("POST", "/devices/ghost/autofill", {"origin": ORIGIN}),
    ]:
        status, error = server.call(method, path, payload)
        assert status == 404 and error["error"]["name"] == "NotFound", (method, path, status, error)
    assert server.call("GET", "/devices")[1] == {"devices": []}


def test_a_devices_passwords_are_the_account_that_takes_its_creates(server):
    # Android 14 with GPM and a third-party provider, that one preferred: its creates and its passwords are its own.
    profiles(server, ("phone-gpm", "gpm"), ("phone-bw", "generic-third-party"))
    status, body = server.call("POST", "/devices", {"name": "phone", "platform": "android", "providers": ["phone-gpm", "phone-bw"],
                                                    "preferred": "phone-bw", "osVersion": "14"})
    assert status == 201, body
    status, saved = server.call("POST", "/devices/phone/passwords", {"origin": ORIGIN, "username": "ann", "password": "pw"})
    assert status == 201 and saved["username"] == "ann", saved
    assert [p["username"] for p in server.call("GET", "/devices/phone/passwords")[1]["passwords"]] == ["ann"]
    assert [p["username"] for p in server.call("GET", "/profiles/phone-bw/passwords")[1]["passwords"]] == ["ann"]
    assert server.call("GET", "/profiles/phone-gpm/passwords")[1]["passwords"] == []
    status, filled = server.call("POST", "/devices/phone/autofill", {"origin": ORIGIN, "submit": True})
    assert status == 200 and filled["username"] == "ann", filled
    assert server.call("POST", "/devices/phone/passwords/use", {"origin": ORIGIN, "username": "ann"})[0] == 200
    status, reported = server.call("POST", "/devices/phone/passwords/report-unused", {"domain": RP_ID, "userName": "ann"})
    assert status in (200, 422), reported


def device_state(server):
    """What the vault holds as the API shows it: devices, profiles and each profile's passkeys."""
    listed = server.call("GET", "/profiles")[1]["profiles"]
    return (server.call("GET", "/devices")[1], listed,
            [server.call("GET", f"/profiles/{p['name']}/passkeys")[1] for p in listed])


NINE = [f"p{n}" for n in range(9)]


@pytest.mark.parametrize("body, status, name", [
    ({"name": "d", "providers": ["g", "missing"]}, 404, "NotFound"),
    ({"name": "d", "providers": ["g"], "platform": "macos"}, 400, "TypeError"),  # the gpm pack does not model macOS apps
    ({"name": "d", "providers": ["bw"], "platform": "android"}, 400, "TypeError"),  # nor Bitwarden's Android
    ({"name": "d", "providers": ["g", "bw"], "preferred": "apple"}, 400, "InvalidDeviceSetting"),  # apple is a profile, not a provider here
    ({"name": "d", "providers": NINE}, 400, "InvalidDeviceSetting"),
    ({"name": "d", "providers": ["g", "g"]}, 400, "InvalidDeviceSetting"),
    ({"name": "d", "providers": []}, 400, "InvalidDeviceSetting"),
    ({"name": "d", "providers": "g,,bw"}, 400, "InvalidDeviceSetting"),
    ({"name": "d", "providers": [1]}, 400, "InvalidDeviceSetting"),
    ({"name": "d", "providers": ["../g"]}, 400, "InvalidDeviceSetting"),
    ({"name": "d"}, 400, "TypeError"),
    ({"name": "d", "providers": ["g"], "pack": "gpm"}, 400, "InvalidDeviceSetting"),  # a pack is an account's, not a device's
    ({"name": "d", "providers": ["g"], "platform": "windows"}, 400, "InvalidDeviceSetting"),
    ({"name": "d", "providers": ["g"], "passcodeSet": "maybe"}, 400, "InvalidDeviceSetting"),
    ({"name": "d", "providers": ["g"], "osVersion": 14}, 400, "InvalidDeviceSetting"),
    ({"name": "../etc", "providers": ["g"]}, 400, "TypeError"),
    ({"name": "x" * 65, "providers": ["g"]}, 400, "TypeError"),
    ({"name": "laptop", "providers": ["g"]}, 409, "Conflict"),
    ({"providers": ["g"]}, 400, "TypeError"),
])
def test_a_device_it_cannot_be_is_refused_by_name_and_the_vault_unchanged(server, body, status, name):
    profiles(server, ("g", "gpm"), ("bw", "bitwarden"), ("apple", "apple"), *[(p, "gpm") for p in NINE])
    assert server.call("POST", "/devices", {"name": "laptop", "providers": ["g", "bw"]})[0] == 201
    before = device_state(server)
    got, error = server.call("POST", "/devices", body)
    assert (got, error["error"]["name"]) == (status, name), error
    assert error["error"]["message"]
    settings = {k: v for k, v in body.items() if k != "name"}
    if body.get("name") == "d" and settings:
        # The same settings as a change of an existing device are refused alike.
        got, error = server.call("PATCH", "/devices/laptop", settings)
        assert (got, error["error"]["name"]) == (status, name), (settings, error)
    assert device_state(server) == before


def test_the_preferred_account_must_stay_among_the_providers(server):
    profiles(server, ("a", "gpm"), ("b", "gpm"))
    assert server.call("POST", "/devices", {"name": "phone", "platform": "chrome-android", "providers": ["a", "b"], "preferred": "b"})[0] == 201
    before = device_state(server)
    status, error = server.call("PATCH", "/devices/phone", {"providers": ["a"]})
    assert status == 400 and error["error"]["name"] == "InvalidDeviceSetting" and "preferred" in error["error"]["message"]
    assert device_state(server) == before
    status, phone = server.call("PATCH", "/devices/phone", {"providers": ["a"], "preferred": None})
    assert status == 200 and (phone["providers"], phone["preferred"]) == (["a"], None)


def test_a_page_acting_for_another_origin_on_a_device_gets_security_error(tmp_path):
    s = Server(BINARY, tmp_path, "--allow-origin", PAGE)
    try:
        profiles(s, ("g", "gpm"), ("bw", "bitwarden"))
        assert s.call("POST", "/devices", {"name": "laptop", "providers": ["g", "bw"]})[0] == 201
        status, created = s.call("POST", "/devices/laptop/credentials/create", {"origin": ORIGIN, "options": registration("alice")[1]})
        assert status == 200, created
        before = device_state(s)
        page = {"Origin": PAGE}
        for path, body in [
            ("/devices/laptop/credentials/create", {"origin": ORIGIN, "options": registration("mallory")[1]}),
            ("/devices/laptop/credentials/get", {"origin": ORIGIN, "options": request_options()[1]}),
            ("/devices/laptop/credentials/get", {"origin": "android:apk-key-hash:" + "A" * 43, "options": request_options()[1]}),
            ("/devices/laptop/signals/unknown", {"origin": ORIGIN, "options": {"rpId": RP_ID, "credentialId": created["id"]}}),
            ("/devices/laptop/signals/accepted", {"origin": ORIGIN, "options": {"rpId": RP_ID, "userId": "AAAA", "allAcceptedCredentialIds": []}}),
            ("/devices/laptop/signals/details", {"origin": ORIGIN, "options": {"rpId": RP_ID, "userId": "AAAA", "name": "m", "displayName": "M"}}),
        ]:
            status, error = s.call("POST", path, body, headers=page)
            assert status == 403 and error["error"]["name"] == "SecurityError", (path, status, error)
            assert s.last_headers.get("Access-Control-Allow-Origin") == PAGE
            assert s.last_headers.get("X-Credemu-Provider") is None
        assert device_state(s) == before
        # Its own origin it may use: the body may leave the origin out, and the page's is taken.
        status, own = s.call("POST", "/devices/laptop/credentials/create",
                             {"options": json.loads(options_to_json(generate_registration_options(rp_id="rp.example", rp_name="RP", user_name="bob")))},
                             headers=page)
        # Which account answered is the test code's to know, never the page's: the header is not sent to a page.
        assert status == 200 and s.last_headers.get("X-Credemu-Provider") is None, own
        assert "X-Credemu-Provider" not in s.last_headers.get("Access-Control-Expose-Headers", "")
        status, listed = s.call("GET", "/profiles/bw/passkeys")
        assert status == 200 and own["id"] in [p["credentialId"] for p in listed["passkeys"]], listed
    finally:
        assert s.stop() == 0


def test_two_devices_on_one_gpm_account_share_its_passkeys_and_its_opt_out(server):
    profiles(server, ("alice-gpm", "gpm"))
    assert server.call("POST", "/devices", {"name": "laptop", "providers": ["alice-gpm"]})[0] == 201
    assert server.call("POST", "/devices", {"name": "phone", "platform": "chrome-android", "providers": ["alice-gpm"]})[0] == 201
    options, body = registration("alice")
    status, created = server.call("POST", "/devices/laptop/credentials/create", {"origin": ORIGIN, "options": body})
    assert status == 200 and provider(server) == "alice-gpm"
    verified = verify_registration_response(credential=created, expected_challenge=options.challenge, expected_origin=ORIGIN,
                                            expected_rp_id=RP_ID)

    # Made on the laptop, offered on the phone, and it signs in there.
    request, body = request_options()
    thread, result = in_background(lambda: server.call("POST", "/devices/phone/credentials/get",
                                                       {"origin": ORIGIN, "options": body, "mediation": "conditional", "ceremony": "on-phone"}))
    offer = wait_for_offer(server, "phone", "on-phone")
    assert [(p["credentialId"], p["provider"]) for p in offer["passkeys"]] == [(created["id"], "alice-gpm")]
    assert server.call("POST", "/devices/phone/offer/pick", {"credentialId": created["id"], "ceremony": "on-phone"})[0] == 200
    thread.join(20)
    status, assertion = result["answer"]
    assert status == 200, assertion
    verify_authentication_response(credential=assertion, expected_challenge=request.challenge, expected_origin=ORIGIN, expected_rp_id=RP_ID,
                                   credential_public_key=verified.credential_public_key, credential_current_sign_count=0)
    events = server.call("GET", "/profiles/alice-gpm/events?kind=get")[1]["events"]
    assert events[-1]["detail"]["device"] == "phone" and events[-1]["detail"]["platform"] == "chrome-android"

    # A password the account holds, used on the phone, makes an automatic upgrade there eligible ...
    def use_password(user):
        assert server.call("POST", "/profiles/alice-gpm/passwords", {"origin": ORIGIN, "username": user, "password": "pw"})[0] == 201
        assert server.call("POST", "/profiles/alice-gpm/passwords/use", {"origin": ORIGIN, "username": user})[0] == 200

    use_password("bob")
    status, upgraded = server.call("POST", "/devices/phone/credentials/create",
                                   {"origin": ORIGIN, "options": registration("bob")[1], "mediation": "conditional"})
    assert status == 200 and provider(server) == "alice-gpm", upgraded
    # ... until the user turns automatic passkey creation off for the account: then on both devices it is a
    # silent no-op (the setting is the account's, so it syncs).
    use_password("carol")
    assert server.call("PATCH", "/profiles/alice-gpm", {"automaticPasskeyUpgrades": False})[1]["automaticPasskeyUpgrades"] is False
    before = server.call("GET", "/profiles/alice-gpm/passkeys")[1]
    for device in ("phone", "laptop"):
        status, error = server.call("POST", f"/devices/{device}/credentials/create",
                                    {"origin": ORIGIN, "options": registration("carol")[1], "mediation": "conditional"})
        assert status == 422, error
        assert (error["error"]["reason"], error["error"]["silent"], error["error"]["profile"]) == ("optOut", True, "alice-gpm")
    assert server.call("GET", "/profiles/alice-gpm/passkeys")[1] == before
    noops = [e for e in server.call("GET", "/profiles/alice-gpm/events?kind=create")[1]["events"] if e["outcome"] == "noop"]
    assert [(e["reason"], e["detail"]["device"]) for e in noops] == [("optOut", "phone"), ("optOut", "laptop")]
    assert base64url_to_bytes(created["id"]) == verified.credential_id


def test_a_passkey_picked_from_the_second_account_signs_in_with_that_accounts_key(server):
    profiles(server, ("g", "gpm"), ("bw", "bitwarden"))
    assert server.call("POST", "/devices", {"name": "gpm-only", "providers": ["g"]})[0] == 201
    assert server.call("POST", "/devices", {"name": "laptop", "providers": ["g", "bw"]})[0] == 201
    keys = {}
    for device, user in (("gpm-only", "alice"), ("laptop", "bob")):
        options, body = registration(user)
        status, created = server.call("POST", f"/devices/{device}/credentials/create", {"origin": ORIGIN, "options": body})
        assert status == 200, created
        keys[created["id"]] = (provider(server), verify_registration_response(
            credential=created, expected_challenge=options.challenge, expected_origin=ORIGIN, expected_rp_id=RP_ID).credential_public_key)
    assert sorted(account for account, _ in keys.values()) == ["bw", "g"]
    for picked, (account, key) in keys.items():
        request, body = request_options()
        thread, result = in_background(lambda: server.call("POST", "/devices/laptop/credentials/get",
                                                           {"origin": ORIGIN, "options": body, "mediation": "conditional", "ceremony": "pick-" + account}))
        offer = wait_for_offer(server, "laptop", "pick-" + account)
        # The extension's passkeys first (it answers before the browser), then the browser's own manager's.
        assert [p["provider"] for p in offer["passkeys"]] == ["bw", "g"]
        assert server.call("POST", "/devices/laptop/offer/pick", {"credentialId": picked, "ceremony": "pick-" + account})[0] == 200
        thread.join(20)
        status, assertion = result["answer"]
        assert status == 200 and assertion["id"] == picked, assertion
        verify_authentication_response(credential=assertion, expected_challenge=request.challenge, expected_origin=ORIGIN,
                                       expected_rp_id=RP_ID, credential_public_key=key, credential_current_sign_count=0)
        assert server.call("GET", f"/profiles/{account}/events?kind=get")[1]["events"][-1]["outcome"] == "success"


def test_a_profile_and_a_device_of_its_one_account_answer_alike_over_http_and_the_cli(server, tmp_path):
    """One path for every target: the same operation on the default profile and on a device whose one account it is."""
    status, body = server.call("POST", "/devices", {"name": "desk", "platform": "chrome-desktop", "providers": ["default"]})
    assert status == 201, body
    prefixes = ["/profiles/default", "/devices/desk"]
    made = []
    for n, prefix in enumerate(prefixes):
        options, body = registration(f"user{n}")
        status, created = server.call("POST", prefix + "/credentials/create", {"origin": ORIGIN, "options": body})
        assert status == 200, created
        made.append(created)
    flags = [base64url_to_bytes(c["response"]["authenticatorData"])[32] for c in made]
    assert flags[0] == flags[1], flags
    for prefix in prefixes:
        for created in made:
            status, got = server.call("POST", prefix + "/credentials/get", {"origin": ORIGIN, "options": request_options([base64url_to_bytes(created["id"])])[1]})
            assert status == 200 and got["id"] == created["id"], got
    assert server.call("GET", prefixes[0] + "/capabilities") == server.call("GET", prefixes[1] + "/capabilities")
    # Refusals alike: an algorithm GPM does not make, malformed options, a signal of no kind.
    _, rsa = registration("rsa")
    rsa["pubKeyCredParams"] = [{"type": "public-key", "alg": -257}]
    for tail, payload in [("/credentials/create", {"origin": ORIGIN, "options": rsa}), ("/credentials/create", {"origin": ORIGIN, "options": 7}),
                          ("/signals/bogus", {"origin": ORIGIN, "options": {}})]:
        answers = [server.call("POST", prefix + tail, payload) for prefix in prefixes]
        assert answers[0] == answers[1] and answers[0][0] >= 400, answers
    # A platform is a profile's to choose; a device refuses one, over HTTP as on the command line.
    assert server.call("GET", prefixes[0] + "/capabilities?platform=chrome-android")[0] == 200
    assert server.call("GET", prefixes[1] + "/capabilities?platform=chrome-android")[0] == 400

    vault = str(tmp_path / "cli.db")
    run = lambda *args: subprocess.run([BINARY, "--vault", vault, *args], capture_output=True, text=True, timeout=60)
    assert run("device", "create", "desk", "--providers", "default").returncode == 0
    options_file = tmp_path / "rsa.json"
    options_file.write_text(json.dumps(rsa))
    refusals = [run(*target, "create", "--origin", ORIGIN, "--options", str(options_file)) for target in ([], ["--device", "desk"])]
    assert [r.returncode for r in refusals] == [1, 1] and refusals[0].stdout == refusals[1].stdout, refusals
    capabilities = [run(*target, "capabilities") for target in ([], ["--device", "desk"])]
    assert capabilities[0].stdout == capabilities[1].stdout and capabilities[0].returncode == 0, capabilities
    assert run("--device", "desk", "capabilities", "--platform", "chrome-android").returncode == 2


def test_a_key_plugged_in_and_a_linked_phone_answer_through_the_devices_sheet_and_verify(server):
    # The laptop's GPM is a platform authenticator: a cross-platform create goes to the plugged security key (packed
    # attestation chaining to the vault's root, BE=0, a growing counter); `use:pixel` on the device's own queue sends
    # the next one to the linked phone over hybrid, answered by the phone's GPM account as a cross-platform authenticator.
    from webauthn import verify_registration_response, verify_authentication_response
    from webauthn.helpers.structs import AttestationFormat, AttestationConveyancePreference, AuthenticatorSelectionCriteria, \
        AuthenticatorAttachment, ResidentKeyRequirement
    SHOP = "https://" + RP_ID
    profiles(server, ("laptop-gpm", "gpm"), ("key1", "security-key"))
    assert server.call("POST", "/profiles", {"name": "phone-gpm", "pack": "gpm", "platform": "chrome-android"})[0] == 201
    assert server.call("POST", "/devices", {"name": "pixel", "platform": "chrome-android", "providers": ["phone-gpm"]})[0] == 201
    status, body = server.call("POST", "/devices", {"name": "laptop", "providers": ["laptop-gpm"], "authenticators": ["key1"],
                                                     "phones": ["pixel"]})
    assert status == 201 and body["authenticators"] == ["key1"] and body["phones"] == ["pixel"], body
    status, root = server.call("GET", "/attestation/root")
    assert status == 200 and root["pem"].startswith("-----BEGIN CERTIFICATE-----"), root

    def register(user):
        options = generate_registration_options(
            rp_id=RP_ID, rp_name="Shop", user_name=user, attestation=AttestationConveyancePreference.DIRECT,
            authenticator_selection=AuthenticatorSelectionCriteria(authenticator_attachment=AuthenticatorAttachment.CROSS_PLATFORM,
                                                                   resident_key=ResidentKeyRequirement.DISCOURAGED))
        status, response = server.call("POST", "/devices/laptop/credentials/create", {"origin": SHOP, "options": json.loads(options_to_json(options))})
        assert status == 200, response
        verified = verify_registration_response(credential=response, expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                                expected_origin=SHOP,
                                                pem_root_certs_bytes_by_fmt={AttestationFormat.PACKED: [root["pem"].encode()]})
        return response, verified, provider(server)

    key_response, key, answered = register("alice")
    assert answered == "key1" and key.fmt == AttestationFormat.PACKED and not key.credential_backed_up
    assert str(key.aaguid) == "2fc0579f-8113-47ea-b116-bb5a8db9202a" and key_response["authenticatorAttachment"] == "cross-platform"
    counts = []
    for _ in range(2):
        options, body = request_options(allow=[key.credential_id])
        status, assertion = server.call("POST", "/devices/laptop/credentials/get", {"origin": SHOP, "options": body})
        assert status == 200 and provider(server) == "key1", assertion
        counts.append(verify_authentication_response(credential=assertion, expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                                     expected_origin=SHOP, credential_public_key=key.credential_public_key,
                                                     credential_current_sign_count=counts[-1] if counts else 0).new_sign_count)
    assert counts == [1, 2], "a security key's counter grows, and py_webauthn accepts each"

    assert server.call("POST", "/devices/laptop/user", {"decisions": ["use:pixel"]})[1] == {"pending": ["use:pixel"]}
    assert server.call("GET", "/devices/laptop/user")[1] == {"pending": ["use:pixel"]}
    phone_response, phone, answered = register("bob")
    assert answered == "phone-gpm" and phone.fmt == AttestationFormat.NONE and phone.credential_backed_up
    assert phone_response["authenticatorAttachment"] == "cross-platform"
    assert phone_response["response"]["transports"] == ["hybrid", "internal"]
    assert server.call("GET", "/devices/laptop/user")[1] == {"pending": []}, "the sheet took its decision"
    [hybrid] = server.call("GET", "/profiles/laptop-gpm/events?kind=hybrid")[1]["events"]
    assert hybrid["detail"]["phone"] == "pixel" and hybrid["detail"]["reachedBy"] == "linked phone", hybrid

    assert server.call("POST", "/devices/laptop/user", {"decisions": ["use:nowhere"]})[0] == 200
    assert server.call("DELETE", "/devices/laptop/user")[1] == {"pending": []}
    status, error = server.call("PATCH", "/devices/laptop", {"phones": ["nowhere"]})
    assert status == 400 and "nowhere" in error["error"]["message"], error
