"""The Debian package from `make dist`, unpacked into a temporary root and run as a user would: from a
directory with no `providers/`, with PATH=/usr/bin:/bin and no LD_LIBRARY_PATH (`env -i`), and, where
`unshare` may mount, the Swift toolchain's directory hidden under an empty tmpfs.

`make test` runs `make dist` first and passes the package as CREDEMU_DEB; then a missing package fails. Run
alone, the test takes the newest package in .build/dist and skips if there is none."""
import json
import os
import shlex
import shutil
import re
import subprocess
import tarfile
from pathlib import Path

import pytest
from webauthn import generate_authentication_options, generate_registration_options, options_to_json

from api_client import Server
from conftest import ROOT, Credemu, register_and_sign_in, verify_authentication_both, verify_registration_both

ORIGIN = "https://shop.example.com"
SHIPPED = ["1password", "apple", "bitwarden", "edge", "generic-third-party", "gpm-pre-m144", "gpm", "keepassxc", "proton-pass", "security-key",
           "windows-hello", "webauthn-spec"]
RESOURCES = ROOT / "Sources" / "CredemuServer" / "Resources"


def find_package():
    given = os.environ.get("CREDEMU_DEB")
    if given:
        assert Path(given).is_file(), f"CREDEMU_DEB={given} does not exist: `make dist` builds it"
        return Path(given)
    found = sorted((ROOT / ".build" / "dist").glob("credemu_*.deb"), key=lambda p: p.stat().st_mtime)
    if not found:
        pytest.skip("no .deb in .build/dist: run `make dist` (make test does), or set CREDEMU_DEB")
    return found[-1]


def toolchain_directory():
    """The directory of the Swift toolchain on this machine, if it is one of its own (never /usr)."""
    swift = shutil.which("swift")
    if not swift:
        return None
    top = Path(swift).resolve().parents[2]
    return top if top.is_dir() and str(top) not in ("/", "/usr", "/usr/local") else None


def can_hide(directory):
    if directory is None or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                            'mount -t tmpfs -o size=1m tmpfs "$1" && [ -z "$(ls -A "$1")" ]', "sh", str(directory)],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


class Installed:
    """The package unpacked into `root`, and `isolated(program)`: a script that runs the program the way a
    user without the toolchain would."""

    def __init__(self, deb, base):
        self.deb = deb
        self.root = base / "root"
        self.work = base / "work"
        self.work.mkdir()
        subprocess.run(["dpkg-deb", "-x", str(deb), str(self.root)], check=True, timeout=120)
        self.binary = self.root / "usr" / "bin" / "credemu"
        self.toolchain = toolchain_directory()
        self.hidden = can_hide(self.toolchain)
        self.scripts = base / "scripts"
        self.scripts.mkdir()

    def field(self, name):
        return subprocess.run(["dpkg-deb", "-f", str(self.deb), name], capture_output=True, text=True, check=True).stdout.strip()

    def isolated(self, program):
        clean = f"exec /usr/bin/env -i PATH=/usr/bin:/bin HOME={shlex.quote(str(self.work))} {shlex.quote(str(program))} \"$@\""
        if self.hidden:
            inner = 'mount -t tmpfs -o size=1m tmpfs "$1" && shift && exec /usr/bin/env -i PATH=/usr/bin:/bin HOME="$0" "$@"'
            clean = (f"exec unshare --mount --propagation private /bin/sh -c {shlex.quote(inner)} {shlex.quote(str(self.work))} "
                     f"{shlex.quote(str(self.toolchain))} {shlex.quote(str(program))} \"$@\"")
        script = self.scripts / f"{len(list(self.scripts.iterdir()))}-{Path(program).name}"
        script.write_text(f"#!/bin/sh\ncd {shlex.quote(str(self.work))} || exit 99\n{clean}\n")
        script.chmod(0o755)
        return str(script)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return Installed(find_package(), tmp_path_factory.mktemp("installed"))


