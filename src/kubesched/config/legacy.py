"""The scheduler Policy (v1) and algorithm providers, translated to a profile as kube-scheduler 1.19-1.22 did.

A Policy names predicates and priorities; each maps to framework plugins at given
extension points (upstream's legacy_registry.go). Predicates run in upstream's fixed
order, priorities in name order, and a plugin named twice keeps its highest weight.
`--algorithm-provider` picks one of the two built-in plugin sets of the same releases.
The result is an ordinary SchedulerConfig; the removed plugins it may name
(SelectorSpread, NodeLabel, ServiceAffinity, ...) are built for exactly this path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, get_args, get_origin

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from kubesched.api.errors import FieldError
from kubesched.config import names as n
from kubesched.config.defaults import DEFAULT_SCHEDULER_NAME, default_args
from kubesched.config.load import ConfigError, SchedulerConfig, pydantic_errors
from kubesched.config.trust import TRUSTED
from kubesched.config.types import (
    ARGS_TYPES,
    Extender,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    InterPodAffinityArgs,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    NodeLabelArgs,
    Plugin,
    Plugins,
    PluginSet,
    PodTopologySpreadArgs,
    RequestedToCapacityRatioArgs,
    ResourceSpec,
    ServiceAffinityArgs,
    UtilizationShapePoint,
    _Args,
)
from kubesched.config.validation import validate_args, validate_configuration

POLICY_KIND: Final = "Policy"
POLICY_API_VERSION: Final = "v1"
DEFAULT_PROVIDER: Final = "DefaultProvider"
CLUSTER_AUTOSCALER_PROVIDER: Final = "ClusterAutoscalerProvider"
# Feature gates of those releases that change the translation; DefaultPodTopologySpread was beta, on.
FEATURE_GATES: Final = {"DefaultPodTopologySpread": True}
MAX_WEIGHT: Final = (2**63 - 1) // 100


# The Policy document. Go decoded it with encoding/json: field names match case-insensitively.


class _PolicyModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServiceAffinityArg(_PolicyModel):
    labels: list[str] = Field(default_factory=list)


class LabelsPresenceArg(_PolicyModel):
    labels: list[str] = Field(default_factory=list)
    presence: bool = False


class PredicateArgument(_PolicyModel):
    serviceAffinity: ServiceAffinityArg | None = None
    labelsPresence: LabelsPresenceArg | None = None


class PredicatePolicy(_PolicyModel):
    name: str
    argument: PredicateArgument | None = None


class ServiceAntiAffinityArg(_PolicyModel):
    label: str = ""


class LabelPreferenceArg(_PolicyModel):
    label: str = ""
    presence: bool = False


class RequestedToCapacityRatioArguments(_PolicyModel):
    shape: list[UtilizationShapePoint] = Field(default_factory=list)
    resources: list[ResourceSpec] = Field(default_factory=list)


class PriorityArgument(_PolicyModel):
    serviceAntiAffinity: ServiceAntiAffinityArg | None = None
    labelPreference: LabelPreferenceArg | None = None
    requestedToCapacityRatioArguments: RequestedToCapacityRatioArguments | None = None


class PriorityPolicy(_PolicyModel):
    name: str
    weight: int = 0
    argument: PriorityArgument | None = None


class LegacyExtender(_PolicyModel):
    urlPrefix: str
    filterVerb: str = ""
    preemptVerb: str = ""
    prioritizeVerb: str = ""
    weight: int = 0
    bindVerb: str = ""
    enableHttps: bool = False
    tlsConfig: ExtenderTLSConfig | None = None  # same fields as today's, base64 data included
    httpTimeout: int | str = 0  # Go's time.Duration: nanoseconds
    nodeCacheCapable: bool = False
    managedResources: list[ExtenderManagedResource] = Field(default_factory=list)
    ignorable: bool = False


class Policy(_PolicyModel):
    kind: str = POLICY_KIND
    apiVersion: str = POLICY_API_VERSION
    predicates: list[PredicatePolicy] | None = None
    priorities: list[PriorityPolicy] | None = None
    extenders: list[LegacyExtender] = Field(default_factory=list)
    hardPodAffinitySymmetricWeight: int = 0
    alwaysCheckAllPredicates: bool = False


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def fold_field_names(value: Any, model: type[BaseModel], path: str, warnings: list[str]) -> Any:
    """Rename keys to the model's spelling ignoring case, and drop (with a warning) keys Go would ignore."""
    if not isinstance(value, Mapping):
        return value
    fields = {name.lower(): (name, f.annotation) for name, f in model.model_fields.items()}
    out: dict[str, Any] = {}
    for key, item in value.items():
        hit = fields.get(str(key).lower())
        where = f"{path}.{key}" if path else str(key)
        if hit is None:
            warnings.append(f"{where}: unknown field, ignored as kube-scheduler ignored it")
            continue
        name, annotation = hit
        sub = _model_of(annotation)
        if sub is not None and isinstance(item, list) and get_origin(annotation) is not None:
            item = [fold_field_names(x, sub, f"{where}[{i}]", warnings) for i, x in enumerate(item)]
        elif sub is not None:
            item = fold_field_names(item, sub, where, warnings)
        out[name] = item
    return out


