"""Cases from nodedeclaredfeatures_test.go and component-helpers/nodedeclaredfeatures (v1.36); names unchanged.

Upstream's "plugin disabled" cases are left out: the gate is on in v1.36 and kubesched has no
switch for it. "Infer returns error" (a nil version) has no counterpart either.
"""

import pytest

from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState, StateNotFound
from kubesched.framework.interface import QueueingHint
from kubesched.framework.node_info import parse_node
from kubesched.framework.plugins.nodedeclaredfeatures.features import (
    ALL_FEATURES,
    DEFAULT_REGISTRY,
    Feature,
    FeatureRegistry,
)
from kubesched.framework.plugins.nodedeclaredfeatures.node_declared_features import (
    ERR_REASON_UNSATISFIED_REQUIREMENTS,
    PRE_FILTER_STATE_KEY,
    NodeDeclaredFeatures,
    _PreFilterState,
    new,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import new_pod_info
from kubesched_testing.framework import build_snapshot, filter_statuses, new_plugin
from kubesched_testing.wrappers import make_node, make_pod

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
UNSATISFIED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)
RESTART_ALL = "RestartAllContainersOnContainerExits"
USERNS_HOSTNET = "UserNamespacesHostNetworkSupport"


def mock(name, infer, max_version=None):
    return Feature(name, lambda spec: infer, max_version)


def node_with(name, features=None):
    obj = make_node(name).obj()
    if features is not None:
        obj["status"]["declaredFeatures"] = list(features)
    return obj


def pod_info(obj=None):
    return new_pod_info(obj if obj is not None else make_pod("test-pod").uid("123").obj())


# TestPreFilter


@pytest.mark.parametrize(
    ("features", "version", "want_status", "want_reqs"),
    [
        pytest.param(
            [mock("TestFeature1", True), mock("TestFeature2", False)],
            (1, 35, 0),
            None,
            {"TestFeature1"},
            id="Pod with feature requirements",
        ),
        pytest.param(
            [mock("TestFeature1", True, (1, 38, 0)), mock("TestFeature2", True, (1, 38, 0))],
            (1, 35, 0),
            None,
            {"TestFeature1", "TestFeature2"},
            id="Pod with multiple feature requirements",
        ),
        pytest.param(
            [mock("TestFeature1", False), mock("TestFeature2", False)],
            (1, 35, 0),
            Status(Code.SKIP),
            None,
            id="Pod with no requirements",
        ),
        pytest.param(
            [mock("TestFeature1", True, (1, 33, 0)), mock("TestFeature2", False)],
            (1, 34, 0),
            Status(Code.SKIP),
            None,
            id="Feature not required, version > MaxVersion",
        ),
    ],
)
def test_pre_filter(features, version, want_status, want_reqs):
    plugin = NodeDeclaredFeatures(FeatureRegistry(features), version)
    state = CycleState()
    result, status = plugin.pre_filter(state, pod_info(), [])
    assert result is None
    assert status == want_status
    if want_reqs is None:
        with pytest.raises(StateNotFound):
            state.read(PRE_FILTER_STATE_KEY)
    else:
        assert state.read(PRE_FILTER_STATE_KEY).reqs == want_reqs


# TestFilter: a registry of FeatureA, FeatureB, FeatureC and requirements written as PreFilter would.


@pytest.mark.parametrize(
    ("declared", "reqs", "want"),
    [
        pytest.param(["FeatureA", "FeatureB"], ["FeatureA"], None, id="Node matches requirements"),
        pytest.param(["FeatureB"], ["FeatureA"], UNSATISFIED, id="Node does not match requirements"),
        pytest.param(
            ["FeatureA", "FeatureB", "FeatureC"],
            ["FeatureA", "FeatureC"],
            None,
            id="Node with multiple features, pod requires subset",
        ),
        pytest.param(None, ["FeatureA"], UNSATISFIED, id="Node has no declared features"),
        pytest.param(
            ["FeatureA"], ["FeatureA", "FeatureB"], UNSATISFIED, id="Node with some but not all required features"
        ),
        pytest.param(
            ["FeatureB", "FeatureA"],
            ["FeatureA"],
            UNSATISFIED,
            id="kubesched: an unsorted list is read as upstream reads it, in one merged pass",
        ),
        pytest.param(["Feature0", "FeatureA", "FeatureZ"], ["FeatureA"], None, id="kubesched: unknown names ignored"),
    ],
)
def test_filter(declared, reqs, want, batch):
    registry = FeatureRegistry([mock("FeatureA", False), mock("FeatureB", False), mock("FeatureC", False)])
    plugin = NodeDeclaredFeatures(registry, (1, 35, 0))
    snap = build_snapshot([node_with("node-1", declared)])
    state = CycleState()
    state.write(PRE_FILTER_STATE_KEY, _PreFilterState(frozenset(reqs)))
    pod = pod_info()
    if batch:
        ok = plugin.filter_batch(state, pod, snap.table, slice(0, snap.table.n))
        assert list(ok) == [want is None]
    assert plugin.filter(state, pod, snap.node_info_list[0]) == want


