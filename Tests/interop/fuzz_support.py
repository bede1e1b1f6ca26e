"""The machinery of test_fuzz.py: seeded values and mutators (JSON values, request bodies, WebAuthn options, argument
vectors), a `credemu serve` that is restarted when it dies, a raw HTTP client, RFC 3339 arithmetic for the clock
oracles, and a log that groups violations into distinct failures, each with the smallest reproduction seen.

Everything is deterministic: a case's input depends only on (CREDEMU_FUZZ_SEED, part, case number), never on what
the server answered before, so a reported case can be rebuilt from its seed and number."""
import http.client
import json
import os
import random
import re
import shlex
import signal
import subprocess
import threading
import time
import urllib.parse
from pathlib import Path

import jsonschema

ROOT = Path(__file__).resolve().parents[2]
OPENAPI = json.loads((ROOT / "Sources" / "CredemuServer" / "Resources" / "openapi.json").read_text())
BINARY = os.environ.get("CREDEMU_BIN", str(ROOT / ".build" / "debug" / "credemu"))

SEED = int(os.environ.get("CREDEMU_FUZZ_SEED", "20240909"))
CASES = int(os.environ.get("CREDEMU_FUZZ_CASES", "300"))          # random cases per part, after the fixed sweep
BUDGET = float(os.environ.get("CREDEMU_FUZZ_BUDGET", "30"))       # wall-clock seconds per part, hard stop

# RangeError: the DOMException Blink names for an excludeCredentials or allowCredentials list over 64 entries.
WEBAUTHN_NAMES = {"TypeError", "SecurityError", "NotAllowedError", "InvalidStateError", "NotSupportedError",
                  "ConstraintError", "AbortError", "UnknownError", "EncodingError", "RangeError"}
RFC3339_4 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$")


def case_rng(part, number):
    return random.Random(f"{SEED}:{part}:{number}")


# MARK: JSON values

