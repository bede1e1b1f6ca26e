"""A ceremony's life as a browser gives it (issue 10): a conditional get stays pending until the simulated user
picks from the autofill dropdown or the page aborts it; an abort reaches the server, and a ceremony aborted
before the provider acted never acts."""
import json
import threading
import time

import pytest
from webauthn import generate_authentication_options, generate_registration_options, options_to_json

from api_client import Server
from conftest import BINARY

ORIGIN = "https://login.example.com"


@pytest.fixture
def server(tmp_path):
    s = Server(BINARY, tmp_path)
    yield s
    assert s.stop() == 0


def register(server, user):
    options = json.loads(options_to_json(generate_registration_options(rp_id="example.com", rp_name="Example", user_name=user)))
    status, created = server.call("POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": options})
    assert status == 200, created
    return created["id"]


def get_options():
    return json.loads(options_to_json(generate_authentication_options(rp_id="example.com")))


class Pending:
    """A request running on its own thread, as a page's pending promise."""

    def __init__(self, server, path, body):
        self.result = None
        self.thread = threading.Thread(target=lambda: setattr(self, "result", server.call("POST", path, body)), daemon=True)
        self.thread.start()

    def answered(self, within=0.3):
        self.thread.join(within)
        return not self.thread.is_alive()


def open_offers(server, count=1, deadline=10):
    end = time.time() + deadline
    while time.time() < end:
        offers = server.call("GET", "/profiles/default/offer")[1]["offers"]
        if len(offers) >= count:
            return offers
        time.sleep(0.02)
    raise AssertionError("no autofill dropdown opened")


def conditional_get(server, ceremony=None, **extra):
    body = {"origin": ORIGIN, "mediation": "conditional", "options": get_options(), **extra}
    if ceremony:
        body["ceremony"] = ceremony
    return Pending(server, "/profiles/default/credentials/get", body)


def test_a_conditional_get_waits_for_the_users_pick_from_the_dropdown(server):
    alice, bob = register(server, "alice"), register(server, "bob")
    hidden = register(server, "carol")
    server.call("POST", "/profiles/default/signals/unknown", {"origin": ORIGIN, "options": {"rpId": "example.com", "credentialId": hidden}})
    pending = conditional_get(server, ceremony="page-1")
    offer = open_offers(server)[0]
    assert not pending.answered(), "a conditional get stays pending until the user picks"
    assert offer["ceremony"] == "page-1" and offer["origin"] == ORIGIN and offer["rpId"] == "example.com"
    assert [p["userName"] for p in offer["passkeys"]] == ["bob", "alice"], "most recent first; the hidden passkey never"
    status, picked = server.call("POST", "/profiles/default/offer/pick", {"credentialId": alice})
    assert status == 200 and picked == {"picked": alice, "ceremony": "page-1"}
    assert pending.answered(10)
    status, assertion = pending.result
    assert status == 200 and assertion["id"] == alice
    assert server.call("GET", "/profiles/default/offer")[1]["offers"] == []
    kinds = [(e["kind"], e["outcome"]) for e in server.call("GET", "/profiles/default/events")[1]["events"]]
    assert kinds[-3:] == [("offer", "offered"), ("offer", "picked"), ("get", "success")], kinds[-3:]
    assert server.call("POST", "/profiles/default/offer/pick", {"credentialId": bob})[0] == 404, "no dropdown is open any more"


def test_the_page_aborts_a_waiting_conditional_get(server):
    register(server, "alice")
    pending = conditional_get(server, ceremony="abc")
    open_offers(server)
    assert server.call("POST", "/profiles/default/ceremonies/abc/abort", {})[1] == {"aborted": True}
    assert pending.answered(10)
    status, error = pending.result
    assert status == 422 and error["error"]["name"] == "AbortError" and error["error"]["reason"] == "aborted"
    assert server.call("POST", "/profiles/default/ceremonies/abc/abort", {})[1] == {"aborted": False}, "it answered already"


def test_a_waiting_conditional_get_does_not_stop_other_callers(server):
    """Chromium refuses a page's second request while its conditional get waits (the shim does that in the page);
    the server itself serves other callers side by side, and the dropdown stays open."""
    alice = register(server, "alice")
    pending = conditional_get(server, ceremony="autofill")
    open_offers(server)
    status, assertion = server.call("POST", "/profiles/default/credentials/get", {"origin": ORIGIN, "options": get_options()})
    assert status == 200 and assertion["id"] == alice
    assert not pending.answered()
    server.call("POST", "/profiles/default/offer/pick", {"credentialId": alice})
    assert pending.answered(10) and pending.result[0] == 200


