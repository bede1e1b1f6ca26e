"""bench/compare_builds.py, the check a change to the ceremony path runs before it lands, run on the debug build.

Both sides are the same build here (CI builds no release bench binary), so this checks the script's figures and
its verdict, not a speed: a build beside itself is no regression at a wide tolerance, and the verdict turns to a
regression (exit 1) when the tolerance says any cost over the other's is one.
"""
import os
import re
import subprocess
import sys

from conftest import BINARY, ROOT

BUILD = os.path.dirname(BINARY)


def compare(tolerance):
    return subprocess.run([sys.executable, str(ROOT / "bench" / "compare_builds.py"), BUILD, BUILD, "0.05", "3"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT / "bench",
                          env={**os.environ, "CREDEMU_COMPARE_TOLERANCE": str(tolerance)})


def costs(output):
    """The two judged lines: label -> (this build's cost, the other's, the ratio, the verdict)."""
    found = {}
    for label in ("registration cost / raw keygen+sign", "assertion cost / raw sign"):
        line = next(line for line in output.splitlines() if line.strip().startswith(label))
        match = re.search(r"([\d.]+)x +([\d.]+)x +([\d.]+) +\[[\d. ]+\] +(ok|REGRESSION)", line)
        assert match, line
        found[label] = (float(match[1]), float(match[2]), float(match[3]), match[4])
    return found


def test_a_build_beside_itself_is_no_regression_and_every_figure_is_measured():
    run = compare(10)
    assert run.returncode == 0, run.stdout + run.stderr
    for figure in ("raw-keygen-sign", "create", "raw-sign", "get", "http1-create", "http1-get"):
        assert re.search(rf"^  {figure} /s +[\d,]+ +[\d,]+ +[\d.]+ +\[", run.stdout, re.M), run.stdout
    for label, (mine, theirs, ratio, verdict) in costs(run.stdout).items():
        # A ceremony costs more than its raw floor alone: the key is sealed and stored, the response built.
        assert mine > 1 and theirs > 1, (label, run.stdout)
        assert verdict == "ok" and ratio > 0, (label, run.stdout)


def test_a_cost_over_the_others_beyond_the_tolerance_fails_the_check():
    run = compare(-0.99)  # any cost above a hundredth of the other's is a regression
    assert run.returncode == 1, run.stdout + run.stderr
    assert all(verdict == "REGRESSION" for *_, verdict in costs(run.stdout).values()), run.stdout
    assert "this build is slower than the other: registration cost / raw keygen+sign, assertion cost / raw sign" in run.stdout
