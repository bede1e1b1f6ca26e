"""Re-registration and the user's rename (issue 24 items 1 and 2), through the CLI, the HTTP API and the shim in
Chromium, checked by py_webauthn and python-fido2 as an RP's server would.

GPM keeps one usable passkey per RP ID and user.id (`passkeys.priorOfSameUser` shadowed: Chromium's
AddShadowedCredentialIdsToNewPasskey and FilterShadowedCredentials): after a second registration of the account the
old credential ID no longer signs in, no signal finds it, the dropdown lists the new one only, and deleting the new
one restores it. A security key overwrites a discoverable credential of the same user (replaced); Apple and the
extensions keep both (kept, unconfirmed). A name the user edited survives GPM's details signal
(`signals.currentUserDetailsRespectsUserEdit`), not Apple's."""
import json
import time

import pytest
from webauthn import generate_authentication_options, generate_registration_options, options_to_json
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url
from webauthn.helpers.structs import (AuthenticatorSelectionCriteria, PublicKeyCredentialDescriptor,
                                      ResidentKeyRequirement)

from api_client import Server
from conftest import BINARY, Credemu, html_site, verify_authentication_both, verify_registration_both
from shim_drivers import selenium_chromium

ORIGIN = "https://shop.example.com"
RP_ID = "example.com"
USER = "alice@example.com"
USER_ID = b"alice-account-7"   # the RP's user handle for alice, the same at every registration


def registration(user_id=USER_ID, user=USER):
    return generate_registration_options(rp_id=RP_ID, rp_name="Shop", user_name=user, user_id=user_id,
                                         authenticator_selection=AuthenticatorSelectionCriteria(resident_key=ResidentKeyRequirement.REQUIRED))


def sign_in(*credential_ids):
    return generate_authentication_options(rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(c))
                                                                            for c in credential_ids])


def profile(tmp_path, pack):
    credemu = Credemu(tmp_path, profile="rp")
    credemu.json("profile", "create", "rp", "--pack", pack)
    return credemu


class Account:
    """Alice's passkeys at the RP, each registration verified by py_webauthn and python-fido2, kept by credential ID
    as the RP's credential table would."""

    def __init__(self, credemu):
        self.credemu, self.keys = credemu, {}

    def register(self, user_id=USER_ID):
        options = registration(user_id)
        response = self.credemu.create(ORIGIN, options)
        self.keys[response["id"]] = verify_registration_both(response, options, ORIGIN, RP_ID)
        return response["id"]

    def signs_in(self, *allowed, expect=None):
        """A sign-in listing `allowed` (none: a discoverable one); the assertion verifies against the stored key of
        the credential it names, which is returned."""
        request = sign_in(*allowed)
        response = self.credemu.get(ORIGIN, request)
        verified, fido2_credential = self.keys[response["id"]]
        verify_authentication_both(response, request, ORIGIN, RP_ID, verified, fido2_credential)
        assert expect is None or response["id"] == expect, (response["id"], expect)
        return response["id"]

    def refused(self, *allowed):
        # The user answers at once: with no credential GPM's Chrome would keep its sheet open until the timeout
        # (modalGet.noCredential); a queued decision gives the immediate NotAllowedError.
        self.credemu.json("user", "next", "accept")
        return self.credemu.get(ORIGIN, sign_in(*allowed), exit_code=1)["error"]

    def listed(self):
        return {p["credentialId"]: p for p in self.credemu.json("vault", "list")}

    def signal(self, kind, options):
        assert self.credemu.json("signal", kind, "--origin", ORIGIN, input=json.dumps({"rpId": RP_ID, **options})) == {"resolved": True}
        return self.credemu.json("events", "--kind", "signal")[-1]


# ---- re-registration through the CLI ----

