"""`credemu scenario run` from the command line, and its HTML report rendered in headless Chromium."""
import json
import os
import subprocess
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from conftest import BINARY, ROOT

SCENARIOS = ROOT / "scenarios"
ARTIFACTS = ROOT / "artifacts" / "scenarios"


def run(*args):
    proc = subprocess.run([BINARY, "scenario", "run", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


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
    options = Options()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1600,1000", "--disable-gpu"]:
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    try:
        driver.get(report.as_uri())
        headers = driver.find_elements(By.CSS_SELECTOR, "thead th")
        assert len(headers) == 1 + 8, "a column per provider"
        diverging = driver.find_elements(By.CSS_SELECTOR, "tr.diverges")
        expected = json.loads((SCENARIOS / "expected" / "accepted-list-empty-then-full.json").read_text())
        assert len(diverging) == sum(step["diverges"] for step in expected["steps"]) > 0
        background = diverging[0].value_of_css_property("background-color")
        assert background != driver.find_element(By.CSS_SELECTOR, "tr.same").value_of_css_property("background-color")
        assert driver.find_elements(By.CSS_SELECTOR, "ul.findings li")
        driver.save_screenshot(str(ARTIFACTS / "accepted-list-empty-then-full.png"))
    finally:
        driver.quit()
