#!/bin/bash
# make dist-check, inside a clean root (packaging/dist-check.sh puts this in /check with the packages, the example
# RP and the README's quickstarts): install as a user would, then run what the README says.
set -euo pipefail
cd /check
fail() { echo "dist-check: $*" >&2; exit 1; }

# The wheel, offline, in a new venv (pytest and Playwright, the quickstart's own tools, and the RP's py_webauthn
# from the root's wheelhouse).
python3 -m venv venv
venv/bin/pip install -q --disable-pip-version-check --no-index --find-links /opt/wheelhouse pytest playwright webauthn
venv/bin/pip install -q --disable-pip-version-check --no-index dist/credemu-*.whl
binary=$(env -u CREDEMU venv/bin/python -c 'import credemu; print(credemu.find_binary())')
case "$binary" in /check/venv/lib/python3*/site-packages/credemu/bin/credemu) ;; *) fail "the client found $binary, not the wheel's binary" ;; esac
echo "credemu $(env -u CREDEMU venv/bin/credemu --version) from the wheel, $(python3 --version), $(ldd --version | head -1)"

# ldd names only glibc's libraries, libstdc++ and libgcc_s (packaging/runtime-libraries).
ldd "$binary" | tee ldd.txt
! grep -q "not found" ldd.txt || fail "a library the binary needs is missing"
while read -r library _; do
    name=${library##*/}
    [ "$name" = linux-vdso.so.1 ] || grep -qxF "$name" runtime-libraries || fail "ldd names $name, which packaging/runtime-libraries does not allow"
done < ldd.txt

# The example RP on a free port.
venv/bin/python rp/app.py --port 0 > rp.url 2> rp.log &
rp=$!
trap 'kill $rp 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s rp.url ] && break; sleep 0.1; done
url=$(head -1 rp.url)
[ -n "$url" ] || fail "the example RP did not start: $(cat rp.log)"

# The README's pytest quickstart, its `page` any Playwright page: Debian's Chromium, as root without a sandbox.
sed -i "s#http://localhost:8000#$url#g" test_quickstart.py
cat > conftest.py <<'PY'
import pytest
from playwright.sync_api import sync_playwright

@pytest.fixture
def page():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield browser.new_page()
        browser.close()
PY
env -u CREDEMU venv/bin/python -m pytest -q -p no:cacheprovider test_quickstart.py

# The npm tarball, offline, in a new project; `playwright` is the playwright-core the Playwright wheel carries.
core=$(echo /check/venv/lib/python3*/site-packages/playwright/driver/package)
(cd js && echo '{"private": true}' > package.json \
    && npm install --offline --no-audit --no-fund --silent ../dist/credemu-*.tgz "playwright@file:$core")
[ "$(env -u CREDEMU js/node_modules/.bin/credemu --version)" = "$(env -u CREDEMU venv/bin/credemu --version)" ] || fail "the npm package's credemu command"
sed -i -e "s#http://localhost:8000#$url#g" \
    -e "s#chromium.launch()#chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-dev-shm-usage'] })#" js/quickstart.mjs
# Playwright needs Node 20 or later: where Debian's is older (Debian 12 has 18), the quickstart runs on the Node that
# Playwright's wheel carries, as a user would run it on NodeSource's; credemu's package itself asks for Node 18.
node=node
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] || node=$(dirname "$core")/node
(cd js && env -u CREDEMU "$node" quickstart.mjs) | tee js.out
grep -q "rpId: 'localhost'" js.out && grep -q "kind: 'create'" js.out && grep -q "outcome: 'success'" js.out \
    || fail "the JS quickstart made no passkey"
echo "$node $("$node" --version): the JS quickstart made its passkey"
