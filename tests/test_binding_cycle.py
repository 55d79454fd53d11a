"""The start of the binding cycle (v1.36): PreBindPreFlight and the nominatedNodeName written for expectation."""

from __future__ import annotations

from typing import Any

from kubesched.framework.interface import PermitPlugin
from kubesched.framework.runtime.registry import Registry
from kubesched.framework.status import Code, Status
from kubesched_testing.cluster import new_test_cluster
from kubesched_testing.volumes import make_pv, make_pvc, make_storage_class
from kubesched_testing.wrappers import make_node, make_pod


def nominations_written(tc: Any) -> list[tuple[str, str]]:
    """(pod, node) for every status write that set a nominatedNodeName."""
    seen: list[tuple[str, str]] = []

    def listener(kind: str, event: str, old: Any, new: Any) -> None:
        if kind != "Pod" or new is None:
            return
        before = ((old or {}).get("status") or {}).get("nominatedNodeName")
        after = (new.get("status") or {}).get("nominatedNodeName")
        if after and after != before:
            seen.append((new["metadata"]["name"], after))

    tc.cluster.subscribe(listener)
    return seen


def test_a_pod_whose_volumes_need_binding_is_nominated_before_prebind() -> None:
    tc = new_test_cluster([make_node("n").capacity({"cpu": "1"}).obj()])
    seen = nominations_written(tc)
    tc.create(
        make_storage_class("wffc"),
        make_pv("pv", storage_class="wffc"),
        make_pvc("claim", storage_class="wffc"),
        make_pod("with-volume").pvc("claim").obj(),
        make_pod("plain").obj(),
    )
    tc.sched.run()
    assert seen == [("with-volume", "n")]
    bound = tc.get("Pod", "default", "with-volume")
    assert bound["spec"]["nodeName"] == "n" and "nominatedNodeName" not in bound["status"]


class WaitBriefly(PermitPlugin):
    NAME = "WaitBriefly"

    def permit(self, state: Any, pod: Any, node_name: str) -> tuple[Status | None, float]:
        return Status(Code.WAIT), 5.0


def test_a_pod_waiting_at_permit_is_nominated() -> None:
    reg = Registry()
    reg.register("WaitBriefly", lambda args, handle: WaitBriefly())
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": "default-scheduler", "plugins": {"permit": {"enabled": [{"name": "WaitBriefly"}]}}}
        ],
    }
    tc = new_test_cluster([make_node("n").capacity({"cpu": "1"}).obj()], config=config, registry=reg)
    seen = nominations_written(tc)
    tc.create(make_pod("p").obj())
    tc.sched.run(until=2)
    assert seen == [("p", "n")]