# Plugin sets with upstream's appendToPluginSet: no duplicates, the highest weight wins.


@dataclass
class _Builder:
    points: dict[str, list[Plugin]] = field(default_factory=lambda: {p: [] for p in n.EXTENSION_POINTS})
    configs: dict[str, _Args] = field(default_factory=dict)

    def add(self, point: str, name: str, weight: int | None = None) -> None:
        for p in self.points[point]:
            if p.name == name:
                if weight is not None and weight > (p.weight or 0):
                    p.weight = weight
                return
        self.points[point].append(Plugin(name=name, weight=weight))

    def plugins(self) -> Plugins:
        return Plugins(**{point: PluginSet(enabled=list(ps)) for point, ps in self.points.items()})


@dataclass
class _ProducerArgs:
    weight: int = 0
    node_label: NodeLabelArgs | None = None
    service_affinity: ServiceAffinityArgs | None = None
    rtcr: RequestedToCapacityRatioArgs | None = None
    inter_pod_affinity: InterPodAffinityArgs | None = None
    gates: Mapping[str, bool] = field(default_factory=lambda: dict(FEATURE_GATES))


Producer = Callable[[_ProducerArgs, _Builder], None]


def _points(*entries: tuple[str, str]) -> Producer:
    def produce(_: _ProducerArgs, b: _Builder) -> None:
        for point, name in entries:
            b.add(point, name)

    return produce


def _score(name: str, *pre_score: str) -> Producer:
    def produce(a: _ProducerArgs, b: _Builder) -> None:
        for p in pre_score:
            b.add(n.PRE_SCORE, p)
        b.add(n.SCORE, name, a.weight)

    return produce


def _node_label_predicate(a: _ProducerArgs, b: _Builder) -> None:
    b.add(n.FILTER, n.NODE_LABEL)
    if a.node_label is not None:
        b.configs[n.NODE_LABEL] = a.node_label


def _service_affinity_predicate(a: _ProducerArgs, b: _Builder) -> None:
    b.add(n.FILTER, n.SERVICE_AFFINITY)
    if a.service_affinity is not None:
        b.configs[n.SERVICE_AFFINITY] = a.service_affinity
    b.add(n.PRE_FILTER, n.SERVICE_AFFINITY)


def _selector_spread_priority(a: _ProducerArgs, b: _Builder) -> None:
    if not a.gates["DefaultPodTopologySpread"]:
        b.add(n.SCORE, n.SELECTOR_SPREAD, a.weight)
        b.add(n.PRE_SCORE, n.SELECTOR_SPREAD)
        return
    b.add(n.SCORE, n.POD_TOPOLOGY_SPREAD, a.weight)
    b.add(n.PRE_SCORE, n.POD_TOPOLOGY_SPREAD)
    b.configs[n.POD_TOPOLOGY_SPREAD] = PodTopologySpreadArgs(defaultingType="System")


