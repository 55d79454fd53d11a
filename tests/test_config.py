"""KubeSchedulerConfiguration v1: decoding, defaults, merging, validation, rendering (v1.36).

The tables marked "upstream:" are ports of apis/config's validation_test.go,
validation_pluginargs_test.go, defaults_test.go and default_plugins_test.go, with
v1.36's default feature gates (their cases for other gate settings are left out).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.defaults import DEFAULT_MULTI_POINT, default_args, merge_plugins
from kubesched.config.goduration import canonical, format_go_duration, parse_go_duration
from kubesched.config.load import ConfigError, SchedulerConfig, defaulted_configuration, load_config
from kubesched.config.render import render_config
from kubesched.config.trust import TRUSTED
from kubesched.config.types import (
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    Extender,
    ExtenderManagedResource,
    InterPodAffinityArgs,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    LeaderElectionConfiguration,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
    PodTopologySpreadArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    VolumeBindingArgs,
)
from kubesched.config.validation import validate_args, validate_configuration, validate_fit_args
from kubesched.framework.interface import Handle
from kubesched.framework.plugins.registry import new_in_tree_registry
from kubesched.framework.runtime.errors import FrameworkError
from kubesched.framework.runtime.framework import Framework

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def framework(doc: dict[str, Any] | None, i: int = 0) -> Framework:
    cfg = load_config(doc)
    prof = cfg.raw.profiles[i]
    return Framework(new_in_tree_registry(), prof, cfg.profile_args[i], Handle())


def names(plugins: list[Any]) -> list[str]:
    return [p.name for p in plugins]


def plugins_of(profile: KubeSchedulerProfile) -> Plugins:
    assert profile.plugins is not None
    return profile.plugins


def kinds(errs: list[Any]) -> list[tuple[str, str]]:
    """(field, error type) of each error, as upstream's tests compare them (ignoring values and details)."""
    return [(e.path, e.detail.split(":")[0]) for e in errs]


# Defaults, plugin sets and the framework they build.


def test_defaults() -> None:
    cfg = load_config(None)
    raw = cfg.raw
    assert raw.parallelism == 16 and raw.podInitialBackoffSeconds == 1 and raw.podMaxBackoffSeconds == 10
    assert raw.percentageOfNodesToScore == 0
    assert raw.leaderElection.leaseDuration == "15s" and raw.clientConnection.qps == 50
    assert raw.enableProfiling is True and raw.enableContentionProfiling is True
    assert raw.profiles[0].schedulerName == "default-scheduler"
    assert [p.name for p in plugins_of(raw.profiles[0]).multiPoint.enabled] == [n for n, _ in DEFAULT_MULTI_POINT]
    args = cfg.profile_args[0]
    assert args["InterPodAffinity"].hardPodAffinityWeight == 1
    assert args["DefaultPreemption"].minCandidateNodesPercentage == 10
    assert args["DefaultPreemption"].minCandidateNodesAbsolute == 100
    assert args["PodTopologySpread"].defaultingType == "System"
    assert args["VolumeBinding"].bindTimeoutSeconds == 600 and args["VolumeBinding"].shape is None
    assert (args["DynamicResources"].filterTimeout, args["DynamicResources"].bindingTimeout) == ("10s", "10m0s")
    assert [(r.name, r.weight) for r in args["NodeResourcesFit"].scoringStrategy.resources] == [
        ("cpu", 1),
        ("memory", 1),
    ]


def test_default_framework_points_and_weights() -> None:
    fwk = framework(None)
    assert names(fwk.filter_plugins) == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeDeclaredFeatures",
    ]
    assert names(fwk.score_plugins) == [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ]
    assert fwk.score_weights == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "VolumeBinding": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "DynamicResources": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }
    assert names(fwk.pre_enqueue_plugins) == ["SchedulingGates", "DynamicResources", "DefaultPreemption"]
    assert names(fwk.post_filter_plugins) == ["DynamicResources", "DefaultPreemption"]
    assert fwk.queue_sort.name == "PrioritySort"


def test_specific_point_overrides_multipoint_weight_and_order() -> None:
    score = {
        "enabled": [{"name": "ImageLocality", "weight": 7}],
        "disabled": [{"name": "NodeResourcesBalancedAllocation"}],
    }
    fwk = framework({**V1, "profiles": [{"plugins": {"score": score}}]})
    assert names(fwk.score_plugins)[0] == "ImageLocality"
    assert fwk.score_weights["ImageLocality"] == 7
    assert "NodeResourcesBalancedAllocation" not in names(fwk.score_plugins)


def test_star_disables_defaults_of_a_point() -> None:
    score = {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit", "weight": 3}]}
    fwk = framework({**V1, "profiles": [{"plugins": {"score": score}}]})
    assert names(fwk.score_plugins) == ["NodeResourcesFit"]
    assert fwk.score_weights["NodeResourcesFit"] == 3
    assert "TaintToleration" in names(fwk.filter_plugins)


def test_multipoint_custom_plugin_replaces_default_in_place() -> None:
    doc = {**V1, "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 9}]}}}]}
    fwk = framework(doc)
    assert fwk.score_weights["TaintToleration"] == 9
    assert names(fwk.score_plugins)[0] == "TaintToleration"


def test_several_profiles() -> None:
    doc = {**V1, "profiles": [{"schedulerName": "a"}, {"schedulerName": "b", "percentageOfNodesToScore": 50}]}
    cfg = load_config(doc)
    assert [p.schedulerName for p in cfg.raw.profiles] == ["a", "b"]
    assert framework(doc, 1).percentage_of_nodes_to_score == 50


def test_unknown_plugin_is_an_error() -> None:
    doc = {**V1, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}}]}
    with pytest.raises(FrameworkError, match='"NoSuchPlugin"'):
        framework(doc)


