"""Reference RP servers for `credemu probe`: the FIDO2 Conformance Test API (and an adapter-shaped variant of the
same routes with a sign-in step and a session cookie), verified by py_webauthn or python-fido2, with switches that
reproduce integration bugs found in real RP servers.

Bugs (each off by default, so a target with none is a correct server):
  reject_uv          a registration verifier that requires UV=1 (seed 000: "the most common integration bug")
  reject_up          a registration verifier that requires UP=1 (python-fido2's own register_complete does this)
  counter_must_grow  an assertion is refused unless signCount is greater than the stored one
  reject_zero_aaguid an all-zero AAGUID (Apple Passwords) is refused
  reject_be_without_bs  a backup-eligible credential that is not backed up (BE=1, BS=0) is refused
  invalid_options    registration options without user.id (a server that forgot the user handle): no browser takes them
  reject_second_registration  a registration for an account that already has a credential is refused (after the
                     provider made it, without excludeCredentials)
  keep_first_credential  a second credential of an account is answered "ok" but never stored: sign-ins ask for the
                     first one only

Each account keeps one user handle (user.id) for all its registrations, as an RP's user table does. The practice
`exclude_credentials` (not a bug) lists the account's credentials in excludeCredentials.
"""
import base64
import http.server
import json
import secrets
import threading

from cryptography.hazmat.primitives import constant_time

BUGS = ("reject_uv", "reject_up", "counter_must_grow", "reject_zero_aaguid", "reject_be_without_bs",
        "require_backup_eligible", "reject_attestation_x5c", "reject_nonzero_counter", "reject_hybrid", "invalid_options",
        "reject_second_registration", "keep_first_credential")
PRACTICES = ("exclude_credentials",)
ZERO_AAGUID = "00000000-0000-0000-0000-000000000000"


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def has_x5c(body):
    """Whether the registration's attestation statement carries a certificate chain (packed or fido-u2f)."""
    from fido2 import cbor
    return "x5c" in cbor.decode(b64url_decode(body["response"]["attestationObject"])).get("attStmt", {})


def challenge_of(body):
    """The challenge the client data names (the conformance API carries no session)."""
    client_data = json.loads(b64url_decode(body["response"]["clientDataJSON"]))
    return client_data["challenge"]


class PyWebAuthnBackend:
    name = "py_webauthn"

    def __init__(self, rp_id, origin, bugs):
        self.rp_id, self.origin, self.bugs = rp_id, origin, bugs

    def registration_options(self, user_id, username, display_name, uv, attestation, records):
        from webauthn import generate_registration_options, options_to_json
        from webauthn.helpers.structs import (AttestationConveyancePreference, AuthenticatorSelectionCriteria,
                                              PublicKeyCredentialDescriptor, ResidentKeyRequirement,
                                              UserVerificationRequirement)
        options = generate_registration_options(
            rp_id=self.rp_id, rp_name="Probe target", user_id=user_id, user_name=username, user_display_name=display_name,
            exclude_credentials=[PublicKeyCredentialDescriptor(id=r["id"]) for r in records],
            attestation=AttestationConveyancePreference(attestation),
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement(uv)))
        return json.loads(options_to_json(options)), {"challenge": options.challenge, "uv": uv}

    def verify_registration(self, state, body):
        from webauthn import verify_registration_response
        from webauthn.helpers.structs import CredentialDeviceType
        v = verify_registration_response(
            credential=body, expected_challenge=state["challenge"], expected_rp_id=self.rp_id,
            expected_origin=self.origin, require_user_presence="reject_up" in self.bugs,
            require_user_verification=state["uv"] == "required")
        return {"id": v.credential_id, "public_key": v.credential_public_key, "sign_count": v.sign_count,
                "aaguid": v.aaguid, "uv": v.user_verified, "be": v.credential_device_type == CredentialDeviceType.MULTI_DEVICE,
                "bs": v.credential_backed_up}

    def authentication_options(self, records, uv):
        from webauthn import generate_authentication_options, options_to_json
        from webauthn.helpers.structs import PublicKeyCredentialDescriptor, UserVerificationRequirement
        options = generate_authentication_options(
            rp_id=self.rp_id, user_verification=UserVerificationRequirement(uv),
            allow_credentials=[PublicKeyCredentialDescriptor(id=r["id"]) for r in records])
        return json.loads(options_to_json(options)), {"challenge": options.challenge, "uv": uv}

    def verify_authentication(self, state, record, body):
        from webauthn import verify_authentication_response
        v = verify_authentication_response(
            credential=body, expected_challenge=state["challenge"], expected_rp_id=self.rp_id,
            expected_origin=self.origin, credential_public_key=record["public_key"],
            credential_current_sign_count=record["sign_count"], require_user_verification=state["uv"] == "required")
        return v.new_sign_count


