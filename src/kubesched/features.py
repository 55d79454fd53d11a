"""v1.36's feature gates as `kube-scheduler --feature-gates` takes them, and the gates kubesched acts on.

kube-scheduler knows every Kubernetes gate (the flag lists them all) but most change
nothing in a scheduler. The names and defaults below are the flag's own list, so a gate
the real binary accepts is accepted here (and an unknown one only warned about, as
v1.36 does); `DEPENDENCIES` is kube_features.go's table for the gates kubesched reads,
checked the way the binary checks it at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

GENERIC_WORKLOAD: Final = "GenericWorkload"
GANG_SCHEDULING: Final = "GangScheduling"
TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: Final = "TopologyAwareWorkloadScheduling"
WORKLOAD_AWARE_PREEMPTION: Final = "WorkloadAwarePreemption"
WORKLOAD_WITH_JOB: Final = "WorkloadWithJob"
DRA_WORKLOAD_RESOURCE_CLAIMS: Final = "DRAWorkloadResourceClaims"
DYNAMIC_RESOURCE_ALLOCATION: Final = "DynamicResourceAllocation"

WORKLOAD_GATES: Final = (
    GENERIC_WORKLOAD,
    GANG_SCHEDULING,
    TOPOLOGY_AWARE_WORKLOAD_SCHEDULING,
    WORKLOAD_AWARE_PREEMPTION,
    WORKLOAD_WITH_JOB,
    DRA_WORKLOAD_RESOURCE_CLAIMS,
)
"""The alpha gates of workload-aware scheduling (all off by default in v1.36)."""

_ON_BY_DEFAULT: Final = (
    "APIResponseCompression",
    "APIServerIdentity",
    "AllowParsingUserUIDFromCertAuth",
    "AtomicFIFO",
    "AuthorizePodWebsocketUpgradeCreatePermission",
    "CPUManagerPolicyBetaOptions",
    "CRDObservedGenerationTracking",
    "ClearingNominatedNodeNameAfterBinding",
    "ClientsAllowCARotation",
    "ClientsAllowTLSCacheGC",
    "ComponentFlagz",
    "ComponentStatusz",
    "ConstrainedImpersonation",
    "ContainerCheckpoint",
    "ContainerRestartRules",
    "ContextualLogging",
    "DRAConsumableCapacity",
    "DRADeviceBindingConditions",
    "DRADeviceTaints",
    "DRAExtendedResource",
    "DRAPartitionableDevices",
    "DRAResourceClaimDeviceStatus",
    "DRAResourceClaimGranularStatusAuthorization",
    "DRASchedulerFilterTimeout",
    "DeclarativeValidationBeta",
    "DeploymentReplicaSetTerminatingReplicas",
    "DetectCacheInconsistency",
    "EnvFiles",
    "ExtendWebSocketsToKubelet",
    "GracefulNodeShutdown",
    "GracefulNodeShutdownBasedOnPodPriority",
    "HPAConfigurableTolerance",
    "HostnameOverride",
    "InOrderInformersBatchProcess",
    "InPlacePodLevelResourcesVerticalScaling",
    "InPlacePodVerticalScalingInitContainers",
    "KubeletCrashLoopBackOffMax",
    "KubeletEnsureSecretPulledImages",
    "KubeletSeparateDiskGC",
    "KubeletServiceAccountTokenForCredentialProviders",
    "ListFromCacheSnapshot",
    "LoggingBetaOptions",
    "MatchLabelKeysInPodTopologySpread",
    "MatchLabelKeysInPodTopologySpreadSelectorMerge",
    "MutablePodResourcesForSuspendedJobs",
    "MutableSchedulingDirectivesForSuspendedJobs",
    "NodeDeclaredFeatures",
    "NominatedNodeNameForExpectation",
    "OpenAPIEnums",
    "OpportunisticBatching",
    "PLEGOnDemandRelist",
    "PodDeletionCost",
    "PodLevelResources",
    "PodReadyToStartContainersCondition",
    "PodTopologyLabelsAdmission",
    "PortForwardWebsockets",
    "PreventStaticPodAPIReferences",
    "RelaxedServiceNameValidation",
    "ReloadKubeletClientCAFile",
    "ReloadKubeletServerCertificateFile",
    "RemoteRequestHeaderUID",
    "ResourceHealthStatus",
    "ResourceHealthStatusMessage",
    "RestartAllContainersOnContainerExits",
    "RotateKubeletServerCertificate",
    "SchedulerAsyncPreemption",
    "SchedulerPopFromBackoffQ",
    "ServiceAccountNodeAudienceRestriction",
    "SizeBasedListCostEstimate",
    "StaleControllerConsistencyDaemonSet",
    "StaleControllerConsistencyJob",
    "StaleControllerConsistencyReplicaSet",
    "StaleControllerConsistencyStatefulSet",
    "StatefulSetSemanticRevisionComparison",
    "StorageVersionHash",
    "StrictIPCIDRValidation",
    "StructuredAuthenticationConfigurationEgressSelector",
    "StructuredAuthenticationConfigurationJWKSMetrics",
    "TokenRequestServiceAccountUIDValidation",
    "TopologyManagerPolicyBetaOptions",
    "TranslateStreamCloseWebsocketRequests",
    "UnauthenticatedHTTP2DOSMitigation",
    "UnknownVersionInteroperabilityProxy",
    "UnlockWhileProcessingFIFO",
    "WatchCacheInitializationPostStartHook",
    "WatchList",
    "WatchListClient",
    "WindowsGracefulNodeShutdown",
)
_OFF_BY_DEFAULT: Final = (
    "APIServingWithRoutine",
    "AllAlpha",
    "AllBeta",
    "AllowUnsafeMalformedObjectDeletion",
    "CBORServingAndStorage",
    "CPUManagerPolicyAlphaOptions",
    "CRIListStreaming",
    "CSIVolumeHealth",
    "ClientsAllowCBOR",
    "ClientsPreferCBOR",
    "CloudControllerManagerWatchBasedRoutesReconciliation",
    "CloudControllerManagerWebhook",
    "ClusterTrustBundle",
    "ClusterTrustBundleProjection",
    "ConcurrentWatchObjectDecode",
    "ContainerStopSignals",
    "CoordinatedLeaderElection",
    "CrossNamespaceVolumeDataSource",
    "DRADeviceTaintRules",
    "DRAListTypeAttributes",
    "DRANodeAllocatableResources",
    "DRAResourcePoolStatus",
    "DRAWorkloadResourceClaims",
    "EventedPLEG",
    "GangScheduling",
    "GenericWorkload",
    "HPAScaleToZero",
    "ImageVolumeWithDigest",
    "InPlacePodVerticalScalingExclusiveCPUs",
    "InPlacePodVerticalScalingExclusiveMemory",
    "KubeletInUserNamespace",
    "LocalStorageCapacityIsolationFSQuotaMonitoring",
    "LoggingAlphaOptions",
    "ManifestBasedAdmissionControlConfig",
    "MaxUnavailableStatefulSet",
    "MemoryQoS",
    "MinimumKubeletVersion",
    "MutablePVNodeAffinity",
    "NativeHistograms",
    "PersistentVolumeClaimUnusedSinceTime",
    "PodAndContainerStatsFromCRI",
    "PodCertificateRequest",
    "PodLevelResourceManagers",
    "PodLogsQuerySplitStreams",
    "PodsAPI",
    "QOSReserved",
    "ReduceDefaultCrashLoopBackOffDecay",
    "RouteExternalCertificate",
    "RuntimeClassInImageCriApi",
    "SELinuxMount",
    "SELinuxMountGAReadiness",
    "SchedulerAsyncAPICalls",
    "ShardedListAndWatch",
    "StorageCapacityScoring",
    "StoragePerformantSecurityPolicy",
    "StorageVersionAPI",
    "StorageVersionMigrator",
    "TaintTolerationComparisonOperators",
    "TopologyAwareWorkloadScheduling",
    "TopologyManagerPolicyAlphaOptions",
    "UserNamespacesHostNetworkSupport",
    "VolumeLimitScaling",
    "WindowsCPUAndMemoryAffinity",
    "WorkloadAwarePreemption",
    "WorkloadWithJob",
)
LOCKED_ON: Final = frozenset({DYNAMIC_RESOURCE_ALLOCATION})
"""GA gates locked to true that the gates above depend on (the flag's list leaves GA gates out)."""
DEFAULTS: Final[Mapping[str, bool]] = MappingProxyType(
    {
        **dict.fromkeys(_ON_BY_DEFAULT, True),
        **dict.fromkeys(_OFF_BY_DEFAULT, False),
        **dict.fromkeys(LOCKED_ON, True),
    }
)
"""Every gate `kube-scheduler --help` lists for v1.36, at its default, and the locked ones above."""

DEPENDENCIES: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        GANG_SCHEDULING: (GENERIC_WORKLOAD,),
        TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: (GENERIC_WORKLOAD,),
        WORKLOAD_AWARE_PREEMPTION: (GANG_SCHEDULING,),
        WORKLOAD_WITH_JOB: (GENERIC_WORKLOAD,),
        DRA_WORKLOAD_RESOURCE_CLAIMS: (DYNAMIC_RESOURCE_ALLOCATION, GENERIC_WORKLOAD),
    }
)
"""A gate on needs these on too (kube_features.go's dependency table, for the gates above)."""


