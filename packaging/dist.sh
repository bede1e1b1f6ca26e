#!/usr/bin/env bash
# make dist: the release binary, stripped, as a tar.gz, a Debian package, a Python wheel and an npm tarball, and
# its debug information apart, in OUT_DIR.
# Usage: packaging/dist.sh BINARY OUT_DIR VERSION PYTHON (VERSION: the VERSION file's, with a +gitDATE.HASH suffix
# or none; PYTHON: an interpreter with hatchling, for the wheel)
# BINARY is built by `make release` (Swift runtime and C libraries linked statically); this refuses one that needs a
# shared library packaging/runtime-libraries does not list, or that has a run path. The .deb's Depends: is what
# dpkg-shlibdeps derives from the binary (libc6, libgcc-s1, libstdc++6).
set -euo pipefail

binary=$1 out=$2 version=$3 python=$4
root=$(cd "$(dirname "$0")/.." && pwd)
arch=$(dpkg --print-architecture)
name="credemu-$version-linux-$(uname -m)"
work="$out/work"
rm -rf "$out"
mkdir -p "$work"

# The binary stripped of every symbol, linked by a .gnu_debuglink to its debug information, kept apart in
# OUT_DIR/NAME.debug: gdb, perf and the Swift backtracer find it beside the binary or under /usr/lib/debug.
stripped="$work/credemu"
debug="$out/$name.debug"

# The binary and its docs, laid out under a prefix.
stage() {
    local prefix=$1
    install -D -m 0755 "$stripped" "$prefix/bin/credemu"
    install -D -m 0644 "$root/README.md" "$prefix/share/doc/credemu/README.md"
    for page in "$root"/docs/*.md "$root"/docs/modules/*.md; do
        install -D -m 0644 "$page" "$prefix/share/doc/credemu/${page#"$root"/}"
    done
    install -D -m 0644 "$root/CHANGELOG.md" "$prefix/share/doc/credemu/CHANGELOG.md"
    install -D -m 0644 "$root/providers/README.md" "$prefix/share/doc/credemu/providers/README.md"
    install -D -m 0644 "$root/providers/policy-pack.schema.json" "$prefix/share/doc/credemu/providers/policy-pack.schema.json"
}

# Only the shared libraries packaging/runtime-libraries lists, and no run path.
allowed=$(grep -v '^#' "$root/packaging/runtime-libraries")
while read -r library; do
    if ! grep -qxF "$library" <<< "$allowed"; then
        echo "dist: $binary needs $library, which packaging/runtime-libraries does not allow: link it statically (packaging/static-deps.sh)" >&2
        exit 1
    fi
done < <(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if readelf -d "$binary" | grep -qE '\((RPATH|RUNPATH)\)'; then
    echo "dist: $binary has a run path; build it with --disable-local-rpath (make release)" >&2
    exit 1
fi

# The package is named by the version the binary reports: both come from the repository's VERSION file.
reported=$("$binary" --version)
reported=${reported%% *}   # the version, without the commit in parentheses
if [ "$reported" != "${version%%+*}" ]; then
    echo "dist: $binary reports version $reported, not ${version%%+*}; rebuild it (make release)" >&2
    exit 1
fi

objcopy --only-keep-debug "$binary" "$debug"
chmod 0644 "$debug"
objcopy --strip-all --add-gnu-debuglink="$debug" "$binary" "$stripped"

# The archive: credemu-VERSION-linux-ARCH/{bin,share}.
stage "$work/$name"
tar -C "$work" --owner=0 --group=0 --numeric-owner --sort=name -czf "$out/$name.tar.gz" "$name"

# The Debian package, built in a debian/ tree so that dpkg-shlibdeps reads it as a package's build tree.
package="$work/debian/credemu"
stage "$package/usr"
mkdir -p "$package/DEBIAN"
printf 'Source: credemu\n\nPackage: credemu\nArchitecture: any\n' > "$work/debian/control"
shlibs=$(cd "$work" && dpkg-shlibdeps -O debian/credemu/usr/bin/credemu | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "dist: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
cat > "$package/DEBIAN/control" <<EOF
Package: credemu
Version: $version
Architecture: $arch
Maintainer: credemu maintainers <maintainers@users.noreply.a-seed-58ff192e.example>
Installed-Size: $(du -sk --exclude=DEBIAN "$package" | cut -f1)
Depends: $shlibs
Section: devel
Priority: optional
Description: credential-provider emulator for WebAuthn and password tests
 A fake password manager that behaves toward websites and apps the way Google
 Password Manager, Apple Passwords and third-party managers do with passkeys,
 and answers with real WebAuthn that an RP's own verification library accepts:
 a CLI, an HTTP JSON API and a browser shim. The provider packs, the shim and
 the OpenAPI document are compiled in, and so is the public suffix list; the
 Swift runtime and the C libraries are linked statically.
EOF
dpkg-deb --root-owner-group --build "$package" "$out/credemu_${version}_${arch}.deb" >/dev/null

# The wheel (packaging/wheel.sh) and the npm tarball (packaging/npm.sh), each with the same stripped binary, named
# by the VERSION file's version (the binary's).
"$root/packaging/wheel.sh" "$stripped" "$out" "$python"
"$root/packaging/npm.sh" "$stripped" "$out" "${version%%+*}"
rm -rf "$work"
ls -l "$out"