class Raw:
    """JSON text put into a body verbatim: what json.dumps cannot write (1e999, NaN, -0, deep nesting, duplicates)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return f"Raw({short(self.text, 60)})"


def dumps(value, ascii=True):
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=ascii)}:{dumps(v, ascii)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dumps(v, ascii) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii)  # ASCII: a lone surrogate is written as its \\ud800 escape


def loads(data):
    """Parsed JSON, or the NOT_JSON marker (bad JSON, or nested past Python's recursion limit)."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError, TypeError):
        return NOT_JSON


NOT_JSON = object()


def encode(value):
    return dumps(value).encode("ascii")


def encode_wide(value):
    """Non-ASCII written raw; a lone surrogate becomes its 3 CESU bytes, which are not UTF-8."""
    return dumps(value, ascii=False).encode("utf-8", "surrogatepass")


def short(text, limit=300):
    """A printable, bounded rendering of str/bytes: long runs are written as 'x'*N."""
    if isinstance(text, (bytes, bytearray)):
        body = repr(bytes(text))
    else:
        body = repr(text)
    body = re.sub(r"(.)\1{40,}", lambda m: f"…[{m.group(1)!r}×{len(m.group(0))}]…", body)
    return body if len(body) <= limit else body[:limit] + f"…[{len(body)} chars]"


DEEP_ARRAY_65 = Raw("[" * 65 + "]" * 65)
DEEP_ARRAY_50K = Raw("[" * 50_000 + "]" * 50_000)
DEEP_OBJECT_2K = Raw('{"a":' * 2000 + "null" + "}" * 2000)

NUMBERS = [
    ("1e300", Raw("1e300")), ("-1e300", Raw("-1e300")), ("1e20", Raw("1e20")), ("-1e20", Raw("-1e20")),
    ("1e999", Raw("1e999")), ("-1e999", Raw("-1e999")), ("1e-300", Raw("1e-300")), ("-0", Raw("-0")),
    ("0", 0), ("-1", -1), ("1", 1), ("0.5", 0.5), ("-0.5", -0.5), ("2^31", 2 ** 31), ("2^53+1", 2 ** 53 + 1),
    ("2^63", 2 ** 63), ("-2^63-1", -(2 ** 63) - 1), ("2^64", 2 ** 64), ("10^30", 10 ** 30), ("120001", 120001),
    ("9.223372036854776e18", Raw("9.223372036854776e18")), ("1.7976931348623157e308", Raw("1.7976931348623157e308")),
]
NOT_JSON_NUMBERS = [("NaN", Raw("NaN")), ("Infinity", Raw("Infinity")), ("-Infinity", Raw("-Infinity")),
                    ("0x10", Raw("0x10")), ("01", Raw("01")), ("+1", Raw("+1")), (".5", Raw(".5")), ("1.", Raw("1."))]
STRINGS = [
    ("''", ""), ("' '", " "), ("'a'*100000", "a" * 100_000), ("'é'*20000", "é" * 20_000), ("'1e300'", "1e300"),
    ("'-1'", "-1"), ("'NaN'", "NaN"), ("'Infinity'", "Infinity"), ("fullwidth '１２３'", "１２３"),
    ("arabic-indic '٣'", "٣"), ("'\\u0000'", "\u0000"), ("'a\\u0000b'", "a\u0000b"), ("lone surrogate '\\ud800'", "\ud800"),
    ("lone surrogate '\\udc00x'", "\udc00x"), ("emoji", "\U0001F600"), ("combining 'e\\u0301'", "e\u0301"),
    ("RTL override", "\u202eabc"), ("BOM", "\ufeff"), ("'null'", "null"), ("'true'", "true"), ("'{}'", "{}"),
    ("'%00'", "%00"), ("'\\n'", "\n"), ("'99999999999999999999'", "99999999999999999999"),
]
SHAPES = [("null", None), ("true", True), ("false", False), ("[]", []), ("[null]", [None]), ("{}", {}),
          ("{'a':{}}", {"a": {}}), ("depth 65", DEEP_ARRAY_65), ("depth 50000", DEEP_ARRAY_50K),
          ("object depth 2000", DEEP_OBJECT_2K), ("1000 items", list(range(1000)))]
VALUES = NUMBERS + NOT_JSON_NUMBERS + STRINGS + SHAPES

TIMES = ["0000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "9999-12-31T23:59:59.999Z",
         "10000-01-01T00:00:00Z", "-0001-01-01T00:00:00Z", "1969-12-31T23:59:59.999Z", "1970-01-01T00:00:00Z",
         "2024-02-29T12:00:00Z", "2026-02-29T00:00:00Z", "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z",
         "2026-11-29T10:00:00.5Z", "2026-11-29T10:00:00.123456789Z", "2026-11-29T24:00:00Z",
         "2026-11-29T10:60:00Z", "2026-11-29T10:00:00+01:00", "2026-11-29 10:00:00Z", "２０２６-11-29T10:00:00Z",
         "2026-11-29T10:00:00", "1582-10-10T00:00:00Z", "2262-04-12T00:00:00Z", "292278994-08-17T07:12:55Z", ""]
DURATIONS = ["1e300", "-1e300", "1e20", "1e12", "3e11", "1e300s", "99999999999999999999s", "300000000000000d", "106751991167301d",
             "9223372036854775807", "9223372036854776s", "1e308d", "infs", "inf", "nan", "nans", "-5m", "-0",
             "0", "90s", "6m", "2h", "1d", "1.5h", "２s", "1e-9s", "0x10", "", "s", "1w"]


# MARK: RFC 3339 arithmetic (years 0000-9999, the proleptic Gregorian calendar, year 0 a leap year)

def days_from_civil(y, m, d):
    y -= m <= 2
    era = y // 400  # Python floors: no correction for negative years
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def days_in_month(y, m):
    if m == 2:
        return 29 if (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)) else 28
    return 30 if m in (4, 6, 9, 11) else 31


def parse_time(text):
    """Milliseconds since 1970 of an RFC 3339 UTC time with a 4-digit year, or None if it is not one."""
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?[Zz]", text or "")
    if not m:
        return None
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    if not (1 <= mo <= 12 and 1 <= d <= days_in_month(y, mo) and h <= 23 and mi <= 59 and s <= 59):
        return None
    millis = int((m.group(7) or ".0")[1:4].ljust(3, "0"))
    return ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60_000 + s * 1000 + millis


def format_time(millis):
    """The RFC 3339 form of milliseconds since 1970 (proleptic Gregorian)."""
    millis = int(millis)
    days, rest = divmod(millis, 86_400_000)
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    y = yoe + era * 400 + (m <= 2)
    h, rest = divmod(rest, 3_600_000)
    mi, rest = divmod(rest, 60_000)
    sec, ms = divmod(rest, 1000)
    return f"{y:04d}-{m:02d}-{d:02d}T{h:02d}:{mi:02d}:{sec:02d}" + (f".{ms:03d}" if ms else "") + "Z"


