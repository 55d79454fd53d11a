"""The secure port (10259): /healthz, /livez, /readyz, /metrics, /configz over HTTPS.

With no certificate given, a self-signed one is made for the host at start (and
written to --cert-dir when set), as kube-scheduler does. Authentication and
authorization are not done: bind it to an address only trusted callers reach.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import logging
import os
import socket
import ssl
import tempfile
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

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


def _tls_context(cert_file: str, key_file: str, cert_dir: str) -> ssl.SSLContext:
    """The serving certificate's context: the files given, else a self-signed pair made in `cert_dir` (or a
    temporary directory). Raises ServingError in kube-scheduler's words."""
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
    return ctx


class Endpoints:
    def __init__(
        self,
        *,
        registry: CollectorRegistry,
        configz: dict[str, Any],
        healthz: dict[str, Check],
        readyz: dict[str, Check],
    ) -> None:
        self.registry = registry
        self.configz = configz
        self.healthz = healthz
        self.readyz = readyz
        self._httpd: ThreadingHTTPServer | None = None

    def _checks(self, path: str) -> dict[str, Check] | None:
        return {"/healthz": self.healthz, "/livez": self.healthz, "/readyz": {**self.healthz, **self.readyz}}.get(path)

    def serve(
        self, bind_address: str, port: int, *, cert_file: str = "", key_file: str = "", cert_dir: str = ""
    ) -> tuple[str, int]:
        """Start serving in a thread; port 0 picks a free one. Returns the address served."""
        endpoints = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                endpoints._answer(self)

        family = socket.AF_INET6 if ":" in bind_address else socket.AF_INET

        class Server(ThreadingHTTPServer):
            address_family = family
            daemon_threads = True

        ctx = _tls_context(cert_file, key_file, cert_dir)
        try:
            httpd = Server((bind_address, port), Handler)
        except OSError as err:
            where = f"[{bind_address}]:{port}" if family == socket.AF_INET6 else f"{bind_address}:{port}"
            raise ServingError(f"failed to create listener: failed to listen on {where}: {_reason(err)}") from err
        httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
        self._httpd = httpd
        threading.Thread(target=httpd.serve_forever, name="secure-serving", daemon=True).start()
        host, bound_port = httpd.server_address[:2]
        return str(host), int(bound_port)

    def _answer(self, req: BaseHTTPRequestHandler) -> None:
        path = req.path.split("?", 1)[0]
        verbose = "verbose" in req.path
        checks = self._checks(path.rstrip("/"))
        if checks is not None:
            failed = [name for name, check in checks.items() if not _safe(check)]
            if verbose:
                lines = [f"[{'-' if n in failed else '+'}]{n} {'failed' if n in failed else 'ok'}" for n in checks]
                text = "\n".join(lines) + f"\n{path.strip('/')} check {'failed' if failed else 'passed'}\n"
            else:
                text = "ok" if not failed else "".join(f"[-]{n} failed: reason withheld\n" for n in failed)
            _reply(req, 500 if failed else 200, "text/plain; charset=utf-8", text.encode())
        elif path == "/metrics":
            _reply(req, 200, CONTENT_TYPE_LATEST, generate_latest(self.registry))
        elif path == "/configz":
            _reply(req, 200, "application/json", json.dumps(self.configz).encode())
        else:
            _reply(req, 404, "text/plain; charset=utf-8", b"404 page not found\n")

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()


def _safe(check: Check) -> bool:
    try:
        return bool(check())
    except Exception:  # a failing check is a failed check, not a crashed endpoint
        log.exception("health check raised")
        return False


def _reply(req: BaseHTTPRequestHandler, code: int, content_type: str, body: bytes) -> None:
    req.send_response(code)
    req.send_header("Content-Type", content_type)
    req.send_header("Content-Length", str(len(body)))
    req.end_headers()
    req.wfile.write(body)
