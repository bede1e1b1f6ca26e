# credemu: `make run` runs the main job, `make test` installs what is missing and runs every test.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV        := .venv
PYTHON      := $(VENV)/bin/python
DEB_PACKAGES := pkg-config libsqlite3-dev libsodium-dev libssl-dev libmicrohttpd-dev libpsl-dev publicsuffix
# The end-to-end tests' real browser; it upgrades some system packages, so only `make test` installs it.
BROWSER_PACKAGES := chromium chromium-driver
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
CREDEMU     := .build/debug/credemu

.PHONY: help deps deps-debian deps-browser deps-python build run test test-swift test-interop bench clean

help:
	@echo "make run    build and serve the API and browser shim on the default vault (.credemu/vault.db)"
	@echo "make test   install missing packages, build, run the Swift and interop tests"
	@echo "make bench  in-process ceremonies/s beside raw keygen and signature costs"

deps: deps-debian deps-browser deps-python

# Debian's -dev packages for the C libraries; installed only when missing.
deps-debian:
	@$(MAKE) --no-print-directory apt-install PACKAGES="$(DEB_PACKAGES)"

deps-browser:
	@$(MAKE) --no-print-directory apt-install PACKAGES="$(BROWSER_PACKAGES)"

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
$(VENV)/.installed: Tests/interop/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r Tests/interop/requirements.txt
	touch $@

build: deps-debian
	swift build

run: build
	$(CREDEMU) serve

test: deps build test-swift test-interop

test-swift:
	swift test --disable-swift-testing

test-interop: deps-python
	CREDEMU_BIN=$(abspath $(CREDEMU)) $(PYTHON) -m pytest Tests/interop -q

bench: deps-debian
	swift build -c release --product credemu-bench
	swift build -c release --product credemu
	.build/release/credemu-bench 1.5

clean:
	rm -rf .build $(VENV)
