"""A queueing hint the volume plugins share: a claim the pod uses appeared or changed."""

from __future__ import annotations

from typing import Any

from kubesched.api import volumes as vol
from kubesched.framework.interface import QueueingHint
from kubesched.framework.types import PodInfo


def after_claim_of_pod(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
    """Queue when the added or updated claim is one of the pod's (by name, in its namespace)."""
    if new is None or (vol.meta(new).get("namespace") or "default") != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    wanted = {name for name, _ in vol.pod_claim_names(pod.obj)}
    return QueueingHint.QUEUE if vol.meta(new).get("name") in wanted else QueueingHint.QUEUE_SKIP