def test_plugin_that_does_not_implement_point_is_an_error() -> None:
    doc = {**V1, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}}]}
    with pytest.raises(FrameworkError, match='plugin "ImageLocality" does not extend FilterPlugin plugin'):
        framework(doc)


# Decoding: upstream's strict codec and its words.


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}, 'no kind "KubeSchedulerConfiguration" is registered'),
        (
            {"foo": 1, "profiles": [{"bar": 1}]},
            'strict decoding error: unknown field "foo", unknown field "profiles[0].bar"',
        ),
        ({"healthzBindAddress": ":1"}, 'unknown field "healthzBindAddress"'),
        (
            {"parallelism": "8"},
            "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.parallelism",
        ),
        (
            {"enableProfiling": "yes"},
            "Go struct field KubeSchedulerConfiguration.DebuggingConfiguration.enableProfiling",
        ),
        ({"leaderElection": {"leaseDuration": "15"}}, 'time: missing unit in duration "15"'),
        (
            {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"kind": "InterPodAffinityArgs"}}]}]},
            "args for plugin NodeResourcesFit were not of type NodeResourcesFitArgs.kubescheduler.config.k8s.io",
        ),
        (
            {"profiles": [{"pluginConfig": [{"name": "InterPodAffinity", "args": {"weight": 1}}]}]},
            "decoding .profiles[0].pluginConfig[0]: strict decoding error: decoding args for plugin InterPodAffinity",
        ),
    ],
)
def test_decoding_is_strict(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config({**V1, **doc})
    assert message in err.value.message


def test_missing_type_meta_is_refused() -> None:
    with pytest.raises(ConfigError, match="apiVersion"):
        load_config({"kind": "KubeSchedulerConfiguration"})
    with pytest.raises(ConfigError, match="Kind"):
        load_config({"apiVersion": "kubescheduler.config.k8s.io/v1"})


def test_leader_election_durations_are_validated() -> None:
    doc = {**V1, "leaderElection": {"leaseDuration": "5s", "renewDeadline": "10s", "retryPeriod": "-1s"}}
    with pytest.raises(ConfigError) as err:
        load_config(doc, source="sched.yaml")
    assert str(err.value) == (
        'sched.yaml: invalid KubeSchedulerConfiguration: [leaderElection.retryPeriod: Invalid value: "-1s": '
        'must be greater than zero, leaderElection.leaseDuration: Invalid value: "10s": must be greater than '
        "`RenewDeadline`]"
    )
    doc["leaderElection"] = {"leaderElect": False, "leaseDuration": "5s", "renewDeadline": "10s"}
    assert not load_config(doc).raw.leaderElection.leaderElect


def test_zero_and_empty_leader_election_fields_take_defaults() -> None:
    raw = load_config({**V1, "leaderElection": {"leaseDuration": "0s", "resourceName": "", "resourceLock": ""}}).raw
    le = raw.leaderElection
    assert (le.leaseDuration, le.resourceName, le.resourceLock) == ("15s", "kube-scheduler", "leases")


# upstream: validation_test.go, TestValidateKubeSchedulerConfigurationV1.


def _valid_config() -> KubeSchedulerConfiguration:
    return KubeSchedulerConfiguration(
        parallelism=8,
        leaderElection=LeaderElectionConfiguration(
            leaseDuration="30s", renewDeadline="15s", retryPeriod="5s", resourceNamespace="name", resourceName="name"
        ),
        podInitialBackoffSeconds=1,
        podMaxBackoffSeconds=1,
        percentageOfNodesToScore=None,
        profiles=[
            KubeSchedulerProfile(
                schedulerName="me",
                percentageOfNodesToScore=35,
                plugins=Plugins(
                    queueSort=PluginSet(enabled=[Plugin(name="CustomSort")]),
                    score=PluginSet(disabled=[Plugin(name="*")]),
                ),
                pluginConfig=[
                    PluginConfig(
                        name="DefaultPreemption",
                        args=DefaultPreemptionArgs(minCandidateNodesPercentage=10, minCandidateNodesAbsolute=100),
                    )
                ],
            ),
            KubeSchedulerProfile(
                schedulerName="other",
                percentageOfNodesToScore=35,
                plugins=Plugins(
                    queueSort=PluginSet(enabled=[Plugin(name="CustomSort")]),
                    bind=PluginSet(enabled=[Plugin(name="CustomBind")]),
                ),
            ),
        ],
        extenders=[Extender(prioritizeVerb="prioritize", weight=1)],
    )


def _mutate(kind: str) -> KubeSchedulerConfiguration:
    c = _valid_config()
    p0, p1 = c.profiles
    if kind == "bad-parallelism-invalid-value":
        c.parallelism = 0
    elif kind == "bad-resource-name-not-set":
        c.leaderElection.resourceName = ""
    elif kind == "bad-resource-namespace-not-set":
        c.leaderElection.resourceNamespace = ""
    elif kind == "bad-resource-lock-not-leases":
        c.leaderElection.resourceLock = "configmap"
    elif kind == "enable-contention-profiling-without-profiling":
        c.enableProfiling, c.enableContentionProfiling = False, True
    elif kind == "bad-percentage-of-nodes-to-score":
        c.percentageOfNodesToScore = 101
    elif kind == "negative-percentage-of-nodes-to-score":
        c.percentageOfNodesToScore = -1
    elif kind == "scheduler-name-not-set":
        p1.schedulerName = ""
    elif kind == "repeated-scheduler-name":
        p0.schedulerName = "other"
    elif kind == "greater-than-100-profile-percentage-of-nodes-to-score":
        p1.percentageOfNodesToScore = 101
    elif kind == "negative-profile-percentage-of-nodes-to-score":
        p1.percentageOfNodesToScore = -1
    elif kind == "different-queue-sort":
        plugins_of(p1).queueSort.enabled[0].name = "AnotherSort"
    elif kind == "one-empty-queue-sort":
        p0.plugins = None
    elif kind == "extender-negative-weight":
        c.extenders[0].weight = -1
    elif kind == "extender-duplicate-managed-resources":
        c.extenders[0].managedResources = [
            ExtenderManagedResource(name="example.com/foo"),
            ExtenderManagedResource(name="example.com/foo"),
        ]
    elif kind == "extender-duplicate-bind":
        c.extenders[0].bindVerb = "foo"
        c.extenders.append(Extender(prioritizeVerb="prioritize", bindVerb="bar", weight=1))
    elif kind == "invalid-node-percentage":
        p0.pluginConfig = [
            PluginConfig(
                name="DefaultPreemption",
                args=DefaultPreemptionArgs(minCandidateNodesPercentage=200, minCandidateNodesAbsolute=100),
            )
        ]
    elif kind == "invalid-plugin-args":
        p0.pluginConfig = [PluginConfig(name="DefaultPreemption", args=InterPodAffinityArgs())]
    elif kind == "duplicated-plugin-config":
        p0.pluginConfig = [PluginConfig(name="config"), PluginConfig(name="config")]
    elif kind == "mismatch-queue-sort":
        c.profiles = [
            KubeSchedulerProfile(
                schedulerName="me",
                plugins=Plugins(queueSort=PluginSet(enabled=[Plugin(name="PrioritySort")])),
                pluginConfig=[PluginConfig(name="PrioritySort")],
            ),
            KubeSchedulerProfile(
                schedulerName="other",
                plugins=Plugins(queueSort=PluginSet(enabled=[Plugin(name="CustomSort")])),
                pluginConfig=[PluginConfig(name="CustomSort")],
            ),
        ]
    elif kind == "invalid-plugins":
        plugins_of(p0).score.enabled += [
            Plugin(name=n) for n in ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
        ]
    elif kind == "valid-plugins":
        plugins_of(p0).score.enabled.append(Plugin(name="PodTopologySpread", weight=2))
    return c


@pytest.mark.parametrize(
    ("kind", "want"),
    [
        ("good", []),
        ("bad-parallelism-invalid-value", [("parallelism", "Invalid value")]),
        ("bad-resource-name-not-set", [("leaderElection.resourceName", "Required value")]),
        ("bad-resource-namespace-not-set", [("leaderElection.resourceNamespace", "Required value")]),
        ("bad-resource-lock-not-leases", [("leaderElection.resourceLock", "Invalid value")]),
        ("enable-contention-profiling-without-profiling", []),
        ("bad-percentage-of-nodes-to-score", [("percentageOfNodesToScore", "Invalid value")]),
        ("negative-percentage-of-nodes-to-score", [("percentageOfNodesToScore", "Invalid value")]),
        ("scheduler-name-not-set", [("profiles[1].schedulerName", "Required value")]),
        ("repeated-scheduler-name", [("profiles[1].schedulerName", "Duplicate value")]),
        (
            "greater-than-100-profile-percentage-of-nodes-to-score",
            [("profiles[1].percentageOfNodesToScore", "Invalid value")],
        ),
        ("negative-profile-percentage-of-nodes-to-score", [("profiles[1].percentageOfNodesToScore", "Invalid value")]),
        ("different-queue-sort", [("profiles[1].plugins.queueSort", "Invalid value")]),
        ("one-empty-queue-sort", [("profiles[1].plugins.queueSort", "Invalid value")]),
        ("extender-negative-weight", [("extenders[0].weight", "Invalid value")]),
        ("extender-duplicate-managed-resources", [("extenders[0].managedResources[1].name", "Invalid value")]),
        ("extender-duplicate-bind", [("extenders", "Invalid value")]),
        (
            "invalid-node-percentage",
            [("profiles[0].pluginConfig[0].args.minCandidateNodesPercentage", "Invalid value")],
        ),
        ("invalid-plugin-args", [("profiles[0].pluginConfig[0].args", "Invalid value")]),
        ("duplicated-plugin-config", [("profiles[0].pluginConfig[1]", "Duplicate value")]),
        ("mismatch-queue-sort", [("profiles[1].plugins.queueSort", "Invalid value")]),
        ("invalid-plugins", [(f"profiles[0].plugins.score.enabled[{i}]", "Invalid value") for i in range(4)]),
        ("valid-plugins", []),
    ],
)
def test_validate_configuration(kind: str, want: list[tuple[str, str]]) -> None:
    assert kinds(validate_configuration(_mutate(kind))) == want


def test_validation_messages_are_upstreams() -> None:
    c = _mutate("repeated-scheduler-name")
    c.profiles[0].percentageOfNodesToScore = 101
    assert [str(e) for e in validate_configuration(c)] == [
        "profiles[0].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        "profiles[1].schedulerName: Duplicate value: {}",
    ]
    c = _mutate("invalid-plugins")
    assert str(validate_configuration(c)[0]) == (
        'profiles[0].plugins.score.enabled[0]: Invalid value: "AzureDiskLimits": was invalid in version "v1" '
        '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'
    )
    c = _mutate("different-queue-sort")
    assert str(validate_configuration(c)[0]) == (
        'profiles[1].plugins.queueSort: Invalid value: {"Enabled":[{"Name":"AnotherSort","Weight":0}],'
        '"Disabled":null}: must be the same for all profiles'
    )


# upstream: validation_pluginargs_test.go.


@pytest.mark.parametrize(
    ("pct", "absolute", "want"),
    [
        (10, 100, []),
        (-1, 100, [("minCandidateNodesPercentage", "Invalid value")]),
        (900, 100, [("minCandidateNodesPercentage", "Invalid value")]),
        (20, -1, [("minCandidateNodesAbsolute", "Invalid value")]),
        (0, 0, [("minCandidateNodesPercentage", "Invalid value"), ("minCandidateNodesAbsolute", "Invalid value")]),
        (-1, -1, [("minCandidateNodesPercentage", "Invalid value"), ("minCandidateNodesAbsolute", "Invalid value")]),
    ],
)
def test_validate_default_preemption_args(pct: int, absolute: int, want: list[tuple[str, str]]) -> None:
    args = DefaultPreemptionArgs(minCandidateNodesPercentage=pct, minCandidateNodesAbsolute=absolute)
    assert kinds(validate_args("DefaultPreemption", args, "")) == want


@pytest.mark.parametrize(("weight", "bad"), [(10, False), (-1, True), (101, True)])
def test_validate_inter_pod_affinity_args(weight: int, bad: bool) -> None:
    errs = validate_args("InterPodAffinity", InterPodAffinityArgs(hardPodAffinityWeight=weight), "")
    assert kinds(errs) == ([("hardPodAffinityWeight", "Invalid value")] if bad else [])


def _constraint(skew: int, key: str, when: str, **kw: Any) -> dict[str, Any]:
    return {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when, **kw}


@pytest.mark.parametrize(
    ("constraints", "defaulting", "want"),
    [
        ([_constraint(1, "node", "DoNotSchedule"), _constraint(2, "zone", "ScheduleAnyway")], "List", []),
        ([_constraint(-1, "node", "DoNotSchedule")], "List", [("defaultConstraints[0].maxSkew", "Invalid value")]),
        ([_constraint(1, "", "DoNotSchedule")], "List", [("defaultConstraints[0].topologyKey", "Required value")]),
        ([_constraint(1, "node", "")], "List", [("defaultConstraints[0].whenUnsatisfiable", "Required value")]),
        (
            [_constraint(1, "node", "unknown action")],
            "List",
            [("defaultConstraints[0].whenUnsatisfiable", "Unsupported value")],
        ),
        (
            [_constraint(1, "node", "DoNotSchedule"), _constraint(2, "node", "DoNotSchedule")],
            "List",
            [("defaultConstraints[1]", "Duplicate value")],
        ),
        (
            [_constraint(1, "key", "DoNotSchedule", labelSelector={"matchLabels": {"a": "b"}})],
            "List",
            [("defaultConstraints[0].labelSelector", "Forbidden")],
        ),
        ([], "List", []),
        ([], "System", []),
        ([], "unknown", [("defaultingType", "Unsupported value")]),
        ([_constraint(1, "key", "DoNotSchedule")], "System", [("defaultingType", "Invalid value")]),
    ],
)
def test_validate_pod_topology_spread_args(
    constraints: list[dict[str, Any]], defaulting: str, want: list[tuple[str, str]]
) -> None:
    args = PodTopologySpreadArgs(defaultConstraints=constraints, defaultingType=defaulting)
    assert kinds(validate_args("PodTopologySpread", args, "")) == want


@pytest.mark.parametrize(
    ("resources", "want"),
    [
        ([("cpu", 1), ("memory", 1)], []),
        ([("cpu", 2), ("memory", 1)], [("resources[0].weight", "Invalid value")]),
        ([("cpu", 1), ("cpu", 1)], [("resources[1].name", "Duplicate value")]),
    ],
)
def test_validate_balanced_allocation_args(resources: list[tuple[str, int]], want: list[tuple[str, str]]) -> None:
    args = NodeResourcesBalancedAllocationArgs(resources=[ResourceSpec(name=n, weight=w) for n, w in resources])
    assert kinds(validate_args("NodeResourcesBalancedAllocation", args, "")) == want


def _node_affinity(key: str, field_values: list[str]) -> dict[str, Any]:
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": ["label-1-val"]}]}]
        },
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 1,
                "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": field_values}]},
            }
        ],
    }


