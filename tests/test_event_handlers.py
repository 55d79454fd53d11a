"""Pod updates the scheduler treats specially (eventhandlers.go, updatePodInSchedulingQueue, v1.36)."""

from __future__ import annotations

import copy

from kubesched.framework.interface import PermitPlugin
from kubesched.framework.runtime.registry import Registry
from kubesched.framework.status import Code, Status
from kubesched.framework.types import new_pod_info
from kubesched_testing.cluster import Harness, new_test_cluster
from kubesched_testing.wrappers import make_node, make_pod


def bound_at(tc, name: str) -> float | None:
    return next((e.time for e in tc.recorder.events if e.type == "Bound" and e.pod == f"default/{name}"), None)


def test_a_dropped_nomination_wakes_lower_priority_pods_at_once() -> None:
    """A pod counted on its nominated node leaves it: pods of lower or equal priority it kept out retry."""
    high = make_pod("high").priority(100).req({"cpu": "2"}).obj()
    high["spec"]["preemptionPolicy"] = "Never"  # not eligible to preempt: its nomination stays
    high["status"] = {"nominatedNodeName": "n"}
    tc = new_test_cluster(
        [make_node("n").capacity({"cpu": "2"}).obj()],
        [make_pod("running").node("n").priority(1000).req({"cpu": "1"}).obj(), high],
    )
    tc.sched.run(until=5)
    tc.create(make_pod("low").priority(0).req({"cpu": "1"}).obj())
    tc.sched.run(until=30)
    assert bound_at(tc, "low") is None, "high's nomination holds the free cpu"
    tc.cluster.patch_pod_status(new_pod_info(tc.get("Pod", "default", "high")), None, "")
    tc.sched.run(until=60)
    # Upstream's unschedulable-pods flush would only move it after 5 minutes.
    assert (low := bound_at(tc, "low")) is not None and low <= 45


class WaitLong(PermitPlugin):
    NAME = "WaitLong"

    def permit(self, state, pod, node_name):
        return (Status(Code.WAIT), 600.0) if pod.name == "waiter" else (None, 0.0)


def held_at_permit(nodes: list[dict]) -> Harness:
    """A cluster whose pod named `waiter` stays at Permit for ten minutes once it has a node (its binding in
    flight, the pod assumed)."""
    reg = Registry()
    reg.register("WaitLong", lambda args, handle: WaitLong())
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": "default-scheduler", "plugins": {"permit": {"enabled": [{"name": "WaitLong"}]}}}
        ],
    }
    return new_test_cluster(nodes, config=config, registry=reg)


def test_an_assumed_pod_starting_to_terminate_is_rejected_and_frees_its_room() -> None:
    tc = held_at_permit([make_node("n").capacity({"cpu": "1"}).obj()])
    tc.create(make_pod("waiter").req({"cpu": "1"}).obj())
    tc.sched.run(until=5)
    tc.create(make_pod("other").req({"cpu": "1"}).obj())
    tc.sched.run(until=10)
    assert bound_at(tc, "other") is None
    waiter = copy.deepcopy(tc.get("Pod", "default", "waiter"))
    waiter["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:10Z"
    tc.cluster.update(waiter)
    tc.sched.run(until=40)
    assert bound_at(tc, "waiter") is None
    assert (other := bound_at(tc, "other")) is not None and other < 40


def test_a_pod_bound_elsewhere_by_another_binder_frees_the_room_it_was_assumed_on() -> None:
    """Our binding of `waiter` to n is in flight (held at Permit) when another binder binds it to m: the cpu it
    held on n is free, and the pod it kept out of n is scheduled there at once, not after the five-minute flush
    upstream waits for."""
    theirs = make_node("m").capacity({"cpu": "1"}).obj()
    theirs["spec"] = {"taints": [{"key": "rival", "effect": "NoSchedule"}]}  # ours never uses it
    tc = held_at_permit([make_node("n").capacity({"cpu": "1"}).obj(), theirs])
    tc.create(make_pod("waiter").req({"cpu": "1"}).obj())
    tc.sched.run(until=5)
    tc.create(make_pod("other").req({"cpu": "1"}).obj())
    tc.sched.run(until=10)
    assert bound_at(tc, "other") is None
    assert tc.sched.cache.is_assumed_pod(new_pod_info(tc.get("Pod", "default", "waiter")))
    tc.cluster.bind(new_pod_info(tc.get("Pod", "default", "waiter")), "m")
    tc.sched.run(until=40)
    assert tc.get("Pod", "default", "waiter")["spec"]["nodeName"] == "m"
    assert tc.get("Pod", "default", "other")["spec"].get("nodeName") == "n"
    assert (other := bound_at(tc, "other")) is not None and other < 40
