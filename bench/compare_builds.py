"""Two `credemu` builds over HTTP, side by side: ES256 ceremonies/s from the same load generator, interleaved.

For a change's cost: build the commit before it in a worktree (`swift build -c release --product credemu`), then

    bench/compare_builds.py .build/release OTHER/.build/release/credemu [SECONDS [ROUNDS]]

Each build's `credemu serve` is driven by this tree's `credemu-bench worker`, in alternating rounds; the worker
starts the `credemu` beside it, so it is copied into the other binary's directory (as `credemu-bench-compare`; an
older build may find its packs only beside itself). It prints the medians and the median per-round ratio (this
build / the other), with each round's ratio.
"""
import os
import shutil
import statistics
import sys

from worker import Worker


def main():
    release, other = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 9
    clients = int(os.environ.get("CREDEMU_BENCH_CLIENTS", "4"))
    other_directory = os.path.dirname(os.path.abspath(other))
    if os.path.basename(other) != "credemu":
        raise SystemExit("the other build must be a binary named credemu")
    shutil.copy(f"{release}/credemu-bench", f"{other_directory}/credemu-bench-compare")
    try:
        workers = {"this build": Worker(f"{release}/credemu-bench", clients),
                   "the other": Worker(f"{other_directory}/credemu-bench-compare", clients)}
        figures = ["http-create", "http-get"]
        results = {(w, f): [] for w in workers for f in figures}
        try:
            for w in workers.values():
                for f in figures:
                    w.figure(f, 0.2)  # start each server and warm it
            for n in range(rounds):
                order = list(workers.items()) if n % 2 == 0 else list(reversed(workers.items()))
                for f in figures:
                    for name, w in order:
                        results[(name, f)].append(w.figure(f, seconds))
        finally:
            for w in workers.values():
                w.close()
    finally:
        os.remove(f"{other_directory}/credemu-bench-compare")
    print(f"{clients} keep-alive clients, {rounds} alternating rounds of {seconds:g} s; medians")
    for f in figures:
        mine, theirs = results[("this build", f)], results[("the other", f)]
        ratios = [a / b for a, b in zip(mine, theirs)]
        ratio = statistics.median(ratios)
        print(f"  {f:12} this build {statistics.median(mine):>8.0f}/s   the other {statistics.median(theirs):>8.0f}/s   "
              f"ratio {ratio:.3f} ({(ratio - 1) * 100:+.1f}%; rounds {' '.join(f'{r:.2f}' for r in ratios)})")


if __name__ == "__main__":
    main()
