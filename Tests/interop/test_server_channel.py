"""The shim's channel relayed inside credemu serve (POST /channels, docs/shim.md "Transport"): the client hands the
server the tab's DevTools websocket URL, the server's own DevTools connection adds the binding and the shim, and
answers each call through the front door as a page of the calling execution context's origin. A strict-CSP page
registers and signs in with its policy in force; a page that gets hold of the binding reaches only the shim's
routes for its own frame's origin; the channel ends with the tab, leaving no thread or socket behind."""
import contextlib
import json
import os
import time

import pytest

from conftest import STRICT_CSP, example_rp_serving, html_site
from test_shim_channel import CEREMONIES

from credemu import browsers, install_shim

# A test's own preload script, on its own DevTools connection and added before the shim's, that keeps the channel's
# binding before the shim takes it off window: the page that "had the name" the security model speaks of.
STEAL = """(() => { for (const k of Object.getOwnPropertyNames(window)) if (k.startsWith('__credemuChannel_'))
  Object.defineProperty(window, '__stolen', {value: window[k]}); })()"""


def _server_resources(pid, devtools_port=None):
    """The credemu process's channel threads (named credemu-channel) and its sockets connected to the browser's
    DevTools port (only those: a client's HTTP connection still closing must not count)."""
    threads = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/comm") as comm:
            threads += comm.read().strip() == "credemu-channel"
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    sockets = 0
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/net/{table}") as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                remote_port = int(fields[2].rsplit(":", 1)[1], 16)
                sockets += fields[9] in inodes and devtools_port is not None and remote_port == devtools_port
    return threads, sockets


def _eventually(check, seconds=5):
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture(scope="module")
def strict_rp():
    with example_rp_serving(STRICT_CSP) as origin:
        yield origin


@pytest.mark.credemu(pack="gpm")
def test_a_strict_csp_page_registers_and_signs_in_through_the_servers_own_relay_and_the_channel_ends_with_the_tab(
        strict_rp, credemu_server, credemu_profile):
    pid = credemu_server.process.pid
    # The server is the session's: an earlier test's channel may still be ending.
    assert _eventually(lambda: _server_resources(pid)[0] == 0), _server_resources(pid)
    with browsers.chromium() as browser:
        port = int(browser.devtools_url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        resources = lambda: _server_resources(pid, port)   # noqa: E731
        before = resources()
        assert before == (0, 0), before
        install_shim(browser, credemu_profile, origin=strict_rp, relay="server")
        # The reader thread names itself once it runs, a moment after the socket opened.
        assert _eventually(lambda: resources() == (1, 1), 20), ("one reader thread, one socket to the tab", resources())
        [channel] = credemu_profile.channels()
        assert channel["profile"] == credemu_profile.profile and channel["devtools"] == browser.devtools_url
        assert not getattr(browser, "_channels", None), "the client relays nothing"
        browser.navigate(strict_rp + "/login")
        result = browser.evaluate(CEREMONIES.replace("SERVER", json.dumps(credemu_profile.url)))
        assert "error" not in result, result
        assert result["created"] == result["got"]
        [passkey] = credemu_profile.passkeys()
        assert passkey["credentialId"] == result["created"]
        # No bypass: the page's own fetch to credemu is refused by its policy.
        assert result["foreignFetch"] == "TypeError" and result["violations"] == ["connect-src"], result
        assert channel["id"] in [c["id"] for c in credemu_profile.channels()]
    # The browser closed the page's socket: the channel, its reader thread and its socket are gone.
    assert _eventually(lambda: credemu_profile.channels() == []), credemu_profile.channels()
    assert _eventually(lambda: resources() == (0, 0)), resources()


def test_selenium_hands_its_tab_to_the_server_and_quitting_ends_the_channel(strict_rp, credemu_profile):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]:
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    try:
        install_shim(driver, credemu_profile, origin=strict_rp)   # the server is local: its relay by default
        assert len(credemu_profile.channels()) == 1
        driver.get(strict_rp + "/login")
        got = driver.execute_async_script("const done = arguments[0]; PublicKeyCredential.getClientCapabilities()"
                                          ".then((c) => done(typeof c.conditionalCreate), (e) => done(e.name));")
        assert got == "boolean"
    finally:
        driver.quit()
    assert _eventually(lambda: credemu_profile.channels() == [])


