"""An example relying party that does what the seeds ask of an RP, for credemu's end-to-end tests and as an
example for users: password sign-in, an automatic passkey upgrade right after a completed sign-in (exclusion
IDs, UP=0/UV=0 accepted), a nudge after a named key action, passkey sign-in, passkey management with
revocation, and the WebAuthn signals. Python standard library plus py_webauthn; state lives in memory.

    python app.py --port 8000        # then open http://localhost:8000/login
    python app.py --csp "default-src 'self'; script-src 'self' 'unsafe-inline'"   # every answer with that CSP
"""
import argparse
import html
import json
import secrets
import threading
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

RP_ID = "localhost"


class Store:
    """Accounts, passkeys and sessions, in memory."""

    def __init__(self):
        self.lock = threading.Lock()
        self.users = {"alice@example.com": {"id": b"user-alice-0001", "password": "correct horse battery staple", "displayName": "Alice"}}
        self.credentials = {}  # credential ID bytes -> {user, public_key, sign_count, auto, revoked?}
        self.sessions = {}  # session ID -> {"user": name, "generation": n}
        self.pending = {}  # session ID or login nonce -> {"challenge", "user", "generation", "mode"}
        self.generation = 0

    def user_credentials(self, user):
        """The account's usable passkeys: what the complete accepted list names."""
        return [cid for cid, c in self.credentials.items() if c["user"] == user and not c.get("revoked")]

    def revoked_credentials(self, user):
        """Passkeys the user revoked, kept so that they can be restored."""
        return [cid for cid, c in self.credentials.items() if c["user"] == user and c.get("revoked")]


