"""The credemu pytest plugin (entry point `pytest11`): a server per session, a fresh profile per test, the
shim in a Selenium driver or a Playwright page, and a test-by-pack matrix.

    @pytest.mark.credemu(pack="gpm", platform="chrome-desktop")
    def test_sign_in(credemu_profile, credemu_install_shim, page, live_server):
        credemu_install_shim(page, origin=live_server.url)
        credemu_profile.save_password("alice", "pw", origin=live_server.url)
        ...

With pytest-playwright, `--credemu-playwright[=PACK]` (or `playwright=True` in the marker) gives the suite's own
`context` and `page` fixtures (every context `new_context` makes) credemu installed behind `context.credentials`
(`credemu.playwright`): the first context on the test's profile, each later one on a fresh profile like it.

`--credemu-packs=all` (or `gpm,apple,...`, or `packs=` in the marker) runs each marked test that does not pin
`pack=` once per pack, and the session ends with the matrix. `xfail={"bitwarden": "why"}` in the marker expects
a pack to diverge (a strict xfail, so the day it stops diverging the test says so).
"""
import itertools
import json
import re
import subprocess

import pytest

from .client import Client
from .errors import CredemuError
from .matrix import Matrix, provider_verdict
from .server import Server, find_binary, running_servers
from .playwright import credentials as credemu_credentials
from .playwright import use_server
from .shim import installed_shim

PLUGIN = "credemu-session"


def pytest_addoption(parser):
    group = parser.getgroup("credemu", "credemu, the credential-provider emulator")
    group.addoption("--credemu-binary", help="the credemu executable (default: $CREDEMU, else the wheel's own, else credemu on PATH)")
    group.addoption("--credemu-providers", help="a directory of policy packs, passed as --providers")
    group.addoption("--credemu-packs", help="run the tests marked @pytest.mark.credemu once per pack: 'all' or a comma list")
    group.addoption("--credemu-allow-origin", action="append", default=[],
                    help="a page origin the session's server allows from the start (repeatable)")
    group.addoption("--credemu-playwright", nargs="?", const="", default=None, metavar="PACK",
                    help="pytest-playwright's context and page fixtures come with credemu installed behind "
                         "context.credentials (on the test's profile: the marker's pack, else PACK, else credemu_pack)")
    group.addoption("--credemu-matrix-json", help="also write the test-by-pack matrix to this file as JSON")
    parser.addini("credemu_binary", "the credemu executable", default=None)
    parser.addini("credemu_allow_origins", "page origins the session's server allows from the start", type="linelist", default=[])
    parser.addini("credemu_pack", "the pack of a profile whose test names none", default="gpm")


def pytest_configure(config):
    config.addinivalue_line("markers", "credemu(pack=None, platform=None, packs=None, xfail=None, playwright=False, **settings): "
                                       "the test's credemu profile: its pack and platform, playwright=True to install it behind "
                                       "pytest-playwright's context fixtures, its settings (automaticPasskeyUpgrades=False, "
                                       "...), or packs='all' / a list to run it once per pack, with xfail={pack: reason} for the "
                                       "divergences it expects (strict)")
    session = CredemuSession(config)
    config.pluginmanager.register(session, PLUGIN)
    # credemu.credentials() without a client: the session's server (a pytester session's inside it, while it runs).
    session.previous_factory = use_server(session.start_server)


def _session(config):
    return config.pluginmanager.get_plugin(PLUGIN)


