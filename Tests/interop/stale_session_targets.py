"""A reference RP server with cookie sessions for `credemu probe --adapter`'s stale-account-context checks (issue 35.2;
seed 002 N2.5-AC03, seed 000 N2.6-AC03 and N2.6-AC06), verified by py_webauthn.

Routes (JSON bodies; the adapter file is ADAPTER below):
  POST   /session              {"user": NAME}  signs in (a new session cookie; the old session, if any, ends)
  DELETE /session                              signs out
  POST   /passkeys/begin       {"uv", "attestation"}  registration options for the session's account
  POST   /passkeys/finish      {"credential"}         stores the credential
  POST   /passkeys/signin/begin, /passkeys/signin/finish   a sign-in with a passkey of the session's account

The correct server keeps the pending registration in the session that began it, with its account; a sign-out or any
sign-in ends that session, so a stale answer finds nothing pending and is refused. Bugs (each off by default):
  stale_to_current_user  the pending registration is found by its challenge alone and the credential is stored for
                         whoever is signed in when the answer comes (a sign-out still refuses it: no one is)
  stale_to_options_user  the pending registration is found by its challenge alone and the credential is stored for
                         the account the options named, signed in or not
  options_from_earlier_account  a sign-in on a session keeps the session and its first account, and registration
                         options are built for that account (N2.6-AC03), while a stale answer is still refused
"""
import http.server
import json
import secrets
import threading

BUGS = ("stale_to_current_user", "stale_to_options_user", "options_from_earlier_account")
STALE_BUGS = ("stale_to_current_user", "stale_to_options_user")

ADAPTER = {
    "signIn": {"path": "/session", "body": {"user": "{username}"}},
    "signOut": {"path": "/session", "method": "DELETE"},
    "registration": {"begin": {"path": "/passkeys/begin", "body": {"uv": "{userVerification}", "attestation": "{attestation}"}},
                     "options": "publicKey", "finish": {"path": "/passkeys/finish", "response": "credential"}},
    "authentication": {"begin": {"path": "/passkeys/signin/begin"}, "options": "publicKey",
                       "finish": {"path": "/passkeys/signin/finish", "response": "credential"}},
}


