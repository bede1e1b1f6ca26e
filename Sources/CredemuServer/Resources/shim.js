// Replaces the page's credential manager with credemu: navigator.credentials.create/get for public keys, the
// PublicKeyCredential static methods (capabilities, signals, JSON parsing), and password autofill into sign-in
// forms. Load it before the page's scripts (Playwright addInitScript, CDP Page.addScriptToEvaluateOnNewDocument).
// __credemuConfig ({server, profile, autofill, token}) is prepended by the server.
(function () {
  'use strict';
  if (window.__credemuShim) return;
  const config = __credemuConfig;
  window.__credemuShim = { config: config, log: [] };

  // ---- base64url ----
  function toBytes(source) {
    if (source instanceof ArrayBuffer) return new Uint8Array(source);
    if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    throw new TypeError('Expected an ArrayBuffer or ArrayBufferView.');
  }
  function encode(source) {
    const bytes = toBytes(source);
    let binary = '';
    for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }
  function decode(text, field) {
    if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*$/.test(text)) {
      throw new TypeError('Invalid base64url string' + (field ? ' for ' + field : '') + '.');
    }
    const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4);
    const binary = atob(padded);
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out.buffer;
  }

  // ---- the server ----
  async function call(method, path, body) {
    const headers = { 'Content-Type': 'application/json' };
    if (config.token) headers.Authorization = 'Bearer ' + config.token;
    const response = await fetch(config.server + '/profiles/' + encodeURIComponent(config.profile) + path, {
      method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body), keepalive: method !== 'GET'
    });
    const json = await response.json();
    window.__credemuShim.log.push({ path: path, status: response.status, body: json });
    return { status: response.status, body: json };
  }
  function failure(body) {
    const error = (body && body.error) || { name: 'UnknownError', message: 'credemu gave no answer.' };
    if (error.name === 'TypeError') return new TypeError(error.message);
    const exception = new DOMException(error.message, error.name);
    try { Object.defineProperty(exception, 'credemu', { value: error }); } catch (e) { /* frozen */ }
    return exception;
  }
  function topOrigin() {
    if (window.top === window) return undefined;
    try { return window.top.location.origin; } catch (e) { /* cross-origin */ }
    const ancestors = location.ancestorOrigins;
    return ancestors && ancestors.length ? ancestors[ancestors.length - 1] : undefined;
  }
  function caller(extra) {
    const out = { origin: location.origin };
    const top = topOrigin();
    if (top && top !== location.origin) out.topOrigin = top;
    return Object.assign(out, extra);
  }

  // ---- options to and from JSON (WebAuthn L3 §5.1.8, §5.1.9, §5.1.10) ----
  function descriptorsToJSON(list) {
    return (list || []).map(function (d) { const o = Object.assign({}, d); o.id = encode(d.id); return o; });
  }
  function creationToJSON(pk) {
    const o = Object.assign({}, pk);
    o.challenge = encode(pk.challenge);
    o.user = Object.assign({}, pk.user, { id: encode(pk.user.id) });
    if (pk.excludeCredentials) o.excludeCredentials = descriptorsToJSON(pk.excludeCredentials);
    delete o.signal;
    return o;
  }
  function requestToJSON(pk) {
    const o = Object.assign({}, pk);
    o.challenge = encode(pk.challenge);
    if (pk.allowCredentials) o.allowCredentials = descriptorsToJSON(pk.allowCredentials);
    return o;
  }
  function descriptorsFromJSON(list, field) {
    return (list || []).map(function (d, i) { const o = Object.assign({}, d); o.id = decode(d.id, field + '[' + i + '].id'); return o; });
  }
  function parseCreationOptionsFromJSON(json) {
    const o = Object.assign({}, json);
    o.challenge = decode(json.challenge, 'challenge');
    o.user = Object.assign({}, json.user, { id: decode(json.user && json.user.id, 'user.id') });
    if (json.excludeCredentials) o.excludeCredentials = descriptorsFromJSON(json.excludeCredentials, 'excludeCredentials');
    return o;
  }
  function parseRequestOptionsFromJSON(json) {
    const o = Object.assign({}, json);
    o.challenge = decode(json.challenge, 'challenge');
    if (json.allowCredentials) o.allowCredentials = descriptorsFromJSON(json.allowCredentials, 'allowCredentials');
    return o;
  }

  // ---- credentials that behave like the browser's own ----
  function define(target, values) {
    Object.keys(values).forEach(function (key) {
      Object.defineProperty(target, key, { value: values[key], enumerable: typeof values[key] !== 'function', configurable: true });
    });
    return target;
  }
  function proto(name) { return window[name] ? window[name].prototype : Object.prototype; }
  function credential(json, kind) {
    const r = json.response;
    let response;
    if (kind === 'create') {
      response = define(Object.create(proto('AuthenticatorAttestationResponse')), {
        clientDataJSON: decode(r.clientDataJSON), attestationObject: decode(r.attestationObject),
        getTransports: function () { return r.transports.slice(); },
        getPublicKey: function () { return decode(r.publicKey); },
        getPublicKeyAlgorithm: function () { return r.publicKeyAlgorithm; },
        getAuthenticatorData: function () { return decode(r.authenticatorData); }
      });
    } else {
      response = define(Object.create(proto('AuthenticatorAssertionResponse')), {
        clientDataJSON: decode(r.clientDataJSON), authenticatorData: decode(r.authenticatorData),
        signature: decode(r.signature), userHandle: r.userHandle ? decode(r.userHandle) : null
      });
    }
    return define(Object.create(proto('PublicKeyCredential')), {
      id: json.id, rawId: decode(json.rawId), type: 'public-key', authenticatorAttachment: json.authenticatorAttachment,
      response: response,
      getClientExtensionResults: function () { return JSON.parse(JSON.stringify(json.clientExtensionResults || {})); },
      toJSON: function () { return JSON.parse(JSON.stringify(json)); }
    });
  }

  // ---- navigator.credentials ----
  const container = navigator.credentials;
  const nativeCreate = container && container.create ? container.create.bind(container) : null;
  const nativeGet = container && container.get ? container.get.bind(container) : null;
  function aborted(options) {
    return options && options.signal && options.signal.aborted ? new DOMException('The operation was aborted.', 'AbortError') : null;
  }
  async function create(options) {
    if (!options || !options.publicKey) return nativeCreate ? nativeCreate(options) : Promise.reject(new DOMException('Not supported.', 'NotSupportedError'));
    const abort = aborted(options);
    if (abort) throw abort;
    let json;
    try { json = creationToJSON(options.publicKey); } catch (e) { throw new TypeError(e.message); }
    const body = caller({ options: json });
    body.mediation = options.mediation === 'conditional' ? 'conditional' : 'modal';
    const result = await call('POST', '/credentials/create', body);
    if (result.status !== 200) throw failure(result.body);
    return credential(result.body, 'create');
  }
  async function get(options) {
    if (!options || !options.publicKey) return nativeGet ? nativeGet(options) : Promise.reject(new DOMException('Not supported.', 'NotSupportedError'));
    const abort = aborted(options);
    if (abort) throw abort;
    let json;
    try { json = requestToJSON(options.publicKey); } catch (e) { throw new TypeError(e.message); }
    const body = caller({ options: json });
    if (options.mediation) body.mediation = options.mediation;
    const result = await call('POST', '/credentials/get', body);
    if (result.status !== 200) throw failure(result.body);
    return credential(result.body, 'get');
  }
  if (container) {
    Object.defineProperty(container, 'create', { value: create, configurable: true, writable: true });
    Object.defineProperty(container, 'get', { value: get, configurable: true, writable: true });
  }

  // ---- PublicKeyCredential static methods ----
  let capabilities = null;
  function loadCapabilities() {
    if (!capabilities) {
      capabilities = call('GET', '/capabilities').then(function (r) {
        if (r.status !== 200) throw failure(r.body);
        return r.body;
      });
    }
    return capabilities;
  }
  function signal(kind, names) {
    return async function (options) {
      if (!options || typeof options !== 'object') throw new TypeError('The signal options must be an object.');
      names.forEach(function (name) {
        if (options[name] === undefined) throw new TypeError("Failed to execute: required member " + name + " is undefined.");
      });
      const result = await call('POST', '/signals/' + kind, caller({ options: options }));
      if (result.status !== 200) throw failure(result.body);
      return undefined;
    };
  }
  const statics = {
    getClientCapabilities: async function () { return Object.assign({}, (await loadCapabilities()).getClientCapabilities); },
    isConditionalMediationAvailable: async function () { return (await loadCapabilities()).isConditionalMediationAvailable; },
    isUserVerifyingPlatformAuthenticatorAvailable: async function () { return (await loadCapabilities()).isUserVerifyingPlatformAuthenticatorAvailable; },
    signalUnknownCredential: signal('unknown', ['rpId', 'credentialId']),
    signalAllAcceptedCredentials: signal('accepted', ['rpId', 'userId', 'allAcceptedCredentialIds']),
    signalCurrentUserDetails: signal('details', ['rpId', 'userId', 'name', 'displayName']),
    parseCreationOptionsFromJSON: parseCreationOptionsFromJSON,
    parseRequestOptionsFromJSON: parseRequestOptionsFromJSON
  };
  if (!window.PublicKeyCredential) {
    window.PublicKeyCredential = function PublicKeyCredential() { throw new TypeError('Illegal constructor'); };
  }
  Object.keys(statics).forEach(function (name) {
    Object.defineProperty(window.PublicKeyCredential, name, { value: statics[name], configurable: true, writable: true });
  });

  // ---- password autofill, as a password manager fills a sign-in form ----
  function fields(form) {
    const password = form.querySelector('input[type="password"]');
    if (!password) return null;
    const username = form.querySelector('input[autocomplete~="username"], input[type="email"], input[name*="user" i], input[type="text"]');
    return { username: username, password: password };
  }
  function setValue(input, value) {
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
    setter.call(input, value);
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.dispatchEvent(new Event('change', { bubbles: true }));
  }
  const filled = new WeakMap();
  async function autofill() {
    const forms = Array.prototype.slice.call(document.querySelectorAll('form')).filter(function (f) { return fields(f); });
    for (const form of forms) {
      const f = fields(form);
      form.addEventListener('submit', function () {
        const username = f.username ? f.username.value : '';
        const fill = filled.get(form);
        if (fill && username === fill.username && f.password.value === fill.password) {
          call('POST', '/passwords/use', { origin: location.origin, username: username });
        } else if (username && f.password.value) {
          call('POST', '/passwords', { origin: location.origin, username: username, password: f.password.value });
        }
      });
      const result = await call('POST', '/autofill', { origin: location.origin });
      if (result.status !== 200) continue;
      if (f.username) setValue(f.username, result.body.username);
      setValue(f.password, result.body.password);
      filled.set(form, { username: result.body.username, password: result.body.password });
      document.dispatchEvent(new CustomEvent('credemu:autofilled', { detail: { username: result.body.username } }));
    }
  }
  window.__credemuShim.autofill = autofill;
  if (config.autofill) {
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', autofill);
    else autofill();
  }
})();