def test_filter_without_pre_filter_state_is_an_error():
    """Error getting pre-filter state."""
    snap = build_snapshot([node_with("node-1")])
    with pytest.raises(RuntimeError, match=PRE_FILTER_STATE_KEY):
        NodeDeclaredFeatures().filter(CycleState(), pod_info(), snap.node_info_list[0])


# TestEnqueueExtensionsNodeUpdate / TestEnqueueExtensionsPodUpdate


def test_events_to_register():
    plugin = NodeDeclaredFeatures()
    got = {(e.event.resource, e.event.action_type) for e in plugin.events_to_register()}
    assert got == {(events.NODE, events.ADD | events.UPDATE_NODE_DECLARED_FEATURE), (events.POD, events.UPDATE)}


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, node_with("node-1", ["FeatureA"]), Q, id="Node Add with feature"),
        pytest.param(node_with("node-1"), node_with("node-1", ["FeatureA"]), Q, id="Node Update (Features Added)"),
        pytest.param(
            node_with("node-1", ["FeatureA"]),
            node_with("node-1", ["FeatureA"]),
            SKIP,
            id="Node Update (Features Unchanged)",
        ),
        pytest.param(None, node_with("node-1"), Q, id="kubesched: any added node queues, declared features or not"),
        pytest.param(
            node_with("node-1", ["FeatureA", "FeatureB"]),
            node_with("node-1", ["FeatureA"]),
            Q,
            id="kubesched: a removed feature queues too",
        ),
    ],
)
def test_after_node_change(old, new, want):
    plugin = NodeDeclaredFeatures(FeatureRegistry([]), (1, 35, 0))
    parsed_old = parse_node(old) if old is not None else None
    assert plugin._after_node_change(pod_info(), parsed_old, parse_node(new)) == want


class _Sequence:
    """An inference answering from a list, one answer per call, as upstream's mock counts its calls."""

    def __init__(self, answers):
        self.answers = list(answers)

    def __call__(self, spec):
        return self.answers.pop(0)


TARGET = make_pod("test-pod").uid("123").obj()
LABELLED = make_pod("test-pod").uid("123").label("foo", "bar").obj()
OTHER = make_pod("another-test-pod").uid("456").obj()
OTHER_LABELLED = make_pod("another-test-pod").uid("456").label("foo", "bar").obj()


@pytest.mark.parametrize(
    ("old", "new", "answers", "want"),
    [
        pytest.param(TARGET, LABELLED, [False, True], Q, id="Pod Update adds requirement"),
        pytest.param(LABELLED, TARGET, [True, False], Q, id="Pod Update removes requirement"),
        pytest.param(TARGET, TARGET, [False, False], SKIP, id="Pod Update with no change in requirements"),
        pytest.param(OTHER_LABELLED, OTHER, [False, False], SKIP, id="Updated pod not the same as target pod"),
    ],
)
def test_after_pod_update(old, new, answers, want):
    registry = FeatureRegistry([Feature("TestFeature", _Sequence(answers))])
    plugin = NodeDeclaredFeatures(registry, (1, 35, 0))
    assert plugin._after_pod_update(pod_info(TARGET), pod_info(old), pod_info(new)) == want


# The registered features (component-helpers nodedeclaredfeatures/features)


