"""The README's quickstarts, as written: `python3 packaging/quickstart.py python|js|cli` prints that block.
make dist-check runs them in clean roots, clients/python/tests/test_readme_quickstarts.py on this machine; both
take them from here, so both run what the README says."""
import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
MARKERS = {"python": ("quickstart-python", "python"), "js": ("quickstart-js", "js"), "cli": ("quickstart-cli", "sh")}
# The example RP's origin in the README; a check puts the RP's real URL in its place.
PLACEHOLDER = "http://localhost:8000"


def quickstart(kind):
    """The README's `kind` quickstart block, checked to be a quickstart (at most twelve lines)."""
    marker, language = MARKERS[kind]
    match = re.search(rf"<!-- {marker}:[^>]*-->\n```{language}\n(.*?)```", README.read_text(), re.S)
    if not match:
        raise SystemExit(f"README.md has no {marker} block")
    block = match.group(1)
    if kind != "cli" and PLACEHOLDER not in block:
        raise SystemExit(f"the {marker} block does not use the example RP's origin {PLACEHOLDER}")
    if len(block.strip().splitlines()) > 12:
        raise SystemExit(f"the {marker} block is no ten-line quickstart")
    return block


if __name__ == "__main__":
    sys.stdout.write(quickstart(sys.argv[1]))
