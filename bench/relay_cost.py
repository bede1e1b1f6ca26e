"""The server's own cost of a relayed ceremony: `credemu serve`'s channel driven by a fake DevTools page, no browser.

A Python websocket peer plays the page target `POST /channels` connects to: it answers the channel's set-up, reports
one main-world context, then replays what Chromium sends for the bench page's in-page loop, one call at a time: the
binding's call (`Runtime.bindingCalled`, the shim's message as the shim writes it), for a create the console warning
the shim logs (`Runtime.consoleAPICalled`), and the answer to each reply (`Runtime.evaluate`). It reports, per
call, the server's answer (`GET /channels`' `answeringMs`, event in to reply out) and the CPU the channel's reader
thread and the whole server spent (`/proc/PID/task/*/schedstat`), so two builds compare without Chromium's share and
its noise. Given two binaries, the runs alternate and each line shows both and their ratio (docs/benchmarks.md,
"The relayed answer, measured apart").

Usage: relay_cost.py CREDEMU [CREDEMU_BEFORE] [--kind create|get] [--calls N] [--runs R] [--pack PACK]
"""
import argparse
import base64
import glob
import hashlib
import json
import os
import socket
import statistics
import struct
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ORIGIN = "http://localhost:8000"
WARNING = ("publicKey.pubKeyCredParams is missing at least one of the default algorithm identifiers: ES256 and RS256. This can "
           "result in registration failures on incompatible authenticators. See https://chromium.googlesource.com/chromium/src/+/main/"
           "content/browser/webauth/pub_key_cred_params.md for details")


def b64(n):
    return base64.urlsafe_b64encode(os.urandom(n)).decode().rstrip("=")


class Peer:
    """The page target's end of the DevTools websocket: unmasked frames out, masked frames in."""

    def __init__(self, connection):
        self.connection, self.buffer = connection, b""

    def take(self, n):
        while len(self.buffer) < n:
            data = self.connection.recv(65536)
            if not data:
                raise EOFError("the server closed the channel")
            self.buffer += data
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def read(self):
        head = self.take(2)
        length = head[1] & 0x7F
        if length == 126:
            length = struct.unpack(">H", self.take(2))[0]
        elif length == 127:
            length = struct.unpack(">Q", self.take(8))[0]
        mask, payload = self.take(4), bytearray(self.take(length))
        for i in range(length):
            payload[i] ^= mask[i & 3]
        return json.loads(payload)

    def send(self, value):
        data = json.dumps(value, separators=(",", ":")).encode()
        head = bytes([0x81]) + (bytes([len(data)]) if len(data) < 126 else bytes([126]) + struct.pack(">H", len(data)) if len(data) < 65536
                                else bytes([127]) + struct.pack(">Q", len(data)))
        self.connection.sendall(head + data)