@pytest.mark.parametrize(
    ("added", "want"),
    [
        (None, []),
        (_node_affinity("label-1", ["node-1"]), []),
        (
            _node_affinity("invalid/label/key", ["node-1", "node-2"]),
            [
                (
                    "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
                    ".matchExpressions[0].key",
                    "Invalid value",
                ),
                (
                    "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values",
                    "Invalid value",
                ),
            ],
        ),
    ],
)
def test_validate_node_affinity_args(added: dict[str, Any] | None, want: list[tuple[str, str]]) -> None:
    assert kinds(validate_args("NodeAffinity", NodeAffinityArgs(addedAffinity=added), "")) == want


@pytest.mark.parametrize(
    ("timeout", "shape", "want"),
    [
        (0, None, []),
        (10, None, []),
        (-10, None, [("bindTimeoutSeconds", "Invalid value")]),
        (10, [(1, 1), (3, 3)], [("shape", "Invalid value")]),  # StorageCapacityScoring is off in v1.36
    ],
)
def test_validate_volume_binding_args(timeout: int, shape: list[tuple[int, int]] | None, want: list[Any]) -> None:
    points = None if shape is None else [UtilizationShapePoint(utilization=u, score=s) for u, s in shape]
    errs = validate_args("VolumeBinding", VolumeBindingArgs(bindTimeoutSeconds=timeout, shape=points), "")
    assert kinds(errs) == want
    if timeout < 0:
        assert str(errs[0]) == (
            "bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, should not be a negative value"
        )


