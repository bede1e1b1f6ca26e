"""A suite written against Playwright's `context.credentials`, run twice: once on Playwright's own virtual
authenticator, once on credemu by changing the one line that installs it (`install` below). It seeds a credential,
signs in with it in a page, registers one in the page, reads them back, deletes one, saves the storage state with
the credentials and signs in from a new context made with it. Both runs assert what Playwright documents; where
the pack says the provider behaves otherwise (GPM: BE and BS set, the counter stays 0), the difference is asserted
per authenticator (docs/playwright.md)."""
import base64
import concurrent.futures
import hashlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import page_site
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

import credemu

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
PAGE = b"<!doctype html><html><head><meta charset='utf-8'><title>rp</title></head><body>rp</body></html>"

# The one line a suite changes: Playwright's authenticator, or credemu's GPM behind the same `context.credentials`.
INSTALLS = {
    "playwright": lambda context: context.credentials.install(),
    "credemu-gpm": lambda context: credemu.credentials(context, pack="gpm").install(),
}

# What the page's own navigator.credentials answered, as base64url fields (no toJSON(): Playwright's answers are
# not PublicKeyCredentials).
HELPERS = """
const b64 = (buffer) => buffer ? btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\\+/g, '-')
  .replace(/\\//g, '_').replace(/=+$/, '') : null;
const bytes = (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), c => c.charCodeAt(0));
"""
SIGN_IN = "async ([allow]) => {" + HELPERS + """
  try {
    const credential = await navigator.credentials.get({publicKey: {challenge: bytes('AAECAwQFBgcICQoLDA0ODw'),
      rpId: 'localhost', userVerification: 'preferred',
      allowCredentials: allow.map(id => ({type: 'public-key', id: bytes(id)}))}});
    return {id: credential.id, authenticatorData: b64(credential.response.authenticatorData),
            clientDataJSON: b64(credential.response.clientDataJSON), signature: b64(credential.response.signature),
            userHandle: b64(credential.response.userHandle)};
  } catch (e) { return {error: e.name, message: e.message}; }
}"""
REGISTER = "async () => {" + HELPERS + """
  try {
    const credential = await navigator.credentials.create({publicKey: {challenge: bytes('AAECAwQFBgcICQoLDA0ODw'),
      rp: {id: 'localhost', name: 'RP'}, user: {id: bytes('dXNlci0x'), name: 'alice', displayName: 'Alice'},
      pubKeyCredParams: [{type: 'public-key', alg: -7}],
      authenticatorSelection: {residentKey: 'required', userVerification: 'preferred'}}});
    return {id: credential.id, clientDataJSON: b64(credential.response.clientDataJSON)};
  } catch (e) { return {error: e.name, message: e.message}; }
}"""


@pytest.fixture(scope="module")
def site():
    with page_site(PAGE) as origin:
        yield origin


@pytest.fixture(scope="module")
def playwright_manager():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as manager:
        yield manager


@pytest.fixture(scope="module")
def chromium_browser(playwright_manager):
    browser = playwright_manager.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"])
    yield browser
    browser.close()


@pytest.fixture(scope="module")
def chromium_with_devtools_port(playwright_manager):
    """Playwright's Chromium with a DevTools port (port 0: Chromium picks one): credemu serve relays the pages itself."""
    browser = playwright_manager.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage",
                                                                                 "--remote-debugging-port=0"])
    yield browser
    browser.close()


@pytest.fixture(autouse=True)
def _credemu_on_the_session_server(credemu_server):
    """credemu.credentials() without a client uses the plugin's session server (as in a suite with the plugin)."""


