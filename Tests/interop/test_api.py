"""The HTTP API against a running `credemu serve`: every route, good and bad input, each response checked
against the OpenAPI document, and the vault unchanged by every refused request."""
import json
import os
import subprocess
import threading
import time

import pytest
from webauthn import generate_authentication_options, generate_registration_options, options_to_json, verify_registration_response
from webauthn.helpers import bytes_to_base64url
from webauthn.helpers.structs import PublicKeyCredentialDescriptor

from api_client import Server
from conftest import BINARY, Credemu, verify_authentication_both, verify_registration_both

ORIGIN = "https://shop.example.com"


@pytest.fixture
def server(tmp_path):
    s = Server(BINARY, tmp_path)
    yield s
    assert s.stop() == 0, "SIGTERM shuts the server down cleanly"


def reg_options(user="alice@example.com", **kw):
    options = generate_registration_options(rp_id="example.com", rp_name="Shop", user_name=user, **kw)
    return options, json.loads(options_to_json(options))


def vault_state(server, profile="default"):
    return [server.call("GET", f"/profiles/{profile}/passkeys")[1], server.call("GET", f"/profiles/{profile}/passwords")[1]]


def test_first_line_is_the_url_and_health_answers(server):
    assert server.first_line == server.url
    health = server.call("GET", "/health")[1]
    assert health["status"] == "ok"
    printed = subprocess.run([BINARY, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert printed == health["version"] + (f" ({health['commit']})" if health["commit"] else ""), (printed, health)
    status, doc = server.call("GET", "/openapi.json")
    assert status == 200 and doc["openapi"] == "3.1.0"
    status, providers = server.call("GET", "/providers")
    assert {"gpm", "apple", "bitwarden", "webauthn-spec"} <= {p["id"] for p in providers["providers"]}


def test_profiles_crud_and_bad_settings(server):
    assert server.call("GET", "/profiles")[1]["profiles"][0]["name"] == "default"
    status, created = server.call("POST", "/profiles", {"name": "ios", "pack": "apple", "platform": "ios", "osVersion": "18.1"})
    assert status == 201 and created["platform"] == "ios"
    assert server.call("POST", "/profiles", {"name": "ios"})[0] == 409
    assert server.call("POST", "/profiles", {"name": "x", "platform": "windows"})[0] == 400
    assert server.call("POST", "/profiles", {"name": "y", "pack": "nope"})[0] == 422, "a pack that cannot be loaded is InvalidPolicyPack (422) everywhere"
    assert server.call("POST", "/profiles", {"name": "z", "passcodeSet": "maybe"})[0] == 400
    assert server.call("PATCH", "/profiles/ios", {"automaticPasskeyUpgrades": False})[1]["automaticPasskeyUpgrades"] is False
    assert server.call("GET", "/profiles/ios")[1]["automaticPasskeyUpgrades"] is False
    assert server.call("GET", "/profiles/ghost")[0] == 404
    assert server.call("DELETE", "/profiles/ios")[0] == 200
    assert server.call("DELETE", "/profiles/ios")[0] == 404


def test_upgrade_through_the_api_with_a_virtual_clock(server):
    server.call("POST", "/clock", {"set": "2026-11-29T10:00:00Z"})
    assert server.call("POST", "/profiles/default/passwords", {"origin": ORIGIN, "username": "alice@example.com", "password": "pw"})[0] == 201
    assert server.call("POST", "/clock", {"advance": "1d"})[1]["now"] == "2026-11-30T10:00:00Z"
    status, filled = server.call("POST", "/profiles/default/autofill", {"origin": ORIGIN, "submit": True})
    assert (status, filled["password"]) == (200, "pw")
    server.call("POST", "/clock", {"advance": 60})
    options, body = reg_options()
    status, response = server.call("POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": body, "mediation": "conditional"})
    assert status == 200
    verify_registration_response(credential=response, expected_challenge=options.challenge, expected_origin=ORIGIN,
                                 expected_rp_id="example.com", require_user_presence=False)
    server.call("POST", "/clock", {"advance": "6m"})
    status, error = server.call("POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": reg_options()[1], "mediation": "conditional"})
    assert status == 422 and error["error"]["reason"] == "noRecentlyUsedPassword" and error["error"]["silent"] is True
    findings = server.call("GET", "/profiles/default/findings")[1]["findings"]
    assert [f["code"] for f in findings] == ["missingExclusionIds", "repeatedAutomaticAttempt"]
    events = server.call("GET", "/profiles/default/events?kind=create")[1]["events"]
    assert [e["outcome"] for e in events] == ["success", "noop"]
    assert server.call("POST", "/profiles/default/passwords/use", {"origin": ORIGIN, "username": "alice@example.com"})[0] == 200
    assert server.call("GET", "/clock")[1]["mode"] == "virtual"
    assert server.call("POST", "/clock", {"mode": "system"})[1]["mode"] == "system"


