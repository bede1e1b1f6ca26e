# credemu: `make run` runs the main job, `make test` installs what is missing and runs every test.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV        := .venv
PYTHON      := $(VENV)/bin/python
DEB_PACKAGES := pkg-config libsqlite3-dev libsodium-dev libssl-dev libmicrohttpd-dev libpsl-dev publicsuffix
# The end-to-end tests' real browsers (Chromium; Firefox ESR over WebDriver BiDi; WebKitGTK through WebKitWebDriver
# under Xvfb, with Debian's python3 and PyGObject for credemu.browsers' small WebKit browser). They upgrade some
# system packages, so only `make test` (and `make bench`) install them.
BROWSER_PACKAGES := chromium chromium-driver firefox-esr webkit2gtk-driver gir1.2-webkit2-4.1 python3-gi python3-gi-cairo xvfb
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
CREDEMU     := .build/debug/credemu
# make release: curl, xz-utils and patch fetch and build the static C libraries (packaging/static-deps.sh); make
# dist: dpkg-shlibdeps derives the .deb's Depends, binutils strips and reads the binary.
DIST_PACKAGES := dpkg-dev binutils curl xz-utils patch buildah
# The one version (VERSION, also compiled into the binary: `credemu --version`, GET /health).
VERSION     := $(strip $(file < VERSION))
GIT_STAMP   := $(shell git log -1 --format=%cd.%h --date=format:%Y%m%d 2>/dev/null)
DEB_VERSION := $(VERSION)$(if $(GIT_STAMP),+git$(GIT_STAMP))
STATIC_BUILD := .build/static
# The C libraries the release binary links statically, and pkg-config files naming them (packaging/static-deps.sh).
STATIC_DEPS := .build/deps
DIST_DIR    := .build/dist
RELEASE_BIN := $(STATIC_BUILD)/release/credemu
DEB         := $(DIST_DIR)/credemu_$(DEB_VERSION)_$(shell dpkg --print-architecture 2>/dev/null).deb
PREFIX      ?= /usr/local

.PHONY: commit-stamp help deps deps-debian deps-browser deps-python deps-dist build run release install dist FORCE test test-swift test-interop sanitize sanitize-address sanitize-thread bench bench-scale bench-compare clean
.PHONY: deps-clients deps-node deps-npm deps-valgrind test-clients dist-check

help:
	@echo "make run    build and serve the API and browser shim on the default vault (.credemu/vault.db)"
	@echo "make test   install missing packages, build, run the Swift tests, make dist and dist-check, the interop tests, then make sanitize"
	@echo "make bench  ceremonies/s per algorithm, then credemu beside soft-webauthn, Chromium's virtual authenticator and the raw floors"
	@echo "make bench-compare BASE=main  this tree's ceremony cost beside BASE's in one run; exits 1 on a regression over 5%"
	@echo "make bench-scale  each operation's cost at 10k, 100k and 1M passkeys, in-process and served, and the server's memory"
	@echo "make sanitize  the Swift tests and an API workload under AddressSanitizer and ThreadSanitizer"
	@echo "make install PREFIX=/usr/local  the release binary into PREFIX/bin (it needs no other file)"
	@echo "make dist   .build/dist/: the stripped, self-contained release binary as a tar.gz, a .deb, a Python wheel and an npm tarball, and its .debug"
	@echo "make dist-check  the wheel and the npm tarball installed in clean Debian 12 and 13 roots, the README's quickstarts run there"

deps: deps-debian deps-browser deps-python

# Debian's -dev packages for the C libraries; installed only when missing.
deps-debian:
	@$(MAKE) --no-print-directory apt-install PACKAGES="$(DEB_PACKAGES)"

deps-browser:
	@$(MAKE) --no-print-directory apt-install PACKAGES="$(BROWSER_PACKAGES)"

# bench/instruction_cost.py and its test: callgrind, and strip (binutils, with gcc) for the copy it runs.
deps-valgrind:
	@$(MAKE) --no-print-directory apt-install PACKAGES="valgrind binutils"

deps-dist:
	@$(MAKE) --no-print-directory apt-install PACKAGES="$(DIST_PACKAGES)"

apt-install:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# The interop suite's RP libraries, in a virtual environment keyed on the requirements file.
deps-python: $(VENV)/.installed
$(VENV)/.installed: Tests/interop/requirements.txt bench/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r Tests/interop/requirements.txt
	$(VENV)/bin/pip install -q --disable-pip-version-check --no-deps -r bench/requirements.txt
	touch $@

# The commit compiled into the binary (`credemu --version`, /health), rewritten only when it changes so SwiftPM
# recompiles nothing else; shipped.c embeds it when present.
commit-stamp:
	@mkdir -p .build; c=$$(git describe --always --dirty --abbrev=12 2>/dev/null || true); \
	[ "$$(cat .build/credemu-commit 2>/dev/null)" = "$$c" ] || printf '%s' "$$c" > .build/credemu-commit

build: deps-debian commit-stamp
	swift build

run: build
	$(CREDEMU) serve