def tolerant_fido2_server(rp, origin):
    """python-fido2's Fido2Server, except that a registration without UP (a conditional create) is accepted:
    WebAuthn L3 §7.1 checks UP only when mediation is not conditional."""
    from fido2.server import Fido2Server
    from fido2.utils import websafe_decode
    from fido2.webauthn import (AttestationConveyancePreference, CollectedClientData, RegistrationResponse,
                                UserVerificationRequirement)

    class TolerantServer(Fido2Server):
        def register_complete(self, state, response):
            registration = RegistrationResponse.from_dict(response)
            client_data = registration.response.client_data
            attestation_object = registration.response.attestation_object
            auth_data = attestation_object.auth_data
            if client_data.type != CollectedClientData.TYPE.CREATE:
                raise ValueError("Incorrect type in CollectedClientData.")
            if not self._verify(client_data.origin):
                raise ValueError("Invalid origin in CollectedClientData.")
            if not constant_time.bytes_eq(websafe_decode(state["challenge"]), client_data.challenge):
                raise ValueError("Wrong challenge in response.")
            if not constant_time.bytes_eq(self.rp.id_hash or b"", auth_data.rp_id_hash):
                raise ValueError("Wrong RP ID hash in response.")
            if state["user_verification"] == UserVerificationRequirement.REQUIRED and not auth_data.is_user_verified():
                raise ValueError("User verification required, but User Verified flag not set.")
            if self.attestation not in (None, AttestationConveyancePreference.NONE):
                self._verify_attestation(attestation_object, client_data.hash)
            return auth_data

    return TolerantServer(rp, verify_origin=lambda o: o == origin)


class Fido2Backend:
    name = "python-fido2"

    def __init__(self, rp_id, origin, bugs):
        from fido2.server import Fido2Server
        from fido2.webauthn import AttestationConveyancePreference, PublicKeyCredentialRpEntity
        rp = PublicKeyCredentialRpEntity(name="Probe target", id=rp_id)
        self.bugs = bugs
        # With the UP bug on, the library's own register_complete: it refuses UP=0 ("User Present flag not set.").
        if "reject_up" in bugs:
            self.server = Fido2Server(rp, verify_origin=lambda o: o == origin)
        else:
            self.server = tolerant_fido2_server(rp, origin)
        self.server.attestation = AttestationConveyancePreference.NONE

    def registration_options(self, user_id, username, display_name, uv, attestation, records):
        from fido2.webauthn import PublicKeyCredentialUserEntity, ResidentKeyRequirement, UserVerificationRequirement
        user = PublicKeyCredentialUserEntity(name=username, id=user_id, display_name=display_name)
        options, state = self.server.register_begin(user, credentials=[r["credential"] for r in records],
                                                    resident_key_requirement=ResidentKeyRequirement.REQUIRED,
                                                    user_verification=UserVerificationRequirement(uv))
        return dict(options)["publicKey"], state

    def verify_registration(self, state, body):
        auth_data = self.server.register_complete(state, body)
        cred = auth_data.credential_data
        return {"id": cred.credential_id, "credential": cred, "sign_count": auth_data.counter,
                "aaguid": str(cred.aaguid), "uv": auth_data.is_user_verified(), "be": auth_data.is_backup_eligible(),
                "bs": auth_data.is_backed_up()}

    def authentication_options(self, records, uv):
        from fido2.webauthn import UserVerificationRequirement
        options, state = self.server.authenticate_begin([r["credential"] for r in records],
                                                        user_verification=UserVerificationRequirement(uv))
        return dict(options)["publicKey"], state

    def verify_authentication(self, state, record, body):
        from fido2.webauthn import AuthenticationResponse
        self.server.authenticate_complete(state, [record["credential"]], body)
        return AuthenticationResponse.from_dict(body).response.authenticator_data.counter


