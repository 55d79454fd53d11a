"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) and plugin args as pydantic models.

Field names are the API's own camelCase, so a config file reads one-to-one; unknown
fields are errors (the API server decodes scheduler config strictly).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


class Plugin(_Model):
    name: str
    weight: int | None = None


class PluginSet(_Model):
    enabled: list[Plugin] = Field(default_factory=list)
    disabled: list[Plugin] = Field(default_factory=list)


EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)


class Plugins(_Model):
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


class PluginConfig(_Model):
    name: str
    args: dict[str, Any] | None = None


class KubeSchedulerProfile(_Model):
    schedulerName: str | None = None
    percentageOfNodesToScore: int | None = None
    plugins: Plugins | None = None
    pluginConfig: list[PluginConfig] = Field(default_factory=list)


class LeaderElectionConfiguration(_Model):
    leaderElect: bool = True
    leaseDuration: str = "15s"
    renewDeadline: str = "10s"
    retryPeriod: str = "2s"
    resourceLock: str = "leases"
    resourceName: str = "kube-scheduler"
    resourceNamespace: str = "kube-system"


class ClientConnectionConfiguration(_Model):
    kubeconfig: str = ""
    acceptContentTypes: str = ""
    contentType: str = "application/vnd.kubernetes.protobuf"
    qps: float = 50
    burst: int = 100


class ExtenderManagedResource(_Model):
    name: str
    ignoredByScheduler: bool = False


class ExtenderTLSConfig(_Model):
    insecure: bool = False
    serverName: str = ""
    certFile: str = ""
    keyFile: str = ""
    caFile: str = ""
    certData: str = ""
    keyData: str = ""
    caData: str = ""


class Extender(_Model):
    urlPrefix: str
    filterVerb: str = ""
    preemptVerb: str = ""
    prioritizeVerb: str = ""
    weight: int = 0
    bindVerb: str = ""
    enableHTTPS: bool = False
    tlsConfig: ExtenderTLSConfig | None = None
    httpTimeout: str = "5s"
    nodeCacheCapable: bool = False
    managedResources: list[ExtenderManagedResource] = Field(default_factory=list)
    ignorable: bool = False


class KubeSchedulerConfiguration(_Model):
    apiVersion: str = API_VERSION
    kind: str = KIND
    parallelism: int = 16
    leaderElection: LeaderElectionConfiguration = Field(default_factory=LeaderElectionConfiguration)
    clientConnection: ClientConnectionConfiguration = Field(default_factory=ClientConnectionConfiguration)
    healthzBindAddress: str | None = None
    metricsBindAddress: str | None = None
    enableProfiling: bool = True
    enableContentionProfiling: bool = True
    percentageOfNodesToScore: int | None = 0
    podInitialBackoffSeconds: int = 1
    podMaxBackoffSeconds: int = 10
    profiles: list[KubeSchedulerProfile] = Field(default_factory=list)
    extenders: list[Extender] = Field(default_factory=list)
    delayCacheUntilActive: bool = False


# Plugin args (config/v1/types_pluginargs.go). `kind`/`apiVersion` may appear inside args.


class _Args(_Model):
    kind: str | None = None
    apiVersion: str | None = None


class ResourceSpec(_Model):
    name: str
    weight: int = 0


class UtilizationShapePoint(_Model):
    utilization: int
    score: int


class RequestedToCapacityRatioParam(_Model):
    shape: list[UtilizationShapePoint] = Field(default_factory=list)


class ScoringStrategy(_Model):
    type: str = "LeastAllocated"
    resources: list[ResourceSpec] = Field(default_factory=list)
    requestedToCapacityRatio: RequestedToCapacityRatioParam | None = None


class NodeResourcesFitArgs(_Args):
    ignoredResources: list[str] = Field(default_factory=list)
    ignoredResourceGroups: list[str] = Field(default_factory=list)
    scoringStrategy: ScoringStrategy | None = None


class NodeResourcesBalancedAllocationArgs(_Args):
    resources: list[ResourceSpec] = Field(default_factory=list)


class PodTopologySpreadArgs(_Args):
    defaultConstraints: list[dict[str, Any]] = Field(default_factory=list)
    defaultingType: str = ""


class InterPodAffinityArgs(_Args):
    hardPodAffinityWeight: int | None = None
    ignorePreferredTermsOfExistingPods: bool = False


class NodeAffinityArgs(_Args):
    addedAffinity: dict[str, Any] | None = None


class DefaultPreemptionArgs(_Args):
    minCandidateNodesPercentage: int | None = None
    minCandidateNodesAbsolute: int | None = None


class VolumeBindingArgs(_Args):
    bindTimeoutSeconds: int | None = None
    shape: list[UtilizationShapePoint] | None = None


class DynamicResourcesArgs(_Args):
    filterTimeout: str | None = None


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
    "NodeResourcesFit": NodeResourcesFitArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "PodTopologySpread": PodTopologySpreadArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "NodeAffinity": NodeAffinityArgs,
    "DefaultPreemption": DefaultPreemptionArgs,
    "VolumeBinding": VolumeBindingArgs,
    "DynamicResources": DynamicResourcesArgs,
}

# Args of plugins upstream removed: only a translated Policy or algorithm provider configures them.
LEGACY_ARGS_TYPES: dict[str, type[_Args]] = {
    "NodeLabel": NodeLabelArgs,
    "ServiceAffinity": ServiceAffinityArgs,
    "NodeResourcesLeastAllocated": NodeResourcesLeastAllocatedArgs,
    "NodeResourcesMostAllocated": NodeResourcesMostAllocatedArgs,
    "RequestedToCapacityRatio": RequestedToCapacityRatioArgs,
}
