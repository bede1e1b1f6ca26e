#!/usr/bin/env bash
# make dist-check: `make dist`'s wheel and npm tarball, installed in clean Debian roots as a new user would, and the
# README's quickstarts run there against the example RP.
# Usage: packaging/dist-check.sh DIST_DIR ROOTS_DIR SUITE... (bookworm, trixie)
#
# In each root (packaging/clean-root.sh: python3, Chromium, Node and npm from apt; no Swift, no -dev package):
# 1. `ldd` of the shipped binary names only packaging/runtime-libraries (glibc's, libstdc++, libgcc_s);
# 2. a new venv, `pip install --no-index credemu-*.whl` (pytest and Playwright from the root's wheelhouse), the
#    `credemu` command answers, and the README's pytest quickstart passes against examples/relying-party/app.py;
# 3. `npm install --offline credemu-VERSION.tgz` in a new project (`playwright` there is the playwright-core the
#    Playwright wheel carries), and the README's JS quickstart passes.
# The quickstarts are taken from README.md by packaging/quickstart.py, the same extraction
# clients/python/tests/test_readme_quickstarts.py runs; only the RP's URL and Chromium's path and flags are put in.
# Each check works in /check inside the root, made afresh and removed after; nothing else of the root changes.
set -euo pipefail

dist=$1 roots=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
root_of_repo=$(cd "$here/.." && pwd)
wheel=$(ls "$dist"/credemu-*-py3-none-manylinux_*.whl)
tarball=$(ls "$dist"/credemu-[0-9]*.tgz)
[ -f "$wheel" ] && [ -f "$tarball" ] || { echo "dist-check: no wheel or npm tarball in $dist: run make dist" >&2; exit 1; }

for suite in "$@"; do
    started=$SECONDS
    root="$roots/$suite"
    "$here/clean-root.sh" create "$suite" "$root"
    check="$root/check"
    rm -rf --one-file-system "$check"
    mkdir -p "$check/dist" "$check/rp" "$check/js"
    trap 'rm -rf --one-file-system "$check"' EXIT
    cp "$wheel" "$tarball" "$check/dist/"
    cp -r "$root_of_repo/examples/relying-party/." "$check/rp/"
    python3 "$here/quickstart.py" python > "$check/test_quickstart.py"
    python3 "$here/quickstart.py" js > "$check/js/quickstart.mjs"
    grep -v '^#' "$here/runtime-libraries" > "$check/runtime-libraries"
    cp "$here/dist-check-inside.sh" "$check/inside.sh"
    echo "== dist-check: Debian $suite ($(cat "$root/etc/debian_version"))"
    "$here/clean-root.sh" run "$root" /bin/bash /check/inside.sh
    rm -rf --one-file-system "$check"
    trap - EXIT
    echo "== dist-check: Debian $suite passed in $((SECONDS - started)) s"
done
