// node --test clients/js: the module against a live credemu serve (the repository's build, or $CREDEMU), and
// installShim in headless Chromium through Playwright for Node (playwright-core as the Python playwright wheel
// ships it: $PLAYWRIGHT_CORE, else found in the repository's .venv; no npm).
import assert from 'node:assert/strict';
import { createHash, createPrivateKey, createPublicKey, randomBytes, verify } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { generateKeyPairSync } from 'node:crypto';
import { Client, CredemuError, Credentials, ROUTES, Server, chromiumDevtoolsPort, credentials, findBinary, installShim, originOf, relay, sharedServer } from './credemu.mjs';
import { extendWithCredemu, fixtures } from './playwright-fixtures.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
process.env.CREDEMU ||= process.env.CREDEMU_BIN || join(ROOT, '.build', 'debug', 'credemu');
const ORIGIN = 'https://shop.example.com';
const RP_ID = 'shop.example.com';
const b64 = (bytes) => Buffer.from(bytes).toString('base64url');

function registrationOptions(user) {
  return {
    rp: { id: RP_ID, name: 'Shop' }, user: { id: b64(Buffer.from('id-' + user)), name: user, displayName: user },
    challenge: b64(Buffer.from('a registration challenge')), pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  };
}

function requestOptions(allow = []) {
  return { challenge: b64(Buffer.from('an assertion challenge')), rpId: RP_ID, allowCredentials: allow.map((id) => ({ type: 'public-key', id })) };
}

let server;
before(async () => { server = await new Server().start(); });
after(async () => { await server?.stop(); });

