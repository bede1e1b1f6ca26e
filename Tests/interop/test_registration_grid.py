"""Registrations and sign-ins from the credemu CLI, across algorithms and RP options, verified by py_webauthn
and python-fido2."""
import itertools

import pytest
from webauthn import generate_authentication_options, generate_registration_options
from webauthn.helpers.cose import COSEAlgorithmIdentifier
from webauthn.helpers.structs import (
    AttestationConveyancePreference,
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from conftest import verify_authentication_both, verify_registration_both

ORIGIN = "https://login.example.com"
RP_ID = "example.com"
ALGORITHMS = {
    "ES256": COSEAlgorithmIdentifier.ECDSA_SHA_256,
    "EdDSA": COSEAlgorithmIdentifier.EDDSA,
    "RS256": COSEAlgorithmIdentifier.RSASSA_PKCS1_v1_5_SHA_256,
}
GRID = list(itertools.product(
    ALGORITHMS,
    [ResidentKeyRequirement.REQUIRED, ResidentKeyRequirement.DISCOURAGED],
    [UserVerificationRequirement.PREFERRED, UserVerificationRequirement.REQUIRED, UserVerificationRequirement.DISCOURAGED],
    [AttestationConveyancePreference.NONE, AttestationConveyancePreference.DIRECT],
    [False, True],
))


def grid_id(case):
    alg, rk, uv, att, exclude = case
    return f"{alg}-rk_{rk.value}-uv_{uv.value}-att_{att.value}" + ("-exclude" if exclude else "")


@pytest.mark.parametrize("case", GRID, ids=[grid_id(c) for c in GRID])
def test_registration_and_sign_in_verify_with_both_libraries(credemu, case):
    alg, resident_key, uv, attestation, with_exclude_list = case
    exclude = [PublicKeyCredentialDescriptor(id=b"\x01" * 16)] if with_exclude_list else None
    options = generate_registration_options(
        rp_id=RP_ID,
        rp_name="Example",
        user_name=f"user-{alg}@example.com",
        user_display_name="Grid User",
        supported_pub_key_algs=[ALGORITHMS[alg]],
        attestation=attestation,
        authenticator_selection=AuthenticatorSelectionCriteria(resident_key=resident_key, user_verification=uv),
        exclude_credentials=exclude,
    )
    # The credential allows packed self-attestation, so "direct" gets fmt packed and "none" gets fmt none.
    response = credemu.create(ORIGIN, options, "--attestation", "packed")
    require_uv = uv == UserVerificationRequirement.REQUIRED
    verified, fido2_credential = verify_registration_both(response, options, ORIGIN, RP_ID, require_uv=require_uv)
    assert str(getattr(verified.fmt, "value", verified.fmt)) == ("packed" if attestation == AttestationConveyancePreference.DIRECT else "none")
    assert str(getattr(verified.credential_device_type, "value", verified.credential_device_type)) == "multi_device"
    assert verified.credential_backed_up is True
    assert verified.user_verified is (uv != UserVerificationRequirement.DISCOURAGED)
    assert response["response"]["publicKeyAlgorithm"] == ALGORITHMS[alg].value

    # Every CLI call opens and closes the vault: this sign-in reads the key back from disk.
    allow = [] if resident_key == ResidentKeyRequirement.REQUIRED else [PublicKeyCredentialDescriptor(id=verified.credential_id)]
    request = generate_authentication_options(rp_id=RP_ID, allow_credentials=allow, user_verification=uv)
    assertion = credemu.get(ORIGIN, request)
    result = verify_authentication_both(assertion, request, ORIGIN, RP_ID, verified, fido2_credential, require_uv=require_uv)
    assert result.new_sign_count == 0
    assert result.credential_backed_up is True


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_incrementing_counter_is_accepted_and_increases(credemu, alg):
    options = generate_registration_options(rp_id=RP_ID, rp_name="Example", user_name="counter@example.com",
                                            supported_pub_key_algs=[ALGORITHMS[alg]])
    response = credemu.create(ORIGIN, options, "--counter", "increment", "--backup-eligible", "false")
    verified, fido2_credential = verify_registration_both(response, options, ORIGIN, RP_ID)
    assert str(getattr(verified.credential_device_type, "value", verified.credential_device_type)) == "single_device"
    count = 0
    for _ in range(3):
        request = generate_authentication_options(rp_id=RP_ID)
        result = verify_authentication_both(credemu.get(ORIGIN, request), request, ORIGIN, RP_ID, verified,
                                            fido2_credential, sign_count=count)
        assert result.new_sign_count == count + 1
        count = result.new_sign_count


def test_localhost_origin_registers_and_signs_in(credemu):
    options = generate_registration_options(rp_id="localhost", rp_name="Dev", user_name="dev")
    response = credemu.create("http://localhost:8000", options)
    from webauthn import verify_registration_response, verify_authentication_response
    verified = verify_registration_response(credential=response, expected_challenge=options.challenge,
                                            expected_origin="http://localhost:8000", expected_rp_id="localhost")
    request = generate_authentication_options(rp_id="localhost")
    verify_authentication_response(credential=credemu.get("http://localhost:8000", request), expected_challenge=request.challenge,
                                   expected_origin="http://localhost:8000", expected_rp_id="localhost",
                                   credential_public_key=verified.credential_public_key, credential_current_sign_count=0)
