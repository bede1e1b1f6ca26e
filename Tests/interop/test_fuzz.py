"""A bounded, seeded fuzz test (issue 9, item 3) in four parts:

1. API bodies and parameters generated from openapi.json for every documented operation, then mutated;
2. WebAuthn creation/request options from py_webauthn, mutated, through the API and the CLI;
3. mutated argument vectors for every subcommand of the CLI contract (docs/cli.md);
4. `credemu probe` against a server (hostile_http.py) whose every answer is a mutated HTTP/1.1 response.

Each part runs a fixed sweep (every member against every interesting value: the same corpus whatever the seed),
then CREDEMU_FUZZ_CASES random cases from CREDEMU_FUZZ_SEED, within CREDEMU_FUZZ_BUDGET seconds. A part collects
every violation (crash, 5xx, undocumented status, malformed error, changed vault, exit status out of the contract,
Swift fatal error, a clock time that does not round-trip) and fails once at the end with one entry per distinct
failure: its smallest reproduction (request or argv), the response, and how many cases hit it.

    make build deps-python
    CREDEMU_BIN=$PWD/.build/debug/credemu .venv/bin/python -m pytest Tests/interop -q -k fuzz

    CREDEMU_FUZZ_SEED    the random cases' seed (default 20240909); a case is rebuilt from (seed, part, number)
    CREDEMU_FUZZ_CASES   random cases per part after the sweep (default 300)
    CREDEMU_FUZZ_BUDGET  wall-clock seconds per part (default 30); past it a part stops and says so

About 90-100 s for the four parts on 2 cores (cases that crash cost more: a backtrace and a restart each).
The oracles: for the API, the server stays up (GET /health after every request), no 5xx, a status the document
lists for the operation (404/405 off the document), `{"error": {"name", "message"}}` bodies, responses that match
their schemas, the vault unchanged by a refused write, times that round-trip; for ceremonies also a WebAuthn
error name with a 4xx, and successes that py_webauthn verifies; for the CLI exit 0-3 and no Swift fatal error,
JSON errors on stdout for exits 1 and 3 (and the vault file as it was), a message on stderr for exit 2; for the
probe exit 0-2 within its --max-time, a ProbeError's name on stderr for exit 2, and no control character the
server sent on the terminal.
A violation found after some earlier request changed the server's state says so: the smallest case of every
5xx and crash is replayed alone on a fresh server.
"""
import base64
import copy
import functools
import json
import random
import re
import shutil
import subprocess
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import pytest
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers.structs import PublicKeyCredentialDescriptor

import fuzz_support as fz
from fuzz_support import Raw

ORIGIN = "https://example.com"
RP_ID = "example.com"
BASE_TIME = "2026-11-29T10:00:00Z"
BASE_MILLIS = fz.parse_time(BASE_TIME)


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def rbytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def reg_options(rng, user=None, exclude=()):
    options = generate_registration_options(
        rp_id=RP_ID, rp_name="Example", user_name=user or f"user{rng.randrange(10 ** 6)}@example.com",
        user_id=rbytes(rng, rng.choice([16, 32, 64])), challenge=rbytes(rng, 32),
        exclude_credentials=[PublicKeyCredentialDescriptor(id=c) for c in exclude])
    return json.loads(options_to_json(options))


def auth_options(rng, allow=()):
    options = generate_authentication_options(rp_id=RP_ID, challenge=rbytes(rng, 32),
                                              allow_credentials=[PublicKeyCredentialDescriptor(id=c) for c in allow])
    return json.loads(options_to_json(options))


def seed_vault_through_api(server, keys=None):
    """A virtual clock, one password and one passkey (alice) in profile default, and a device 'desk' whose one
    account is default; returns the credential ID (and puts its public key in `keys`)."""
    server.json("POST", "/clock", {"set": BASE_TIME})
    status, device = server.json("POST", "/devices", {"name": "desk", "providers": ["default"]})
    assert status == 201, device
    server.json("POST", "/profiles/default/passwords", {"origin": ORIGIN, "username": "alice@example.com", "password": "pw"})
    rng = fz.case_rng("seed", 0)
    options = reg_options(rng, user="alice@example.com")
    status, created = server.json("POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": options})
    assert status == 200, created
    if keys is not None:
        keys[created["id"]] = verify_registration_response(
            credential=created, expected_challenge=unb64(options["challenge"]), expected_origin=ORIGIN,
            expected_rp_id=RP_ID).credential_public_key
    return created["id"]


def in_sweep_order(cases):
    """The sweep in a fixed shuffled order (the same whatever the seed): a budget cut drops a spread of cases,
    not whole operations."""
    cases = list(cases)
    random.Random("sweep-order").shuffle(cases)
    return cases


# ======================================================================================================
# Part 1: API bodies and parameters from the OpenAPI schemas
# ======================================================================================================

def resolve(schema):
    while "$ref" in schema:
        node = fz.OPENAPI
        for key in schema["$ref"].lstrip("#/").split("/"):
            node = node[key]
        schema = node
    return schema


def operations():
    out = []
    for template, item in fz.OPENAPI["paths"].items():
        for method, op in item.items():
            if method in ("get", "post", "patch", "delete"):
                params = item.get("parameters", []) + op.get("parameters", [])
                body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
                out.append((method.upper(), template, params, resolve(body) if body else None))
    return out


OPERATIONS = operations()
SIGNAL_KINDS = ["unknown", "accepted", "details"]
PARAM_STRINGS = [  # (label, bytes) for a path segment or query value, percent-encoded when sent
    ("''", b""), ("'a'*5000", b"a" * 5000), ("'%'", b"%"), ("'..'", b".."), ("'.'", b"."), ("fullwidth '１２'", "１２".encode()),
    ("'1e300'", b"1e300"), ("'-1'", b"-1"), ("'99999999999999999999'", b"99999999999999999999"), ("'NaN'", b"NaN"),
    ("invalid UTF-8 \\xff", b"\xff"), ("CESU surrogate \\xed\\xa0\\x80", b"\xed\xa0\x80"), ("NUL", b"a\x00b"),
    ("'a/b'", b"a/b"), ("emoji", "\U0001F600".encode()), ("' '", b" "), ("'+'", b"+"), ("'default'", b"default"),
]
RAW_PATH_SUFFIXES = ["%zz", "%", "%F", "%c0%af", "%2e%2e", "//", "/", "?a=%ff&a=1&&=", "#frag"]


class ApiContext:
    def __init__(self, credential_id):
        self.cred = credential_id


def hint(method, template, name, schema, rng, ctx, number):
    """A valid value for a member, by its name and the operation (so mutations reach past the first check)."""
    schema = resolve(schema)
    if name == "options":
        if template.endswith("/credentials/create"):
            return reg_options(rng)
        if template.endswith("/credentials/get"):
            return auth_options(rng, allow=[unb64(ctx.cred)] if rng.random() < 0.5 else [])
        return {"rpId": RP_ID, "credentialId": ctx.cred}
    fixed = {"origin": ORIGIN, "topOrigin": ORIGIN, "username": "alice@example.com", "password": "pw",
             "pack": rng.choice(["gpm", "apple", "bitwarden", "webauthn-spec", "keepassxc", "1password"]),
             "packPath": None, "osVersion": "18.2", "playServicesVersion": "24.40", "decisions": ["accept"],
             "timeoutMs": 50, "advance": rng.choice(["90s", 60]), "set": BASE_TIME, "mode": "system",
             "outcome": "proceed", "submit": rng.random() < 0.5, "pick": ctx.cred, "androidPackage": "com.example.app",
             "name": f"fz{number}", "providers": ["default"], "preferred": "default"}
    if name in fixed:
        return fixed[name]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    return {"boolean": rng.random() < 0.5, "integer": 1, "number": 1, "array": [], "object": {}}.get(kind, "x")


def body_members(method, template, schema):
    props = list(schema.get("properties", {}))
    if template == "/profiles/{profile}" and method == "PATCH":
        props.remove("name")
    return props


def base_body(method, template, schema, rng, ctx, number, only=None):
    """Required members, then `only` (the member a sweep case mutates) or a random choice of optional ones."""
    if schema is None:
        return None
    props = schema.get("properties", {})
    required = list(schema.get("required", []))
    if template == "/profiles" and method == "POST":
        required = ["name"]
    if template == "/devices" and method == "POST":
        required = ["name", "providers"]
    optional = [p for p in body_members(method, template, schema) if p not in required]
    if only is not None:
        chosen = required + ([only] if only not in required else [])
    elif template == "/clock":
        chosen = [rng.choice(optional)]
    else:
        chosen = required + [p for p in optional if rng.random() < 0.4]
    return {p: hint(method, template, p, props.get(p, {}), rng, ctx, number) for p in chosen if p in props}


def base_params(method, template, params, rng, ctx):
    path_values, query = {}, {}
    for p in params:
        if p["in"] == "path":
            name = p["name"]
            if name == "profile":
                value = "victim" if (method, template) == ("DELETE", "/profiles/{profile}") else "default"
            elif name == "device":
                value = "victim" if (method, template) == ("DELETE", "/devices/{device}") else "desk"
            elif name == "kind":
                value = rng.choice(SIGNAL_KINDS)
            elif name == "id" and "passkeys" in template:
                value = ctx.cred if method == "GET" else b64(rbytes(rng, 16))
            else:
                value = "hold-1"
            path_values[name] = value.encode()
        elif rng.random() < 0.7:
            schema = p.get("schema", {})
            query[p["name"]] = {"profile": b"default", "autofill": rng.choice([b"0", b"1"]), "token": b"t",
                                "platform": rng.choice(resolve({"$ref": "#/components/schemas/Platform"})["enum"]).encode(),
                                "kind": b"create", "after": b"0"}.get(p["name"], b"x") if schema else b"x"
    return path_values, query


def type_values(name, schema):
    """Values aimed at one member's declared type."""
    schema = resolve(schema)
    out = []
    if "enum" in schema:
        for v in schema["enum"]:
            out += [(repr(v), v), (repr(v.upper()), v.upper()), (repr(" " + v), " " + v)]
    if schema.get("format") == "date-time" or name == "set":
        out += [(repr(t), t) for t in fz.TIMES]
    if name == "advance":
        out += [(repr(d), d) for d in fz.DURATIONS]
    if schema.get("type") == "integer" and "maximum" in schema:
        out += [(str(v), v) for v in (schema["minimum"] - 1, schema["minimum"], schema["maximum"], schema["maximum"] + 1)]
        out += [("1.5", 1.5), ("'100'", "100")]
    if schema.get("type") == "boolean":
        out += [("'true'", "true"), ("1", 1), ("0", 0)]
    if schema.get("type") == "array":
        out += [("['']", [""]), ("[1]", [1]), ("[null]", [None]), ("['accept']*1000", ["accept"] * 1000),
                ("['pick:']", ["pick:"]), ("['pick:%%']", ["pick:%%"]), ("['pick:' + 'A'*10000]", ["pick:" + "A" * 10000])]
    return out