BACKENDS = {"py_webauthn": PyWebAuthnBackend, "fido2": Fido2Backend}


class Target:
    """One server: `Target("fido2", bugs={"reject_uv"}).start()` then `.url`, `.origin`; `.stop()`."""

    def __init__(self, library, bugs=(), host="127.0.0.1", practices=()):
        unknown = set(bugs) - set(BUGS) | set(practices) - set(PRACTICES)
        assert not unknown, unknown
        self.bugs = set(bugs)
        self.practices = set(practices)
        self.httpd = http.server.ThreadingHTTPServer((host, 0), self._handler())
        self.port = self.httpd.server_address[1]
        self.origin = f"http://localhost:{self.port}"
        self.url = self.origin
        self.backend = BACKENDS[library]("localhost", self.origin, self.bugs)
        self.lock = threading.Lock()
        self.pending = {}    # challenge -> (kind, username, state)
        self.users = {}      # username -> [credential records]
        self.user_ids = {}   # username -> the account's user handle
        self.sessions = {}   # cookie -> username (adapter routes)

    def start(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    # The ceremonies, shared by both route shapes.

    def registration_options(self, username, display_name, uv="preferred", attestation="none"):
        with self.lock:
            user_id = self.user_ids.setdefault(username, secrets.token_bytes(16))
            records = list(self.users.get(username, [])) if "exclude_credentials" in self.practices else []
        options, state = self.backend.registration_options(user_id, username, display_name or username, uv or "preferred",
                                                           attestation or "none", records)
        with self.lock:
            self.pending[options["challenge"]] = ("create", username, state)
        if "invalid_options" in self.bugs:
            options = {**options, "user": {k: v for k, v in options["user"].items() if k != "id"}}
        return options

    def registration_result(self, body):
        with self.lock:
            kind, username, state = self.pending.pop(challenge_of(body), (None, None, None))
        if kind != "create":
            raise ValueError("No registration is pending for this challenge.")
        record = self.backend.verify_registration(state, body)
        if "reject_uv" in self.bugs and not record["uv"]:
            raise ValueError("User verification is required: the UV flag is not set.")
        if "reject_zero_aaguid" in self.bugs and record["aaguid"] == ZERO_AAGUID:
            raise ValueError("Unknown authenticator: the AAGUID is all zeros.")
        if "reject_be_without_bs" in self.bugs and record["be"] and not record["bs"]:
            raise ValueError("Backup eligible credential is not backed up.")
        if "require_backup_eligible" in self.bugs and not record["be"]:
            raise ValueError("Only synced passkeys are accepted: the credential is not backup eligible.")
        if "reject_attestation_x5c" in self.bugs and has_x5c(body):
            raise ValueError("Untrusted attestation: the certificate chain does not lead to a known root.")
        if ("reject_hybrid" in self.bugs and body.get("authenticatorAttachment") == "cross-platform"
                and "hybrid" in body["response"].get("transports", [])):
            raise ValueError("Passkeys from another device are not supported.")
        with self.lock:
            known = self.users.setdefault(username, [])
            if known and "reject_second_registration" in self.bugs:
                raise ValueError("This account already has a passkey.")
            if known and "keep_first_credential" in self.bugs:
                return
            known.append(record)

    def authentication_options(self, username, uv="preferred"):
        with self.lock:
            records = list(self.users.get(username, []))
        if not records:
            raise ValueError(f"No credentials for {username}.")
        options, state = self.backend.authentication_options(records, uv or "preferred")
        with self.lock:
            self.pending[options["challenge"]] = ("get", username, state)
        return options

    def authentication_result(self, body):
        with self.lock:
            kind, username, state = self.pending.pop(challenge_of(body), (None, None, None))
            records = list(self.users.get(username, []))
        if kind != "get":
            raise ValueError("No authentication is pending for this challenge.")
        raw_id = b64url_decode(body["rawId"])
        record = next((r for r in records if r["id"] == raw_id), None)
        if record is None:
            raise ValueError("Unknown credential ID.")
        new_count = self.backend.verify_authentication(state, record, body)
        if "reject_nonzero_counter" in self.bugs and new_count != 0:
            raise ValueError(f"Unexpected signCount {new_count}: passkeys have no counter.")
        if "counter_must_grow" in self.bugs and new_count <= record["sign_count"]:
            raise ValueError(f"Possible cloned authenticator: signCount {new_count} is not greater than {record['sign_count']}.")
        record["sign_count"] = new_count

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
                if cookie:
                    self.send_header("Set-Cookie", f"session={cookie}; Path=/; HttpOnly")
                self.end_headers()
                self.wfile.write(data)

            def session_user(self):
                for part in (self.headers.get("Cookie") or "").split(";"):
                    name, _, value = part.strip().partition("=")
                    if name == "session" and value in target.sessions:
                        return target.sessions[value]
                raise PermissionError("Sign in first.")

            def do_POST(self):
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                except ValueError:
                    return self.reply(400, {"status": "failed", "errorMessage": "Malformed JSON."})
                try:
                    self.route(body)
                except PermissionError as e:
                    self.reply(401, {"error": str(e)})
                except Exception as e:  # the library's refusal is the server's answer
                    if self.path.startswith("/custom/"):
                        self.reply(400, {"error": str(e) or type(e).__name__})
                    else:
                        self.reply(400, {"status": "failed", "errorMessage": str(e) or type(e).__name__})

            def route(self, body):
                ok = {"status": "ok", "errorMessage": ""}
                if self.path == "/attestation/options":
                    sel = body.get("authenticatorSelection") or {}
                    options = target.registration_options(body["username"], body.get("displayName"),
                                                          sel.get("userVerification"), body.get("attestation"))
                    return self.reply(200, {**ok, **options})
                if self.path == "/attestation/result":
                    target.registration_result(body)
                    return self.reply(200, ok)
                if self.path == "/assertion/options":
                    return self.reply(200, {**ok, **target.authentication_options(body["username"], body.get("userVerification"))})
                if self.path == "/assertion/result":
                    target.authentication_result(body)
                    return self.reply(200, ok)
                # The adapter shape: a password sign-in sets a session cookie; begin/finish read the user from it.
                if self.path == "/custom/login":
                    cookie = secrets.token_urlsafe(16)
                    target.sessions[cookie] = body["user"]
                    return self.reply(200, {"signedIn": body["user"]}, cookie=cookie)
                if self.path == "/custom/register/begin":
                    user = self.session_user()
                    return self.reply(200, {"publicKey": target.registration_options(user, user, body.get("uv"), body.get("attestation"))})
                if self.path == "/custom/register/finish":
                    self.session_user()
                    target.registration_result(body["credential"])
                    return self.reply(200, {"verified": True})
                if self.path == "/custom/login/begin":
                    return self.reply(200, {"publicKey": target.authentication_options(self.session_user(), body.get("uv"))})
                if self.path == "/custom/login/finish":
                    self.session_user()
                    target.authentication_result(body["credential"])
                    return self.reply(200, {"verified": True})
                self.reply(404, {"status": "failed", "errorMessage": "No such route."})

        return Handler
