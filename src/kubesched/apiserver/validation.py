"""The API server's validation of what the scheduler reads, on decoded and defaulted manifests.

`validate(obj)` returns field errors worded as kube-apiserver v1.36 words them
(`spec.tolerations[0].effect: Unsupported value: "NoSchedul": supported values: ...`),
for the fields any scheduler plugin reads: names and labels, resources, tolerations
and taints, node selectors and affinity, topology spread, scheduling gates, host
ports, priority classes, storage classes, volumes and claims.

Minimal manifests stay usable: what the API server requires but no scheduler reads
(containers, images, a volume's source) may be left out, and so may whole optional
structures (a PersistentVolume without `spec`, a claim without `accessModes`). What is
given must be valid, and a structure that is given must be complete: a taint needs an
effect, an anti-affinity term a topologyKey, a required node affinity a term.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api import field, names
from kubesched.api.kinds import NAMESPACED
from kubesched.api.object import Obj
from kubesched.api.quantity import MAX_INT64, QuantityError, parse_quantity, resource_value
from kubesched.api.resources import pod_requests
from kubesched.api.selectors import (
    validate_label_name,
    validate_label_selector,
    validate_labels,
    validate_node_selector,
    validate_node_selector_term,
)
from kubesched.api.taints import validate_taints, validate_tolerations
from kubesched.apiserver import resource_validation, workload_api, workload_validation
from kubesched.apiserver.memo import ContentMemo, pinned_shape

Errors = list[str]

HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}
ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
RESTART_POLICIES = ("Always", "OnFailure", "Never")  # validateRestartPolicy's order
_STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_STANDARD_RESOURCES = {
    *_STANDARD_CONTAINER_RESOURCES,
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
}
_INTEGER_RESOURCES = {
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
}
_TOO_LARGE = f"must be no more than {MAX_INT64} (cpu: {MAX_INT64}m): the scheduler counts in int64"
ANNOTATIONS_MAX_BYTES = 256 * 1024


# Resource names and quantities (helper.IsNativeResource and friends).


def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_hugepage(name: str) -> bool:
    return name.startswith("hugepages-")


def is_extended_resource(name: str) -> bool:
    return (
        not is_native_resource(name)
        and not name.startswith("requests.")
        and not names.is_qualified_name("requests." + name)
    )


def is_overcommit_allowed(name: str) -> bool:
    return is_native_resource(name) and not is_hugepage(name)


def _is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or is_extended_resource(name)


def _validate_resource_name(name: str, path: str) -> Errors:
    errs = [field.invalid(path, name, msg) for msg in names.is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name and name not in _STANDARD_RESOURCES and not is_hugepage(name):
        errs.append(field.invalid(path, name, "must be a standard resource type or fully qualified"))
    return errs


def _validate_container_resource_name(name: str, path: str) -> Errors:
    errs = _validate_resource_name(name, path)
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not is_hugepage(name):
            errs.append(field.invalid(path, name, "must be a standard resource for containers"))
    elif not is_native_resource(name) and not is_extended_resource(name):
        errs.append(field.invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def _validate_pod_resource_name(name: str, path: str) -> Errors:
    errs = _validate_resource_name(name, path)
    if not errs and name not in ("cpu", "memory") and not is_hugepage(name):
        errs.append(field.not_supported(path, name, ("cpu", "hugepages-", "memory")))
    return errs


def _quantity(value: Any) -> Any:
    """The parsed quantity, or None (decoding already reported what does not parse)."""
    try:
        return parse_quantity(value)
    except QuantityError:
        return None


def validate_quantity_value(name: str, value: Any, path: str, *, bounded: bool = False) -> Errors:
    """ValidateResourceQuantityValue: not negative, whole for integer resources; `bounded`: within int64."""
    q = _quantity(value)
    if q is None:
        return []
    errs: Errors = []
    if q < 0:
        errs.append(field.invalid(path, str(value), "must be greater than or equal to 0"))
    if _is_integer_resource(name) and (q * 1000) % 1000 != 0:
        errs.append(field.invalid(path, str(value), "must be an integer"))
    if bounded and resource_value(name, value) >= MAX_INT64:
        errs.append(field.invalid(path, str(value), _TOO_LARGE))
    return errs


def _hugepage_size(name: str) -> Any:
    return _quantity(name[len("hugepages-") :])


def _validate_resource_requirements(
    raw: Mapping[str, Any], path: str, name_check: Callable[[str, str], Errors]
) -> Errors:
    """validateResourceRequirements: names, values, requests within limits, limits for extended resources."""
    limits, requests = raw.get("limits") or {}, raw.get("requests") or {}
    try:
        key = (name_check, *((k, v.__class__, v) for k, v in limits.items()), None)
        key += tuple((k, v.__class__, v) for k, v in requests.items())
        known = key in _CLEAN_REQUIREMENTS
    except TypeError:  # something unhashable: check it in full
        key, known = None, False
    if known:
        return []
    errs = _check_resource_requirements(limits, requests, path, name_check)
    if not errs and key is not None and len(_CLEAN_REQUIREMENTS) < _MAX_CLEAN:
        _CLEAN_REQUIREMENTS.add(key)
    return errs


_CLEAN_REQUIREMENTS: set[tuple[Any, ...]] = set()
"""Requests and limits (names, value types and values, in order) already found valid under a name check.