describe('the client', () => {
  test('has a method for every route in openapi.json, and lists no other route', async () => {
    const document = await server.client().openapi();
    const documented = new Set();
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of Object.keys(item)) if (['get', 'post', 'put', 'patch', 'delete'].includes(method)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    assert.deepEqual([...documented].filter((r) => !(r in ROUTES)), [], 'routes with no Client method');
    assert.deepEqual(Object.keys(ROUTES).filter((r) => !documented.has(r)), [], 'ROUTES lists a route the server does not document');
    for (const names of Object.values(ROUTES)) for (const name of names) assert.equal(typeof Client.prototype[name], 'function', name);
  });

  test('each method reaches the route it is listed for', async () => {
    const templates = Object.keys(ROUTES).map((route) => {
      const [method, template] = route.split(' ');
      return { route, method, pattern: new RegExp('^' + template.replace(/\{[^}]+\}/g, '[^/]+') + '$') };
    });
    const reached = [];
    class Recording extends Client {
      request(method, path, body, query) {
        const match = templates.find((t) => t.method === method && t.pattern.test(path.split('?')[0]));
        reached.push(match ? match.route : `${method} ${path}`);
        return super.request(method, path, body, query);
      }
    }
    const client = new Recording(server.url, { profile: 'reach', origin: ORIGIN });
    const calls = {};
    const call = async (name, ...args) => {
      const start = reached.length;
      try {
        return await client[name](...args);
      } finally {
        (calls[name] ||= new Set()); reached.slice(start).forEach((r) => calls[name].add(r));
      }
    };
    await call('health'); await call('openapi'); await call('providers'); await call('clock');
    assert.match(await call('shim'), /credemu browser shim/);
    await call('createProfile', 'reach', { pack: 'gpm' });
    await call('profiles'); await call('getProfile'); await call('updateProfile', null, { automaticPasskeyUpgrades: true });
    await call('setClock', '2026-11-29T10:00:00Z'); await call('advanceClock', '1m'); await call('systemClock');
    await call('allowedOrigins'); await call('allowOrigin', 'http://localhost:8123/login');
    // No browser here: a DevTools port nothing listens on, and an ID no channel has.
    await assert.rejects(call('openChannel', 'ws://127.0.0.1:1/devtools/page/X'), { name: 'DevToolsUnreachable' });
    assert.deepEqual(await call('channels'), []);
    await assert.rejects(call('closeChannel', 'ch0'), { name: 'NotFound' });
    await call('savePassword', 'alice@example.com', 'pw'); await call('passwords'); await call('usePassword', 'alice@example.com');
    await call('autofill', { username: 'alice@example.com', submit: true });
    const created = await call('create', registrationOptions('alice@example.com'), { mediation: 'conditional' });
    await call('get', requestOptions());
    await call('passkeys'); await call('passkey', created.id); await call('getClientCapabilities');
    await call('signalCurrentUserDetails', { rpId: RP_ID, userId: Buffer.from('user'), name: 'alice@example.com', displayName: 'Alice' });
    await call('signalAllAcceptedCredentials', { rpId: RP_ID, userId: Buffer.from('other'), allAcceptedCredentialIds: [] });
    await call('signalUnknownCredential', { rpId: RP_ID, credentialId: new Uint8Array(16).fill(1) });
    await call('events'); await call('findings');
    await call('queueDecisions', ['accept']); await call('pendingDecisions'); await call('clearDecisions');
    await call('forgeNext', 'badSignature'); await call('pendingForgery'); await call('forgeNext', null);
    const hold = await call('hold', { timeoutMs: 5000 });
    await call('holds'); await call('releaseHold', hold);
    await call('offers');
    const waiting = server.client('reach', { origin: ORIGIN }).get(requestOptions(), { mediation: 'conditional', ceremony: 'c-1' });
    for (let i = 0; i < 500 && (await server.client('reach').offers()).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await call('pick', created.id, { ceremony: 'c-1' });
    assert.equal((await waiting).id, created.id);
    assert.deepEqual(await call('abort', 'not-in-flight'), { aborted: false });
    await call('hidePasskey', created.id); await call('restorePasskey', created.id);
    assert.equal((await call('renamePasskey', created.id, { userName: 'work alice' })).editedByUser, true);
    // The same ceremonies on a device whose one provider account is the profile.
    const device = 'reach-laptop';
    await call('createDevice', device, { providers: ['reach'], platform: 'chrome-desktop' });
    await call('devices'); await call('getDevice', device); await call('updateDevice', device, { privateBrowsing: false });
    const onDevice = await call('create', registrationOptions('dana'), { device });
    assert.equal(onDevice.provider, 'reach');
    assert.equal(JSON.stringify(onDevice).includes('provider'), false, 'the account is not in the JSON an RP gets');
    assert.equal((await call('get', requestOptions(), { device })).provider, 'reach');
    await call('getClientCapabilities', { device });
    await call('savePassword', 'dana', 'pw', { device }); await call('passwords', { device });
    await call('usePassword', 'dana', { device }); await call('autofill', { username: 'dana', device });
    assert.equal((await call('reportUnusedPassword', 'example.com', 'dana', { device }).catch((e) => e)).name, 'NotSupportedError');
    assert.deepEqual(await call('signalUnknownCredential', { rpId: RP_ID, credentialId: new Uint8Array(16).fill(2) }, { device }), ['reach']);
    await call('signalAllAcceptedCredentials', { rpId: RP_ID, userId: Buffer.from('other'), allAcceptedCredentialIds: [] }, { device });
    await call('signalCurrentUserDetails', { rpId: RP_ID, userId: Buffer.from('user'), name: 'alice@example.com', displayName: 'Alice' }, { device });
    await call('offers', { device });
    assert.deepEqual(await call('queueDecisions', ['use:reach'], { device }), ['use:reach']);
    assert.deepEqual(await call('pendingDecisions', { device }), ['use:reach']);
    assert.deepEqual(await call('clearDecisions', { device }), []);
    assert.deepEqual(await call('forgeNext', 'otherOrigin', { device }), { forgery: 'otherOrigin' });
    await call('forgeNext', null, { device }); assert.deepEqual(await call('pendingForgery', { device }), { forgery: null });
    assert.ok((await call('attestationRoot')).pem.startsWith('-----BEGIN CERTIFICATE-----'));
    const onDeviceWaiting = server.client('reach', { origin: ORIGIN }).get(requestOptions(), { mediation: 'conditional', ceremony: 'd-1', device });
    for (let i = 0; i < 500 && (await server.client().offers({ device })).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await call('pick', onDevice.id, { ceremony: 'd-1', device });
    const picked = await onDeviceWaiting;
    assert.deepEqual([picked.id, picked.provider], [onDevice.id, 'reach']);
    assert.deepEqual(await call('abort', 'not-in-flight', { device }), { aborted: false });
    await call('removeDevice', device);
    await assert.rejects(call('reportUnusedPassword', 'example.com', 'alice@example.com'), { name: 'NotSupportedError' });
    const scenarios = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'scenarios');
    const scenario = readFileSync(join(scenarios, readdirSync(scenarios).filter((f) => f.endsWith('.json')).sort()[0]), 'utf8');
    await call('runScenario', scenario, { providers: 'gpm' });
    await call('demo'); await call('startDemo');
    assert.match(await call('consoleFile'), /<html/i); await call('consoleFile', 'console.js'); await call('consoleFile', 'console.css'); await call('consoleFile', 'console.svg');
    // Playwright's context.credentials: seed, read back (delete is removePasskey's route).
    const seeded = await call('createCredential', RP_ID, { signCount: 7 });
    assert.deepEqual(Object.keys(seeded), ['id', 'rpId', 'userHandle', 'privateKey', 'publicKey', 'signCount']);
    assert.deepEqual((await call('credentials', { id: seeded.id })).map((c) => c.id), [seeded.id]);
    await call('removePasskey', seeded.id);
    await call('removePasskey', created.id);
    await call('createProfile', 'mac', { pack: 'apple' });
    const moved = await call('moveCredentials', 'reach', 'mac', { rpId: RP_ID });
    assert.equal(moved.from, 'reach'); assert.equal(moved.importer.pack, 'apple');
    // The mac profile's credentials as files over HTTP: a list format only when the private keys are asked for.
    const inMac = await client.createCredential(RP_ID, { profile: 'mac' });
    await assert.rejects(call('exportVault', 'playwright', { profile: 'mac' }), (e) => e.name === 'TypeError' && /includeSecrets/.test(e.message));
    const file = await call('exportVault', 'playwright', { includeSecrets: true, profile: 'mac' });
    assert.ok(file.document.map((c) => c.id).includes(inMac.id));
    assert.equal((await call('exportVault', 'cxf', { profile: 'mac' })).includesSecrets, false);
    for (const c of file.document) await client.removePasskey(c.id, { profile: 'mac' });
    assert.deepEqual(await call('importVault', file.document, { format: 'playwright', profile: 'mac' }), { imported: { passkeys: file.document.length } });
    // WebDriver's virtual authenticators, under selenium-webdriver's names.
    const pkcs8 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'der' });
    const key = await call('addVirtualAuthenticator', { protocol: 'ctap2', transport: 'usb', hasResidentKey: true });
    assert.equal(client.virtualAuthenticatorId, key);
    await call('addCredential', { credentialId: 'AQID', isResidentCredential: true, rpId: RP_ID, userHandle: 'dXNlcg',
      privateKey: pkcs8.toString('base64url'), signCount: 0 });
    assert.deepEqual((await call('getCredentials')).map((c) => c.credentialId), ['AQID']);
    assert.deepEqual(await call('setResponseOverrideBits', { isBadUP: true }), { isBogusSignature: false, isBadUV: false, isBadUP: true });
    await call('setUserVerified', false); await call('setCredentialProperties', new Uint8Array([1, 2, 3]), { backupState: false, signCount: null });
    await call('removeCredential', new Uint8Array([1, 2, 3])); await call('removeAllCredentials'); await call('removeVirtualAuthenticator');
    assert.equal(client.virtualAuthenticatorId, null);
    await call('removeProfile');

    for (const [name, routes] of Object.entries(calls)) {
      const listed = Object.keys(ROUTES).filter((r) => ROUTES[r].includes(name));
      assert.deepEqual([...routes].sort(), listed.sort(), `${name} reached ${[...routes]}`);
    }
    assert.deepEqual(Object.values(ROUTES).flat().filter((n) => !(n in calls)), [], 'listed methods this test did not call');
  });

  test('a registration and an assertion verify with the key the registration gave', async () => {
    await server.client().createProfile('verify', { pack: 'webauthn-spec' });
    const client = server.client('verify', { origin: ORIGIN });
    const registration = await client.create(JSON.stringify(registrationOptions('bob')));
    const clientData = JSON.parse(Buffer.from(registration.response.clientDataJSON, 'base64url'));
    assert.deepEqual([clientData.type, clientData.origin, clientData.challenge], ['webauthn.create', ORIGIN, registrationOptions('bob').challenge]);
    const assertion = await client.get(requestOptions([registration.id]));
    const key = createPublicKey({ key: Buffer.from(registration.response.publicKey, 'base64url'), format: 'der', type: 'spki' });
    const signed = Buffer.concat([Buffer.from(assertion.response.authenticatorData, 'base64url'),
      createHash('sha256').update(Buffer.from(assertion.response.clientDataJSON, 'base64url')).digest()]);
    assert.ok(verify('sha256', signed, key, Buffer.from(assertion.response.signature, 'base64url')), 'the ES256 signature verifies');
    const rpIdHash = Buffer.from(assertion.response.authenticatorData, 'base64url').subarray(0, 32);
    assert.deepEqual(rpIdHash, createHash('sha256').update(RP_ID).digest());
  });

  test('forgeNext: the next assertion carries a signature its key does not verify, once', async () => {
    await server.client().createProfile('forged', { pack: 'webauthn-spec' });
    const client = server.client('forged', { origin: ORIGIN });
    const registration = await client.create(registrationOptions('carol'));
    const key = createPublicKey({ key: Buffer.from(registration.response.publicKey, 'base64url'), format: 'der', type: 'spki' });
    const verifies = (assertion) => verify('sha256', Buffer.concat([Buffer.from(assertion.response.authenticatorData, 'base64url'),
      createHash('sha256').update(Buffer.from(assertion.response.clientDataJSON, 'base64url')).digest()]), key,
    Buffer.from(assertion.response.signature, 'base64url'));
    assert.equal((await client.forgeNext('badSig').catch((e) => e)).status, 400);
    assert.deepEqual(await client.forgeNext('badSignature'), { forgery: 'badSignature', overrideBits: { isBogusSignature: false, isBadUV: false, isBadUP: false } });
    assert.equal(verifies(await client.get(requestOptions([registration.id]))), false, 'the forged signature');
    assert.equal((await client.pendingForgery()).forgery, null);
    assert.equal(verifies(await client.get(requestOptions([registration.id]))), true, 'the next answer is honest');
  });

  test('renamePasskey is the user\'s edit, which GPM\'s details signal keeps and Apple\'s does not', async () => {
    const base = server.client('default', { origin: ORIGIN });
    for (const [name, pack] of [['js-rename-gpm', 'gpm'], ['js-rename-apple', 'apple']]) {
      await base.createProfile(name, { pack });
      const profile = server.client(name, { origin: ORIGIN });
      const made = await profile.create(registrationOptions('alice'));
      const renamed = await profile.renamePasskey(made.id, { userName: 'work alice', displayName: 'Alice at work' });
      assert.deepEqual([renamed.userName, renamed.displayName, renamed.editedByUser], ['work alice', 'Alice at work', true]);
      assert.equal((await profile.renamePasskey(made.id, { displayName: 'A. at work' })).userName, 'work alice', 'a name left out is kept');
      await profile.signalCurrentUserDetails({ rpId: RP_ID, userId: Buffer.from('id-alice'), name: 'alice@new.example', displayName: 'Alice New' });
      const after = await profile.passkey(made.id);
      assert.equal(after.userName, pack === 'gpm' ? 'work alice' : 'alice@new.example', pack);
      assert.equal(after.displayName, 'A. at work');
      for (const bad of [{ userName: '' }, { displayName: 'a\u0007' }, { userName: 'a'.repeat(1025) }, {}]) {
        await assert.rejects(profile.renamePasskey(made.id, bad), (e) => e instanceof CredemuError && e.name === 'TypeError' && e.status === 400);
      }
      assert.deepEqual(await profile.passkey(made.id), after, 'a refused rename changes nothing');
      await base.removeProfile(name);
    }
  });

  test('a refusal is one CredemuError with name, reason, dialects and status', async () => {
    await server.client().createProfile('refusals', { pack: 'gpm', platform: 'android' });
    const droid = server.client('refusals', { origin: ORIGIN });
    const error = await droid.create(registrationOptions('nobody'), { mediation: 'conditional' }).then(() => null, (e) => e);
    assert.ok(error instanceof CredemuError);
    assert.deepEqual([error.status, error.name, error.reason, error.silent, error.dialect], [422, 'NotAllowedError', 'noMatchingPassword', true, 'android']);
    assert.deepEqual(Object.keys(error.dialects).sort(), ['android', 'apple', 'web']);
    assert.match(error.dialects.android.exception, /^androidx\.credentials\.exceptions\./);
    assert.match(error.message, /^POST \/profiles\/refusals\/credentials\/create: 422 NotAllowedError: .*\(reason: noMatchingPassword\)$/);
    const missing = await droid.getProfile('ghost').catch((e) => e);
    assert.deepEqual([missing.status, missing.name, missing.reason], [404, 'NotFound', null]);
    const duplicate = await droid.createProfile('refusals').catch((e) => e);
    assert.deepEqual([duplicate.status, duplicate.name], [409, 'Conflict']);
    const malformed = await droid.get({ challenge: 'not base64url!' }).catch((e) => e);
    assert.deepEqual([malformed.status, malformed.name], [400, 'TypeError']);
    const limited = await (async () => {
      for (let i = 0; i < 20; i++) await droid.signalUnknownCredential({ rpId: RP_ID, credentialId: new Uint8Array(16).fill(i) });
    })().catch((e) => e);
    assert.deepEqual([limited.status, limited.reason], [429, 'rateLimited']);
    assert.ok(limited.retryMillis > 0);
    const unreachable = await new Client('http://127.0.0.1:9', { timeout: 5000 }).health().catch((e) => e);
    assert.deepEqual([unreachable.name, unreachable.status], ['ServerUnreachable', null]);
    assert.equal(originOf('http://LocalHost:8000/a?b'), 'http://localhost:8000');
  });
});

