"""The server's front door, tried as an attacker would (issue 9): every web page a developer visits can reach
loopback, so no request may crash credemu, act across sites, read the vault under another host name, or speak
for an origin it does not come from. Each test sends raw HTTP, so nothing the client library adds hides a hole."""
import http.client
import json
import subprocess
import time

import pytest
from webauthn import generate_authentication_options, generate_registration_options, options_to_json

from api_client import Server
from conftest import BINARY

RP = "https://rp.example"
OTHER = "https://example.com"


@pytest.fixture
def server(tmp_path):
    s = Server(BINARY, tmp_path)
    yield s
    assert s.stop() == 0, "the server survived every request and stops cleanly"


@pytest.fixture
def rp_server(tmp_path):
    s = Server(BINARY, tmp_path, "--allow-origin", RP)
    yield s
    assert s.stop() == 0


def raw(server, method, path, body=None, headers=None, host=None):
    """One request exactly as given: no header is added but Host (the server's own unless `host`)."""
    port = int(server.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    conn.putheader("Host", host if host is not None else f"127.0.0.1:{port}")
    data = body.encode() if isinstance(body, str) else body
    for name, value in (headers or {}).items():
        conn.putheader(name, value)
    if data is not None:
        conn.putheader("Content-Length", str(len(data)))
    conn.endheaders(data)
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    parsed = json.loads(payload) if payload and response.getheader("Content-Type", "").startswith("application/json") else payload
    return response.status, parsed, response


def alive(server):
    status, body, _ = raw(server, "GET", "/health")
    return status == 200 and body["status"] == "ok"


def snapshot(server):
    """What the vault holds, as the API shows it."""
    out = []
    for route in ("passkeys", "passwords"):
        status, body, _ = raw(server, "GET", f"/profiles/default/{route}")
        assert status == 200
        out.append(body)
    profiles = raw(server, "GET", "/profiles")[1]
    clock = raw(server, "GET", "/clock")[1]
    return out, profiles, clock["mode"]


def post_json(server, path, body, **headers):
    return raw(server, "POST", path, json.dumps(body), {"Content-Type": "application/json", **headers})


def registration_options(user="alice"):
    return json.loads(options_to_json(generate_registration_options(rp_id="example.com", rp_name="Example", user_name=user)))


def test_huge_and_negative_numbers_are_refused_not_fatal(server):
    for path, body in [("/profiles/default/holds", {"timeoutMs": 1e300}), ("/profiles/default/holds", {"timeoutMs": -1e300}),
                       ("/profiles/default/holds", {"timeoutMs": 0}), ("/profiles/default/holds", {"timeoutMs": 1.5}),
                       ("/clock", {"advance": 1e300}), ("/clock", {"advance": -1e300}), ("/clock", {"advance": -1}),
                       ("/clock", {"advance": "99999999999999999999s"}), ("/clock", {"advance": "300000000000000d"}),
                       ("/clock", {"set": "10000-01-01T00:00:00Z"}), ("/clock", {"set": "2026-02-30T00:00:00Z"})]:
        status, error, _ = post_json(server, path, body)
        assert status == 400, (path, body, status, error)
        assert error["error"]["name"] == "TypeError" and error["error"]["message"], error
        assert alive(server), (path, body)
    assert raw(server, "GET", "/clock")[1]["mode"] == "system", "no refused clock change took effect"
    assert raw(server, "GET", "/holds")[1]["holds"] == [], "no refused hold was armed"


def test_the_clock_keeps_to_years_0000_through_9999_and_round_trips(server):
    times = ["0000-01-01T00:00:00Z", "2024-02-29T12:00:00Z", "9999-12-31T23:59:59.999Z"]
    for time_text in times:
        status, clock, _ = post_json(server, "/clock", {"set": time_text})
        assert status == 200 and clock["now"] == time_text, (time_text, clock)
    status, error, _ = post_json(server, "/clock", {"advance": "1s"})
    assert status == 400, "past 9999-12-31T23:59:59.999Z the clock does not go"
    assert raw(server, "GET", "/clock")[1]["now"] == times[-1]
    events = raw(server, "GET", "/profiles/default/events?kind=clock")[1]["events"]
    assert [e["detail"]["now"] for e in events] == times, "the server logs clock changes as the CLI does"


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None])
def test_a_foreign_pages_simple_requests_do_nothing(server, content_type):
    """A page on evil.example can send these without a CORS preflight; none may act."""
    before = snapshot(server)
    attempts = [
        ("/profiles", {"name": "evil", "pack": "gpm"}),
        ("/profiles/default/passwords", {"origin": "https://bank.example", "username": "victim", "password": "planted"}),
        ("/profiles/default/credentials/create", {"origin": OTHER, "options": registration_options()}),
        ("/clock", {"advance": "1d"}),
        ("/profiles/default/holds", {}),
        ("/profiles/default/signals/accepted", {"origin": OTHER, "options": {"rpId": "example.com", "userId": "AAAA", "allAcceptedCredentialIds": []}}),
        ("/profiles/default/user", {"decisions": ["cancel"]}),
    ]
    for path, body in attempts:
        for origin in ("https://evil.example", None):
            headers = {"Content-Type": content_type} if content_type else {}
            if origin:
                headers["Origin"] = origin
            status, error, _ = raw(server, "POST", path, json.dumps(body), headers)
            assert status in (403, 415), (path, origin, content_type, status, error)
            assert error["error"]["name"] in ("Forbidden", "UnsupportedMediaType")
    assert snapshot(server) == before
    assert raw(server, "GET", "/holds")[1]["holds"] == []