Whether they are valid depends on nothing else (the path only goes into messages), so a
pod template's resources, repeated by thousands of pods, are checked once: the answer is
the same one."""
_MAX_CLEAN = 10_000


def _check_resource_requirements(
    limits: Mapping[str, Any], requests: Mapping[str, Any], path: str, name_check: Callable[[str, str], Errors]
) -> Errors:
    errs: Errors = []
    hugepages = cpu_or_memory = False
    for group, values in (("limits", limits), ("requests", requests)):
        for name, value in values.items():
            p = f"{path}.{group}[{name}]"
            errs.extend(name_check(name, p))
            errs.extend(validate_quantity_value(name, value, p, bounded=True))
            if group == "requests":
                q, limit = _quantity(value), limits.get(name)
                if limit is not None:
                    lq = _quantity(limit)
                    if q is not None and lq is not None:
                        if q != lq and not is_overcommit_allowed(name):
                            errs.append(
                                field.invalid(
                                    f"{path}.requests", str(value), f"must be equal to {name} limit of {limit}"
                                )
                            )
                        elif q > lq:
                            errs.append(
                                field.invalid(
                                    f"{path}.requests",
                                    str(value),
                                    f"must be less than or equal to {name} limit of {limit}",
                                )
                            )
                elif not is_overcommit_allowed(name):
                    errs.append(field.required(f"{path}.limits", "Limit must be set for non overcommitable resources"))
            if is_hugepage(name):
                hugepages = True
                size, q = _hugepage_size(name), _quantity(value)
                if size is None or size <= 0 or q is None or q % size != 0:
                    errs.append(field.invalid(p, str(value), f"{value} is not positive integer multiple of {name}"))
            cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    if hugepages and not cpu_or_memory:
        errs.append(field.forbidden(path, "HugePages require cpu or memory"))
    return errs


# Metadata.


_NAME_CHECKS: dict[str, Callable[[str], tuple[str, ...]]] = {"Namespace": names.is_dns1123_label}


def validate_metadata(obj: Obj) -> Errors:
    meta = obj.get("metadata") or {}
    kind = str(obj.get("kind"))
    check = _NAME_CHECKS.get(kind, names.is_dns1123_subdomain)
    errs: Errors = []
    name = meta.get("name") or ""
    if meta.get("generateName") and not meta.get("name"):
        errs.extend(
            field.invalid("metadata.generateName", meta["generateName"], m)
            for m in check(meta["generateName"].rstrip("-") or "-")
        )
    elif name:
        errs.extend(field.invalid("metadata.name", name, m) for m in check(name))
    namespace = meta.get("namespace")
    if kind in NAMESPACED and namespace:
        errs.extend(field.invalid("metadata.namespace", namespace, m) for m in names.is_dns1123_label(namespace))
    errs.extend(validate_labels(meta.get("labels"), "metadata.labels"))
    annotations = meta.get("annotations") or {}
    for key in annotations:
        errs.extend(field.invalid("metadata.annotations", key, m) for m in names.is_qualified_name(key.lower()))
    size = sum(len(k) + len(str(v)) for k, v in annotations.items())
    if size > ANNOTATIONS_MAX_BYTES:
        errs.append(field.too_long("metadata.annotations", ANNOTATIONS_MAX_BYTES))
    return errs


# Pods.


def _validate_ports(spec: Obj, group: str, container: Obj, path: str) -> Errors:
    errs: Errors = []
    for j, port in enumerate(container.get("ports") or ()):
        p = f"{path}.ports[{j}]"
        cp, hp = port.get("containerPort", 0), port.get("hostPort", 0)
        if not cp:
            errs.append(field.required(f"{p}.containerPort"))
        elif not 1 <= cp <= 65535:
            errs.append(field.invalid(f"{p}.containerPort", cp, "must be between 1 and 65535, inclusive"))
        if hp and not 1 <= hp <= 65535:
            errs.append(field.invalid(f"{p}.hostPort", hp, "must be between 1 and 65535, inclusive"))
        if spec.get("hostNetwork") is True and hp and cp and hp != cp:
            errs.append(field.invalid(f"{p}.hostPort", hp, "must match `containerPort` when `hostNetwork` is true"))
        protocol = port.get("protocol", "TCP")
        if protocol not in ("SCTP", "TCP", "UDP"):
            errs.append(field.not_supported(f"{p}.protocol", protocol, ("SCTP", "TCP", "UDP")))
    return errs


def _validate_containers(spec: Obj) -> Errors:
    errs: Errors = []
    for group in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(group) or ()):
            path = f"spec.{group}[{i}]"
            errs.extend(
                _validate_resource_requirements(
                    c.get("resources") or {}, f"{path}.resources", _validate_container_resource_name
                )
            )
            errs.extend(_validate_ports(spec, group, c, path))
            policy = c.get("restartPolicy")
            if group == "initContainers" and policy is not None and policy not in ("Always", "Never", "OnFailure"):
                errs.append(field.not_supported(f"{path}.restartPolicy", policy, ("Always", "Never", "OnFailure")))
    return errs


def _folded(match: list[str], mismatch: list[str], labels: Mapping[str, str]) -> list[Obj]:
    """The requirements the API server appends to the selector on create for matchLabelKeys/mismatchLabelKeys."""
    return [{"key": k, "operator": "In", "values": [labels[k]]} for k in match if k in labels] + [
        {"key": k, "operator": "NotIn", "values": [labels[k]]} for k in mismatch if k in labels
    ]


def _validate_label_keys(
    path: str, match: list[str], mismatch: list[str], selector: Mapping[str, Any] | None, labels: Mapping[str, str]
) -> Errors:
    """ValidateMatchLabelKeysAndMismatchLabelKeys, on the selector with the label keys folded in.

    A selector that already ends with the folded requirements is the stored form (a
    snapshot of a real cluster holds it): it is checked as it was before folding.
    """
    errs: Errors = []
    for what, keys in (("matchLabelKeys", match), ("mismatchLabelKeys", mismatch)):
        if keys and selector is None:
            errs.append(field.forbidden(f"{path}.{what}", "must not be specified when labelSelector is not set"))
        elif keys:
            for i, k in enumerate(keys):
                errs.extend(validate_label_name(k, f"{path}.{what}[{i}]"))
    if selector is not None:
        folded = _folded(match, mismatch, labels)
        exprs = list(selector.get("matchExpressions") or ())
        if folded and exprs[-len(folded) :] == folded:
            exprs = exprs[: -len(folded)]
        index = {k: i for i, k in enumerate(match)}
        seen = set(selector.get("matchLabels") or {})
        for key in [e.get("key", "") for e in exprs + folded]:
            if key in index and key in seen:
                errs.append(
                    field.invalid(f"{path}[{index[key]}]", key, "exists in both matchLabelKeys and labelSelector")
                )
            seen.add(key)
    for i, k in enumerate(match):
        if k in mismatch:
            errs.append(
                field.invalid(f"{path}.matchLabelKeys[{i}]", k, "exists in both matchLabelKeys and mismatchLabelKeys")
            )
    return errs


def _validate_affinity_term(term: Obj, path: str, labels: Mapping[str, str]) -> Errors:
    errs = validate_label_selector(term.get("labelSelector"), f"{path}.labelSelector")
    errs += validate_label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for ns in term.get("namespaces") or ():
        errs.extend(field.invalid(f"{path}.namespace", ns, m) for m in names.is_dns1123_label(ns))
    errs += _validate_label_keys(
        path, term.get("matchLabelKeys") or [], term.get("mismatchLabelKeys") or [], term.get("labelSelector"), labels
    )
    key = term.get("topologyKey", "")
    if not key:
        errs.append(field.required(f"{path}.topologyKey", "can not be empty"))
    errs += validate_label_name(key, f"{path}.topologyKey")
    return errs


def _validate_affinity(affinity: Obj, labels: Mapping[str, str]) -> Errors:
    errs: Errors = []
    req, pref = "requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"
    na = affinity.get("nodeAffinity") or {}
    path = "spec.affinity.nodeAffinity"
    if na.get(req) is not None:
        errs += validate_node_selector(na[req], f"{path}.{req}")
    for i, term in enumerate(na.get(pref) or ()):
        p = f"{path}.{pref}[{i}]"
        weight = term.get("weight", 0)
        if not 1 <= weight <= 100:
            errs.append(field.invalid(f"{p}.weight", weight, "must be in the range 1-100"))
        errs += validate_node_selector_term(term.get("preference") or {}, f"{p}.preference", allow_invalid_values=True)
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = affinity.get(kind) or {}
        path = f"spec.affinity.{kind}"
        for i, term in enumerate(pa.get(req) or ()):
            errs += _validate_affinity_term(term, f"{path}.{req}[{i}]", labels)
        for i, wt in enumerate(pa.get(pref) or ()):
            p = f"{path}.{pref}[{i}]"
            weight = wt.get("weight", 0)
            if not 1 <= weight <= 100:
                errs.append(field.invalid(f"{p}.weight", weight, "must be in the range 1-100"))
            errs += _validate_affinity_term(wt.get("podAffinityTerm") or {}, f"{p}.podAffinityTerm", labels)
    return errs


def _validate_spread(constraints: list[Obj], labels: Mapping[str, str]) -> Errors:
    errs: Errors = []
    for i, c in enumerate(constraints):
        p = f"spec.topologySpreadConstraints[{i}]"
        skew = c.get("maxSkew", 0)
        if skew <= 0:
            errs.append(field.invalid(f"{p}.maxSkew", skew, "must be greater than zero"))
        if not c.get("topologyKey"):
            errs.append(field.required(f"{p}.topologyKey", "can not be empty"))
        when = c.get("whenUnsatisfiable", "")
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(field.not_supported(f"{p}.whenUnsatisfiable", when, ("DoNotSchedule", "ScheduleAnyway")))
        for other in constraints[i + 1 :]:
            if other.get("topologyKey", "") == c.get("topologyKey", "") and other.get("whenUnsatisfiable", "") == when:
                errs.append(
                    field.duplicate(
                        f"{p}.{{topologyKey, whenUnsatisfiable}}", f"{{{c.get('topologyKey', '')}, {when}}}"
                    )
                )
                break
        if "minDomains" in c:
            md = c["minDomains"]
            if md <= 0:
                errs.append(field.invalid(f"{p}.minDomains", md, "must be greater than zero"))
            if when != "DoNotSchedule":
                errs.append(
                    field.invalid(
                        f"{p}.minDomains", md, f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}"
                    )
                )
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            if policy in c and c[policy] not in ("Honor", "Ignore"):
                errs.append(field.not_supported(f"{p}.{policy}", c[policy], ("Honor", "Ignore")))
        errs += _validate_label_keys(p, c.get("matchLabelKeys") or [], [], c.get("labelSelector"), labels)
        errs += validate_label_selector(c.get("labelSelector"), f"{p}.labelSelector")
    return errs


def _validate_pod_totals(pod: Obj) -> Errors:
    """What the scheduler adds up must stay countable: each resource's total within int64."""
    try:
        totals = pod_requests(pod, use_status_resources=False)
    except QuantityError:
        return []
    return [
        field.invalid("spec", f"{name}: {amount}", "the pod's total request " + _TOO_LARGE)
        for name, amount in totals.items()
        if amount >= MAX_INT64
    ]