MIN_MILLIS = parse_time("0000-01-01T00:00:00Z")
MAX_MILLIS = parse_time("9999-12-31T23:59:59.999Z")


def parse_duration_seconds(text):
    """What `clock advance` should add for the durations Python can read the same way; None for the rest."""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)([smhd]?)", text or "")
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def first_difference(a, b, path="$"):
    """Where two JSON values first differ, as 'path: a != b'; None when equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return f"{path}.{key}: {'missing' if key not in a else short(a[key], 80)} != {'missing' if key not in b else short(b[key], 80)}"
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for n, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{n}]")
            if found:
                return found
        return None if len(a) == len(b) else f"{path}: {len(a)} items != {len(b)} items"
    return None if a == b and type(a) is type(b) else f"{path}: {short(a, 80)} != {short(b, 80)}"


# MARK: the violation log

class Log:
    """Violations of one part, grouped by signature (one signature: one distinct failure). Keeps every case's
    number, and for each group the smallest reproduction."""

    def __init__(self, part, title, rerun):
        self.part, self.title, self.rerun = part, title, rerun
        self.groups = {}
        self.cases = 0
        self.started = time.time()
        self.stopped_early = None
        self.counts = ""  # more counts for the summary line
        self.lock = threading.Lock()

    def add(self, signature, case_id, request, response, note="", replay=None):
        """One violation. `replay` (anything) is kept with the entry: `replay_best` hands the smallest one back."""
        with self.lock:
            group = self.groups.setdefault(signature, {"cases": [], "best": None, "notes": []})
            group["cases"].append(case_id)
            entry = (len(request), case_id, request, response, note, replay)
            if group["best"] is None or entry[:2] < group["best"][:2]:
                group["best"] = entry

    def replay_best(self, replay):
        """Calls replay(what) for each group's smallest case that has something to replay; keeps what it says."""
        for group in self.groups.values():
            what = group["best"][5]
            if what is not None:
                group["notes"].append(replay(what))

    def over_budget(self):
        if time.time() - self.started > BUDGET:
            self.stopped_early = self.stopped_early or f"stopped at the {BUDGET:.0f} s budget after {self.cases} cases"
            return True
        return False

    def summary(self):
        took = time.time() - self.started
        return (f"{self.title}: {self.cases} cases{self.counts} in {took:.1f} s, {len(self.groups)} distinct failures "
                f"(seed {SEED}{'; ' + self.stopped_early if self.stopped_early else ''})")

    def report(self):
        lines = [self.summary(), f"rerun: CREDEMU_FUZZ_SEED={SEED} CREDEMU_FUZZ_CASES={CASES} {self.rerun}", ""]
        def severity(signature):  # crashes first, then 5xx, then the rest; the same order every run
            word = str(signature[0])
            return (0 if "died" in word or "crashed" in word else 1 if "5xx" in word else 2, str(signature))

        for n, (signature, group) in enumerate(sorted(self.groups.items(), key=lambda item: severity(item[0])), 1):
            _, case_id, request, response, note, _ = group["best"]
            cases = group["cases"]
            others = list(dict.fromkeys(c for c in cases if c != case_id))
            more = f" (also {', '.join(others[:5])}{', …' if len(others) > 5 else ''})" if others else ""
            lines.append(f"[{n}] {' | '.join(str(s) for s in signature)}")
            lines.append(f"    {len(cases)} case(s); smallest: {case_id}{more}")
            lines += ["    " + line for line in request.splitlines()]
            lines += ["    => " + line for line in response.splitlines()]
            lines += ["    " + line for line in note.splitlines() + group["notes"] if line]
            lines.append("")
        return "\n".join(lines)


