"""The package's own tests: the client and server against the repository's build, the plugin through pytester.

The binary is `$CREDEMU`, else `$CREDEMU_BIN` (the interop suite's variable), else the repository's debug build.
"""
import contextlib
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
os.environ.setdefault("CREDEMU", os.environ.get("CREDEMU_BIN") or str(ROOT / ".build" / "debug" / "credemu"))

pytest_plugins = ["pytester"]


@contextlib.contextmanager
def page_site(body, headers=()):
    """`body` served at every path of http://localhost:PORT (a secure context, so WebAuthn runs there), with the extra
    response `headers`; yields the origin and stops the server after."""
    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://localhost:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
