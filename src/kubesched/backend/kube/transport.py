"""Keep-alive HTTP/1.1 to the API server for short requests, at a fraction of urllib3's CPU per request.

Every binding and every event is one request; through urllib3's pool manager each
cost about 0.4 ms of CPU on loopback, and http.client alone still spends half of
that parsing response headers with the email package. The exchange here is the
minimum HTTP/1.1 a Kubernetes API server needs: the request line and headers and
body in one write; the status line, the headers it needs (length, chunking,
connection) and the body read back, chunked or not. Connections are opened by
urllib3, from the client's own connection pool, so TCP options, TLS settings,
certificate and hostname checks and the errors of a failed connect or handshake
stay exactly urllib3's. Watches (long streams) and proxied servers keep urllib3
for everything.
"""

from __future__ import annotations

import http.client
import io
import re
import socket
import ssl
import threading
import urllib.parse
import weakref
from collections.abc import Sequence
from typing import Any, NamedTuple

import urllib3
from urllib3.util.wait import wait_for_read

_MAX_LINE = 65536
# What a header value or request target may not hold: a line break would start a header of its own.
_UNSAFE = re.compile(r"[\x00-\x20\x7f]")
_UNSAFE_VALUE = re.compile(r"[\r\n\x00]")
_WITH_BODY = frozenset(("POST", "PUT", "PATCH"))
# Requests written before their answers are read: the server writes answers while we still write, and with
# too many at once both sides' socket buffers could fill and each wait on the other. 32 short requests' answers
# (about 1.5 kB each) stay well inside loopback's default receive buffer.
PIPELINE_DEPTH = 32


class Response:
    """A finished exchange: status and the whole body, the connection already back in the pool."""

    __slots__ = ("data", "status")

    def __init__(self, status: int, data: bytes) -> None:
        self.status, self.data = status, data

    def read(self) -> bytes:
        return self.data


class Request(NamedTuple):
    """One request of a pipelined exchange: `target` is the path and query below the server's address."""

    method: str
    target: str
    body: bytes | None
    headers: dict[str, str]


