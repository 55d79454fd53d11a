"""Reflectors against the stand-in API server: pagination, resume, 410 relist, retries."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from tests.cluster.helpers import node, pod, wait_for

from kubesched.backend.kube.api import APIError, KubeAPI, load_configuration
from kubesched.backend.kube.reflector import Backoff, FailureLog, Reflector
from kubesched.backend.kube.resources import WATCHED
from kubesched.backend.store import Listener
from kubesched_testing.apiserver import FakeAPIServer


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

    def start(kind: str, sink: Listener, page_size: int = 500, failures: FailureLog | None = None) -> Reflector:
        api = KubeAPI(load_configuration(kubeconfig), qps=0, retries=0)
        backoff = Backoff(initial=0.02, cap=0.2, jitter=0.0)
        r = Reflector(api, WATCHED[kind], sink, stop, page_size=page_size, backoff=backoff, failures=failures)
        r.start()
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


def _failed_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith('"Failed to watch"')]


def test_every_informer_refused_alike_makes_one_line_per_backoff(
    apiserver: FakeAPIServer, kubeconfig: str, caplog: pytest.LogCaptureFixture
) -> None:
    apiserver.create(node("n1"))
    apiserver.fail("GET", r"^/api", status=401, times=10**6)
    api = KubeAPI(load_configuration(kubeconfig), qps=0, retries=0)
    failures = FailureLog(apiserver.url, grace=0.2)
    caplog.set_level(logging.ERROR, logger="kubesched.backend.kube.reflector")
    stop = threading.Event()
    started = [
        Reflector(api, r, Sink(), stop, backoff=Backoff(initial=0.05, cap=0.2, jitter=0.0), failures=failures)
        for r in WATCHED.values()
    ]
    try:
        for r in started:
            r.start()
        time.sleep(1.5)
        lines = _failed_lines(caplog)
        # Every informer retried every 0.2 s at most: dozens of refusals, a line for each pause of the first to fail.
        assert len(apiserver.requests) >= 4 * len(WATCHED)
        assert 2 <= len(lines) <= 1.5 / 0.2 + 1
        assert lines[0] == (
            f'"Failed to watch" err="{apiserver.url}: 401 Unauthorized, the server did not accept the credentials: '
            "check the token (or client certificate) of the kubeconfig's user; it may have expired\" "
            f'informers={len(WATCHED)} retryIn="0.1s"'
        )
        assert all(f"informers={len(WATCHED)} " in line for line in lines)  # all of them, still failing
        assert all(r._thread is not None and r._thread.is_alive() for r in started)
        apiserver.clear_faults()  # the token is accepted again: every informer syncs, without a restart
        for r in started:
            wait_for(r.synced.is_set, what=f"{r.resource.plural} synced once the token is accepted")
    finally:
        stop.set()
        for r in started:
            r.join(5)


def test_a_403_names_the_user_and_every_verb_and_resource_refused(
    apiserver: FakeAPIServer, reflect: Any, caplog: pytest.LogCaptureFixture
) -> None:
    for plural, group in (("nodes", ""), ("resourceslices", "resource.k8s.io")):
        apiserver.fail(
            "GET",
            f"/{plural}$",
            status=403,
            times=10**6,
            message=f'{plural} is forbidden: User "nobody" cannot list resource "{plural}" in API group "{group}" '
            "at the cluster scope",
        )
    failures = FailureLog(apiserver.url, grace=0.3)
    caplog.set_level(logging.ERROR, logger="kubesched.backend.kube.reflector")
    allowed = reflect("Pod", Sink(), failures=failures)
    refused = [reflect(kind, Sink(), failures=failures) for kind in ("Node", "ResourceSlice")]
    wait_for(lambda: _failed_lines(caplog), what="the 403 line")
    assert _failed_lines(caplog)[0].startswith(
        f'"Failed to watch" err="{apiserver.url}: 403 Forbidden, user \\"nobody\\" may not list nodes, '
        'resourceslices.resource.k8s.io: check the RBAC role bound to user \\"nobody\\"" informers=2 '
    )
    wait_for(allowed.synced.is_set, what="pods synced")
    assert not any(r.synced.is_set() for r in refused)
    apiserver.clear_faults()  # the role is bound: the refused informers sync at their next try
    for r in refused:
        wait_for(r.synced.is_set, what=f"{r.resource.plural} synced once allowed")


def test_a_bug_met_while_listing_does_not_end_the_reflector(
    apiserver: FakeAPIServer, reflect: Any, caplog: pytest.LogCaptureFixture
) -> None:
    apiserver.create(node("n1"))
    calls: list[str] = []

    def buggy(kind: str, event: str, old: Any, new: Any) -> None:
        calls.append(event)
        if len(calls) == 1:
            raise KeyError("a bug")

    r = reflect("Node", buggy)
    wait_for(r.synced.is_set, what="sync after the bug")
    assert r._thread is not None and r._thread.is_alive()
    lines = _failed_lines(caplog)
    assert lines and "KeyError: 'a bug'" in lines[0]


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_same_failure_is_quiet_for_the_backoff_delay_and_other_failures_are_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = _Clock()
    failures = FailureLog("https://api:6443", grace=0.0, clock=clock)
    caplog.set_level(logging.ERROR, logger="kubesched.backend.kube.reflector")
    stop = threading.Event()
    unauthorized = APIError(401, "Unauthorized", "Unauthorized")
    for kind in ("Node", "Pod", "Service"):
        failures.failed(WATCHED[kind], "list", unauthorized, 5.0, stop)
    assert failures.lines == 1
    clock.now += 4.9
    failures.failed(WATCHED["Node"], "watch", unauthorized, 10.0, stop)
    failures.failed(WATCHED["Node"], "list", APIError(0, "", "connection refused"), 10.0, stop)
    assert failures.lines == 2  # the refusal waits for the 5 s to pass; the new failure is told at once
    clock.now += 0.2
    failures.failed(WATCHED["Pod"], "list", unauthorized, 10.0, stop)
    assert failures.lines == 3
    failures.recovered(WATCHED["Pod"])
    clock.now += 10.0
    failures.failed(WATCHED["Service"], "watch", unauthorized, 10.0, stop)
    lines = _failed_lines(caplog)
    # Without a grace the first line knows of one informer; the third counts the two still refused (the node's
    # informer now fails another way), the fourth the one left once the pods' informer listed again.
    assert [re.search(r"informers=(\d+)", line).group(1) for line in lines] == ["1", "1", "2", "1"]  # type: ignore[union-attr]
    assert "no answer: connection refused" in lines[1]


def test_the_doorbell_rings_once_and_every_event_put_before_the_clear_is_drained() -> None:
    """Informer threads ring the loop's doorbell only when it is not rung: an event put while it is still set
    reaches the store at the drain that follows the loop's clear, and the next event after that rings again."""
    from types import SimpleNamespace

    from kubesched.backend.kube.cluster import ClusterStore

    store = ClusterStore(SimpleNamespace(host="https://h"), threading.Event(), resources=())  # type: ignore[arg-type]
    seen: list[tuple[str, str]] = []

    def listener(kind: str, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        obj = new if new is not None else old
        assert obj is not None
        seen.append((event, obj["metadata"]["name"]))

    store.subscribe(listener)
    assert not store.wake.is_set()
    store._enqueue("Node", "ADDED", None, node("a"))
    assert store.wake.is_set()
    store._enqueue("Node", "ADDED", None, node("b"))  # rung already
    store.wake.clear()
    assert store.drain() == 2 and seen == [("ADDED", "a"), ("ADDED", "b")]
    store._enqueue("Node", "DELETED", node("a"), None)
    assert store.wake.is_set()
    assert store.drain() == 1 and seen[-1] == ("DELETED", "a")
