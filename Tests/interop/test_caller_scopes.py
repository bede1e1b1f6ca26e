"""Issue 21's breaches of caller scope, tried as an attacker would: a page the server allows (https://a.example)
reaches its own ceremonies, signals, passkeys and passwords, and nothing else: not another site's dropdown, events,
profiles, decisions, settings, clock, holds, devices or scenarios. The shim's script carries no secret. Each request
is raw HTTP, so nothing a client library adds hides a hole."""
import json
import re
import threading
import time

import pytest

from api_client import Server
from conftest import BINARY
from test_front_door import post_json, raw, registration_options

PAGE = "https://a.example"
OFFICE = "https://office.example"
TOKEN = "T0K-3n"


def call(server, method, path, body=None, origin=PAGE, token=None):
    headers = {"Origin": origin} if origin else {}
    if token:
        headers["Authorization"] = "Bearer " + token
    if body is not None or method in ("POST", "PATCH"):
        headers["Content-Type"] = "application/json"
        return raw(server, method, path, json.dumps(body if body is not None else {}), headers)
    return raw(server, method, path, None, headers)


def operator_state(server, token=None):
    """What the vault holds, as the test code (no Origin) sees it."""
    state = {}
    for path in ("/profiles", "/devices", "/clock", "/holds", "/profiles/office/passkeys", "/profiles/office/passwords",
                 "/profiles/default/passkeys", "/profiles/office/user", "/profiles/default/user"):
        status, body, _ = call(server, "GET", path, origin=None, token=token)
        assert status == 200, (path, body)
        state[path] = body
    state["/clock"] = state["/clock"]["mode"]  # the system clock moves; its mode is what a page could change
    return state


@pytest.fixture
def office(tmp_path):
    """A server allowing a.example, with another site's account: the office profile's passkey and password."""
    s = Server(BINARY, tmp_path, "--allow-origin", PAGE)
    assert s.call("POST", "/profiles", {"name": "office", "pack": "gpm"})[0] == 201
    status, made = s.call("POST", "/profiles/office/credentials/create", {"origin": OFFICE, "options": office_options()})
    assert status == 200, made
    assert s.call("POST", "/profiles/office/passwords", {"origin": OFFICE, "username": "boss", "password": "hunter2"})[0] == 201
    assert s.call("POST", "/devices", {"name": "desk", "providers": "office"})[0] == 201
    s.made = made
    yield s
    assert s.stop() == 0, "the server survived every request and stops cleanly"


def office_options(user="boss"):
    options = registration_options(user)
    options["rp"]["id"] = "office.example"
    return options


def test_an_allowed_page_gets_no_operator_route(office):
    before = operator_state(office)
    attempts = [
        ("GET", "/profiles/default/events", None), ("GET", "/profiles/office/events", None), ("GET", "/profiles/office/findings", None),
        ("DELETE", "/profiles/office", None), ("POST", "/profiles/office/user", {"decisions": ["cancel"]}),
        ("GET", "/profiles/office/user", None), ("DELETE", "/profiles/office/user", None),
        ("PATCH", "/profiles/default", {"passkeysEnabled": False}), ("POST", "/profiles", {"name": "mine"}), ("GET", "/profiles", None),
        ("GET", "/profiles/office", None), ("GET", "/clock", None), ("POST", "/clock", {"advance": 600}), ("GET", "/holds", None),
        ("POST", "/profiles/office/holds", {}), ("POST", "/holds/hold-1/release", {}), ("GET", "/devices", None),
        ("POST", "/devices", {"name": "mine", "providers": "default"}), ("GET", "/devices/desk", None), ("DELETE", "/devices/desk", None),
        ("PATCH", "/devices/desk", {"platform": "android"}), ("POST", "/scenarios/run", {"scenario": {"name": "x", "steps": []}}),
        ("GET", "/providers", None), ("GET", "/origins", None), ("POST", "/origins", {"origin": "https://b.example"}),
    ]
    for method, path, body in attempts:
        status, error, response = call(office, method, path, body)
        assert status == 403 and error["error"]["name"] == "Forbidden", (method, path, status, error)
        assert "may not call" in error["error"]["message"], error
    assert operator_state(office) == before, "nothing an allowed page sent changed the vault"