class _Conn:
    """One open connection: its socket and a buffered reader of it."""

    __slots__ = ("reader", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader: io.BufferedReader = sock.makefile("rb")

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


class Transport:
    """Connections to one server address, each used by one thread at a time and kept while the server keeps it."""

    def __init__(self, pool: urllib3.HTTPConnectionPool, base_url: str, maxsize: int) -> None:
        self._pool = pool  # opens connections with the client's TCP and TLS settings
        self.base_url = base_url
        parts = urllib.parse.urlsplit(base_url)
        self._prefix = parts.path.rstrip("/")
        self._host = parts.netloc.rpartition("@")[2]
        self._idle: list[_Conn] = []
        self._lock = threading.Lock()
        self._maxsize = maxsize
        # Idle connections close with the transport, as urllib3's pools close theirs, not at the sockets' GC.
        weakref.finalize(self, _close_all, self._idle)

    @classmethod
    def for_client(cls, pool_manager: urllib3.PoolManager, base_url: str, maxsize: int) -> Transport | None:
        """A transport beside the client's pool manager, or None where urllib3 must do it all (a proxy)."""
        if type(pool_manager) is not urllib3.PoolManager:
            return None
        scheme = urllib.parse.urlsplit(base_url).scheme
        if scheme not in ("http", "https"):
            return None
        return cls(pool_manager.connection_from_url(base_url), base_url, maxsize)

    def request(self, method: str, target: str, body: bytes | None, headers: dict[str, str], timeout: float) -> Any:
        """Send one request (`target`: path and query below the server's address) and read its answer.

        Raises what urllib3 would: its NewConnectionError, ConnectTimeoutError or SSLError before anything was
        sent, OSError or urllib3's ProtocolError once the request may have gone out; ValueError for a target or
        header that would not make one well-formed request (nothing is sent then).
        """
        head = self._head(method, self._prefix + target, body, headers)
        conn = self._checkout(timeout)
        try:
            conn.sock.settimeout(timeout)
            conn.sock.sendall(head + body if body else head)
            status, data, close = _read_response(conn.reader, method)
        except http.client.HTTPException as err:
            conn.close()
            if isinstance(err, OSError):  # RemoteDisconnected: a ConnectionResetError too
                raise
            raise _as_urllib3(err) from err
        except BaseException:
            conn.close()
            raise
        if close:
            conn.close()
        else:
            self._checkin(conn)
        return Response(status, data)

    def pipeline(self, requests: Sequence[Request], timeout: float) -> list[Response | Exception]:
        """Send the requests on one connection in one write, then read their answers in order.

        HTTP/1.1 pipelining: the server (Go's net/http) reads and answers one request after
        the other, so N requests cost one write and the reads their answers need, not N round
        trips of a thread (more than PIPELINE_DEPTH go in several such writes). Each slot holds
        the request's Response or why it has none: ValueError for a request that would not be
        well-formed (it alone is not sent); urllib3's connect errors when no connection could
        be opened (none was sent); else, from the first request the connection broke or closed
        before answering, OSError or urllib3's ProtocolError for it and every later one of its
        write, each of which may have been applied.
        """
        heads: list[bytes | ValueError] = []
        for method, target, body, headers in requests:
            try:
                heads.append(self._head(method, self._prefix + target, body, headers))
            except ValueError as err:
                heads.append(err)
        well_formed = [(h, r) for h, r in zip(heads, requests, strict=True) if isinstance(h, bytes)]
        answers: list[Response | Exception] = []
        for start in range(0, len(well_formed), PIPELINE_DEPTH):
            chunk = well_formed[start : start + PIPELINE_DEPTH]
            data = b"".join(head + r.body if r.body else head for head, r in chunk)
            answers += self._exchange([r.method for _, r in chunk], data, timeout)
        by_order = iter(answers)
        return [h if isinstance(h, ValueError) else next(by_order) for h in heads]

    def _exchange(self, methods: list[str], data: bytes, timeout: float) -> list[Response | Exception]:
        """Write `data` (requests of these methods) and read an answer for each, or the failure that took it."""
        try:
            conn = self._checkout(timeout)
        except (OSError, urllib3.exceptions.HTTPError) as err:
            return [err] * len(methods)
        answers: list[Response | Exception] = []
        close = False
        try:
            conn.sock.settimeout(timeout)
            conn.sock.sendall(data)
            for method in methods:
                status, body, close = _read_response(conn.reader, method)
                answers.append(Response(status, body))
                if close:
                    break
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            failure = _as_urllib3(err) if isinstance(err, http.client.HTTPException) else err
            return answers + [failure] * (len(methods) - len(answers))
        except BaseException:
            conn.close()
            raise
        if not close:
            self._checkin(conn)
            return answers
        conn.close()
        closed = http.client.RemoteDisconnected(f"the server closed the connection after {len(answers)} answers")
        return answers + [closed] * (len(methods) - len(answers))

    def _head(self, method: str, target: str, body: bytes | None, headers: dict[str, str]) -> bytes:
        if _UNSAFE.search(method) or _UNSAFE.search(target):
            raise ValueError(f"not a valid request: {method!r} {target!r}")
        lines = [f"{method} {target} HTTP/1.1\r\nHost: {self._host}\r\n"]
        for name, value in headers.items():
            if _UNSAFE.search(name) or _UNSAFE_VALUE.search(value):
                raise ValueError(f"header {name!r} holds a line break or a control character")
            lines.append(f"{name}: {value}\r\n")
        if body or method in _WITH_BODY:
            lines.append(f"Content-Length: {len(body) if body else 0}\r\n")
        lines.append("\r\n")
        return "".join(lines).encode("latin-1")

    def _checkout(self, timeout: float) -> _Conn:
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return self._open(timeout)
            if not wait_for_read(conn.sock, timeout=0.0):
                return conn
            conn.close()  # the server closed it while idle (or sent what no request asked for)

    def _checkin(self, conn: _Conn) -> None:
        with self._lock:
            if len(self._idle) < self._maxsize:
                self._idle.append(conn)
                return
        conn.close()

    def _open(self, timeout: float) -> _Conn:
        """A connected socket from urllib3, with its errors as urllib3 raises them."""
        opened: Any = self._pool._new_conn()
        opened.timeout = timeout
        try:
            opened.connect()
        except (ssl.SSLError, ssl.CertificateError) as err:
            opened.close()
            raise urllib3.exceptions.SSLError(err) from err
        except BaseException:
            opened.close()
            raise
        return _Conn(opened.sock)

    def close(self) -> None:
        with self._lock:
            _close_all(self._idle)


def _as_urllib3(err: http.client.HTTPException) -> Exception:
    """A broken answer as urllib3 reports it: RemoteDisconnected stays (a ConnectionResetError too)."""
    if isinstance(err, OSError):
        return err
    return urllib3.exceptions.ProtocolError(f"{type(err).__name__}: {err}", err)


def _close_all(idle: list[_Conn]) -> None:
    while idle:
        idle.pop().close()


def _line(reader: io.BufferedReader) -> bytes:
    line = reader.readline(_MAX_LINE + 1)
    if len(line) > _MAX_LINE:
        raise http.client.LineTooLong("response line")
    return line


def _read_response(reader: io.BufferedReader, method: str) -> tuple[int, bytes, bool]:
    """Status, body and whether the server closes the connection after it; interim 1xx answers are skipped."""
    while True:
        line = _line(reader)
        if not line:
            raise http.client.RemoteDisconnected("Remote end closed connection without response")
        version, _, rest = line.decode("latin-1").partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise http.client.BadStatusLine(line.decode("latin-1", "replace").strip())
        status = int(code)
        length: int | None = None
        chunked = False
        close = version == "HTTP/1.0"
        while True:
            header = _line(reader)
            if header in (b"\r\n", b"\n"):
                break
            if not header:
                raise http.client.IncompleteRead(b"")
            name, _, value = header.decode("latin-1").partition(":")
            name = name.strip().lower()
            if name == "content-length":
                length = int(value.strip())
            elif name == "transfer-encoding":
                chunked = "chunked" in value.lower()
            elif name == "connection":
                tokens = value.lower()
                close = "close" in tokens or (close and "keep-alive" not in tokens)
        if 100 <= status < 200 and status != 101:
            continue
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            return status, b"", close
        if chunked:
            return status, _read_chunked(reader), close
        if length is not None:
            data = reader.read(length)
            if len(data) < length:
                raise http.client.IncompleteRead(data, length - len(data))
            return status, data, close
        return status, reader.read(), True  # no length: the body ends with the connection


def _read_chunked(reader: io.BufferedReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size_line = _line(reader)
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise http.client.IncompleteRead(b"".join(parts)) from None
        if size == 0:
            while _line(reader) not in (b"\r\n", b"\n", b""):  # trailers
                pass
            return b"".join(parts)
        chunk = reader.read(size)
        if len(chunk) < size:
            raise http.client.IncompleteRead(b"".join(parts) + chunk, size - len(chunk))
        parts.append(chunk)
        reader.read(2)  # the CRLF after the chunk
