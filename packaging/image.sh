#!/usr/bin/env bash
# make image: an OCI image of the self-contained binary, built with Debian's buildah from scratch (no base image, no
# RUN step, so nothing is ever run in a container: these machines cannot run one), as an oci-archive in OUT_DIR.
# Usage: packaging/image.sh BINARY OUT_DIR VERSION
#
# The image holds the binary, the shared libraries packaging/runtime-libraries allows it (glibc's, libstdc++,
# libgcc_s: copied from this build machine, as ldd resolves them), an /etc/passwd and /etc/group naming an
# unprivileged user, /data for the vault (that user's, 0700) and /tmp. No shell and no package manager.
# `credemu serve` in it listens on loopback unless told otherwise: `serve --host 0.0.0.0 --token T` to publish a
# port, and a non-loopback --host refuses to start without --token (docs/install.md, "The OCI image").
set -euo pipefail

binary=$1 out=$2 version=$3
root=$(cd "$(dirname "$0")/.." && pwd)
storage="$root/.build/buildah"
buildah=(buildah --root "$storage/root" --runroot "$storage/run" --storage-driver vfs)
archive="$out/credemu-$version-oci.tar"
work=$(mktemp -d "${TMPDIR:-/tmp}/credemu-image.XXXXXX")
container=""
cleanup() {
    [ -z "$container" ] || "${buildah[@]}" rm "$container" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

rootfs="$work/rootfs"
mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc" "$work/owned/data" "$rootfs/tmp"
install -m 0755 "$binary" "$rootfs/usr/local/bin/credemu"
strip --strip-all "$rootfs/usr/local/bin/credemu" 2>/dev/null || true

# Each library at the path the loader looks it up by, the file itself (not a link); only those the list allows.
allowed=$(grep -v '^#' "$root/packaging/runtime-libraries")
while read -r name path; do
    [ -n "$path" ] || continue
    if ! grep -qxF "$name" <<< "$allowed"; then
        echo "image: $binary needs $name, which packaging/runtime-libraries does not allow" >&2
        exit 1
    fi
    install -D -m 0755 "$(readlink -f "$path")" "$rootfs$path"
done < <(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 } $1 ~ /^\// { n = split($1, p, "/"); print p[n], $1 }')

# An unprivileged user owns the vault's directory; the image runs as it.
printf 'root:x:0:0:root:/root:/nonexistent\ncredemu:x:10001:10001:credemu:/data:/nonexistent\n' > "$rootfs/etc/passwd"
printf 'root:x:0:\ncredemu:x:10001:\n' > "$rootfs/etc/group"
chmod 1777 "$rootfs/tmp"
chmod 0700 "$work/owned/data"

commit=$("$binary" --version | sed -n 's/.*(\(.*\))$/\1/p')
mkdir -p "$storage" "$out"
container=$("${buildah[@]}" from scratch)
"${buildah[@]}" copy --quiet "$container" "$rootfs" / >/dev/null
# /data as an entry of the copy (a copied directory's own mode is not kept), owned by the image's user.
"${buildah[@]}" copy --quiet --chown 10001:10001 "$container" "$work/owned" / >/dev/null
"${buildah[@]}" config \
    --entrypoint '["/usr/local/bin/credemu"]' --cmd '["serve", "--port", "8765"]' \
    --user 10001:10001 --workingdir /data --env CREDEMU_VAULT=/data/vault.db --port 8765/tcp \
    --label org.opencontainers.image.title=credemu \
    --label "org.opencontainers.image.description=A credential-provider emulator: a fake password manager for passkey relying parties" \
    --label "org.opencontainers.image.version=$version" \
    --label "org.opencontainers.image.revision=$commit" \
    "$container"
rm -f "$archive"
"${buildah[@]}" commit --quiet --format oci --rm "$container" "localhost/credemu:$version" >/dev/null
container=""
"${buildah[@]}" push --quiet "localhost/credemu:$version" "oci-archive:$archive:credemu:$version"
"${buildah[@]}" rmi --force "localhost/credemu:$version" >/dev/null
echo "image: $archive"
