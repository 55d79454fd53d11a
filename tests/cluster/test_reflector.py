"""Reflectors against the stand-in API server: pagination, resume, 410 relist, retries."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from tests.cluster.helpers import node, pod, wait_for

from kubesched.backend.kube.api import KubeAPI, load_configuration
from kubesched.backend.kube.reflector import Backoff, Reflector
from kubesched.backend.kube.resources import WATCHED
from kubesched.testing.apiserver import FakeAPIServer


class Sink:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []  # (type, name, resourceVersion)
        self.lock = threading.Lock()

    def __call__(self, kind: str, event: str, old: Any, new: Any) -> None:
        obj = new if new is not None else old
        with self.lock:
            self.events.append((event, obj["metadata"]["name"], obj["metadata"]["resourceVersion"]))

    def names(self, event: str) -> list[str]:
        with self.lock:
            return [n for e, n, _ in self.events if e == event]


@pytest.fixture
def reflect(apiserver: FakeAPIServer, kubeconfig: str) -> Iterator[Any]:
    stop = threading.Event()
    started: list[Reflector] = []

    def start(kind: str, sink: Sink, page_size: int = 500) -> Reflector:
        api = KubeAPI(load_configuration(kubeconfig), qps=0, retries=0)
        backoff = Backoff(initial=0.02, cap=0.2, jitter=0.0)
        r = Reflector(api, WATCHED[kind], sink, stop, page_size=page_size, backoff=backoff).start()
        started.append(r)
        return r

    yield start
    stop.set()
    for r in started:
        r.join(5)


def test_list_is_paginated_and_complete(apiserver: FakeAPIServer, reflect: Any) -> None:
    for i in range(23):
        apiserver.create(node(f"n{i:02d}"))
    sink = Sink()
    r = reflect("Node", sink, page_size=5)
    wait_for(r.synced.is_set, what="sync")
    assert sorted(sink.names("ADDED")) == [f"n{i:02d}" for i in range(23)]
    pages = [p for m, p in apiserver.requests if m == "GET" and p == "/api/v1/nodes"]
    assert len(pages) >= 5  # 23 nodes in pages of 5, then the watch


def test_dropped_watch_resumes_without_losing_or_repeating(apiserver: FakeAPIServer, reflect: Any) -> None:
    sink = Sink()
    r = reflect("Node", sink)
    wait_for(r.synced.is_set, what="sync")
    for i in range(10):
        apiserver.create(node(f"a{i}"))
        if i in (3, 7):
            apiserver.drop_watches()
    apiserver.drop_watches()
    for i in range(5):
        apiserver.create(node(f"b{i}"))
    wait_for(lambda: len(sink.names("ADDED")) == 15, what="15 nodes")
    assert r.relists == 1  # resumed from the last resourceVersion, never listed again
    rvs = [rv for _, _, rv in sink.events]
    assert len(rvs) == len(set(rvs)) == 15


def test_gone_relists_and_delivers_deletions_from_the_gap(apiserver: FakeAPIServer, reflect: Any) -> None:
    for name in ("keep", "change", "remove"):
        apiserver.create(node(name))
    sink = Sink()
    r = reflect("Node", sink)
    wait_for(r.synced.is_set, what="sync")
    apiserver.fail("GET", r"^/api/v1/nodes$", status=503, times=10**6)  # nobody watches while things change
    apiserver.drop_watches()
    apiserver.delete("Node", "", "remove")
    apiserver.patch("Node", "", "change", {"metadata": {"labels": {"x": "y"}}})
    apiserver.create(node("new"))
    apiserver.compact()
    apiserver.clear_faults()
    wait_for(lambda: "remove" in sink.names("DELETED"), what="deletion from the gap")
    wait_for(lambda: "new" in sink.names("ADDED") and "change" in sink.names("MODIFIED"), what="changes")
    assert r.relists >= 2
    assert "keep" not in sink.names("MODIFIED")
    assert set(r.items) == {("", "keep"), ("", "change"), ("", "new")}


def test_server_errors_are_retried_with_backoff(apiserver: FakeAPIServer, reflect: Any) -> None:
    apiserver.create(node("n1"))
    apiserver.fail("GET", r"^/api/v1/nodes$", status=500, times=3)
    sink = Sink()
    r = reflect("Node", sink)
    wait_for(r.synced.is_set, what="sync after failures")
    assert sink.names("ADDED") == ["n1"]
    lists = [p for m, p in apiserver.requests if m == "GET" and p == "/api/v1/nodes"]
    assert len(lists) >= 4


def test_pods_leaving_the_field_selector_are_deleted(apiserver: FakeAPIServer, reflect: Any) -> None:
    apiserver.create(pod("done-before"))
    apiserver.set_pod_phase("default", "done-before", "Succeeded")
    apiserver.create(pod("runs"))
    sink = Sink()
    r = reflect("Pod", sink)
    wait_for(r.synced.is_set, what="sync")
    assert sink.names("ADDED") == ["runs"]
    apiserver.set_pod_phase("default", "runs", "Failed")
    wait_for(lambda: sink.names("DELETED") == ["runs"], what="finished pod deleted")