def test_get_signals_capabilities_passkeys_and_user_decisions(server):
    options, body = reg_options()
    created = server.call("POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": body})[1]
    request = json.loads(options_to_json(generate_authentication_options(rp_id="example.com")))
    assert server.call("POST", "/profiles/default/user", {"decisions": ["cancel"]})[1] == {"pending": ["cancel"]}
    status, error = server.call("POST", "/profiles/default/credentials/get", {"origin": ORIGIN, "options": request})
    assert status == 422 and error["error"]["reason"] == "userCancelled"
    assert error["error"]["dialects"]["android"]["exception"].endswith("GetCredentialCancellationException")
    status, assertion = server.call("POST", "/profiles/default/credentials/get", {"origin": ORIGIN, "options": request, "pick": created["id"]})
    assert status == 200 and assertion["id"] == created["id"]
    assert server.call("POST", "/profiles/default/user", {"decisions": ["timeout"]})[0] == 200
    assert server.call("DELETE", "/profiles/default/user")[1] == {"pending": []}
    assert server.call("GET", "/profiles/default/user")[1] == {"pending": []}
    caps = server.call("GET", "/profiles/default/capabilities?platform=android")[1]
    assert caps["platform"] == "android" and caps["getClientCapabilities"] == {}
    assert server.call("POST", "/profiles/default/signals/unknown", {"origin": ORIGIN, "options": {"rpId": "example.com", "credentialId": created["id"]}}) == (200, {"resolved": True})
    assert server.call("GET", f"/profiles/default/passkeys/{created['id']}")[1]["hidden"] is True
    assert server.call("POST", "/profiles/default/signals/accepted", {"origin": ORIGIN, "options": {"rpId": "example.com", "userId": json.loads(json.dumps(body))["user"]["id"], "allAcceptedCredentialIds": [created["id"]]}})[0] == 200
    assert server.call("GET", f"/profiles/default/passkeys/{created['id']}")[1]["hidden"] is False
    assert server.call("POST", "/profiles/default/signals/details", {"origin": ORIGIN, "options": {"rpId": "example.com", "userId": body["user"]["id"], "name": "alice2", "displayName": "Alice Two"}})[0] == 200
    assert server.call("GET", "/profiles/default/passkeys")[1]["passkeys"][0]["displayName"] == "Alice Two"
    assert server.call("DELETE", f"/profiles/default/passkeys/{created['id']}")[0] == 200
    assert server.call("GET", f"/profiles/default/passkeys/{created['id']}")[0] == 404


