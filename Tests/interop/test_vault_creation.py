"""A new vault made by several processes at once: every write a process acknowledged is in the one vault they
end up sharing, or the process was refused with a named error. And the files credemu makes are private whatever the
umask: the vault, its -wal, -shm and staging log and the key file 0600, a directory it makes 0700."""
import json
import os
import signal
import stat
import subprocess
import time
import urllib.request

import pytest

from conftest import BINARY

TRIALS = 8
SAVERS = 4


def environment():
    env = dict(os.environ)
    env.pop("CREDEMU_VAULT", None)
    return env


def save(vault, username, cwd):
    """A `credemu password save` started now; `vault` None for the default `.credemu/vault.db` under `cwd`."""
    where = ["--vault", str(vault)] if vault else []
    return subprocess.Popen([BINARY, *where, "password", "save", "--origin", "https://example.com", "--username", username,
                             "--password", "pw-" + username],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=environment(), umask=0o022)


def finish(process):
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def listed(vault, cwd):
    where = ["--vault", str(vault)] if vault else []
    proc = subprocess.run([BINARY, *where, "password", "list", "--reveal"], capture_output=True, text=True, timeout=60,
                          cwd=cwd, env=environment(), check=True)
    return {p["username"]: p["password"] for p in json.loads(proc.stdout)}


def assert_refused_by_name(code, out, err):
    """A refusal names its error: the CLI's vault exit status, and a VaultError with its code."""
    assert code == 3, (code, out, err)
    assert json.loads(out)["error"]["name"] == "VaultError", out
    assert json.loads(out)["error"]["code"] == "locked", out


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("trial", range(TRIALS))
@pytest.mark.parametrize("where", ["default", "named"])
def test_parallel_saves_on_a_new_vault_are_all_kept(tmp_path, trial, where):
    vault = None if where == "default" else tmp_path / "new" / "dir" / "vault.db"
    savers = [save(vault, f"user-{i}", tmp_path) for i in range(SAVERS)]
    outcomes = [finish(p) for p in savers]
    # Processes sharing a vault wait for each other's writes: none is refused.
    for code, out, err in outcomes:
        assert code == 0, (trial, code, out, err)
    assert listed(vault, tmp_path) == {f"user-{i}": f"pw-user-{i}" for i in range(SAVERS)}, trial
    directory = (vault or tmp_path / ".credemu/vault.db").parent
    assert sorted(os.listdir(directory)) == ["vault.db", "vault.db.key"], "no second vault, no temporary left behind"


def test_a_new_default_vault_and_its_directory_are_private_under_umask_022(tmp_path):
    holder = subprocess.Popen([BINARY, "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=tmp_path, env=environment(), umask=0o022)
    try:
        assert holder.stdout.readline().startswith("http://"), holder.stderr.read()
        made = tmp_path / ".credemu"
        assert mode(made) == 0o700
        for name in ["vault.db", "vault.db-wal", "vault.db-shm", "vault.db-staged", "vault.db.key"]:
            assert mode(made / name) == 0o600, name
    finally:
        holder.send_signal(signal.SIGTERM)
        holder.communicate(timeout=30)


def post_password(url, username):
    request = urllib.request.Request(url + "/profiles/default/passwords", method="POST",
                                     data=json.dumps({"origin": "https://example.com", "username": username,
                                                      "password": "pw-" + username}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status


def start_server(vault, **options):
    return subprocess.Popen([BINARY, "--vault", str(vault), "serve", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=environment(), **options)


# The CLI's writes start before (negative: the server starts that much later), with and after the server's.
@pytest.mark.parametrize("cli_lead", [0.08, 0.04, 0.02, 0.01, 0.0, -0.02])
def test_serve_and_cli_writes_on_a_new_vault_are_each_kept_or_refused_by_name(tmp_path, cli_lead):
    vault = tmp_path / "new" / "vault.db"
    if cli_lead >= 0:
        savers = [save(vault, f"cli-{i}", tmp_path) for i in range(2)]
        time.sleep(cli_lead)
        server = start_server(vault, umask=0o022)
    else:
        server = start_server(vault, umask=0o022)
        time.sleep(-cli_lead)
        savers = [save(vault, f"cli-{i}", tmp_path) for i in range(2)]
    served = []
    try:
        url = server.stdout.readline().strip()
        if url.startswith("http://"):
            for i in range(2):
                assert post_password(url, f"server-{i}") == 201
                served.append(f"server-{i}")
        # The server still runs when each CLI call ends: one that found it held was refused, not let in at its stop.
        outcomes = [finish(p) for p in savers]
        if served:
            assert post_password(url, "server-2") == 201
            served.append("server-2")
    finally:
        server.send_signal(signal.SIGTERM)
        _, server_err = server.communicate(timeout=60)
    if not served:
        # The server may only lose its start to CLI writes it waited on too long, and then says so.
        assert server.returncode != 0 and "held by another process" in server_err, server_err
    kept = listed(vault, tmp_path)
    for i, (code, out, err) in enumerate(outcomes):
        if code == 0:
            assert f"cli-{i}" in kept, (cli_lead, out, err, kept)
        else:
            assert_refused_by_name(code, out, err)
            assert f"cli-{i}" not in kept
    for name in served:
        assert kept.get(name) == "pw-" + name, (cli_lead, kept)
    assert sorted(os.listdir(vault.parent)) == ["vault.db", "vault.db.key"], "one vault, no temporary left behind"
    assert mode(vault) == 0o600 and mode(vault.parent) == 0o700


def test_a_cli_write_on_a_vault_serve_holds_is_refused_by_name_and_the_servers_writes_stay(tmp_path):
    vault = tmp_path / "new" / "vault.db"
    server = start_server(vault)
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://"), server.stderr.read()
        assert post_password(url, "server-0") == 201
        outcomes = [finish(p) for p in [save(vault, f"cli-{i}", tmp_path) for i in range(2)]]
        assert post_password(url, "server-1") == 201
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=60)
    for code, out, err in outcomes:
        assert_refused_by_name(code, out, err)
    assert listed(vault, tmp_path) == {"server-0": "pw-server-0", "server-1": "pw-server-1"}
    assert sorted(os.listdir(vault.parent)) == ["vault.db", "vault.db.key"]