@pytest.mark.parametrize("pack,prior", [("gpm", "shadowed"), ("security-key", "replaced"), ("apple", "kept"), ("bitwarden", "kept")])
def test_a_second_registration_of_the_account_does_to_the_old_passkey_what_the_pack_says(tmp_path, pack, prior):
    alice = Account(profile(tmp_path, pack))
    old = alice.register()
    new = alice.register()
    create = alice.credemu.json("events", "--kind", "create")[-1]
    listed = alice.listed()
    if prior == "kept":
        assert "priorOfSameUser" not in create["detail"]
        assert alice.signs_in(old, expect=old) == old, "the old ID still signs in"
        assert set(listed) == {old, new} and not any(p.get("shadowedBy") for p in listed.values())
        return
    assert create["detail"][prior] == [old] and f"passkeys.priorOfSameUser = {prior}" in create["detail"]["priorOfSameUser"]
    error = alice.refused(old)
    assert (error["name"], error["reason"]) == ("NotAllowedError", "noCredential"), error
    # The RP's server, still listing both, gets the new passkey, which its verifier accepts; a discoverable get too.
    alice.signs_in(old, new, expect=new)
    alice.signs_in(expect=new)
    if prior == "shadowed":
        assert listed[old]["shadowedBy"] == new and "shadowedBy" not in listed[new], "GPM's list still shows the old one"
    else:
        assert set(listed) == {new}, "the key overwrote its credential"


def test_an_automatic_upgrade_without_exclusion_shadows_gpms_older_passkey_too(tmp_path):
    """The upgrade's passkey (UP=0, so verified as WebAuthn L3 §7.1 says for a conditional registration) takes the
    older one's place: the RP that upgraded an account which already had a passkey loses the old ID with GPM."""
    from webauthn import verify_authentication_response, verify_registration_response
    alice = Account(profile(tmp_path, "gpm"))
    old = alice.register()
    credemu = alice.credemu
    credemu.json("clock", "set", "2026-11-29T10:00:00Z")
    credemu.json("password", "save", "--origin", ORIGIN, "--username", USER, "--password", "hunter2")
    credemu.json("autofill", "--origin", ORIGIN, "--username", USER, "--submit")
    options = registration()
    upgraded = credemu.json("create", "--origin", ORIGIN, "--mediation", "conditional", input=options_to_json(options))
    verified = verify_registration_response(credential=upgraded, expected_challenge=options.challenge, expected_origin=ORIGIN,
                                            expected_rp_id=RP_ID, require_user_presence=False)
    assert alice.listed()[old]["shadowedBy"] == upgraded["id"]
    assert alice.refused(old)["reason"] == "noCredential"
    request = sign_in(old, upgraded["id"])
    answer = credemu.get(ORIGIN, request)
    assert answer["id"] == upgraded["id"]
    verify_authentication_response(credential=answer, expected_challenge=request.challenge, expected_origin=ORIGIN, expected_rp_id=RP_ID,
                                   credential_public_key=verified.credential_public_key, credential_current_sign_count=0)


def test_another_user_id_is_another_account_and_shadows_nothing(tmp_path):
    alice = Account(profile(tmp_path, "gpm"))
    old = alice.register()
    other = alice.register(user_id=b"alice-account-8")
    alice.signs_in(old, expect=old)
    alice.signs_in(other, expect=other)
    assert not any(p.get("shadowedBy") for p in alice.listed().values())


def test_gpms_signals_skip_the_shadowed_passkey_and_deleting_the_new_one_restores_it(tmp_path):
    alice = Account(profile(tmp_path, "gpm"))
    old = alice.register()
    new = alice.register()
    user_id = bytes_to_base64url(USER_ID)
    # signalUnknownCredential with the old ID finds nothing to hide.
    event = alice.signal("unknown", {"credentialId": old})
    assert event["outcome"] == "noop" and event["detail"]["changes"] == []
    # An accepted list without the old ID leaves it alone (it is not found), and names the new one.
    assert alice.signal("accepted", {"userId": user_id, "allAcceptedCredentialIds": [new]})["outcome"] == "noop"
    # The details signal renames the new passkey only.
    alice.signal("details", {"userId": user_id, "name": "alice@new.example", "displayName": "Alice New"})
    listed = alice.listed()
    assert (listed[new]["userName"], listed[new]["displayName"]) == ("alice@new.example", "Alice New")
    assert (listed[old]["userName"], listed[old]["hidden"]) == (USER, False)

    # The user deletes the new passkey in GPM: the old one is usable again, and the RP's verifier takes it.
    alice.credemu.json("vault", "remove", new)
    assert "shadowedBy" not in alice.listed()[old]
    alice.signs_in(old, expect=old)
    assert alice.signal("unknown", {"credentialId": old})["outcome"] != "noop", "signals find it again"
    assert alice.listed()[old]["hidden"] is True