def unpadded(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def flags_and_counter(assertion):
    data = unpadded(assertion["authenticatorData"])
    return data[32], int.from_bytes(data[33:37], "big")


def verify(assertion, public_key_spki):
    """The assertion's signature under the credential's public key (base64url SPKI), over authData || SHA-256(clientData)."""
    key = serialization.load_der_public_key(unpadded(public_key_spki))
    signed = unpadded(assertion["authenticatorData"]) + hashlib.sha256(unpadded(assertion["clientDataJSON"])).digest()
    key.verify(unpadded(assertion["signature"]), signed, ec.ECDSA(hashes.SHA256()))


KEYS = {"id", "rpId", "userHandle", "privateKey", "publicKey", "signCount"}
UP, UV, BE, BS = 0x01, 0x04, 0x08, 0x10


@pytest.mark.parametrize("authenticator,devtools_port", [(name, False) for name in INSTALLS] + [("credemu-gpm", True)])
def test_a_playwright_credentials_suite_runs_on_credemu_after_one_line_changes(authenticator, devtools_port, request, site,
                                                                                tmp_path, credemu_server):
    install = INSTALLS[authenticator]
    on_credemu = authenticator != "playwright"
    chromium_browser = request.getfixturevalue("chromium_with_devtools_port" if devtools_port else "chromium_browser")
    answered = sum(c["answered"] for c in credemu_server.client().channels())
    context = chromium_browser.new_context()
    install(context)
    page = context.new_page()
    page.goto(site + "/login")

    # Seed a credential: Playwright's dict, a P-256 key pair as base64url PKCS#8 and SPKI.
    seeded = context.credentials.create("localhost")
    assert set(seeded) == KEYS and seeded["rpId"] == "localhost" and seeded["signCount"] == 0
    private = serialization.load_der_private_key(unpadded(seeded["privateKey"]), password=None)
    assert isinstance(private.curve, ec.SECP256R1)
    assert private.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo) \
        == unpadded(seeded["publicKey"])

    # Sign in with it (a discoverable get): the seeded credential answers, signed with its key.
    assertion = page.evaluate(SIGN_IN, [[]])
    assert "error" not in assertion, assertion
    assert assertion["id"] == seeded["id"] and assertion["userHandle"] == seeded["userHandle"]
    verify(assertion, seeded["publicKey"])
    flags, counter = flags_and_counter(assertion)
    assert flags & UP
    if on_credemu:   # GPM: a synced passkey (BE and BS), a counter that stays 0
        assert flags & BE and flags & BS and counter == 0
        assert context.credentials.get(id=seeded["id"])[0]["signCount"] == 0
    else:            # Playwright: no BE/BS, the counter grows by one per get
        assert not flags & (BE | BS) and counter == 1
        assert context.credentials.get(id=seeded["id"])[0]["signCount"] == 1

    # Register in the page; read it back, with the user handle the page gave.
    registered = page.evaluate(REGISTER)
    assert "error" not in registered, registered
    [held] = context.credentials.get(id=registered["id"])
    assert set(held) == KEYS and held["rpId"] == "localhost" and held["userHandle"] == "dXNlci0x"
    assert {c["id"] for c in context.credentials.get(rp_id="localhost")} == {seeded["id"], registered["id"]}
    assert context.credentials.get(rp_id="elsewhere.example") == []

    # Delete the seeded one: gone from the authenticator and from the page's sign-in.
    context.credentials.delete(seeded["id"])
    assert context.credentials.get(id=seeded["id"]) == []
    if on_credemu:
        # GPM's Chrome keeps its sheet open for a get with nothing to offer (modalGet.noCredential; Playwright's
        # authenticator is the testing API's, which shows none): the user closes it, a decision queued first.
        context.credentials.profile.queue_decisions("cancel")
    refused = page.evaluate(SIGN_IN, [[seeded["id"]]])
    assert refused.get("error") == "NotAllowedError", refused

    # Save the storage state with the credentials, and sign in from a new context made with it.
    state_path = tmp_path / "state.json"
    state = context.storage_state(path=state_path, credentials=True)
    assert [c["id"] for c in state["credentials"]] == [registered["id"]]
    assert json.loads(state_path.read_text())["credentials"] == state["credentials"]
    # With a DevTools port, credemu serve answered the page itself (its paired channel): the two sign-ins and the
    # registration; without one, the client relayed them.
    relayed = sum(c["answered"] for c in credemu_server.client().channels()) - answered
    assert relayed == (3 if devtools_port else 0), relayed
    context.close()

    reused = chromium_browser.new_context(storage_state=state_path)
    install(reused)
    assert [c["id"] for c in reused.credentials.get()] == [registered["id"]]
    page = reused.new_page()
    page.goto(site + "/login")
    again = page.evaluate(SIGN_IN, [[registered["id"]]])
    assert "error" not in again, again
    assert again["id"] == registered["id"]
    verify(again, held["publicKey"])
    reused.close()


def test_with_a_devtools_port_the_page_finds_nothing_of_credemu_but_its_mark_and_popups_still_answer(
        chromium_with_devtools_port, chromium_browser, site, credemu_server):
    """The server's binding and the handoff slot are gone before the page's scripts run, in the first document and
    the next; a popup the page opens (which the server may reach late) answers through one channel or the other."""
    from credemu.shim import chromium_devtools_port
    assert chromium_devtools_port(chromium_with_devtools_port) > 0
    assert chromium_devtools_port(chromium_browser) is None, "no port, no pairing: the client relays"
    own = chromium_with_devtools_port.new_context()
    own.credentials.install()
    plain = own.new_page()
    plain.goto(site + "/login")
    expected = set(plain.evaluate("Object.getOwnPropertyNames(window)")) | {"__credemuShim"}
    context = chromium_with_devtools_port.new_context()
    credemu.credentials(context, pack="gpm").install()
    page = context.new_page()
    try:
        for path in ("/login", "/login?again"):
            page.goto(site + path)
            assert set(page.evaluate("Object.getOwnPropertyNames(window)")) <= expected
            assert "error" not in page.evaluate(REGISTER)
        [channel] = [c for c in credemu_server.client().channels() if c["profile"] == context.credentials.profile.profile]
        assert channel["answered"] == 2, channel
        with context.expect_page() as opened:
            page.evaluate("url => { window.open(url); }", site + "/login")
        popup = opened.value
        popup.wait_for_load_state()
        assert set(popup.evaluate("Object.getOwnPropertyNames(window)")) <= expected
        assert "error" not in popup.evaluate(SIGN_IN, [[]])
    finally:
        context.close()
        own.close()


