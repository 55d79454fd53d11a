"""The client's TLS: one context for all its connections, and still the verification the kubeconfig asks for."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from kubesched.backend.kube.api import KubeAPI, TLSError, describe, load_configuration
from kubesched.serving import self_signed_certificate


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = b'{"kind":"NodeList","items":[]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """An HTTPS server on loopback with a self-signed certificate; its URL and the certificate's path."""
    cert, key = self_signed_certificate(str(tmp_path / "certs"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_address[1]}", cert
    server.shutdown()
    server.server_close()


def _kubeconfig(tmp_path: Path, url: str, cluster: str) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters:\n- name: c\n  cluster:\n    server: {url}\n    {cluster}\n"
        "contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n"
        "users:\n- name: u\n  user:\n    token: t\n"
    )
    return str(path)


def _context(api: KubeAPI) -> ssl.SSLContext:
    return api._client.rest_client.pool_manager.connection_pool_kw["ssl_context"]


def test_a_trusted_ca_verifies_and_every_connection_shares_one_context(
    https_server: tuple[str, str], tmp_path: Path
) -> None:
    url, cert = https_server
    api = KubeAPI(load_configuration(_kubeconfig(tmp_path, url, f"certificate-authority: {cert}")), qps=0)
    ctx = _context(api)
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    results: list[dict[str, object]] = []
    threads = [threading.Thread(target=lambda: results.append(api.request("GET", "/api/v1/nodes"))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == [{"kind": "NodeList", "items": []}] * 4
    assert _context(api) is ctx


def test_a_server_the_roots_do_not_vouch_for_is_refused(https_server: tuple[str, str], tmp_path: Path) -> None:
    url, _ = https_server
    api = KubeAPI(load_configuration(_kubeconfig(tmp_path, url, "insecure-skip-tls-verify: false")), qps=0, retries=0)
    assert _context(api).verify_mode == ssl.CERT_REQUIRED
    with pytest.raises(TLSError, match="^self-signed certificate$") as caught:
        api.request("GET", "/api/v1/nodes", retries=3)
    assert caught.value.verify
    assert api.request_count == 1  # a certificate refused now is refused on a second try: no retries
    assert describe(caught.value, url) == (
        f"{url}: the server's certificate is not trusted (self-signed certificate): "
        "check certificate-authority in the kubeconfig"
    )


def test_a_certificate_for_another_name_is_refused_naming_the_name(
    https_server: tuple[str, str], tmp_path: Path
) -> None:
    url, cert = https_server
    cluster = f"certificate-authority: {cert}\n    tls-server-name: elsewhere.example"
    api = KubeAPI(load_configuration(_kubeconfig(tmp_path, url, cluster)), qps=0)
    with pytest.raises(TLSError) as caught:
        api.request("GET", "/api/v1/nodes")
    assert describe(caught.value, url) == (
        f"{url}: the server's certificate does not cover this address (Hostname mismatch, certificate is not "
        "valid for 'elsewhere.example'): check the server address in the kubeconfig"
    )


def test_tls_to_a_plain_http_server_says_so(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"https://127.0.0.1:{server.server_address[1]}"
        api = KubeAPI(load_configuration(_kubeconfig(tmp_path, url, "insecure-skip-tls-verify: true")), qps=0)
        with pytest.raises(TLSError) as caught:
            api.request("GET", "/api/v1/nodes")
    finally:
        server.shutdown()
        server.server_close()
    assert not caught.value.verify
    assert describe(caught.value, url).startswith(f"{url}: TLS handshake failed (")
    assert describe(caught.value, url).endswith("): is this the API server's HTTPS address?")


def test_insecure_skip_tls_verify_connects_without_verifying(https_server: tuple[str, str], tmp_path: Path) -> None:
    url, _ = https_server
    api = KubeAPI(load_configuration(_kubeconfig(tmp_path, url, "insecure-skip-tls-verify: true")), qps=0)
    assert _context(api).verify_mode == ssl.CERT_NONE
    assert api.request("GET", "/api/v1/nodes") == {"kind": "NodeList", "items": []}


def test_a_client_certificate_keeps_per_connection_contexts(https_server: tuple[str, str], tmp_path: Path) -> None:
    url, cert = https_server
    key = str(Path(cert).with_suffix(".key"))
    cfg = load_configuration(_kubeconfig(tmp_path, url, f"certificate-authority: {cert}"))
    cfg.cert_file, cfg.key_file = cert, key
    api = KubeAPI(cfg, qps=0)
    assert "ssl_context" not in api._client.rest_client.pool_manager.connection_pool_kw