def test_an_origin_not_allowed_gets_no_preflight_and_no_answer(server):
    status, _, response = raw(server, "OPTIONS", "/profiles/default/credentials/create",
                              headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert status == 403 and response.getheader("Access-Control-Allow-Origin") is None
    status, error, _ = raw(server, "GET", "/profiles/default/passwords", headers={"Origin": "https://evil.example"})
    assert status == 403 and "--allow-origin https://evil.example" in error["error"]["message"]


def test_an_origin_allowed_while_serving_is_answered_and_no_page_can_allow_one(rp_server):
    s = rp_server
    evil = {"Origin": "https://evil.example"}
    assert raw(s, "GET", "/profiles", headers=evil)[0] == 403
    # A page, even an allowed one, cannot widen the list, with or without a preflight.
    for page in [{"Origin": RP}, evil]:
        status, error, _ = post_json(s, "/origins", {"origin": "https://evil.example"}, **page)
        assert status == 403 and error["error"]["name"] == "Forbidden", error
    status, _, response = raw(s, "OPTIONS", "/origins", headers={**evil, "Access-Control-Request-Method": "POST"})
    assert status == 403 and response.getheader("Access-Control-Allow-Origin") is None
    assert s.call("GET", "/origins") == (200, {"allowedOrigins": [RP]})
    for bad in ["https://evil.example/", "https://Evil.example", "javascript:alert(1)", "https://evil.example:99999", "*", "", 7]:
        status, error = s.call("POST", "/origins", {"origin": bad})
        assert status == 400 and error["error"]["name"] == "TypeError", (bad, error)
    assert s.call("POST", "/origins", {"origin": "https://evil.example"}) == (200, {"allowedOrigins": ["https://evil.example", RP]})
    status, _, response = raw(s, "GET", "/profiles/default/passkeys", headers=evil)
    assert status == 200 and response.getheader("Access-Control-Allow-Origin") == "https://evil.example"
    # Now allowed, it still acts only for itself.
    status, error, _ = post_json(s, "/profiles/default/passwords", {"origin": RP, "username": "x", "password": "y"}, **evil)
    assert status == 403 and error["error"]["name"] == "SecurityError"


def test_dns_rebinding_host_names_are_refused(server):
    post_json(server, "/profiles/default/passwords", {"origin": OTHER, "username": "alice", "password": "s3cret"})
    port = server.url.rsplit(":", 1)[1]
    for host in [f"attacker.example:{port}", "attacker.example", f"127.0.0.1.attacker.example:{port}", f"localhost.attacker.example:{port}",
                 "", f"127.0.0.1:{port}@evil", "[::2]:1"]:
        for method, path, body in [("GET", "/profiles/default/passwords", None),
                                   ("POST", "/profiles/default/autofill", json.dumps({"origin": OTHER}))]:
            headers = {"Content-Type": "application/json"} if body else {}
            status, answer, _ = raw(server, method, path, body, headers, host=host)
            assert status in (400, 403), (host, path, status, answer)
            assert b"s3cret" not in json.dumps(answer).encode()
    for host in [f"localhost:{port}", f"127.0.0.1:{port}", f"127.9.8.7:{port}", f"app.localhost:{port}"]:
        assert raw(server, "GET", "/profiles/default/passwords", host=host)[0] == 200, host


def test_allow_host_admits_a_named_host(tmp_path):
    s = Server(BINARY, tmp_path, "--allow-host", "credemu.test")
    try:
        assert raw(s, "GET", "/health", host="credemu.test:1234")[0] == 200
        assert raw(s, "GET", "/health", host="other.test")[0] == 403
    finally:
        assert s.stop() == 0


def test_an_allowed_page_acts_only_for_its_own_origin(rp_server):
    s = rp_server
    # The RP's own passkey and password, registered by a trusted caller.
    status, created, _ = post_json(s, "/profiles/default/credentials/create", {"origin": OTHER, "options": registration_options()})
    assert status == 200, created
    post_json(s, "/profiles/default/passwords", {"origin": OTHER, "username": "alice", "password": "s3cret"})
    before = snapshot(s)
    get_options = json.loads(options_to_json(generate_authentication_options(rp_id="example.com")))
    page = {"Origin": RP}
    for path, body in [
        ("/profiles/default/credentials/get", {"origin": OTHER, "options": get_options}),
        ("/profiles/default/credentials/create", {"origin": OTHER, "options": registration_options("mallory")}),
        ("/profiles/default/autofill", {"origin": OTHER}),
        ("/profiles/default/passwords", {"origin": OTHER, "username": "x", "password": "y"}),
        ("/profiles/default/passwords/use", {"origin": OTHER, "username": "alice"}),
        ("/profiles/default/signals/accepted", {"origin": OTHER, "options": {"rpId": "example.com", "userId": "AAAA", "allAcceptedCredentialIds": []}}),
        ("/profiles/default/credentials/get", {"origin": "android:apk-key-hash:" + "A" * 43, "options": get_options}),
    ]:
        status, error, response = post_json(s, path, body, **page)
        assert status == 403, (path, status, error)
        assert error["error"]["name"] == "SecurityError", error
        assert "s3cret" not in json.dumps(error)
        assert response.getheader("Access-Control-Allow-Origin") == RP
    assert snapshot(s) == before
    # Its own origin it may use; the body may leave the origin out and the page's is taken.
    status, filled, _ = post_json(s, "/profiles/default/passwords", {"origin": RP, "username": "bob", "password": "pw"}, **page)
    assert status == 201, filled
    status, filled, _ = post_json(s, "/profiles/default/autofill", {}, **page)
    assert status == 200 and filled["origin"] == RP and filled["username"] == "bob"


def test_the_bearer_scheme_is_case_insensitive(tmp_path):
    s = Server(BINARY, tmp_path, "--token", "T0K")
    try:
        for header in ["Bearer T0K", "bearer T0K", "BEARER T0K", "Bearer  T0K"]:
            assert raw(s, "GET", "/providers", headers={"Authorization": header})[0] == 200, header
        for header in ["Bearer t0k", "Basic T0K", "Bearer", "T0K", "Bearer T0K2"]:
            status, _, response = raw(s, "GET", "/providers", headers={"Authorization": header})
            assert status == 401 and response.getheader("WWW-Authenticate") == "Bearer", header
        assert raw(s, "GET", "/providers")[0] == 401
    finally:
        assert s.stop() == 0


def test_a_method_a_path_does_not_take_is_405_with_allow(server):
    status, error, response = raw(server, "DELETE", "/clock")
    assert status == 405 and error["error"]["name"] == "MethodNotAllowed"
    assert response.getheader("Allow") == "GET, POST, OPTIONS"
    status, _, response = raw(server, "PUT", "/profiles/default", "{}", {"Content-Type": "application/json"})
    assert status == 405 and response.getheader("Allow") == "DELETE, GET, PATCH, OPTIONS"
    assert raw(server, "GET", "/profiles/default/nothing")[0] == 404


def test_bad_input_is_400_never_500(server):
    before = snapshot(server)
    for path, body in [("/profiles/default/passwords", {"origin": "", "username": "a", "password": "b"}),
                       ("/profiles/default/passwords", {"origin": "javascript:alert(1)", "username": "a", "password": "b"}),
                       ("/profiles/default/passwords", {"origin": "https://x.example/path", "username": "a", "password": "b"}),
                       ("/profiles/default/autofill", {"origin": ""}),
                       ("/profiles", {"name": "../../etc", "pack": "gpm"}),
                       ("/profiles", {"name": "x" * 65}),
                       ("/profiles", {"name": "ok", "packPath": "/etc/passwd"}),
                       ("/profiles", {"name": "ok", "pack": "apple", "platform": "android"})]:
        status, error, _ = post_json(server, path, body)
        assert status == 400, (path, body, status, error)
    for query in ["after=abc", "after=-1", "after=99999999999999999999", "after=1e3", "limit=0", "limit=10001", "limit=x"]:
        status, error, _ = raw(server, "GET", "/profiles/default/events?" + query)
        assert status == 400, (query, status, error)
    assert snapshot(server) == before


def test_no_route_returns_a_private_key(server):
    post_json(server, "/profiles/default/credentials/create", {"origin": OTHER, "options": registration_options()})
    listing = raw(server, "GET", "/profiles/default/passkeys")[1]["passkeys"]
    assert listing and all("privateKey" not in k for k in listing)
    one = raw(server, "GET", f"/profiles/default/passkeys/{listing[0]['credentialId']}")[1]
    assert "privateKey" not in one
    assert all("password" not in p for p in raw(server, "GET", "/profiles/default/passwords")[1]["passwords"])


def test_holds_are_pruned_and_bounded(server):
    ids = []
    for _ in range(16):
        status, hold, _ = post_json(server, "/profiles/default/holds", {"timeoutMs": 1000})
        assert status == 201, hold
        ids.append(hold["id"])
    status, error, _ = post_json(server, "/profiles/default/holds", {})
    assert status == 409, "no more than 16 holds wait on one profile at once"
    for hold_id in ids:
        assert post_json(server, f"/holds/{hold_id}/release", {"outcome": "cancel"})[0] == 200
    for _ in range(70):
        hold = post_json(server, "/profiles/default/holds", {})[1]
        post_json(server, f"/holds/{hold['id']}/release", {})
    assert len(raw(server, "GET", "/holds")[1]["holds"]) <= 64, "released holds do not pile up"


def test_a_non_loopback_host_needs_a_token(tmp_path):
    proc = subprocess.run([BINARY, "--vault", str(tmp_path / "v.db"), "serve", "--host", "0.0.0.0", "--port", "0"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert "--host 0.0.0.0" in proc.stderr and "--token" in proc.stderr


def cli(tmp_path, *args, stdin=None):
    return subprocess.run([BINARY, "--vault", str(tmp_path / "cli.db"), *args], capture_output=True, text=True, timeout=60, input=stdin)


def test_cli_numbers_out_of_range_are_usage_errors(tmp_path):
    for args in [("clock", "advance", "1e300"), ("clock", "advance", "99999999999999999999s"), ("clock", "advance", "300000000000000d"),
                 ("clock", "advance", "-1s"), ("clock", "set", "10000-01-01T00:00:00Z"), ("events", "--after", "1e99"),
                 ("events", "--limit", "-1"), ("events", "--after", "99999999999999999999")]:
        proc = cli(tmp_path, *args)
        assert proc.returncode == 2, (args, proc.returncode, proc.stderr)
        assert "Fatal error" not in proc.stderr
    proc = cli(tmp_path, "clock", "set", "0000-01-01T00:00:00Z")
    assert proc.returncode == 0 and json.loads(proc.stdout)["now"] == "0000-01-01T00:00:00Z", proc.stdout
    assert json.loads(cli(tmp_path, "clock", "show").stdout)["now"] == "0000-01-01T00:00:00Z"


def test_vault_export_leaves_secrets_out_unless_asked(tmp_path):
    cli(tmp_path, "password", "save", "--origin", OTHER, "--username", "alice", "--password", "s3cret")
    created = cli(tmp_path, "create", "--origin", OTHER, stdin=json.dumps(registration_options()))
    assert created.returncode == 0, created.stdout
    plain = cli(tmp_path, "vault", "export")
    assert plain.returncode == 0 and "s3cret" not in plain.stdout and "privateKey" not in plain.stdout
    assert "--include-secrets" in plain.stderr
    exported = json.loads(plain.stdout)
    assert len(exported["passkeys"]) == 1 and len(exported["passwords"]) == 1
    full = json.loads(cli(tmp_path, "vault", "export", "--include-secrets").stdout)
    assert full["passwords"][0]["password"] == "s3cret" and full["passkeys"][0]["privateKey"]


def test_a_page_sees_and_removes_only_its_own_sites_entries(tmp_path):
    s = Server(BINARY, tmp_path, "--allow-origin", "https://login.example.com")
    try:
        other = json.loads(options_to_json(generate_registration_options(rp_id="other.test", rp_name="Other", user_name="carol")))
        theirs = post_json(s, "/profiles/default/credentials/create", {"origin": "https://other.test", "options": other})[1]
        ours = post_json(s, "/profiles/default/credentials/create", {"origin": "https://login.example.com", "options": registration_options()})[1]
        post_json(s, "/profiles/default/passwords", {"origin": "https://other.test", "username": "carol", "password": "theirs"})
        page = {"Origin": "https://login.example.com"}
        listing = raw(s, "GET", "/profiles/default/passkeys", headers=page)[1]["passkeys"]
        assert [k["credentialId"] for k in listing] == [ours["id"]], "example.com's passkey only"
        assert raw(s, "GET", "/profiles/default/passwords", headers=page)[1]["passwords"] == []
        assert raw(s, "GET", f"/profiles/default/passkeys/{theirs['id']}", headers=page)[0] == 404
        assert raw(s, "DELETE", f"/profiles/default/passkeys/{theirs['id']}", headers=page)[0] == 404
        assert len(raw(s, "GET", "/profiles/default/passkeys")[1]["passkeys"]) == 2, "the other site's passkey is still there"
        assert raw(s, "DELETE", f"/profiles/default/passkeys/{ours['id']}", headers=page)[0] == 200
    finally:
        assert s.stop() == 0


def test_a_nul_is_never_cut_out_of_a_request(server):
    before = snapshot(server)
    status, error, _ = post_json(server, "/holds/a%00b/release", {})
    assert status == 404 and "a%00b" in error["error"]["message"], "the path is routed as sent, not as '/holds/a'"
    status, error, _ = post_json(server, "/profiles/default/passwords", {"origin": OTHER, "username": "a\u0000b", "password": "pw"})
    assert status == 400 and error["error"]["name"] == "TypeError", error
    assert snapshot(server) == before, "nothing half-saved"


def test_cli_odd_paths_and_lists_are_usage_errors_not_crashes(tmp_path):
    proc = subprocess.run([BINARY, "--vault", "-", "vault", "list"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode in (0, 3) and "Fatal error" not in proc.stderr, proc.stderr
    scenario = tmp_path / "s.json"
    document = {"format": "credemu-scenario", "version": 1, "name": "s", "title": "t", "description": "d", "rp": {"origin": OTHER, "rpId": "example.com"},
                "user": {"name": "a", "displayName": "A"}, "steps": [{"do": "advance", "label": "later", "by": "1m"}]}
    scenario.write_text(json.dumps(document))
    assert cli(tmp_path, "scenario", "run", str(scenario)).returncode == 0, "the scenario itself is valid"
    proc = cli(tmp_path, "scenario", "run", str(scenario), "--providers", "@")
    assert proc.returncode == 2 and "Fatal error" not in proc.stderr and json.loads(proc.stdout)["error"]["name"] == "InvalidPolicyPack"
    document["steps"][0]["by"] = 1e20
    scenario.write_text(json.dumps(document))
    proc = cli(tmp_path, "scenario", "run", str(scenario))
    assert proc.returncode == 2 and "steps[0].by" in proc.stderr, proc.stderr
    proc = cli(tmp_path)
    assert proc.returncode == 2 and "no command" in proc.stderr
