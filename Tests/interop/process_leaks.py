"""The credemu processes a test run started and left running: found under /proc among this process's
descendants (orphans included: the run is made a child subreaper, so a credemu whose parent exited, a node
script's say, is reparented here rather than to init), and stopped. A subreaper must also wait for what it adopts:
`reap_adopted` collects the orphans that ended (Chromium's and WebKit's helpers, whose parents exit first), which
would otherwise stay zombies until the run ends."""
import ctypes
import os
import signal
import subprocess
import threading
import time

NAMES = {"credemu", "credemu-bench"}
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    """Orphaned descendants are reparented to this process (prctl(2)), so none escapes the check. From then on the
    children this process starts itself are recorded (`subprocess.Popen`, which every driver and fixture uses), so
    `reap_adopted` never takes an exit status that a Popen object waits for."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    _record_own_children()


_own_children = set()
_own_lock = threading.Lock()


def _record_own_children():
    if getattr(subprocess.Popen, "_credemu_recorded", False):
        return
    started = subprocess.Popen._execute_child

    def execute_child(self, *args, **kwargs):
        # Recorded under the lock that `reap_adopted` takes, so a child cannot be reaped between fork and record; with
        # its start time, since pids come round again within a run (pid_max is 32,768 here) and an orphan given a pid
        # an own child once had is still the run's to reap.
        with _own_lock:
            started(self, *args, **kwargs)
            _own_children.add((self.pid, _start_time(self.pid)))

    subprocess.Popen._execute_child = execute_child
    subprocess.Popen._credemu_recorded = True


def reap_adopted():
    """Waits for every ended process reparented to this one that it did not start itself; returns their pids."""
    me = os.getpid()
    reaped = []
    with _own_lock:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            pid = int(entry)
            fields = _stat_fields(pid)
            if fields is None or int(fields[1]) != me or fields[0] != "Z" or (pid, int(fields[19])) in _own_children:
                continue
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    reaped.append(pid)
            except ChildProcessError:
                pass
    return reaped


def _stat_fields(pid):
    """/proc/PID/stat's fields from the third on (state, parent pid, ...; the start time, in clock ticks since boot,
    at index 19), or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()   # the command name may hold spaces and parentheses


def _start_time(pid):
    """When the process started, or None when it is gone."""
    fields = _stat_fields(pid)
    return None if fields is None else int(fields[19])


def _stat(pid):
    """(parent pid, state) of a process, or None when it is gone."""
    fields = _stat_fields(pid)
    return None if fields is None else (int(fields[1]), fields[0])


def _name(pid):
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None
    return os.path.basename(exe.removesuffix(" (deleted)"))


def _command(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def running_credemu(root=None):
    """{pid: command line} of every live (not zombie) credemu process descending from `root` (this process)."""
    root = root or os.getpid()
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat:
                parents[int(entry)] = stat
    found = {}
    for pid, (_, state) in parents.items():
        if state == "Z" or _name(pid) not in NAMES:
            continue
        ancestor, seen = parents.get(pid, (0, ""))[0], 0
        while ancestor not in (0, 1, root) and seen < 64:
            ancestor, seen = parents.get(ancestor, (0, ""))[0], seen + 1
        if ancestor == root:
            found[pid] = _command(pid)
    return found


def stop(pids, timeout=10):
    """SIGTERM, then SIGKILL after `timeout` seconds; reaps those that are (or became) this process's children."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    left = set(pids)
    while left and time.monotonic() < deadline:
        for pid in list(left):
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    left.discard(pid)
                    continue
            except ChildProcessError:
                pass
            stat = _stat(pid)
            if stat is None or stat[1] == "Z":
                left.discard(pid)
        time.sleep(0.05)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
