"""Passkeys that move between managers through the FIDO Credential Exchange Format (issue 36).

A passkey a gpm profile made, exported with `credemu vault export --format cxf --include-secrets` and imported into an
apple profile of another vault with `vault import --format cxf`, signs in to py_webauthn's and python-fido2's servers
with the same credential ID and the public key the RP stored at registration; `vault move` does the same inside one
vault and takes the source's copy away, or with --keep-source leaves both profiles signing in with the same credential;
a document with a bad member is refused by its path and nothing changes.
The RP's view of the move: the backup flags and the counter are the importer's now.
"""
import base64
import json

from fido2.webauthn import AuthenticatorData
from webauthn import generate_authentication_options, generate_registration_options
from webauthn.helpers.structs import PublicKeyCredentialDescriptor

from conftest import Credemu, verify_authentication_both, verify_registration_both

ORIGIN, RP_ID = "https://shop.example.com", "example.com"


def registered_in(credemu, profile):
    credemu.run("profile", "create", profile, "--pack", profile, check_exit=0, profile="spec")
    credemu.profile = profile
    options = generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name="alice@example.com")
    return verify_registration_both(credemu.create(ORIGIN, options), options, ORIGIN, RP_ID)


def signs_in(credemu, verified, fido2_credential):
    """A sign-in verified by both servers with the registration's public key; the authenticator data the RP saw."""
    request = generate_authentication_options(rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=verified.credential_id)])
    answer = credemu.get(ORIGIN, request)
    assert base64.urlsafe_b64decode(answer["rawId"] + "==") == verified.credential_id
    verify_authentication_both(answer, request, ORIGIN, RP_ID, verified, fido2_credential)
    return AuthenticatorData(base64.urlsafe_b64decode(answer["response"]["authenticatorData"] + "=="))


def test_a_gpm_passkey_exported_as_cxf_and_imported_into_apple_signs_in_with_the_same_credential(tmp_path):
    (tmp_path / "gpm-vault").mkdir()
    gpm = Credemu(tmp_path / "gpm-vault")
    verified, fido2_credential = registered_in(gpm, "gpm")
    signs_in(gpm, verified, fido2_credential)
    document = gpm.run("vault", "export", "--format", "cxf", "--include-secrets", check_exit=0).stdout
    cxf = json.loads(document)
    assert cxf["version"] == {"major": 1, "minor": 0}
    passkey = cxf["accounts"][0]["items"][0]["credentials"][0]
    assert passkey["type"] == "passkey" and base64.urlsafe_b64decode(passkey["credentialId"] + "==") == verified.credential_id

    apple_dir = tmp_path / "apple-vault"
    apple_dir.mkdir()
    apple = Credemu(apple_dir)
    apple.run("profile", "create", "apple", "--pack", "apple", check_exit=0, profile="spec")
    apple.profile = "apple"
    imported = apple.json("vault", "import", "--format", "cxf", "-", input=document)
    assert imported["imported"]["passkeys"] == 1
    data = signs_in(apple, verified, fido2_credential)
    assert data.counter == 0, "an imported passkey keeps no counter (CXF)"
    assert data.flags & AuthenticatorData.FLAG.BE, "Apple's passkeys are backup eligible"
    # Round trip: exporting from the importer gives the same credentials.
    again = json.loads(apple.run("vault", "export", "--format", "cxf", "--include-secrets", check_exit=0).stdout)
    assert again["accounts"][0]["items"][0]["credentials"] == cxf["accounts"][0]["items"][0]["credentials"]


def test_vault_move_takes_the_passkey_from_gpm_to_apple_in_one_vault(credemu):
    verified, fido2_credential = registered_in(credemu, "gpm")
    credemu.run("profile", "create", "apple", "--pack", "apple", check_exit=0, profile="spec")
    moved = credemu.json("vault", "move", "--from", "gpm", "--to", "apple")
    assert moved["moved"]["passkeys"] == 1 and moved["importer"]["pack"] == "apple" and moved["importer"]["counter"] == "zero"
    credemu.profile = "apple"
    signs_in(credemu, verified, fido2_credential)
    assert json.loads(credemu.run("vault", "list", check_exit=0, profile="gpm").stdout) == []


def test_vault_move_keep_source_leaves_gpm_and_apple_both_signing_in_with_the_same_credential(credemu):
    verified, fido2_credential = registered_in(credemu, "gpm")
    credemu.run("profile", "create", "apple", "--pack", "apple", check_exit=0, profile="spec")
    moved = credemu.json("vault", "move", "--from", "gpm", "--to", "apple", "--keep-source")
    assert moved["kept"] is True and moved["moved"]["passkeys"] == 1, moved
    for profile in ["apple", "gpm", "apple"]:
        credemu.profile = profile
        data = signs_in(credemu, verified, fido2_credential)
        assert data.counter == 0 and data.flags & AuthenticatorData.FLAG.BE, (profile, data)
    listed = {p: [k["credentialId"] for k in json.loads(credemu.run("vault", "list", check_exit=0, profile=p).stdout)] for p in ["gpm", "apple"]}
    assert listed["gpm"] == listed["apple"] and len(listed["gpm"]) == 1, listed
    again = credemu.run("vault", "move", "--from", "gpm", "--to", "apple", "--keep-source")
    assert again.returncode == 3, "a second copy into the same profile is a conflict"


def test_a_cxf_document_with_a_bad_key_is_refused_by_its_path_and_nothing_changes(credemu):
    registered_in(credemu, "gpm")
    document = json.loads(credemu.run("vault", "export", "--format", "cxf", "--include-secrets", check_exit=0).stdout)
    credemu.run("profile", "create", "apple", "--pack", "apple", check_exit=0, profile="spec")
    before = credemu.export()
    document["accounts"][0]["items"][0]["credentials"][0]["key"] = base64.urlsafe_b64encode(b"not a key").decode().rstrip("=")
    refused = credemu.run("vault", "import", "--format", "cxf", "-", input=json.dumps(document), profile="apple")
    assert refused.returncode != 0
    assert "cxf.accounts[0].items[0].credentials[0].key" in refused.stderr, refused.stderr
    assert credemu.export() == before
