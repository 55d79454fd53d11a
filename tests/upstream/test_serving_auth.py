"""The secure port's delegated authentication and authorization against the real v1.36 kube-apiserver.

Each request is made to kubesched and to upstream's kube-scheduler, both started with the same
--authentication-kubeconfig, --authorization-kubeconfig and --client-ca-file: their status codes
and error bodies must be the same.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.test_serving import certificates

from kubesched.app import RunOptions, SchedulerApp
from kubesched.backend.kube.api import APIError, KubeAPI
from kubesched.config.load import load_config
from kubesched.delegation import DelegationOptions
from kubesched_testing.controlplane import TOKEN, ControlPlane, free_port

ROLE = "kubesched-test-metrics-reader"
CONFIGMAP = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"


def fetch(port: int, path: str, token: str = "", cert: tuple[Path, Path] | None = None) -> tuple[int, str]:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if cert is not None:
        ctx.load_cert_chain(*cert)
    ctx.set_alpn_protocols(["http/1.1"])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, ctx.wrap_socket(raw) as tls:
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        tls.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{auth}\r\n".encode())
        data = b""
        while chunk := tls.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    if b"chunked" in head.lower():  # Go's answer to a large body
        body = _unchunk(body)
    return int(head.split()[1]), body.decode()


def _unchunk(body: bytes) -> bytes:
    out = b""
    while body:
        size, _, body = body.partition(b"\r\n")
        n = int(size, 16)
        if n == 0:
            break
        out, body = out + body[:n], body[n + 2 :]
    return out


def _apply(api: KubeAPI, path: str, obj: dict[str, Any]) -> None:
    with contextlib.suppress(APIError):
        api.request("DELETE", f"{path}/{obj['metadata']['name']}")
    api.request("POST", path, body=obj)


def _token(api: KubeAPI, name: str) -> str:
    _apply(api, "/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": name}})
    out = api.request(
        "POST", f"/api/v1/namespaces/default/serviceaccounts/{name}/token", body={"spec": {"expirationSeconds": 3600}}
    )
    return str(out["status"]["token"])


@pytest.fixture(scope="module")
def identities(admin_api: KubeAPI, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Tokens of a service account without rights and one allowed GET /metrics; client certificates."""
    _apply(
        admin_api,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        {"metadata": {"name": ROLE}, "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]},
    )
    _apply(
        admin_api,
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        {
            "metadata": {"name": ROLE},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE},
            "subjects": [
                {"kind": "ServiceAccount", "name": "metrics-reader", "namespace": "default"},
                {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "bob"},
            ],
        },
    )
    return {
        "nobody": _token(admin_api, "nobody"),
        "reader": _token(admin_api, "metrics-reader"),
        "certs": certificates(tmp_path_factory.mktemp("certs")),
    }