class CredemuSession:
    """The session's server (started on first use), its pack list, and the matrix."""

    def __init__(self, config):
        self.config = config
        self.server = None
        self.matrix = Matrix()
        self._packs = None
        self._names = itertools.count(1)
        self.owned = {}     # Server -> the broader-scoped fixture whose setup started it

    # ---- configuration ----

    def binary(self):
        return find_binary(self.config.getoption("credemu_binary") or self.config.getini("credemu_binary") or None)

    def providers_dir(self):
        return self.config.getoption("credemu_providers")

    def packs(self):
        """{pack ID: [platforms]} as the binary lists them (`credemu providers list`; no server, no vault)."""
        if self._packs is None:
            command = [self.binary()] + (["--providers", self.providers_dir()] if self.providers_dir() else []) + ["providers", "list"]
            done = subprocess.run(command, capture_output=True, text=True, timeout=60)
            if done.returncode != 0:
                raise CredemuError("InvalidPolicyPack", f"`{' '.join(command)}` failed ({done.returncode}): {done.stdout}{done.stderr}")
            # "all" is every passkey provider: a security key (model securityKey) is plugged in, not a provider.
            self._packs = {p["id"]: p.get("platforms", []) for p in json.loads(done.stdout)["providers"]
                           if p.get("model", "passkeyProvider") == "passkeyProvider"}
        return self._packs

    def pack_list(self, spec):
        if spec in ("all", ["all"]):
            return list(self.packs())
        if isinstance(spec, str):
            return [p.strip() for p in spec.split(",") if p.strip()]
        return list(spec)

    def start_server(self):
        if self.server is None:
            origins = list(self.config.getini("credemu_allow_origins")) + list(self.config.getoption("credemu_allow_origin"))
            self.server = Server(self.binary(), providers=self.providers_dir(), allow_origins=origins).start()
        return self.server

    def stop_server(self):
        if self.server is not None:
            self.server.stop()

    def profile_name(self, item):
        base = re.sub(r"[^A-Za-z0-9_.-]+", "-", item.name).strip("-.") or "test"
        return f"t{next(self._names)}-{base}"[:64]

    # ---- hooks ----

    def pytest_generate_tests(self, metafunc):
        if "credemu_pack" not in metafunc.fixturenames:
            return
        for mark in metafunc.definition.iter_markers("parametrize"):
            names = mark.args[0] if mark.args else mark.kwargs.get("argnames", "")
            names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
            if "credemu_pack" in names:
                return  # the test parametrizes the pack itself
        marker = metafunc.definition.get_closest_marker("credemu")
        spec = marker.kwargs.get("packs") if marker else None
        if spec is None and marker is not None and "pack" not in marker.kwargs:
            spec = self.config.getoption("credemu_packs")
        if not spec:
            return
        packs = self.pack_list(spec)
        expected = (marker.kwargs.get("xfail") if marker else None) or {}
        unknown = set(expected) - set(self.packs())
        if unknown:
            raise pytest.UsageError(f"{metafunc.definition.nodeid}: xfail names packs credemu does not have: {sorted(unknown)}")
        # A divergence the test expects of a pack is a strict xfail: when the provider starts to behave, it shows.
        params = [pytest.param(p, id=p, marks=[pytest.mark.xfail(reason=f"{p}: {expected[p]}", strict=True)] if p in expected else [])
                  for p in packs]
        metafunc.parametrize("credemu_pack", params)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        cell = getattr(item, "_credemu", None)
        if cell is None:
            return
        failed = report.failed or hasattr(report, "wasxfail")
        verdict = ""
        if failed:
            try:
                events = cell["client"].events()
                verdict = provider_verdict(events)
                report.sections.append(("credemu events", "\n".join(
                    f"{e['at']} {e['kind']}: {e['outcome']} ({e['reason']})" for e in events) or "(none)"))
            except CredemuError as error:
                verdict = f"(the event log could not be read: {error})"
            if report.failed and self.server is not None:
                report.sections.append(("credemu server log", "\n".join(self.server.log.splitlines()[-50:])))
        if cell["matrix_row"] is not None:
            # An attribute of plain data, so pytest-xdist carries it to the controller with the report.
            report.credemu_cell = {"row": cell["matrix_row"], "pack": cell["pack"], "platform": cell["platform"], "verdict": verdict,
                                   "message": _crash_message(report) if failed else ""}

    def pytest_runtest_logreport(self, report):
        cell = getattr(report, "credemu_cell", None)
        if cell is None:
            return
        if hasattr(report, "wasxfail"):
            result = "xfailed" if report.skipped else "xpassed"
        elif report.passed:
            result = "passed"
        elif report.skipped:
            result = "skipped"
        else:
            result = "failed" if report.when == "call" else "error"
        self.matrix.record(cell["row"], cell["pack"], result, cell["platform"], cell["verdict"], cell.get("message", ""))

    def pytest_terminal_summary(self, terminalreporter):
        if not self.matrix:
            return
        terminalreporter.write_sep("=", "credemu: tests by pack")
        for line in self.matrix.lines():
            terminalreporter.write_line(line)
        path = self.config.getoption("credemu_matrix_json")
        if path:
            with open(path, "w") as out:
                out.write(self.matrix.json() + "\n")

    def pytest_fixture_post_finalizer(self, fixturedef, request):
        mine = [server for server, owner in self.owned.items() if owner is fixturedef]
        for server in mine:
            del self.owned[server]
        left = [server for server in mine if server.running]
        for server in left:
            server.stop()
        if left:
            pytest.fail(f"the {fixturedef.scope}-scoped fixture {fixturedef.argname} left {len(left)} credemu.Server(s) running "
                        f"({', '.join(s.url or '?' for s in left)}); stop each when the fixture ends", pytrace=False)

    def pytest_sessionstart(self, session):
        self._servers_before = set(running_servers())   # an enclosing session's (pytester), not this one's

    def pytest_sessionfinish(self, session, exitstatus):
        # What a session- or module-scoped fixture started and never stopped: the run fails, and they are stopped.
        before = getattr(self, "_servers_before", set())
        left = [s for s in running_servers() if s is not self.server and s not in before]
        if not left:
            return
        for server in left:
            server.stop()
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter:
            reporter.write_line(f"credemu: {len(left)} credemu.Server(s) still running at the session's end, now stopped: "
                                + ", ".join(s.url or "?" for s in left), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_unconfigure(self, config):
        use_server(getattr(self, "previous_factory", None))
        self.stop_server()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        # A Server started while a broader-scoped fixture was set up (even lazily, through getfixturevalue in a test)
        # is that fixture's: it may live until the fixture is finalized, and no longer.
        before = set(running_servers()) if fixturedef.scope != "function" else None
        yield
        if before is not None:
            for server in running_servers():
                if server not in before:
                    self.owned.setdefault(server, fixturedef)
        if fixturedef.argname == "launch_browser" and _session_wants_playwright(request) and fixturedef.cached_result:
            # pytest-playwright's Chromium gets a DevTools port (Chromium picks it), so credemu serve answers its
            # pages itself (credemu.shim._Pairing) rather than through the driver and this process.
            made, key, error = fixturedef.cached_result
            if error is None and request.getfixturevalue("browser_type").name == "chromium":
                options = request.getfixturevalue("browser_type_launch_args")
                fixturedef.cached_result = (_with_devtools_port(made, options), key, None)
        if fixturedef.argname == "new_context" and _wants_playwright(request) and fixturedef.cached_result:
            # pytest-playwright's new_context (its `context` fixture's too): each context it makes gets credemu.
            # pytest hands tests the fixture's cached value, so the wrapper goes there.
            made, key, error = fixturedef.cached_result
            if error is None:
                fixturedef.cached_result = (_credemu_contexts(made, request), key, None)


def _wants_playwright(request):
    """Whether the test asks for credemu behind pytest-playwright's contexts: the marker's `playwright`, else
    `--credemu-playwright`."""
    marker = request.node.get_closest_marker("credemu")
    if marker is not None and "playwright" in marker.kwargs:
        return bool(marker.kwargs["playwright"])
    return request.config.getoption("credemu_playwright") is not None


def _session_wants_playwright(request):
    """Whether any test of the session has credemu behind pytest-playwright's contexts (the option, or a marker's
    `playwright=True`): its browser, launched once for the session, is launched for credemu."""
    if request.config.getoption("credemu_playwright") is not None:
        return True
    return any((marker := item.get_closest_marker("credemu")) is not None and marker.kwargs.get("playwright")
               for item in request.session.items)


def _with_devtools_port(launch, session_options):
    """pytest-playwright's `launch_browser(**kwargs)` with `--remote-debugging-port=0` added to Chromium's `args`
    (the session's `browser_type_launch_args` args, or the call's, which replace them) unless they name a port."""
    def launch_with_port(**kwargs):
        args = list(kwargs["args"] if "args" in kwargs else session_options.get("args") or [])
        if not any(str(a).startswith("--remote-debugging-port") for a in args):
            args.append("--remote-debugging-port=0")
        return launch(**{**kwargs, "args": args})
    return launch_with_port


def _credemu_contexts(new_context, request):
    """pytest-playwright's `new_context(**options)`, each context it makes with `credemu.credentials(...)`
    installed: the first on the test's profile (`credemu_profile`: its events and findings are the page's), each
    later one on a fresh profile of the same pack and platform (contexts share no credentials, as Playwright's)."""
    profile = request.getfixturevalue("credemu_profile")
    made = []

    def make(**options):
        context = new_context(**options)
        if made:
            installed = credemu_credentials(context, client=profile, pack=profile.pack, platform=profile.platform)
        else:
            installed = credemu_credentials(context, client=profile, profile=profile.profile)
        installed.install()
        made.append(context)
        return context
    return make


def _crash_message(report):
    """The failure's first line (`AssertionError: upgrade: not supported`, `[XPASS(strict)] ...`), cut to 100
    characters."""
    if isinstance(report.longrepr, str):
        message = report.longrepr
    else:
        message = getattr(getattr(report.longrepr, "reprcrash", None), "message", "") or ""
    line = message.strip().splitlines()[0] if message.strip() else ""
    return line if len(line) <= 100 else line[:99] + "…"


def _matrix_row(item, pack):
    """The test's node ID without the pack's part of its parameter ID."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or "credemu_pack" not in callspec.params:
        return None
    ids = callspec.id
    base = item.nodeid[: len(item.nodeid) - len(ids) - 2] if item.nodeid.endswith(f"[{ids}]") else item.nodeid
    if ids == pack:
        rest = ""
    elif ids.startswith(pack + "-"):
        rest = ids[len(pack) + 1:]
    elif ids.endswith("-" + pack):
        rest = ids[: -len(pack) - 1]
    else:
        rest = ids.replace(f"-{pack}-", "-", 1)
    return base + (f"[{rest}]" if rest else "")


# ---- fixtures ----

@pytest.fixture(autouse=True)
def _credemu_servers_stop_with_their_test(request):
    """Fails the test (at teardown) that leaves a `credemu.Server` it started running, and stops it: a leaked
    `credemu serve` holds its port and vault past the suite. Servers of broader-scoped fixtures started before it."""
    before = set(running_servers())
    yield
    session = _session(request.config)
    left = [s for s in running_servers() if s not in before and s is not session.server and s not in session.owned]
    for server in left:
        server.stop()
    if left:
        pytest.fail(f"the test left {len(left)} credemu.Server(s) running ({', '.join(s.url or '?' for s in left)}); "
                    "stop each (server.stop(), or `with credemu.Server() as server:`)", pytrace=False)

@pytest.fixture(scope="session")
def credemu_server(request):
    """The session's `credemu.Server`: a free port, a temporary vault, the log kept."""
    session = _session(request.config)
    server = session.start_server()
    yield server
    session.stop_server()


@pytest.fixture(scope="session")
def credemu_client(credemu_server):
    """A `credemu.Client` for the session's server, acting for the `default` profile."""
    return credemu_server.client()


@pytest.fixture
def credemu_pack(request):
    """The pack of the test's profile: the marker's `pack`, else `--credemu-playwright`'s PACK, else the ini
    `credemu_pack` (gpm); parametrized per
    pack under `--credemu-packs` or the marker's `packs`."""
    marker = request.node.get_closest_marker("credemu")
    if marker and marker.kwargs.get("pack"):
        return marker.kwargs["pack"]
    return request.config.getoption("credemu_playwright") or request.config.getini("credemu_pack")


@pytest.fixture
def credemu_platform(request, credemu_pack):
    """The profile's platform: the marker's `platform` where the pack models it, else the pack's default."""
    marker = request.node.get_closest_marker("credemu")
    wanted = marker.kwargs.get("platform") if marker else None
    multiplied = "credemu_pack" in getattr(getattr(request.node, "callspec", None), "params", {})
    if wanted and multiplied:
        platforms = _session(request.config).packs().get(credemu_pack)
        if platforms is not None and wanted not in platforms:
            return None
    return wanted


@pytest.fixture
def credemu_profile(request, credemu_server, credemu_pack, credemu_platform):
    """A fresh profile on the session's server for this test, as a `credemu.Client` acting for it; removed after."""
    session = _session(request.config)
    marker = request.node.get_closest_marker("credemu")
    settings = {k: v for k, v in (marker.kwargs if marker else {}).items() if k not in ("pack", "platform", "packs", "xfail", "playwright")}
    name = session.profile_name(request.node)
    client = credemu_server.client()
    created = client.create_profile(name, pack=credemu_pack, platform=credemu_platform, **settings)
    profile = client.for_profile(name)
    profile.pack, profile.platform = credemu_pack, created.get("platform")
    request.node._credemu = {"client": profile, "pack": credemu_pack, "platform": profile.platform,
                             "matrix_row": _matrix_row(request.node, credemu_pack)}
    yield profile
    try:
        client.remove_profile(name)
    except CredemuError:
        pass


@pytest.fixture
def credemu_install_shim(request, credemu_server):
    """`install(target, origin=None, *, profile=None, device=None, autofill=True, bypass_csp=None, channel=True,
    **context_options)`: the shim for the test's profile (or `profile`, a name or a Client; or `device`, a device's
    name, whose page ceremonies the device routes among its provider accounts) in a `credemu.browsers` browser, a
    Selenium driver or a Playwright page, context or browser (a new context, returned), `origin` allowed on the
    server. Its requests go through the driver's channel where it has one, and the page's CSP stays in force (no
    bypass unless `bypass_csp=True`); with `channel=False` the shim fetches, with the CSP bypassed where the driver
    can. See `credemu.install_shim`. At the test's end the install is undone where it can be: a Selenium driver loses
    the init script (so one driver can serve many tests), a context made from a Browser is closed."""
    undo = []

    def install(target, origin=None, *, profile=None, device=None, autofill=True, bypass_csp=None, channel=True, **context_options):
        if device is not None and profile is None:
            client = credemu_server.client(device=device)
        elif profile is None:
            client = request.getfixturevalue("credemu_profile")
        elif isinstance(profile, Client):
            client = profile
        else:
            client = credemu_server.client(profile)
        installed, remove = installed_shim(target, client, origin=origin, device=device, autofill=autofill, bypass_csp=bypass_csp,
                                           channel=channel, **context_options)
        if remove is not None:
            undo.append(remove)
        return installed

    yield install
    for remove in reversed(undo):
        try:
            remove()
        except Exception:  # noqa: BLE001 - the driver or context may be gone already
            pass
