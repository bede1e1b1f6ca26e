// credemu's demo shop: what an RP's page does for seed 000. A password sign-in (the password manager fills it),
// then at once one automatic upgrade (navigator.credentials.create with mediation "conditional"), silent whatever
// it gives; a passkey sign-in; an explicit "Create a passkey" for those the upgrade skips. The server verifies
// every response itself (DemoShop.swift); "Behind the scenes" shows what it saw. The shop shows no confirmation of
// its own for the upgrade: the password manager notifies the user (the console's toast).
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  let session = sessionStorage.getItem('demo-shop-session');

  async function post(path, body) {
    const response = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body || {})});
    return {status: response.status, body: await response.json().catch(() => null)};
  }

  /** A refusal of the shop's server as an Error with its name. */
  function refusal(result) {
    const error = (result.body && result.body.error) || {name: 'HTTP' + result.status, message: ''};
    return Object.assign(new Error(error.message), {name: error.name, server: true, detail: error});
  }

  // The log outlives the reload of a sign-out (kept for the tab, the last 60 lines), newest first.
  const logged = JSON.parse(sessionStorage.getItem('demo-shop-log') || '[]');
  function append([text, kind]) {
    const item = document.createElement('li');
    item.textContent = text;
    if (kind) item.className = kind;
    $('server-log').prepend(item);   // newest first
  }
  logged.forEach(append);
  function log(text, kind) {
    append([text, kind]);
    logged.push([text, kind || '']);
    sessionStorage.setItem('demo-shop-log', JSON.stringify(logged.slice(-60)));
  }

  const flags = (f) => `UP=${f.UP ? 1 : 0} UV=${f.UV ? 1 : 0} BE=${f.BE ? 1 : 0} BS=${f.BS ? 1 : 0}`;
  const short = (id) => id.slice(0, 10) + '…';

  function show(view) {
    $('signin-view').hidden = view !== 'signin';
    $('account-view').hidden = view !== 'account';
    document.title = view === 'account' ? 'Demo shop: your account' : 'Demo shop: sign in';
    document.body.dataset.view = view;
  }

  function renderAccount(account) {
    $('account-name').textContent = account.displayName;
    $('account-how').textContent = `Signed in as ${account.username} with a ${account.signedInWith}.`;
    $('passkeys').tBodies[0].replaceChildren(...account.passkeys.map((k) => {
      const row = document.createElement('tr');
      row.dataset.credential = k.id;
      for (const text of [k.created.replace('T', ' ').replace('Z', ' UTC'), k.algorithm,
        k.automatic ? 'automatic upgrade' : 'created on this page', flags(k.flags)]) {
        row.append(Object.assign(document.createElement('td'), {textContent: text}));
      }
      return row;
    }));
    $('passkeys-empty').hidden = account.passkeys.length > 0;
  }

  function signedIn(result) {
    session = result.session;
    sessionStorage.setItem('demo-shop-session', session);
    renderAccount(result.account);
    show('account');
  }

  function say(text, bad) {
    $('signin-status').textContent = text;
    $('signin-status').classList.toggle('bad', !!bad);
  }

  /** One registration: the options from the server, the browser's create, the server's verification. */
  async function register(conditional) {
    const options = await post('/api/register/options', {session, mediation: conditional ? 'conditional' : 'required'});
    if (options.status !== 200) throw refusal(options);
    const request = {publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options.body)};
    if (conditional) request.mediation = 'conditional';
    const excluded = options.body.excludeCredentials.length;
    log((conditional ? 'Automatic upgrade requested: create() with mediation "conditional"' : 'Passkey requested: a modal create()')
      + `, ${excluded} known passkey${excluded === 1 ? '' : 's'} excluded.`);
    const credential = await navigator.credentials.create(request);
    const result = await post('/api/register', {session, credential: credential.toJSON()});
    if (result.status !== 200) throw refusal(result);
    const k = result.body.passkey;
    log(`Registration verified: ${k.algorithm}, ${flags(k.flags)}, challenge, origin and RP ID hash checked`
      + (conditional ? '. UP=0 and UV=0 accepted: an automatic upgrade has no user gesture.' : '.'), 'ok');
    renderAccount(result.body.account);
    return k;
  }

  // The automatic upgrade: one conditional request right after a completed password sign-in. An expected no-op
  // (NotAllowedError: no recent fill, the user's opt-out...) stays silent for the user (seed 000, N2.6-AC05).
  async function automaticUpgrade() {
    const capabilities = typeof PublicKeyCredential.getClientCapabilities === 'function' ? await PublicKeyCredential.getClientCapabilities() : {};
    if (!capabilities.conditionalCreate) {
      log('This browser has no conditional create: no automatic upgrade.', 'quiet');
      $('upgrade-status').textContent = 'not supported';
      return;
    }
    try {
      const k = await register(true);
      $('upgrade-status').textContent = 'created ' + short(k.id);
    } catch (e) {
      if (e.server) log(`The shop refused the registration: ${e.name}: ${e.message}`, 'bad');
      else log(`No passkey this time (${e.name}): the password manager declined silently, so the shop shows the user nothing. Its reason is in the console's event log.`, 'quiet');
      $('upgrade-status').textContent = `skipped (${e.name})`;
    }
  }

  $('signin').addEventListener('submit', async (event) => {
    event.preventDefault();
    say('Signing in…');
    const result = await post('/api/signin', {username: $('username').value, password: $('password').value});
    if (result.status !== 200) {
      const error = refusal(result);
      say(error.message, true);
      log(`Password sign-in refused: ${error.name}.`, 'bad');
      return;
    }
    say('');
    log(`Password sign-in accepted for ${result.body.account.username}.`, 'ok');
    signedIn(result.body);
    await automaticUpgrade();
    document.body.dataset.upgrade = $('upgrade-status').textContent;
  });

  $('passkey-signin').addEventListener('click', async () => {
    say('Signing in with a passkey…');
    const options = await post('/api/passkey-signin/options');
    let credential;
    try {
      log('Passkey sign-in requested: get() with no allow list (a discoverable passkey).');
      credential = await navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options.body)});
    } catch (e) {
      say(`No passkey used (${e.name}).`, true);
      log(`No passkey used: ${e.name}.`, 'quiet');
      return;
    }
    const result = await post('/api/passkey-signin', {credential: credential.toJSON()});
    if (result.status !== 200) {
      const error = refusal(result);
      // Only a passkey the server conclusively does not know is signalled (seed 003).
      if (error.detail.unknownCredentialId && typeof PublicKeyCredential.signalUnknownCredential === 'function') {
        await PublicKeyCredential.signalUnknownCredential({rpId: options.body.rpId, credentialId: error.detail.unknownCredentialId}).catch(() => {});
      }
      say(error.message, true);
      log(`Passkey sign-in refused: ${error.name}: ${error.message}`, 'bad');
      return;
    }
    say('');
    log(`Passkey sign-in verified: the signature under passkey ${short(result.body.passkey)}'s public key, ${flags(result.body.flags)}, counter ${result.body.signCount}.`, 'ok');
    signedIn(result.body);
  });

  $('create-passkey').addEventListener('click', async () => {
    try {
      await register(false);
    } catch (e) {
      log(e.server ? `The shop refused the registration: ${e.name}: ${e.message}` : `No passkey created (${e.name}).`, e.server ? 'bad' : 'quiet');
    }
  });

  // Signing out reloads the page, so the password manager fills the form afresh, as on a new visit.
  $('sign-out').addEventListener('click', async () => {
    await post('/api/signout', {session});
    sessionStorage.removeItem('demo-shop-session');
    location.reload();
  });

  (async () => {
    if (session) {
      const result = await post('/api/account', {session});
      if (result.status === 200) {
        renderAccount(result.body);
        show('account');
        return;
      }
      sessionStorage.removeItem('demo-shop-session');
      session = null;
    }
    show('signin');
  })();
})();
