"""Playwright's `BrowserContext.credentials` answered by credemu: the same methods, arguments and dicts, a provider's
behaviour behind them (docs/playwright.md).

    context.credentials.install()                          # Playwright's own virtual authenticator
    credemu.credentials(context, pack="gpm").install()     # the one line that changes

`credentials(context, ...)` gives the context a fresh credemu profile of `pack` (`pw-<random>`, removed when the
context closes; `profile=` shares a named one) and makes the context's own `credentials` answer from it, so the
suite's later `context.credentials.create(...)`, `.get()`, `.delete()` and `context.storage_state(credentials=True)`
run on credemu unchanged. Credentials a context already holds (made with `storage_state=` that carries Playwright's
`credentials`) move into the profile, and, as Playwright does for such a state, the authenticator is installed.
Sync or async follows the context's API (`playwright.sync_api` or `playwright.async_api`).

How the context's `credentials` is taken over: its class becomes a subclass of its own Playwright class that answers
`credentials`, `storage_state` and `set_storage_state` from credemu (everything else is Playwright's, and
`isinstance` still holds). Playwright has no hook for this; the subclass is the one place that depends on it.
"""
import asyncio
import inspect
import json
import os
import secrets
import threading
from pathlib import Path

from .errors import CredemuError

# The Server a context's credemu profile lives on when the caller names none: the pytest plugin's session server
# (`use_server`), else one started on first use for this process (stopped at exit, as every credemu.Server is).
_lock = threading.Lock()
_factory = None
_own_server = None


def use_server(factory):
    """Where `credentials()` without `client=` gets its server from: a function returning a started
    `credemu.Server` (the pytest plugin passes its session's), or None for a server of this module's own. Returns
    the one it replaces."""
    global _factory
    previous, _factory = _factory, factory
    return previous


def _default_client():
    global _own_server
    if _factory is not None:
        return _factory().client()
    with _lock:
        if _own_server is None or not _own_server.running:
            from .server import Server
            _own_server = Server().start()
        return _own_server.client()


def _client_of(client):
    if client is None:
        return _default_client()
    if not hasattr(client, "shim") and hasattr(client, "client"):   # a credemu.Server
        return client.client()
    return client


class _Profile:
    """The credemu side, HTTP only (both APIs share it): the profile and Playwright's four operations on it."""

    def __init__(self, client, *, profile=None, pack=None, platform=None, settings=None):
        self.owned = profile is None
        name = profile or "pw-" + secrets.token_hex(6)
        if self.owned:
            client.create_profile(name, pack=pack, platform=platform, **(settings or {}))
        self.client = client.for_profile(name)
        self.name = name

    def create(self, rp_id, id=None, user_handle=None, private_key=None, public_key=None, sign_count=None):
        return dict(self.client.create_credential(rp_id, id=id, user_handle=user_handle, private_key=private_key,
                                                  public_key=public_key, sign_count=sign_count))

    def get(self, id=None, rp_id=None):
        return [dict(c) for c in self.client.credentials(rp_id=rp_id, id=id)]

    def delete(self, id):
        """Playwright's delete of an ID it does not hold does nothing; so does this one."""
        try:
            self.client.remove_passkey(id)
        except CredemuError as error:
            if error.status != 404:
                raise

    def replace(self, credentials):
        """The profile's credentials become `credentials` (Playwright's dicts, as a storage state carries them)."""
        for held in self.get():
            self.delete(held["id"])
        for credential in credentials:
            self.seed(credential)

    def seed(self, credential):
        return self.create(credential["rpId"], id=credential.get("id"), user_handle=credential.get("userHandle"),
                           private_key=credential.get("privateKey"), public_key=credential.get("publicKey"),
                           sign_count=credential.get("signCount"))

    def remove(self):
        if self.owned:
            try:
                self.client.remove_profile(self.name)
            except CredemuError:
                pass   # the server is gone already


def _read_state(storage_state):
    """A storage state as Playwright takes it: a dict, or the path of its JSON file."""
    if isinstance(storage_state, (str, os.PathLike)):
        return json.loads(Path(storage_state).read_text(encoding="utf-8"))
    return dict(storage_state)


