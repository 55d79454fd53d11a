"""Upstream defaults for KubeSchedulerConfiguration v1 (pkg/scheduler/apis/config/v1), v1.36 default gates.

Gates that matter here, at their v1.36 defaults: NodeDeclaredFeatures (on: the plugin
joins the default set), DynamicResourceAllocation (on: DynamicResources, weight 2),
DRASchedulerFilterTimeout (on: filterTimeout 10s), DRADeviceBindingConditions and
DRAResourceClaimDeviceStatus (on: bindingTimeout 10m), StorageCapacityScoring (off:
VolumeBinding gets no shape), GangScheduling and TopologyAwareWorkloadScheduling
(off: their plugins stay out of the default set unless the release's gates turn them on).
Another release (`kubesched.release`) changes the default plugin list and DynamicResources'
defaults as that release's binary does.
"""

from __future__ import annotations

from kubesched.config import names as n
from kubesched.config.goduration import parse_go_duration
from kubesched.config.types import (
    ARGS_TYPES,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    VolumeBindingArgs,
    _Args,
)
from kubesched.release import (
    DEFAULT,
    GANG_SCHEDULING,
    NODE_DECLARED_FEATURES_GATE,
    TOPOLOGY_AWARE_WORKLOAD_SCHEDULING,
    Release,
)

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0
DYNAMIC_RESOURCES_FILTER_TIMEOUT = "10s"
DYNAMIC_RESOURCES_BINDING_TIMEOUT = "10m0s"

# default_plugins.go, v1.36 with its default gates: one multiPoint list; order here is the order within every point.
DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = (
    (n.SCHEDULING_GATES, None),
    (n.PRIORITY_SORT, None),
    (n.NODE_UNSCHEDULABLE, None),
    (n.NODE_NAME, None),
    (n.TAINT_TOLERATION, 3),
    (n.NODE_AFFINITY, 2),
    (n.NODE_PORTS, None),
    (n.NODE_RESOURCES_FIT, 1),
    (n.VOLUME_RESTRICTIONS, None),
    (n.NODE_VOLUME_LIMITS, None),
    (n.VOLUME_BINDING, None),
    (n.VOLUME_ZONE, None),
    (n.POD_TOPOLOGY_SPREAD, 2),
    (n.INTER_POD_AFFINITY, 2),
    (n.DYNAMIC_RESOURCES, 2),  # DynamicResourceAllocation (GA); a Score plugin since v1.35
    (n.DEFAULT_PREEMPTION, None),
    (n.NODE_RESOURCES_BALANCED_ALLOCATION, 1),
    (n.IMAGE_LOCALITY, 1),
    (n.DEFAULT_BINDER, None),
    (n.NODE_DECLARED_FEATURES, None),  # appended by its feature gate (beta, on in v1.36)
)


def default_multi_point(release: Release = DEFAULT) -> list[tuple[str, int | None]]:
    """getDefaultPlugins of `release` with its gates: DynamicResources' weight, NodeDeclaredFeatures by its gate."""
    out: list[tuple[str, int | None]] = []
    for name, weight in DEFAULT_MULTI_POINT:
        if name == n.DYNAMIC_RESOURCES:
            weight = release.dynamic_resources_weight
        elif name == n.NODE_DECLARED_FEATURES and not (
            release.has_node_declared_features and release.enabled(NODE_DECLARED_FEATURES_GATE)
        ):
            continue
        out.append((name, weight))
    if release.workload_aware_supported:
        for gate, plugins in GATED_MULTI_POINT:
            if release.enabled(gate):
                out.extend(plugins)
    return out


# Appended, in this order, when their gates are on (applyFeatureGates in v1.36's default_plugins.go).
GATED_MULTI_POINT: tuple[tuple[str, tuple[tuple[str, int | None], ...]], ...] = (
    (GANG_SCHEDULING, ((n.GANG_SCHEDULING, None),)),
    (TOPOLOGY_AWARE_WORKLOAD_SCHEDULING, ((n.TOPOLOGY_PLACEMENT_GENERATOR, None), (n.POD_GROUP_PODS_COUNT, 1))),
)


def default_plugins(release: Release = DEFAULT) -> Plugins:
    return Plugins(
        multiPoint=PluginSet(enabled=[Plugin(name=name, weight=w) for name, w in default_multi_point(release)])
    )


def default_resources() -> list[ResourceSpec]:
    return [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]