DEFAULT_STRATEGY = ScoringStrategy(
    type="LeastAllocated", resources=[ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]
)


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (
            NodeResourcesFitArgs(ignoredResources=["longvalue" + "a" * 64], scoringStrategy=DEFAULT_STRATEGY),
            "name part must be no more than 63 bytes",
        ),
        (
            NodeResourcesFitArgs(ignoredResources=["example.com/"], scoringStrategy=DEFAULT_STRATEGY),
            "name part must be non-empty",
        ),
        (
            NodeResourcesFitArgs(ignoredResources=["example.com/aaa/bbb"], scoringStrategy=DEFAULT_STRATEGY),
            "a valid label key must consist of",
        ),
        (NodeResourcesFitArgs(ignoredResources=["example.com"], scoringStrategy=DEFAULT_STRATEGY), ""),
        (NodeResourcesFitArgs(ignoredResourceGroups=["example.com"], scoringStrategy=DEFAULT_STRATEGY), ""),
        (
            NodeResourcesFitArgs(ignoredResourceGroups=["example.com/"], scoringStrategy=DEFAULT_STRATEGY),
            "name part must be non-empty",
        ),
        (
            NodeResourcesFitArgs(ignoredResourceGroups=["a" * 64], scoringStrategy=DEFAULT_STRATEGY),
            "name part must be no more than 63 bytes",
        ),
        (
            NodeResourcesFitArgs(ignoredResourceGroups=["example.com/aa"], scoringStrategy=DEFAULT_STRATEGY),
            "resource group name can't contain '/'",
        ),
        (NodeResourcesFitArgs(), "ScoringStrategy field is required"),
        (NodeResourcesFitArgs(scoringStrategy=ScoringStrategy(type="Invalid")), 'Unsupported value: "Invalid"'),
        (
            NodeResourcesFitArgs(scoringStrategy=ScoringStrategy(type="RequestedToCapacityRatio")),
            "must be specified when type is RequestedToCapacityRatio",
        ),
    ],
)
def test_validate_fit_args(args: NodeResourcesFitArgs, expect: str) -> None:
    text = "; ".join(str(e) for e in validate_fit_args("", args))
    assert expect in text if expect else text == ""


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated"])
@pytest.mark.parametrize(
    ("resources", "bad"),
    [
        ([], []),
        ([("cpu", 1), ("memory", 10)], []),
        ([("cpu", 0)], [0]),
        ([("cpu", 101)], [0]),
        ([("cpu", 0), ("memory", 101)], [0, 1]),
    ],
)
def test_validate_allocated_scoring_strategies(strategy: str, resources: list[tuple[str, int]], bad: list[int]) -> None:
    st = ScoringStrategy(type=strategy, resources=[ResourceSpec(name=n, weight=w) for n, w in resources])
    errs = validate_fit_args("", NodeResourcesFitArgs(scoringStrategy=st))
    assert kinds(errs) == [(f"scoringStrategy.resources[{i}].weight", "Invalid value") for i in bad]