def run(binary, kind, calls, pack):
    with tempfile.TemporaryDirectory() as directory:
        port_file = Path(directory) / "port"
        server = subprocess.Popen([binary, "--vault", f"{directory}/vault.db", "serve", "--port", "0", "--port-file", str(port_file),
                                   "--allow-origin", ORIGIN], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 20
            while not (port_file.exists() and port_file.read_text().strip()) and time.time() < deadline:
                time.sleep(0.02)
            api = f"http://127.0.0.1:{port_file.read_text().strip()}"

            def call(method, path, body=None):
                request = urllib.request.Request(api + path, method=method, headers={"Content-Type": "application/json"},
                                                 data=None if body is None else json.dumps(body).encode())
                for _ in range(100):
                    try:
                        return json.loads(urllib.request.urlopen(request).read())
                    except urllib.error.URLError:
                        time.sleep(0.05)
                raise SystemExit(f"{binary} does not answer")

            call("POST", "/profiles", {"name": "bench", "pack": pack})
            listener = socket.create_server(("127.0.0.1", 0))
            peer = {}

            def accept():
                connection, _ = listener.accept()
                connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                head = b""
                while b"\r\n\r\n" not in head:
                    head += connection.recv(1)
                key = next(line.split(":", 1)[1].strip() for line in head.decode().split("\r\n") if line.lower().startswith("sec-websocket-key"))
                accept_key = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
                connection.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                    f"Sec-WebSocket-Accept: {accept_key}\r\n\r\n").encode())
                channel = Peer(connection)
                for _ in range(5):   # DevToolsChannel.frameSetUp's commands
                    command = channel.read()
                    if command["method"] == "Runtime.addBinding":
                        peer["binding"] = command["params"]["name"]
                    channel.send({"id": command["id"], "result": {}})
                peer["channel"] = channel

            thread = threading.Thread(target=accept)
            thread.start()
            call("POST", "/channels", {"devtools": f"ws://127.0.0.1:{listener.getsockname()[1]}/devtools/page/FAKE01", "profile": "bench",
                                       "autofill": False})
            thread.join()
            channel, binding = peer["channel"], peer["binding"]
            channel.send({"method": "Runtime.executionContextCreated",
                          "params": {"context": {"id": 2, "origin": ORIGIN, "name": "", "auxData": {"isDefault": True}}}})
            ids = []

            def message(i, create):
                if create:
                    options = {"rp": {"name": "Bench", "id": "localhost"}, "user": {"id": b64(16), "name": "bench", "displayName": "Bench"},
                               "challenge": b64(32), "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
                               "authenticatorSelection": {"userVerification": "preferred", "residentKey": "discouraged"}, "attestation": "none"}
                    body = {"origin": ORIGIN, "options": options, "mediation": "modal", "ceremony": b64(16)}
                    return json.dumps({"id": b64(16), "method": "POST", "path": "/credentials/create", "body": body}, separators=(",", ":"))
                options = {"challenge": b64(32), "rpId": "localhost", "allowCredentials": [{"type": "public-key", "id": ids[i % len(ids)]}],
                           "userVerification": "preferred"}
                body = {"origin": ORIGIN, "options": options, "ceremony": b64(16)}
                return json.dumps({"id": b64(16), "method": "POST", "path": "/credentials/get", "body": body}, separators=(",", ":"))

            def relay(payload, create):
                channel.send({"method": "Runtime.bindingCalled", "params": {"name": binding, "payload": payload, "executionContextId": 2}})
                if create:
                    channel.send({"method": "Runtime.consoleAPICalled", "params": {
                        "type": "warning", "args": [{"type": "string", "value": WARNING}], "executionContextId": 2, "timestamp": time.time() * 1000,
                        "stackTrace": {"callFrames": [{"functionName": "creationJSON", "scriptId": "4", "url": "", "lineNumber": 390, "columnNumber": 77},
                                                      {"functionName": "create", "scriptId": "4", "url": "", "lineNumber": 877, "columnNumber": 19},
                                                      {"functionName": "", "scriptId": "6", "url": "", "lineNumber": 2, "columnNumber": 40}]}}})
                reply = channel.read()
                channel.send({"id": reply["id"], "result": {"result": {"type": "undefined"}}})
                if reply["method"] == "Runtime.evaluate":   # RECEIVER(json)
                    expression = reply["params"]["expression"]
                    return json.loads(expression[expression.index("(") + 1:-1])
                return reply["params"]["arguments"][0]["value"]

            for i in range(300):   # warm, and passkeys to sign in with
                answer = relay(message(i, True), True)
                assert answer["status"] == 200, answer
                ids.append(answer["body"]["id"])
            messages = [message(i, kind == "create") for i in range(calls)]

            def cpu():
                return {task: int(open(task + "/schedstat").read().split()[0]) for task in glob.glob(f"/proc/{server.pid}/task/*")}
            [before] = call("GET", "/channels")["channels"]
            start = cpu()
            for text in messages:
                relay(text, kind == "create")
            end = cpu()
            [after] = call("GET", "/channels")["channels"]
            used = sorted((end[t] - start.get(t, 0) for t in end), reverse=True)
            return {"answer": (after["answeringMs"] - before["answeringMs"]) * 1000 / (after["answered"] - before["answered"]),
                    "reader": used[0] / 1000 / calls, "process": sum(used) / 1000 / calls}
        finally:
            server.terminate()
            server.wait(timeout=20)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binaries", nargs="+")
    parser.add_argument("--kind", choices=["create", "get"], default="create")
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--pack", default="webauthn-spec")
    arguments = parser.parse_args()
    results = {binary: [] for binary in arguments.binaries}
    print(f"{arguments.kind}, {arguments.calls} calls a run, µs per call: the server's answer, the reader's CPU, the process's CPU")
    for i in range(arguments.runs):
        figures = [run(binary, arguments.kind, arguments.calls, arguments.pack) for binary in arguments.binaries]
        for binary, figure in zip(arguments.binaries, figures):
            results[binary].append(figure)
        line = "   ".join(f"{f['answer']:6.1f} {f['reader']:6.1f} {f['process']:6.1f}" for f in figures)
        if len(figures) == 2:
            line += f"   reader after/before {figures[0]['reader'] / figures[1]['reader']:.3f}"
        print(f"run {i + 1}: {line}   load {os.getloadavg()[0]:.2f}", flush=True)
    for binary, figures in results.items():
        print(f"{binary}: median answer {statistics.median(f['answer'] for f in figures):.1f}, reader {statistics.median(f['reader'] for f in figures):.1f}, "
              f"process {statistics.median(f['process'] for f in figures):.1f}")
    if len(arguments.binaries) == 2:
        after, before = results.values()
        for name in ("answer", "reader", "process"):
            ratios = [a[name] / b[name] for a, b in zip(after, before)]
            print(f"{name} after/before: median {statistics.median(ratios):.3f} (runs {' '.join(f'{r:.2f}' for r in ratios)})")


if __name__ == "__main__":
    main()