def _even_pods_spread_priority(a: _ProducerArgs, b: _Builder) -> None:
    b.add(n.PRE_SCORE, n.POD_TOPOLOGY_SPREAD)
    b.add(n.SCORE, n.POD_TOPOLOGY_SPREAD, a.weight)
    if a.gates["DefaultPodTopologySpread"] and n.POD_TOPOLOGY_SPREAD not in b.configs:
        b.configs[n.POD_TOPOLOGY_SPREAD] = PodTopologySpreadArgs(defaultingType="List")


def _inter_pod_affinity_priority(a: _ProducerArgs, b: _Builder) -> None:
    b.add(n.PRE_SCORE, n.INTER_POD_AFFINITY)
    b.add(n.SCORE, n.INTER_POD_AFFINITY, a.weight)
    if a.inter_pod_affinity is not None:
        b.configs[n.INTER_POD_AFFINITY] = a.inter_pod_affinity


def _rtcr_priority(a: _ProducerArgs, b: _Builder) -> None:
    b.add(n.SCORE, n.REQUESTED_TO_CAPACITY_RATIO, a.weight)
    if a.rtcr is not None:
        b.configs[n.REQUESTED_TO_CAPACITY_RATIO] = a.rtcr


def _node_label_priority(a: _ProducerArgs, b: _Builder) -> None:
    """n LabelPreference priorities of weight w become one NodeLabel score of weight n*w."""
    assert a.node_label is not None
    count = len(a.node_label.presentLabelsPreference) + len(a.node_label.absentLabelsPreference)
    b.add(n.SCORE, n.NODE_LABEL, a.weight * count)
    b.configs[n.NODE_LABEL] = a.node_label


def _service_affinity_priority(a: _ProducerArgs, b: _Builder) -> None:
    assert a.service_affinity is not None
    b.add(n.SCORE, n.SERVICE_AFFINITY, a.weight * len(a.service_affinity.antiAffinityLabelsPreference))
    b.configs[n.SERVICE_AFFINITY] = a.service_affinity


