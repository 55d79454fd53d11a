"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) and plugin args as pydantic models.

Field names are the API's own camelCase, so a config file reads one-to-one. Each
field also records the Go type upstream decodes it into (`Go`), so decode.py can
check a document the way kube-scheduler's strict decoder does and say so in its
words; a model's `go_type` names the Go struct for the same messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kubesched.config import names as n

API_VERSION = "kubescheduler.config.k8s.io/v1"
GROUP = "kubescheduler.config.k8s.io"
KIND = "KubeSchedulerConfiguration"


@dataclass(frozen=True)
class Go:
    """The Go type a field decodes into: int32, int64, float32, string, bool, duration, bytes, raw,
    or a named string type ("v1.ScoringStrategyType")."""

    type: str


@dataclass(frozen=True)
class GoStruct:
    """A field kept as plain data (a core/v1 object plugins read as dicts), decoded as `model`."""

    model: type[BaseModel]


Int32 = Annotated[int, Go("int32")]
Int64 = Annotated[int, Go("int64")]
Float32 = Annotated[float, Go("float32")]
Duration = Annotated[str, Go("duration")]
Bytes = Annotated[str, Go("bytes")]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)
    go_type: ClassVar[str] = ""
    go_embedded: ClassVar[dict[str, str]] = {}  # field -> the embedded Go struct that declares it
    go_always: ClassVar[frozenset[str]] = frozenset()  # serialised even when empty (no `omitempty`)


class Plugin(_Model):
    go_type = "v1.Plugin"
    name: str = ""
    weight: Int32 | None = None


class PluginSet(_Model):
    go_type = "v1.PluginSet"
    enabled: list[Plugin] = Field(default_factory=list)
    disabled: list[Plugin] = Field(default_factory=list)


class Plugins(_Model):
    go_type = "v1.Plugins"
    preEnqueue: PluginSet = Field(default_factory=PluginSet)
    queueSort: PluginSet = Field(default_factory=PluginSet)
    preFilter: PluginSet = Field(default_factory=PluginSet)
    filter: PluginSet = Field(default_factory=PluginSet)
    postFilter: PluginSet = Field(default_factory=PluginSet)
    preScore: PluginSet = Field(default_factory=PluginSet)
    score: PluginSet = Field(default_factory=PluginSet)
    reserve: PluginSet = Field(default_factory=PluginSet)
    permit: PluginSet = Field(default_factory=PluginSet)
    preBind: PluginSet = Field(default_factory=PluginSet)
    bind: PluginSet = Field(default_factory=PluginSet)
    postBind: PluginSet = Field(default_factory=PluginSet)
    multiPoint: PluginSet = Field(default_factory=PluginSet)
    placementGenerate: PluginSet = Field(default_factory=PluginSet)
    placementScore: PluginSet = Field(default_factory=PluginSet)


class PluginConfig(_Model):
    go_type = "v1.PluginConfig"
    name: str = ""
    args: Annotated[Any, Go("raw")] = None


class KubeSchedulerProfile(_Model):
    go_type = "v1.KubeSchedulerProfile"
    schedulerName: str | None = None
    percentageOfNodesToScore: Int32 | None = None
    plugins: Plugins | None = None
    pluginConfig: list[PluginConfig] = Field(default_factory=list)


class LeaderElectionConfiguration(_Model):
    go_type = "v1alpha1.LeaderElectionConfiguration"
    leaderElect: bool = True
    leaseDuration: Duration = "15s"
    renewDeadline: Duration = "10s"
    retryPeriod: Duration = "2s"
    resourceLock: str = "leases"
    resourceName: str = "kube-scheduler"
    resourceNamespace: str = "kube-system"


class ClientConnectionConfiguration(_Model):
    go_type = "v1alpha1.ClientConnectionConfiguration"
    kubeconfig: str = ""
    acceptContentTypes: str = ""
    contentType: str = "application/vnd.kubernetes.protobuf"
    qps: Float32 = 50
    burst: Int32 = 100


class ExtenderManagedResource(_Model):
    go_type = "v1.ExtenderManagedResource"
    go_always = frozenset({"name"})
    name: str = ""
    ignoredByScheduler: bool = False


class ExtenderTLSConfig(_Model):
    go_type = "v1.ExtenderTLSConfig"
    insecure: bool = False
    serverName: str = ""
    certFile: str = ""
    keyFile: str = ""
    caFile: str = ""
    certData: Bytes = ""
    keyData: Bytes = ""
    caData: Bytes = ""


