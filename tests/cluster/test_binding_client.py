"""KubeClient.bind against the stand-in API server: how a binding thread shares the scheduler lock."""

from __future__ import annotations

import threading
from unittest.mock import patch

from tests.cluster.helpers import node, pod

from kubesched.backend.kube.api import KubeAPI, load_configuration
from kubesched.backend.kube.cluster import KubeClient
from kubesched.backend.kube.dispatcher import APIDispatcher
from kubesched.backend.kube.lock import SchedulerLock
from kubesched.framework.types import new_pod_info
from kubesched_testing.apiserver import DROP_RESPONSE, FakeAPIServer


def test_a_binding_takes_the_scheduler_lock_back_once_whatever_its_network_does(apiserver: FakeAPIServer) -> None:
    """Hold, POST, a lost answer's read-back and release all happen in one stretch outside the lock."""
    lock = SchedulerLock()
    entered: list[int] = []
    enter = lock.__enter__

    def counted() -> SchedulerLock:
        entered.append(threading.get_ident())
        return enter()

    lock.__enter__ = counted  # type: ignore[method-assign]
    api = KubeAPI(load_configuration(master=apiserver.url), qps=0, lock=lock)
    client = KubeClient(api, APIDispatcher(), instance="host")
    apiserver.create(node("n1"))
    info = new_pod_info(apiserver.create(pod("p1")))
    apiserver.fail("POST", r"/pods/p1/binding$", status=DROP_RESPONSE)  # applied, answer lost: read back
    with patch("kubesched.backend.kube.cluster.UNKNOWN_BACKOFF", (0.01, 0.01)), lock:
        entered.clear()
        client.bind(info, "n1")
        assert lock.held()
    assert len(entered) == 1
    assert ("GET", "/api/v1/namespaces/default/pods/p1") in apiserver.requests
    assert (apiserver.get("Pod", "default", "p1") or {})["spec"]["nodeName"] == "n1"