PREDICATES: Final[dict[str, Producer]] = {
    "GeneralPredicates": _points(
        (n.FILTER, n.NODE_RESOURCES_FIT),
        (n.PRE_FILTER, n.NODE_RESOURCES_FIT),
        (n.FILTER, n.NODE_NAME),
        (n.FILTER, n.NODE_PORTS),
        (n.PRE_FILTER, n.NODE_PORTS),
        (n.FILTER, n.NODE_AFFINITY),
        (n.PRE_FILTER, n.NODE_AFFINITY),
    ),
    "PodToleratesNodeTaints": _points((n.FILTER, n.TAINT_TOLERATION)),
    "PodFitsResources": _points((n.FILTER, n.NODE_RESOURCES_FIT), (n.PRE_FILTER, n.NODE_RESOURCES_FIT)),
    "HostName": _points((n.FILTER, n.NODE_NAME)),
    "PodFitsHostPorts": _points((n.FILTER, n.NODE_PORTS), (n.PRE_FILTER, n.NODE_PORTS)),
    "MatchNodeSelector": _points((n.FILTER, n.NODE_AFFINITY), (n.PRE_FILTER, n.NODE_AFFINITY)),
    "CheckNodeUnschedulable": _points((n.FILTER, n.NODE_UNSCHEDULABLE)),
    "CheckVolumeBinding": _points(
        (n.PRE_FILTER, n.VOLUME_BINDING),
        (n.FILTER, n.VOLUME_BINDING),
        (n.RESERVE, n.VOLUME_BINDING),
        (n.PRE_BIND, n.VOLUME_BINDING),
    ),
    "NoDiskConflict": _points((n.FILTER, n.VOLUME_RESTRICTIONS)),
    "NoVolumeZoneConflict": _points((n.FILTER, n.VOLUME_ZONE)),
    "MaxCSIVolumeCountPred": _points((n.FILTER, n.NODE_VOLUME_LIMITS)),
    "MaxEBSVolumeCount": _points((n.FILTER, n.EBS_LIMITS)),
    "MaxGCEPDVolumeCount": _points((n.FILTER, n.GCE_PD_LIMITS)),
    "MaxAzureDiskVolumeCount": _points((n.FILTER, n.AZURE_DISK_LIMITS)),
    "MaxCinderVolumeCount": _points((n.FILTER, n.CINDER_LIMITS)),
    "MatchInterPodAffinity": _points((n.FILTER, n.INTER_POD_AFFINITY), (n.PRE_FILTER, n.INTER_POD_AFFINITY)),
    "CheckNodeLabelPresence": _node_label_predicate,
    "CheckServiceAffinity": _service_affinity_predicate,
    "EvenPodsSpread": _points((n.PRE_FILTER, n.POD_TOPOLOGY_SPREAD), (n.FILTER, n.POD_TOPOLOGY_SPREAD)),
}
PREDICATE_ORDER: Final = (
    "CheckNodeUnschedulable", "GeneralPredicates", "HostName", "PodFitsHostPorts", "MatchNodeSelector",
    "PodFitsResources", "NoDiskConflict", "PodToleratesNodeTaints", "CheckNodeLabelPresence",
    "CheckServiceAffinity", "MaxEBSVolumeCount", "MaxGCEPDVolumeCount", "MaxCSIVolumeCountPred",
    "MaxAzureDiskVolumeCount", "MaxCinderVolumeCount", "CheckVolumeBinding", "NoVolumeZoneConflict",
    "EvenPodsSpread", "MatchInterPodAffinity",
)  # fmt: skip
MANDATORY_PREDICATES: Final = frozenset({"PodToleratesNodeTaints", "CheckNodeUnschedulable"})
DEFAULT_PREDICATES: Final = frozenset({
    "NoVolumeZoneConflict", "MaxEBSVolumeCount", "MaxGCEPDVolumeCount", "MaxAzureDiskVolumeCount",
    "MaxCSIVolumeCountPred", "MatchInterPodAffinity", "NoDiskConflict", "GeneralPredicates",
    "PodToleratesNodeTaints", "CheckVolumeBinding", "CheckNodeUnschedulable", "EvenPodsSpread",
})  # fmt: skip

PRIORITIES: Final[dict[str, Producer]] = {
    "SelectorSpreadPriority": _selector_spread_priority,
    "TaintTolerationPriority": _score(n.TAINT_TOLERATION, n.TAINT_TOLERATION),
    "NodeAffinityPriority": _score(n.NODE_AFFINITY, n.NODE_AFFINITY),
    "ImageLocalityPriority": _score(n.IMAGE_LOCALITY),
    "InterPodAffinityPriority": _inter_pod_affinity_priority,
    "NodePreferAvoidPodsPriority": _score(n.NODE_PREFER_AVOID_PODS),
    "MostRequestedPriority": _score(n.NODE_RESOURCES_MOST_ALLOCATED),
    "BalancedResourceAllocation": _score(n.NODE_RESOURCES_BALANCED_ALLOCATION),
    "LeastRequestedPriority": _score(n.NODE_RESOURCES_LEAST_ALLOCATED),
    n.REQUESTED_TO_CAPACITY_RATIO: _rtcr_priority,
    n.NODE_LABEL: _node_label_priority,
    n.SERVICE_AFFINITY: _service_affinity_priority,
    "EvenPodsSpreadPriority": _even_pods_spread_priority,
}
DEFAULT_PRIORITIES: Final = {
    "SelectorSpreadPriority": 1, "InterPodAffinityPriority": 1, "LeastRequestedPriority": 1,
    "BalancedResourceAllocation": 1, "NodePreferAvoidPodsPriority": 10000, "NodeAffinityPriority": 1,
    "TaintTolerationPriority": 1, "ImageLocalityPriority": 1, "EvenPodsSpreadPriority": 2,
}  # fmt: skip


