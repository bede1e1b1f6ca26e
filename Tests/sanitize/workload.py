#!/usr/bin/env python3
"""A short, bounded API workload against a sanitizer-built `credemu serve` (`make sanitize`).

    workload.py CREDEMU_BINARY

Starts the server on a free port over a fresh vault, drives every route group (profiles, passwords and
autofill, create and get ceremonies with py_webauthn-shaped options, the three signals, the clock, holds (pruned
around waiting ceremonies, timed out, abandoned by their clients), user decisions, events and findings, a scenario
run abandoned mid-way), some malformed and extreme input, a few concurrent clients, and the server's DevTools
channel against fake DevTools peers that flood it and never read (one left open at the stop); then
stops it with SIGTERM and reopens the vault with the CLI. Fails when the server dies, answers 5xx, does not
exit cleanly, or when its stderr (or the CLI's) carries a sanitizer report. Python's standard library only.
"""
import base64
import hashlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ORIGIN = "https://shop.example.com"
RP_ID = "example.com"
# py_webauthn 3's default pubKeyCredParams, in its order.
PY_WEBAUTHN_ALGORITHMS = [-7, -8, -36, -37, -38, -39, -257, -258, -259]
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "WARNING: AddressSanitizer", "ERROR: LeakSanitizer",
                     "WARNING: ThreadSanitizer", "runtime error:", "ThreadSanitizer: reported")


class Failure(Exception):
    pass


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def registration_options(user, user_id=None, exclude=(), resident_key="preferred"):
    """Shaped like py_webauthn's `options_to_json(generate_registration_options(...))`."""
    return {
        "rp": {"name": "Shop", "id": RP_ID},
        "user": {"id": user_id or b64url(os.urandom(16)), "name": user, "displayName": user},
        "challenge": b64url(os.urandom(32)),
        "pubKeyCredParams": [{"type": "public-key", "alg": alg} for alg in PY_WEBAUTHN_ALGORITHMS],
        "timeout": 60000,
        "excludeCredentials": [{"type": "public-key", "id": cid} for cid in exclude],
        "authenticatorSelection": {"residentKey": resident_key, "requireResidentKey": resident_key == "required",
                                   "userVerification": "preferred"},
        "attestation": "none",
    }


def authentication_options(allow=()):
    """Shaped like py_webauthn's `options_to_json(generate_authentication_options(...))`."""
    return {"rpId": RP_ID, "challenge": b64url(os.urandom(32)), "timeout": 60000,
            "allowCredentials": [{"type": "public-key", "id": cid} for cid in allow], "userVerification": "preferred"}


