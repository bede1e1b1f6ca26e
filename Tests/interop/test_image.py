"""The OCI image `make dist` builds (packaging/image.sh), checked the only way this machine can: its layers unpacked
into a root, its binary run there under chroot as the image's user (these machines cannot run containers). The
image holds the binary and what it loads and nothing else, runs unprivileged, and `credemu serve` in it answers
/health; a listener off loopback needs a token there as anywhere. `make test` passes the archive as CREDEMU_IMAGE:
then a missing one fails."""
import contextlib
import gzip
import io
import json
import os
import signal
import subprocess
import tarfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERSION = (ROOT / "VERSION").read_text().strip()
ALLOWED = {line for line in (ROOT / "packaging" / "runtime-libraries").read_text().splitlines() if line and not line.startswith("#")}


@pytest.fixture(scope="module")
def archive():
    given = os.environ.get("CREDEMU_IMAGE")
    if given:
        assert Path(given).is_file(), f"CREDEMU_IMAGE={given} does not exist: `make dist` builds it"
        return Path(given)
    found = sorted((ROOT / ".build" / "dist").glob("credemu-*-oci.tar"))
    if not found:
        pytest.skip("no OCI image in .build/dist: run `make dist` (make test does), or set CREDEMU_IMAGE")
    return found[-1]


class Image:
    """An oci-archive read as the OCI image layout says: index, manifest, config, layers."""

    def __init__(self, path):
        self.tar = tarfile.open(path)
        index = self.json("index.json")
        assert len(index["manifests"]) == 1, index
        self.tag = index["manifests"][0].get("annotations", {}).get("org.opencontainers.image.ref.name")
        self.manifest = self.blob(index["manifests"][0]["digest"])
        self.config = self.blob(self.manifest["config"]["digest"])

    def raw(self, name):
        return self.tar.extractfile(name).read()

    def json(self, name):
        return json.loads(self.raw(name))

    def blob(self, digest, parse=True):
        data = self.raw("blobs/" + digest.replace(":", "/"))
        return json.loads(data) if parse else data

    def unpack(self, into):
        """Every layer in order into `into`, owners and modes as the layers say."""
        for layer in self.manifest["layers"]:
            data = self.blob(layer["digest"], parse=False)
            if layer["mediaType"].endswith("+gzip"):
                data = gzip.decompress(data)
            with tarfile.open(fileobj=io.BytesIO(data)) as files:
                files.extractall(into, numeric_owner=True, filter="fully_trusted")   # our own image: modes as built


@pytest.fixture(scope="module")
def image(archive):
    return Image(archive)


@pytest.fixture(scope="module")
def rootfs(image, tmp_path_factory):
    root = tmp_path_factory.mktemp("image-root")
    root.chmod(0o755)   # a container's / (the image's user must reach /usr/local/bin)
    image.unpack(root)
    return root


@pytest.fixture(scope="module")
def running_root(rootfs):
    """The unpacked root with the /proc a container runtime mounts (Swift reads a program's arguments there)."""
    proc = rootfs / "proc"
    proc.mkdir(exist_ok=True)
    subprocess.run(["mount", "-t", "proc", "proc", str(proc)], check=True)
    try:
        yield rootfs
    finally:
        subprocess.run(["umount", "-l", str(proc)], check=False)
        proc.rmdir()


def test_the_image_is_named_and_configured_to_run_credemu_unprivileged(image):
    assert image.tag == f"credemu:{VERSION}"
    config = image.config["config"]
    assert config["Entrypoint"] == ["/usr/local/bin/credemu"]
    assert config["Cmd"] == ["serve", "--port", "8765"], "loopback unless told otherwise"
    assert config["User"] == "10001:10001", "not root"
    assert config["WorkingDir"] == "/data" and "CREDEMU_VAULT=/data/vault.db" in config["Env"]
    assert "8765/tcp" in config["ExposedPorts"]
    assert config["Labels"]["org.opencontainers.image.version"] == VERSION
    assert image.config["architecture"] == "amd64" and image.config["os"] == "linux"


def test_the_image_holds_the_binary_what_it_loads_and_nothing_else(rootfs):
    assert not (rootfs / "proc").exists(), "unpacked as the layers say, before anything is mounted"
    files = sorted(str(p.relative_to(rootfs)) for p in rootfs.rglob("*") if not p.is_dir())
    libraries = [f for f in files if f not in ("usr/local/bin/credemu", "etc/passwd", "etc/group")]
    assert "usr/local/bin/credemu" in files and "etc/passwd" in files and "etc/group" in files, files
    assert libraries and {Path(f).name for f in libraries} <= ALLOWED, libraries
    assert not (rootfs / "bin").exists() and not (rootfs / "usr" / "bin").exists(), "no shell, no tools"
    data = (rootfs / "data").stat()
    assert (data.st_uid, data.st_gid, data.st_mode & 0o777) == (10001, 10001, 0o700), "the vault's directory is the user's alone"
    assert (rootfs / "tmp").stat().st_mode & 0o7777 == 0o1777


def chrooted(rootfs, *args, **kwargs):
    """The image's binary run under chroot as the image's user, with the image's environment only."""
    return subprocess.Popen(["/usr/sbin/chroot", "--userspec=10001:10001", str(rootfs), "/usr/local/bin/credemu", *args],
                            env={"CREDEMU_VAULT": "/data/vault.db", "HOME": "/data"}, cwd="/",
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


@contextlib.contextmanager
def serving(rootfs, *args):
    port_file = rootfs / "data" / "port"
    port_file.unlink(missing_ok=True)
    server = chrooted(rootfs, "serve", "--port", "0", "--port-file", "/data/port", *args)
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists() and server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert port_file.exists(), server.communicate(timeout=10) if server.poll() is not None else "no port within 20 s"
        yield int(port_file.read_text().strip()), server
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
        server.wait(20)


def get(port, path, token=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root (CI runs as root)")
def test_its_binary_runs_in_the_image_root_as_its_user_and_serves(running_root):
    rootfs = running_root
    version = chrooted(rootfs, "--version")
    out, err = version.communicate(timeout=30)
    assert version.returncode == 0 and out.split()[0] == VERSION, (out, err)
    with serving(rootfs) as (port, server):
        status, health = get(port, "/health")
        assert status == 200 and health["version"] == VERSION and health["vault"] == "/data/vault.db", health
        assert get(port, "/profiles")[0] == 200, "on loopback without a token, as on any machine"
    assert server.returncode == 0, "SIGTERM stops it cleanly"
    assert (rootfs / "data" / "vault.db").stat().st_uid == 10001


@pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root (CI runs as root)")
def test_in_the_image_a_listener_off_loopback_needs_a_token(running_root):
    rootfs = running_root
    refused = chrooted(rootfs, "serve", "--host", "0.0.0.0", "--port", "0")
    out, err = refused.communicate(timeout=30)
    assert refused.returncode == 2 and "--token" in err, (refused.returncode, out, err)
    with serving(rootfs, "--host", "0.0.0.0", "--token", "s3cret") as (port, _):
        assert get(port, "/health")[0] == 200
        status, body = get(port, "/profiles")
        assert status == 401 and body["error"]["name"] == "Unauthorized", body
        assert get(port, "/profiles", token="s3cret")[0] == 200
