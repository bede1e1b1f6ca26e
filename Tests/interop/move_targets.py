"""Reference RP servers for `credemu probe --moves`: probe_targets.Target (py_webauthn or python-fido2) with a switch
per thing an RP's server may do that breaks once a user moves a passkey to another manager (CXF), each off by default.

Switches:
  reject_changed_backup_flags  a sign-in whose BE or BS differs from the registration's is refused (WebAuthn L3 §7.2's
                               comparison with the stored flags, then a policy that refuses any change)
  reject_changed_aaguid        a registration whose AAGUID differs from the account's earlier credentials' is refused
                               (an account pinned to its first provider); a sign-in carries no AAGUID, so a move alone
                               never trips it
  counter_must_grow            (probe_targets.Target's) a sign-in whose signCount is not greater than the stored one is
                               refused: an importer's 0 after a counting exporter
"""
from probe_targets import BUGS, Target, b64url_decode, challenge_of

MOVE_BUGS = ("reject_changed_backup_flags", "reject_changed_aaguid")


class MoveTarget(Target):
    """`MoveTarget("fido2", move_bugs={"reject_changed_backup_flags"}).start()`; `bugs` as Target's."""

    def __init__(self, library, move_bugs=(), bugs=()):
        assert set(move_bugs) <= set(MOVE_BUGS) and set(bugs) <= set(BUGS), (move_bugs, bugs)
        super().__init__(library, bugs=bugs)
        self.move_bugs = set(move_bugs)

    def registration_result(self, body):
        if "reject_changed_aaguid" in self.move_bugs:
            from fido2.webauthn import AttestationObject
            aaguid = str(AttestationObject(b64url_decode(body["response"]["attestationObject"])).auth_data.credential_data.aaguid)
            with self.lock:
                state = self.pending.get(challenge_of(body))
                earlier = {r["aaguid"] for r in self.users.get(state[1], [])} if state else set()
            if earlier and aaguid not in earlier:
                raise ValueError(f"This account's passkeys come from {sorted(earlier)[0]}; {aaguid} is another provider.")
        super().registration_result(body)

    def authentication_result(self, body):
        if "reject_changed_backup_flags" in self.move_bugs:
            flags = b64url_decode(body["response"]["authenticatorData"])[32]
            raw_id = b64url_decode(body["rawId"])
            with self.lock:
                record = next((r for records in self.users.values() for r in records if r["id"] == raw_id), None)
            if record is not None and (bool(flags & 0x08), bool(flags & 0x10)) != (bool(record["be"]), bool(record["bs"])):
                raise ValueError("The passkey's backup flags changed since it was registered: refused.")
        super().authentication_result(body)