def _merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """mergePluginSet: disabled (or `*`) drops defaults, a same-named custom entry replaces in place.

    Disabled entries keep only their names; duplicated custom entries all stay, for the
    framework to refuse.
    """
    disabled = [Plugin(name=p.name) for p in (*custom.disabled, *default.disabled)]
    disabled_names = {p.name for p in disabled}
    custom_by_name = {p.name: (i, p) for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[Plugin] = []
    if "*" not in disabled_names:
        for p in default.enabled:
            if p.name in disabled_names:
                continue
            if p.name in custom_by_name:
                i, p = custom_by_name[p.name]
                replaced.add(i)
            enabled.append(p.model_copy())
    enabled.extend(p.model_copy() for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled=enabled, disabled=disabled)


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    if custom is None:
        return default
    return Plugins(
        **{point: _merge_plugin_set(getattr(default, point), getattr(custom, point)) for point in n.ALL_POINTS}
    )


def default_args(name: str, args: _Args | None, release: Release = DEFAULT) -> _Args | None:
    """SetDefaults_<Kind>Args for in-tree plugins (of `release`); None for plugins without args."""
    kind = ARGS_TYPES.get(name)
    if kind is None:
        return args
    args = args if args is not None else kind()
    if isinstance(args, NodeResourcesFitArgs):
        if args.scoringStrategy is None:
            args.scoringStrategy = ScoringStrategy(type="LeastAllocated", resources=default_resources())
        if not args.scoringStrategy.resources:
            args.scoringStrategy.resources = default_resources()
        for r in args.scoringStrategy.resources:
            r.weight = r.weight or 1
    elif isinstance(args, NodeResourcesBalancedAllocationArgs):
        if not args.resources:
            args.resources = default_resources()
        for r in args.resources:
            r.weight = r.weight or 1
    elif isinstance(args, PodTopologySpreadArgs):
        args.defaultingType = args.defaultingType or "System"
    elif isinstance(args, InterPodAffinityArgs):
        if args.hardPodAffinityWeight is None:
            args.hardPodAffinityWeight = 1
    elif isinstance(args, DefaultPreemptionArgs):
        if args.minCandidateNodesPercentage is None:
            args.minCandidateNodesPercentage = 10
        if args.minCandidateNodesAbsolute is None:
            args.minCandidateNodesAbsolute = 100
    elif isinstance(args, VolumeBindingArgs):
        if args.bindTimeoutSeconds is None:
            args.bindTimeoutSeconds = 600
    elif isinstance(args, DynamicResourcesArgs):
        if args.filterTimeout is None:
            args.filterTimeout = DYNAMIC_RESOURCES_FILTER_TIMEOUT
        if args.bindingTimeout is None and release.dynamic_resources_binding_timeout_default:
            args.bindingTimeout = DYNAMIC_RESOURCES_BINDING_TIMEOUT
    return args


def enabled_plugin_names(plugins: Plugins) -> list[str]:
    """Every plugin some point enables, in first-seen order, multiPoint first."""
    seen: dict[str, None] = {}
    for point in n.ALL_POINTS:
        for p in getattr(plugins, point).enabled:
            seen.setdefault(p.name, None)
    return list(seen)


def set_defaults_profile(profile: KubeSchedulerProfile, release: Release = DEFAULT) -> None:
    """Merged plugins; then a default config for each enabled in-tree args kind not configured, by name."""
    profile.plugins = merge_plugins(default_plugins(release), profile.plugins)
    configured = {pc.name for pc in profile.pluginConfig}
    for name in sorted(enabled_plugin_names(profile.plugins)):
        if name in ARGS_TYPES and name not in configured:
            profile.pluginConfig.append(PluginConfig(name=name, args=None))


def set_defaults(cfg: KubeSchedulerConfiguration, release: Release = DEFAULT) -> None:
    """SetDefaults_KubeSchedulerConfiguration; zero durations and empty strings count as unset, as in Go."""
    if not cfg.profiles:
        cfg.profiles.append(KubeSchedulerProfile())
    if len(cfg.profiles) == 1 and cfg.profiles[0].schedulerName is None:
        cfg.profiles[0].schedulerName = DEFAULT_SCHEDULER_NAME
    for prof in cfg.profiles:
        set_defaults_profile(prof, release)
    if cfg.percentageOfNodesToScore is None:
        cfg.percentageOfNodesToScore = DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE
    le = cfg.leaderElection
    le.resourceLock = le.resourceLock or "leases"
    le.resourceNamespace = le.resourceNamespace or "kube-system"
    le.resourceName = le.resourceName or "kube-scheduler"
    for name, default in (("leaseDuration", "15s"), ("renewDeadline", "10s"), ("retryPeriod", "2s")):
        if parse_go_duration(getattr(le, name)) == 0:
            setattr(le, name, default)
    cc = cfg.clientConnection
    cc.contentType = cc.contentType or "application/vnd.kubernetes.protobuf"
    cc.qps = cc.qps or 50.0
    cc.burst = cc.burst or 100
    if cfg.enableProfiling is None:
        cfg.enableProfiling = True
    if cfg.enableContentionProfiling is None:
        cfg.enableContentionProfiling = cfg.enableProfiling