class Extender(_Model):
    go_type = "v1.Extender"
    go_always = frozenset({"urlPrefix", "httpTimeout"})
    urlPrefix: str = ""
    filterVerb: str = ""
    preemptVerb: str = ""
    prioritizeVerb: str = ""
    weight: Int64 = 0
    bindVerb: str = ""
    enableHTTPS: bool = False
    tlsConfig: ExtenderTLSConfig | None = None
    httpTimeout: Duration = "0s"  # zero: the extender client's own 5s
    nodeCacheCapable: bool = False
    managedResources: list[ExtenderManagedResource] = Field(default_factory=list)
    ignorable: bool = False


class KubeSchedulerConfiguration(_Model):
    go_type = "v1.KubeSchedulerConfiguration"
    go_embedded = {"enableProfiling": "DebuggingConfiguration", "enableContentionProfiling": "DebuggingConfiguration"}
    apiVersion: str = API_VERSION
    kind: str = KIND
    parallelism: Int32 = 16
    leaderElection: LeaderElectionConfiguration = Field(default_factory=LeaderElectionConfiguration)
    clientConnection: ClientConnectionConfiguration = Field(default_factory=ClientConnectionConfiguration)
    enableProfiling: bool | None = None
    enableContentionProfiling: bool | None = None
    percentageOfNodesToScore: Int32 | None = None
    podInitialBackoffSeconds: Int64 = 1
    podMaxBackoffSeconds: Int64 = 10
    profiles: list[KubeSchedulerProfile] = Field(default_factory=list)
    extenders: list[Extender] = Field(default_factory=list)
    delayCacheUntilActive: bool = False


# core/v1 objects inside plugin args. Plugins read them as plain dicts; these models only
# describe them for decoding (unknown fields, types).


class NodeSelectorRequirement(_Model):
    go_type = "v1.NodeSelectorRequirement"
    go_always = frozenset({"key", "operator"})
    key: str = ""
    operator: Annotated[str, Go("v1.NodeSelectorOperator")] = ""
    values: list[str] = Field(default_factory=list)


class NodeSelectorTerm(_Model):
    go_type = "v1.NodeSelectorTerm"
    matchExpressions: list[NodeSelectorRequirement] = Field(default_factory=list)
    matchFields: list[NodeSelectorRequirement] = Field(default_factory=list)


class NodeSelector(_Model):
    go_type = "v1.NodeSelector"
    go_always = frozenset({"nodeSelectorTerms"})
    nodeSelectorTerms: list[NodeSelectorTerm] = Field(default_factory=list)


class PreferredSchedulingTerm(_Model):
    go_type = "v1.PreferredSchedulingTerm"
    go_always = frozenset({"weight", "preference"})
    weight: Int32 = 0
    preference: NodeSelectorTerm = Field(default_factory=NodeSelectorTerm)


class NodeAffinity(_Model):
    go_type = "v1.NodeAffinity"
    requiredDuringSchedulingIgnoredDuringExecution: NodeSelector | None = None
    preferredDuringSchedulingIgnoredDuringExecution: list[PreferredSchedulingTerm] = Field(default_factory=list)


class LabelSelectorRequirement(_Model):
    go_type = "v1.LabelSelectorRequirement"
    go_always = frozenset({"key", "operator"})
    key: str = ""
    operator: Annotated[str, Go("v1.LabelSelectorOperator")] = ""
    values: list[str] = Field(default_factory=list)


class LabelSelector(_Model):
    go_type = "v1.LabelSelector"
    matchLabels: Annotated[dict[str, str], Go("map[string]string")] = Field(default_factory=dict)
    matchExpressions: list[LabelSelectorRequirement] = Field(default_factory=list)


class TopologySpreadConstraint(_Model):
    go_type = "v1.TopologySpreadConstraint"
    go_always = frozenset({"maxSkew", "topologyKey", "whenUnsatisfiable"})
    maxSkew: Int32 = 0
    topologyKey: str = ""
    whenUnsatisfiable: Annotated[str, Go("v1.UnsatisfiableConstraintAction")] = ""
    labelSelector: LabelSelector | None = None
    minDomains: Int32 | None = None
    nodeAffinityPolicy: Annotated[str, Go("v1.NodeInclusionPolicy")] | None = None
    nodeTaintsPolicy: Annotated[str, Go("v1.NodeInclusionPolicy")] | None = None
    matchLabelKeys: list[str] = Field(default_factory=list)


# Plugin args (config/v1/types_pluginargs.go). `kind`/`apiVersion` may appear inside args.


class _Args(_Model):
    kind: str | None = None
    apiVersion: str | None = None


class ResourceSpec(_Model):
    go_type = "v1.ResourceSpec"
    go_always = frozenset({"name"})
    name: str = ""
    weight: Int64 = 0


class UtilizationShapePoint(_Model):
    go_type = "v1.UtilizationShapePoint"
    go_always = frozenset({"utilization", "score"})
    utilization: Int32 = 0
    score: Int32 = 0


class RequestedToCapacityRatioParam(_Model):
    go_type = "v1.RequestedToCapacityRatioParam"
    shape: list[UtilizationShapePoint] = Field(default_factory=list)


