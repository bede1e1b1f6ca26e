"""A raw-socket HTTP server for the probe's hostile-server tests: it reads each request (head and
Content-Length's worth of body), then answers with the bytes a test chooses, or lets a function write to the
socket, on daemon threads. A client that goes away ends that connection quietly."""
import socket
import threading
import time


class HostileHTTP:
    def __init__(self, answer):
        self.answer = answer  # bytes, or a callable(connection) that writes the answer
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.requests = 0
        self.stopped = threading.Event()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/"

    def __enter__(self):
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.stopped.set()
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()

    def _accept(self):
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(connection,), daemon=True).start()

    def _handle(self, connection):
        connection.settimeout(10)
        try:
            read_request(connection)
            self.requests += 1
            if callable(self.answer):
                self.answer(connection)
            else:
                connection.sendall(self.answer)
        except OSError:
            pass  # the client left: what the test wants to see it do
        finally:
            connection.close()


def read_request(connection):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def trickle(head, interval=1.0, limit=600):
    """`head`, then one byte every `interval` seconds for as long as the client reads (at most `limit` bytes)."""
    def answer(connection):
        connection.sendall(head)
        for _ in range(limit):
            time.sleep(interval)
            connection.sendall(b"x")
    return answer