@pytest.mark.parametrize("path,body,status,name", [
    ("/profiles/default/credentials/create", b"{not json", 400, "TypeError"),
    ("/profiles/default/credentials/create", b"[1,2]", 400, "TypeError"),
    ("/profiles/default/credentials/create", json.dumps({"origin": 5, "options": {}}).encode(), 400, "TypeError"),
    ("/profiles/default/credentials/create", json.dumps({"origin": ORIGIN}).encode(), 400, "TypeError"),
    ("/profiles/default/credentials/create", json.dumps({"origin": ORIGIN, "options": {"rp": {"name": "x"}, "user": {"id": "a+b", "name": "a", "displayName": "a"}, "challenge": "AA", "pubKeyCredParams": []}}).encode(), 400, "TypeError"),
    ("/profiles/default/credentials/create", json.dumps({"origin": "http://evil.example", "options": reg_options()[1]}).encode(), 403, "SecurityError"),
    ("/profiles/nobody/credentials/create", json.dumps({"origin": ORIGIN, "options": {}}).encode(), 404, "NotFound"),
    ("/profiles/default/credentials/get", json.dumps({"origin": ORIGIN, "options": {"challenge": "AA"}, "pick": "%%"}).encode(), 400, "TypeError"),
    ("/profiles/default/signals/unknown", json.dumps({"origin": ORIGIN, "options": {"rpId": "example.com", "credentialId": "a+b"}}).encode(), 400, "TypeError"),
    ("/profiles/default/signals/unknown", json.dumps({"origin": ORIGIN, "options": {"rpId": "example.org", "credentialId": "AA"}}).encode(), 403, "SecurityError"),
    ("/profiles/default/user", json.dumps({"decisions": ["dance"]}).encode(), 400, "TypeError"),
    ("/clock", json.dumps({"set": "yesterday"}).encode(), 400, "TypeError"),
    ("/profiles/default/passwords", json.dumps({"origin": ORIGIN, "username": 3}).encode(), 400, "TypeError"),
])
def test_bad_input_gets_a_clear_error_and_leaves_the_vault_unchanged(server, path, body, status, name):
    server.call("POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": reg_options()[1]})
    before = vault_state(server)
    got, error = server.call("POST", path, raw=body)
    assert got == status, error
    assert error["error"]["name"] == name
    assert error["error"]["message"]
    assert vault_state(server) == before


def test_the_server_owns_its_vault_and_the_cli_says_so(server):
    proc = __import__("subprocess").run([BINARY, "--vault", str(server.directory / "vault.db"), "vault", "list"],
                                        capture_output=True, text=True, timeout=30)
    assert proc.returncode == 3
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "locked" and "credemu serve" in error["message"]


def test_oversized_body_is_413(server):
    status, error = server.call("POST", "/profiles/default/passwords", raw=b"{" + b" " * 300_000 + b"}")
    assert status == 413 and error["error"]["name"] == "PayloadTooLarge"


def test_unknown_route_and_method(server):
    assert server.call("GET", "/nope")[0] == 404
    assert server.call("DELETE", "/health")[0] == 405


def test_token_guards_everything_but_the_shim_and_health(tmp_path):
    s = Server(BINARY, tmp_path, "--token", "s3cret")
    try:
        assert s.call("GET", "/profiles")[0] == 401
        assert s.call("GET", "/profiles", headers={"Authorization": "Bearer wrong"})[0] == 401
        assert s.call("GET", "/health")[0] == 200
        assert s.call("GET", "/shim.js")[0] == 200
        s.token = "s3cret"
        assert s.call("GET", "/profiles")[0] == 200
    finally:
        assert s.stop() == 0


def test_cors_only_for_allowed_origins(tmp_path):
    s = Server(BINARY, tmp_path, "--allow-origin", "http://localhost:8000")
    try:
        s.call("GET", "/profiles/default/capabilities", headers={"Origin": "http://localhost:8000"})
        assert s.last_headers["Access-Control-Allow-Origin"] == "http://localhost:8000"
        s.call("GET", "/profiles/default/capabilities", headers={"Origin": "https://evil.example"})
        assert s.last_headers.get("Access-Control-Allow-Origin") is None
    finally:
        s.stop()


def test_held_ceremony_waits_for_release_and_cancel_fails_it(server):
    status, hold = server.call("POST", "/profiles/default/holds", {"timeoutMs": 10000})
    assert status == 201 and hold["state"] == "armed"
    result = {}

    def held_create():
        try:
            result["create"] = server.call("POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": reg_options()[1]})
        except Exception as exc:  # noqa: BLE001
            result["error"] = repr(exc)

    worker = threading.Thread(target=held_create)
    worker.start()
    deadline = time.time() + 10
    while time.time() < deadline and server.call("GET", "/holds")[1]["holds"][0]["state"] != "holding":
        time.sleep(0.02)
    assert worker.is_alive(), f"the ceremony is held: {result}"
    assert server.call("GET", "/profiles/default/passkeys")[1]["passkeys"] == []
    assert server.call("POST", f"/holds/{hold['id']}/release", {"outcome": "proceed"})[1]["state"] == "released"
    worker.join(10)
    assert result["create"][0] == 200
    hold2 = server.call("POST", "/profiles/default/holds", {"timeoutMs": 100})[1]
    status, error = server.call("POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": reg_options(user="b")[1]})
    assert status == 422 and error["error"]["reason"] == "timedOut"
    assert server.call("POST", "/holds/hold-99/release")[0] == 404


