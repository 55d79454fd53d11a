"""Pipelined exchanges (transport.py, KubeAPI.pipeline): answers in order, a cut mid-batch, framing split anywhere."""

from __future__ import annotations

import io
import socket
import threading
from collections.abc import Iterator
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.cluster.test_transport import listen_on_loopback

from kubesched.backend.kube.api import APIError, Call, KubeAPI, load_configuration
from kubesched.backend.kube.transport import PIPELINE_DEPTH, Request, Response, Transport, _read_response
from kubesched_testing.apiserver import DROP_RESPONSE, FakeAPIServer


def _transport(api: KubeAPI) -> Transport:
    transport = api._transport
    assert transport is not None
    return transport


def _answer(status: int, body: bytes, *, chunks: list[int] | None = None, close: bool = False) -> bytes:
    """An HTTP/1.1 answer, its body with a Content-Length or cut into chunks of the given sizes."""
    head = f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
    if close:
        head += "Connection: close\r\n"
    if chunks is None:
        return (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    out, at = [(head + "Transfer-Encoding: chunked\r\n\r\n").encode()], 0
    for size in chunks:
        out.append(b"%x\r\n%s\r\n" % (size, body[at : at + size]))
        at += size
    out.append(b"0\r\n\r\n")
    return b"".join(out)


class PipelineServer:
    """Reads requests as they come and answers the i-th with `answers[i]` (bytes); None hangs up instead."""

    def __init__(self, answers: list[bytes | None]) -> None:
        self.answers = answers
        self.heads: list[bytes] = []
        self.srv, self.url = listen_on_loopback()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        try:
            conn, _ = self.srv.accept()
        except OSError:
            return
        with conn, conn.makefile("rb") as reader:
            for answer in self.answers:
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    line = reader.readline()
                    if not line:
                        return
                    head += line
                length = next(
                    (int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.startswith(b"Content-Length")), 0
                )
                reader.read(length)
                self.heads.append(head)
                if answer is None:
                    return
                conn.sendall(answer)


@pytest.fixture
def pipeline_server() -> Iterator[type[PipelineServer]]:
    made: list[PipelineServer] = []

    def make(answers: list[bytes | None]) -> PipelineServer:
        made.append(PipelineServer(answers))
        return made[-1]

    yield make  # type: ignore[misc]
    for server in made:
        server.srv.close()


def _requests(n: int) -> list[Request]:
    return [Request("POST", f"/api/v1/namespaces/default/services?i={i}", b'{"i":%d}' % i, {}) for i in range(n)]


def test_answers_come_back_in_order(pipeline_server: type[PipelineServer]) -> None:
    server = pipeline_server([_answer(201, b'{"i":%d}' % i) for i in range(5)])
    api = KubeAPI(load_configuration(master=server.url), qps=0, retries=0)
    answers = _transport(api).pipeline(_requests(5), 5.0)
    assert [a.data for a in answers if isinstance(a, Response)] == [b'{"i":%d}' % i for i in range(5)]
    assert [h.split(b" ")[1] for h in server.heads] == [
        b"/api/v1/namespaces/default/services?i=%d" % i for i in range(5)
    ]


def test_a_connection_cut_mid_batch_leaves_the_rest_unknown(pipeline_server: type[PipelineServer]) -> None:
    server = pipeline_server([_answer(201, b"{}"), _answer(409, b'{"kind":"Status","reason":"AlreadyExists"}'), None])
    api = KubeAPI(load_configuration(master=server.url), qps=0, retries=0)
    calls = [Call("POST", "/api/v1/namespaces/default/services", {"i": i}) for i in range(4)]
    first, second, *rest = api.pipeline(calls)
    assert first == {}
    assert isinstance(second, APIError) and second.status == 409 and second.reason == "AlreadyExists"
    assert all(isinstance(r, APIError) and r.status == 0 and r.unknown for r in rest)


def test_a_connection_close_answer_ends_the_exchange(pipeline_server: type[PipelineServer]) -> None:
    server = pipeline_server([_answer(200, b"{}", close=True), _answer(200, b"{}")])
    api = KubeAPI(load_configuration(master=server.url), qps=0, retries=0)
    first, second = api.pipeline([Call("GET", "/api/v1/nodes"), Call("GET", "/api/v1/nodes")])
    assert first == {}
    assert isinstance(second, APIError) and second.unknown  # the server may have read it before closing


def test_a_malformed_request_alone_is_not_sent(pipeline_server: type[PipelineServer]) -> None:
    server = pipeline_server([_answer(200, b"{}")] * 2)
    api = KubeAPI(load_configuration(master=server.url), qps=0, retries=0)
    answers = api.pipeline([Call("GET", "/api/v1/nodes"), Call("GET", "/bad path"), Call("GET", "/api/v1/pods")])
    assert answers[0] == {} and isinstance(answers[1], ValueError) and answers[2] == {}
    assert [h.split(b" ")[1] for h in server.heads] == [b"/api/v1/nodes", b"/api/v1/pods"]


def test_a_refused_connection_sent_nothing() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    api = KubeAPI(load_configuration(master=f"http://127.0.0.1:{port}"), qps=0, retries=0)
    answers = api.pipeline([Call("POST", "/api/v1/namespaces/default/services", {})] * 2)
    assert all(isinstance(a, APIError) and a.status == 0 and not a.unknown for a in answers)


def test_more_than_the_depth_go_in_several_writes_on_one_connection(kubeconfig: str, apiserver: FakeAPIServer) -> None:
    api = KubeAPI(load_configuration(kubeconfig), qps=0)
    n = 2 * PIPELINE_DEPTH + 3
    calls = [Call("POST", "/api/v1/namespaces/default/services", {"metadata": {"name": f"s{i}"}}) for i in range(n)]
    answers = api.pipeline(calls)
    assert [a["metadata"]["name"] for a in answers if isinstance(a, dict)] == [f"s{i}" for i in range(n)]
    assert _transport(api)._pool.num_connections == 1 and api.request_count == n


def test_the_server_cutting_the_connection_mid_batch(kubeconfig: str, apiserver: FakeAPIServer) -> None:
    """The server applies the second create and hangs up: the later two were never read, yet nobody can tell."""
    api = KubeAPI(load_configuration(kubeconfig), qps=0)
    apiserver.fail("POST", "/namespaces/b/services$", DROP_RESPONSE)
    calls = [Call("POST", f"/api/v1/namespaces/{ns}/services", {"metadata": {"name": "s"}}) for ns in "abcd"]
    first, *rest = api.pipeline(calls)
    assert isinstance(first, dict) and first["metadata"]["namespace"] == "a"
    assert all(isinstance(r, APIError) and r.status == 0 and r.unknown for r in rest)
    assert [ns for ns in "abcd" if apiserver.get("Service", ns, "s")] == ["a", "b"]
    assert isinstance(api.pipeline(calls[2:])[0], dict)  # a new connection for the next exchange


# The plain twin: the same calls one after the other through `request` (as without the lean transport).


def _outcome(answer: Any) -> Any:
    if isinstance(answer, APIError):
        return ("error", answer.status, answer.reason, answer.unknown)
    if isinstance(answer, ValueError):
        return ("malformed",)
    return ("ok", (answer.get("metadata") or {}).get("name"), answer.get("kind"))


CALLS = st.lists(
    st.one_of(
        st.builds(
            lambda n: Call("POST", "/api/v1/namespaces/default/services", {"metadata": {"name": n}}),
            st.sampled_from("abc"),
        ),
        st.builds(lambda n: Call("GET", f"/api/v1/namespaces/default/services/{n}"), st.sampled_from("abc")),
        st.builds(lambda n: Call("DELETE", f"/api/v1/namespaces/default/services/{n}"), st.sampled_from("abc")),
        st.just(Call("POST", "/api/v1/namespaces/default/services", {"metadata": {}})),  # 422
        st.just(Call("GET", "/api/v1/no such")),
    ),
    max_size=12,
)


@settings(max_examples=25, deadline=None)
@given(calls=CALLS)
def test_pipelined_and_one_by_one_agree(calls: list[Call]) -> None:
    outcomes = []
    for pipelined in (True, False):
        server = FakeAPIServer().start()
        try:
            api = KubeAPI(load_configuration(master=server.url), qps=0, retries=0)
            answers = api.pipeline(calls) if pipelined else [api._one(c) for c in calls]
            outcomes.append([_outcome(a) for a in answers])
        finally:
            server.stop()
    assert outcomes[0] == outcomes[1]


# Framing: answers split anywhere on the wire.


class _Pieces(io.RawIOBase):
    """A stream that hands out its bytes in the given pieces, as a socket may."""

    def __init__(self, data: bytes, cuts: list[int]) -> None:
        self.pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        while self.pieces and not self.pieces[0]:
            self.pieces.pop(0)
        if not self.pieces:
            return 0
        piece = self.pieces[0][: len(buf)]
        self.pieces[0] = self.pieces[0][len(piece) :]
        buf[: len(piece)] = piece
        return len(piece)


@st.composite
def _framed(draw: st.DrawFn) -> tuple[bytes, list[tuple[int, bytes]]]:
    answers = []
    wire = b""
    for _ in range(draw(st.integers(1, 5))):
        body = draw(st.binary(max_size=300))
        status = draw(st.sampled_from([200, 201, 404, 409, 500]))
        chunks = None
        if body and draw(st.booleans()):
            sizes, left = [], len(body)
            while left:
                size = draw(st.integers(1, left))
                sizes.append(size)
                left -= size
            chunks = sizes
        wire += _answer(status, body, chunks=chunks)
        answers.append((status, body))
    return wire, answers


@settings(max_examples=200, deadline=None)
@given(framed=_framed(), data=st.data())
def test_answers_split_at_any_point_read_back_whole(
    framed: tuple[bytes, list[tuple[int, bytes]]], data: st.DataObject
) -> None:
    wire, expected = framed
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(wire) - 1)), max_size=20))))
    reader = cast(
        io.BufferedReader, io.BufferedReader(_Pieces(wire, [c for c in cuts if c < len(wire)]), buffer_size=64)
    )
    got = [_read_response(reader, "POST")[:2] for _ in expected]
    assert got == expected
    assert reader.read() == b""
