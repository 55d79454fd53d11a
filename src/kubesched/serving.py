"""The secure port (10259): /healthz, /livez, /readyz, /metrics, /configz over HTTPS.

With no certificate given, a self-signed one is made for the host at start (and
written to --cert-dir when set), as kube-scheduler does. Who may read what is
decided by delegation to the API server (kubesched.delegation).

A liveness probe must get its answer however other clients behave, so each
connection has its own thread, in which its TLS handshake runs, and deadlines
(Limits): the handshake and the first request's head within header_timeout of the
accept (as Go's ReadHeaderTimeout), a later request's head within header_timeout of
its first byte, at most idle_timeout between requests. Beyond max_connections a new
connection pushes out the one that has waited longest on its client (SecureServer).

Plain threads rather than an ASGI server: authentication needs the client
certificate's subject, which uvicorn does not hand to the application, and
`kubesched run` imports nothing more to serve.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import logging
import os
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import formatdate
from typing import Any
from urllib.parse import unquote_to_bytes

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from kubesched.delegation import (
    DEFAULT_ALWAYS_ALLOW_PATHS,
    Authenticator,
    Authorizer,
    Delegation,
    Unauthorized,
    pretty_print,
    status_body,
)

log = logging.getLogger(__name__)

Check = Callable[[], bool]


def self_signed_certificate(directory: str, host: str = "localhost") -> tuple[str, str]:
    """Write a self-signed certificate and key for `host` (plus localhost and 127.0.0.1); return their paths."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}@{int(datetime.datetime.now().timestamp())}")])
    now = datetime.datetime.now(datetime.UTC)
    alt = x509.SubjectAlternativeName(
        [x509.DNSName(host), x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(alt, critical=False)
        .sign(key, hashes.SHA256())
    )
    os.makedirs(directory, exist_ok=True)
    cert_path = os.path.join(directory, "kube-scheduler.crt")
    key_path = os.path.join(directory, "kube-scheduler.key")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    return cert_path, key_path


class ServingError(Exception):
    """The secure port could not be served (address in use, unreadable certificate); upstream's words."""


def _reason(err: OSError | ValueError) -> str:
    strerror = getattr(err, "strerror", None)
    return strerror.lower() if strerror else str(err)


def _tls_context(cert_file: str, key_file: str, cert_dir: str, client_ca: str = "") -> ssl.SSLContext:
    """The serving certificate's context: the files given, else a self-signed pair made in `cert_dir` (or a
    temporary directory); client certificates are asked for when there is a client CA (PEM) to verify them
    against. Raises ServingError in kube-scheduler's words."""
    if bool(cert_file) != bool(key_file):  # dynamiccertificates.NewDynamicServingContentFromFiles
        raise ServingError("missing filename for serving cert")
    if not cert_file:
        try:
            directory = cert_dir or tempfile.mkdtemp(prefix="kubesched-certs-")
            cert_file, key_file = self_signed_certificate(directory, socket.gethostname())
        except OSError as err:
            where = f" {err.filename}" if err.filename else ""
            raise ServingError(f"error creating self-signed certificates:{where}: {_reason(err)}") from err
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(cert_file, key_file)
    except (OSError, ValueError) as err:
        message = f"unable to load the serving certificate {cert_file} (key {key_file}): {_reason(err)}"
        raise ServingError(message) from err
    ctx.set_alpn_protocols(["http/1.1"])
    if client_ca:
        try:
            ctx.load_verify_locations(cadata=client_ca)
        except (ssl.SSLError, ValueError) as err:
            raise ServingError(f"unable to load client CA: {err}") from err
        ctx.verify_mode = ssl.CERT_OPTIONAL
    return ctx


@dataclass(frozen=True)
class Limits:
    """Bounds on what one client can hold: see the module's docstring."""

    max_connections: int = 512
    header_timeout: float = 10.0
    idle_timeout: float = 90.0
    write_timeout: float = 10.0
    max_header_bytes: int = 1 << 20


CAP_REPORT_INTERVAL = 60.0

REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
}


@dataclass
class Response:
    code: int
    content_type: str
    body: bytes
    close: bool = False


