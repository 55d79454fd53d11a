"""Keep-alive HTTP/1.1 to the API server for short requests, at a third of urllib3's CPU per request.

Every binding and every event is one request; through urllib3's pool manager each
cost about 0.4 ms of CPU on loopback (URL parsing, pool lookup, its response object
and header classes), three times what http.client alone needs. Connections are still
opened by urllib3, from the client's own connection pool, so TCP options, TLS
settings, certificate and hostname checks and the errors of a failed connect or
handshake stay exactly urllib3's; the exchange on an open connection is
http.client's, headers and body in one write. Watches (long streams) and proxied
servers keep urllib3 for everything.
"""

from __future__ import annotations

import http.client
import ssl
import threading
import urllib.parse
import weakref
from typing import Any

import urllib3
from urllib3.util.wait import wait_for_read


class Response:
    """A finished exchange: status and the whole body, the connection already back in the pool."""

    __slots__ = ("data", "status")

    def __init__(self, status: int, data: bytes) -> None:
        self.status, self.data = status, data

    def read(self) -> bytes:
        return self.data


class Transport:
    """Connections to one server address, each used by one thread at a time and kept while the server keeps it."""

    def __init__(self, pool: urllib3.HTTPConnectionPool, base_url: str, maxsize: int) -> None:
        self._pool = pool  # opens connections with the client's TCP and TLS settings
        self.base_url = base_url
        self._prefix = urllib.parse.urlsplit(base_url).path.rstrip("/")
        self._idle: list[http.client.HTTPConnection] = []
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
        sent, OSError or urllib3's ProtocolError once the request may have gone out.
        """
        conn = self._checkout(timeout)
        try:
            conn.sock.settimeout(timeout)
            conn.request(method, self._prefix + target, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except http.client.HTTPException as err:
            conn.close()
            if isinstance(err, OSError):  # RemoteDisconnected: a ConnectionResetError too
                raise
            raise urllib3.exceptions.ProtocolError(f"{type(err).__name__}: {err}", err) from err
        except BaseException:
            conn.close()
            raise
        if resp.will_close:
            conn.close()
        else:
            self._checkin(conn)
        return Response(resp.status, data)

    def _checkout(self, timeout: float) -> http.client.HTTPConnection:
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return self._open(timeout)
            if conn.sock is not None and not wait_for_read(conn.sock, timeout=0.0):
                return conn
            conn.close()  # the server closed it while idle (or sent what no request asked for)

    def _checkin(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < self._maxsize:
                self._idle.append(conn)
                return
        conn.close()

    def _open(self, timeout: float) -> http.client.HTTPConnection:
        """A connected socket from urllib3 (its errors as urllib3 raises them), driven by http.client."""
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
        conn = http.client.HTTPConnection(opened.host, opened.port, timeout=timeout)
        conn.sock = opened.sock
        conn.auto_open = 0  # a closed connection is dropped, never silently reopened without TLS
        return conn

    def close(self) -> None:
        with self._lock:
            _close_all(self._idle)


def _close_all(idle: list[http.client.HTTPConnection]) -> None:
    while idle:
        idle.pop().close()
