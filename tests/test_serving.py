"""The secure port's connection handling, its authentication and authorization decisions, and /configz redaction.

No API server here: reviews go to a stub that answers as the API server would.
"""

from __future__ import annotations

import datetime
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from kubesched.delegation import (
    Authenticator,
    Authorizer,
    Delegation,
    PathMatcher,
    TTLCache,
    Unauthorized,
    User,
    _bearer,
)
from kubesched.serving import REDACTED, Endpoints, Limits, _Request, redacted


class StubAPI:
    """Answers TokenReviews from `tokens` and SubjectAccessReviews from `allowed` (user, path) pairs."""

    def __init__(self, tokens: dict[str, dict[str, Any]], allowed: set[tuple[str, str]], fail: bool = False) -> None:
        self.tokens = tokens
        self.allowed = allowed
        self.fail = fail
        self.calls: list[dict[str, Any]] = []

    def request(self, method: str, path: str, *, body: Any = None, **_: Any) -> dict[str, Any]:
        self.calls.append(body)
        if self.fail:
            raise OSError("connection refused")
        spec = body["spec"]
        if body["kind"] == "TokenReview":
            user = self.tokens.get(spec["token"])
            return {"status": {"authenticated": True, "user": user} if user else {"authenticated": False}}
        attrs = spec["nonResourceAttributes"]
        return {"status": {"allowed": (spec["user"], attrs["path"]) in self.allowed}}


def endpoints(api: Any = None, limits: Limits | None = None, client_ca: str = "") -> Endpoints:
    delegation = Delegation(
        authenticator=Authenticator(api, 10.0),
        authorizer=Authorizer(api, ("/healthz", "/readyz", "/livez"), 10.0, 10.0),
        client_ca=client_ca,
    )
    return Endpoints(
        registry=CollectorRegistry(),
        configz={"componentconfig": {"extenders": [{"tlsConfig": {"keyData": "c2VjcmV0", "certData": "Y2VydA=="}}]}},
        healthz={"ping": lambda: True},
        readyz={},
        delegation=delegation,
        limits=limits,
    )


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[Endpoints] = []

    def start(ep: Endpoints) -> int:
        started.append(ep)
        return ep.serve("127.0.0.1", 0)[1]

    yield start
    for ep in started:
        ep.stop()


