"""Queueing hints of the in-tree plugins, case by case as upstream's isSchedulableAfter* tables (v1.36, hints on)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.defaults import default_args
from kubesched.config.types import InterPodAffinityArgs, NodeAffinityArgs, NodeResourcesFitArgs, PodTopologySpreadArgs
from kubesched.framework import events
from kubesched.framework.interface import Handle, QueueingHint
from kubesched.framework.node_info import parse_node
from kubesched.framework.plugins.interpodaffinity.plugin import InterPodAffinity
from kubesched.framework.plugins.nodeaffinity.node_affinity import NodeAffinity
from kubesched.framework.plugins.nodedeclaredfeatures.node_declared_features import NodeDeclaredFeatures
from kubesched.framework.plugins.nodename.node_name import NodeName
from kubesched.framework.plugins.nodeports.node_ports import NodePorts
from kubesched.framework.plugins.noderesources.fit import Fit
from kubesched.framework.plugins.nodeunschedulable.node_unschedulable import NodeUnschedulable
from kubesched.framework.plugins.podtopologyspread.plugin import PodTopologySpread
from kubesched.framework.plugins.schedulinggates.scheduling_gates import SchedulingGates
from kubesched.framework.plugins.tainttoleration.taint_toleration import TaintToleration
from kubesched.framework.types import new_pod_info
from kubesched_testing.wrappers import make_node, make_pod

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def node(name: str = "n", labels: dict[str, str] | None = None, **kw: Any) -> Any:
    w = make_node(name)
    for k, v in (labels or {}).items():
        w.label(k, v)
    if "capacity" in kw:
        w.capacity(kw["capacity"])
    if kw.get("unschedulable"):
        w.unschedulable()
    for key, value, effect in kw.get("taints", ()):
        w.taint(key, value, effect)
    return parse_node(w.obj())


def fit_args(args: NodeResourcesFitArgs) -> NodeResourcesFitArgs:
    defaulted = default_args("NodeResourcesFit", args)
    assert isinstance(defaulted, NodeResourcesFitArgs)
    return defaulted


def registered(plugin: Any) -> dict[tuple[str, int], Any]:
    return {(e.event.resource, e.event.action_type): e.queueing_hint_fn for e in plugin.events_to_register()}


def test_events_registered_with_hints_on() -> None:
    fit = Fit(fit_args(NodeResourcesFitArgs()))
    assert set(registered(fit)) == {
        (events.POD, events.DELETE | events.UPDATE_POD_SCALE_DOWN),
        (events.NODE, events.ADD | events.UPDATE_NODE_ALLOCATABLE),
        (events.DEVICE_CLASS, events.ADD | events.UPDATE),  # DRAExtendedResource (beta, on)
    }
    assert set(registered(NodeAffinity(NodeAffinityArgs()))) == {(events.NODE, events.ADD | events.UPDATE_NODE_LABEL)}
    assert set(registered(NodePorts())) == {(events.POD, events.DELETE), (events.NODE, events.ADD)}
    for plugin in (TaintToleration(), NodeUnschedulable()):
        assert set(registered(plugin)) == {
            (events.NODE, events.ADD | events.UPDATE_NODE_TAINT),
            (events.POD, events.UPDATE_POD_TOLERATION),
        }
    assert registered(NodeName()) == {(events.NODE, events.ADD): None}
    assert set(registered(SchedulingGates())) == {
        (events.UNSCHEDULED_POD, events.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    }
    assert set(registered(NodeDeclaredFeatures())) == {
        (events.NODE, events.ADD | events.UPDATE_NODE_DECLARED_FEATURE),
        (events.POD, events.UPDATE),
    }


# NodeAffinity: TestNodeAffinity_isSchedulableAfterNodeChange

FOO_BAR = {"foo": "bar"}
AFFINITY_POD = new_pod_info(make_pod("p").node_affinity_in("foo", ["bar"]).obj())
ENFORCED = NodeAffinityArgs(
    addedAffinity={
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["zone1"]}]}]
        }
    }
)


@pytest.mark.parametrize(
    ("args", "old", "new", "want"),
    [
        pytest.param(None, None, node(), SKIP, id="skip-queue-on-add"),
        pytest.param(None, None, node(labels=FOO_BAR), Q, id="queue-on-add"),
        pytest.param(None, node(labels=FOO_BAR), node(labels=FOO_BAR), SKIP, id="skip-unrelated-changes"),
        pytest.param(None, node(), node(labels={"x": "y"}), SKIP, id="skip-unrelated-changes-on-labels"),
        pytest.param(
            None,
            node(labels=FOO_BAR),
            node(labels={**FOO_BAR, "x": "y"}),
            SKIP,
            id="skip-labels-changes-on-suitable-node",
        ),
        pytest.param(None, node(labels=FOO_BAR), node(), SKIP, id="skip-labels-changes-from-suitable-to-unsuitable"),
        pytest.param(None, node(), node(labels=FOO_BAR), Q, id="queue-on-labels-change-makes-pod-schedulable"),
        pytest.param(
            ENFORCED, None, node(labels=FOO_BAR), SKIP, id="skip-queue-on-add-scheduler-enforced-node-affinity"
        ),
        pytest.param(
            ENFORCED,
            None,
            node(labels={**FOO_BAR, "zone": "zone1"}),
            Q,
            id="queue-on-add-scheduler-enforced-node-affinity",
        ),
        pytest.param(
            ENFORCED,
            node(labels=FOO_BAR),
            node(labels={**FOO_BAR, "zone": "zone1"}),
            SKIP,
            id="enforced-affinity-newly-matched-but-pod-terms-matched-before",
        ),
    ],
)
def test_node_affinity_after_node_change(args: NodeAffinityArgs | None, old: Any, new: Any, want: QueueingHint) -> None:
    plugin = NodeAffinity(args or NodeAffinityArgs())
    assert plugin._after_node(AFFINITY_POD, old, new) == want


# NodeResourcesFit: TestIsSchedulableAfterNodeChange and the pod events


def fit_plugin() -> Fit:
    return Fit(fit_args(NodeResourcesFitArgs()))


CPU_POD = new_pod_info(make_pod("p").uid("p").req({"cpu": "1"}).obj())


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, node(capacity={"cpu": "2"}), Q, id="queue-on-node-add-with-enough-resource"),
        pytest.param(None, node(capacity={"cpu": "500m"}), SKIP, id="skip-queue-on-node-add-without-enough-resource"),
        pytest.param(
            node(capacity={"cpu": "1"}), node(capacity={"cpu": "2"}), Q, id="queue-on-node-allocatable-increase"
        ),
        pytest.param(
            node(capacity={"cpu": "2"}),
            node(capacity={"cpu": "2", "memory": "1Gi"}),
            SKIP,
            id="skip-queue-on-unrelated-resource-increase",
        ),
        pytest.param(
            node(capacity={"cpu": "2", "pods": "1"}),
            node(capacity={"cpu": "2", "pods": "2"}),
            Q,
            id="queue-on-allowed-pod-number-increase",
        ),
        pytest.param(
            node(capacity={"cpu": "2"}), node(capacity={"cpu": "500m"}), SKIP, id="skip-queue-when-node-shrinks"
        ),
    ],
)
def test_fit_after_node_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert fit_plugin()._after_node_change(CPU_POD, old, new) == want


def test_fit_node_hint_checks_ignored_resources_too() -> None:
    """isFit in the hint checks every requested resource, ignoredResources included, as upstream."""
    fit = Fit(fit_args(NodeResourcesFitArgs(ignoredResources=["example.com/foo"])))
    pod = new_pod_info(make_pod("p").req({"cpu": "1", "example.com/foo": "1"}).obj())
    assert fit._after_node_change(pod, None, node(capacity={"cpu": "2"})) == SKIP


def pinfo(name: str, node_name: str = "", req: dict[str, str] | None = None, nominated: str = "") -> Any:
    obj = make_pod(name).uid(name).node(node_name).req(req or {"cpu": "1"}).obj()
    if nominated:
        obj["status"] = {"nominatedNodeName": nominated}
    return new_pod_info(obj)


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(pinfo("a", "n"), None, Q, id="queue-on-deleted-scheduled-pod"),
        pytest.param(pinfo("a"), None, SKIP, id="skip-queue-on-deleted-unscheduled-pod"),
        pytest.param(pinfo("a", nominated="n"), None, Q, id="queue-on-deleted-nominated-pod"),
        pytest.param(
            pinfo("a", "n", {"cpu": "2"}),
            pinfo("a", "n", {"cpu": "1"}),
            Q,
            id="queue-on-scale-down-of-requested-resource",
        ),
        pytest.param(
            pinfo("a", "n", {"cpu": "1", "memory": "2Gi"}),
            pinfo("a", "n", {"cpu": "1", "memory": "1Gi"}),
            SKIP,
            id="skip-queue-on-scale-down-of-unrequested-resource",
        ),
        pytest.param(
            pinfo("a", "", {"cpu": "2"}), pinfo("a", "", {"cpu": "1"}), SKIP, id="skip-unscheduled-pod-scale-down"
        ),
        pytest.param(
            pinfo("p", "", {"cpu": "2"}), pinfo("p", "", {"cpu": "1"}), Q, id="queue-on-target-pod-scale-down"
        ),
    ],
)
def test_fit_after_pod_event(old: Any, new: Any, want: QueueingHint) -> None:
    assert fit_plugin()._after_pod_event(CPU_POD, old, new) == want


# NodePorts: Test_isSchedulableAfterPodDeleted


def port_pod(name: str, port: int = 0, node_name: str = "", nominated: str = "") -> Any:
    w = make_pod(name).uid(name).node(node_name)
    if port:
        w.host_port(port)
    obj = w.obj()
    if nominated:
        obj["status"] = {"nominatedNodeName": nominated}
    return new_pod_info(obj)


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(port_pod("d", 8080, "n"), Q, id="backoff-when-deleted-pod-matches"),
        pytest.param(port_pod("d", 8080), SKIP, id="skip-queue-when-deleted-pod-is-unscheduled"),
        pytest.param(port_pod("d", 8080, nominated="n"), Q, id="queue-when-deleted-pod-is-nominated"),
        pytest.param(port_pod("d", 9090, "n"), SKIP, id="skip-queue-when-ports-differ"),
        pytest.param(port_pod("d", 0, "n"), SKIP, id="skip-queue-when-deleted-pod-has-no-ports"),
    ],
)
def test_node_ports_after_pod_deleted(deleted: Any, want: QueueingHint) -> None:
    assert NodePorts()._after_pod_deleted(port_pod("p", 8080), deleted, None) == want


# TaintToleration: TestIsSchedulableAfterNodeChange / Test_isSchedulableAfterPodTolerationChange


def tol_pod(name: str, *tolerations: tuple[str, str]) -> Any:
    w = make_pod(name).uid(name)
    for key, effect in tolerations:
        w.toleration(key=key, operator="Exists", effect=effect)
    return new_pod_info(w.obj())


DEDICATED_USER2 = new_pod_info(make_pod("pod1").uid("pod1").toleration("dedicated", "user2", "NoSchedule").obj())


def dedicated(*users: str) -> Any:
    return node("nodeA", taints=[("dedicated", u, "NoSchedule") for u in users])


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, dedicated("user1"), SKIP, id="skip-queue-on-untoleratedtaint-node-added"),
        pytest.param(None, dedicated("user2"), Q, id="queue-on-toleratedtaint-node-added"),
        pytest.param(dedicated("user1"), dedicated("user1", "user3"), SKIP, id="skip-unrelated-change"),
        pytest.param(dedicated("user1"), dedicated("user2"), Q, id="queue-on-taint-change"),
        pytest.param(None, node(), Q, id="kubesched: queue-added-node-without-taints"),
    ],
)
def test_taint_toleration_after_node_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert TaintToleration()._after_node_change(DEDICATED_USER2, old, new) == want


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            tol_pod("uid0"), tol_pod("uid1"), tol_pod("uid1", ("foo", "NoSchedule")), SKIP, id="skip-updates-other-pod"
        ),
        pytest.param(
            tol_pod("pod-1"),
            tol_pod("pod-1"),
            tol_pod("pod-1", ("foo", "NoSchedule")),
            Q,
            id="queue-on-toleration-added",
        ),
    ],
)
def test_taint_toleration_after_toleration_change(pod: Any, old: Any, new: Any, want: QueueingHint) -> None:
    assert TaintToleration()._after_toleration_change(pod, old, new) == want


# NodeUnschedulable: TestIsSchedulableAfterNodeChange / TestIsSchedulableAfterPodTolerationChange

NOT_READY = ("node.kubernetes.io/not-ready", "", "NoExecute")


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, node(unschedulable=True), SKIP, id="skip-queue-on-unschedulable-node-added"),
        pytest.param(None, node(), Q, id="queue-on-schedulable-node-added"),
        pytest.param(
            node(unschedulable=True),
            node(unschedulable=True, taints=[NOT_READY]),
            SKIP,
            id="skip-unrelated-change-unschedulable-true",
        ),
        pytest.param(node(), node(taints=[NOT_READY]), SKIP, id="skip-unrelated-change-unschedulable-false"),
        pytest.param(node(unschedulable=True), node(), Q, id="queue-on-unschedulable-field-change"),
        pytest.param(node(), node(unschedulable=True), SKIP, id="kubesched: skip-when-node-is-cordoned"),
    ],
)
def test_node_unschedulable_after_node_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert NodeUnschedulable()._after_node_change(tol_pod("p"), old, new) == want


def test_node_unschedulable_hint_ignores_the_pods_tolerations() -> None:
    """Upstream's node hint reads only spec.unschedulable: an added cordoned node is skipped, tolerated or not."""
    tolerating = tol_pod("p", ("node.kubernetes.io/unschedulable", "NoSchedule"))
    assert NodeUnschedulable()._after_node_change(tolerating, None, node(unschedulable=True)) == SKIP


