"""The shipped vault fixtures: they import, export byte for byte, and their passkeys sign in for real."""
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from webauthn import generate_authentication_options, verify_authentication_response
from webauthn.helpers import base64url_to_bytes
from webauthn.helpers.structs import PublicKeyCredentialDescriptor, UserVerificationRequirement

FIXTURES = sorted(p for p in (Path(__file__).resolve().parents[2] / "vault-fixtures").glob("*.json") if "schema" not in p.name)


def cose_public_key(private_key_b64):
    """COSE_Key bytes of a PKCS#8 private key, computed independently of credemu."""
    from webauthn.helpers.cose import COSEAlgorithmIdentifier
    import cbor2
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    key = serialization.load_der_private_key(base64url_to_bytes(private_key_b64), password=None).public_key()
    if isinstance(key, ec.EllipticCurvePublicKey):
        n = key.public_numbers()
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: n.x.to_bytes(32, "big"), -3: n.y.to_bytes(32, "big")})
    if isinstance(key, ed25519.Ed25519PublicKey):
        return cbor2.dumps({1: 1, 3: -8, -1: 6, -2: key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)})
    n = key.public_numbers()
    return cbor2.dumps({1: 3, 3: -257, -1: n.n.to_bytes((n.n.bit_length() + 7) // 8, "big"), -2: n.e.to_bytes(3, "big")})


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_fixture_round_trips_and_its_passkeys_sign_in(credemu, fixture):
    text = fixture.read_text()
    credemu.json("vault", "import", str(fixture))
    assert credemu.export() == text
    document = json.loads(text)
    for passkey in document["passkeys"]:
        if passkey["hidden"]:
            continue
        origin = "https://" + passkey["rpId"]
        request = generate_authentication_options(
            rp_id=passkey["rpId"],
            allow_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(passkey["credentialId"]))],
            user_verification=UserVerificationRequirement.PREFERRED)
        assertion = credemu.get(origin, request)
        result = verify_authentication_response(
            credential=assertion, expected_challenge=request.challenge, expected_origin=origin,
            expected_rp_id=passkey["rpId"], credential_public_key=cose_public_key(passkey["privateKey"]),
            credential_current_sign_count=passkey["signCount"])
        assert assertion["response"]["userHandle"] == passkey["userHandle"]
        assert result.credential_backed_up is passkey["backupState"]


def test_hidden_fixture_passkey_is_not_offered(credemu):
    credemu.json("vault", "import", str(next(p for p in FIXTURES if p.stem == "several-rps")))
    hidden = [k for k in json.loads(credemu.export())["passkeys"] if k["hidden"]][0]
    request = generate_authentication_options(rp_id="example.com",
                                              allow_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(hidden["credentialId"]))])
    result = credemu.get("https://example.com", request, exit_code=1)
    assert result["error"]["name"] == "NotAllowedError"