class Refused(Exception):
    """The server's refusal: (HTTP status, message)."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class StaleSessionTarget:
    """`StaleSessionTarget(bugs={"stale_to_options_user"}).start()` then `.url`, `.origin`; `.stop()`."""

    def __init__(self, bugs=(), host="127.0.0.1"):
        assert set(bugs) <= set(BUGS), set(bugs) - set(BUGS)
        self.bugs = set(bugs)
        self.httpd = http.server.ThreadingHTTPServer((host, 0), self._handler())
        self.port = self.httpd.server_address[1]
        self.origin = self.url = f"http://localhost:{self.port}"
        self.lock = threading.Lock()
        self.sessions = {}    # cookie -> {"user": NAME, "account": NAME (options_from_earlier_account), "pending": ...}
        self.by_challenge = {}  # challenge -> (NAME, uv): the stale bugs' pending registrations
        self.users = {}       # NAME -> [credential records]
        self.user_ids = {}    # NAME -> the account's user handle

    def start(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def credentials(self, user):
        """The IDs of the credentials stored for `user` (what a test checks after the probe)."""
        with self.lock:
            return [r["id"] for r in self.users.get(user, [])]

    # Sessions

    def sign_in(self, cookie, user):
        with self.lock:
            session = self.sessions.get(cookie)
            if session is not None and "options_from_earlier_account" in self.bugs:
                session.update(user=user, pending=None)  # the session and its first account stay
                return cookie
            self.sessions.pop(cookie, None)
            cookie = secrets.token_urlsafe(16)
            self.sessions[cookie] = {"user": user, "account": user, "pending": None}
            return cookie

    def sign_out(self, cookie):
        with self.lock:
            self.sessions.pop(cookie, None)

    def session(self, cookie, required=True):
        with self.lock:
            session = self.sessions.get(cookie)
        if session is None and required:
            raise Refused(401, "Sign in first.")
        return session

    # Registration

    def registration_options(self, session, uv, attestation):
        from webauthn import generate_registration_options, options_to_json
        from webauthn.helpers.structs import (AttestationConveyancePreference, AuthenticatorSelectionCriteria,
                                              ResidentKeyRequirement, UserVerificationRequirement)
        user = session["account"] if "options_from_earlier_account" in self.bugs else session["user"]
        with self.lock:
            user_id = self.user_ids.setdefault(user, secrets.token_bytes(16))
        uv = uv or "preferred"
        options = generate_registration_options(
            rp_id="localhost", rp_name="Stale session target", user_id=user_id, user_name=user, user_display_name=user,
            attestation=AttestationConveyancePreference(attestation or "none"),
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement(uv)))
        with self.lock:
            session["pending"] = {"challenge": options.challenge, "user": user, "uv": uv}
            if self.bugs & set(STALE_BUGS):
                self.by_challenge[options.challenge] = (user, uv)
        return json.loads(options_to_json(options))

    def registration_finish(self, cookie, credential):
        from webauthn import verify_registration_response
        from webauthn.helpers import base64url_to_bytes
        from webauthn.helpers.structs import CredentialDeviceType
        challenge = base64url_to_bytes(json.loads(base64url_to_bytes(credential["response"]["clientDataJSON"]))["challenge"])
        if self.bugs & set(STALE_BUGS):
            # The bugs: the challenge alone finds the ceremony, whatever session it began in.
            with self.lock:
                user, uv = self.by_challenge.pop(challenge, (None, None))
            if user is None:
                raise Refused(400, "No registration is pending for this challenge.")
            if "stale_to_current_user" in self.bugs:
                user = self.session(cookie)["user"]
        else:
            session = self.session(cookie)
            with self.lock:
                pending, session["pending"] = session["pending"], None
            if pending is None or pending["challenge"] != challenge:
                raise Refused(400, "No registration is pending in this session: it ended, or another sign-in replaced it.")
            user, uv = pending["user"], pending["uv"]
        v = verify_registration_response(credential=credential, expected_challenge=challenge, expected_rp_id="localhost",
                                         expected_origin=self.origin, require_user_presence=False,
                                         require_user_verification=uv == "required")
        with self.lock:
            self.users.setdefault(user, []).append({
                "id": v.credential_id, "public_key": v.credential_public_key, "sign_count": v.sign_count,
                "multi_device": v.credential_device_type == CredentialDeviceType.MULTI_DEVICE})

    # Sign-in with a passkey of the session's account

    def authentication_options(self, session):
        from webauthn import generate_authentication_options, options_to_json
        from webauthn.helpers.structs import PublicKeyCredentialDescriptor
        with self.lock:
            records = list(self.users.get(session["user"], []))
        if not records:
            raise Refused(400, "This account has no passkey.")
        options = generate_authentication_options(
            rp_id="localhost", allow_credentials=[PublicKeyCredentialDescriptor(id=r["id"]) for r in records])
        with self.lock:
            session["signin"] = options.challenge
        return json.loads(options_to_json(options))

    def authentication_finish(self, session, credential):
        from webauthn import verify_authentication_response
        from webauthn.helpers import base64url_to_bytes
        with self.lock:
            challenge, session["signin"] = session.get("signin"), None
            records = list(self.users.get(session["user"], []))
        if challenge is None:
            raise Refused(400, "No sign-in is pending in this session.")
        record = next((r for r in records if r["id"] == base64url_to_bytes(credential["rawId"])), None)
        if record is None:
            raise Refused(400, "This passkey is not one of this account's.")
        v = verify_authentication_response(credential=credential, expected_challenge=challenge, expected_rp_id="localhost",
                                           expected_origin=self.origin, credential_public_key=record["public_key"],
                                           credential_current_sign_count=record["sign_count"])
        record["sign_count"] = v.new_sign_count

    def _handler(self):
        target = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, status, document, cookie=None):
                data = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if cookie is not None:
                    self.send_header("Set-Cookie", f"sid={cookie}; Path=/; HttpOnly" + ("" if cookie else "; Max-Age=0"))
                self.end_headers()
                self.wfile.write(data)

            def cookie(self):
                for part in (self.headers.get("Cookie") or "").split(";"):
                    name, _, value = part.strip().partition("=")
                    if name == "sid":
                        return value
                return None

            def do_DELETE(self):
                if self.path != "/session":
                    return self.reply(404, {"error": "No such route."})
                target.sign_out(self.cookie())
                self.reply(200, {"signedOut": True}, cookie="")

            def do_POST(self):
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                    self.route(body)
                except Refused as e:
                    self.reply(e.status, {"error": str(e)})
                except Exception as e:  # the library's refusal is the server's answer
                    self.reply(400, {"error": str(e) or type(e).__name__})

            def route(self, body):
                cookie = self.cookie()
                if self.path == "/session":
                    return self.reply(200, {"signedIn": body["user"]}, cookie=target.sign_in(cookie, body["user"]))
                if self.path == "/passkeys/begin":
                    options = target.registration_options(target.session(cookie), body.get("uv"), body.get("attestation"))
                    return self.reply(200, {"publicKey": options})
                if self.path == "/passkeys/finish":
                    target.registration_finish(cookie, body["credential"])
                    return self.reply(200, {"verified": True})
                if self.path == "/passkeys/signin/begin":
                    return self.reply(200, {"publicKey": target.authentication_options(target.session(cookie))})
                if self.path == "/passkeys/signin/finish":
                    target.authentication_finish(target.session(cookie), body["credential"])
                    return self.reply(200, {"verified": True})
                self.reply(404, {"error": "No such route."})

        return Handler