describe('devices', () => {
  test('an answer names the account that answered, a refusal the one that refused', async () => {
    const client = server.client('default', { origin: ORIGIN });
    await client.createProfile('acct-gpm', { pack: 'gpm' });
    await client.createProfile('acct-bw', { pack: 'bitwarden' });
    const created = await client.createDevice('desk', { providers: 'acct-gpm,acct-bw', browserSignedIn: true });
    assert.deepEqual([created.platform, created.providers, created.preferred], ['chrome-desktop', ['acct-gpm', 'acct-bw'], null]);
    const desk = client.forDevice('desk');
    const registration = await desk.create(registrationOptions('erin'));
    assert.equal(registration.provider, 'acct-bw', "Bitwarden's page script takes the create on desktop Chrome");
    assert.deepEqual((await client.passkeys({ profile: 'acct-bw' })).map((k) => k.credentialId), [registration.id]);
    assert.deepEqual(await client.passkeys({ profile: 'acct-gpm' }), []);
    assert.deepEqual(await desk.signalUnknownCredential({ rpId: RP_ID, credentialId: new Uint8Array(16).fill(3) }), ['acct-gpm']);
    assert.equal(await client.signalUnknownCredential({ rpId: RP_ID, credentialId: new Uint8Array(16).fill(3) }, { profile: 'acct-gpm' }), undefined);
    assert.equal((await desk.getClientCapabilities()).profile, 'acct-bw');
    assert.equal((await desk.getClientCapabilities({ profile: 'acct-gpm' })).profile, 'acct-gpm');
    assert.throws(() => desk.create(registrationOptions('x'), { profile: 'acct-gpm', device: 'desk' }), TypeError);
    assert.throws(() => client.getDevice(), TypeError);
    const config = (script) => JSON.parse(script.trimEnd().split('\n').at(-1).slice(3, -2));
    // The page's script names the device only; which accounts answer behind it stays on the server.
    assert.deepEqual([config(await desk.shim()).device, config(await desk.shim()).profile], ['desk', undefined]);

    await client.createDevice('droid', { providers: ['acct-gpm'], platform: 'chrome-android' });
    const optOut = await client.create(registrationOptions('nobody'), { device: 'droid', mediation: 'conditional' }).catch((e) => e);
    assert.deepEqual([optOut.reason, optOut.silent, optOut.profile], ['noMatchingPassword', true, 'acct-gpm']);
    const inUse = await client.removeProfile('acct-gpm').catch((e) => e);
    assert.deepEqual([inUse.status, inUse.name], [409, 'Conflict']);
    const notAmong = await client.updateDevice('desk', { preferred: 'nobody' }).catch((e) => e);
    assert.deepEqual([notAmong.status, notAmong.name], [400, 'InvalidDeviceSetting']);
    assert.deepEqual((await client.updateDevice('desk', { providers: ['acct-gpm'] })).providers, ['acct-gpm']);
    assert.deepEqual((await client.devices()).map((d) => d.name).sort(), ['desk', 'droid']);
    await client.removeDevice('droid'); await client.removeDevice('desk');
    await client.removeProfile('acct-gpm');
  });
});

