"""Apple's reportUnusedPasswordCredential(domain:userName:) (seed 003) through the HTTP API and the CLI."""

import json

import pytest
from webauthn import generate_registration_options, options_to_json

from api_client import Server
from conftest import BINARY

ORIGIN = "https://shop.example.com"


@pytest.fixture
def server(tmp_path):
    s = Server(BINARY, tmp_path)
    yield s
    assert s.stop() == 0


def upgrade(server, profile):
    options = generate_registration_options(rp_id="example.com", rp_name="Shop", user_name="alice@example.com")
    return server.call("POST", f"/profiles/{profile}/credentials/create",
                       {"origin": ORIGIN, "options": json.loads(options_to_json(options)), "mediation": "conditional"})


def test_a_reported_password_is_no_longer_filled_nor_upgraded_from(server):
    assert server.call("POST", "/profiles", {"name": "mac", "pack": "apple", "platform": "macos"})[0] == 201
    assert server.call("POST", "/profiles/mac/passwords", {"origin": ORIGIN, "username": "alice@example.com", "password": "pw"})[0] == 201
    assert server.call("POST", "/profiles/mac/autofill", {"origin": ORIGIN, "submit": True})[0] == 200
    status, body = server.call("POST", "/profiles/mac/passwords/report-unused", {"domain": "shop.example.com", "userName": "alice@example.com"})
    assert (status, body) == (200, {"reported": True})
    listed = server.call("GET", "/profiles/mac/passwords")[1]["passwords"]
    assert [p["username"] for p in listed] == ["alice@example.com"] and "retired" in listed[0]
    status, error = server.call("POST", "/profiles/mac/autofill", {"origin": ORIGIN})
    assert status == 422 and error["error"]["reason"] == "noMatchingPassword"
    status, error = upgrade(server, "mac")
    assert status == 422 and error["error"]["reason"] == "noMatchingPassword" and error["error"]["silent"] is True
    assert server.call("GET", "/profiles/mac/passkeys")[1]["passkeys"] == []
    events = server.call("GET", "/profiles/mac/events?kind=password")[1]["events"]
    assert events[-1]["outcome"] == "retired" and "passwords.reportUnused = hide" in events[-1]["detail"]["knob"]


def test_a_platform_without_the_call_is_not_supported_and_the_password_stays(server):
    server.call("POST", "/profiles/default/passwords", {"origin": ORIGIN, "username": "alice@example.com", "password": "pw"})
    before = server.call("GET", "/profiles/default/passwords")[1]
    status, error = server.call("POST", "/profiles/default/passwords/report-unused", {"domain": "shop.example.com", "userName": "alice@example.com"})
    assert status == 422 and error["error"]["name"] == "NotSupportedError" and error["error"]["reason"] == "platformUnsupported"
    assert server.call("GET", "/profiles/default/passwords")[1] == before


@pytest.mark.parametrize("body", [{"domain": "https://shop.example.com", "userName": "a"}, {"domain": "shop.example.com"},
                                  {"domain": 7, "userName": "a"}, {"domain": "shop.example.com", "userName": ""}])
def test_a_bad_report_is_400_and_changes_nothing(server, body):
    server.call("POST", "/profiles", {"name": "ios", "pack": "apple", "platform": "ios"})
    server.call("POST", "/profiles/ios/passwords", {"origin": ORIGIN, "username": "a", "password": "pw"})
    before = server.call("GET", "/profiles/ios/passwords")[1]
    assert server.call("POST", "/profiles/ios/passwords/report-unused", body)[0] == 400
    assert server.call("GET", "/profiles/ios/passwords")[1] == before


def test_the_cli_reports_an_unused_password(credemu):
    credemu.run("profile", "create", "ios", "--pack", "apple", "--platform", "ios", check_exit=0)
    credemu.run("password", "save", "--origin", ORIGIN, "--username", "alice", "--password", "pw", profile="ios", check_exit=0)
    reported = credemu.run("password", "report-unused", "--domain", "shop.example.com", "--username", "alice", profile="ios", check_exit=0)
    assert json.loads(reported.stdout) == {"reported": True}
    result = credemu.run("autofill", "--origin", ORIGIN, profile="ios")
    assert result.returncode != 0 and json.loads(result.stdout)["error"]["reason"] == "noMatchingPassword"
    assert credemu.run("password", "report-unused", "--domain", "shop.example.com", "--username", "alice").returncode != 0, \
        "the reference profile has no such call on its web platform"


def test_related_origins_through_the_api(server):
    """WebAuthn L3 §5.11: a create and a get from https://example.co.uk for RP ID example.com, allowed by the list the
    profile holds for example.com's /.well-known/webauthn; an origin the list does not name is a SecurityError."""
    from webauthn import generate_authentication_options, verify_registration_response
    related = "https://example.co.uk"
    assert server.call("POST", "/profiles", {"name": "ro", "pack": "gpm",
                                             "relatedOrigins": {"example.com": ["https://example.com", related]}})[0] == 201
    options = generate_registration_options(rp_id="example.com", rp_name="Shop", user_name="alice")
    status, response = server.call("POST", "/profiles/ro/credentials/create", {"origin": related, "options": json.loads(options_to_json(options))})
    assert status == 200, response
    verify_registration_response(credential=response, expected_challenge=options.challenge, expected_origin=related, expected_rp_id="example.com")
    get = generate_authentication_options(rp_id="example.com")
    status, assertion = server.call("POST", "/profiles/ro/credentials/get", {"origin": related, "options": json.loads(options_to_json(get))})
    assert status == 200 and assertion["id"] == response["id"]
    status, error = server.call("POST", "/profiles/ro/credentials/create", {"origin": "https://example.de", "options": json.loads(options_to_json(options))})
    assert status in (400, 403, 422) and error["error"]["name"] == "SecurityError"
