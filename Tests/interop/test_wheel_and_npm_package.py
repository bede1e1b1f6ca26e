"""`make dist`'s Python wheel and npm tarball, installed offline into a new venv and a new npm project: each
carries the stripped binary (the .deb's), is named and tagged by it, and its client and `credemu` command use it
unless told otherwise. (make dist-check installs the same files in clean Debian roots and runs the quickstarts.)

Given CREDEMU_DEB (make test), the files beside it are taken and a missing one fails; run alone, .build/dist's."""
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

VERSION = (ROOT / "VERSION").read_text().strip()
# What `credemu --version` prints: the version, and the commit built from when the Makefile stamped it.
PRINTED = re.compile(re.escape(VERSION) + r"( \([0-9a-f]{7,40}(-dirty)?\))?\n")


def dist_directory():
    given = os.environ.get("CREDEMU_DEB")
    if given:
        return Path(given).parent
    directory = ROOT / ".build" / "dist"
    if not list(directory.glob("credemu-*.whl")):
        pytest.skip("no wheel in .build/dist: run `make dist` (make test does), or set CREDEMU_DEB")
    return directory


@pytest.fixture(scope="module")
def dist():
    return dist_directory()


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CREDEMU")}
    return dict(env, **extra)


def newest_glibc(binary):
    symbols = subprocess.run(["objdump", "-T", str(binary)], capture_output=True, text=True, check=True).stdout
    return max(int(minor) for minor in re.findall(r"GLIBC_2\.(\d+)", symbols))


@pytest.fixture(scope="module")
def venv(dist, tmp_path_factory):
    [wheel] = dist.glob("credemu-*.whl")
    directory = tmp_path_factory.mktemp("wheel") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(directory)], check=True, timeout=120)
    subprocess.run([str(directory / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", "--no-index", str(wheel)],
                   check=True, timeout=300, env=clean_env(PIP_FIND_LINKS=""))
    return directory


def test_the_wheel_carries_the_stripped_binary_and_is_tagged_by_its_glibc(dist):
    [wheel] = dist.glob("credemu-*.whl")
    [deb] = dist.glob("credemu_*.deb")
    unpacked = dist / "check-deb"
    shutil.rmtree(unpacked, ignore_errors=True)
    subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
    shipped = unpacked / "usr" / "bin" / "credemu"
    tag = f"py3-none-manylinux_2_{newest_glibc(shipped)}_{os.uname().machine}"
    assert wheel.name == f"credemu-{VERSION}-{tag}.whl"
    with zipfile.ZipFile(wheel) as archive:
        info = archive.getinfo("credemu/bin/credemu")
        assert (info.external_attr >> 16) & 0o111, "the binary is executable once installed"
        assert archive.read("credemu/bin/credemu") == shipped.read_bytes()
        metadata = archive.read(f"credemu-{VERSION}.dist-info/WHEEL").decode()
        entry_points = archive.read(f"credemu-{VERSION}.dist-info/entry_points.txt").decode()
    shutil.rmtree(unpacked)
    assert f"Tag: {tag}" in metadata and "Root-Is-Purelib: false" in metadata
    assert "credemu = credemu.command:main" in entry_points and "credemu = credemu.pytest_plugin" in entry_points


def test_the_installed_client_and_command_use_the_wheels_binary_unless_told_otherwise(venv, tmp_path):
    python, command = venv / "bin" / "python", venv / "bin" / "credemu"
    found = subprocess.run([str(python), "-c", "import credemu; print(credemu.find_binary(), credemu.__version__)"],
                           capture_output=True, text=True, check=True, env=clean_env(PATH="/usr/bin:/bin"), cwd=tmp_path).stdout.split()
    assert Path(found[0]).parent.parent == next((venv / "lib").glob("python3*/site-packages/credemu"))
    assert found[1] == VERSION
    assert PRINTED.fullmatch(subprocess.run([str(command), "--version"], capture_output=True, text=True, env=clean_env(PATH="/usr/bin:/bin"),
                                            cwd=tmp_path).stdout)
    told = subprocess.run([str(python), "-c", "import credemu; print(credemu.find_binary())"], capture_output=True, text=True,
                          check=True, env=clean_env(CREDEMU="/bin/true"), cwd=tmp_path).stdout.strip()
    assert told == "/bin/true"
    # Its exit status is the binary's: an unknown command is refused.
    assert subprocess.run([str(command), "no-such-command"], capture_output=True, env=clean_env(), cwd=tmp_path).returncode not in (0, 127)


def test_a_wheel_without_a_binary_has_a_command_that_finds_another_or_says_so(tmp_path):
    """The pure wheel (the source tree's, `pip install ./clients/python`): its `credemu` command, first on PATH,
    passes over itself, so it runs the next credemu on PATH, or exits 127 saying so instead of calling itself."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-build-isolation", "--no-deps",
                    "-w", str(tmp_path), str(ROOT / "clients" / "python")], check=True, timeout=300, env=clean_env())
    [wheel] = tmp_path.glob("credemu-*.whl")
    assert wheel.name == f"credemu-{VERSION}-py3-none-any.whl"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", "--no-index", str(wheel)],
                   check=True, timeout=300, env=clean_env(PIP_FIND_LINKS=""))
    alone = subprocess.run([str(venv / "bin" / "credemu"), "--version"], capture_output=True, text=True, timeout=30,
                           env=clean_env(PATH=f"{venv / 'bin'}:/usr/bin:/bin"))
    assert alone.returncode == 127 and "no credemu binary" in alone.stderr, alone
    other = tmp_path / "other"
    other.mkdir()
    (other / "credemu").write_text("#!/bin/sh\necho other credemu \"$@\"\n")
    (other / "credemu").chmod(0o755)
    found = subprocess.run([str(venv / "bin" / "credemu"), "--version"], capture_output=True, text=True, timeout=30,
                           env=clean_env(PATH=f"{venv / 'bin'}:{other}:/usr/bin:/bin"))
    assert found.returncode == 0 and found.stdout == "other credemu --version\n", found


@pytest.mark.skipif(shutil.which("npm") is None, reason="no npm (make dist installs it)")
def test_the_npm_package_carries_the_binary_and_finds_it_without_configuration(dist, tmp_path):
    [tarball] = dist.glob(f"credemu-{VERSION}.tgz")
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text('{"private": true}')
    subprocess.run(["npm", "install", "--offline", "--no-audit", "--no-fund", "--silent", str(tarball)], cwd=project, check=True, timeout=300)
    package = project / "node_modules" / "credemu"
    manifest = json.loads((package / "package.json").read_text())
    assert manifest["version"] == VERSION and manifest["main"] == "./credemu.mjs" and manifest["os"] == ["linux"]
    [wheel] = dist.glob("credemu-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert (package / "bin" / "linux-x64" / "credemu").read_bytes() == archive.read("credemu/bin/credemu"), "the same binary"
    assert os.access(package / "bin" / "linux-x64" / "credemu", os.X_OK)
    found = subprocess.run(["node", "--input-type=module", "-e", "import { findBinary } from 'credemu'; console.log(findBinary())"],
                           cwd=project, capture_output=True, text=True, check=True, env=clean_env()).stdout.strip()
    assert found == str(package / "bin" / "linux-x64" / "credemu")
    version = subprocess.run([str(project / "node_modules" / ".bin" / "credemu"), "--version"], cwd=project, capture_output=True, text=True,
                             env=clean_env(), timeout=30)
    assert PRINTED.fullmatch(version.stdout), version
