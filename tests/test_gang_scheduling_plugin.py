"""Cases from gangscheduling_test.go (v1.36), names unchanged: the hints, then PreEnqueue and Permit in turn.

Upstream's flow test calls Permit directly, so its framework holds no waiting pods and its
"allowed" check cannot fail; here the pods that waited are registered as waiting, and
the test checks which of them the quorum let through.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubesched.cache.cache import Cache
from kubesched.cache.pod_groups import PodGroupStates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Handle, QueueingHint
from kubesched.framework.plugins.gangscheduling.gang_scheduling import new
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, new_pod_info
from kubesched_testing.framework import lister_with
from kubesched_testing.wrappers import make_pod


def pod_group(name: str, min_count: int | None, namespace: str = "ns1") -> dict[str, Any]:
    policy: dict[str, Any] = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"schedulingPolicy": policy},
    }


def member(name: str, group: str | None, namespace: str = "ns1") -> PodInfo:
    w = make_pod(name, namespace).uid(name)
    return new_pod_info((w.pod_group(group) if group else w).obj())


@pytest.mark.parametrize(
    ("pod", "added", "want"),
    [
        pytest.param(
            member("p", "pg", "default"),
            member("", "pg", "default"),
            QueueingHint.QUEUE,
            id="add a newPod which matches the pod's scheduling group",
        ),
        pytest.param(
            member("p", "pg", "default"),
            member("", "pg", "foo"),
            QueueingHint.QUEUE_SKIP,
            id="add a newPod which doesn't match the pod's namespace",
        ),
        pytest.param(
            member("p", "pg1", "default"),
            member("", "pg2", "default"),
            QueueingHint.QUEUE_SKIP,
            id="add a newPod which doesn't match the pod's pod group name",
        ),
    ],
)
def test_is_schedulable_after_pod_added(pod: PodInfo, added: PodInfo, want: QueueingHint) -> None:
    plugin = new(None, Handle())
    hint = next(e for e in plugin.events_to_register() if e.event.resource == "Pod").queueing_hint_fn
    assert hint is not None and hint(pod, None, added) == want


@pytest.mark.parametrize(
    ("pod", "added", "want"),
    [
        pytest.param(
            member("p", "pg", "default"),
            pod_group("pg", 1, "default"),
            QueueingHint.QUEUE,
            id="add a pod group which matches the pod's pod group name",
        ),
        pytest.param(
            member("p", "pg1", "default"),
            pod_group("pg2", 1, "default"),
            QueueingHint.QUEUE_SKIP,
            id="add a pod group which doesn't match the pod's scheduling group name",
        ),
        pytest.param(
            member("p", "pg", "ns1"),
            pod_group("pg", 1, "ns2"),
            QueueingHint.QUEUE_SKIP,
            id="add a pod group which doesn't match the pod's scheduling group namespace",
        ),
    ],
)
def test_is_schedulable_after_pod_group_added(pod: PodInfo, added: dict[str, Any], want: QueueingHint) -> None:
    plugin = new(None, Handle())
    hint = next(e for e in plugin.events_to_register() if e.event.resource == "PodGroup").queueing_hint_fn
    assert hint is not None and hint(pod, None, added) == want


@dataclass
class _Waiting:
    allowed_by: list[str] = field(default_factory=list)

    def allow(self, plugin: str) -> None:
        self.allowed_by.append(plugin)

    def reject(self, plugin: str, message: str) -> None:
        raise AssertionError("not expected")


@dataclass
class _Framework:
    """The framework's waiting pods, as far as Permit reaches them."""

    waiting: dict[str, _Waiting] = field(default_factory=dict)
    profile_name: str = "default-scheduler"

    def get_waiting_pod(self, uid: str) -> _Waiting | None:
        return self.waiting.get(uid)

    def run_filter_plugins_with_nominated_pods(self, *a: Any) -> Any:
        raise AssertionError("not expected")

    def run_pre_filter_extension_add_pod(self, *a: Any) -> Any:
        raise AssertionError("not expected")

    def run_pre_filter_extension_remove_pod(self, *a: Any) -> Any:
        raise AssertionError("not expected")


