"""A minimal RFC 6455 websocket client (text frames, one connection, blocking), for WebDriver BiDi and CDP.

Standard library only, so the package needs nothing from PyPI. No `Origin` header is sent: Firefox refuses a
BiDi handshake that carries one.
"""
import base64
import os
import socket
import struct
import threading
import urllib.parse

_QUICKACK = getattr(socket, "TCP_QUICKACK", None)


class WebSocketError(Exception):
    """The handshake was refused or the connection closed."""


def _masked(payload, mask):
    if not payload:
        return b""
    n = len(payload)
    key = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big")


class WebSocket:
    """One connection; `send` may be called from several threads (a frame is written whole under a lock) while one
    thread reads."""

    def __init__(self, url, timeout=30):
        self._send_lock = threading.Lock()
        parts = urllib.parse.urlsplit(url)
        self.sock = socket.create_connection((parts.hostname, parts.port or 80), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        request = (f"GET {path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise WebSocketError("the connection closed during the handshake")
            head += chunk
        head, self.buffer = head.split(b"\r\n\r\n", 1)
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status + b" ":
            raise WebSocketError(f"handshake refused: {status.decode(errors='replace')}")

    def settimeout(self, seconds):
        self.sock.settimeout(seconds)

    def send(self, text):
        payload = text.encode()
        header = bytes([0x81])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        frame = header + mask + _masked(payload, mask)
        with self._send_lock:
            self.sock.sendall(frame)

    def _read(self, n):
        while len(self.buffer) < n:
            # ACK at once (Linux: TCP_QUICKACK, which the kernel clears again, so before every read): a browser's
            # end that sends a command's reply and then an event, two small writes, holds the event under Nagle's
            # algorithm until this end's delayed ACK, ~40 ms (measured on Firefox's BiDi: a channel round trip
            # of 3 ms became 45 every other time).
            if _QUICKACK is not None:
                try:
                    self.sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)
                except OSError:
                    pass
            chunk = self.sock.recv(max(65536, n - len(self.buffer)))
            if not chunk:
                raise WebSocketError("the connection closed")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def recv(self):
        """The next text message (fragments joined; pings answered)."""
        message = b""
        while True:
            first, second = self._read(2)
            opcode, length = first & 0x0F, second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if second & 0x80 else None
            payload = self._read(length)
            if mask:
                payload = _masked(payload, mask)
            if opcode == 0x8:
                raise WebSocketError("the peer closed the connection")
            if opcode == 0x9:
                self._control(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            message += payload
            if first & 0x80:
                return message.decode()

    def _control(self, opcode, payload):
        mask = os.urandom(4)
        frame = bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + _masked(payload, mask)
        with self._send_lock:
            self.sock.sendall(frame)

    def close(self):
        try:
            self._control(0x8, b"")
        except OSError:
            pass
        self.sock.close()