# The release binary with the Swift runtime, Foundation and the C libraries linked in (libsqlite3, libsodium and
# libcrypto from Debian's archives, libmicrohttpd without HTTPS and libpsl without IDNA built from Debian's source:
# docs/install.md), and no $$ORIGIN run path: what `make install` and `make dist` ship, needing only glibc,
# libstdc++ and libgcc_s (packaging/runtime-libraries). `--pkg-config-path` puts the static libraries' directory
# first on the link line. Its own scratch path, so `make bench`'s .build/release keeps its flags.
# SwiftPM decides whether to relink; make then sees the binary's time, so `make dist` repackages only a new one.
release: $(RELEASE_BIN)

$(STATIC_DEPS)/.built: packaging/static-deps.sh | deps-debian deps-dist
	packaging/static-deps.sh $(STATIC_DEPS)
	touch $@

$(RELEASE_BIN): FORCE commit-stamp $(STATIC_DEPS)/.built | deps-debian
	swift build -c release --static-swift-stdlib --disable-local-rpath --product credemu --scratch-path $(STATIC_BUILD) \
	  --pkg-config-path $(STATIC_DEPS)/pkgconfig

FORCE:

install: release deps-dist
	install -D -m 0755 $(RELEASE_BIN) $(DESTDIR)$(PREFIX)/bin/credemu
	strip --strip-all $(DESTDIR)$(PREFIX)/bin/credemu

# .build/dist/ (packaging/dist.sh): credemu-VERSION-linux-ARCH.tar.gz, credemu_VERSION_ARCH.deb,
# credemu-VERSION-py3-none-manylinux_2_N_ARCH.whl (hatchling from the venv), credemu-VERSION.tgz (npm pack) and
# credemu-VERSION-linux-ARCH.debug, the binary's debug information; and credemu-VERSION-oci.tar, the OCI image
# (packaging/image.sh: buildah from scratch, the binary and the libraries it may load, nothing else).
IMAGE := $(DIST_DIR)/credemu-$(VERSION)-oci.tar
dist: $(DEB) $(IMAGE)