def _predicate_key(i: int, pred: PredicatePolicy, a: _ProducerArgs) -> str:
    """ProcessPredicatePolicy: a registered name, or a custom predicate defined by its argument."""
    arg = pred.argument
    if arg is not None and (arg.serviceAffinity is None) == (arg.labelsPresence is None):
        raise FieldError(f"predicates[{i}].argument", f"exactly 1 predicate argument is required ({pred.name})")
    name = "PodFitsHostPorts" if pred.name == "PodFitsPorts" else pred.name
    if name in PREDICATES:
        return name
    if arg is None:
        raise FieldError(f"predicates[{i}].name", f'predicate type not found for "{name}"')
    if arg.serviceAffinity is not None:
        a.service_affinity = a.service_affinity or ServiceAffinityArgs()
        a.service_affinity.affinityLabels += arg.serviceAffinity.labels
        return "CheckServiceAffinity"
    assert arg.labelsPresence is not None
    a.node_label = a.node_label or NodeLabelArgs()
    if arg.labelsPresence.presence:
        a.node_label.presentLabels += arg.labelsPresence.labels
    else:
        a.node_label.absentLabels += arg.labelsPresence.labels
    return "CheckNodeLabelPresence"


def _priority_key(i: int, prio: PriorityPolicy, a: _ProducerArgs) -> str:
    """ProcessPriorityPolicy: a registered name, or a custom priority defined by its argument."""
    arg = prio.argument
    given = (
        [x for x in (arg.serviceAntiAffinity, arg.labelPreference, arg.requestedToCapacityRatioArguments) if x]
        if arg is not None
        else []
    )
    if arg is not None and len(given) != 1:
        raise FieldError(f"priorities[{i}].argument", f"exactly 1 priority argument is required ({prio.name})")
    name = "SelectorSpreadPriority" if prio.name == "ServiceSpreadingPriority" else prio.name
    if name in PRIORITIES:
        return name
    if arg is None:
        raise FieldError(f"priorities[{i}].name", f'priority type not found for "{name}"')
    if arg.serviceAntiAffinity is not None:
        a.service_affinity = a.service_affinity or ServiceAffinityArgs()
        a.service_affinity.antiAffinityLabelsPreference.append(arg.serviceAntiAffinity.label)
        return n.SERVICE_AFFINITY
    if arg.labelPreference is not None:
        a.node_label = a.node_label or NodeLabelArgs()
        if arg.labelPreference.presence:
            a.node_label.presentLabelsPreference.append(arg.labelPreference.label)
        else:
            a.node_label.absentLabelsPreference.append(arg.labelPreference.label)
        return n.NODE_LABEL
    rtcr = arg.requestedToCapacityRatioArguments
    assert rtcr is not None
    a.rtcr = RequestedToCapacityRatioArgs(shape=list(rtcr.shape), resources=list(rtcr.resources))
    return n.REQUESTED_TO_CAPACITY_RATIO


