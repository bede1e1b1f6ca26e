// The in-page checks of test_shim_parity.py: run once in a page where Chromium's own credential manager answers
// (its virtual authenticator) and once in a page with credemu's shim; the two summaries must be equal. Every value
// recorded here is one both should give: no credential IDs, keys, signatures or AAGUIDs (those legitimately
// differ), only shapes, names, messages, key sets and orders, and the outcome of each call.
//
// runParity(phase) -> {check: value}. Phases:
//   "pending": needs modal and conditional ceremonies to stay pending (virtual authenticator without automatic
//              presence; credemu with held ceremonies) and no credential yet;
//   "idle":    everything else but
//   "extensions": prf and largeBlob outputs (Chromium: a CTAP 2.1 authenticator with hmac-secret and largeBlob).
/* exported runParity */
async function runParity(phase) {
  const out = {};
  const bytes = (n, fill) => new Uint8Array(n).fill(fill || 0);
  const challenge = bytes(32, 7);
  const user = (extra) => Object.assign({id: bytes(8, 1), name: 'parity@example.com', displayName: 'Parity'}, extra);
  const creation = (extra) => Object.assign({rp: {name: 'Parity RP'}, user: user(), challenge: challenge,
    pubKeyCredParams: [{type: 'public-key', alg: -7}, {type: 'public-key', alg: -257}]}, extra);
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const describe = (value) => {
    if (value === undefined) return 'undefined';
    if (value === null) return 'null';
    if (typeof value !== 'object') return typeof value + ':' + String(value);
    return Object.prototype.toString.call(value);
  };
  const failed = (e) => {
    if (e === null || typeof e !== 'object') return ['threw', describe(e)];
    return [e.constructor && e.constructor.name, e.name, e.message];
  };
  // The outcome of a call: resolved (and what with), or the error's class, name and message; 'pending' past `ms`.
  const outcome = async (run, ms) => {
    let promise;
    try { promise = Promise.resolve(run()); } catch (e) { return ['sync'].concat(failed(e)); }
    const timer = sleep(ms || 4000).then(() => ['pending']);
    return Promise.race([promise.then((v) => ['resolved', describe(v)], failed), timer]);
  };
  const sync = (run) => { try { return ['returned', describe(run())]; } catch (e) { return failed(e); } };
  const create = (publicKey, extra) => navigator.credentials.create(Object.assign({publicKey: publicKey}, extra));
  const get = (publicKey, extra) => navigator.credentials.get(Object.assign({publicKey: publicKey}, extra));
  const idList = (n) => Array.from({length: n}, (_, i) => ({type: 'public-key', id: bytes(4, i + 1)}));
  const aborted = function (reason) { const a = new AbortController(); if (arguments.length) a.abort(reason); else a.abort(); return a.signal; };

  if (phase === 'extensions') {
  // ---- extension outputs (prf, largeBlob): their shapes in getClientExtensionResults() and toJSON(), and that
  // the PRF is a function of credential and input and the blob comes back as written; never the values ----
  const shape = (v) => {
    if (v instanceof ArrayBuffer) return 'ArrayBuffer:' + v.byteLength;
    if (v && typeof v === 'object' && !Array.isArray(v)) { const o = {}; Object.keys(v).forEach((k) => { o[k] = shape(v[k]); }); return o; }
    return typeof v === 'string' ? 'string:' + v.length : describe(v);
  };
  const hex = (b) => Array.from(new Uint8Array(b)).map((x) => x.toString(16).padStart(2, '0')).join('');
  const prfCreated = await create(creation({user: user({id: bytes(8, 3)}), authenticatorSelection: {residentKey: 'required', userVerification: 'required'},
    extensions: {prf: {eval: {first: bytes(4, 1)}}, largeBlob: {support: 'preferred'}}}));
  out['extensions/creation outputs'] = shape(prfCreated.getClientExtensionResults());
  out['extensions/creation toJSON'] = shape(prfCreated.toJSON().clientExtensionResults);
  out['extensions/creation with prf {}'] = shape((await create(creation({extensions: {prf: {}}}))).getClientExtensionResults());
  const onlyThis = [{type: 'public-key', id: prfCreated.rawId}];
  const evaluated = await get({challenge: challenge, allowCredentials: onlyThis, userVerification: 'required',
    extensions: {prf: {eval: {first: bytes(4, 1), second: bytes(4, 2)}}, largeBlob: {read: true}}});
  out['extensions/assertion outputs before a write'] = shape(evaluated.getClientExtensionResults());
  out['extensions/assertion toJSON'] = shape(evaluated.toJSON().clientExtensionResults);
  out['extensions/the PRF at creation and assertion agree'] =
    hex(prfCreated.getClientExtensionResults().prf.results.first) === hex(evaluated.getClientExtensionResults().prf.results.first);
  out['extensions/first and second differ'] = hex(evaluated.getClientExtensionResults().prf.results.first) !== hex(evaluated.getClientExtensionResults().prf.results.second);
  const written = await get({challenge: challenge, allowCredentials: onlyThis, extensions: {largeBlob: {write: bytes(5, 9)}}});
  out['extensions/a large blob written'] = [shape(written.getClientExtensionResults()), shape(written.toJSON().clientExtensionResults)];
  const read = await get({challenge: challenge, allowCredentials: onlyThis, extensions: {largeBlob: {read: true}, prf: {}}});
  out['extensions/the large blob read back'] = [shape(read.getClientExtensionResults()), hex(read.getClientExtensionResults().largeBlob.blob), read.toJSON().clientExtensionResults.largeBlob];

    return out;
  }

  if (phase === 'pending') {
    // One request at a time: a second while the first waits is refused, whatever it is.
    const first = new AbortController();
    const pendingCreate = create(creation({timeout: 60000}), {signal: first.signal});
    pendingCreate.catch(() => {});
    await sleep(400);
    out['pending/first create waits'] = await outcome(() => pendingCreate, 300);
    out['pending/second create'] = await outcome(() => create(creation()));
    out['pending/second create with a foreign rp.id'] = await outcome(() => create(creation({rp: {name: 'x', id: 'example.com'}})));
    out['pending/second create with an unsupported algorithm'] = await outcome(() => create(creation({pubKeyCredParams: [{type: 'public-key', alg: -999}]})));
    out['pending/second create with appid (renderer check first)'] = await outcome(() => create(creation({extensions: {appid: 'https://localhost'}})));
    out['pending/second create with a bad argument (conversion first)'] = await outcome(() => create(creation({challenge: 'x'})));
    out['pending/modal get'] = await outcome(() => get({challenge: challenge}));
    out['pending/conditional get'] = await outcome(() => get({challenge: challenge}, {mediation: 'conditional'}));
    out['pending/a signal'] = await outcome(() => PublicKeyCredential.signalUnknownCredential({rpId: 'localhost', credentialId: 'AQID'}));
    out['pending/a signal with a bad argument (conversion first)'] = await outcome(() => PublicKeyCredential.signalUnknownCredential({rpId: 'localhost', credentialId: '+'}));
    out['pending/capabilities are no request'] = await outcome(() => PublicKeyCredential.getClientCapabilities().then((c) => typeof c));
    const reason = new Error('the page went elsewhere');
    let started = performance.now();
    first.abort(reason);
    const abortedCreate = await outcome(() => pendingCreate, 1000);
    out['pending/abort during a create: rejects with the reason'] = [abortedCreate[0], abortedCreate[1], abortedCreate[2]];
    out['pending/abort during a create: at once'] = performance.now() - started < 250;
    out['pending/abort during a create: the very reason object'] = await pendingCreate.then(() => 'resolved', (e) => e === reason);

    // A conditional get waits too; a modal request does not replace it.
    const condition = new AbortController();
    const conditional = get({challenge: challenge}, {mediation: 'conditional', signal: condition.signal});
    conditional.catch(() => {});
    await sleep(400);
    out['pending/conditional get waits (no timeout of its own)'] = await outcome(() => conditional, 300);
    out['pending/modal get while a conditional get waits'] = await outcome(() => get({challenge: challenge, timeout: 60000}));
    out['pending/create while a conditional get waits'] = await outcome(() => create(creation()));
    out['pending/the conditional get still waits'] = await outcome(() => conditional, 300);
    started = performance.now();
    condition.abort();
    out['pending/abort during a conditional get'] = await outcome(() => conditional, 1000);
    out['pending/abort during a conditional get: at once'] = performance.now() - started < 250;
    return out;
  }

  // ---- interface objects ----
  const descriptors = (target) => {
    const o = {};
    for (const key of Reflect.ownKeys(target)) {
      const d = Object.getOwnPropertyDescriptor(target, key);
      const f = d.get || d.value;
      o[String(key)] = [d.get ? 'getter' : typeof d.value, d.enumerable, d.configurable, d.writable === undefined ? null : d.writable,
        typeof f === 'function' ? f.name : null, typeof f === 'function' ? f.length : null];
    }
    return o;
  };
  for (const name of ['Credential', 'PublicKeyCredential', 'AuthenticatorResponse', 'AuthenticatorAttestationResponse', 'AuthenticatorAssertionResponse']) {
    out['interface/' + name + '.prototype'] = descriptors(window[name].prototype);
    out['interface/new ' + name] = sync(() => new window[name]());
    out['interface/' + name + '()'] = sync(() => window[name]());
  }
  const statics = descriptors(PublicKeyCredential);
  delete statics.prototype;
  out['interface/PublicKeyCredential statics'] = statics;
  out['interface/Object.keys(PublicKeyCredential)'] = Object.keys(PublicKeyCredential);
  out['interface/CredentialsContainer.prototype'] = descriptors(CredentialsContainer.prototype);
  out['interface/own keys of navigator.credentials'] = Reflect.ownKeys(navigator.credentials).map(String);
  out['interface/functions print as native code'] = [navigator.credentials.create, navigator.credentials.get, PublicKeyCredential.getClientCapabilities,
    PublicKeyCredential.parseCreationOptionsFromJSON, PublicKeyCredential.prototype.toJSON, Object.getOwnPropertyDescriptor(Credential.prototype, 'id').get,
    AuthenticatorAttestationResponse.prototype.getTransports, Function.prototype.toString].map((f) => Function.prototype.toString.call(f));
  for (const [name, member] of [['Credential', 'id'], ['Credential', 'type'], ['PublicKeyCredential', 'rawId'], ['PublicKeyCredential', 'response'],
    ['PublicKeyCredential', 'authenticatorAttachment'], ['AuthenticatorResponse', 'clientDataJSON'], ['AuthenticatorAttestationResponse', 'attestationObject'],
    ['AuthenticatorAssertionResponse', 'signature'], ['AuthenticatorAssertionResponse', 'userHandle'], ['AuthenticatorAssertionResponse', 'authenticatorData']]) {
    out['illegal invocation/' + name + '.' + member + ' on {}'] = sync(() => Object.getOwnPropertyDescriptor(window[name].prototype, member).get.call({}));
  }
  out['illegal invocation/reading PublicKeyCredential.prototype.id'] = sync(() => PublicKeyCredential.prototype.id);
  for (const [name, method] of [['PublicKeyCredential', 'toJSON'], ['PublicKeyCredential', 'getClientExtensionResults'],
    ['AuthenticatorAttestationResponse', 'getTransports'], ['AuthenticatorAttestationResponse', 'getPublicKey'],
    ['AuthenticatorAttestationResponse', 'getPublicKeyAlgorithm'], ['AuthenticatorAttestationResponse', 'getAuthenticatorData']]) {
    out['illegal invocation/' + name + '.prototype.' + method + ' on {}'] = sync(() => window[name].prototype[method].call({}));
  }
  out['illegal invocation/create on {}'] = await outcome(() => CredentialsContainer.prototype.create.call({}, {publicKey: creation()}));
  out['illegal invocation/get on {}'] = await outcome(() => CredentialsContainer.prototype.get.call({}, {publicKey: {challenge: challenge}}));

  // ---- a registration and an assertion, as objects ----
  // Its own user handle: a later discoverable credential for the same user would replace it in an authenticator.
  const created = await create(creation({user: user({id: bytes(8, 2)}), authenticatorSelection: {residentKey: 'required', userVerification: 'preferred'}, extensions: {credProps: true}}));
  const chain = [];
  for (let p = Object.getPrototypeOf(created); p; p = Object.getPrototypeOf(p)) chain.push(p.constructor.name);
  const r = created.response;
  out['registration/prototype chain'] = chain;
  out['registration/instanceof'] = [created instanceof PublicKeyCredential, created instanceof Credential, r instanceof AuthenticatorAttestationResponse, r instanceof AuthenticatorResponse];
  out['registration/own keys'] = [Reflect.ownKeys(created).map(String), Object.keys(created), Reflect.ownKeys(r).map(String)];
  out['registration/toString tags'] = [Object.prototype.toString.call(created), Object.prototype.toString.call(r), String(created)];
  out['registration/attribute types'] = [typeof created.id, describe(created.rawId), created.type, created.authenticatorAttachment, describe(r.clientDataJSON),
    describe(r.attestationObject), describe(r.getPublicKey()), typeof r.getPublicKeyAlgorithm(), describe(r.getAuthenticatorData()), Array.isArray(r.getTransports())];
  const rawIdText = btoa(String.fromCharCode(...new Uint8Array(created.rawId))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  out['registration/id is the base64url of rawId'] = rawIdText === created.id;
  out['registration/[SameObject] and fresh values'] = [created.rawId === created.rawId, created.response === created.response, r.clientDataJSON === r.clientDataJSON,
    r.attestationObject === r.attestationObject, r.getPublicKey() === r.getPublicKey(), r.getAuthenticatorData() === r.getAuthenticatorData(),
    r.getTransports() === r.getTransports(), created.getClientExtensionResults() === created.getClientExtensionResults()];
  const transports = r.getTransports();
  out['registration/transports unique and sorted'] = JSON.stringify(transports) === JSON.stringify(Array.from(new Set(transports)).sort());
  out['registration/algorithm'] = r.getPublicKeyAlgorithm();
  out['registration/client data'] = (() => { const c = JSON.parse(new TextDecoder().decode(r.clientDataJSON)); return [c.type, c.origin === location.origin, c.crossOrigin]; })();
  out['registration/credProps with a required resident key'] = created.getClientExtensionResults();
  const json = created.toJSON();
  out['registration/toJSON keys'] = [Object.keys(json), Object.keys(json.response), Object.keys(json.clientExtensionResults)];
  out['registration/toJSON types'] = [json.id === created.id, json.rawId === created.id, typeof json.response.clientDataJSON, typeof json.response.attestationObject,
    typeof json.response.authenticatorData, typeof json.response.publicKey, json.response.publicKeyAlgorithm, Array.isArray(json.response.transports), json.type];
  out['registration/toJSON is fresh'] = created.toJSON() !== created.toJSON();
  const shadowed = await create(creation());
  shadowed.toJSON = () => 'shadowed';   // what @github/webauthn-json does
  out['registration/toJSON on the instance shadows the prototype'] = [JSON.stringify(shadowed), Object.keys(shadowed)];
  shadowed.getClientExtensionResults = 5;
  out['registration/other members can be shadowed too'] = shadowed.getClientExtensionResults;

  const asserted = await get({challenge: challenge, allowCredentials: [{type: 'public-key', id: created.rawId}]});
  const a = asserted.response;
  out['assertion/instanceof'] = [asserted instanceof PublicKeyCredential, a instanceof AuthenticatorAssertionResponse, a instanceof AuthenticatorAttestationResponse];
  out['assertion/own keys'] = [Reflect.ownKeys(asserted).map(String), Reflect.ownKeys(a).map(String)];
  out['assertion/toString tag'] = Object.prototype.toString.call(a);
  out['assertion/same credential'] = asserted.id === created.id;
  out['assertion/attribute types'] = [describe(a.authenticatorData), describe(a.signature), describe(a.userHandle), describe(a.clientDataJSON), asserted.authenticatorAttachment];
  out['assertion/[SameObject]'] = [a.signature === a.signature, a.authenticatorData === a.authenticatorData, a.userHandle === a.userHandle];
  out['assertion/user handle'] = Array.from(new Uint8Array(a.userHandle));
  out['assertion/methods absent'] = [typeof a.getTransports, typeof a.getPublicKey];
  const assertionJSON = asserted.toJSON();
  out['assertion/toJSON keys'] = [Object.keys(assertionJSON), Object.keys(assertionJSON.response)];
  out['assertion/discoverable'] = await outcome(async () => (await get({challenge: challenge})) instanceof PublicKeyCredential);

  // ---- WebIDL conversions in create() and get() ----
  const conversions = {
    'user.displayName []': creation({user: user({displayName: []})}),
    'user.displayName null': creation({user: user({displayName: null})}),
    'user.displayName a number': creation({user: user({displayName: 42})}),
    'user.name {}': creation({user: user({name: {}})}),
    'rp.name null': creation({rp: {name: null}}),
    'challenge as a DataView': creation({challenge: new DataView(new ArrayBuffer(16))}),
    'challenge as an ArrayBuffer': creation({challenge: new ArrayBuffer(16)}),
    'an empty challenge': creation({challenge: new Uint8Array(0)}),
    'an empty user.id': creation({user: user({id: new Uint8Array(0)})}),
    'pubKeyCredParams []': creation({pubKeyCredParams: []}),
    'alg as a string': creation({pubKeyCredParams: [{type: 'public-key', alg: '-7'}]}),
    'alg -7.9': creation({pubKeyCredParams: [{type: 'public-key', alg: -7.9}]}),
    'alg 2**32 - 7': creation({pubKeyCredParams: [{type: 'public-key', alg: 2 ** 32 - 7}]}),
    'an unknown type beside public-key': creation({pubKeyCredParams: [{type: 'bogus', alg: -7}, {type: 'public-key', alg: -7}]}),
    'unknown residentKey, userVerification, authenticatorAttachment': creation({authenticatorSelection: {residentKey: 'bogus', userVerification: 'bogus', authenticatorAttachment: 'bogus'}}),
    'unknown attestation': creation({attestation: 'bogus'}),
    'unknown hints': creation({hints: ['bogus']}),
    'unknown transports': creation({excludeCredentials: [{type: 'public-key', id: bytes(16, 9), transports: ['bogus']}]}),
    'an unknown descriptor type': creation({excludeCredentials: [{type: 'bogus', id: bytes(16, 9)}]}),
    'authenticatorSelection null': creation({authenticatorSelection: null}),
    'extensions null': creation({extensions: null}),
    'unknown extensions': creation({extensions: {bogus: 1}}),
    'timeout as a string': creation({timeout: '60000'}),
    'timeout -1': creation({timeout: -1}),
    'requireResidentKey as a string': creation({authenticatorSelection: {requireResidentKey: 'yes'}}),
    'credProps as a string': creation({extensions: {credProps: 'yes'}})
  };
  for (const [name, publicKey] of Object.entries(conversions)) {
    out['conversion/' + name] = await outcome(() => create(publicKey).then((c) => c instanceof PublicKeyCredential));
  }
  out['conversion/alg conversions give -7'] = await outcome(async () => (await create(creation({pubKeyCredParams: [{type: 'public-key', alg: 2 ** 32 - 7}]}))).response.getPublicKeyAlgorithm());
  out['conversion/mediation silent'] = await outcome(() => create(creation(), {mediation: 'silent'}).then((c) => c instanceof PublicKeyCredential));
  out['conversion/mediation required'] = await outcome(() => create(creation(), {mediation: 'required'}).then((c) => c instanceof PublicKeyCredential));
  // Which members the bindings read, in order, before "immediate" fails to convert (the shim's probe of the browser
  // leaves nothing the page can see).
  out['conversion/members read before mediation immediate fails'] = await (async () => {
    const read = [];
    const options = new Proxy({mediation: 'immediate', publicKey: {challenge: challenge}, signal: aborted()}, {get(target, key) { if (typeof key === 'string') read.push(key); return target[key]; }});
    const result = await outcome(() => navigator.credentials.get(options));
    return [read, result];
  })();
  out['conversion/get with password: true beside publicKey'] = await outcome(() => get({challenge: challenge}, {password: true}).then((c) => c.type));
  out['conversion/get with an unknown userVerification'] = await outcome(() => get({challenge: challenge, userVerification: 'bogus'}).then((c) => c.type));
  out['conversion/get with an unknown descriptor type only'] = await outcome(() => get({challenge: challenge, allowCredentials: [{type: 'bogus', id: bytes(16)}]}).then((c) => c.type));

  // ---- refusals: each bad argument's error ----
  const without = (key) => { const o = creation(); delete o[key]; return o; };
  const marker = new RangeError('thrown by a getter');
  const refusals = {
    'create()': () => navigator.credentials.create(),
    'create({})': () => navigator.credentials.create({}),
    'create(5)': () => navigator.credentials.create(5),
    'publicKey null': () => create(null),
    'publicKey 5': () => create(5),
    'publicKey {}': () => create({}),
    'no rp': () => create(without('rp')),
    'no user': () => create(without('user')),
    'no challenge': () => create(without('challenge')),
    'no pubKeyCredParams': () => create(without('pubKeyCredParams')),
    'rp {}': () => create(creation({rp: {}})),
    'rp null': () => create(creation({rp: null})),
    'user 5': () => create(creation({user: 5})),
    'no user.name': () => create(creation({user: {id: bytes(4), displayName: 'x'}})),
    'no user.displayName': () => create(creation({user: {id: bytes(4), name: 'x'}})),
    'no user.id': () => create(creation({user: {name: 'x', displayName: 'x'}})),
    'user.id a string': () => create(creation({user: user({id: 'abc'})})),
    'user.id 65 bytes': () => create(creation({user: user({id: bytes(65)})})),
    'user.displayName a Symbol': () => create(creation({user: user({displayName: Symbol('x')})})),
    'challenge a string': () => create(creation({challenge: 'abc'})),
    'challenge an array': () => create(creation({challenge: [1, 2, 3]})),
    'challenge {}': () => create(creation({challenge: {}})),
    'pubKeyCredParams {}': () => create(creation({pubKeyCredParams: {}})),
    'pubKeyCredParams a string': () => create(creation({pubKeyCredParams: 'ab'})),
    'pubKeyCredParams [5]': () => create(creation({pubKeyCredParams: [5]})),
    'no alg': () => create(creation({pubKeyCredParams: [{type: 'public-key'}]})),
    'no type': () => create(creation({pubKeyCredParams: [{alg: -7}]})),
    'only unknown types': () => create(creation({pubKeyCredParams: [{type: 'bogus', alg: -7}]})),
    'an unsupported algorithm': () => create(creation({pubKeyCredParams: [{type: 'public-key', alg: -999}]})),
    'alg NaN (0, unsupported)': () => create(creation({pubKeyCredParams: [{type: 'public-key', alg: 'x'}]})),
    'authenticatorSelection 5': () => create(creation({authenticatorSelection: 5})),
    'extensions 5': () => create(creation({extensions: 5})),
    'hints a string': () => create(creation({hints: 'ab'})),
    'excludeCredentials id a string': () => create(creation({excludeCredentials: [{type: 'public-key', id: 'abc'}]})),
    'excludeCredentials without id': () => create(creation({excludeCredentials: [{type: 'public-key'}]})),
    'transports a string': () => create(creation({excludeCredentials: [{type: 'public-key', id: bytes(8), transports: 'usb'}]})),
    'mediation bogus': () => create(creation(), {mediation: 'bogus'}),
    'mediation immediate': () => get({challenge: challenge}, {mediation: 'immediate'}),
    // The enum is converted before the abort check, so an aborted signal cannot tell a browser without it apart.
    'mediation immediate with an aborted signal': () => get({challenge: challenge}, {mediation: 'immediate', signal: aborted()}),
    'mediation immediate in create': () => create(creation(), {mediation: 'immediate'}),
    'mediation immediate without publicKey': () => navigator.credentials.get({mediation: 'immediate'}),
    'mediation null': () => create(creation(), {mediation: null}),
    'signal 5': () => create(creation(), {signal: 5}),
    'signal null': () => create(creation(), {signal: null}),
    'a getter that throws': () => navigator.credentials.create({get publicKey() { throw marker; }}),
    'a getter that throws after a missing member': () => create({get rp() { throw marker; }}),
    'password beside publicKey': () => create(creation(), {password: {id: 'a', password: 'b'}}),
    'rp.id null': () => create(creation({rp: {name: 'x', id: null}})),
    'rp.id empty': () => create(creation({rp: {name: 'x', id: ''}})),
    'rp.id foreign': () => create(creation({rp: {name: 'x', id: 'example.com'}})),
    'rp.id an IP address': () => create(creation({rp: {name: 'x', id: '127.0.0.1'}})),
    'appid in create': () => create(creation({extensions: {appid: 'https://localhost'}})),
    'appid before an unknown type': () => create(creation({pubKeyCredParams: [{type: 'bogus', alg: -7}], extensions: {appid: 'x'}})),
    'unknown types before user.id length': () => create(creation({pubKeyCredParams: [{type: 'bogus', alg: -7}], user: user({id: bytes(65)})})),
    'appidExclude on http': () => create(creation({extensions: {appidExclude: 'https://localhost'}})),
    'prf.eval.first a string': () => create(creation({extensions: {prf: {eval: {first: 'abc'}}}})),
    'prf.eval without first': () => create(creation({extensions: {prf: {eval: {}}}})),
    'prf evalByCredential in create': () => create(creation({extensions: {prf: {evalByCredential: {AQID: {first: bytes(32)}}}}})),
    'largeBlob read in create': () => create(creation({extensions: {largeBlob: {read: true}}})),
    'largeBlob write in create': () => create(creation({extensions: {largeBlob: {write: bytes(4)}}})),
    'credentialProtectionPolicy unknown': () => create(creation({extensions: {credentialProtectionPolicy: 'bogus'}})),
    'enforceCredentialProtectionPolicy without a policy': () => create(creation({extensions: {enforceCredentialProtectionPolicy: true}})),
    'userVerificationOptional with a non-discoverable credential': () => create(creation({extensions: {credentialProtectionPolicy: 'userVerificationOptional'}})),
    'userVerificationRequired without required user verification': () => create(creation({extensions: {credentialProtectionPolicy: 'userVerificationRequired'}, authenticatorSelection: {residentKey: 'required'}})),
    'aborted before create': () => create(creation(), {signal: aborted()}),
    'aborted before create, with a reason': () => create(creation(), {signal: aborted('why')}),
    'aborted before create, before the type check': () => navigator.credentials.create({signal: aborted()}),
    'aborted before create, before appid': () => create(creation({extensions: {appid: 'x'}}), {signal: aborted()}),
    'an excluded credential': () => create(creation({excludeCredentials: [{type: 'public-key', id: created.rawId}]})),
    'get()': () => navigator.credentials.get(),
    'get({})': () => navigator.credentials.get({}),
    'get publicKey null': () => get(null),
    'get publicKey {}': () => get({}),
    'get challenge a string': () => get({challenge: 'x'}),
    'get rpId null': () => get({challenge: challenge, rpId: null}),
    'get rpId empty': () => get({challenge: challenge, rpId: ''}),
    'get rpId foreign': () => get({challenge: challenge, rpId: 'example.com'}),
    'get allowCredentials id a string': () => get({challenge: challenge, allowCredentials: [{type: 'public-key', id: 'abc'}]}),
    'get an unknown credential': () => get({challenge: challenge, allowCredentials: [{type: 'public-key', id: bytes(16, 3)}]}),
    'get appid on http': () => get({challenge: challenge, extensions: {appid: 'https://localhost'}}),
    'get largeBlob support': () => get({challenge: challenge, allowCredentials: [{type: 'public-key', id: created.rawId}], extensions: {largeBlob: {support: 'required'}}}),
    'get largeBlob read and write': () => get({challenge: challenge, allowCredentials: [{type: 'public-key', id: created.rawId}], extensions: {largeBlob: {read: true, write: bytes(4)}}}),
    'get largeBlob write with two credentials': () => get({challenge: challenge, allowCredentials: [{type: 'public-key', id: created.rawId}, {type: 'public-key', id: bytes(4)}], extensions: {largeBlob: {write: bytes(4)}}}),
    // Blink's checks before any provider (authentication_credentials_container.cc), and their order.
    'create 65 excludeCredentials': () => create(creation({excludeCredentials: idList(65)})),
    'create 64 excludeCredentials pass to the next check': () => create(creation({excludeCredentials: idList(64), extensions: {largeBlob: {read: true}}})),
    'create 65 excludeCredentials before appid': () => create(creation({excludeCredentials: idList(65), extensions: {appid: 'https://localhost'}})),
    'create largeBlob read before user.id 65 bytes': () => create(creation({user: user({id: bytes(65)}), extensions: {largeBlob: {read: true}}})),
    'create 65 excludeCredentials before user.id 65 bytes': () => create(creation({user: user({id: bytes(65)}), excludeCredentials: idList(65)})),
    'get 65 allowCredentials': () => get({challenge: challenge, allowCredentials: idList(65)}),
    'get 65 allowCredentials before largeBlob support': () => get({challenge: challenge, allowCredentials: idList(65), extensions: {largeBlob: {support: 'required'}}}),
    'get credProps': () => get({challenge: challenge, allowCredentials: [{type: 'public-key', id: created.rawId}], extensions: {credProps: true}}),
    'get credProps false': () => get({challenge: challenge, allowCredentials: [{type: 'public-key', id: created.rawId}], extensions: {credProps: false}}),
    'get credProps before largeBlob support': () => get({challenge: challenge, allowCredentials: [{type: 'public-key', id: created.rawId}], extensions: {credProps: true, largeBlob: {support: 'required'}}}),
    'get largeBlob write over 2 KiB': () => get({challenge: challenge, allowCredentials: [{type: 'public-key', id: created.rawId}], extensions: {largeBlob: {write: bytes(2049)}}}),
    'get largeBlob write over 2 KiB before the one-credential rule': () => get({challenge: challenge, allowCredentials: [{type: 'public-key', id: created.rawId}, {type: 'public-key', id: bytes(4)}], extensions: {largeBlob: {write: bytes(2049)}}}),
    'get prf evalByCredential with an empty allow list': () => get({challenge: challenge, extensions: {prf: {evalByCredential: {AQID: {first: bytes(32)}}}}}),
    'get prf evalByCredential key not base64url': () => get({challenge: challenge, allowCredentials: [{type: 'public-key', id: created.rawId}], extensions: {prf: {evalByCredential: {'*': {first: bytes(32)}}}}}),
    'get prf evalByCredential key not allowed': () => get({challenge: challenge, allowCredentials: [{type: 'public-key', id: created.rawId}], extensions: {prf: {evalByCredential: {BAUG: {first: bytes(32)}}}}}),
    'get prf evalByCredential 5': () => get({challenge: challenge, extensions: {prf: {evalByCredential: 5}}}),
    'aborted before get': () => get({challenge: challenge}, {signal: aborted()}),
    'aborted before get, before the type check': () => navigator.credentials.get({signal: aborted()})
  };
  for (const [name, run] of Object.entries(refusals)) out['refusal/' + name] = await outcome(run);
  out['refusal/a getter that throws: the very error'] = await navigator.credentials.create({get publicKey() { throw marker; }}).then(() => 'resolved', (e) => e === marker);
  const reason = {why: 'mine'};
  out['refusal/aborted before: the very reason'] = await create(creation(), {signal: aborted(reason)}).then(() => 'resolved', (e) => e === reason);
  out['refusal/create returns a promise, never throws'] = (() => { try { const p = navigator.credentials.create({publicKey: 5}); p.catch(() => {}); return p instanceof Promise; } catch (e) { return 'threw'; } })();

  // ---- signals ----
  const signals = {
    'unknown credential': () => PublicKeyCredential.signalUnknownCredential({rpId: 'localhost', credentialId: 'AQID'}),
    'unknown credential, bad base64url': () => PublicKeyCredential.signalUnknownCredential({rpId: 'localhost', credentialId: 'not+base64'}),
    'unknown credential, padded': () => PublicKeyCredential.signalUnknownCredential({rpId: 'localhost', credentialId: 'AA=='}),
    'unknown credential, empty id': () => PublicKeyCredential.signalUnknownCredential({rpId: 'localhost', credentialId: ''}),
    'unknown credential, foreign rpId': () => PublicKeyCredential.signalUnknownCredential({rpId: 'example.com', credentialId: 'AQID'}),
    'unknown credential, rpId null': () => PublicKeyCredential.signalUnknownCredential({rpId: null, credentialId: 'AQID'}),
    'unknown credential, no argument': () => PublicKeyCredential.signalUnknownCredential(),
    'unknown credential, {}': () => PublicKeyCredential.signalUnknownCredential({}),
    'unknown credential, 5': () => PublicKeyCredential.signalUnknownCredential(5),
    'all accepted': () => PublicKeyCredential.signalAllAcceptedCredentials({rpId: 'localhost', userId: 'AQID', allAcceptedCredentialIds: [created.id]}),
    'all accepted, bad userId': () => PublicKeyCredential.signalAllAcceptedCredentials({rpId: 'localhost', userId: '!', allAcceptedCredentialIds: []}),
    'all accepted, bad id checked first': () => PublicKeyCredential.signalAllAcceptedCredentials({rpId: 'example.com', userId: '!', allAcceptedCredentialIds: ['!']}),
    'all accepted, ids not a sequence': () => PublicKeyCredential.signalAllAcceptedCredentials({rpId: 'localhost', userId: 'AQID', allAcceptedCredentialIds: 5}),
    'current user details': () => PublicKeyCredential.signalCurrentUserDetails({rpId: 'localhost', userId: 'AQID', name: 'a', displayName: 'b'}),
    'current user details, no displayName': () => PublicKeyCredential.signalCurrentUserDetails({rpId: 'localhost', userId: 'AQID', name: 'a'}),
    'current user details, foreign rpId': () => PublicKeyCredential.signalCurrentUserDetails({rpId: 'example.com', userId: 'AQID', name: 'a', displayName: 'b'})
  };
  for (const [name, run] of Object.entries(signals)) out['signal/' + name] = await outcome(run);

  // ---- JSON: parse*FromJSON (defaults included) and its errors ----
  const plain = (value) => {
    if (value instanceof ArrayBuffer) return {ArrayBuffer: Array.from(new Uint8Array(value))};
    if (Array.isArray(value)) return value.map(plain);
    if (value && typeof value === 'object') return [Object.getPrototypeOf(value) === Object.prototype ? 'Object' : describe(value), Object.keys(value).map((k) => [k, plain(value[k])])];
    return value;
  };
  const parsed = (run) => { try { return plain(run()); } catch (e) { return failed(e); } };
  const minimal = () => ({rp: {name: 'x'}, user: {id: 'AQID', name: 'a', displayName: 'A'}, challenge: 'AAEC', pubKeyCredParams: [{type: 'public-key', alg: -7}]});
  const withJSON = (extra) => Object.assign(minimal(), extra);
  const pc = (json) => parsed(() => PublicKeyCredential.parseCreationOptionsFromJSON(json));
  const pr = (json) => parsed(() => PublicKeyCredential.parseRequestOptionsFromJSON(json));
  Object.assign(out, {
    'json/creation, minimal': pc(minimal()),
    'json/creation, everything': pc({rp: {name: 'x', id: 'localhost', extra: 1}, user: {id: 'AQID', name: 'a', displayName: 'A', extra: 2}, challenge: 'AAEC',
      pubKeyCredParams: [{type: 'public-key', alg: -7, extra: 3}, {type: 'foo', alg: -8}], timeout: 5000,
      excludeCredentials: [{type: 'public-key', id: 'AQID', transports: ['usb', 'bogus']}],
      authenticatorSelection: {residentKey: 'required', userVerification: 'required', authenticatorAttachment: 'platform', requireResidentKey: true},
      hints: ['client-device', 'bogus'], attestation: 'direct', attestationFormats: ['packed'],
      extensions: {credProps: true, prf: {eval: {first: 'AQID', second: 'BAUG'}}, largeBlob: {support: 'preferred', write: 'AQID'}, credBlob: 'AQID', unknown: 5,
        appidExclude: 'https://x', credentialProtectionPolicy: 'userVerificationRequired', enforceCredentialProtectionPolicy: true, minPinLength: true, hmacCreateSecret: true, uvm: true}}),
    'json/creation, empty authenticatorSelection and extensions': pc(withJSON({authenticatorSelection: {}, extensions: {}})),
    'json/creation, null authenticatorSelection and extensions': pc(withJSON({authenticatorSelection: null, extensions: null})),
    'json/creation, displayName [] and rp.id null': pc(withJSON({user: {id: 'AQID', name: 'a', displayName: []}, rp: {name: 'x', id: null}})),
    'json/creation, challenge an array (ToString)': pc(withJSON({challenge: ['AA']})),
    'json/creation, timeout -1': pc(withJSON({timeout: -1})),
    'json/request, minimal': pr({challenge: 'AAEC'}),
    'json/request, everything': pr({challenge: 'AAEC', timeout: 100, rpId: 'localhost', allowCredentials: [{type: 'public-key', id: 'AQID', transports: ['internal']}],
      userVerification: 'required', hints: ['security-key'], attestation: 'none',
      extensions: {appid: 'https://x', prf: {eval: {first: 'AQID'}, evalByCredential: {AQID: {first: 'BAUG'}, '*': {first: 'AA'}}}, largeBlob: {read: true, write: 'AQID'}, getCredBlob: true, credProps: true}}),
    'json/request, empty challenge': pr({challenge: ''}),
    'json/request, non-canonical trailing bits': pr({challenge: 'AB'}),
    'json/bad challenge (std alphabet)': pc(withJSON({challenge: 'A+B/'})),
    'json/bad challenge (padding)': pc(withJSON({challenge: 'AAE='})),
    'json/bad challenge (length)': pc(withJSON({challenge: 'A'})),
    'json/bad challenge (whitespace)': pr({challenge: 'AA AA'}),
    'json/bad challenge (a number)': pc(withJSON({challenge: 5})),
    'json/bad user.id': pc(withJSON({user: {id: '!!', name: 'a', displayName: 'A'}})),
    'json/bad excludeCredentials id': pc(withJSON({excludeCredentials: [{type: 'public-key', id: '!'}]})),
    'json/bad prf.eval.first': pc(withJSON({extensions: {prf: {eval: {first: '!'}}}})),
    'json/bad prf.eval.second': pc(withJSON({extensions: {prf: {eval: {first: 'AA', second: '!'}}}})),
    'json/bad largeBlob.write': pc(withJSON({extensions: {largeBlob: {write: '!'}}})),
    'json/bad credBlob': pc(withJSON({extensions: {credBlob: '!'}})),
    'json/bad allowCredentials id': pr({challenge: 'AA', allowCredentials: [{type: 'public-key', id: '*'}]}),
    'json/bad evalByCredential value': pr({challenge: 'AA', extensions: {prf: {evalByCredential: {AA: {first: '*'}}}}}),
    'json/decoding order: user.id before challenge': pc(withJSON({challenge: '*', user: {id: '*', name: 'a', displayName: 'a'}})),
    'json/decoding order: challenge before excludeCredentials': pc(withJSON({excludeCredentials: [{type: 'public-key', id: '*'}], challenge: '*'})),
    'json/decoding order: excludeCredentials before extensions': pc(withJSON({excludeCredentials: [{type: 'public-key', id: '*'}], extensions: {credBlob: '*'}})),
    'json/decoding order: largeBlob, credBlob, prf': pc(withJSON({extensions: {credBlob: '*', prf: {eval: {first: '*'}}, largeBlob: {write: '*'}}})),
    'json/decoding order: credBlob before prf': pc(withJSON({extensions: {credBlob: '*', prf: {eval: {first: '*'}}}})),
    'json/decoding order: allowCredentials before extensions': pr({challenge: 'AA', allowCredentials: [{type: 'public-key', id: '*'}], extensions: {prf: {eval: {first: '*'}}}}),
    'json/conversion before decoding': pc(withJSON({challenge: '*', user: {id: 'AQ', name: 'a'}})),
    'json/no challenge': pc({rp: {name: 'x'}, user: {id: 'AQID', name: 'a', displayName: 'A'}, pubKeyCredParams: []}),
    'json/no user.displayName': pc(withJSON({user: {id: 'AQID', name: 'a'}})),
    'json/no user.name': pc(withJSON({user: {id: 'AQID', displayName: 'a'}})),
    'json/prf.eval without first': pc(withJSON({extensions: {prf: {eval: {}}}})),
    'json/pubKeyCredParams 5': pc(withJSON({pubKeyCredParams: 5})),
    'json/no argument': parsed(() => PublicKeyCredential.parseCreationOptionsFromJSON()),
    'json/undefined': parsed(() => PublicKeyCredential.parseCreationOptionsFromJSON(undefined)),
    'json/5': parsed(() => PublicKeyCredential.parseCreationOptionsFromJSON(5)),
    'json/request, no argument': parsed(() => PublicKeyCredential.parseRequestOptionsFromJSON()),
    'json/request, {}': parsed(() => PublicKeyCredential.parseRequestOptionsFromJSON({})),
    'json/request without this': parsed(() => PublicKeyCredential.parseRequestOptionsFromJSON.call(null, {challenge: 'AA'}))
  });
  // A round trip: the parsed options register, and the registration's JSON has the browser's keys.
  const roundTrip = PublicKeyCredential.parseCreationOptionsFromJSON({rp: {name: 'x', id: 'localhost'}, user: {id: 'cGFyaXR5', name: 'p', displayName: 'P'},
    challenge: 'AAECAwQFBgcICQoLDA0ODw', pubKeyCredParams: [{type: 'public-key', alg: -7}], extensions: {credProps: true}, authenticatorSelection: {residentKey: 'required'}});
  let roundTripId = null;
  out['json/round trip'] = await outcome(async () => {
    const c = await create(roundTrip);
    roundTripId = c.rawId;
    const j = c.toJSON();
    return JSON.stringify([Object.keys(j), Object.keys(j.response), j.clientExtensionResults]);
  });

  // base64url both ways: what parse*FromJSON decodes at every length modulo 4, and the page's challenge as the client
  // data carries it at every length modulo 3 (the shim encodes it for credemu, Chromium for its authenticator).
  out['base64url/decoded at lengths 0 to 9'] = ['', '_', '_-', '_-8', '_-8A', '_-8A_', '_-8A_w', '_-8A_w-', '_-8A_w-Z', '_-8A_w-Z9'].map((text) => pr({challenge: text}));
  out['base64url/the client data challenge at lengths 1 to 4 and 33'] = await outcome(async () => {
    const seen = [];
    for (const n of [1, 2, 3, 4, 33]) {
      const a = await get({challenge: Uint8Array.from({length: n}, (_, i) => 255 - 3 * i), allowCredentials: [{type: 'public-key', id: roundTripId}]});
      seen.push(JSON.parse(new TextDecoder().decode(a.response.clientDataJSON)).challenge);
    }
    return seen.join(' ');
  });

  // ---- capabilities ----
  const caps = await PublicKeyCredential.getClientCapabilities();
  const keys = Object.keys(caps);
  out['capabilities/keys in code-unit order'] = JSON.stringify(keys) === JSON.stringify(keys.slice().sort());
  out['capabilities/a plain object of booleans'] = [Object.getPrototypeOf(caps) === Object.prototype, keys.every((k) => typeof caps[k] === 'boolean'),
    Object.getOwnPropertyDescriptor(caps, keys[0])];
  out['capabilities/fresh each time'] = (await PublicKeyCredential.getClientCapabilities()) !== caps;
  out['capabilities/has the basic keys'] = ['conditionalCreate', 'conditionalGet', 'passkeyPlatformAuthenticator', 'userVerifyingPlatformAuthenticator'].map((k) => k in caps);
  out['capabilities/isUserVerifyingPlatformAuthenticatorAvailable'] = await outcome(() => PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable());
  out['capabilities/isConditionalMediationAvailable'] = await outcome(() => PublicKeyCredential.isConditionalMediationAvailable());
  out['capabilities/static methods ignore this'] = await outcome(() => PublicKeyCredential.isConditionalMediationAvailable.call(undefined));
  const order = [];
  PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable().then(() => order.push('uvpaa'));
  PublicKeyCredential.getClientCapabilities().then(() => order.push('capabilities'));
  Promise.resolve().then(() => Promise.resolve()).then(() => Promise.resolve()).then(() => order.push('microtasks'));
  await sleep(300);
  // Both answer after asking the browser process (or the server): never within the microtasks of the call.
  out['capabilities/resolve later than microtasks'] = [order[0], order.length];
  return out;
}
