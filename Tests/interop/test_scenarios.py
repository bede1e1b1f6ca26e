"""`credemu scenario run` from the command line, and its HTML report rendered in headless Chromium."""
import json
import subprocess
from pathlib import Path

from selenium.webdriver.common.by import By

from conftest import BINARY, ROOT
from shim_drivers import selenium_chromium

SCENARIOS = ROOT / "scenarios"
ARTIFACTS = ROOT / "artifacts" / "scenarios"


def run(*args):
    proc = subprocess.run([BINARY, "scenario", "run", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def chromium(width, height):
    return selenium_chromium(window=(width, height))


def test_json_output_matches_the_expected_matrix():
    for path in sorted(SCENARIOS.glob("*.json")):
        assert json.loads(run(str(path), "--format", "json")) == json.loads((SCENARIOS / "expected" / path.name).read_text()), path.name


def test_provider_selection_and_formats():
    table = run(str(SCENARIOS / "rename-with-display-name.json"), "--providers", "gpm,apple@ios")
    assert "gpm@chrome-desktop" in table and "apple@ios" in table and "≠ signalCurrentUserDetails" in table
    markdown = run(str(SCENARIOS / "rename-with-display-name.json"), "--providers", "gpm,apple", "--format", "markdown")
    assert "| step | gpm (chrome-desktop) | apple (safari) |" in markdown
    assert "displayNameNotSupported" in markdown
    bad = subprocess.run([BINARY, "scenario", "run", str(SCENARIOS / "nudge-skipped.json"), "--providers", "nope"], capture_output=True, text=True)
    assert bad.returncode == 2 and "No pack 'nope'" in bad.stderr


def test_html_report_renders_in_chromium():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    report = ARTIFACTS / "accepted-list-empty-then-full.html"
    run(str(SCENARIOS / "accepted-list-empty-then-full.json"), "--format", "html", "--out", str(report))
    driver = chromium(1600, 1000)
    try:
        driver.get(report.as_uri())
        headers = driver.find_elements(By.CSS_SELECTOR, "thead th")
        diverging = driver.find_elements(By.CSS_SELECTOR, "tr.diverges")
        expected = json.loads((SCENARIOS / "expected" / "accepted-list-empty-then-full.json").read_text())
        assert len(headers) == 1 + len(expected["providers"]), "a column per provider"
        assert len(diverging) == sum(step["diverges"] for step in expected["steps"]) > 0
        background = diverging[0].value_of_css_property("background-color")
        assert background != driver.find_element(By.CSS_SELECTOR, "tr.same").value_of_css_property("background-color")
        assert driver.find_elements(By.CSS_SELECTOR, "ul.findings li")
        driver.save_screenshot(str(ARTIFACTS / "accepted-list-empty-then-full.png"))
    finally:
        driver.quit()


def test_the_gpm_versus_bitwarden_upgrade_row_diverges_in_the_html_report():
    """GPM upgrades silently with UP=0 UV=0, Bitwarden with its sheet and UP=1 UV=1: the same "created" for the RP's
    counters, not for what the RP reads or the user sees, so the row is marked (issue 12 item 5)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    report = ARTIFACTS / "upgrade-after-autofill-gpm-bitwarden.html"
    run(str(SCENARIOS / "upgrade-after-autofill.json"), "--providers", "gpm,bitwarden", "--format", "html", "--out", str(report))
    driver = chromium(1200, 900)
    try:
        driver.get(report.as_uri())
        diverging = driver.find_elements(By.CSS_SELECTOR, "tr.diverges")
        assert [row.find_element(By.TAG_NAME, "th").text for row in diverging] == ["≠ automatic upgrade (conditional create)"]
        observed = [cell.text for cell in diverging[0].find_elements(By.CSS_SELECTOR, "div.observed")]
        assert observed == ["UI: notice · UP=0 UV=0", "UI: sheet · UP=1 UV=1"]
        driver.save_screenshot(str(ARTIFACTS / "upgrade-after-autofill-gpm-bitwarden.png"))
    finally:
        driver.quit()


def cell_text(row, column):
    return row.find_elements(By.TAG_NAME, "td")[column].text


def test_the_device_scenarios_render_their_providers_in_the_html_report():
    """Two devices sharing one account, and one device with two providers (issue 12 item 1): each device step's
    cell names the account that answered, and a column where a device does not exist says so."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shared = ARTIFACTS / "devices-shared-account.html"
    run(str(SCENARIOS / "devices-shared-account.json"), "--providers", "gpm,apple,bitwarden", "--format", "html", "--out", str(shared))
    two = ARTIFACTS / "device-two-providers.html"
    run(str(SCENARIOS / "device-two-providers.json"), "--providers", "gpm,generic-third-party@android,bitwarden",
        "--format", "html", "--out", str(two))
    driver = chromium(1600, 1200)
    try:
        driver.get(shared.as_uri())
        rows = {row.find_element(By.TAG_NAME, "th").text.lstrip("≠ "): row for row in driver.find_elements(By.CSS_SELECTOR, "tbody tr")}
        phone_signin = rows["sign-in on the phone: the synced passkey"]
        assert "signed in with pk1 from account" in cell_text(phone_signin, 0), "the laptop's passkey is offered on the phone"
        assert "no phone here" in cell_text(phone_signin, 2), "Bitwarden's extension runs on no phone"
        bob = rows["automatic upgrade for bob on the phone"]
        assert "silent no-op: optOut" in cell_text(bob, 0) and "silent no-op: optOut" in cell_text(bob, 1)
        driver.save_screenshot(str(ARTIFACTS / "devices-shared-account.png"))

        driver.get(two.as_uri())
        rows = {row.find_element(By.TAG_NAME, "th").text.lstrip("≠ "): row for row in driver.find_elements(By.CSS_SELECTOR, "tbody tr")}
        laptop = rows["modal create on the laptop"]
        assert "provider: gpm" in cell_text(laptop, 0) and "provider: other" in cell_text(laptop, 2), "the extension intercepts"
        assert "no laptop here" in cell_text(laptop, 1)
        phone = rows["modal create on the phone"]
        assert "provider: other" in cell_text(phone, 1), "Android's preferred provider"
        signal = rows["the RP signals pk3 unknown on the laptop"]
        assert "provider: gpm" in cell_text(signal, 2) and "other" not in cell_text(signal, 2).split("provider:")[1], "never the extension"
        old = rows["the RP signals pk4 unknown on the Android 13 phone"]
        assert "provider: gpm" in cell_text(old, 1) and "gpm,other" not in cell_text(old, 1)
        assert driver.find_elements(By.CSS_SELECTOR, "tr.diverges")
        driver.save_screenshot(str(ARTIFACTS / "device-two-providers.png"))
    finally:
        driver.quit()