_POD_ANSWERS: ContentMemo[tuple[str, ...]] = ContentMemo()


def validate_pod(pod: Obj) -> Errors:
    """A pod's spec and labels are all its validation reads: replicas of one template are checked once.
    A pinned pod's node name is read only to check it is a valid name: when it is, the spec's shape
    answers for it (see pinned_shape)."""
    spec = pod.get("spec") or {}
    labels = (pod.get("metadata") or {}).get("labels") or {}
    pinned = pinned_shape(spec)
    if pinned is not None and not names.is_dns1123_subdomain(pinned[1]):
        key = ContentMemo.key(pinned[0], labels)
    else:
        key = ContentMemo.key(spec, labels)
    known = _POD_ANSWERS.get(key)
    if known is not None:
        return list(known)
    errs = _validate_pod(spec, labels, pod)
    _POD_ANSWERS.put(key, tuple(errs))
    return errs


def _validate_pod(spec: Obj, labels: Obj, pod: Obj) -> Errors:
    errs = resource_validation.validate_pod_resource_claims(spec)
    errs += _validate_containers(spec)
    if spec.get("overhead"):
        errs += _validate_resource_requirements(
            {"limits": spec["overhead"]}, "spec.overhead", _validate_container_resource_name
        )
    if spec.get("resources"):
        errs += _validate_resource_requirements(spec["resources"], "spec.resources", _validate_pod_resource_name)
    errs += validate_tolerations(spec.get("tolerations") or [], "spec.tolerations")
    errs += validate_labels(spec.get("nodeSelector"), "spec.nodeSelector")
    errs += _validate_affinity(spec.get("affinity") or {}, labels)
    errs += _validate_spread(spec.get("topologySpreadConstraints") or [], labels)
    seen: set[str] = set()
    for i, gate in enumerate(spec.get("schedulingGates") or ()):
        name = gate.get("name", "")
        errs.extend(field.invalid(f"spec.schedulingGates[{i}]", name, m) for m in names.is_qualified_name(name))
        if name in seen:
            errs.append(field.duplicate(f"spec.schedulingGates[{i}]", name))
        seen.add(name)
    if spec.get("nodeName"):
        errs.extend(
            field.invalid("spec.nodeName", spec["nodeName"], m) for m in names.is_dns1123_subdomain(spec["nodeName"])
        )
    restart = spec.get("restartPolicy")
    if restart and restart not in RESTART_POLICIES:
        errs.append(field.not_supported("spec.restartPolicy", restart, RESTART_POLICIES))
    if "preemptionPolicy" in spec and spec["preemptionPolicy"] not in PREEMPTION_POLICIES:
        errs.append(field.not_supported("spec.preemptionPolicy", spec["preemptionPolicy"], PREEMPTION_POLICIES))
    for i, vol in enumerate(spec.get("volumes") or ()):
        claim = vol.get("persistentVolumeClaim")
        if claim is not None and not claim.get("claimName"):
            errs.append(field.required(f"spec.volumes[{i}].persistentVolumeClaim.claimName"))
        if vol.get("ephemeral") is not None:
            errs += _validate_ephemeral_volume(vol["ephemeral"], f"spec.volumes[{i}].ephemeral")
    errs += workload_api.validate_scheduling_group(pod)
    if not errs:
        errs = _validate_pod_totals(pod)
    return errs


