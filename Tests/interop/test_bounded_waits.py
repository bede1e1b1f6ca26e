"""Every wait and board is bounded per caller and freed when its client goes (issue 21), tried as an attacker would
against a running `credemu serve`: holds pruned around a waiting ceremony, pages that leave conditional gets behind,
scenario runs too large, too many or abandoned, and SIGTERM while all of that waits. Throughout, /health answers,
nothing crashes, and the server stops cleanly within seconds."""
import http.client
import json
import select
import signal
import socket
import subprocess
import time

import pytest
from webauthn import generate_authentication_options, generate_registration_options, options_to_json

from api_client import Server
from conftest import BINARY

ORIGIN = "https://login.example.com"
PAGE = "https://a.example"


@pytest.fixture
def server(tmp_path):
    s = Server(BINARY, tmp_path, "--allow-origin", PAGE)
    yield s
    assert s.stop() == 0, "the server survived every request and stops cleanly"


class Request:
    """A request on a connection of its own, left open: the test reads its answer, or abandons it by closing the
    connection, as a page that navigates away or a client that gives up does."""

    def __init__(self, server, method, path, body=None, headers=None):
        port = int(server.url.rsplit(":", 1)[1])
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        data = json.dumps(body).encode() if body is not None else b""
        head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Content-Length: {len(data)}"]
        if body is not None:
            head.append("Content-Type: application/json")
        head += [f"{name}: {value}" for name, value in (headers or {}).items()]
        self.sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + data)

    def answer(self, within=30):
        self.sock.settimeout(within)
        response = http.client.HTTPResponse(self.sock)
        response.begin()
        payload = response.read()
        self.sock.close()
        return response.status, json.loads(payload) if payload else None, response

    def abandon(self):
        self.sock.close()


def alive(server):
    status, body = server.call("GET", "/health")
    return status == 200 and body["status"] == "ok"


def wait_until(condition, within=15, what="the condition"):
    end = time.time() + within
    while time.time() < end:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what} did not happen within {within} s")


def registration(user, rp_id="example.com"):
    return json.loads(options_to_json(generate_registration_options(rp_id=rp_id, rp_name="Example", user_name=user)))


def authentication(rp_id="example.com"):
    return json.loads(options_to_json(generate_authentication_options(rp_id=rp_id)))


def holds(server):
    return server.call("GET", "/holds")[1]["holds"]


def hold_state(server, hold_id):
    return next((h["state"] for h in holds(server) if h["id"] == hold_id), None)


def offers(server, profile="default"):
    return server.call("GET", f"/profiles/{profile}/offer")[1]["offers"]


def conditional_get(server, ceremony, profile="default", page=None):
    """A conditional get that waits for the user's pick, from `page` (its Origin header) or from a caller without one."""
    if page:
        body = {"mediation": "conditional", "options": authentication(rp_id="a.example"), "ceremony": ceremony}
        return Request(server, "POST", f"/profiles/{profile}/credentials/get", body, {"Origin": page})
    body = {"origin": ORIGIN, "mediation": "conditional", "options": authentication(), "ceremony": ceremony}
    return Request(server, "POST", f"/profiles/{profile}/credentials/get", body)


def scenario(steps, times, name="load"):
    return {"format": "credemu-scenario", "version": 1, "name": name, "title": name,
            "steps": [{"do": "create", "times": times} for _ in range(steps)]}


# The costliest run the server's limits let through: 2,000 creates in one column (a vault compared before and after
# each), longer than any wait below on any build; its deadline ends it after 60 s.
LONG_RUN = {"scenario": scenario(20, 100), "providers": "gpm"}
SHORT_RUN = {"scenario": scenario(1, 1), "providers": "gpm"}


def test_a_hold_pruned_around_a_waiting_create_times_out_and_the_server_lives(server):
    """Issue 21's reproduction: 64 finished holds, 10 armed on a second profile, one on default with 1.5 s; a create
    waits on it, the 10 are released and GET /holds prunes. The wait used to end on a pruned index (SIGILL)."""
    for _ in range(64):
        hold = server.call("POST", "/profiles/default/holds", {"timeoutMs": 60000})[1]
        assert server.call("POST", f"/holds/{hold['id']}/release", {"outcome": "proceed"})[0] == 200
    assert server.call("POST", "/profiles", {"name": "office", "pack": "gpm"})[0] == 201
    others = [server.call("POST", "/profiles/office/holds", {"timeoutMs": 60000})[1]["id"] for _ in range(10)]
    held = server.call("POST", "/profiles/default/holds", {"timeoutMs": 1500})[1]["id"]
    create = Request(server, "POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": registration("held")})
    wait_until(lambda: hold_state(server, held) == "holding", what="the create waiting on its hold")
    for other in others:
        server.call("POST", f"/holds/{other}/release", {"outcome": "cancel"})
    assert hold_state(server, held) == "holding", "the listing pruned the holds before it, not it"
    status, error, _ = create.answer()
    assert status == 422 and error["error"]["name"] == "NotAllowedError" and error["error"]["reason"] == "timedOut"
    assert hold_state(server, held) == "expired"
    assert alive(server)
    assert server.call("GET", "/profiles/default/passkeys")[1]["passkeys"] == [], "the timed-out create made nothing"


