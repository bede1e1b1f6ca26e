"""The suite's own guard: a credemu process a test leaves running fails that test and is stopped, and one that
outlives every test fails the run (leak_guard.py over process_leaks.py)."""
import os
import shutil
import subprocess
import time

import leak_guard
import process_leaks
from conftest import BINARY

pytest_plugins = ["pytester"]


def serve_command(directory):
    return [BINARY, "--vault", str(directory / "vault.db"), "serve", "--port", "0"]


def wait_for(condition, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    return condition()


def test_an_orphaned_credemu_is_found_and_stopped(tmp_path):
    # A server whose parent exits at once (a script that backgrounds it) is reparented here, not to init.
    subprocess.run(["sh", "-c", " ".join(serve_command(tmp_path)) + " >/dev/null 2>&1 &"], check=True)
    found = wait_for(lambda: {pid: c for pid, c in process_leaks.running_credemu().items() if str(tmp_path) in c})
    assert found, "the orphaned credemu serve was not found among the run's descendants"
    process_leaks.stop(found)
    assert not {pid for pid in process_leaks.running_credemu() if pid in found}


def test_an_adopted_orphan_that_ends_is_reaped_and_an_own_childs_status_is_kept():
    # A grandchild that outlives its parent is reparented to the run (the subreaper) and ends: a zombie until reaped.
    subprocess.run(["sh", "-c", "(sleep 0.3; exit 0) >/dev/null 2>&1 &"], check=True)
    own = subprocess.Popen(["sh", "-c", "exit 7"])

    def zombies():
        me = os.getpid()
        return [int(e) for e in os.listdir("/proc") if e.isdigit() and (process_leaks._stat(int(e)) or (0, ""))[0] == me
                and (process_leaks._stat(int(e)) or (0, ""))[1] == "Z" and int(e) != own.pid]

    found = wait_for(zombies)
    assert found, "the orphan did not become this process's zombie"
    # An own child that once had the orphan's pid (pids come round within a run): its record does not cover the orphan.
    with process_leaks._own_lock:
        process_leaks._own_children.update((pid, 1) for pid in found)
    reaped = process_leaks.reap_adopted()
    assert reaped and not zombies(), reaped
    assert own.pid not in reaped and own.wait(10) == 7, "a child the run started itself keeps its exit status"


def test_a_test_that_leaves_credemu_running_fails_and_the_run_fails(pytester, tmp_path):
    shutil.copy(leak_guard.__file__, pytester.path / "leak_guard.py")
    shutil.copy(process_leaks.__file__, pytester.path / "process_leaks.py")
    pytester.makepyfile(test_leaky=f'''
        import subprocess
        import time

        import pytest

        @pytest.fixture(scope="module")
        def module_server():
            return subprocess.Popen({serve_command(tmp_path / "m")!r}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def test_a_module_fixture_never_stops_its_server(module_server):
            time.sleep(0.5)

        @pytest.fixture(scope="module")
        def tidy_server():
            p = subprocess.Popen({serve_command(tmp_path / "t")!r}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            yield p
            p.terminate()
            p.wait(20)

        def test_a_module_fixture_taken_lazily_may_outlive_the_test(request):
            request.getfixturevalue("tidy_server")
            time.sleep(0.5)

        def test_it_is_still_there(tidy_server):
            assert tidy_server.poll() is None

        def test_leaves_a_server():
            subprocess.Popen({serve_command(tmp_path)!r}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)

        def test_stops_its_server():
            p = subprocess.Popen({serve_command(tmp_path / "b")!r}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
            p.terminate()
            p.wait(20)
    ''')
    (tmp_path / "b").mkdir()
    (tmp_path / "m").mkdir()
    (tmp_path / "t").mkdir()
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "leak_guard")
    result.assert_outcomes(passed=5, errors=2)
    result.stdout.fnmatch_lines(["*the test left credemu running (now stopped)*"])
    result.stdout.fnmatch_lines(["*the module-scoped fixture module_server left credemu running (now stopped)*"])
    assert result.ret != 0
    assert not {pid: c for pid, c in process_leaks.running_credemu().items() if str(tmp_path) in c}
