"""Immediate and conditional gets as the packs say (issue 24 items 3, 4 and 8), through the CLI and over HTTP, as an
RP's test suite would drive them: Chrome 148+'s immediate mediation (NotAllowedError at once with no passkey or in a
private tab, its rate limit per top-frame site with localhost exempt, a TypeError before M148 or where the pack's
browser has none), KeePassXC handing a conditional get to the browser (its dropdown empty; on a device the browser's
own manager answers), and an RP ID that is the caller's public suffix refused even where related origins name it."""
import json
import threading
import time
from pathlib import Path

import pytest
from webauthn import generate_authentication_options, generate_registration_options, options_to_json, verify_authentication_response, verify_registration_response

from api_client import Server
from conftest import BINARY, Credemu

ROOT = Path(__file__).resolve().parents[2]
ORIGIN, RP_ID = "https://shop.example.com", "shop.example.com"
ENUM = "The provided value 'immediate' is not a valid enum value of type CredentialMediationRequirement."


def pack(name):
    return json.loads((ROOT / "providers" / f"{name}.json").read_text())


def registration(user="alice", rp_id=RP_ID):
    options = generate_registration_options(rp_id=rp_id, rp_name="Shop", user_name=user)
    body = json.loads(options_to_json(options))
    body["authenticatorSelection"] = {"residentKey": "required", "userVerification": "preferred"}
    return options, body


def request(rp_id=RP_ID):
    options = generate_authentication_options(rp_id=rp_id)
    return options, json.loads(options_to_json(options))


def text(body):
    return json.dumps(body)


@pytest.fixture
def server(tmp_path):
    s = Server(BINARY, tmp_path)
    yield s
    assert s.stop() == 0


# ---- immediate mediation through the CLI, per pack ----

def immediate_since(pack_id, platform=None):
    """The pack's immediateGet.sinceBrowserVersion on a platform (its variant's, else the pack's own)."""
    data = pack(pack_id)
    knobs = dict(data["knobs"])
    if platform:
        knobs.update(data.get("variants", {}).get(platform, {}))
    return knobs["immediateGet.sinceBrowserVersion"]["value"]


CASES = [("gpm", "chrome-desktop"), ("bitwarden", "chrome-desktop"), ("1password", "chrome-desktop"), ("keepassxc", "chrome-desktop"),
         ("bitwarden", "firefox"), ("apple", "macos"), ("gpm", "android"), ("gpm-pre-m144", "chrome-desktop")]


@pytest.mark.parametrize("pack_id,platform", CASES)
def test_an_immediate_get_through_the_cli_is_chrome_148s_or_a_type_error_as_the_pack_says(tmp_path, pack_id, platform):
    credemu = Credemu(tmp_path, profile="p")
    credemu.run("profile", "create", "p", "--pack", pack_id, "--platform", platform, check_exit=0)
    since = immediate_since(pack_id, platform)
    _, body = request()
    failure = credemu.get(ORIGIN, text(body), "--mediation", "immediate", exit_code=1)["error"]
    if since is None:
        assert failure["name"] == "TypeError" and ENUM in failure["message"], failure
        assert "immediateGet.sinceBrowserVersion" in failure["message"]
        return
    # No passkey for the RP: NotAllowedError at once, nothing shown.
    assert (failure["name"], failure["reason"]) == ("NotAllowedError", "noCredential"), failure
    options, created_body = registration()
    created = credemu.create(ORIGIN, text(created_body))
    verified = verify_registration_response(credential=created, expected_challenge=options.challenge, expected_origin=ORIGIN, expected_rp_id=RP_ID)
    options, body = request()
    started = time.monotonic()
    assertion = credemu.get(ORIGIN, text(body), "--mediation", "immediate")
    verify_authentication_response(credential=assertion, expected_challenge=options.challenge, expected_origin=ORIGIN, expected_rp_id=RP_ID,
                                   credential_public_key=verified.credential_public_key, credential_current_sign_count=0)
    assert time.monotonic() - started < 10
    # A browser older than the pack's version: the enum has no such value.
    older = str(int(since.split(".")[0]) - 1)
    credemu.run("profile", "set", "p", "--browserVersion", older, check_exit=0)
    failure = credemu.get(ORIGIN, text(body), "--mediation", "immediate", exit_code=1)["error"]
    assert failure["name"] == "TypeError" and ENUM in failure["message"] and since in failure["message"], failure
    # In a private tab (Chrome's Incognito): NotAllowedError at once, though the passkey is there.
    credemu.run("profile", "set", "p", "--browserVersion", since, "--privateBrowsing", "true", check_exit=0)
    failure = credemu.get(ORIGIN, text(body), "--mediation", "immediate", exit_code=1)["error"]
    assert (failure["name"], failure["reason"]) == ("NotAllowedError", "privateBrowsing"), failure