SHAPE = "scoringStrategy.requestedToCapacityRatio.shape"


@pytest.mark.parametrize(
    ("resources", "shape", "want"),
    [
        ([], None, [(SHAPE, "Required value")]),
        ([("cpu", 101)], [(30, 3)], [("scoringStrategy.resources[0].weight", "Invalid value")]),
        ([("cpu", 0)], [(30, 3)], [("scoringStrategy.resources[0].weight", "Invalid value")]),
        ([], [(30, 3)], []),
        ([], [(-1, 3)], [(f"{SHAPE}[0].utilization", "Invalid value")]),
        ([], [(101, 3)], [(f"{SHAPE}[0].utilization", "Invalid value")]),
        ([], [(10, 3), (10, 3)], [(f"{SHAPE}[1].utilization", "Invalid value")]),
        ([], [(10, 3), (20, 3), (30, 3)], []),
        ([], [(10, 3), (20, 3), (15, 3)], [(f"{SHAPE}[2].utilization", "Invalid value")]),
        ([], [(10, -1)], [(f"{SHAPE}[0].score", "Invalid value")]),
        ([], [(10, 11)], [(f"{SHAPE}[0].score", "Invalid value")]),
    ],
)
def test_validate_requested_to_capacity_ratio_strategy(
    resources: list[tuple[str, int]], shape: list[tuple[int, int]] | None, want: list[tuple[str, str]]
) -> None:
    points = [UtilizationShapePoint(utilization=u, score=s) for u, s in shape or []]
    st = ScoringStrategy(
        type="RequestedToCapacityRatio",
        resources=[ResourceSpec(name=n, weight=w) for n, w in resources],
        requestedToCapacityRatio=RequestedToCapacityRatioParam(shape=points),
    )
    assert kinds(validate_fit_args("", NodeResourcesFitArgs(scoringStrategy=st))) == want


@pytest.mark.parametrize(
    ("filter_timeout", "binding_timeout", "want"),
    [
        ("10s", "10m0s", []),
        (None, None, []),
        ("-1s", None, [("filterTimeout", "Invalid value")]),
        (None, "30s", []),
        (None, "0s", [("bindingTimeout", "Invalid value")]),
        (None, "-1s", [("bindingTimeout", "Invalid value")]),
    ],
)
def test_validate_dynamic_resources_args(
    filter_timeout: str | None, binding_timeout: str | None, want: list[tuple[str, str]]
) -> None:
    args = DynamicResourcesArgs(filterTimeout=filter_timeout, bindingTimeout=binding_timeout)
    errs = validate_args("DynamicResources", args, "")
    assert kinds(errs) == want
    details = {"filterTimeout": "must be zero or positive", "bindingTimeout": "must be at least 1 second"}
    assert all(str(e).endswith(details[e.path]) for e in errs)


# upstream: defaults_test.go, TestSchedulerDefaults (what defaulting leaves, before the frameworks).