def fatal_line(stderr):
    """The Swift runtime's 'Fatal error' line (minus its source line number) and the first credemu frame."""
    text = stderr if isinstance(stderr, str) else stderr.decode("utf-8", "replace")
    fatal = next((line.strip() for line in text.splitlines() if "Fatal error" in line), None)
    frame = next((re.sub(r"^\s*\d+\s+(\[ra\]\s*)?(\[system\]\s*)?0x[0-9a-f]+\s+", "", line).strip()
                  for line in text.splitlines() if re.search(r" in credemu at ", line)
                  and "_assertionFailure" not in line and "<compiler-generated>" not in line), None)
    if fatal:
        fatal = re.sub(r"^.*?(Fatal error)", r"\1", fatal)
    if frame:
        frame = re.sub(r" \+ \d+ in credemu at (.*?):(\d+):\d+", r" (\1:\2)", frame).replace(str(ROOT) + "/", "")
    return fatal, frame


# MARK: the server

class FuzzServer:
    """`credemu serve --port 0` on a vault in `directory`, with stdout and stderr in files (a pipe nobody reads
    would fill and stall the server). `restart` brings up a fresh one after a death."""

    def __init__(self, directory):
        self.directory = Path(directory)
        self.generation = 0
        self.start()

    def start(self):
        self.generation += 1
        self.health_connection = None
        port_file = self.directory / "port"
        port_file.unlink(missing_ok=True)
        self.stderr_path = self.directory / f"stderr.{self.generation}"
        self.process = subprocess.Popen(
            [BINARY, "--vault", str(self.directory / "vault.db"), "serve", "--port", "0", "--port-file", str(port_file)],
            stdout=open(self.directory / f"stdout.{self.generation}", "wb"), stderr=open(self.stderr_path, "wb"),
            env=clean_env(self.directory))
        deadline = time.time() + 20
        while time.time() < deadline and self.process.poll() is None:
            if port_file.exists() and port_file.read_text().strip():
                self.port = int(port_file.read_text().strip())
                return
            time.sleep(0.01)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=20)
        raise RuntimeError(f"credemu serve did not start (exit {self.process.returncode}): {self.stderr()[-2000:]}")

    def stderr(self):
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""

    def call(self, method, path, body=None, timeout=15):
        """(status, content type, raw body), or an exception's description as status None."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", f"127.0.0.1:{self.port}")
            if body is not None or method != "GET":
                conn.putheader("Content-Type", "application/json")
                conn.putheader("Content-Length", str(len(body or b"")))
            conn.endheaders(body or None)
            response = conn.getresponse()
            return response.status, response.getheader("Content-Type", ""), response.read()
        except (OSError, http.client.HTTPException) as error:
            return None, "", f"{type(error).__name__}: {error}".encode()
        finally:
            conn.close()

    def json(self, method, path, body=None):
        status, _, payload = self.call(method, path, None if body is None else encode(body))
        parsed = loads(payload)
        return status, payload if parsed is NOT_JSON else parsed

    def health(self):
        """GET /health on a kept-alive connection (a new one per check would double the cost of a case)."""
        for attempt in range(2):
            try:
                if self.health_connection is None:
                    self.health_connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                self.health_connection.request("GET", "/health", headers={"Host": f"127.0.0.1:{self.port}"})
                response = self.health_connection.getresponse()
                return response.status, response.read()
            except (OSError, http.client.HTTPException) as error:
                self.health_connection.close()
                self.health_connection = None
                failure = f"{type(error).__name__}: {error}".encode()
        return None, failure

    def alive(self):
        """None when the server is up and healthy, else what is wrong with it."""
        if self.process.poll() is not None:
            return f"the server exited with {self.process.returncode}"
        status, payload = self.health()
        if status != 200:
            try:  # a dying server may still be writing its backtrace
                self.process.wait(timeout=3 if status is None else 0.2)
                return f"the server exited with {self.process.returncode}"
            except subprocess.TimeoutExpired:
                return f"GET /health answered {status}: {short(payload, 200)}"
        return None

    def death(self):
        """(signature words, description) of a dead or sick server; kills it if it is alive but sick."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=20)
            code = "alive but not answering GET /health (killed)"
        else:
            code = f"exit status {self.process.returncode}"
        fatal, frame = fatal_line(self.stderr())
        words = (frame,) if frame else (fatal or code,)
        return words, f"server {code}; stderr: {fatal or short(self.stderr()[-400:], 400)}" + (f"\n   at {frame}" if frame else "")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)
        return self.process.returncode


