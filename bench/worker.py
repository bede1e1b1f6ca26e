"""`credemu-bench worker` from Python: one figure per request (see Sources/credemu-bench/BenchWorker.swift)."""
import subprocess


class Worker:
    """A running `credemu-bench worker` (its `credemu serve`, for HTTP figures, is the `credemu` beside it)."""

    def __init__(self, binary, clients=4, *, command=None, env=None):
        """`command`: another program that speaks the same lines (`bench/playwright_js.mjs`), instead of the worker."""
        self.process = subprocess.Popen(command or [binary, "worker", "--clients", str(clients)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def figure(self, name, seconds=None):
        """The figure's rate per second (for `http-ready`, milliseconds); exits on a failed or missing answer."""
        self.process.stdin.write(f"{name} {seconds if seconds is not None else ''}\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().split()
        if len(answer) != 2 or answer[0] != name:
            raise SystemExit(f"credemu-bench worker: {name}: {' '.join(answer) or 'no answer'}")
        value = float(answer[1])
        if value < 0:
            raise SystemExit(f"credemu-bench worker: {name}: failed requests")
        return value

    def close(self):
        self.process.stdin.write("quit\n")
        self.process.stdin.close()
        self.process.wait(timeout=30)