DEFAULT_PLUGIN_CONFIGS = [
    {
        "name": "DefaultPreemption",
        "args": {
            "kind": "DefaultPreemptionArgs",
            "apiVersion": V1["apiVersion"],
            "minCandidateNodesPercentage": 10,
            "minCandidateNodesAbsolute": 100,
        },
    },
    {
        "name": "DynamicResources",
        "args": {
            "kind": "DynamicResourcesArgs",
            "apiVersion": V1["apiVersion"],
            "filterTimeout": "10s",
            "bindingTimeout": "10m0s",
        },
    },
    {
        "name": "InterPodAffinity",
        "args": {
            "kind": "InterPodAffinityArgs",
            "apiVersion": V1["apiVersion"],
            "hardPodAffinityWeight": 1,
            "ignorePreferredTermsOfExistingPods": False,
        },
    },
    {"name": "NodeAffinity", "args": {"kind": "NodeAffinityArgs", "apiVersion": V1["apiVersion"]}},
    {
        "name": "NodeResourcesBalancedAllocation",
        "args": {
            "kind": "NodeResourcesBalancedAllocationArgs",
            "apiVersion": V1["apiVersion"],
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        },
    },
    {
        "name": "NodeResourcesFit",
        "args": {
            "kind": "NodeResourcesFitArgs",
            "apiVersion": V1["apiVersion"],
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
            },
        },
    },
    {
        "name": "PodTopologySpread",
        "args": {"kind": "PodTopologySpreadArgs", "apiVersion": V1["apiVersion"], "defaultingType": "System"},
    },
    {
        "name": "VolumeBinding",
        "args": {"kind": "VolumeBindingArgs", "apiVersion": V1["apiVersion"], "bindTimeoutSeconds": 600},
    },
]
DEFAULT_PLUGINS = {
    "multiPoint": {"enabled": [{"name": n, "weight": w or 0} for n, w in DEFAULT_MULTI_POINT]},
}


def _defaulted(doc: dict[str, Any]) -> dict[str, Any]:
    return render_config(SchedulerConfig(defaulted_configuration({**V1, **doc})), completed=False)


def _profile(
    name: str | None = "default-scheduler", plugins: dict[str, Any] | None = None, **kw: Any
) -> dict[str, Any]:
    from kubesched.config.names import PLUGIN_SETS

    sets: dict[str, Any] = {p: {} for p in PLUGIN_SETS} | (plugins or DEFAULT_PLUGINS)
    return {"schedulerName": name or "", **kw, "plugins": sets, "pluginConfig": DEFAULT_PLUGIN_CONFIGS}


def _defaults(**kw: Any) -> dict[str, Any]:
    return {
        "kind": "KubeSchedulerConfiguration",
        "apiVersion": V1["apiVersion"],
        "parallelism": 16,
        "leaderElection": {
            "leaderElect": True,
            "leaseDuration": "15s",
            "renewDeadline": "10s",
            "retryPeriod": "2s",
            "resourceLock": "leases",
            "resourceName": "kube-scheduler",
            "resourceNamespace": "kube-system",
        },
        "clientConnection": {
            "kubeconfig": "",
            "acceptContentTypes": "",
            "contentType": "application/vnd.kubernetes.protobuf",
            "qps": 50,
            "burst": 100,
        },
        "enableProfiling": True,
        "enableContentionProfiling": True,
        "percentageOfNodesToScore": 0,
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 10,
        "profiles": [_profile()],
        **kw,
    }


def test_scheduler_defaults_empty_config() -> None:
    assert _defaulted({}) == _defaults()
    assert _defaulted({"profiles": [{}]}) == _defaults()
    assert _defaulted({"parallelism": 16}) == _defaults()


def test_scheduler_defaults_two_profiles() -> None:
    bind = {"enabled": [{"name": "BarPlugin"}], "disabled": [{"name": "DefaultBinder"}]}
    got = _defaulted(
        {
            "profiles": [
                {"pluginConfig": [{"name": "FooPlugin"}]},
                {"schedulerName": "custom-scheduler", "plugins": {"bind": bind}},
            ]
        }
    )
    want_bind = {"enabled": [{"name": "BarPlugin", "weight": 0}], "disabled": [{"name": "DefaultBinder", "weight": 0}]}
    first = _profile(None)
    first["pluginConfig"] = [{"name": "FooPlugin", "args": None}, *DEFAULT_PLUGIN_CONFIGS]
    second = _profile("custom-scheduler", {**DEFAULT_PLUGINS, "bind": want_bind})
    assert got == _defaults(profiles=[first, second])


@pytest.mark.parametrize(
    ("doc", "want"),
    [
        ({"parallelism": 8}, {"parallelism": 8}),
        ({"delayCacheUntilActive": True}, {"delayCacheUntilActive": True}),
        ({"percentageOfNodesToScore": 50}, {"percentageOfNodesToScore": 50}),
        ({"profiles": [{"percentageOfNodesToScore": 50}]}, {"profiles": [_profile(percentageOfNodesToScore=50)]}),
        (
            {"percentageOfNodesToScore": 10, "profiles": [{"percentageOfNodesToScore": 50}]},
            {"percentageOfNodesToScore": 10, "profiles": [_profile(percentageOfNodesToScore=50)]},
        ),
        ({"enableProfiling": False}, {"enableProfiling": False, "enableContentionProfiling": False}),
    ],
)
def test_scheduler_defaults(doc: dict[str, Any], want: dict[str, Any]) -> None:
    assert _defaulted(doc) == _defaults(**want)


def test_scheduler_defaults_unknown_plugin_config() -> None:
    """An args-less entry keeps its place; the defaults for the others follow it."""
    got = _defaulted(
        {
            "profiles": [
                {"pluginConfig": [{"name": "DefaultPreemption", "args": {}}, {"name": "Other", "args": {"a": 1}}]}
            ]
        }
    )
    configs = got["profiles"][0]["pluginConfig"]
    assert [c["name"] for c in configs] == [
        "DefaultPreemption",
        "Other",
        *[c["name"] for c in DEFAULT_PLUGIN_CONFIGS[1:]],
    ]
    assert configs[0] == DEFAULT_PLUGIN_CONFIGS[0] and configs[1] == {"name": "Other", "args": {"a": 1}}


