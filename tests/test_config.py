"""KubeSchedulerConfiguration v1: defaults, merging, multiPoint expansion and validation."""

import pytest

from kubesched.config.defaults import DEFAULT_MULTI_POINT
from kubesched.config.load import ConfigError, load_config
from kubesched.framework.interface import Handle
from kubesched.framework.plugins.registry import new_in_tree_registry
from kubesched.framework.runtime.framework import Framework, FrameworkError

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def framework(doc, i=0):
    cfg = load_config(doc)
    prof = cfg.raw.profiles[i]
    return Framework(new_in_tree_registry(), prof, cfg.profile_args[i], Handle())


def names(plugins):
    return [p.name for p in plugins]


def test_defaults():
    cfg = load_config(None)
    raw = cfg.raw
    assert raw.parallelism == 16 and raw.podInitialBackoffSeconds == 1 and raw.podMaxBackoffSeconds == 10
    assert raw.percentageOfNodesToScore == 0
    assert raw.leaderElection.leaseDuration == "15s" and raw.clientConnection.qps == 50
    assert raw.profiles[0].schedulerName == "default-scheduler"
    assert [p.name for p in raw.profiles[0].plugins.multiPoint.enabled] == [n for n, _ in DEFAULT_MULTI_POINT]
    args = cfg.profile_args[0]
    assert args["InterPodAffinity"].hardPodAffinityWeight == 1
    assert args["DefaultPreemption"].minCandidateNodesPercentage == 10
    assert args["DefaultPreemption"].minCandidateNodesAbsolute == 100
    assert args["PodTopologySpread"].defaultingType == "System"
    assert args["VolumeBinding"].bindTimeoutSeconds == 600
    assert [(r.name, r.weight) for r in args["NodeResourcesFit"].scoringStrategy.resources] == [
        ("cpu", 1),
        ("memory", 1),
    ]


def test_default_framework_points_and_weights():
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


def test_specific_point_overrides_multipoint_weight_and_order():
    doc = {
        **V1,
        "profiles": [
            {
                "plugins": {
                    "score": {
                        "enabled": [{"name": "ImageLocality", "weight": 7}],
                        "disabled": [{"name": "NodeResourcesBalancedAllocation"}],
                    }
                }
            }
        ],
    }
    fwk = framework(doc)
    assert names(fwk.score_plugins)[0] == "ImageLocality"
    assert fwk.score_weights["ImageLocality"] == 7
    assert "NodeResourcesBalancedAllocation" not in names(fwk.score_plugins)


def test_star_disables_defaults_of_a_point():
    doc = {
        **V1,
        "profiles": [
            {
                "plugins": {
                    "score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit", "weight": 3}]}
                }
            }
        ],
    }
    fwk = framework(doc)
    assert names(fwk.score_plugins) == ["NodeResourcesFit"]
    assert fwk.score_weights["NodeResourcesFit"] == 3
    assert "TaintToleration" in names(fwk.filter_plugins)


def test_multipoint_custom_plugin_replaces_default_in_place():
    doc = {**V1, "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 9}]}}}]}
    fwk = framework(doc)
    assert fwk.score_weights["TaintToleration"] == 9
    assert names(fwk.score_plugins)[0] == "TaintToleration"


def test_several_profiles():
    doc = {**V1, "profiles": [{"schedulerName": "a"}, {"schedulerName": "b", "percentageOfNodesToScore": 50}]}
    cfg = load_config(doc)
    assert [p.schedulerName for p in cfg.raw.profiles] == ["a", "b"]
    assert framework(doc, 1).percentage_of_nodes_to_score == 50


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ({"parallelism": 0}, "parallelism"),
        ({"percentageOfNodesToScore": 110}, "percentageOfNodesToScore"),
        ({"podMaxBackoffSeconds": 0}, "podMaxBackoffSeconds"),
        ({"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]}, "profiles[1].schedulerName"),
        ({"profiles": [{"schedulerName": "a"}, {}]}, "profiles[1].schedulerName"),
        (
            {"profiles": [{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": -1}]}}}]},
            "profiles[0].plugins.score.enabled[0].weight",
        ),
        (
            {"profiles": [{"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}]}]},
            "profiles[0].pluginConfig[0].args.hardPodAffinityWeight",
        ),
        (
            {
                "profiles": [
                    {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Foo"}}}]}
                ]
            },
            "profiles[0].pluginConfig[0].args.scoringStrategy.type",
        ),
        (
            {
                "profiles": [
                    {
                        "pluginConfig": [
                            {
                                "name": "PodTopologySpread",
                                "args": {
                                    "defaultConstraints": [
                                        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                                    ]
                                },
                            }
                        ]
                    }
                ]
            },
            "profiles[0].pluginConfig[0].args.defaultConstraints",
        ),
        (
            {
                "profiles": [
                    {
                        "pluginConfig": [
                            {
                                "name": "DefaultPreemption",
                                "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
                            }
                        ]
                    }
                ]
            },
            "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage/minCandidateNodesAbsolute",
        ),
        (
            {
                "profiles": [
                    {
                        "pluginConfig": [
                            {
                                "name": "NodeResourcesBalancedAllocation",
                                "args": {"resources": [{"name": "cpu", "weight": 2}]},
                            }
                        ]
                    }
                ]
            },
            "profiles[0].pluginConfig[0].args.resources[0].weight",
        ),
        (
            {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "NodeLabel"}]}}}]},
            "profiles[0].plugins.filter.enabled[0].name",
        ),
        ({"profiles": [{"unknownField": 1}]}, "profiles[0].unknownField"),
        (
            {
                "profiles": [
                    {"schedulerName": "a"},
                    {
                        "schedulerName": "b",
                        "plugins": {"queueSort": {"enabled": [{"name": "Custom"}], "disabled": [{"name": "*"}]}},
                    },
                ]
            },
            "profiles[1].plugins.queueSort",
        ),
    ],
)
def test_validation_names_the_field(doc, path):
    with pytest.raises(ConfigError) as err:
        load_config({**V1, **doc})
    assert path in [e.path for e in err.value.errors], str(err.value)


def test_unknown_plugin_is_an_error():
    doc = {**V1, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}}]}
    with pytest.raises(FrameworkError, match='"NoSuchPlugin"'):
        framework(doc)


def test_plugin_that_does_not_implement_point_is_an_error():
    doc = {**V1, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}}]}
    with pytest.raises(FrameworkError, match='plugin "ImageLocality" does not extend FilterPlugin plugin'):
        framework(doc)


def test_wrong_api_version():
    with pytest.raises(ConfigError, match="apiVersion"):
        load_config({"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"})


def test_leader_election_durations_are_validated() -> None:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaseDuration": "5s", "renewDeadline": "10s", "retryPeriod": "0s", "resourceName": ""},
    }
    with pytest.raises(ConfigError) as err:
        load_config(doc, source="sched.yaml")
    text = str(err.value)
    assert 'leaderElection.retryPeriod: Invalid value: "0s": must be greater than zero' in text
    assert 'leaderElection.leaseDuration: Invalid value: "5s": LeaseDuration must be greater than RenewDeadline' in text
    assert "leaderElection.resourceName: Required value" in text
    doc["leaderElection"] = {"leaderElect": False, "leaseDuration": "5s", "renewDeadline": "10s"}
    assert not load_config(doc).raw.leaderElection.leaderElect