def test_many_concurrent_clients_are_safe(server):
    errors = []

    def client(i):
        try:
            for j in range(5):
                status, _ = server.call("POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": reg_options(user=f"u{i}-{j}")[1]})
                assert status == 200
                status, _ = server.call("POST", "/profiles/default/credentials/get", {"origin": ORIGIN, "options": json.loads(options_to_json(generate_authentication_options(rp_id="example.com")))})
                assert status == 200
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    [t.start() for t in threads]
    [t.join(60) for t in threads]
    assert errors == []
    assert len(server.call("GET", "/profiles/default/passkeys")[1]["passkeys"]) == 40


def test_android_rate_limit_is_429_with_retry_after(server):
    server.call("POST", "/profiles", {"name": "droid", "pack": "gpm", "platform": "android"})
    server.call("POST", "/clock", {"set": "2026-11-29T10:00:00Z"})
    _, body = reg_options()
    server.call("POST", "/profiles/droid/credentials/create", {"origin": ORIGIN, "options": body})
    signal = {"origin": ORIGIN, "options": {"rpId": "example.com", "userId": body["user"]["id"], "name": "n", "displayName": "d"}}
    for _ in range(10):
        assert server.call("POST", "/profiles/droid/signals/details", signal)[0] == 200
    status, error = server.call("POST", "/profiles/droid/signals/details", signal)
    assert status == 429 and error["error"]["retryMillis"] == 120000
    assert server.last_headers["Retry-After"] == "120"
    android = error["error"]["dialects"]["android"]
    assert android["exception"].endswith("SignalCredentialRateLimitExceededException")
    # Play services' words, and androidx's parse of them: the minute count as retryMillis (parseRefillMinutesRegex).
    assert android["message"] == "SignalCredentialState has been called too frequently. Please retry later after 2 minutes."
    assert android["retryMillis"] == 2


def test_registrations_survive_a_killed_server(tmp_path):
    # The server answers a registration only once its commit is in the kernel: SIGKILL right after loses none,
    # and each passkey still signs, as an RP's libraries verify.
    s = Server(BINARY, tmp_path)
    registered = []
    for n in range(25):
        options, body = reg_options(user=f"user{n}@example.com")
        status, response = s.call("POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": body})
        assert status == 200
        registered.append(verify_registration_both(response, options, ORIGIN, "example.com"))
    s.process.kill()
    s.process.wait(timeout=20)

    cli = Credemu(tmp_path, profile="default")
    stored = {p["credentialId"] for p in cli.json("vault", "list")}
    assert stored == {bytes_to_base64url(r[0].credential_id) for r in registered}
    verified, fido2_credential = registered[-1]
    options = generate_authentication_options(rp_id="example.com", allow_credentials=[PublicKeyCredentialDescriptor(id=verified.credential_id)])
    verify_authentication_both(cli.get(ORIGIN, options), options, ORIGIN, "example.com", verified, fido2_credential)


def test_a_server_that_cannot_catch_its_stop_signals_refuses_to_start(tmp_path):
    """With no file descriptor left for the pipe SIGTERM and SIGINT write to, `serve` would never block in its wait,
    or never stop on a signal: it says so and exits 2 before it opens the vault or a port."""
    import subprocess
    # Four descriptors: the three standard streams and one the loader needs for the shared libraries.
    script = f'ulimit -n 4; exec "{BINARY}" --vault "{tmp_path / "v.db"}" serve --port 0'
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    if proc.returncode == 127:
        pytest.skip("the dynamic loader needs more than four descriptors here: " + proc.stderr.strip()[:200])
    assert proc.returncode == 2, proc.stderr
    assert "Cannot catch SIGTERM and SIGINT: pipe() failed" in proc.stderr
    assert not (tmp_path / "v.db").exists(), "nothing was created"