# ---- the user's rename, through the CLI ----

@pytest.mark.parametrize("pack,kept", [("gpm", True), ("apple", False)])
def test_a_details_signal_leaves_the_users_own_names_only_where_the_pack_respects_them(tmp_path, pack, kept):
    alice = Account(profile(tmp_path, pack))
    made = alice.register()
    renamed = alice.credemu.json("vault", "rename", made, "--name", "work alice", "--display-name", "Alice at work")
    assert (renamed["userName"], renamed["displayName"], renamed["editedByUser"]) == ("work alice", "Alice at work", True)
    assert alice.credemu.json("events", "--kind", "vault")[-1]["outcome"] == "renamed"
    event = alice.signal("details", {"userId": bytes_to_base64url(USER_ID), "name": "alice@new.example", "displayName": "Alice New"})
    after = alice.listed()[made]
    if kept:
        assert (after["userName"], after["displayName"]) == ("work alice", "Alice at work")
        assert event["outcome"] == "noop", event
    else:
        # Apple's signal renames the name only (signals.currentUserDetails nameOnly), edited or not.
        assert (after["userName"], after["displayName"]) == ("alice@new.example", "Alice at work")
    alice.signs_in(made, expect=made)


@pytest.mark.parametrize("args,code", [
    (["--name", ""], 2), (["--name", "a" * 1025], 2), (["--name", "é" * 513], 2), (["--display-name", "x\u0007y"], 2),
    (["--name", "line\nbreak"], 2), ([], 2),
])
def test_a_bad_rename_through_the_cli_is_a_usage_error_and_changes_nothing(tmp_path, args, code):
    alice = Account(profile(tmp_path, "gpm"))
    made = alice.register()
    before = alice.credemu.run("vault", "export", check_exit=0).stdout
    proc = alice.credemu.run("vault", "rename", made, *args)
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert proc.stderr.startswith("credemu: "), proc.stderr
    assert alice.credemu.run("vault", "export", check_exit=0).stdout == before


def test_another_profiles_passkey_is_not_renamed_through_the_cli(tmp_path):
    alice = Account(profile(tmp_path, "gpm"))
    alice.register()
    alice.credemu.json("profile", "create", "other", "--pack", "gpm")
    made = alice.credemu.run("create", "--origin", ORIGIN, input=options_to_json(registration(b"bob")), profile="other", check_exit=0)
    theirs = json.loads(made.stdout)["id"]
    before = alice.credemu.run("vault", "export", check_exit=0).stdout
    proc = alice.credemu.run("vault", "rename", theirs, "--name", "mine now")
    assert proc.returncode == 3 and json.loads(proc.stdout)["error"]["code"] == "notFound", proc.stdout
    assert "mine now" not in alice.credemu.run("vault", "show", theirs, profile="other", check_exit=0).stdout
    assert alice.credemu.run("vault", "export", check_exit=0).stdout == before


# ---- the rename over HTTP ----

PAGE_ORIGIN = "http://localhost:8000"


@pytest.fixture
def server(tmp_path):
    s = Server(BINARY, tmp_path, "--allow-origin", PAGE_ORIGIN)
    for name, pack in (("gpm", "gpm"), ("apple", "apple")):
        assert s.call("POST", "/profiles", {"name": name, "pack": pack})[0] == 201
    yield s
    assert s.stop() == 0


def http_create(server, profile, user_id=USER_ID):
    options = registration(user_id)
    status, made = server.call("POST", f"/profiles/{profile}/credentials/create", {"origin": ORIGIN, "options": json.loads(options_to_json(options))})
    assert status == 200, made
    verify_registration_both(made, options, ORIGIN, RP_ID)
    return made["id"]


