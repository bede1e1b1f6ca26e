"""`credemu probe --adapter`'s stale-account-context checks (issue 35.2; seed 002 N2.5-AC03, seed 000 N2.6-AC03 and
N2.6-AC06) against the reference RP with cookie sessions (stale_session_targets.py): a correct server gets no finding
and exit 0; each switch is named under its criteria, exit 1, and what the probe says matches what the server stored.
The Conformance API, which has no session, says the checks need an adapter. HTML reports go to
.build/artifacts/probe/ (a CI artifact)."""
import json
import subprocess

import pytest

from conftest import BINARY, ROOT
from probe_targets import Target
from stale_session_targets import ADAPTER, StaleSessionTarget

ARTIFACTS = ROOT / ".build" / "artifacts" / "probe"
STALE = ("signedOut", "switchedAccount", "supersededSignIn")


def probe(target, tmp_path, adapter=ADAPTER, name="stale"):
    """One run: the table on standard output, the JSON report and an HTML one beside it."""
    extra = []
    if adapter is not None:
        (tmp_path / "adapter.json").write_text(json.dumps(adapter))
        extra = ["--adapter", str(tmp_path / "adapter.json")]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    html = ARTIFACTS / f"{name}.html"
    common = [BINARY, "probe", target.url, *extra, "--providers", "gpm"]
    proc = subprocess.run([*common, "--log", str(tmp_path / "p.db"), "--format", "json", "--out", str(tmp_path / "r.json")],
                          capture_output=True, text=True, timeout=300)
    as_html = subprocess.run([*common, "--log", str(tmp_path / "h.db"), "--format", "html", "--out", str(html)],
                             capture_output=True, text=True, timeout=300)
    assert as_html.returncode == proc.returncode, (proc.stdout, as_html.stdout, as_html.stderr)
    return proc, json.loads((tmp_path / "r.json").read_text()), html.read_text()


def checks(report):
    return {c["check"]: c for c in report["staleContext"]["checks"]}


def stale_accounts(target):
    """The server's own record: the probe's stale-check accounts that hold a credential."""
    with target.lock:
        return sorted(user for user, records in target.users.items() if "-stale-" in user and records)


def test_a_server_binding_the_ceremony_to_its_session_has_no_stale_finding_and_exits_zero(tmp_path):
    target = StaleSessionTarget().start()
    try:
        proc, report, html = probe(target, tmp_path, name="stale-correct")
        stored = stale_accounts(target)
    finally:
        target.stop()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["passed"] and report["bugs"] == []
    assert {k: c["outcome"] for k, c in checks(report).items()} == dict.fromkeys([*STALE, "optionsAfterSwitch"], "passed")
    assert report["staleContext"]["provider"] == "gpm@chrome-desktop"
    assert "do not vary per pack" in report["staleContext"]["note"]
    assert "signs in as neither account A nor account B" in checks(report)["switchedAccount"]["message"]
    assert stored == [], "the server stored a stale credential the probe did not see"
    assert "passed [N2.5-AC03, N2.6-AC06] registration answered after sign-out" in proc.stdout
    assert "Stale account context" in html and "accepted every response" in proc.stdout


@pytest.mark.parametrize("bug,found,signs_in_as", [
    # After a sign-out no one is signed in, so the current-user bug refuses that one.
    ("stale_to_current_user", {"switchedAccount", "supersededSignIn"}, {"switchedAccount": "account B", "supersededSignIn": "account A"}),
    ("stale_to_options_user", set(STALE), dict.fromkeys(STALE, "account A")),
])
def test_a_server_storing_a_stale_registration_is_named_under_n25_ac03_and_n26_ac06(bug, found, signs_in_as, tmp_path):
    target = StaleSessionTarget(bugs={bug}).start()
    try:
        proc, report, html = probe(target, tmp_path, name=f"stale-{bug}")
        stored = stale_accounts(target)
    finally:
        target.stop()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert not report["passed"]
    assert report["bugs"] == [] and report["unexplained"] == [], "the stale bug is no variant's"
    results = checks(report)
    assert {k for k, c in results.items() if c["outcome"] == "finding"} == found, results
    for kind in found:
        assert results[kind]["criteria"] == ["N2.5-AC03", "N2.6-AC06"]
        assert f"signed in as {signs_in_as[kind]}: the server stored it" in results[kind]["message"], results[kind]
        assert "keep the pending registration in the session that began it" in results[kind]["fix"]
        assert f"FINDING [N2.5-AC03, N2.6-AC06] {results[kind]['title']}" in proc.stdout
    assert "fix: keep the pending registration" in proc.stdout
    assert "N2.5-AC03 / N2.6-AC06" in html
    # What the probe says is what the server holds: a credential on a stale check's account for each finding, in
    # each of the two runs (JSON and HTML).
    assert len(stored) == 2 * len(found), stored


def test_options_built_for_the_sessions_earlier_account_are_named_under_n26_ac03(tmp_path):
    target = StaleSessionTarget(bugs={"options_from_earlier_account"}).start()
    try:
        proc, report, _ = probe(target, tmp_path, name="stale-options_from_earlier_account")
    finally:
        target.stop()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    results = checks(report)
    assert {k for k, c in results.items() if c["outcome"] == "finding"} == {"optionsAfterSwitch"}, results
    assert results["optionsAfterSwitch"]["criteria"] == ["N2.6-AC03"]
    assert "name account A" in results["optionsAfterSwitch"]["message"]
    assert "FINDING [N2.6-AC03] registration options after switching accounts" in proc.stdout


def test_the_conformance_api_and_an_adapter_without_sign_out_say_the_checks_need_an_adapter(tmp_path):
    target = Target("py_webauthn").start()
    try:
        conformance, report, _ = probe(target, tmp_path, adapter=None, name="stale-conformance")
    finally:
        target.stop()
    assert conformance.returncode == 0, conformance.stdout + conformance.stderr
    assert {c["outcome"] for c in checks(report).values()} == {"needsAdapter"}
    assert "FIDO2 Conformance Test API has no session" in checks(report)["signedOut"]["message"]
    assert "needs an adapter [N2.5-AC03, N2.6-AC06] registration answered after sign-out" in conformance.stdout

    target = StaleSessionTarget(bugs={"stale_to_options_user"}).start()
    try:
        no_sign_out, report, _ = probe(target, tmp_path, adapter={k: v for k, v in ADAPTER.items() if k != "signOut"},
                                       name="stale-no-signout")
    finally:
        target.stop()
    assert no_sign_out.returncode == 0, no_sign_out.stdout
    assert {c["outcome"] for c in checks(report).values()} == {"needsAdapter"}
    assert "no signOut step" in checks(report)["switchedAccount"]["message"]


def test_a_malformed_sign_out_step_is_a_usage_error_naming_it(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({**ADAPTER, "signOut": {"path": "/session", "method": "PATCH"}}))
    proc = subprocess.run([BINARY, "probe", "http://localhost:9/", "--adapter", str(tmp_path / "a.json"), "--log", str(tmp_path / "l.db")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("credemu: BadAdapter:") and "'signOut.method' must be one of POST, GET, DELETE" in proc.stderr
    assert not (tmp_path / "l.db").exists(), "nothing is opened on a usage error"