DIST_INPUTS := $(wildcard packaging/*) README.md CHANGELOG.md $(wildcard docs/*.md) $(wildcard docs/modules/*.md) providers/README.md providers/policy-pack.schema.json \
  clients/python/pyproject.toml $(wildcard clients/python/src/credemu/*.py) clients/python/hatch_build.py clients/js/package.json clients/js/credemu.mjs clients/js/playwright-fixtures.mjs clients/js/bin/credemu.mjs

$(DEB): $(RELEASE_BIN) $(DIST_INPUTS) | deps-dist deps-python deps-npm
	packaging/dist.sh $(RELEASE_BIN) $(DIST_DIR) $(DEB_VERSION) $(abspath $(PYTHON))

$(IMAGE): $(DEB) packaging/image.sh packaging/runtime-libraries | deps-dist
	$(SUDO) packaging/image.sh $(RELEASE_BIN) $(DIST_DIR) $(VERSION)

test: deps build test-swift dist dist-check test-interop test-clients sanitize

# The wheel and the npm tarball in clean roots of Debian 12 (bookworm) and 13 (trixie), made by debootstrap with only
# python3, Chromium, Node and npm from apt and cached in .build/roots (about 3 minutes each the first time, then
# about 20 s per root): ldd of the shipped binary, the README's pytest and JS quickstarts against the example RP
# (packaging/dist-check.sh). chroot and mount need root.
ROOTS := .build/roots
DIST_CHECK_SUITES ?= bookworm trixie

dist-check: dist
	@$(MAKE) --no-print-directory apt-install PACKAGES="debootstrap"
	$(SUDO) packaging/dist-check.sh $(DIST_DIR) $(ROOTS) $(DIST_CHECK_SUITES)

# A test that hangs fails the run within SWIFT_TEST_TIMEOUT seconds instead of taking CI's 90 minutes, and the
# plain run's output is line-buffered (stdbuf), so the log ends at the test that hung: piped, XCTest's output is
# block-buffered and lost when the run is killed. (The sanitizer runs get the bound but not stdbuf: their runtime
# must be the first library loaded, and stdbuf preloads its own.)
SWIFT_TEST_TIMEOUT ?= 1800
BOUNDED := timeout --kill-after=30 $(SWIFT_TEST_TIMEOUT)

test-swift:
	$(BOUNDED) stdbuf -oL -eL swift test --disable-swift-testing

# test_installed_package.py installs the .deb from `make dist` into a temporary root; given CREDEMU_DEB it
# fails rather than skips when the package is missing. The example RP's journeys (test_browser.py) run on the
# credemu pytest plugin, once per pack: the run ends with the test-by-pack matrix. test_engines.py runs them in
# Chromium, Firefox and WebKitGTK (screenshots in .build/artifacts/engines/).
test-interop: deps-python deps-clients deps-browser deps-valgrind
	CREDEMU_BIN=$(abspath $(CREDEMU)) CREDEMU=$(abspath $(CREDEMU)) CREDEMU_DEB=$(abspath $(DEB)) CREDEMU_IMAGE=$(abspath $(IMAGE)) $(PYTHON) -m pytest Tests/interop -q

# ---- The clients: clients/python (the credemu package and its pytest plugin) and clients/js (credemu.mjs) ----
# The package goes into the venv (its build backend, hatchling, is pinned in requirements.txt: no build isolation,
# nothing fetched), reinstalled when its sources change. The JS module needs Node 20 (Debian's nodejs when
# missing); its Playwright test drives Chromium through the playwright-core that the Python playwright wheel ships.
CLIENT_PYTHON := clients/python/pyproject.toml $(wildcard clients/python/src/credemu/*.py)

deps-clients: deps-python deps-node $(VENV)/.credemu-client
$(VENV)/.credemu-client: $(VENV)/.installed $(CLIENT_PYTHON)
	$(VENV)/bin/pip install -q --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall ./clients/python
	touch $@

deps-node:
	@command -v node >/dev/null || $(MAKE) --no-print-directory apt-install PACKAGES="nodejs"

# make dist's npm pack (Debian's nodejs comes without npm).
deps-npm: deps-node
	@command -v npm >/dev/null || $(MAKE) --no-print-directory apt-install PACKAGES="npm"

test-clients: deps-clients build
	CREDEMU=$(abspath $(CREDEMU)) $(PYTHON) -m pytest clients/python/tests -q -p no:cacheprovider
	CREDEMU=$(abspath $(CREDEMU)) PLAYWRIGHT_CORE="$$($(PYTHON) -c 'import os, playwright; print(os.path.join(os.path.dirname(playwright.__file__), "driver", "package"))')" \
	  node --test clients/js/

# Sanitizers, each build in its own scratch path so the normal .build stays as it is (about 1.5 minutes from clean
# on 2 cores): the Swift tests, then Tests/sanitize/workload.py against that build's `credemu serve` (every route
# group, malformed input, concurrent clients), which fails on a sanitizer report, a 5xx, a crash or an unclean exit.
# `--sanitize` instruments the C target (the vault's VFS) too, not only the Swift code.
# - AddressSanitizer: LeakSanitizer is off for the XCTest run only. XCTest never frees its test cases (everything
#   they hold shows as leaked), and LeakSanitizer misses pointers that Swift keeps in multi-payload enums' spare
#   bits (CBOR and COSE key values in a cache show as leaked). The server and the CLI run with it on.
# - ThreadSanitizer: Synchronization.Mutex locks with a futex that TSan does not see, so it reports the accesses
#   inside `withLock` as races (SecureRandom's pool, AcceptedPairs, a test's collector). Tests/sanitize/tsan.supp
#   suppresses exactly the closures of withLock's shape; everything else is checked, NSLock and DispatchQueue
#   included. The price: a race between a withLock body and an unlocked access elsewhere is suppressed too.
ASAN_BUILD := .build/asan
TSAN_BUILD := .build/tsan
SANITIZE_WORKLOAD := Tests/sanitize/workload.py

sanitize: sanitize-address sanitize-thread

sanitize-address: deps-debian
	swift build --build-tests --sanitize=address --scratch-path $(ASAN_BUILD)
	ASAN_OPTIONS=detect_leaks=0 $(BOUNDED) swift test --skip-build --disable-swift-testing --sanitize=address --scratch-path $(ASAN_BUILD)
	ASAN_OPTIONS=detect_leaks=1 python3 $(SANITIZE_WORKLOAD) $(ASAN_BUILD)/debug/credemu

sanitize-thread: deps-debian
	swift build --build-tests --sanitize=thread --scratch-path $(TSAN_BUILD)
	TSAN_OPTIONS=suppressions=$(abspath Tests/sanitize/tsan.supp) $(BOUNDED) swift test --skip-build --disable-swift-testing --sanitize=thread --scratch-path $(TSAN_BUILD)
	TSAN_OPTIONS=suppressions=$(abspath Tests/sanitize/tsan.supp) python3 $(SANITIZE_WORKLOAD) $(TSAN_BUILD)/debug/credemu

bench: deps-debian deps-browser deps-python
	swift build -c release --product credemu-bench
	swift build -c release --product credemu
	.build/release/credemu-bench 1.5
	CREDEMU_BENCH_DOCS=1 $(PYTHON) bench/side_by_side.py .build/release 0.4 7

# The check a change to the ceremony path runs before it lands (docs/benchmarks.md, "Before a change lands"): this
# tree's release build beside BASE's (built once under .build/compare/), 9 alternating rounds; exit 1 on a regression.
BASE ?= main
bench-compare: deps-debian deps-python
	swift build -c release --product credemu-bench
	swift build -c release --product credemu
	$(PYTHON) bench/compare_builds.py .build/release "$$(bench/base_build.sh $(BASE))" 0.4 9

# Vaults of 10k, 100k and 1M passkeys with a 100,000-row event log (about 4 minutes on 2 cores).
bench-scale: deps-debian
	swift build -c release --product credemu-bench
	swift build -c release --product credemu
	.build/release/credemu-bench scale 10000 100000 1000000

clean:
	rm -rf .build $(VENV)
