"""DefaultSelector (plugins/helper/spread.go): the selector of the Services and controller owning a pod."""

from __future__ import annotations

from typing import Any

from kubesched.api.selectors import (
    LabelSelector,
    Requirement,
    SelectorError,
    parse_label_selector,
    selector_from_set,
)
from kubesched.framework.types import PodInfo


def default_selector(pod: PodInfo, lister: Any) -> LabelSelector:
    """Labels of matching Services merged, plus the RC/RS/StatefulSet controller's selector."""
    label_set: dict[str, str] = {}
    for svc in lister.services(pod.namespace) if lister is not None else ():
        sel = (svc.get("spec") or {}).get("selector") or {}
        if all(pod.labels.get(k) == v for k, v in sel.items()):
            label_set.update({str(k): str(v) for k, v in sel.items()})
    selector = selector_from_set(label_set)
    if pod.controller is None or lister is None:
        return selector
    api_version, kind, name = pod.controller
    if kind == "ReplicationController" and api_version == "v1":
        rc = lister.get("ReplicationController", pod.namespace, name)
        rc_sel = (rc.get("spec") or {}).get("selector") if rc else None
        if rc_sel is not None:
            label_set.update({str(k): str(v) for k, v in rc_sel.items()})
            selector = selector_from_set(label_set)
    elif (kind, api_version) in (("ReplicaSet", "apps/v1"), ("StatefulSet", "apps/v1")):
        obj = lister.get(kind, pod.namespace, name)
        raw = (obj.get("spec") or {}).get("selector") if obj else None
        if raw is not None:
            try:
                other = parse_label_selector(raw)
            except SelectorError:
                return selector
            if other.requirements is not None:
                reqs: tuple[Requirement, ...] = (selector.requirements or ()) + other.requirements
                selector = LabelSelector(tuple(sorted(reqs, key=lambda r: r.key)))
    return selector