STORE = Store()

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;max-width:40rem;margin:2rem auto}} .status{{padding:.5rem;background:#eef}} li{{margin:.3rem 0}}</style>
</head><body><h1>{title}</h1>{body}<script>{script}</script></body></html>"""

COMMON_JS = r"""
async function post(path, body) {
  const r = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body || {})});
  return {status: r.status, body: await r.json()};
}
function say(id, text) { document.getElementById(id).textContent = text; }
// The signal methods are feature-detected: Firefox has none (WebAuthn L3's signals are not in its WebIDL).
function signal(name, options) {
  return typeof PublicKeyCredential[name] === 'function' ? PublicKeyCredential[name](options) : Promise.resolve();
}
"""

LOGIN_JS = COMMON_JS + r"""
document.getElementById('passkey').addEventListener('click', async () => {
  say('login-status', 'Signing in with a passkey...');
  const options = (await post('/api/login/options')).body;
  let credential;
  try {
    credential = await navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options)});
  } catch (e) {
    say('login-status', 'No passkey used: ' + e.name);
    return;
  }
  const result = await post('/api/login/verify', {credential: credential.toJSON()});
  if (result.status === 200) { location.href = '/account?signedIn=passkey'; return; }
  if (result.body.unknownCredentialId) {
    // Signal only when the server conclusively does not know the credential (seed 003).
    await signal('signalUnknownCredential', {rpId: options.rpId, credentialId: result.body.unknownCredentialId});
  }
  say('login-status', 'Passkey sign-in failed: ' + result.body.error);
});
"""

ACCOUNT_JS = COMMON_JS + r"""
const account = JSON.parse(document.getElementById('account').textContent);
async function register(mode) {
  const options = (await post('/api/register/options', {mode})).body;
  const request = {publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options)};
  if (mode === 'auto') request.mediation = 'conditional';
  const credential = await navigator.credentials.create(request);
  const result = await post('/api/register/verify', {mode, credential: credential.toJSON()});
  if (result.status !== 200) throw new Error(result.body.error);
  return result.body;
}
async function automaticUpgrade() {
  // One conditional request right after a completed sign-in; an expected no-op stays silent (N2.6-AC05).
  const caps = await PublicKeyCredential.getClientCapabilities();
  if (!caps.conditionalCreate) { say('upgrade-status', 'upgrade: not supported'); return; }
  try {
    const created = await register('auto');
    say('upgrade-status', 'upgrade: created ' + created.id);
  } catch (e) {
    say('upgrade-status', 'upgrade: skipped (' + e.name + ')');
  }
}
async function reconcile() {
  // The complete accepted list at sign-in (seed 003): never partial.
  await signal('signalAllAcceptedCredentials', {rpId: account.rpId, userId: account.userId, allAcceptedCredentialIds: account.credentials});
}
document.querySelectorAll('button.revoke').forEach(button => button.addEventListener('click', async () => {
  const result = await post('/api/passkeys/revoke', {id: button.dataset.id});
  await signal('signalAllAcceptedCredentials', {rpId: account.rpId, userId: account.userId, allAcceptedCredentialIds: result.body.accepted});
  location.href = '/account';
}));
document.querySelectorAll('button.restore').forEach(button => button.addEventListener('click', async () => {
  // Restoring is the same signal: the complete accepted list, now naming the passkey again (seed 003).
  const result = await post('/api/passkeys/restore', {id: button.dataset.id});
  await signal('signalAllAcceptedCredentials', {rpId: account.rpId, userId: account.userId, allAcceptedCredentialIds: result.body.accepted});
  location.href = '/account';
}));
document.getElementById('profile-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const result = await post('/api/profile', {displayName: document.getElementById('displayName').value});
  if (result.status !== 200) return;
  await signal('signalCurrentUserDetails', {rpId: account.rpId, userId: account.userId, name: result.body.name, displayName: result.body.displayName});
  say('profile-status', 'Display name saved.');
  if (account.credentials.length === 0) document.getElementById('nudge').hidden = false;  // after the named key action
});
document.getElementById('nudge-accept').addEventListener('click', async () => {
  document.getElementById('nudge').hidden = true;
  say('nudge-status', '');  // an earlier nudge's answer is not this one's
  try { say('nudge-status', 'nudge: created ' + (await register('nudge')).id); }
  catch (e) { say('nudge-status', 'nudge: not created (' + e.name + ')'); }
});
document.getElementById('nudge-skip').addEventListener('click', () => {
  document.getElementById('nudge').hidden = true;
  say('nudge-status', 'nudge: skipped');
});
(async () => {
  const signedIn = new URLSearchParams(location.search).get('signedIn');
  if (signedIn) await reconcile();
  // The automatic upgrade follows a password sign-in only: a user who signed in with a passkey has one, and
  // some managers never answer a create their exclusion list matches (KeePassXC: it waits for the timeout).
  if (signedIn === '1') await automaticUpgrade();
  document.body.dataset.ready = '1';
})();
"""


class Handler(BaseHTTPRequestHandler):
    server_version = "ExampleRP/1"

    def log_message(self, *args):
        pass

    # ---- plumbing ----
    def origin(self):
        return f"http://localhost:{self.server.server_address[1]}"

    def session_id(self):
        cookie = SimpleCookie(self.headers.get("Cookie", ""))
        return cookie["sid"].value if "sid" in cookie else None

    def session(self):
        sid = self.session_id()
        return STORE.sessions.get(sid) if sid else None

    def send(self, status, body, content_type="application/json", headers=()):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        if POLICY:
            self.send_header("Content-Security-Policy", POLICY)
        self.end_headers()
        self.wfile.write(data)

    def json(self, status, value):
        self.send(status, json.dumps(value))

    def redirect(self, location, headers=()):
        self.send(303, "", "text/plain", [("Location", location), *headers])

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    # ---- pages ----
    def do_GET(self):
        path = urlparse(self.path).path
        if path == "/":
            return self.redirect("/account" if self.session() else "/login")
        if path == "/login":
            body = """<form id="login-form" method="post" action="/login">
              <label>Email <input id="username" name="username" type="email" autocomplete="username"></label>
              <label>Password <input id="password" name="password" type="password" autocomplete="current-password"></label>
              <button id="sign-in" type="submit">Sign in</button></form>
              <p><button id="passkey" type="button">Sign in with a passkey</button></p>
              <p class="status" id="login-status"></p>"""
            return self.send(200, PAGE.format(title="Sign in", body=body, script=LOGIN_JS), "text/html")
        if path == "/logout":
            STORE.sessions.pop(self.session_id(), None)
            return self.redirect("/login", [("Set-Cookie", "sid=; Max-Age=0; Path=/")])
        if path == "/account":
            session = self.session()
            if not session:
                return self.redirect("/login")
            user = STORE.users[session["user"]]
            creds = STORE.user_credentials(session["user"])
            items = "".join(f'<li class="passkey">{bytes_to_base64url(cid)} <button class="revoke" data-id="{bytes_to_base64url(cid)}">Revoke</button></li>' for cid in creds)
            revoked = "".join(f'<li class="revoked">{bytes_to_base64url(cid)} <button class="restore" data-id="{bytes_to_base64url(cid)}">Restore</button></li>'
                              for cid in STORE.revoked_credentials(session["user"]))
            data = {"rpId": RP_ID, "userId": bytes_to_base64url(user["id"]), "credentials": [bytes_to_base64url(c) for c in creds]}
            body = f"""<p>Signed in as <b id="who">{html.escape(session['user'])}</b> ({html.escape(user['displayName'])})</p>
              <p class="status" id="upgrade-status"></p>
              <h2>Passkeys</h2><ul id="passkeys">{items or '<li id="none">No passkeys</li>'}</ul>
              {'<h2>Revoked passkeys</h2><ul id="revoked">' + revoked + '</ul>' if revoked else ''}
              <h2>Profile</h2><form id="profile-form"><input id="displayName" value="{html.escape(user['displayName'])}">
              <button id="save-profile" type="submit">Save display name</button></form><p class="status" id="profile-status"></p>
              <div id="nudge" hidden><p>Sign in faster next time: create a passkey, and use your fingerprint or screen lock instead of a password.</p>
              <button id="nudge-accept">Create a passkey</button> <button id="nudge-skip">Not now</button></div>
              <p class="status" id="nudge-status"></p><p><a id="sign-out" href="/logout">Sign out</a></p>
              <script type="application/json" id="account">{json.dumps(data)}</script>"""
            return self.send(200, PAGE.format(title="Your account", body=body, script=ACCOUNT_JS), "text/html")
        return self.send(404, "not found", "text/plain")

    def do_POST(self):
        path = urlparse(self.path).path
        if path == "/login":
            form = parse_qs(self.body().decode())
            name, password = form.get("username", [""])[0], form.get("password", [""])[0]
            user = STORE.users.get(name)
            if not user or not secrets.compare_digest(user["password"], password):
                return self.send(401, PAGE.format(title="Sign in failed", body='<p id="error">Wrong email or password.</p>', script=""), "text/html")
            return self.start_session(name)
        try:
            request = json.loads(self.body() or b"{}")
        except ValueError:
            return self.json(400, {"error": "invalid JSON"})
        routes = {"/api/register/options": self.register_options, "/api/register/verify": self.register_verify,
                  "/api/login/options": self.login_options, "/api/login/verify": self.login_verify,
                  "/api/passkeys/revoke": self.revoke, "/api/passkeys/restore": self.restore, "/api/profile": self.profile}
        if path not in routes:
            return self.json(404, {"error": "no such route"})
        return routes[path](request)

    def start_session(self, name, redirect=True):
        sid = secrets.token_urlsafe(16)
        with STORE.lock:
            STORE.generation += 1
            STORE.sessions[sid] = {"user": name, "generation": STORE.generation}
        cookie = ("Set-Cookie", f"sid={sid}; Path=/; HttpOnly; SameSite=Lax")
        if redirect:
            return self.redirect("/account?signedIn=1", [cookie])
        return cookie

    # ---- registration: automatic upgrade and nudge ----
    def register_options(self, request):
        session = self.session()
        if not session:
            return self.json(401, {"error": "sign in first"})
        name = session["user"]
        user = STORE.users[name]
        mode = request.get("mode", "nudge")
        options = generate_registration_options(
            rp_id=RP_ID, rp_name="Example RP", user_id=user["id"], user_name=name, user_display_name=user["displayName"],
            # Server-known IDs go in every exclusion input (N2.6-AC04).
            exclude_credentials=[PublicKeyCredentialDescriptor(id=c) for c in STORE.user_credentials(name)],
            authenticator_selection=AuthenticatorSelectionCriteria(resident_key=ResidentKeyRequirement.REQUIRED,
                                                                   user_verification=UserVerificationRequirement.PREFERRED))
        # Bind the ceremony to the account and session that started it (N2.5-AC03, N2.6-AC03).
        STORE.pending[self.session_id()] = {"challenge": options.challenge, "user": name, "generation": session["generation"], "mode": mode}
        return self.send(200, options_to_json(options))

    def register_verify(self, request):
        sid = self.session_id()
        session = self.session()
        pending = STORE.pending.pop(sid, None)
        if not session or not pending or pending["user"] != session["user"] or pending["generation"] != session["generation"]:
            return self.json(409, {"error": "stale registration: the account or session changed"})
        try:
            verified = verify_registration_response(
                credential=request["credential"], expected_challenge=pending["challenge"], expected_origin=self.origin(),
                expected_rp_id=RP_ID,
                # An automatic upgrade carries UP=0 and UV=0 (seed 000): the UP check is skipped for it.
                require_user_presence=pending["mode"] != "auto")
        except Exception as error:  # noqa: BLE001
            return self.json(400, {"error": str(error)})
        with STORE.lock:
            if verified.credential_id in STORE.credentials:
                return self.json(409, {"error": "credential already registered"})
            STORE.credentials[verified.credential_id] = {"user": pending["user"], "public_key": verified.credential_public_key,
                                                         "sign_count": verified.sign_count, "auto": pending["mode"] == "auto"}
        return self.json(200, {"ok": True, "id": bytes_to_base64url(verified.credential_id)})

    # ---- passkey sign-in ----
    def login_options(self, request):
        options = generate_authentication_options(rp_id=RP_ID, user_verification=UserVerificationRequirement.PREFERRED)
        nonce = bytes_to_base64url(options.challenge)
        STORE.pending[nonce] = {"challenge": options.challenge}
        return self.send(200, options_to_json(options))

    def login_verify(self, request):
        credential = request.get("credential") or {}
        try:
            client_data = json.loads(base64url_to_bytes(credential["response"]["clientDataJSON"]))
            pending = STORE.pending.pop(client_data["challenge"])
            credential_id = base64url_to_bytes(credential["rawId"])
        except (KeyError, ValueError, TypeError):
            return self.json(400, {"error": "malformed or expired sign-in"})
        stored = STORE.credentials.get(credential_id)
        if stored is None:
            return self.json(400, {"error": "unknown credential", "unknownCredentialId": credential["rawId"]})
        if stored.get("revoked"):  # kept for a restore: not unknown, so no signal that would delete it
            return self.json(400, {"error": "revoked passkey"})
        try:
            verified = verify_authentication_response(
                credential=credential, expected_challenge=pending["challenge"], expected_origin=self.origin(), expected_rp_id=RP_ID,
                credential_public_key=stored["public_key"], credential_current_sign_count=stored["sign_count"])
        except Exception as error:  # noqa: BLE001
            return self.json(400, {"error": str(error)})
        stored["sign_count"] = verified.new_sign_count
        cookie = self.start_session(stored["user"], redirect=False)
        return self.send(200, json.dumps({"ok": True, "user": stored["user"]}), headers=[cookie])

    # ---- management and profile ----
    def revoke(self, request):
        return self.set_revoked(request, True)

    def restore(self, request):
        return self.set_revoked(request, False)

    def set_revoked(self, request, revoked):
        """Revokes or restores one of the account's passkeys; answers the complete accepted list."""
        session = self.session()
        if not session:
            return self.json(401, {"error": "sign in first"})
        try:
            credential_id = base64url_to_bytes(request["id"])
        except (KeyError, ValueError, TypeError):
            return self.json(400, {"error": "bad id"})
        with STORE.lock:
            stored = STORE.credentials.get(credential_id)
            if stored and stored["user"] == session["user"]:
                stored["revoked"] = revoked
        accepted = [bytes_to_base64url(c) for c in STORE.user_credentials(session["user"])]
        return self.json(200, {"ok": True, "accepted": accepted})

    def profile(self, request):
        session = self.session()
        if not session or not isinstance(request.get("displayName"), str):
            return self.json(400, {"error": "sign in and send a displayName"})
        user = STORE.users[session["user"]]
        user["displayName"] = request["displayName"]
        return self.json(200, {"ok": True, "name": session["user"], "displayName": user["displayName"]})


POLICY = None   # --csp


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--csp", default=None, help="a Content-Security-Policy header on every answer")
    args = parser.parse_args()
    global POLICY
    POLICY = args.csp
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"http://localhost:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
