// credemu's console: the password manager's own window. Plain JS, no library; every call is a documented
// route of /openapi.json on this server (the console's own origin, which the API treats as first-party).
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const state = {
    token: null, profile: 'default', profiles: [], packs: [], events: [], lastEvent: 0, loaded: false,
    passkeys: [], passwords: [], revealed: new Map(), historyOf: null, polling: false,
  };

  // The token arrives in the URL's fragment (#token=...), which no request carries; it is kept for the tab only.
  function takeToken() {
    const fragment = new URLSearchParams(location.hash.slice(1));
    if (!fragment.get('token')) return false;
    sessionStorage.setItem('credemu-token', fragment.get('token'));
    history.replaceState(null, '', location.pathname + location.search);
    state.token = fragment.get('token');
    return true;
  }
  takeToken();
  state.token = sessionStorage.getItem('credemu-token');

  // MARK: the API

  async function api(method, path, body) {
    const headers = {};
    if (state.token) headers.Authorization = 'Bearer ' + state.token;
    const init = {method, headers, cache: 'no-store'};
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    const data = await response.json().catch(() => null);
    if (response.status === 401) {
      $('auth').hidden = false;
      $('main').hidden = true;
      throw new Error('The server needs its token.');
    }
    if (!response.ok) {
      const error = data && data.error;
      throw new Error(error ? `${error.name}: ${error.message}` : `${method} ${path}: HTTP ${response.status}`);
    }
    return data;
  }

  const p = () => '/profiles/' + encodeURIComponent(state.profile);

  function showError(error) {
    $('error').textContent = String(error.message || error);
    $('error').hidden = false;
  }

  function clearError() { $('error').hidden = true; }

  async function act(work) {
    try {
      clearError();
      await work();
    } catch (error) {
      showError(error);
    }
  }

  // MARK: rendering helpers

  function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) {
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = value;
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value === true ? '' : value);
    }
    for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    return node;
  }

  /** Gives each cell of a card table its column's name (`data-label`), which the phone layout shows before it. */
  function labelCells(table) {
    const names = [...table.tHead.rows[0].cells].map((th) => th.dataset.label || th.textContent.trim());
    for (const row of table.tBodies[0].rows) [...row.cells].forEach((td, i) => { if (names[i]) td.dataset.label = names[i]; });
  }

  const when = (t) => t ? t.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC') : 'never';
  const button = (label, onclick, attributes = {}) => el('button', Object.assign({type: 'button', onclick}, attributes), label);

  function toast(text, detail) {
    const node = el('div', {class: 'toast'}, el('strong', {text}), detail ? el('span', {text: detail}) : '');
    const close = button('Dismiss', () => node.remove(), {'aria-label': 'Dismiss: ' + text});
    node.append(close);
    $('toasts').append(node);
    setTimeout(() => node.remove(), 15000);
  }

  // MARK: profiles

  async function loadProviders() {
    state.packs = (await api('GET', '/providers')).providers;
    for (const select of [$('set-pack'), $('new-pack')]) {
      select.replaceChildren(...state.packs.map((pack) => el('option', {value: pack.id, text: `${pack.name} (${pack.id})`})));
    }
  }

  async function loadProfiles() {
    state.profiles = (await api('GET', '/profiles')).profiles;
    if (!state.profiles.some((x) => x.name === state.profile)) state.profile = state.profiles[0] ? state.profiles[0].name : 'default';
    $('profile').replaceChildren(...state.profiles.map((x) => el('option', {value: x.name, text: x.name, selected: x.name === state.profile})));
    $('profile-list').tBodies[0].replaceChildren(...state.profiles.map((x) => el('tr', {},
      el('td', {}, button(x.name, () => selectProfile(x.name), {'aria-label': 'Open profile ' + x.name})),
      el('td', {text: x.pack}), el('td', {text: x.platform}), el('td', {text: x.automaticPasskeyUpgrades ? 'on' : 'off (opted out)'}))));
    state.devices = (await api('GET', '/devices')).devices;
    renderSettings();
  }

  /** The devices that hold the open profile: the account's settings and credentials are shared by all of them. */
  function renderDevices() {
    const holding = (state.devices || []).filter((d) => d.providers.includes(state.profile));
    const section = $('profile-sections');
    if (!holding.length) { section.replaceChildren(); return; }
    section.replaceChildren(el('table', {id: 'device-list'},
      el('caption', {text: `Devices with ${state.profile} (its settings and credentials hold on each)`}),
      el('thead', {}, el('tr', {}, el('th', {scope: 'col', text: 'Device'}), el('th', {scope: 'col', text: 'Platform'}),
        el('th', {scope: 'col', text: 'Providers, in order'}))),
      el('tbody', {}, ...holding.map((d) => el('tr', {}, el('td', {text: d.name}), el('td', {text: d.platform + (d.osVersion ? ' ' + d.osVersion : '')}),
        el('td', {text: d.providers.map((x) => x + ((d.preferred || d.providers[0]) === x ? ' (preferred)' : '')).join(', ')}))))));
  }

  function current() { return state.profiles.find((x) => x.name === state.profile); }

  function renderSettings() {
    const profile = current();
    if (!profile) return;
    $('settings-name').textContent = profile.name;
    $('profile-remove').disabled = profile.name === 'default';
    const pack = state.packs.find((x) => x.id === profile.pack);
    $('set-platform').replaceChildren(...(pack ? pack.platforms : [profile.platform]).map((x) => el('option', {value: x, text: x})));
    for (const input of document.querySelectorAll('[data-setting]')) {
      const value = profile[input.dataset.setting];
      if (input.type === 'checkbox') input.checked = value === true;
      else input.value = value === null || value === undefined ? '' : value;
    }
    $('profile-summary').textContent = `${pack ? pack.name : profile.pack} on ${profile.platform}`
      + (profile.automaticPasskeyUpgrades ? '' : ', automatic upgrades off');
    renderDevices();
  }

  async function changeSetting(event) {
    const input = event.target;
    const key = input.dataset.setting;
    if (!key) return;
    let value = input.type === 'checkbox' ? input.checked : input.value.trim();
    if (value === '' && (key === 'osVersion' || key === 'playServicesVersion')) value = null;
    await act(async () => {
      const updated = await api('PATCH', p(), {[key]: value});
      state.profiles = state.profiles.map((x) => x.name === updated.name ? updated : x);
      renderSettings();
      $('settings-status').textContent = 'Saved: ' + settingWords(input, value) + '.';
      await loadProfiles();
    });
  }

  /** A setting as the person set it, in the words of its label ("Automatic passkey upgrades off"), not the API's key. */
  function settingWords(input, value) {
    const label = input.labels && input.labels[0];
    const name = label ? (label.querySelector('.name') || label).textContent.trim() : input.dataset.setting;
    if (input.type === 'checkbox') return `${name} ${value ? 'on' : 'off'}` + (!value && input.dataset.off ? ` (${input.dataset.off})` : '');
    if (input.tagName === 'SELECT') return `${name}: ${input.selectedOptions[0] ? input.selectedOptions[0].textContent : value}`;
    return `${name}: ${value === null ? (input.placeholder || 'unset') : value}`;
  }

  async function selectProfile(name) {
    state.profile = name;
    state.events = [];
    state.lastEvent = 0;
    state.loaded = false;
    state.revealed.clear();
    state.historyOf = null;
    $('history').hidden = true;
    $('profile').value = name;
    renderSettings();
    await refresh();
  }

  // MARK: the vault

  async function loadVault() {
    state.passkeys = (await api('GET', p() + '/passkeys')).passkeys;
    state.passwords = (await api('GET', p() + '/passwords')).passwords;
    renderVault();
  }

  // UV at creation is in the passkey's creation event (the authenticator data's flags), not in the vault row;
  // "?" when that event is not in the log the console holds (a fixture import, or older than its 5,000 events).
  function createdUV(id) {
    const created = state.events.find((e) => e.kind === 'create' && e.outcome === 'success' && e.detail && e.detail.credentialId === id);
    const flags = created && created.detail.authenticatorFlags;
    if (!flags || typeof flags.UV !== 'boolean') return '?';
    return flags.UV ? '1' : '0';
  }

  /** What the user is typing in the passkeys' rename forms, by credential ID: the list is rebuilt as the log moves
   *  (an RP's sign-in while the user types), and a rebuilt form must keep the text, the focus and the caret. */
  function renameDrafts() {
    const drafts = new Map();
    for (const form of $('passkeys').querySelectorAll('form.rename-passkey')) {
      const inputs = [...form.querySelectorAll('input')];
      const focused = inputs.find((input) => input === document.activeElement);
      if (!focused && inputs.every((input) => input.value === input.defaultValue)) continue;
      drafts.set(form.closest('tr').dataset.credential, {
        values: Object.fromEntries(inputs.map((input) => [input.name, input.value])),
        focused: focused ? focused.name : null,
        selection: focused ? [focused.selectionStart, focused.selectionEnd] : null,
      });
    }
    return drafts;
  }

  function restoreRenameDrafts(drafts) {
    for (const row of $('passkeys').tBodies[0].rows) {
      const draft = drafts.get(row.dataset.credential);
      const form = draft && row.querySelector('form.rename-passkey');
      if (!form) continue;
      for (const input of form.querySelectorAll('input')) {
        if (input.name in draft.values) input.value = draft.values[input.name];
        if (input.name === draft.focused) {
          input.focus({preventScroll: true});
          input.setSelectionRange(...draft.selection);
        }
      }
    }
  }

  function renderVault() {
    const bit = (b) => b ? '1' : '0';
    const drafts = renameDrafts();
    $('passkeys').tBodies[0].replaceChildren(...state.passkeys.map((k) => {
      const who = `${k.userName} (${k.displayName})`;
      // A shadowed passkey (a newer one of the same account took its place: passkeys.priorOfSameUser) is listed, as the
      // password manager lists it, but no ceremony or signal sees it.
      const shadow = k.shadowedBy ? `shadowed by ${k.shadowedBy.slice(0, 8)}…` : '';
      const renameForm = el('form', {class: 'rename-passkey', onsubmit: (event) => {
        event.preventDefault();
        const form = event.currentTarget;
        act(async () => {
          await api('PATCH', p() + '/passkeys/' + k.credentialId,
            {userName: form.elements.userName.value, displayName: form.elements.displayName.value});
          toast('Passkey renamed', `${form.elements.userName.value}, ${k.rpId}`);
          await refresh();
        });
      }},
        el('input', {name: 'userName', value: k.userName, required: true, maxlength: '1024', 'aria-label': `New user name of the passkey of ${who} for ${k.rpId}`}),
        el('input', {name: 'displayName', value: k.displayName, maxlength: '1024', 'aria-label': `New display name of the passkey of ${who} for ${k.rpId}`}),
        el('button', {type: 'submit', text: 'Rename', 'aria-label': `Rename the passkey of ${who} for ${k.rpId}`}));
      return el('tr', {class: [k.hidden ? 'hidden-passkey' : '', k.shadowedBy ? 'shadowed-passkey' : ''].join(' ').trim(), 'data-credential': k.credentialId},
        el('td', {text: k.rpId}),
        el('td', {}, el('span', {text: k.userName}), el('br'), el('small', {text: k.displayName}),
          ...(k.editedByUser ? [el('br'), el('small', {class: 'edited', text: 'edited by the user'})] : [])),
        el('td', {text: when(k.created)}), el('td', {text: when(k.lastUsed)}), el('td', {text: k.algorithm}),
        el('td', {text: `${bit(k.backupEligible)}/${bit(k.backupState)}/${createdUV(k.credentialId)}`}),
        el('td', {text: `${k.signCount} (${k.counter})`}),
        el('td', {text: [k.hidden ? 'hidden ' + when(k.hiddenAt) : '', shadow].filter(Boolean).join('; ') || 'no'}),
        el('td', {class: 'actions'}, renameForm,
          button(k.hidden ? 'Restore' : 'Hide', () => act(async () => {
            await api('PATCH', p() + '/passkeys/' + k.credentialId, {hidden: !k.hidden});
            await refresh();
          }), {'aria-label': `${k.hidden ? 'Restore' : 'Hide'} the passkey of ${who} for ${k.rpId}`, class: 'hide-passkey'}),
          button('Remove', () => act(async () => {
            if (!confirm(`Remove the passkey of ${who} for ${k.rpId}? The RP will no longer be offered it.`)) return;
            await api('DELETE', p() + '/passkeys/' + k.credentialId);
            toast('Passkey removed', `${who}, ${k.rpId}`);
            await refresh();
          }), {'aria-label': `Remove the passkey of ${who} for ${k.rpId}`, class: 'danger remove-passkey'}),
          button('History', () => showHistory(k), {'aria-label': `History of the passkey of ${who} for ${k.rpId}`, class: 'passkey-history'})));
    }));
    labelCells($('passkeys'));
    restoreRenameDrafts(drafts);
    $('passkeys-empty').hidden = state.passkeys.length > 0;
    $('passwords').tBodies[0].replaceChildren(...state.passwords.map((w) => {
      const key = `${w.origin}\n${w.username}`;
      const shown = state.revealed.get(key);
      return el('tr', {},
        el('td', {text: w.origin}), el('td', {text: w.username}),
        el('td', {}, el('code', {class: 'secret', text: shown === undefined ? '••••••••' : shown}), ' ',
          button(shown === undefined ? 'Reveal' : 'Hide', () => act(() => reveal(w, key)),
                 {'aria-label': `${shown === undefined ? 'Reveal' : 'Hide'} the password of ${w.username} for ${w.origin}`, class: 'reveal'})),
        el('td', {text: when(w.created)}), el('td', {text: when(w.lastFilled)}), el('td', {text: when(w.lastUsed)}));
    }));
    labelCells($('passwords'));
    $('passwords-empty').hidden = state.passwords.length > 0;
    if (state.historyOf) renderHistory();
  }

  async function reveal(w, key) {
    if (state.revealed.has(key)) {
      state.revealed.delete(key);
    } else {
      const all = (await api('GET', p() + '/passwords?reveal=true')).passwords;
      const found = all.find((x) => x.origin === w.origin && x.username === w.username);
      if (found) state.revealed.set(key, found.password);
    }
    renderVault();
  }

  function showHistory(k) {
    state.historyOf = k.credentialId;
    $('history-of').textContent = `${k.userName} at ${k.rpId}`;
    $('history').hidden = false;
    renderHistory();
    $('history-close').focus();
  }

  function renderHistory() {
    const mine = state.events.filter((e) => e.detail && (e.detail.credentialId === state.historyOf
      || (Array.isArray(e.detail.credentialIds) && e.detail.credentialIds.includes(state.historyOf))));
    $('history-list').replaceChildren(...(mine.length ? mine : [{none: true}]).map((e) => e.none ? el('li', {text: 'No events in the log.'})
      : el('li', {}, el('time', {text: when(e.at)}), ` ${e.kind}: ${e.outcome}` + (e.reason && e.reason !== 'success' ? ` (${e.reason})` : ''))));
  }

  // MARK: the event log and the provider's notifications

  async function pollEvents() {
    let fresh = [];
    for (;;) {
      const page = (await api('GET', `${p()}/events?after=${state.lastEvent}&limit=1000`)).events;
      fresh = fresh.concat(page);
      if (page.length) state.lastEvent = page[page.length - 1].id;
      if (page.length < 1000) break;
    }
    // The first poll of a profile is its history, even when empty: every later event is news, the first batch on a
    // fresh profile included (seed 000's upgrade comes within a second of the password sign-in).
    const history = !state.loaded;
    state.loaded = true;
    if (!fresh.length) return false;
    state.events = state.events.concat(fresh).slice(-5000);
    if (!history) {
      for (const e of fresh) notify(e);
    }
    renderEvents();
    return true;
  }

  // What the user would see: the pack's notification after an automatic upgrade, and findings.
  function notify(e) {
    if (e.kind === 'create' && e.outcome === 'success' && e.detail && e.detail.silent === true && e.detail.notification) {
      toast(e.detail.notification, e.detail.rpId ? `for ${e.detail.rpId}` : '');
    } else if (e.kind === 'finding') {
      toast('Finding: ' + e.reason, e.detail && e.detail.criterion);
    }
  }

  const ACRONYMS = {id: 'ID', ids: 'IDs', rp: 'RP', uv: 'UV', up: 'UP', be: 'BE', bs: 'BS', os: 'OS', aaguid: 'AAGUID', url: 'URL', prf: 'PRF'};

  /** `credentialId` as a person reads it: "Credential ID". */
  function words(key) {
    const parts = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(/[\s_.-]+/).map((w) => ACRONYMS[w.toLowerCase()] || w.toLowerCase());
    return parts.join(' ').replace(/^[a-z]/, (c) => c.toUpperCase());
  }

  function spoken(value) {
    if (value === true) return 'yes';
    if (value === false) return 'no';
    if (value === null || value === undefined) return 'none';
    if (Array.isArray(value)) return value.length ? value.map(spoken).join(', ') : 'none';
    if (typeof value === 'object') return Object.entries(value).map(([k, v]) => `${words(k)}: ${spoken(v)}`).join('; ');
    return String(value);
  }

  /** An event's detail as a person reads it: each member a labelled line, and the JSON a click away. */
  function readable(detail) {
    if (!detail || typeof detail !== 'object') return el('span', {text: spoken(detail)});
    const list = el('dl', {class: 'detail'}, ...Object.entries(detail).flatMap(([k, v]) => [el('dt', {text: words(k)}), el('dd', {text: spoken(v)})]));
    return el('div', {}, list, el('details', {}, el('summary', {text: 'JSON'}), el('code', {text: JSON.stringify(detail)})));
  }

  function renderEvents() {
    const kinds = [...new Set(state.events.map((e) => e.kind))].sort();
    const filter = $('kind-filter');
    const chosen = filter.value;
    filter.replaceChildren(el('option', {value: '', text: 'every kind'}), ...kinds.map((k) => el('option', {value: k, text: k, selected: k === chosen})));
    const findingsOnly = $('findings-only').checked;
    const shown = state.events.filter((e) => (!chosen || e.kind === chosen) && (!findingsOnly || e.kind === 'finding')).slice(-300).reverse();
    $('events').tBodies[0].replaceChildren(...shown.map((e) => {
      const finding = e.kind === 'finding';
      const detail = finding
        ? el('div', {}, el('p', {}, el('strong', {text: 'Criterion: '}), e.detail.criterion || ''), el('p', {text: e.detail.message || ''}),
          el('p', {}, el('strong', {text: 'Fix: '}), e.detail.fix || ''))
        : readable(e.detail);
      return el('tr', {class: finding ? 'finding' : '', 'data-kind': e.kind},
        el('td', {text: e.id}), el('td', {text: when(e.at)}), el('td', {text: e.kind}), el('td', {text: e.outcome}),
        el('td', {text: e.reason}), el('td', {}, detail));
    }));
    labelCells($('events'));
  }

  // MARK: test controls

  async function loadClock() {
    const clock = await api('GET', '/clock');
    const text = `${when(clock.now)} (${clock.mode === 'system' ? 'system time' : 'virtual'})`;
    $('clock-state').textContent = text;
    $('clock-now').textContent = 'Clock: ' + text;
  }

  async function clock(body) {
    await act(async () => {
      await api('POST', '/clock', Object.assign({profile: state.profile}, body));
      await loadClock();
    });
  }

  async function loadControls() {
    const pending = (await api('GET', p() + '/user')).pending;
    $('decisions').textContent = pending.length ? pending.join(', ') : 'none (the user accepts)';
    const offers = (await api('GET', p() + '/offer')).offers;
    $('offers').replaceChildren(...(offers.length ? offers.map((o) => el('div', {class: 'offer'},
      el('p', {text: `${o.origin} asks (since ${when(o.since)}):`}),
      el('ul', {}, ...o.passkeys.map((k) => el('li', {}, `${k.userName || k.credentialId} `,
        button('Pick', () => act(async () => {
          await api('POST', p() + '/offer/pick', {credentialId: k.provider ? `${k.credentialId}@${k.provider}` : k.credentialId, ceremony: o.ceremony});
          await refresh();
        }), {'aria-label': `Pick ${k.userName || k.credentialId}`})))))) : [el('p', {text: 'No open dropdown.'})]));
    const holds = (await api('GET', '/holds')).holds.filter((h) => h.profile === state.profile);
    $('hold-list').replaceChildren(...holds.map((h) => el('li', {},
      `${h.id}: ${h.state}${h.operation ? ' (' + h.operation + ')' : ''} `,
      button('Release', () => act(async () => { await api('POST', `/holds/${encodeURIComponent(h.id)}/release`, {outcome: 'proceed'}); await loadControls(); }),
             {'aria-label': 'Release hold ' + h.id, class: 'release'}),
      button('Release as cancelled', () => act(async () => { await api('POST', `/holds/${encodeURIComponent(h.id)}/release`, {outcome: 'cancel'}); await loadControls(); }),
             {'aria-label': 'Release hold ' + h.id + ' as cancelled by the user'}))));
  }

  // MARK: the demo shop

  /** The demo shop, where the server offers it: its link once it runs. */
  async function loadDemo() {
    const demo = await api('GET', '/demo');
    $('demo').hidden = !demo.available;
    $('demo-nav').hidden = !demo.available;
    if (demo.running) showDemo(demo, 'Running at');
  }

  function showDemo(demo, words) {
    $('demo-status').replaceChildren(`${words} `, el('a', {href: demo.url, target: 'credemu-demo-shop', id: 'demo-link', text: demo.url}),
      ` (profile ${demo.profile}; its account ${demo.username}, whose password is in the vault).`);
  }

  /** One click: the server starts the shop for the open profile and saves its account's password here; the shop
   *  opens in a window of its own, beside this one, where the notification will show. */
  async function openDemo() {
    await act(async () => {
      const demo = await api('POST', '/demo', {profile: state.profile});
      const opened = window.open(demo.url, 'credemu-demo-shop');
      showDemo(demo, opened ? 'Opened' : 'Open');
      await loadVault();
    });
  }

  // MARK: reports

  function renderMatrix(m) {
    const head = el('tr', {}, el('th', {scope: 'col', text: 'Step'}), ...m.providers.map((x) => el('th', {scope: 'col', text: `${x.pack}@${x.platform}`})));
    const rows = m.steps.map((s) => el('tr', {class: s.diverges ? 'diverges' : ''},
      el('th', {scope: 'row'}, s.step, s.diverges ? el('span', {class: 'mark', title: 'providers differ', text: ' ≠'}) : ''),
      ...m.providers.map((x) => {
        const cell = s.cells[`${x.pack}@${x.platform}`] || {};
        return el('td', {}, el('strong', {text: cell.outcome || ''}), cell.reason ? ` (${cell.reason})` : '',
          el('br'), el('small', {text: cell.summary || ''}), cell.unexpected ? el('p', {class: 'error', text: 'unexpected: ' + cell.unexpected}) : '');
      })));
    const table = el('table', {id: 'matrix-table'}, el('caption', {text: `${m.title} (${m.scenario})`}), el('thead', {}, head), el('tbody', {}, ...rows));
    const findings = Object.entries(m.findings).filter(([, list]) => list.length);
    $('matrix').replaceChildren(table, ...(findings.length ? [el('h3', {text: 'Findings'}), el('ul', {}, ...findings.flatMap(([column, list]) =>
      list.map((f) => el('li', {class: 'finding'}, el('strong', {text: `${column}: ${f.code}`}), ` ${f.criterion}. ${f.message} Fix: ${f.fix}`))))] : []));
  }

  async function runScenario(event) {
    event.preventDefault();
    await act(async () => {
      let text = $('scenario-text').value.trim();
      const file = $('scenario-file').files[0];
      if (!text && file) text = await file.text();
      if (!text) throw new Error('Choose a scenario file or paste its JSON.');
      let scenario;
      try { scenario = JSON.parse(text); } catch (e) { throw new Error('The scenario is not JSON: ' + e.message); }
      $('scenario-status').textContent = 'Running…';
      const matrix = await api('POST', '/scenarios/run', {scenario, providers: $('scenario-providers').value.trim() || 'all'});
      renderMatrix(matrix);
      const diverging = matrix.steps.filter((s) => s.diverges).length;
      $('scenario-status').textContent = `${matrix.scenario}: ${matrix.steps.length} steps across ${matrix.providers.length} packs, ${diverging} diverging.`;
    });
    if (!$('error').hidden) $('scenario-status').textContent = '';
  }

  // MARK: the loop

  async function refresh() {
    const changed = await pollEvents();
    if (changed || !state.vaultLoaded) {
      await loadVault();
      state.vaultLoaded = true;
    }
    await Promise.all([loadClock(), loadControls()]);
    document.body.dataset.ready = '1';
  }

  async function tick() {
    if (state.polling) return;
    state.polling = true;
    try {
      await refresh();
    } catch (error) {
      showError(error);
    } finally {
      state.polling = false;
    }
  }

  function wire() {
    $('profile').addEventListener('change', () => act(() => selectProfile($('profile').value)));
    $('settings').addEventListener('change', changeSetting);
    $('settings').addEventListener('submit', (e) => e.preventDefault());
    $('profile-remove').addEventListener('click', () => act(async () => {
      if (!confirm(`Remove profile ${state.profile} and everything in it?`)) return;
      await api('DELETE', p());
      state.profile = 'default';
      await loadProfiles();
      await selectProfile(state.profile);
    }));
    $('profile-create').addEventListener('submit', (e) => {
      e.preventDefault();
      act(async () => {
        const created = await api('POST', '/profiles', {name: $('new-name').value.trim(), pack: $('new-pack').value});
        $('new-name').value = '';
        await loadProfiles();
        await selectProfile(created.name);
      });
    });
    $('kind-filter').addEventListener('change', renderEvents);
    $('findings-only').addEventListener('change', renderEvents);
    $('history-close').addEventListener('click', () => { state.historyOf = null; $('history').hidden = true; });
    $('clock-set-go').addEventListener('click', () => {
      const value = $('clock-set').value;
      if (!value) return showError(new Error('Choose a date and time first.'));
      clock({set: (value.length === 16 ? value + ':00' : value) + 'Z'});
    });
    for (const b of document.querySelectorAll('[data-advance]')) b.addEventListener('click', () => clock({advance: b.dataset.advance}));
    $('clock-system').addEventListener('click', () => clock({mode: 'system'}));
    for (const b of document.querySelectorAll('[data-decision]')) {
      b.addEventListener('click', () => act(async () => { await api('POST', p() + '/user', {decisions: [b.dataset.decision]}); await loadControls(); }));
    }
    $('decisions-clear').addEventListener('click', () => act(async () => { await api('DELETE', p() + '/user'); await loadControls(); }));
    $('hold-arm').addEventListener('click', () => act(async () => { await api('POST', p() + '/holds', {timeoutMs: 120000}); await loadControls(); }));
    $('scenario-form').addEventListener('submit', runScenario);
    $('demo-open').addEventListener('click', openDemo);
    window.addEventListener('hashchange', () => {
      if (takeToken()) { $('auth').hidden = true; start(); }
    });
    $('auth').addEventListener('submit', (e) => {
      e.preventDefault();
      state.token = $('token').value;
      sessionStorage.setItem('credemu-token', state.token);
      $('auth').hidden = true;
      start();
    });
  }

  async function start() {
    await act(async () => {
      await loadProviders();
      await loadProfiles();
      await refresh();
      await loadDemo();
      $('main').hidden = false;
    });
  }

  wire();
  start().then(() => setInterval(tick, 1000));
})();