def validate_policy(policy: Policy) -> list[FieldError]:
    """ValidatePolicy: priority weights, custom priorities declared consistently, extenders, symmetric weight."""
    errs: list[FieldError] = []
    seen: dict[str, PriorityPolicy] = {}
    for i, p in enumerate(policy.priorities or ()):
        path = f"priorities[{i}]"
        if p.weight <= 0 or p.weight >= MAX_WEIGHT:
            errs.append(
                FieldError(
                    f"{path}.weight",
                    f"priority {p.name} should have a positive weight applied to it or it has overflown",
                )
            )
        arg = p.argument
        if arg is None:
            continue
        kind = (
            "LabelPreference"
            if arg.labelPreference is not None
            else "ServiceAntiAffinity"
            if arg.serviceAntiAffinity is not None
            else "RequestedToCapacityRatio"
            if arg.requestedToCapacityRatioArguments is not None
            else ""
        )
        if not kind:
            errs.append(FieldError(f"{path}.argument", f"no priority arguments set for priority {p.name}"))
            continue
        first = seen.setdefault(kind, p)
        if first is p:
            continue
        if kind == "RequestedToCapacityRatio":
            errs.append(
                FieldError(path, f'priority "{p.name}" redeclares custom priority "{kind}", from: "{first.name}"')
            )
        elif first.weight != p.weight:
            errs.append(
                FieldError(f"{path}.weight", f'{kind} priority "{p.name}" has a different weight with "{first.name}"')
            )
    w = policy.hardPodAffinitySymmetricWeight
    if not 0 <= w <= 100:
        errs.append(FieldError("hardPodAffinitySymmetricWeight", f"Invalid value: {w}: not in valid range [0-100]"))
    seen_resources: set[str] = set()
    for i, e in enumerate(policy.extenders):
        for j, r in enumerate(e.managedResources):
            if r.name in seen_resources:
                errs.append(
                    FieldError(
                        f"extenders[{i}].managedResources[{j}].name",
                        f'Invalid value: "{r.name}": duplicate extender managed resource name',
                    )
                )
            seen_resources.add(r.name)
    return errs


def _extender(e: LegacyExtender) -> Extender:
    timeout = e.httpTimeout
    if isinstance(timeout, int):
        timeout = f"{timeout}ns" if timeout > 0 else "5s"
    tls = e.tlsConfig.model_dump() if e.tlsConfig is not None else None
    return Extender.model_validate(
        {
            "urlPrefix": e.urlPrefix,
            "filterVerb": e.filterVerb,
            "preemptVerb": e.preemptVerb,
            "prioritizeVerb": e.prioritizeVerb,
            "weight": e.weight,
            "bindVerb": e.bindVerb,
            "enableHTTPS": e.enableHttps,
            "tlsConfig": tls,
            "httpTimeout": timeout,
            "nodeCacheCapable": e.nodeCacheCapable,
            "managedResources": [r.model_dump() for r in e.managedResources],
            "ignorable": e.ignorable,
        }
    )


@dataclass
class LegacyConfig:
    """A translated Policy or provider, and what the user should hear about it."""

    config: SchedulerConfig
    warnings: list[str] = field(default_factory=list)


# Points today's plugins need beside the one a 1.22 profile lists them at: their Filter,
# Score or PostFilter reads what this point prepares (or, for DefaultPreemption, holds a
# preemptor until its victims are gone).
COMPANION_POINTS: Final = {
    (n.FILTER, n.VOLUME_RESTRICTIONS): n.PRE_FILTER,
    (n.FILTER, n.NODE_VOLUME_LIMITS): n.PRE_FILTER,
    (n.FILTER, n.VOLUME_ZONE): n.PRE_FILTER,
    (n.SCORE, n.NODE_RESOURCES_BALANCED_ALLOCATION): n.PRE_SCORE,
    (n.POST_FILTER, n.DEFAULT_PREEMPTION): n.PRE_ENQUEUE,
}


def add_companion_points(b: _Builder) -> None:
    """Also enable plugins at their companion points; SchedulingGates first, as the API server
    refuses to bind a gated pod (gates post-date these releases)."""
    b.add(n.PRE_ENQUEUE, n.SCHEDULING_GATES)
    for point in n.EXTENSION_POINTS:
        for p in list(b.points[point]):
            companion = COMPANION_POINTS.get((point, p.name))
            if companion is not None:
                b.add(companion, p.name)


