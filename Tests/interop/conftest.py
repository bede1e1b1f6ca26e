"""Shared helpers for the interop suite: run the credemu CLI, build options with py_webauthn, verify with
py_webauthn and python-fido2's Fido2Server."""
import contextlib
import importlib.metadata
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from fido2.attestation import AttestationVerifier
from fido2.server import Fido2Server
from fido2.utils import websafe_encode
from fido2.webauthn import AttestedCredentialData, PublicKeyCredentialRpEntity
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers.structs import AttestationFormat, PublicKeyCredentialDescriptor

ROOT = Path(__file__).resolve().parents[2]
BINARY = os.environ.get("CREDEMU_BIN", str(ROOT / ".build" / "debug" / "credemu"))
# The credemu pytest plugin (clients/python) finds the binary by $CREDEMU. `make deps-python` installs the package;
# a venv without it gets the plugin from the source tree.
os.environ.setdefault("CREDEMU", BINARY)
# The third-party RP journeys' fixtures (rp_journeys.py), registered once for every module that uses them: a
# session-scoped one imported into two modules would start two Playwright drivers in one process.
pytest_plugins = ["rp_journeys", "leak_guard"]   # leak_guard: no credemu outlives the test that started it
if not any(e.name == "credemu" for e in importlib.metadata.entry_points(group="pytest11")):
    sys.path.insert(0, str(ROOT / "clients" / "python" / "src"))
    pytest_plugins.append("credemu.pytest_plugin")


class Credemu:
    """One vault, driven through the CLI exactly as another tool would script it. By default it plays the
    built-in WebAuthn reference policy (all three algorithms); `profile` switches to another profile."""

    def __init__(self, directory: Path, profile="spec", binary=None, cwd=None, env=None):
        self.vault = directory / "vault.db"
        self.profile = profile
        self.binary, self.cwd, self.env = binary or BINARY, cwd, env
        if profile == "spec":
            subprocess.run([self.binary, "--vault", str(self.vault), "profile", "create", "spec", "--pack", "webauthn-spec"],
                           capture_output=True, check=True, timeout=60, cwd=cwd, env=env)

    def run(self, *args, input=None, check_exit=None, profile=None):
        proc = subprocess.run(
            [self.binary, "--vault", str(self.vault), "--profile", profile or self.profile, *args],
            input=input,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=self.cwd,
            env=self.env,
        )
        if check_exit is not None:
            assert proc.returncode == check_exit, (proc.returncode, proc.stdout, proc.stderr)
        return proc

    def json(self, *args, input=None, exit_code=0):
        proc = self.run(*args, input=input, check_exit=exit_code)
        return json.loads(proc.stdout)

    def create(self, origin, options, *extra, exit_code=0):
        text = options if isinstance(options, str) else options_to_json(options)
        return self.json("create", "--origin", origin, *extra, input=text, exit_code=exit_code)

    def get(self, origin, options, *extra, exit_code=0):
        text = options if isinstance(options, str) else options_to_json(options)
        return self.json("get", "--origin", origin, *extra, input=text, exit_code=exit_code)

    def export(self):
        if not self.vault.exists():
            return None
        return self.run("vault", "export", "--include-secrets", check_exit=0).stdout


@pytest.fixture
def credemu(tmp_path):
    return Credemu(tmp_path)


class TrustedRoot(AttestationVerifier):
    """python-fido2's attestation check with one trusted root (DER) for every authenticator."""

    def __init__(self, root_der):
        super().__init__()
        self.root_der = root_der

    def ca_lookup(self, attestation_result, auth_data):
        return self.root_der


