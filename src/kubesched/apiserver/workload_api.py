"""The API server's side of workload-aware scheduling (v1.36, alpha): Workload, PodGroup and a pod's group.

scheduling.k8s.io/v1alpha2 is served only with `GenericWorkload` on (and the alpha API
enabled), and the fields behind the narrower gates are dropped on create when those are
off, as the registry's strategies drop them. Loading cannot know the gates (they come with
the scheduler's configuration), so the kinds are decoded, defaulted and validated as a
server with every gate on would, and `apply_gates` then does what a server with the
simulation's gates does: refuses the kinds it does not serve, drops what it would drop.
Validation follows the declarative rules on the v1alpha2 types, worded as the server
words them (checked against the real server in tests/upstream/test_workload_api.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from kubesched.api import field, names
from kubesched.api.object import Obj
from kubesched.release import (
    DRA_WORKLOAD_RESOURCE_CLAIMS,
    GENERIC_WORKLOAD,
    LATEST,
    TOPOLOGY_AWARE_WORKLOAD_SCHEDULING,
    WORKLOAD_AWARE_PREEMPTION,
    Release,
)

API_VERSION: Final = "scheduling.k8s.io/v1alpha2"
WORKLOAD: Final = "Workload"
POD_GROUP: Final = "PodGroup"
KINDS: Final = (WORKLOAD, POD_GROUP)
MAX_POD_GROUP_TEMPLATES: Final = 8
MAX_RESOURCE_CLAIMS: Final = 4
MAX_TOPOLOGY_CONSTRAINTS: Final = 1
HIGHEST_USER_PRIORITY: Final = 1_000_000_000
DISRUPTION_MODES: Final = ("Pod", "PodGroup")

Errors = list[str]

# Fields each narrower gate guards, in a PodGroup's spec and a Workload's templates alike.
_GATED_FIELDS: Final = (
    (TOPOLOGY_AWARE_WORKLOAD_SCHEDULING, ("schedulingConstraints",)),
    (DRA_WORKLOAD_RESOURCE_CLAIMS, ("resourceClaims",)),
    (WORKLOAD_AWARE_PREEMPTION, ("disruptionMode", "priorityClassName", "priority")),
)


class GateError(ValueError):
    """An object the API server with these gates would not take (`obj`); the text says why."""

    def __init__(self, message: str, obj: Obj) -> None:
        super().__init__(message)
        self.obj = obj


def pod_group_name(pod: Mapping[str, Any]) -> str | None:
    """The PodGroup a pod names in spec.schedulingGroup, None when it names none."""
    group = (pod.get("spec") or {}).get("schedulingGroup")
    if not isinstance(group, Mapping):
        return None
    name = group.get("podGroupName")
    return name if isinstance(name, str) and name else None


# Defaulting.


def default_pod_group(pg: Obj) -> None:
    """SetObjectDefaults_PodGroup: the disruption mode is Pod unless given."""
    spec = pg.setdefault("spec", {})
    if isinstance(spec, dict) and spec.get("disruptionMode") is None:
        spec["disruptionMode"] = "Pod"


DEFAULTERS: Final = {POD_GROUP: default_pod_group}


# Validation.


def _union(value: Any, members: tuple[str, ...], path: str) -> Errors:
    """A +union of optional members: exactly one must be set."""
    given = [m for m in members if isinstance(value, Mapping) and value.get(m) is not None]
    choices = ", ".join(f"`{m}`" for m in members)
    if not given:
        return [field.invalid(path, "", f"must specify one of: {choices}")]
    if len(given) > 1:
        return [field.invalid(path, "{" + ", ".join(given) + "}", f"must specify exactly one of: {choices}")]
    return []


def _too_many(path: str, count: int, limit: int) -> str:
    return f"{path}: Too many: {count}: must have at most {limit} item{'s' if limit != 1 else ''}"


def _policy(policy: Any, path: str) -> Errors:
    errs = _union(policy, ("basic", "gang"), path)
    gang = policy.get("gang") if isinstance(policy, Mapping) else None
    if isinstance(gang, Mapping):
        count = gang.get("minCount")
        if not count:
            errs.append(field.required(f"{path}.gang.minCount"))
        elif isinstance(count, int) and count < 1:
            errs.append(field.invalid(f"{path}.gang.minCount", count, "must be greater than or equal to 1"))
    return errs


def _go_json(item: Mapping[str, Any], order: tuple[str, ...], nullable: tuple[str, ...] = ()) -> dict[str, Any]:
    """An item as Go marshals it for a Duplicate error: fields in struct order, non-omitempty ones as null."""
    out: dict[str, Any] = {}
    for key in order:
        if key in item:
            out[key] = item[key]
        elif key in nullable:
            out[key] = None
    return out


_TEMPLATE_ORDER: Final = (
    "name",
    "schedulingPolicy",
    "schedulingConstraints",
    "resourceClaims",
    "disruptionMode",
    "priorityClassName",
    "priority",
)
_CLAIM_ORDER: Final = ("name", "resourceClaimName", "resourceClaimTemplateName")


def _duplicates(items: list[Any], path: str, order: tuple[str, ...], nullable: tuple[str, ...] = ()) -> Errors:
    """A +listType=map keyed by name: every later item with a name seen before is a Duplicate."""
    seen: set[Any] = set()
    errs: Errors = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            continue
        name = item.get("name")
        if name in seen:
            errs.append(field.duplicate(f"{path}[{i}]", _go_json(item, order, nullable)))
        seen.add(name)
    return errs


def _group_fields(spec: Mapping[str, Any], path: str) -> Errors:
    """What a PodGroup's spec and a Workload's template share, in their struct order."""
    errs = _policy(spec.get("schedulingPolicy"), f"{path}.schedulingPolicy")
    constraints = spec.get("schedulingConstraints")
    topology = constraints.get("topology") if isinstance(constraints, Mapping) else None
    if isinstance(topology, list):
        if len(topology) > MAX_TOPOLOGY_CONSTRAINTS:
            errs.append(_too_many(f"{path}.schedulingConstraints.topology", len(topology), MAX_TOPOLOGY_CONSTRAINTS))
        for i, constraint in enumerate(topology):
            key = constraint.get("key") if isinstance(constraint, Mapping) else None
            at = f"{path}.schedulingConstraints.topology[{i}].key"
            if not key:
                errs.append(field.required(at))
            else:
                errs.extend(field.invalid(at, key, m) for m in names.is_qualified_name(str(key)))
    claims = spec.get("resourceClaims")
    if isinstance(claims, list):
        at = f"{path}.resourceClaims"
        if len(claims) > MAX_RESOURCE_CLAIMS:
            errs.append(_too_many(at, len(claims), MAX_RESOURCE_CLAIMS))
        errs.extend(_duplicates(claims, at, _CLAIM_ORDER))
        for i, claim in enumerate(claims):
            if not isinstance(claim, Mapping):
                continue
            if not claim.get("name"):
                errs.append(field.required(f"{at}[{i}].name"))
            else:
                errs.extend(
                    field.invalid(f"{at}[{i}].name", claim["name"], m) for m in names.is_dns1123_label(claim["name"])
                )
            errs.extend(_union(claim, ("resourceClaimName", "resourceClaimTemplateName"), f"{at}[{i}]"))
            for key in ("resourceClaimName", "resourceClaimTemplateName"):
                value = claim.get(key)
                if value is not None:
                    errs.extend(
                        field.invalid(f"{at}[{i}].{key}", value, m) for m in names.is_dns1123_subdomain(str(value))
                    )
    mode = spec.get("disruptionMode")
    if mode is not None and mode not in DISRUPTION_MODES:
        errs.append(field.not_supported(f"{path}.disruptionMode", mode, DISRUPTION_MODES))
    class_name = spec.get("priorityClassName")
    if class_name:
        errs.extend(
            field.invalid(f"{path}.priorityClassName", class_name, m) for m in names.is_dns1123_subdomain(class_name)
        )
    priority = spec.get("priority")
    if isinstance(priority, int) and priority > HIGHEST_USER_PRIORITY:
        errs.append(
            field.invalid(f"{path}.priority", priority, f"must be less than or equal to {HIGHEST_USER_PRIORITY}")
        )
    return errs


def validate_workload(workload: Obj) -> Errors:
    """ValidateWorkload and the declarative rules of WorkloadSpec."""
    spec = workload.get("spec") or {}
    errs: Errors = []
    ref = spec.get("controllerRef")
    if isinstance(ref, Mapping):
        for key in ("kind", "name"):
            if not ref.get(key):
                errs.append(field.required(f"spec.controllerRef.{key}"))
        group = ref.get("apiGroup")
        if group:
            errs.extend(
                field.invalid("spec.controllerRef.apiGroup", group, m) for m in names.is_dns1123_subdomain(group)
            )
    templates = spec.get("podGroupTemplates")
    if not templates:
        return [*errs, field.required("spec.podGroupTemplates")]
    if len(templates) > MAX_POD_GROUP_TEMPLATES:
        errs.append(_too_many("spec.podGroupTemplates", len(templates), MAX_POD_GROUP_TEMPLATES))
    errs.extend(_duplicates(templates, "spec.podGroupTemplates", _TEMPLATE_ORDER, ("schedulingConstraints",)))
    for i, template in enumerate(templates):
        at = f"spec.podGroupTemplates[{i}]"
        if not isinstance(template, Mapping):
            continue
        name = template.get("name")
        if not name:
            errs.append(field.required(f"{at}.name"))
        else:
            errs.extend(field.invalid(f"{at}.name", name, m) for m in names.is_dns1123_label(str(name)))
        errs.extend(_group_fields(template, at))
    return errs


def validate_pod_group(pg: Obj) -> Errors:
    """ValidatePodGroup and the declarative rules of PodGroupSpec."""
    spec = pg.get("spec") or {}
    errs: Errors = []
    ref = spec.get("podGroupTemplateRef")
    if ref is not None:
        errs.extend(_union(ref, ("workload",), "spec.podGroupTemplateRef"))
        workload = ref.get("workload") if isinstance(ref, Mapping) else None
        if isinstance(workload, Mapping):
            for key in ("workloadName", "podGroupTemplateName"):
                if not workload.get(key):
                    errs.append(field.required(f"spec.podGroupTemplateRef.workload.{key}"))
    return errs + _group_fields(spec, "spec") + _claim_statuses(pg)


def _claim_statuses(pg: Obj) -> Errors:
    """status.resourceClaimStatuses (DRAWorkloadResourceClaims): each names an entry of spec.resourceClaims, and
    the claim made for it, when given, by a DNS subdomain."""
    statuses = (pg.get("status") or {}).get("resourceClaimStatuses")
    if not isinstance(statuses, list):
        return []
    entries = {c.get("name") for c in (pg.get("spec") or {}).get("resourceClaims") or () if isinstance(c, Mapping)}
    at = "status.resourceClaimStatuses"
    errs = _duplicates(statuses, at, ("name", "resourceClaimName"))
    valid = [(i, st) for i, st in enumerate(statuses) if isinstance(st, Mapping)]
    for i, status in valid:  # the server checks every entry's name before any claim name
        if status.get("name") not in entries:
            errs.append(
                field.invalid(
                    f"{at}[{i}].name", status.get("name"), "must match the name of an entry in `spec.resourceClaims`"
                )
            )
    for i, status in valid:
        claim = status.get("resourceClaimName")
        if claim is not None:
            errs.extend(
                field.invalid(f"{at}[{i}].resourceClaimName", claim, m) for m in names.is_dns1123_subdomain(str(claim))
            )
    return errs


def validate_scheduling_group(pod: Obj) -> Errors:
    """A pod's spec.schedulingGroup: a union with one member, a DNS subdomain."""
    group = (pod.get("spec") or {}).get("schedulingGroup")
    if group is None:
        return []
    path = "spec.schedulingGroup.podGroupName"
    name = group.get("podGroupName") if isinstance(group, Mapping) else None
    if name is None:
        return [field.invalid(path, None, "must specify one of: `podGroupName`")]
    return [field.invalid(path, name, m) for m in names.is_dns1123_subdomain(str(name))]


