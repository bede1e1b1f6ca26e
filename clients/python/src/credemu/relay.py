"""The driver's side of the shim's channel: one relay every driver shares (docs/shim.md, "Transport").

The shim sends one JSON message a request, `{"id", "method", "path", "body"}`, the path relative to its profile or
device (`/credentials/create`), through a binding the driver made; the driver hands it to `Relay.answer` with the
origin of the frame that called, as the driver reports it (CDP's execution context origin, Playwright's
`source["frame"].url`, a BiDi realm's origin), never an origin the page wrote. The relay refuses any route but the
shim's own page routes of its target, and makes the request to credemu with that `Origin` (so the server's rules for
a page hold as for the page's own fetch), on a kept-alive connection per thread, and answers `{"id", "status",
"body"}`; status 0 when credemu does not answer.
"""
import concurrent.futures
import http.client
import json
import re
import socket
import threading
import time
import urllib.parse

# What the shim asks of credemu, relative to its profile or device: the page routes it calls, nothing else.
# A `*` is one path segment of an ID's letters (a ceremony's random ID, a signal's kind).
RELAYED_ROUTES = (
    ("POST", "/credentials/create"),
    ("POST", "/credentials/get"),
    ("POST", "/ceremonies/*/abort"),
    ("GET", "/capabilities"),
    ("POST", "/signals/*"),
    ("POST", "/passwords"),
    ("POST", "/passwords/use"),
    ("POST", "/autofill"),
)
_SEGMENT = re.compile(r"[A-Za-z0-9_-]{1,128}")
_ORIGIN = re.compile(r"https?://[a-z0-9.\-]+(?::[0-9]{1,5})?|https?://\[[0-9a-f:.]+\](?::[0-9]{1,5})?")
# A conditional get waits for the simulated user's pick up to the server's 10 minutes.
_WAITING = {("POST", "/credentials/get")}


def relayed_route(method, path):
    """Whether the shim's message names one of its own routes: `method` and `path` as `RELAYED_ROUTES` lists them,
    each `*` one segment of `[A-Za-z0-9_-]`; no query, no dot segments, no percent-escapes."""
    if not isinstance(method, str) or not isinstance(path, str) or not path.startswith("/"):
        return False
    segments = path[1:].split("/")
    for allowed_method, template in RELAYED_ROUTES:
        parts = template[1:].split("/")
        if method != allowed_method or len(parts) != len(segments):
            continue
        if all(p == s if p != "*" else bool(_SEGMENT.fullmatch(s)) for p, s in zip(parts, segments)):
            return True
    return False


def frame_origin(url):
    """The origin of a frame's URL as a driver reports it (`https://rp.example/login` -> `https://rp.example`), or
    None for a frame with no such origin (`about:blank`, `data:`, `file:`), whose requests the relay refuses."""
    if not isinstance(url, str):
        return None
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1].lower()}"


def _refusal(ident, status, name, message):
    return {"id": ident, "status": status, "body": {"error": {"name": name, "message": message}}}