class ScoringStrategy(_Model):
    go_type = "v1.ScoringStrategy"
    type: Annotated[str, Go("v1.ScoringStrategyType")] = ""
    resources: list[ResourceSpec] = Field(default_factory=list)
    requestedToCapacityRatio: RequestedToCapacityRatioParam | None = None


class NodeResourcesFitArgs(_Args):
    go_type = "v1.NodeResourcesFitArgs"
    ignoredResources: list[str] = Field(default_factory=list)
    ignoredResourceGroups: list[str] = Field(default_factory=list)
    scoringStrategy: ScoringStrategy | None = None


class NodeResourcesBalancedAllocationArgs(_Args):
    go_type = "v1.NodeResourcesBalancedAllocationArgs"
    resources: list[ResourceSpec] = Field(default_factory=list)


class PodTopologySpreadArgs(_Args):
    go_type = "v1.PodTopologySpreadArgs"
    defaultConstraints: Annotated[list[dict[str, Any]], GoStruct(TopologySpreadConstraint)] = Field(
        default_factory=list
    )
    defaultingType: Annotated[str, Go("v1.PodTopologySpreadConstraintsDefaulting")] = ""


class InterPodAffinityArgs(_Args):
    go_type = "v1.InterPodAffinityArgs"
    go_always = frozenset({"ignorePreferredTermsOfExistingPods"})
    hardPodAffinityWeight: Int32 | None = None
    ignorePreferredTermsOfExistingPods: bool = False


class NodeAffinityArgs(_Args):
    go_type = "v1.NodeAffinityArgs"
    addedAffinity: Annotated[dict[str, Any] | None, GoStruct(NodeAffinity)] = None


class DefaultPreemptionArgs(_Args):
    go_type = "v1.DefaultPreemptionArgs"
    minCandidateNodesPercentage: Int32 | None = None
    minCandidateNodesAbsolute: Int32 | None = None


class VolumeBindingArgs(_Args):
    go_type = "v1.VolumeBindingArgs"
    bindTimeoutSeconds: Int64 | None = None
    shape: list[UtilizationShapePoint] | None = None


class DynamicResourcesArgs(_Args):
    go_type = "v1.DynamicResourcesArgs"
    go_always = frozenset({"filterTimeout"})
    filterTimeout: Duration | None = None
    bindingTimeout: Duration | None = None


class NodeLabelArgs(_Args):
    presentLabels: list[str] = Field(default_factory=list)
    absentLabels: list[str] = Field(default_factory=list)
    presentLabelsPreference: list[str] = Field(default_factory=list)
    absentLabelsPreference: list[str] = Field(default_factory=list)


class ServiceAffinityArgs(_Args):
    affinityLabels: list[str] = Field(default_factory=list)
    antiAffinityLabelsPreference: list[str] = Field(default_factory=list)


class NodeResourcesLeastAllocatedArgs(_Args):
    resources: list[ResourceSpec] = Field(default_factory=list)


class NodeResourcesMostAllocatedArgs(_Args):
    resources: list[ResourceSpec] = Field(default_factory=list)


class RequestedToCapacityRatioArgs(_Args):
    shape: list[UtilizationShapePoint] = Field(default_factory=list)
    resources: list[ResourceSpec] = Field(default_factory=list)


ARGS_TYPES: dict[str, type[_Args]] = {
    n.NODE_RESOURCES_FIT: NodeResourcesFitArgs,
    n.NODE_RESOURCES_BALANCED_ALLOCATION: NodeResourcesBalancedAllocationArgs,
    n.POD_TOPOLOGY_SPREAD: PodTopologySpreadArgs,
    n.INTER_POD_AFFINITY: InterPodAffinityArgs,
    n.NODE_AFFINITY: NodeAffinityArgs,
    n.DEFAULT_PREEMPTION: DefaultPreemptionArgs,
    n.VOLUME_BINDING: VolumeBindingArgs,
    n.DYNAMIC_RESOURCES: DynamicResourcesArgs,
}
"""The args kinds registered in v1 (<Name>Args): decoded, defaulted and validated."""

# Args of plugins upstream removed: only a translated Policy or algorithm provider configures them.
LEGACY_ARGS_TYPES: dict[str, type[_Args]] = {
    n.NODE_LABEL: NodeLabelArgs,
    n.SERVICE_AFFINITY: ServiceAffinityArgs,
    n.NODE_RESOURCES_LEAST_ALLOCATED: NodeResourcesLeastAllocatedArgs,
    n.NODE_RESOURCES_MOST_ALLOCATED: NodeResourcesMostAllocatedArgs,
    n.REQUESTED_TO_CAPACITY_RATIO: RequestedToCapacityRatioArgs,
}
