"""The README's three quickstarts, run as written: pytest and Playwright against the example RP
(examples/relying-party), only the RP's origin, the module paths and the browser binary put in for this machine;
the command line's in an empty directory with the binary on PATH."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import playwright
import pytest

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# packaging/quickstart.py takes the blocks out of the README, for this test and for make dist-check's clean roots.
sys.path.insert(0, str(ROOT / "packaging"))
from quickstart import PLACEHOLDER, quickstart  # noqa: E402


@pytest.fixture
def example_rp():
    rp = subprocess.Popen([sys.executable, str(ROOT / "examples" / "relying-party" / "app.py"), "--port", "0"],
                          stdout=subprocess.PIPE, text=True)
    yield rp.stdout.readline().strip()
    rp.terminate()
    rp.wait(10)


def test_the_python_quickstart_gives_a_first_automatic_upgrade(pytester, example_rp):
    pytester.makeconftest(f'''
        import pytest
        from playwright.sync_api import sync_playwright

        @pytest.fixture
        def page():
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path={CHROMIUM!r}, args=["--no-sandbox", "--disable-dev-shm-usage"])
                yield browser.new_page()
                browser.close()
    ''')
    pytester.makepyfile(test_quickstart=quickstart("python").replace(PLACEHOLDER, example_rp))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


@pytest.mark.skipif(shutil.which("node") is None, reason="no node (make test installs Debian's nodejs)")
def test_the_javascript_quickstart_gives_a_first_automatic_upgrade(tmp_path, example_rp):
    core = Path(playwright.__file__).parent / "driver" / "package" / "index.mjs"
    script = quickstart("js").replace(PLACEHOLDER, example_rp)
    script = script.replace("from 'playwright'", f"from {str(core)!r}")
    script = script.replace("from 'credemu'", f"from {str(ROOT / 'clients' / 'js' / 'credemu.mjs')!r}")
    script = script.replace("chromium.launch()", f"chromium.launch({{ executablePath: {CHROMIUM!r}, args: ['--no-sandbox'] }})")
    (tmp_path / "quickstart.mjs").write_text(script)
    done = subprocess.run(["node", str(tmp_path / "quickstart.mjs")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "rpId: 'localhost'" in done.stdout and "kind: 'create'" in done.stdout and "outcome: 'success'" in done.stdout, done.stdout


def test_the_command_line_quickstart_gives_a_silent_passkey(tmp_path):
    binary = Path(os.environ["CREDEMU"]).resolve()
    env = dict(os.environ, PATH=f"{binary.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("CREDEMU_VAULT", None)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", quickstart("cli")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr

    def credemu(*args):
        return json.loads(subprocess.run([str(binary), *args], cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout)
    [passkey] = credemu("vault", "list")
    assert passkey["rpId"] == "shop.example.com" and passkey["userName"] == "alice@example.com"
    created = credemu("events", "--kind", "create")[-1]
    assert created["outcome"] == "success" and created["detail"]["silent"] is True
    assert created["detail"]["authenticatorFlags"]["UP"] is False and created["detail"]["authenticatorFlags"]["UV"] is False
