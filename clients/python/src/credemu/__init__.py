"""Drive credemu, the credential-provider emulator, from Python.

    import credemu
    with credemu.Server() as server:
        client = server.client()
        client.save_password("alice@example.com", "pw", origin="https://shop.example.com")
"""
from importlib.metadata import PackageNotFoundError, version

from .client import ROUTES, Answer, Client, origin_of
from .errors import CredemuError
from .playwright import credentials
from .server import Server, find_binary
from .shim import install_shim

__all__ = ["Answer", "Client", "CredemuError", "ROUTES", "Server", "credentials", "find_binary", "install_shim", "origin_of"]
try:
    __version__ = version("credemu")  # the repository's VERSION file, through pyproject.toml
except PackageNotFoundError:  # imported from the source tree, not installed
    __version__ = None
