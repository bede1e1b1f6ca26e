"""A Selenium driver whose virtual-authenticator methods (WebAuthn L3 §11, Selenium's names) go to credemu.

    driver = credemu_client.selenium(webdriver.Chrome(options=...))
    driver.add_virtual_authenticator(VirtualAuthenticatorOptions(has_resident_key=True))
    driver.get("https://localhost:8443/login")   # the page's WebAuthn calls now reach credemu's key

Everything else is the driver's own. Adding an authenticator installs credemu's shim for that key (the profile that
is the key) in every document the driver loads from then on, replacing the one installed before; removing it
removes the shim, as removing Chrome's virtual authenticator leaves the page with none. `get(url)` allows the URL's
origin on the server first, since the shim's requests come from the page.
"""
import base64

from .client import origin_of
from .shim import installed_shim


class CredemuDriver:
    """`driver` with `add_virtual_authenticator`, `remove_virtual_authenticator`, `add_credential`,
    `get_credentials`, `remove_credential`, `remove_all_credentials`, `set_user_verified` and
    `virtual_authenticator_id` answered by credemu, as Selenium's `WebDriver` answers them with Chrome's."""

    def __init__(self, driver, client, *, origin=None):
        self._driver = driver
        self._client = client.for_profile(client.profile, origin=origin)
        self._uninstall = None
        self._allowed = set()
        if origin is not None:
            self._allow(origin)

    def __getattr__(self, name):
        return getattr(self._driver, name)

    @property
    def wrapped_driver(self):
        return self._driver

    @property
    def credemu(self):
        """The credemu client the authenticator methods use (its `virtual_authenticator_id` is the current key)."""
        return self._client

    @property
    def virtual_authenticator_id(self):
        return self._client.virtual_authenticator_id

    def _allow(self, url):
        origin = origin_of(url)
        if origin.startswith(("http://", "https://")) and origin not in self._allowed:
            self._client.allow_origin(origin)
            self._allowed.add(origin)

    def get(self, url):
        self._allow(url)
        return self._driver.get(url)

    def add_virtual_authenticator(self, options):
        authenticator_id = self._client.add_virtual_authenticator(options)
        self._remove_shim()
        _, self._uninstall = installed_shim(self._driver, self._client, profile=authenticator_id)
        return authenticator_id

    def remove_virtual_authenticator(self):
        self._client.remove_virtual_authenticator()
        self._remove_shim()

    def _remove_shim(self):
        if self._uninstall is not None:
            self._uninstall()
            self._uninstall = None

    def add_credential(self, credential):
        self._client.add_credential(credential)

    def get_credentials(self):
        """Selenium's `Credential` objects, as `WebDriver.get_credentials` returns them."""
        from selenium.webdriver.common.virtual_authenticator import Credential
        return [Credential.from_dict(item) for item in self._client.get_credentials()]

    def remove_credential(self, credential_id):
        if isinstance(credential_id, (bytes, bytearray)):
            credential_id = base64.urlsafe_b64encode(bytes(credential_id)).decode()
        self._client.remove_credential(credential_id)

    def remove_all_credentials(self):
        self._client.remove_all_credentials()

    def set_user_verified(self, verified):
        self._client.set_user_verified(verified)
