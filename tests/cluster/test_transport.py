"""backend/kube/transport.py: short requests on kept-alive connections, failures classified as urllib3's were."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.backend.kube.api import APIError, KubeAPI, load_configuration
from kubesched.backend.kube.transport import Transport
from kubesched_testing.apiserver import DROP_RESPONSE, FakeAPIServer


def _api(kubeconfig: str, **kw: object) -> KubeAPI:
    return KubeAPI(load_configuration(kubeconfig), qps=0, **kw)  # type: ignore[arg-type]


def _transport(api: KubeAPI) -> Transport:
    transport = api._transport
    assert transport is not None
    return transport


def test_requests_share_one_kept_alive_connection(kubeconfig: str, apiserver: FakeAPIServer) -> None:
    api = _api(kubeconfig)
    for i in range(20):
        api.request("POST", "/api/v1/namespaces/default/services", body={"metadata": {"name": f"c{i}"}})
        assert api.request("GET", f"/api/v1/namespaces/default/services/c{i}")["metadata"]["name"] == f"c{i}"
    assert _transport(api)._pool.num_connections == 1


def test_a_query_is_sent_encoded(kubeconfig: str, apiserver: FakeAPIServer) -> None:
    api = _api(kubeconfig)
    for name, phase in (("a", "Running"), ("b", "Succeeded")):
        apiserver.create({"kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": {}})
        apiserver.set_pod_phase("default", name, phase)
    listed = api.request("GET", "/api/v1/pods", query={"fieldSelector": "status.phase!=Succeeded,status.phase!=Failed"})
    assert [p["metadata"]["name"] for p in listed["items"]] == ["a"]


def test_an_unanswered_post_is_unknown_and_not_sent_again(kubeconfig: str, apiserver: FakeAPIServer) -> None:
    api = _api(kubeconfig)
    apiserver.fail("POST", "/services$", DROP_RESPONSE)
    with pytest.raises(APIError) as caught:
        api.request("POST", "/api/v1/namespaces/default/services", body={"metadata": {"name": "once"}})
    assert caught.value.status == 0 and caught.value.unknown
    assert api.request_count == 1  # a create whose answer was lost is never repeated
    assert apiserver.get("Service", "default", "once") is not None  # it was applied all the same
    api.request("POST", "/api/v1/namespaces/default/services", body={"metadata": {"name": "next"}})  # a new one


def test_an_unanswered_get_is_tried_again(kubeconfig: str, apiserver: FakeAPIServer) -> None:
    api = _api(kubeconfig, retry_backoff=0.0)
    apiserver.fail("GET", "/nodes$", DROP_RESPONSE)
    assert api.request("GET", "/api/v1/nodes")["items"] == []
    assert api.request_count == 2


def test_a_refused_connection_was_not_sent(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    api = KubeAPI(load_configuration(master=f"http://127.0.0.1:{port}"), qps=0, retries=0)
    with pytest.raises(APIError) as caught:
        api.request("POST", "/api/v1/namespaces/default/services", body={})
    assert caught.value.status == 0 and not caught.value.unknown


@pytest.fixture
def closing_server() -> Iterator[tuple[str, list[int]]]:
    """An HTTP server that answers one request per connection with keep-alive, then closes it unasked."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    accepted: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                accepted.append(1)
                conn.recv(65536)
                body = b'{"kind":"NodeList","items":[]}'
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
                )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.getsockname()[1]}", accepted
    srv.close()


def test_a_connection_the_server_closed_while_idle_is_replaced(closing_server: tuple[str, list[int]]) -> None:
    url, accepted = closing_server
    api = KubeAPI(load_configuration(master=url), qps=0, retries=0)
    for _ in range(3):
        assert api.request("GET", "/api/v1/nodes") == {"kind": "NodeList", "items": []}
        threading.Event().wait(0.05)  # the server closes its side
    assert len(accepted) == 3 and api.request_count == 3


def test_a_proxied_server_keeps_urllib3(tmp_path: Path) -> None:
    cfg = load_configuration(master="https://10.0.0.1:6443")
    cfg.proxy = "http://proxy.example:3128"
    assert KubeAPI(cfg, qps=0)._transport is None