def body_level(body):
    """Mutations of the request as a whole: (label, raw bytes)."""
    text = fz.encode(body if body is not None else {})
    wide = fz.encode_wide(body if body is not None else {})
    return [
        ("empty body", b""), ("body null", b"null"), ("body []", b"[]"), ("body [body]", b"[" + text + b"]"),
        ("body a string", b'"x"'), ("body 1e300", b"1e300"), ("body depth 50000", fz.encode(fz.DEEP_ARRAY_50K)),
        ("truncated JSON", text[: max(1, len(text) // 2)]), ("truncated to '{'", b"{"), ("invalid UTF-8 \\xff", text[:-1] + b',"k":"\xff"}' if len(text) > 2 else b'{"k":"\xff"}'),
        ("overlong UTF-8 \\xc0\\xaf", b'{"k":"\xc0\xaf"}'), ("CESU surrogate in a string", b'{"k":"\xed\xa0\x80"}'),
        ("raw (unescaped) UTF-8 body", wide), ("BOM then JSON", b"\xef\xbb\xbf" + text), ("trailing garbage", text + b"x"),
        ("two documents", text + text), ("NUL after JSON", text + b"\x00"), ("duplicate keys", b"{" + text[1:-1] + (b"," if len(text) > 2 else b"") + text[1:-1] + b"}" if len(text) > 2 else b'{"a":1,"a":2}'),
        ("200 kB of whitespace first", b" " * 200_000 + text), ("over the 256 KiB cap", text + b" " * 300_000),
        ("JSON in a string", json.dumps(text.decode()).encode()), ("lone surrogate key", b'{"\\ud800":1}'),
    ]


def build_path(template, values, query, raw_suffix=""):
    path = template
    if template == "/profiles/{profile}" and values.get("profile") == b"default":
        values = dict(values, profile=b"victim")  # DELETE /profiles/default would leave nothing to fuzz
    for name, value in values.items():
        path = path.replace("{" + name + "}", urllib.parse.quote_from_bytes(value, safe=""))
    if query:
        path += "?" + "&".join(f"{k}={urllib.parse.quote_from_bytes(v, safe='')}" for k, v in query.items())
    return path + raw_suffix


def api_sweep(ctx):
    """The fixed corpus: every member of every body against every value, whole-body mutations, every parameter
    against every parameter string, raw path suffixes, and the methods each path does not document."""
    cases = []
    for method, template, params, schema in OPERATIONS:
        key = f"{method} {template}"
        rng = fz.case_rng("sweep", key)
        values, query = base_params(method, template, params, rng, ctx)
        cases.append((key, "valid request", method, build_path(template, values, query), fz.encode(base_body(method, template, schema, rng, ctx, 0)) if schema else None))
        if schema:
            for member in body_members(method, template, schema) + ["zzExtra"]:
                for label, value in fz.VALUES + type_values(member, schema.get("properties", {}).get(member, {})):
                    body = base_body(method, template, schema, fz.case_rng("sweep", f"{key}:{member}"), ctx, len(cases), only=member)
                    body[member] = value
                    cases.append((key, f"{member} = {label}", method, build_path(template, values, query), fz.encode(body)))
            for member in schema.get("required", []):
                body = base_body(method, template, schema, rng, ctx, len(cases))
                body.pop(member, None)
                cases.append((key, f"without required {member}", method, build_path(template, values, query), fz.encode(body)))
            for label, raw in body_level(base_body(method, template, schema, rng, ctx, len(cases))):
                cases.append((key, label, method, build_path(template, values, query), raw))
        elif method != "GET":
            cases.append((key, "an unexpected body", method, build_path(template, values, query), b'{"x":1e300}'))
        for p in params:
            for label, raw in PARAM_STRINGS:
                v, q = dict(values), dict(query)
                (v if p["in"] == "path" else q)[p["name"]] = raw
                body = fz.encode(base_body(method, template, schema, rng, ctx, len(cases))) if schema else None
                cases.append((key, f"{p['in']} {p['name']} = {label}", method, build_path(template, v, q), body))
    for template in fz.OPENAPI["paths"]:
        rng = fz.case_rng("sweep-methods", template)
        params = fz.OPENAPI["paths"][template].get("parameters", []) + [p for m in fz.OPENAPI["paths"][template].values() if isinstance(m, dict) for p in m.get("parameters", [])]
        values, _ = base_params("GET", template, params, rng, ctx)
        documented = {m.upper() for m in fz.OPENAPI["paths"][template] if m != "parameters"}
        for method in ["GET", "POST", "PATCH", "DELETE", "PUT"]:
            if method not in documented:
                cases.append((f"{method} {template}", "undocumented method", method, build_path(template, values, {}), b"{}" if method != "GET" else None))
        for suffix in RAW_PATH_SUFFIXES:
            cases.append((f"GET {template}", f"raw path suffix {suffix!r}", "GET", build_path(template, values, {}) + suffix, None))
    return cases


def api_random_case(ctx, number):
    rng = fz.case_rng("api", number)
    method, template, params, schema = rng.choice(OPERATIONS)
    key = f"{method} {template}"
    values, query = base_params(method, template, params, rng, ctx)
    body = base_body(method, template, schema, rng, ctx, number)
    labels = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        roll = rng.random()
        if schema and roll < 0.55:
            member = rng.choice(body_members(method, template, schema) + ["zzExtra"])
            if body.get(member) is not None and isinstance(body.get(member), dict) and rng.random() < 0.5:
                inner = rng.choice(list(body[member]) + ["zzExtra"])
                label, value = rng.choice(fz.VALUES)
                body[member][inner] = value
                labels.append(f"{member}.{inner} = {label}")
            else:
                label, value = rng.choice(fz.VALUES + type_values(member, schema.get("properties", {}).get(member, {})))
                body[member] = value
                labels.append(f"{member} = {label}")
        elif schema and roll < 0.65 and body:
            member = rng.choice(list(body))
            body.pop(member)
            labels.append(f"without {member}")
        elif params and roll < 0.85:
            p = rng.choice(params)
            label, raw = rng.choice(PARAM_STRINGS)
            (values if p["in"] == "path" else query)[p["name"]] = raw
            labels.append(f"{p['in']} {p['name']} = {label}")
    raw = fz.encode(body) if schema else None
    if schema and rng.random() < 0.15:
        label, raw = rng.choice(body_level(body))
        labels.append(label)
    return key, "; ".join(labels) or "valid request", method, build_path(template, values, query), raw


def clock_expectation(raw):
    """For a POST /clock body with one member: the time it must answer (millis), 'refuse', or None (no opinion)."""
    body = fz.loads(raw) if raw is not None else None
    if not isinstance(body, dict) or len(body) != 1:
        return None
    (key, value), = body.items()
    if key == "set" and isinstance(value, str):
        millis = fz.parse_time(value)
        return "refuse" if millis is None else millis
    if key == "advance" and not isinstance(value, bool) and isinstance(value, (int, float, str)):
        seconds = fz.parse_duration_seconds(value) if isinstance(value, str) else float(value)
        if seconds is None:
            return None
        if seconds < 0:
            return "refuse"
        target = BASE_MILLIS + seconds * 1000
        return "refuse" if target > fz.MAX_MILLIS else target
    return None


WRITE_OPERATIONS = {"POST /profiles/{profile}/passwords", "POST /profiles/{profile}/passwords/use",
                    "POST /profiles/{profile}/autofill", "POST /profiles/{profile}/credentials/create",
                    "POST /profiles/{profile}/credentials/get", "POST /profiles/{profile}/signals/{kind}",
                    "DELETE /profiles/{profile}/passkeys/{id}", "POST /devices/{device}/credentials/create",
                    "POST /devices/{device}/credentials/get", "POST /devices/{device}/signals/{kind}",
                    "POST /devices/{device}/passwords", "POST /devices/{device}/passwords/use", "POST /devices/{device}/autofill",
                    "POST /demo",  # it saves the demo shop's password in the profile
                    "POST /profiles/{profile}/credentials"}  # Playwright's create: a passkey seeded in the profile


class ApiFuzz:
    def __init__(self, tmp):
        self.tmp = Path(tmp)
        self.dirs = self.confirms = 0
        self.log = fz.Log("api", "part 1, API bodies from the OpenAPI schemas",
                          "CREDEMU_BIN=$PWD/.build/debug/credemu .venv/bin/python -m pytest Tests/interop/test_fuzz.py::test_fuzz_api_bodies_from_the_openapi_schemas")
        self.server = self.fresh_server()

    def fresh_server(self):
        self.snapshot = None
        self.dirs += 1
        directory = self.tmp / f"server{self.dirs}"
        directory.mkdir()
        server = fz.FuzzServer(directory)
        try:
            self.ctx = ApiContext(seed_vault_through_api(server))
        except BaseException:
            server.stop()
            raise
        self.default_settings = {k: v for k, v in server.json("GET", "/profiles/default")[1].items() if k != "name"}
        self.desk_settings = {k: v for k, v in server.json("GET", "/devices/desk")[1].items() if k != "name"}
        return server

    def prepare(self, key):
        if key == "DELETE /profiles/{profile}":
            self.server.json("POST", "/profiles", {"name": "victim"})
        if key == "DELETE /devices/{device}":
            self.server.json("POST", "/devices", {"name": "victim", "providers": ["default"]})

    def reset(self, key):
        """Puts back what a case may have changed, so later cases see the same server."""
        s = self.server
        if "/clock" in key:
            s.json("POST", "/clock", {"set": BASE_TIME})
        if "holds" in key or "/credentials/" in key:
            status, holds = s.json("GET", "/holds")
            for hold in holds.get("holds", []) if isinstance(holds, dict) else []:
                if hold.get("state") in ("armed", "holding"):
                    s.call("POST", f"/holds/{urllib.parse.quote(str(hold['id']), safe='')}/release", b'{"outcome":"proceed"}')
        if key.startswith("PATCH /profiles/"):
            s.json("PATCH", "/profiles/default", self.default_settings)
        if key.startswith("PATCH /devices/"):
            s.json("PATCH", "/devices/desk", self.desk_settings)
        if key.endswith("/user"):
            s.call("DELETE", "/profiles/default/user")

    def vault(self):
        return [self.server.json("GET", "/profiles/default/passkeys"), self.server.json("GET", "/profiles/default/passwords")]

    def add(self, signature, case_id, request, response, detail, replay=None):
        """Logs a violation; with `replay` (method, path, body), the smallest case of its kind is replayed alone on
        a fresh server at the end."""
        self.log.add(signature, case_id, request, response, detail, replay)

    def run(self, case_id, case):
        key, label, method, path, raw = case
        self.log.cases += 1
        self.prepare(key)
        writes = key in WRITE_OPERATIONS
        if writes and self.snapshot is None:
            self.snapshot = self.vault()
        status, ctype, payload = self.server.call(method, path, raw)
        request = fz.describe_http(method, path, raw, label)
        response = fz.describe_response(status, ctype, payload)
        problem = self.server.alive()
        replay = (method, path, raw)
        clock_checked = key == "POST /clock" and status is not None and \
            self.check_clock(case_id, raw, status, payload, request, response)
        for signature, detail in fz.openapi_violations(method, path, status, ctype, payload):
            if signature[0] == "no response":  # a dead server is reported below, with its stderr
                continue
            if clock_checked and signature[0].startswith("clock time"):
                continue  # the same answer, already reported more precisely by check_clock
            self.add(signature, case_id, request, response, detail, replay if signature[0] == "5xx" else None)
        if status is not None:
            if key in ("POST /profiles/{profile}/passwords", "POST /devices/{device}/passwords") and status == 201:
                sent, got = fz.loads(raw), fz.loads(payload)
                if isinstance(sent, dict) and isinstance(got, dict) and isinstance(sent.get("username"), str) \
                        and got.get("username") != sent["username"]:
                    self.add(("POST /profiles/{profile}/passwords saved another username than it was given",),
                             case_id, request, response, f"sent {fz.short(sent['username'], 80)}, saved {fz.short(got.get('username'), 80)}")
        if problem:
            words, description = self.server.death()
            self.add(("server died", key) + words, case_id, request, response + "\n" + description, "", replay)
            self.restart()
            return
        if status is None:
            self.log.add(("no response, though the server stays up", key), case_id, request, response)
        if writes and status is not None and status >= 400:
            after = self.vault()
            if after != self.snapshot:
                self.add(("a refused request changed the vault", key, status), case_id, request, response,
                         "GET /profiles/default/passkeys and /passwords differ before and after", replay)
            self.snapshot = after
        elif writes:
            made = (key.endswith("/credentials/create") and status == 200) or (key == "POST /profiles/{profile}/credentials" and status == 201)
            if made and path.startswith("/profiles/default/"):
                created = fz.loads(payload)  # keeps the vault (and so each snapshot) small
                if isinstance(created, dict) and isinstance(created.get("id"), str):
                    self.server.call("DELETE", f"/profiles/default/passkeys/{urllib.parse.quote(created['id'], safe='')}")
            self.snapshot = None
        self.reset(key)

    def check_clock(self, case_id, raw, status, payload, request, response):
        expected = clock_expectation(raw)
        if expected is None:
            return
        if status == 200 and expected == "refuse":
            self.log.add(("POST /clock accepted what is not an RFC 3339 UTC time in years 0000-9999 (should be a 400)",), case_id, request, response)
            return True
        elif status == 200:
            now = fz.loads(payload)
            now = now.get("now") if isinstance(now, dict) else None
            got = fz.parse_time(now)
            if got is None or abs(got - expected) > 1:
                self.log.add(("POST /clock answered a time that does not round-trip",), case_id, request, response,
                             f"expected {fz.format_time(expected)} (the clock was at {BASE_TIME})")
                return True
        return False

    def confirm_alone(self, replay):
        method, path, raw = replay
        """Replays one request on a brand-new server: does it alone do the same?"""
        self.confirms += 1
        directory = self.tmp / f"confirm{self.confirms}"
        directory.mkdir()
        try:
            server = fz.FuzzServer(directory)
        except RuntimeError as error:
            return f"(could not start a fresh server to confirm: {error})"
        try:
            seed_vault_through_api(server)
            status, _, payload = server.call(method, path, raw)
            dead = server.alive()
        finally:
            server.stop()
        if dead:
            return "replayed alone on a fresh server (clock at " + BASE_TIME + ", one password, one passkey): the server dies"
        return f"replayed alone on a fresh server (clock at {BASE_TIME}, one password, one passkey): {status} {fz.short(payload, 160)}"

    def password_round_trips(self):
        """A password saved with an odd username or password (each on an origin of its own) must come back from
        autofill as it was saved, or be refused cleanly when saved."""
        for n, (field, (label, value)) in enumerate([(f, v) for f in ("username", "password") for v in fz.STRINGS]):
            if self.log.over_budget():
                return
            self.log.cases += 1
            origin = f"https://rt{n}.example.com"
            saved = {"origin": origin, "username": "rt-user", "password": "rt-pw", field: value}
            path = "/profiles/default/passwords"
            status, ctype, payload = self.server.call("POST", path, fz.encode(saved))
            request = fz.describe_http("POST", path, fz.encode(saved), f"round trip: {field} = {label}")
            if status != 201:
                continue  # refused (a 5xx is reported by the sweep)
            fill = {"origin": origin, "username": saved["username"]}
            status, ctype, payload = self.server.call("POST", "/profiles/default/autofill", fz.encode(fill))
            request += "\nthen " + fz.describe_http("POST", "/profiles/default/autofill", fz.encode(fill))
            response = fz.describe_response(status, ctype, payload)
            got = fz.loads(payload)
            if status != 200 or not isinstance(got, dict) or (got.get("username"), got.get("password")) != (saved["username"], saved["password"]):
                self.add(("a saved password does not come back from autofill as saved", field, status), f"round-trip-{n}",
                          request, response, "")
            if self.server.alive():
                words, description = self.server.death()
                self.add(("server died", "POST /profiles/{profile}/autofill") + words, f"round-trip-{n}", request, description, "")
                self.restart()

    def restart(self):
        self.snapshot = None
        try:
            self.server.start()
            if self.server.alive() is None:
                self.reset("POST /clock holds PATCH /profiles/ /user")
                return
        except RuntimeError as error:
            self.log.add(("the server does not start again on the vault a dead server left",), "restart",
                         "credemu --vault VAULT serve --port 0", str(error)[:600])
        self.server = self.fresh_server()


def test_fuzz_api_bodies_from_the_openapi_schemas(tmp_path):
    fuzz = ApiFuzz(tmp_path)
    try:
        cases = [(f"sweep-{n}", case) for n, case in enumerate(in_sweep_order(api_sweep(fuzz.ctx)))]
        cases += [(f"random-{n}", api_random_case(fuzz.ctx, n)) for n in range(fz.CASES)]
        for case_id, case in cases:
            if fuzz.log.over_budget():
                break
            fuzz.run(case_id, case)
        fuzz.password_round_trips()
        fuzz.log.replay_best(fuzz.confirm_alone)
    finally:
        fuzz.server.stop()
    print(fuzz.log.summary())
    if fuzz.log.groups:
        pytest.fail(fuzz.log.report(), pytrace=False)


# ======================================================================================================
# Part 2: mutated WebAuthn options, through POST /profiles/default/credentials/{create,get} and the CLI
# ======================================================================================================

BAD_B64 = [("'a+b/'", "a+b/"), ("'AA=='", "AA=="), ("'A'", "A"), ("''", ""), ("' AAAA'", " AAAA"), ("'AA AA'", "AA AA"),
           ("'é'", "é"), ("'%%'", "%%"), ("lone surrogate", "\ud800"), ("fullwidth 'ＡＡＡＡ'", "ＡＡＡＡ"), ("'AAAA\\n'", "AAAA\n"),
           ("'A'*100000", "A" * 100_000), ("0", 0), ("null", None), ("[]", []), ("{}", {}), ("1e300", Raw("1e300"))]
USER_IDS = [("0 bytes", ""), ("1 byte", b64(b"\x01")), ("64 bytes", b64(b"\x02" * 64)), ("65 bytes", b64(b"\x03" * 65)),
            ("10000 bytes", b64(b"\x04" * 10_000)), ("180000 bytes", b64(b"\x05" * 180_000))]
TIMEOUTS = [(label, v) for label, v in fz.NUMBERS + fz.NOT_JSON_NUMBERS[:3]] + [("'60000'", "60000"), ("null", None), ("true", True)]
ALGS = [("1e300", Raw("1e300")), ("-1e300", Raw("-1e300")), ("2^31", 2 ** 31), ("-2^31-1", -(2 ** 31) - 1), ("-7.0", Raw("-7.0")),
        ("-7.5", -7.5), ("'-7'", "-7"), ("'−7' (U+2212)", "\u22127"), ("null", None), ("0", 0), ("-65535", -65535),
        ("1e-300", Raw("1e-300")), ("-7e0", Raw("-7e0")), ("2^63", 2 ** 63), ("1e999", Raw("1e999")), ("-0", Raw("-0"))]
PARAMS = [("[]", []), ("[{}]", [{}]), ("[null]", [None]), ("'ES256'", "ES256"), ("{}", {}),
          ("1000 × ES256", [{"type": "public-key", "alg": -7}] * 1000), ("only RS256", [{"type": "public-key", "alg": -257}]),
          ("only EdDSA", [{"type": "public-key", "alg": -8}]), ("type 'x'", [{"type": "x", "alg": -7}]),
          ("without type", [{"alg": -7}]), ("without alg", [{"type": "public-key"}]), ("alg 1e300", [{"type": "public-key", "alg": Raw("1e300")}])]
RP_IDS = [("'EXAMPLE.COM'", "EXAMPLE.COM"), ("'example.com.'", "example.com."), ("''", ""), ("'.example.com'", ".example.com"),
          ("'com'", "com"), ("'sub.example.com'", "sub.example.com"), ("'exämple.com'", "exämple.com"),
          ("'xn--'", "xn--"), ("'example.com:443'", "example.com:443"), ("'ex ample.com'", "ex ample.com"),
          ("fullwidth 'ｅｘａｍｐｌｅ.com'", "ｅｘａｍｐｌｅ.com"), ("'127.0.0.1'", "127.0.0.1"), ("'localhost'", "localhost"),
          ("'[::1]'", "[::1]"), ("'a'*300", "a" * 300), ("'example.com\\u0000.evil'", "example.com\u0000.evil"), ("1", 1),
          ("null", None), ("'example.com' + 250 × '.a'", "example.com" + ".a" * 250)]
ENUM_JUNK = [("'bogus'", "bogus"), ("''", ""), ("1", 1), ("null", None), ("'REQUIRED'", "REQUIRED"), ("[]", [])]
MEDIATIONS = ["conditional", "modal", "optional", "required", "silent", "immediate", "bogus", "", 1, None]
ORIGINS = [("'https://example.com'", ORIGIN), ("'http://example.com'", "http://example.com"),
           ("'https://EXAMPLE.com'", "https://EXAMPLE.com"), ("'https://example.com:443'", "https://example.com:443"),
           ("'https://example.com:99999'", "https://example.com:99999"), ("'https://example.com.'", "https://example.com."),
           ("'https://login.example.com'", "https://login.example.com"), ("'https://evil.com'", "https://evil.com"),
           ("''", ""), ("'null'", "null"), ("'https://'", "https://"), ("'example.com'", "example.com"),
           ("'https://user@example.com'", "https://user@example.com"), ("'https://[::1]'", "https://[::1]"),
           ("'http://localhost'", "http://localhost"), ("fullwidth host", "https://ｅｘａｍｐｌｅ.com"),
           ("'https://example.com/path?q#f'", "https://example.com/path?q#f"), ("android origin", "android:apk-key-hash:" + "A" * 43),
           ("'https://' + 'a'*100000", "https://" + "a" * 100_000), ("1", 1), ("lone surrogate", "https://\ud800.com")]
PLATFORMS = ["chrome-desktop", "chrome-android", "chrome-windows", "android", "safari", "ios", "macos", "windows", "", 1]


def set_at(document, path, value):
    node = document
    for key in path[:-1]:
        if isinstance(key, int):
            while len(node) <= key:
                node.append({})
        elif not isinstance(node.get(key), (dict, list)):
            node[key] = [] if isinstance(path[path.index(key) + 1], int) else {}
        node = node[key]
    if isinstance(path[-1], int):
        while len(node) <= path[-1]:
            node.append(None)
    node[path[-1]] = value


def delete_at(document, path):
    node = document
    for key in path[:-1]:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(node, dict):
        node.pop(path[-1], None)
    elif isinstance(node, list) and isinstance(path[-1], int) and path[-1] < len(node):
        node.pop(path[-1])


CREATE_REQUIRED = [("challenge",), ("rp",), ("rp", "name"), ("user",), ("user", "id"), ("user", "name"), ("user", "displayName"),
                   ("pubKeyCredParams",)]
CREATE_OPTIONAL = [("rp", "id"), ("timeout",), ("excludeCredentials",), ("authenticatorSelection",), ("attestation",),
                   ("extensions",), ("hints",), ("attestationFormats",)]
GET_MEMBERS = [("challenge",), ("rpId",), ("timeout",), ("allowCredentials",), ("userVerification",), ("extensions",), ("hints",)]


@functools.lru_cache(maxsize=None)
def option_mutations(kind, cred):
    """(label, function(options)) for the members of creation ("create") or request ("get") options."""
    out = []

    def put(path, label, value):
        out.append((f"{'.'.join(map(str, path))} = {label}", lambda o, p=path, v=value: set_at(o, list(p), copy.deepcopy(v))))

    if kind == "create":
        for path in CREATE_REQUIRED + CREATE_OPTIONAL:
            out.append((f"without {'.'.join(path)}", lambda o, p=path: delete_at(o, list(p))))
        for label, v in BAD_B64:
            put(("challenge",), label, v)
            put(("user", "id"), label, v)
            put(("excludeCredentials", 0, "id"), label, v)
        for label, v in USER_IDS:
            put(("user", "id"), label, v)
        put(("challenge",), "0 bytes", "")
        put(("challenge",), "100000 bytes", b64(b"\x06" * 100_000))
        for label, v in ALGS:
            put(("pubKeyCredParams", 0, "alg"), label, v)
        for label, v in PARAMS:
            put(("pubKeyCredParams",), label, v)
        for label, v in RP_IDS:
            put(("rp", "id"), label, v)
        for member in (("rp", "name"), ("user", "name"), ("user", "displayName")):
            for label, v in fz.STRINGS + [("1", 1), ("null", None), ("{}", {})]:
                put(member, label, v)
        for member, good in ((("attestation",), ["none", "indirect", "direct", "enterprise"]),
                             (("authenticatorSelection", "residentKey"), ["discouraged", "preferred", "required"]),
                             (("authenticatorSelection", "userVerification"), ["discouraged", "preferred", "required"]),
                             (("authenticatorSelection", "authenticatorAttachment"), ["platform", "cross-platform"])):
            for v in good:
                put(member, repr(v), v)
            for label, v in ENUM_JUNK:
                put(member, label, v)
        for label, v in (("true", True), ("'true'", "true"), ("1", 1), ("null", None)):
            put(("authenticatorSelection", "requireResidentKey"), label, v)
        put(("excludeCredentials",), "the vault's credential", [{"type": "public-key", "id": cred}])
        put(("excludeCredentials",), "1000 entries", [{"type": "public-key", "id": b64(bytes([i % 256, i // 256]))} for i in range(1000)])
        put(("excludeCredentials",), "[null]", [None])
        put(("excludeCredentials",), "'x'", "x")
        put(("excludeCredentials", 0, "transports"), "'usb'", "usb")
        put(("excludeCredentials", 0, "type"), "'x'", "x")
        put(("hints",), "['security-key']", ["security-key"])
        put(("hints",), "'x'", "x")
        put(("attestationFormats",), "['packed', 1]", ["packed", 1])
    else:
        for path in GET_MEMBERS:
            out.append((f"without {'.'.join(path)}", lambda o, p=path: delete_at(o, list(p))))
        for label, v in BAD_B64:
            put(("challenge",), label, v)
            put(("allowCredentials", 0, "id"), label, v)
        put(("challenge",), "0 bytes", "")
        put(("challenge",), "100000 bytes", b64(b"\x06" * 100_000))
        for label, v in RP_IDS:
            put(("rpId",), label, v)
        for v in ["discouraged", "preferred", "required"]:
            put(("userVerification",), repr(v), v)
        for label, v in ENUM_JUNK:
            put(("userVerification",), label, v)
        put(("allowCredentials",), "the vault's credential", [{"type": "public-key", "id": cred}])
        put(("allowCredentials",), "1000 unknown entries", [{"type": "public-key", "id": b64(bytes([i % 256, i // 256]))} for i in range(1000)])
        put(("allowCredentials",), "[null]", [None])
        put(("allowCredentials",), "'x'", "x")
        put(("allowCredentials", 0, "type"), "'x'", "x")
        put(("allowCredentials", 0, "transports"), "[1]", [1])
        put(("hints",), "'x'", "x")
    for label, v in TIMEOUTS:
        put(("timeout",), label, v)
    for label, v in (("{'credProps': true}", {"credProps": True}), ("{'prf': {'eval': {'first': 'AA'}}}", {"prf": {"eval": {"first": "AA"}}}),
                     ("{'largeBlob': {'support': 'required'}}", {"largeBlob": {"support": "required"}}),
                     ("{'credProps': 'yes'}", {"credProps": "yes"}), ("'x'", "x"), ("depth 65", fz.DEEP_ARRAY_65),
                     ("{'appid': 'https://evil.com'}", {"appid": "https://evil.com"})):
        put(("extensions",), label, v)
    for label, v in fz.SHAPES[:6] + [("'x'", "x"), ("1e300", Raw("1e300"))]:
        put(("zzExtra",), label, v)
    return out


def wrappers(kind, options, rng):
    """(label, document) forms of the options: bare, wrapped (with mediation), nested, Android's and Apple's."""
    out = [("bare", options), ("{publicKey}", {"publicKey": options}), ("{publicKey: {publicKey}}", {"publicKey": {"publicKey": options}}),
           ("{publicKey: null}", {"publicKey": None}), ("{publicKey: []}", {"publicKey": []}), ("{publicKey: 'x'}", {"publicKey": "x"}),
           ("{publicKey, signal: {}}", {"publicKey": options, "signal": {}})]
    for m in MEDIATIONS:
        out.append((f"{{publicKey, mediation: {m!r}}}", {"publicKey": options, "mediation": m}))
    text = fz.dumps(options) if not isinstance(options, Raw) else options.text
    out += [("Android requestJson", {"requestJson": text, "isConditional": rng.random() < 0.5, "origin": "android:apk-key-hash:" + b64(b"\x07" * 32)}),
            ("Android requestJson not JSON", {"requestJson": "{not json", "origin": "android:apk-key-hash:AA"}),
            ("Android requestJson 1", {"requestJson": 1}), ("Android isConditional 'yes'", {"requestJson": text, "isConditional": "yes"})]
    if isinstance(options, dict):
        if kind == "create":
            user = options.get("user") if isinstance(options.get("user"), dict) else {}
            apple = {"relyingPartyIdentifier": RP_ID, "challenge": options.get("challenge"), "name": user.get("name"),
                     "userID": user.get("id"), "requestStyle": rng.choice(["standard", "conditional", "weird", 1])}
        else:
            apple = {"relyingPartyIdentifier": RP_ID, "challenge": options.get("challenge"),
                     "allowedCredentials": [c.get("id") for c in options.get("allowCredentials", []) if isinstance(c, dict)]
                     if isinstance(options.get("allowCredentials"), list) else options.get("allowCredentials"),
                     "userVerificationPreference": rng.choice(["preferred", "required", "bogus"])}
        out += [("Apple request fields", apple), ("Apple relyingPartyIdentifier 1e300", dict(apple, relyingPartyIdentifier=Raw("1e300")))]
    return out


class CeremonyCase:
    def __init__(self, kind, label, document, api_extra, cli_flags, as_string=False, cli=True):
        self.kind, self.label, self.document, self.api_extra, self.cli_flags, self.as_string = kind, label, document, api_extra, cli_flags, as_string
        self.cli = cli  # also run through the CLI (it shares the options parser with the API, so not every case is)

    def api_body(self):
        options = fz.dumps(self.document) if self.as_string else self.document
        body = {"origin": ORIGIN, "options": Raw(fz.dumps(self.document)) if not self.as_string else options}
        for key, value in self.api_extra.items():
            if value is DROP:
                body.pop(key, None)
            else:
                body[key] = value
        return fz.encode(body)

    def cli_argv(self):
        argv = [self.kind]
        flags = {"--origin": ORIGIN, **self.cli_flags}
        for flag, value in flags.items():
            if value is not DROP:
                argv += [flag, value]
        return argv

    def stdin(self):
        return fz.encode(self.document)


DROP = object()


def ceremony_extras(kind, rng, cred):
    """Mutations of the API body around the options, and the CLI flags that mirror them."""
    api, cli, labels = {}, {}, []
    roll = rng.random()
    if roll < 0.2:
        label, origin = rng.choice(ORIGINS)
        api["origin"] = origin
        if isinstance(origin, str) and "\ud800" not in origin:
            cli["--origin"] = origin
        labels.append(f"origin = {label}")
    elif roll < 0.25:
        api["origin"], cli["--origin"] = DROP, DROP
        labels.append("without origin")
    if rng.random() < 0.25:
        m = rng.choice(MEDIATIONS)
        api["mediation"] = m
        if isinstance(m, str):
            cli["--mediation"] = m
        labels.append(f"mediation = {m!r}")
    if rng.random() < 0.15:
        p = rng.choice(PLATFORMS)
        api["platform"] = p
        if isinstance(p, str):
            cli["--platform"] = p
        labels.append(f"platform = {p!r}")
    if rng.random() < 0.1:
        label, top = rng.choice(ORIGINS)
        api["topOrigin"] = top
        if isinstance(top, str) and "\ud800" not in top:
            cli["--top-origin"] = top
        labels.append(f"topOrigin = {label}")
    if rng.random() < 0.05:
        api["androidPackage"] = cli["--android-package"] = rng.choice(["com.example.app", "", "a" * 1000])
        labels.append("androidPackage")
    if kind == "get" and rng.random() < 0.15:
        label, pick = rng.choice([("the vault's credential", cred), ("''", ""), ("'%%'", "%%"), ("'A'", "A"), ("unknown", b64(b"\x09" * 16))])
        api["pick"] = cli["--pick"] = pick
        labels.append(f"pick = {label}")
    return api, cli, labels


def ceremony_case(rng, number, cred, sweep_mutation=None, sweep_kind=None):
    kind = sweep_kind or ("create" if rng.random() < 0.6 else "get")
    if kind == "create":
        options = reg_options(rng, exclude=[unb64(cred)] if rng.random() < 0.1 else [rbytes(rng, 16)])
    else:
        options = auth_options(rng, allow=[unb64(cred)] if rng.random() < 0.6 else [])
    labels = []
    catalog = option_mutations(kind, cred)
    chosen = [sweep_mutation] if sweep_mutation else rng.sample(catalog, rng.choice([1, 1, 2, 3]))
    for label, mutate in chosen:
        mutate(options)
        labels.append(label)
    document = options
    if sweep_mutation is None and rng.random() < 0.3:
        label, document = rng.choice(wrappers(kind, options, rng))
        labels.append(f"as {label}")
    api, cli, extra = ({}, {}, []) if sweep_mutation else ceremony_extras(kind, rng, cred)
    as_string = sweep_mutation is None and rng.random() < 0.1
    if as_string:
        extra.append("options as a JSON string")
    return CeremonyCase(kind, "; ".join(labels + extra), document, api, cli, as_string)


def ceremony_sweep(cred):
    cases = []
    for kind in ("create", "get"):
        for n, mutation in enumerate(option_mutations(kind, cred)):
            cases.append(ceremony_case(fz.case_rng("ceremony-sweep", f"{kind}{n}"), n, cred, mutation, kind))
            cases[-1].cli = n % 2 == 0
        rng = fz.case_rng("ceremony-sweep", f"{kind}-wrappers")
        base = reg_options(rng) if kind == "create" else auth_options(rng, allow=[unb64(cred)])
        for label, document in wrappers(kind, base, rng):
            cases.append(CeremonyCase(kind, f"as {label}", document, {}, {}))
        for label, origin in ORIGINS:
            cli = {"--origin": origin} if isinstance(origin, str) and "\ud800" not in origin else {}
            cases.append(CeremonyCase(kind, f"origin = {label}", reg_options(rng) if kind == "create" else auth_options(rng), {"origin": origin}, cli))
        for m in MEDIATIONS:
            cases.append(CeremonyCase(kind, f"mediation = {m!r}", reg_options(rng) if kind == "create" else auth_options(rng, allow=[unb64(cred)]),
                                      {"mediation": m}, {"--mediation": m} if isinstance(m, str) else {}))
        for p in PLATFORMS:
            cases.append(CeremonyCase(kind, f"platform = {p!r}", reg_options(rng) if kind == "create" else auth_options(rng, allow=[unb64(cred)]),
                                      {"platform": p}, {"--platform": p} if isinstance(p, str) else {}))
    return cases


RESPONSE_SCHEMAS = {kind: jsonschema.Draft202012Validator({"components": fz.OPENAPI["components"],
                                                           "$ref": f"#/components/schemas/{name}"})
                    for kind, name in (("create", "RegistrationResponse"), ("get", "AuthenticationResponse"))}


def webauthn_error_problem(body):
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return "not {error: {name, message}}"
    if error.get("name") not in fz.WEBAUTHN_NAMES:
        return f"error name {error.get('name')!r} is not a WebAuthn name"
    return None


def verification_problem(case, body, keys, cli=False):
    """Checks a successful ceremony with py_webauthn against what the options asked, when the options are web
    options (bare or in {publicKey}) with a readable challenge and the call is plain (no origin games); returns
    (kind of failure, message) or None."""
    extra = case.cli_flags if cli else case.api_extra
    if set(extra) - {"mediation", "--mediation", "pick", "--pick"} or not isinstance(body, dict):
        return None
    options = case.document
    if isinstance(options, dict) and isinstance(options.get("publicKey"), dict) and set(options) <= {"publicKey", "mediation", "signal"}:
        options = options["publicKey"]
    if not isinstance(options, dict) or "requestJson" in options or "relyingPartyIdentifier" in options or "publicKey" in options:
        return None
    challenge = options.get("challenge")
    if not isinstance(challenge, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", challenge):
        return None
    if case.kind == "create":
        rp_id = options.get("rp", {}).get("id", RP_ID) if isinstance(options.get("rp"), dict) else None
    else:
        rp_id = options.get("rpId", RP_ID)
    if not isinstance(rp_id, str):
        return None
    try:
        if case.kind == "create":
            verify_registration_response(credential=body, expected_challenge=unb64(challenge), expected_origin=ORIGIN,
                                         expected_rp_id=rp_id, require_user_presence=False)
        elif body.get("id") in keys:
            verify_authentication_response(credential=body, expected_challenge=unb64(challenge), expected_origin=ORIGIN,
                                           expected_rp_id=rp_id, credential_public_key=keys[body["id"]],
                                           credential_current_sign_count=0, require_user_verification=False)
    except Exception as error:  # noqa: BLE001 - any refusal by the RP library is the finding
        return type(error).__name__, f"{type(error).__name__}: {error}"[:300]
    return None


class CeremonyFuzz:
    def __init__(self, tmp):
        self.tmp = Path(tmp)
        self.log = fz.Log("ceremony", "part 2, mutated WebAuthn options (API and CLI)",
                          "CREDEMU_BIN=$PWD/.build/debug/credemu .venv/bin/python -m pytest Tests/interop/test_fuzz.py::test_fuzz_mutated_webauthn_options")
        (self.tmp / "server").mkdir()
        self.server = fz.FuzzServer(self.tmp / "server")
        try:
            self.seed()
        except BaseException:
            self.server.stop()
            raise

    def seed(self):
        self.keys = {}
        self.cred = seed_vault_through_api(self.server, self.keys)
        self.api_snapshot = self.passkeys()
        self.cli_dir = self.tmp / "cli"
        self.cli_dir.mkdir()
        self.cli_vault = self.cli_dir / "vault.db"
        self.cli(["clock", "set", BASE_TIME])
        options = reg_options(fz.case_rng("seed", 0), user="alice@example.com")
        created = self.cli(["create", "--origin", ORIGIN], fz.encode(options))
        assert created.returncode == 0, created.stderr
        self.cli_cred = json.loads(created.stdout)["id"]
        self.keys[self.cli_cred] = verify_registration_response(
            credential=json.loads(created.stdout), expected_challenge=unb64(options["challenge"]), expected_origin=ORIGIN,
            expected_rp_id=RP_ID).credential_public_key
        self.cli_snapshot = self.cli_list()

    def passkeys(self):
        return self.server.json("GET", "/profiles/default/passkeys")[1]

    def cli(self, argv, stdin=b""):
        return subprocess.run([fz.BINARY, "--vault", str(self.cli_vault), *argv], input=stdin, capture_output=True,
                              timeout=60, env=fz.clean_env(self.cli_dir), cwd=self.cli_dir)

    def cli_list(self):
        return self.cli(["vault", "list"]).stdout

    def cli_loop(self, cases):
        runs = 0
        for case_id, case in cases:
            if self.log.over_budget():
                break
            self.run_cli(case_id, case)
            runs += 1
        self.log.counts = f" (through the CLI too: {runs})"

    def run_api(self, case_id, case):
        self.log.cases += 1
        path = f"/profiles/default/credentials/{case.kind}"
        raw = case.api_body()
        status, ctype, payload = self.server.call("POST", path, raw)
        request = fz.describe_http("POST", path, raw, case.label)
        response = fz.describe_response(status, ctype, payload)
        where = f"POST {path}"
        for signature, detail in fz.openapi_violations("POST", path, status, ctype, payload):
            if signature[0] != "no response":
                self.log.add(signature, case_id, request, response, detail)
        body = fz.loads(payload)
        if status is not None and status >= 400:
            problem = webauthn_error_problem(body)
            if problem:
                self.log.add(("a failed ceremony's error is not a WebAuthn error", where, status, problem.split(" is ")[0]),
                             case_id, request, response)
            elif not 400 <= status < 500:
                self.log.add(("a failed ceremony is not a 4xx", where, status), case_id, request, response)
        dead = self.server.alive()
        if dead:
            words, description = self.server.death()
            self.log.add(("server died", where) + words, case_id, request, response + "\n" + description)
            self.server.start()
            self.api_snapshot = self.passkeys()
            return
        after = self.passkeys()
        if status is not None and status >= 400 and after != self.api_snapshot:
            self.log.add(("the vault changed after a failed ceremony", where, status), case_id, request, response,
                         "GET /profiles/default/passkeys differs before and after")
        if status == 200:
            problem = verification_problem(case, body, self.keys)
            if problem:
                self.log.add(("a successful ceremony's response does not verify with py_webauthn", where, problem[0]),
                             case_id, request, response, problem[1])
        if status == 200 and case.kind == "create" and isinstance(body, dict) and isinstance(after, dict):
            if body.get("id") not in {p.get("credentialId") for p in after.get("passkeys", [])}:
                self.log.add(("a successful create's credential is not in the vault", where), case_id, request, response)
            else:  # keep the vault small: the next snapshot stays cheap
                self.server.call("DELETE", f"/profiles/default/passkeys/{urllib.parse.quote(body['id'], safe='')}")
                after = self.passkeys()
        self.api_snapshot = after

    def run_cli(self, case_id, case):
        # The CLI's vault has its own passkey: the options name it instead of the server's.
        argv = [w.replace(self.cred, self.cli_cred) for w in case.cli_argv()]
        stdin = case.stdin().replace(self.cred.encode(), self.cli_cred.encode())
        if case.kind == "get":
            # A get that finds nothing meets GPM's Chrome sheet (modalGet.noCredential), which waits for the user: the
            # fuzzed user accepts what is offered and closes an empty sheet at once (a decision left queued is the default).
            self.cli(["user", "next", "accept"])
        proc = self.cli(argv, stdin)
        shown = fz.show_argv(["--vault", "vault.db", *argv]) + f"\nstdin: {fz.short(stdin, 400)}"
        if case.label:
            shown += f"\nmutation: {case.label}"
        response = f"exit {proc.returncode}; stdout: {fz.short(proc.stdout, 300)}; stderr: {fz.short(proc.stderr, 300)}"
        where = f"credemu {case.kind}"
        fatal, frame = fz.fatal_line(proc.stderr)
        if proc.returncode < 0 or proc.returncode > 3 or fatal:
            self.log.add(("CLI crashed", where, frame or fatal or f"exit {proc.returncode}"), case_id, shown,
                         response + (f"\n{fatal}" if fatal else "") + (f"\n   at {frame}" if frame else ""))
            return
        body = fz.loads(proc.stdout)
        if proc.returncode == 0:
            if body is fz.NOT_JSON or not RESPONSE_SCHEMAS[case.kind].is_valid(body):
                self.log.add(("CLI success output is not a valid response JSON", where), case_id, shown, response)
            else:
                problem = verification_problem(case, body, self.keys, cli=True)
                if problem:
                    self.log.add(("a successful CLI ceremony's response does not verify with py_webauthn", where, problem[0]),
                                 case_id, shown, response, problem[1])
        elif proc.returncode == 1:
            problem = webauthn_error_problem(body) if body is not fz.NOT_JSON else "stdout is not JSON"
            if problem:
                self.log.add(("CLI exit 1 without a WebAuthn error on stdout", where, problem.split(" is ")[0]), case_id, shown, response)
        elif proc.returncode == 2:
            if not proc.stderr.strip():
                self.log.add(("CLI usage error without a message on stderr", where), case_id, shown, response)
            elif not case.cli_flags:
                self.log.add(("CLI usage error (exit 2) for options, not a WebAuthn error", where), case_id, shown, response)
        else:
            self.log.add(("CLI vault error (exit 3) from a ceremony", where), case_id, shown, response)
        after = self.cli_list()
        if proc.returncode != 0 and after != self.cli_snapshot:
            self.log.add(("the vault changed after a failed CLI ceremony", where, proc.returncode), case_id, shown, response,
                         "credemu vault list differs before and after")
        self.cli_snapshot = after


def test_fuzz_mutated_webauthn_options(tmp_path):
    fuzz = CeremonyFuzz(tmp_path)
    try:
        cases = [(f"sweep-{n}", case) for n, case in enumerate(in_sweep_order(ceremony_sweep(fuzz.cred)))]
        for n in range(fz.CASES):
            cases.append((f"random-{n}", ceremony_case(fz.case_rng("ceremony", n), n, fuzz.cred)))
            cases[-1][1].cli = n % 3 == 0
        with ThreadPoolExecutor(1) as pool:  # the API cases here, the CLI's in a thread beside them
            cli = pool.submit(fuzz.cli_loop, [(case_id, case) for case_id, case in cases if case.cli])
            for case_id, case in cases:
                if fuzz.log.over_budget():
                    break
                fuzz.run_api(case_id, case)
            cli.result()
    finally:
        fuzz.server.stop()
    print(fuzz.log.summary())
    if fuzz.log.groups:
        pytest.fail(fuzz.log.report(), pytrace=False)


# ======================================================================================================
# Part 3: argument vectors for every subcommand of the CLI contract (docs/cli.md)
# ======================================================================================================

class O:
    """`--name value` (required: the command needs it)."""

    def __init__(self, name, value, kind, required=False):
        self.name, self.value, self.kind, self.required = name, value, kind, required

    def words(self):
        return [f"--{self.name}", self.value]


class F:
    def __init__(self, name):
        self.name, self.kind, self.required = name, None, False

    def words(self):
        return [f"--{self.name}"]


class P:
    def __init__(self, value, kind, required=True):
        self.value, self.kind, self.required = value, kind, required

    def words(self):
        return [self.value]


class Lit:
    """Literal words (the command and subcommand)."""

    def __init__(self, *words):
        self.items, self.kind, self.required = list(words), None, True

    def words(self):
        return list(self.items)


CRED = "{cred}"  # replaced by the template vault's credential ID when a case runs
GENERIC_ARGS = ["", " ", "-", "--", "-1", "1e300", "NaN", "１２３", "\U0001F600", "e\u0301", "\u202e", "a" * 100_000,
                b"\xff", b"caf\xe9", b"\xed\xa0\x80", b"\xc0\xaf", "--help", "null", "\n"]
KINDS = {
    "origin": ["https://example.com", "http://example.com", "https://example.com:99999", "", "https://", "example.com",
               "https://ｅｘａｍｐｌｅ.com", "null", "android:apk-key-hash:AAAA", "https://[::1]", "https://" + "a" * 100_000,
               b"https://\xff.com"],
    "int": ["-1", "0", "1e300", "1e99", "-1e300", "99999999999999999999", "9223372036854775807", "9223372036854775808",
            "-9223372036854775808", "-9223372036854775809", "１２", "٣", "0x10", "1.5", "NaN", "", " 1", "+1", "4294967297"],
    "time": fz.TIMES,
    "duration": fz.DURATIONS,
    "path": ["nonexistent.json", "", ".", "dir", "empty.json", "invalid.json", "badutf8.json", "a" * 300, "a" * 5000, b"\xff.json", "-"],
    "platform": ["chrome-desktop", "chrome-android", "chrome-windows", "android", "safari", "ios", "macos", "windows", "", "CHROME-DESKTOP", "ios "],
    "bool": ["true", "false", "TRUE", "1", "yes", "", "null"],
    "name": ["alice", "", "default", "ios", "a" * 100_000, "é", "..", "-", "--", "--help", "１", b"\xff", "a b", "null"],
    "cred": [CRED, "", "%%", "A", "AA==", "a" * 100_000, "pick:", b"\xff"],
    "decision": ["accept", "cancel", "timeout", "pick:" + CRED, "pick:", "pick:%%", "dance", "", "ACCEPT", "pick:" + "A" * 100_000],
    "uuid": ["00000000-0000-0000-0000-000000000000", "０0000000-0000-0000-0000-000000000000", "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz", "",
             "EA9B8D66-4D01-1D21-3CE4-B6B48CB575D4", "ea9b8d664d011d213ce4b6b48cb575d4", "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d",
             "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d44", "ea9b8d66-4d01-1d21-3ce4-b6b48cb575ｄ4"],
    "text": GENERIC_ARGS,
    "host": ["127.0.0.1", "127.0.0.2", "localhost", "::1", "", "999.1.1.1", "1e300", "127.1"],
    "port": ["0", "-1", "65536", "99999999999999999999", "1e3", "", "abc", "８０"],
    "threads": ["1", "64", "0", "65", "-1", "1e300", "99999999999", "", "２"],
    "maxbody": ["1024", "1023", "0", "-1", "1e300", "99999999999999999999", "9223372036854775807", ""],
    "providers": ["all", "gpm", "gpm@android", "apple@ios,gpm", "nope", "gpm@windows", "", ",", "@", "gpm@", "a" * 10_000],
    "pack": ["gpm", "apple", "bitwarden", "webauthn-spec", "keepassxc", "1password", "generic-third-party", "gpm-pre-m144",
             "proton-pass", "windows-hello", "edge", "nope", "", "../gpm", "GPM"],
    "version": ["18.2", "", "1e300", "99999999999999999999.0", "18.2.1.1.1", "-1", "１８", "a" * 10_000, "null"],
    "signal": ["unknown", "accepted", "details", "bogus", "", "UNKNOWN"],
    "mediation": ["conditional", "modal", "optional", "silent", "required", "bogus", ""],
    "counter": ["zero", "increment", "bogus", ""],
    "attestation": ["none", "packed", "direct", "bogus", ""],
    "format": ["table", "markdown", "json", "html", "bogus", ""],
    "kind": ["create", "get", "clock", "", "%", "a" * 100_000, b"\xff"],
    "profiles": ["default", "default,ios", "ios", "", ",", "default,", "default,default", "nobody", ",".join("abcdefghi"),
                 "a" * 100_000, "null", "[\"default\"]", b"\xff"],
}
# The probe's target in the argv part: a refused port (every run is exit 2 at its first exchange, no DNS); the URLs
# its mutations try are hostile to the parser, never names to resolve.
PROBE_URL = "http://127.0.0.1:9/"
KINDS["url"] = [PROBE_URL, "http://127.0.0.1:99999/", "http://127.0.0.1:0/", "http://127.0.0.1:+9/", "http://127.0.0.1:９/",
                "http://[::1]:9/", "http://[::1/", "http://[::1]junk/", "http://::1/", "https://127.0.0.1:9/", "HTTP://127.0.0.1:9",
                "http://127.0.0.1:9/a\r\nX-Injected: 1", "http://127.0.0.1:9/a b", "http://user@127.0.0.1:9/", "http://127.0.0.1:9?x#y",
                "http://" + "a" * 100_000, "http://１２７.0.0.1/", "http://", "", b"http://127.0.0.1:9/\xff", "http://\u202e/"]
KINDS["maxtime"] = ["1", "5", "86400", "0", "-1", "86401", "1.5", "1e3", "99999999999999999999", "９", "", " 5", "0x10"]
# Files the template holds beside the vault: a scenario whose "advance" step is mutated, and vault fixtures with
# one field mutated (what `scenario run FILE` and `vault import FILE` read).
SCENARIO_ADVANCES = [("1e300", Raw("1e300")), ("-1e300", Raw("-1e300")), ("1e20", Raw("1e20")), ("'1e300s'", "1e300s"),
                     ("'infs'", "infs"), ("-5", -5), ("'99999999999999999999s'", "99999999999999999999s"),
                     ("2^53+1", 2 ** 53 + 1), ("null", None), ("fullwidth '１d'", "１d"), ("'300000000000000d'", "300000000000000d")]
FIXTURE_MUTATIONS = [
    ("passwords.0.created", "'0000-01-01T00:00:00Z'", "0000-01-01T00:00:00Z"),
    ("passwords.0.created", "'10000-01-01T00:00:00Z'", "10000-01-01T00:00:00Z"),
    ("passwords.0.created", "'2026-02-30T00:00:00Z'", "2026-02-30T00:00:00Z"),
    ("passwords.0.lastUsed", "1e300", Raw("1e300")), ("passwords.0.origin", "''", ""), ("passwords.0.username", "'a\\u0000b'", "a\u0000b"),
    ("passkeys.0.signCount", "1e300", Raw("1e300")), ("passkeys.0.signCount", "-1", -1), ("passkeys.0.signCount", "2^32", 2 ** 32),
    ("passkeys.0.signCount", "2^64", 2 ** 64), ("passkeys.0.signCount", "1.5", 1.5),
    ("passkeys.0.aaguid", "a fullwidth digit", "ea9b8d66-4d01-1d21-3ce4-b6b48cb575ｄ4"), ("passkeys.0.credentialId", "''", ""),
    ("passkeys.0.credentialId", "'a+b/'", "a+b/"), ("passkeys.0.algorithm", "'ES512'", "ES512"), ("passkeys.0.privateKey", "'AAAA'", "AAAA"),
    ("passkeys.0.userHandle", "65 bytes", b64(b"\x01" * 65)), ("passkeys.0.created", "'0000-01-01T00:00:00Z'", "0000-01-01T00:00:00Z"),
    ("passkeys.0.hiddenAt", "1e300", Raw("1e300")), ("passkeys.0.counter", "'bogus'", "bogus"), ("version", "1e300", Raw("1e300")),
    ("version", "2", 2), ("passkeys", "depth 65", fz.DEEP_ARRAY_65),
]
FILE_NOTES = {f"scenario-{n}.json": f"scenario.json with its advance step's by = {label}" for n, (label, _) in enumerate(SCENARIO_ADVANCES)}
FILE_NOTES.update({f"fixture-{n}.json": f"vault-fixtures/password-and-passkey.json with {path} = {label}"
                   for n, (path, label, _) in enumerate(FIXTURE_MUTATIONS)})
KINDS["scenario"] = ["scenario.json"] + [f"scenario-{n}.json" for n in range(len(SCENARIO_ADVANCES))] + KINDS["path"]
KINDS["fixture"] = ["fixture.json"] + [f"fixture-{n}.json" for n in range(len(FIXTURE_MUTATIONS))] + KINDS["path"]
DEVICE_SETTINGS = [O("preferred", "default", "name"), O("platform", "chrome-desktop", "platform"), O("osVersion", "14", "version"),
                   O("playServicesVersion", "24.40", "version"), O("passcodeSet", "true", "bool"), O("browserSignedIn", "true", "bool"),
                   O("syncEnabled", "true", "bool"), O("privateBrowsing", "false", "bool"), O("browserVersion", "128", "version")]
SETTINGS = [O("pack", "apple", "pack"), O("platform", "ios", "platform"), O("osVersion", "18.2", "version"),
            O("playServicesVersion", "24.40", "version"), O("passcodeSet", "true", "bool"),
            O("automaticPasskeyUpgrades", "false", "bool"), O("passkeysEnabled", "true", "bool")]


def commands():
    """(name, slots, stdin) for every subcommand in the CLI contract (docs/cli.md)."""
    return [
        ("create", [Lit("create"), O("origin", ORIGIN, "origin", True), O("options", "create.json", "path"), O("top-origin", ORIGIN, "origin"),
                    O("mediation", "modal", "mediation"), O("platform", "chrome-desktop", "platform"),
                    O("android-package", "com.example.app", "text"), O("backup-eligible", "true", "bool"), O("backup-state", "true", "bool"),
                    O("counter", "zero", "counter"), O("attestation", "none", "attestation"),
                    O("aaguid", "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4", "uuid")], "create-stdin.json"),
        ("get", [Lit("get"), O("origin", ORIGIN, "origin", True), O("options", "get.json", "path"), O("top-origin", ORIGIN, "origin"),
                 O("pick", CRED, "cred"), O("platform", "chrome-desktop", "platform")], "get.json"),
        ("autofill", [Lit("autofill"), O("origin", ORIGIN, "origin", True), O("username", "alice@example.com", "name"), F("submit")], None),
        ("password save", [Lit("password", "save"), O("origin", ORIGIN, "origin", True), O("username", "bob", "name", True),
                           O("password", "pw", "text")], "password.txt"),
        ("password use", [Lit("password", "use"), O("origin", ORIGIN, "origin", True), O("username", "alice@example.com", "name", True)], None),
        ("password list", [Lit("password", "list"), O("origin", ORIGIN, "origin"), F("reveal")], None),
        ("signal", [Lit("signal"), P("unknown", "signal"), O("origin", ORIGIN, "origin", True), O("options", "signal-unknown.json", "path"),
                    O("platform", "chrome-desktop", "platform")], "signal-unknown.json"),
        ("capabilities", [Lit("capabilities"), O("platform", "android", "platform")], None),
        ("profile list", [Lit("profile", "list")], None),
        ("profile show", [Lit("profile", "show"), P("ios", "name", False)], None),
        ("profile create", [Lit("profile", "create"), P("fuzzed", "name")] + SETTINGS, None),
        ("profile set", [Lit("profile", "set"), P("ios", "name")] + SETTINGS, None),
        ("profile remove", [Lit("profile", "remove"), P("ios", "name")], None),
        ("device list", [Lit("device", "list")], None),
        ("device show", [Lit("device", "show"), P("desk", "name")], None),
        ("device create", [Lit("device", "create"), P("fuzzed", "name"), O("providers", "default", "profiles", True)] + DEVICE_SETTINGS, None),
        ("device set", [Lit("device", "set"), P("desk", "name"), O("providers", "default", "profiles")] + DEVICE_SETTINGS, None),
        ("device remove", [Lit("device", "remove"), P("desk", "name")], None),
        ("create on a device", [O("device", "desk", "name", True), Lit("create"), O("origin", ORIGIN, "origin", True),
                                O("options", "create.json", "path"), O("mediation", "modal", "mediation")], "create-stdin.json"),
        ("get on a device", [O("device", "desk", "name", True), Lit("get"), O("origin", ORIGIN, "origin", True),
                             O("options", "get.json", "path"), O("pick", CRED, "cred")], "get.json"),
        ("signal on a device", [O("device", "desk", "name", True), Lit("signal"), P("unknown", "signal"), O("origin", ORIGIN, "origin", True),
                                O("options", "signal-unknown.json", "path")], "signal-unknown.json"),
        ("capabilities on a device", [O("device", "desk", "name", True), Lit("capabilities")], None),
        ("providers list", [Lit("providers", "list")], None),
        ("providers show", [Lit("providers", "show"), P("gpm", "pack"), O("platform", "android", "platform")], None),
        ("providers validate", [Lit("providers", "validate"), P("pack.json", "path")], None),
        ("clock show", [Lit("clock", "show")], None),
        ("clock set", [Lit("clock", "set"), P("2026-12-24T18:30:00Z", "time")], None),
        ("clock advance", [Lit("clock", "advance"), P("90s", "duration")], None),
        ("clock system", [Lit("clock", "system")], None),
        ("user next", [Lit("user", "next"), P("accept", "decision"), P("pick:" + CRED, "decision", False)], None),
        ("user pending", [Lit("user", "pending")], None),
        ("user clear", [Lit("user", "clear")], None),
        ("events", [Lit("events"), O("kind", "create", "kind"), F("all-profiles"), O("after", "0", "int"), O("limit", "10", "int")], None),
        ("findings", [Lit("findings")], None),
        ("scenario run", [Lit("scenario", "run"), P("scenario.json", "scenario"), O("providers", "gpm", "providers", True),
                          O("format", "json", "format"), O("out", "report.out", "path")], None),
        ("serve", [Lit("serve"), O("port", "0", "port"), O("port-file", "port", "path"), O("host", "127.0.0.1", "host"),
                   O("token", "t", "text"), O("allow-origin", "http://localhost:8000", "text"), O("threads", "2", "threads"),
                   O("max-body", "262144", "maxbody")], None),
        ("vault list", [Lit("vault", "list")], None),
        ("vault show", [Lit("vault", "show"), P(CRED, "cred")], None),
        ("vault remove", [Lit("vault", "remove"), P(CRED, "cred")], None),
        ("vault import", [Lit("vault", "import"), P("fixture.json", "fixture")], None),
        ("vault export", [Lit("vault", "export")], None),
        ("demo", [Lit("demo"), O("origin", "https://shop.example.com", "origin")], None),
        ("probe", [Lit("probe"), P(PROBE_URL, "url"), O("log", "probe.db", "path"), O("providers", "gpm", "providers"),
                   O("adapter", "adapter.json", "path"), O("origin", "http://localhost:9", "origin"), O("format", "json", "format"),
                   O("out", "report.out", "path"), O("max-time", "5", "maxtime")], None),
        ("--help", [Lit("--help")], None),
        ("help", [Lit("help"), P("clock", "text", False)], None),
        ("no command", [], None),
    ]


GLOBALS = [("profile", "name"), ("vault", "path"), ("key-file", "path"), ("passphrase-file", "path"), ("providers", "path")]
NOT_JSON_OUTPUT = {"scenario run", "serve", "--help", "help", "no command", "demo", "probe"}


class ArgvCase:
    def __init__(self, name, words, stdin, label, globals_changed=False):
        self.name, self.words, self.stdin, self.label, self.globals_changed = name, words, stdin, label, globals_changed


def render(name, slots, stdin, label):
    words = []
    for slot in slots:
        words += slot.words()
    return ArgvCase(name, ["--vault", "vault.db"] + words, stdin, label)


def argv_sweep():
    cases = []
    for name, slots, stdin in commands():
        base = [s for s in slots if s.required or isinstance(s, (Lit, F)) or name in ("create", "serve")]
        if name == "serve":
            base = [s for s in slots if isinstance(s, Lit) or getattr(s, "name", None) in ("port", "port-file")]
        cases.append(render(name, base, stdin, "as documented"))
        cases.append(render(name, slots, stdin, "with every option") if base != slots else None)
        for i, slot in enumerate(slots):
            if name == "serve" and getattr(slot, "kind", None) in ("text", "path"):
                continue  # a valid value starts a server (0.2 s each): the random cases try a few
            if name == "profile set" and slot in SETTINGS:
                continue  # the same reader as profile create's, swept there
            if name == "device set" and slot in DEVICE_SETTINGS:
                continue  # the same reader as device create's, swept there
            if isinstance(slot, (O, P)):
                others = [s for s in base if s is not slot]
                position = [s for s in slots if s in others or s is slot]  # keep the documented order
                for value in KINDS[slot.kind]:
                    mutated = copy.copy(slot)
                    mutated.value = value
                    cases.append(render(name, [mutated if s is slot else s for s in position], stdin, f"{slot_name(slot)} = {fz.short(value, 40)}"))
                if isinstance(slot, O) and (name != "serve" or slot.name == "port"):
                    cases.append(render(name, others + [Lit(f"--{slot.name}")], stdin, f"--{slot.name} without a value"))
                    cases.append(render(name, others + [Lit(f"--{slot.name}=")], stdin, f"--{slot.name}="))
                    cases.append(render(name, position + [Lit(f"--{slot.name}", "x")], stdin, f"--{slot.name} twice"))
                if slot.required:
                    cases.append(render(name, others, stdin, f"without {slot_name(slot)}"))
            elif isinstance(slot, F):
                cases.append(render(name, base + [Lit(f"--{slot.name}=1")], stdin, f"--{slot.name}=1"))
        for extra in ("--bogus", "--bogus=1", "-x", "--", "---origin", "--ORIGIN"):
            cases.append(render(name, base + [Lit(extra)], stdin, f"unknown {extra}"))
        cases.append(render(name, base + [Lit("extra")], stdin, "an extra argument"))
        cases.append(render(name, base + [Lit(b"\xff\xfe")], stdin, "a non-UTF-8 argument"))
    serve = next(slots for name, slots, _ in commands() if name == "serve")
    for n in range(12):  # stopped as soon as it is up, as a harness does: the SIGTERM must not be lost
        cases.append(render("serve", [s for s in serve if isinstance(s, Lit) or s.name in ("port", "port-file")], None,
                            f"as documented, stopped at once (start {n + 1} of 12)"))
    for option, kind in GLOBALS:
        for value in KINDS[kind]:
            case = render("vault list", [Lit("vault", "list")], None, f"--{option} {fz.short(value, 40)}")
            case.words = [f"--{option}", value] + (case.words if option != "vault" else case.words[2:])
            case.globals_changed = True
            cases.append(case)
        case = render("vault list", [Lit("vault", "list")], None, f"--{option} without a value")
        case.words = case.words + [f"--{option}"] if option != "vault" else [f"--{option}"]
        case.globals_changed = True
        cases.append(case)
    return [c for c in cases if c is not None]


def slot_name(slot):
    return f"--{slot.name}" if isinstance(slot, O) else "the argument"


def argv_random_case(number):
    rng = fz.case_rng("argv", number)
    name, slots, stdin = rng.choice(commands())
    chosen = [s for s in slots if s.required or isinstance(s, Lit) or rng.random() < 0.5]
    if name == "serve":
        chosen = [s for s in chosen if not isinstance(s, O) or s.name not in ("port", "port-file")] + \
            [O("port", "0", "port"), O("port-file", "port", "path")]
    labels = []
    words = []
    for slot in chosen:
        roll = rng.random()
        if isinstance(slot, (O, P)) and roll < 0.3:
            value = rng.choice(KINDS[slot.kind] + GENERIC_ARGS)
            labels.append(f"{slot_name(slot)} = {fz.short(value, 40)}")
            words += [f"--{slot.name}", value] if isinstance(slot, O) else [value]
        elif isinstance(slot, O) and roll < 0.36:
            value = rng.choice(KINDS[slot.kind])
            labels.append(f"--{slot.name}={fz.short(value, 40)}")
            words.append(f"--{slot.name}=".encode() + (value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")))
        elif slot.required and not isinstance(slot, Lit) and roll < 0.4:
            labels.append(f"without {slot_name(slot)}")
        else:
            words += slot.words()
    if rng.random() < 0.15:
        extra = rng.choice(["--bogus", "-x", "--", "extra", b"\xff", "--help", "--origin", "--vault"])
        words.insert(rng.randrange(len(words) + 1), extra)
        labels.append(f"inserted {fz.short(extra, 20)}")
    case = ArgvCase(name, ["--vault", "vault.db"] + words, stdin, "; ".join(labels) or "as documented")
    if rng.random() < 0.1:
        option, kind = rng.choice(GLOBALS)
        value = rng.choice(KINDS[kind])
        case.words = [f"--{option}", value] + case.words
        case.globals_changed = True
        case.label += f"; --{option} {fz.short(value, 40)} first"
    return case


def make_template(directory):
    """The vault each argv case runs on (a fresh copy each): a virtual clock, one password, one passkey, a profile
    'ios', and the files the commands name."""
    directory.mkdir()

    def cli(*argv, stdin=b""):
        proc = subprocess.run([fz.BINARY, "--vault", "vault.db", *argv], input=stdin, capture_output=True, timeout=60,
                              cwd=directory, env=fz.clean_env(directory))
        assert proc.returncode == 0, (argv, proc.stdout, proc.stderr)
        return proc.stdout

    rng = fz.case_rng("template", 0)
    cli("clock", "set", BASE_TIME)
    cli("password", "save", "--origin", ORIGIN, "--username", "alice@example.com", "--password", "pw")
    cred = json.loads(cli("create", "--origin", ORIGIN, stdin=fz.encode(reg_options(rng, user="alice@example.com"))))["id"]
    cli("profile", "create", "ios", "--pack", "apple", "--platform", "ios", "--osVersion", "18.2")
    cli("device", "create", "desk", "--providers", "default")
    files = {
        "create.json": fz.encode(reg_options(rng, user="carol@example.com")),
        "create-stdin.json": fz.encode(reg_options(rng, user="dave@example.com")),
        "get.json": fz.encode(auth_options(rng, allow=[unb64(cred)])),
        "signal-unknown.json": fz.encode({"rpId": RP_ID, "credentialId": b64(b"\x01" * 16)}),
        "password.txt": b"pw-from-stdin\n", "empty.json": b"", "invalid.json": b"{not json", "badutf8.json": b'{"a": "\xff"}',
        "fixture.json": (ROOT_DIR / "vault-fixtures" / "password-and-passkey.json").read_bytes(),
        "pack.json": (ROOT_DIR / "providers" / "gpm.json").read_bytes(),
        "scenario.json": (ROOT_DIR / "scenarios" / "upgrade-after-autofill.json").read_bytes(),
        "passphrase.txt": b"secret\n",
        "adapter.json": fz.encode({"registration": {"begin": {"path": "/r/begin"}, "finish": {"path": "/r/finish"}},
                                   "authentication": {"begin": {"path": "/a/begin"}, "finish": {"path": "/a/finish"}}}),
    }
    scenario = json.loads(files["scenario.json"])
    advance = next(step for step in scenario["steps"] if step["do"] == "advance")
    for n, (_, by) in enumerate(SCENARIO_ADVANCES):
        advance["by"] = by
        files[f"scenario-{n}.json"] = fz.encode(scenario)
    for n, (path, _, value) in enumerate(FIXTURE_MUTATIONS):
        fixture = json.loads(files["fixture.json"])
        set_at(fixture, [int(k) if k.isdigit() else k for k in path.split(".")], value)
        files[f"fixture-{n}.json"] = fz.encode(fixture)
    for name, data in files.items():
        (directory / name).write_bytes(data)
    (directory / "dir").mkdir()
    return cred


ROOT_DIR = fz.ROOT
FINGERPRINT_TABLES_SKIPPED = {"events", "event_marks", "signal_quota"}  # the log of what happened (failures included), its marks, and rate limits


def vault_fingerprint(path):
    """Every row of the vault but the event log, read straight from the SQLite file (cheaper than a process)."""
    import sqlite3
    if not path.exists():
        return None
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: sorted(map(repr, connection.execute(f'SELECT * FROM "{t}"'))) for t in tables if t not in FINGERPRINT_TABLES_SKIPPED}
    except sqlite3.Error as error:
        return f"unreadable: {error}"
    finally:
        connection.close()


class ArgvFuzz:
    def __init__(self, tmp):
        self.tmp = Path(tmp)
        self.template = self.tmp / "template"
        self.cred = make_template(self.template)
        self.fingerprint = vault_fingerprint(self.template / "vault.db")
        self.log = fz.Log("argv", "part 3, CLI argument vectors",
                          "CREDEMU_BIN=$PWD/.build/debug/credemu .venv/bin/python -m pytest Tests/interop/test_fuzz.py::test_fuzz_cli_argument_vectors")
        self.count_lock = fz.threading.Lock()

    def words(self, case):
        def fill(word):
            return word.replace(CRED, self.cred) if isinstance(word, str) else word
        return [fill(w) for w in case.words]

    def run(self, case_id, case):
        with self.count_lock:
            self.log.cases += 1
        directory = self.tmp / case_id
        shutil.copytree(self.template, directory)
        try:
            self.check(case_id, case, directory)
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def spawn(self, argv, directory, stdin_name):
        stdin = (directory / stdin_name).read_bytes() if stdin_name else b""
        try:
            return subprocess.run([fz.BINARY, *argv], input=stdin, capture_output=True, timeout=30, cwd=directory,
                                  env=fz.clean_env(directory))
        except subprocess.TimeoutExpired as timeout:
            return timeout

    def serve(self, argv, directory):
        """`serve` runs until SIGTERM: wait for it to be up (or to exit), then stop it; it must exit 0."""
        out, err = open(directory / "serve.out", "wb"), open(directory / "serve.err", "wb")
        proc = subprocess.Popen([fz.BINARY, *argv], stdout=out, stderr=err, cwd=directory, env=fz.clean_env(directory))
        deadline = time.time() + 3
        while time.time() < deadline and proc.poll() is None:
            port = directory / "port"
            if port.exists() and port.read_text().strip():
                break
            time.sleep(0.005)
        stopped = proc.poll() is None
        hung = False
        if stopped:
            proc.send_signal(fz.signal.SIGTERM)  # as a harness would, as soon as the port is known
        try:
            proc.wait(timeout=1)  # a clean stop takes milliseconds
        except subprocess.TimeoutExpired:
            hung = True  # the SIGTERM was lost; a second one (handlers in place by now) saves the wait
            proc.send_signal(fz.signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        out.close(), err.close()
        result = subprocess.CompletedProcess(argv, proc.returncode, (directory / "serve.out").read_bytes(), (directory / "serve.err").read_bytes())
        result.stopped_by_test = stopped
        result.stop_problem = None
        if stopped and hung:
            result.stop_problem = "the SIGTERM is lost: still running 1 s later"
        elif stopped and proc.returncode == -fz.signal.SIGTERM:
            result.stop_problem = "killed by the SIGTERM (exit -15) instead of stopping cleanly"
        return result

    def check(self, case_id, case, directory):
        argv = self.words(case)
        proc = self.serve(argv, directory) if case.name == "serve" and "--help" not in argv else self.spawn(argv, directory, case.stdin)
        shown = fz.show_argv(argv) + (f"  < {case.stdin}" if case.stdin else "") + f"\nmutation: {case.label}"
        shown += "".join(f"\n{word}: {FILE_NOTES[word]}" for word in argv if isinstance(word, str) and word in FILE_NOTES)
        where = f"credemu {case.name}"
        if isinstance(proc, subprocess.TimeoutExpired):
            self.log.add(("CLI hangs (no exit in 30 s)", where), case_id, shown, "killed after 30 s")
            return
        if getattr(proc, "stop_problem", None):
            self.log.add(("serve does not stop cleanly on a SIGTERM sent as soon as its port file is written", proc.stop_problem),
                         case_id, shown, f"exit {proc.returncode}; stdout: {fz.short(proc.stdout, 200)}; stderr: {fz.short(proc.stderr, 200)}",
                         "timing-dependent: the port file and URL are out before the SIGTERM handler is in place (about 1 start in 7 on 2 cores)")
            return
        response = f"exit {proc.returncode}; stdout: {fz.short(proc.stdout, 300)}; stderr: {fz.short(proc.stderr, 300)}"
        fatal, frame = fz.fatal_line(proc.stderr)
        if proc.returncode < 0 or proc.returncode > 3 or fatal:
            self.log.add(("CLI crashed", where, frame or fatal or f"exit {proc.returncode}"), case_id, shown,
                         response + (f"\n{fatal}" if fatal else "") + (f"\n   at {frame}" if frame else ""))
            return
        if getattr(proc, "stopped_by_test", False):
            return  # a server that came up and stopped cleanly on SIGTERM
        body = fz.loads(proc.stdout)
        if proc.returncode in (1, 3):
            error = body.get("error") if isinstance(body, dict) else None
            if not (isinstance(error, dict) and isinstance(error.get("name"), str) and isinstance(error.get("message"), str)):
                self.log.add((f"CLI exit {proc.returncode} without a JSON error on stdout", where), case_id, shown, response)
            elif proc.returncode == 1 and error["name"] not in fz.WEBAUTHN_NAMES:
                self.log.add(("CLI exit 1 with an error that is not a WebAuthn name", where, error["name"]), case_id, shown, response)
            elif proc.returncode == 3 and error["name"] == "VaultError" and not isinstance(error.get("code"), str):
                self.log.add(("CLI vault error without a code", where), case_id, shown, response)
            if not case.globals_changed and vault_fingerprint(directory / "vault.db") != self.fingerprint:
                self.log.add((f"the vault changed after exit {proc.returncode}", where), case_id, shown, response)
        elif proc.returncode == 2:
            if not proc.stderr.strip():
                self.log.add(("CLI usage error (exit 2) without a message on stderr", where), case_id, shown, response)
        elif case.name not in NOT_JSON_OUTPUT and "--help" not in argv and body is fz.NOT_JSON:
            self.log.add(("CLI success (exit 0) without JSON on stdout", where), case_id, shown, response)
        if case.name in ("clock set", "clock advance", "clock show", "clock system") and proc.returncode == 0 and not case.globals_changed:
            self.check_clock(case_id, case, argv, body, directory, shown, response)
        if case.name == "vault import" and proc.returncode == 0 and argv[2:4] == ["vault", "import"] and len(argv) == 5:
            self.check_import(case_id, argv[4], directory, shown)

    def check_import(self, case_id, name, directory, shown):
        """What `vault import F` accepts, `vault export` gives back (into a new vault: nothing else in it)."""
        if not isinstance(name, str) or not (directory / name).is_file():
            return
        imported = self.spawn(["--vault", "fresh.db", "vault", "import", name], directory, None)
        exported = self.spawn(["--vault", "fresh.db", "vault", "export", "--include-secrets"], directory, None)
        response = f"import: exit {imported.returncode} {fz.short(imported.stderr, 200)}; export: exit {exported.returncode}; " \
                   f"stdout: {fz.short(exported.stdout, 400)}; stderr: {fz.short(exported.stderr, 300)}"
        shown = shown.replace("--vault vault.db", "--vault fresh.db") + "\nthen credemu --vault fresh.db vault export"
        fatal, frame = fz.fatal_line(exported.stderr)
        if exported.returncode < 0 or exported.returncode > 3 or fatal:
            self.log.add(("CLI crashed", "credemu vault export (after an import)", frame or fatal or f"exit {exported.returncode}"),
                         case_id, shown, response + (f"\n{fatal}" if fatal else "") + (f"\n   at {frame}" if frame else ""))
        elif imported.returncode == 0:
            difference = fz.first_difference(fz.loads((directory / name).read_bytes()), fz.loads(exported.stdout))
            if difference:
                self.log.add(("vault import then export does not give the file back", FILE_NOTES.get(name, name)), case_id,
                             shown, f"import: exit 0; export: exit {exported.returncode}", f"imported != exported at {difference}")

    def check_clock(self, case_id, case, argv, body, directory, shown, response):
        now = body.get("now") if isinstance(body, dict) else None
        where = f"credemu {case.name}"
        if isinstance(body, dict) and body.get("mode") == "system":
            return  # system time moves on between two commands
        if not isinstance(now, str) or not fz.RFC3339_4.match(now):
            self.log.add(("clock prints a time that is not RFC 3339 with a 4-digit year", where), case_id, shown, response)
            return
        shown_now = self.spawn(["--vault", "vault.db", "clock", "show"], directory, None)
        later = fz.loads(shown_now.stdout).get("now") if shown_now.returncode == 0 and isinstance(fz.loads(shown_now.stdout), dict) else None
        if later != now:
            self.log.add(("clock show disagrees with what the command printed", where), case_id, shown, response,
                         f"then `credemu clock show`: exit {shown_now.returncode}, {fz.short(shown_now.stdout, 200)}")
        rest = argv[2:]
        if len(rest) != 3 or not isinstance(rest[2], str):
            return
        if rest[:2] == ["clock", "set"]:
            expected = fz.parse_time(rest[2])
        elif rest[:2] == ["clock", "advance"]:
            seconds = fz.parse_duration_seconds(rest[2])
            if seconds is None:
                return
            expected = BASE_MILLIS + seconds * 1000
            expected = None if expected > fz.MAX_MILLIS else expected
        else:
            return
        if expected is None:
            self.log.add((f"{case.name} accepted what is not an RFC 3339 UTC time in years 0000-9999 (should be a usage error)", where),
                         case_id, shown, response)
        elif abs(fz.parse_time(now) - expected) > 1:
            self.log.add((f"{case.name} does not round-trip", where), case_id, shown, response,
                         f"expected {fz.format_time(expected)} (the clock was at {BASE_TIME})")


def test_fuzz_cli_argument_vectors(tmp_path):
    fuzz = ArgvFuzz(tmp_path)
    cases = [(f"sweep-{n}", case) for n, case in enumerate(in_sweep_order(argv_sweep()))]
    cases += [(f"random-{n}", argv_random_case(n)) for n in range(fz.CASES)]

    def run(item):
        if not fuzz.log.over_budget():
            fuzz.run(*item)

    with ThreadPoolExecutor(2) as pool:  # each case has its own copy of the vault: order does not matter
        list(pool.map(run, cases))
    print(fuzz.log.summary())
    if fuzz.log.groups:
        pytest.fail(fuzz.log.report(), pytrace=False)


# ======================================================================================================
# Part 4: the probe's HTTP client against mutated answers
# ======================================================================================================

PROBE_ERROR_NAMES = {"Unreachable", "ExchangeTimedOut", "RunTimedOut", "MalformedResponse", "ResponseTooLarge", "CookieOverLimit"}
FAILED_BODY = b'{"status": "failed", "errorMessage": "fuzzed"}'
STATUS_LINES = [b"HTTP/1.1 200", b"HTTP/1.0 200 OK", b"HTTP/1.1 400 Bad Request", b"HTTP/1.1 999 X", b"HTTP/1.1 -20 X", b"HTTP/1.1 2000 OK",
                b"HTTP/2 200", b"http/1.1 200 OK", b"HTTP/1.1 200 OK\x00", b"HTTP/1.1 100 Continue", b"HTTP/1.1 101 Switching",
                b"HTTP/1.1 204 No Content", b"HTTP/1.1 200 " + b"O" * 10_000, b"", b" HTTP/1.1 200 OK", b"HTTP/1.1  200 OK", "HTTP/1.1 ２00 OK".encode()]
LENGTHS = [b"-1", b"+1", b"1e3", b"0x10", b"99999999999999999999", b"9223372036854775807", b"9223372036854775808", b"18446744073709551616",
           b"4294967297", b"8388608", b"8388609", b" 5", b"", b"\xef\xbc\x91", b"5, 5", b"0", b"1", b"1000"]
CHUNK_SIZES = [b"7fffffffffffffff", b"8000000000000000", b"ffffffffffffffff", b"10000000000000000", b"f" * 64, b"-1", b"+1", b"0x1", b"",
               b" 1", b"1 ", b"1;" + b"x" * 5000, b"fffffff", b"800001", b"0" * 1000 + b"1", b"A", b"g", b"1\x00"]
CODINGS = [b"chunked", b"chunked, gzip", b"gzip", b"CHUNKED", b"chunked, chunked", b"identity", b"", b"gzip, chunked"]


def probe_answer(status=b"HTTP/1.1 200 OK", headers=None, body=FAILED_BODY, chunked=None, eol=b"\r\n", cut=None):
    """An answer's bytes: `headers` after the status line (a Content-Length for `body` when None), the body as it
    is or `chunked` (a list of (size line, data)) with a last chunk, lines ended by `eol`, cut to `cut` bytes."""
    if headers is None:
        headers = [b"Content-Type: application/json", b"Content-Length: %d" % len(body)]
    out = status + eol + b"".join(h + eol for h in headers) + eol
    if chunked is not None:
        out += b"".join(size + eol + data + eol for size, data in chunked) + b"0" + eol + eol
    else:
        out += body
    return out[:cut] if cut is not None else out


@functools.lru_cache(maxsize=None)
def probe_sweep():
    """(label, answer bytes): each mutation alone on a failed conformance-API answer."""
    cases = [("as a correct server refuses", probe_answer())]
    cases += [(f"status line {fz.short(s, 40)}", probe_answer(status=s)) for s in STATUS_LINES]
    cases += [(f"Content-Length: {fz.short(v, 40)}", probe_answer(headers=[b"Content-Length: " + v])) for v in LENGTHS]
    cases += [("two Content-Lengths that differ", probe_answer(headers=[b"Content-Length: 2", b"Content-Length: %d" % len(FAILED_BODY)])),
              ("two Content-Lengths that agree", probe_answer(headers=[b"Content-Length: %d" % len(FAILED_BODY)] * 2))]
    cases += [(f"chunk size {fz.short(v, 40)}", probe_answer(headers=[b"Transfer-Encoding: chunked"], chunked=[(v, FAILED_BODY)])) for v in CHUNK_SIZES]
    cases += [(f"Transfer-Encoding: {c.decode()}", probe_answer(headers=[b"Transfer-Encoding: " + c, b"Content-Length: 3"],
                                                                 chunked=[(b"%x" % len(FAILED_BODY), FAILED_BODY)])) for c in CODINGS]
    cases += [("a chunk longer than its size", probe_answer(headers=[b"Transfer-Encoding: chunked"], chunked=[(b"2", FAILED_BODY)])),
              ("trailers after the last chunk", probe_answer(headers=[b"Transfer-Encoding: chunked"], chunked=[(b"%x" % len(FAILED_BODY), FAILED_BODY)])
               .replace(b"\r\n0\r\n\r\n", b"\r\n0\r\nX-T: 1\r\n\r\n"))]
    for count in (99, 100, 101, 1000, 100_000):
        cases.append((f"{count} header fields", probe_answer(headers=[b"X-%d: v" % n for n in range(count)] + [b"Content-Length: 2"], body=b"{}")))
    for size in (60_000, 70_000, 1 << 20):
        cases.append((f"a header line of {size} bytes", probe_answer(headers=[b"X: " + b"v" * size, b"Content-Length: 2"], body=b"{}")))
    for label, line in [("no colon", b"no colon"), ("a space before the colon", b"Bad : v"), ("a folded line", b" folded"), ("a NUL", b"X: a\x00b"),
                        ("an empty name", b": v"), ("a bare CR", b"X: a\rb")]:
        cases.append((f"a header line with {label}", probe_answer(headers=[line, b"Content-Length: 2"], body=b"{}")))
    cases.append(("lines ending in a bare LF", probe_answer(eol=b"\n")))
    cases.append(("lines ending in a bare CR", probe_answer(eol=b"\r")))
    for count, size in [(99, 10), (100, 10), (1, 4096), (1, 4097), (1, 60_000)]:
        cookies = [b"Set-Cookie: c%d=%s; Path=/" % (n, b"v" * size) for n in range(count)]
        cases.append((f"{count} cookie(s) of {size} bytes", probe_answer(headers=cookies + [b"Content-Length: 2"], body=b"{}")))
    for label, cookie in [("Max-Age of 10^30", b"a=1; Max-Age=1" + b"0" * 30), ("Max-Age of -10^30", b"a=1; Max-Age=-1" + b"0" * 30),
                          ("a foreign Domain", b"a=1; Domain=evil.example"), ("a NUL in its Path", b"a=1; Path=/\x00"),
                          ("no name", b"=1"), ("no value", b"a"), ("1000 attributes", b"a=1" + b"; x" * 1000)]:
        cases.append((f"a cookie with {label}", probe_answer(headers=[b"Set-Cookie: " + cookie, b"Content-Length: 2"], body=b"{}")))
    for label, body in [("a body that is not JSON", b"<html>"), ("JSON nested 100k deep", b"[" * 100_000),
                        ("an errorMessage of escape sequences", b'{"status": "failed", "errorMessage": "\\u001b[2J\\u001b]0;owned\\u0007"}'),
                        ("raw escape bytes", b"\x1b[2J\x1b]0;owned\x07\x9b31m"), ("invalid UTF-8", b'{"status": "failed", "errorMessage": "\xff\xfe"}'),
                        ("a body of 9 MiB", b" " * (9 << 20)), ("ok without options", b'{"status": "ok"}')]:
        cases.append((label, probe_answer(body=body)))
        cases.append((label + " to the close", probe_answer(headers=[], body=body)))
    whole = probe_answer()
    cases += [(f"cut at byte {n}", whole[:n]) for n in (1, 8, 12, 17, len(whole) - len(FAILED_BODY) - 2, len(whole) - 1)]
    return tuple(cases)


def probe_random_case(number):
    rng = fz.case_rng("probe", number)
    label, answer = rng.choice(probe_sweep())
    labels = [label]
    data = bytearray(answer)
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        position = rng.randrange(len(data) + 1)
        if roll < 0.35 and data:
            data[min(position, len(data) - 1)] = rng.choice([0, 9, 10, 13, 32, 48, 58, 59, 0x7f, 0x80, 0xff, rng.randrange(256)])
            labels.append(f"byte {position} changed")
        elif roll < 0.6:
            piece = rng.choice([b"\r\n", b"\n", b":", b";", b"0", b"f" * 17, b"\r\n\r\n", b"Transfer-Encoding: chunked\r\n", b"Content-Length: 9\r\n",
                                b"Set-Cookie: x=1\r\n", b"\x00", b"-"])
            data[position:position] = piece
            labels.append(f"{fz.short(piece, 20)} inserted at {position}")
        elif roll < 0.8:
            del data[position:position + rng.randint(1, 16)]
            labels.append(f"bytes deleted at {position}")
        else:
            data = data[:position]
            labels.append(f"cut at byte {position}")
    return "; ".join(labels), bytes(data)


class ProbeFuzz:
    def __init__(self, tmp):
        self.tmp = Path(tmp)
        self.log = fz.Log("probe", "part 4, the probe's HTTP client against mutated answers",
                          "CREDEMU_BIN=$PWD/.build/debug/credemu .venv/bin/python -m pytest Tests/interop/test_fuzz.py::test_fuzz_probe_against_mutated_answers")
        self.count_lock = fz.threading.Lock()

    def run(self, case_id, label, answer):
        from hostile_http import HostileHTTP
        with self.count_lock:
            self.log.cases += 1
        directory = self.tmp / case_id
        directory.mkdir()
        argv = [fz.BINARY, "probe", None, "--origin", "http://localhost", "--log", "probe.db", "--providers", "gpm", "--max-time", "10"]
        try:
            with HostileHTTP(answer) as server:
                argv[2] = server.url
                try:
                    proc = subprocess.run(argv, capture_output=True, timeout=40, cwd=directory, env=fz.clean_env(directory))
                except subprocess.TimeoutExpired:
                    proc = None
            self.check(case_id, label, answer, argv, proc)
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def check(self, case_id, label, answer, argv, proc):
        shown = f"{fz.show_argv(argv[1:])}\nagainst a server answering every request with {len(answer)} bytes: {fz.short(answer, 300)}\nmutation: {label}"
        if proc is None:
            self.log.add(("probe hangs (no exit in 40 s, with --max-time 10)",), case_id, shown, "killed after 40 s")
            return
        response = f"exit {proc.returncode}; stdout: {fz.short(proc.stdout, 300)}; stderr: {fz.short(proc.stderr, 300)}"
        fatal, frame = fz.fatal_line(proc.stderr)
        if proc.returncode < 0 or proc.returncode > 2 or fatal:
            self.log.add(("probe crashed" if proc.returncode < 0 or proc.returncode > 3 or fatal else f"probe exit {proc.returncode}",
                          frame or fatal or f"exit {proc.returncode}"), case_id, shown,
                         response + (f"\n{fatal}" if fatal else "") + (f"\n   at {frame}" if frame else ""))
            return
        name = re.match(rb"credemu: (\w+): ", proc.stderr)
        if proc.returncode == 2 and not (name and name.group(1).decode() in PROBE_ERROR_NAMES):
            self.log.add(("probe exit 2 without a ProbeError's name on stderr",), case_id, shown, response)
        if len(proc.stderr) > 4000:
            self.log.add(("probe's message is over 4000 bytes",), case_id, shown, response)
        terminal = proc.stdout + proc.stderr
        if re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", terminal):
            self.log.add(("probe prints a control character the server sent (a terminal escape)",), case_id, shown, response)


def test_fuzz_probe_against_mutated_answers(tmp_path):
    sweep = probe_sweep()
    fuzz = ProbeFuzz(tmp_path)
    cases = [(f"sweep-{n}", lambda case=case: case) for n, case in enumerate(sweep)]
    cases += [(f"random-{n}", lambda n=n: probe_random_case(n)) for n in range(fz.CASES)]

    def run(item):
        if not fuzz.log.over_budget():
            fuzz.run(item[0], *item[1]())

    with ThreadPoolExecutor(2) as pool:  # each case has its own server and log vault
        list(pool.map(run, cases))
    print(fuzz.log.summary())
    if fuzz.log.groups:
        pytest.fail(fuzz.log.report(), pytrace=False)
