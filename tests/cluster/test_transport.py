"""backend/kube/transport.py: short requests on kept-alive connections, failures classified as urllib3's were."""

from __future__ import annotations

import json
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


LIST = b'{"kind":"NodeList","items":[]}'
OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(LIST), LIST)

CHUNKED = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    + b"".join(b"%x;ext=1\r\n%s\r\n" % (len(part), part) for part in (LIST[:7], LIST[7:]))
    + b"0\r\nX-Trailer: t\r\n\r\n"
)


def listen_on_loopback() -> tuple[socket.socket, str]:
    """A listening socket on a free loopback port, and its URL."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    return srv, f"http://127.0.0.1:{srv.getsockname()[1]}"


class CannedServer:
    """Answers each request on a connection with the next canned reply; `close_after` replies, it hangs up."""

    def __init__(self, replies: list[bytes], close_after: int = 1_000) -> None:
        self.replies, self.close_after = replies, close_after
        self.accepted = 0
        self.requests: list[bytes] = []
        self.srv, self.url = listen_on_loopback()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            self.accepted += 1
            with conn:
                for _ in range(self.close_after):
                    request = conn.recv(65536)
                    if not request or not self.replies:
                        break
                    self.requests.append(request)
                    conn.sendall(self.replies.pop(0))


@pytest.fixture
def canned() -> Iterator[type[CannedServer]]:
    made: list[CannedServer] = []

    def make(replies: list[bytes], close_after: int = 1_000) -> CannedServer:
        made.append(CannedServer(replies, close_after))
        return made[-1]

    yield make  # type: ignore[misc]
    for server in made:
        server.srv.close()


def test_a_connection_the_server_closed_while_idle_is_replaced(canned: type[CannedServer]) -> None:
    server = canned([OK] * 3, close_after=1)
    api = KubeAPI(load_configuration(master=server.url), qps=0, retries=0)
    for _ in range(3):
        assert api.request("GET", "/api/v1/nodes") == {"kind": "NodeList", "items": []}
        threading.Event().wait(0.05)  # the server closes its side
    assert server.accepted == 3 and api.request_count == 3


@pytest.mark.parametrize(
    ("reply", "reused"),
    [
        (CHUNKED, True),
        (b"HTTP/1.1 100 Continue\r\n\r\n" + OK, True),
        (OK.replace(b"OK\r\n", b"OK\r\nConnection: close\r\n"), False),
        (b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + LIST, False),  # ends with the connection
    ],
    ids=["chunked", "interim-100", "connection-close", "no-length"],
)
def test_every_framing_of_an_answer_is_read(canned: type[CannedServer], reply: bytes, reused: bool) -> None:
    server = canned([reply, OK], close_after=1 if not reused else 1_000)
    api = KubeAPI(load_configuration(master=server.url), qps=0, retries=0)
    assert api.request("GET", "/api/v1/nodes") == {"kind": "NodeList", "items": []}
    assert api.request("GET", "/api/v1/nodes") == {"kind": "NodeList", "items": []}
    assert server.accepted == (1 if reused else 2)


def test_the_request_is_one_well_formed_write(canned: type[CannedServer]) -> None:
    server = canned([OK])
    api = KubeAPI(load_configuration(master=server.url), qps=0, retries=0)
    api.request("POST", "/api/v1/namespaces/default/pods/p/binding", body={"target": {"name": "n1"}})
    head, _, body = server.requests[0].partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /api/v1/namespaces/default/pods/p/binding HTTP/1.1"
    fields = dict(line.split(": ", 1) for line in lines[1:])
    assert fields["Host"] == server.url.removeprefix("http://")
    assert fields["Content-Type"] == "application/json" and fields["Accept"] == "application/json"
    assert int(fields["Content-Length"]) == len(body) and json.loads(body) == {"target": {"name": "n1"}}


def test_a_truncated_answer_is_an_unknown_outcome(canned: type[CannedServer]) -> None:
    server = canned([OK[:-5]], close_after=1)
    api = KubeAPI(load_configuration(master=server.url), qps=0, retries=0)
    with pytest.raises(APIError) as caught:
        api.request("POST", "/api/v1/namespaces/default/pods/p/binding", body={})
    assert caught.value.status == 0 and caught.value.unknown


def test_a_header_with_a_line_break_is_refused_before_sending(canned: type[CannedServer]) -> None:
    server = canned([OK])
    api = KubeAPI(load_configuration(master=server.url), qps=0, retries=0)
    api._client.default_headers["User-Agent"] = "kubesched\r\nX-Injected: 1"
    with pytest.raises(ValueError, match="line break"):
        api.request("GET", "/api/v1/nodes")
    assert server.requests == []


def test_a_proxied_server_keeps_urllib3(tmp_path: Path) -> None:
    cfg = load_configuration(master="https://10.0.0.1:6443")
    cfg.proxy = "http://proxy.example:3128"
    assert KubeAPI(cfg, qps=0)._transport is None
