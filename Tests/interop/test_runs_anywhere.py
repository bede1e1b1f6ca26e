"""The packs, the shim and the OpenAPI document are compiled in: `credemu` copied out of the checkout and run
from a directory with no `providers/` plays every shipped pack, and a `--providers` directory or
`$CREDEMU_PROVIDERS` reads its packs over them."""
import json
import os
import shutil
import subprocess

from api_client import Server
from conftest import BINARY, ROOT, Credemu, register_and_sign_in

# The packs the binary has compiled in, in its listing's order (the files' names in byte order), then the spec's own.
SHIPPED = [p.stem for p in sorted((ROOT / "providers").glob("*.json"), key=lambda p: p.name.encode())
           if p.name != "policy-pack.schema.json"] + ["webauthn-spec"]


def elsewhere(tmp_path):
    """The binary copied into a directory of its own, and an empty working directory: nothing of the checkout
    is above either."""
    bin_dir, work = tmp_path / "bin", tmp_path / "work"
    bin_dir.mkdir()
    work.mkdir()
    binary = bin_dir / "credemu"
    shutil.copy2(BINARY, binary)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CREDEMU_")}
    return str(binary), work, env


def test_a_copied_binary_run_from_a_directory_without_providers_plays_the_default_profile(tmp_path):
    binary, work, env = elsewhere(tmp_path)
    assert not (work / "providers").exists() and ROOT not in (tmp_path / "bin").parents
    credemu = Credemu(work, profile="default", binary=binary, cwd=work, env=env)
    listing = credemu.json("providers")
    assert [p["id"] for p in listing["providers"]] == SHIPPED
    assert listing["directory"] is None and {p["origin"] for p in listing["providers"]} == {"built-in"}
    register_and_sign_in(credemu)
    assert credemu.json("profile", "show", "default")["pack"] == "gpm"


def test_every_shipped_pack_is_played_from_anywhere(tmp_path):
    binary, work, env = elsewhere(tmp_path)
    for pack in SHIPPED:
        (work / pack).mkdir()
        credemu = Credemu(work / pack, profile="rp", binary=binary, cwd=work, env=env)
        credemu.json("profile", "create", "rp", "--pack", pack)
        shown = credemu.json("providers", "show", pack) if pack != "webauthn-spec" else None
        if shown:
            on_disk = json.loads((ROOT / "providers" / f"{pack}.json").read_text())
            assert shown["version"] == on_disk["version"]
        register_and_sign_in(credemu)


def test_the_server_from_anywhere_serves_the_shipped_shim_openapi_document_and_console(tmp_path):
    binary, work, env = elsewhere(tmp_path)
    server = Server(binary, work, cwd=work, env=env)
    try:
        status, document = server.call("GET", "/openapi.json")
        assert status == 200
        assert document == json.loads((ROOT / "Sources" / "CredemuServer" / "Resources" / "openapi.json").read_text())
        status, shim = server.call("GET", "/shim.js?profile=default")
        assert status == 200
        assert (ROOT / "Sources" / "CredemuServer" / "Resources" / "shim.js").read_bytes() in shim
        for path, name in [("/", "console.html"), ("/console.js", "console.js"), ("/console.css", "console.css"), ("/console.svg", "console.svg")]:
            status, body = server.call("GET", path)
            assert status == 200 and body == (ROOT / "Sources" / "CredemuServer" / "Resources" / name).read_bytes(), path
        assert server.call("GET", "/profiles/default/capabilities")[0] == 200
    finally:
        assert server.stop() == 0


def override_directory(tmp_path):
    """A providers directory with GPM renamed (the same ID) and a new pack."""
    directory = tmp_path / "packs"
    directory.mkdir()
    gpm = json.loads((ROOT / "providers" / "gpm.json").read_text())
    gpm["name"] = "GPM (local edit)"
    (directory / "gpm.json").write_text(json.dumps(gpm))
    canary = dict(gpm, id="gpm-canary", name="GPM canary")
    (directory / "canary.json").write_text(json.dumps(canary))
    return directory


def test_a_providers_directory_replaces_a_shipped_pack_by_id_and_adds_new_ones(tmp_path):
    binary, work, env = elsewhere(tmp_path)
    directory = override_directory(tmp_path)
    for how in ("flag", "environment"):
        run_env = dict(env, CREDEMU_PROVIDERS=str(directory)) if how == "environment" else env
        flags = ["--providers", str(directory)] if how == "flag" else []
        proc = subprocess.run([binary, *flags, "providers"], cwd=work, env=run_env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        listing = json.loads(proc.stdout)
        by_id = {p["id"]: p for p in listing["providers"]}
        assert [p["id"] for p in listing["providers"]] == SHIPPED[:-1] + ["gpm-canary", "webauthn-spec"], how
        assert by_id["gpm"]["name"] == "GPM (local edit)" and by_id["gpm"]["origin"] == str(directory / "gpm.json")
        assert by_id["gpm-canary"]["origin"] == str(directory / "canary.json")
        assert by_id["apple"]["origin"] == "built-in"
        assert listing["directory"] == str(directory)


def test_the_providers_flag_wins_over_the_environment_and_a_bad_directory_is_refused(tmp_path):
    binary, work, env = elsewhere(tmp_path)
    directory = override_directory(tmp_path)
    run_env = dict(env, CREDEMU_PROVIDERS=str(tmp_path / "missing"))
    proc = subprocess.run([binary, "--providers", str(directory), "providers"], cwd=work, env=run_env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and json.loads(proc.stdout)["directory"] == str(directory)
    proc = subprocess.run([binary, "providers"], cwd=work, env=run_env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    error = json.loads(proc.stdout)["error"]
    assert error["name"] == "InvalidPolicyPack" and "missing: the providers directory cannot be read" in error["message"]
    proc = subprocess.run([binary, "providers"], cwd=work, env=dict(env, CREDEMU_PROVIDERS=""), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and json.loads(proc.stdout)["directory"] is None, "an empty CREDEMU_PROVIDERS counts as unset"