@pytest.mark.parametrize("profile,kept", [("gpm", True), ("apple", False)])
def test_a_rename_over_http_is_the_users_edit_that_gpms_details_signal_keeps(server, profile, kept):
    made = http_create(server, profile)
    status, renamed = server.call("PATCH", f"/profiles/{profile}/passkeys/{made}", {"userName": "work alice", "displayName": "Alice at work"})
    assert status == 200 and renamed["editedByUser"] is True and renamed["userName"] == "work alice", renamed
    assert server.call("PATCH", f"/profiles/{profile}/passkeys/{made}", {"displayName": "A. at work"})[1]["userName"] == "work alice"
    status, _ = server.call("POST", f"/profiles/{profile}/signals/details", {"origin": ORIGIN, "options": {
        "rpId": RP_ID, "userId": bytes_to_base64url(USER_ID), "name": "alice@new.example", "displayName": "Alice New"}})
    assert status == 200
    after = server.call("GET", f"/profiles/{profile}/passkeys/{made}")[1]
    assert after["userName"] == ("work alice" if kept else "alice@new.example"), after
    assert after["displayName"] == "A. at work"


def test_a_shadowed_passkey_is_listed_over_http_and_may_be_renamed(server):
    old = http_create(server, "gpm")
    new = http_create(server, "gpm")
    listed = {p["credentialId"]: p for p in server.call("GET", "/profiles/gpm/passkeys")[1]["passkeys"]}
    assert listed[old]["shadowedBy"] == new
    status, renamed = server.call("PATCH", f"/profiles/gpm/passkeys/{old}", {"userName": "old alice"})
    assert status == 200 and renamed["shadowedBy"] == new and renamed["editedByUser"] is True, renamed
    request = json.loads(options_to_json(sign_in(old)))
    status, error = server.call("POST", "/profiles/gpm/credentials/get", {"origin": ORIGIN, "options": request})
    assert status == 422 and error["error"]["name"] == "NotAllowedError", "renamed, it is still shadowed"


def state(server):
    return [server.call("GET", f"/profiles/{p}/passkeys")[1] for p in ("gpm", "apple")] + \
           [[e for e in server.call("GET", f"/profiles/{p}/events?kind=vault")[1]["events"]] for p in ("gpm", "apple")]


HOSTILE = [
    ("huge name", {"userName": "a" * 1025}, None, 400, "TypeError"),
    ("huge multibyte display name", {"displayName": "é" * 513}, None, 400, "TypeError"),
    ("a megabyte name", {"userName": "a" * 1_000_000}, None, 413, "PayloadTooLarge"),
    ("empty name", {"userName": ""}, None, 400, "TypeError"),
    ("NUL", {"userName": "a\u0000b"}, None, 400, "TypeError"),
    ("escape sequence", {"displayName": "\u001b[2J"}, None, 400, "TypeError"),
    ("DEL", {"userName": "a\u007f"}, None, 400, "TypeError"),
    ("newline", {"displayName": "two\nlines"}, None, 400, "TypeError"),
    ("number", {"userName": 7}, None, 400, "TypeError"),
    ("array", {"displayName": ["x"]}, None, 400, "TypeError"),
    ("object", {"userName": {"first": "a"}}, None, 400, "TypeError"),
    ("bool", {"userName": True}, None, 400, "TypeError"),
    ("nothing to change", {}, None, 400, "TypeError"),
    ("unknown member", {"userName": "x", "rpId": "evil.example"}, None, 400, "TypeError"),
    ("two changes", {"hidden": True, "userName": "x"}, None, 400, "TypeError"),
    ("not an object", ["userName", "x"], None, 400, "TypeError"),
    ("a foreign Origin", {"userName": "x"}, "https://evil.example", 403, "Forbidden"),
    ("another RP's passkey from a page", {"userName": "x"}, PAGE_ORIGIN, 404, "NotFound"),
]