def aliases(path):
    """A path as dpkg may have recorded it: as given, with symlinks resolved, and either side of the merged
    /usr (Debian 12 registers /lib/x86_64-linux-gnu/libc.so.6, a process maps /usr/lib/...)."""
    out = [path, os.path.realpath(path)]
    for p in list(out):
        if p.startswith(("/usr/lib/", "/usr/lib64/", "/usr/bin/", "/usr/sbin/")):
            out.append(p[len("/usr"):])
        elif p.startswith(("/lib/", "/lib64/", "/bin/", "/sbin/")):
            out.append("/usr" + p)
    return out


def owners(paths):
    """The Debian package owning each path, or None."""
    out = {}
    for path in paths:
        for candidate in aliases(path):
            proc = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
            if proc.returncode == 0:
                out[path] = proc.stdout.split(":")[0].strip()
                break
        else:
            out[path] = None
    return out


def depends(installed):
    return {item.split("(")[0].strip() for item in installed.field("Depends").split(",")}


def test_the_package_holds_the_binary_and_its_docs(installed):
    listed = subprocess.run(["dpkg-deb", "-c", str(installed.deb)], capture_output=True, text=True, check=True).stdout
    files = sorted(line.split()[-1] for line in listed.splitlines() if not line.startswith("d"))
    pages = sorted(f"./usr/share/doc/credemu/{p.relative_to(ROOT)}" for p in [*(ROOT / "docs").glob("*.md"), *(ROOT / "docs" / "modules").glob("*.md")])
    assert files == sorted(["./usr/bin/credemu", "./usr/share/doc/credemu/CHANGELOG.md", "./usr/share/doc/credemu/README.md", *pages,
                            "./usr/share/doc/credemu/providers/README.md", "./usr/share/doc/credemu/providers/policy-pack.schema.json"]), files
    assert installed.field("Package") == "credemu"
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
    assert installed.field("Architecture") == arch
    assert depends(installed) == {"libc6", "libgcc-s1", "libstdc++6"}, installed.field("Depends")


def test_the_package_is_named_by_the_version_the_binary_reports(installed):
    version = (ROOT / "VERSION").read_text().strip()
    assert installed.field("Version").split("+")[0] == version
    assert installed.deb.name.startswith(f"credemu_{version}")
    reported = subprocess.run([installed.isolated(installed.binary), "--version"], capture_output=True, text=True, timeout=30)
    assert reported.returncode == 0 and re.fullmatch(re.escape(version) + r"( \([0-9a-f]{7,40}(-dirty)?\))?\n", reported.stdout), reported


def test_its_depends_are_installed_packages_that_own_every_library_it_needs(installed):
    dynamic = subprocess.run(["readelf", "-d", str(installed.binary)], capture_output=True, text=True, check=True).stdout
    assert "RPATH" not in dynamic and "RUNPATH" not in dynamic, "no run path: nothing is loaded from beside the binary"
    needed = [line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]
    assert not [n for n in needed if n.startswith(("libswift", "libFoundation", "libdispatch", "libBlocksRuntime"))], needed
    ldd = subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", "ldd", str(installed.binary)], capture_output=True, text=True, check=True).stdout
    paths = {}
    for line in ldd.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>":
            assert parts[2] != "not", f"{parts[0]} is not found without the toolchain"
            paths[parts[0]] = parts[2]
    assert {n for n in needed if not n.startswith("ld-linux")} <= set(paths), (needed, paths)
    owned = owners([paths[n] for n in needed if n in paths])
    assert all(owned.values()), f"libraries no Debian package provides: {owned}"
    assert {owned[paths[n]] for n in needed if n in paths} <= depends(installed), (owned, installed.field("Depends"))
    for package in depends(installed):
        status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True).stdout
        assert status == "install ok installed", f"{package} from Depends: is not an installed Debian package here"


def runtime_libraries():
    """packaging/runtime-libraries: the sonames the shipped binary may need (glibc's, libstdc++, libgcc_s)."""
    lines = (ROOT / "packaging" / "runtime-libraries").read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def test_the_binary_needs_only_glibc_libstdcxx_and_libgcc_s(installed):
    dynamic = subprocess.run(["readelf", "-d", str(installed.binary)], capture_output=True, text=True, check=True).stdout
    needed = {line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line}
    assert needed <= runtime_libraries(), f"linked to more than glibc, libstdc++ and libgcc_s: {sorted(needed - runtime_libraries())}"
    ldd = subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", "ldd", str(installed.binary)], capture_output=True, text=True, check=True).stdout
    loaded = {line.split()[0].rsplit("/", 1)[-1] for line in ldd.splitlines() if line.strip()}
    assert loaded - {"linux-vdso.so.1"} <= runtime_libraries(), ldd