def test_three_immediate_gets_through_the_cli_meet_the_rate_limit_the_server_applies(tmp_path):
    """Each CLI call is its own process; the counts are the vault's, so the third in a second is over 2 in 5 s."""
    credemu = Credemu(tmp_path, profile="p")
    credemu.run("profile", "create", "p", "--pack", "gpm", check_exit=0)
    credemu.create(ORIGIN, text(registration()[1]))
    credemu.run("clock", "set", "2030-01-01T00:00:00Z", check_exit=0)
    _, body = request()
    outcomes = []
    for _ in range(3):
        proc = credemu.run("get", "--origin", ORIGIN, "--mediation", "immediate", input=text(body))
        outcomes.append("ok" if proc.returncode == 0 else json.loads(proc.stdout)["error"]["reason"])
    assert outcomes == ["ok", "ok", "rateLimited"], outcomes
    credemu.run("clock", "advance", "5s", check_exit=0)
    assert credemu.get(ORIGIN, text(body), "--mediation", "immediate")["id"], "the short window slid"


# ---- immediate mediation's rate limit over HTTP (the vault keeps the counts) ----

def immediate(server, origin, rp_id, top=None):
    body = {"origin": origin, "options": request(rp_id)[1], "mediation": "immediate"}
    if top:
        body["topOrigin"] = top
    status, answer = server.call("POST", "/profiles/default/credentials/get", body)
    return "ok" if status == 200 else answer["error"]["reason"]


def test_the_rate_limit_counts_per_top_frame_site_and_exempts_localhost(server):
    for origin, rp_id in [(ORIGIN, RP_ID), ("https://other.example", "other.example"), ("http://localhost:8080", "localhost")]:
        status, created = server.call("POST", "/profiles/default/credentials/create", {"origin": origin, "options": registration(rp_id=rp_id)[1]})
        assert status == 200, created
    assert server.call("POST", "/clock", {"set": "2030-01-01T00:00:00Z"})[0] == 200
    # 2 in 5 s per registrable domain: login.example.com is the same site as shop.example.com.
    assert [immediate(server, ORIGIN, RP_ID) for _ in range(2)] == ["ok", "ok"]
    assert immediate(server, "https://login.example.com", "example.com") == "rateLimited"
    assert immediate(server, "https://other.example", "other.example") == "ok", "another site has its own count"
    # An iframe counts for its top frame's site.
    assert immediate(server, "https://other.example", "other.example", top="https://www.example.com") == "rateLimited"
    # localhost is exempt.
    assert [immediate(server, "http://localhost:8080", "localhost") for _ in range(6)] == ["ok"] * 6
    # The short window slides: every 5 s two more pass, until the long window holds 10 in 60 s. It counts every
    # request its own check passed, those the short window then refused included (the two above).
    outcomes = []
    for _ in range(6):
        assert server.call("POST", "/clock", {"advance": 5})[0] == 200
        outcomes += [immediate(server, ORIGIN, RP_ID) for _ in range(2)]
    assert outcomes == ["ok"] * 6 + ["rateLimited"] * 6, outcomes
    assert immediate(server, "https://other.example", "other.example") == "ok"
    assert server.call("POST", "/clock", {"advance": 60})[0] == 200
    assert immediate(server, ORIGIN, RP_ID) == "ok", "a minute later the long window is empty again"

# ---- KeePassXC hands a conditional get to the browser ----

def waiting(call):
    """A request that waits (a conditional get), on its own thread; its (status, body) lands in result["answer"]."""
    result = {}
    thread = threading.Thread(target=lambda: result.update(answer=call()), daemon=True)
    thread.start()
    return thread, result


def offer_of(server, target, ceremony):
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        offer = next((o for o in server.call("GET", target + "/offer")[1]["offers"] if o["ceremony"] == ceremony), None)
        if offer:
            return offer
        time.sleep(0.02)
    raise AssertionError(f"no dropdown for {ceremony} on {target}")


