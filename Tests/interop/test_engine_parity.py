"""The shim in Firefox against Firefox's own WebAuthn, where Firefox answers without an authenticator: the
interfaces' shapes, the JSON parsing methods (results and errors), and argument errors of create() and get().
The same in-page checks run once in a page without the shim (Firefox's own credential manager) and once with it,
and the two summaries must be equal but for `DIFFERENCES`, each with its reason.

What is compared is what the page's code can branch on: the interfaces' own property names, the class and name of
each error, the shape of each parsed result. Messages are not compared: the shim speaks Chromium's (the profile's
platform decides what the page sees, and webauthn-spec on chrome-desktop is a Chromium page), Firefox its own.
A subset of shim_parity_checks.js's concerns: nothing here needs a credential, a pending ceremony or a signal.

Each runs over the driver's channel, on the page as served and on a page serving a strict CSP (`default-src 'self';
script-src 'self' 'unsafe-inline'`), and over the page's fetch; in WebKitGTK, which has no WebAuthn of its own, the
channel's summaries must equal the fetch's.
"""

import json

import pytest

from credemu import browsers
from credemu.shim import installed_shim

from conftest import STRICT_CSP, html_site

CHECKS = r"""(async () => {
  const out = {};
  const own = (o) => Object.getOwnPropertyNames(o).filter((n) => !['length', 'name', 'prototype', 'constructor'].includes(n)).sort();
  const kinds = (o) => own(o).map((n) => { const d = Object.getOwnPropertyDescriptor(o, n); return n + ':' + (d.get ? 'getter' : typeof d.value); });
  out['shape/PublicKeyCredential statics'] = kinds(PublicKeyCredential);
  out['shape/PublicKeyCredential.prototype'] = kinds(PublicKeyCredential.prototype);
  out['shape/AuthenticatorResponse.prototype'] = kinds(AuthenticatorResponse.prototype);
  out['shape/AuthenticatorAttestationResponse.prototype'] = kinds(AuthenticatorAttestationResponse.prototype);
  out['shape/AuthenticatorAssertionResponse.prototype'] = kinds(AuthenticatorAssertionResponse.prototype);
  out['shape/CredentialsContainer.prototype'] = kinds(CredentialsContainer.prototype);
  out['shape/inheritance'] = [PublicKeyCredential.prototype instanceof Credential,
    AuthenticatorAttestationResponse.prototype instanceof AuthenticatorResponse, navigator.credentials instanceof CredentialsContainer];
  const failed = (e) => [e && e.constructor && e.constructor.name, e && e.name];
  const outcome = async (run) => { try { const v = await run(); return ['resolved', typeof v]; } catch (e) { return failed(e); } };
  out['shape/new PublicKeyCredential()'] = await outcome(() => new PublicKeyCredential());
  out['shape/getClientCapabilities'] = await outcome(() => PublicKeyCredential.getClientCapabilities());
  out['shape/isConditionalMediationAvailable'] = await outcome(() => PublicKeyCredential.isConditionalMediationAvailable());
  const creation = {rp: {name: 'RP'}, user: {id: 'AQID', name: 'a@example.com', displayName: 'A'}, challenge: 'AAECAwQFBgcICQoLDA0ODw',
    pubKeyCredParams: [{type: 'public-key', alg: -7}], excludeCredentials: [{type: 'public-key', id: 'AQID'}], timeout: 60000};
  const parsed = PublicKeyCredential.parseCreationOptionsFromJSON(creation);
  out['json/creation keys'] = Object.keys(parsed).sort();
  out['json/creation buffers'] = [parsed.challenge instanceof ArrayBuffer, parsed.user.id instanceof ArrayBuffer,
    parsed.excludeCredentials[0].id instanceof ArrayBuffer, parsed.challenge.byteLength, parsed.user.id.byteLength];
  const request = PublicKeyCredential.parseRequestOptionsFromJSON({challenge: 'AAECAwQFBgcICQoLDA0ODw', rpId: 'localhost',
    allowCredentials: [{type: 'public-key', id: 'AQID'}]});
  out['json/request keys'] = Object.keys(request).sort();
  out['json/request buffers'] = [request.challenge instanceof ArrayBuffer, request.allowCredentials[0].id instanceof ArrayBuffer];
  const bad = (base) => Object.assign({}, creation, base);
  out['json/creation without challenge'] = await outcome(() => PublicKeyCredential.parseCreationOptionsFromJSON(bad({challenge: undefined})));
  out['json/creation with a bad challenge'] = await outcome(() => PublicKeyCredential.parseCreationOptionsFromJSON(bad({challenge: '+/'})));
  out['json/creation with a bad user.id'] = await outcome(() => PublicKeyCredential.parseCreationOptionsFromJSON(bad({user: {id: '*', name: 'a', displayName: 'a'}})));
  out['json/creation without user'] = await outcome(() => PublicKeyCredential.parseCreationOptionsFromJSON(bad({user: undefined})));
  out['json/creation not an object'] = await outcome(() => PublicKeyCredential.parseCreationOptionsFromJSON(7));
  out['json/creation with no argument'] = await outcome(() => PublicKeyCredential.parseCreationOptionsFromJSON());
  out['json/request with a bad challenge'] = await outcome(() => PublicKeyCredential.parseRequestOptionsFromJSON({challenge: '+'}));
  out['json/request with a bad allowCredentials id'] = await outcome(() => PublicKeyCredential.parseRequestOptionsFromJSON({challenge: 'AQID', allowCredentials: [{type: 'public-key', id: '!'}]}));
  out['json/request without challenge'] = await outcome(() => PublicKeyCredential.parseRequestOptionsFromJSON({}));
  const options = parsed;
  out['args/create with an empty publicKey'] = await outcome(() => navigator.credentials.create({publicKey: {}}));
  out['args/create with a string challenge'] = await outcome(() => navigator.credentials.create({publicKey: Object.assign({}, options, {challenge: 'x'})}));
  out['args/create without pubKeyCredParams'] = await outcome(() => navigator.credentials.create({publicKey: Object.assign({}, options, {pubKeyCredParams: undefined})}));
  out['args/create with a bad mediation'] = await outcome(() => navigator.credentials.create({publicKey: options, mediation: 'sometimes'}));
  out['args/create with a non-signal signal'] = await outcome(() => navigator.credentials.create({publicKey: options, signal: {}}));
  const aborted = new AbortController(); aborted.abort();
  out['args/create already aborted'] = await outcome(() => navigator.credentials.create({publicKey: options, signal: aborted.signal}));
  out['args/get already aborted'] = await outcome(() => navigator.credentials.get({publicKey: request, signal: aborted.signal}));
  out['args/get with an empty publicKey'] = await outcome(() => navigator.credentials.get({publicKey: {}}));
  out['args/get with a string challenge'] = await outcome(() => navigator.credentials.get({publicKey: {challenge: 'x'}}));
  out['args/create not an object'] = await outcome(() => navigator.credentials.create(7));
  out['args/create called on another object'] = await outcome(() => CredentialsContainer.prototype.create.call({}, {publicKey: options}));
  return out;
})()"""

