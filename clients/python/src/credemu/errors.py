"""The one exception the package raises."""


class CredemuError(Exception):
    """A refusal from credemu: the API's error body (`{"error": {...}}`) with the HTTP status, or a server that
    would not start (`status` None).

    `name` is the browser's DOMException name for a ceremony (`NotAllowedError`, `InvalidStateError`, ...) or
    credemu's own (`NotFound`, `Forbidden`, `InvalidPolicyPack`, ...); `reason` the stable code of a ceremony's
    outcome (`noCredential`, `excludedCredential`, `optOut`, ...); `dialects` the same outcome as the web, Android
    and Apple would report it; `body` the whole error object.
    """

    def __init__(self, name, message, *, status=None, body=None, method=None, path=None):
        self.name = name
        self.message = message
        self.status = status
        self.body = body or {}
        self.method = method
        self.path = path
        super().__init__(str(self))

    @classmethod
    def from_response(cls, status, payload, method=None, path=None):
        """The error an HTTP answer carries; a body that is not credemu's error shape still gives one."""
        error = payload.get("error") if isinstance(payload, dict) else None
        if not isinstance(error, dict):
            text = payload.decode(errors="replace") if isinstance(payload, bytes) else str(payload)
            return cls("HTTPError", text[:500], status=status, body={}, method=method, path=path)
        return cls(error.get("name", "Error"), error.get("message", ""), status=status, body=error, method=method, path=path)

    @property
    def reason(self):
        return self.body.get("reason")

    @property
    def silent(self):
        """True for an expected no-op, such as an automatic upgrade the provider declined."""
        return self.body.get("silent")

    @property
    def dialects(self):
        return self.body.get("dialects")

    @property
    def dialect(self):
        """The dialect the profile's platform speaks: `web`, `android` or `apple`."""
        return self.body.get("dialect")

    @property
    def profile(self):
        """The profile (provider account) whose provider failed a ceremony: on a device, the account the
        platform sent it to."""
        return self.body.get("profile")

    @property
    def retry_millis(self):
        return self.body.get("retryMillis")

    @property
    def code(self):
        """A vault failure's code (`locked`, `corrupt`, ...)."""
        return self.body.get("code")

    def __str__(self):
        where = f"{self.method} {self.path}: " if self.method else ""
        status = f"{self.status} " if self.status is not None else ""
        reason = f" (reason: {self.reason})" if self.reason else ""
        return f"{where}{status}{self.name}: {self.message}{reason}"

    def __reduce__(self):
        return (_rebuild, (self.name, self.message, self.status, self.body, self.method, self.path))


def _rebuild(name, message, status, body, method, path):
    return CredemuError(name, message, status=status, body=body, method=method, path=path)
