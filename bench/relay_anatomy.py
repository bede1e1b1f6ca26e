"""Where a relayed ceremony's time goes in Chromium: the shim's own JavaScript, Chromium's threads and the server's.

One headless Chromium, the bench page's in-page loop (`side_by_side.LOOP`) in several tabs, in interleaved rounds:

- `virtual`: Chromium's virtual authenticator, the reference;
- `alone`: the shim with an in-page binding of this script's that answers every request from the first answer of its
  path, on the next microtask: the shim's and the page's JavaScript with no transport at all (the first call of each
  path goes to the server over the page's fetch, to have a real answer to replay);
- `replayed`: the shim over a real DevTools binding answered by `relay_floor.c` (compiled here with `cc`), a peer
  that replays one answer per path recorded from the first server and does no ceremony: Chromium's transport and
  the shim with a server that costs next to nothing, the ceiling the relayed figures below could reach;
- one tab per credemu binary given: the shim relayed by that binary's `credemu serve` (`POST /channels`, as
  `side_by_side.py`'s figure), each server with a vault of its own.

Per figure it prints the rate, the ratio to the virtual authenticator (median of the per-round ratios), the CPU a
ceremony costs each Chromium thread and the server (`/proc/PID/task/*/schedstat` over the round) and the server's
answer (`GET /channels`' `answeringMs`: the binding's event in to the reply out); for `replayed`, the server's
column is the peer's CPU. Two binaries compare a change where Chromium's share is the same for both
(docs/benchmarks.md, "A relayed ceremony in Chromium").

Usage: relay_anatomy.py CREDEMU [CREDEMU_OTHER] [--seconds S] [--rounds R] [--threads]
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import socketserver
import time
import urllib.request
from pathlib import Path

from side_by_side import CREATE, LOOP, DevTools, Page, chromium, post, replayed_tab

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "clients" / "python" / "src"))
from credemu import Client  # noqa: E402 - the repository's client

# The in-page binding of the `alone` figure: a one-way channel whose answers come from a cache, on a microtask.
ALONE = """(() => {
  const answers = new Map();
  window.__benchAlone = function (text) {
    const m = JSON.parse(text);
    const hit = answers.get(m.path);
    if (hit) { Promise.resolve().then(() => __benchReply({id: m.id, status: hit.status, body: hit.body})); return; }
    fetch(API + '/profiles/bench' + m.path, {method: m.method, headers: {'Content-Type': 'application/json'},
      body: m.body === null ? undefined : JSON.stringify(m.body)})
      .then(r => r.json().then(b => { if (r.status === 200) answers.set(m.path, {status: r.status, body: b}); __benchReply({id: m.id, status: r.status, body: b}); }));
  };
})();"""


def serve(binary, directory, index, origin):
    port_file = Path(directory) / f"port{index}"
    process = subprocess.Popen([binary, "--vault", f"{directory}/vault{index}.db", "serve", "--port", "0", "--port-file", str(port_file),
                                "--allow-origin", origin], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while not (port_file.exists() and port_file.read_text().strip()):
        if time.time() > deadline:
            raise SystemExit(f"{binary} did not start")
        time.sleep(0.02)
    api = f"http://127.0.0.1:{port_file.read_text().strip()}"
    post(api, "/profiles", {"name": "bench", "pack": "webauthn-spec"})
    return process, api


def threads_cpu(pids):
    """Nanoseconds of CPU per (process kind, thread name), summed over the processes' threads."""
    out = {}
    for pid in pids:
        try:
            command = open(f"/proc/{pid}/cmdline").read().replace("\0", " ")   # Chromium's children rewrite theirs
        except OSError:
            continue
        kind = re.search(r"--type=(\S+)", command)
        kind = kind.group(1) if kind else "browser" if "chromium" in command.split(" ")[0] else "credemu"
        for task in glob.glob(f"/proc/{pid}/task/*"):
            try:
                key = (kind, open(task + "/comm").read().strip())
                out[key] = out.get(key, 0) + int(open(task + "/schedstat").read().split()[0])
            except OSError:
                pass
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binaries", nargs="+")
    parser.add_argument("--seconds", type=float, default=0.4)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", action="store_true", help="print each thread's CPU a ceremony, not only the totals")
    arguments = parser.parse_args()
    page = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=page.serve_forever, daemon=True).start()
    page_url = f"http://localhost:{page.server_address[1]}/"
    servers, browser, floor = [], None, None
    with tempfile.TemporaryDirectory() as directory:
        try:
            apis = []
            for i, binary in enumerate(arguments.binaries):
                process, api = serve(binary, directory, i, page_url.rstrip("/"))
                servers.append(process)
                apis.append(api)
            browser, endpoint = chromium(directory)
            devtools = DevTools(endpoint)
            shim = urllib.request.urlopen(apis[0] + "/shim.js?profile=bench&autofill=0&channel=__benchAlone&channelReply=__benchReply").read().decode()
            tabs = {"virtual": devtools.tab(page_url, virtual_authenticator=True),
                    "alone": devtools.tab(page_url, init_script=f"const API = {json.dumps(apis[0])};\n{ALONE}\n{shim}")}
            tabs["replayed"], floor = replayed_tab(devtools, endpoint, page_url, apis[0], directory)
            peers = {"replayed": [floor.pid]}
            for i, api in enumerate(apis):
                tabs[f"relayed {i + 1}"] = devtools.server_channel_tab(endpoint, page_url, api, "bench")
                peers[f"relayed {i + 1}"] = [servers[i].pid]
            for session in tabs.values():
                devtools.focus(session)
                devtools.evaluate(session, CREATE)
                devtools.evaluate(session, f"({LOOP})('get', 0.2)")
            chromium_pids = [int(p) for p in subprocess.check_output(["pgrep", "-f", f"{directory}/chromium"]).split()]
            rates, cpu, answers = {}, {}, {}
            for r in range(arguments.rounds):
                devtools.empty(tabs["virtual"])  # the reference's store held at one round's credentials (DevTools.empty)
                names = list(tabs) if r % 2 == 0 else list(tabs)[:2] + list(tabs)[2:][::-1]   # the relayed tabs alternate
                for name in names:
                    devtools.focus(tabs[name])
                    api = apis[int(name.split()[1]) - 1] if name.startswith("relayed") else None
                    for kind in ("create", "get"):
                        key = (name, kind)
                        server_pids = peers.get(name, [])
                        before = threads_cpu(chromium_pids + server_pids)
                        channel = Client(api).channels()[0] if api else None
                        rate = devtools.evaluate(tabs[name], f"({LOOP})('{kind}', {arguments.seconds})")
                        after = threads_cpu(chromium_pids + server_pids)
                        count = rate * arguments.seconds
                        rates.setdefault(key, []).append(rate)
                        cpu.setdefault(key, []).append({t: (after[t] - before.get(t, 0)) / 1000 / count for t in after})
                        if api:
                            now = Client(api).channels()[0]
                            answered = now["answered"] - channel["answered"]
                            answers.setdefault(key, []).append((now["answeringMs"] - channel["answeringMs"]) * 1000 / max(answered, 1))
            report(arguments, tabs, rates, cpu, answers)
        finally:
            if browser:
                browser.kill()
                browser.wait()
            for process in servers + ([floor] if floor else []):
                process.terminate()
                process.wait(timeout=20)
            page.shutdown()