# Where the shim's page differs from Firefox's, and why. Keep this short and honest.
DIFFERENCES = {
    # The shim's surface is the profile's platform's: chrome-desktop has the L3 signal methods, Firefox 153 none.
    "shape/PublicKeyCredential statics": "platform",
    # Firefox's parse*FromJSON gives `extensions` (and in a creation `authenticatorSelection`) as empty dictionaries
    # when the JSON has none; Chromium leaves them out, and so does the shim (test_shim_parity.py checks that).
    "json/creation keys": "engine",
    "json/request keys": "engine",
}


# How the shim reaches credemu (docs/shim.md, "Transport"), and the page's CSP: the driver's channel (install_shim's
# default) on the page as served and on the page serving a strict CSP, and the page's fetch on the page as served.
# Never a CSP bypass: Firefox and WebKitGTK have none.
TRANSPORTS = {"channel": (True, None), "channel-strict-csp": (True, STRICT_CSP), "fetch": (False, None)}
PAGE = b"<!doctype html><title>engine parity</title>"
# In the page: its own fetch to another origin (credemu's), which a strict CSP must still refuse.
OWN_FETCH = "fetch(SERVER + '/health').then(() => 'fetched', (e) => e.name)"


def differences(reference, summary):
    """The checks whose values differ, as a report."""
    assert set(reference) == set(summary)
    differing = {k for k in reference if reference[k] != summary[k]}
    return differing, "\n".join(f"{k}:\n  reference {reference[k]}\n  shim      {summary[k]}" for k in sorted(differing))


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.credemu(pack="webauthn-spec", platform="chrome-desktop")
def test_the_shim_in_firefox_answers_as_firefox_does_where_firefox_needs_no_authenticator(transport, credemu_profile, credemu_install_shim):
    channel, csp = TRANSPORTS[transport]
    with html_site(PAGE, csp=csp) as page_origin, browsers.firefox() as firefox:
        firefox.navigate(page_origin + "/native")
        native = firefox.evaluate(CHECKS)
        credemu_install_shim(firefox, origin=page_origin, channel=channel)   # the plugin's default: no bypass
        firefox.navigate(page_origin + "/shim")
        assert firefox.evaluate("Object.prototype.hasOwnProperty.call(window, '__credemuShim')")
        shimmed = firefox.evaluate(CHECKS)
        own_fetch = firefox.evaluate(OWN_FETCH.replace("SERVER", json.dumps(credemu_profile.url)))
    differing, report = differences(native, shimmed)
    assert differing - set(DIFFERENCES) == set(), "the shim differs from Firefox's own:\n" + report
    assert len(native) >= 30
    # The known differences are exactly these: the signal methods of the chrome-desktop platform.
    signals = {"signalAllAcceptedCredentials:function", "signalCurrentUserDetails:function", "signalUnknownCredential:function"}
    assert set(shimmed["shape/PublicKeyCredential statics"]) - set(native["shape/PublicKeyCredential statics"]) == signals
    assert set(native["json/creation keys"]) - set(shimmed["json/creation keys"]) == {"authenticatorSelection", "extensions"}
    assert set(native["json/request keys"]) - set(shimmed["json/request keys"]) == {"extensions"}
    # The shim's getClientCapabilities reached credemu (a resolved promise), and the page's policy stayed in force.
    assert shimmed["shape/getClientCapabilities"] == ["resolved", "object"]
    assert own_fetch == ("TypeError" if csp else "fetched")