def test_a_body_origin_with_its_default_port_is_a_type_error_saying_why(server):
    # No browser serializes https://example.com:443: refused, not normalised, so an RP configured to expect it shows.
    before = vault_state(server)
    for path, body in [("/profiles/default/credentials/create", {"origin": "https://example.com:443", "options": reg_options()[1]}),
                       ("/profiles/default/passwords", {"origin": "https://example.com:443", "username": "alice", "password": "pw"})]:
        status, error = server.call("POST", path, body)
        assert status == 400 and error["error"]["name"] == "TypeError", (path, status, error)
        assert "default port" in error["error"]["message"] and "'https://example.com'" in error["error"]["message"], error
    assert vault_state(server) == before


def test_vault_move_carries_a_gpm_passkey_into_an_apple_profile_through_cxf(server):
    """POST /vault/move (issue 36): the passkey leaves the default (GPM) profile for an apple profile, keeps its
    credential ID, and signs in there; the same profile twice and a bad member are refused, nothing moved."""
    assert server.call("POST", "/profiles", {"name": "mac", "pack": "apple"})[0] == 201
    options, body = reg_options()
    created = server.call("POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": body})[1]
    before = vault_state(server, "default")
    assert server.call("POST", "/vault/move", {"from": "mac", "to": "mac"})[0] == 400
    assert server.call("POST", "/vault/move", {"from": "default", "to": "mac", "bogus": 1})[0] == 400
    assert vault_state(server, "default") == before
    status, moved = server.call("POST", "/vault/move", {"from": "default", "to": "mac"})
    assert status == 200, moved
    assert moved["moved"] == {"passkeys": 1, "passwords": 0} and moved["credentialIds"] == [created["id"]]
    assert moved["importer"]["pack"] == "apple" and moved["importer"]["counter"] == "zero"
    assert server.call("GET", "/profiles/default/passkeys")[1]["passkeys"] == []
    assert [p["credentialId"] for p in server.call("GET", "/profiles/mac/passkeys")[1]["passkeys"]] == [created["id"]]


def test_a_profiles_cxf_file_over_http_moves_a_passkey_into_another_servers_vault_that_signs_in(tmp_path):
    """GET /profiles/{p}/export and POST /profiles/{p}/import (issue 36): a GPM passkey leaves one server as a CXF
    document and signs in from an apple profile of another server, verified by py_webauthn and python-fido2 with the
    public key the RP stored; without includeSecrets the document carries no key and is refused, the vault unchanged."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    source, target = Server(BINARY, tmp_path / "a"), Server(BINARY, tmp_path / "b")
    try:
        options, body = reg_options()
        created = source.call("POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": body})[1]
        verified, fido2_credential = verify_registration_both(created, options, ORIGIN, "example.com")
        status, bare = source.call("GET", "/profiles/default/export?format=cxf")
        assert status == 200 and bare["includesSecrets"] is False, bare
        status, exported = source.call("GET", "/profiles/default/export?format=cxf&includeSecrets=true")
        assert status == 200 and exported["format"] == "cxf", exported

        assert target.call("POST", "/profiles", {"name": "mac", "pack": "apple"})[0] == 201
        before = vault_state(target, "mac")
        status, refused = target.call("POST", "/profiles/mac/import", {"format": "cxf", "document": bare["document"]})
        assert status == 400 and "key" in json.dumps(refused), refused
        assert target.call("POST", "/profiles/mac/import", {"format": "nope", "document": exported["document"]})[0] == 400
        assert vault_state(target, "mac") == before
        status, imported = target.call("POST", "/profiles/mac/import", {"format": "cxf", "document": exported["document"]})
        assert status == 200 and imported["imported"]["passkeys"] == 1, imported
        assert target.call("POST", "/profiles/mac/import", {"format": "cxf", "document": exported["document"]})[0] == 409

        request = generate_authentication_options(rp_id="example.com", allow_credentials=[PublicKeyCredentialDescriptor(id=verified.credential_id)])
        status, answer = target.call("POST", "/profiles/mac/credentials/get", {"origin": ORIGIN, "options": json.loads(options_to_json(request))})
        assert status == 200 and answer["id"] == created["id"], answer
        verify_authentication_both(answer, request, ORIGIN, "example.com", verified, fido2_credential)
    finally:
        assert source.stop() == 0 and target.stop() == 0