GROUPS = [pod_group("pg1", 3), pod_group("pg2", 4), pod_group("pg3", None)]
P = {n: member(n, g) for n, g in (("p1", "pg1"), ("p2", "pg1"), ("p3", "pg1"), ("p4", "pg2"), ("p5", "pg2"))}
BASIC = member("basic-pod", "pg3")
NON_GANG = member("non-gang", None)
WAITING_QUORUM = Status(Code.WAIT, "waiting for minCount pods from a gang to be scheduled")


@pytest.mark.parametrize(
    ("pod", "initial", "groups", "waiting", "want_pre_enqueue", "want_permit", "want_activated", "want_allowed"),
    [
        pytest.param(NON_GANG, [], GROUPS, [], None, None, [], [], id="non-gang pod succeeds immediately"),
        pytest.param(BASIC, [], GROUPS, [], None, None, [], [], id="basic policy pod succeeds immediately"),
        pytest.param(
            P["p1"],
            ["p2", "p3", "p4", "p5"],
            [],
            [],
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'waiting for pods\'s pod group "pg1" to appear in scheduling queue'
            ),
            None,
            [],
            [],
            id="gang pod fails PreEnqueue when pod group is not yet created",
        ),
        pytest.param(
            P["p1"],
            ["p2", "p4", "p5"],
            GROUPS[:2],
            [],
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                "waiting for minCount pods from a gang to appear in scheduling queue",
            ),
            None,
            [],
            [],
            id="gang pod fails PreEnqueue when quorum is not met",
        ),
        pytest.param(
            P["p1"],
            ["p2", "p3", "p4", "p5"],
            GROUPS[:2],
            ["p2", "p4", "p5"],
            None,
            WAITING_QUORUM,
            ["p3"],
            [],
            id="gang pod passes PreEnqueue, but waits at Permit",
        ),
        pytest.param(
            P["p1"],
            ["p2", "p3", "p4", "p5"],
            GROUPS[:2],
            ["p2", "p3", "p4", "p5"],
            None,
            None,
            [],
            ["p2", "p3"],
            id="final gang pod arrives at Permit and allows all waiting pods from a gang",
        ),
    ],
)
def test_gang_scheduling_flow(
    pod: PodInfo,
    initial: list[str],
    groups: list[dict[str, Any]],
    waiting: list[str],
    want_pre_enqueue: Status | None,
    want_permit: Status | None,
    want_activated: list[str],
    want_allowed: list[str],
) -> None:
    cache = Cache()
    cache.pod_groups = PodGroupStates()
    for name in initial:
        cache.pod_groups.add(P[name])
    cache.pod_groups.add(pod)
    activated: list[str] = []

    def activate(pods: Iterable[PodInfo]) -> None:
        activated.extend(p.name for p in pods)

    fwk = _Framework()
    plugin = new(
        None, Handle(lister=lister_with(groups), pod_groups=cache.pod_groups, activate=activate, framework=fwk)
    )
    assert plugin.pre_enqueue(pod) == want_pre_enqueue
    if want_pre_enqueue is not None:
        return
    for name in waiting:
        assumed = _on(P[name], "some-node")
        cache.assume_pod(assumed)
        status, _ = plugin.permit(CycleState(), assumed, "some-node")
        assert status is not None and status.code == Code.WAIT, name
        fwk.waiting[assumed.uid] = _Waiting()
    activated.clear()
    assumed = _on(pod, "some-node")
    cache.assume_pod(assumed)
    status, timeout = plugin.permit(CycleState(), assumed, "some-node")
    assert status == want_permit
    if status is not None:
        assert timeout == 300.0
        assert activated == want_activated
        return
    assert sorted(uid for uid, w in fwk.waiting.items() if w.allowed_by == ["GangScheduling"]) == want_allowed


def _on(pod: PodInfo, node: str) -> PodInfo:
    return dataclasses.replace(pod, node_name=node)
