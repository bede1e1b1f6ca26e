"""A device with two credential managers in headless Chromium (issue 12): desktop Chrome with Google Password
Manager and the Bitwarden extension, in that order, the shim loaded for the device (`/shim.js?device=NAME`, through
the plugin's `credemu_install_shim(..., device=...)`). The page's own navigator.credentials calls show what the
platform does with two managers: the extension takes the create; the conditional get's dropdown lists both
accounts' passkeys and the one the user picks signs in with its own account's key; a signal reaches the browser's
own manager only; getClientCapabilities() is the extension's. Each answer's account is read from the shim's debug
log (X-Credemu-Provider) and checked against the accounts' vaults."""
import json
import time

import pytest
from webauthn import generate_registration_options, verify_authentication_response, verify_registration_response
from webauthn.helpers import base64url_to_bytes

from conftest import html_site
from shim_drivers import selenium_chromium

PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>two managers</title></head>
<body><form><input id="username" autocomplete="username webauthn"><input id="password" type="password" autocomplete="current-password"></form></body></html>"""
CHALLENGE = "AAECAwQFBgcICQoLDA0ODw"

# In the page: the call's result (toJSON) or its error. Which account answered is the test code's to find out
# (the vault and its events), never the page's.
IN_PAGE = """
const done = arguments[arguments.length - 1];
const call = async () => { %s };
call().then((value) => done({value: value === undefined ? null : value}), (e) => done({error: e.name, message: e.message}));
"""


def in_page(driver, body):
    return driver.execute_async_script(IN_PAGE % body)


@pytest.fixture(scope="module")
def site():
    with html_site(PAGE) as origin:
        yield origin


@pytest.fixture
def chromium():
    driver = selenium_chromium(script_timeout=30)
    yield driver
    driver.quit()


def ids(client, profile):
    return [k["credentialId"] for k in client.passkeys(profile=profile) if not k.get("hidden")]


def test_chrome_desktop_with_gpm_and_bitwarden_routes_each_page_call_where_chrome_does(chromium, site, credemu_client, credemu_install_shim):
    client = credemu_client.for_profile("default", origin=site)
    client.create_profile("two-gpm", pack="gpm")
    client.create_profile("two-bw", pack="bitwarden")
    client.create_device("two-laptop", providers=["two-gpm", "two-bw"], platform="chrome-desktop")
    # Alice's GPM passkey, made on a device where GPM is the only manager.
    client.create_device("two-gpm-only", providers=["two-gpm"])
    options = generate_registration_options(rp_id="localhost", rp_name="Two", user_name="alice")
    made = client.create(options, device="two-gpm-only")
    assert made.provider == "two-gpm"
    gpm_key = verify_registration_response(credential=made, expected_challenge=options.challenge, expected_origin=site,
                                           expected_rp_id="localhost")

    credemu_install_shim(chromium, origin=site, device="two-laptop")
    chromium.get(site + "/")

    # navigator.credentials.create: Bitwarden's page script takes it.
    created = in_page(chromium, """
        const c = await navigator.credentials.create({publicKey: PublicKeyCredential.parseCreationOptionsFromJSON({
          rp: {id: 'localhost', name: 'Two'}, user: {id: 'Ym9i', name: 'bob', displayName: 'Bob'},
          challenge: '%s', pubKeyCredParams: [{type: 'public-key', alg: -7}]})});
        return c.toJSON();""" % CHALLENGE)
    assert "error" not in created, created
    bw_id = created["value"]["id"]
    verify_registration_response(credential=created["value"], expected_challenge=base64url_to_bytes(CHALLENGE), expected_origin=site,
                                 expected_rp_id="localhost")
    assert ids(client, "two-bw") == [bw_id]
    assert ids(client, "two-gpm") == [made["id"]]

    # The conditional get's dropdown: both accounts' passkeys (the extension's first); the user picks GPM's.
    chromium.execute_script("""
        window.__got = null;
        navigator.credentials.get({mediation: 'conditional', publicKey: PublicKeyCredential.parseRequestOptionsFromJSON({
          challenge: '%s', rpId: 'localhost'})}).then((c) => { window.__got = c.toJSON(); }, (e) => { window.__got = {error: e.name}; });
    """ % CHALLENGE)
    deadline = time.monotonic() + 20
    while not (offers := client.offers(device="two-laptop")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(offers) == 1 and offers[0]["origin"] == site and offers[0]["rpId"] == "localhost", offers
    assert [(p["credentialId"], p["provider"]) for p in offers[0]["passkeys"]] == [(bw_id, "two-bw"), (made["id"], "two-gpm")]
    client.pick(made["id"], device="two-laptop", ceremony=offers[0]["ceremony"])
    deadline = time.monotonic() + 20
    while not (got := chromium.execute_script("return window.__got")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert got and "error" not in got, got
    assert got["id"] == made["id"]
    verify_authentication_response(credential=got, expected_challenge=base64url_to_bytes(CHALLENGE), expected_origin=site,
                                   expected_rp_id="localhost", credential_public_key=gpm_key.credential_public_key,
                                   credential_current_sign_count=0)
    assert not chromium.execute_script("return JSON.stringify([window.__got, window.__credemuShim]).includes('two-')"), "the page never sees an account"
    assert chromium.execute_script("return Object.isFrozen(window.__credemuShim) && Object.keys(window.__credemuShim).length") == 0, \
        "nor the shim's answers: no log without the test code's debug=1"

    # signalUnknownCredential: Chrome sends it to its own manager; the extension does not override the signal methods.
    for credential in (bw_id, made["id"]):
        signalled = in_page(chromium, "return PublicKeyCredential.signalUnknownCredential({rpId: 'localhost', credentialId: '%s'});" % credential)
        assert signalled == {"value": None}, signalled
    assert client.events("signal", profile="two-bw") == []
    assert [e["detail"]["credentialId"] for e in client.events("signal", profile="two-gpm")] == [bw_id, made["id"]]
    assert ids(client, "two-bw") == [bw_id], "Bitwarden never heard the RP call its passkey unknown"
    assert made["id"] not in ids(client, "two-gpm"), "GPM acted on its own passkey"

    # getClientCapabilities(): the page's API is the extension's, as the profile route gives it for that account.
    capabilities = in_page(chromium, "return PublicKeyCredential.getClientCapabilities();")
    on_device = client.get_client_capabilities(device="two-laptop")
    assert on_device["profile"] == "two-bw"
    assert capabilities["value"] == client.get_client_capabilities(profile="two-bw")["getClientCapabilities"] == on_device["getClientCapabilities"]

    for device in ("two-laptop", "two-gpm-only"):
        client.remove_device(device)
