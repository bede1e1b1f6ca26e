"""Forged answers on request (issue 35, item 3) over a running server, every answer checked against the OpenAPI
document: `forge-next` on a profile and on a device gives the next ceremony it applies to one fault, once, and a
WebDriver key's override bits (CDP's `WebAuthn.setResponseOverrideBits`) change every answer it gives; py_webauthn
refuses each on its fault. A page may not arm a forgery for itself.
"""
import json

import pytest
from webauthn import generate_authentication_options, generate_registration_options, options_to_json, verify_authentication_response, verify_registration_response
from webauthn.helpers.structs import PublicKeyCredentialDescriptor, UserVerificationRequirement

from api_client import Server
from conftest import BINARY

ORIGIN = "https://shop.example.com"
RP_ID = "shop.example.com"


@pytest.fixture
def server(tmp_path):
    s = Server(BINARY, tmp_path, "--allow-origin", ORIGIN)
    yield s
    assert s.stop() == 0


def register(server, target, require_user_presence=True):
    options = generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name="alice")
    status, answer = server.call("POST", f"{target}/credentials/create", {"options": json.loads(options_to_json(options)), "origin": ORIGIN})
    assert status == 200, answer
    return answer, options


def sign_in(server, target, registered, uv=UserVerificationRequirement.PREFERRED, count=0):
    request = generate_authentication_options(rp_id=RP_ID, user_verification=uv,
                                              allow_credentials=[PublicKeyCredentialDescriptor(id=registered.credential_id)])
    status, answer = server.call("POST", f"{target}/credentials/get", {"options": json.loads(options_to_json(request)), "origin": ORIGIN})
    assert status == 200, answer
    return lambda: verify_authentication_response(
        credential=answer, expected_challenge=request.challenge, expected_origin=ORIGIN, expected_rp_id=RP_ID,
        credential_public_key=registered.credential_public_key, credential_current_sign_count=count,
        require_user_verification=uv == UserVerificationRequirement.REQUIRED)


def test_forge_next_forges_the_next_sign_in_once_on_a_profile_and_a_device(server):
    assert server.call("POST", "/profiles", {"name": "p1", "pack": "gpm"})[0] == 201
    answer, options = register(server, "/profiles/p1")
    registered = verify_registration_response(credential=answer, expected_challenge=options.challenge, expected_origin=ORIGIN, expected_rp_id=RP_ID)

    status, body = server.call("POST", "/profiles/p1/forge-next", {"forgery": "badSig"})
    assert status == 400 and "badSignature" in body["error"]["message"]
    assert server.call("POST", "/profiles/p1/forge-next", {"forgery": "replayed"})[0] == 400
    assert server.call("POST", "/profiles/p1/forge-next", {"forgery": 7})[0] == 400
    status, body = server.call("POST", "/profiles/p1/forge-next", {"forgery": "badSignature"}, headers={"Origin": ORIGIN})
    assert status == 403, "a page may not forge its own answers"
    assert server.call("GET", "/profiles/p1/forge-next")[1]["forgery"] is None

    assert server.call("POST", "/profiles/p1/forge-next", {"forgery": "badSignature"})[1]["forgery"] == "badSignature"
    with pytest.raises(Exception, match="(?i)signature"):
        sign_in(server, "/profiles/p1", registered)()
    assert server.call("GET", "/profiles/p1/forge-next")[1] == {"forgery": None, "overrideBits": {"isBogusSignature": False, "isBadUV": False, "isBadUP": False}}
    sign_in(server, "/profiles/p1", registered)()

    assert server.call("POST", "/devices", {"name": "laptop", "providers": ["p1"], "platform": "chrome-desktop"})[0] == 201
    assert server.call("POST", "/devices/laptop/forge-next", {"forgery": "otherOrigin"})[1] == {"forgery": "otherOrigin"}
    assert server.call("GET", "/devices/laptop/forge-next")[1] == {"forgery": "otherOrigin"}
    with pytest.raises(Exception, match="(?i)origin"):
        sign_in(server, "/devices/laptop", registered)()
    assert server.call("GET", "/devices/laptop/forge-next")[1] == {"forgery": None}
    outcomes = [e["outcome"] for e in server.call("GET", "/profiles/p1/events?kind=get")[1]["events"]]
    assert outcomes.count("forged") == 2


def test_override_bits_change_every_answer_of_the_key_as_chromiums_do(server):
    status, body = server.call("POST", "/webauthn/authenticator", {"protocol": "ctap2", "transport": "usb", "hasResidentKey": True,
                                                                   "hasUserVerification": True, "isUserVerified": True})
    key = body["value"]
    bits = f"/webauthn/authenticator/{key}/override-bits"
    assert server.call("POST", bits, {"isBadUP": True}) == (200, {"value": {"isBogusSignature": False, "isBadUV": False, "isBadUP": True}})
    answer, options = register(server, f"/profiles/{key}")
    with pytest.raises(Exception, match="(?i)user presence"):
        verify_registration_response(credential=answer, expected_challenge=options.challenge, expected_origin=ORIGIN, expected_rp_id=RP_ID)
    registered = verify_registration_response(credential=answer, expected_challenge=options.challenge, expected_origin=ORIGIN, expected_rp_id=RP_ID,
                                              require_user_presence=False)

    assert server.call("POST", bits, {"isBadUV": True})[0] == 200
    for count in (0, 1):
        with pytest.raises(Exception, match="(?i)user verification"):
            sign_in(server, f"/profiles/{key}", registered, uv=UserVerificationRequirement.REQUIRED, count=count)()
    assert server.call("POST", bits, {"isBogusSignature": True})[0] == 200
    with pytest.raises(Exception, match="(?i)signature"):
        sign_in(server, f"/profiles/{key}", registered, count=2)()
    assert server.call("GET", f"/profiles/{key}/forge-next")[1]["overrideBits"]["isBogusSignature"] is True
    assert server.call("POST", bits, {})[0] == 200
    sign_in(server, f"/profiles/{key}", registered, count=3)()

    for body in [[], {"isBadUV": "yes"}, {"isBadUV": None}, {"isBadUv": True}]:
        status, answer = server.call("POST", bits, body)
        assert (status, answer["error"]["name"]) == (400, "InvalidArgument"), body
    assert server.call("POST", "/webauthn/authenticator/wd-0000000000000000/override-bits", {})[0] == 404
