"""A client for the credemu HTTP API: one method per route, in WebAuthn's vocabulary."""
import base64
import json
import urllib.error
import urllib.parse
import urllib.request

from .errors import CredemuError

# Every route of the API (Sources/CredemuServer/Resources/openapi.json) and the Client methods that call it;
# tests/test_client.py fails when the document has a route this table lacks, or a method here is missing.
ROUTES = {
    ("GET", "/health"): ["health"],
    ("GET", "/openapi.json"): ["openapi"],
    ("GET", "/shim.js"): ["shim"],
    ("GET", "/providers"): ["providers"],
    ("GET", "/clock"): ["clock"],
    ("POST", "/clock"): ["set_clock", "advance_clock", "system_clock"],
    ("GET", "/origins"): ["allowed_origins"],
    ("POST", "/origins"): ["allow_origin"],
    ("GET", "/holds"): ["holds"],
    ("POST", "/holds/{id}/release"): ["release_hold"],
    ("GET", "/profiles"): ["profiles"],
    ("POST", "/profiles"): ["create_profile"],
    ("GET", "/profiles/{profile}"): ["get_profile"],
    ("PATCH", "/profiles/{profile}"): ["update_profile"],
    ("DELETE", "/profiles/{profile}"): ["remove_profile"],
    ("POST", "/profiles/{profile}/credentials/create"): ["create"],
    ("POST", "/profiles/{profile}/credentials/get"): ["get"],
    ("POST", "/profiles/{profile}/ceremonies/{id}/abort"): ["abort"],
    ("GET", "/profiles/{profile}/offer"): ["offers"],
    ("POST", "/profiles/{profile}/offer/pick"): ["pick"],
    ("POST", "/profiles/{profile}/signals/{kind}"): ["signal_unknown_credential", "signal_all_accepted_credentials",
                                                      "signal_current_user_details"],
    ("GET", "/profiles/{profile}/capabilities"): ["get_client_capabilities"],
    ("GET", "/profiles/{profile}/passwords"): ["passwords"],
    ("POST", "/profiles/{profile}/passwords"): ["save_password"],
    ("POST", "/profiles/{profile}/passwords/use"): ["use_password"],
    ("POST", "/profiles/{profile}/autofill"): ["autofill"],
    ("POST", "/profiles/{profile}/credentials"): ["create_credential"],
    ("GET", "/profiles/{profile}/credentials"): ["credentials"],
    ("POST", "/vault/move"): ["move_credentials"],
    ("GET", "/profiles/{profile}/export"): ["export_vault"],
    ("POST", "/profiles/{profile}/import"): ["import_vault"],
    ("GET", "/profiles/{profile}/passkeys"): ["passkeys"],
    ("GET", "/profiles/{profile}/passkeys/{id}"): ["passkey"],
    ("PATCH", "/profiles/{profile}/passkeys/{id}"): ["hide_passkey", "restore_passkey", "rename_passkey"],
    ("DELETE", "/profiles/{profile}/passkeys/{id}"): ["remove_passkey"],
    ("POST", "/profiles/{profile}/passwords/report-unused"): ["report_unused_password"],
    ("POST", "/scenarios/run"): ["run_scenario"],
    ("GET", "/"): ["console_file"],
    ("GET", "/console.js"): ["console_file"],
    ("GET", "/console.css"): ["console_file"],
    ("GET", "/console.svg"): ["console_file"],
    ("GET", "/profiles/{profile}/events"): ["events"],
    ("GET", "/profiles/{profile}/findings"): ["findings"],
    ("GET", "/profiles/{profile}/user"): ["pending_decisions"],
    ("POST", "/profiles/{profile}/user"): ["queue_decisions"],
    ("DELETE", "/profiles/{profile}/user"): ["clear_decisions"],
    ("GET", "/devices/{device}/user"): ["pending_decisions"],
    ("POST", "/devices/{device}/user"): ["queue_decisions"],
    ("DELETE", "/devices/{device}/user"): ["clear_decisions"],
    ("GET", "/profiles/{profile}/forge-next"): ["pending_forgery"],
    ("POST", "/profiles/{profile}/forge-next"): ["forge_next"],
    ("GET", "/devices/{device}/forge-next"): ["pending_forgery"],
    ("POST", "/devices/{device}/forge-next"): ["forge_next"],
    ("GET", "/attestation/root"): ["attestation_root"],
    ("POST", "/profiles/{profile}/holds"): ["hold"],
    ("GET", "/devices"): ["devices"],
    ("POST", "/devices"): ["create_device"],
    ("GET", "/devices/{device}"): ["get_device"],
    ("PATCH", "/devices/{device}"): ["update_device"],
    ("DELETE", "/devices/{device}"): ["remove_device"],
    ("POST", "/devices/{device}/credentials/create"): ["create"],
    ("POST", "/devices/{device}/credentials/get"): ["get"],
    ("POST", "/devices/{device}/ceremonies/{id}/abort"): ["abort"],
    ("GET", "/devices/{device}/offer"): ["offers"],
    ("POST", "/devices/{device}/offer/pick"): ["pick"],
    ("POST", "/devices/{device}/signals/{kind}"): ["signal_unknown_credential", "signal_all_accepted_credentials",
                                                    "signal_current_user_details"],
    ("GET", "/devices/{device}/capabilities"): ["get_client_capabilities"],
    ("GET", "/devices/{device}/passwords"): ["passwords"],
    ("POST", "/devices/{device}/passwords"): ["save_password"],
    ("POST", "/devices/{device}/passwords/use"): ["use_password"],
    ("POST", "/devices/{device}/passwords/report-unused"): ["report_unused_password"],
    ("POST", "/devices/{device}/autofill"): ["autofill"],
    ("POST", "/webauthn/authenticator"): ["add_virtual_authenticator"],
    ("DELETE", "/webauthn/authenticator/{authenticatorId}"): ["remove_virtual_authenticator"],
    ("POST", "/webauthn/authenticator/{authenticatorId}/credential"): ["add_credential"],
    ("GET", "/webauthn/authenticator/{authenticatorId}/credentials"): ["get_credentials"],
    ("DELETE", "/webauthn/authenticator/{authenticatorId}/credentials"): ["remove_all_credentials"],
    ("DELETE", "/webauthn/authenticator/{authenticatorId}/credentials/{credentialId}"): ["remove_credential"],
    ("POST", "/webauthn/authenticator/{authenticatorId}/uv"): ["set_user_verified"],
    ("POST", "/webauthn/authenticator/{authenticatorId}/override-bits"): ["set_response_override_bits"],
    ("POST", "/webauthn/authenticator/{authenticatorId}/credentials/{credentialId}/props"): ["set_credential_properties"],
    ("POST", "/channels"): ["open_channel"],
    ("GET", "/channels"): ["channels"],
    ("DELETE", "/channels/{id}"): ["close_channel"],
    ("GET", "/demo"): ["demo"],
    ("POST", "/demo"): ["start_demo"],
}

