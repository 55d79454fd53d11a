"""Upstream defaults for KubeSchedulerConfiguration v1 (pkg/scheduler/apis/config/v1)."""

from __future__ import annotations

from kubesched.config.types import (
    ARGS_TYPES,
    EXTENSION_POINTS,
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

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0

# default_plugins.go, v1.36 with its default gates: one multiPoint list; order here is the order within every point.
DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),  # DynamicResourceAllocation (GA); a Score plugin since v1.35
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
    ("NodeDeclaredFeatures", None),  # appended by its feature gate (beta, on in v1.36)
)


def default_plugins() -> Plugins:
    return Plugins(multiPoint=PluginSet(enabled=[Plugin(name=n, weight=w) for n, w in DEFAULT_MULTI_POINT]))


def default_resources() -> list[ResourceSpec]:
    return [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]


def _merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """mergePluginSet: disabled (or `*`) drops defaults, a same-named custom entry replaces in place."""
    disabled = {p.name for p in custom.disabled}
    custom_by_name = {p.name: (i, p) for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[Plugin] = []
    if "*" not in disabled:
        for p in default.enabled:
            if p.name in disabled:
                continue
            if p.name in custom_by_name:
                i, p = custom_by_name[p.name]
                replaced.add(i)
            enabled.append(p)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled=enabled, disabled=list(custom.disabled))


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    if custom is None:
        return default
    return Plugins(
        **{
            point: _merge_plugin_set(getattr(default, point), getattr(custom, point))
            for point in (*EXTENSION_POINTS, "multiPoint")
        }
    )


def default_args(name: str, args: _Args | None) -> _Args | None:
    """SetDefaults_<Kind>Args for in-tree plugins; None for plugins without args."""
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
        args.filterTimeout = args.filterTimeout or "10s"
    return args


def enabled_plugin_names(plugins: Plugins) -> list[str]:
    seen: dict[str, None] = {}
    for point in ("multiPoint", *EXTENSION_POINTS):
        for p in getattr(plugins, point).enabled:
            seen.setdefault(p.name, None)
    return list(seen)


def set_defaults_profile(profile: KubeSchedulerProfile) -> None:
    profile.plugins = merge_plugins(default_plugins(), profile.plugins)
    configured = {pc.name for pc in profile.pluginConfig}
    for name in enabled_plugin_names(profile.plugins):
        if name in ARGS_TYPES and name not in configured:
            profile.pluginConfig.append(PluginConfig(name=name, args=None))


def set_defaults(cfg: KubeSchedulerConfiguration) -> None:
    if not cfg.profiles:
        cfg.profiles.append(KubeSchedulerProfile())
    if len(cfg.profiles) == 1 and cfg.profiles[0].schedulerName is None:
        cfg.profiles[0].schedulerName = DEFAULT_SCHEDULER_NAME
    if cfg.percentageOfNodesToScore is None:
        cfg.percentageOfNodesToScore = DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE
    for prof in cfg.profiles:
        set_defaults_profile(prof)
