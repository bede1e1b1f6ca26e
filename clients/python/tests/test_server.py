"""credemu.Server: a free port, a temporary vault, ready when it answers, an orderly stop, the log kept."""
import os
import urllib.request

import pytest

import credemu
from credemu import CredemuError, Server, find_binary


def test_a_server_starts_on_a_free_port_answers_and_stops_in_order():
    with Server() as server:
        directory = server.directory
        assert server.url == f"http://127.0.0.1:{server.port}"
        health = server.client().health()
        assert health["status"] == "ok" and health["vault"] == str(directory / "vault.db")
        assert server.log.splitlines()[0] == server.url, "the first line of the log is the URL"
        with Server() as other:
            assert other.port != server.port and other.client().health()["vault"] != health["vault"]
    assert server.returncode == 0, server.log
    assert "stopped" in server.log.splitlines()[-1], "the log after stop() holds the orderly stop"
    assert not directory.exists(), "the temporary vault is gone"
    assert not server.running


def test_a_server_that_cannot_start_says_why_with_its_log():
    with pytest.raises(CredemuError) as caught:
        Server(args=["--threads", "nope"]).start()
    assert caught.value.name == "ServerFailedToStart"
    assert "--threads" in caught.value.message, caught.value.message


def test_a_given_vault_outlives_the_server(tmp_path):
    vault = tmp_path / "kept.db"
    with Server(vault=vault) as server:
        server.client().create_profile("kept", pack="apple")
    with Server(vault=vault) as server:
        assert "kept" in [p["name"] for p in server.client().profiles()]


def test_origins_given_at_start_and_later_are_allowed_to_pages():
    with Server(allow_origins=["http://localhost:8001/login"]) as server:
        server.allow_origin("http://localhost:8002")
        assert server.client().allowed_origins() == ["http://localhost:8001", "http://localhost:8002"]
        request = urllib.request.Request(server.url + "/profiles/default/passkeys", headers={"Origin": "http://localhost:8002"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.headers["Access-Control-Allow-Origin"] == "http://localhost:8002"


def test_a_token_is_sent_by_the_client_and_put_in_the_shim():
    with Server(token="s3cret-token") as server:
        assert server.client().profiles()[0]["name"] == "default"
        # The page's script carries a page token for its own profile, never the server's token.
        script = server.client().shim()
        assert "s3cret-token" not in script and '"token":"page.' in script
        with pytest.raises(CredemuError) as caught:
            credemu.Client(server.url).profiles()
        assert (caught.value.status, caught.value.name) == (401, "Unauthorized")


def test_the_binary_is_the_one_given_else_credemu_else_path(tmp_path, monkeypatch):
    real = os.environ["CREDEMU"]
    assert find_binary(real) == real
    assert find_binary() == real
    monkeypatch.delenv("CREDEMU")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "credemu").symlink_to(real)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert find_binary() == str(bin_dir / "credemu")
    with Server() as server:  # found on PATH
        assert server.client().health()["status"] == "ok"
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(CredemuError) as caught:
        find_binary()
    assert caught.value.name == "BinaryNotFound"
    with pytest.raises(CredemuError):
        find_binary(str(tmp_path / "missing"))