# The header a device's ceremony answer names its answering provider account in (a signal's: every account it
# reached, comma-separated).
PROVIDER_HEADER = "X-Credemu-Provider"


def _camel(name):
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _settings(settings):
    """Profile settings from keyword arguments: `automatic_passkey_upgrades=False` is `automaticPasskeyUpgrades`."""
    return {_camel(key): value for key, value in settings.items()}


def _b64url(value):
    """A credential or user ID: bytes become base64url, text is taken as base64url already."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.urlsafe_b64encode(bytes(value)).rstrip(b"=").decode()
    return value


def _options(options):
    """Options as JSON: a dict, JSON text, or an options object py_webauthn made (`generate_*_options`)."""
    if isinstance(options, dict):
        return options
    if isinstance(options, (str, bytes, bytearray)):
        return json.loads(options)
    try:
        from webauthn import options_to_json
    except ImportError:  # pragma: no cover - only without py_webauthn
        raise TypeError(f"options must be a dict or JSON text, not {type(options).__name__}") from None
    return json.loads(options_to_json(options))


def _drop_none(members):
    return {key: value for key, value in members.items() if value is not None}


class Answer(dict):
    """A device ceremony's JSON answer (a `dict`, so py_webauthn and `json.dumps` take it as it is) with the
    provider account that answered it: `provider` is the profile the device sent the ceremony to
    (`X-Credemu-Provider`); for a signal, `providers` lists every account it reached."""

    def __init__(self, members, provider):
        super().__init__(members)
        self.provider = provider

    @property
    def providers(self):
        return [name for name in (self.provider or "").split(",") if name]

    def __reduce__(self):
        return (Answer, (dict(self), self.provider))


class Client:
    """The API of one `credemu serve` at `url`. Profile-scoped methods act for `profile` (or the one given per
    call), and ceremonies, passwords and signals for `origin` when the call names none.

    With `device` (or `for_device`), the ceremonies (`create`, `get`, `abort`, `offers`, `pick`, the signals,
    `get_client_capabilities`) run on that device, which routes them among its provider accounts, unless a call
    names a `profile`; each also takes `device=` per call. Passwords, passkeys, events and the rest stay
    profile-scoped, as in a browser the manager that saves them is one account.

    Answers are the API's JSON, with single lists unwrapped (`passkeys()` is the list, not `{"passkeys": [...]}`);
    a device ceremony's is an `Answer` naming the answering account (`.provider`). Every refusal raises
    `CredemuError`.
    """

    def __init__(self, url, *, profile="default", device=None, origin=None, token=None, timeout=60):
        self.url = url.rstrip("/")
        self.profile = profile
        self.device = device
        self.origin = origin
        self.token = token
        self.timeout = timeout
        # Set by the pytest plugin on a test's profile: the pack it plays and its platform.
        self.pack = None
        self.platform = None
        # The virtual authenticator the WebDriver-named methods act on (`add_virtual_authenticator` sets it).
        self.virtual_authenticator_id = None

    def for_profile(self, profile, *, origin=None):
        """The same server, acting for another profile (and origin, when given); no device."""
        return Client(self.url, profile=profile, origin=origin or self.origin, token=self.token, timeout=self.timeout)

    def for_device(self, device, *, origin=None):
        """The same server, its ceremonies running on `device` (and for `origin`, when given); profile-scoped
        methods keep this client's profile."""
        return Client(self.url, profile=self.profile, device=device, origin=origin or self.origin, token=self.token,
                      timeout=self.timeout)

    def __repr__(self):
        device = f", device={self.device!r}" if self.device else ""
        return f"credemu.Client({self.url!r}, profile={self.profile!r}{device})"

    # ---- transport ----

    def request(self, method, path, body=None, query=None):
        """One request; the parsed JSON (or text) on success, `CredemuError` on any refusal."""
        if query:
            pairs = {k: v for k, v in query.items() if v is not None}
            if pairs:
                path += "?" + urllib.parse.urlencode(pairs)
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None or method in ("POST", "PATCH"):
            request.add_header("Content-Type", "application/json")
            if data is None:
                request.data = b"{}"
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                status, payload, headers = response.status, response.read(), response.headers
        except urllib.error.HTTPError as error:
            status, payload, headers = error.code, error.read(), error.headers
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            raise CredemuError("ServerUnreachable", f"no answer from credemu at {self.url}: {error}", method=method, path=path) from error
        ctype = headers.get("Content-Type", "")
        parsed = payload
        if ctype.startswith("application/json") and payload:
            try:
                parsed = json.loads(payload)
            except ValueError:
                pass
        if status >= 400:
            raise CredemuError.from_response(status, parsed, method, path)
        provider = headers.get(PROVIDER_HEADER)
        if provider is not None and isinstance(parsed, dict):
            return Answer(parsed, provider)
        return parsed

    def _profile_path(self, profile, tail=""):
        return "/profiles/" + urllib.parse.quote(profile or self.profile, safe="") + tail

    def _device_path(self, device, tail=""):
        name = device or self.device
        if not name:
            raise TypeError("no device: pass device=NAME, or use client.for_device(NAME)")
        return "/devices/" + urllib.parse.quote(name, safe="") + tail

    def _scoped_path(self, profile, device, tail):
        """A ceremony's path: the device's when the call or the client names one and the call names no profile."""
        if profile is not None and device is not None:
            raise TypeError("a ceremony runs on a profile or on a device, not both")
        if profile is None and (device or self.device):
            return self._device_path(device, tail)
        return self._profile_path(profile, tail)

    def _origin(self, origin):
        return origin if origin is not None else self.origin

    # ---- documents ----

    def health(self):
        """`GET /health`: status, vault path and the clock."""
        return self.request("GET", "/health")

    def openapi(self):
        """`GET /openapi.json`: the API's OpenAPI 3.1 document."""
        return self.request("GET", "/openapi.json")

    def shim(self, profile=None, *, autofill=True, device=None, fill_binding=None, autofill_events=False, channel=None,
             channel_reply=None, server_channel=None, server_handoff=None):
        """`GET /shim.js`: the browser shim's source for `profile`, this server's URL and a page token (good for
        that profile's page routes only) baked in. For a `device` (given, or the client's when no profile is given)
        the page's ceremonies and passwords go to the device, which routes them among its accounts.
        `fill_binding` names a driver binding the shim fills passwords through (trusted input; `install_shim` makes
        one); `autofill_events=True` is a debug switch adding the shim's own `credemu:autofilled` event.
        `channel` names a driver binding the shim sends its requests through instead of the page's fetch, and
        `channel_reply`, for a one-way binding, the top-level const the script keeps its reply receiver in
        (`install_shim` makes both; docs/shim.md, "Transport"). `server_channel` and `server_handoff` name a paired
        channel of the server's (`open_channel(..., paired=...)`), which the shim prefers where the server reached
        the document."""
        if profile is not None and device is not None:
            raise TypeError("a shim runs on a profile or on a device, not both")
        device = device or (self.device if profile is None else None)
        query = {"device": device} if device else {"profile": profile or self.profile}
        if not autofill:
            query["autofill"] = "0"
        if fill_binding:
            query["fillBinding"] = fill_binding
        if autofill_events:
            query["autofillEvents"] = "1"
        if channel:
            query["channel"] = channel
        if channel_reply:
            query["channelReply"] = channel_reply
        if server_channel:
            query["serverChannel"] = server_channel
            query["serverHandoff"] = server_handoff
        if self.token:
            query["token"] = self.token
        script = self.request("GET", "/shim.js", query=query)
        return script.decode() if isinstance(script, bytes) else script

    def providers(self):
        """`GET /providers`: `{"directory", "providers": [{"id", "name", "version", "platforms", "sources"}]}`."""
        return self.request("GET", "/providers")

    def pack_ids(self):
        """The IDs of every pack the server plays."""
        return [p["id"] for p in self.providers()["providers"]]

    # ---- the clock ----

    def clock(self):
        """`GET /clock`: `{"now", "mode"}`."""
        return self.request("GET", "/clock")

    def set_clock(self, time, *, profile=None):
        """Makes the clock virtual at `time` (RFC 3339)."""
        return self.request("POST", "/clock", {"set": time, "profile": profile or self.profile})

    def advance_clock(self, by, *, profile=None):
        """Moves the virtual clock on by seconds or a duration (`"90s"`, `"6m"`, `"2h"`, `"1d"`)."""
        return self.request("POST", "/clock", {"advance": by, "profile": profile or self.profile})

    def system_clock(self, *, profile=None):
        """Back to the system clock."""
        return self.request("POST", "/clock", {"mode": "system", "profile": profile or self.profile})

    # ---- origins pages may call from ----

    def allowed_origins(self):
        """`GET /origins`: the page origins allowed to call the API."""
        return self.request("GET", "/origins")["allowedOrigins"]

    def allow_origin(self, origin):
        """`POST /origins`: pages of `origin` (a URL is cut to its origin) may call the API from now on."""
        return self.request("POST", "/origins", {"origin": origin_of(origin)})["allowedOrigins"]

    # ---- the shim's channel, relayed by the server ----

    def open_channel(self, devtools, *, profile=None, device=None, autofill=True, fill_binding=None, autofill_events=False,
                     paired=None, allow_frame_origins=False):
        """`POST /channels`: the server opens its own DevTools connection to the Chromium page target whose websocket
        URL is `devtools` (`ws://127.0.0.1:PORT/devtools/page/ID`, loopback only), adds the shim's channel binding and
        the shim for `profile` or `device` there, and answers the page's shim itself (docs/shim.md, "Transport").
        `paired=(binding, handoff)`: the page's shim is the driver's, served with `server_channel=binding,
        server_handoff=handoff`; the server adds that binding and its handoff script, no shim.
        `allow_frame_origins`: each calling frame's origin is allowed on its first call.
        The channel lasts until `close_channel` or until the browser closes the page. Returns `{"id", ...}`."""
        body = {"devtools": devtools}
        if paired:
            body["paired"] = {"binding": paired[0], "handoff": paired[1]}
        if allow_frame_origins:
            body["allowFrameOrigins"] = True
        if device is not None:
            body["device"] = device
        else:
            body["profile"] = profile or self.profile
        if not autofill:
            body["autofill"] = False
        if fill_binding:
            body["fillBinding"] = fill_binding
        if autofill_events:
            body["autofillEvents"] = True
        return self.request("POST", "/channels", body)

    def channels(self):
        """`GET /channels`: the channels the server relays, each `{"id", "devtools", "profile" | "device", "contexts"}`."""
        return self.request("GET", "/channels")["channels"]

    def close_channel(self, ident):
        """`DELETE /channels/{id}`: the server ends the channel (its DevTools connection, binding and shim)."""
        return self.request("DELETE", f"/channels/{urllib.parse.quote(ident, safe='')}")

    # ---- the demo shop ----

    def demo(self):
        """`GET /demo`: the demo shop's state (whether this server offers it, and where it runs)."""
        return self.request("GET", "/demo")

    def start_demo(self, *, profile=None):
        """`POST /demo`: starts the demo shop (once) for `profile` (default the client's), an RP on its own loopback
        port whose password sign-in and automatic upgrade this profile answers."""
        return self.request("POST", "/demo", {"profile": profile or self.profile})

    # ---- held ceremonies ----

    def hold(self, *, timeout_ms=None, profile=None):
        """`POST /profiles/{p}/holds`: the profile's next ceremony waits until `release_hold` (or the timeout)."""
        return self.request("POST", self._profile_path(profile, "/holds"), _drop_none({"timeoutMs": timeout_ms}))

    def holds(self):
        """`GET /holds`: every hold and its state."""
        return self.request("GET", "/holds")["holds"]

    def release_hold(self, hold_id, outcome=None):
        """`POST /holds/{id}/release`: `outcome` "proceed" (default) or "cancel"."""
        if isinstance(hold_id, dict):
            hold_id = hold_id["id"]
        return self.request("POST", f"/holds/{urllib.parse.quote(str(hold_id), safe='')}/release", _drop_none({"outcome": outcome}))

    # ---- profiles ----

    def profiles(self):
        """`GET /profiles`: every profile's settings."""
        return self.request("GET", "/profiles")["profiles"]

    def create_profile(self, name, *, pack=None, platform=None, **settings):
        """`POST /profiles`: a profile playing `pack` on `platform`; settings as keywords
        (`automatic_passkey_upgrades=False`, `os_version="18.2"`, ...) or in the API's camelCase."""
        body = {"name": name, **_drop_none({"pack": pack, "platform": platform}), **_settings(settings)}
        return self.request("POST", "/profiles", body)

    def get_profile(self, name=None):
        """`GET /profiles/{p}`: one profile's settings."""
        return self.request("GET", self._profile_path(name))

    def update_profile(self, name=None, **settings):
        """`PATCH /profiles/{p}`: change settings (logged as a setting event)."""
        return self.request("PATCH", self._profile_path(name), _settings(settings))

    def remove_profile(self, name=None):
        """`DELETE /profiles/{p}`: the profile and its records."""
        return self.request("DELETE", self._profile_path(name))

    # ---- devices ----

    def devices(self):
        """`GET /devices`: every device's settings."""
        return self.request("GET", "/devices")["devices"]

    def create_device(self, name, *, providers, preferred=None, platform=None, **state):
        """`POST /devices`: a device on `platform` with its provider accounts (profile names, in the user's order,
        1 to 8) and the `preferred` one; device state as keywords (`os_version="14"`, `browser_signed_in=False`,
        `private_browsing=True`, ...) or in the API's camelCase."""
        if isinstance(providers, str):
            providers = providers.split(",")
        body = {"name": name, "providers": list(providers), **_drop_none({"preferred": preferred, "platform": platform}),
                **_settings(state)}
        return self.request("POST", "/devices", body)

    def get_device(self, name=None):
        """`GET /devices/{d}`: one device's settings (`name` default: the client's device)."""
        return self.request("GET", self._device_path(name))

    def update_device(self, name=None, **settings):
        """`PATCH /devices/{d}`: change settings (`providers=[...]`, `preferred=None` for the first, state)."""
        if isinstance(settings.get("providers"), (list, tuple)):
            settings["providers"] = list(settings["providers"])
        return self.request("PATCH", self._device_path(name), _settings(settings))

    def remove_device(self, name=None):
        """`DELETE /devices/{d}`: the device; its provider accounts (profiles) stay."""
        return self.request("DELETE", self._device_path(name))

    # ---- ceremonies ----

    def _ceremony(self, tail, options, origin, profile, device=None, **members):
        body = {"options": _options(options), **_drop_none({"origin": self._origin(origin), **members})}
        return self.request("POST", self._scoped_path(profile, device, tail), body)

    def create(self, options, *, origin=None, mediation=None, top_origin=None, platform=None, android_package=None,
               ceremony=None, profile=None, device=None):
        """`navigator.credentials.create()`: the `RegistrationResponseJSON`. `mediation="conditional"` is an
        automatic passkey upgrade; a declined one raises `CredemuError` with `silent` true. On a device, an
        `Answer` whose `provider` is the account the platform gave the create to."""
        return self._ceremony("/credentials/create", options, origin, profile, device, mediation=mediation, topOrigin=top_origin,
                              platform=platform, androidPackage=android_package, ceremony=ceremony)

    def get(self, options, *, origin=None, mediation=None, pick=None, top_origin=None, platform=None, android_package=None,
            ceremony=None, profile=None, device=None):
        """`navigator.credentials.get()`: the `AuthenticationResponseJSON`. A conditional get waits for `pick`
        (from another thread) unless the simulated user's decision is queued. On a device, an `Answer` whose
        `provider` is the account whose passkey signed."""
        return self._ceremony("/credentials/get", options, origin, profile, device, mediation=mediation, pick=pick, topOrigin=top_origin,
                              platform=platform, androidPackage=android_package, ceremony=ceremony)

    def abort(self, ceremony, *, profile=None, device=None):
        """The page's `AbortSignal` for the ceremony sent with `ceremony=ID`: `{"aborted": bool}`."""
        path = self._scoped_path(profile, device, f"/ceremonies/{urllib.parse.quote(ceremony, safe='')}/abort")
        return self.request("POST", path, {})

    def offers(self, *, profile=None, device=None):
        """`GET /profiles/{p}/offer` (or `/devices/{d}/offer`): the autofill dropdowns waiting conditional gets
        opened; on a device each offered passkey names its `provider` account."""
        return self.request("GET", self._scoped_path(profile, device, "/offer"))["offers"]

    def pick(self, credential_id, *, ceremony=None, profile=None, device=None):
        """The simulated user picks `credential_id` from an open dropdown; the waiting conditional get signs in."""
        return self.request("POST", self._scoped_path(profile, device, "/offer/pick"),
                            _drop_none({"credentialId": _b64url(credential_id), "ceremony": ceremony}))

    # ---- signals (WebAuthn L3 §5.1.10) ----

    def _signal(self, kind, options, origin, profile, device):
        path = self._scoped_path(profile, device, f"/signals/{kind}")
        answer = self.request("POST", path, _drop_none({"options": options, "origin": self._origin(origin)}))
        return answer.providers if isinstance(answer, Answer) else None

    def signal_unknown_credential(self, rp_id, credential_id, *, origin=None, profile=None, device=None):
        """`PublicKeyCredential.signalUnknownCredential({rpId, credentialId})`. Returns None, as the browser's
        promise resolves undefined (the event log says what the provider did); on a device, the list of provider
        accounts the platform sent the signal to."""
        return self._signal("unknown", {"rpId": rp_id, "credentialId": _b64url(credential_id)}, origin, profile, device)

    def signal_all_accepted_credentials(self, rp_id, user_id, all_accepted_credential_ids, *, origin=None, profile=None, device=None):
        """`PublicKeyCredential.signalAllAcceptedCredentials({rpId, userId, allAcceptedCredentialIds})`."""
        options = {"rpId": rp_id, "userId": _b64url(user_id), "allAcceptedCredentialIds": [_b64url(i) for i in all_accepted_credential_ids]}
        return self._signal("accepted", options, origin, profile, device)

    def signal_current_user_details(self, rp_id, user_id, name, display_name, *, origin=None, profile=None, device=None):
        """`PublicKeyCredential.signalCurrentUserDetails({rpId, userId, name, displayName})`."""
        return self._signal("details", {"rpId": rp_id, "userId": _b64url(user_id), "name": name, "displayName": display_name},
                            origin, profile, device)

    def get_client_capabilities(self, *, platform=None, profile=None, device=None):
        """`PublicKeyCredential.getClientCapabilities()` as the profile's platform answers it; on a device, as the
        page's API does there (an extension's, else the browser's own; `profile` in the answer names it)."""
        path = self._scoped_path(profile, device, "/capabilities")
        if platform is not None and path.startswith("/devices/"):
            raise TypeError("a device answers on its own platform; change the device's platform instead")
        return self.request("GET", path, query={"platform": platform})

    # ---- passwords ----

    # A device's passwords are the account's that takes its creates (`/devices/{d}/passwords`...).

    def passwords(self, *, profile=None, device=None):
        """`GET /profiles/{p}/passwords` (or a device's): saved passwords, without the secrets."""
        return self.request("GET", self._scoped_path(profile, device, "/passwords"))["passwords"]

    def save_password(self, username, password, *, origin=None, profile=None, device=None):
        """`POST /profiles/{p}/passwords` (or a device's): the user saves a password for `origin`."""
        body = {"origin": self._origin(origin), "username": username, "password": password}
        return self.request("POST", self._scoped_path(profile, device, "/passwords"), body)

    def use_password(self, username, *, origin=None, profile=None, device=None):
        """`POST /profiles/{p}/passwords/use` (or a device's): the filled password was submitted (what makes an
        upgrade eligible)."""
        return self.request("POST", self._scoped_path(profile, device, "/passwords/use"), {"origin": self._origin(origin), "username": username})

    def autofill(self, *, origin=None, username=None, submit=False, if_saved=False, android_package=None, profile=None, device=None):
        """`POST /profiles/{p}/autofill` (or a device's): the provider fills the sign-in form of `origin`;
        `submit=True` also records the sign-in."""
        body = _drop_none({"origin": self._origin(origin), "username": username, "androidPackage": android_package})
        body.update(submit=submit, ifSaved=if_saved)
        return self.request("POST", self._scoped_path(profile, device, "/autofill"), body)

    # ---- the vault's passkeys ----

    def passkeys(self, *, profile=None):
        """`GET /profiles/{p}/passkeys`: the profile's passkeys (hidden ones included, marked)."""
        return self.request("GET", self._profile_path(profile, "/passkeys"))["passkeys"]

    def passkey(self, credential_id, *, profile=None):
        """`GET /profiles/{p}/passkeys/{id}`."""
        return self.request("GET", self._profile_path(profile, f"/passkeys/{urllib.parse.quote(_b64url(credential_id), safe='')}"))

    def hide_passkey(self, credential_id, *, profile=None):
        """`PATCH /profiles/{p}/passkeys/{id}` `{"hidden": true}`: the user hides the passkey in the provider."""
        return self.request("PATCH", self._profile_path(profile, f"/passkeys/{urllib.parse.quote(_b64url(credential_id), safe='')}"), {"hidden": True})

    def restore_passkey(self, credential_id, *, profile=None):
        """`PATCH /profiles/{p}/passkeys/{id}` `{"hidden": false}`: the user shows a hidden passkey again."""
        return self.request("PATCH", self._profile_path(profile, f"/passkeys/{urllib.parse.quote(_b64url(credential_id), safe='')}"), {"hidden": False})

    def rename_passkey(self, credential_id, *, user_name=None, display_name=None, profile=None):
        """`PATCH /profiles/{p}/passkeys/{id}` `{"userName", "displayName"}`: the user renames the passkey's user in
        the password manager (either alone keeps the other name), marking it `editedByUser`, which a pack's
        `signals.currentUserDetailsRespectsUserEdit` (GPM) keeps through `signal_current_user_details`. An empty,
        over-1024-byte or control-character name is a `CredemuError` TypeError (400), the vault unchanged."""
        return self.request("PATCH", self._profile_path(profile, f"/passkeys/{urllib.parse.quote(_b64url(credential_id), safe='')}"),
                            _drop_none({"userName": user_name, "displayName": display_name}))

    # ---- Playwright's credentials (`BrowserContext.credentials`), on a profile of any pack ----

    def create_credential(self, rp_id, *, id=None, user_handle=None, private_key=None, public_key=None, sign_count=None,
                          user_name=None, display_name=None, profile=None):
        """`POST /profiles/{p}/credentials`: Playwright's `credentials.create()`: a discoverable passkey for `rp_id`
        made with the pack's new-passkey settings; with only `rp_id` a fresh P-256 key, credential ID and user
        handle, else all four of `id`, `user_handle`, `private_key` (base64url PKCS#8) and `public_key` (base64url
        SPKI) to import one. Returns Playwright's dict: `{id, rpId, userHandle, privateKey, publicKey, signCount}`
        (a pack whose counter stays zero, as GPM's, says 0 whatever `sign_count` was)."""
        body = _drop_none({"rpId": rp_id, "id": _b64url(id), "userHandle": _b64url(user_handle), "privateKey": private_key,
                           "publicKey": public_key, "signCount": sign_count, "userName": user_name, "displayName": display_name})
        return self.request("POST", self._profile_path(profile, "/credentials"), body)

    def credentials(self, *, rp_id=None, id=None, profile=None):
        """`GET /profiles/{p}/credentials`: Playwright's `credentials.get()`: every passkey the profile holds (seeded
        or registered by a page) as Playwright's dicts, private keys included, filtered by `rp_id` and/or `id`."""
        return self.request("GET", self._profile_path(profile, "/credentials"), query={"rpId": rp_id, "id": _b64url(id)})["credentials"]

    def move_credentials(self, from_profile, to_profile, *, keep_source=False, rp_id=None):
        """`POST /vault/move`: the `from_profile`'s passkeys and passwords (only `rp_id`'s when given) written as a
        CXF document and imported into `to_profile`, removed from `from_profile` in the same transaction (see
        docs/cxf.md). With `keep_source` both profiles hold them (the same credential IDs, each its own pack). Returns
        `{from, to, kept, moved: {passkeys, passwords}, credentialIds, leftOut, importer}`."""
        body = _drop_none({"from": from_profile, "to": to_profile, "keepSource": keep_source or None, "rpId": rp_id})
        return self.request("POST", "/vault/move", body)

    def export_vault(self, format="cxf", *, include_secrets=False, profile=None):
        """`GET /profiles/{p}/export`: the profile's credentials as `credemu vault export --format` writes them: a CXF
        document (`"cxf"`, private keys and passwords only with `include_secrets`), or Playwright's or WebDriver's
        credential list (`"playwright"`, `"webdriver"`), which hold every private key and so need `include_secrets=True`
        (else a `CredemuError` TypeError). Returns `{format, includesSecrets, document, leftOut}`; `document` is what
        `import_vault` and `vault import --format` read, `leftOut` the passkeys the format cannot hold."""
        return self.request("GET", self._profile_path(profile, "/export"),
                            query={"format": format, "includeSecrets": "true" if include_secrets else None})

    def import_vault(self, document, *, format="cxf", profile=None):
        """`POST /profiles/{p}/import`: a CXF document, or Playwright's or WebDriver's credential list (a dict or list,
        or its JSON text), into the profile as `credemu vault import --format` reads it: every credential checked, a
        refusal (`CredemuError`, 400 naming the member's path, 409 for a credential ID the vault holds) leaves the vault
        unchanged. Returns `{"imported": {"passkeys": n, ...}}` (CXF adds `passwords` and `skipped`)."""
        if isinstance(document, (str, bytes, bytearray)):
            document = json.loads(document)
        return self.request("POST", self._profile_path(profile, "/import"), {"format": format, "document": document})

    def report_unused_password(self, domain, user_name, *, profile=None, device=None):
        """Apple's `reportUnusedPasswordCredential(domain:userName:)`: the account moved to passkeys."""
        return self.request("POST", self._scoped_path(profile, device, "/passwords/report-unused"), {"domain": domain, "userName": user_name})

    def run_scenario(self, scenario, *, providers=None):
        """`POST /scenarios/run`: a scenario (a dict, or JSON text, in the scenarios/ format) across packs, in
        temporary vaults; its divergence matrix."""
        document = json.loads(scenario) if isinstance(scenario, (str, bytes, bytearray)) else scenario
        return self.request("POST", "/scenarios/run", _drop_none({"scenario": document, "providers": providers}))

    def console_file(self, name="console.html"):
        """The console's files (`GET /`, `/console.js`, `/console.css`, `/console.svg`) as text: the password manager's window."""
        data = self.request("GET", "/" if name in ("", "/", "console.html") else "/" + name.lstrip("/"))
        return data.decode() if isinstance(data, (bytes, bytearray)) else data

    def remove_passkey(self, credential_id, *, profile=None):
        """`DELETE /profiles/{p}/passkeys/{id}`: the user deletes the passkey in the provider."""
        return self.request("DELETE", self._profile_path(profile, f"/passkeys/{urllib.parse.quote(_b64url(credential_id), safe='')}"))

    # ---- what happened ----

    def events(self, kind=None, *, after=None, limit=None, profile=None):
        """`GET /profiles/{p}/events`: the event log, oldest first (`kind`, outcome, reason, deciding knobs)."""
        return self.request("GET", self._profile_path(profile, "/events"), query={"kind": kind, "after": after, "limit": limit})["events"]

    def findings(self, *, profile=None):
        """`GET /profiles/{p}/findings`: the RP's requests that went against the guidance, with fixes."""
        return self.request("GET", self._profile_path(profile, "/findings"))["findings"]

    # ---- the simulated user ----

    def pending_decisions(self, *, profile=None, device=None):
        """`GET /profiles/{p}/user` (or a device's, its browser sheet's queue): the queued decisions."""
        return self.request("GET", self._scoped_path(profile, device, "/user"))["pending"]

    def queue_decisions(self, *decisions, profile=None, device=None):
        """`POST /profiles/{p}/user` (or a device's): the user's next answers to prompts: "accept", "cancel",
        "timeout", "pick:ID", and "use:NAME" (a security key, a phone device or a manager account in the browser's
        sheet)."""
        return self.request("POST", self._scoped_path(profile, device, "/user"), {"decisions": list(decisions)})["pending"]

    def clear_decisions(self, *, profile=None, device=None):
        """`DELETE /profiles/{p}/user` (or a device's)."""
        return self.request("DELETE", self._scoped_path(profile, device, "/user"))["pending"]

    # ---- forged answers (negative cases: the RP must refuse them) ----

    def forge_next(self, forgery, *, profile=None, device=None):
        """`POST /profiles/{p}/forge-next` (or a device's): the next create or get the forgery applies to answers the
        page with that one fault ("badSignature", "otherOrigin", "noUserPresence", ...), once; `None` disarms.
        Returns what is armed."""
        return self.request("POST", self._scoped_path(profile, device, "/forge-next"), {"forgery": forgery})

    def pending_forgery(self, *, profile=None, device=None):
        """`GET /profiles/{p}/forge-next` (or a device's): the forgery still armed (None when used) and, for a
        profile, its override bits."""
        return self.request("GET", self._scoped_path(profile, device, "/forge-next"))

    def attestation_root(self):
        """`GET /attestation/root`: the vault's test attestation root, `{"certificate": base64 DER, "pem": ...}`,
        which security keys' batch certificates chain to: trust it in an RP that verifies attestation."""
        return self.request("GET", "/attestation/root")

    # ---- WebDriver's virtual authenticators (WebAuthn L3 §11), under Selenium's names ----

    def _authenticator_path(self, authenticator_id, tail=""):
        name = authenticator_id or self.virtual_authenticator_id
        if not name:
            raise ValueError("This function requires a virtual authenticator to be set.")  # Selenium's words
        return "/webauthn/authenticator/" + urllib.parse.quote(name, safe="") + tail

    def add_virtual_authenticator(self, options):
        """`POST /webauthn/authenticator` (§11.3): a new security key from §11.1's options (a dict, or Selenium's
        `VirtualAuthenticatorOptions`: anything with `to_dict()`); it becomes the current one. Returns its ID, the
        name of the security-key profile that is the key (install the shim for that profile to let a page use it)."""
        body = options.to_dict() if hasattr(options, "to_dict") else dict(options)
        self.virtual_authenticator_id = self.request("POST", "/webauthn/authenticator", body)["value"]
        return self.virtual_authenticator_id

    def remove_virtual_authenticator(self, authenticator_id=None):
        """`DELETE /webauthn/authenticator/{id}` (§11.4): the key, its credentials and log (default: the current one)."""
        self.request("DELETE", self._authenticator_path(authenticator_id))
        if authenticator_id in (None, self.virtual_authenticator_id):
            self.virtual_authenticator_id = None

    def add_credential(self, credential, *, authenticator_id=None):
        """`POST .../credential` (§11.5): a dict of Credential Parameters, or Selenium's `Credential` (its `to_dict()`)."""
        body = credential.to_dict() if hasattr(credential, "to_dict") else dict(credential)
        self.request("POST", self._authenticator_path(authenticator_id, "/credential"), body)

    def get_credentials(self, *, authenticator_id=None):
        """`GET .../credentials` (§11.6): the key's credentials as §11.5's dicts, private keys PKCS#8 in base64url."""
        return self.request("GET", self._authenticator_path(authenticator_id, "/credentials"))["value"]

    def remove_credential(self, credential_id, *, authenticator_id=None):
        """`DELETE .../credentials/{credentialId}` (§11.7); the ID as bytes or base64url text."""
        path = self._authenticator_path(authenticator_id, "/credentials/" + urllib.parse.quote(_b64url(credential_id), safe=""))
        self.request("DELETE", path)

    def remove_all_credentials(self, *, authenticator_id=None):
        """`DELETE .../credentials` (§11.8)."""
        self.request("DELETE", self._authenticator_path(authenticator_id, "/credentials"))

    def set_user_verified(self, verified, *, authenticator_id=None):
        """`POST .../uv` (§11.9): whether the key's user verification succeeds."""
        self.request("POST", self._authenticator_path(authenticator_id, "/uv"), {"isUserVerified": bool(verified)})

    def set_response_override_bits(self, *, is_bogus_signature=False, is_bad_uv=False, is_bad_up=False, authenticator_id=None):
        """`POST .../override-bits` (CDP's `WebAuthn.setResponseOverrideBits`, which chromedriver does not expose):
        every later answer of the key with a bogus signature, UV=0 or UP=0; a bit not given is cleared."""
        body = {"isBogusSignature": bool(is_bogus_signature), "isBadUV": bool(is_bad_uv), "isBadUP": bool(is_bad_up)}
        return self.request("POST", self._authenticator_path(authenticator_id, "/override-bits"), body)["value"]

    def set_credential_properties(self, credential_id, *, backup_eligibility=None, backup_state=None, sign_count=..., authenticator_id=None):
        """`POST .../credentials/{credentialId}/props` (§11.10): the credential's BE and BS flags and its counter
        (`sign_count=None`: no counter); what is not given stays."""
        body = _drop_none({"backupEligibility": backup_eligibility, "backupState": backup_state})
        if sign_count is not ...:
            body["signCount"] = sign_count
        path = self._authenticator_path(authenticator_id, "/credentials/" + urllib.parse.quote(_b64url(credential_id), safe="") + "/props")
        self.request("POST", path, body)

    def selenium(self, driver, *, origin=None):
        """`driver` (a Selenium Chromium driver) with its virtual-authenticator methods sent to credemu: adding one
        installs the shim for that key in every page the driver loads, so a suite written for Chrome's own virtual
        authenticator runs on credemu by changing its driver fixture (`credemu.webdriver.CredemuDriver`)."""
        from .webdriver import CredemuDriver
        return CredemuDriver(driver, self, origin=origin)


def origin_of(url):
    """The origin of a URL (`http://localhost:8000/login` gives `http://localhost:8000`), or the text as given
    when it has no path."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme in ("http", "https") and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}".lower()
    return url
