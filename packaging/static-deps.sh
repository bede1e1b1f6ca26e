#!/usr/bin/env bash
# make release: the C libraries the shipped binary links statically, in OUT_DIR/lib (nothing but .a files there,
# so the linker, searching that directory first, takes each archive before Debian's shared library of the name).
# Usage: packaging/static-deps.sh OUT_DIR
#
# - libsqlite3, libsodium, libcrypto: Debian's own archives (the -dev packages ship them), linked to as they are.
# - libmicrohttpd: Debian's source (orig tarball and patches, checked against the sha256 of bookworm's .dsc), built
#   without HTTPS. Debian's archive is built with GnuTLS, which would pull in gnutls, nettle, hogweed, gmp, tasn1,
#   idn2, unistring and p11-kit (which Debian ships no archive of); credemu serves plain HTTP on loopback only.
# - libpsl: Debian's source, its two C files compiled without a run-time IDNA library (libpsl's --disable-runtime:
#   its own punycode encoder) and without a built-in list. Debian's archive needs libidn2 and libunistring (no
#   archive in Debian). credemu loads the list it compiles in (Sources/CPublicSuffix), a DAFSA whose rules are
#   already in UTF-8 and punycode, so libpsl converts nothing when it loads it.
# The headers stay Debian's (libmicrohttpd-dev, libpsl-dev): the same upstream versions as these sources.
set -euo pipefail

out=$1
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
src="$out/src"
lib="$out/lib"
mkdir -p "$src" "$lib"
src=$(cd "$src" && pwd) lib=$(cd "$lib" && pwd)
multiarch=$(gcc -print-multiarch)
# Debian's hardening flags when dpkg-dev is there (make dist installs it), else the same by hand.
cflags=$(dpkg-buildflags --get CFLAGS 2>/dev/null || echo "-g -O2 -fstack-protector-strong -Wformat -Werror=format-security")
cppflags=$(dpkg-buildflags --get CPPFLAGS 2>/dev/null || echo "-Wdate-time -D_FORTIFY_SOURCE=2")
cflags="$cflags -fPIC"

# fetch POOL_PATH SHA256: a file of Debian's pool into $src, checked (bookworm's .dsc lists these sums).
fetch() {
    local file="$src/$(basename "$1")"
    if ! echo "$2  $file" | sha256sum --check --status 2>/dev/null; then
        curl -fsSL --retry 3 -o "$file.part" "$mirror/pool/main/$1"
        echo "$2  $file.part" | sha256sum --check --status || { echo "static-deps: $1 does not match its sha256" >&2; exit 1; }
        mv "$file.part" "$file"
    fi
    echo "$file"
}

# Debian's archives, by their multiarch path.
for name in sqlite3 sodium crypto; do
    archive="/usr/lib/$multiarch/lib$name.a"
    [ -f "$archive" ] || { echo "static-deps: $archive is missing (make deps-debian installs the -dev packages)" >&2; exit 1; }
    ln -sf "$archive" "$lib/lib$name.a"
done

# libmicrohttpd 0.9.75-6 (bookworm) without HTTPS.
if [ ! -f "$lib/libmicrohttpd.a" ]; then
    orig=$(fetch libm/libmicrohttpd/libmicrohttpd_0.9.75.orig.tar.xz 796e7e217a4802679fcac667a4e98501c53185dcf50ca0583870e84192620131)
    debian=$(fetch libm/libmicrohttpd/libmicrohttpd_0.9.75-6.debian.tar.xz 566c247bfbf67e20858705ae695f58db747d50ed8512f2bc46a28bef9086e5af)
    tree="$src/libmicrohttpd-0.9.75"
    rm -rf "$tree" && tar -C "$src" -xJf "$orig" && tar -C "$tree" -xJf "$debian"
    while read -r patch; do
        [ -n "$patch" ] && [ "${patch#\#}" = "$patch" ] && patch -d "$tree" -p1 -s < "$tree/debian/patches/$patch"
    done < "$tree/debian/patches/series"
    (cd "$tree" && CFLAGS="$cflags" CPPFLAGS="$cppflags" ./configure -q --disable-shared --enable-static --with-pic \
        --disable-https --without-gnutls --disable-curl --disable-doc --disable-examples >/dev/null \
        && make -s -C src/microhttpd -j"$(nproc)" >/dev/null)
    cp "$tree/src/microhttpd/.libs/libmicrohttpd.a" "$lib/libmicrohttpd.a"
    rm -rf "$tree"
fi

# libpsl 0.21.2-1 (bookworm): psl.c and its DAFSA lookup, nothing else.
if [ ! -f "$lib/libpsl.a" ]; then
    orig=$(fetch libp/libpsl/libpsl_0.21.2.orig.tar.xz 11e34380f2c81d6e72c710464aae3b680df4ddcc1007826c630fb03c7ca6aa54)
    tree="$src/libpsl-0.21.2"
    rm -rf "$tree" && tar -C "$src" -xJf "$orig"
    for file in psl lookup_string_in_fixed_set; do
        # shellcheck disable=SC2086
        gcc $cflags $cppflags -DPACKAGE_VERSION='"0.21.2"' -DHAVE_STRINGS_H -DHAVE_ALLOCA_H -c "$tree/src/$file.c" -o "$tree/$file.o"
    done
    ar rcs "$lib/libpsl.a.part" "$tree/psl.o" "$tree/lookup_string_in_fixed_set.o"
    mv "$lib/libpsl.a.part" "$lib/libpsl.a"
    rm -rf "$tree"
fi

# What each archive still needs from outside: glibc's functions only (a missing IDNA or TLS symbol would show here).
for archive in "$lib/libmicrohttpd.a" "$lib/libpsl.a"; do
    if nm -u "$archive" | grep -qE ' U (gnutls_|idn2_|u8_|uninorm_)'; then
        echo "static-deps: $archive still needs GnuTLS or IDNA symbols" >&2
        exit 1
    fi
done

# pkg-config files that name OUT_DIR/lib as each library's libdir: `swift build --pkg-config-path OUT_DIR/pkgconfig`
# reads them before Debian's, so its link line has -L OUT_DIR/lib and not /usr/lib/MULTIARCH (where the linker
# would find the .so first). No Cflags: the headers are Debian's, in the default include path.
mkdir -p "$out/pkgconfig"
for pair in sqlite3:sqlite3 libsodium:sodium libcrypto:crypto libpsl:psl libmicrohttpd:microhttpd; do
    printf 'libdir=%s\nName: %s\nDescription: %s, linked statically from libdir\nVersion: 0\nLibs: -L${libdir} -l%s\nCflags:\n' \
        "$lib" "${pair%%:*}" "${pair%%:*}" "${pair##*:}" > "$out/pkgconfig/${pair%%:*}.pc"
done
