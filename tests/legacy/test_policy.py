"""Policy translation: upstream's TestCompatibility_v1_Scheduler and TestAlgorithmProviderCompatibility
(kube-scheduler 1.20/1.21, DefaultPodTopologySpread on), plus validation and errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.legacy import policies as P

from kubesched.config.legacy import COMPANION_POINTS, load_algorithm_provider, load_policy, parse_feature_gates
from kubesched.config.load import ConfigError, SchedulerConfig
from kubesched.config.names import EXTENSION_POINTS
from kubesched.config.types import NodeLabelArgs, PodTopologySpreadArgs, ServiceAffinityArgs
from kubesched.framework.interface import Handle, PreEnqueuePlugin, PreFilterPlugin, PreScorePlugin
from kubesched.framework.plugins.registry import new_in_tree_registry
from kubesched.framework.runtime.framework import Framework
from kubesched_testing.framework import lister_with

BASE = {"queueSort": ["PrioritySort"], "postFilter": ["DefaultPreemption"], "bind": ["DefaultBinder"]}
W = tuple[str, int]


def plugins_of(config: SchedulerConfig) -> dict[str, list[Any]]:
    """The profile's plugins per point, without the points added for today's plugins (COMPANION_POINTS)."""
    companions = {(point, name) for (_, name), point in COMPANION_POINTS.items()}
    plugins = config.raw.profiles[0].plugins
    assert plugins is not None
    out: dict[str, list[Any]] = {}
    for point in EXTENSION_POINTS:
        got = [
            (p.name, p.weight) if point == "score" else p.name
            for p in getattr(plugins, point).enabled
            if (point, p.name) not in companions and point != "preEnqueue"
        ]
        if got:
            out[point] = got
    return out


FIT, PORTS, AFF, NAME = "NodeResourcesFit", "NodePorts", "NodeAffinity", "NodeName"
PRE_1_4 = [PORTS, AFF, FIT, "ServiceAffinity", "InterPodAffinity"]
FILTER_1_4 = [
    "NodeUnschedulable", NAME, PORTS, AFF, FIT, "VolumeRestrictions", "TaintToleration", "NodeLabel",
    "ServiceAffinity", "EBSLimits", "GCEPDLimits", "AzureDiskLimits", "VolumeZone", "InterPodAffinity",
]  # fmt: skip
PRESCORE_1_4 = ["InterPodAffinity", AFF, "PodTopologySpread", "TaintToleration"]
SCORE_1_4: list[W] = [
    ("NodeResourcesBalancedAllocation", 2), ("ImageLocality", 2), ("InterPodAffinity", 2),
    ("NodeResourcesLeastAllocated", 2), ("NodeResourcesMostAllocated", 2), (AFF, 2), ("NodePreferAvoidPods", 2),
    ("PodTopologySpread", 2), ("TaintToleration", 2),
]  # fmt: skip
WITH_1_4: dict[str, list[Any]] = {
    "preFilter": PRE_1_4,
    "filter": FILTER_1_4,
    "preScore": PRESCORE_1_4,
    "score": SCORE_1_4,
}


def _insert(items: list[Any], after: Any, new: Any) -> list[Any]:
    i = items.index(after) + 1
    return [*items[:i], new, *items[i:]]


VB: dict[str, list[Any]] = {"reserve": ["VolumeBinding"], "preBind": ["VolumeBinding"]}
PRE_1_10 = _insert(PRE_1_4, "ServiceAffinity", "VolumeBinding")
FILTER_1_10 = _insert(FILTER_1_4, "AzureDiskLimits", "VolumeBinding")
FILTER_1_12 = _insert(FILTER_1_10, "GCEPDLimits", "NodeVolumeLimits")
SCORE_1_12 = _insert(SCORE_1_4, ("NodePreferAvoidPods", 2), ("RequestedToCapacityRatio", 2))

CASES: list[tuple[str, str, dict[str, list[Any]]]] = [
    (
        "GeneralPredicate",
        '{"kind": "Policy", "apiVersion": "v1", "predicates": [{"name": "GeneralPredicates"}], "priorities": []}',
        {"preFilter": [FIT, PORTS, AFF], "filter": ["NodeUnschedulable", FIT, NAME, PORTS, AFF, "TaintToleration"]},
    ),
    (
        "MandatoryFilters",
        '{"kind": "Policy", "apiVersion": "v1", "predicates": [], "priorities": []}',
        {"filter": ["NodeUnschedulable", "TaintToleration"]},
    ),
    (
        "1.0",
        P.V1_0,
        {
            "preFilter": [PORTS, AFF, FIT, "ServiceAffinity"],
            "filter": ["NodeUnschedulable", PORTS, AFF, FIT, "VolumeRestrictions", "TaintToleration", "NodeLabel",
                       "ServiceAffinity"],
            "preScore": ["PodTopologySpread"],
            "score": [("NodeResourcesLeastAllocated", 1), ("NodeLabel", 4), ("PodTopologySpread", 2),
                      ("ServiceAffinity", 3)],
        },
    ),
    (
        "1.1",
        P.V1_1,
        {
            "preFilter": [PORTS, AFF, FIT, "ServiceAffinity"],
            "filter": ["NodeUnschedulable", NAME, PORTS, AFF, FIT, "VolumeRestrictions", "TaintToleration",
                       "NodeLabel", "ServiceAffinity"],
            "preScore": ["PodTopologySpread"],
            # NodeLabel: 4 x two LabelPreference priorities; ServiceAffinity: 3 x two ServiceAntiAffinity.
            "score": [("NodeResourcesBalancedAllocation", 2), ("NodeResourcesLeastAllocated", 2), ("NodeLabel", 8),
                      ("PodTopologySpread", 2), ("ServiceAffinity", 6)],
        },
    ),
    (
        "1.2",
        P.V1_2,
        {
            "preFilter": [PORTS, AFF, FIT, "ServiceAffinity"],
            "filter": ["NodeUnschedulable", NAME, PORTS, AFF, FIT, "VolumeRestrictions", "TaintToleration",
                       "NodeLabel", "ServiceAffinity", "EBSLimits", "GCEPDLimits", "AzureDiskLimits", "VolumeZone"],
            "preScore": [AFF, "PodTopologySpread"],
            "score": [("NodeResourcesBalancedAllocation", 2), ("ImageLocality", 2),
                      ("NodeResourcesLeastAllocated", 2), (AFF, 2), ("NodeLabel", 4), ("PodTopologySpread", 2),
                      ("ServiceAffinity", 3)],
        },
    ),
    ("1.4", P.V1_4, WITH_1_4),
    ("1.7", P.V1_7, WITH_1_4),
    ("1.10", P.V1_10, {**WITH_1_4, "preFilter": PRE_1_10, "filter": FILTER_1_10, **VB}),
    ("1.12", P.V1_12, {**WITH_1_4, "preFilter": PRE_1_10, "filter": FILTER_1_12, "score": SCORE_1_12, **VB}),
    (
        "1.16",
        P.V1_16,
        {**WITH_1_4, "preFilter": PRE_1_10, "filter": _insert(FILTER_1_12, "AzureDiskLimits", "CinderLimits"),
         "score": SCORE_1_12, **VB},
    ),
]  # fmt: skip


@pytest.mark.parametrize(("name", "doc", "want"), CASES, ids=[c[0] for c in CASES])
def test_compatibility_v1_scheduler(name: str, doc: str, want: dict[str, list[Any]]) -> None:
    config = load_policy(json.loads(doc)).config
    assert plugins_of(config) == {**{k: list(v) for k, v in BASE.items()}, **want}
    assert config.raw.profiles[0].schedulerName == "default-scheduler"


def test_extenders_of_1_7_decode_case_insensitively() -> None:
    ext = load_policy(json.loads(P.V1_7)).config.raw.extenders
    assert len(ext) == 1
    e = ext[0]
    assert (e.urlPrefix, e.filterVerb, e.prioritizeVerb, e.weight, e.bindVerb) == (
        "/prefix",
        "filter",
        "prioritize",
        1,
        "bind",
    )
    assert e.enableHTTPS and e.tlsConfig is not None and e.tlsConfig.insecure and e.nodeCacheCapable
    assert e.httpTimeout == "1ns"  # Go's time.Duration is nanoseconds


def test_extenders_of_1_10_keep_managed_resources_and_ignorable() -> None:
    [e] = load_policy(json.loads(P.V1_10)).config.raw.extenders
    assert [(r.name, r.ignoredByScheduler) for r in e.managedResources] == [("example.com/foo", True)]
    assert e.ignorable


def test_custom_arguments_become_plugin_args() -> None:
    args = load_policy(json.loads(P.V1_16)).config.profile_args[0]
    assert args["NodeLabel"] == NodeLabelArgs(presentLabels=["foo"])
    assert args["ServiceAffinity"] == ServiceAffinityArgs(affinityLabels=["region"])
    rtcr = args["RequestedToCapacityRatio"]
    assert [(p.utilization, p.score) for p in rtcr.shape] == [(0, 0), (50, 7)]
    assert [(r.name, r.weight) for r in rtcr.resources] == [("intel.com/foo", 3), ("intel.com/bar", 5)]
    assert args["PodTopologySpread"] == PodTopologySpreadArgs(defaultingType="System")
    assert args["VolumeBinding"].bindTimeoutSeconds == 600  # defaulted, as defaultPluginConfigArgs did


def test_nil_predicates_and_priorities_take_the_defaults() -> None:
    got = plugins_of(load_policy({"kind": "Policy", "apiVersion": "v1"}).config)
    assert got["score"] == [
        ("NodeResourcesBalancedAllocation", 1), ("PodTopologySpread", 2), ("ImageLocality", 1),
        ("InterPodAffinity", 1), ("NodeResourcesLeastAllocated", 1), (AFF, 1), ("NodePreferAvoidPods", 10000),
        ("TaintToleration", 1),
    ]  # fmt: skip
    assert "VolumeBinding" in got["filter"] and "PodTopologySpread" in got["filter"]


def test_default_pod_topology_spread_off_uses_selector_spread() -> None:
    gates = parse_feature_gates("DefaultPodTopologySpread=false")
    got = plugins_of(load_policy(json.loads(P.V1_0), gates=gates).config)
    assert got["preScore"] == ["SelectorSpread"]
    assert ("SelectorSpread", 2) in got["score"] and all(n != "PodTopologySpread" for n, _ in got["score"])


def test_even_pods_spread_alone_lists_its_own_constraints() -> None:
    doc = {"kind": "Policy", "priorities": [{"name": "EvenPodsSpreadPriority", "weight": 2}]}
    args = load_policy(doc).config.profile_args[0]
    assert args["PodTopologySpread"] == PodTopologySpreadArgs(defaultingType="List")


def test_hard_pod_affinity_symmetric_weight_configures_inter_pod_affinity() -> None:
    doc = {"priorities": [{"name": "InterPodAffinityPriority", "weight": 1}], "hardPodAffinitySymmetricWeight": 10}
    assert load_policy(doc).config.profile_args[0]["InterPodAffinity"].hardPodAffinityWeight == 10


DEFAULT_PROVIDER: dict[str, list[Any]] = {
    "queueSort": ["PrioritySort"],
    "preFilter": [FIT, PORTS, "PodTopologySpread", "InterPodAffinity", "VolumeBinding", AFF],
    "filter": ["NodeUnschedulable", NAME, "TaintToleration", AFF, PORTS, FIT, "VolumeRestrictions", "EBSLimits",
               "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding", "VolumeZone",
               "PodTopologySpread", "InterPodAffinity"],
    "postFilter": ["DefaultPreemption"],
    "preScore": ["InterPodAffinity", "PodTopologySpread", "TaintToleration", AFF],
    "score": [("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("InterPodAffinity", 1),
              ("NodeResourcesLeastAllocated", 1), (AFF, 1), ("NodePreferAvoidPods", 10000), ("PodTopologySpread", 2),
              ("TaintToleration", 1)],
    "reserve": ["VolumeBinding"],
    "preBind": ["VolumeBinding"],
    "bind": ["DefaultBinder"],
}  # fmt: skip


def test_algorithm_provider_compatibility() -> None:
    assert plugins_of(load_algorithm_provider("DefaultProvider").config) == DEFAULT_PROVIDER
    ca = plugins_of(load_algorithm_provider("ClusterAutoscalerProvider").config)
    assert ca["score"] == [
        ("NodeResourcesMostAllocated", 1) if n == "NodeResourcesLeastAllocated" else (n, w)
        for n, w in DEFAULT_PROVIDER["score"]
    ]
    off = plugins_of(load_algorithm_provider("DefaultProvider", gates={"DefaultPodTopologySpread": False}).config)
    assert off["preScore"][-1] == "SelectorSpread" and off["score"][-1] == ("SelectorSpread", 1)


@pytest.mark.parametrize(
    "config",
    [
        load_policy(json.loads(P.V1_16)).config,
        load_algorithm_provider("DefaultProvider").config,
        load_algorithm_provider("DefaultProvider", gates={"DefaultPodTopologySpread": False}).config,
    ],
    ids=["policy 1.16", "DefaultProvider", "DefaultProvider, SelectorSpread"],
)
def test_translated_profiles_build_with_every_point_their_plugins_need(config: SchedulerConfig) -> None:
    """Today's plugins read state their PreFilter/PreScore writes: the translation must enable those too."""
    fwk = Framework(
        new_in_tree_registry(), config.raw.profiles[0], config.profile_args[0], Handle(lister=lister_with())
    )
    for point, companion, kind in (
        ("filter_plugins", "pre_filter_plugins", PreFilterPlugin),
        ("score_plugins", "pre_score_plugins", PreScorePlugin),
        ("post_filter_plugins", "pre_enqueue_plugins", PreEnqueuePlugin),
    ):
        needed = {p.name for p in getattr(fwk, point) if isinstance(p, kind)}
        assert needed <= {p.name for p in getattr(fwk, companion)}, point
    assert fwk.pre_enqueue_plugins[0].name == "SchedulingGates"