VALIDATORS: Final = {WORKLOAD: validate_workload, POD_GROUP: validate_pod_group}


# Admission.


def _namespaced_name(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def admission_problem(pg: Obj, workloads: set[tuple[str, str]]) -> str:
    """The PodGroup admission plugin: a PodGroup made from a Workload's template needs that Workload."""
    ref = ((pg.get("spec") or {}).get("podGroupTemplateRef") or {}).get("workload") or {}
    name = ref.get("workloadName")
    namespace, pg_name = _namespaced_name(pg)
    if name and (namespace, name) not in workloads:
        return f'podgroups.scheduling.k8s.io "{pg_name}" is forbidden: PodGroup rejected: Workload "{name}" not found'
    return ""


# The gates.


def admit_priority(pg: Obj, classes: Mapping[str, int], global_default: str) -> str:
    """The Priority admission plugin for PodGroups (WorkloadAwarePreemption): spec.priority from the class."""
    spec = pg.setdefault("spec", {})
    name = spec.get("priorityClassName") or global_default
    pg_name = (pg.get("metadata") or {}).get("name")
    forbidden = f'podgroups.scheduling.k8s.io "{pg_name}" is forbidden: '
    if name and name not in classes:
        return f"{forbidden}no PriorityClass with name {name} was found"
    value = classes[name] if name else 0
    given = spec.get("priority")
    if given is not None and given != value:
        return (
            f"{forbidden}priority set in the pod group ({given}) must match the priority computed ({value}) based on "
            "the priority class set in the spec"
        )
    if name and not spec.get("priorityClassName"):
        spec["priorityClassName"] = name
    spec["priority"] = value
    return ""


def apply_gates(
    objects: Iterable[Obj], release: Release, classes: Mapping[str, int] | None = None, global_default: str = ""
) -> list[str]:
    """What a server of `release` with its gates does to objects already admitted with every gate on; returns warnings.

    Without GenericWorkload the group is not served: a Workload or PodGroup raises
    GateError with the server's words and the flag that serves it; a pod's schedulingGroup
    is dropped, as the pod strategy drops a disabled field (once, with a warning). The
    narrower gates drop their fields from PodGroups and Workload templates.
    """
    warnings: list[str] = []
    dropped_groups = 0
    objects = list(objects)
    workloads = {_namespaced_name(o) for o in objects if o.get("kind") == WORKLOAD}
    for obj in objects:
        kind = obj.get("kind")
        if kind in KINDS and not release.workload_aware_supported:
            raise GateError(
                f'no matches for kind "{kind}" in version "{API_VERSION}" (kubesched serves the workload API '
                f"as v{LATEST} does: --kubernetes-version {LATEST} --feature-gates={GENERIC_WORKLOAD}=true)",
                obj,
            )
        if kind in KINDS and not release.enabled(GENERIC_WORKLOAD):
            raise GateError(
                f'no matches for kind "{kind}" in version "{API_VERSION}" (the API is alpha in v1.36: '
                f"turn it on with --feature-gates={GENERIC_WORKLOAD}=true)",
                obj,
            )
        if kind == POD_GROUP:
            problem = admission_problem(obj, workloads)
            if not problem and release.enabled(WORKLOAD_AWARE_PREEMPTION):
                problem = admit_priority(obj, classes or {}, global_default)
            if problem:
                raise GateError(problem, obj)
        if kind == "Pod" and not release.workload_aware:
            spec = obj.get("spec") or {}
            if spec.pop("schedulingGroup", None) is not None:
                dropped_groups += 1
        elif kind == POD_GROUP:
            _drop_gated(obj.get("spec") or {}, release)
            if not release.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS):  # the status strategy drops it likewise
                (obj.get("status") or {}).pop("resourceClaimStatuses", None)
        elif kind == WORKLOAD:
            for template in (obj.get("spec") or {}).get("podGroupTemplates") or ():
                _drop_gated(template, release)
    if dropped_groups:
        warnings.append(
            f"{dropped_groups} pod(s) name a spec.schedulingGroup, which the API server drops without "
            f"{GENERIC_WORKLOAD}: they are scheduled one by one (--feature-gates={GENERIC_WORKLOAD}=true to keep it)"
        )
    return warnings


def _drop_gated(spec: dict[str, Any], release: Release) -> None:
    for gate, keys in _GATED_FIELDS:
        if not release.enabled(gate):
            for key in keys:
                spec.pop(key, None)