def test_keepassxc_passes_a_conditional_get_on_and_on_a_device_the_browsers_manager_answers(server):
    for name, pack_id in [("kp", "keepassxc"), ("g", "gpm")]:
        assert server.call("POST", "/profiles", {"name": name, "pack": pack_id})[0] == 201
    status, kp_passkey = server.call("POST", "/profiles/kp/credentials/create", {"origin": ORIGIN, "options": registration("kp-user")[1]})
    assert status == 200
    # Its page says so; the conditional get waits, as the browser's own would, with an empty dropdown: KeePassXC's
    # passkey is not in it and cannot be picked; the page's abort ends it.
    assert server.call("GET", "/profiles/kp/capabilities")[1]["isConditionalMediationAvailable"] is False
    _, body = request()
    thread, result = waiting(lambda: server.call("POST", "/profiles/kp/credentials/get",
                                                 {"origin": ORIGIN, "options": body, "mediation": "conditional", "ceremony": "k-1"}))
    assert offer_of(server, "/profiles/kp", "k-1")["passkeys"] == []
    assert server.call("POST", "/profiles/kp/offer/pick", {"credentialId": kp_passkey["id"], "ceremony": "k-1"})[0] != 200
    assert server.call("POST", "/profiles/kp/ceremonies/k-1/abort") == (200, {"aborted": True})
    thread.join(20)
    assert result["answer"][1]["error"]["name"] == "AbortError", result
    assert server.call("GET", "/profiles/kp/passkeys")[1]["passkeys"][0]["lastUsed"] is None
    # A modal get still answers with it.
    status, assertion = server.call("POST", "/profiles/kp/credentials/get", {"origin": ORIGIN, "options": body})
    assert status == 200 and assertion["id"] == kp_passkey["id"]

    # On a device with GPM behind it, the browser's own dropdown lists GPM's passkey only, and GPM answers the pick.
    status, g_passkey = server.call("POST", "/profiles/g/credentials/create", {"origin": ORIGIN, "options": registration("g-user")[1]})
    assert status == 200
    assert server.call("POST", "/devices", {"name": "desk", "providers": ["kp", "g"]})[0] == 201
    assert server.call("GET", "/devices/desk/capabilities")[1]["isConditionalMediationAvailable"] is False, "KeePassXC's page script is the page's API"
    thread, result = waiting(lambda: server.call("POST", "/devices/desk/credentials/get",
                                                 {"origin": ORIGIN, "options": body, "mediation": "conditional", "ceremony": "c-1"}))
    offer = offer_of(server, "/devices/desk", "c-1")
    assert [(p["credentialId"], p["provider"]) for p in offer["passkeys"]] == [(g_passkey["id"], "g")]
    assert server.call("POST", "/devices/desk/offer/pick", {"credentialId": g_passkey["id"], "ceremony": "c-1"})[0] == 200
    thread.join(20)
    assert result["answer"][0] == 200 and result["answer"][1]["id"] == g_passkey["id"]


def test_keepassxc_answers_no_conditional_get_through_the_cli(tmp_path):
    credemu = Credemu(tmp_path, profile="kp")
    credemu.run("profile", "create", "kp", "--pack", "keepassxc", check_exit=0)
    created = credemu.create(ORIGIN, text(registration()[1]))
    _, body = request()
    failure = credemu.get(ORIGIN, text(body), "--mediation", "conditional", exit_code=1)["error"]
    assert failure["name"] == "NotAllowedError" and "conditionalGet.mode = passedToBrowser" in failure["message"], failure
    assert json.loads(credemu.run("offer", "--origin", ORIGIN, input=text(body), check_exit=0).stdout)["passkeys"] == []
    assert credemu.get(ORIGIN, text(body))["id"] == created["id"], "a modal get answers"


# ---- an RP ID that is the caller's public suffix ----

@pytest.mark.parametrize("pack_id", ["gpm", "bitwarden", "keepassxc", "apple"])
def test_a_public_suffix_rp_id_is_refused_even_when_related_origins_list_the_caller(tmp_path, pack_id):
    credemu = Credemu(tmp_path, profile="p")
    credemu.run("profile", "create", "p", "--pack", pack_id, "--platform", "macos" if pack_id == "apple" else "chrome-desktop",
                "--relatedOrigins", json.dumps({"github.io": ["https://alice.github.io"]}), check_exit=0)
    _, body = registration(rp_id="github.io")
    failure = credemu.create("https://alice.github.io", text(body), exit_code=1)["error"]
    assert failure["name"] == "SecurityError", failure
    _, body = request("github.io")
    assert credemu.get("https://alice.github.io", text(body), exit_code=1)["error"]["name"] == "SecurityError"
    assert credemu.json("vault", "list") == [], "nothing was stored"
