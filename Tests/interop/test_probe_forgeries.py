"""`credemu probe --forgeries all` against forgery_targets.py: py_webauthn's and python-fido2's servers with their
documented checks refuse every forged response (exit 0); each bug switch is named as exactly its forgeries (exit 1)."""
import json
import subprocess

import pytest

from conftest import BINARY, ROOT
from forgery_targets import EXPECTED, ForgeryTarget

ARTIFACTS = ROOT / ".build" / "artifacts" / "probe"


def probe(target, tmp_path, name):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([BINARY, "probe", target.url, "--origin", target.origin, "--providers", "gpm", "--forgeries", "all",
                           "--log", str(tmp_path / "probe.db"), "--format", "json"], capture_output=True, text=True, timeout=300)
    report = json.loads(proc.stdout)
    html = subprocess.run([BINARY, "probe", target.url, "--origin", target.origin, "--providers", "gpm", "--forgeries", "all",
                           "--log", str(tmp_path / "probe-html.db"), "--format", "html", "--out", str(ARTIFACTS / f"{name}.html")],
                          capture_output=True, text=True, timeout=300)
    assert html.returncode == proc.returncode, html.stdout + html.stderr
    return proc, report, html.stdout


def accepted(report):
    return {f"{c['forgery']}/{c['ceremony']}" for c in report["forgeries"] if c["outcome"] == "accepted"}


@pytest.mark.parametrize("library", ["py_webauthn", "fido2"])
def test_a_correct_server_refuses_every_forged_response_and_exits_zero(library, tmp_path):
    target = ForgeryTarget(library).start()
    try:
        proc, report, table = probe(target, tmp_path, f"forgeries-{library}")
    finally:
        target.stop()
    assert proc.returncode == 0, table
    assert accepted(report) == set()
    refused = {f"{c['forgery']}/{c['ceremony']}" for c in report["forgeries"] if c["outcome"] == "refused"}
    # Every forgery reached the server but UP=0 in a registration (the server takes automatic upgrades, and the
    # interface cannot say which registration is modal) and an unoffered algorithm where none is left.
    assert {"badSignature/assertion", "otherOrigin/registration", "otherUsersCredential/assertion", "replayed/assertion",
            "counterRegression/assertion", "badAttestation/registration", "unofferedAlgorithm/registration",
            "crossOrigin/assertion", "trailingBytes/registration", "clientDataNotJSON/assertion"} <= refused, report["forgeries"]
    assert "The server refused every forged response." in table


@pytest.mark.parametrize("bug", sorted(EXPECTED))
def test_each_bug_switch_is_named_as_exactly_its_forgeries_and_exits_one(bug, tmp_path):
    target = ForgeryTarget("py_webauthn", forgery_bugs={bug}).start()
    try:
        proc, report, table = probe(target, tmp_path, f"forgeries-{bug}")
    finally:
        target.stop()
    assert proc.returncode == 1, table
    assert accepted(report) == EXPECTED[bug], report["forgeries"]
    assert report["bugs"] == [] and report["passed"] is False
    assert "accepted forgery" in table and "breaks: WebAuthn L3 §7." in table
