"""The interop suite's guard (a pytest plugin, registered by conftest.py): no credemu process outlives what
started it, and no process it adopted as a subreaper stays a zombie past a test's teardown. A test that leaves one
of its own running fails at its teardown; one a module- or session-scoped
fixture started (even lazily, through getfixturevalue in a test) may live until that fixture is finalized, and no
longer; whatever is left at the session's end fails the run. Each is stopped. The processes are found under /proc
by process_leaks.py."""
import pytest

import process_leaks


def pytest_configure(config):
    process_leaks.become_subreaper()


# A credemu started while a module- or session-scoped fixture was set up (even lazily, through getfixturevalue in
# a test) is that fixture's: it may live until the fixture is finalized, and no longer.
_owned = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    before = set(process_leaks.running_credemu()) if fixturedef.scope != "function" else None
    yield
    if before is not None:
        for pid in process_leaks.running_credemu():
            if pid not in before:
                _owned.setdefault(pid, fixturedef)


def pytest_fixture_post_finalizer(fixturedef, request):
    mine = [pid for pid, owner in _owned.items() if owner is fixturedef]
    for pid in mine:
        del _owned[pid]
    left = {pid: command for pid, command in process_leaks.running_credemu().items() if pid in mine}
    if left:
        process_leaks.stop(left)
        pytest.fail(f"the {fixturedef.scope}-scoped fixture {fixturedef.argname} left credemu running (now stopped): "
                    + "; ".join(f"{pid}: {c}" for pid, c in left.items()), pytrace=False)


@pytest.fixture(autouse=True)
def no_credemu_outlives_its_test(request):
    """Fails the test (at teardown) that leaves a credemu process of its own running, and stops it. What a
    broader-scoped fixture started is checked when that fixture is finalized, and anything left at the session's end."""
    before = set(process_leaks.running_credemu())
    yield
    process_leaks.reap_adopted()   # the browsers' orphaned helpers that ended: no zombie outlives its test
    left = {pid: command for pid, command in process_leaks.running_credemu().items() if pid not in before and pid not in _owned}
    if left:
        process_leaks.stop(left)
        pytest.fail("the test left credemu running (now stopped): " + "; ".join(f"{pid}: {c}" for pid, c in left.items()), pytrace=False)


def pytest_sessionfinish(session, exitstatus):
    left = process_leaks.running_credemu()
    if not left:
        return
    process_leaks.stop(left)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter:
        reporter.write_line(f"credemu processes still running at the end of the run (now stopped): "
                            + "; ".join(f"{pid}: {c}" for pid, c in left.items()), red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
