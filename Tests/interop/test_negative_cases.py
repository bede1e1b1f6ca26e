"""Ceremonies that must fail: the right error name on stdout, exit status 1, and the vault as it was."""
import json

import pytest
from webauthn import generate_registration_options, options_to_json
from webauthn.helpers.cose import COSEAlgorithmIdentifier
from webauthn.helpers.structs import PublicKeyCredentialDescriptor

from conftest import verify_registration_both

ORIGIN = "https://login.example.com"


@pytest.fixture
def seeded(credemu):
    options = generate_registration_options(rp_id="example.com", rp_name="Example", user_name="alice@example.com")
    response = credemu.create(ORIGIN, options)
    verified, _ = verify_registration_both(response, options, ORIGIN, "example.com")
    return credemu, verified


def expect_error(credemu, command, options, name, fragment=""):
    before = credemu.export()
    result = credemu.json(command, "--origin", ORIGIN, input=options if isinstance(options, str) else options_to_json(options), exit_code=1)
    assert set(result) == {"error"}
    assert result["error"]["name"] == name, result
    assert fragment in result["error"]["message"], result
    assert credemu.export() == before, "a failed ceremony changed the vault"


def test_excluded_credential_is_invalid_state_error(seeded):
    credemu, verified = seeded
    options = generate_registration_options(rp_id="example.com", rp_name="Example", user_name="alice@example.com",
                                            exclude_credentials=[PublicKeyCredentialDescriptor(id=verified.credential_id)])
    expect_error(credemu, "create", options, "InvalidStateError", "already registered")


def test_rp_id_mismatch_is_security_error(seeded):
    credemu, _ = seeded
    expect_error(credemu, "create", generate_registration_options(rp_id="example.org", rp_name="X", user_name="a"),
                 "SecurityError", "example.org")
    expect_error(credemu, "create", generate_registration_options(rp_id="com", rp_name="X", user_name="a"), "SecurityError")


def test_unsupported_algorithm_is_not_supported_error(seeded):
    credemu, _ = seeded
    options = generate_registration_options(rp_id="example.com", rp_name="X", user_name="a",
                                            supported_pub_key_algs=[COSEAlgorithmIdentifier.ECDSA_SHA_512,
                                                                    COSEAlgorithmIdentifier.RSASSA_PSS_SHA_256])
    expect_error(credemu, "create", options, "NotSupportedError")


@pytest.mark.parametrize("mutate,fragment", [
    (lambda o: o.pop("challenge"), "challenge is required"),
    (lambda o: o["user"].__setitem__("id", "A" * 88), "User handle exceeds 64 bytes."),   # Chrome's text: the default profile is GPM on Chrome
    (lambda o: o["user"].__setitem__("id", "dXNlcg=="), "Invalid base64url"),
    (lambda o: o.__setitem__("pubKeyCredParams", "ES256"), "must be an array"),
    (lambda o: o["rp"].pop("name"), "rp.name is required"),
])
def test_malformed_options_are_type_errors(seeded, mutate, fragment):
    credemu, _ = seeded
    options = json.loads(options_to_json(generate_registration_options(rp_id="example.com", rp_name="X", user_name="a")))
    mutate(options)
    expect_error(credemu, "create", json.dumps(options), "TypeError", fragment)


def test_invalid_json_is_a_type_error(seeded):
    credemu, _ = seeded
    expect_error(credemu, "create", "{not json", "TypeError", "not valid JSON")
    expect_error(credemu, "get", "[1, 2]", "TypeError")


def test_sign_in_without_a_credential_is_not_allowed_error(seeded):
    credemu, _ = seeded
    expect_error(credemu, "get", json.dumps({"challenge": "AAAAAAAAAAAAAAAAAAAAAA", "rpId": "example.com",
                                             "allowCredentials": [{"type": "public-key", "id": "AAAAAAAAAAAAAAAAAAAAAA"}]}),
                 "NotAllowedError")


def test_usage_errors_exit_2_and_vault_errors_exit_3(credemu, tmp_path):
    assert credemu.run("create", input="", check_exit=2).stderr.startswith("credemu: --origin is required")
    assert credemu.run("frobnicate", check_exit=2)
    assert "create" in credemu.run("--help", check_exit=0).stdout
    assert "--pick" in credemu.run("get", "--help", check_exit=0).stdout
    bad_setting = credemu.run("profile", "set", "default", "--passcodeSet", "maybe", check_exit=2)
    assert json.loads(bad_setting.stdout)["error"] == {"name": "InvalidProfileSetting",
                                                       "message": 'profile.passcodeSet must be true or false, not "maybe".'}
    assert bad_setting.stderr == 'credemu: profile.passcodeSet must be true or false, not "maybe".\n'
    credemu.run("vault", "list", check_exit=0)
    (tmp_path / "vault.db.key").write_bytes(b"\x00" * 32)
    proc = credemu.run("vault", "list", check_exit=3)
    assert json.loads(proc.stdout)["error"]["code"] == "wrongKey"
