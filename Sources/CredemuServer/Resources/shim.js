// Replaces the page's credential manager with credemu: navigator.credentials.create/get for public keys, the
// PublicKeyCredential static methods (capabilities, signals, JSON parsing), and password autofill into sign-in
// forms. Load it before the page's scripts (Playwright addInitScript, CDP Page.addScriptToEvaluateOnNewDocument).
// The server wraps this file in a function whose parameter __credemuConfig ({server, profile or device, autofill,
// fillBinding, channel, channelReply, serverChannel, serverHandoff, autofillEvents, debug, token, signalMethods,
// immediateMediation, publicKeyMethod, blinkChecks}) it
// passes, so no global of credemu's is left for the page to find but `window.__credemuShim`, the mark that stops a
// second copy: an empty frozen object. Only with the test code's `debug=1` does it hold the calls' log and an
// `autofill()` to run the fill again (a page's scripts see nothing of Chromium's traffic with its credential
// manager, nor an autofill dropdown's entries, so they must not read credemu's answers either). It never holds the
// configuration: the token (a page token, good for this profile's or device's page routes only) stays in this
// closure, out of reach of the page's scripts.
//
// The browser is the reference: inside a page this must look like Chromium's own credential manager. Objects are
// instances of the page's real interfaces with the attributes as getters on the prototypes; arguments go through
// the WebIDL conversions Chromium's bindings make (member order, ToString, BufferSource checks, the same messages);
// the checks Chromium's renderer makes before asking an authenticator are made here, in its order; and errors
// carry Chromium's names and messages, with credemu's own detail on a non-enumerable `credemu` property. Every
// behaviour below was compared with Chromium 156 and its virtual authenticator
// (Tests/interop/test_shim_parity.py runs the comparison).
return (function () {
  'use strict';
  if (Object.prototype.hasOwnProperty.call(window, '__credemuShim')) return undefined;
  const config = __credemuConfig;
  const debug = config.debug ? { log: [] } : null;
  Object.defineProperty(window, '__credemuShim', { value: debug || Object.freeze({}), configurable: true });

  // ---- what the page may replace later: captured now ----
  const nativeFetch = window.fetch.bind(window);
  const consoleError = console.error.bind(console);
  const consoleWarn = console.warn.bind(console);
  const setTimer = window.setTimeout.bind(window);
  const getRandomValues = crypto.getRandomValues.bind(crypto);
  const jsonStringify = JSON.stringify;
  const jsonParse = JSON.parse;
  const abByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
  const isView = ArrayBuffer.isView;
  const signalAborted = window.AbortSignal && Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted').get;
  const nativeToString = Function.prototype.toString;
  const disguised = new WeakSet();   // our functions, which print as native code

  // ---- Chromium's messages ----
  const NOT_ALLOWED = 'The operation either timed out or was not allowed. See: https://www.w3.org/TR/webauthn-2/#sctn-privacy-considerations-client.';
  const EXCLUDED = 'The user attempted to register an authenticator that contains one of the credentials already registered with the relying party.';
  const PENDING = 'A request is already pending.';
  const UNKNOWN = 'An unknown error occurred while talking to the credential manager.';
  const BAD_RP_ID = 'The relying party ID is not a registrable domain suffix of, nor equal to the current domain.';
  const BAD_RP_ID_FETCHED = BAD_RP_ID + ' Subsequently, an attempt to fetch the .well-known/webauthn resource of the claimed RP ID failed.';
  const INVALID_DOMAIN = 'This is an invalid domain.';
  const ONLY_ONE_TYPE = "Only exactly one of 'password', 'federated', and 'publicKey' credential types are currently supported.";
  const PARAMS_MISSING = 'Required parameters missing in `options.publicKey`.';
  const APPID_IN_CREATE = "The 'appid' extension is only valid when requesting an assertion for a pre-existing credential that was registered using the legacy FIDO U2F API.";
  const PROTECTION_INCONSISTENT = 'Requested protection policy is inconsistent or incongruent with other requested parameters.';
  const MISSING_DEFAULT_ALGORITHMS = 'publicKey.pubKeyCredParams is missing at least one of the default algorithm identifiers: ES256 and RS256. This can result in registration failures on incompatible authenticators. See https://chromium.googlesource.com/chromium/src/+/main/content/browser/webauth/pub_key_cred_params.md for details';
  function executing(operation, iface) { return "Failed to execute '" + operation + "' on '" + iface + "': "; }
  function domError(message, name) { return new DOMException(message, name); }
  function withDetail(error, detail) {
    try { Object.defineProperty(error, 'credemu', { value: Object.freeze(detail), configurable: true }); } catch (e) { /* frozen */ }
    return error;
  }

  /** A driver's binding (`fillBinding`, `channel`: made by the client's install_shim), taken off `window` before
   *  the page's scripts run, so the page never finds it; null when the configuration names none or it is missing. */
  function takeBinding(name) {
    if (!name || typeof window[name] !== 'function') return null;
    const binding = window[name];
    try { delete window[name]; } catch (e) { /* a binding the driver made unremovable stays */ }
    return binding;
  }

  // ---- base64url (Chromium's rules: the URL alphabet, no padding, no whitespace) ----
  function bytesOf(source) {
    if (isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    return new Uint8Array(source);
  }
  // By tables rather than btoa/atob: the page may replace those, and they cost a string and two regular
  // expressions a field.
  const BASE64URL = new Uint8Array(64);
  const BASE64URL_VALUE = new Uint8Array(128);
  'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.split('').forEach(function (c, i) { BASE64URL[i] = c.charCodeAt(0); BASE64URL_VALUE[c.charCodeAt(0)] = i; });
  function encode(source) {
    const bytes = bytesOf(source), n = bytes.length;
    const codes = new Uint16Array(Math.ceil(n * 4 / 3));
    let i = 0, j = 0;
    for (; i + 2 < n; i += 3) {
      const v = bytes[i] << 16 | bytes[i + 1] << 8 | bytes[i + 2];
      codes[j++] = BASE64URL[v >> 18]; codes[j++] = BASE64URL[v >> 12 & 63]; codes[j++] = BASE64URL[v >> 6 & 63]; codes[j++] = BASE64URL[v & 63];
    }
    if (i < n) {
      const v = bytes[i] << 16 | (i + 1 < n ? bytes[i + 1] << 8 : 0);
      codes[j++] = BASE64URL[v >> 18]; codes[j++] = BASE64URL[v >> 12 & 63];
      if (i + 1 < n) codes[j++] = BASE64URL[v >> 6 & 63];
    }
    let text = '';
    for (let k = 0; k < j; k += 0x8000) text += String.fromCharCode.apply(null, codes.subarray(k, k + 0x8000));
    return text;
  }
  function isBase64URL(text) { return typeof text === 'string' && /^[A-Za-z0-9_-]*$/.test(text) && text.length % 4 !== 1; }
  /** The bytes of a base64url string as an ArrayBuffer, or null when it is not base64url. Trailing bits of a
   *  partial group are dropped, as atob drops them. */
  function decode(text) {
    if (!isBase64URL(text)) return null;
    const n = text.length, out = new Uint8Array(n * 3 >> 2);
    let i = 0, j = 0;
    for (; i + 3 < n; i += 4) {
      const v = BASE64URL_VALUE[text.charCodeAt(i)] << 18 | BASE64URL_VALUE[text.charCodeAt(i + 1)] << 12 | BASE64URL_VALUE[text.charCodeAt(i + 2)] << 6 | BASE64URL_VALUE[text.charCodeAt(i + 3)];
      out[j++] = v >> 16; out[j++] = v >> 8 & 255; out[j++] = v & 255;
    }
    if (i + 1 < n) {
      const v = BASE64URL_VALUE[text.charCodeAt(i)] << 18 | BASE64URL_VALUE[text.charCodeAt(i + 1)] << 12 | (i + 2 < n ? BASE64URL_VALUE[text.charCodeAt(i + 2)] << 6 : 0);
      out[j++] = v >> 16;
      if (i + 2 < n) out[j++] = v >> 8 & 255;
    }
    return out.buffer;
  }
  /** 128 random bits as base64url, from a pool refilled 64 ids at a time (one `getRandomValues` call, not one an id). */
  const randomPool = new Uint8Array(1024);
  let randomAt = randomPool.length;
  function randomId() {
    if (randomAt === randomPool.length) { getRandomValues(randomPool); randomAt = 0; }
    randomAt += 16;
    return encode(randomPool.subarray(randomAt - 16, randomAt));
  }

  // ---- WebIDL conversions, as Chromium's bindings make them ----
  // Each converter takes the value and the message prefix of where it is read ("Failed to execute ...: Failed to
  // read the 'x' property from 'D': "). Errors thrown by the page's own code (a getter, a toString) pass unchanged.
  /** Whether `value` is an ArrayBuffer, by its internal slot: the brand check of `byteLength`'s getter, which throws
   *  for anything else. Ask `isView` first where a view is likely: a throw costs far more than the check. */
  function isArrayBuffer(value) {
    try { abByteLength.call(value); return true; } catch (e) { return false; }
  }
  function isObject(value) { return value !== null && (typeof value === 'object' || typeof value === 'function'); }
  const DOMString = {
    convert: function (value, at) {
      if (typeof value === 'symbol') throw new TypeError(at + 'Cannot convert a Symbol value to a string');
      return String(value);
    }
  };
  const USVString = {
    convert: function (value, at) {
      const text = DOMString.convert(value, at);
      return text.toWellFormed ? text.toWellFormed() : text;
    }
  };
  const Any = { convert: function (value) { return value; } };
  const Boolean_ = { convert: function (value) { return !!value; } };
  function toNumber(value, at) {
    if (typeof value === 'symbol') throw new TypeError(at + 'Cannot convert a Symbol value to a number');
    if (typeof value === 'bigint') throw new TypeError(at + 'Cannot convert a BigInt value to a number');
    return +value;
  }
  const Long = { convert: function (value, at) { return toNumber(value, at) | 0; } };
  const UnsignedLong = { convert: function (value, at) { return toNumber(value, at) >>> 0; } };
  const BufferSource = {
    convert: function (value, at) {
      if (isView(value) || isArrayBuffer(value)) return bytesOf(value).slice().buffer;  // a copy, as WebIDL takes
      throw new TypeError(at + "The provided value is not of type '(ArrayBuffer or ArrayBufferView)'.");
    }
  };
  const AbortSignalType = {
    convert: function (value, at) {
      try { if (signalAborted) { signalAborted.call(value); return value; } } catch (e) { /* not a signal */ }
      throw new TypeError(at + "Failed to convert value to 'AbortSignal'.");
    }
  };
  function Enum(name, values) {
    return {
      convert: function (value, at) {
        const text = DOMString.convert(value, at);
        if (values.indexOf(text) < 0) throw new TypeError(at + "The provided value '" + text + "' is not a valid enum value of type " + name + '.');
        return text;
      }
    };
  }
  function Sequence(of) {
    return {
      convert: function (value, at) {
        if (!isObject(value)) throw new TypeError(at + 'The provided value cannot be converted to a sequence.');
        const method = value[Symbol.iterator];
        if (typeof method !== 'function') throw new TypeError(at + 'The object must have a callable @@iterator property.');
        const out = [];
        const iterator = method.call(value);
        for (let step = iterator.next(); !step.done; step = iterator.next()) out.push(of.convert(step.value, at));
        return out;
      }
    };
  }
  function Record(of) {
    return {
      convert: function (value, at) {
        if (!isObject(value)) throw new TypeError(at + 'Only objects can be converted to record<K,V> types');
        const out = {};
        Reflect.ownKeys(value).forEach(function (key) {
          if (typeof key !== 'string') return;
          const descriptor = Reflect.getOwnPropertyDescriptor(value, key);
          if (descriptor && descriptor.enumerable) out[USVString.convert(key, at)] = of.convert(value[key], at);
        });
        return out;
      }
    };
  }
  // members: [name, type, {required, fallback}] in WebIDL order (lexicographic, inherited members first).
  function Dictionary(name, members, parent) {
    const own = members.map(function (m) { return { name: m[0], type: m[1], required: !!(m[2] && m[2].required), fallback: m[2] && m[2].fallback, owner: name }; });
    const all = (parent ? parent.members : []).concat(own);
    const hasRequired = all.some(function (m) { return m.required; });
    return {
      name: name,
      members: all,
      /** The dictionary's members that the value has; `defaults` adds the IDL defaults of the missing ones. */
      convert: function (value, at, defaults) {
        // Chromium takes undefined or null as an empty dictionary only when the dictionary has no required member.
        if (value === undefined || value === null ? hasRequired : !isObject(value)) throw new TypeError(at + "The provided value is not of type '" + name + "'.");
        const out = {};
        all.forEach(function (m) {
          const member = value === undefined || value === null ? undefined : value[m.name];
          const inner = at + "Failed to read the '" + m.name + "' property from '" + m.owner + "': ";
          if (member !== undefined) out[m.name] = m.type.convert(member, inner, defaults);
          else if (m.required) throw new TypeError(inner + 'Required member is undefined.');
          else if (defaults && m.fallback !== undefined) out[m.name] = jsonParse(jsonStringify(m.fallback));
        });
        return out;
      }
    };
  }
  /** A value as the dictionary type gives it back to script: its present members in IDL order, defaults added. */
  function emit(type, value) {
    if (type.members) {
      const out = {};
      type.members.forEach(function (m) {
        if (value[m.name] !== undefined) out[m.name] = emit(m.type, value[m.name]);
        else if (m.fallback !== undefined) out[m.name] = jsonParse(jsonStringify(m.fallback));
      });
      return out;
    }
    if (type.of && Array.isArray(value)) return value.map(function (v) { return emit(type.of, v); });
    if (type.values && isObject(value)) {
      const out = {};
      Object.keys(value).forEach(function (k) { out[k] = emit(type.values, value[k]); });
      return out;
    }
    return value;
  }
  function seq(of) { const s = Sequence(of); s.of = of; return s; }
  function record(of) { const r = Record(of); r.values = of; return r; }
  const required = { required: true };

  // The dictionaries of Chromium 156 (read with a Proxy: members and their order are what its bindings read).
  const Entity = Dictionary('PublicKeyCredentialEntity', [['name', DOMString, required]]);
  const RpEntity = Dictionary('PublicKeyCredentialRpEntity', [['id', DOMString]], Entity);
  const UserEntity = Dictionary('PublicKeyCredentialUserEntity', [['displayName', DOMString, required], ['id', BufferSource, required]], Entity);
  const Parameters = Dictionary('PublicKeyCredentialParameters', [['alg', Long, required], ['type', DOMString, required]]);
  const Descriptor = Dictionary('PublicKeyCredentialDescriptor', [['id', BufferSource, required], ['transports', seq(DOMString)], ['type', DOMString, required]]);
  const Selection = Dictionary('AuthenticatorSelectionCriteria', [['authenticatorAttachment', DOMString], ['requireResidentKey', Boolean_, { fallback: false }],
    ['residentKey', DOMString], ['userVerification', DOMString]]);
  const LargeBlob = Dictionary('AuthenticationExtensionsLargeBlobInputs', [['read', Boolean_], ['support', DOMString], ['write', BufferSource]]);
  const PRFValues = Dictionary('AuthenticationExtensionsPRFValues', [['first', BufferSource, required], ['second', BufferSource]]);
  const PRFInputs = Dictionary('AuthenticationExtensionsPRFInputs', [['eval', PRFValues], ['evalByCredential', record(PRFValues)]]);
  const Extensions = Dictionary('AuthenticationExtensionsClientInputs', [['appid', USVString], ['appidExclude', USVString], ['credBlob', BufferSource],
    ['credProps', Boolean_, { fallback: false }], ['credentialProtectionPolicy', DOMString], ['enforceCredentialProtectionPolicy', Boolean_, { fallback: false }],
    ['getCredBlob', Boolean_], ['hmacCreateSecret', Boolean_], ['largeBlob', LargeBlob], ['minPinLength', Boolean_], ['prf', PRFInputs], ['uvm', Boolean_]]);
  const CreationOptions = Dictionary('PublicKeyCredentialCreationOptions', [['attestation', DOMString, { fallback: 'none' }], ['authenticatorSelection', Selection],
    ['challenge', BufferSource, required], ['excludeCredentials', seq(Descriptor), { fallback: [] }], ['extensions', Extensions],
    ['hints', seq(DOMString), { fallback: [] }], ['pubKeyCredParams', seq(Parameters), required], ['rp', RpEntity, required],
    ['timeout', UnsignedLong], ['user', UserEntity, required]]);
  const RequestOptions = Dictionary('PublicKeyCredentialRequestOptions', [['allowCredentials', seq(Descriptor), { fallback: [] }],
    ['challenge', BufferSource, required], ['extensions', Extensions], ['hints', seq(DOMString), { fallback: [] }], ['rpId', DOMString],
    ['timeout', UnsignedLong], ['userVerification', DOMString, { fallback: 'preferred' }]]);
  // CredentialMediationRequirement. "immediate" (Chrome's kWebAuthnImmediateGet) is a value only where both the
  // provider's browser has it (`immediateMediation` in the configuration: immediateGet.sinceBrowserVersion and the
  // profile's browser version) and the browser the page runs in does; elsewhere it is the TypeError that browser
  // raises (Debian's Chromium 156 and Firefox ESR 153 have no such value, measured).
  /**
   * Whether the real browser's CredentialRequestOptions takes mediation "immediate", asked once, before the page's
   * scripts run, with nothing asked of any authenticator: its own get() with an already-aborted signal. Its
   * bindings read the members in order (Chromium: digital, federated, identity, mediation, otp, ...; Gecko:
   * mediation, publicKey, signal) and stop at the first that fails to convert, so the signal is read only when
   * "immediate" converted; then the request rejects at once with the signal's AbortError, else with the enum's
   * TypeError, and either rejection is caught here.
   */
  function browserHasImmediateMediation() {
    const Container = window.CredentialsContainer;
    const get = Container && Container.prototype.get;
    if (typeof get !== 'function' || !navigator.credentials || !window.AbortController) return false;
    const stop = new AbortController();
    stop.abort();
    let converted = false;
    try {
      const request = get.call(navigator.credentials, { mediation: 'immediate', get signal() { converted = true; return stop.signal; } });
      if (request && typeof request.catch === 'function') request.catch(function () { /* the probe's own rejection */ });
    } catch (e) { return false; }
    return converted;
  }
  const immediateMediation = config.immediateMediation === true && browserHasImmediateMediation();
  const Mediation = Enum('CredentialMediationRequirement', ['silent', 'optional', 'conditional', 'required'].concat(immediateMediation ? ['immediate'] : []));
  const CredentialCreationOptions = Dictionary('CredentialCreationOptions', [['digital', Any], ['federated', Any], ['mediation', Mediation],
    ['password', Any], ['publicKey', CreationOptions], ['signal', AbortSignalType]]);
  const CredentialRequestOptions = Dictionary('CredentialRequestOptions', [['digital', Any], ['federated', Any], ['identity', Any],
    ['mediation', Mediation], ['otp', Any], ['password', Boolean_], ['publicKey', RequestOptions], ['signal', AbortSignalType], ['uiMode', Any]]);
  // The JSON forms (WebAuthn L3 §5.1.8, §5.1.9): rp and pubKeyCredParams use the dictionaries above, as in L3.
  const UserEntityJSON = Dictionary('PublicKeyCredentialUserEntityJSON', [['displayName', DOMString, required], ['id', DOMString, required], ['name', DOMString, required]]);
  const DescriptorJSON = Dictionary('PublicKeyCredentialDescriptorJSON', [['id', DOMString, required], ['transports', seq(DOMString)], ['type', DOMString, required]]);
  const LargeBlobJSON = Dictionary('AuthenticationExtensionsLargeBlobInputsJSON', [['read', Boolean_], ['support', DOMString], ['write', DOMString]]);
  const PRFValuesJSON = Dictionary('AuthenticationExtensionsPRFValuesJSON', [['first', DOMString, required], ['second', DOMString]]);
  const PRFInputsJSON = Dictionary('AuthenticationExtensionsPRFInputsJSON', [['eval', PRFValuesJSON], ['evalByCredential', record(PRFValuesJSON)]]);
  const ExtensionsJSON = Dictionary('AuthenticationExtensionsClientInputsJSON', [['appid', USVString], ['appidExclude', USVString], ['credBlob', DOMString],
    ['credProps', Boolean_], ['credentialProtectionPolicy', DOMString], ['enforceCredentialProtectionPolicy', Boolean_], ['getCredBlob', Boolean_],
    ['hmacCreateSecret', Boolean_], ['largeBlob', LargeBlobJSON], ['minPinLength', Boolean_], ['prf', PRFInputsJSON]]);
  const CreationOptionsJSON = Dictionary('PublicKeyCredentialCreationOptionsJSON', [['attestation', DOMString], ['authenticatorSelection', Selection],
    ['challenge', DOMString, required], ['excludeCredentials', seq(DescriptorJSON)], ['extensions', ExtensionsJSON], ['hints', seq(DOMString)],
    ['pubKeyCredParams', seq(Parameters), required], ['rp', RpEntity, required], ['timeout', UnsignedLong], ['user', UserEntityJSON, required]]);
  const RequestOptionsJSON = Dictionary('PublicKeyCredentialRequestOptionsJSON', [['allowCredentials', seq(DescriptorJSON)], ['challenge', DOMString, required],
    ['extensions', ExtensionsJSON], ['hints', seq(DOMString)], ['rpId', DOMString], ['timeout', UnsignedLong], ['userVerification', DOMString]]);
  const UnknownCredentialOptions = Dictionary('UnknownCredentialOptions', [['credentialId', DOMString, required], ['rpId', DOMString, required]]);
  const AllAcceptedCredentialsOptions = Dictionary('AllAcceptedCredentialsOptions', [['allAcceptedCredentialIds', seq(DOMString), required],
    ['rpId', DOMString, required], ['userId', DOMString, required]]);
  const CurrentUserDetailsOptions = Dictionary('CurrentUserDetailsOptions', [['displayName', DOMString, required], ['name', DOMString, required],
    ['rpId', DOMString, required], ['userId', DOMString, required]]);

  // ---- the options as Chromium's renderer checks them, and as the server reads them ----
  const KNOWN = {
    attachment: ['platform', 'cross-platform'],
    residentKey: ['discouraged', 'preferred', 'required'],
    userVerification: ['required', 'preferred', 'discouraged'],
    attestation: ['none', 'indirect', 'direct', 'enterprise'],
    transports: ['usb', 'nfc', 'ble', 'smart-card', 'hybrid', 'internal'],
    hints: ['security-key', 'client-device', 'hybrid'],
    protection: ['userVerificationOptional', 'userVerificationOptionalWithCredentialIDList', 'userVerificationRequired'],
    largeBlobSupport: ['required', 'preferred']
  };
  function descriptorsJSON(list) {
    return list.filter(function (d) { return d.type === 'public-key'; }).map(function (d) {
      const out = { type: d.type, id: encode(d.id) };
      if (d.transports) out.transports = d.transports.filter(function (t) { return KNOWN.transports.indexOf(t) >= 0; });
      return out;
    });
  }
  function extensionsJSON(ext) {
    const out = {};
    Object.keys(ext).forEach(function (key) {
      const value = ext[key];
      if (key === 'credBlob') out[key] = encode(value);
      else if (key === 'largeBlob') {
        out[key] = {};
        if (value.support !== undefined && KNOWN.largeBlobSupport.indexOf(value.support) >= 0) out[key].support = value.support;
        if (value.read !== undefined) out[key].read = value.read;
        if (value.write !== undefined) out[key].write = encode(value.write);
      } else if (key === 'prf') {
        const values = function (v) { const o = { first: encode(v.first) }; if (v.second !== undefined) o.second = encode(v.second); return o; };
        out[key] = {};
        if (value.eval) out[key].eval = values(value.eval);
        if (value.evalByCredential) {
          out[key].evalByCredential = {};
          Object.keys(value.evalByCredential).forEach(function (id) { out[key].evalByCredential[id] = values(value.evalByCredential[id]); });
        }
      } else out[key] = value;
    });
    return out;
  }
  function validURL(text) { try { new URL(text); return true; } catch (e) { return false; } }
  // Blink's bounds (authentication_credentials_container.cc): kPublicKeyCredentialDescriptorListMaxSize, kMaxLargeBlobSize.
  const MAX_DESCRIPTORS = 64, MAX_LARGE_BLOB = 2048;
  /**
   * Transient user activation as Blink reads it for an immediate get, which consumes it
   * (LocalFrame::ConsumeTransientUserActivation). A page's script cannot consume the browser's, so the shim remembers
   * what it consumed until the next activation-triggering input event (HTML's: keydown, mousedown, pointerdown,
   * pointerup, touchend).
   */
  const activation = (function () {
    let consumed = false;
    ['keydown', 'mousedown', 'pointerdown', 'pointerup', 'touchend'].forEach(function (type) {
      window.addEventListener(type, function (event) { if (event.isTrusted) consumed = false; }, true);
    });
    return {
      consume: function () {
        const active = !!(navigator.userActivation && navigator.userActivation.isActive) && !consumed;
        if (active) consumed = true;
        return active;
      }
    };
  })();
  /** The renderer's checks for create(), after the conversion and the abort check; returns the options JSON. */
  function creationJSON(pk) {
    const ext = pk.extensions || {};
    const selection = pk.authenticatorSelection || {};
    // Blink's own checks (`blinkChecks`: a provider Chrome asks itself, not an extension whose script runs first).
    if (config.blinkChecks && (pk.excludeCredentials || []).length > MAX_DESCRIPTORS) throw domError('The `excludeCredentials` attribute exceeds the maximum allowed size (64).', 'RangeError');
    if (ext.appid !== undefined) throw domError(APPID_IN_CREATE, 'NotSupportedError');
    // Blink's next check: a non-empty appidExclude must parse as a URL (KURL), before the browser checks its domain.
    if (ext.appidExclude && !validURL(ext.appidExclude)) throw domError('The `appidExclude` extension value is neither empty/null nor a valid URL.', 'SyntaxError');
    if (ext.largeBlob && ext.largeBlob.read !== undefined) throw domError("The 'largeBlob' extension's 'read' parameter is only valid when requesting an assertion", 'NotSupportedError');
    if (ext.largeBlob && ext.largeBlob.write !== undefined) throw domError("The 'largeBlob' extension's 'write' parameter is only valid when requesting an assertion", 'NotSupportedError');
    if (ext.prf && ext.prf.evalByCredential !== undefined) throw domError("The 'evalByCredential' field cannot be set when creating a credential.", 'NotSupportedError');

    // Chromium's conversion of the options for the browser process: unknown values of the DOMString "enums" are
    // ignored with its console warnings, parameters and descriptors of an unknown type are dropped; when nothing
    // is left of a non-empty pubKeyCredParams, or the protection policy is unknown, the conversion fails.
    const out = { rp: { name: pk.rp.name }, user: { id: encode(pk.user.id), name: pk.user.name, displayName: pk.user.displayName } };
    if (pk.rp.id !== undefined) out.rp.id = pk.rp.id;   // the string "null" stays "null", to fail the RP ID check
    out.challenge = encode(pk.challenge);
    const params = pk.pubKeyCredParams.filter(function (p) { return p.type === 'public-key'; });
    out.pubKeyCredParams = params.map(function (p) { return { type: p.type, alg: p.alg }; });
    if (pk.timeout !== undefined) out.timeout = pk.timeout;
    if (pk.excludeCredentials !== undefined) out.excludeCredentials = descriptorsJSON(pk.excludeCredentials);
    if (pk.authenticatorSelection !== undefined) {
      out.authenticatorSelection = {};
      [['authenticatorAttachment', KNOWN.attachment], ['userVerification', KNOWN.userVerification], ['residentKey', KNOWN.residentKey]].forEach(function (m) {
        const value = selection[m[0]];
        if (value === undefined) return;
        if (m[1].indexOf(value) >= 0) out.authenticatorSelection[m[0]] = value;
        else consoleWarn('Ignoring unknown publicKey.authenticatorSelection.' + m[0] + ' value');
      });
      if (selection.requireResidentKey !== undefined && selection.requireResidentKey !== false) out.authenticatorSelection.requireResidentKey = true;
    }
    if (pk.attestation !== undefined) {
      if (KNOWN.attestation.indexOf(pk.attestation) >= 0) out.attestation = pk.attestation;
      else consoleWarn('Ignoring unknown publicKey.attestation value');
    }
    if (pk.hints !== undefined) out.hints = pk.hints.filter(function (h) { return KNOWN.hints.indexOf(h) >= 0; });
    if (pk.extensions !== undefined) out.extensions = extensionsJSON(ext);
    // The warning looks at the list as given, whatever the types.
    const algs = pk.pubKeyCredParams.map(function (p) { return p.alg; });
    if (algs.length > 0 && (algs.indexOf(-7) < 0 || algs.indexOf(-257) < 0)) consoleWarn(MISSING_DEFAULT_ALGORITHMS);
    if ((params.length === 0 && pk.pubKeyCredParams.length > 0) ||
        (ext.credentialProtectionPolicy !== undefined && KNOWN.protection.indexOf(ext.credentialProtectionPolicy) < 0)) throw domError(PARAMS_MISSING, 'NotSupportedError');

    // After the conversion to mojo, Blink's bound on the handle (elsewhere the server's spec rule answers).
    if (config.blinkChecks && pk.user.id.byteLength > 64) throw new TypeError('User handle exceeds 64 bytes.');
    // credProtect: what Chromium refuses as inconsistent (checked against it case by case).
    const residentKey = KNOWN.residentKey.indexOf(selection.residentKey) >= 0 ? selection.residentKey : (selection.requireResidentKey ? 'required' : 'discouraged');
    const userVerification = KNOWN.userVerification.indexOf(selection.userVerification) >= 0 ? selection.userVerification : 'preferred';
    const policy = ext.credentialProtectionPolicy, enforce = !!ext.enforceCredentialProtectionPolicy;
    if ((enforce && policy === undefined) || (policy === 'userVerificationOptional' && (enforce || residentKey === 'discouraged')) ||
        (policy === 'userVerificationRequired' && userVerification !== 'required')) throw domError(PROTECTION_INCONSISTENT, 'NotSupportedError');
    if (ext.appidExclude !== undefined && location.protocol !== 'https:') throw domError(INVALID_DOMAIN, 'SecurityError');
    return out;
  }
  /**
   * The renderer's checks for get(), after the conversion and the abort check; returns the options JSON. Blink's own
   * (`blinkChecks`) in its order: immediate mediation's allow list and user activation (consumed), the allow list's
   * bound, credProps, the blob's 2 KiB.
   */
  function requestJSON(pk, mediation) {
    const ext = pk.extensions || {};
    const allow = pk.allowCredentials || [];
    if (config.blinkChecks) {
      if (mediation === 'immediate') {
        if (allow.length > 0) throw domError('An allowCredentials is not allowed with immediate mediation.', 'NotAllowedError');
        if (!activation.consume()) throw domError('A user activation is required to request immediate credentials.', 'NotAllowedError');
      }
      if (allow.length > MAX_DESCRIPTORS) throw domError('The `allowCredentials` attribute exceeds the maximum allowed size (64).', 'RangeError');
      if (ext.credProps) throw domError("The 'credProps' extension is only valid when creating a credential", 'NotSupportedError');
    }
    if (ext.largeBlob) {
      if (ext.largeBlob.support !== undefined) throw domError("The 'largeBlob' extension's 'support' parameter is only valid when creating a credential", 'NotSupportedError');
      if (config.blinkChecks && ext.largeBlob.write !== undefined && ext.largeBlob.write.byteLength > MAX_LARGE_BLOB) throw domError("The 'largeBlob' extension's 'write' parameter exceeds the maximum allowed size (2kb)", 'NotSupportedError');
      if (ext.largeBlob.read && ext.largeBlob.write !== undefined) throw domError("Only one of the 'largeBlob' extension's 'read' and 'write' parameters is allowed at a time", 'NotSupportedError');
      if (ext.largeBlob.write !== undefined && allow.length !== 1) throw domError("The 'largeBlob' extension's 'write' parameter can only be used with a single credential present on 'allowCredentials'", 'NotSupportedError');
    }
    if (ext.prf && ext.prf.evalByCredential) {
      const keys = Object.keys(ext.prf.evalByCredential);
      if (keys.length > 0 && allow.length === 0) throw domError("'prf' extension has 'evalByCredential' with an empty allow list", 'NotSupportedError');
      const allowed = allow.map(function (d) { return encode(d.id); });
      keys.forEach(function (key) {
        const bytes = decode(key);
        if (bytes === null) throw domError("'prf' extension contains invalid base64url data in 'evalByCredential'", 'SyntaxError');
        if (allowed.indexOf(encode(bytes)) < 0) throw domError("'prf' extension contains 'evalByCredential' key that doesn't match any in allowedCredentials", 'SyntaxError');
      });
    }
    if (ext.appid !== undefined && location.protocol !== 'https:') throw domError(INVALID_DOMAIN, 'SecurityError');
    const out = { challenge: encode(pk.challenge) };
    if (pk.timeout !== undefined) out.timeout = pk.timeout;
    if (pk.rpId !== undefined) out.rpId = pk.rpId;
    if (pk.allowCredentials !== undefined) out.allowCredentials = descriptorsJSON(pk.allowCredentials);
    if (pk.userVerification !== undefined) {
      if (KNOWN.userVerification.indexOf(pk.userVerification) >= 0) out.userVerification = pk.userVerification;
      else consoleWarn('Ignoring unknown publicKey.userVerification value');
    }
    if (pk.hints !== undefined) out.hints = pk.hints.filter(function (h) { return KNOWN.hints.indexOf(h) >= 0; });
    if (pk.extensions !== undefined) out.extensions = extensionsJSON(ext);
    return out;
  }

  // ---- parseCreationOptionsFromJSON / parseRequestOptionsFromJSON (L3 §5.1.8, §5.1.9) ----
  function decoder(at) {
    return function (text, where) {
      const bytes = decode(text);
      if (bytes === null) throw domError(at + where, 'EncodingError');
      return bytes;
    };
  }
  function extensionsFromJSON(ext, bytes) {
    const out = Object.assign({}, ext);
    if (ext.largeBlob) {
      out.largeBlob = Object.assign({}, ext.largeBlob);
      if (ext.largeBlob.write !== undefined) out.largeBlob.write = bytes(ext.largeBlob.write, "'extensions.largeBlob.write' contains invalid base64url data");
    }
    if (ext.credBlob !== undefined) out.credBlob = bytes(ext.credBlob, "'extensions.credBlob' contains invalid base64url data");
    if (ext.prf) {
      out.prf = {};
      const values = function (v, where) {
        const o = { first: bytes(v.first, where) };
        if (v.second !== undefined) o.second = bytes(v.second, where);
        return o;
      };
      if (ext.prf.eval) out.prf.eval = values(ext.prf.eval, "'extensions.prf.eval' contains invalid base64url data");
      if (ext.prf.evalByCredential) {
        out.prf.evalByCredential = {};
        Object.keys(ext.prf.evalByCredential).forEach(function (id) {
          out.prf.evalByCredential[id] = values(ext.prf.evalByCredential[id], "'extensions.prf.evalByCredential' contains invalid base64url data");
        });
      }
    }
    return out;
  }
  function descriptorsFromJSON(list, bytes, field) {
    return list.map(function (d) {
      const out = Object.assign({}, d);
      out.id = bytes(d.id, "'" + field + "' contains PublicKeyCredentialDescriptorJSON with invalid base64url data in 'id'");
      return out;
    });
  }
  const statics = {
    parseCreationOptionsFromJSON(options) {
      const at = executing('parseCreationOptionsFromJSON', 'PublicKeyCredential');
      if (arguments.length < 1) throw new TypeError(at + '1 argument required, but only 0 present.');
      const json = CreationOptionsJSON.convert(options, at, false);
      const bytes = decoder(at);
      const out = Object.assign({}, json);
      out.user = { name: json.user.name, displayName: json.user.displayName, id: bytes(json.user.id, "'user.id' contains invalid base64url data") };
      out.challenge = bytes(json.challenge, "'challenge' contains invalid base64url data");
      if (json.excludeCredentials) out.excludeCredentials = descriptorsFromJSON(json.excludeCredentials, bytes, 'excludeCredentials');
      if (json.extensions) out.extensions = extensionsFromJSON(json.extensions, bytes);
      return emit(CreationOptions, out);
    },
    parseRequestOptionsFromJSON(options) {
      const at = executing('parseRequestOptionsFromJSON', 'PublicKeyCredential');
      if (arguments.length < 1) throw new TypeError(at + '1 argument required, but only 0 present.');
      const json = RequestOptionsJSON.convert(options, at, false);
      const bytes = decoder(at);
      const out = Object.assign({}, json);
      out.challenge = bytes(json.challenge, "'challenge' contains invalid base64url data");
      if (json.allowCredentials) out.allowCredentials = descriptorsFromJSON(json.allowCredentials, bytes, 'allowCredentials');
      if (json.extensions) out.extensions = extensionsFromJSON(json.extensions, bytes);
      return emit(RequestOptions, out);
    }
  };

  // ---- the interfaces: the page's own where they exist (so instanceof holds), made as Chromium makes them where not ----
  // An interface the engine lacks is made with the engine's own bindings' message: JavaScriptCore's in WebKit
  // (WebKitGTK has no WebAuthn; Safari's interfaces are WebKit's), Chromium's elsewhere.
  const javaScriptCore = navigator.vendor === 'Apple Computer, Inc.';
  function illegalConstructor(name) {
    const f = {
      [name]: function () {
        if (javaScriptCore) throw new TypeError('Illegal constructor');
        throw new TypeError(new.target ? "Failed to construct '" + name + "': Illegal constructor" : 'Illegal constructor');
      }
    }[name];
    disguised.add(f);
    return f;
  }
  function iface(name, parent) {
    if (typeof window[name] === 'function') return window[name];
    const made = illegalConstructor(name);
    Object.defineProperty(made, 'length', { value: 0 });
    made.prototype = Object.create(parent ? parent.prototype : Object.prototype, {
      constructor: { value: made, writable: true, configurable: true },
      [Symbol.toStringTag]: { value: name, configurable: true }
    });
    Object.defineProperty(made, 'prototype', { writable: false, enumerable: false, configurable: false });
    if (parent) Object.setPrototypeOf(made, parent);
    Object.defineProperty(window, name, { value: made, writable: true, configurable: true, enumerable: false });
    return made;
  }
  // Internal state lives here, never on the objects: their own keys stay empty.
  const slots = new WeakMap();
  /** Defines `name` on the interface's prototype: ours for our objects, the original for the browser's own. */
  function attribute(type, name, read) {
    const proto = type.prototype;
    const original = Object.getOwnPropertyDescriptor(proto, name);
    const nativeGet = original && original.get;
    const getter = Object.getOwnPropertyDescriptor({
      get [name]() {
        const slot = slots.get(this);
        if (slot !== undefined && slot.brands.indexOf(type) >= 0) return read(slot);
        if (nativeGet) return nativeGet.call(this);
        throw new TypeError('Illegal invocation');
      }
    }, name).get;
    disguised.add(getter);
    Object.defineProperty(proto, name, { get: getter, set: undefined, enumerable: original ? original.enumerable : true, configurable: true });
  }
  function operation(type, name, run) {
    const proto = type.prototype;
    const original = Object.getOwnPropertyDescriptor(proto, name);
    const nativeMethod = original && typeof original.value === 'function' ? original.value : null;
    const method = {
      [name]() {
        const slot = slots.get(this);
        // A member the provider's own object lacks (slot.absent) is the prototype's: the browser's native method,
        // which refuses an object that is not its own.
        if (slot !== undefined && slot.brands.indexOf(type) >= 0 && !(slot.absent && slot.absent.indexOf(name) >= 0)) return run(slot);
        if (nativeMethod) return nativeMethod.apply(this, arguments);
        throw new TypeError('Illegal invocation');
      }
    }[name];
    disguised.add(method);
    Object.defineProperty(proto, name, { value: method, writable: true, enumerable: original ? original.enumerable : true, configurable: true });
  }
  function sortedCopy(value) {
    if (Array.isArray(value)) return value.map(sortedCopy);
    if (isObject(value)) {
      const out = {};
      Object.keys(value).sort().forEach(function (k) { out[k] = sortedCopy(value[k]); });
      return out;
    }
    return value;
  }
  // Client extension outputs that are ArrayBuffers in getClientExtensionResults() and base64url in toJSON().
  function extensionOutputs(json) {
    const out = sortedCopy(json || {});
    const binary = function (holder, key) { if (holder && typeof holder[key] === 'string') holder[key] = decode(holder[key]) || new ArrayBuffer(0); };
    if (out.prf && out.prf.results) { binary(out.prf.results, 'first'); binary(out.prf.results, 'second'); }
    if (out.largeBlob) binary(out.largeBlob, 'blob');
    binary(out, 'getCredBlob');
    if (out.hmacGetSecret) { binary(out.hmacGetSecret, 'output1'); binary(out.hmacGetSecret, 'output2'); }
    return out;
  }

  let Credential_, PublicKeyCredential_, AuthenticatorResponse_, AuthenticatorAttestationResponse_, AuthenticatorAssertionResponse_;
  function makeCredential(json, kind) {
    const r = json.response || {};
    const response = Object.create((kind === 'create' ? AuthenticatorAttestationResponse_ : AuthenticatorAssertionResponse_).prototype);
    const bytes = function (text) { return decode(text || '') || new ArrayBuffer(0); };
    const responseSlot = { brands: [AuthenticatorResponse_], clientDataJSON: bytes(r.clientDataJSON) };
    if (kind === 'create') {
      responseSlot.brands.push(AuthenticatorAttestationResponse_);
      responseSlot.attestationObject = bytes(r.attestationObject);
      responseSlot.authenticatorData = bytes(r.authenticatorData);
      responseSlot.publicKey = typeof r.publicKey === 'string' ? bytes(r.publicKey) : null;
      responseSlot.publicKeyAlgorithm = r.publicKeyAlgorithm;
      // [[transports]]: unique and in lexicographic order (L3 §5.2.1).
      responseSlot.transports = (r.transports || []).filter(function (t, i, all) { return all.indexOf(t) === i; }).sort();
      // response.getPublicKey absent (keepassxc-browser before #2323): no getPublicKey of the provider's own, so a
      // call reaches the prototype's native one, which throws "Illegal invocation" in Chromium 156.
      if (config.publicKeyMethod === 'absent') responseSlot.absent = ['getPublicKey'];
    } else {
      responseSlot.brands.push(AuthenticatorAssertionResponse_);
      responseSlot.authenticatorData = bytes(r.authenticatorData);
      responseSlot.signature = bytes(r.signature);
      responseSlot.userHandle = typeof r.userHandle === 'string' && r.userHandle !== '' ? bytes(r.userHandle) : null;
    }
    slots.set(response, responseSlot);
    const credential = Object.create(PublicKeyCredential_.prototype);
    slots.set(credential, {
      brands: [Credential_, PublicKeyCredential_], kind: kind, id: json.id, rawId: bytes(json.rawId), response: response, responseSlot: responseSlot,
      authenticatorAttachment: json.authenticatorAttachment === undefined ? null : json.authenticatorAttachment,
      extensionResults: json.clientExtensionResults || {}
    });
    return credential;
  }
  /** RegistrationResponseJSON / AuthenticationResponseJSON (L3 §5.1), with Chromium's member order. */
  function credentialJSON(slot) {
    const r = slot.responseSlot;
    const response = {};
    if (slot.kind === 'create') {
      response.attestationObject = encode(r.attestationObject);
      response.authenticatorData = encode(r.authenticatorData);
      response.clientDataJSON = encode(r.clientDataJSON);
      if (r.publicKey) response.publicKey = encode(r.publicKey);
      response.publicKeyAlgorithm = r.publicKeyAlgorithm;
      response.transports = r.transports.slice();
    } else {
      response.authenticatorData = encode(r.authenticatorData);
      response.clientDataJSON = encode(r.clientDataJSON);
      response.signature = encode(r.signature);
      if (r.userHandle) response.userHandle = encode(r.userHandle);
    }
    const out = {};
    if (slot.authenticatorAttachment !== null) out.authenticatorAttachment = slot.authenticatorAttachment;
    out.clientExtensionResults = sortedCopy(slot.extensionResults);
    out.id = slot.id;
    out.rawId = encode(slot.rawId);
    out.response = response;
    out.type = 'public-key';
    return out;
  }

  // ---- the server ----
  // On a device (/shim.js?device=NAME) everything goes to the device: it routes the ceremonies among its
  // providers, and its passwords to the account that saves and fills them there.
  function serverURL(path) {
    return config.server + (config.device ? '/devices/' + encodeURIComponent(config.device) : '/profiles/' + encodeURIComponent(config.profile)) + path;
  }
  /** A failure to set credemu up (not a WebAuthn outcome): one console line naming the fix, a browser-like error. */
  const reported = new Set();
  function setupFailure(reason, line, detail) {
    if (!reported.has(line)) { reported.add(line); consoleError(line); }
    return withDetail(domError(UNKNOWN, 'NotReadableError'), Object.assign({ reason: reason, message: line }, detail || {}));
  }
  // The page's CSP blocking the shim's requests: Chromium fires securitypolicyviolation on the document right
  // after the blocked fetch fails (before a setTimeout(0) runs), naming the blocked URL and the directive.
  let blockedByPolicy = null;
  document.addEventListener('securitypolicyviolation', function (event) {
    if (typeof event.blockedURI === 'string' && event.blockedURI.indexOf(config.server) === 0) blockedByPolicy = event.effectiveDirective;
  }, true);
  async function unreachable() {
    await new Promise(function (resolve) { setTimeout(resolve, 0); });
    if (blockedByPolicy) {
      return setupFailure('blockedByContentSecurityPolicy', 'credemu: the page\'s Content-Security-Policy (' + blockedByPolicy + ') blocks the shim\'s requests to ' +
        config.server + ': install the shim with the client\'s install_shim, which sends its requests through the driver, or bypass the CSP (CDP Page.setBypassCSP, Playwright bypass_csp=True), or allow ' + config.server + ' in connect-src');
    }
    // A CORS refusal and a server that is not running look alike to fetch; a no-cors request tells them apart.
    let running = false;
    try { await nativeFetch(config.server + '/health', { mode: 'no-cors', cache: 'no-store' }); running = true; } catch (e) { /* not running */ }
    return running
      ? setupFailure('originNotAllowed', 'credemu: the server at ' + config.server + ' does not allow this page: start it with --allow-origin ' + location.origin)
      : setupFailure('serverUnreachable', 'credemu: no credemu server answers at ' + config.server + ': start it (credemu serve --allow-origin ' + location.origin + ') or load the shim from the server that runs');
  }
  // ---- the transport: every request to credemu goes through call() ----
  // Through the page's fetch (subject to the page's CSP and CORS), or, when the configuration names a driver's
  // `channel`, through the driver: one JSON message {id, method, path, body} (the path relative to the shim's
  // profile or device; never an origin: the driver relays it with the frame's origin as the driver knows it) and
  // back {id, status, body}. A promise-returning binding (Playwright exposeBinding) answers with the reply; a
  // one-way binding (CDP Runtime.addBinding) answers nothing, and the driver calls the receiver this function
  // returns, which the served script keeps in a top-level const named by `channelReply` (docs/shim.md, Transport).
  // A paired channel of credemu serve's (`serverChannel`, POST /channels' `paired`): a one-way binding the server
  // added where it reached this document, preferred to the driver's own; its replies come through the server's
  // handoff script, which this shim meets once at the `serverHandoff` slot before the page's scripts run (the
  // second of the two to run takes the other's offer and deletes the slot).
  const driverChannel = takeBinding(config.channel);
  const serverChannel = takeBinding(config.serverChannel);
  if (serverChannel) {
    const offered = Object.getOwnPropertyDescriptor(window, config.serverHandoff);
    if (offered) {
      delete window[config.serverHandoff];
      if (typeof offered.value === 'function') offered.value(receive);
    } else {
      Object.defineProperty(window, config.serverHandoff, { value: receive, configurable: true });
    }
  }
  const channel = serverChannel || driverChannel;
  const channelWaits = new Map();   // request id -> the settle of its promise
  function receive(reply) {
    const id = reply && reply.id;
    const settle = typeof id === 'string' && channelWaits.get(id);
    if (!settle) return false;
    channelWaits.delete(id);
    settle(reply);
    return true;
  }
  function channelFailure() {
    return setupFailure('channelUnavailable', 'credemu: the driver\'s channel to ' + config.server + ' is gone (the driver that installed the shim closed its connection)');
  }
  function viaChannel(method, path, body, options) {
    const id = randomId();
    const signal = options && options.signal;
    return new Promise(function (resolve, reject) {
      const done = function (reply) {
        if (signal) signal.removeEventListener('abort', onAbort);
        if (!reply || typeof reply.status !== 'number') return reject(channelFailure());
        if (reply.status === 0) return reject(setupFailure('serverUnreachable', 'credemu: no credemu server answers at ' + config.server + ': start it (credemu serve --allow-origin ' + location.origin + ') or load the shim from the server that runs'));
        resolve({ status: reply.status, body: reply.body === undefined ? null : reply.body });
      };
      const onAbort = function () {
        channelWaits.delete(id);
        reject(signal.reason);
      };
      if (signal) signal.addEventListener('abort', onAbort);
      let answer;
      try {
        answer = channel(jsonStringify({ id: id, method: method, path: path, body: body === undefined ? null : body }));
      } catch (e) {
        if (signal) signal.removeEventListener('abort', onAbort);
        return reject(channelFailure());
      }
      if (answer && typeof answer.then === 'function') {
        answer.then(function (reply) { if (!signal || !signal.aborted) done(reply); }, function () { if (!signal || !signal.aborted) done(null); });
      } else {
        channelWaits.set(id, done);
      }
    });
  }
  async function viaFetch(method, path, body, options) {
    // X-Credemu-Errors: body asks for refusals as 200 with the status in X-Credemu-Status, so Chromium logs no
    // "Failed to load resource" line for an outcome a real browser would not fetch at all.
    const headers = { 'Content-Type': 'application/json', 'X-Credemu-Errors': 'body' };
    if (config.token) headers.Authorization = 'Bearer ' + config.token;
    let response;
    try {
      response = await nativeFetch(serverURL(path), {
        method: method, headers: headers, body: body === undefined ? undefined : jsonStringify(body), cache: 'no-store', credentials: 'omit',
        keepalive: !!(options && options.keepalive), signal: options && options.signal
      });
    } catch (e) {
      if (options && options.signal && options.signal.aborted) throw e;
      throw await unreachable();
    }
    let json = null;
    try { json = await response.json(); } catch (e) { /* not JSON */ }
    const status = Number(response.headers.get('X-Credemu-Status')) || response.status;
    return { status: status, body: json };
  }
  async function call(method, path, body, options) {
    const result = await (channel ? viaChannel : viaFetch)(method, path, body, options);
    if (debug) debug.log.push({ path: path, status: result.status, body: result.body });
    return result;
  }
  /** The answer of a failed call as the page sees it: a set-up failure, or the WebAuthn error a browser raises. */
  function failure(result, at, rpId) {
    const error = (result.body && result.body.error) || {};
    const status = result.status;
    if (status === 401) return setupFailure('tokenMissing', 'credemu: the server requires its token: load the shim as ' + config.server + '/shim.js?' + (config.device ? 'device=' + encodeURIComponent(config.device) : 'profile=' + encodeURIComponent(config.profile)) + '&token=<token>', { status: status, server: error });
    if (status === 403 && error.name !== 'SecurityError') return setupFailure('originNotAllowed', 'credemu: the server at ' + config.server + ' refuses this page: start it with --allow-origin ' + location.origin, { status: status, server: error });
    if (status === 404 && config.device) return setupFailure('unknownDevice', "credemu: the server has no device '" + config.device + "': create it (credemu device create " + config.device + ' --providers PROFILE,..., or POST /devices) or load /shim.js?device=<name>', { status: status, server: error });
    if (status === 404) return setupFailure('unknownProfile', "credemu: the server has no profile '" + config.profile + "': create it (credemu profile create " + config.profile + ', or POST /profiles) or load /shim.js?profile=<name>', { status: status, server: error });
    if (error.name === 'InvalidPolicyPack' || error.name === 'UnansweredExtension' || error.name === 'InvalidProfileSetting' || error.name === 'InvalidDeviceSetting') return setupFailure('invalidConfiguration', 'credemu: the profile cannot be used: ' + error.message, { status: status, server: error });
    if (!error.name || status >= 500 || status === 413 || status === 415) return setupFailure('serverError', 'credemu: the server answered ' + status + ': ' + (error.message || 'no error body'), { status: status, server: error });
    const detail = Object.assign({}, error, { status: status });
    switch (error.name) {
      case 'TypeError': return withDetail(new TypeError(at + error.message), detail);
      // Chromium does not expose an authenticator's unsupported algorithm: the request fails as not allowed.
      case 'NotSupportedError': return withDetail(domError(error.reason === 'unsupportedAlgorithm' ? NOT_ALLOWED : error.message, error.reason === 'unsupportedAlgorithm' ? 'NotAllowedError' : 'NotSupportedError'), detail);
      case 'NotAllowedError': return withDetail(domError(NOT_ALLOWED, 'NotAllowedError'), detail);
      case 'InvalidStateError': return withDetail(domError(EXCLUDED, 'InvalidStateError'), detail);
      case 'SecurityError': return withDetail(domError(rpIdMessage(rpId), 'SecurityError'), detail);
      case 'UnknownError': return withDetail(domError(UNKNOWN, 'NotReadableError'), detail);
      default: return withDetail(domError(error.message || UNKNOWN, error.name), detail);
    }
  }
  function rpIdMessage(rpId) {
    // Chromium tries the RP ID's .well-known/webauthn (related origins) only for something that can be a host name.
    if (rpId === undefined || rpId === '' || /^[0-9.]+$/.test(rpId) || rpId.indexOf(':') >= 0 || rpId.charAt(0) === '[') return BAD_RP_ID;
    return BAD_RP_ID_FETCHED;
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
  function sleep(ms) { return new Promise(function (resolve) { setTimer(resolve, ms); }); }

  // ---- navigator.credentials: one request at a time, abortable at any moment ----
  const pending = new WeakMap();   // container -> the request in flight
  function tellServerAborted(ceremony) {
    call('POST', '/ceremonies/' + encodeURIComponent(ceremony) + '/abort', {}, { keepalive: true }).catch(function () { /* nothing to do */ });
  }
  function ceremony(container, kind, body, signal, at, rpId) {
    const id = randomId();
    body.ceremony = id;
    const fetchAbort = new AbortController();
    const request = { id: id, abort: null };
    pending.set(container, request);
    const started = Date.now();
    return new Promise(function (resolve, reject) {
      let settled = false;
      const settle = function (ok, value) {
        if (settled) return;
        settled = true;
        if (pending.get(container) === request) pending.delete(container);
        if (signal) signal.removeEventListener('abort', onAbort);
        (ok ? resolve : reject)(value);
      };
      const onAbort = function () {
        settle(false, signal.reason);
        tellServerAborted(id);
        fetchAbort.abort();
      };
      request.abort = onAbort;
      if (signal) signal.addEventListener('abort', onAbort);
      call('POST', '/credentials/' + kind, body, { signal: fetchAbort.signal }).then(async function (result) {
        if (settled) return;
        if (result.status === 200) return settle(true, makeCredential(result.body, kind));
        const error = failure(result, at, rpId);
        // A failure the browser shows only when the request times out (the prompt left unanswered) settles then.
        const after = result.body && result.body.error && result.body.error.settlesAfterMillis;
        if (typeof after === 'number' && after > 0) await sleep(Math.max(0, after - (Date.now() - started)));
        settle(false, error);
      }, function (error) { settle(false, error); });
    });
  }
  window.addEventListener('pagehide', function () {
    const request = navigator.credentials && pending.get(navigator.credentials);
    if (request && request.id) tellServerAborted(request.id);
  });
  const containers = new WeakSet();
  const Container = window.CredentialsContainer;
  const containerProto = Container ? Container.prototype : null;
  const nativeCreate = containerProto && containerProto.create;
  const nativeGet = containerProto && containerProto.get;
  const container = {
    async create() {
      const at = executing('create', 'CredentialsContainer');
      if (!containers.has(this)) throw new TypeError(at + 'Illegal invocation');
      const options = CredentialCreationOptions.convert(arguments[0], at, false);
      if (options.signal && options.signal.aborted) throw options.signal.reason;
      if (options.publicKey === undefined) {
        if (nativeCreate) return nativeCreate.apply(this, arguments);
        throw domError(ONLY_ONE_TYPE, 'NotSupportedError');
      }
      if (options.password !== undefined || options.federated !== undefined || options.digital !== undefined) throw domError(ONLY_ONE_TYPE, 'NotSupportedError');
      const json = creationJSON(options.publicKey);
      if (pending.has(this)) throw domError(PENDING, 'OperationError');
      const body = caller({ options: json, mediation: options.mediation === 'conditional' ? 'conditional' : 'modal' });
      return ceremony(this, 'create', body, options.signal, at, json.rp.id);
    },
    async get() {
      const at = executing('get', 'CredentialsContainer');
      if (!containers.has(this)) throw new TypeError(at + 'Illegal invocation');
      const options = CredentialRequestOptions.convert(arguments[0], at, false);
      if (options.signal && options.signal.aborted) throw options.signal.reason;
      // `password: true` beside publicKey: Chromium 156 answers the public key request alone (the combined
      // password-or-passkey request belongs to "immediate" mediation, which it does not have), and so does this,
      // also where "immediate" is accepted (its password half is not modelled). Other credential types beside
      // publicKey are left out the same way.
      if (options.publicKey === undefined) {
        if (nativeGet) return nativeGet.apply(this, arguments);
        throw domError('No credential type was specified in the request.', 'NotSupportedError');
      }
      const json = requestJSON(options.publicKey, options.mediation);
      if (pending.has(this)) throw domError(PENDING, 'OperationError');
      const body = caller({ options: json });
      // "immediate" (where accepted above) runs the engine's immediate path: NotAllowedError at once without a
      // usable credential, in a private tab or over the rate limit of the caller's top-frame site.
      if (options.mediation !== undefined) body.mediation = options.mediation;
      // A conditional request has no timeout of its own: it waits for the user to pick a passkey (the server
      // answers then), or for the page to abort it.
      return ceremony(this, 'get', body, options.signal, at, json.rpId);
    }
  };

  // ---- PublicKeyCredential static methods ----
  let capabilities = null;
  function loadCapabilities() {
    if (!capabilities) {
      capabilities = call('GET', '/capabilities').then(function (r) {
        if (r.status !== 200) throw failure(r, '', undefined);
        return r.body;
      });
      capabilities.catch(function () { capabilities = null; });
    }
    // Answered after a task, as Chromium answers after asking the browser process.
    return capabilities.then(function (value) { return sleep(0).then(function () { return value; }); });
  }
  function signal(name, type, check, kind) {
    return {
      async [name](options) {
        const at = executing(name, 'PublicKeyCredential');
        if (arguments.length < 1) throw new TypeError(at + '1 argument required, but only 0 present.');
        const converted = type.convert(options, at, false);
        check(converted, function (value, member) { if (!isBase64URL(value)) throw new TypeError(at + 'Invalid base64url string for ' + member + '.'); });
        // A signal is a request like create() and get(): refused while one is pending, and pending itself meanwhile.
        const owner = navigator.credentials;
        if (pending.has(owner)) throw domError(PENDING, 'OperationError');
        const request = { id: null, abort: null };
        pending.set(owner, request);
        try {
          const result = await call('POST', '/signals/' + kind, caller({ options: converted }));
          if (result.status !== 200) throw failure(result, at, converted.rpId);
          return undefined;
        } finally {
          if (pending.get(owner) === request) pending.delete(owner);
        }
      }
    }[name];
  }
  Object.assign(statics, {
    async getClientCapabilities() {
      const caps = (await loadCapabilities()).getClientCapabilities || {};
      // A fresh record each time, its keys in code-unit order as Chromium gives them.
      const out = {};
      Object.keys(caps).sort().forEach(function (key) { out[key] = caps[key]; });
      return out;
    },
    async isConditionalMediationAvailable() { return !!(await loadCapabilities()).isConditionalMediationAvailable; },
    async isUserVerifyingPlatformAuthenticatorAvailable() { return !!(await loadCapabilities()).isUserVerifyingPlatformAuthenticatorAvailable; },
    signalAllAcceptedCredentials: signal('signalAllAcceptedCredentials', AllAcceptedCredentialsOptions, function (o, check) {
      o.allAcceptedCredentialIds.forEach(function (id) { check(id, 'allAcceptedCredentialIds'); });
      check(o.userId, 'userId');
    }, 'accepted'),
    signalCurrentUserDetails: signal('signalCurrentUserDetails', CurrentUserDetailsOptions, function (o, check) { check(o.userId, 'userId'); }, 'details'),
    signalUnknownCredential: signal('signalUnknownCredential', UnknownCredentialOptions, function (o, check) { check(o.credentialId, 'credentialId'); }, 'unknown')
  });

  // ---- install ----
  if (window.isSecureContext) {   // Chromium exposes none of this to an insecure context
    Credential_ = iface('Credential');
    PublicKeyCredential_ = iface('PublicKeyCredential', Credential_);
    AuthenticatorResponse_ = iface('AuthenticatorResponse');
    AuthenticatorAttestationResponse_ = iface('AuthenticatorAttestationResponse', AuthenticatorResponse_);
    AuthenticatorAssertionResponse_ = iface('AuthenticatorAssertionResponse', AuthenticatorResponse_);
    attribute(Credential_, 'id', function (s) { return s.id; });
    attribute(Credential_, 'type', function () { return 'public-key'; });
    attribute(PublicKeyCredential_, 'rawId', function (s) { return s.rawId; });
    attribute(PublicKeyCredential_, 'response', function (s) { return s.response; });
    attribute(PublicKeyCredential_, 'authenticatorAttachment', function (s) { return s.authenticatorAttachment; });
    operation(PublicKeyCredential_, 'getClientExtensionResults', function (s) { return extensionOutputs(s.extensionResults); });
    operation(PublicKeyCredential_, 'toJSON', credentialJSON);
    attribute(AuthenticatorResponse_, 'clientDataJSON', function (s) { return s.clientDataJSON; });
    attribute(AuthenticatorAttestationResponse_, 'attestationObject', function (s) { return s.attestationObject; });
    operation(AuthenticatorAttestationResponse_, 'getTransports', function (s) { return s.transports.slice(); });
    operation(AuthenticatorAttestationResponse_, 'getAuthenticatorData', function (s) { return s.authenticatorData; });
    operation(AuthenticatorAttestationResponse_, 'getPublicKey', function (s) { return s.publicKey; });
    operation(AuthenticatorAttestationResponse_, 'getPublicKeyAlgorithm', function (s) { return s.publicKeyAlgorithm; });
    attribute(AuthenticatorAssertionResponse_, 'authenticatorData', function (s) { return s.authenticatorData; });
    attribute(AuthenticatorAssertionResponse_, 'signature', function (s) { return s.signature; });
    attribute(AuthenticatorAssertionResponse_, 'userHandle', function (s) { return s.userHandle; });
    // A platform without signal methods (Firefox: none in its WebIDL) has none, the browser's own removed too.
    if (config.signalMethods === false) {
      ['signalAllAcceptedCredentials', 'signalCurrentUserDetails', 'signalUnknownCredential'].forEach(function (name) {
        delete statics[name];
        delete PublicKeyCredential_[name];
      });
    }
    // Static operations are own, enumerable, writable properties of the interface object, as WebIDL makes them.
    Object.keys(statics).forEach(function (name) {
      disguised.add(statics[name]);
      Object.defineProperty(PublicKeyCredential_, name, { value: statics[name], writable: true, enumerable: true, configurable: true });
    });

    const ContainerType = iface('CredentialsContainer');
    ['create', 'get'].forEach(function (name) {
      disguised.add(container[name]);
      Object.defineProperty(ContainerType.prototype, name, { value: container[name], writable: true, enumerable: true, configurable: true });
    });
    if (!navigator.credentials) {   // a browser without any (WebKitGTK): one container, as a getter on Navigator.prototype
      // Safari's container (Credential Management Level 1) also has store() and preventSilentAccess(); neither
      // reaches a provider: store() of a public-key credential is refused, preventSilentAccess() resolves.
      const others = {
        async store() {
          if (!containers.has(this)) throw new TypeError('Illegal invocation');
          if (arguments.length < 1) throw new TypeError('Not enough arguments');
          throw domError('Not implemented.', 'NotSupportedError');
        },
        async preventSilentAccess() {
          if (!containers.has(this)) throw new TypeError('Illegal invocation');
          return undefined;
        }
      };
      Object.keys(others).forEach(function (name) {
        if (Object.prototype.hasOwnProperty.call(ContainerType.prototype, name)) return;
        disguised.add(others[name]);
        Object.defineProperty(ContainerType.prototype, name, { value: others[name], writable: true, enumerable: true, configurable: true });
      });
      const made = Object.create(ContainerType.prototype);
      const getter = Object.getOwnPropertyDescriptor({ get credentials() { return made; } }, 'credentials').get;
      disguised.add(getter);
      Object.defineProperty(Navigator.prototype, 'credentials', { get: getter, enumerable: true, configurable: true });
    }
    containers.add(navigator.credentials);

    // Our functions print as the browser's own do.
    const toString = {
      toString() {
        if (disguised.has(this)) return 'function ' + this.name + '() { [native code] }';
        return nativeToString.call(this);
      }
    }.toString;
    disguised.add(toString);
    Object.defineProperty(Function.prototype, 'toString', { value: toString, writable: true, enumerable: false, configurable: true });
  }

  // ---- password autofill, as a password manager fills a sign-in form ----
  function fields(form) {
    const password = form.querySelector('input[type="password"]');
    if (!password) return null;
    const username = form.querySelector('input[autocomplete~="username"], input[type="email"], input[name*="user" i], input[type="text"]');
    return { username: username, password: password };
  }
  // A driver's binding (`fillBinding`, made by the client's install_shim) taken off `window` before the page's
  // scripts run, so the page never finds it: through it the driver inserts the text as the browser's own input
  // does (Playwright `keyboard.insertText`, CDP `Input.insertText`), and the page gets trusted `input` events, and a
  // trusted `change` when the field loses focus, as Chrome's autofill gives (`isTrusted` true). Without one the shim
  // can only set the value and fire untrusted events (`isTrusted` false). Neither makes the field match `:autofill`:
  // only the browser's own autofill sets that state, and no driver protocol reaches it for passwords.
  const driverFill = takeBinding(config.fillBinding);
  const valueSetter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  const focusElement = HTMLElement.prototype.focus;
  const blurElement = HTMLElement.prototype.blur;
  const selectInput = HTMLInputElement.prototype.select;
  function setValue(input, value) {
    valueSetter.call(input, value);
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.dispatchEvent(new Event('change', { bubbles: true }));
  }
  async function fillField(input, value) {
    if (driverFill) {
      const before = document.activeElement;
      focusElement.call(input);
      selectInput.call(input);   // the inserted text replaces what the field held
      try {
        await driverFill(value);
        // A CDP or BiDi binding answers nothing: the driver types when it next reads its events.
        for (let waited = 0; input.value !== value && waited < 5000; waited += 25) await new Promise(function (r) { setTimer(r, 25); });
      } catch (e) { /* the driver is gone (its page closing): filled by script below */ }
      if (before && before !== input && before !== document.body && typeof before.focus === 'function') focusElement.call(before);
      else blurElement.call(input);
      if (input.value === value) return;
    }
    setValue(input, value);
  }
  const filled = new WeakMap();
  // Every submitted sign-in form is recorded, filled or typed, whether filling is on or off (`autofill=0` only
  // stops the filling): a fill used as filled is a password use, anything else typed is a password saved.
  document.addEventListener('submit', function (event) {
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    const f = fields(form);
    if (!f) return;
    const username = f.username ? f.username.value : '';
    const fill = filled.get(form);
    if (fill && username === fill.username && f.password.value === fill.password) {
      call('POST', '/passwords/use', { origin: location.origin, username: username }, { keepalive: true }).catch(function () { /* reported */ });
    } else if (username && f.password.value) {
      call('POST', '/passwords', { origin: location.origin, username: username, password: f.password.value }, { keepalive: true }).catch(function () { /* reported */ });
    }
  }, true);
  async function autofill() {
    const forms = Array.prototype.slice.call(document.querySelectorAll('form')).filter(function (f) { return fields(f); });
    for (const form of forms) {
      const f = fields(form);
      let result;
      // ifSaved: a page with no saved password gets 200 {filled: false}, so the console stays as a browser's.
      try { result = await call('POST', '/autofill', { origin: location.origin, ifSaved: true }); } catch (e) { return; }
      if (result.status !== 200) {
        failure(result, '', undefined);   // set-up failures only
        continue;
      }
      if (result.body.filled === false) continue;
      if (f.username) await fillField(f.username, result.body.username);
      await fillField(f.password, result.body.password);
      filled.set(form, { username: result.body.username, password: result.body.password });
      // No browser tells the page it filled a form: credemu's own event only with the debug switch.
      if (config.autofillEvents) document.dispatchEvent(new CustomEvent('credemu:autofilled', { detail: { username: result.body.username } }));
    }
  }
  if (debug) debug.autofill = autofill;
  if (config.autofill) {
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', autofill);
    else autofill();
  }
  // The reply receiver of a one-way channel: the wrapper's value, kept where only the driver looks (channelReply).
  return channel && config.channelReply ? receive : undefined;
})();