def test_a_queued_pick_answers_a_conditional_get_at_once(server):
    alice, bob = register(server, "alice"), register(server, "bob")
    server.call("POST", "/profiles/default/user", {"decisions": [f"pick:{alice}"]})
    status, assertion = server.call("POST", "/profiles/default/credentials/get",
                                    {"origin": ORIGIN, "mediation": "conditional", "options": get_options()})
    assert status == 200 and assertion["id"] == alice


def test_a_ceremony_aborted_while_held_never_acts(server):
    before = server.call("GET", "/profiles/default/passkeys")[1]
    hold = server.call("POST", "/profiles/default/holds", {"timeoutMs": 20000})[1]
    options = json.loads(options_to_json(generate_registration_options(rp_id="example.com", rp_name="Example", user_name="dave")))
    pending = Pending(server, "/profiles/default/credentials/create", {"origin": ORIGIN, "options": options, "ceremony": "held-1"})
    end = time.time() + 10
    while server.call("GET", "/holds")[1]["holds"][-1]["state"] != "holding" and time.time() < end:
        time.sleep(0.02)
    assert server.call("POST", "/profiles/default/ceremonies/held-1/abort", {})[1] == {"aborted": True}
    server.call("POST", f"/holds/{hold['id']}/release", {"outcome": "proceed"})
    assert pending.answered(10)
    status, error = pending.result
    assert status == 422 and error["error"]["name"] == "AbortError"
    assert server.call("GET", "/profiles/default/passkeys")[1] == before, "the provider never made the passkey"


def test_one_ceremony_id_is_one_pending_request(server):
    register(server, "alice")
    first = conditional_get(server, ceremony="same")
    open_offers(server)
    status, error = server.call("POST", "/profiles/default/credentials/get",
                                {"origin": ORIGIN, "mediation": "conditional", "options": get_options(), "ceremony": "same"})
    assert status == 422 and error["error"]["name"] == "OperationError" and error["error"]["message"] == "A request is already pending."
    assert server.call("POST", "/profiles/default/credentials/get",
                       {"origin": ORIGIN, "options": get_options(), "ceremony": "not base64url!"})[0] == 400
    server.call("POST", "/profiles/default/ceremonies/same/abort", {})
    assert first.answered(10)


def test_a_page_cannot_abort_another_origins_ceremony(tmp_path):
    s = Server(BINARY, tmp_path, "--allow-origin", "https://evil.example")
    try:
        register(s, "alice")
        pending = conditional_get(s, ceremony="victim")
        open_offers(s)
        status, answer = s.call("POST", "/profiles/default/ceremonies/victim/abort", {}, headers={"Origin": "https://evil.example"})
        assert status == 200 and answer == {"aborted": False}
        assert not pending.answered()
        s.call("POST", "/profiles/default/ceremonies/victim/abort", {})
        assert pending.answered(10)
    finally:
        assert s.stop() == 0


def test_the_cli_shows_what_the_dropdown_offers(tmp_path):
    import subprocess
    vault = str(tmp_path / "v.db")

    def cli(*args, stdin=None):
        return subprocess.run([BINARY, "--vault", vault, *args], capture_output=True, text=True, timeout=60, input=stdin)
    options = options_to_json(generate_registration_options(rp_id="example.com", rp_name="Example", user_name="erin"))
    created = json.loads(cli("create", "--origin", ORIGIN, stdin=options).stdout)
    offer = cli("offer", "--origin", ORIGIN, stdin=options_to_json(generate_authentication_options(rp_id="example.com")))
    assert offer.returncode == 0, offer.stderr
    shown = json.loads(offer.stdout)
    assert shown["rpId"] == "example.com" and [p["credentialId"] for p in shown["passkeys"]] == [created["id"]]


def test_stopping_the_server_answers_every_waiting_ceremony(tmp_path):
    s = Server(BINARY, tmp_path)
    register(s, "alice")
    waiting = conditional_get(s, ceremony="waiting")
    open_offers(s)
    s.call("POST", "/profiles/default/holds", {"timeoutMs": 60000})
    options = json.loads(options_to_json(generate_registration_options(rp_id="example.com", rp_name="Example", user_name="held")))
    held = Pending(s, "/profiles/default/credentials/create", {"origin": ORIGIN, "options": options})
    end = time.time() + 10
    while s.call("GET", "/holds")[1]["holds"][-1]["state"] != "holding" and time.time() < end:
        time.sleep(0.02)
    assert s.stop() == 0, "SIGTERM with suspended requests stops cleanly (libmicrohttpd would abort the process)"
    assert waiting.answered(5) and waiting.result[1]["error"]["name"] == "AbortError"
    assert held.answered(5) and held.result[1]["error"]["name"] == "NotAllowedError"