def _finish(b: _Builder, extenders: list[Extender], source: str) -> SchedulerConfig:
    """defaultPluginConfigArgs and validation of what the translation produced."""
    add_companion_points(b)
    plugins = b.plugins()
    profile = KubeSchedulerProfile(schedulerName=DEFAULT_SCHEDULER_NAME, plugins=plugins)
    cfg = KubeSchedulerConfiguration(profiles=[profile], extenders=extenders)
    enabled = list(dict.fromkeys(p.name for point in n.EXTENSION_POINTS for p in getattr(plugins, point).enabled))
    args: dict[str, Any] = {}
    errors: list[FieldError] = []
    for name in enabled:
        given = b.configs.get(name)
        if name in ARGS_TYPES:
            given = default_args(name, given)
        if given is None:
            continue
        errors += validate_args(name, given, name)
        args[name] = given
    errors += validate_configuration(cfg, allow_removed_plugins=True)
    if errors:
        raise ConfigError(errors, source, kind=POLICY_KIND)
    # A Policy comes only from --policy-config-file, an algorithm provider is built in: its extenders are wanted.
    return SchedulerConfig(cfg, [args], trust=TRUSTED)


def parse_feature_gates(text: str) -> dict[str, bool]:
    """`--feature-gates A=true,B=false`, limited to the gates that change a translation."""
    gates = dict(FEATURE_GATES)
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or value.lower() not in ("true", "false"):
            raise ConfigError(
                [FieldError("--feature-gates", f'invalid value "{item}": want NAME=true|false')], kind="flag"
            )
        if key not in gates:
            raise ConfigError([FieldError("--feature-gates", f"unrecognized feature gate: {key}")])
        gates[key] = value.lower() == "true"
    return gates


def load_policy(doc: Any, *, source: str = "", gates: Mapping[str, bool] | None = None) -> LegacyConfig:
    """createFromPolicy: a Policy document (parsed JSON or YAML) as a one-profile SchedulerConfig."""
    if not isinstance(doc, Mapping):
        raise ConfigError([FieldError("", "expected a Policy object")], source, kind=POLICY_KIND)
    warnings: list[str] = []
    folded = fold_field_names(doc, Policy, "", warnings)
    try:
        policy = Policy.model_validate(folded)
    except pydantic.ValidationError as err:
        raise ConfigError(pydantic_errors(err), source, kind=POLICY_KIND) from err
    errors: list[FieldError] = []
    if policy.kind != POLICY_KIND:
        errors.append(FieldError("kind", f'"{policy.kind}" is not {POLICY_KIND}'))
    if policy.apiVersion != POLICY_API_VERSION:
        errors.append(FieldError("apiVersion", f'"{policy.apiVersion}" is not supported, use {POLICY_API_VERSION}'))
    errors += validate_policy(policy)
    a = _ProducerArgs(gates=dict(gates or FEATURE_GATES))
    predicate_keys: set[str] = set(DEFAULT_PREDICATES) if policy.predicates is None else set()
    for i, pred in enumerate(policy.predicates or ()):
        try:
            predicate_keys.add(_predicate_key(i, pred, a))
        except FieldError as err:
            errors.append(err)
    priority_keys: dict[str, int] = dict(DEFAULT_PRIORITIES) if policy.priorities is None else {}
    for i, prio in enumerate(policy.priorities or ()):
        if prio.name == "EqualPriority":
            continue
        try:
            priority_keys[_priority_key(i, prio, a)] = prio.weight
        except FieldError as err:
            errors.append(err)
    if errors:
        raise ConfigError(errors, source, kind=POLICY_KIND)
    if policy.hardPodAffinitySymmetricWeight:
        a.inter_pod_affinity = InterPodAffinityArgs(hardPodAffinityWeight=policy.hardPodAffinitySymmetricWeight)
    if policy.alwaysCheckAllPredicates:
        warnings.append("alwaysCheckAllPredicates: has no effect, as in kube-scheduler 1.19-1.22")
    b = _Builder()
    b.add(n.QUEUE_SORT, n.PRIORITY_SORT)
    b.add(n.POST_FILTER, n.DEFAULT_PREEMPTION)
    b.add(n.BIND, n.DEFAULT_BINDER)
    predicate_keys |= MANDATORY_PREDICATES
    for key in PREDICATE_ORDER:
        if key in predicate_keys:
            PREDICATES[key](a, b)
    for key in sorted(priority_keys):
        a.weight = priority_keys[key]
        PRIORITIES[key](a, b)
    extenders = [_extender(e) for e in policy.extenders]
    extenders = [e for e in extenders if not e.ignorable] + [e for e in extenders if e.ignorable]
    return LegacyConfig(_finish(b, extenders, source), warnings)


