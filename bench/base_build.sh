#!/bin/sh
# The release build directory of a git revision, built once and kept under .build/compare/<commit>/ (for
# bench/compare_builds.py). Prints the directory holding its credemu and credemu-bench; the build's output goes to
# stderr. The revision's tree comes from `git archive`, so the working tree and its own .build are untouched.
set -eu
revision=${1:?usage: bench/base_build.sh REVISION}
commit=$(git rev-parse --verify "$revision^{commit}")
root=.build/compare/$commit
if [ ! -x "$root/.build/release/credemu-bench" ] || [ ! -x "$root/.build/release/credemu" ]; then
    rm -rf "$root/tree"
    mkdir -p "$root/tree"
    git archive "$commit" | tar -x -C "$root/tree"
    # A package's build directory beside its tree, so that a second call finds it.
    swift build -c release --package-path "$root/tree" --scratch-path "$root/.build" --product credemu-bench >&2
    swift build -c release --package-path "$root/tree" --scratch-path "$root/.build" --product credemu >&2
fi
echo "$root/.build/release"