UNSCHEDULABLE_KEY = "node.kubernetes.io/unschedulable"


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            tol_pod("different-uid"),
            tol_pod("different-uid", (UNSCHEDULABLE_KEY, "")),
            SKIP,
            id="skip-different-pod-update",
        ),
        pytest.param(
            tol_pod("uid"), tol_pod("uid", (UNSCHEDULABLE_KEY, "")), Q, id="queue-when-the-unsched-pod-gets-toleration"
        ),
        pytest.param(
            tol_pod("uid"),
            tol_pod("uid", ("unrelated-key", "")),
            SKIP,
            id="skip-when-the-unsched-pod-gets-unrelated-toleration",
        ),
    ],
)
def test_node_unschedulable_after_toleration_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert NodeUnschedulable()._after_toleration_change(tol_pod("uid"), old, new) == want


# SchedulingGates: Test_isSchedulableAfterPodChange


def gated(name: str, uid: str, gates: list[str]) -> Any:
    return new_pod_info(make_pod(name).uid(uid).scheduling_gates(gates).obj())


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            gated("p", "uid0", ["foo", "bar"]),
            gated("p1", "uid1", ["foo", "bar"]),
            gated("p1", "uid1", ["foo"]),
            SKIP,
            id="skip-queue-on-other-pod-updated",
        ),
        pytest.param(
            gated("p", "p", ["foo"]),
            gated("p", "p", ["foo"]),
            gated("p", "p", []),
            Q,
            id="queue-on-the-unsched-pod-updated",
        ),
    ],
)
def test_scheduling_gates_after_pod_change(pod: Any, old: Any, new: Any, want: QueueingHint) -> None:
    assert SchedulingGates()._after_update(pod, old, new) == want