# upstream: defaults_test.go, TestPluginArgsDefaults (v1.36 gates: StorageCapacityScoring off, binding conditions on).


@pytest.mark.parametrize(
    ("name", "given", "want"),
    [
        ("DefaultPreemption", {}, {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}),
        (
            "DefaultPreemption",
            {"minCandidateNodesPercentage": 50},
            {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 100},
        ),
        ("InterPodAffinity", {}, {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False}),
        (
            "InterPodAffinity",
            {"hardPodAffinityWeight": 0},
            {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": False},
        ),
        (
            "InterPodAffinity",
            {"hardPodAffinityWeight": 5},
            {"hardPodAffinityWeight": 5, "ignorePreferredTermsOfExistingPods": False},
        ),
        (
            "NodeResourcesBalancedAllocation",
            {},
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]},
        ),
        (
            "NodeResourcesBalancedAllocation",
            {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
            {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
        ),
        (
            "NodeResourcesBalancedAllocation",
            {"resources": [{"name": "cpu"}, {"name": "scalar.io/scalar0"}, {"name": "scalar.io/scalar1", "weight": 1}]},
            {
                "resources": [
                    {"name": "cpu", "weight": 1},
                    {"name": "scalar.io/scalar0", "weight": 1},
                    {"name": "scalar.io/scalar1", "weight": 1},
                ]
            },
        ),
        ("PodTopologySpread", {}, {"defaultingType": "System"}),
        (
            "PodTopologySpread",
            {"defaultConstraints": [{"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}]},
            {
                "defaultConstraints": [{"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule"}],
                "defaultingType": "System",
            },
        ),
        (
            "NodeResourcesFit",
            {},
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                }
            },
        ),
        (
            "NodeResourcesFit",
            {"scoringStrategy": {"type": "MostAllocated"}},
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                }
            },
        ),
        ("VolumeBinding", {}, {"bindTimeoutSeconds": 600}),
        ("DynamicResources", {}, {"filterTimeout": "10s", "bindingTimeout": "10m0s"}),
    ],
)
def test_plugin_args_defaults(name: str, given: dict[str, Any], want: dict[str, Any]) -> None:
    got = _defaulted({"profiles": [{"pluginConfig": [{"name": name, "args": given}]}]})["profiles"][0]["pluginConfig"][
        0
    ]
    assert got["args"] == {"kind": f"{name}Args", "apiVersion": V1["apiVersion"], **want}
    assert default_args(name, None) is not None


# upstream: default_plugins_test.go, TestMergePlugins.


def _ps(enabled: list[Any] = (), disabled: list[str] = ()) -> PluginSet:  # type: ignore[assignment]
    return PluginSet(
        enabled=[Plugin(name=p) if isinstance(p, str) else Plugin(name=p[0], weight=p[1]) for p in enabled],
        disabled=[Plugin(name=n) for n in disabled],
    )