class _Request:
    """One parsed request head; raises ValueError for one that is not HTTP/1.x."""

    def __init__(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[0].isalpha() or not parts[1]:
            raise ValueError("malformed request line")
        self.method, self.target, self.version = parts
        self.headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip():
                raise ValueError("malformed header line")
            self.headers.setdefault(name.lower(), value.strip())
        raw_path, _, self.query = self.target.partition("?")
        # As Go's URL.Path, which routing and authorization see: percent-decoded.
        self.path = unquote_to_bytes(raw_path).decode("utf-8", "replace")

    @property
    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        has_body = self.headers.get("content-length", "0") not in ("", "0") or "transfer-encoding" in self.headers
        return self.version == "HTTP/1.1" and "close" not in connection and not has_body


class _Conn:
    """One connection's socket (plain, then TLS) and since when it has been waiting on its client (None: busy)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.waiting_since: float | None = time.monotonic()


class SecureServer:
    """HTTPS with one thread per connection, its handshake inside it, deadlines, and a cap on connections.

    At the cap, a new connection takes the place of the one that has waited longest on its client (in its
    handshake, its request head, or idle between requests): a flood of idle connections then delays a probe
    by nothing, rather than shutting it out until their deadlines. Only when every connection is busy
    answering is the new one closed at once."""

    def __init__(
        self,
        listener: socket.socket,
        context: ssl.SSLContext,
        answer: Callable[[_Request, dict[str, Any] | None], Response],
        limits: Limits,
    ) -> None:
        self.listener = listener
        self.context = context
        self.answer = answer
        self.limits = limits
        self.stopped = threading.Event()
        self._lock = threading.Lock()
        self._open: dict[int, _Conn] = {}
        self.refused = 0
        self.evicted = 0
        self._reported = (0, 0, 0.0)  # refused, evicted, when: the last warning about the cap

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._open)

    def serve_forever(self) -> None:
        self.listener.settimeout(0.25)  # looks at `stopped` this often
        while not self.stopped.is_set():
            try:
                sock, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self.stopped.is_set():
                    return
                time.sleep(0.05)  # out of file descriptors: let some connections end
                continue
            conn = _Conn(sock)
            admitted = self._admit(conn)
            self._report()
            if not admitted:
                sock.close()
                continue
            threading.Thread(target=self._connection, args=(conn,), name="secure-serving-conn", daemon=True).start()

    def _admit(self, conn: _Conn) -> bool:
        with self._lock:
            if len(self._open) >= self.limits.max_connections:
                waiting = [c for c in self._open.values() if c.waiting_since is not None]
                if not waiting:
                    self.refused += 1
                    return False
                oldest = min(waiting, key=lambda c: c.waiting_since or 0.0)
                del self._open[id(oldest)]
                self.evicted += 1
                _shutdown(oldest.sock)
            self._open[id(conn)] = conn
            return True

    def _report(self) -> None:
        """At most once a minute, a warning that the cap was reached: a flood of connections, or a cap too low."""
        refused, evicted, when = self._reported
        now = time.monotonic()
        if now - when < CAP_REPORT_INTERVAL or (refused, evicted) == (self.refused, self.evicted):
            return
        self._reported = (self.refused, self.evicted, now)
        log.warning(
            "secure port at its cap of %d connections: %d pushed out while waiting on their clients, %d refused "
            "while all were busy, since the last report",
            self.limits.max_connections,
            self.evicted - evicted,
            self.refused - refused,
        )

    def _state(self, conn: _Conn, waiting: bool) -> bool:
        """Mark `conn` waiting on its client or busy; False if it was evicted meanwhile."""
        with self._lock:
            if id(conn) not in self._open:
                return False
            conn.waiting_since = time.monotonic() if waiting else None
            return True

    def _connection(self, conn: _Conn) -> None:
        try:
            deadline = time.monotonic() + self.limits.header_timeout
            conn.sock.settimeout(self.limits.header_timeout)  # CPython bounds the whole handshake by it
            tls = self.context.wrap_socket(conn.sock, server_side=True, do_handshake_on_connect=False)
            with self._lock:
                conn.sock = tls  # the plain socket is detached now: eviction shuts down this one
                evicted = id(conn) not in self._open
            if evicted or self.stopped.is_set():
                return
            tls.do_handshake()
            peer = tls.getpeercert() or None
            buf = b""
            while True:
                head, buf = self._read_head(tls, buf, deadline)
                if head is None or not self._state(conn, waiting=False):
                    return
                try:
                    req = _Request(head)
                except ValueError:
                    self._send(tls, Response(400, "text/plain; charset=utf-8", b"400 Bad Request", close=True))
                    return
                try:
                    resp = self.answer(req, peer)
                except Exception:  # a bug answering one request must not end the thread with a traceback
                    log.exception("answering %s %s failed", req.method, req.path)
                    resp = Response(500, "text/plain; charset=utf-8", b"Internal Server Error", close=True)
                resp.close = resp.close or not req.keep_alive
                if req.method == "HEAD":
                    resp = Response(resp.code, resp.content_type, b"", resp.close)
                self._send(tls, resp)
                if resp.close or not self._state(conn, waiting=True):
                    return
                deadline = 0.0  # the next request: IDLE_TIMEOUT for its first byte, then HEADER_TIMEOUT
        except (OSError, ValueError):  # ValueError: an SSL socket closed under its thread by stop()
            return  # the client went away, did not finish its handshake or its request in time, or was evicted
        finally:
            with self._lock:
                self._open.pop(id(conn), None)
            with contextlib.suppress(OSError):
                conn.sock.close()

    def _read_head(self, tls: ssl.SSLSocket, buf: bytes, deadline: float) -> tuple[bytes | None, bytes]:
        """The next request's head, or None when the connection is to end (closed, timed out, too large)."""
        limits = self.limits
        if not buf and not deadline:
            tls.settimeout(limits.idle_timeout)
            first = tls.recv(65536)
            if not first:
                return None, b""
            buf = first
            deadline = time.monotonic() + limits.header_timeout
        while b"\r\n\r\n" not in buf:
            if len(buf) > limits.max_header_bytes:
                self._send(tls, Response(431, "text/plain; charset=utf-8", b"431 " + REASONS[431].encode(), True))
                return None, b""
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None, b""
            tls.settimeout(remaining)
            data = tls.recv(65536)
            if not data:
                return None, b""
            buf += data
        head, rest = buf.split(b"\r\n\r\n", 1)
        if len(head) > limits.max_header_bytes:
            self._send(tls, Response(431, "text/plain; charset=utf-8", b"431 " + REASONS[431].encode(), True))
            return None, b""
        return head, rest

    def _send(self, tls: ssl.SSLSocket, resp: Response) -> None:
        lines = [
            f"HTTP/1.1 {resp.code} {REASONS.get(resp.code, 'Unknown')}",
            "Cache-Control: no-cache, private",
            f"Content-Type: {resp.content_type}",
            "X-Content-Type-Options: nosniff",
            f"Date: {formatdate(usegmt=True)}",
            f"Content-Length: {len(resp.body)}",
        ]
        if resp.close:
            lines.append("Connection: close")
        tls.settimeout(self.limits.write_timeout)  # CPython bounds the whole sendall by it
        tls.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + resp.body)

    def stop(self) -> None:
        self.stopped.set()
        with contextlib.suppress(OSError):
            self.listener.close()
        with self._lock:
            conns = list(self._open.values())
        for c in conns:
            _shutdown(c.sock)