# InterPodAffinity: Test_isSchedulableAfterPodChange / Test_isSchedulableAfterNodeChange


def ipa_plugin() -> InterPodAffinity:
    return InterPodAffinity(InterPodAffinityArgs(hardPodAffinityWeight=1), Handle())


def labelled(name: str, labels: dict[str, str], node_name: str = "n", anti: str = "") -> Any:
    w = make_pod(name).uid(name).node(node_name).labels(labels)
    if anti:
        w.pod_anti_affinity_exists(anti, "kubernetes.io/hostname")
    return new_pod_info(w.obj())


WANTS_BLUE = new_pod_info(make_pod("p").uid("p").pod_affinity_in("color", "kubernetes.io/hostname", ["blue"]).obj())
AVOIDS_BLUE = new_pod_info(
    make_pod("p").uid("p").pod_anti_affinity_in("color", "kubernetes.io/hostname", ["blue"]).obj()
)


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(WANTS_BLUE, None, labelled("a", {"color": "blue"}), Q, id="add-a-pod-which-matches-the-affinity"),
        pytest.param(WANTS_BLUE, None, labelled("a", {"color": "red"}), SKIP, id="add-an-unmatched-pod"),
        pytest.param(WANTS_BLUE, None, labelled("a", {"color": "blue"}, ""), SKIP, id="add-an-unscheduled-pod"),
        pytest.param(
            WANTS_BLUE,
            labelled("a", {"color": "red"}),
            labelled("a", {"color": "blue"}),
            Q,
            id="update-a-pod-from-unmatch-to-match-affinity",
        ),
        pytest.param(
            AVOIDS_BLUE,
            labelled("a", {"color": "blue"}),
            labelled("a", {"color": "red"}),
            Q,
            id="update-a-pod-from-match-to-unmatch-anti-affinity",
        ),
        pytest.param(
            AVOIDS_BLUE, labelled("a", {"color": "blue"}), None, Q, id="delete-a-pod-which-matches-anti-affinity"
        ),
        pytest.param(AVOIDS_BLUE, labelled("a", {"color": "red"}), None, SKIP, id="delete-an-unmatched-pod"),
        pytest.param(
            new_pod_info(make_pod("p").uid("p").label("app", "web").obj()),
            labelled("a", {}, anti="app"),
            None,
            SKIP,
            id="delete-a-pod-whose-own-anti-affinity-hit-the-target-is-not-considered",
        ),
    ],
)
def test_inter_pod_affinity_after_pod_change(pod: Any, old: Any, new: Any, want: QueueingHint) -> None:
    assert ipa_plugin()._after_pod_change(pod, old, new) == want


