"""Reference RP servers for `credemu probe --forgeries`: probe_targets.Target (py_webauthn or python-fido2 behind the
FIDO2 Conformance Test API) with the checks WebAuthn L3 §7.1/§7.2 leave to the RP beside the library's, and a switch
per security bug, each of which lets exactly its forgeries through.

The RP's own checks (what a correct server adds to either library):
  - C.crossOrigin true or a C.topOrigin is refused: the pages never embed the ceremony in another origin's iframe
    (§7.1 steps 10-11, §7.2 steps 13-14; neither library checks them);
  - authData parsed strictly: the ED flag needs extension CBOR, no bytes after the last CBOR item (§6.1);
  - BS=1 with BE=0 refused (§7.1 step 17, §7.2 step 18);
  - only the algorithms offered (ES256 and RS256: EdDSA is left out so an unoffered one exists) (§7.1 step 20);
  - a `packed` statement verified whatever attestation was asked (§7.1 step 22, §8.2; python-fido2's server skips it
    when attestation is "none");
  - the credential looked up among the signing-in account's own, and userHandle checked against it (§7.2 steps 5-6);
  - a counter not greater than the stored one refused when either is non-zero (§7.2 step 22).

Bugs (off by default):
  skip_signature               an assertion whose signature does not verify is accepted
  skip_origin                  C.origin is not compared with the RP's origin
  skip_challenge               the challenge is not compared: a response is matched to the last ceremony of its kind
  accept_counter_regression    a signCount lower than the stored one is accepted
  accept_other_users_credential  any registered credential signs in to any account, whatever its userHandle
"""
import json

from probe_targets import Target, b64url_decode, challenge_of

FORGERY_BUGS = ("skip_signature", "skip_origin", "skip_challenge", "accept_counter_regression",
                "accept_other_users_credential")
# What `credemu probe --forgeries all` must name for each switch ("forgery/ceremony"), and nothing else.
EXPECTED = {
    "skip_signature": {"badSignature/assertion"},
    "skip_origin": {"otherOrigin/registration", "otherOrigin/assertion"},
    "skip_challenge": {"otherChallenge/registration", "otherChallenge/assertion", "replayed/assertion"},
    "accept_counter_regression": {"counterRegression/assertion"},
    "accept_other_users_credential": {"otherUsersCredential/assertion"},
}
OFFERED = (-7, -257)


def client_data_of(body):
    return json.loads(b64url_decode(body["response"]["clientDataJSON"]))


def strict_auth_data(data):
    """§6.1 read strictly: returns (flags, signCount, COSE alg or None); raises on ED without CBOR or trailing bytes."""
    from fido2 import cbor
    if len(data) < 37:
        raise ValueError("Authenticator data is too short.")
    flags, count, rest, alg = data[32], int.from_bytes(data[33:37], "big"), data[37:], None
    if flags & 0x40:
        length = int.from_bytes(rest[16:18], "big")
        key, rest = cbor.decode_from(rest[18 + length:])
        alg = key.get(3)
    if flags & 0x80:
        if not rest:
            raise ValueError("The ED flag is set but no extension data follows.")
        _, rest = cbor.decode_from(rest)
    if rest:
        raise ValueError(f"{len(rest)} bytes left after the authenticator data.")
    if flags & 0x10 and not flags & 0x08:
        raise ValueError("Backup state set on a credential that is not backup eligible.")
    return flags, count, alg