def test_credemu_takes_over_the_credentials_a_storage_state_gave_the_context(chromium_browser, site, tmp_path):
    """A context made with a storage state that carries Playwright's credentials: credemu holds them (and is
    installed, as Playwright installs its own for such a state), and Playwright's authenticator holds none."""
    context = chromium_browser.new_context()
    context.credentials.install()
    seeded = context.credentials.create("localhost")
    context.storage_state(path=tmp_path / "state.json", credentials=True)
    context.close()

    reused = chromium_browser.new_context(storage_state=tmp_path / "state.json")
    playwrights_own = reused.credentials
    credentials = credemu.credentials(reused, pack="gpm")
    assert reused.credentials is credentials and playwrights_own.get() == []
    [held] = credentials.get()
    assert held["id"] == seeded["id"] and held["privateKey"] == seeded["privateKey"]
    [passkey] = credentials.profile.passkeys()
    assert passkey["credentialId"] == seeded["id"]
    page = reused.new_page()
    page.goto(site + "/login")
    assertion = page.evaluate(SIGN_IN, [[]])
    assert assertion.get("id") == seeded["id"], assertion
    assert flags_and_counter(assertion)[0] & BE
    reused.close()


def test_a_second_credemu_install_on_one_context_is_refused(chromium_browser):
    context = chromium_browser.new_context()
    try:
        credemu.credentials(context, pack="gpm")
        with pytest.raises(TypeError):
            credemu.credentials(context, pack="apple")
    finally:
        context.close()


def test_the_async_api_context_gets_the_same_surface(site, credemu_server):
    import asyncio

    from playwright.async_api import async_playwright

    async def suite():
        async with async_playwright() as manager:
            browser = await manager.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage",
                                                                                    "--remote-debugging-port=0"])
            context = await browser.new_context()
            await credemu.credentials(context, pack="gpm").install()
            seeded = await context.credentials.create("localhost")
            page = await context.new_page()
            await page.goto(site + "/login")
            assertion = await page.evaluate(SIGN_IN, [[]])
            # The browser has a DevTools port: credemu serve answered the page itself (a paired channel).
            [channel] = [c for c in credemu_server.client().channels() if c["profile"] == context.credentials.profile.profile]
            assert channel["answered"] == 1, channel
            held = await context.credentials.get(rp_id="localhost")
            state = await context.storage_state(credentials=True)
            await context.credentials.delete(seeded["id"])
            after = await context.credentials.get()
            await browser.close()
            return seeded, assertion, held, state, after

    # On a thread of its own: the module's sync Playwright runs an event loop on this one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        seeded, assertion, held, state, after = pool.submit(asyncio.run, suite()).result(timeout=120)
    assert set(seeded) == KEYS
    assert assertion.get("id") == seeded["id"], assertion
    assert flags_and_counter(assertion)[0] & BE
    assert [c["id"] for c in held] == [seeded["id"]] and state["credentials"] == held and after == []


PYTEST_PLAYWRIGHT_SUITE = '''
import pytest

@pytest.fixture(scope="session")
def browser_type_launch_args():
    return {"executable_path": %(chromium)r, "args": ["--no-sandbox", "--disable-dev-shm-usage"]}

SIGN_IN = %(sign_in)r

def test_seeded_credential_signs_in(context, page):
    context.credentials.install()
    seeded = context.credentials.create("localhost")
    page.goto(%(site)r + "/login")
    assertion = page.evaluate(SIGN_IN, [[]])
    assert assertion.get("id") == seeded["id"], assertion
    flags = __import__("base64").urlsafe_b64decode(assertion["authenticatorData"] + "==")[32]
    print("FLAGS", flags & 0x18, type(context.credentials).__module__)
    # On credemu, the plugin's Chromium has a DevTools port: credemu serve answered the page itself.
    client = getattr(context.credentials, "profile", None)
    print("SERVED", sum(c["answered"] for c in client.channels()) if client else None)

@pytest.mark.credemu(pack="apple", playwright=True)
def test_the_marker_names_the_pack(context, credemu_profile):
    context.credentials.create("localhost")
    assert credemu_profile.pack == "apple" and len(credemu_profile.passkeys()) == 1
'''