@pytest.mark.parametrize("body,origin,status,name", [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_a_hostile_rename_gets_a_named_4xx_and_the_vault_is_unchanged(server, body, origin, status, name):
    made = http_create(server, "gpm")
    http_create(server, "apple")
    before = state(server)
    got, error = server.call("PATCH", f"/profiles/gpm/passkeys/{made}", body, headers={"Origin": origin} if origin else None)
    assert got == status, error
    assert error["error"]["name"] == name and error["error"]["message"], error
    assert state(server) == before


def test_another_profiles_passkey_id_or_a_malformed_one_is_not_renamed(server):
    apples = http_create(server, "apple")
    http_create(server, "gpm")
    before = state(server)
    got, error = server.call("PATCH", f"/profiles/gpm/passkeys/{apples}", {"userName": "stolen"})
    assert got == 404 and error["error"]["name"] == "NotFound", error
    for bad in ("a+b", "%00", "A" * 5000):
        got, error = server.call("PATCH", f"/profiles/gpm/passkeys/{bad}", {"userName": "x"})
        assert got in (400, 404, 414) and error["error"]["name"], (bad, got, error)
    assert server.call("PATCH", f"/profiles/nobody/passkeys/{apples}", {"userName": "x"})[0] == 404
    assert state(server) == before


# ---- the shim in Chromium: the page's second create for the same user ----

PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>re-registration</title></head>
<body><form><input id="username" autocomplete="username webauthn"></form></body></html>"""
CHALLENGE = "AAECAwQFBgcICQoLDA0ODw"
CREATE = """
const done = arguments[arguments.length - 1];
navigator.credentials.create({publicKey: PublicKeyCredential.parseCreationOptionsFromJSON({
  rp: {id: 'localhost', name: 'Shop'}, user: {id: 'YWxpY2UtYWNjb3VudC03', name: 'alice', displayName: 'Alice'},
  challenge: '%s', pubKeyCredParams: [{type: 'public-key', alg: -7}],
  authenticatorSelection: {residentKey: 'required'}})}).then((c) => done(c.toJSON()), (e) => done({error: e.name}));
""" % CHALLENGE


@pytest.fixture(scope="module")
def site():
    with html_site(PAGE) as origin:
        yield origin


@pytest.fixture
def chromium():
    driver = selenium_chromium(script_timeout=30)
    yield driver
    driver.quit()


def wait_for(probe, timeout=20):
    deadline = time.monotonic() + timeout
    while not (value := probe()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


@pytest.mark.credemu(packs=["gpm", "bitwarden"])
def test_a_pages_second_create_for_the_same_user_leaves_gpm_one_passkey_in_the_dropdown(chromium, site, credemu_profile, credemu_install_shim):
    credemu_install_shim(chromium, origin=site)
    chromium.get(site + "/")
    first = chromium.execute_async_script(CREATE)
    second = chromium.execute_async_script(CREATE)
    assert "error" not in first and "error" not in second, (first, second)
    chromium.execute_script("""
        window.__got = null;
        navigator.credentials.get({mediation: 'conditional', publicKey: PublicKeyCredential.parseRequestOptionsFromJSON({
          challenge: '%s', rpId: 'localhost'})}).then((c) => { window.__got = c.toJSON(); }, (e) => { window.__got = {error: e.name}; });
    """ % CHALLENGE)
    offers = wait_for(credemu_profile.offers)
    assert len(offers) == 1, offers
    offered = [p["credentialId"] for p in offers[0]["passkeys"]]
    if credemu_profile.pack == "gpm":
        assert offered == [second["id"]], "GPM's dropdown lists the account's newest passkey only"
    else:
        assert sorted(offered) == sorted([first["id"], second["id"]]), "Bitwarden keeps and offers both"
    credemu_profile.pick(second["id"], ceremony=offers[0]["ceremony"])
    got = wait_for(lambda: chromium.execute_script("return window.__got"))
    assert got and got.get("id") == second["id"], got
    listed = {p["credentialId"]: p for p in credemu_profile.passkeys()}
    assert listed[first["id"]].get("shadowedBy") == (second["id"] if credemu_profile.pack == "gpm" else None)