def test_one_profile_cannot_take_every_hold(server):
    server.call("POST", "/profiles", {"name": "office", "pack": "gpm"})
    for _ in range(16):
        assert server.call("POST", "/profiles/default/holds", {"timeoutMs": 60000})[0] == 201
    status, error = server.call("POST", "/profiles/default/holds", {"timeoutMs": 60000})
    assert status == 409 and "profile default" in error["error"]["message"]
    assert server.call("POST", "/profiles/office/holds", {"timeoutMs": 60000})[0] == 201, "another profile keeps its holds"


def test_a_held_create_whose_client_leaves_ends_its_hold_and_never_acts(server):
    hold = server.call("POST", "/profiles/default/holds", {"timeoutMs": 60000})[1]["id"]
    create = Request(server, "POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": registration("gone")})
    wait_until(lambda: hold_state(server, hold) == "holding", what="the create waiting on its hold")
    create.abandon()
    wait_until(lambda: hold_state(server, hold) == "abandoned", within=10, what="the hold ending with its client")
    assert server.call("GET", "/profiles/default/passkeys")[1]["passkeys"] == [], "the provider never acted"
    kinds = [(e["kind"], e["outcome"]) for e in server.call("GET", "/profiles/default/events")[1]["events"]]
    assert ("create", "success") not in kinds


def test_conditional_gets_a_page_abandons_free_their_slots_and_never_starve_other_profiles(server):
    """Issue 21: 32 abandoned conditional gets from one page made every profile's conditional get 'A request is
    already pending.' for 10 minutes. A page now has 8 slots, each freed when its connection closes."""
    server.call("POST", "/profiles", {"name": "office", "pack": "gpm"})
    left = [conditional_get(server, f"tab-{n}", page=PAGE) for n in range(8)]
    wait_until(lambda: len(offers(server)) == 8, what="the page's 8 dropdowns")
    status, error, _ = conditional_get(server, "tab-8", page=PAGE, profile="office").answer()
    assert status == 422 and error["error"]["message"] == "A request is already pending.", "a page's slots are bounded"
    other = conditional_get(server, "rp-office", profile="office")
    wait_until(lambda: len(offers(server, "office")) == 1, what="another caller's dropdown on another profile")
    for request in left:
        request.abandon()
    wait_until(lambda: offers(server) == [], within=10, what="the abandoned dropdowns closing")
    again = conditional_get(server, "tab-again", page=PAGE)
    wait_until(lambda: [o["ceremony"] for o in offers(server)] == ["tab-again"], what="the page's new conditional get waiting")
    events = server.call("GET", "/profiles/default/events?kind=get")[1]["events"]
    assert sum(1 for e in events if e["outcome"] == "aborted") == 8, "each abandoned get is logged as aborted"
    assert server.call("POST", "/profiles/default/ceremonies/tab-again/abort", {}, headers={"Origin": PAGE})[1] == {"aborted": True}
    assert again.answer()[1]["error"]["name"] == "AbortError"
    assert server.call("POST", "/profiles/office/ceremonies/rp-office/abort", {})[1] == {"aborted": True}
    assert other.answer()[0] == 422
    assert alive(server)


def test_a_profile_has_its_own_slots_for_callers_without_an_origin(server):
    server.call("POST", "/profiles", {"name": "office", "pack": "gpm"})
    waiting = [conditional_get(server, f"w-{n}") for n in range(32)]
    wait_until(lambda: len(offers(server)) == 32, what="32 dropdowns on default")
    status, error, _ = conditional_get(server, "w-32").answer()
    assert status == 422 and error["error"]["name"] == "OperationError"
    office = conditional_get(server, "o-1", profile="office")
    wait_until(lambda: len(offers(server, "office")) == 1, what="office's dropdown, whatever default holds")
    for request in waiting + [office]:
        request.abandon()
    wait_until(lambda: offers(server) == [] and offers(server, "office") == [], within=10, what="every abandoned dropdown closing")
    assert alive(server)


def test_a_request_the_quick_check_misses_never_waits_on_a_pool_thread(server):
    """The server picks what may wait by a byte check before parsing: a conditional get spelt with a JSON escape, or a
    scenario run at a path written differently, would have waited on one of the pool's four threads. The first now
    answers at once (as the CLI does, with the most recent passkey), the second runs off the pool like any other."""
    server.call("POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": registration("alice")})
    body = json.dumps({"origin": ORIGIN, "mediation": "MEDIATION", "options": authentication()}).replace("MEDIATION", "cond\\u0069tional")
    port = int(server.url.rsplit(":", 1)[1])
    escaped = []
    for _ in range(6):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/profiles/default/credentials/get", body=body, headers={"Content-Type": "application/json"})
        escaped.append(conn)
    statuses = [conn.getresponse().status for conn in escaped]
    assert statuses == [200] * 6, "answered at once, none left waiting for a pick"
    assert offers(server) == []
    runs = [Request(server, "POST", "/scenarios//run/", LONG_RUN) for _ in range(3)]
    readable, _, _ = select.select([r.sock for r in runs], [], [], 20)
    assert len(readable) == 1, "two run, one is refused: the alias is the same route, off the pool"
    for _ in range(5):
        assert alive(server)
    for run in runs:
        run.abandon()


