"""bench/instruction_cost.py, a served ceremony's instructions under callgrind, run on the debug build.

The same build on both sides: its two counts agree, and each is a ceremony's worth (an ES256 signature's
instructions and more), not start-up's. They agree within about 1% at a few hundred release-build ceremonies; the
80 here spread more (a CI run of 40 gave 0.934), because the server's background work (the event log's batches, the
staging log's moves) runs by the clock, and valgrind's clock runs slowly and unevenly.
"""
import re
import subprocess
import sys

from conftest import BINARY, ROOT


def test_a_build_beside_itself_costs_the_same_instructions_a_ceremony():
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "instruction_cost.py"), BINARY, BINARY, "--kind", "get", "--calls", "80"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    match = re.search(r"^get +instructions a served ceremony: \S+ ([\d.]+)k, \S+ ([\d.]+)k; after/before ([\d.]+)$", run.stdout, re.M)
    assert match, run.stdout
    mine, theirs, ratio = float(match[1]), float(match[2]), float(match[3])
    # A signature alone is about 250k instructions in the release build; the debug build's ceremony is more.
    assert mine > 250 and theirs > 250, run.stdout
    assert 0.85 <= ratio <= 1.15, run.stdout
