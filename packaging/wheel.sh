#!/usr/bin/env bash
# make dist: the Python wheel that carries the stripped binary (clients/python/hatch_build.py), in OUT_DIR.
# Usage: packaging/wheel.sh BINARY OUT_DIR PYTHON (an interpreter with hatchling: the .venv make deps-python makes)
# Its platform tag is the one auditwheel would give: manylinux_2_N_ARCH, where glibc 2.N is the newest version of
# any glibc symbol the binary uses (its other libraries, libstdc++ and libgcc_s, are in every manylinux policy's
# list). Built without build isolation and without dependencies (it has none): nothing comes from the network.
set -euo pipefail

binary=$1 out=$2 python=$3
root=$(cd "$(dirname "$0")/.." && pwd)

glibc=$(objdump -T "$binary" | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2,2n -u | tail -1)
[ -n "$glibc" ] || { echo "wheel: $binary names no glibc symbol version" >&2; exit 1; }
platform="manylinux_2_${glibc#GLIBC_2.}_$(uname -m)"

CREDEMU_WHEEL_BINARY=$(realpath "$binary") CREDEMU_WHEEL_PLATFORM=$platform \
    "$python" -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps -w "$out" "$root/clients/python"
