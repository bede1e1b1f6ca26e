"""The shim in Firefox against Firefox's own WebAuthn, where Firefox answers without an authenticator: the
interfaces' shapes, the JSON parsing methods (results and errors), and argument errors of create() and get().
The same in-page checks run once in a page without the shim (Firefox's own credential manager) and once with it,
and the two summaries must be equal but for `DIFFERENCES`, each with its reason.

What is compared is what the page's code can branch on: the interfaces' own property names, the class and name of
each error, the shape of each parsed result. Messages are not compared: the shim speaks Chromium's (the profile's
platform decides what the page sees, and webauthn-spec on chrome-desktop is a Chromium page), Firefox its own.
A subset of shim_parity_checks.js's concerns: nothing here needs a credential, a pending ceremony or a signal.
"""

import pytest

from credemu import browsers

from conftest import html_site

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


@pytest.fixture
def page_origin():
    with html_site(b"<!doctype html><title>engine parity</title>") as origin:
        yield origin


@pytest.mark.credemu(pack="webauthn-spec", platform="chrome-desktop")
def test_the_shim_in_firefox_answers_as_firefox_does_where_firefox_needs_no_authenticator(page_origin, credemu_profile, credemu_install_shim):
    with browsers.firefox() as firefox:
        firefox.navigate(page_origin + "/native")
        native = firefox.evaluate(CHECKS)
        credemu_install_shim(firefox, origin=page_origin)
        firefox.navigate(page_origin + "/shim")
        assert firefox.evaluate("Object.prototype.hasOwnProperty.call(window, '__credemuShim')")
        shimmed = firefox.evaluate(CHECKS)
    assert set(native) == set(shimmed)
    differing = {k for k in native if native[k] != shimmed[k]}
    report = "\n".join(f"{k}:\n  firefox {native[k]}\n  shim    {shimmed[k]}" for k in sorted(differing - set(DIFFERENCES)))
    assert differing - set(DIFFERENCES) == set(), "the shim differs from Firefox's own:\n" + report
    assert len(native) >= 30
    # The known differences are exactly these: the signal methods of the chrome-desktop platform.
    signals = {"signalAllAcceptedCredentials:function", "signalCurrentUserDetails:function", "signalUnknownCredential:function"}
    assert set(shimmed["shape/PublicKeyCredential statics"]) - set(native["shape/PublicKeyCredential statics"]) == signals
    assert set(native["json/creation keys"]) - set(shimmed["json/creation keys"]) == {"authenticatorSelection", "extensions"}
    assert set(native["json/request keys"]) - set(shimmed["json/request keys"]) == {"extensions"}