describe('the server', () => {
  test('starts on a free port, answers, stops in order, and keeps its log', async () => {
    const one = await new Server().start();
    const two = await new Server().start();
    assert.notEqual(one.port, two.port);
    assert.notEqual((await one.client().health()).vault, (await two.client().health()).vault);
    assert.equal(one.log.split('\n')[0], one.url);
    const directory = one.directory;
    assert.equal(await one.stop(), 0);
    assert.equal(await two.stop(), 0);
    assert.match(one.log.trim().split('\n').at(-1), /stopped/);
    assert.equal(existsSync(directory), false, 'the temporary vault is gone');
  });

  test('that cannot start says why, with its log', async () => {
    const error = await new Server({ args: ['--threads', 'nope'] }).start().catch((e) => e);
    assert.equal(error.name, 'ServerFailedToStart');
    assert.match(error.message, /--threads/);
  });

  test('allows origins given at start and later, and sends its token', async () => {
    const s = await new Server({ allowOrigins: ['http://localhost:8001/login'], token: 't0k3n' }).start();
    try {
      await s.allowOrigin('http://localhost:8002');
      assert.deepEqual(await s.client().allowedOrigins(), ['http://localhost:8001', 'http://localhost:8002']);
      const page = await fetch(s.url + '/health', { headers: { Origin: 'http://localhost:8002' } });
      assert.equal(page.headers.get('access-control-allow-origin'), 'http://localhost:8002');
      // The page's script carries a page token for its own profile, never the server's token.
      assert.doesNotMatch(await s.client().shim(), /t0k3n/);
      assert.match(await s.client().shim(), /"token":"page\./);
      const refused = await new Client(s.url).profiles().catch((e) => e);
      assert.deepEqual([refused.status, refused.name], [401, 'Unauthorized']);
    } finally {
      await s.stop();
    }
  });

  test('finds the binary given, else $CREDEMU, else on PATH', () => {
    const real = process.env.CREDEMU;
    assert.equal(findBinary(real), real);
    assert.equal(findBinary(), real);
    const saved = { CREDEMU: process.env.CREDEMU, PATH: process.env.PATH };
    const bin = mkdtempSync(join(tmpdir(), 'credemu-bin-'));
    symlinkSync(real, join(bin, 'credemu'));
    try {
      delete process.env.CREDEMU;
      process.env.PATH = bin;
      assert.equal(findBinary(), join(bin, 'credemu'));
      process.env.PATH = join(bin, 'empty');
      assert.throws(() => findBinary(), (e) => e instanceof CredemuError && e.name === 'BinaryNotFound');
    } finally {
      Object.assign(process.env, saved);
    }
  });
});

function playwrightCore() {
  if (process.env.PLAYWRIGHT_CORE) return process.env.PLAYWRIGHT_CORE;
  const lib = join(ROOT, '.venv', 'lib');
  for (const python of existsSync(lib) ? readdirSync(lib) : []) {
    const candidate = join(lib, python, 'site-packages', 'playwright', 'driver', 'package');
    if (existsSync(join(candidate, 'index.mjs'))) return candidate;
  }
  return null;
}

const nodeMajor = Number(process.versions.node.split('.')[0]);
const noPlaywright = nodeMajor < 20 ? `playwright-core needs Node 20; this is ${process.version}`
  : playwrightCore() ? false : 'no playwright-core: set PLAYWRIGHT_CORE (make test-clients does)';

describe('installShim in Chromium through Playwright for Node', { skip: noPlaywright }, () => {
  let browser, site, closeSite;
  const page = Buffer.from('<!doctype html><title>strict</title><p>a page whose CSP is default-src \'self\'</p>');
  // A sign-in form that records the events the page sees and whether anything named credemu reaches it.
  const signin = Buffer.from(`<!doctype html><title>sign in</title><form><input name="username" autocomplete="username">
    <input name="password" type="password"></form><script>
    window.seen = { events: [], credemu: 0, globals: Object.getOwnPropertyNames(window).filter((n) => /credemufill/i.test(n)) };
    for (const type of ['input', 'change']) document.addEventListener(type, (e) => window.seen.events.push([type, e.target.name, e.isTrusted]), true);
    document.addEventListener('credemu:autofilled', () => { window.seen.credemu += 1; }, true);
    </script>`);
  const ceremonies = async () => {
    try {
      const created = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON({
        rp: { id: 'localhost', name: 'Strict' }, user: { id: 'dXNlci0x', name: 'alice', displayName: 'Alice' },
        challenge: 'AAECAwQFBgcICQoLDA0ODw', pubKeyCredParams: [{ type: 'public-key', alg: -7 }] }) });
      const got = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON({ challenge: 'AAECAwQFBgcICQoLDA0ODw', rpId: 'localhost' }) });
      return { created: created.id, got: got.id };
    } catch (e) {
      return { error: e.name, reason: e.credemu ? e.credemu.reason : null };
    }
  };

  before(async () => {
    const { chromium } = await import(join(playwrightCore(), 'index.mjs'));
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    const http = createServer((request, response) => {
      if (request.url === '/signin') {
        response.writeHead(200, { 'Content-Type': 'text/html' });
        response.end(signin);
        return;
      }
      response.writeHead(200, { 'Content-Type': 'text/html', 'Content-Security-Policy': "default-src 'self'" });
      response.end(page);
    });
    await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
    site = `http://localhost:${http.address().port}`;
    closeSite = () => new Promise((resolve) => http.close(resolve));
  });
  after(async () => { await browser?.close(); await closeSite?.(); });

  async function freshProfile(name, pack) {
    await server.client().createProfile(name, { pack });
    return server.client(name);
  }

  async function checkSignedIn(result, profile) {
    assert.equal(result.error, undefined, JSON.stringify(result));
    assert.equal(result.created, result.got);
    const passkeys = await profile.passkeys();
    assert.deepEqual(passkeys.map((p) => [p.credentialId, p.rpId]), [[result.created, 'localhost']]);
  }

  test('a page: through the driver\'s channel, the page\'s CSP in force, the origin allowed', async () => {
    const profile = await freshProfile('pw-page', 'gpm');
    const context = await browser.newContext();
    const tab = await context.newPage();
    assert.equal(await installShim(tab, profile, { origin: site + '/login' }), tab);
    await tab.goto(site + '/');
    await checkSignedIn(await tab.evaluate(ceremonies), profile);
    assert.equal(await tab.evaluate((url) => fetch(url + '/health').then(() => 'fetched', (e) => e.name), server.url), 'TypeError',
      "no bypass: the page's own fetch to another origin is still refused");
    await context.close();
  });

  test('the relay refuses all but the shim\'s own routes, and frames with no http(s) origin', async () => {
    const profile = await freshProfile('pw-relay', 'gpm');
    const target = '/profiles/pw-relay';
    const forged = [
      [{ id: 'a', method: 'POST', path: '/user', body: { decisions: ['accept'] } }, site, 'RouteNotRelayed'],
      [{ id: 'b', method: 'POST', path: '/ceremonies/../../../user', body: {} }, site, 'RouteNotRelayed'],
      [{ id: 'c', method: 'GET', path: '/capabilities?profile=x', body: null }, site, 'RouteNotRelayed'],
      [{ id: 'd', method: 'GET', path: '/capabilities', body: null }, 'about:blank', 'OriginNotRelayed'],
      [{ method: 'GET', path: '/capabilities' }, site, 'BadChannelMessage'],
    ];
    for (const [message, frame, name] of forged) {
      const answer = await relay(profile, target, JSON.stringify(message), frame);
      assert.equal(answer.body.error.name, name, JSON.stringify(message));
    }
    await profile.allowOrigin(site);
    const answer = await relay(profile, target, JSON.stringify({ id: 'e', method: 'GET', path: '/capabilities', body: null }), site + '/login');
    assert.deepEqual([answer.id, answer.status], ['e', 200]);
    assert.deepEqual(await profile.pendingDecisions(), []);
  });

  test('a browser: a new context with the bypass, every page of it', async () => {
    const profile = await freshProfile('pw-browser', 'apple');
    const context = await installShim(browser, profile, { origin: site, viewport: { width: 800, height: 600 } });
    const tab = await context.newPage();
    await tab.goto(site + '/');
    assert.deepEqual(tab.viewportSize(), { width: 800, height: 600 });
    await checkSignedIn(await tab.evaluate(ceremonies), profile);
    assert.equal((await profile.passkeys())[0].aaguid, '00000000-0000-0000-0000-000000000000', "Apple's all-zero AAGUID");
    await context.close();
  });

  test('a context made with bypassCSP', async () => {
    const profile = await freshProfile('pw-context', 'bitwarden');
    const context = await browser.newContext({ bypassCSP: true });
    await installShim(context, profile, { origin: site });
    const tab = await context.newPage();
    await tab.goto(site + '/');
    await checkSignedIn(await tab.evaluate(ceremonies), profile);
    await context.close();
  });

  test('a device: the page\'s create goes to the extension\'s account, and its get signs in there', async () => {
    await server.client().createProfile('pw-dev-gpm', { pack: 'gpm' });
    await server.client().createProfile('pw-dev-bw', { pack: 'bitwarden' });
    await server.client().createDevice('pw-desk', { providers: ['pw-dev-gpm', 'pw-dev-bw'] });
    const context = await installShim(browser, server.client().forDevice('pw-desk'), { origin: site });
    const tab = await context.newPage();
    await tab.goto(site + '/');
    await checkSignedIn(await tab.evaluate(ceremonies), server.client('pw-dev-bw'));
    assert.deepEqual(await server.client('pw-dev-gpm').passkeys(), []);
    await context.close();
  });

  test('a saved password is filled through the driver: trusted events, no event or global of credemu\'s', async () => {
    const profile = await freshProfile('pw-fill', 'gpm');
    await profile.savePassword('alice', 'correct horse', { origin: site });
    for (const autofillEvents of [false, true]) {
      const context = await installShim(browser, profile, { origin: site, autofillEvents });
      const tab = await context.newPage();
      await tab.goto(site + '/signin');
      await tab.waitForFunction(() => document.querySelector('input[name=password]').value !== '');
      await tab.waitForTimeout(200);
      const seen = await tab.evaluate(() => window.seen);
      assert.deepEqual(seen.events, [['input', 'username', true], ['change', 'username', true], ['input', 'password', true], ['change', 'password', true]]);
      assert.deepEqual(seen.globals, []);
      assert.equal(seen.credemu, autofillEvents ? 1 : 0, 'credemu:autofilled only with the debug switch');
      await context.close();
    }
  });

  test('fetching without the bypass the page\'s CSP blocks the shim, and an origin not allowed is refused', async () => {
    const profile = await freshProfile('pw-refused', 'gpm');
    const context = await browser.newContext();
    const tab = await context.newPage();
    await installShim(tab, profile, { origin: site, bypassCSP: false, channel: false });
    await tab.goto(site + '/');
    assert.deepEqual(await tab.evaluate(ceremonies), { error: 'NotReadableError', reason: 'blockedByContentSecurityPolicy' });
    const other = await context.newPage();
    await installShim(other, profile);
    await other.goto(site.replace('localhost', 'app.localhost') + '/');
    assert.deepEqual(await other.evaluate(ceremonies), { error: 'NotReadableError', reason: 'originNotAllowed' });
    assert.deepEqual(await profile.passkeys(), []);
    await context.close();
    await assert.rejects(installShim({}, profile), TypeError);
  });
});

