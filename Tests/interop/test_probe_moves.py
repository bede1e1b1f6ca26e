"""`credemu probe --moves` against reference RP servers (move_targets.py): a passkey registered with the first
provider moves into each other column's pack through a CXF document and signs in. py_webauthn's and python-fido2's
servers take every moved passkey; each switch that breaks after a move is named as exactly its finding."""
import json
import subprocess

import pytest

from conftest import BINARY
from move_targets import MoveTarget


def probe(target, tmp_path, *extra):
    proc = subprocess.run([BINARY, "probe", target.url, "--log", str(tmp_path / "probe.db"), "--format", "json", *extra],
                          capture_output=True, text=True, timeout=300)
    return proc, json.loads(proc.stdout) if proc.stdout.startswith("{") else None


def probe_server(library, tmp_path, *extra, **switches):
    """`credemu probe` against a reference server of `library` with `switches` (MoveTarget's), stopped afterwards."""
    target = MoveTarget(library, **switches).start()
    try:
        return probe(target, tmp_path, *extra)
    finally:
        target.stop()


def moved(report):
    return next(v for v in report["variants"] if v["variant"] == "signInAfterMove")["cells"]


@pytest.fixture(params=["py_webauthn", "fido2"])
def library(request):
    return request.param


def test_a_correct_server_signs_in_every_moved_passkey_and_the_cells_say_what_changed(library, tmp_path):
    proc, report = probe_server(library, tmp_path, "--providers", "gpm,apple,windows-hello,bitwarden", "--moves", "all")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["bugs"] == [] and report["unexplained"] == []
    cells = moved(report)
    assert cells["gpm@chrome-desktop"]["outcome"] == "notApplicable" and "exporter" in cells["gpm@chrome-desktop"]["message"]
    for column in ("apple@safari", "windows-hello@chrome-windows", "bitwarden@chrome-desktop"):
        assert cells[column]["outcome"] == "accepted", cells[column]
        assert "moved from gpm@chrome-desktop through a CXF document" in cells[column]["note"], cells[column]
    hello = cells["windows-hello@chrome-windows"]
    assert "backupEligibilityChangedByMove" in hello["traits"], hello
    assert "registered with gpm@chrome-desktop: UP=1 UV=1 BE=1 BS=1" in hello["sent"] and "BE=0 BS=0 signCount=0" in hello["sent"], hello
    assert "the AAGUID changed from ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4 to 00000000-0000-0000-0000-000000000000" in cells["apple@safari"]["note"]
    assert "backupEligibilityChangedByMove" not in cells["apple@safari"]["traits"]


def test_without_moves_the_variant_is_not_in_the_report(tmp_path):
    proc, report = probe_server("py_webauthn", tmp_path, "--providers", "gpm")
    assert proc.returncode == 0, proc.stderr
    assert "signInAfterMove" not in [v["variant"] for v in report["variants"]]


def test_a_server_refusing_changed_backup_flags_is_named_for_them_alone(library, tmp_path):
    proc, report = probe_server(library, tmp_path, "--providers", "gpm,apple,windows-hello", "--moves", "all", move_bugs={"reject_changed_backup_flags"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert [b["trait"] for b in report["bugs"]] == ["backupEligibilityChangedByMove"], report["bugs"]
    assert report["bugs"][0]["cells"] == ["signInAfterMove @ windows-hello@chrome-windows"]
    assert report["alsoSuspected"] == [] and report["unexplained"] == []
    cells = moved(report)
    assert cells["windows-hello@chrome-windows"]["message"] == "The passkey's backup flags changed since it was registered: refused."
    assert cells["apple@safari"]["outcome"] == "accepted"


def test_a_server_whose_counter_must_grow_is_named_for_the_counter_a_move_stops(library, tmp_path):
    """Windows Hello and a security key are the packs that count (a key imports nothing in life: its pack's
    import.backupFlags says so), so every sign-in grows but the moved passkey's 0 after a counting exporter."""
    proc, report = probe_server(library, tmp_path, "--providers", "windows-hello,security-key", "--moves", "all", bugs={"counter_must_grow"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert [b["trait"] for b in report["bugs"]] == ["counterStoppedByMove"], report["bugs"]
    cell = moved(report)["security-key@chrome-desktop"]
    assert cell["outcome"] == "rejected" and cell["suspects"] == ["counterStoppedByMove"], cell
    assert "signCount=0" in cell["sent"]


def test_a_server_pinning_an_accounts_aaguid_never_sees_a_move_in_a_sign_in(library, tmp_path):
    """An assertion carries no AAGUID: the move's cell names the change in its note, and nothing is refused."""
    proc, report = probe_server(library, tmp_path, "--providers", "gpm,apple", "--moves", "apple", move_bugs={"reject_changed_aaguid"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cell = moved(report)["apple@safari"]
    assert cell["outcome"] == "accepted" and "no sign-in carries" in cell["note"], cell


def test_moves_naming_a_pack_that_is_not_a_column_is_a_usage_error(tmp_path):
    proc = subprocess.run([BINARY, "probe", "http://localhost:9/", "--log", str(tmp_path / "l.db"), "--providers", "gpm",
                           "--moves", "apple"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--moves names apple@safari" in proc.stderr, proc.stderr
