// credemu for Node (18 or later): the API client, `credemu serve` as a child process, and the browser shim in a
// Playwright page, context or browser. No dependencies: global fetch and node: modules only.
//
//   import { Server, installShim } from './credemu.mjs';
//   const server = await new Server({ allowOrigins: ['http://localhost:3000'] }).start();
//   const alice = server.client('default', { origin: 'http://localhost:3000' });
//   await alice.savePassword('alice@example.com', 'pw');
//   const context = await installShim(browser, alice, { origin: 'http://localhost:3000' });
//   ...
//   await server.stop();
//
// The same routes, names (in camelCase) and error as the Python package (clients/python).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Every route of the API (openapi.json) and the Client methods that call it; a test checks both ways. */
export const ROUTES = {
  'GET /health': ['health'],
  'GET /openapi.json': ['openapi'],
  'GET /shim.js': ['shim'],
  'GET /providers': ['providers'],
  'GET /clock': ['clock'],
  'POST /clock': ['setClock', 'advanceClock', 'systemClock'],
  'GET /origins': ['allowedOrigins'],
  'POST /origins': ['allowOrigin'],
  'POST /channels': ['openChannel'],
  'GET /channels': ['channels'],
  'DELETE /channels/{id}': ['closeChannel'],
  'GET /holds': ['holds'],
  'POST /holds/{id}/release': ['releaseHold'],
  'GET /profiles': ['profiles'],
  'POST /profiles': ['createProfile'],
  'GET /profiles/{profile}': ['getProfile'],
  'PATCH /profiles/{profile}': ['updateProfile'],
  'DELETE /profiles/{profile}': ['removeProfile'],
  'POST /profiles/{profile}/credentials/create': ['create'],
  'POST /profiles/{profile}/credentials/get': ['get'],
  'POST /profiles/{profile}/ceremonies/{id}/abort': ['abort'],
  'GET /profiles/{profile}/offer': ['offers'],
  'POST /profiles/{profile}/offer/pick': ['pick'],
  'POST /profiles/{profile}/signals/{kind}': ['signalUnknownCredential', 'signalAllAcceptedCredentials', 'signalCurrentUserDetails'],
  'GET /profiles/{profile}/capabilities': ['getClientCapabilities'],
  'GET /profiles/{profile}/passwords': ['passwords'],
  'POST /profiles/{profile}/passwords': ['savePassword'],
  'POST /profiles/{profile}/passwords/use': ['usePassword'],
  'POST /profiles/{profile}/autofill': ['autofill'],
  'GET /profiles/{profile}/passkeys': ['passkeys'],
  'GET /profiles/{profile}/passkeys/{id}': ['passkey'],
  'PATCH /profiles/{profile}/passkeys/{id}': ['hidePasskey', 'restorePasskey', 'renamePasskey'],
  'DELETE /profiles/{profile}/passkeys/{id}': ['removePasskey'],
  'POST /profiles/{profile}/credentials': ['createCredential'],
  'GET /profiles/{profile}/credentials': ['credentials'],
  'POST /vault/move': ['moveCredentials'],
  'GET /profiles/{profile}/export': ['exportVault'],
  'POST /profiles/{profile}/import': ['importVault'],
  'POST /profiles/{profile}/passwords/report-unused': ['reportUnusedPassword'],
  'POST /scenarios/run': ['runScenario'],
  'GET /demo': ['demo'],
  'POST /demo': ['startDemo'],
  'GET /': ['consoleFile'],
  'GET /console.js': ['consoleFile'],
  'GET /console.css': ['consoleFile'],
  'GET /console.svg': ['consoleFile'],
  'GET /profiles/{profile}/events': ['events'],
  'GET /profiles/{profile}/findings': ['findings'],
  'GET /profiles/{profile}/user': ['pendingDecisions'],
  'POST /profiles/{profile}/user': ['queueDecisions'],
  'DELETE /profiles/{profile}/user': ['clearDecisions'],
  'GET /devices/{device}/user': ['pendingDecisions'],
  'POST /devices/{device}/user': ['queueDecisions'],
  'DELETE /devices/{device}/user': ['clearDecisions'],
  'GET /profiles/{profile}/forge-next': ['pendingForgery'],
  'POST /profiles/{profile}/forge-next': ['forgeNext'],
  'GET /devices/{device}/forge-next': ['pendingForgery'],
  'POST /devices/{device}/forge-next': ['forgeNext'],
  'GET /attestation/root': ['attestationRoot'],
  'POST /profiles/{profile}/holds': ['hold'],
  'GET /devices': ['devices'],
  'POST /devices': ['createDevice'],
  'GET /devices/{device}': ['getDevice'],
  'PATCH /devices/{device}': ['updateDevice'],
  'DELETE /devices/{device}': ['removeDevice'],
  'POST /devices/{device}/credentials/create': ['create'],
  'POST /devices/{device}/credentials/get': ['get'],
  'POST /devices/{device}/ceremonies/{id}/abort': ['abort'],
  'GET /devices/{device}/offer': ['offers'],
  'POST /devices/{device}/offer/pick': ['pick'],
  'GET /devices/{device}/passwords': ['passwords'],
  'POST /devices/{device}/passwords': ['savePassword'],
  'POST /devices/{device}/passwords/use': ['usePassword'],
  'POST /devices/{device}/passwords/report-unused': ['reportUnusedPassword'],
  'POST /devices/{device}/autofill': ['autofill'],
  'POST /devices/{device}/signals/{kind}': ['signalUnknownCredential', 'signalAllAcceptedCredentials', 'signalCurrentUserDetails'],
  'GET /devices/{device}/capabilities': ['getClientCapabilities'],
  'POST /webauthn/authenticator': ['addVirtualAuthenticator'],
  'DELETE /webauthn/authenticator/{authenticatorId}': ['removeVirtualAuthenticator'],
  'POST /webauthn/authenticator/{authenticatorId}/credential': ['addCredential'],
  'GET /webauthn/authenticator/{authenticatorId}/credentials': ['getCredentials'],
  'DELETE /webauthn/authenticator/{authenticatorId}/credentials': ['removeAllCredentials'],
  'DELETE /webauthn/authenticator/{authenticatorId}/credentials/{credentialId}': ['removeCredential'],
  'POST /webauthn/authenticator/{authenticatorId}/uv': ['setUserVerified'],
  'POST /webauthn/authenticator/{authenticatorId}/override-bits': ['setResponseOverrideBits'],
  'POST /webauthn/authenticator/{authenticatorId}/credentials/{credentialId}/props': ['setCredentialProperties'],
};

/** The header a device ceremony's answer names its answering provider account in (a signal's: every account it reached, comma-separated). */
export const PROVIDER_HEADER = 'X-Credemu-Provider';

/**
 * A refusal from credemu: the API's error body with the HTTP status, or a server that would not start (status
 * null). `name` is the browser's DOMException name for a ceremony (NotAllowedError, ...) or credemu's own
 * (NotFound, Forbidden, InvalidPolicyPack, ...); `reason` the stable code of a ceremony's outcome; `dialects` the
 * outcome as the web, Android and Apple report it; `body` the whole error object. `message` reads as the Python
 * package's str() ("POST /path: 422 NotAllowedError: ... (reason: ...)"); `errorMessage` is the server's alone.
 */
export class CredemuError extends Error {
  constructor(name, message, { status = null, body = {}, method = null, path = null } = {}) {
    const where = method ? `${method} ${path}: ` : '';
    const reason = body && body.reason ? ` (reason: ${body.reason})` : '';
    super(`${where}${status !== null ? status + ' ' : ''}${name}: ${message}${reason}`);
    Object.defineProperty(this, 'name', { value: name, enumerable: false, configurable: true, writable: true });
    this.errorMessage = message;
    this.status = status;
    this.body = body || {};
    this.method = method;
    this.path = path;
  }

