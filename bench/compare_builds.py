"""Two credemu builds side by side in one run: the check a change to the ceremony path runs before it lands.

    make bench-compare BASE=main          # builds BASE once (cached under .build/compare/), then this script
    bench/compare_builds.py THIS_DIR OTHER_DIR [SECONDS [ROUNDS]]

THIS_DIR and OTHER_DIR each hold a release `credemu-bench` and the `credemu` beside it (`.build/release`). Each
build runs its own `credemu-bench worker` (so its own engine and vault for the in-process figures, its own `credemu
serve` for the HTTP ones), in alternating rounds, so that the machine's noise falls on both. Per round it measures
ES256 registrations and assertions in-process, each beside the raw keygen+sign and sign floor of the same process,
and one HTTP client one at a time. A registration's cost is its CPU time over the floor's (issue 37's figure as CPU:
the worker's threads' run time from /proc/PID/task/*/schedstat, per ceremony), so other processes on the machine
change the rates but hardly the costs.

It prints each figure's medians and the per-round ratios (this build / the other), and exits 1 if this build's
in-process registration or assertion cost exceeds the other's by more than the tolerance
(`CREDEMU_COMPARE_TOLERANCE`, default 0.05) in the median of the rounds: a regression. The HTTP figures are shown,
not judged (one client's rate moves with the scheduler more than the 5% a ceremony change is judged by).
"""
import os
import statistics
import sys

from worker import Worker

FIGURES = ["raw-keygen-sign", "create", "raw-sign", "get", "http1-create", "http1-get"]
# (label, numerator figure, denominator figure): cost = floor rate / ceremony rate, so higher is slower.
COSTS = [("registration cost / raw keygen+sign", "raw-keygen-sign", "create"),
         ("assertion cost / raw sign", "raw-sign", "get")]


def build_workers(directories):
    """One worker per build directory, each its own build's `credemu-bench` (it starts the `credemu` beside it)."""
    workers = {}
    for name, directory in directories.items():
        binary = os.path.join(directory, "credemu-bench")
        for needed in (binary, os.path.join(directory, "credemu")):
            if not os.access(needed, os.X_OK):
                raise SystemExit(f"compare_builds: {needed} is not an executable (build it: swift build -c release)")
        workers[name] = Worker(binary, 1)
    return workers


def cpu_seconds(worker):
    """The CPU time the worker's threads have run, in seconds (the scheduler's nanosecond count, not clock ticks)."""
    total = 0
    tasks = f"/proc/{worker.process.pid}/task"
    for task in os.listdir(tasks):
        try:
            with open(f"{tasks}/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended between the listing and the read
    return total / 1e9


def run(workers, seconds, rounds):
    """Each figure of each build, in rounds whose order alternates.

    `results[(build, figure)]` is the rate per round; `cpu[(build, figure)]` the CPU seconds per operation (in-process
    figures only: the HTTP ones run in the worker's `credemu serve`)."""
    results = {(w, f): [] for w in workers for f in FIGURES}
    cpu = {(w, f): [] for w in workers for f in FIGURES}
    for worker in workers.values():
        for figure in FIGURES:
            worker.figure(figure, 0.1)  # start each server and warm each path
    for n in range(rounds):
        order = list(workers.items()) if n % 2 == 0 else list(reversed(workers.items()))
        for name, worker in order:
            for figure in FIGURES:
                before = cpu_seconds(worker)
                rate = worker.figure(figure, seconds)
                results[(name, figure)].append(rate)
                cpu[(name, figure)].append((cpu_seconds(worker) - before) / (rate * seconds))
    return results, cpu


def report(results, cpu, tolerance):
    """The figures, the costs and the verdict; returns the regressions' labels."""
    this, other = "this build", "the other"
    print(f"{'':38} {'this build':>12} {'the other':>12}   ratio (median of rounds) and rounds")
    for figure in FIGURES:
        mine, theirs = results[(this, figure)], results[(other, figure)]
        ratios = [a / b for a, b in zip(mine, theirs)]
        print(f"  {figure + ' /s':36} {statistics.median(mine):>12,.0f} {statistics.median(theirs):>12,.0f}   "
              f"{statistics.median(ratios):.3f}  [{' '.join(f'{r:.2f}' for r in ratios)}]")
    regressions = []
    for label, floor, ceremony in COSTS:
        costs = {build: [c / f for f, c in zip(cpu[(build, floor)], cpu[(build, ceremony)])]
                 for build in (this, other)}
        ratios = [a / b for a, b in zip(costs[this], costs[other])]
        ratio = statistics.median(ratios)
        verdict = "REGRESSION" if ratio > 1 + tolerance else "ok"
        print(f"  {label:36} {statistics.median(costs[this]):>11.2f}x {statistics.median(costs[other]):>11.2f}x   "
              f"{ratio:.3f}  [{' '.join(f'{r:.2f}' for r in ratios)}]  {verdict} (tolerance {tolerance:.0%})")
        if verdict != "ok":
            regressions.append(label)
    return regressions


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    directories = {"this build": sys.argv[1], "the other": sys.argv[2]}
    if os.path.basename(directories["the other"]) == "credemu":  # the old form named the other build's binary
        directories["the other"] = os.path.dirname(os.path.abspath(directories["the other"]))
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 0.4
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 9
    tolerance = float(os.environ.get("CREDEMU_COMPARE_TOLERANCE", "0.05"))
    workers = build_workers(directories)
    try:
        results, cpu = run(workers, seconds, rounds)
    finally:
        for worker in workers.values():
            worker.close()
    load = os.getloadavg()[0]
    print(f"{rounds} alternating rounds of {seconds:g} s per figure, load {load:.1f} on {os.cpu_count()} cores; "
          f"this build {directories['this build']}, the other {directories['the other']}")
    regressions = report(results, cpu, tolerance)
    if regressions:
        print(f"this build is slower than the other: {', '.join(regressions)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
