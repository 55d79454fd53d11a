"""Validation of KubeSchedulerConfiguration and in-tree plugin args.

Messages follow apimachinery's field errors ("path: Invalid value: v: detail") so a
user sees the same path upstream would print.
"""

from __future__ import annotations

import re
from typing import Any

from kubesched.api.duration import parse_duration
from kubesched.api.errors import FieldError
from kubesched.api.selectors import SelectorError, parse_node_selector_term, validate_node_selector_terms
from kubesched.config.types import (
    EXTENSION_POINTS,
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    KubeSchedulerConfiguration,
    NodeAffinityArgs,
    NodeLabelArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    RequestedToCapacityRatioArgs,
    VolumeBindingArgs,
    _Args,
)

# Plugins removed upstream: configs naming them are invalid (validation.go, invalidPluginsByVersion).
REMOVED_PLUGINS = {
    "SelectorSpread",
    "NodeLabel",
    "ServiceAffinity",
    "NodePreferAvoidPods",
    "AzureDiskLimits",
    "CinderLimits",
    "EBSLimits",
    "GCEPDLimits",
}

_QUALIFIED = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
SCORING_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")


def _fmt(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, f"Invalid value: {_fmt(value)}: {detail}")


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, "Required value" + (f": {detail}" if detail else ""))


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(path, f"Duplicate value: {_fmt(value)}")


def _validate_leader_election(cfg: KubeSchedulerConfiguration) -> list[FieldError]:
    """component-base's checks, made only when leader election is on."""
    le = cfg.leaderElection
    if not le.leaderElect:
        return []
    errs: list[FieldError] = []
    seconds: dict[str, float] = {}
    for name in ("leaseDuration", "renewDeadline", "retryPeriod"):
        value = getattr(le, name)
        try:
            seconds[name] = parse_duration(value)
        except ValueError as err:
            errs.append(invalid(f"leaderElection.{name}", value, str(err)))
            continue
        if seconds[name] <= 0:
            errs.append(invalid(f"leaderElection.{name}", value, "must be greater than zero"))
    if len(seconds) == 3 and seconds["leaseDuration"] <= seconds["renewDeadline"]:
        message = "LeaseDuration must be greater than RenewDeadline"
        errs.append(invalid("leaderElection.leaseDuration", le.leaseDuration, message))
    for name in ("resourceName", "resourceNamespace"):
        if not getattr(le, name):
            errs.append(required(f"leaderElection.{name}"))
    return errs


def validate_configuration(cfg: KubeSchedulerConfiguration, *, allow_removed_plugins: bool = False) -> list[FieldError]:
    """`allow_removed_plugins` is for profiles translated from a Policy, which may name them."""
    errs: list[FieldError] = []
    if cfg.parallelism <= 0:
        errs.append(invalid("parallelism", cfg.parallelism, "should be an integer value greater than zero"))
    pct = cfg.percentageOfNodesToScore
    if pct is not None and not 0 <= pct <= 100:
        errs.append(invalid("percentageOfNodesToScore", pct, "not in valid range [0-100]"))
    if cfg.podInitialBackoffSeconds <= 0:
        errs.append(invalid("podInitialBackoffSeconds", cfg.podInitialBackoffSeconds, "must be greater than 0"))
    if cfg.podMaxBackoffSeconds < cfg.podInitialBackoffSeconds:
        errs.append(
            invalid(
                "podMaxBackoffSeconds",
                cfg.podMaxBackoffSeconds,
                "must be greater than or equal to PodInitialBackoffSeconds",
            )
        )
    if cfg.leaderElection.resourceLock != "leases":
        errs.append(
            invalid(
                "leaderElection.resourceLock", cfg.leaderElection.resourceLock, 'resourceLock value must be "leases"'
            )
        )
    errs.extend(_validate_leader_election(cfg))
    if not cfg.profiles:
        errs.append(required("profiles"))
    names: set[str] = set()
    queue_sort = None
    for i, prof in enumerate(cfg.profiles):
        path = f"profiles[{i}]"
        if not prof.schedulerName:
            errs.append(required(f"{path}.schedulerName"))
        elif prof.schedulerName in names:
            errs.append(duplicate(f"{path}.schedulerName", prof.schedulerName))
        names.add(prof.schedulerName or "")
        p = prof.percentageOfNodesToScore
        if p is not None and not 0 <= p <= 100:
            errs.append(invalid(f"{path}.percentageOfNodesToScore", p, "not in valid range [0-100]"))
        assert prof.plugins is not None
        for point in ("multiPoint", *EXTENSION_POINTS):
            for j, pl in enumerate(getattr(prof.plugins, point).enabled):
                pp = f"{path}.plugins.{point}.enabled[{j}]"
                if pl.name in REMOVED_PLUGINS and not allow_removed_plugins:
                    errs.append(invalid(f"{pp}.name", pl.name, "was invalid"))
                if pl.weight is not None and pl.weight < 0:
                    errs.append(invalid(f"{pp}.weight", pl.weight, "must be a positive integer"))
        qs = _queue_sort_of(prof)
        if i == 0:
            queue_sort = qs
        elif qs != queue_sort:
            errs.append(invalid(f"{path}.plugins.queueSort", qs, "queueSort must be the same for all profiles"))
        seen_cfg: set[str] = set()
        for j, pc in enumerate(prof.pluginConfig):
            if pc.name in seen_cfg:
                errs.append(duplicate(f"{path}.pluginConfig[{j}]", pc.name))
            seen_cfg.add(pc.name)
    for i, ext in enumerate(cfg.extenders):
        if ext.prioritizeVerb and ext.weight <= 0:
            errs.append(invalid(f"extenders[{i}].weight", ext.weight, "must have a positive weight applied to it"))
    binders = [i for i, e in enumerate(cfg.extenders) if e.bindVerb]
    if len(binders) > 1:
        errs.append(
            invalid(
                "extenders", f"found {len(binders)} extenders implementing bind", "only one extender can implement bind"
            )
        )
    return errs