def clean_env(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CREDEMU_")}
    env["HOME"] = str(home)
    return env


# MARK: the OpenAPI oracle (not api_client.check_against_openapi: the fuzz cases must not count as coverage)

def template_for(path):
    """The documented path a request path is, read as the server reads it: percent-decoded, empty segments
    dropped (so "/health/" is "/health")."""
    path = "/" + "/".join(part for part in urllib.parse.unquote(path.split("?")[0]).split("/") if part)
    for template in OPENAPI["paths"]:
        if re.match("^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$", path):
            return template
    return None


def openapi_violations(method, path, status, ctype, payload):
    """What is wrong with one response by the document: a list of (signature words, detail)."""
    out = []
    template = template_for(path)
    operation = OPENAPI["paths"].get(template, {}).get(method.lower()) if template else None
    where = f"{method} {template or path.split('?')[0]}"
    if status is None:
        return [(("no response", where), payload.decode(errors="replace"))]
    if status >= 500:
        documented = operation is not None and str(status) in operation["responses"]
        out.append((("5xx", where, status), "" if documented else f"(and {status} is not documented for it)"))
    elif template is None:
        if status not in (404, 405):
            out.append((("undocumented route answered", where, status), ""))
    elif operation is None:
        if status not in (404, 405):
            out.append((("undocumented method answered", where, status), ""))
    elif str(status) not in operation["responses"]:
        out.append((("status not documented for the operation", where, status),
                    f"documented: {sorted(operation['responses'])}"))
    body = None
    if status >= 400 or (operation and "application/json" in operation["responses"].get(str(status), {}).get("content", {})):
        if not ctype.startswith("application/json"):
            out.append((("not application/json", where, status), f"Content-Type: {ctype!r}"))
        body = loads(payload)
        if body is NOT_JSON:
            body = None
            out.append((("body is not JSON", where, status), ""))
    if status >= 400 and body is not None:
        error = body.get("error") if isinstance(body, dict) else None
        if not (isinstance(error, dict) and isinstance(error.get("name"), str) and isinstance(error.get("message"), str)):
            out.append((("error body is not {error: {name, message}}", where, status), ""))
    content = operation["responses"].get(str(status), {}).get("content", {}) if operation and str(status) in operation["responses"] else {}
    if body is not None and "application/json" in content:
        error = jsonschema.exceptions.best_match(validator(template, method, status).iter_errors(body))
        if error is not None:
            pointer = "/".join(str(p) for p in error.absolute_path)
            out.append((("response does not match its schema", where, status, f"{pointer}: {error.validator}"),
                        error.message[:200]))
    for key in ("now", "clock"):
        if isinstance(body, dict) and template in ("/clock", "/health") and isinstance(body.get(key), str) \
                and not RFC3339_4.match(body[key]):
            out.append((("clock time is not RFC 3339 with a 4-digit year", where), f"{key}: {body[key]!r}"))
    return out


VALIDATORS = {}


def validator(template, method, status):
    key = (template, method, status)
    if key not in VALIDATORS:
        schema = OPENAPI["paths"][template][method.lower()]["responses"][str(status)]["content"]["application/json"]["schema"]
        VALIDATORS[key] = jsonschema.Draft202012Validator({"components": OPENAPI["components"], "allOf": [schema]})
    return VALIDATORS[key]


def describe_http(method, path, body, label=""):
    lines = [f"{method} {path}  (Host: 127.0.0.1:PORT; Content-Type: application/json)" if method != "GET" or body
             else f"{method} {path}  (Host: 127.0.0.1:PORT)"]
    if label:
        lines.append(f"mutation: {label}")
    if body is not None:
        lines.append(f"body: {short(body, 400)}")
    return "\n".join(lines)


def describe_response(status, ctype, payload):
    if status is None:
        return payload.decode(errors="replace")
    return f"{status} {short(payload, 500)}"


# MARK: argument vectors

def show_argv(argv):
    def quote(word):
        if isinstance(word, bytes):
            try:
                word = word.decode("utf-8")
            except UnicodeDecodeError:
                return "$'" + "".join(chr(b) if 32 <= b < 127 and b not in (39, 92) else f"\\x{b:02x}" for b in word) + "'"
        if len(word) > 60 and len(set(word)) == 1 and word[0].isalnum() and word[0].isascii():
            return f"\"$(head -c {len(word)} /dev/zero | tr '\\0' {word[0]})\""
        return shlex.quote(word)
    return "credemu " + " ".join(quote(w) for w in argv)