def _shutdown(sock: socket.socket) -> None:
    """Wake the thread blocked on `sock`: the plain socket's shutdown, which on a TLS socket leaves its state be."""
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class Endpoints:
    def __init__(
        self,
        *,
        registry: CollectorRegistry,
        configz: dict[str, Any],
        healthz: dict[str, Check],
        readyz: dict[str, Check],
        delegation: Delegation | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.registry = registry
        self.configz = redacted(configz)
        self.healthz = healthz
        self.readyz = readyz
        self.delegation = delegation or Delegation(
            authenticator=Authenticator(None, 0.0), authorizer=Authorizer(None, DEFAULT_ALWAYS_ALLOW_PATHS, 0.0, 0.0)
        )
        self.limits = limits or Limits()
        self.server: SecureServer | None = None

    def _checks(self, path: str) -> dict[str, Check] | None:
        return {"/healthz": self.healthz, "/livez": self.healthz, "/readyz": {**self.healthz, **self.readyz}}.get(path)

    def serve(
        self, bind_address: str, port: int, *, cert_file: str = "", key_file: str = "", cert_dir: str = ""
    ) -> tuple[str, int]:
        """Start serving in a thread; port 0 picks a free one. Returns the address served."""
        family = socket.AF_INET6 if ":" in bind_address else socket.AF_INET
        ctx = _tls_context(cert_file, key_file, cert_dir, self.delegation.client_ca)
        listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((bind_address, port))
            listener.listen(128)
        except OSError as err:
            listener.close()
            where = f"[{bind_address}]:{port}" if family == socket.AF_INET6 else f"{bind_address}:{port}"
            raise ServingError(f"failed to create listener: failed to listen on {where}: {_reason(err)}") from err
        self.server = SecureServer(listener, ctx, self.answer, self.limits)
        threading.Thread(target=self.server.serve_forever, name="secure-serving", daemon=True).start()
        host, bound_port = listener.getsockname()[:2]
        return str(host), int(bound_port)

    def answer(self, req: _Request, peer_cert: dict[str, Any] | None) -> Response:
        """Authenticate, authorize, then serve: upstream's filter chain, in its order and with its answers."""
        d = self.delegation
        pretty = pretty_print(req.query, req.headers.get("user-agent", ""))
        try:
            user = d.authenticator.authenticate(req.headers.get("authorization"), peer_cert)
        except Unauthorized:
            return Response(401, "application/json", status_body(401, "Unauthorized", "Unauthorized", False, pretty))
        verb = req.method.lower()
        decision = d.authorizer.authorize(user, verb, req.path)
        if not decision.allowed:
            if decision.error:
                text = f"Internal Server Error: {_quote(req.target)}: {decision.error}\n"
                return Response(500, "text/plain; charset=utf-8", text.encode())
            message = f"forbidden: User {_quote(user.name)} cannot {verb} path {_quote(req.path)}"
            if decision.reason:
                message += f": {decision.reason}"
            message = message.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # as upstream's
            return Response(403, "application/json", status_body(403, "Forbidden", message, True, pretty))
        return self._endpoint(req)

    def _endpoint(self, req: _Request) -> Response:
        path = req.path
        checks = self._checks(path.rstrip("/"))
        if checks is not None:
            verbose = "verbose" in req.query
            failed = [name for name, check in checks.items() if not _safe(check)]
            if verbose:
                lines = [f"[{'-' if n in failed else '+'}]{n} {'failed' if n in failed else 'ok'}" for n in checks]
                text = "\n".join(lines) + f"\n{path.strip('/')} check {'failed' if failed else 'passed'}\n"
            else:
                text = "ok" if not failed else "".join(f"[-]{n} failed: reason withheld\n" for n in failed)
            return Response(500 if failed else 200, "text/plain; charset=utf-8", text.encode())
        if path == "/metrics":
            return Response(200, CONTENT_TYPE_LATEST, generate_latest(self.registry))
        if path == "/configz":
            return Response(200, "application/json", json.dumps(self.configz).encode())
        return Response(404, "text/plain; charset=utf-8", b"404 page not found\n")

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


def _quote(text: str) -> str:
    """Close to Go's %q: double quotes, backslash escapes, printable characters as they are."""
    return json.dumps(text, ensure_ascii=False)


REDACTED = "REDACTED"
# Private keys and credentials. An extender's tlsConfig.keyData is the one the configuration has (upstream's
# /configz shows it, base64, to whoever may read /configz); certData and caData are public and stay.
SECRET_FIELDS = frozenset({"keyData", "token", "bearerToken", "password"})


def redacted(doc: Any) -> Any:
    """`doc` with the value of every secret field, at any depth, replaced by "REDACTED" (empty ones left empty)."""
    if isinstance(doc, dict):
        return {k: (REDACTED if k in SECRET_FIELDS and v else redacted(v)) for k, v in doc.items()}
    if isinstance(doc, list):
        return [redacted(v) for v in doc]
    return doc


def _safe(check: Check) -> bool:
    try:
        return bool(check())
    except Exception:  # a failing check is a failed check, not a crashed endpoint
        log.exception("health check raised")
        return False
