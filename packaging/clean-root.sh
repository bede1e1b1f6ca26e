#!/usr/bin/env bash
# make dist-check: clean Debian roots (debootstrap, minbase) to install credemu's packages into, and a way to run
# a command inside one.
#
#   packaging/clean-root.sh create SUITE DIR    a root of Debian SUITE (bookworm, trixie) in DIR, kept while this
#                                               suite, package list and pins are unchanged (DIR/.clean-root)
#   packaging/clean-root.sh run DIR COMMAND...  COMMAND in the root, /proc, /sys and /dev mounted for it and
#                                               unmounted after, whatever happens
#
# A root holds minbase and, from apt, python3 with its venv module, Chromium, and Node with npm: what a user who
# runs a Playwright suite in Python or in JavaScript has. No Swift, no -dev package, none of credemu's C libraries
# asked for (Chromium and Python bring some: the binary must not use them, which `ldd` in the root shows). The
# quickstarts' own test tools (pytest, Playwright for Python, whose wheel carries playwright-core for Node too) are
# downloaded once, into /opt/wheelhouse, at the versions Tests/interop/requirements.txt pins, with the example RP's
# py_webauthn, so every check installs offline. Nothing of credemu is in a root: each check copies its packages in and installs them.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# libatomic1: the node binary inside Playwright's Python wheel needs it (Debian 13's nodejs brings it, 12's does not).
APT_PACKAGES="python3 python3-venv chromium nodejs npm libatomic1 ca-certificates"

# The wheels' versions: the interop suite's pins.
pin() { sed -n "s/^$1==\([^ ]*\).*/\1/p" "$here/../Tests/interop/requirements.txt"; }

run() {
    local dir=$1; shift
    local mounted=()
    cleanup() {
        local i
        for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -R -l "${mounted[i]}" 2>/dev/null || true; done
    }
    trap cleanup EXIT
    mount -t proc proc "$dir/proc" && mounted+=("$dir/proc")
    mount --rbind /sys "$dir/sys" && mount --make-rslave "$dir/sys" && mounted+=("$dir/sys")
    mount --rbind /dev "$dir/dev" && mount --make-rslave "$dir/dev" && mounted+=("$dir/dev")
    cp -L /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
    local status=0
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb \
        chroot "$dir" "$@" || status=$?
    cleanup
    trap - EXIT
    return $status
}

# Removes a root only when nothing is mounted below it: a run killed before its cleanup (or debootstrap, which mounts
# the target's /proc itself) can leave /proc, /sys or the host's /dev bound there, and `rm -rf` would then delete
# the host's device nodes. Unmounts what it finds, deepest first; --one-file-system keeps rm off any left.
remove_root() {
    local dir=$1 target
    [ -e "$dir" ] || return 0
    while read -r target; do
        umount -R -l "$target" 2>/dev/null || true
    done < <(awk -v d="$(realpath -m "$dir")" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/mounts | sort -r)
    if awk -v d="$(realpath -m "$dir")" '$2 == d || index($2, d "/") == 1 { found = 1 } END { exit !found }' /proc/mounts; then
        echo "clean-root: $dir still has file systems mounted below it; not removing it" >&2
        exit 1
    fi
    rm -rf --one-file-system "$dir"
}

create() {
    local suite=$1 dir=$2
    local stamp="$suite: $APT_PACKAGES"
    if [ "$(cat "$dir/.clean-root" 2>/dev/null)" != "$stamp" ]; then
        remove_root "$dir"
        mkdir -p "$(dirname "$dir")"
        local part="$dir.part"
        remove_root "$part"
        debootstrap --variant=minbase "$suite" "$part" "$mirror" >"$part.log" 2>&1 || { tail -20 "$part.log" >&2; exit 1; }
        printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s %s-security main\n' \
            "$mirror" "$suite" "$mirror" "$suite" "$security" "$suite" > "$part/etc/apt/sources.list"
        run "$part" /bin/sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $APT_PACKAGES >/dev/null && apt-get clean"
        rm -f "$part.log"
        echo "$stamp" > "$part/.clean-root"
        mv "$part" "$dir"
        echo "clean-root: $dir ($suite) created"
    fi
    wheelhouse "$dir"
}

# /opt/wheelhouse: the quickstarts' test tools and the example RP's library (py_webauthn, with its own
# dependencies), downloaded again only when the pins change. This machine's pip downloads them (its own index and
# certificate settings; a root trusts only Debian's CAs) as wheels for the root's Python and glibc.
wheelhouse() {
    local dir=$1
    local pins="pytest==$(pin pytest) playwright==$(pin playwright) webauthn==$(pin webauthn)"
    [ "$(cat "$dir/opt/wheelhouse/.pins" 2>/dev/null)" = "$pins" ] && return
    local python glibc
    python=$(chroot "$dir" python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    glibc=$(chroot "$dir" /usr/bin/ldd --version | sed -n '1s/.* \([0-9]*\)\.\([0-9]*\)$/\1_\2/p')
    # pip takes each platform tag as it is: every manylinux the root's glibc runs, and the legacy aliases.
    local platforms=(--platform "manylinux1_$(uname -m)" --platform "manylinux2014_$(uname -m)") minor
    for ((minor = 5; minor <= ${glibc#2_}; minor++)); do platforms+=(--platform "manylinux_2_${minor}_$(uname -m)"); done
    rm -rf "$dir/opt/wheelhouse"
    # shellcheck disable=SC2086
    python3 -m pip download -q --disable-pip-version-check --only-binary=:all: --implementation cp \
        --python-version "$python" "${platforms[@]}" -d "$dir/opt/wheelhouse" $pins
    echo "$pins" > "$dir/opt/wheelhouse/.pins"
}

case "${1:-}" in
    create) create "$2" "$3" ;;
    run) shift; run "$@" ;;
    *) echo "usage: $0 create SUITE DIR | run DIR COMMAND..." >&2; exit 2 ;;
esac
