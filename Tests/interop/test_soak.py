"""A soak of mixed load on one credemu serve (issue 31): the shim's channel relayed by the server (a real headless
Chromium, a tab opened and closed each round), the WebDriver routes (authenticators made, given a key, used and
removed) and the page routes (ceremonies, signals and passwords as an allowed page), round after round. After a
warm-up the server's resident memory, descriptors and threads stay flat. Bounded in rounds and time, loopback only.
"""
import base64
import json
import os
import time

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from api_client import Server
from conftest import BINARY, STRICT_CSP, example_rp_serving
from test_shim_channel import CEREMONIES

from credemu import Client, browsers, install_shim

ROUNDS = 8
SECONDS = 240
PAGE = "https://shop.example.com"
KEY = {"protocol": "ctap2_1", "transport": "usb", "hasResidentKey": True, "hasUserVerification": True, "isUserVerified": True}


def b64(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def resources(pid):
    """(resident kB, open descriptors, threads) of the server."""
    with open(f"/proc/{pid}/status") as status:
        fields = dict(line.split(":", 1) for line in status if ":" in line)
    return int(fields["VmRSS"].split()[0]), len(os.listdir(f"/proc/{pid}/fd")), int(fields["Threads"])


def settled(pid, seconds=5):
    """The server's resources once a closed tab's channel has ended (its reader thread and socket go a moment later)."""
    deadline = time.monotonic() + seconds
    last = resources(pid)
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = resources(pid)
        if now[1:] == last[1:]:
            return now
        last = now
    return last


def webdriver_round(server, n):
    status, made = server.call("POST", "/webauthn/authenticator", KEY)
    assert status == 200, made
    key = made["value"]
    private = ec.generate_private_key(ec.SECP256R1())
    pkcs8 = private.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    credential = {"credentialId": b64(f"soak-{n}".encode()), "isResidentCredential": True, "rpId": "shop.example.com",
                  "privateKey": b64(pkcs8), "userHandle": b64(b"user"), "signCount": 0}
    assert server.call("POST", f"/webauthn/authenticator/{key}/credential", credential)[0] == 200
    status, listed = server.call("GET", f"/webauthn/authenticator/{key}/credentials")
    assert status == 200 and len(listed["value"]) == 1, listed
    got = server.call("POST", f"/profiles/{key}/credentials/get",
                      {"origin": PAGE, "options": {"challenge": "AAECAwQFBgcICQoLDA0ODw", "rpId": "shop.example.com"}})
    assert got[0] == 200, got
    assert server.call("DELETE", f"/webauthn/authenticator/{key}")[0] == 200


def page_round(server, n):
    page = {"Origin": PAGE}
    options = {"rp": {"id": "shop.example.com", "name": "Shop"}, "user": {"id": b64(f"u{n}".encode()), "name": f"u{n}", "displayName": "U"},
               "challenge": "AAECAwQFBgcICQoLDA0ODw", "pubKeyCredParams": [{"type": "public-key", "alg": -7}]}
    status, made = server.call("POST", "/profiles/default/credentials/create", {"options": options}, headers=page)
    assert status == 200, made
    status, got = server.call("POST", "/profiles/default/credentials/get",
                              {"options": {"challenge": "AAECAwQFBgcICQoLDA0ODw", "allowCredentials": [{"type": "public-key", "id": made["id"]}]}},
                              headers=page)
    assert status == 200 and got["id"] == made["id"], got
    assert server.call("POST", "/profiles/default/signals/unknown",
                       {"options": {"rpId": "shop.example.com", "credentialId": made["id"]}}, headers=page)[0] == 200
    assert server.call("POST", "/profiles/default/passwords",
                       {"origin": PAGE, "username": f"u{n}", "password": "pw"}, headers=page)[0] == 201
    # Hostile odds and ends in the same load: each a named 4xx, none a 5xx.
    for body in ({"options": "{"}, {"options": {"challenge": 7}}, {"origin": "https://other.example", "options": options}):
        assert 400 <= server.call("POST", "/profiles/default/credentials/create", body, headers=page)[0] < 500


def channel_round(server, origin):
    client = Client(server.url)
    with browsers.chromium() as browser:
        install_shim(browser, client, origin=origin, relay="server")
        browser.navigate(origin + "/login")
        for _ in range(3):
            result = browser.evaluate(CEREMONIES.replace("SERVER", json.dumps(server.url)))
            assert "error" not in result and result["created"] == result["got"], result


@pytest.fixture
def soaked(tmp_path):
    with example_rp_serving(STRICT_CSP) as origin:
        server = Server(BINARY, tmp_path, "--allow-origin", f"{PAGE},{origin}")
        try:
            yield server, origin
        finally:
            assert server.stop() == 0, "the server stops cleanly after the soak"


def test_mixed_load_over_the_channel_webdriver_and_page_routes_keeps_memory_descriptors_and_threads_flat(soaked):
    server, origin = soaked
    pid = server.process.pid
    started = time.monotonic()
    samples = []
    for n in range(ROUNDS):
        for k in range(25):
            webdriver_round(server, n * 100 + k)
            page_round(server, n * 100 + k)
        channel_round(server, origin)
        samples.append(settled(pid))
        assert time.monotonic() - started < SECONDS, f"the soak is bounded: {n + 1} rounds took too long"
    assert server.call("GET", "/health")[0] == 200
    warm, last = samples[1], samples[-1]
    # Flat after the first two rounds: a few MB of allocator slack, no descriptor or thread per round.
    assert last[0] - warm[0] < 16 * 1024, ("resident kB grew round by round", samples)
    assert last[1] <= warm[1] + 2, ("descriptors grew", samples)
    assert last[2] <= warm[2] + 2, ("threads grew", samples)