@pytest.mark.parametrize(
    ("custom", "default", "want"),
    [
        (
            {"filter": _ps(["CustomPlugin"])},
            {"filter": _ps(["DefaultPlugin1", "DefaultPlugin2"])},
            {"filter": _ps(["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"])},
        ),
        (
            {"filter": _ps(["CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"])},
            {"filter": _ps(["DefaultPlugin1", "DefaultPlugin2"])},
            {"filter": _ps(["DefaultPlugin1", "CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"])},
        ),
        (
            {"filter": _ps(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"])},
            {"filter": _ps(["DefaultPlugin1", "DefaultPlugin2"])},
            {"filter": _ps(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"])},
        ),
        (
            {"filter": _ps(["DefaultPlugin2", "DefaultPlugin1"], ["*"])},
            {"filter": _ps(["DefaultPlugin1", "DefaultPlugin2"])},
            {"filter": _ps(["DefaultPlugin2", "DefaultPlugin1"], ["*"])},
        ),
        (
            None,
            {"filter": _ps(["DefaultPlugin1", "DefaultPlugin2"])},
            {"filter": _ps(["DefaultPlugin1", "DefaultPlugin2"])},
        ),
        (
            {"filter": _ps([("Plugin1", 2), ("Plugin3", 3)])},
            {"filter": _ps(["Plugin1", "Plugin2", "Plugin3"])},
            {"filter": _ps([("Plugin1", 2), "Plugin2", ("Plugin3", 3)])},
        ),
        (
            {"filter": _ps([("Plugin2", 2), ("Plugin1", 1)])},
            {"filter": _ps(["Plugin1", "Plugin2", "Plugin3"])},
            {"filter": _ps([("Plugin1", 1), ("Plugin2", 2), "Plugin3"])},
        ),
        (
            {"filter": _ps(["Plugin1", ("Plugin2", 2), "Plugin3", ("Plugin2", 4)])},
            {"filter": _ps(["Plugin1", "Plugin2", "Plugin3"])},
            {"filter": _ps(["Plugin1", ("Plugin2", 4), "Plugin3", ("Plugin2", 2)])},
        ),
        (
            {"multiPoint": _ps(["CustomPlugin"])},
            {"multiPoint": _ps(["DefaultPlugin1", "DefaultPlugin2"])},
            {"multiPoint": _ps(["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"])},
        ),
        (
            {
                "multiPoint": _ps(["CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]),
                "score": _ps([], ["CustomPlugin2"]),
            },
            {"multiPoint": _ps(["DefaultPlugin1", "DefaultPlugin2"])},
            {
                "multiPoint": _ps(["DefaultPlugin1", "CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]),
                "score": _ps([], ["CustomPlugin2"]),
            },
        ),
        (
            {"multiPoint": _ps([("DefaultPlugin", 5)])},
            {"multiPoint": _ps(["DefaultPlugin"])},
            {"multiPoint": _ps([("DefaultPlugin", 5)])},
        ),
        (
            {"multiPoint": _ps(["CustomPlugin"])},
            {"multiPoint": _ps(["DefaultPlugin"], ["DefaultPlugin2"])},
            {"multiPoint": _ps(["DefaultPlugin", "CustomPlugin"], ["DefaultPlugin2"])},
        ),
        (
            {"multiPoint": _ps(["CustomPlugin"])},
            {"multiPoint": _ps(["DefaultPlugin"]), "score": _ps([], ["DefaultPlugin2"])},
            {"multiPoint": _ps(["DefaultPlugin", "CustomPlugin"]), "score": _ps([], ["DefaultPlugin2"])},
        ),
        (
            {"multiPoint": _ps([], ["DefaultPlugin"])},
            {"multiPoint": _ps(["DefaultPlugin"])},
            {"multiPoint": _ps([], ["DefaultPlugin"])},
        ),
    ],
)
def test_merge_plugins(custom: dict[str, Any] | None, default: dict[str, Any], want: dict[str, Any]) -> None:
    got = merge_plugins(Plugins(**default), None if custom is None else Plugins(**custom))
    assert got == Plugins(**want)


# Durations as Go writes them; the rendered configuration.


@pytest.mark.parametrize(
    ("text", "ns", "go"),
    [
        ("0", 0, "0s"),
        ("10s", 10 * 10**9, "10s"),
        ("10m", 600 * 10**9, "10m0s"),
        ("1.5h", 5400 * 10**9, "1h30m0s"),
        ("90s", 90 * 10**9, "1m30s"),
        ("500ms", 5 * 10**8, "500ms"),
        ("1us", 1000, "1\u00b5s"),
        ("-1.5s", -15 * 10**8, "-1.5s"),
        ("1h0m0.5s", 3600 * 10**9 + 5 * 10**8, "1h0m0.5s"),
    ],
)
def test_go_durations(text: str, ns: int, go: str) -> None:
    assert parse_go_duration(text) == ns and format_go_duration(ns) == go and canonical(text) == go


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("abc", 'time: invalid duration "abc"'),
        ("5", 'time: missing unit in duration "5"'),
        ("5x", 'time: unknown unit "x" in duration "5x"'),
        ("3000000h", 'time: invalid duration "3000000h"'),
    ],
)
def test_go_duration_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_go_duration(text)
    assert str(err.value) == message


def test_completed_rendering_keeps_enabled_plugins_args_only() -> None:
    doc = {
        **V1,
        "profiles": [
            {
                "plugins": {"multiPoint": {"disabled": [{"name": "InterPodAffinity", "weight": 4}]}},
                "pluginConfig": [
                    {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 5}},
                    {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 3}},
                ],
            }
        ],
    }
    cfg = load_config(doc)
    completed = render_config(cfg)["profiles"][0]
    assert [c["name"] for c in completed["pluginConfig"]] == [
        "DefaultPreemption",
        "DynamicResources",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "VolumeBinding",
    ]
    assert completed["plugins"]["multiPoint"]["disabled"] == [{"name": "InterPodAffinity", "weight": 0}]
    defaulted = render_config(cfg, completed=False)["profiles"][0]
    assert [c["name"] for c in defaulted["pluginConfig"]][:3] == [
        "VolumeBinding",
        "InterPodAffinity",
        "DefaultPreemption",
    ]


def test_extender_ignored_resources_replace_fit_ignored_resources() -> None:
    ext = {"urlPrefix": "http://e", "managedResources": [{"name": "example.com/a", "ignoredByScheduler": True}]}
    doc = {
        **V1,
        "extenders": [ext],
        "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResources": ["example.com/z"]}}]}],
    }
    cfg = load_config(doc, trust=TRUSTED)  # extenders: as --config gives them
    assert cfg.profile_args[0]["NodeResourcesFit"].ignoredResources == ["example.com/a"]
    assert cfg.raw.extenders[0].httpTimeout == "5s"


def test_configz_applies_the_flags_kube_scheduler_applies() -> None:
    from kubesched.app import RunOptions, configz

    opts = RunOptions(kubeconfig="/k", qps=10.0, burst=20, leader_elect=False, lease_duration=90.0, lease_name="x")
    without_file = configz(load_config(None), opts)
    assert without_file["clientConnection"] == {
        "kubeconfig": "/k",
        "acceptContentTypes": "",
        "contentType": "application/vnd.kubernetes.protobuf",
        "qps": 10,
        "burst": 20,
    }
    le = without_file["leaderElection"]
    assert (le["leaderElect"], le["leaseDuration"], le["resourceName"]) == (False, "1m30s", "x")
    with_file = configz(load_config(V1, source="c.yaml"), opts)
    assert with_file["clientConnection"]["kubeconfig"] == "" and with_file["clientConnection"]["qps"] == 50
    assert with_file["leaderElection"]["leaderElect"] is False
    assert "pluginConfig" in with_file["profiles"][0]


def test_default_plugins_a_point_relists_keep_that_points_order() -> None:
    """expandMultiPointPlugins part 1: overrides in the specific point's order, before the other multiPoint ones."""
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"filter": {"enabled": [{"name": "NodeAffinity"}, {"name": "TaintToleration"}]}},
            }
        ],
    }
    assert names(framework(doc).filter_plugins)[:3] == ["NodeAffinity", "TaintToleration", "NodeUnschedulable"]