RTCR_0 = {"requestedToCapacityRatioArguments": {"shape": [{"utilization": 0, "score": 0}]}}
RTCR_11 = {"requestedToCapacityRatioArguments": {"shape": [{"utilization": 0, "score": 11}]}}
TWO_ARGS = {"serviceAffinity": {"labels": ["a"]}, "labelsPresence": {"labels": ["b"]}}
POSITIVE = "should have a positive weight applied to it or it has overflown"

ERRORS = [
    (
        {"predicates": [{"name": "CheckNodeMemoryPressure"}]},
        'predicates[0].name: predicate type not found for "CheckNodeMemoryPressure"',
    ),
    (
        {"priorities": [{"name": "ResourceLimitsPriority", "weight": 1}]},
        'priorities[0].name: priority type not found for "ResourceLimitsPriority"',
    ),
    (
        {"priorities": [{"name": "ImageLocalityPriority"}]},
        f"priorities[0].weight: priority ImageLocalityPriority {POSITIVE}",
    ),
    (
        {"priorities": [
            {"name": "A", "weight": 1, "argument": {"labelPreference": {"label": "a"}}},
            {"name": "B", "weight": 2, "argument": {"labelPreference": {"label": "b"}}},
        ]},
        'priorities[1].weight: LabelPreference priority "B" has a different weight with "A"',
    ),
    (
        {"priorities": [
            {"name": "R1", "weight": 1, "argument": RTCR_0},
            {"name": "R2", "weight": 1, "argument": RTCR_0},
        ]},
        'priorities[1]: priority "R2" redeclares custom priority "RequestedToCapacityRatio", from: "R1"',
    ),
    (
        {"predicates": [{"name": "X", "argument": TWO_ARGS}]},
        "predicates[0].argument: exactly 1 predicate argument is required (X)",
    ),
    (
        {"hardPodAffinitySymmetricWeight": 101},
        "hardPodAffinitySymmetricWeight: Invalid value: 101: not in valid range [0-100]",
    ),
    ({"kind": "KubeSchedulerConfiguration"}, 'kind: "KubeSchedulerConfiguration" is not Policy'),
    ({"predicates": [{"name": 3}]}, "predicates[0].name: Input should be a valid string"),
    (
        {"predicates": [
            {"name": "P", "argument": {"labelsPresence": {"labels": ["retiring"], "presence": True}}},
            {"name": "A", "argument": {"labelsPresence": {"labels": ["retiring"], "presence": False}}},
        ]},
        'NodeLabel.presentLabels[0]: Invalid value: "retiring": conflict with absentLabels[0]',
    ),
    (
        {"priorities": [{"name": "R", "weight": 1, "argument": RTCR_11}]},
        "RequestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
    ),
    (
        {"extenders": [{"urlPrefix": "http://a", "bindVerb": "b"}, {"urlPrefix": "http://b", "bindVerb": "b"}]},
        'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind',
    ),
]  # fmt: skip


@pytest.mark.parametrize(("doc", "want"), ERRORS, ids=[e[1][:48] for e in ERRORS])
def test_invalid_policies_say_what_is_wrong(doc: dict[str, Any], want: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_policy(doc, source="policy.json")
    assert str(info.value).startswith("policy.json: invalid Policy: ")
    assert want in [str(e) for e in info.value.errors]


def test_unknown_fields_are_ignored_with_a_warning() -> None:
    result = load_policy({"kind": "Policy", "predicates": [{"name": "HostName", "weigth": 2}], "prioritys": []})
    assert result.warnings == [
        "predicates[0].weigth: unknown field, ignored as kube-scheduler ignored it",
        "prioritys: unknown field, ignored as kube-scheduler ignored it",
    ]


def test_feature_gate_flags_are_checked() -> None:
    assert parse_feature_gates("") == {"DefaultPodTopologySpread": True}
    for bad, msg in (
        ("Foo=true", "unrecognized feature gate: Foo"),
        ("DefaultPodTopologySpread", "want NAME=true|false"),
    ):
        with pytest.raises(ConfigError, match=msg):
            parse_feature_gates(bad)
    with pytest.raises(ConfigError, match='algorithm provider "Nope" is not registered'):
        load_algorithm_provider("Nope")