def test_the_binary_is_stripped_and_its_debug_information_is_beside_the_package(installed):
    sections = subprocess.run(["readelf", "-S", "-W", str(installed.binary)], capture_output=True, text=True, check=True).stdout
    assert ".symtab" not in sections and ".debug_info" not in sections, "the shipped binary is stripped"
    link = subprocess.run(["readelf", "-p", ".gnu_debuglink", str(installed.binary)], capture_output=True, check=True).stdout.decode(errors="replace")
    [debug] = installed.deb.parent.glob("credemu-*.debug")
    assert debug.name in link, link
    kept = subprocess.run(["readelf", "-S", "-W", str(debug)], capture_output=True, text=True, check=True).stdout
    assert ".debug_info" in kept and ".symtab" in kept
    ids = [subprocess.run(["readelf", "-n", str(path)], capture_output=True, text=True, check=True).stdout.split("Build ID:")[1].split()[0]
           for path in (installed.binary, debug)]
    assert ids[0] == ids[1], "the debug file is this binary's (the same build ID)"


def test_the_binary_checks_rp_ids_with_the_public_suffix_list_it_carries(installed, tmp_path):
    """With /usr/share/publicsuffix hidden (a clean root has none), a public suffix is still refused as an RP ID
    and a registrable domain still accepted: the list is compiled in, and a missing one never weakens the check."""
    if not can_hide(Path("/usr/share/publicsuffix")):
        pytest.skip("unshare cannot mount here to hide /usr/share/publicsuffix")
    options = {"rp": {"id": "github.io", "name": "Pages"}, "challenge": "c2VlZC0wMDAtY2hhbGxlbmdl",
               "user": {"id": "YWxpY2U", "name": "alice", "displayName": "Alice"}, "pubKeyCredParams": [{"type": "public-key", "alg": -7}]}

    def create(rp_id, origin):
        (tmp_path / "options.json").write_text(json.dumps(dict(options, rp={"id": rp_id, "name": "Pages"})))
        hide = 'mount -t tmpfs -o size=1m tmpfs /usr/share/publicsuffix && ls -A /usr/share/publicsuffix && exec "$@"'
        return subprocess.run(["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", hide, "sh", str(installed.binary),
                               "--vault", str(tmp_path / "vault.db"), "create", "--origin", origin, "--options", str(tmp_path / "options.json")],
                              capture_output=True, text=True, timeout=60)

    refused = create("github.io", "https://alice.github.io")
    assert refused.returncode != 0 and json.loads(refused.stdout)["error"]["name"] == "SecurityError", refused
    assert "public suffix" in json.loads(refused.stdout)["error"]["message"]
    assert create("co.uk", "https://shop.co.uk").returncode != 0
    accepted = create("alice.github.io", "https://alice.github.io")
    assert accepted.returncode == 0 and accepted.stdout.startswith("{"), accepted


def test_the_toolchain_is_out_of_reach(installed):
    if installed.toolchain is None:
        pytest.skip("no Swift toolchain directory on this machine to hide")
    seen = subprocess.run([installed.isolated("/bin/sh"), "-c", 'echo "$PATH|${LD_LIBRARY_PATH-unset}|$(pwd)"; command -v swift || true'],
                          capture_output=True, text=True, timeout=30)
    assert seen.stdout.splitlines() == [f"/usr/bin:/bin|unset|{installed.work}"], seen
    assert not (installed.work / "providers").exists()
    if installed.hidden:
        listing = subprocess.run([installed.isolated("/bin/ls"), "-A", str(installed.toolchain)], capture_output=True, text=True, timeout=30)
        assert listing.returncode == 0 and listing.stdout == "", f"{installed.toolchain} is hidden under an empty tmpfs"
    else:
        print(f"unshare cannot mount here: {installed.toolchain} stays on disk; /proc/PID/maps shows it is never loaded")