def test_an_allowed_page_never_sees_nor_picks_another_sites_dropdown(office):
    # office.example's page waits in a conditional get (the test code speaks for it here, as its shim would).
    answer = {}

    def conditional_get():
        answer["get"] = office.call("POST", "/profiles/office/credentials/get", {
            "origin": OFFICE, "mediation": "conditional", "ceremony": "office-1",
            "options": {"challenge": "AAECAwQFBgcICQoLDA0ODw", "rpId": "office.example", "allowCredentials": []}})

    waiting = threading.Thread(target=conditional_get)
    waiting.start()
    deadline = time.monotonic() + 10
    while not office.call("GET", "/profiles/office/offer")[1]["offers"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert office.call("GET", "/profiles/office/offer")[1]["offers"], "the office page's dropdown is open"
    # a.example sees no dropdown of office's, cannot pick into it, cannot abort it.
    status, offers, _ = call(office, "GET", "/profiles/office/offer")
    assert status == 200 and offers == {"offers": []}, offers
    status, error, _ = call(office, "POST", "/profiles/office/offer/pick", {"credentialId": office.made["id"]})
    assert status == 404, error
    status, error, _ = call(office, "POST", "/profiles/office/offer/pick", {"credentialId": office.made["id"], "ceremony": "office-1"})
    assert status == 404, error
    assert call(office, "POST", "/profiles/office/ceremonies/office-1/abort", {})[1] == {"aborted": False}
    assert not answer, "the office page's get still waits for its own user"
    # Its own user picks: the get answers with the passkey the user chose.
    assert office.call("POST", "/profiles/office/offer/pick", {"credentialId": office.made["id"]})[0] == 200
    waiting.join(10)
    assert answer["get"][0] == 200 and answer["get"][1]["id"] == office.made["id"], answer


def test_an_allowed_page_acts_for_itself_through_page_routes(office):
    status, made, _ = call(office, "POST", "/profiles/default/credentials/create",
                           {"options": dict(registration_options("alice"), rp={"id": "a.example", "name": "A"})})
    assert status == 200, made
    status, listed, _ = call(office, "GET", "/profiles/default/passkeys")
    assert status == 200 and [p["credentialId"] for p in listed["passkeys"]] == [made["id"]]
    assert call(office, "GET", "/profiles/office/passkeys")[1] == {"passkeys": []}, "another site's passkeys are not listed"
    assert call(office, "GET", f"/profiles/office/passkeys/{office.made['id']}")[0] == 404
    assert call(office, "DELETE", f"/profiles/office/passkeys/{office.made['id']}")[0] == 404
    assert call(office, "GET", "/profiles/office/passwords")[1] == {"passwords": []}
    assert call(office, "GET", "/profiles/office/passwords?reveal=true")[0] == 403
    assert call(office, "POST", "/profiles/office/passwords", {"origin": OFFICE, "username": "x", "password": "y"})[0] == 403


def test_a_devices_page_is_never_told_the_accounts_behind_it(office):
    status, capabilities, response = call(office, "GET", "/devices/desk/capabilities")
    assert status == 200 and "profile" not in capabilities and response.getheader("X-Credemu-Provider") is None, capabilities
    status, error, response = call(office, "POST", "/devices/desk/credentials/get",
                                   {"options": {"challenge": "AAECAwQFBgcICQoLDA0ODw", "rpId": "a.example", "allowCredentials": []}})
    assert status == 422 and "profile" not in error["error"] and response.getheader("X-Credemu-Provider") is None, error
    assert "office" not in json.dumps(error)
    # Its passwords go to the account behind it, named by the device only.
    assert call(office, "POST", "/devices/desk/passwords", {"origin": PAGE, "username": "me", "password": "pw"})[0] == 201
    assert sorted(p["username"] for p in office.call("GET", "/profiles/office/passwords")[1]["passwords"]) == ["boss", "me"]
    # The test code is told.
    status, answered = office.call("GET", "/devices/desk/capabilities")
    assert status == 200 and answered["profile"] == "office", answered
    for query in ("device=desk", "device=desk&token=x"):
        status, script, _ = raw(office, "GET", "/shim.js?" + query, headers={"Origin": "https://evil.example"})
        assert status == 200 and b"office" not in script, query


def test_the_shim_carries_a_page_token_that_opens_only_its_own_page_routes(tmp_path):
    s = Server(BINARY, tmp_path, "--allow-origin", PAGE, "--token", TOKEN)
    s.token = TOKEN
    try:
        assert s.call("POST", "/profiles", {"name": "office", "pack": "gpm"})[0] == 201
        status, script, _ = raw(s, "GET", "/shim.js?profile=default&token=" + TOKEN)
        assert status == 200 and TOKEN.encode() not in script, "the server's token is never in a page's script"
        page_token = re.search(rb'"token":"(page\.[A-Za-z0-9_-]+)"', script).group(1).decode()
        # A wrong token is refused like any other request: the script never depends on whether a guess was right.
        assert raw(s, "GET", "/shim.js?profile=default&token=guess")[0] == 401
        public = raw(s, "GET", "/shim.js?profile=default")[1]
        config = public.rsplit(b"})(", 1)[1]
        assert b'"token":null' in config and b"signalMethods" not in config, config
        # Read by any script on the page, the page token opens the page's own page routes only.
        options = dict(registration_options("alice"), rp={"id": "a.example", "name": "A"})
        assert call(s, "POST", "/profiles/default/credentials/create", {"options": options}, token=page_token)[0] == 200
        assert call(s, "GET", "/profiles/default/passkeys", token=page_token)[0] == 200
        for method, path in [("GET", "/profiles/office/passkeys"), ("POST", "/profiles/office/credentials/create"),
                             ("GET", "/devices/default/capabilities")]:
            body = {"options": options} if method == "POST" else None
            assert call(s, method, path, body, token=page_token)[0] == 401, path
        for path in ("/profiles", "/profiles/default/events", "/clock"):
            assert call(s, "GET", path, origin=None, token=page_token)[0] == 401, "an operator route wants the server's token: " + path
            assert call(s, "GET", path, origin=None, token=TOKEN)[0] == 200
        # Without the page's Origin (outside a browser) the page token is not the test code's: no secrets.
        assert s.call("POST", "/profiles/default/passwords", {"origin": PAGE, "username": "me", "password": "hunter2"})[0] == 201
        status, error, _ = call(s, "GET", "/profiles/default/passwords?reveal=true", origin=None, token=page_token)
        assert status == 403 and error["error"]["name"] == "PageTokenOutsidePage" and "hunter2" not in json.dumps(error), error
    finally:
        assert s.stop() == 0