def restart_all_container(name="container"):
    return {
        "name": name,
        "image": "image",
        "restartPolicy": "Never",
        "restartPolicyRules": [
            {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [1]}},
        ],
    }


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param(
            {"initContainers": [restart_all_container()], "containers": [{"name": "name", "image": "image"}]},
            {RESTART_ALL},
            id="init container with rules",
        ),
        pytest.param(
            {"initContainers": [{"name": "name", "image": "image"}], "containers": [restart_all_container()]},
            {RESTART_ALL},
            id="regular container with rules",
        ),
        pytest.param(
            {
                "initContainers": [{"name": "name", "image": "image"}],
                "containers": [{"name": "name2", "image": "image"}],
            },
            set(),
            id="no rules",
        ),
        pytest.param(
            {
                "containers": [
                    {
                        "name": "c",
                        "image": "image",
                        "restartPolicy": "Never",
                        "restartPolicyRules": [{"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}],
                    }
                ]
            },
            set(),
            id="kubesched: a Restart rule needs nothing",
        ),
        pytest.param(
            {"hostNetwork": True, "hostUsers": False}, {USERNS_HOSTNET}, id="kubesched: hostNetwork, no host users"
        ),
        pytest.param({"hostNetwork": True}, set(), id="kubesched: hostNetwork, hostUsers unset"),
        pytest.param({"hostNetwork": True, "hostUsers": True}, set(), id="kubesched: hostNetwork with host users"),
        pytest.param({"hostUsers": False}, set(), id="kubesched: user namespace without hostNetwork"),
        pytest.param(
            {"hostNetwork": True, "hostUsers": False, "containers": [restart_all_container()]},
            {RESTART_ALL, USERNS_HOSTNET},
            id="kubesched: both",
        ),
    ],
)
def test_infer_for_pod_scheduling_default_registry(spec, want):
    assert DEFAULT_REGISTRY.infer_for_pod_scheduling(spec, (1, 36, 3)) == want


def test_default_registry_names_sorted():
    assert DEFAULT_REGISTRY.names == (
        "ExtendWebSocketsToKubelet",
        "InPlacePodLevelResourcesVerticalScaling",
        "InPlacePodVerticalScalingInitContainers",
        RESTART_ALL,
        USERNS_HOSTNET,
    )
    assert len(ALL_FEATURES) == 5


@pytest.mark.parametrize(
    ("max_version", "target", "want"),
    [
        pytest.param(None, (1, 30, 0), {"PodLevelResources"}, id="pod with feature, inferred during scheduling"),
        pytest.param((1, 30, 0), (1, 31, 0), set(), id="feature universally available, not inferred during create"),
        pytest.param((1, 30, 0), (1, 40, 0), set(), id="exceeds max version"),
        pytest.param((1, 30, 0), (1, 30, 0), {"PodLevelResources"}, id="kubesched: max version is inclusive"),
    ],
)
def test_infer_for_pod_scheduling_versions(max_version, target, want):
    registry = FeatureRegistry(
        [Feature("PodLevelResources", lambda spec: spec.get("resources") is not None, max_version)]
    )
    assert registry.infer_for_pod_scheduling({"resources": {"requests": {"cpu": "500m"}}}, target) == want
    assert registry.infer_for_pod_scheduling({}, target) == set()


@pytest.mark.parametrize(
    ("declared", "want"),
    [
        pytest.param((), set(), id="Empty input"),
        pytest.param(("a",), {"a"}, id="Single valid feature"),
        pytest.param(("a", "c"), {"a", "c"}, id="Multiple valid features"),
        pytest.param(("a", "b", "c", "d"), {"a", "b", "c", "d"}, id="All features"),
        pytest.param(("0", "a"), {"a"}, id="Unknown feature (start)"),
        pytest.param(("a", "ab", "b"), {"a", "b"}, id="Unknown feature (middle)"),
        pytest.param(("d", "e"), {"d"}, id="Unknown feature (end)"),
    ],
)
def test_node_features_try_map(declared, want):
    registry = FeatureRegistry([mock(n, False) for n in ("a", "b", "c", "d")])
    assert registry.node_features(declared) == want


# Through the plugin factory and the default registry


def test_default_plugin_filters_by_declared_features(batch):
    snap = build_snapshot(
        [
            node_with("plain"),
            node_with("restart", [RESTART_ALL]),
            node_with("both", ["Other", RESTART_ALL, USERNS_HOSTNET]),
        ]
    )
    plugin = new_plugin(new, None, snap)
    needs_restart = make_pod("p").obj()
    needs_restart["spec"]["containers"] = [restart_all_container()]
    needs_both = make_pod("q").obj()
    needs_both["spec"].update(hostNetwork=True, hostUsers=False, containers=[restart_all_container()])
    assert filter_statuses(plugin, make_pod("r").obj(), snap, batch=batch) == [None, None, None]
    assert filter_statuses(plugin, needs_restart, snap, batch=batch) == [UNSATISFIED, None, None]
    assert filter_statuses(plugin, needs_both, snap, batch=batch) == [UNSATISFIED, UNSATISFIED, None]