def _write_state(path, state):
    """As Playwright writes it (`JSON.stringify(state, undefined, 2)`, UTF-8), parent directories made."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(state, indent=2, ensure_ascii=False), encoding="utf-8")


def _without_credentials(state):
    return {key: value for key, value in state.items() if key != "credentials"}


class Credentials:
    """Playwright's sync `Credentials` (`install`, `create`, `get`, `delete`) on a credemu profile; `profile` is its
    `credemu.Client`, `storage_state` the context's with the credentials in Playwright's format."""

    def __init__(self, context, client=None, *, pack=None, platform=None, profile=None, **settings):
        self._context = context
        self._profile = _Profile(_client_of(client), profile=profile, pack=pack, platform=platform, settings=settings)
        self._installed = False
        context.on("close", lambda *_: self._profile.remove())
        _adopt(context, self, asynchronous=False)
        # Credentials the context holds (a storage state's) move into the profile, Playwright's authenticator goes,
        # and, as Playwright does for such a state, the authenticator is installed.
        own = self._base.credentials.fget(context)
        held = own.get()
        if held:
            self._base.set_storage_state(context, self._base.storage_state(context))   # disposes Playwright's authenticator
            self._profile.replace(held)
            self.install()

    @property
    def profile(self):
        """The `credemu.Client` of the context's profile: events, findings, picks, the pack's other knobs."""
        return self._profile.client

    def install(self):
        """`credentials.install()`: credemu's shim in every document the context loads from now on (once; again
        does nothing), each page origin allowed on its first call. Unlike Playwright's, a document open already keeps
        the browser's own WebAuthn until it navigates or reloads (the shim is an init script)."""
        if self._installed:
            return
        from .shim import installed_shim
        installed_shim(self._context, self._profile.client, allow_frame_origins=True)
        self._installed = True

    def create(self, rp_id, *, id=None, user_handle=None, private_key=None, public_key=None, sign_count=None):
        """`credentials.create(rp_id, id=, user_handle=, private_key=, public_key=, sign_count=)`."""
        return self._profile.create(rp_id, id, user_handle, private_key, public_key, sign_count)

    def get(self, *, id=None, rp_id=None):
        """`credentials.get(id=, rp_id=)`."""
        return self._profile.get(id, rp_id)

    def delete(self, id):
        """`credentials.delete(id)`."""
        self._profile.delete(id)

    def storage_state(self, *, credentials=None, indexed_db=None, opfs=None, path=None):
        """`BrowserContext.storage_state(...)`, its `credentials` (with `credentials=True`) the profile's."""
        state = self._base.storage_state(self._context, indexed_db=indexed_db, opfs=opfs)
        state = _without_credentials(state)
        if credentials:
            state["credentials"] = self.get()
        if path:
            _write_state(path, state)
        return state

    def _new_page(self, **options):
        """`BrowserContext.new_page()`, the page's paired channel of credemu serve opened before it returns (where
        there is one: `credemu.shim._Pairing`), so its first document already answers through the server."""
        pairing = getattr(self._context, "_credemu_pairing", None)
        if pairing is None:
            return self._base.new_page(self._context, **options)
        return pairing.new_page(lambda: self._base.new_page(self._context, **options))

    def set_storage_state(self, storage_state):
        """`BrowserContext.set_storage_state(...)`: the profile's credentials become the state's (installed when
        there are any)."""
        state = _read_state(storage_state)
        self._base.set_storage_state(self._context, _without_credentials(state))
        self._profile.replace(state.get("credentials") or [])
        if state.get("credentials"):
            self.install()


