"""The ReplicaSet (and ReplicationController) controller: keep `spec.replicas` active pods (pkg/controller/replicaset).

Too few: pods from the template, `generateName: <name>-`. Too many: the surplus in
getPodsToDelete's order (unscheduled, pending, not ready, lower pod-deletion-cost, more
pods of the same owner on the node, newer first). Upstream creates at most 500 per
sync; the end state is the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from kubesched.api.object import ObjView
from kubesched.backend.embedded.controllers.controller_utils import (
    Plan,
    is_being_deleted,
    is_pod_active,
    pod_from_template,
    pods_to_delete,
    spec,
    template_of,
)


def replicas(obj: ObjView) -> int:
    value = spec(obj).get("replicas")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 1


def sync(rs: ObjView, pods: Sequence[ObjView], related: Sequence[ObjView], now: datetime) -> Plan:
    """manageReplicas: `pods` are the ReplicaSet's, `related` those of its Deployment's other ReplicaSets too."""
    template = template_of(rs)
    if template is None or is_being_deleted(rs):
        return Plan()
    active = [p for p in pods if is_pod_active(p)]
    diff = len(active) - replicas(rs)
    if diff < 0:
        return Plan(create=[pod_from_template(template, rs) for _ in range(-diff)])
    if diff > 0:
        return Plan(delete=pods_to_delete(active, related, diff, now))
    return Plan()