  static fromResponse(status, payload, method, path) {
    const error = payload && typeof payload === 'object' ? payload.error : null;
    if (!error || typeof error !== 'object') {
      return new CredemuError('HTTPError', String(payload).slice(0, 500), { status, method, path });
    }
    return new CredemuError(error.name || 'Error', error.message || '', { status, body: error, method, path });
  }

  get reason() { return this.body.reason ?? null; }
  /** True for an expected no-op, such as an automatic upgrade the provider declined. */
  get silent() { return this.body.silent ?? null; }
  get dialects() { return this.body.dialects ?? null; }
  /** The dialect the profile's platform speaks: web, android or apple. */
  get dialect() { return this.body.dialect ?? null; }
  get retryMillis() { return this.body.retryMillis ?? null; }
  /** A vault failure's code (locked, corrupt, ...). */
  get code() { return this.body.code ?? null; }
  /** The profile (provider account) whose provider failed a ceremony: on a device, the account the platform sent it to. */
  get profile() { return this.body.profile ?? null; }
}

/** The origin of a URL (http://localhost:8000/login gives http://localhost:8000), or the text as given. */
export function originOf(url) {
  try {
    const parsed = new URL(url);
    if ((parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.host) return parsed.origin;
  } catch { /* not a URL */ }
  return url;
}

function base64url(value) {
  if (value instanceof ArrayBuffer) value = new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64url');
  return value;
}

function dropUndefined(members) {
  return Object.fromEntries(Object.entries(members).filter(([, v]) => v !== undefined && v !== null));
}

function options(value) {
  if (typeof value === 'string') return JSON.parse(value);
  if (value && typeof value === 'object') return value;
  throw new TypeError('options must be an object or JSON text');
}

/**
 * The API of one `credemu serve` at `url`. Profile-scoped methods act for `profile` (or `{profile}` per call), and
 * ceremonies, passwords and signals for `origin` when the call names none. With `device` (or forDevice), the
 * ceremonies (create, get, abort, offers, pick, the signals, getClientCapabilities) run on that device, which routes
 * them among its provider accounts, unless a call names a `profile`; each also takes `{device}` per call. Answers
 * are the API's JSON, with single lists unwrapped (`passkeys()` is the list); a device ceremony's answer carries the
 * answering account as a non-enumerable `provider` (left out of JSON.stringify). Every refusal rejects with
 * CredemuError.
 */
export class Client {
  constructor(url, { profile = 'default', device = null, origin = null, token = null, timeout = 60000 } = {}) {
    this.url = url.replace(/\/+$/, '');
    this.profile = profile;
    this.device = device;
    this.origin = origin;
    this.token = token;
    this.timeout = timeout;
    // The virtual authenticator the WebDriver-named methods act on (addVirtualAuthenticator sets it).
    this.virtualAuthenticatorId = null;
  }

  /** The same server, acting for another profile (and origin, when given); no device. */
  forProfile(profile, { origin } = {}) {
    return new this.constructor(this.url, { profile, origin: origin ?? this.origin, token: this.token, timeout: this.timeout });
  }

  /** The same server, its ceremonies running on `device` (and for `origin`, when given); profile-scoped methods keep this client's profile. */
  forDevice(device, { origin } = {}) {
    return new this.constructor(this.url, { profile: this.profile, device, origin: origin ?? this.origin, token: this.token, timeout: this.timeout });
  }

  /** One request; the parsed JSON (or text) on success, CredemuError on any refusal. */
  async request(method, path, body, query) {
    if (query) {
      const pairs = dropUndefined(query);
      if (Object.keys(pairs).length) path += '?' + new URLSearchParams(pairs).toString();
    }
    const headers = {};
    let data;
    if (body !== undefined || method === 'POST' || method === 'PATCH') {
      headers['Content-Type'] = 'application/json';
      data = JSON.stringify(body ?? {});
    }
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    let response;
    try {
      response = await fetch(this.url + path, { method, headers, body: data, signal: AbortSignal.timeout(this.timeout) });
    } catch (error) {
      throw new CredemuError('ServerUnreachable', `no answer from credemu at ${this.url}: ${error.cause?.message ?? error.message}`, { method, path });
    }
    const text = await response.text();
    let parsed = text;
    if ((response.headers.get('content-type') || '').startsWith('application/json') && text) {
      try { parsed = JSON.parse(text); } catch { /* leave the text */ }
    }
    if (response.status >= 400) throw CredemuError.fromResponse(response.status, parsed, method, path);
    const provider = response.headers.get(PROVIDER_HEADER);
    if (provider !== null && parsed && typeof parsed === 'object') {
      Object.defineProperty(parsed, 'provider', { value: provider, enumerable: false });
      Object.defineProperty(parsed, 'providers', { value: provider.split(',').filter(Boolean), enumerable: false });
    }
    return parsed;
  }

  profilePath(profile, tail = '') {
    return '/profiles/' + encodeURIComponent(profile || this.profile) + tail;
  }

  devicePath(device, tail = '') {
    const name = device || this.device;
    if (!name) throw new TypeError('no device: pass {device: NAME}, or use client.forDevice(NAME)');
    return '/devices/' + encodeURIComponent(name) + tail;
  }

  /** A ceremony's path: the device's when the call or the client names one and the call names no profile. */
  scopedPath(profile, device, tail) {
    if (profile && device) throw new TypeError('a ceremony runs on a profile or on a device, not both');
    return !profile && (device || this.device) ? this.devicePath(device, tail) : this.profilePath(profile, tail);
  }

  // ---- documents ----
  /** GET /health: status, vault path and the clock. */
  health() { return this.request('GET', '/health'); }
  /** GET /openapi.json: the API's OpenAPI 3.1 document. */
  openapi() { return this.request('GET', '/openapi.json'); }
  /**
   * GET /shim.js: the browser shim's source for `profile`, this server's URL and a page token (good for that profile's
   * page routes only) baked in. For a `device` (given, or the client's when no profile is given) the page's
   * ceremonies and passwords go to the device, which routes them among its accounts.
   */
  shim(profile, { autofill = true, device, fillBinding, autofillEvents = false, channel, channelReply, serverChannel, serverHandoff } = {}) {
    if (profile && device) throw new TypeError('a shim runs on a profile or on a device, not both');
    device = device || (profile ? undefined : this.device || undefined);
    return this.request('GET', '/shim.js', undefined, dropUndefined({ device, profile: profile || (device ? undefined : this.profile),
      autofill: autofill ? undefined : '0', fillBinding: fillBinding || undefined, autofillEvents: autofillEvents ? '1' : undefined,
      channel: channel || undefined, channelReply: channelReply || undefined, serverChannel: serverChannel || undefined,
      serverHandoff: serverChannel ? serverHandoff : undefined, token: this.token || undefined }));
  }
  /** GET /providers: {directory, providers: [{id, name, version, platforms, sources}]}. */
  providers() { return this.request('GET', '/providers'); }
  async packIds() { return (await this.providers()).providers.map((p) => p.id); }

  // ---- the clock ----
  clock() { return this.request('GET', '/clock'); }
  /** Makes the clock virtual at `time` (RFC 3339). */
  setClock(time, { profile } = {}) { return this.request('POST', '/clock', { set: time, profile: profile || this.profile }); }
  /** Moves the virtual clock on by seconds or a duration ("90s", "6m", "2h", "1d"). */
  advanceClock(by, { profile } = {}) { return this.request('POST', '/clock', { advance: by, profile: profile || this.profile }); }
  systemClock({ profile } = {}) { return this.request('POST', '/clock', { mode: 'system', profile: profile || this.profile }); }

  // ---- origins pages may call from ----
  /** GET /origins: the page origins allowed to call the API. */
  async allowedOrigins() { return (await this.request('GET', '/origins')).allowedOrigins; }
  /** POST /origins: pages of `origin` (a URL is cut to its origin) may call the API from now on. */
  async allowOrigin(origin) { return (await this.request('POST', '/origins', { origin: originOf(origin) })).allowedOrigins; }

  // ---- the shim's channel, relayed by the server (docs/shim.md, "Transport") ----
  /** POST /channels: credemu opens its own DevTools connection to the Chromium page target at `devtools`
   * (ws://127.0.0.1:PORT/devtools/page/ID, loopback only), adds the channel's binding and the shim there, and
   * answers the page's shim itself until closeChannel or the page closes. `paired: [binding, handoff]`: the page's
   * shim is the driver's, served with `serverChannel: binding, serverHandoff: handoff`; the server adds that binding
   * and its handoff script, no shim. `allowFrameOrigins`: each calling frame's origin is allowed on its first call. */
  async openChannel(devtools, { profile, device, autofill = true, fillBinding, autofillEvents = false, paired, allowFrameOrigins = false } = {}) {
    const body = { devtools, ...(device ? { device } : { profile: profile || this.profile }) };
    if (paired) body.paired = { binding: paired[0], handoff: paired[1] };
    if (allowFrameOrigins) body.allowFrameOrigins = true;
    if (!autofill) body.autofill = false;
    if (fillBinding) body.fillBinding = fillBinding;
    if (autofillEvents) body.autofillEvents = true;
    return this.request('POST', '/channels', body);
  }
  /** GET /channels: the channels the server relays. */
  async channels() { return (await this.request('GET', '/channels')).channels; }
  /** DELETE /channels/{id}: the server ends the channel. */
  async closeChannel(id) { return this.request('DELETE', `/channels/${encodeURIComponent(id)}`); }

  // ---- held ceremonies ----
  /** The profile's next ceremony waits until releaseHold (or the timeout). */
  hold({ timeoutMs, profile } = {}) { return this.request('POST', this.profilePath(profile, '/holds'), dropUndefined({ timeoutMs })); }
  async holds() { return (await this.request('GET', '/holds')).holds; }
  /** `outcome` "proceed" (default) or "cancel". */
  releaseHold(hold, outcome) {
    const id = typeof hold === 'object' ? hold.id : hold;
    return this.request('POST', `/holds/${encodeURIComponent(String(id))}/release`, dropUndefined({ outcome }));
  }

  // ---- profiles ----
  async profiles() { return (await this.request('GET', '/profiles')).profiles; }
  /** A profile playing `pack` on `platform`, with settings in the API's names (automaticPasskeyUpgrades, osVersion, ...). */
  createProfile(name, { pack, platform, ...settings } = {}) {
    return this.request('POST', '/profiles', { name, ...dropUndefined({ pack, platform }), ...settings });
  }
  getProfile(name) { return this.request('GET', this.profilePath(name)); }
  /** Changes settings (logged as a setting event); `name` null for the client's profile. */
  updateProfile(name, settings) { return this.request('PATCH', this.profilePath(name), settings); }
  removeProfile(name) { return this.request('DELETE', this.profilePath(name)); }

  // ---- devices ----
  async devices() { return (await this.request('GET', '/devices')).devices; }
  /**
   * POST /devices: a device on `platform` with its provider accounts (profile names in the user's order, 1 to 8, an
   * array or comma-separated) and the `preferred` one; device state in the API's names (osVersion, browserSignedIn, ...).
   */
  createDevice(name, { providers, preferred, platform, ...state } = {}) {
    const list = typeof providers === 'string' ? providers.split(',') : providers;
    return this.request('POST', '/devices', { name, ...dropUndefined({ providers: list, preferred, platform }), ...state });
  }
  /** GET /devices/{d} (`name` null for the client's device). */
  getDevice(name) { return this.request('GET', this.devicePath(name)); }
  /** PATCH /devices/{d}: providers, preferred (null for the first), state. */
  updateDevice(name, settings) { return this.request('PATCH', this.devicePath(name), settings); }
  /** DELETE /devices/{d}: the device; its provider accounts (profiles) stay. */
  removeDevice(name) { return this.request('DELETE', this.devicePath(name)); }

  // ---- ceremonies ----
  ceremony(tail, opts, { origin, profile, device, ...members }) {
    return this.request('POST', this.scopedPath(profile, device, tail), { options: options(opts), ...dropUndefined({ origin: origin ?? this.origin, ...members }) });
  }
  /**
   * navigator.credentials.create(): the RegistrationResponseJSON. `mediation: 'conditional'` is an automatic upgrade.
   * On a device, `provider` on the answer is the account the platform gave the create to.
   */
  create(opts, { origin, mediation, topOrigin, platform, androidPackage, ceremony, profile, device } = {}) {
    return this.ceremony('/credentials/create', opts, { origin, profile, device, mediation, topOrigin, platform, androidPackage, ceremony });
  }
  /** navigator.credentials.get(): the AuthenticationResponseJSON; a conditional get waits for `pick`. On a device, `provider` is the signing account. */
  get(opts, { origin, mediation, pick, topOrigin, platform, androidPackage, ceremony, profile, device } = {}) {
    return this.ceremony('/credentials/get', opts, { origin, profile, device, mediation, pick, topOrigin, platform, androidPackage, ceremony });
  }
  /** The page's AbortSignal for the ceremony sent with `ceremony: ID`: {aborted}. */
  abort(ceremony, { profile, device } = {}) {
    return this.request('POST', this.scopedPath(profile, device, `/ceremonies/${encodeURIComponent(ceremony)}/abort`), {});
  }
  /** The autofill dropdowns waiting conditional gets opened; on a device each passkey names its `provider` account. */
  async offers({ profile, device } = {}) { return (await this.request('GET', this.scopedPath(profile, device, '/offer'))).offers; }
  /** The simulated user picks `credentialId` from an open dropdown. */
  pick(credentialId, { ceremony, profile, device } = {}) {
    return this.request('POST', this.scopedPath(profile, device, '/offer/pick'), dropUndefined({ credentialId: base64url(credentialId), ceremony }));
  }

  // ---- signals (WebAuthn L3 §5.1.10): they resolve undefined, as in browsers; on a device, to the accounts reached ----
  async signal(kind, opts, { origin, profile, device } = {}) {
    const answer = await this.request('POST', this.scopedPath(profile, device, `/signals/${kind}`), dropUndefined({ options: opts, origin: origin ?? this.origin }));
    return answer && answer.providers ? answer.providers : undefined;
  }
  /** PublicKeyCredential.signalUnknownCredential({rpId, credentialId}). */
  signalUnknownCredential({ rpId, credentialId }, where = {}) {
    return this.signal('unknown', { rpId, credentialId: base64url(credentialId) }, where);
  }
  /** PublicKeyCredential.signalAllAcceptedCredentials({rpId, userId, allAcceptedCredentialIds}). */
  signalAllAcceptedCredentials({ rpId, userId, allAcceptedCredentialIds }, where = {}) {
    return this.signal('accepted', { rpId, userId: base64url(userId), allAcceptedCredentialIds: allAcceptedCredentialIds.map(base64url) }, where);
  }
  /** PublicKeyCredential.signalCurrentUserDetails({rpId, userId, name, displayName}). */
  signalCurrentUserDetails({ rpId, userId, name, displayName }, where = {}) {
    return this.signal('details', { rpId, userId: base64url(userId), name, displayName }, where);
  }
  /** PublicKeyCredential.getClientCapabilities() as the profile's platform answers it; on a device, as its page's API does (`profile` in the answer names it). */
  getClientCapabilities({ platform, profile, device } = {}) {
    const path = this.scopedPath(profile, device, '/capabilities');
    if (platform && path.startsWith('/devices/')) throw new TypeError("a device answers on its own platform; change the device's platform instead");
    return this.request('GET', path, undefined, { platform });
  }

  // ---- passwords ----
  // A device's passwords are the account's that takes its creates (/devices/{d}/passwords...).
  async passwords({ profile, device } = {}) { return (await this.request('GET', this.scopedPath(profile, device, '/passwords'))).passwords; }
  savePassword(username, password, { origin, profile, device } = {}) {
    return this.request('POST', this.scopedPath(profile, device, '/passwords'), { origin: origin ?? this.origin, username, password });
  }
  /** The filled password was submitted (what makes an automatic upgrade eligible). */
  usePassword(username, { origin, profile, device } = {}) {
    return this.request('POST', this.scopedPath(profile, device, '/passwords/use'), { origin: origin ?? this.origin, username });
  }
  /** The provider fills the sign-in form of `origin`; `submit: true` also records the sign-in. */
  autofill({ origin, username, submit = false, ifSaved = false, androidPackage, profile, device } = {}) {
    return this.request('POST', this.scopedPath(profile, device, '/autofill'),
      { ...dropUndefined({ origin: origin ?? this.origin, username, androidPackage }), submit, ifSaved });
  }

  // ---- the vault's passkeys ----
  async passkeys({ profile } = {}) { return (await this.request('GET', this.profilePath(profile, '/passkeys'))).passkeys; }
  passkey(credentialId, { profile } = {}) {
    return this.request('GET', this.profilePath(profile, `/passkeys/${encodeURIComponent(base64url(credentialId))}`));
  }
  /** The user hides the passkey in the provider (PATCH {hidden: true}). */
  hidePasskey(credentialId, { profile } = {}) {
    return this.request('PATCH', this.profilePath(profile, `/passkeys/${encodeURIComponent(base64url(credentialId))}`), { hidden: true });
  }
  /** The user shows a hidden passkey again (PATCH {hidden: false}). */
  restorePasskey(credentialId, { profile } = {}) {
    return this.request('PATCH', this.profilePath(profile, `/passkeys/${encodeURIComponent(base64url(credentialId))}`), { hidden: false });
  }
  /**
   * The user renames the passkey's user in the password manager (PATCH {userName, displayName}; either alone keeps
   * the other name), marking it editedByUser, which a pack's signals.currentUserDetailsRespectsUserEdit (GPM) keeps
   * through signalCurrentUserDetails. An empty, over-1024-byte or control-character name is a TypeError (400).
   */
  renamePasskey(credentialId, { userName, displayName, profile } = {}) {
    const body = {};
    if (userName != null) body.userName = userName;
    if (displayName != null) body.displayName = displayName;
    return this.request('PATCH', this.profilePath(profile, `/passkeys/${encodeURIComponent(base64url(credentialId))}`), body);
  }
  /** Apple's reportUnusedPasswordCredential(domain:userName:): the account moved to passkeys. */
  reportUnusedPassword(domain, userName, { profile, device } = {}) {
    return this.request('POST', this.scopedPath(profile, device, '/passwords/report-unused'), { domain, userName });
  }
  /** POST /scenarios/run: a scenario (an object, or JSON text) across packs in temporary vaults; its matrix. */
  runScenario(scenario, { providers } = {}) {
    const document = typeof scenario === 'string' ? JSON.parse(scenario) : scenario;
    return this.request('POST', '/scenarios/run', dropUndefined({ scenario: document, providers }));
  }
  /** GET /demo: the demo shop's state (whether this server offers it, and where it runs). */
  demo() { return this.request('GET', '/demo'); }
  /** POST /demo: starts the demo shop (once) for `profile` (default the client's), an RP on its own loopback port. */
  startDemo({ profile } = {}) { return this.request('POST', '/demo', { profile: profile || this.profile }); }
  /** The console's files (GET /, /console.js, /console.css, /console.svg) as text. */
  consoleFile(name = 'console.html') {
    return this.request('GET', ['', '/', 'console.html'].includes(name) ? '/' : '/' + name.replace(/^\//, ''));
  }
  /**
   * Playwright's credentials.create(rpId, options) on the profile (any pack): with `rpId` alone a fresh P-256 key,
   * credential ID and user handle; to import, `id`, `userHandle`, `privateKey` (base64url PKCS#8) and `publicKey`
   * (base64url SPKI) together, and `signCount`. A discoverable passkey made with the pack's settings, so a pack
   * whose counter stays zero answers `signCount: 0` whatever was given. `{id, rpId, userHandle, privateKey,
   * publicKey, signCount}`.
   */
  createCredential(rpId, { id, userHandle, privateKey, publicKey, signCount, userName, displayName, profile } = {}) {
    return this.request('POST', this.profilePath(profile, '/credentials'),
      { rpId, ...dropUndefined({ id: base64url(id), userHandle: base64url(userHandle), privateKey: base64url(privateKey), publicKey: base64url(publicKey), signCount, userName, displayName }) });
  }
  /** Playwright's credentials.get({id, rpId}): every passkey of the profile (seeded or registered), as createCredential answers. */
  async credentials({ rpId, id, profile } = {}) {
    return (await this.request('GET', this.profilePath(profile, '/credentials'), undefined, { rpId, id: base64url(id) })).credentials;
  }
  /**
   * POST /vault/move: the `from` profile's passkeys and passwords (only `rpId`'s when given) written as a CXF document,
   * imported into `to` and removed from `from` in one transaction (docs/cxf.md). With `keepSource` both profiles hold
   * them (the same credential IDs, each answered by its own pack).
   */
  moveCredentials(from, to, { keepSource, rpId } = {}) {
    return this.request('POST', '/vault/move', dropUndefined({ from, to, keepSource, rpId }));
  }
  /**
   * GET /profiles/{p}/export: the profile's credentials as `credemu vault export --format` writes them: a CXF document
   * ('cxf', private keys and passwords only with `includeSecrets`), or Playwright's or WebDriver's credential list
   * ('playwright', 'webdriver'), which hold every private key and so need `includeSecrets: true` (else a TypeError).
   * Resolves to `{format, includesSecrets, document, leftOut}`.
   */
  exportVault(format = 'cxf', { includeSecrets, profile } = {}) {
    return this.request('GET', this.profilePath(profile, '/export'), undefined, { format, includeSecrets: includeSecrets ? 'true' : undefined });
  }
  /**
   * POST /profiles/{p}/import: a CXF document, or Playwright's or WebDriver's credential list (an object, an array or
   * its JSON text), into the profile as `credemu vault import --format` reads it; all or nothing, a refusal names the
   * member's path. Resolves to `{imported: {passkeys, ...}}`.
   */
  importVault(document, { format = 'cxf', profile } = {}) {
    const body = typeof document === 'string' ? JSON.parse(document) : document;
    return this.request('POST', this.profilePath(profile, '/import'), { format, document: body });
  }
  /** The user deletes the passkey in the provider. */
  removePasskey(credentialId, { profile } = {}) {
    return this.request('DELETE', this.profilePath(profile, `/passkeys/${encodeURIComponent(base64url(credentialId))}`));
  }

  // ---- what happened ----
  /** The event log, oldest first: kind, outcome, reason, the deciding knobs. */
  async events(kind, { after, limit, profile } = {}) {
    return (await this.request('GET', this.profilePath(profile, '/events'), undefined, { kind, after, limit })).events;
  }
  async findings({ profile } = {}) { return (await this.request('GET', this.profilePath(profile, '/findings'))).findings; }

  // ---- the simulated user ----
  /** The queued decisions of a profile, or of a device (its browser sheet's queue). */
  async pendingDecisions({ profile, device } = {}) { return (await this.request('GET', this.scopedPath(profile, device, '/user'))).pending; }
  /** Queues the user's next answers: 'accept', 'cancel', 'timeout', 'pick:ID', 'use:NAME' (a key, phone or account in the sheet). */
  async queueDecisions(decisions, { profile, device } = {}) {
    return (await this.request('POST', this.scopedPath(profile, device, '/user'), { decisions })).pending;
  }
  async clearDecisions({ profile, device } = {}) { return (await this.request('DELETE', this.scopedPath(profile, device, '/user'))).pending; }

  // ---- forged answers (negative cases: the RP must refuse them) ----
  /** Arms one forgery ('badSignature', 'otherOrigin', 'noUserPresence', ...) for the next create or get it applies to, once; null disarms. */
  forgeNext(forgery, { profile, device } = {}) { return this.request('POST', this.scopedPath(profile, device, '/forge-next'), { forgery }); }
  /** The forgery still armed (null once used) and, for a profile, its override bits. */
  pendingForgery({ profile, device } = {}) { return this.request('GET', this.scopedPath(profile, device, '/forge-next')); }
  /** The vault's test attestation root ({certificate: base64 DER, pem}) that security keys' batch certificates chain to. */
  attestationRoot() { return this.request('GET', '/attestation/root'); }

  // ---- WebDriver's virtual authenticators (WebAuthn L3 §11), under selenium-webdriver's names ----
  authenticatorPath(authenticatorId, tail = '') {
    const id = authenticatorId || this.virtualAuthenticatorId;
    if (!id) throw new TypeError('no virtual authenticator: call addVirtualAuthenticator first, or pass { authenticatorId }');
    return `/webauthn/authenticator/${encodeURIComponent(id)}${tail}`;
  }
  /** A new security key from §11.1's options (an object, or selenium-webdriver's VirtualAuthenticatorOptions: its toDict()); it becomes the current one. Its ID is the key's profile name. */
  async addVirtualAuthenticator(opts) {
    this.virtualAuthenticatorId = (await this.request('POST', '/webauthn/authenticator', parameters(opts))).value;
    return this.virtualAuthenticatorId;
  }
  async removeVirtualAuthenticator({ authenticatorId } = {}) {
    await this.request('DELETE', this.authenticatorPath(authenticatorId));
    if (!authenticatorId || authenticatorId === this.virtualAuthenticatorId) this.virtualAuthenticatorId = null;
  }
  /** §11.5's Credential Parameters: an object, or selenium-webdriver's Credential (its toDict()). */
  async addCredential(credential, { authenticatorId } = {}) {
    await this.request('POST', this.authenticatorPath(authenticatorId, '/credential'), parameters(credential));
  }
  /** The key's credentials as §11.5's objects, private keys PKCS#8 in base64url. */
  async getCredentials({ authenticatorId } = {}) { return (await this.request('GET', this.authenticatorPath(authenticatorId, '/credentials'))).value; }
  async removeCredential(credentialId, { authenticatorId } = {}) {
    await this.request('DELETE', this.authenticatorPath(authenticatorId, `/credentials/${encodeURIComponent(base64url(credentialId))}`));
  }
  async removeAllCredentials({ authenticatorId } = {}) { await this.request('DELETE', this.authenticatorPath(authenticatorId, '/credentials')); }
  async setUserVerified(verified, { authenticatorId } = {}) {
    await this.request('POST', this.authenticatorPath(authenticatorId, '/uv'), { isUserVerified: Boolean(verified) });
  }
  /** CDP's WebAuthn.setResponseOverrideBits (chromedriver has no command for it): every later answer of the key with a bogus signature, UV=0 or UP=0; a bit not given is cleared. */
  async setResponseOverrideBits({ isBogusSignature = false, isBadUV = false, isBadUP = false, authenticatorId } = {}) {
    const body = { isBogusSignature: Boolean(isBogusSignature), isBadUV: Boolean(isBadUV), isBadUP: Boolean(isBadUP) };
    return (await this.request('POST', this.authenticatorPath(authenticatorId, '/override-bits'), body)).value;
  }
  /** A credential's BE and BS flags and counter (`signCount: null`: no counter); what is not given stays. */
  async setCredentialProperties(credentialId, { backupEligibility, backupState, signCount, authenticatorId } = {}) {
    const body = dropUndefined({ backupEligibility, backupState });
    if (signCount !== undefined) body.signCount = signCount;
    await this.request('POST', this.authenticatorPath(authenticatorId, `/credentials/${encodeURIComponent(base64url(credentialId))}/props`), body);
  }
}

/** A WebDriver command's parameters: an object, or a binding's options or credential object (toDict(), to_dict()). */
function parameters(value) {
  if (value && typeof value.toDict === 'function') return value.toDict();
  if (value && typeof value.to_dict === 'function') return value.to_dict();
  if (value && typeof value === 'object') return value;
  throw new TypeError('parameters must be an object');
}

/**
 * The binary an npm package from `make dist` carries for this platform (bin/linux-x64/credemu beside this module),
 * or null: the source tree has none.
 */
export function bundledBinary() {
  const path = fileURLToPath(new URL(`./bin/${process.platform}-${process.arch}/credemu`, import.meta.url));
  return executable(path) ? path : null;
}

/**
 * The credemu executable: `binary` when given, else $CREDEMU, else the one this package carries (an npm package
 * from `make dist`), else credemu on PATH (`skip`: a path to pass over there, the `credemu` command itself).
 */
export function findBinary(binary, { skip } = {}) {
  const candidate = binary || process.env.CREDEMU || bundledBinary() || searchPath('credemu', skip);
  if (!candidate) throw new CredemuError('BinaryNotFound', 'no credemu binary: pass one, set $CREDEMU, install the credemu npm package, or put credemu on PATH');
  const path = candidate.includes(sep) ? candidate : searchPath(candidate);
  if (!path || !executable(path)) throw new CredemuError('BinaryNotFound', `${candidate} is not an executable credemu binary`);
  return path;
}

function executable(path) {
  try { accessSync(path, constants.X_OK); return true; } catch { return false; }
}

function searchPath(name, skip) {
  for (const dir of (process.env.PATH || '').split(delimiter)) {
    const path = dir && join(dir, name);
    if (path && executable(path) && !(skip && sameFile(path, skip))) return path;
  }
  return null;
}

function sameFile(a, b) {
  try { return realpathSync(a) === realpathSync(b); } catch { return false; }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One `credemu serve` on 127.0.0.1 and a free port, over a vault in a temporary directory (or `vault`); `log` is
 * what it printed (stdout and stderr), kept after stop() for failure reports.
 */
export class Server {
  constructor({ binary, vault, providers, allowOrigins = [], token, args = [], cwd, env, startupTimeout = 30000 } = {}) {
    this.binary = findBinary(binary);
    this.vault = vault ?? null;
    this.ownVault = !vault;
    this.providers = providers;
    this.allowOrigins = allowOrigins.map(originOf);
    this.token = token ?? null;
    this.args = args;
    this.cwd = cwd;
    this.env = env;
    this.startupTimeout = startupTimeout;
    this.log = '';
    this.process = null;
    this.url = null;
    this.port = null;
    this.returnCode = null;
  }

  async start() {
    if (this.process) return this;
    this.directory = mkdtempSync(join(tmpdir(), 'credemu-'));
    if (!this.vault) this.vault = join(this.directory, 'vault.db');
    const portFile = join(this.directory, 'port');
    const command = ['--vault', this.vault, ...(this.providers ? ['--providers', this.providers] : []),
      'serve', '--port', '0', '--port-file', portFile,
      ...(this.allowOrigins.length ? ['--allow-origin', this.allowOrigins.join(',')] : []),
      ...(this.token ? ['--token', this.token] : []), ...this.args];
    const child = spawn(this.binary, command, { stdio: ['ignore', 'pipe', 'pipe'], cwd: this.cwd, env: this.env });
    this.process = child;
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
    child.stdout.setEncoding('utf8').on('data', (text) => { this.log += text; });
    child.stderr.setEncoding('utf8').on('data', (text) => { this.log += text; });
    try {
      await this.waitUntilReady(portFile);
    } catch (error) {
      await this.stop();
      throw error;
    }
    return this;
  }

  async waitUntilReady(portFile) {
    const deadline = Date.now() + this.startupTimeout;
    let exited = false;
    this.exited.then(() => { exited = true; });
    while (Date.now() < deadline) {
      await sleep(20);
      if (exited) throw new CredemuError('ServerFailedToStart', `credemu serve exited with status ${this.process.exitCode}:\n${this.log}`);
      const text = existsSync(portFile) ? readFileSync(portFile, 'utf8').trim() : '';
      if (!/^\d+$/.test(text)) continue;
      this.port = Number(text);
      this.url = `http://127.0.0.1:${this.port}`;
      try {
        const response = await fetch(this.url + '/health', { signal: AbortSignal.timeout(5000) });
        // The port file comes before the first line of output: ready once both are there.
        if (response.ok && this.log.startsWith(this.url + '\n')) return;
      } catch { /* not yet */ }
    }
    throw new CredemuError('ServerFailedToStart', `credemu serve was not ready within ${this.startupTimeout} ms:\n${this.log}`);
  }

  /** SIGTERM, then a wait for the orderly stop (SIGKILL after `timeout` ms); the exit status. */
  async stop(timeout = 20000) {
    if (!this.process) return this.returnCode;
    if (this.process.exitCode === null && this.process.signalCode === null) {
      const child = this.process;
      child.kill('SIGTERM');
      // Again each second: a SIGTERM that arrives before the server's handler is in place is lost.
      const again = setInterval(() => child.kill('SIGTERM'), 1000);
      const deadline = setTimeout(() => child.kill('SIGKILL'), timeout);
      await this.exited;
      clearInterval(again);
      clearTimeout(deadline);
    }
    this.returnCode = await this.exited;
    // Output still in the pipes when the process ended.
    await new Promise((resolve) => (this.process.stdout.readableEnded ? resolve() : this.process.stdout.once('close', resolve)));
    this.process = null;
    rmSync(this.directory, { recursive: true, force: true });
    if (this.ownVault) this.vault = null;
    return this.returnCode;
  }

  get running() { return this.process !== null && this.process.exitCode === null; }

  /** A Client of this server for `profile`, its ceremonies on `device` when given. */
  client(profile = 'default', { origin, device } = {}) {
    if (!this.url) throw new CredemuError('ServerNotStarted', 'start the server first: await server.start()');
    return new Client(this.url, { profile, device, origin, token: this.token });
  }

  /** Lets pages of `origin` call this server from now on (POST /origins). */
  async allowOrigin(origin) {
    origin = originOf(origin);
    if (!this.allowOrigins.includes(origin)) this.allowOrigins.push(origin);
    if (this.url) await this.client().allowOrigin(origin);
  }
}

// ---- the shim's channel: the driver's side (docs/shim.md, "Transport"; the Python client's credemu.relay) ----

/** What the shim asks of credemu, relative to its profile or device; a `*` is one segment of [A-Za-z0-9_-]. */
export const RELAYED_ROUTES = [
  ['POST', '/credentials/create'], ['POST', '/credentials/get'], ['POST', '/ceremonies/*/abort'], ['GET', '/capabilities'],
  ['POST', '/signals/*'], ['POST', '/passwords'], ['POST', '/passwords/use'], ['POST', '/autofill'],
];
const SEGMENT = /^[A-Za-z0-9_-]{1,128}$/;

/** Whether a channel message names one of the shim's own routes. */
export function relayedRoute(method, path) {
  if (typeof method !== 'string' || typeof path !== 'string' || !path.startsWith('/')) return false;
  const segments = path.slice(1).split('/');
  return RELAYED_ROUTES.some(([m, template]) => {
    const parts = template.slice(1).split('/');
    return m === method && parts.length === segments.length && parts.every((p, i) => (p === '*' ? SEGMENT.test(segments[i]) : p === segments[i]));
  });
}

/** The origin of a frame's URL as the driver reports it, or null for a frame with no http(s) origin. */
export function frameOrigin(url) {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : null;
  } catch { return null; }
}

function refusal(id, status, name, message) { return { id, status, body: { error: { name, message } } }; }

/**
 * The relay for one shim: the reply `{id, status, body}` to one channel message (its JSON text) from a frame whose
 * URL the driver reports as `frameURL`. Refuses every route but the shim's own of its target and any frame without
 * an http(s) origin; asks credemu with that origin as `Origin` (Node's fetch keeps its connections alive). Never throws.
 */
export async function relay(client, target, text, frameURL) {
  let message;
  try { message = typeof text === 'string' ? JSON.parse(text) : text; } catch { return refusal(null, 400, 'BadChannelMessage', "The channel's message is not JSON."); }
  if (!message || typeof message !== 'object' || Array.isArray(message)) return refusal(null, 400, 'BadChannelMessage', "The channel's message is not a JSON object.");
  const { id, method, path, body } = message;
  if (typeof id !== 'string' || id.length > 64) return refusal(null, 400, 'BadChannelMessage', "The channel's message has no string id.");
  if (!relayedRoute(method, path)) return refusal(id, 403, 'RouteNotRelayed', `The channel relays only the shim's own routes of ${target}, not ${method} ${path}.`);
  const origin = frameOrigin(frameURL);
  if (!origin) return refusal(id, 403, 'OriginNotRelayed', 'The frame that called has no http(s) origin the driver reports.');
  if (method === 'GET' && body !== null && body !== undefined) return refusal(id, 400, 'BadChannelMessage', 'A GET carries no body.');
  // X-Credemu-Channel: the server then answers only the routes its table marks relayed (the one rule).
  const headers = { Origin: origin, Accept: 'application/json', 'X-Credemu-Channel': 'relay' };
  if (method !== 'GET') headers['Content-Type'] = 'application/json';
  if (client.token) headers.Authorization = `Bearer ${client.token}`;
  try {
    const response = await fetch(client.url + target + path, { method, headers, body: method === 'GET' ? undefined : JSON.stringify(body ?? {}) });
    const answer = await response.text();
    let parsed = null;
    try { parsed = answer ? JSON.parse(answer) : null; } catch { /* not JSON */ }
    return { id, status: response.status, body: parsed };
  } catch (error) {
    return refusal(id, 0, 'ServerUnreachable', `no answer from credemu at ${client.url}: ${error.cause?.message ?? error.message}`);
  }
}

/** A Playwright binding the shim sends its requests through, exposed before the shim's init script (which takes it
 * off `window`): each call relayed with the calling frame's URL as Playwright reports it. */
async function channelBinding(target, client, shimTarget, allowFrameOrigins) {
  const name = '__credemuChannel_' + randomBytes(16).toString('hex');
  const allowed = new Map();
  await target.exposeBinding(name, async ({ frame }, text) => {
    const origin = allowFrameOrigins ? frameOrigin(frame.url()) : null;
    if (origin) {
      if (!allowed.has(origin)) allowed.set(origin, client.allowOrigin(origin).catch((error) => { allowed.delete(origin); throw error; }));
      try { await allowed.get(origin); } catch { /* the relay's answer says what the server refuses */ }
    }
    return relay(client, shimTarget, text, frame.url());
  });
  return name;
}

/**
 * Every document `target` loads from now on runs credemu's shim for `profile` (default: the client's), or for
 * `device` (default: the client's device when it has one and no `profile` is given: the page's ceremonies then run
 * on the device, /shim.js?device=NAME), and `origin` allowed on the server. The shim's requests go through the
 * driver (`channel`, the default: a binding of a random name, `exposeBinding`, that the shim takes off `window`
 * before the page's scripts run, relayed by `relay` with the calling frame's URL as Playwright reports it), so the
 * page's Content-Security-Policy stays in force and has nothing to block. With `channel: false` the shim fetches,
 * and the page's CSP is bypassed (`bypassCSP`, default: only then), since its fetch to credemu is subject to it.
 * `target` is a Playwright Page, BrowserContext or Browser; for a Browser a new context is made (with
 * `contextOptions` and bypassCSP) and returned. Playwright sets a context's CSP bypass only when it is made, so
 * a context passed in should be made with `bypassCSP: true`; a Page gets CDP's Page.setBypassCSP (Chromium).
 * Autofill goes through the driver: a binding of a random name (taken off `window` by the shim before the page's
 * scripts run) calls `keyboard.insertText`, so the page gets trusted `input` and `change` events, as from the
 * browser's own autofill. The page never gets an event of credemu's own unless `autofillEvents` (a debug switch:
 * `credemu:autofilled` on `document`). Nothing makes the field match `:autofill`.
 * With `allowFrameOrigins` (channel only) the origin of each frame that calls is allowed on the server (POST
 * /origins) before its first request, as Playwright's own authenticator answers every page of its context.
 * Returns what the shim is installed in.
 */
export async function installShim(target, client, { origin, profile, device, autofill = true, bypassCSP, autofillEvents = false, channel = true, allowFrameOrigins = false, relay, ...contextOptions } = {}) {
  if (origin) await client.allowOrigin(origin);
  if (!device && !profile) device = client.device || undefined;
  const shimProfile = profile || (device ? undefined : client.profile);
  const shimTarget = device ? '/devices/' + encodeURIComponent(device) : '/profiles/' + encodeURIComponent(shimProfile);
  bypassCSP ??= !channel;
  const script = async (on, pairing) => client.shim(shimProfile, { autofill, device, autofillEvents,
    fillBinding: autofill ? await fillBinding(on) : undefined, channel: channel ? await channelBinding(on, client, shimTarget, allowFrameOrigins) : undefined,
    serverChannel: pairing?.names[0], serverHandoff: pairing?.names[1] });
  const paired = async (on) => (channel ? Pairing.of(on, client, relay, { profile: device ? undefined : shimProfile, device, allowFrameOrigins }) : null);
  if (typeof target.addInitScript !== 'function' && typeof target.newContext === 'function') {
    const context = await target.newContext({ ...contextOptions, bypassCSP });
    const pairing = await paired(context);
    await context.addInitScript({ content: await script(context, pairing) });
    await pairing?.start();
    return context;
  }
  if (typeof target.addInitScript !== 'function') {
    throw new TypeError('installShim takes a Playwright page, context or browser');
  }
  const pairing = await paired(target);
  await target.addInitScript({ content: await script(target, pairing) });
  await pairing?.start();
  if (bypassCSP && typeof target.newPage !== 'function' && typeof target.context === 'function') {
    const session = await target.context().newCDPSession(target);
    await session.send('Page.setBypassCSP', { enabled: true });
  }
  return target;
}

/** Whether the client's server is on a loopback host (so it reaches the browser's loopback DevTools port). */
function serverIsLocal(client) {
  const host = new URL(client.url).hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || host.startsWith('127.');
}

const devtoolsPorts = new WeakMap();

/**
 * The DevTools port of a Playwright-launched Chromium (`launch({ args: ['--remote-debugging-port=N'] })`, N or 0),
 * read from its command line (CDP Browser.getBrowserCommandLine, which Chromium answers only with
 * --enable-automation; else the browser process's /proc cmdline, its pid from SystemInfo.getProcessInfo; port 0:
 * the DevToolsActivePort file of its user data directory), or null: not Chromium, no port, or no browser
 * (a persistent context). Kept per browser.
 */
export async function chromiumDevtoolsPort(browser) {
  if (!browser || typeof browser.browserType !== 'function' || browser.browserType().name() !== 'chromium') return null;
  if (!devtoolsPorts.has(browser)) {
    devtoolsPorts.set(browser, (async () => {
      const session = await browser.newBrowserCDPSession();
      try {
        let args;
        try {
          args = (await session.send('Browser.getBrowserCommandLine')).arguments;
        } catch {
          const [browserProcess] = (await session.send('SystemInfo.getProcessInfo')).processInfo.filter((p) => p.type === 'browser');
          args = browserProcess ? readFileSync(`/proc/${browserProcess.id}/cmdline`, 'utf8').split('\0') : [];
        }
        const switches = new Map(args.filter((a) => a.startsWith('--') && a.includes('=')).map((a) => [a.slice(2, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]));
        const given = switches.get('remote-debugging-port');
        if (!/^[0-9]+$/.test(given ?? '')) return null;
        if (Number(given) !== 0) return Number(given);
        const active = join(switches.get('user-data-dir') ?? '', 'DevToolsActivePort');
        return switches.has('user-data-dir') && existsSync(active) ? Number(readFileSync(active, 'utf8').split(/\s/)[0]) || null : null;
      } finally {
        await session.detach().catch(() => {});
      }
    })().catch(() => null));
  }
  return devtoolsPorts.get(browser);
}

const pairings = new WeakMap();

/**
 * Playwright's Chromium with a DevTools port: credemu serve relays each page's shim itself (the Python client's
 * credemu.shim._Pairing; docs/shim.md, "Transport"). The shim stays the init script, with its exposeBinding
 * channel relayed here; each page of the context also gets a paired channel of the server's (POST /channels with
 * `paired`: the server adds a binding of these names and its handoff script), which the shim prefers in every
 * document the server reached. A page the server cannot take keeps the driver's channel, as does a document open
 * before its page was reached.
 */
class Pairing {
  constructor(context, page, client, port, { profile, device, allowFrameOrigins }) {
    Object.assign(this, { context, page, client, port, profile, device, allowFrameOrigins });
    this.names = ['__credemuServer_' + randomBytes(16).toString('hex'), '__credemuHandoff_' + randomBytes(16).toString('hex')];
    this.attached = new WeakMap();
    this.opening = 0;
  }

  /** The pairing for a Playwright context or page, or null: relay 'client', a server off loopback, no Chromium port. */
  static async of(target, client, relay, options) {
    if (relay === 'client' || (relay !== 'server' && !serverIsLocal(client))) return null;
    const page = typeof target.goto === 'function' ? target : null;
    const context = page ? page.context() : target;
    if (typeof context.newCDPSession !== 'function' || typeof context.browser !== 'function') return null;
    const port = await chromiumDevtoolsPort(context.browser());
    return port ? new Pairing(context, page, client, port, options) : null;
  }

  /** Each page of the context, now and as it opens (a Page: that page only); credentials()' newPage attaches its page itself. */
  async start() {
    if (this.page) return this.attach(this.page);
    pairings.set(this.context, this);
    this.context.on('page', (page) => { if (!this.opening) this.attach(page); });
    await Promise.all(this.context.pages().map((page) => this.attach(page)));
  }

  /** `open()`'s page, attached before it is returned. */
  async newPage(open) {
    this.opening += 1;
    let page;
    try {
      page = await open();
    } finally {
      this.opening -= 1;
    }
    await this.attach(page);
    return page;
  }

  /** Opens the page's paired channel, once; never throws (the page keeps the driver's channel). */
  attach(page) {
    if (!this.attached.has(page)) {
      this.attached.set(page, (async () => {
        const session = await this.context.newCDPSession(page);
        let target;
        try {
          target = (await session.send('Target.getTargetInfo')).targetInfo.targetId;
        } finally {
          await session.detach().catch(() => {});
        }
        await this.client.openChannel(`ws://127.0.0.1:${this.port}/devtools/page/${target}`, { profile: this.profile,
          device: this.device, paired: this.names, allowFrameOrigins: this.allowFrameOrigins });
      })().catch(() => {}));
    }
    return this.attached.get(page);
  }
}

/** A Playwright binding the shim fills through, exposed before the shim's init script: the text is inserted into
 * the focused field as typed input (CDP Input.insertText in Chromium), so the page's events are trusted. */
async function fillBinding(target) {
  const name = '__credemuFill_' + randomBytes(8).toString('hex');
  await target.exposeBinding(name, ({ page }, text) => page.keyboard.insertText(String(text)));
  return name;
}

// ---- Playwright's BrowserContext.credentials, answered by a credemu profile (Playwright 1.61+; docs/clients.md) ----

const PLAYWRIGHT_KEYS = ['id', 'rpId', 'userHandle', 'privateKey', 'publicKey', 'signCount'];
const installed = new WeakMap();
let shared = null;

/**
 * One `credemu serve` for the whole process, started on first use (`options` as Server's, on that first call
 * only): what credentials() uses when given no server. Its process does not keep Node running, and is ended
 * (its temporary vault removed) when Node exits.
 */
export function sharedServer(options) {
  shared ??= new Server(options).start().then((server) => {
    server.process.unref();
    server.process.stdout.unref?.();
    server.process.stderr.unref?.();
    process.once('exit', () => {
      try { server.process?.kill('SIGKILL'); } catch { /* gone */ }
      rmSync(server.directory, { recursive: true, force: true });
    });
    return server;
  }, (error) => { shared = null; throw error; });
  return shared;
}

/**
 * Playwright's `Credentials` (context.credentials: install, create, get, delete) on a fresh credemu profile of
 * `pack` made for this context: the suite's `context.credentials.install()` becomes
 * `credentials(context, {pack: 'gpm'}).install()` and the rest of it runs unchanged. From this call on
 * `context.credentials` is this object, and the context's storageState({credentials: true}) and
 * setStorageState(state) carry the profile's passkeys in Playwright's `credentials` member. The same context
 * gives the same object. Options: `pack` (default webauthn-spec), `platform`, the profile's other settings in the
 * API's names, `server` (a Server or Client; default sharedServer()), `origin` (allowed up front; the origin of
 * every frame that calls is allowed anyway, as Playwright answers every page), `profile` (its name; default a
 * random one), `keepProfile` (default false: the profile is removed when the context closes). What differs from
 * Playwright's own authenticator is the pack's (its counter mode: GPM's stays 0; its BE/BS flags, AAGUID and user
 * prompts) and the vault's: a credential ID is the vault's once, so two open contexts on one server cannot hold
 * the same credential (409 Conflict), and create() imports only with id, userHandle, privateKey and publicKey all
 * four (Playwright's documented rule; Playwright itself fills in what is missing).
 */
export function credentials(context, options = {}) {
  if (!context || typeof context.addInitScript !== 'function' || typeof context.newPage !== 'function') {
    throw new TypeError('credentials() takes a Playwright BrowserContext');
  }
  let made = installed.get(context);
  if (!made) {
    made = new Credentials(context, options);
    installed.set(context, made);
  }
  return made;
}

/** Playwright's Credentials class (types.d.ts, "interface Credentials") over one credemu profile; see credentials(). */
export class Credentials {
  constructor(context, { pack = 'webauthn-spec', server, origin, profile, keepProfile = false, ...settings } = {}) {
    this.context = context;
    this.pack = pack;
    this.origin = origin ?? null;
    this.profile = profile || 'pw-' + randomBytes(6).toString('hex');
    this.settings = settings;
    this.server = server ?? null;
    this.client = null;
    this.installed = false;
    this.playwright = context.credentials;
    const storageState = context.storageState.bind(context);
    const setStorageState = context.setStorageState.bind(context);
    this.original = { storageState, setStorageState };
    context.credentials = this;
    context.storageState = (opts) => this.storageState(opts);
    context.setStorageState = (state) => this.setStorageState(state);
    // A new page's paired channel of credemu serve opens before the page is returned (where there is one), so its
    // first document already answers through the server: the 'page' event alone comes too late for it.
    const newPage = context.newPage.bind(context);
    context.newPage = (...args) => {
      const pairing = pairings.get(context);
      return pairing ? pairing.newPage(() => newPage(...args)) : newPage(...args);
    };
    if (!keepProfile) {
      const close = context.close.bind(context);
      context.close = async (opts) => { await close(opts); await this.removeProfile(); };
      context.once('close', () => { this.removeProfile(); });
    }
  }

  /** The profile goes with its context (a credential ID is the vault's once, so its passkeys can be seeded again elsewhere); never throws. */
  removeProfile() {
    this.removed ??= this.made ? this.made.then((client) => client.removeProfile(this.profile)).then(() => undefined, () => undefined) : Promise.resolve();
    return this.removed;
  }

  /** The profile, made on first use (POST /profiles); the Client acting for it. */
  ready() {
    this.made ??= (async () => {
      const server = this.server ?? await sharedServer();
      const base = typeof server.client === 'function' ? server.client() : server;
      await base.createProfile(this.profile, { pack: this.pack, ...this.settings });
      this.client = base.forProfile(this.profile);
      return this.client;
    })().catch((error) => { this.made = null; throw error; });
    return this.made;
  }

  /**
   * Every page of the context from now on runs credemu's shim for the profile. Credentials Playwright's own
   * authenticator holds (seeded before this call, or from the storage state the context was made with, which
   * also installed that authenticator) move to the profile, and Playwright's authenticator is taken out (a
   * setStorageState without credentials disposes of it), so the page talks to credemu alone. Once per context.
   */
  async install() {
    if (this.installed) return;
    this.installed = true;
    try {
      const client = await this.ready();
      const inherited = await this.playwright.get();
      if (inherited.length) {
        const { credentials: _, ...state } = await this.original.storageState({ indexedDB: true });
        await this.original.setStorageState(state);
        for (const credential of inherited) await this.create(credential.rpId, credential);
      }
      await installShim(this.context, client, { origin: this.origin ?? undefined, allowFrameOrigins: true });
    } catch (error) {
      this.installed = false;
      throw error;
    }
  }

  /** Playwright's create(rpId, {id, userHandle, privateKey, publicKey, signCount}): `{id, rpId, userHandle, privateKey, publicKey, signCount}`. */
  async create(rpId, options = {}) {
    const client = await this.ready();
    const { id, userHandle, privateKey, publicKey, signCount } = options;
    return pick(await client.createCredential(rpId, { id, userHandle, privateKey, publicKey, signCount }));
  }

  /** Playwright's get({id, rpId}): every credential the profile holds, seeded or registered by the page. */
  async get(options = {}) {
    const client = await this.ready();
    return (await client.credentials({ rpId: options.rpId, id: options.id })).map(pick);
  }

  /** Playwright's delete(id): the user deletes the passkey in the provider; an ID the profile does not hold is no error, as in Playwright. */
  async delete(id) {
    const client = await this.ready();
    try {
      await client.removePasskey(id);
    } catch (error) {
      if (!(error instanceof CredemuError && error.status === 404)) throw error;
    }
  }

  /** The context's storageState(options), its `credentials` member (with `credentials: true`) the profile's. */
  async storageState(options = {}) {
    const { path, credentials: withCredentials, ...rest } = options;
    const state = await this.original.storageState(rest);
    delete state.credentials;
    if (withCredentials) state.credentials = await this.get();
    if (path) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, JSON.stringify(state, undefined, 2), 'utf8');
    }
    return state;
  }

  /** The context's setStorageState(state): Playwright's for the rest; the profile's passkeys become the state's `credentials`. */
  async setStorageState(state) {
    const parsed = typeof state === 'string' ? JSON.parse(readFileSync(state, 'utf8')) : state;
    const { credentials: list = [], ...rest } = parsed ?? {};
    await this.original.setStorageState(rest);
    for (const credential of await this.get()) await this.delete(credential.id);
    for (const credential of list) await this.create(credential.rpId, credential);
    if (list.length) await this.install();
  }
}

/** A credential with Playwright's keys only, in its order. */
function pick(credential) {
  return Object.fromEntries(PLAYWRIGHT_KEYS.map((key) => [key, credential[key]]));
}