class AsyncCredentials:
    """Playwright's async `Credentials` on a credemu profile: each method a coroutine, as `playwright.async_api`'s.
    The profile is made on the first call (the HTTP runs off the event loop)."""

    def __init__(self, context, client=None, *, pack=None, platform=None, profile=None, **settings):
        self._context = context
        self._make = lambda: _Profile(_client_of(client), profile=profile, pack=pack, platform=platform, settings=settings)
        self._profile = None
        self._relay = None
        self._ready = None
        _adopt(context, self, asynchronous=True)

    async def _run(self, function, *args):
        return await asyncio.get_running_loop().run_in_executor(None, function, *args)

    async def _attach(self):
        if self._ready is None:
            self._ready = asyncio.ensure_future(self._take_over())
        await self._ready
        return self._profile

    async def _take_over(self):
        self._profile = await self._run(self._make)
        self._context.on("close", lambda *_: self._close())
        own = self._base.credentials.fget(self._context)
        held = await own.get()
        if held:
            await self._base.set_storage_state(self._context, await self._base.storage_state(self._context))
            await self._run(self._profile.replace, held)
            await self._install()

    def _close(self):
        if self._relay is not None:
            self._relay.close()
        threading.Thread(target=self._profile.remove, daemon=True).start()

    @property
    def profile(self):
        """The `credemu.Client` of the context's profile, once a call made it (None before)."""
        return self._profile.client if self._profile else None

    async def install(self):
        await self._attach()
        await self._install()

    async def _install(self):
        if self._relay is None:
            from .shim import install_shim_async
            self._relay = await install_shim_async(self._context, self._profile.client, allow_frame_origins=True)

    async def create(self, rp_id, *, id=None, user_handle=None, private_key=None, public_key=None, sign_count=None):
        profile = await self._attach()
        return await self._run(profile.create, rp_id, id, user_handle, private_key, public_key, sign_count)

    async def get(self, *, id=None, rp_id=None):
        profile = await self._attach()
        return await self._run(profile.get, id, rp_id)

    async def delete(self, id):
        profile = await self._attach()
        await self._run(profile.delete, id)

    async def storage_state(self, *, credentials=None, indexed_db=None, opfs=None, path=None):
        profile = await self._attach()
        state = _without_credentials(await self._base.storage_state(self._context, indexed_db=indexed_db, opfs=opfs))
        if credentials:
            state["credentials"] = await self._run(profile.get)
        if path:
            _write_state(path, state)
        return state

    async def _new_page(self, **options):
        """`BrowserContext.new_page()`, the page's paired channel opened before it returns (as `Credentials`')."""
        pairing = getattr(self._context, "_credemu_pairing", None)
        if pairing is None:
            return await self._base.new_page(self._context, **options)
        return await pairing.new_page(lambda: self._base.new_page(self._context, **options))

    async def set_storage_state(self, storage_state):
        profile = await self._attach()
        state = _read_state(storage_state)
        await self._base.set_storage_state(self._context, _without_credentials(state))
        await self._run(profile.replace, state.get("credentials") or [])
        if state.get("credentials"):
            await self._install()


# One subclass per Playwright context class and API: `credentials`, `storage_state` and `set_storage_state` answered by
# the credemu object the context carries.
_subclasses = {}


def _adopt(context, credentials, *, asynchronous):
    base = type(context)
    if getattr(base, "_credemu_adopted", False):
        raise TypeError("this context's credentials are credemu's already (one credemu.credentials() per context)")
    subclass = _subclasses.get(base)
    if subclass is None:
        subclass = type(base.__name__, (base,), {
            "_credemu_adopted": True,
            "__module__": base.__module__,
            "__doc__": base.__doc__,
            "credentials": property(lambda self: self._credemu_credentials,
                                    doc="The context's credentials, answered by credemu (`credemu.playwright`)."),
            "storage_state": lambda self, **options: self._credemu_credentials.storage_state(**options),
            "set_storage_state": lambda self, storage_state: self._credemu_credentials.set_storage_state(storage_state),
            "new_page": lambda self, **options: self._credemu_credentials._new_page(**options),
        })
        _subclasses[base] = subclass
    # The original methods stay the credemu object's to call: the subclass's own would call back into credemu.
    credentials._base = base
    context._credemu_credentials = credentials
    context.__class__ = subclass


def _is_async(context):
    return inspect.iscoroutinefunction(getattr(type(context), "storage_state", None))


def credentials(context, *, pack=None, platform=None, client=None, profile=None, **settings):
    """The context's `credentials`, answered by a credemu profile of `pack` (default: the server's default pack) on
    `platform`, its other settings as keywords (`automatic_passkey_upgrades=False`, ...): `Credentials` for a sync
    API context, `AsyncCredentials` for an async one; from now on `context.credentials` is the same object.
    `client`: a `credemu.Client` or `credemu.Server` (default: the pytest plugin's session server, else one started
    for this process). `profile`: an existing profile's name, shared and kept, instead of a fresh one."""
    if _is_async(context):
        return AsyncCredentials(context, client, pack=pack, platform=platform, profile=profile, **settings)
    return Credentials(context, client, pack=pack, platform=platform, profile=profile, **settings)


def async_credentials(context, **options):
    """`credentials()` for a context of `playwright.async_api` (the same: the API is detected)."""
    if not _is_async(context):
        raise TypeError("async_credentials takes a playwright.async_api BrowserContext; use credentials() for the sync API")
    return credentials(context, **options)


__all__ = ["AsyncCredentials", "Credentials", "async_credentials", "credentials", "use_server"]