def test_a_page_that_calls_the_binding_gets_only_the_shims_routes_for_its_frames_origin(credemu_server, credemu_profile):
    frame_body = b"""<!doctype html><p>frame</p><script>
      const send = (m) => window.__stolen(JSON.stringify(m));
      send({id: 'f1', method: 'POST', path: '/passwords', body: {origin: TOP, username: 'as-top', password: 'p'}});
      send({id: 'f2', method: 'POST', path: '/passwords', body: {origin: location.origin, username: 'own', password: 'p'}});
    </script>"""
    with contextlib.ExitStack() as stack:
        frame_origin = stack.enter_context(html_site(frame_body.replace(b"TOP", b"location.ancestorOrigins[0]")))
        top_origin = stack.enter_context(html_site(f"<!doctype html><iframe src='{frame_origin}/frame'></iframe>".encode()))
        credemu_server.client().allow_origin(frame_origin)
        with browsers.chromium() as browser:
            browser.add_preload_script(STEAL)
            install_shim(browser, credemu_profile, origin=top_origin, relay="server")
            browser.navigate(top_origin + "/")
            # The top frame, holding the binding, forges operator and unrelayed routes.
            browser.evaluate("""(() => {
              const send = (m) => window.__stolen(JSON.stringify(m));
              send({id: 't1', method: 'POST', path: '/user', body: {decisions: ['accept']}});
              send({id: 't2', method: 'GET', path: '/passkeys', body: null});
              send({id: 't3', method: 'POST', path: '/../../profiles/default/passwords', body: {origin: location.origin, username: 'x', password: 'p'}});
              send({id: 't4', method: 'DELETE', path: '/channels/ch1', body: null});
              send('not even an object');
              return true;
            })()""")
            assert _eventually(lambda: len(credemu_profile.passwords()) >= 1)
            time.sleep(0.3)
            saved = credemu_profile.passwords()
            channels = credemu_profile.channels()
            # The shim itself still answers after all that.
            capabilities = browser.evaluate("PublicKeyCredential.getClientCapabilities().then((c) => typeof c.conditionalCreate)")
    # The frame's request was for its own origin (the execution context's, as Chromium reports it); the one naming
    # the top's origin was refused; nothing the top forged reached an operator route or another target.
    assert [(p["origin"], p["username"]) for p in saved] == [(frame_origin, "own")], saved
    assert credemu_profile.pending_decisions() == [] and len(channels) == 1
    assert credemu_server.client().passwords() == [], "the default profile is untouched"
    assert capabilities == "boolean"


def test_the_channel_routes_answer_as_documented_and_refuse_hostile_bodies_by_name(tmp_path):
    """Over the OpenAPI-checking client: open, list and end a channel; a URL off loopback, an unknown profile, an
    endpoint that does not answer, a page's request and an unknown channel are named 4xx/5xx, and no channel is
    left; a server stopped with a channel open stops cleanly."""
    from api_client import Server as APIServer

    from conftest import BINARY
    server = APIServer(BINARY, tmp_path)
    try:
        with browsers.chromium() as browser:
            status, opened = server.call("POST", "/channels", {"devtools": browser.devtools_url, "profile": "default", "autofill": False})
            assert status == 201 and opened["profile"] == "default", opened
            status, listed = server.call("GET", "/channels")
            assert status == 200 and [c["id"] for c in listed["channels"]] == [opened["id"]], listed
            refusals = [
                ({"devtools": "ws://192.168.1.1:9222/devtools/page/X"}, None, 400, "TypeError"),
                ({"devtools": browser.devtools_url, "profile": "ghost"}, None, 404, None),
                ({"devtools": "ws://127.0.0.1:1/devtools/page/X"}, None, 502, "DevToolsUnreachable"),
                ({"devtools": browser.devtools_url}, {"Origin": "http://localhost:8000"}, 403, "Forbidden"),
            ]
            for body, headers, status, name in refusals:
                got, answer = server.call("POST", "/channels", body, headers=headers)
                assert got == status, (body, answer)
                assert name is None or answer["error"]["name"] == name, answer
            assert server.call("DELETE", f"/channels/{opened['id']}") == (200, {"removed": opened["id"]})
            assert server.call("DELETE", f"/channels/{opened['id']}")[0] == 404
            assert server.call("GET", "/channels") == (200, {"channels": []})
            status, again = server.call("POST", "/channels", {"devtools": browser.devtools_url})
            assert status == 201
    finally:
        assert server.stop() == 0, "SIGTERM with a channel open still shuts the server down cleanly"
