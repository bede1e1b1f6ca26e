"""What credemu's CLI answers as a security key (a profile of the security-key pack, the key alone answering, as
Chrome with only a virtual authenticator), verified by py_webauthn and python-fido2's Fido2Server with the
attestation included: packed with an x5c (fido-u2f for a U2F-only key) whose chain ends at the vault's test root
(`credemu vault attestation-root`), for each key hardware WebAuthn L3 §11.1 names (CTAP 2.1 with and without a
PIN, CTAP 2.0, U2F), and sign-ins whose counters grow.
"""
import json

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from fido2.attestation import UntrustedAttestation
from fido2.server import Fido2Server
from fido2.utils import websafe_encode
from fido2.webauthn import PublicKeyCredentialRpEntity
from cryptography.x509.oid import ObjectIdentifier
from webauthn import generate_authentication_options, generate_registration_options
from webauthn.helpers import base64url_to_bytes, parse_attestation_object, parse_authenticator_data
from webauthn.helpers.exceptions import InvalidRegistrationResponse
from webauthn.helpers.structs import (
    AttestationConveyancePreference,
    AuthenticatorAttachment,
    AuthenticatorSelectionCriteria,
    CredentialDeviceType,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from conftest import Credemu, TrustedRoot, verify_authentication_both, verify_registration_both

ORIGIN, RP_ID = "https://shop.example.com", "example.com"
# The security-key pack's AAGUID: FIDO MDS3's statement for "YubiKey 5 Series with NFC" (providers/security-key.json).
YUBIKEY_5_NFC = "2fc0579f-8113-47ea-b116-bb5a8db9202a"
# FIDO's id-fido-gen-ce-aaguid: a packed attestation certificate carries the AAGUID (WebAuthn L3 §8.2.1).
AAGUID_EXTENSION = ObjectIdentifier("1.3.6.1.4.1.45724.1.1.4")
KEYS = {
    # name: (the profile's authenticator options, verifies the user, makes discoverable credentials)
    "ctap2_1 with a PIN": ({"protocol": "ctap2_1"}, True, True),
    "ctap2_1 without a PIN": ({"protocol": "ctap2_1", "hasUserVerification": False}, False, True),
    "ctap2": ({"protocol": "ctap2"}, True, True),
    "u2f": ({"protocol": "ctap1/u2f"}, False, False),
}


def security_key(tmp_path, options):
    credemu = Credemu(tmp_path, profile="key")
    credemu.run("profile", "create", "key", "--pack", "security-key", "--authenticator", json.dumps(options), check_exit=0)
    return credemu


def attestation_root(credemu):
    root = credemu.run("vault", "attestation-root", check_exit=0).stdout.encode()
    assert root.startswith(b"-----BEGIN CERTIFICATE-----"), root
    return root


def registration_options(user_verification, resident_key=ResidentKeyRequirement.DISCOURAGED):
    return generate_registration_options(
        rp_id=RP_ID, rp_name="Shop", user_name="alice@example.com",
        attestation=AttestationConveyancePreference.DIRECT,
        authenticator_selection=AuthenticatorSelectionCriteria(
            authenticator_attachment=AuthenticatorAttachment.CROSS_PLATFORM,
            resident_key=resident_key, user_verification=user_verification))


def request_options(credential_id, user_verification):
    return generate_authentication_options(
        rp_id=RP_ID, user_verification=user_verification,
        allow_credentials=[PublicKeyCredentialDescriptor(id=credential_id)])


@pytest.mark.parametrize("name", list(KEYS))
def test_a_security_keys_registration_and_sign_ins_verify_with_their_attestation_and_a_growing_counter(tmp_path, name):
    hardware, verifies_user, discoverable = KEYS[name]
    credemu = security_key(tmp_path, hardware)
    root = attestation_root(credemu)
    uv = UserVerificationRequirement.REQUIRED if verifies_user else UserVerificationRequirement.DISCOURAGED

    options = registration_options(uv)
    response = credemu.create(ORIGIN, options)
    verified, fido2_credential = verify_registration_both(response, options, ORIGIN, RP_ID, require_uv=verifies_user,
                                                          root_pem=root)
    u2f = hardware["protocol"] == "ctap1/u2f"
    attestation = parse_attestation_object(verified.attestation_object)
    assert attestation.fmt == ("fido-u2f" if u2f else "packed")
    assert str(verified.aaguid) == ("00000000-0000-0000-0000-000000000000" if u2f else YUBIKEY_5_NFC)
    assert verified.credential_device_type == CredentialDeviceType.SINGLE_DEVICE and verified.credential_backed_up is False
    assert verified.user_verified is verifies_user
    assert response["authenticatorAttachment"] == "cross-platform"
    assert response["response"]["transports"] == ["nfc", "usb"]
    # The RP's first algorithm the key makes (py_webauthn lists EdDSA first, which a YubiKey 5 makes); ES256, a U2F
    # key's only one, for U2F.
    assert response["response"]["publicKeyAlgorithm"] == (-7 if u2f else options.pub_key_cred_params[0].alg.value)
    # The one batch certificate in x5c, issued by the root; a packed one names the AAGUID it attests.
    [leaf] = [x509.load_der_x509_certificate(der) for der in attestation.att_stmt.x5c]
    assert leaf.issuer == x509.load_pem_x509_certificate(root).subject
    if not u2f:
        extension = leaf.extensions.get_extension_for_oid(AAGUID_EXTENSION).value.value
        assert extension == b"\x04\x10" + bytes.fromhex(YUBIKEY_5_NFC.replace("-", ""))  # an OCTET STRING of the AAGUID
    [stored] = credemu.json("vault", "list")
    assert stored["discoverable"] is False  # residentKey discouraged: a server-side credential on any key

    counters = [verified.sign_count]
    for _ in range(2):
        request = request_options(verified.credential_id, uv)
        assertion = credemu.get(ORIGIN, request)
        result = verify_authentication_both(assertion, request, ORIGIN, RP_ID, verified, fido2_credential,
                                            sign_count=counters[-1], require_uv=verifies_user)
        flags = parse_authenticator_data(base64url_to_bytes(assertion["response"]["authenticatorData"])).flags
        assert flags.be is False and flags.bs is False and flags.uv is verifies_user
        assert assertion["authenticatorAttachment"] == "cross-platform"
        counters.append(result.new_sign_count)
    assert counters[0] < counters[1] < counters[2], counters



@pytest.mark.parametrize("name", ["ctap2_1 with a PIN", "ctap2"])
def test_a_ctap2_keys_discoverable_credential_signs_in_without_an_allow_list(tmp_path, name):
    hardware, _, _ = KEYS[name]
    credemu = security_key(tmp_path, hardware)
    root = attestation_root(credemu)
    options = registration_options(UserVerificationRequirement.REQUIRED, ResidentKeyRequirement.REQUIRED)
    verified, fido2_credential = verify_registration_both(credemu.create(ORIGIN, options), options, ORIGIN, RP_ID,
                                                          require_uv=True, root_pem=root)
    [stored] = credemu.json("vault", "list")
    assert stored["discoverable"] is True
    request = generate_authentication_options(rp_id=RP_ID, user_verification=UserVerificationRequirement.REQUIRED)
    assertion = credemu.get(ORIGIN, request)
    assert base64url_to_bytes(assertion["response"]["userHandle"]) == options.user.id
    result = verify_authentication_both(assertion, request, ORIGIN, RP_ID, verified, fido2_credential, require_uv=True)
    assert result.new_sign_count == 1


def test_a_u2f_key_needs_an_allow_list_and_cannot_store_a_passkey(tmp_path):
    credemu = security_key(tmp_path, KEYS["u2f"][0])
    refused = credemu.create(ORIGIN, registration_options(UserVerificationRequirement.DISCOURAGED, ResidentKeyRequirement.REQUIRED),
                             exit_code=1)["error"]
    assert (refused["name"], refused["reason"]) == ("NotAllowedError", "residentKeyUnsupported")
    # residentKey preferred: the key makes what it can, a non-discoverable credential.
    options = registration_options(UserVerificationRequirement.DISCOURAGED, ResidentKeyRequirement.PREFERRED)
    verified, _ = verify_registration_both(credemu.create(ORIGIN, options), options, ORIGIN, RP_ID,
                                           root_pem=attestation_root(credemu))
    [stored] = credemu.json("vault", "list")
    assert stored["discoverable"] is False
    # Without an allow list the key has nothing to offer and Chrome's sheet waits for the user (modalGet.noCredential):
    # the user closes it at once.
    credemu.json("user", "next", "accept")
    refused = credemu.get(ORIGIN, generate_authentication_options(rp_id=RP_ID), exit_code=1)["error"]
    assert (refused["name"], refused["reason"]) == ("NotAllowedError", "noCredential")
    uv = credemu.get(ORIGIN, request_options(verified.credential_id, UserVerificationRequirement.REQUIRED), exit_code=1)["error"]
    assert (uv["name"], uv["reason"]) == ("NotAllowedError", "userVerificationUnavailable")


def test_a_key_without_a_pin_refuses_a_required_user_verification(tmp_path):
    credemu = security_key(tmp_path, KEYS["ctap2_1 without a PIN"][0])
    refused = credemu.create(ORIGIN, registration_options(UserVerificationRequirement.REQUIRED), exit_code=1)["error"]
    assert (refused["name"], refused["reason"]) == ("NotAllowedError", "userVerificationUnavailable")
    # preferred: the key answers without verifying (UV=0), and an RP that only prefers it accepts that.
    options = registration_options(UserVerificationRequirement.PREFERRED)
    verified, _ = verify_registration_both(credemu.create(ORIGIN, options), options, ORIGIN, RP_ID,
                                           root_pem=attestation_root(credemu))
    assert verified.user_verified is False


def test_another_vaults_root_does_not_verify_a_keys_attestation(tmp_path):
    credemu = security_key(tmp_path / "one", KEYS["ctap2_1 with a PIN"][0])
    other = security_key(tmp_path / "two", KEYS["ctap2_1 with a PIN"][0])
    options = registration_options(UserVerificationRequirement.DISCOURAGED)
    response = credemu.create(ORIGIN, options)
    with pytest.raises(InvalidRegistrationResponse, match="(?i)certificate chain could not be validated"):
        verify_registration_both(response, options, ORIGIN, RP_ID, root_pem=attestation_root(other))
    server = Fido2Server(PublicKeyCredentialRpEntity(name="Shop", id=RP_ID), attestation="direct",
                         verify_attestation=TrustedRoot(x509.load_pem_x509_certificate(attestation_root(other)).public_bytes(Encoding.DER)))
    with pytest.raises(UntrustedAttestation):
        server.register_complete({"challenge": websafe_encode(options.challenge), "user_verification": "discouraged"}, response)
    verify_registration_both(response, options, ORIGIN, RP_ID, root_pem=attestation_root(credemu))  # its own root does