def provider_plugins(name: str, gates: Mapping[str, bool]) -> _Builder:
    """algorithmprovider.NewRegistry: the plugin set of DefaultProvider or ClusterAutoscalerProvider."""
    if name not in (DEFAULT_PROVIDER, CLUSTER_AUTOSCALER_PROVIDER):
        raise ConfigError(
            [FieldError("--algorithm-provider", f'algorithm provider "{name}" is not registered')], kind="flag"
        )
    least = n.NODE_RESOURCES_LEAST_ALLOCATED if name == DEFAULT_PROVIDER else n.NODE_RESOURCES_MOST_ALLOCATED
    b = _Builder()
    lists: dict[str, tuple[str, ...]] = {
        n.QUEUE_SORT: (n.PRIORITY_SORT,),
        n.PRE_FILTER: (
            n.NODE_RESOURCES_FIT, n.NODE_PORTS, n.POD_TOPOLOGY_SPREAD, n.INTER_POD_AFFINITY, n.VOLUME_BINDING,
            n.NODE_AFFINITY,
        ),
        n.FILTER: (
            n.NODE_UNSCHEDULABLE, n.NODE_NAME, n.TAINT_TOLERATION, n.NODE_AFFINITY, n.NODE_PORTS,
            n.NODE_RESOURCES_FIT, n.VOLUME_RESTRICTIONS, n.EBS_LIMITS, n.GCE_PD_LIMITS, n.NODE_VOLUME_LIMITS,
            n.AZURE_DISK_LIMITS, n.VOLUME_BINDING, n.VOLUME_ZONE, n.POD_TOPOLOGY_SPREAD, n.INTER_POD_AFFINITY,
        ),
        n.POST_FILTER: (n.DEFAULT_PREEMPTION,),
        n.PRE_SCORE: (n.INTER_POD_AFFINITY, n.POD_TOPOLOGY_SPREAD, n.TAINT_TOLERATION, n.NODE_AFFINITY),
        n.RESERVE: (n.VOLUME_BINDING,),
        n.PRE_BIND: (n.VOLUME_BINDING,),
        n.BIND: (n.DEFAULT_BINDER,),
    }  # fmt: skip
    for point, plugin_names in lists.items():
        for p in plugin_names:
            b.add(point, p)
    for p, w in (
        (n.NODE_RESOURCES_BALANCED_ALLOCATION, 1), (n.IMAGE_LOCALITY, 1), (n.INTER_POD_AFFINITY, 1), (least, 1),
        (n.NODE_AFFINITY, 1), (n.NODE_PREFER_AVOID_PODS, 10000), (n.POD_TOPOLOGY_SPREAD, 2), (n.TAINT_TOLERATION, 1),
    ):  # fmt: skip
        b.add(n.SCORE, p, w)
    if not gates["DefaultPodTopologySpread"]:
        b.add(n.PRE_SCORE, n.SELECTOR_SPREAD)
        b.add(n.SCORE, n.SELECTOR_SPREAD, 1)
    return b


def load_algorithm_provider(name: str, *, gates: Mapping[str, bool] | None = None) -> LegacyConfig:
    """createFromProvider: the provider's plugins, with every args kind at its default."""
    b = provider_plugins(name, dict(gates or FEATURE_GATES))
    return LegacyConfig(_finish(b, [], f"--algorithm-provider {name}"))
