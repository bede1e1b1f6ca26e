#!/usr/bin/env bash
# make dist: the npm tarball (`npm pack`) of the JavaScript client with the stripped binary inside, in OUT_DIR.
# Usage: packaging/npm.sh BINARY OUT_DIR VERSION
# The package is clients/js as it is (package.json: credemu.mjs the main module, the `credemu` command) with the
# binary at bin/PLATFORM-ARCH/credemu in Node's names (linux-x64), where credemu.mjs's findBinary looks first
# after $CREDEMU, as esbuild's and biome's packages carry theirs; package.json gets VERSION and this os and cpu, so
# npm refuses the tarball elsewhere. npm pack reads only the staged directory: nothing comes from the network.
set -euo pipefail

binary=$1 out=$2 version=$3
root=$(cd "$(dirname "$0")/.." && pwd)
case "$(uname -m)" in
    x86_64) cpu=x64 ;;
    aarch64) cpu=arm64 ;;
    *) echo "npm: no Node name for $(uname -m)" >&2; exit 1 ;;
esac
stage="$out/npm-stage"
rm -rf "$stage"
mkdir -p "$stage/bin/linux-$cpu"
cp "$root/clients/js/package.json" "$root/clients/js/credemu.mjs" "$root/clients/js/playwright-fixtures.mjs" "$stage/"
install -m 0755 "$root/clients/js/bin/credemu.mjs" "$stage/bin/credemu.mjs"
install -m 0755 "$binary" "$stage/bin/linux-$cpu/credemu"
(cd "$stage" && node -e '
    const fs = require("node:fs");
    const [version, cpu] = process.argv.slice(1);
    const manifest = JSON.parse(fs.readFileSync("package.json", "utf8"));
    manifest.version = version;
    manifest.os = ["linux"];
    manifest.cpu = [cpu];
    manifest.files = manifest.files.map((file) => file.replace("linux-x64", `linux-${cpu}`));
    fs.writeFileSync("package.json", JSON.stringify(manifest, null, 2) + "\n");
' "$version" "$cpu")
npm pack --silent --pack-destination "$(realpath "$out")" "$(realpath "$stage")" >/dev/null
rm -rf "$stage"