@contextlib.contextmanager
def kubesched(kubeconfig: Path, delegation: DelegationOptions) -> Iterator[tuple[list[int], list[int]]]:
    served: list[int] = []
    app = SchedulerApp(
        load_config(None),
        RunOptions(
            kubeconfig=str(kubeconfig),
            secure_port=0,
            bind_address="127.0.0.1",
            leader_elect=False,
            on_serving=lambda host, port: served.append(port),
            delegation=delegation,
        ),
    )
    code: list[int] = []
    thread = threading.Thread(target=lambda: code.append(app.run()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not served and not code and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield code, served
    finally:
        app.stop.set()
        app.store.wake.set()
        thread.join(30)


@contextlib.contextmanager
def kube_scheduler(control_plane: ControlPlane, args: list[str]) -> Iterator[int]:
    """kube-scheduler serving on a free port with `args`; its port once /healthz answers. Stopped after."""
    port = free_port()
    proc = control_plane.start_scheduler({}, name="serving-auth", args=(f"--secure-port={port}", *args))
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ssl.SSLError):
                if fetch(port, "/healthz")[0] == 200:
                    break
            time.sleep(0.2)
        else:
            raise AssertionError("upstream kube-scheduler did not serve /healthz")
        yield port
    finally:
        proc.stop()
        control_plane.schedulers.remove(proc)


def test_ours_answers_as_upstream_for_every_credential_and_path(
    control_plane: ControlPlane, identities: dict[str, Any]
) -> None:
    kubeconfig = control_plane.kubeconfig_path
    ca = identities["certs"]["ca"][0]
    flags = [f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}"]
    delegation = DelegationOptions(str(kubeconfig), str(kubeconfig), client_ca_file=str(ca))
    certs = identities["certs"]
    cases: list[tuple[str, dict[str, Any]]] = [
        ("anonymous", {}),
        ("bogus token", {"token": "bogus"}),
        ("no rights", {"token": identities["nobody"]}),
        ("metrics reader", {"token": identities["reader"]}),
        ("admin", {"token": TOKEN}),
        ("alice (system:masters) by certificate", {"cert": certs["alice"]}),
        ("bob (bound to /metrics) by certificate", {"cert": certs["bob"]}),
    ]
    upstream_flags = [*flags, f"--client-ca-file={ca}", "--bind-address=127.0.0.1"]
    with kube_scheduler(control_plane, upstream_flags) as theirs, kubesched(kubeconfig, delegation) as (_, served):
        assert served, "kubesched did not serve"
        ours = served[0]
        for name, creds in cases:
            for path in ("/healthz", "/metrics", "/configz", "/a%3Cb%3E?pretty=1", "/healthz/../metrics"):
                mine, upstream = fetch(ours, path, **creds), fetch(theirs, path, **creds)
                assert mine[0] == upstream[0], f"{name} {path}: ours {mine}, upstream {upstream[0]}"
                if mine[0] != 200 or path == "/healthz":
                    assert mine[1] == upstream[1], f"{name} {path}"
        # The answers the issue names, spelled out.
        assert fetch(ours, "/metrics", token="bogus")[0] == 401
        assert fetch(ours, "/metrics", token=identities["nobody"])[0] == 403
        assert fetch(ours, "/configz", token=identities["reader"])[0] == 403
        assert fetch(ours, "/metrics", token=identities["reader"])[0] == 200
        assert fetch(ours, "/metrics", token=TOKEN)[0] == 200
        status, body = fetch(ours, "/configz", token=TOKEN)
        assert status == 200 and json.loads(body)["componentconfig"]["profiles"]
        assert fetch(ours, "/healthz") == (200, "ok")
        assert fetch(ours, "/metrics", cert=certs["bob"])[0] == 200


def test_the_client_ca_is_looked_up_in_the_api_servers_configmap(
    control_plane: ControlPlane, admin_api: KubeAPI, identities: dict[str, Any]
) -> None:
    certs = identities["certs"]
    kubeconfig = control_plane.kubeconfig_path
    body = {
        "metadata": {"name": "extension-apiserver-authentication", "namespace": "kube-system"},
        "data": {"client-ca-file": certs["ca"][0].read_text()},
    }
    _apply(admin_api, CONFIGMAP.rsplit("/", 1)[0], body)
    try:
        with kubesched(kubeconfig, DelegationOptions(str(kubeconfig), str(kubeconfig))) as (_, served):
            assert fetch(served[0], "/metrics", cert=certs["alice"])[0] == 200
        skip = DelegationOptions(str(kubeconfig), str(kubeconfig), skip_lookup=True)
        with kubesched(kubeconfig, skip) as (_, served):  # not looked up: the certificate is not asked for
            assert fetch(served[0], "/metrics", cert=certs["alice"])[0] == 403
    finally:
        admin_api.request("DELETE", CONFIGMAP)


def test_a_failed_lookup_is_tolerated_by_default_and_fatal_when_asked(
    control_plane: ControlPlane, identities: dict[str, Any], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    nobody = control_plane.write_kubeconfig(tmp_path / "nobody", token=identities["nobody"])
    admin = control_plane.kubeconfig_path
    lenient = DelegationOptions(str(nobody), str(admin))
    with caplog.at_level(logging.WARNING), kubesched(admin, lenient) as (_, served):
        assert served and fetch(served[0], "/healthz") == (200, "ok")
    assert "Continuing without authentication configuration" in caplog.text
    caplog.clear()
    strict = DelegationOptions(str(nobody), str(admin), tolerate_lookup_failure=False)
    with caplog.at_level(logging.ERROR), kubesched(admin, strict) as (code, served):
        assert code == [1] and not served
    failed = caplog.text.replace("\\", "")  # klog quotes the error
    assert "unable to load configmap based request-header-client-ca-file: configmaps" in failed
    assert 'is forbidden: User "system:serviceaccount:default:nobody" cannot get resource "configmaps"' in failed