# Nodes, storage, priority classes, and the kinds whose selectors the scheduler reads.


def validate_node(node: Obj) -> Errors:
    spec, status = node.get("spec") or {}, node.get("status") or {}
    errs = validate_taints(spec.get("taints") or [], "spec.taints")
    for group in ("capacity", "allocatable"):
        for name, value in (status.get(group) or {}).items():
            errs += validate_quantity_value(name, value, f"status.{group}.{name}")
    return errs


def _validate_ephemeral_volume(source: Mapping[str, Any], path: str) -> Errors:
    """The API server refuses a pod whose ephemeral volume's claim template it would refuse as a claim's spec."""
    template = source.get("volumeClaimTemplate")
    if template is None:
        return [field.required(f"{path}.volumeClaimTemplate")]
    claim = {"kind": "PersistentVolumeClaim", "spec": template.get("spec") or {}}
    return [f"{path}.volumeClaimTemplate.{e}" for e in validate_persistent_volume_claim(claim)]


def _validate_access_modes(modes: list[str]) -> Errors:
    errs = [field.not_supported("spec.accessModes", m, ACCESS_MODES) for m in modes if m not in ACCESS_MODES]
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(field.forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"))
    return errs


def _validate_class_name(obj: Mapping[str, Any], path: str) -> Errors:
    name = obj.get("storageClassName")
    return [field.invalid(path, name, m) for m in names.is_dns1123_subdomain(name)] if name else []


def _validate_volume_mode(spec: Mapping[str, Any]) -> Errors:
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        return [field.not_supported("spec.volumeMode", mode, VOLUME_MODES)]
    return []


def validate_persistent_volume_claim(pvc: Obj) -> Errors:
    spec = pvc.get("spec") or {}
    errs = _validate_access_modes(spec.get("accessModes") or [])
    errs += validate_label_selector(spec.get("selector"), "spec.selector")
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if storage is not None:
        q = _quantity(storage)
        if q is not None and q <= 0:
            errs.append(field.invalid("spec.resources[storage]", str(storage), "must be greater than zero"))
    errs += _validate_class_name(spec, "spec.storageClassName")
    errs += _validate_volume_mode(spec)
    return errs


def validate_persistent_volume(pv: Obj) -> Errors:
    spec = pv.get("spec") or {}
    errs = _validate_access_modes(spec.get("accessModes") or [])
    for name, value in (spec.get("capacity") or {}).items():
        if name != "storage":
            errs.append(field.not_supported("spec.capacity", name, ("storage",)))
            continue
        q = _quantity(value)
        if q is not None and q < 0:
            errs.append(field.invalid("spec.capacity[storage]", int(q), "must be a valid resource quantity"))
        if q is not None and q <= 0:
            errs.append(field.invalid("spec.capacity[storage]", str(value), "must be greater than zero"))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy is not None and policy not in ("Delete", "Recycle", "Retain"):
        errs.append(field.not_supported("spec.persistentVolumeReclaimPolicy", policy, ("Delete", "Recycle", "Retain")))
    affinity = spec.get("nodeAffinity")
    if affinity is not None:
        if affinity.get("required") is None:
            errs.append(field.required("spec.nodeAffinity.required", "must specify required node constraints"))
        else:
            errs += validate_node_selector(affinity["required"], "spec.nodeAffinity.required")
    errs += _validate_class_name(spec, "spec.storageClassName")
    errs += _validate_volume_mode(spec)
    return errs


def validate_storage_class(sc: Obj) -> Errors:
    errs: Errors = []
    policy = sc.get("reclaimPolicy")
    if policy is not None and policy not in ("Delete", "Retain"):
        errs.append(field.not_supported("reclaimPolicy", policy, ("Delete", "Retain")))
    mode = sc.get("volumeBindingMode")
    if mode is not None and mode not in ("Immediate", "WaitForFirstConsumer"):
        errs.append(field.not_supported("volumeBindingMode", mode, ("Immediate", "WaitForFirstConsumer")))
    for i, term in enumerate(sc.get("allowedTopologies") or ()):
        keys: set[str] = set()
        for j, expr in enumerate(term.get("matchLabelExpressions") or ()):
            p = f"allowedTopologies[{i}].matchLabelExpressions[{j}]"
            values = expr.get("values") or []
            if not values:
                errs.append(field.required(f"{p}.values"))
            for k, v in enumerate(values):
                if v in values[:k]:
                    errs.append(field.duplicate(f"{p}.values[{k}]", v))
            key = expr.get("key", "")
            errs += validate_label_name(key, f"{p}.key")
            if key in keys:
                errs.append(field.duplicate(f"{p}.key", key))
            keys.add(key)
    return errs


def validate_priority_class(pc: Obj) -> Errors:
    errs: Errors = []
    name = (pc.get("metadata") or {}).get("name") or ""
    value, default = pc.get("value", 0), bool(pc.get("globalDefault", False))
    if name.startswith("system-"):
        problem = ""
        if name not in SYSTEM_PRIORITY_CLASSES:
            problem = f"{name} is not a known system priority class"
        elif value != SYSTEM_PRIORITY_CLASSES[name]:
            problem = f"value of {name} PriorityClass must be {SYSTEM_PRIORITY_CLASSES[name]}"
        elif default:
            problem = f"globalDefault of {name} PriorityClass must be false"
        if problem:
            errs.append(
                field.forbidden(
                    "metadata.name",
                    "priority class names with 'system-' prefix are reserved for system use only. error: " + problem,
                )
            )
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(
            field.forbidden(
                "value", f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            )
        )
    policy = pc.get("preemptionPolicy")
    if policy is not None and policy not in PREEMPTION_POLICIES:
        errs.append(field.not_supported("preemptionPolicy", policy, PREEMPTION_POLICIES))
    return errs


def validate_csi_node(csi_node: Obj) -> Errors:
    errs: Errors = []
    for i, driver in enumerate((csi_node.get("spec") or {}).get("drivers") or ()):
        count = (driver.get("allocatable") or {}).get("count")
        if count is not None and count < 0:
            errs.append(
                field.invalid(f"spec.drivers[{i}].allocatable.count", count, "must be greater than or equal to 0")
            )
    return errs


def validate_csi_storage_capacity(cap: Obj) -> Errors:
    errs = validate_label_selector(cap.get("nodeTopology"), "nodeTopology")
    for key in ("capacity", "maximumVolumeSize"):
        if key in cap:
            errs += validate_quantity_value(key, cap[key], key)
    return errs


def _selector_validator(path: str, as_map: bool = False) -> Callable[[Obj], Errors]:
    def check(obj: Obj) -> Errors:
        selector = (obj.get("spec") or {}).get("selector")
        if as_map:
            return validate_labels(selector, path)
        return validate_label_selector(selector, path)

    return check


VALIDATORS: dict[str, Callable[[Obj], Errors]] = {
    "Pod": validate_pod,
    "Node": validate_node,
    "PersistentVolumeClaim": validate_persistent_volume_claim,
    "PersistentVolume": validate_persistent_volume,
    "StorageClass": validate_storage_class,
    "PriorityClass": validate_priority_class,
    "CSINode": validate_csi_node,
    "CSIStorageCapacity": validate_csi_storage_capacity,
    "Service": _selector_validator("spec.selector", as_map=True),
    "PodDisruptionBudget": _selector_validator("spec.selector"),
    **workload_validation.VALIDATORS,
    **resource_validation.VALIDATORS,
    **workload_api.VALIDATORS,
}


def validate(obj: Obj) -> Errors:
    """Field errors for a decoded, defaulted manifest of a supported kind ([] when the API server would take it)."""
    errs = validate_metadata(obj)
    check = VALIDATORS.get(str(obj.get("kind")))
    if check is not None:
        errs += check(obj)
    return errs
