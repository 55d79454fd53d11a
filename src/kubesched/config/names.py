"""The names a scheduler configuration speaks: in-tree plugins and extension points, each spelled once.

Upstream keeps plugin names in framework/plugins/names and the points in apis/config;
here both sit at the bottom of config, so that config (defaults, validation, the legacy
Policy translation) and the framework above it (registry, runtime, plugins) import the
same constants instead of repeating the strings and the orders.
"""

from typing import Final

# In-tree plugins (framework/plugins/names/names.go).
PRIORITY_SORT: Final = "PrioritySort"
DEFAULT_BINDER: Final = "DefaultBinder"
DEFAULT_PREEMPTION: Final = "DefaultPreemption"
DYNAMIC_RESOURCES: Final = "DynamicResources"
IMAGE_LOCALITY: Final = "ImageLocality"
INTER_POD_AFFINITY: Final = "InterPodAffinity"
NODE_AFFINITY: Final = "NodeAffinity"
NODE_DECLARED_FEATURES: Final = "NodeDeclaredFeatures"
NODE_NAME: Final = "NodeName"
NODE_PORTS: Final = "NodePorts"
NODE_RESOURCES_BALANCED_ALLOCATION: Final = "NodeResourcesBalancedAllocation"
NODE_RESOURCES_FIT: Final = "NodeResourcesFit"
NODE_UNSCHEDULABLE: Final = "NodeUnschedulable"
NODE_VOLUME_LIMITS: Final = "NodeVolumeLimits"
POD_TOPOLOGY_SPREAD: Final = "PodTopologySpread"
SCHEDULING_GATES: Final = "SchedulingGates"
TAINT_TOLERATION: Final = "TaintToleration"
VOLUME_BINDING: Final = "VolumeBinding"
VOLUME_RESTRICTIONS: Final = "VolumeRestrictions"
VOLUME_ZONE: Final = "VolumeZone"

# In v1.36's registry; in the default set only with their (alpha) gates on.
GANG_SCHEDULING: Final = "GangScheduling"
TOPOLOGY_PLACEMENT_GENERATOR: Final = "TopologyPlacementGenerator"
POD_GROUP_PODS_COUNT: Final = "PodGroupPodsCount"

# Removed upstream (1.23-1.26); built for Policy and algorithm-provider translation only.
SELECTOR_SPREAD: Final = "SelectorSpread"
NODE_LABEL: Final = "NodeLabel"
SERVICE_AFFINITY: Final = "ServiceAffinity"
NODE_PREFER_AVOID_PODS: Final = "NodePreferAvoidPods"
NODE_RESOURCES_LEAST_ALLOCATED: Final = "NodeResourcesLeastAllocated"
NODE_RESOURCES_MOST_ALLOCATED: Final = "NodeResourcesMostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"
EBS_LIMITS: Final = "EBSLimits"
GCE_PD_LIMITS: Final = "GCEPDLimits"
AZURE_DISK_LIMITS: Final = "AzureDiskLimits"
CINDER_LIMITS: Final = "CinderLimits"

# Extension points: the fields of v1.Plugins.
PRE_ENQUEUE: Final = "preEnqueue"
QUEUE_SORT: Final = "queueSort"
PRE_FILTER: Final = "preFilter"
FILTER: Final = "filter"
POST_FILTER: Final = "postFilter"
PRE_SCORE: Final = "preScore"
SCORE: Final = "score"
RESERVE: Final = "reserve"
PERMIT: Final = "permit"
PRE_BIND: Final = "preBind"
BIND: Final = "bind"
POST_BIND: Final = "postBind"
MULTI_POINT: Final = "multiPoint"
PLACEMENT_GENERATE: Final = "placementGenerate"
PLACEMENT_SCORE: Final = "placementScore"

EXTENSION_POINTS: Final = (
    PRE_ENQUEUE,
    QUEUE_SORT,
    PRE_FILTER,
    FILTER,
    POST_FILTER,
    PRE_SCORE,
    SCORE,
    RESERVE,
    PERMIT,
    PRE_BIND,
    BIND,
    POST_BIND,
)
"""The points of a pod's scheduling and binding cycles, which the framework builds, in v1.Plugins' order."""

PLACEMENT_POINTS: Final = (PLACEMENT_GENERATE, PLACEMENT_SCORE)
"""Pod-group points (v1.35+): TopologyPlacementGenerator and PodGroupPodsCount implement them (alpha gates)."""

PLUGIN_SETS: Final = (*EXTENSION_POINTS, MULTI_POINT, *PLACEMENT_POINTS)
"""Every plugin set of a profile in v1.Plugins' field order: the order a rendered configuration prints."""

ALL_POINTS: Final = (MULTI_POINT, *EXTENSION_POINTS, *PLACEMENT_POINTS)
"""Every plugin set of a profile, multiPoint first: the order defaulting merges and names are first seen in."""

BUILD_ORDER: Final = (
    PRE_FILTER,
    FILTER,
    POST_FILTER,
    RESERVE,
    PRE_SCORE,
    SCORE,
    PRE_BIND,
    BIND,
    POST_BIND,
    PERMIT,
    PRE_ENQUEUE,
    QUEUE_SORT,
)
"""The order upstream's framework builds the cycle points in (getExtensionPoints): a configuration error
is reported for the first point that has one."""

FRAMEWORK_POINT_ORDER: Final = (*BUILD_ORDER, *PLACEMENT_POINTS)
"""BUILD_ORDER, then the pod-group points, as upstream's framework checks them."""