def test_a_scenario_over_the_limits_is_refused_before_it_runs(server):
    # Issue 21's 1.7 KB body: 50 steps of 100 creates across every pack (quadratic in creates, 10 minutes and more).
    body = {"scenario": scenario(50, 100)}
    assert len(json.dumps(body)) < 2048
    for run, fault in [(body, "step runs"), ({"scenario": scenario(101, 1), "providers": "gpm"}, "101 steps"),
                       ({"scenario": scenario(21, 100), "providers": "gpm"}, "2100 in all")]:
        status, error = server.call("POST", "/scenarios/run", run)
        assert status == 400 and error["error"]["name"] == "ScenarioTooLarge", error
        assert fault in error["error"]["message"]
    assert server.call("POST", "/scenarios/run", SHORT_RUN)[0] == 200


def test_scenario_runs_are_bounded_cancelled_with_their_client_and_health_answers_throughout(server):
    """Issue 21: 8 bodies of about 1 KB left /health unanswered. Two run at a time, off the pool's threads; the others
    are refused at once, and a run whose client leaves stops at its next step."""
    runs = [Request(server, "POST", "/scenarios/run", LONG_RUN) for _ in range(8)]
    answered = []
    end = time.time() + 20
    while len(answered) < 6 and time.time() < end:
        readable, _, _ = select.select([r.sock for r in runs if r not in answered], [], [], 1)
        answered += [r for r in runs if r.sock in readable]
    assert len(answered) == 6, "all but two are answered at once"
    for run in answered:
        status, error, response = run.answer()
        assert status == 503 and error["error"]["name"] == "ScenarioRunsBusy" and response.getheader("Retry-After") == "1"
    running = [r for r in runs if r not in answered]
    status, error = server.call("POST", "/scenarios/run", SHORT_RUN)
    assert status == 503 and error["error"]["name"] == "ScenarioRunsBusy", "the documented refusal"
    for _ in range(10):
        assert alive(server), "/health answers while two runs take the cores"
    for run in running:
        run.abandon()
    # Each abandoned run would go on for tens of seconds; cancelled, its slot is free within a step run.
    wait_until(lambda: server.call("POST", "/scenarios/run", SHORT_RUN)[0] == 200, within=10, what="the abandoned runs stopping")
    assert alive(server)


def two_long_runs(server):
    """Two scenario runs that take both slots: of three sent at once, the one refused at once tells the others run."""
    runs = [Request(server, "POST", "/scenarios/run", LONG_RUN) for _ in range(3)]
    readable, _, _ = select.select([r.sock for r in runs], [], [], 20)
    assert len(readable) == 1, "one of three runs is refused at once, the other two run"
    refused = next(r for r in runs if r.sock in readable)
    assert refused.answer()[1]["error"]["name"] == "ScenarioRunsBusy"
    return [r for r in runs if r is not refused]


def test_sigterm_stops_the_server_within_seconds_whatever_waits_or_runs(tmp_path):
    s = Server(BINARY, tmp_path, "--allow-origin", PAGE)
    run, abandoned_run = two_long_runs(s)
    waiting = conditional_get(s, "waiting")
    page = conditional_get(s, "page", page=PAGE)
    wait_until(lambda: len(offers(s)) == 2, what="two dropdowns")
    hold = s.call("POST", "/profiles/default/holds", {"timeoutMs": 120000})[1]["id"]
    held = Request(s, "POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": registration("held")})
    wait_until(lambda: hold_state(s, hold) == "holding", what="a held create")
    abandoned_run.abandon()
    started = time.time()
    s.process.send_signal(signal.SIGTERM)
    assert s.process.wait(timeout=15) == 0, "a clean exit"
    assert time.time() - started < 10, "within seconds, not at the end of a run"
    assert "stopped; the vault is closed" in s.process.stderr.read()
    assert run.answer(5)[1]["error"]["name"] == "ServerStopping"
    assert waiting.answer(5)[1]["error"]["name"] == "AbortError"
    assert page.answer(5)[1]["error"]["name"] == "AbortError"
    assert held.answer(5)[1]["error"]["name"] == "NotAllowedError"
    listed = subprocess.run([BINARY, "--vault", str(tmp_path / "vault.db"), "vault", "list"], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr


def test_the_cli_runs_larger_scenarios_but_still_refuses_unbounded_ones(tmp_path):
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(scenario(1001, 1)))
    proc = subprocess.run([BINARY, "--vault", str(tmp_path / "v.db"), "scenario", "run", str(path), "--providers", "gpm"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"]["name"] == "ScenarioTooLarge", proc.stderr
    path.write_text(json.dumps(scenario(101, 1)))
    proc = subprocess.run([BINARY, "--vault", str(tmp_path / "v.db"), "scenario", "run", str(path), "--providers", "gpm", "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, "more steps than the server takes"
    assert len(json.loads(proc.stdout)["steps"]) == 101
