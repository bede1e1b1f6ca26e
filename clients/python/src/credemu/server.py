"""`credemu serve` as a child process: a free port, a temporary vault, a readiness wait, an orderly stop, its log."""
import atexit
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from .client import Client, origin_of
from .errors import CredemuError


# Every Server started and not yet stopped: the pytest plugin fails a test that leaves one running, and the
# interpreter's exit stops what is left, so no `credemu serve` outlives the process that started it.
_running = set()


def running_servers():
    """The `Server`s started in this process and not stopped since."""
    return list(_running)


@atexit.register
def _stop_every_server():
    for server in list(_running):
        server.stop(timeout=5)


# Where a wheel from `make dist` puts the binary (clients/python/hatch_build.py); a wheel built from the source tree
# has none.
BUNDLED_BINARY = Path(__file__).resolve().parent / "bin" / "credemu"


def bundled_binary():
    """The binary this package carries, if it was installed from a wheel that has one."""
    return str(BUNDLED_BINARY) if os.access(BUNDLED_BINARY, os.X_OK) else None


def _on_path(skip=None):
    """`credemu` on PATH, passing over `skip` (the `credemu` command itself, which would only find itself again)."""
    for directory in os.get_exec_path():
        path = os.path.join(directory, "credemu")
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            continue
        if skip and os.path.exists(skip) and os.path.samefile(path, skip):
            continue
        return path
    return None


def find_binary(binary=None, *, skip=None):
    """The credemu executable: `binary` when given, else `$CREDEMU`, else the one this package carries (a wheel from
    `make dist`), else `credemu` on `PATH` (`skip`: a path to pass over there)."""
    candidate = binary or os.environ.get("CREDEMU") or bundled_binary() or _on_path(skip)
    if not candidate:
        raise CredemuError("BinaryNotFound", "no credemu binary: pass one, set $CREDEMU, install the credemu wheel, or put credemu on PATH")
    path = shutil.which(candidate) if os.sep not in str(candidate) else str(candidate)
    if not path or not os.access(path, os.X_OK):
        raise CredemuError("BinaryNotFound", f"{candidate} is not an executable credemu binary")
    return path


class Server:
    """One `credemu serve` on 127.0.0.1 and a free port, over a vault in a temporary directory (or `vault`).

        with credemu.Server(allow_origins=["http://localhost:8000"]) as server:
            client = server.client()

    `log` holds what the server printed (stdout and stderr, in order) so far, and stays readable after `stop()`:
    put it in a failure report. `providers` (a directory) is passed as `--providers`; `args` go to `serve`.
    """

    def __init__(self, binary=None, *, vault=None, providers=None, allow_origins=(), token=None, args=(), cwd=None,
                 env=None, startup_timeout=30):
        self.binary = find_binary(binary)
        self.providers = providers
        self.allow_origins = [origin_of(o) for o in allow_origins]
        self.token = token
        self.args = list(args)
        self.cwd = cwd
        self.env = env
        self.startup_timeout = startup_timeout
        self._own_directory = vault is None
        self.directory = None
        self.vault = Path(vault) if vault else None
        self.process = None
        self.url = None
        self.port = None
        self.returncode = None
        self._log_path = None
        self._log_text = ""

    # ---- life ----

    def start(self):
        if self.process is not None:
            return self
        self.directory = Path(tempfile.mkdtemp(prefix="credemu-"))
        if self.vault is None:
            self.vault = self.directory / "vault.db"
        port_file = self.directory / "port"
        self._log_path = self.directory / "server.log"
        command = [self.binary, "--vault", str(self.vault)]
        if self.providers:
            command += ["--providers", str(self.providers)]
        command += ["serve", "--port", "0", "--port-file", str(port_file)]
        if self.allow_origins:
            command += ["--allow-origin", ",".join(self.allow_origins)]
        if self.token:
            command += ["--token", self.token]
        command += self.args
        with open(self._log_path, "wb") as log:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            cwd=self.cwd, env=self.env)
        _running.add(self)
        try:
            self._wait_until_ready(port_file)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_ready(self, port_file):
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise CredemuError("ServerFailedToStart", f"credemu serve exited with status {self.process.returncode}:\n{self.log}")
            text = port_file.read_text().strip() if port_file.exists() else ""
            if text.isdigit():
                self.port = int(text)
                self.url = f"http://127.0.0.1:{self.port}"
                try:
                    with urllib.request.urlopen(self.url + "/health", timeout=5) as response:
                        # The port file comes before the first line of output: ready once both are there.
                        if response.status == 200 and self._read_log().startswith(self.url + "\n"):
                            return
                except OSError:
                    pass
            time.sleep(0.02)
        raise CredemuError("ServerFailedToStart", f"credemu serve was not ready within {self.startup_timeout} s:\n{self.log}")

    def stop(self, timeout=20):
        """SIGTERM, then a wait for the orderly stop (SIGKILL after `timeout` seconds); the exit status, 0 when
        the server stopped in order."""
        if self.process is None:
            return self.returncode
        deadline = time.monotonic() + timeout
        while self.process.poll() is None:
            # Again each second: a SIGTERM that arrives before the server's handler is in place is lost (the fuzz
            # suite's "serve does not stop cleanly" case).
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=min(1, max(0.01, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    self.process.kill()
                    self.process.wait()
        self.returncode = self.process.returncode
        self._log_text = self._read_log()
        self.process = None
        _running.discard(self)
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
            if self._own_directory:
                self.vault = None
        return self.returncode

    @property
    def running(self):
        return self.process is not None and self.process.poll() is None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ---- what it printed ----

    def _read_log(self):
        try:
            return self._log_path.read_text(errors="replace") if self._log_path else ""
        except OSError:
            return ""

    @property
    def log(self):
        """Everything the server printed so far (after `stop()`, everything it printed)."""
        return self._read_log() if self.process is not None else self._log_text

    # ---- use ----

    def client(self, profile="default", *, device=None, origin=None):
        """A `Client` of this server for `profile`, its ceremonies on `device` when given."""
        if self.url is None:
            raise CredemuError("ServerNotStarted", "start the server first (server.start() or with Server() as server)")
        return Client(self.url, profile=profile, device=device, origin=origin, token=self.token)

    def allow_origin(self, origin):
        """Lets pages of `origin` call this server from now on (`POST /origins`)."""
        origin = origin_of(origin)
        if origin not in self.allow_origins:
            self.allow_origins.append(origin)
        if self.url is not None:
            self.client().allow_origin(origin)