def verify_registration_both(response, options, origin, rp_id, require_uv=False, require_up=True, root_pem=None):
    """Verifies a registration with py_webauthn and with python-fido2's Fido2Server; returns py_webauthn's result.
    With `root_pem`, both also check that the attestation's certificate chain (packed or fido-u2f x5c) ends there."""
    roots = {AttestationFormat.PACKED: [root_pem], AttestationFormat.FIDO_U2F: [root_pem]} if root_pem else None
    verified = verify_registration_response(
        credential=response,
        expected_challenge=options.challenge,
        expected_origin=origin,
        expected_rp_id=rp_id,
        require_user_verification=require_uv,
        require_user_presence=require_up,
        pem_root_certs_bytes_by_fmt=roots,
    )
    verifier = TrustedRoot(x509.load_pem_x509_certificate(root_pem).public_bytes(Encoding.DER)) if root_pem else None
    server = Fido2Server(PublicKeyCredentialRpEntity(name="Example", id=rp_id), attestation=options.attestation.value,
                         verify_attestation=verifier)
    state = {"challenge": websafe_encode(options.challenge), "user_verification": "required" if require_uv else "preferred"}
    auth_data = server.register_complete(state, response)
    assert auth_data.credential_data.credential_id == verified.credential_id
    return verified, auth_data.credential_data


def verify_authentication_both(response, options, origin, rp_id, verified_registration, fido2_credential,
                               sign_count=0, require_uv=False):
    result = verify_authentication_response(
        credential=response,
        expected_challenge=options.challenge,
        expected_origin=origin,
        expected_rp_id=rp_id,
        credential_public_key=verified_registration.credential_public_key,
        credential_current_sign_count=sign_count,
        require_user_verification=require_uv,
    )
    server = Fido2Server(PublicKeyCredentialRpEntity(name="Example", id=rp_id))
    state = {"challenge": websafe_encode(options.challenge), "user_verification": "required" if require_uv else "preferred"}
    matched = server.authenticate_complete(state, [fido2_credential], response)
    assert matched.credential_id == verified_registration.credential_id
    return result


def register_and_sign_in(credemu, origin="https://shop.example.com", rp_id="example.com"):
    """A modal registration and a sign-in with it through the CLI, both verified by py_webauthn and python-fido2;
    returns the credential ID. The sign-in lists the credential, as an RP that knows its user does: a security key's
    credential is not discoverable unless the RP asks for one."""
    options = generate_registration_options(rp_id=rp_id, rp_name="Shop", user_name="alice@example.com")
    verified, fido2_credential = verify_registration_both(credemu.create(origin, options), options, origin, rp_id)
    request = generate_authentication_options(rp_id=rp_id, allow_credentials=[PublicKeyCredentialDescriptor(id=verified.credential_id)])
    verify_authentication_both(credemu.get(origin, request), request, origin, rp_id, verified, fido2_credential)
    return verified.credential_id


STRICT_CSP = "default-src 'self'; script-src 'self' 'unsafe-inline'"


@contextlib.contextmanager
def example_rp_serving(csp=None):
    """examples/relying-party/app.py on a free port, every answer with `csp` when given: its origin."""
    rp = subprocess.Popen([sys.executable, str(ROOT / "examples" / "relying-party" / "app.py"), "--port", "0"]
                          + (["--csp", csp] if csp else []), stdout=subprocess.PIPE, text=True)
    try:
        yield rp.stdout.readline().strip()
    finally:
        rp.terminate()
        rp.wait(10)


@pytest.fixture
def example_rp():
    """examples/relying-party/app.py on a free port: its origin."""
    with example_rp_serving() as origin:
        yield origin


# What each of credemu.browsers' engines needs installed (make deps-browser installs it from Debian).
ENGINE_NEEDS = {"chromium": ["chromium"], "firefox": ["firefox-esr"], "webkit": ["WebKitWebDriver", "Xvfb"]}


@contextlib.contextmanager
def launched_engine(name):
    """A `credemu.browsers` browser of engine `name`, closed after; the test fails naming what is not installed."""
    import shutil

    from credemu import browsers
    missing = [tool for tool in ENGINE_NEEDS[name] if shutil.which(tool) is None and not os.path.exists(f"/usr/bin/{tool}")]
    if missing:
        pytest.fail(f"{name}: {', '.join(missing)} not installed (make deps-browser installs them from Debian)")
    browser = browsers.launch(name)
    try:
        yield browser
    finally:
        browser.close()


@contextlib.contextmanager
def html_site(body, content_type="text/html", csp=None):
    """A page served at every path of http://localhost:PORT (a secure context, so WebAuthn runs there), with the
    `Content-Security-Policy` header `csp` when given; yields the origin and stops the server after."""
    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            if csp:
                self.send_header("Content-Security-Policy", csp)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://localhost:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