class Server:
    def __init__(self, binary, directory):
        self.binary = binary
        self.directory = Path(directory)
        self.vault = self.directory / "vault.db"
        self.stderr_path = self.directory / "server.stderr"
        port_file = self.directory / "port"
        port_file.unlink(missing_ok=True)
        self.stderr = open(self.stderr_path, "w")
        self.process = subprocess.Popen([binary, "--vault", str(self.vault), "serve", "--port", "0", "--port-file",
                                         str(port_file), "--threads", "4"],
                                        stdout=subprocess.DEVNULL, stderr=self.stderr)
        deadline = time.time() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            if self.process.poll() is not None:
                raise Failure(f"the server exited with {self.process.returncode} before it listened")
            if time.time() > deadline:
                raise Failure("the server did not write its port file within 60 s")
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{port_file.read_text().strip()}"
        self.requests = 0
        self.lock = threading.Lock()

    def call(self, method, path, body=None, raw=None, expect=None):
        """One request; `expect` is a status or a tuple of them. Every POST, PATCH and DELETE says it is JSON."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None or method in ("POST", "PATCH", "DELETE"):
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, payload = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, payload = error.code, error.read()
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            raise Failure(f"{method} {path}: no answer ({error}); server exit status {self.process.poll()}") from error
        with self.lock:
            self.requests += 1
        expected = expect if isinstance(expect, tuple) else (expect,)
        if status >= 500 and status not in expected:  # a 503 only where the caller expects one (scenario runs busy)
            raise Failure(f"{method} {path} answered {status}: {payload[:300]!r}")
        if expect is not None and status not in expected:
            raise Failure(f"{method} {path} answered {status}, expected {expect}: {payload[:300]!r}")
        try:
            return status, json.loads(payload) if payload else None
        except ValueError:
            return status, payload

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise Failure("the server did not stop within 60 s of SIGTERM")
        self.stderr.close()
        return self.process.returncode


def create(server, profile="default", user="alice@example.com", expect=200, options=None, **extra):
    body = {"origin": ORIGIN, "options": options or registration_options(user), **extra}
    return server.call("POST", f"/profiles/{profile}/credentials/create", body, expect=expect)[1]


def get(server, profile="default", allow=(), expect=200, **extra):
    body = {"origin": ORIGIN, "options": authentication_options(allow), **extra}
    return server.call("POST", f"/profiles/{profile}/credentials/get", body, expect=expect)[1]


def documents_and_profiles(s):
    s.call("GET", "/health", expect=200)
    s.call("GET", "/openapi.json", expect=200)
    s.call("GET", "/shim.js", expect=200)
    s.call("GET", "/providers", expect=200)
    s.call("POST", "/origins", {"origin": "http://localhost:8000"}, expect=200)
    s.call("POST", "/origins", {"origin": "http://localhost:8000/path"}, expect=400)
    s.call("GET", "/origins", expect=200)
    # The shim's channel relayed by the server: no browser here, so a DevTools port nothing listens on.
    s.call("POST", "/channels", {"devtools": "ws://127.0.0.1:1/devtools/page/X"}, expect=502)
    s.call("POST", "/channels", {"devtools": "ws://10.0.0.1:9222/devtools/page/X"}, expect=400)
    s.call("GET", "/channels", expect=200)
    s.call("DELETE", "/channels/ch1", expect=404)
    s.call("GET", "/profiles", expect=200)
    s.call("POST", "/profiles", {"name": "ios", "pack": "apple", "platform": "ios", "osVersion": "18.1"}, expect=201)
    s.call("POST", "/profiles", {"name": "droid", "pack": "gpm", "platform": "android"}, expect=201)
    s.call("POST", "/profiles", {"name": "spec", "pack": "webauthn-spec"}, expect=201)
    s.call("POST", "/profiles", {"name": "ios"}, expect=409)
    s.call("POST", "/profiles", {"name": "x", "platform": "windows"}, expect=400)
    s.call("PATCH", "/profiles/ios", {"automaticPasskeyUpgrades": False}, expect=200)
    s.call("GET", "/profiles/ios", expect=200)
    s.call("GET", "/profiles/ghost", expect=404)
    for platform in ("desktop", "android", "ios", "macos"):
        s.call("GET", f"/profiles/default/capabilities?platform={platform}")


def passwords_and_upgrade(s):
    s.call("POST", "/clock", {"set": "2026-11-29T10:00:00Z"}, expect=200)
    s.call("POST", "/profiles/default/passwords", {"origin": ORIGIN, "username": "alice@example.com", "password": "pw"}, expect=201)
    s.call("POST", "/profiles/default/passwords", {"origin": ORIGIN, "username": "bob@example.com", "password": "pw2 ünïcode"}, expect=201)
    s.call("GET", "/profiles/default/passwords", expect=200)
    s.call("POST", "/clock", {"advance": "1d"}, expect=200)
    s.call("POST", "/profiles/default/autofill", {"origin": ORIGIN, "username": "alice@example.com", "submit": True}, expect=200)
    s.call("POST", "/clock", {"advance": 60}, expect=200)
    create(s, mediation="conditional")  # the automatic upgrade
    s.call("POST", "/clock", {"advance": "6m"}, expect=200)
    create(s, user="again@example.com", mediation="conditional", expect=422)  # no recent password: silent
    s.call("POST", "/profiles/default/passwords/use", {"origin": ORIGIN, "username": "alice@example.com"}, expect=200)
    s.call("GET", "/clock", expect=200)


def ceremonies_signals_and_decisions(s):
    carol = registration_options("carol@example.com")
    created = create(s, options=carol)
    for profile in ("spec", "ios", "droid"):
        create(s, profile=profile, user=f"{profile}@example.com")
        get(s, profile=profile)
    get(s, allow=[created["id"]])
    get(s, pick=created["id"])
    s.call("POST", "/profiles/default/user", {"decisions": ["cancel", "timeout"]}, expect=200)
    get(s, expect=422)
    create(s, user="dave@example.com", expect=422)
    s.call("POST", "/profiles/default/user", {"decisions": ["accept"]}, expect=200)
    s.call("GET", "/profiles/default/user", expect=200)
    s.call("DELETE", "/profiles/default/user", expect=200)
    for passkey in s.call("GET", "/profiles/default/passkeys", expect=200)[1]["passkeys"]:
        s.call("GET", f"/profiles/default/passkeys/{passkey['credentialId']}", expect=200)
    signal_base = {"origin": ORIGIN}
    s.call("POST", "/profiles/default/signals/unknown",
           {**signal_base, "options": {"rpId": RP_ID, "credentialId": created["id"]}}, expect=200)
    s.call("POST", "/profiles/default/signals/accepted",
           {**signal_base, "options": {"rpId": RP_ID, "userId": carol["user"]["id"], "allAcceptedCredentialIds": [created["id"]]}},
           expect=200)
    s.call("POST", "/profiles/default/signals/details",
           {**signal_base, "options": {"rpId": RP_ID, "userId": carol["user"]["id"], "name": "carol2", "displayName": "Carol Two"}},
           expect=200)
    # Android's signal rate limit, until it answers 429.
    options = registration_options("erin@example.com")
    s.call("POST", "/profiles/droid/credentials/create", {"origin": ORIGIN, "options": options}, expect=200)
    details = {**signal_base, "options": {"rpId": RP_ID, "userId": options["user"]["id"], "name": "n", "displayName": "d"}}
    accepted = {**signal_base, "options": {"rpId": RP_ID, "userId": options["user"]["id"], "allAcceptedCredentialIds": []}}
    s.call("POST", "/profiles/droid/signals/accepted", accepted)
    statuses = [s.call("POST", "/profiles/droid/signals/details", details)[0] for _ in range(12)]
    if 429 not in statuses:
        raise Failure(f"the Android signal rate limit never answered 429: {statuses}")
    s.call("DELETE", f"/profiles/default/passkeys/{created['id']}", expect=200)
    s.call("GET", f"/profiles/default/passkeys/{created['id']}", expect=404)
    s.call("GET", "/profiles/default/events", expect=200)
    s.call("GET", "/profiles/default/events?kind=create&limit=5", expect=200)
    s.call("GET", "/profiles/default/events?after=3", expect=200)
    s.call("GET", "/profiles/default/findings", expect=200)


def holds(s):
    hold = s.call("POST", "/profiles/default/holds", {"timeoutMs": 10000}, expect=201)[1]
    result = {}

    def held():
        try:
            result["create"] = create(s, user="held@example.com")
        except Exception as error:  # noqa: BLE001
            result["error"] = error

    worker = threading.Thread(target=held)
    worker.start()
    deadline = time.time() + 20
    while time.time() < deadline:
        states = [h["state"] for h in s.call("GET", "/holds", expect=200)[1]["holds"] if h["id"] == hold["id"]]
        if states == ["holding"]:
            break
        time.sleep(0.02)
    s.call("POST", f"/holds/{hold['id']}/release", {"outcome": "proceed"}, expect=200)
    worker.join(30)
    if "error" in result or "create" not in result:
        raise Failure(f"the held create did not complete: {result}")
    s.call("POST", "/profiles/default/holds", {"timeoutMs": 50}, expect=201)
    create(s, user="late@example.com", expect=422)  # the hold times out
    s.call("POST", "/holds/hold-99/release", {"outcome": "proceed"}, expect=404)


def raw_request(s, path, body):
    """A POST on a connection of its own, left open for the caller to read or abandon (close)."""
    port = int(s.url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    data = json.dumps(body).encode()
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
    return sock


def hold_states(s):
    return {h["id"]: h["state"] for h in s.call("GET", "/holds", expect=200)[1]["holds"]}


def wait_for(condition, what, within=20):
    deadline = time.time() + within
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise Failure(f"{what} did not happen within {within} s")


def holds_pruned_and_abandoned(s):
    """Holds armed, released and pruned on two profiles while ceremonies wait on them and other clients list them
    (the board's lock, its pruning around a wait, timeouts); a held create and a conditional get whose clients leave,
    and a scenario run abandoned mid-way (the waits' and the runner's client checks)."""
    s.call("POST", "/profiles", {"name": "wl-office", "pack": "gpm"}, expect=201)
    for _ in range(70):  # more finished holds than the board keeps
        hold = s.call("POST", "/profiles/default/holds", {"timeoutMs": 60000}, expect=201)[1]
        s.call("POST", f"/holds/{hold['id']}/release", {"outcome": "proceed"}, expect=200)
    errors = []
    done = threading.Event()

    def lister():
        try:
            while not done.is_set():
                s.call("GET", "/holds", expect=200)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    def held(profile, user, expect):
        try:
            create(s, profile=profile, user=user, expect=expect)
        except Exception as error:  # noqa: BLE001
            errors.append(error)
    listers = [threading.Thread(target=lister) for _ in range(2)]
    for thread in listers:
        thread.start()
    others = [s.call("POST", "/profiles/wl-office/holds", {"timeoutMs": 60000}, expect=201)[1]["id"] for _ in range(10)]
    short = s.call("POST", "/profiles/default/holds", {"timeoutMs": 1500}, expect=201)[1]["id"]
    timing_out = threading.Thread(target=held, args=("default", "short@example.com", 422))
    timing_out.start()
    wait_for(lambda: hold_states(s).get(short) == "holding", "a create waiting on the short hold")
    released = threading.Thread(target=held, args=("wl-office", "office@example.com", 200))
    released.start()
    wait_for(lambda: "holding" in [hold_states(s).get(i) for i in others], "a create waiting on an office hold")
    for hold_id in others:
        s.call("POST", f"/holds/{hold_id}/release", {"outcome": "proceed"}, expect=200)
    timing_out.join(30)
    released.join(30)
    if hold_states(s).get(short) != "expired":
        raise Failure(f"the short hold ended {hold_states(s).get(short)}, not expired")
    bounded = [s.call("POST", "/profiles/default/holds", {"timeoutMs": 60000})[0] for _ in range(17)]
    if bounded.count(201) != 16 or bounded[-1] != 409:
        raise Failure(f"a profile's holds are not bounded at 16: {bounded}")
    left = raw_request(s, "/profiles/default/credentials/create", {"origin": ORIGIN, "options": registration_options("left@example.com")})
    wait_for(lambda: "holding" in hold_states(s).values(), "the abandoned create waiting")
    left.close()
    wait_for(lambda: "abandoned" in hold_states(s).values(), "the held create's hold ending with its client")
    for hold_id, state in hold_states(s).items():
        if state == "armed":
            s.call("POST", f"/holds/{hold_id}/release", {"outcome": "cancel"}, expect=200)
    getting = raw_request(s, "/profiles/default/credentials/get",
                          {"origin": ORIGIN, "mediation": "conditional", "options": authentication_options(), "ceremony": "wl-left"})
    wait_for(lambda: s.call("GET", "/profiles/default/offer", expect=200)[1]["offers"], "the abandoned conditional get waiting")
    getting.close()
    wait_for(lambda: not s.call("GET", "/profiles/default/offer", expect=200)[1]["offers"], "the abandoned dropdown closing")
    run = {"scenario": {"format": "credemu-scenario", "version": 1, "name": "wl", "title": "wl",
                        "steps": [{"do": "create", "times": 100} for _ in range(20)]}, "providers": "gpm"}
    # Three runs at once: two take the slots, one is refused at once (and says so before anything else can race it).
    started = [raw_request(s, "/scenarios/run", run) for _ in range(3)]
    readable = []
    wait_for(lambda: readable.extend(select.select(started, [], [], 0.1)[0]) or readable, "one of three scenario runs refused")
    if b" 503 " not in readable[0].recv(100):
        raise Failure("the third scenario run at once was not refused with 503")
    small = {**run, "scenario": {**run["scenario"], "steps": [{"do": "create"}]}}
    if s.call("POST", "/scenarios/run", small, expect=(200, 503))[0] != 503:
        raise Failure("a scenario run was accepted while two ran")
    for sock in started:
        sock.close()
    wait_for(lambda: s.call("POST", "/scenarios/run", small, expect=(200, 503))[0] == 200, "the abandoned scenario runs stopping")
    done.set()
    for thread in listers:
        thread.join(30)
    if errors:
        raise Failure(f"holds under pruning failed: {errors[0]}")


class HostileDevTools:
    """A DevTools page endpoint on loopback that attacks the server's own channel (`POST /channels`): it completes
    the websocket handshake, then sends `frame` without pause and reads nothing, from the start (`during_setup`:
    the set-up's attacker) or once it has answered the channel's set-up commands; for `seconds` at most."""

    SET_UP_COMMANDS = 5  # DevToolsChannel.frameSetUp

    def __init__(self, frame, during_setup, seconds=180):
        self.frame, self.during_setup, self.seconds = frame, during_setup, seconds
        self.stopped = threading.Event()
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # A small window: a server that writes to a peer that does not read has to wait at once.
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.listener.settimeout(60)
        self.url = f"ws://127.0.0.1:{self.listener.getsockname()[1]}/devtools/page/HOSTILE"
        threading.Thread(target=self.run, daemon=True).start()

    @staticmethod
    def frame_of(opcode, payload):
        """A server frame (unmasked), payload under 126 bytes."""
        return bytes([0x80 | opcode, len(payload)]) + payload

    def run(self):
        try:
            connection, _ = self.listener.accept()
        except OSError:
            return
        with connection:
            connection.settimeout(30)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = connection.recv(4096)
                if not chunk:
                    return
                head += chunk
            key = next(line.split(b":", 1)[1].strip() for line in head.split(b"\r\n") if line.lower().startswith(b"sec-websocket-key:"))
            accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
            connection.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                               b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
            if not self.during_setup:
                for _ in range(self.SET_UP_COMMANDS):
                    command = json.loads(self.read_message(connection))
                    connection.sendall(self.frame_of(0x1, json.dumps({"id": command["id"], "result": {}}).encode()))
            self.flood(connection)

    @staticmethod
    def read_message(connection):
        def exactly(n):
            data = b""
            while len(data) < n:
                chunk = connection.recv(n - len(data))
                if not chunk:
                    raise ConnectionError("closed")
                data += chunk
            return data
        first, second = exactly(2)
        length = second & 0x7F
        if length == 126:
            length = int.from_bytes(exactly(2), "big")
        elif length == 127:
            length = int.from_bytes(exactly(8), "big")
        mask = exactly(4)
        return bytes(b ^ mask[i % 4] for i, b in enumerate(exactly(length)))

    def flood(self, connection):
        connection.setblocking(False)
        deadline = time.time() + self.seconds
        offset = 0  # into the frame: one written in part is finished before the next
        while not self.stopped.is_set() and time.time() < deadline:
            try:
                offset = (offset + connection.send(self.frame[offset:])) % len(self.frame)
            except BlockingIOError:
                select.select([], [connection], [], 0.01)
            except OSError:
                return

    def stop(self):
        self.stopped.set()
        self.listener.close()


EVENTS = HostileDevTools.frame_of(0x1, b'{"method":"Page.frameNavigated","params":{}}')
PINGS = HostileDevTools.frame_of(0x9, b"p" * 125)


def hostile_devtools(s):
    """The server's own DevTools channel against peers that flood it and never read: the set-up ends within its
    10 s bound, the server stays responsive, DELETE answers at once, and one such channel is left open for SIGTERM,
    which must stop the server cleanly all the same."""
    def timed(what, bound, method, path, body=None, expect=None):
        started = time.time()
        answer = s.call(method, path, body, expect=expect)[1]
        if time.time() - started > bound:
            raise Failure(f"{what} took {time.time() - started:.1f} s, over {bound} s")
        return answer
    for name, frame in (("events", EVENTS), ("pings", PINGS)):
        peer = HostileDevTools(frame, during_setup=True)
        try:
            timed(f"POST /channels to a peer that floods its set-up with {name}", 30, "POST", "/channels", {"devtools": peer.url}, expect=502)
        finally:
            peer.stop()
    peer = HostileDevTools(PINGS, during_setup=False)
    try:
        channel = s.call("POST", "/channels", {"devtools": peer.url}, expect=201)[1]["id"]
        time.sleep(2)  # the peer's window and the server's send buffer fill with pongs
        timed("GET /channels beside a peer that pings and never reads", 10, "GET", "/channels", expect=200)
        timed("DELETE of a channel whose peer pings and never reads", 10, "DELETE", f"/channels/{channel}", expect=200)
    finally:
        peer.stop()
    # Left open: the server's stop ends it (this peer pings for three minutes, past Server.stop's 60 s).
    s.hostile_peer = HostileDevTools(PINGS, during_setup=False)
    s.call("POST", "/channels", {"devtools": s.hostile_peer.url}, expect=201)


def waiting_ceremonies(s):
    """Conditional gets that wait on other threads for the user's pick or the page's abort, and one left waiting
    for the server's stop to end (the suspended-connection paths)."""
    alice = create(s, user="waiting@example.com")["id"]
    results = []

    def waiting(ceremony):
        body = {"origin": ORIGIN, "mediation": "conditional", "options": authentication_options(), "ceremony": ceremony}
        results.append(s.call("POST", "/profiles/default/credentials/get", body)[0])
    for ceremony, end in (("pick-me", "pick"), ("abort-me", "abort")):
        thread = threading.Thread(target=waiting, args=(ceremony,), daemon=True)
        thread.start()
        deadline = time.time() + 10
        while not s.call("GET", "/profiles/default/offer", expect=200)[1]["offers"] and time.time() < deadline:
            time.sleep(0.01)
        if end == "pick":
            s.call("POST", "/profiles/default/offer/pick", {"credentialId": alice}, expect=200)
        else:
            s.call("POST", f"/profiles/default/ceremonies/{ceremony}/abort", {}, expect=200)
        thread.join(10)
    if results != [200, 422]:
        raise Failure(f"the waiting conditional gets answered {results}, not a pick's 200 and an abort's 422")
    # Left waiting: SIGTERM must answer it and stop cleanly.
    threading.Thread(target=waiting, args=("left-waiting",), daemon=True).start()


def devices(s):
    """A device with two accounts: ceremonies routed among them from several threads at once, a conditional get
    waiting for a pick from the union, signals sent to several accounts, and a device's settings changed meanwhile."""
    s.call("POST", "/profiles", {"name": "wl-bw", "pack": "bitwarden"}, expect=201)
    s.call("POST", "/devices", {"name": "wl-laptop", "providers": ["default", "wl-bw"]}, expect=201)
    s.call("POST", "/devices", {"name": "wl-phone", "platform": "chrome-android", "providers": ["default"]}, expect=201)
    s.call("POST", "/devices", {"name": "wl-bad", "providers": ["ghost"]}, expect=404)
    s.call("POST", "/devices", {"name": "wl-bad", "providers": ["default"], "preferred": "wl-bw"}, expect=400)
    errors = []

    def worker(n):
        try:
            for i in range(6):
                device = "wl-laptop" if (n + i) % 2 else "wl-phone"
                body = {"origin": ORIGIN, "options": registration_options(f"dev{n}-{i}@example.com")}
                s.call("POST", f"/devices/{device}/credentials/create", body, expect=200)
                s.call("POST", f"/devices/{device}/credentials/get", {"origin": ORIGIN, "options": authentication_options()}, expect=200)
                s.call("POST", f"/devices/{device}/signals/unknown",
                       {"origin": ORIGIN, "options": {"rpId": "example.com", "credentialId": b64url(os.urandom(16))}}, expect=200)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
    threads = [threading.Thread(target=worker, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    s.call("PATCH", "/devices/wl-phone", {"osVersion": "13"}, expect=200)
    for thread in threads:
        thread.join(60)
    gpm = create(s, user="device@example.com")["id"]  # the newest of its account: in the dropdown
    results = []

    def waiting():
        body = {"origin": ORIGIN, "mediation": "conditional", "options": authentication_options(), "ceremony": "dev-pick"}
        results.append(s.call("POST", "/devices/wl-laptop/credentials/get", body)[0])
    waiter = threading.Thread(target=waiting, daemon=True)
    waiter.start()
    deadline = time.time() + 10
    while not s.call("GET", "/devices/wl-laptop/offer", expect=200)[1]["offers"] and time.time() < deadline:
        time.sleep(0.01)
    s.call("POST", "/devices/wl-laptop/offer/pick", {"credentialId": gpm}, expect=200)
    waiter.join(10)
    if errors:
        raise Failure(f"device ceremonies failed: {errors[0]}")
    if results != [200]:
        raise Failure(f"the device's waiting conditional get answered {results}, not the pick's 200")
    s.call("DELETE", "/profiles/wl-bw", expect=409)
    s.call("DELETE", "/devices/wl-laptop", expect=200)


def malformed_input(s):
    """Input a server must refuse without harm: every answer a 4xx, never a crash."""
    path = "/profiles/default/credentials/create"
    bad_bodies = [
        b"", b"{not json", b"[1,2]", b"null", b"\x00\xff\xfe", b'"\\ud800"', b"[" * 5000 + b"]" * 5000,
        b'{"origin": "' + b"a" * 100_000 + b'"}',
        json.dumps({"origin": ORIGIN}).encode(),
        json.dumps({"origin": 5, "options": {}}).encode(),
        json.dumps({"origin": "http://evil.example", "options": registration_options("m")}).encode(),
        json.dumps({"origin": ORIGIN, "options": {**registration_options("m"), "challenge": "a+b/"}}).encode(),
        json.dumps({"origin": ORIGIN, "options": {**registration_options("m"), "pubKeyCredParams": [{"type": "public-key", "alg": 1e300}]}}).encode(),
        json.dumps({"origin": ORIGIN, "options": {**registration_options("m"), "rp": {"name": "x", "id": "co.uk"}}}).encode(),
        json.dumps({"origin": ORIGIN, "options": {**registration_options("m"), "user": {"id": "", "name": "", "displayName": ""}}}).encode(),
    ]
    for body in bad_bodies:
        status, _ = s.call("POST", path, raw=body)
        if not 400 <= status < 500:
            raise Failure(f"malformed create body {body[:60]!r} answered {status}")
    odd = [  # refused or accepted as the server sees fit (a browser clamps a huge timeout): just never a 5xx
        ("POST", path, {"origin": ORIGIN, "options": {**registration_options("huge-timeout"), "timeout": 1e300}}),
        ("POST", "/profiles/default/credentials/get", {"origin": ORIGIN, "options": {"challenge": "AA"}, "pick": "%%"}),
        ("POST", "/profiles/default/credentials/get", {"origin": ORIGIN, "options": {**authentication_options(), "timeout": -1e300}}),
        ("POST", "/profiles/default/signals/unknown", {"origin": ORIGIN, "options": {"rpId": RP_ID, "credentialId": "a+b"}}),
        ("POST", "/profiles/default/signals/unknown", {"origin": ORIGIN, "options": {"rpId": "127.0.0.1", "credentialId": "AA"}}),
        ("POST", "/profiles/default/signals/accepted", {"origin": ORIGIN, "options": {"rpId": RP_ID}}),
        ("POST", "/profiles/default/signals/details", {"origin": ORIGIN, "options": {"rpId": RP_ID, "userId": 7}}),
        ("POST", "/profiles/default/signals/nonsense", {"origin": ORIGIN, "options": {}}),
        ("POST", "/profiles/default/user", {"decisions": ["dance"]}),
        ("POST", "/profiles/default/user", {"decisions": "accept"}),
        ("POST", "/clock", {"set": "yesterday"}),
        ("POST", "/clock", {"set": 1e300}),
        ("POST", "/clock", {"advance": 1e300}),
        ("POST", "/clock", {"advance": "9999999999999d"}),
        ("POST", "/clock", {"advance": "1e308s"}),
        ("POST", "/clock", {"advance": "inf"}),
        ("POST", "/clock", {"set": "0001-01-01T00:00:00Z"}),
        ("POST", "/profiles/default/holds", {"timeoutMs": 1e300}),
        ("POST", "/profiles/default/holds", {"timeoutMs": -1e300}),
        ("POST", "/profiles/default/passwords", {"origin": ORIGIN, "username": 3}),
        ("POST", "/profiles/default/passwords", {"origin": "not an origin", "username": "u", "password": "p"}),
        ("POST", "/profiles/default/autofill", {"origin": ORIGIN, "username": "nobody"}),
        ("PATCH", "/profiles/default", {"osVersion": "1" * 5000}),
        ("POST", "/profiles", {"name": "\u0000evil/..", "pack": "gpm"}),
        ("GET", "/profiles/default/events?limit=-5&after=abc", None),
        ("GET", "/profiles/default/passkeys/%ff%fe", None),
        ("GET", "/nope", None),
        ("DELETE", "/health", None),
    ]
    for method, route, body in odd:
        status, _ = s.call(method, route, body)
        if status >= 500:
            raise Failure(f"{method} {route} answered {status}")
    status, _ = s.call("POST", "/profiles/default/passwords", raw=b"{" + b" " * 300_000 + b"}")
    if status != 413:
        raise Failure(f"an oversized body answered {status}, not 413")


def concurrent_clients(s, clients=6, rounds=5):
    """Ceremonies on several connections at once, while another client changes profiles and the clock under them
    (the server's engine and profile caches, the vault's lock, the event writer, the WAL writeback)."""
    errors = []
    done = threading.Event()

    def client(n):
        try:
            profile = ("default", "spec", "droid")[n % 3]
            for r in range(rounds):
                made = create(s, profile=profile, user=f"u{n}-{r}@example.com")
                get(s, profile=profile, allow=[made["id"]])
                s.call("GET", f"/profiles/{profile}/events?limit=3", expect=200)
                s.call("POST", f"/profiles/{profile}/signals/unknown",
                       {"origin": ORIGIN, "options": {"rpId": RP_ID, "credentialId": b64url(os.urandom(16))}})
                s.call("POST", f"/profiles/{profile}/passwords",
                       {"origin": ORIGIN, "username": f"u{n}-{r}", "password": "pw"}, expect=201)
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    def meddler():
        try:
            flip = False
            while not done.is_set():
                flip = not flip
                s.call("PATCH", "/profiles/spec", {"passcodeSet": flip}, expect=200)
                s.call("POST", "/clock", {"advance": "1s"}, expect=200)
                s.call("GET", "/profiles", expect=200)
                s.call("GET", "/holds", expect=200)
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    side = threading.Thread(target=meddler)
    side.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    done.set()
    side.join(60)
    if errors:
        raise Failure(f"concurrent clients failed: {errors[0]}")


def sanitizer_reports(text):
    return [line for line in text.splitlines() if any(marker in line for marker in SANITIZER_MARKERS)]


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="credemu-sanitize-") as directory:
        server = Server(binary, directory)
        failure = None
        try:
            for step in (documents_and_profiles, passwords_and_upgrade, ceremonies_signals_and_decisions, holds,
                         holds_pruned_and_abandoned, devices, malformed_input, concurrent_clients, hostile_devtools,
                         waiting_ceremonies):
                step(server)
                if server.process.poll() is not None:
                    raise Failure(f"the server died during {step.__name__} (exit {server.process.returncode})")
            server.call("DELETE", "/profiles/ios", expect=200)
            server.call("POST", "/clock", {"mode": "system"}, expect=200)
        except Exception as error:  # noqa: BLE001 - a bug in this script fails the run too, after the server stops
            failure = f"{type(error).__name__}: {error}"
        status = server.stop()
        log = server.stderr_path.read_text(errors="replace")
        reports = sanitizer_reports(log)
        # The vault the server closed opens again, in a new sanitized process.
        listed = subprocess.run([binary, "--vault", str(server.vault), "vault", "list"], capture_output=True, text=True,
                                timeout=120)
        reports += sanitizer_reports(listed.stderr)
        if failure is None and status != 0:
            failure = f"the server exited with {status} after SIGTERM"
        if failure is None and listed.returncode != 0:
            failure = f"`credemu vault list` on the server's vault exited with {listed.returncode}: {listed.stderr[-500:]}"
        if reports:
            failure = (failure + "; " if failure else "") + f"{len(reports)} sanitizer report line(s)"
        if failure:
            print(log[-20000:], file=sys.stderr)
            print(listed.stderr[-5000:], file=sys.stderr)
            print(f"sanitize workload: FAILED: {failure}", file=sys.stderr)
            return 1
        print(f"sanitize workload: {server.requests} requests, server exited 0, no sanitizer reports "
              f"({time.time() - started:.1f} s)")
        return 0


if __name__ == "__main__":
    sys.exit(main())