HOST = {"kubernetes.io/hostname": "n"}


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(WANTS_BLUE, None, node(labels=HOST), Q, id="add-a-node-with-the-affinity-topology-key"),
        pytest.param(WANTS_BLUE, None, node(), SKIP, id="add-a-node-without-the-topology-key"),
        pytest.param(AVOIDS_BLUE, None, node(labels=HOST), Q, id="add-a-node-with-the-anti-affinity-topology-key"),
        pytest.param(WANTS_BLUE, node(), node(labels=HOST), Q, id="update-node-gains-the-affinity-topology-key"),
        pytest.param(
            AVOIDS_BLUE,
            node(labels=HOST),
            node(labels={"kubernetes.io/hostname": "m"}),
            Q,
            id="update-node-changes-the-anti-affinity-topology-value",
        ),
        pytest.param(AVOIDS_BLUE, node(labels=HOST), node(labels={**HOST, "x": "y"}), SKIP, id="unrelated-label"),
    ],
)
def test_inter_pod_affinity_after_node_change(pod: Any, old: Any, new: Any, want: QueueingHint) -> None:
    assert ipa_plugin()._after_node(pod, old, new) == want


# PodTopologySpread: Test_isSchedulableAfterPodChange / Test_isSchedulableAfterNodeChange


def spread_pod(honor: bool = False, tolerations: int = 0) -> Any:
    w = make_pod("p").uid("p").label("foo", "")
    sel = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
    w.spread_constraint(1, "zone", "DoNotSchedule", sel, node_taints_policy="Honor" if honor else None)
    for i in range(tolerations):
        w.toleration(key=f"t{i}", operator="Exists")
    return new_pod_info(w.obj())


