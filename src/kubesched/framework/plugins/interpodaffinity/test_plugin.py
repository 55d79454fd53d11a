"""Cases from interpodaffinity/filtering_test.go and scoring_test.go (TestRequiredAffinitySingleNode et al.)."""

import pytest

from kubesched.config.defaults import default_args
from kubesched.config.types import InterPodAffinityArgs
from kubesched.framework.plugins.interpodaffinity.plugin import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    new,
)
from kubesched.framework.status import Code, Status
from kubesched_testing.framework import build_snapshot, filter_statuses, lister_with, new_plugin, score_nodes
from kubesched_testing.wrappers import make_node, make_pod

AFFINITY = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
ANTI = Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
EXISTING_ANTI = Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
NODE1 = make_node("node1").label("region", "r1").label("zone", "z11").label("hostname", "h1").obj()

CASES = [
    pytest.param(
        make_pod("p").obj(),
        [],
        None,
        id="A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
    ),
    pytest.param(
        make_pod("p").pod_affinity_in("service", "region", ["securityscan", "value2"]).obj(),
        [make_pod("e").node("node1").label("service", "securityscan").obj()],
        None,
        id="satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that "
        "matches the existing pod",
    ),
    pytest.param(
        make_pod("p")
        .pod_affinity_in("service", "region", ["securityscan", "value2"], namespaces=["DiffNameSpace"])
        .obj(),
        [make_pod("e", "ns").node("node1").label("service", "securityscan").obj()],
        AFFINITY,
        id="Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
    ),
    pytest.param(
        make_pod("p").pod_affinity_in("service", "region", ["antivirusscan", "value2"]).obj(),
        [make_pod("e").node("node1").label("service", "securityscan").obj()],
        AFFINITY,
        id="Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
    ),
    pytest.param(
        make_pod("p").pod_anti_affinity_in("service", "zone", ["securityscan", "value2"]).obj(),
        [make_pod("e").node("node1").label("service", "securityscan").obj()],
        ANTI,
        id="Doesn't satisfy the PodAntiAffinity because of the existing pod that matches the anti-affinity",
    ),
    pytest.param(
        make_pod("p").label("service", "securityscan").obj(),
        [
            make_pod("e")
            .node("node1")
            .label("service", "securityscan")
            .pod_anti_affinity_in("service", "zone", ["securityscan"])
            .obj()
        ],
        EXISTING_ANTI,
        id="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        make_pod("p").label("foo", "bar").pod_affinity_in("foo", "region", ["bar"]).obj(),
        [],
        None,
        id="verify that PodAffinity is satisfied for a pod that matches its own labels when no other pod matches",
    ),
    pytest.param(
        make_pod("p").label("foo", "bar").pod_affinity_in("foo", "rack", ["bar"]).obj(),
        [],
        AFFINITY,
        id="kubesched: a self-matching pod still needs every topology key on the node",
    ),
    pytest.param(
        make_pod("p").pod_affinity_in("service", "region", ["securityscan"], namespaceSelector={}).obj(),
        [make_pod("e", "other").node("node1").label("service", "securityscan").obj()],
        None,
        id="kubesched: an empty namespaceSelector matches pods in every namespace",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "want"), CASES)
def test_required_affinity_single_node(pod, existing, want):
    snap = build_snapshot([NODE1], existing)
    plugin = new_plugin(new, default_args("InterPodAffinity", InterPodAffinityArgs()), snap, lister_with())
    assert filter_statuses(plugin, pod, snap, batch=False) == [want]


def test_pre_filter_skips_without_affinity():
    snap = build_snapshot([NODE1], [make_pod("e").node("node1").obj()])
    plugin = new_plugin(new, default_args("InterPodAffinity", InterPodAffinityArgs()), snap, lister_with())
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.types import new_pod_info

    _, status = plugin.pre_filter(CycleState(), new_pod_info(make_pod("p").obj()), snap.node_info_list)
    assert status is not None and status.code == Code.SKIP


def test_preferred_affinity_scores():
    """Preferred affinity (weight 5, region) toward pods on machine1: machine1 and machine2 (same region) win."""
    nodes = [
        make_node("machine1").label("region", "China").obj(),
        make_node("machine2").label("region", "China").obj(),
        make_node("machine3").label("region", "India").obj(),
    ]
    existing = [make_pod("e1").node("machine1").label("security", "S1").obj()]
    pod = make_pod("p").preferred_pod_affinity_in(5, "security", "region", ["S1"]).obj()
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, default_args("InterPodAffinity", InterPodAffinityArgs()), snap, lister_with())
    assert score_nodes(plugin, pod, snap) == ([100, 100, 0], None)


def test_hard_pod_affinity_symmetric_weight():
    """An existing pod's required affinity to the incoming pod adds hardPodAffinityWeight on its topology."""
    nodes = [make_node("machine1").label("region", "China").obj(), make_node("machine2").label("region", "India").obj()]
    existing = [make_pod("e1").node("machine1").pod_affinity_in("app", "region", ["web"]).obj()]
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, default_args("InterPodAffinity", InterPodAffinityArgs()), snap, lister_with())
    assert score_nodes(plugin, make_pod("p").label("app", "web").obj(), snap) == ([100, 0], None)
    zero = new_plugin(
        new, default_args("InterPodAffinity", InterPodAffinityArgs(hardPodAffinityWeight=0)), snap, lister_with()
    )
    _, status = score_nodes(zero, make_pod("p").label("app", "web").obj(), snap)
    assert status is not None and status.code == Code.SKIP


@pytest.mark.parametrize("ignore", [False, True])
def test_existing_preferred_terms_count_for_a_pod_with_its_own_even_when_ignored(ignore):
    """ignorePreferredTermsOfExistingPods only skips pods without preferred terms; with them (parity configs seed 29)
    an existing pod's preferred anti-affinity still weighs: zone a gets +10 - 100, zone b nothing."""
    nodes = [make_node("node1").label("zone", "a").obj(), make_node("node2").label("zone", "b").obj()]
    existing = [make_pod("e1").node("node1").label("app", "db").obj()]
    existing[0]["spec"]["affinity"] = {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"},
                }
            ]
        }
    }
    pod = make_pod("p").label("app", "web").preferred_pod_affinity_in(10, "app", "zone", ["db"]).obj()
    snap = build_snapshot(nodes, existing)
    args = default_args("InterPodAffinity", InterPodAffinityArgs(ignorePreferredTermsOfExistingPods=ignore))
    assert score_nodes(new_plugin(new, args, snap, lister_with()), pod, snap) == ([0, 100], None)
    without_terms = make_pod("q").label("app", "web").obj()
    _, status = score_nodes(new_plugin(new, args, snap, lister_with()), without_terms, snap)
    assert (status is not None and status.code == Code.SKIP) == ignore