// ---- Playwright's context.credentials (Playwright 1.61+), and credemu's in its place ----

const PLAYWRIGHT_KEYS = ['id', 'rpId', 'userHandle', 'privateKey', 'publicKey', 'signCount'];

// In the page, as the RP's own script calls them.
async function registerInPage(user) {
  try {
    const made = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON({
      rp: { id: 'localhost', name: 'Shop' }, user: { id: btoa('id-' + user).replace(/=+$/, ''), name: user, displayName: user },
      challenge: 'cmVnaXN0ZXItY2hhbGxlbmdl', pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
      authenticatorSelection: { residentKey: 'required' } }) });
    return { id: made.id, publicKey: made.toJSON().response.publicKey };
  } catch (e) {
    return { error: e.name };
  }
}

async function signInInPage(allow) {
  try {
    const got = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON({
      challenge: 'c2lnbi1pbi1jaGFsbGVuZ2U', rpId: 'localhost', allowCredentials: allow.map((id) => ({ type: 'public-key', id })) }) });
    const { response } = got.toJSON();
    return { id: got.id, ...response };
  } catch (e) {
    return { error: e.name };
  }
}

/** What the RP's server checks of an assertion: the signature under the stored key; the counter it reports. */
function checkAssertion(assertion, publicKey) {
  assert.equal(assertion.error, undefined, JSON.stringify(assertion));
  const data = Buffer.from(assertion.authenticatorData, 'base64url');
  const signed = Buffer.concat([data, createHash('sha256').update(Buffer.from(assertion.clientDataJSON, 'base64url')).digest()]);
  const key = createPublicKey({ key: Buffer.from(publicKey, 'base64url'), format: 'der', type: 'spki' });
  assert.ok(verify('sha256', signed, key, Buffer.from(assertion.signature, 'base64url')), 'the signature verifies under the stored key');
  assert.deepEqual(data.subarray(0, 32), createHash('sha256').update('localhost').digest());
  return data.readUInt32BE(33);
}

