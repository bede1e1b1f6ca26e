"""Drive credemu, the credential-provider emulator, from Python.

    import credemu
    with credemu.Server() as server:
        client = server.client()
        client.save_password("alice@example.com", "pw", origin="https://shop.example.com")
"""
from .client import ROUTES, Answer, Client, origin_of
from .errors import CredemuError
from .server import Server, find_binary
from .shim import install_shim

__all__ = ["Answer", "Client", "CredemuError", "ROUTES", "Server", "find_binary", "install_shim", "origin_of"]
__version__ = "0.1.0"
