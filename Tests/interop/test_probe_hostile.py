"""`credemu probe` against servers that attack its HTTP client (hostile_http.py): each run ends in exit 2 (the CLI
contract's status for a server failure) with the ProbeError's name on standard error, within a bounded time, and
nothing crashes. The exchange's own 30 s deadline costs one test 30 s."""
import subprocess
import time

import pytest

from conftest import BINARY
from hostile_http import HostileHTTP, trickle

OK = b"HTTP/1.1 200 OK\r\n"
HOSTILE = {
    "a chunk size of 7fffffffffffffff": (OK + b"Transfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\nabc\r\n0\r\n\r\n", "ResponseTooLarge"),
    "a chunk size past 64 bits": (OK + b"Transfer-Encoding: chunked\r\n\r\n" + b"f" * 40 + b"\r\nabc\r\n0\r\n\r\n", "ResponseTooLarge"),
    "a negative chunk size": (OK + b"Transfer-Encoding: chunked\r\n\r\n-1\r\nabc\r\n0\r\n\r\n", "MalformedResponse"),
    "100k headers": (OK + b"".join(b"X-%d: v\r\n" % n for n in range(100_000)) + b"\r\n{}", "ResponseTooLarge"),
    "a 1 MiB header": (OK + b"X: " + b"v" * (1 << 20) + b"\r\n\r\n{}", "ResponseTooLarge"),
    "a 1 MiB status line": (b"HTTP/1.1 200 " + b"O" * (1 << 20) + b"\r\n\r\n{}", "ResponseTooLarge"),
    "a Content-Length of 10^20": (OK + b"Content-Length: 99999999999999999999\r\n\r\n{}", "ResponseTooLarge"),
    "a Content-Length of 2^63-1": (OK + b"Content-Length: 9223372036854775807\r\n\r\n{}", "ResponseTooLarge"),
    "conflicting Content-Lengths": (OK + b"Content-Length: 2\r\nContent-Length: 20\r\n\r\n{}", "MalformedResponse"),
    "a body cut short": (OK + b"Content-Length: 200\r\n\r\n{}", "MalformedResponse"),
    "a 5000-byte cookie": (OK + b"Set-Cookie: s=" + b"v" * 5000 + b"\r\nContent-Length: 2\r\n\r\n{}", "CookieOverLimit"),
    "an answer that is not HTTP": (b"SSH-2.0-OpenSSH_9.6\r\n", "MalformedResponse"),
    "a connection closed at once": (b"", "MalformedResponse"),
}


def probe(url, tmp_path, *extra, timeout=120):
    """`credemu probe URL` for one pack, naming the origin a browser would give a page there (127.0.0.1 is not a
    secure context; localhost is)."""
    started = time.monotonic()
    proc = subprocess.run([BINARY, "probe", url, "--origin", "http://localhost", "--log", str(tmp_path / "probe.db"), "--providers", "gpm", *extra],
                          capture_output=True, text=True, timeout=timeout)
    return proc, time.monotonic() - started


def assert_named_failure(proc, name):
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert proc.stderr.startswith(f"credemu: {name}: "), proc.stderr[-2000:]
    assert "Fatal error" not in proc.stderr and len(proc.stderr) < 2000


@pytest.mark.parametrize("attack", sorted(HOSTILE))
def test_a_hostile_answer_ends_the_probe_in_a_named_error(attack, tmp_path):
    answer, name = HOSTILE[attack]
    with HostileHTTP(answer) as server:
        proc, took = probe(server.url, tmp_path)
    assert_named_failure(proc, name)
    assert took < 30


def test_a_byte_a_second_is_stopped_by_the_runs_max_time(tmp_path):
    with HostileHTTP(trickle(OK + b"Content-Length: 100000\r\n\r\n")) as server:
        proc, took = probe(server.url, tmp_path, "--max-time", "3")
    assert_named_failure(proc, "RunTimedOut")
    assert "--max-time" in proc.stderr
    assert 2.5 < took < 20


def test_a_byte_a_second_is_stopped_by_the_exchanges_deadline(tmp_path):
    # A second a byte never lets a receive time out; the exchange's 30 s cover connect, send, headers and body.
    with HostileHTTP(trickle(OK + b"Transfer-Encoding: chunked\r\n\r\nffff\r\n")) as server:
        proc, took = probe(server.url, tmp_path)
    assert_named_failure(proc, "ExchangeTimedOut")
    assert 29 < took < 60


def test_a_server_that_accepts_and_never_answers_is_bounded_by_max_time(tmp_path):
    with HostileHTTP(lambda connection: time.sleep(60)) as server:
        proc, took = probe(server.url, tmp_path, "--max-time", "2")
    assert_named_failure(proc, "RunTimedOut")
    assert took < 20


@pytest.mark.parametrize("value", ["0", "-1", "86401", "1.5", "1e3", "99999999999999999999", "９", "", "soon"])
def test_max_time_takes_whole_seconds_from_1_to_86400(value, tmp_path):
    proc, _ = probe("http://127.0.0.1:9/", tmp_path, "--max-time", value)
    assert proc.returncode == 2 and "--max-time" in proc.stderr, proc.stderr


@pytest.mark.parametrize("url", ["http://127.0.0.1:99999/", "http://127.0.0.1:+80/", "http://[::1]junk/", "http://::1/",
                                 "http://127.0.0.1/a\r\nX-Injected: 1", "http://exämple.com/", "http://" + "a" * 100_000 + "/"])
def test_a_hostile_url_is_a_named_usage_error(url, tmp_path):
    proc, _ = probe(url, tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith("credemu: BadURL: "), proc.stderr[:500]
    assert len(proc.stderr) < 2000


@pytest.mark.parametrize("origin", ["http://127.0.0.1:8000", "http://rp.example", "android:apk-key-hash:" + "A" * 43, "https://rp.example/path",
                                    "\u001b[2J"])
def test_an_origin_no_browser_runs_webauthn_in_is_named_before_any_request(origin, tmp_path):
    with HostileHTTP(OK + b"Content-Length: 2\r\n\r\n{}") as server:
        proc = subprocess.run([BINARY, "probe", server.url, "--origin", origin, "--log", str(tmp_path / "probe.db"), "--providers", "gpm"],
                              capture_output=True, text=True, timeout=60)
        assert server.requests == 0
    assert proc.returncode == 2 and proc.stderr.startswith("credemu: BadOrigin: "), proc.stderr
    assert "\x1b" not in proc.stderr


def test_without_origin_a_127_0_0_1_target_is_named_bad_origin(tmp_path):
    proc = subprocess.run([BINARY, "probe", "http://127.0.0.1:9/", "--log", str(tmp_path / "probe.db"), "--providers", "gpm"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.startswith("credemu: BadOrigin: ") and "--origin" in proc.stderr, proc.stderr
