"""A loopback HTTP proxy in front of a real kube-apiserver that can lose requests and responses.

A real server cannot be asked to commit a write and then drop the connection, or
to fail one binding in three. This proxy can: the client speaks plain HTTP to it,
it forwards to the API server over TLS and streams answers back (watches included),
and rules decide per method and path what goes wrong:

- `drop_response`: the request reaches the server and commits; the client's
  connection is closed before any byte of the answer (the outcome is unknown);
- `drop_request`: the connection is closed without forwarding anything;
- `status`: answer with an HTTP error without forwarding;
- `delay`: forward after a pause.

`cut_watches()` ends every open watch stream mid-way, and `down` refuses all
traffic (an outage as the client sees it) while the server keeps running.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}


@dataclass
class Rule:
    method: str
    pattern: re.Pattern[str]
    action: str  # drop_response | drop_request | status | delay
    times: int = 1  # how many matching requests it applies to (-1: all)
    status: int = 500
    delay: float = 0.0
    hits: int = 0

    def take(self, method: str, path: str) -> bool:
        if self.times == 0 or method != self.method or not self.pattern.search(path):
            return False
        if self.times > 0:
            self.times -= 1
        self.hits += 1
        return True


class _QuietServer(ThreadingHTTPServer):
    """Streams cut on purpose end in read errors: not worth a traceback on stderr."""

    def handle_error(self, request: object, client_address: object) -> None:
        return


@dataclass
class Seen:
    method: str
    path: str
    status: int  # 0: no answer reached the client
    time: float = field(default_factory=time.monotonic)


class FaultProxy:
    def __init__(self, target: str, token: str = "") -> None:
        """`token` is sent for clients that send none (client-go keeps bearer tokens off plain HTTP)."""
        parts = urlsplit(target)
        self.token = token
        self.target_host = parts.hostname or "127.0.0.1"
        self.target_port = parts.port or 443
        self.rules: list[Rule] = []
        self.seen: list[Seen] = []
        self.down = threading.Event()
        self._lock = threading.Lock()
        self._streams: set[socket.socket] = set()
        self._ctx = ssl.create_default_context()
        self._ctx.check_hostname = False
        self._ctx.verify_mode = ssl.CERT_NONE
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _any(self) -> None:
                proxy._handle(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FaultProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.cut_watches()
        self._server.shutdown()
        self._server.server_close()

    def add(self, method: str, path_regex: str, action: str, **kw: float | int) -> Rule:
        rule = Rule(method, re.compile(path_regex), action, **kw)  # type: ignore[arg-type]
        with self._lock:
            self.rules.append(rule)
        return rule

    def clear(self) -> None:
        with self._lock:
            self.rules.clear()

    def cut_watches(self) -> None:
        with self._lock:
            streams = list(self._streams)
        for s in streams:
            _close(s)

    def kubeconfig(self, token: str) -> str:
        return json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "proxy", "cluster": {"server": self.url}}],
                "users": [{"name": "u", "user": {"token": token}}],
                "contexts": [{"name": "proxy", "context": {"cluster": "proxy", "user": "u"}}],
                "current-context": "proxy",
            }
        )

    def _rule_for(self, method: str, path: str) -> Rule | None:
        with self._lock:
            for rule in self.rules:
                if rule.take(method, path):
                    return rule
        return None

    def _record(self, method: str, path: str, status: int) -> None:
        with self._lock:
            self.seen.append(Seen(method, path, status))

    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        method, path = req.command, req.path
        length = int(req.headers.get("Content-Length") or 0)
        body = req.rfile.read(length) if length else None
        if self.down.is_set():
            self._record(method, path, 0)
            _abort(req)
            return
        rule = self._rule_for(method, path)
        if rule is not None and rule.action == "drop_request":
            self._record(method, path, 0)
            _abort(req)
            return
        if rule is not None and rule.action == "status":
            payload = json.dumps(
                {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "injected", "code": rule.status}
            ).encode()
            req.send_response(rule.status)
            req.send_header("Content-Type", "application/json")
            req.send_header("Content-Length", str(len(payload)))
            req.end_headers()
            req.wfile.write(payload)
            self._record(method, path, rule.status)
            return
        if rule is not None and rule.action == "delay":
            time.sleep(rule.delay)
        conn = http.client.HTTPSConnection(self.target_host, self.target_port, context=self._ctx, timeout=600)
        headers = {k: v for k, v in req.headers.items() if k.lower() not in _HOP_BY_HOP and k.lower() != "host"}
        if self.token and "Authorization" not in req.headers:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
        except OSError:
            conn.close()
            self._record(method, path, 0)
            _abort(req)
            return
        if rule is not None and rule.action == "drop_response":
            resp.read()
            conn.close()
            self._record(method, path, 0)
            _abort(req)
            return
        self._record(method, path, resp.status)
        self._relay(req, resp, conn)

    def _relay(
        self, req: BaseHTTPRequestHandler, resp: http.client.HTTPResponse, conn: http.client.HTTPConnection
    ) -> None:
        streaming = resp.getheader("Content-Length") is None
        req.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in _HOP_BY_HOP and k.lower() != "content-length":
                req.send_header(k, v)
        try:
            if not streaming:
                data = resp.read()
                req.send_header("Content-Length", str(len(data)))
                req.end_headers()
                req.wfile.write(data)
                return
            req.send_header("Transfer-Encoding", "chunked")
            req.end_headers()
            with self._lock:
                self._streams.add(req.connection)
            while True:
                chunk = resp.read1(65536)
                if not chunk:
                    break
                req.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                req.wfile.flush()
            req.wfile.write(b"0\r\n\r\n")
        except OSError:
            req.close_connection = True
        finally:
            with self._lock:
                self._streams.discard(req.connection)
            conn.close()


def _abort(req: BaseHTTPRequestHandler) -> None:
    req.close_connection = True
    _close(req.connection)


def _close(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass
