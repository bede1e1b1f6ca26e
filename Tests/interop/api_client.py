"""A client for `credemu serve` that checks every response it sees against the OpenAPI document."""
import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import jsonschema

ROOT = Path(__file__).resolve().parents[2]
OPENAPI = json.loads((ROOT / "Sources" / "CredemuServer" / "Resources" / "openapi.json").read_text())
SEEN = set()  # (method, path template) pairs the tests exercised


def template_for(path):
    path = path.split("?")[0]
    for template in OPENAPI["paths"]:
        pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
        if re.match(pattern, path):
            return template
    return None


def check_against_openapi(method, path, status, body, content_type):
    template = template_for(path)
    if template is None:
        assert status == 404, f"{method} {path} answered {status} but is not in the OpenAPI document"
        return
    operation = OPENAPI["paths"][template].get(method.lower())
    if operation is None:
        assert status in (404, 405), f"{method} {template} is not documented but answered {status}"
        return
    SEEN.add((method.upper(), template))
    responses = operation["responses"]
    assert str(status) in responses, f"{method} {template} answered {status}, not documented ({sorted(responses)})"
    content = responses[str(status)].get("content", {})
    if "application/json" in content:
        assert content_type.startswith("application/json"), content_type
        schema = {"components": OPENAPI["components"], "allOf": [content["application/json"]["schema"]]}
        jsonschema.validate(body, schema)


class Server:
    """`credemu serve` on a free port over a vault in `directory`."""

    def __init__(self, binary, directory, *extra, cwd=None, env=None):
        self.directory = Path(directory)
        port_file = self.directory / "port"
        self.process = subprocess.Popen([binary, "--vault", str(self.directory / "vault.db"), "serve", "--port", "0",
                                         "--port-file", str(port_file), *extra],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)
        self.first_line = self.process.stdout.readline().strip()
        deadline = time.time() + 20
        while not port_file.exists() and time.time() < deadline:
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{port_file.read_text().strip()}"
        self.token = None

    def call(self, method, path, body=None, headers=None, raw=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None or method in ("POST", "PATCH"):
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, payload, ctype, hdrs = response.status, response.read(), response.headers.get("Content-Type", ""), response.headers
        except urllib.error.HTTPError as error:
            status, payload, ctype, hdrs = error.code, error.read(), error.headers.get("Content-Type", ""), error.headers
        parsed = json.loads(payload) if ctype.startswith("application/json") and payload else payload
        check_against_openapi(method, path, status, parsed, ctype)
        self.last_headers = hdrs
        return status, parsed

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.returncode
