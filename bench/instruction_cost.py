"""A served ceremony's cost in instructions: `credemu serve` under callgrind, the same on any machine and any load.

    bench/instruction_cost.py CREDEMU [CREDEMU_BEFORE] [--kind create|get|both] [--calls N]

Wall-clock figures of one HTTP client move with the machine (the kernel's share of a request, its wake-ups) by
more than a change to the front door does: the same build measured 9.0x and 9.8x the virtual authenticator on one
evening (docs/benchmarks.md, "One HTTP client, where the time goes"). Instructions do not. This runs the server
under valgrind's callgrind twice per build and kind, for N and for 2N ceremonies over one keep-alive connection,
and reports (I(2N) - I(N)) / N: the instructions of one ceremony, every thread of the server counted (the front
door, the engine, the event log's flush, libmicrohttpd), start-up and set-up subtracted out. Given two builds it
prints their ratio; the signature and key generation are a fixed share of both. The server's background work (the
event log's batches, the staging log's moves) runs by the clock, so a short run spreads more: a few hundred
ceremonies repeat within about 1%, 40 on the debug build gave 0.934x against itself once. The ES256 setups and keys
the server makes ahead on an idle core (SignAhead) are counted too, as the server's own work: N is rounded up to a
multiple of their top-up, and each run ends with an idle moment for the last top-up.

valgrind cannot read the DWARF our toolchain writes ("Possibly corrupted debuginfo file"), so it runs a copy
stripped of debug information (`strip --strip-debug`). Needs Debian's valgrind and binutils. Under valgrind a
ceremony takes a few milliseconds: N = 400 (the default) takes about a minute a build and kind.
"""
import argparse
import base64
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ORIGIN = "https://login.example.com"
# SignAhead's top-up (half its pool of 64): runs are rounded up to a multiple of it.
TOP_UP = 32
# Under callgrind a top-up of 32 setups and 32 keys is about 16M instructions, a few tenths of a second.
SETTLE_SECONDS = 2
HEADERS = {"Content-Type": "application/json"}


def creation_options(n):
    user_id = base64.urlsafe_b64encode(f"user-{n}".encode()).decode().rstrip("=")
    return {"rp": {"id": "example.com", "name": "Bench"}, "user": {"id": user_id, "name": f"user{n}@example.com",
            "displayName": f"User {n}"}, "challenge": "AAAAAAAAAAAAAAAAAAAAAA",
            "pubKeyCredParams": [{"type": "public-key", "alg": -7}], "attestation": "none"}


def post(connection, path, body):
    connection.request("POST", path, json.dumps(body), HEADERS)
    response = connection.getresponse()
    data = response.read()
    if response.status not in (200, 201):
        raise SystemExit(f"instruction_cost: POST {path} answered {response.status}: {data[:300]!r}")
    return json.loads(data)


def instructions(binary, kind, calls):
    """The server's instructions (callgrind's total, every thread) for `calls` ceremonies of `kind` after set-up."""
    with tempfile.TemporaryDirectory() as directory:
        out = os.path.join(directory, "callgrind.out")
        port_file = os.path.join(directory, "port")
        server = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary,
                                   "--vault", os.path.join(directory, "vault.db"), "serve", "--port", "0",
                                   "--port-file", port_file, "--threads", "2"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 120
            while not (os.path.exists(port_file) and open(port_file).read().strip()):
                if time.time() > deadline or server.poll() is not None:
                    raise SystemExit("instruction_cost: the server did not start under valgrind")
                time.sleep(0.2)
            connection = http.client.HTTPConnection("127.0.0.1", int(open(port_file).read()), timeout=120)
            post(connection, "/profiles", {"name": "bench", "pack": "webauthn-spec"})
            registered = post(connection, "/profiles/bench/credentials/create", {"origin": ORIGIN, "options": creation_options(0)})
            assertion = {"origin": ORIGIN, "options": {"challenge": "AAAAAAAAAAAAAAAAAAAAAA", "rpId": "example.com",
                                                       "allowCredentials": [{"type": "public-key", "id": registered["id"]}]}}
            for n in range(1, calls + 1):
                if kind == "create":
                    post(connection, "/profiles/bench/credentials/create", {"origin": ORIGIN, "options": creation_options(n)})
                else:
                    post(connection, "/profiles/bench/credentials/get", assertion)
            connection.close()
            # The server makes its ES256 setups and keys ahead on an idle core (SignAhead, 64 each, topped up when 32
            # are left): an idle moment lets the last top-up finish, so that a run of N ceremonies (N a multiple of
            # 32) has made exactly N of each beyond the first 64, and the difference of two runs counts them.
            time.sleep(SETTLE_SECONDS)
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=120)
        text = open(out).read()
    match = re.search(r"^totals: (\d+)", text, re.M) or re.search(r"^summary: (\d+)", text, re.M)
    if not match:
        raise SystemExit("instruction_cost: callgrind wrote no totals")
    return int(match.group(1))


def per_ceremony(binary, kind, calls):
    return (instructions(binary, kind, 2 * calls) - instructions(binary, kind, calls)) / calls


def stripped(binary, directory):
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"instruction_cost: {binary} is not an executable")
    copy = os.path.join(directory, f"credemu-{len(os.listdir(directory))}")
    subprocess.run(["strip", "--strip-debug", "-o", copy, binary], check=True)
    return copy


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("credemu")
    parser.add_argument("before", nargs="?")
    parser.add_argument("--kind", choices=["create", "get", "both"], default="both")
    parser.add_argument("--calls", type=int, default=400)
    args = parser.parse_args()
    for tool in ("valgrind", "strip"):
        if not shutil.which(tool):
            raise SystemExit(f"instruction_cost: needs {tool} (apt-get install valgrind binutils)")
    kinds = ["create", "get"] if args.kind == "both" else [args.kind]
    args.calls = -(-args.calls // TOP_UP) * TOP_UP
    with tempfile.TemporaryDirectory() as directory:
        builds = [(args.credemu, stripped(args.credemu, directory))]
        if args.before:
            builds.append((args.before, stripped(args.before, directory)))
        for kind in kinds:
            costs = [per_ceremony(copy, kind, args.calls) for _, copy in builds]
            line = f"{kind:6s} instructions a served ceremony: " + ", ".join(f"{name} {cost / 1000:.1f}k" for (name, _), cost in zip(builds, costs))
            if len(costs) == 2:
                line += f"; after/before {costs[0] / costs[1]:.3f}"
            print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
