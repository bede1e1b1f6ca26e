"""In-page ceremonies/s in one headless Chromium: credemu's shim beside Chromium's own virtual authenticator.

`make bench` runs it after the in-process and HTTP figures. Each side runs the same loop inside a page on
http://localhost (registrations, then assertions with an allow list), in alternating rounds so the machine's
noise falls on both; the figures are medians. Usage: browser_ceremonies.py CREDEMU_BINARY [SECONDS_PER_ROUND]
"""
import http.server
import json
import os
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

LOOP = """
const [mode, seconds, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
(async () => {
  const rand = n => crypto.getRandomValues(new Uint8Array(n));
  const creation = () => ({ publicKey: { rp: { name: "Bench", id: "localhost" },
    user: { id: rand(16), name: "bench", displayName: "Bench" }, challenge: rand(32),
    pubKeyCredParams: [{ type: "public-key", alg: -7 }],
    authenticatorSelection: { residentKey: "discouraged", userVerification: "preferred" }, attestation: "none" } });
  const ids = [];
  let end = performance.now() + seconds * 500, registrations = 0;
  const t0 = performance.now();
  while (performance.now() < end) { const c = await navigator.credentials.create(creation()); ids.push(c.rawId); registrations++; }
  const regSeconds = (performance.now() - t0) / 1000;
  let assertions = 0;
  const t1 = performance.now();
  end = t1 + seconds * 500;
  while (performance.now() < end) {
    const id = ids[assertions % ids.length];
    await navigator.credentials.get({ publicKey: { challenge: rand(32), rpId: "localhost",
      allowCredentials: [{ type: "public-key", id: id }], userVerification: "preferred" } });
    assertions++;
  }
  done({ registrations: registrations / regSeconds, assertions: assertions / ((performance.now() - t1) / 1000) });
})().catch(e => done({ error: String(e) }));
"""


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<!doctype html><title>bench</title><p>bench</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def chromium():
    options = Options()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]:
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)


def main():
    binary, seconds = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
    page = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=page.serve_forever, daemon=True).start()
    page_url = f"http://localhost:{page.server_address[1]}/"
    with tempfile.TemporaryDirectory() as directory:
        port_file = Path(directory) / "port"
        server = subprocess.Popen([binary, "--vault", f"{directory}/vault.db", "serve", "--port", "0", "--port-file", str(port_file),
                                   "--allow-origin", page_url.rstrip("/")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 20
            while not port_file.exists() and time.time() < deadline:
                time.sleep(0.02)
            api = f"http://127.0.0.1:{port_file.read_text().strip()}"
            request = urllib.request.Request(api + "/profiles", data=json.dumps({"name": "bench", "pack": "webauthn-spec"}).encode(),
                                             headers={"Content-Type": "application/json"}, method="POST")
            urllib.request.urlopen(request).read()
            shim = urllib.request.urlopen(api + "/shim.js?profile=bench&autofill=0").read().decode()
            shim_driver, virtual_driver = chromium(), chromium()
            shim_driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": shim})
            virtual_driver.execute_cdp_cmd("WebAuthn.enable", {"enableUI": False})
            virtual_driver.execute_cdp_cmd("WebAuthn.addVirtualAuthenticator", {"options": {
                "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
                "isUserVerified": True, "automaticPresenceSimulation": True}})
            results = {"credemu shim": [], "Chromium virtual authenticator": []}
            for driver in (shim_driver, virtual_driver):
                driver.set_script_timeout(seconds * 4 + 30)
                driver.get(page_url)
                driver.execute_async_script(LOOP, "warm", 0.4)
            for _ in range(3):
                for name, driver in (("credemu shim", shim_driver), ("Chromium virtual authenticator", virtual_driver)):
                    out = driver.execute_async_script(LOOP, name, seconds)
                    if "error" in out:
                        raise SystemExit(f"{name}: {out['error']}")
                    results[name].append(out)
            for driver in (shim_driver, virtual_driver):
                driver.quit()
        finally:
            server.terminate()
            server.wait(timeout=20)
            page.shutdown()
    median = {name: {k: statistics.median(r[k] for r in rounds) for k in ("registrations", "assertions")} for name, rounds in results.items()}
    shim_figures, virtual = median["credemu shim"], median["Chromium virtual authenticator"]
    print(f"\nIn the page (headless Chromium, one page each, {seconds:g} s per round, 3 alternating rounds, medians):")
    print(f"  {'':32} registrations/s  assertions/s")
    for name, figures in median.items():
        print(f"  {name:32} {figures['registrations']:>15.0f}  {figures['assertions']:>12.0f}")
    print(f"  shim / virtual authenticator     {shim_figures['registrations'] / virtual['registrations']:>14.2f}x  "
          f"{shim_figures['assertions'] / virtual['assertions']:>11.2f}x")


if __name__ == "__main__":
    main()