def _queue_sort_of(prof: Any) -> str:
    specific = prof.plugins.queueSort.enabled
    if specific:
        return specific[0].name
    disabled = {p.name for p in prof.plugins.queueSort.disabled}
    for p in prof.plugins.multiPoint.enabled:
        if p.name == "PrioritySort" and "*" not in disabled and p.name not in disabled:
            return p.name
    return ""


def _validate_resources(path: str, resources: list[Any], lo: int, hi: int) -> list[FieldError]:
    errs = []
    for i, r in enumerate(resources):
        if not lo <= r.weight <= hi:
            detail = "must be 1" if lo == hi == 1 else f"resource weight of {r.name} should be in range [{lo}, {hi}]"
            errs.append(invalid(f"{path}[{i}].weight", r.weight, detail))
    return errs


def validate_args(name: str, args: _Args, path: str) -> list[FieldError]:
    """validation_pluginargs.go for the in-tree args kinds."""
    errs: list[FieldError] = []
    if isinstance(args, NodeResourcesFitArgs):
        for i, r in enumerate(args.ignoredResources):
            if not _QUALIFIED.match(r):
                errs.append(invalid(f"{path}.ignoredResources[{i}]", r, "name must be a qualified name"))
        for i, g in enumerate(args.ignoredResourceGroups):
            if "/" in g:
                errs.append(invalid(f"{path}.ignoredResourceGroups[{i}]", g, 'resource group name can\'t contain "/"'))
            elif not _QUALIFIED.match(g):
                errs.append(invalid(f"{path}.ignoredResourceGroups[{i}]", g, "name must be a qualified name"))
        st = args.scoringStrategy
        if st is not None:
            sp = f"{path}.scoringStrategy"
            if st.type not in SCORING_STRATEGIES:
                errs.append(
                    FieldError(
                        f"{sp}.type",
                        f'Unsupported value: "{st.type}": supported values: '
                        + ", ".join(f'"{s}"' for s in SCORING_STRATEGIES),
                    )
                )
            errs += _validate_resources(f"{sp}.resources", st.resources, 1, 100)
            if st.type == "RequestedToCapacityRatio":
                shape = st.requestedToCapacityRatio.shape if st.requestedToCapacityRatio else []
                errs += validate_shape(f"{sp}.requestedToCapacityRatio.shape", shape, 10)
    elif isinstance(args, NodeResourcesBalancedAllocationArgs):
        errs += _validate_resources(f"{path}.resources", args.resources, 1, 1)
    elif isinstance(args, PodTopologySpreadArgs):
        if args.defaultingType not in ("System", "List"):
            errs.append(
                FieldError(
                    f"{path}.defaultingType",
                    f'Unsupported value: "{args.defaultingType}": supported values: "System", "List"',
                )
            )
        if args.defaultingType == "System" and args.defaultConstraints:
            errs.append(invalid(f"{path}.defaultConstraints", "[...]", 'when .defaultingType is "System"'))
        seen: set[tuple[str, str]] = set()
        for i, c in enumerate(args.defaultConstraints):
            cp = f"{path}.defaultConstraints[{i}]"
            skew = c.get("maxSkew", 0)
            if not isinstance(skew, int) or skew <= 0:
                errs.append(invalid(f"{cp}.maxSkew", skew, "must be greater than zero"))
            key = c.get("topologyKey") or ""
            if not key:
                errs.append(required(f"{cp}.topologyKey", "can not be empty"))
            when = c.get("whenUnsatisfiable") or ""
            if when not in ("DoNotSchedule", "ScheduleAnyway"):
                errs.append(
                    FieldError(
                        f"{cp}.whenUnsatisfiable",
                        f'Unsupported value: "{when}": supported values: "DoNotSchedule", "ScheduleAnyway"',
                    )
                )
            if (key, when) in seen:
                errs.append(duplicate(f"{cp}", f"{{{key}, {when}}}"))
            seen.add((key, when))
            if c.get("labelSelector") is not None:
                errs.append(
                    FieldError(
                        f"{cp}.labelSelector",
                        "Forbidden: constraint must not define a selector, as they deduced for each pod",
                    )
                )
    elif isinstance(args, InterPodAffinityArgs):
        w = args.hardPodAffinityWeight
        if w is not None and not 0 <= w <= 100:
            errs.append(invalid(f"{path}.hardPodAffinityWeight", w, "not in valid range [0, 100]"))
    elif isinstance(args, NodeAffinityArgs):
        aff = args.addedAffinity
        if aff:
            req = aff.get("requiredDuringSchedulingIgnoredDuringExecution")
            if req:
                try:
                    validate_node_selector_terms(req.get("nodeSelectorTerms") or [])
                except SelectorError as err:
                    errs.append(
                        invalid(f"{path}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution", "...", str(err))
                    )
            for i, pref in enumerate(aff.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
                pp = f"{path}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
                w = pref.get("weight", 0)
                if not isinstance(w, int) or not 1 <= w <= 100:
                    errs.append(invalid(f"{pp}.weight", w, "must be in the range 1-100"))
                try:
                    parse_node_selector_term(pref.get("preference") or {}, strict=True)
                except SelectorError as err:
                    errs.append(invalid(f"{pp}.preference", "...", str(err)))
    elif isinstance(args, DefaultPreemptionArgs):
        pct, absolute = args.minCandidateNodesPercentage or 0, args.minCandidateNodesAbsolute or 0
        if not 0 <= pct <= 100:
            errs.append(invalid(f"{path}.minCandidateNodesPercentage", pct, "not in valid range [0, 100]"))
        if absolute < 0:
            errs.append(invalid(f"{path}.minCandidateNodesAbsolute", absolute, "not in valid range [0, inf)"))
        if pct == 0 and absolute == 0:
            errs.append(
                invalid(
                    f"{path}.minCandidateNodesPercentage/minCandidateNodesAbsolute",
                    "0/0",
                    "both minCandidateNodesPercentage and minCandidateNodesAbsolute cannot be zero",
                )
            )
    elif isinstance(args, NodeLabelArgs):
        errs += _no_conflict(path, args.presentLabels, args.absentLabels, "presentLabels", "absentLabels")
        errs += _no_conflict(
            path,
            args.presentLabelsPreference,
            args.absentLabelsPreference,
            "presentLabelsPreference",
            "absentLabelsPreference",
        )
    elif isinstance(args, RequestedToCapacityRatioArgs):
        errs += validate_shape(f"{path}.shape", args.shape, 10)
        errs += _validate_resources(f"{path}.resources", args.resources, 1, 100)
    elif isinstance(args, VolumeBindingArgs):
        if (args.bindTimeoutSeconds or 0) < 0:
            errs.append(
                invalid(
                    f"{path}.bindTimeoutSeconds",
                    args.bindTimeoutSeconds,
                    "invalid BindTimeoutSeconds, should not be a negative value",
                )
            )
    return errs


def _no_conflict(path: str, present: list[str], absent: list[str], pp: str, ap: str) -> list[FieldError]:
    """A NodeLabel label cannot be both required (preferred) present and absent."""
    index = {k: j for j, k in enumerate(present)}
    return [
        invalid(f"{path}.{pp}[{index[k]}]", k, f"conflict with {ap}[{i}]") for i, k in enumerate(absent) if k in index
    ]


def validate_shape(path: str, shape: list[Any], max_score: int) -> list[FieldError]:
    errs = []
    if not shape:
        return [required(path, "at least one point must be specified")]
    for i, pt in enumerate(shape):
        if not 0 <= pt.utilization <= 100:
            errs.append(invalid(f"{path}[{i}].utilization", pt.utilization, "not in valid range [0, 100]"))
        elif i > 0 and pt.utilization <= shape[i - 1].utilization:
            errs.append(
                invalid(
                    f"{path}[{i}].utilization", pt.utilization, "utilization values must be sorted in increasing order"
                )
            )
        if not 0 <= pt.score <= max_score:
            errs.append(invalid(f"{path}[{i}].score", pt.score, f"not in valid range [0, {max_score}]"))
    return errs