class FeatureGateError(ValueError):
    """A `--feature-gates` value the binary refuses; the text is the binary's."""


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """The gates a scheduler runs with: v1.36's defaults overridden by what was set."""

    overrides: Mapping[str, bool] = field(default_factory=dict)

    def enabled(self, name: str) -> bool:
        """Whether gate `name` is on; a gate v1.36 does not know is off."""
        value = self.overrides.get(name)
        return DEFAULTS.get(name, False) if value is None else value

    @property
    def workload_aware(self) -> bool:
        """GenericWorkload: PodGroups exist, pods name their group, the queue schedules groups."""
        return self.enabled(GENERIC_WORKLOAD)

    def text(self) -> str:
        """The overrides as the flag takes them, sorted (empty at the defaults)."""
        return ",".join(f"{k}={str(v).lower()}" for k, v in sorted(self.overrides.items()))


DEFAULT_GATES: Final = FeatureGates()


def parse_feature_gates(text: str | Mapping[str, bool], warnings: list[str] | None = None) -> FeatureGates:
    """`A=true,B=false` (optionally `kube:`-prefixed, consistently) or a mapping, checked as the binary checks it.

    Unknown gates are dropped with a warning in `warnings`, as v1.36 only warns about them.
    """
    items: dict[str, bool] = {}
    if isinstance(text, str):
        pairs = [p.strip() for p in text.split(",") if p.strip()]
        prefixed = {p.startswith("kube:") for p in pairs}
        if len(prefixed) > 1:
            raise FeatureGateError(
                "set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use"
            )
        for pair in pairs:
            key, sep, value = pair.removeprefix("kube:").partition("=")
            key = key.strip()
            if not sep:
                raise FeatureGateError(f"missing bool value for {key}")
            parsed = _bool(value.strip())
            if parsed is None:
                raise FeatureGateError(
                    f'invalid value of {key}={value.strip()}, err: strconv.ParseBool: parsing "{value.strip()}": '
                    "invalid syntax"
                )
            items[key] = parsed
    else:
        for name, given in text.items():
            if not isinstance(given, bool):
                raise FeatureGateError(f"invalid value of {name}={given}: want true or false")
            items[str(name)] = given
    known: dict[str, bool] = {}
    for name, on in items.items():
        if name in LOCKED_ON and not on:
            raise FeatureGateError(f"cannot set feature gate {name} to false, feature is locked to true")
        if name in DEFAULTS:
            known[name] = on
        elif warnings is not None:
            warnings.append(f"unrecognized feature gate: {name}")
    gates = FeatureGates(MappingProxyType(known))
    for gate, needs in DEPENDENCIES.items():
        missing = [n for n in needs if not gates.enabled(n)]
        if gates.enabled(gate) and missing:
            raise FeatureGateError(
                f"{gate} is enabled, but depends on features that are disabled: [{' '.join(missing)}]"
            )
    return gates


def _bool(text: str) -> bool | None:
    """Go's strconv.ParseBool."""
    if text in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if text in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    return None