class Relay:
    """The relay for one shim: `client`'s server and token, the shim's target (`profile` or `device`).

    `allow_frame_origins=True` allows (`POST /origins`, once each) the origin of every frame that calls, before its
    first request: for an authenticator that answers any page, as Playwright's own does (`credemu.playwright`).
    The origin is the driver's, never one the page wrote, so no page can have another origin allowed."""

    def __init__(self, client, *, profile=None, device=None, workers=16, allow_frame_origins=False):
        if (profile is None) == (device is None):
            raise TypeError("a relay answers for one profile or one device")
        self.target = "/devices/" + urllib.parse.quote(device, safe="") if device else "/profiles/" + urllib.parse.quote(profile, safe="")
        parts = urllib.parse.urlsplit(client.url)
        if parts.scheme != "http":
            raise ValueError(f"the relay speaks plain HTTP to credemu, not {client.url}")
        self._host, self._port = parts.hostname, parts.port or 80
        self._token = client.token
        self._timeout = client.timeout
        self._local = threading.local()
        self._pool = None
        self._lock = threading.Lock()
        self._workers = workers
        self._connections = set()
        self._closed = False
        self.timings = None   # a list to append (HTTP seconds) to, when measuring
        self._allow_frame_origins = allow_frame_origins
        self._allowed = set()

    def answer(self, message, origin):
        """The reply to one message of the shim (its JSON text or the parsed object) from a frame of `origin` (as
        the driver reports it: an origin or a URL): `{"id", "status", "body"}`. Never raises."""
        try:
            if isinstance(message, (str, bytes)):
                message = json.loads(message)
        except ValueError:
            return _refusal(None, 400, "BadChannelMessage", "The channel's message is not JSON.")
        if not isinstance(message, dict):
            return _refusal(None, 400, "BadChannelMessage", "The channel's message is not a JSON object.")
        ident = message.get("id")
        if not isinstance(ident, str) or len(ident) > 64:
            return _refusal(None, 400, "BadChannelMessage", "The channel's message has no string id.")
        method, path, body = message.get("method"), message.get("path"), message.get("body")
        if not relayed_route(method, path):
            return _refusal(ident, 403, "RouteNotRelayed",
                            f"The channel relays only the shim's own routes of {self.target}, not {method!r} {path!r}.")
        origin = origin if isinstance(origin, str) and _ORIGIN.fullmatch(origin) else frame_origin(origin)
        if origin is None:
            return _refusal(ident, 403, "OriginNotRelayed", "The frame that called has no http(s) origin the driver reports.")
        if method == "GET" and body is not None:
            return _refusal(ident, 400, "BadChannelMessage", "A GET carries no body.")
        if self._allow_frame_origins and origin not in self._allowed:
            refusal = self._allow(ident, origin)
            if refusal is not None:
                return refusal
        data = None if method == "GET" else json.dumps({} if body is None else body).encode()
        # X-Credemu-Channel: the server then answers only the routes its table marks relayed (the one rule; the
        # list above refuses early, and with an older server).
        headers = {"Origin": origin, "Accept": "application/json", "X-Credemu-Channel": "relay"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        timeout = 660 if (method, path) in _WAITING else self._timeout
        started = time.perf_counter()
        try:
            status, payload = self._request(method, self.target + path, data, headers, timeout)
        except (OSError, http.client.HTTPException) as error:
            return _refusal(ident, 0, "ServerUnreachable", f"no answer from credemu at {self._host}:{self._port}: {error}")
        finally:
            if self.timings is not None:
                self.timings.append(time.perf_counter() - started)
        try:
            parsed = json.loads(payload) if payload else None
        except ValueError:
            parsed = None
        return {"id": ident, "status": status, "body": parsed}

    def _allow(self, ident, origin):
        """`POST /origins` for `origin` (the operator's route: no `Origin` header); None once allowed, else the
        refusal to answer the page with."""
        headers = {"Accept": "application/json", "Content-Type": "application/json"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        try:
            status, payload = self._request("POST", "/origins", json.dumps({"origin": origin}).encode(), headers, self._timeout)
        except (OSError, http.client.HTTPException) as error:
            return _refusal(ident, 0, "ServerUnreachable", f"no answer from credemu at {self._host}:{self._port}: {error}")
        if status >= 400:
            try:
                return {"id": ident, "status": status, "body": json.loads(payload)}
            except ValueError:
                return _refusal(ident, status, "OriginNotAllowed", f"credemu refused to allow {origin}.")
        with self._lock:
            self._allowed.add(origin)
        return None

    def submit(self, message, origin, reply):
        """`answer` on a worker thread (a conditional get may wait minutes), then `reply(answer)` on that thread.
        After `close()` nothing is relayed: the message is dropped and None returned."""
        pool = self.pool
        if pool is None:
            return None
        try:
            return pool.submit(lambda: reply(self.answer(message, origin)))
        except RuntimeError:   # closed meanwhile: the executor takes nothing after shutdown
            return None

    @property
    def pool(self):
        """The worker threads the relay's requests run on (made on first use); None once closed."""
        with self._lock:
            if self._pool is None and not self._closed:
                self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="credemu-relay")
            return self._pool

    def close(self):
        """Stops the workers, for good: queued messages are dropped, a request in flight (a conditional get waiting
        for its pick) is cut off, one still connecting is refused once connected, and a message submitted later is
        not relayed, so no thread of the relay outlives the driver."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
            connections, self._connections = self._connections, set()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        for connection in connections:
            sock = connection.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _request(self, method, path, data, headers, timeout):
        """One request on this thread's kept-alive connection; a connection the server closed while idle is
        opened again once (before anything of the request can have been read)."""
        for attempt in (0, 1):
            connection = getattr(self._local, "connection", None)
            fresh = connection is None
            if fresh:
                connection = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
                # Connected before it is registered, and registered only while the relay is open: `close()` cuts
                # off every connection it finds, and a worker that connected after it finds the relay closed.
                connection.connect()
                with self._lock:
                    closed = self._closed
                    if not closed:
                        self._connections.add(connection)
                if closed:
                    connection.close()
                    raise ConnectionAbortedError("the relay is closed")
                self._local.connection = connection
            connection.timeout = timeout
            if connection.sock is not None:
                connection.sock.settimeout(timeout)
            try:
                connection.request(method, path, body=data, headers=headers)
                response = connection.getresponse()
                payload = response.read()
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
                    self._local.connection = None
                return response.status, payload
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                connection.close()
                self._local.connection = None
                if fresh or attempt:
                    raise
            except BaseException:
                connection.close()
                self._local.connection = None
                raise
        raise AssertionError("unreachable")
