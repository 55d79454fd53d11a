"""The Deployment controller (pkg/controller/deployment), reduced to where a rollout ends.

A Deployment owns ReplicaSets. Its new ReplicaSet is the one whose template equals the
Deployment's, ignoring the `pod-template-hash` label; without one it creates
`<deployment>-<hash>`, with the hash label added to the template and to the selector,
the Deployment's annotations and the revision annotations. The new ReplicaSet is
scaled to `spec.replicas` and the others to 0 at once: the rollout's end state, without
the maxSurge/maxUnavailable steps in between. A paused Deployment changes nothing.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.api.object import Obj, ObjView
from kubesched.backend.embedded.controllers.controller_utils import (
    Plan,
    compute_hash,
    controller_ref,
    is_being_deleted,
    meta,
    name_of,
    namespace_of,
    spec,
    template_of,
)
from kubesched.backend.embedded.controllers.replica_set import replicas

POD_TEMPLATE_HASH = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
_NOT_COPIED = {
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    REVISION_HISTORY,
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    "deprecated.deployment.rollback.to",
}


def _semantic(value: Any) -> Any:
    """A value as apimachinery's semantic equality sees it: empty and missing lists and maps are the same."""
    if isinstance(value, Mapping):
        out = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def _without_hash(template: Mapping[str, Any]) -> Any:
    t = copy.deepcopy(dict(template))
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH, None)
    return _semantic(t)


def equal_ignore_hash(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return bool(_without_hash(a) == _without_hash(b))


def _scaled_value(value: Any, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value or "0")
    if not text.endswith("%"):
        return int(text) if text.lstrip("-").isdigit() else 0
    percent = int(text[:-1]) if text[:-1].lstrip("-").isdigit() else 0
    exact = percent * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def max_surge(d: ObjView) -> int:
    """MaxSurge: 0 unless RollingUpdate; the fenceposts resolved as upstream (surge rounds up)."""
    strategy = spec(d).get("strategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return 0
    rolling = strategy.get("rollingUpdate") or {}
    return _scaled_value(rolling.get("maxSurge", "25%"), replicas(d), True)


def _revision(rs: ObjView) -> int:
    raw = (meta(rs).get("annotations") or {}).get(REVISION)
    return int(raw) if isinstance(raw, str) and raw.isdigit() else 0


def _creation_order(rss: Sequence[ObjView]) -> list[ObjView]:
    return sorted(rss, key=lambda rs: (str(meta(rs).get("creationTimestamp") or ""), name_of(rs)))


def find_new_replica_set(d: ObjView, rss: Sequence[ObjView]) -> ObjView | None:
    """FindNewReplicaSet: the oldest ReplicaSet whose template equals the Deployment's, ignoring the hash label."""
    template = template_of(d) or {}
    for rs in _creation_order(rss):
        if equal_ignore_hash(template_of(rs) or {}, template):
            return rs
    return None


def replica_set_name(deployment_name: str, pod_template_hash: str) -> str:
    """`<deployment>-<hash>`, the Deployment's name cut so the whole is a valid name."""
    limit = 253 - 1 - len(pod_template_hash)
    if len(deployment_name) > limit > 0:
        deployment_name = deployment_name[:limit]
    return f"{deployment_name}-{pod_template_hash}"


def _with_replicas(rs: ObjView, count: int, d: ObjView) -> Obj:
    out = copy.deepcopy(dict(rs))
    out.setdefault("spec", {})["replicas"] = count
    annotations = out.setdefault("metadata", {}).setdefault("annotations", {})
    annotations[DESIRED_REPLICAS] = str(replicas(d))
    annotations[MAX_REPLICAS] = str(replicas(d) + max_surge(d))
    return out


def new_replica_set(d: ObjView, rss: Sequence[ObjView], taken: Callable[[str], bool]) -> Obj:
    """getNewReplicaSet's create branch; a name already taken bumps the collision count, as upstream's retry does."""
    template = copy.deepcopy(dict(template_of(d) or {}))
    count = (d.get("status") or {}).get("collisionCount")
    collision = int(count) if isinstance(count, int) else None
    pod_hash = compute_hash(template, collision)
    while taken(replica_set_name(name_of(d), pod_hash)):
        collision = (collision or 0) + 1
        pod_hash = compute_hash(template, collision)
    tmeta = template.setdefault("metadata", {})
    tmeta["labels"] = {**(tmeta.get("labels") or {}), POD_TEMPLATE_HASH: pod_hash}
    selector = copy.deepcopy(dict(spec(d).get("selector") or {}))
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), POD_TEMPLATE_HASH: pod_hash}
    annotations = {k: v for k, v in (meta(d).get("annotations") or {}).items() if k not in _NOT_COPIED}
    annotations[REVISION] = str(max((_revision(rs) for rs in rss), default=0) + 1)
    annotations[DESIRED_REPLICAS] = str(replicas(d))
    annotations[MAX_REPLICAS] = str(replicas(d) + max_surge(d))
    rs_spec: Obj = {"replicas": replicas(d), "selector": selector, "template": template}
    if spec(d).get("minReadySeconds"):
        rs_spec["minReadySeconds"] = spec(d)["minReadySeconds"]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": replica_set_name(name_of(d), pod_hash),
            "namespace": namespace_of(d),
            "labels": dict(tmeta["labels"]),
            "annotations": annotations,
            "ownerReferences": [controller_ref(d)],
        },
        "spec": rs_spec,
    }


def sync(d: ObjView, rss: Sequence[ObjView], taken: Callable[[str], bool]) -> Plan:
    """The ReplicaSets `d` owns (`rss`) brought to the rollout's end: the new one at spec.replicas, the rest at 0."""
    selector = spec(d).get("selector")
    if (
        template_of(d) is None
        or spec(d).get("paused") is True
        or is_being_deleted(d)
        or not isinstance(selector, Mapping)
        or not (selector.get("matchLabels") or selector.get("matchExpressions"))
    ):
        return Plan()
    plan = Plan()
    new = find_new_replica_set(d, rss)
    if new is None:
        plan.create.append(new_replica_set(d, rss, taken))
    elif replicas(new) != replicas(d):
        plan.update.append(_with_replicas(new, replicas(d), d))
    for rs in _creation_order(rss):
        if rs is not new and replicas(rs) > 0:
            plan.update.append(_with_replicas(rs, 0, d))
    return plan