def pts_plugin() -> Any:
    return PodTopologySpread(PodTopologySpreadArgs(defaultingType="List"), Handle())


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(spread_pod(), None, labelled("a", {"foo": ""}), Q, id="add-pod-with-matching-labels"),
        pytest.param(spread_pod(), None, labelled("a", {"bar": ""}), SKIP, id="add-pod-with-unmatched-labels"),
        pytest.param(spread_pod(), None, labelled("a", {"foo": ""}, ""), SKIP, id="add-unscheduled-pod"),
        pytest.param(spread_pod(), labelled("a", {"foo": ""}), None, Q, id="delete-matching-pod"),
        pytest.param(
            spread_pod(), labelled("a", {"foo": ""}), labelled("a", {"bar": ""}), Q, id="update-pod-label-unmatched"
        ),
        pytest.param(
            spread_pod(), labelled("a", {"foo": ""}), labelled("a", {"foo": "x"}), SKIP, id="update-keeps-the-match"
        ),
        pytest.param(
            spread_pod(honor=True),
            spread_pod(honor=True),
            spread_pod(honor=True, tolerations=1),
            Q,
            id="the-pod-itself-gets-a-toleration-under-honor",
        ),
        pytest.param(
            spread_pod(), spread_pod(), spread_pod(tolerations=1), SKIP, id="the-pod-gets-a-toleration-under-ignore"
        ),
    ],
)
def test_topology_spread_after_pod_change(pod: Any, old: Any, new: Any, want: QueueingHint) -> None:
    assert pts_plugin()._after_pod_change(pod, old, new) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, node(labels={"zone": "a"}), Q, id="add-node-with-the-topology-key"),
        pytest.param(None, node(), SKIP, id="add-node-without-the-topology-key"),
        pytest.param(
            node(labels={"zone": "a"}), node(labels={"zone": "a", "x": "y"}), Q, id="update-node-with-the-key"
        ),
        pytest.param(node(labels={"zone": "a"}), None, Q, id="delete-node-with-the-key"),
        pytest.param(node(), None, SKIP, id="delete-node-without-the-key"),
    ],
)
def test_topology_spread_after_node_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert pts_plugin()._after_node_change(spread_pod(), old, new) == want