/**
 * A suite as a Playwright user writes it against context.credentials: seed, register in the page, sign in, read
 * back, delete, save the storage state and reuse it, capture and re-seed. `authenticator(context)` is its one
 * line that differs; `counts` whether the authenticator's counter counts (Playwright's does; GPM's stays 0).
 */
async function passkeySuite(browser, site, authenticator, { counts }) {
  const context = await browser.newContext();
  await authenticator(context);
  const seeded = await context.credentials.create('localhost');
  assert.deepEqual(Object.keys(seeded), PLAYWRIGHT_KEYS);
  assert.deepEqual([seeded.rpId, seeded.signCount], ['localhost', 0]);
  assert.deepEqual([Buffer.from(seeded.id, 'base64url').length, Buffer.from(seeded.userHandle, 'base64url').length], [16, 16]);
  const privateKey = createPrivateKey({ key: Buffer.from(seeded.privateKey, 'base64url'), format: 'der', type: 'pkcs8' });
  assert.equal(privateKey.asymmetricKeyDetails.namedCurve, 'prime256v1');
  assert.equal(createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).toString('base64url'), seeded.publicKey, 'SPKI of the PKCS#8 key');

  const page = await context.newPage();
  await page.goto(site + '/');
  const registered = await page.evaluate(registerInPage, 'alice');
  assert.equal(registered.error, undefined, JSON.stringify(registered));
  const signedIn = await page.evaluate(signInInPage, [seeded.id]);
  assert.equal(signedIn.id, seeded.id);
  assert.equal(signedIn.userHandle, seeded.userHandle);
  assert.equal(checkAssertion(signedIn, seeded.publicKey), counts ? 1 : 0, 'the counter the RP sees');

  const held = await context.credentials.get({ rpId: 'localhost' });
  assert.deepEqual(held.map((c) => c.id).sort(), [seeded.id, registered.id].sort(), 'seeded and registered, both');
  for (const credential of held) assert.deepEqual(Object.keys(credential), PLAYWRIGHT_KEYS);
  const [mine] = await context.credentials.get({ id: registered.id });
  assert.deepEqual([mine.publicKey, mine.userHandle, mine.signCount], [registered.publicKey, Buffer.from('id-alice').toString('base64url'), 0]);
  assert.equal((await context.credentials.get({ id: seeded.id }))[0].signCount, counts ? 1 : 0);
  assert.deepEqual(await context.credentials.get({ rpId: 'elsewhere.example' }), []);

  await context.credentials.delete(seeded.id);
  await context.credentials.delete(seeded.id);   // again: no error, as Playwright
  assert.deepEqual((await context.credentials.get()).map((c) => c.id), [registered.id]);
  // GPM's Chrome keeps its sheet open for a get with nothing to offer (modalGet.noCredential; Playwright's
  // authenticator is the testing API's, which shows none): the user closes it, a decision queued first.
  if (context.credentials instanceof Credentials) await (await context.credentials.ready()).queueDecisions(['cancel']);
  assert.equal((await page.evaluate(signInInPage, [seeded.id])).error, 'NotAllowedError', 'a deleted passkey no longer signs in');

  const saved = join(mkdtempSync(join(tmpdir(), 'credemu-state-')), 'auth', 'state.json');
  const state = await context.storageState({ path: saved, credentials: true });
  assert.deepEqual(state.credentials.map((c) => c.id), [registered.id]);
  assert.deepEqual(state.credentials[0].privateKey, mine.privateKey, 'the private key travels in the state');
  assert.deepEqual(JSON.parse(readFileSync(saved, 'utf8')), state);
  assert.equal((await context.storageState()).credentials, undefined, 'only when asked for');
  await context.close();

  // A later test reuses the saved state in a new context.
  const reused = await browser.newContext({ storageState: saved });
  await authenticator(reused);
  assert.deepEqual((await reused.credentials.get()).map((c) => c.id), [registered.id]);
  const tab = await reused.newPage();
  await tab.goto(site + '/');
  const back = await tab.evaluate(signInInPage, []);
  assert.deepEqual([back.id, back.userHandle], [registered.id, mine.userHandle], 'a discoverable sign-in with the restored passkey');
  assert.equal(checkAssertion(back, registered.publicKey), counts ? 1 : 0, "its first assertion");
  await reused.close();

  // Or captures the credential and seeds it (all four together, and the counter).
  const later = await browser.newContext();
  await authenticator(later);
  const copy = await later.credentials.create(mine.rpId, mine);
  assert.deepEqual(copy, mine);
  const again = await later.newPage();
  await again.goto(site + '/');
  assert.equal(checkAssertion(await again.evaluate(signInInPage, [mine.id]), mine.publicKey), counts ? 1 : 0, "from the counter given");
  await later.close();
}