class ForgeryTarget(Target):
    """`ForgeryTarget("fido2", forgery_bugs={"skip_origin"}).start()`; `.url`, `.origin`, `.stop()` as Target's."""

    def __init__(self, library, forgery_bugs=()):
        assert set(forgery_bugs) <= set(FORGERY_BUGS), forgery_bugs
        super().__init__(library)
        self.forgery_bugs = set(forgery_bugs)
        self.last_state = {}    # kind -> (kind, username, state): the session a challenge-blind server answers from
        if "skip_origin" in self.forgery_bugs:
            if library == "fido2":
                self.backend.server._verify = lambda origin: True

    def _remember(self, options, kind):
        with self.lock:
            self.last_state[kind] = self.pending[options["challenge"]]

    def _challenge_blind(self, body, kind):
        """skip_challenge: a response whose challenge matches no ceremony is matched to the last one of its kind."""
        challenge = challenge_of(body)
        with self.lock:
            if challenge in self.pending or "skip_challenge" not in self.forgery_bugs or kind not in self.last_state:
                return
            k, username, state = self.last_state[kind]
            state = dict(state)
            raw = b64url_decode(challenge)
            state["challenge"] = raw if isinstance(state["challenge"], bytes) else challenge
            self.pending[challenge] = (k, username, state)

    def _client_checks(self, body):
        client = client_data_of(body)
        if client.get("crossOrigin") is True or "topOrigin" in client:
            raise ValueError("Cross-origin client data: this RP is never framed by another origin.")
        if "skip_origin" in self.forgery_bugs and hasattr(self.backend, "origin"):
            self.backend.origin = client.get("origin")

    def registration_options(self, username, display_name, uv="preferred", attestation="none"):
        options = super().registration_options(username, display_name, uv, attestation)
        options["pubKeyCredParams"] = [p for p in options["pubKeyCredParams"] if p["alg"] in OFFERED]
        self._remember(options, "create")
        return options

    def registration_result(self, body):
        from fido2.attestation import PackedAttestation
        from fido2.webauthn import AttestationObject, AuthenticatorData, CollectedClientData
        self._client_checks(body)
        client_data = CollectedClientData(b64url_decode(body["response"]["clientDataJSON"]))
        attestation = AttestationObject(b64url_decode(body["response"]["attestationObject"]))
        _, _, alg = strict_auth_data(bytes(attestation.auth_data))
        if alg is None:
            raise ValueError("The registration carries no attested credential data.")
        if alg not in OFFERED:
            raise ValueError(f"Algorithm {alg} was not offered.")
        if attestation.fmt == "packed":
            PackedAttestation().verify(attestation.att_stmt, AuthenticatorData(bytes(attestation.auth_data)), client_data.hash)
        self._challenge_blind(body, "create")
        super().registration_result(body)

    def authentication_options(self, username, uv="preferred"):
        options = super().authentication_options(username, uv)
        self._remember(options, "get")
        return options

    def authentication_result(self, body):
        self._client_checks(body)
        flags, count, _ = strict_auth_data(b64url_decode(body["response"]["authenticatorData"]))
        self._challenge_blind(body, "get")
        with self.lock:
            kind, username, state = self.pending.pop(challenge_of(body), (None, None, None))
        if kind != "get":
            raise ValueError("No authentication is pending for this challenge.")
        raw_id = b64url_decode(body["rawId"])
        with self.lock:
            mine = [r for r in self.users.get(username, []) if r["id"] == raw_id]
            anyone = [r for records in self.users.values() for r in records if r["id"] == raw_id]
        record = (anyone if "accept_other_users_credential" in self.forgery_bugs else mine or [None])[0]
        if record is None:
            raise ValueError("This credential is not one of the account's.")
        handle = body["response"].get("userHandle")
        if handle and "accept_other_users_credential" not in self.forgery_bugs and b64url_decode(handle) != self.user_ids.get(username):
            raise ValueError("The user handle is not the account's.")
        # The library compares counters too (py_webauthn): the bug hands it none to compare.
        checked = {**record, "sign_count": 0} if "accept_counter_regression" in self.forgery_bugs else record
        try:
            self.backend.verify_authentication(state, checked, body)
        except Exception as e:
            if "skip_signature" not in self.forgery_bugs or "signature" not in str(e).lower():
                raise
        if (count or record["sign_count"]) and count <= record["sign_count"] and "accept_counter_regression" not in self.forgery_bugs:
            raise ValueError(f"signCount {count} is not greater than the stored {record['sign_count']}: a cloned authenticator?")
        record["sign_count"] = max(count, record["sign_count"])

