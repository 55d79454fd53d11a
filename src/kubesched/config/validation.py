"""Validation of KubeSchedulerConfiguration and in-tree plugin args (apis/config/validation, v1.36).

Messages are apimachinery's field errors ("path: Invalid value: v: detail"), values
printed as Go prints them (strings quoted, structs as JSON with Go's field names), so
a user reads byte for byte what kube-scheduler would say.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kubesched.api.errors import FieldError
from kubesched.config import names as n
from kubesched.config.goduration import SECOND, go_quote, parse_go_duration
from kubesched.config.types import (
    ARGS_TYPES,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    NodeAffinityArgs,
    NodeLabelArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginSet,
    PodTopologySpreadArgs,
    RequestedToCapacityRatioArgs,
    VolumeBindingArgs,
    _Args,
)

# validation.go's invalidPluginsByVersion for v1: naming them at a point or in pluginConfig is an error.
INVALID_PLUGINS_V1 = (n.AZURE_DISK_LIMITS, n.CINDER_LIMITS, n.EBS_LIMITS, n.GCE_PD_LIMITS)
# Plugins kubesched keeps only for translated Policies; upstream's v1 registry has none of them.
LEGACY_ONLY_PLUGINS = frozenset(
    {
        *INVALID_PLUGINS_V1,
        n.SELECTOR_SPREAD,
        n.NODE_LABEL,
        n.SERVICE_AFFINITY,
        n.NODE_PREFER_AVOID_PODS,
        n.NODE_RESOURCES_LEAST_ALLOCATED,
        n.NODE_RESOURCES_MOST_ALLOCATED,
        n.REQUESTED_TO_CAPACITY_RATIO,
    }
)
SCORING_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
MAX_CUSTOM_PRIORITY_SCORE = 10
POINT_TYPE_NAMES = {p: p[0].upper() + p[1:] + "Plugin" for p in n.FRAMEWORK_POINT_ORDER}

# apimachinery's name formats (validate/content).
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY = re.compile("^" + _LABEL_KEY_FMT + "$")
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN = re.compile("^" + _DNS1123_SUBDOMAIN_FMT + "$")
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE = re.compile("^" + _LABEL_VALUE_FMT + "$")
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    return msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{fmt}')"


def is_qualified_name(value: str) -> list[str]:
    """content.IsLabelKey (IsQualifiedName): what is wrong with a label key, if anything."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if len(prefix) > 253:
                errs.append("prefix part must be no more than 253 bytes")
            if not _DNS1123_SUBDOMAIN.match(prefix):
                errs.append(
                    "prefix part " + _regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com")
                )
    else:
        return [
            "a valid label key "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not _LABEL_KEY.match(name):
        errs.append("name part " + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_label_value(value: str) -> list[str]:
    errs = []
    if len(value.encode()) > 63:
        errs.append("must be no more than 63 bytes")
    if not _LABEL_VALUE.match(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: prefixed, not kubernetes.io's, valid as a quota name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def go_value(value: Any) -> str:
    """How field.Error prints a bad value: %v for numbers and bools, %q for strings, else JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    return json.dumps(value, separators=(",", ":"))


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, f"Invalid value: {go_value(value)}" + (f": {detail}" if detail else ""))


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, "Required value" + (f": {detail}" if detail else ""))


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, f"Forbidden: {detail}")


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(path, f"Duplicate value: {go_value(value)}")


def not_supported(path: str, value: str, supported: list[str]) -> FieldError:
    return FieldError(
        path, f"Unsupported value: {go_quote(value)}: supported values: " + ", ".join(go_quote(s) for s in supported)
    )


def _validate_leader_election(cfg: KubeSchedulerConfiguration) -> list[FieldError]:
    """component-base's checks, made only when leader election is on."""
    le = cfg.leaderElection
    if not le.leaderElect:
        return []
    errs: list[FieldError] = []
    ns = {name: parse_go_duration(getattr(le, name)) for name in ("leaseDuration", "renewDeadline", "retryPeriod")}
    for name in ("leaseDuration", "renewDeadline", "retryPeriod"):
        if ns[name] <= 0:
            errs.append(invalid(f"leaderElection.{name}", getattr(le, name), "must be greater than zero"))
    if ns["leaseDuration"] <= ns["renewDeadline"]:
        errs.append(invalid("leaderElection.leaseDuration", le.renewDeadline, "must be greater than `RenewDeadline`"))
    for name in ("resourceLock", "resourceNamespace", "resourceName"):
        if not getattr(le, name):
            errs.append(required(f"leaderElection.{name}"))
    return errs


def _plugin_set_json(ps: PluginSet) -> dict[str, Any]:
    """The internal PluginSet as json.Marshal prints it: Go field names, nil lists as null."""

    def plugins(items: list[Any]) -> list[dict[str, Any]] | None:
        return [{"Name": p.name, "Weight": p.weight or 0} for p in items] or None

    return {"Enabled": plugins(ps.enabled), "Disabled": plugins(ps.disabled)}


def validate_configuration(cfg: KubeSchedulerConfiguration, *, allow_removed_plugins: bool = False) -> list[FieldError]:
    """ValidateKubeSchedulerConfiguration on a defaulted config whose pluginConfig args are typed.

    `allow_removed_plugins` is for profiles translated from a Policy, which may name them.
    """
    errs: list[FieldError] = []
    if cfg.clientConnection.burst < 0:
        errs.append(invalid("clientConnection.burst", cfg.clientConnection.burst, "must be non-negative"))
    errs += _validate_leader_election(cfg)
    if cfg.leaderElection.leaderElect and cfg.leaderElection.resourceLock != "leases":
        errs.append(
            invalid(
                "leaderElection.resourceLock", cfg.leaderElection.resourceLock, 'resourceLock value must be "leases"'
            )
        )
    if cfg.parallelism <= 0:
        errs.append(invalid("parallelism", cfg.parallelism, "should be an integer value greater than zero"))
    if not cfg.profiles:
        errs.append(required("profiles"))
    else:
        seen: dict[str, int] = {}
        for i, prof in enumerate(cfg.profiles):
            path = f"profiles[{i}]"
            errs += _validate_profile(path, cfg.apiVersion, prof, allow_removed_plugins)
            name = prof.schedulerName or ""
            if name in seen:
                errs.append(FieldError(f"{path}.schedulerName", "Duplicate value: {}"))
            seen[name] = i
        errs += _validate_common_queue_sort(cfg.profiles)
    errs += _validate_percentage("percentageOfNodesToScore", cfg.percentageOfNodesToScore)
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
    errs += _validate_extenders(cfg)
    return errs


def _validate_percentage(path: str, value: int | None) -> list[FieldError]:
    if value is not None and not 0 <= value <= 100:
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def _invalid_plugin(api_version: str) -> str:
    return f'was invalid in version "v1" (KubeSchedulerConfiguration is version {go_quote(api_version)})'


def _validate_profile(
    path: str, api_version: str, prof: KubeSchedulerProfile, allow_removed_plugins: bool
) -> list[FieldError]:
    errs: list[FieldError] = []
    if not prof.schedulerName:
        errs.append(required(f"{path}.schedulerName"))
    errs += _validate_percentage(f"{path}.percentageOfNodesToScore", prof.percentageOfNodesToScore)
    if prof.plugins is not None and not allow_removed_plugins:
        for point in n.EXTENSION_POINTS:
            for j, pl in enumerate(getattr(prof.plugins, point).enabled):
                if pl.name in INVALID_PLUGINS_V1:
                    errs.append(invalid(f"{path}.plugins.{point}.enabled[{j}]", pl.name, _invalid_plugin(api_version)))
    seen: set[str] = set()
    for j, pc in enumerate(prof.pluginConfig):
        pc_path = f"{path}.pluginConfig[{j}]"
        if pc.name in seen:
            errs.append(duplicate(pc_path, pc.name))
        seen.add(pc.name)
        if pc.name in INVALID_PLUGINS_V1 and not allow_removed_plugins:
            errs.append(invalid(pc_path, pc.name, _invalid_plugin(api_version)))
        elif pc.name in ARGS_TYPES and pc.name != n.NODE_RESOURCES_FIT:
            # NodeResourcesFit's args are checked when the plugin is built (upstream keys its check wrongly).
            if not isinstance(pc.args, ARGS_TYPES[pc.name]):
                errs.append(invalid(f"{pc_path}.args", _args_data(pc.args), "has to match plugin args"))
            else:
                errs += validate_args(pc.name, pc.args, f"{pc_path}.args")
    return errs


def _validate_common_queue_sort(profiles: list[KubeSchedulerProfile]) -> list[FieldError]:
    """Every profile must list the same queueSort plugin set, and give its plugin the same args."""
    errs: list[FieldError] = []
    first = profiles[0]
    canon = first.plugins.queueSort if first.plugins is not None else PluginSet()
    name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        errs.append(
            invalid(
                "profiles[0].plugins.queueSort.Enabled", len(canon.enabled), "only one queue sort plugin can be enabled"
            )
        )
    canon_args = next((pc.args for pc in first.pluginConfig if name and pc.name == name), None)
    for i, prof in enumerate(profiles[1:], start=1):
        curr = prof.plugins.queueSort if prof.plugins is not None else PluginSet()
        if _plugin_set_json(curr) != _plugin_set_json(canon):
            errs.append(
                invalid(f"profiles[{i}].plugins.queueSort", _plugin_set_json(curr), "must be the same for all profiles")
            )
        for pc in prof.pluginConfig:
            if pc.name == name and _args_data(pc.args) != _args_data(canon_args):
                errs.append(
                    invalid(
                        f"profiles[{i}].pluginConfig.args",
                        _args_data(pc.args),
                        "queueSort must be the same for all profiles",
                    )
                )
    return errs


def _args_data(args: Any) -> Any:
    return args.model_dump(exclude_none=True) if isinstance(args, _Args) else args


def _validate_extenders(cfg: KubeSchedulerConfiguration) -> list[FieldError]:
    errs: list[FieldError] = []
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(cfg.extenders):
        path = f"extenders[{i}]"
        if ext.prioritizeVerb and ext.weight <= 0:
            errs.append(invalid(f"{path}.weight", ext.weight, "must have a positive weight applied to it"))
        if ext.bindVerb:
            binders += 1
        for j, r in enumerate(ext.managedResources):
            rp = f"{path}.managedResources[{j}].name"
            msgs = is_qualified_name(r.name)
            errs += [invalid(rp, r.name, m) for m in msgs]
            if not msgs and not is_extended_resource_name(r.name):
                errs.append(invalid(rp, r.name, "is an invalid extended resource name"))
            if r.name in managed:
                errs.append(invalid(rp, r.name, "duplicate extender managed resource name"))
            managed.add(r.name)
    if binders > 1:
        errs.append(
            invalid("extenders", f"found {binders} extenders implementing bind", "only one extender can implement bind")
        )
    return errs


# validation_pluginargs.go


def validate_args(name: str, args: _Args, path: str) -> list[FieldError]:
    """The checks of one in-tree args kind; `path` prefixes every field ("" for none)."""
    if isinstance(args, DefaultPreemptionArgs):
        return _default_preemption(path, args)
    if isinstance(args, InterPodAffinityArgs):
        w = args.hardPodAffinityWeight or 0
        if not 0 <= w <= 100:
            return [invalid(child(path, "hardPodAffinityWeight"), w, "not in valid range [0, 100]")]
        return []
    if isinstance(args, PodTopologySpreadArgs):
        return _pod_topology_spread(path, args)
    if isinstance(args, NodeResourcesBalancedAllocationArgs):
        return _balanced_allocation(path, args)
    if isinstance(args, NodeAffinityArgs):
        return _node_affinity(path, args)
    if isinstance(args, VolumeBindingArgs):
        return _volume_binding(path, args)
    if isinstance(args, NodeResourcesFitArgs):
        return validate_fit_args(path, args)
    if isinstance(args, DynamicResourcesArgs):
        return _dynamic_resources(path, args)
    if isinstance(args, NodeLabelArgs):
        return _no_conflict(
            path, args.presentLabels, args.absentLabels, "presentLabels", "absentLabels"
        ) + _no_conflict(
            path,
            args.presentLabelsPreference,
            args.absentLabelsPreference,
            "presentLabelsPreference",
            "absentLabelsPreference",
        )
    if isinstance(args, RequestedToCapacityRatioArgs):
        return validate_shape(child(path, "shape"), args.shape) + _validate_resources(
            child(path, "resources"), args.resources
        )
    return []


def _default_preemption(path: str, args: DefaultPreemptionArgs) -> list[FieldError]:
    errs: list[FieldError] = []
    pct, absolute = args.minCandidateNodesPercentage or 0, args.minCandidateNodesAbsolute or 0
    pct_path, abs_path = child(path, "minCandidateNodesPercentage"), child(path, "minCandidateNodesAbsolute")
    if not 0 <= pct <= 100:
        errs.append(invalid(pct_path, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(invalid(abs_path, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(invalid(pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(invalid(abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
    return errs


def _pod_topology_spread(path: str, args: PodTopologySpreadArgs) -> list[FieldError]:
    errs: list[FieldError] = []
    dt_path = child(path, "defaultingType")
    if args.defaultingType not in ("System", "List"):
        errs.append(not_supported(dt_path, args.defaultingType, ["System", "List"]))
    elif args.defaultingType == "System" and args.defaultConstraints:
        errs.append(invalid(dt_path, args.defaultingType, "when .defaultConstraints are not empty"))
    dc_path = child(path, "defaultConstraints")
    for i, c in enumerate(args.defaultConstraints):
        p = f"{dc_path}[{i}]"
        skew = c.get("maxSkew") or 0
        if skew <= 0:
            errs.append(invalid(f"{p}.maxSkew", skew, "not in valid range (0, inf)"))
        key = c.get("topologyKey") or ""
        if not key:
            errs.append(required(f"{p}.topologyKey", "can not be empty"))
        else:
            errs += [invalid(f"{p}.topologyKey", key, m) for m in is_qualified_name(key)]
        when = c.get("whenUnsatisfiable") or ""
        if not when:
            errs.append(required(f"{p}.whenUnsatisfiable", "can not be empty"))
        elif when not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(not_supported(f"{p}.whenUnsatisfiable", when, ["DoNotSchedule", "ScheduleAnyway"]))
        if c.get("labelSelector") is not None:
            errs.append(
                forbidden(f"{p}.labelSelector", "constraint must not define a selector, as they deduced for each pod")
            )
        for other in args.defaultConstraints[:i]:
            if (other.get("topologyKey") or "", other.get("whenUnsatisfiable") or "") == (key, when):
                errs.append(duplicate(p, f"{{{key}, {when}}}"))
                break
    return errs


def _validate_resources(path: str, resources: list[Any]) -> list[FieldError]:
    return [
        invalid(f"{path}[{i}].weight", r.weight, f"resource weight of {r.name} not in valid range (0, 100]")
        for i, r in enumerate(resources)
        if not 0 < r.weight <= 100
    ]


def _balanced_allocation(path: str, args: NodeResourcesBalancedAllocationArgs) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, r in enumerate(args.resources):
        p = f"{child(path, 'resources')}[{i}]"
        if r.name in seen:
            errs.append(duplicate(f"{p}.name", r.name))
        seen.add(r.name)
        if r.weight != 1:
            errs.append(invalid(f"{p}.weight", r.weight, "must be 1"))
    return errs


def _requirements_as_selector(exprs: list[dict[str, Any]], path: str) -> list[FieldError]:
    """nodeSelectorRequirementsAsSelector with labels.NewRequirement's checks."""
    errs: list[FieldError] = []
    ops = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    for i, expr in enumerate(exprs):
        p = f"{path}[{i}]"
        op, key, given = expr.get("operator") or "", expr.get("key") or "", expr.get("values")
        values = list(given or [])
        if op not in ops:
            errs.append(not_supported(f"{p}.operator", op, ops))
            continue
        msgs = is_qualified_name(key)
        if msgs:
            errs.append(invalid(f"{p}.key", key, "; ".join(msgs)))
        vp = f"{p}.values"
        if op in ("In", "NotIn") and not values:
            errs.append(invalid(vp, given, "for 'in', 'notin' operators, values set can't be empty"))
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(invalid(vp, values, "values set must be empty for exists and does not exist"))
        elif op in ("Gt", "Lt"):
            if len(values) != 1:
                errs.append(invalid(vp, given, "for 'Gt', 'Lt' operators, exactly one value is required"))
            for k, v in enumerate(values):
                if not re.fullmatch(r"[+-]?\d+", v) or not -(2**63) <= int(v) < 2**63:
                    errs.append(invalid(f"{vp}[{k}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
        for k, v in enumerate(values):
            msgs = is_label_value(v)
            if msgs:
                errs.append(invalid(f"{vp}[{k}][{key}]", v, "; ".join(msgs)))
    return errs


def _requirements_as_field_selector(exprs: list[dict[str, Any]], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, expr in enumerate(exprs):
        p = f"{path}[{i}]"
        op, given = expr.get("operator") or "", expr.get("values")
        if op in ("In", "NotIn"):
            if len(given or []) != 1:
                errs.append(invalid(f"{p}.values", given, "must have one element"))
        else:
            errs.append(not_supported(f"{p}.operator", op, ["In", "NotIn"]))
    return errs


def _node_selector_term(term: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if term.get("matchExpressions"):
        errs += _requirements_as_selector(term["matchExpressions"], f"{path}.matchExpressions")
    if term.get("matchFields"):
        errs += _requirements_as_field_selector(term["matchFields"], f"{path}.matchFields")
    return errs


def _node_affinity(path: str, args: NodeAffinityArgs) -> list[FieldError]:
    """component-helpers' NewNodeSelector and NewPreferredSchedulingTerms on the added affinity."""
    aff = args.addedAffinity
    if not aff:
        return []
    errs: list[FieldError] = []
    base = child(path, "addedAffinity")
    req = aff.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None:
        terms_path = f"{base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        for i, term in enumerate(req.get("nodeSelectorTerms") or []):
            errs += _node_selector_term(term, f"{terms_path}[{i}]")
    for i, pref in enumerate(aff.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        term = pref.get("preference") or {}
        if not pref.get("weight") or not (term.get("matchExpressions") or term.get("matchFields")):
            continue
        errs += _node_selector_term(term, f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]")
    return errs


def _volume_binding(path: str, args: VolumeBindingArgs) -> list[FieldError]:
    """StorageCapacityScoring is off in v1.36: a shape is refused rather than ignored."""
    errs: list[FieldError] = []
    if (args.bindTimeoutSeconds or 0) < 0:
        errs.append(
            invalid(
                child(path, "bindTimeoutSeconds"),
                args.bindTimeoutSeconds,
                "invalid BindTimeoutSeconds, should not be a negative value",
            )
        )
    if args.shape is not None:
        shape = [{"Utilization": p.utilization, "Score": p.score} for p in args.shape]
        errs.append(
            invalid(
                child(path, "shape"),
                shape,
                "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
            )
        )
    return errs


def validate_fit_args(path: str, args: NodeResourcesFitArgs, ratio_by_type: bool = True) -> list[FieldError]:
    """ValidateNodeResourcesFitArgs (run by the plugin when it is built); `ratio_by_type`: v1.36's checks of
    requestedToCapacityRatio (Release.fit_ratio_checked_by_type), else v1.34's and v1.35's."""
    errs: list[FieldError] = []
    for i, r in enumerate(args.ignoredResources):
        p = f"{child(path, 'ignoredResources')}[{i}]"
        errs += [invalid(p, r, m) for m in is_qualified_name(r)]
    for i, g in enumerate(args.ignoredResourceGroups):
        p = f"{child(path, 'ignoredResourceGroups')}[{i}]"
        if "/" in g:
            errs.append(invalid(p, g, "resource group name can't contain '/'"))
        errs += [invalid(p, g, m) for m in is_qualified_name(g)]
    sp = child(path, "scoringStrategy")
    st = args.scoringStrategy
    if st is None:
        errs.append(required(sp, "ScoringStrategy field is required"))
        return errs
    if st.type not in SCORING_STRATEGIES:
        errs.append(not_supported(f"{sp}.type", st.type, list(SCORING_STRATEGIES)))
    errs += _validate_resources(f"{sp}.resources", st.resources)
    if not ratio_by_type and (st.requestedToCapacityRatio is not None or st.type != "RequestedToCapacityRatio"):
        # (the type without its ratio crashes v1.34 and v1.35: refused below in v1.36's words instead)
        if st.requestedToCapacityRatio is not None:
            errs += validate_shape(f"{sp}.shape", st.requestedToCapacityRatio.shape)
        return errs
    if st.type == "RequestedToCapacityRatio":
        if st.requestedToCapacityRatio is None:
            errs.append(
                required(f"{sp}.requestedToCapacityRatio", "must be specified when type is RequestedToCapacityRatio")
            )
        else:
            errs += validate_shape(f"{sp}.requestedToCapacityRatio.shape", st.requestedToCapacityRatio.shape)
    elif st.requestedToCapacityRatio is not None:
        errs.append(
            forbidden(f"{sp}.requestedToCapacityRatio", "must be nil when type is not RequestedToCapacityRatio")
        )
    return errs


def _dynamic_resources(path: str, args: DynamicResourcesArgs) -> list[FieldError]:
    """DRASchedulerFilterTimeout, DRADeviceBindingConditions and DRAResourceClaimDeviceStatus are on in v1.36."""
    errs: list[FieldError] = []
    if args.filterTimeout is not None and parse_go_duration(args.filterTimeout) < 0:
        errs.append(invalid(child(path, "filterTimeout"), args.filterTimeout, "must be zero or positive"))
    if args.bindingTimeout is not None and parse_go_duration(args.bindingTimeout) < SECOND:
        errs.append(invalid(child(path, "bindingTimeout"), args.bindingTimeout, "must be at least 1 second"))
    return errs


def _no_conflict(path: str, present: list[str], absent: list[str], pp: str, ap: str) -> list[FieldError]:
    """A NodeLabel label cannot be both required (preferred) present and absent."""
    index = {k: j for j, k in enumerate(present)}
    return [
        invalid(f"{child(path, pp)}[{index[k]}]", k, f"conflict with {ap}[{i}]")
        for i, k in enumerate(absent)
        if k in index
    ]


def validate_shape(path: str, shape: list[Any], max_score: int = MAX_CUSTOM_PRIORITY_SCORE) -> list[FieldError]:
    """validateFunctionShape: points sorted by utilization, each within range."""
    if not shape:
        return [required(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                invalid(f"{path}[{i}].utilization", shape[i].utilization, "values must be sorted in increasing order")
            )
            break
    for i, pt in enumerate(shape):
        if not 0 <= pt.utilization <= 100:
            errs.append(invalid(f"{path}[{i}].utilization", pt.utilization, "not in valid range [0, 100]"))
        if not 0 <= pt.score <= max_score:
            errs.append(invalid(f"{path}[{i}].score", pt.score, f"not in valid range [0, {max_score}]"))
    return errs