def test_the_installed_binary_plays_every_shipped_pack_from_an_empty_directory(installed):
    binary = installed.isolated(installed.binary)
    (installed.work / "cli").mkdir()
    credemu = Credemu(installed.work / "cli", profile="default", binary=binary)
    listing = credemu.json("providers")
    assert [p["id"] for p in listing["providers"]] == SHIPPED
    assert {p["origin"] for p in listing["providers"]} == {"built-in"}
    register_and_sign_in(credemu)
    for pack in SHIPPED:
        credemu.json("profile", "create", f"p-{pack}", "--pack", pack)
        register_and_sign_in(Credemu(installed.work / "cli", profile=f"p-{pack}", binary=binary))


def test_the_installed_server_serves_the_shim_the_openapi_document_and_a_ceremony(installed):
    (installed.work / "server").mkdir()
    server = Server(installed.isolated(installed.binary), installed.work / "server")
    try:
        assert os.readlink(f"/proc/{server.process.pid}/exe") == str(installed.binary)
        status, document = server.call("GET", "/openapi.json")
        assert status == 200 and document == json.loads((RESOURCES / "openapi.json").read_text())
        status, shim = server.call("GET", "/shim.js?profile=default")
        assert status == 200 and (RESOURCES / "shim.js").read_bytes() in shim
        options = generate_registration_options(rp_id="example.com", rp_name="Shop", user_name="alice@example.com")
        status, created = server.call("POST", "/profiles/default/credentials/create", {"origin": ORIGIN, "options": json.loads(options_to_json(options))})
        assert status == 200, created
        verified, fido2_credential = verify_registration_both(created, options, ORIGIN, "example.com")
        request = generate_authentication_options(rp_id="example.com")
        status, assertion = server.call("POST", "/profiles/default/credentials/get", {"origin": ORIGIN, "options": json.loads(options_to_json(request))})
        assert status == 200, assertion
        verify_authentication_both(assertion, request, ORIGIN, "example.com", verified, fido2_credential)
        maps = Path(f"/proc/{server.process.pid}/maps").read_text().splitlines()
        files = {line.split(None, 5)[5] for line in maps if len(line.split(None, 5)) == 6 and line.split(None, 5)[5].startswith("/")}
        files = {f for f in files if not f.endswith("(deleted)") and not f.startswith(("/dev/", "/memfd:"))}
        assert str(installed.binary) in files
        if installed.toolchain:
            assert not [f for f in files if f.startswith(str(installed.toolchain) + "/")], files
        loaded = {f for f in files - {str(installed.binary)} if not f.startswith(str(installed.work) + "/")}
        unowned = {f for f, package in owners(loaded).items() if package is None}
        assert not unowned, f"the server mapped files no Debian package provides: {unowned}"
    finally:
        assert server.stop() == 0


def test_the_archive_holds_the_same_binary(installed, tmp_path):
    archives = list(installed.deb.parent.glob("credemu-*.tar.gz"))
    assert len(archives) == 1, f"make dist writes one tar.gz beside {installed.deb.name}: {archives}"
    with tarfile.open(archives[0]) as archive:
        archive.extractall(tmp_path, filter="data")
    (top,) = tmp_path.iterdir()
    assert (top / "bin" / "credemu").read_bytes() == installed.binary.read_bytes()
    assert (top / "share" / "doc" / "credemu" / "README.md").is_file()
    proc = subprocess.run([installed.isolated(top / "bin" / "credemu"), "providers"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert [p["id"] for p in json.loads(proc.stdout)["providers"]] == SHIPPED


def test_make_install_puts_a_binary_that_runs_alone_under_the_prefix(installed, tmp_path):
    prefix = tmp_path / "prefix"
    proc = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "install", f"PREFIX={prefix}"],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    installed_files = sorted(str(p.relative_to(prefix)) for p in prefix.rglob("*") if p.is_file())
    assert installed_files == ["bin/credemu"]
    proc = subprocess.run([installed.isolated(prefix / "bin" / "credemu"), "providers"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert [p["id"] for p in json.loads(proc.stdout)["providers"]] == SHIPPED