@pytest.fixture(scope="session")
def pytest_playwright_path(tmp_path_factory):
    """A directory holding pytest-playwright and its two dependencies at the pinned versions
    (pytest-playwright-requirements.txt says why not the venv), for PYTHONPATH."""
    target = tmp_path_factory.mktemp("pytest-playwright")
    pins = Path(__file__).with_name("pytest-playwright-requirements.txt")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                           "--target", str(target), "-r", str(pins)], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        pytest.fail(f"pip could not install {pins.name}: {done.stdout}{done.stderr}")
    return target


def test_pytest_playwrights_own_context_fixture_gets_credemu_with_the_option(pytester, site, pytest_playwright_path, monkeypatch):
    """A pytest-playwright suite that uses its `context` and `page` fixtures: with `--credemu-playwright=gpm` the
    same tests run on credemu (BE and BS set; context.credentials is credemu's), without it on Playwright's."""
    monkeypatch.setenv("PYTHONPATH", str(pytest_playwright_path))
    pytester.makepyfile(test_suite=PYTEST_PLAYWRIGHT_SUITE % {"chromium": CHROMIUM, "sign_in": SIGN_IN, "site": site})
    on_credemu = pytester.runpytest_subprocess("-s", "-k", "seeded", "--credemu-playwright=gpm")
    on_credemu.assert_outcomes(passed=1)
    on_credemu.stdout.fnmatch_lines(["*FLAGS 24 credemu.playwright*", "*SERVED 1*"])
    on_playwright = pytester.runpytest_subprocess("-s", "-k", "seeded")
    on_playwright.assert_outcomes(passed=1)
    on_playwright.stdout.fnmatch_lines(["*FLAGS 0 playwright.sync_api*"])
    marked = pytester.runpytest_subprocess("-k", "marker")
    marked.assert_outcomes(passed=1)


def test_every_method_of_playwrights_credentials_is_credemus_with_its_signature_and_on_the_migration_page():
    """When Playwright's `Credentials` gains a method or an argument, this fails until credemu has it and
    docs/playwright.md says what differs."""
    from playwright.async_api._generated import Credentials as AsyncPlaywright
    from playwright.sync_api._generated import Credentials as SyncPlaywright

    from credemu.playwright import AsyncCredentials, Credentials
    page = (Path(__file__).resolve().parents[3] / "docs" / "playwright.md").read_text()
    for playwrights, credemus in ((SyncPlaywright, Credentials), (AsyncPlaywright, AsyncCredentials)):
        methods = [name for name, member in vars(playwrights).items() if callable(member) and not name.startswith("_")]
        assert {"create", "delete", "get", "install"} <= set(methods), methods
        for name in methods:
            ours = getattr(credemus, name, None)
            assert ours is not None, f"{credemus.__name__} has no {name}"
            theirs_parameters = {k: (p.kind, p.default) for k, p in inspect.signature(getattr(playwrights, name)).parameters.items()}
            our_parameters = {k: (p.kind, p.default) for k, p in inspect.signature(ours).parameters.items()}
            assert our_parameters == theirs_parameters, name
            assert inspect.iscoroutinefunction(ours) == inspect.iscoroutinefunction(getattr(playwrights, name)), name
            assert f"`{name}(" in page, f"docs/playwright.md says nothing of {name}"


def test_the_migration_pages_speed_row_is_a_bench_run_and_its_ratios_are_its_figures():
    """docs/playwright.md's speed row is what `make bench` wrote (bench/side_by_side.py's playwright_row): a dated
    run whose ratios agree with its own figures, not numbers typed in."""
    import re
    page = (Path(__file__).resolve().parents[3] / "docs" / "playwright.md").read_text()
    [row] = [line for line in page.splitlines() if line.startswith("| Speed, in-page ES256")]
    assert re.search(r"\(`make bench`, \d{4}-\d{2}-\d{2}, load \d+\.\d on \d+ cores; Chromium with a DevTools port\)", row), row
    own, ours = row.split(" | ")[1:3]
    number = r"([\d,]+) / ([\d,]+)"
    own_create, own_get = (float(x.replace(",", "")) for x in re.match(number + r" \(Python\)", own).groups())
    found = re.match(number + r" with the Python client \((\d+\.\d+)x / (\d+\.\d+)x\)", ours)
    assert found, ours
    create, get, create_ratio, get_ratio = (float(x.replace(",", "")) for x in found.groups())
    # Each ratio is the median of per-round ratios, so near (not equal to) the ratio of the medians.
    assert abs(create_ratio - create / own_create) <= 0.25 * create / own_create
    assert abs(get_ratio - get / own_get) <= 0.25 * get / own_get