@pytest.mark.parametrize("transport", [t for t in TRANSPORTS if TRANSPORTS[t][0]])
@pytest.mark.credemu(pack="apple", platform="safari")
def test_in_webkitgtk_the_shim_answers_over_the_channel_as_over_the_pages_fetch(transport, credemu_profile):
    """WebKitGTK has no WebAuthn of its own to compare with: the reference is the shim over the page's fetch on the
    page as served, and through the channel (on the page as served and on the strict-CSP page) every check must
    give the same."""
    csp = TRANSPORTS[transport][1]
    with html_site(PAGE) as plain, html_site(PAGE, csp=csp) as page_origin, browsers.webkit() as webkit:
        undo = installed_shim(webkit, credemu_profile, origin=plain, channel=False)[1]
        webkit.navigate(plain + "/fetch")
        reference = webkit.evaluate(CHECKS)
        undo()
        installed_shim(webkit, credemu_profile, origin=page_origin)   # install_shim's defaults: the channel, no bypass
        webkit.navigate(page_origin + "/channel")
        shimmed = webkit.evaluate(CHECKS)
        own_fetch = webkit.evaluate(OWN_FETCH.replace("SERVER", json.dumps(credemu_profile.url)))
    differing, report = differences(reference, shimmed)
    assert differing == set(), "the shim over the channel differs from the shim over the page's fetch:\n" + report
    assert len(reference) >= 30 and reference["shape/getClientCapabilities"] == ["resolved", "object"]
    assert own_fetch == ("TypeError" if csp else "fetched")
