"""The DaemonSet controller (pkg/controller/daemon): one pod on every node that should run one.

A node should run the pod (NodeShouldRunDaemonPod) when the template's `nodeName`, if
any, is the node, the template's node selector and required node affinity match it,
and its NoSchedule and NoExecute taints are tolerated, counting the tolerations the
controller adds to every daemon pod: `node.kubernetes.io/not-ready` and
`unreachable` (NoExecute), `disk-pressure`, `memory-pressure`, `pid-pressure` and
`unschedulable` (NoSchedule), and `network-unavailable` for hostNetwork pods. A pod
already there keeps running while only untolerated NoSchedule taints stand in the way.

Each pod is pinned to its node the controller's way: the required node affinity's terms
are replaced by one `matchFields: metadata.name In [<node>]`; the scheduler then places
it. Pods carry `controller-revision-hash` (our hash of the template). A template
change applies to pods created from then on: existing pods are not rolled.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.object import Obj, ObjView
from kubesched.api.selectors import parse_node_selector
from kubesched.api.taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    find_matching_untolerated_taint,
    parse_taints,
    parse_tolerations,
)
from kubesched.backend.embedded.controllers.controller_utils import (
    Plan,
    compute_hash,
    is_being_deleted,
    is_pod_active,
    labels_of,
    meta,
    name_of,
    pod_from_template,
    spec,
    template_of,
)

REVISION_LABEL = "controller-revision-hash"
TEMPLATE_GENERATION_LABEL = "pod-template-generation"
DEPRECATED_TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
_DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", NO_EXECUTE),
    ("node.kubernetes.io/unreachable", NO_EXECUTE),
    ("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/unschedulable", NO_SCHEDULE),
)
NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"


def _add_or_update_toleration(pod_spec: Obj, toleration: Obj) -> None:
    """AddOrUpdateTolerationInPodSpec: replace a toleration with the same key, operator, value and effect, else add."""
    tolerations = [t for t in pod_spec.get("tolerations") or () if isinstance(t, Mapping)]

    def same(t: Mapping[str, Any]) -> bool:
        return all((t.get(k) or "") == (toleration.get(k) or "") for k in ("key", "effect", "value")) and (
            t.get("operator") or "Equal"
        ) == (toleration.get("operator") or "Equal")

    for i, t in enumerate(tolerations):
        if same(t):
            tolerations[i] = toleration
            pod_spec["tolerations"] = tolerations
            return
    pod_spec["tolerations"] = [*tolerations, toleration]


def add_daemon_tolerations(pod_spec: Obj) -> None:
    """AddOrUpdateDaemonPodTolerations."""
    for key, effect in _DAEMON_TOLERATIONS:
        _add_or_update_toleration(pod_spec, {"key": key, "operator": "Exists", "effect": effect})
    if pod_spec.get("hostNetwork") is True:
        _add_or_update_toleration(pod_spec, {"key": NETWORK_UNAVAILABLE, "operator": "Exists", "effect": NO_SCHEDULE})


def revision_hash(ds: ObjView) -> str:
    count = (ds.get("status") or {}).get("collisionCount")
    return compute_hash(template_of(ds) or {}, count if isinstance(count, int) else None)


def pinned_affinity(affinity: Any, node_name: str) -> Obj:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required terms become one matchFields on the node's name."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    out: Obj = copy.deepcopy(dict(affinity)) if isinstance(affinity, Mapping) else {}
    node_affinity = out.get("nodeAffinity")
    if not isinstance(node_affinity, dict):
        out["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        return out
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, dict):
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
    else:
        required["nodeSelectorTerms"] = [term]
    return out


def target_node(pod: ObjView) -> str:
    """GetTargetNodeName: the pod's node, or the node its matchFields pin it to ('' when neither)."""
    if spec(pod).get("nodeName"):
        return str(spec(pod)["nodeName"])
    required = ((spec(pod).get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or ():
        for expr in (term or {}).get("matchFields") or ():
            values = list(expr.get("values") or ())
            if expr.get("key") == "metadata.name" and expr.get("operator") == "In" and len(values) == 1:
                return str(values[0])
    return ""


def _node_affinity_matches(pod_spec: Mapping[str, Any], node: ObjView) -> bool:
    """GetRequiredNodeAffinity(pod).Match(node): the node selector and the required node affinity terms."""
    labels = labels_of(node)
    for k, v in (pod_spec.get("nodeSelector") or {}).items():
        if labels.get(str(k)) != str(v):
            return False
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if isinstance(required, Mapping):
        return parse_node_selector(required).matches(labels, name_of(node))
    return True


def node_should_run(ds: ObjView, node: ObjView) -> tuple[bool, bool]:
    """NodeShouldRunDaemonPod: (should run, should continue running)."""
    pod_spec = copy.deepcopy(dict(spec(template_of(ds) or {})))
    add_daemon_tolerations(pod_spec)
    if pod_spec.get("nodeName") and pod_spec["nodeName"] != name_of(node):
        return False, False
    if not _node_affinity_matches(pod_spec, node):
        return False, False
    taints = parse_taints([t for t in spec(node).get("taints") or () if isinstance(t, Mapping)])
    tolerations = parse_tolerations([t for t in pod_spec.get("tolerations") or () if isinstance(t, Mapping)])
    if find_matching_untolerated_taint(taints, tolerations, frozenset({NO_SCHEDULE, NO_EXECUTE})) is None:
        return True, True
    return False, find_matching_untolerated_taint(taints, tolerations, frozenset({NO_EXECUTE})) is None


def new_pod(ds: ObjView, node_name: str, revision: str) -> Obj:
    """CreatePodTemplate plus the node pin: what the controller creates for one node."""
    template = copy.deepcopy(dict(template_of(ds) or {}))
    template_spec = template.setdefault("spec", {})
    add_daemon_tolerations(template_spec)
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    generation = (meta(ds).get("annotations") or {}).get(DEPRECATED_TEMPLATE_GENERATION)
    if isinstance(generation, str) and generation.lstrip("-").isdigit():
        labels[TEMPLATE_GENERATION_LABEL] = str(int(generation))
    labels[REVISION_LABEL] = revision
    template_spec["affinity"] = pinned_affinity(template_spec.get("affinity"), node_name)
    return pod_from_template(template, ds)


def _creation_then_phase(pod: ObjView) -> tuple[int, str, str]:
    """podByCreationTimestampAndPhase: scheduled pods first, then the oldest, then by name."""
    unscheduled = 0 if spec(pod).get("nodeName") else 1
    return unscheduled, str(meta(pod).get("creationTimestamp") or ""), name_of(pod)


def sync(ds: ObjView, nodes: Sequence[ObjView], pods: Sequence[ObjView], revision: str) -> Plan:
    """manage: a pod for each node that should run one and has none; pods on nodes that should not, deleted.

    Nodes are visited by name, so the pods are created (and queued) in that order.
    """
    if template_of(ds) is None or is_being_deleted(ds):
        return Plan()
    by_node: dict[str, list[ObjView]] = {}
    for pod in pods:
        by_node.setdefault(target_node(pod), []).append(pod)
    plan = Plan()
    for node in sorted(nodes, key=name_of):
        should_run, should_continue = node_should_run(ds, node)
        on_node = by_node.get(name_of(node), [])
        if should_run and not on_node:
            plan.create.append(new_pod(ds, name_of(node), revision))
        elif should_continue:
            running = sorted((p for p in on_node if is_pod_active(p)), key=_creation_then_phase)
            plan.delete += running[1:]
        elif on_node:
            plan.delete += [p for p in on_node if not is_being_deleted(p)]
    return plan
