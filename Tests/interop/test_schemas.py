"""The documented JSON Schemas hold for everything shipped and everything credemu writes."""
import json
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKS = sorted(p for p in (ROOT / "providers").glob("*.json") if "schema" not in p.name)
FIXTURES = sorted(p for p in (ROOT / "vault-fixtures").glob("*.json") if "schema" not in p.name)


def schema(path):
    return json.loads((ROOT / path).read_text())


@pytest.mark.parametrize("pack", PACKS, ids=[p.stem for p in PACKS])
def test_shipped_packs_match_the_pack_schema(pack):
    jsonschema.validate(json.loads(pack.read_text()), schema("providers/policy-pack.schema.json"))


def test_every_knob_a_pack_sets_a_variant_may_set_too():
    """The schema lists the knobs twice (a pack's `knobs`, a variant's overrides): a knob added to one list only
    makes every variant that sets it invalid."""
    pack = schema("providers/policy-pack.schema.json")["properties"]
    assert list(pack["variants"]["additionalProperties"]["properties"]) == list(pack["knobs"]["properties"])


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_shipped_fixtures_match_the_fixture_schema(fixture):
    jsonschema.validate(json.loads(fixture.read_text()), schema("vault-fixtures/vault-fixture.schema.json"))


def test_an_exported_vault_matches_the_fixture_schema(credemu):
    from webauthn import generate_registration_options
    credemu.create("https://example.com", generate_registration_options(rp_id="example.com", rp_name="X", user_name="a"))
    credemu.json("password", "save", "--origin", "https://example.com", "--username", "a", "--password", "p\"w")
    jsonschema.validate(json.loads(credemu.export()), schema("vault-fixtures/vault-fixture.schema.json"))


def test_a_pack_the_validator_refuses_is_named_in_the_error(credemu, tmp_path):
    pack = json.loads((ROOT / "providers" / "gpm.json").read_text())
    del pack["knobs"]["signals.rateLimit.currentUserDetails"]
    (tmp_path / "bad.json").write_text(json.dumps(pack))
    result = credemu.json("providers", "validate", str(tmp_path / "bad.json"), exit_code=2)
    assert result["error"]["name"] == "InvalidPolicyPack"
    assert "knobs.signals.rateLimit.currentUserDetails is missing" in result["error"]["message"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(pack, schema("providers/policy-pack.schema.json"))