describe("Playwright's context.credentials, and credemu's after one line", { skip: noPlaywright }, () => {
  let browser, site, closeSite;
  before(async () => {
    const { chromium } = await import(join(playwrightCore(), 'index.mjs'));
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    const http = createServer((request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/html' });
      response.end('<!doctype html><title>shop</title><p>sign in');
    });
    await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
    site = `http://localhost:${http.address().port}`;
    closeSite = () => new Promise((resolve) => http.close(resolve));
  });
  after(async () => { await browser?.close(); await closeSite?.(); });

  test("the suite on Playwright's own authenticator", async () => {
    await passkeySuite(browser, site, (context) => context.credentials.install(), { counts: true });
  });

  test('the same suite on credemu (GPM: the counter stays 0, as the pack says)', async () => {
    await passkeySuite(browser, site, (context) => credentials(context, { pack: 'gpm', server }).install(), { counts: false });
  });

  test('in a Chromium with a DevTools port, credemu serve answers the pages itself and the page finds nothing of it', async () => {
    const { chromium } = await import(join(playwrightCore(), 'index.mjs'));
    const withPort = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox', '--disable-dev-shm-usage', '--remote-debugging-port=0'] });
    try {
      assert.ok(await chromiumDevtoolsPort(withPort) > 0);
      assert.equal(await chromiumDevtoolsPort(browser), null, 'no port, no pairing: the client relays');
      const own = await withPort.newContext();
      await own.credentials.install();
      const plain = await own.newPage();
      await plain.goto(site + '/');
      const expected = new Set([...await plain.evaluate(() => Object.getOwnPropertyNames(window)), '__credemuShim']);
      const context = await withPort.newContext();
      const made = credentials(context, { pack: 'gpm', server });
      await made.install();
      const page = await context.newPage();
      await page.goto(site + '/');
      const seeded = await context.credentials.create('localhost');
      assert.equal((await page.evaluate(signInInPage, [])).id, seeded.id);
      assert.deepEqual((await page.evaluate(() => Object.getOwnPropertyNames(window))).filter((n) => !expected.has(n)), []);
      const [channel] = (await server.client().channels()).filter((c) => c.profile === made.profile);
      assert.equal(channel.answered, 1, 'the sign-in went through credemu serve');
      await context.close();
      await own.close();
    } finally {
      await withPort.close();
    }
  });

  test("Playwright Test's fixtures: the suite's context comes with credemu, seeded from test.use({storageState})", async () => {
    // What @playwright/test's test.extend gets; its fixture functions are called here as its runner calls them.
    const extended = extendWithCredemu({ extend: (given) => given }, { pack: 'apple', server });
    assert.deepEqual(Object.keys(extended), ['credemuOptions', 'launchOptions', 'context', 'credemu']);
    const launched = async (launchOptions, browserName) => {
      let given;
      await extended.launchOptions[0]({ launchOptions, browserName }, async (value) => { given = value; });
      return given;
    };
    assert.deepEqual(extended.launchOptions[1], { scope: 'worker' });
    assert.deepEqual(await launched({ args: ['--no-sandbox'], slowMo: 1 }, 'chromium'), { args: ['--no-sandbox', '--remote-debugging-port=0'], slowMo: 1 });
    assert.deepEqual(await launched({ args: ['--remote-debugging-port=9333'] }, 'chromium'), { args: ['--remote-debugging-port=9333'] });
    assert.deepEqual(await launched({}, 'firefox'), {}, 'only Chromium');
    assert.deepEqual(extended.credemuOptions, [{ pack: 'apple', server }, { option: true }], 'an option: test.use({credemuOptions})');
    assert.deepEqual(fixtures.credemuOptions, [{}, { option: true }]);
    // A passkey a setup project saved in the storage state.
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const saved = { id: randomBytes(16).toString('base64url'), rpId: 'localhost', userHandle: Buffer.from('id-carol').toString('base64url'),
      privateKey: pair.privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64url'),
      publicKey: pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64url'), signCount: 4 };
    // Playwright Test's own context fixture: browser.newContext with the storage state (Playwright's authenticator installed).
    const base = await browser.newContext({ storageState: { cookies: [], origins: [], credentials: [saved] } });
    let seen = null;
    await extended.context({ context: base, credemuOptions: extended.credemuOptions[0] }, async (context) => {
      assert.equal(context, base);
      const page = await context.newPage();   // the page fixture
      await page.goto(site + '/');
      const assertion = await page.evaluate(signInInPage, []);
      assert.equal(assertion.id, saved.id);
      assert.equal(checkAssertion(assertion, saved.publicKey), 0, "Apple's counter: 0, where Playwright's authenticator would say 5");
      await extended.credemu({ context }, async (credemu) => {
        seen = credemu;
        assert.deepEqual((await credemu.client.passkeys()).map((p) => p.credentialId), [saved.id]);
        assert.deepEqual(await credemu.playwright.get(), [], "nothing left in Playwright's own authenticator");
      });
    });
    assert.deepEqual([seen.pack, seen.profile], ['apple', seen.client.profile]);
    assert.equal((await server.client().getProfile(seen.profile)).pack, 'apple');
    await base.close();
  });

  test('with no server given, one shared credemu serve for the process', async () => {
    const context = await browser.newContext();
    const made = credentials(context, { pack: 'bitwarden' });
    assert.equal(credentials(context), made, 'the same context, the same object');
    assert.equal(context.credentials, made);
    const seeded = await context.credentials.create('localhost', { signCount: 9 });
    assert.equal((await sharedServer()).url, made.client.url);
    assert.notEqual(made.client.url, server.url);
    await made.install();
    const page = await context.newPage();
    await page.goto(site + '/');
    assert.equal((await page.evaluate(signInInPage, [])).id, seeded.id);
    await context.close();
  });
});