def report(arguments, tabs, rates, cpu, answers):
    print(f"{arguments.rounds} interleaved rounds of {arguments.seconds} s; relayed N is the shim relayed by "
          + ", ".join(f"{i + 1}: {b}" for i, b in enumerate(arguments.binaries)))
    for kind in ("create", "get"):
        print(f"\n{kind}: rate/s, / virtual (median of rounds), µs of CPU a ceremony: Chromium, the server; the server's answer")
        for name in tabs:
            key = (name, kind)
            ratios = [a / b for a, b in zip(rates[key], rates[("virtual", kind)])]
            def total(side):
                return statistics.median(sum(v for t, v in c.items() if (t[0] == "credemu") == side) for c in cpu[key])
            answer = f"{statistics.median(answers[key]):6.0f}" if key in answers else "     -"
            print(f"  {name:11} {statistics.median(rates[key]):7.0f}  {statistics.median(ratios):5.2f}x ({' '.join(f'{x:.2f}' for x in ratios)})"
                  f"  {total(False):5.0f} {total(True):5.0f} {answer}")
            if arguments.threads:
                threads = sorted(cpu[key][0], key=lambda t: -statistics.median(c.get(t, 0) for c in cpu[key]))
                for t in threads[:8]:
                    print(f"      {statistics.median(c.get(t, 0) for c in cpu[key]):6.1f} µs  {t[0]} {t[1]}")
        if len(arguments.binaries) == 2:
            pair = [a / b for a, b in zip(rates[("relayed 2", kind)], rates[("relayed 1", kind)])]
            print(f"  relayed 2 / relayed 1: {statistics.median(pair):.3f} ({' '.join(f'{x:.2f}' for x in pair)})")


if __name__ == "__main__":
    main()