def client_context(cert: tuple[Path, Path] | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if cert is not None:
        ctx.load_cert_chain(*cert)
    return ctx


def get(port: int, path: str, headers: dict[str, str] | None = None, cert: tuple[Path, Path] | None = None) -> Any:
    """(status, body) of one request on a fresh connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with client_context(cert).wrap_socket(raw) as tls:
            lines = [f"GET {path} HTTP/1.1", "Host: x", "Connection: close"]
            lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
            tls.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            data = b""
            while chunk := tls.recv(65536):
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode()


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes `sock` (EOF or reset) within `seconds`."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


# Connections


def test_idle_connections_that_never_handshake_do_not_starve_healthz(serve: Any) -> None:
    port = serve(endpoints(limits=Limits(header_timeout=30.0)))
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(30)]
    try:
        start = time.monotonic()
        assert get(port, "/healthz") == (200, "ok")
        assert time.monotonic() - start < 2.0
    finally:
        for s in idle:
            s.close()


def test_slow_loris_requests_do_not_starve_healthz_and_are_cut_at_the_deadline(serve: Any) -> None:
    ep = endpoints(limits=Limits(header_timeout=1.5))
    port = serve(ep)
    slow = []
    for _ in range(10):
        tls = client_context().wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5))
        tls.sendall(b"GET /healthz HTTP/1.1\r\n")
        slow.append(tls)
    started = time.monotonic()
    assert get(port, "/healthz") == (200, "ok")
    assert time.monotonic() - started < 2.0
    # A byte every 0.3 s keeps each read short of the timeout; the whole head is still due in 1.5 s.
    cut = None
    for _ in range(20):
        try:
            for tls in slow:
                tls.sendall(b"X")
        except OSError:
            cut = time.monotonic() - started
            break
        time.sleep(0.3)
    assert cut is not None and cut < 4.0
    for tls in slow:
        tls.close()


def test_a_connection_that_never_handshakes_is_closed_at_the_deadline(serve: Any) -> None:
    ep = endpoints(limits=Limits(header_timeout=0.5))
    port = serve(ep)
    with socket.create_connection(("127.0.0.1", port)) as raw:
        time.sleep(0.1)
        assert ep.server is not None and ep.server.open_connections == 1
        assert closed_within(raw, 3.0)
    deadline = time.monotonic() + 2
    while ep.server.open_connections and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ep.server.open_connections == 0


def test_at_the_cap_a_new_connection_pushes_out_the_one_waiting_longest(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    ep = endpoints(limits=Limits(max_connections=3, header_timeout=30.0))
    port = serve(ep)
    held = []
    for _ in range(3):
        held.append(socket.create_connection(("127.0.0.1", port)))
        time.sleep(0.05)
    try:
        started = time.monotonic()
        assert get(port, "/healthz") == (200, "ok")
        assert time.monotonic() - started < 1.0
        assert closed_within(held[0], 1.0)  # the oldest made way
        assert not closed_within(held[2], 0.2)
        assert ep.server is not None and ep.server.evicted == 1 and ep.server.refused == 0
        assert ep.server.open_connections <= 3
        assert "secure port at its cap of 3 connections: 1 pushed out" in caplog.text
    finally:
        for s in held:
            s.close()


def test_at_the_cap_with_every_connection_busy_a_new_one_is_closed_at_once(serve: Any) -> None:
    release = threading.Event()
    ep = endpoints(limits=Limits(max_connections=2))
    ep.healthz = {"slow": lambda: release.wait(10)}
    port = serve(ep)
    busy = []
    for _ in range(2):
        tls = client_context().wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5))
        tls.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        busy.append(tls)
    time.sleep(0.3)
    try:
        with socket.create_connection(("127.0.0.1", port)) as extra:
            started = time.monotonic()
            assert closed_within(extra, 2.0)
            assert time.monotonic() - started < 0.5  # refused, not queued
        assert ep.server is not None and ep.server.refused == 1
    finally:
        release.set()
    for tls in busy:
        assert tls.recv(65536).startswith(b"HTTP/1.1 200 OK")
        tls.close()


def test_keep_alive_serves_several_requests_on_one_connection(serve: Any) -> None:
    port = serve(endpoints())
    with client_context().wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5)) as tls:
        tls.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nHEAD /livez HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        while data.count(b"HTTP/1.1 200 OK") < 2:
            chunk = tls.recv(65536)
            assert chunk
            data += chunk
    first, second = data.split(b"HTTP/1.1 200 OK")[1:]
    assert first.endswith(b"\r\n\r\nok") and second.endswith(b"Content-Length: 0\r\n\r\n")


def test_malformed_and_oversized_request_heads_are_refused(serve: Any) -> None:
    port = serve(endpoints(limits=Limits(max_header_bytes=4096)))
    for raw, code in ((b"NONSENSE\r\n\r\n", b"400"), (b"GET / HTTP/1.1\r\nX: " + b"a" * 8000, b"431")):
        with client_context().wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5)) as tls:
            tls.sendall(raw)
            assert tls.recv(65536).split()[1] == code


@pytest.fixture(scope="module")
def shared_port() -> Iterator[int]:
    ep = endpoints(limits=Limits(header_timeout=0.3, max_header_bytes=4096))
    yield ep.serve("127.0.0.1", 0)[1]
    ep.stop()


@given(
    st.one_of(
        st.binary(max_size=6000),
        st.lists(
            st.sampled_from([b"GET ", b"/healthz", b" HTTP/1.1", b"\r\n", b"Authorization: Bearer x", b":", b" "])
        ).map(b"".join),
    )
)
@settings(max_examples=30, deadline=None)
def test_hostile_bytes_get_an_answer_or_a_closed_connection_and_the_server_carries_on(
    shared_port: int, payload: bytes
) -> None:
    failures: list[Any] = []
    hook, threading.excepthook = threading.excepthook, failures.append
    try:
        with client_context().wrap_socket(socket.create_connection(("127.0.0.1", shared_port), timeout=5)) as tls:
            tls.settimeout(1.5)
            received = b""
            try:
                tls.sendall(payload)  # the server may answer and close before it has read all of it
                while chunk := tls.recv(65536):
                    received += chunk
            except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
                pass
            except TimeoutError:  # still open after 1.5 s: only a connection kept alive after an answer may be
                assert received.startswith(b"HTTP/1.1 200 OK") and received.endswith(b"ok")
        assert _healthz_within_short_deadline(shared_port) == (200, "ok")
    finally:
        threading.excepthook = hook
    assert failures == []


def _healthz_within_short_deadline(port: int) -> Any:
    """GET /healthz from the server whose handshake deadline is 0.3 s: on a loaded machine a handshake can
    outlast it and be closed, as it should be; a server that stopped carrying on fails all three tries."""
    for _ in range(2):
        try:
            return get(port, "/healthz")
        except ssl.SSLEOFError:
            continue
    return get(port, "/healthz")


@given(st.binary(max_size=300))
@settings(max_examples=200, deadline=None)
def test_any_request_head_parses_or_is_refused_as_malformed(head: bytes) -> None:
    try:
        req = _Request(head)
    except ValueError:
        return
    assert req.path.startswith(req.target[:1]) and req.version.startswith("HTTP/1.")


# Authentication and authorization


UNAUTHORIZED = (
    '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized",'
    '"reason":"Unauthorized","code":401}\n'
)
ADMIN = {"username": "admin", "groups": ["system:masters"]}
READER = {"username": "reader", "uid": "u1", "groups": ["ops"], "extra": {"scopes": ["a"]}}


def test_tokens_are_reviewed_then_cached_and_bad_ones_get_401(serve: Any) -> None:
    api = StubAPI({"admin-token": ADMIN, "nobody-token": {"username": "nobody"}}, set())
    port = serve(endpoints(api))
    bearer = {"Authorization": "Bearer bogus"}
    status, body = get(port, "/metrics", bearer)
    assert (status, body) == (401, UNAUTHORIZED)
    status, body = get(port, "/metrics", {**bearer, "User-Agent": "curl/8.5.0"})  # upstream indents for curl
    assert status == 401 and json.loads(body) == json.loads(UNAUTHORIZED) and len(body) == 157
    assert get(port, "/healthz", bearer)[0] == 401  # bad credentials fail before the always-allowed path
    assert get(port, "/metrics", {"Authorization": "Bearer admin-token"})[0] == 200
    assert get(port, "/configz", {"Authorization": "Bearer admin-token"})[0] == 200
    status, body = get(port, "/configz", {"Authorization": "Bearer nobody-token"})
    assert status == 403
    assert json.loads(body)["message"] == 'forbidden: User "nobody" cannot get path "/configz"'
    reviews = [c for c in api.calls if c["kind"] == "TokenReview"]
    assert len(reviews) == 3  # bogus, admin, nobody: each once (system:masters needs no access review)


def test_anonymous_gets_the_open_paths_only(serve: Any) -> None:
    port = serve(endpoints(StubAPI({}, set())))
    assert get(port, "/healthz") == (200, "ok")
    assert get(port, "/readyz")[0] == 200
    status, body = get(port, "/metrics")
    assert status == 403
    assert json.loads(body)["message"] == 'forbidden: User "system:anonymous" cannot get path "/metrics"'
    status, body = get(port, "/a%3Cb%3E", {"User-Agent": "curl/8"})  # the decoded path, HTML-escaped as upstream
    assert status == 403 and r"cannot get path \"/a\u0026lt;b\u0026gt;\"" in body
    assert get(port, "/metrics", {"Authorization": "Basic abc"})[0] == 403  # another scheme: anonymous


def test_without_a_client_tokens_are_ignored_and_everything_but_the_open_paths_is_forbidden(serve: Any) -> None:
    port = serve(endpoints(None))
    assert get(port, "/metrics", {"Authorization": "Bearer anything"})[0] == 403
    assert get(port, "/livez", {"Authorization": "Bearer anything"}) == (200, "ok")


def test_subject_access_review_carries_the_user_and_its_answer_is_cached() -> None:
    api = StubAPI({}, {("reader", "/metrics")})
    authz = Authorizer(api, (), 10.0, 10.0)  # type: ignore[arg-type]
    user = User("reader", ("ops", "system:authenticated"), "u1", (("scopes", ("a",)),))
    assert authz.authorize(user, "get", "/metrics").allowed
    assert authz.authorize(user, "get", "/metrics").allowed
    assert not authz.authorize(user, "get", "/configz").allowed
    sars = [c["spec"] for c in api.calls]
    assert len(sars) == 2
    assert sars[0] == {
        "user": "reader",
        "groups": ["ops", "system:authenticated"],
        "uid": "u1",
        "extra": {"scopes": ["a"]},
        "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
    }


def test_a_review_that_cannot_be_made_is_a_500_for_authorization_and_a_401_for_authentication() -> None:
    api = StubAPI({}, set(), fail=True)
    ep = endpoints(api)
    decision = ep.delegation.authorizer.authorize(User("x"), "get", "/metrics")
    assert not decision.allowed and "connection refused" in decision.error
    assert len(ep.delegation.authorizer.cache) == 0  # failures are asked again, not remembered
    with pytest.raises(Unauthorized):
        ep.delegation.authenticator.authenticate("Bearer t", None)


def test_caches_expire_and_stay_bounded() -> None:
    now = [0.0]
    cache = TTLCache(lambda: now[0], size=8)
    cache.put("a", 1, 10.0)
    assert cache.get("a") == 1
    now[0] = 10.0
    assert cache.get("a") is None
    for i in range(100):
        cache.put(i, i, 10.0)
    assert len(cache) <= 8


def test_always_allow_paths_match_exactly_or_by_trailing_star() -> None:
    m = PathMatcher(("/healthz", "/debug/*"))
    assert m("/healthz") and m("/debug/pprof/heap") and not m("/healthz/x") and not m("/metrics")


@pytest.mark.parametrize(
    ("header", "token"),
    [("Bearer abc", "abc"), ("bearer  abc", None), ("Bearer ", None), ("Basic abc", None), ("  Bearer abc  ", "abc")],
)
def test_bearer_tokens_are_read_as_upstream(header: str, token: str | None) -> None:
    assert _bearer(header) == token


# Client certificates


def certificates(tmp: Path) -> dict[str, tuple[Path, Path]]:
    """A CA, clients it signed (alice in system:masters, bob in devs), and a self-signed rogue."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)

    def make(name: str, org: str, issuer: Any = None) -> tuple[Any, Any, Path, Path]:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name(
            [x509.NameAttribute(NameOID.COMMON_NAME, name), x509.NameAttribute(NameOID.ORGANIZATION_NAME, org)]
        )
        signer_cert, signer_key = issuer or (None, key)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(signer_cert.subject if signer_cert else subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
        )
        if issuer is None:
            builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        else:
            builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        cert = builder.sign(signer_key, hashes.SHA256())
        cert_path, key_path = tmp / f"{name}.crt", tmp / f"{name}.key"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        return cert, key, cert_path, key_path

    ca, ca_key, ca_path, ca_key_path = make("test-ca", "ca")
    out = {"ca": (ca_path, ca_key_path)}
    for name, org in (("alice", "system:masters"), ("bob", "devs")):
        out[name] = make(name, org, (ca, ca_key))[2:]
    out["rogue"] = make("rogue", "system:masters")[2:]
    return out


def test_client_certificates_from_the_client_ca_are_users_cn_and_groups_o(serve: Any, tmp_path: Path) -> None:
    certs = certificates(tmp_path)
    port = serve(endpoints(StubAPI({}, set()), client_ca=certs["ca"][0].read_text()))
    assert get(port, "/metrics", cert=certs["alice"])[0] == 200
    status, body = get(port, "/metrics", cert=certs["bob"])
    assert status == 403 and json.loads(body)["message"] == 'forbidden: User "bob" cannot get path "/metrics"'
    with pytest.raises((ssl.SSLError, ConnectionResetError)):
        get(port, "/metrics", cert=certs["rogue"])  # not from the CA: the handshake fails
    assert get(port, "/healthz") == (200, "ok")  # no certificate: anonymous still


# /configz


def test_configz_hides_the_extenders_private_key_and_keeps_public_data(serve: Any) -> None:
    port = serve(endpoints(StubAPI({"admin-token": ADMIN}, set())))
    status, body = get(port, "/configz", {"Authorization": "Bearer admin-token"})
    tls = json.loads(body)["componentconfig"]["extenders"][0]["tlsConfig"]
    assert status == 200 and tls == {"keyData": REDACTED, "certData": "Y2VydA=="}
    assert "c2VjcmV0" not in body


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["keyData", "token", "certData", "caData", "name", "tlsConfig"]), inner, max_size=4
        )
    ),
    max_leaves=20,
)


@given(json_values)
@settings(max_examples=200, deadline=None)
def test_redaction_leaves_no_secret_and_changes_nothing_else(doc: Any) -> None:
    out = redacted(doc)

    def walk(a: Any, b: Any) -> None:
        if isinstance(a, dict):
            assert set(a) == set(b)
            for k in a:
                if k in ("keyData", "token") and a[k]:
                    assert b[k] == REDACTED
                else:
                    walk(a[k], b[k])
        elif isinstance(a, list):
            assert len(a) == len(b)
            for x, y in zip(a, b, strict=True):
                walk(x, y)
        else:
            assert a == b

    walk(doc, out)
