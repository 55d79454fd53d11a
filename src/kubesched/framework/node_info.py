"""NodeInfo: a node plus the pods on it, as the cache aggregates them (framework/types.go).

Every mutation takes a fresh generation from one global counter so that the cache
can copy only what changed into the next snapshot.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.errors import FieldError
from kubesched.api.quantity import QuantityError
from kubesched.api.resources import CPU, MEMORY, PODS, Resources, is_scalar_resource_name, parse_resource_list
from kubesched.api.taints import HostPort, Taint, parse_taints
from kubesched.api.volumes import pod_claim_names
from kubesched.framework.types import PodInfo

_generation = itertools.count(1)


def next_generation() -> int:
    return next(_generation)


@dataclass(frozen=True, slots=True)
class ImageStateSummary:
    size: int
    num_nodes: int


@dataclass(frozen=True, slots=True)
class ParsedNode:
    """The parts of a Node object the scheduler reads, parsed once per node version."""

    obj: dict[str, Any]
    name: str
    labels: dict[str, str]
    taints: tuple[Taint, ...]
    unschedulable: bool
    allocatable: Resources
    images: dict[str, int]  # image name -> size in bytes
    declared_features: tuple[str, ...] = ()  # status.declaredFeatures, as listed (sorted by the API server)


def parse_node(node: dict[str, Any]) -> ParsedNode:
    meta = node.get("metadata") or {}
    spec = node.get("spec") or {}
    status = node.get("status") or {}
    raw_alloc = status.get("allocatable")
    field = "status.allocatable"
    if raw_alloc is None:
        raw_alloc, field = status.get("capacity"), "status.capacity"
    try:
        alloc = parse_resource_list(raw_alloc)
    except QuantityError as err:
        bad = next(k for k, v in (raw_alloc or {}).items() if not _parses(k, v))
        raise FieldError(f"{field}.{bad}", str(err)) from err
    alloc = {
        k: v for k, v in alloc.items() if k in (CPU, MEMORY, PODS, "ephemeral-storage") or is_scalar_resource_name(k)
    }
    images: dict[str, int] = {}
    for img in status.get("images") or ():
        for n in img.get("names") or ():
            images[str(n)] = int(img.get("sizeBytes") or 0)
    return ParsedNode(
        obj=node,
        name=str(meta.get("name") or ""),
        labels={str(k): str(v) for k, v in (meta.get("labels") or {}).items()},
        taints=parse_taints(spec.get("taints")),
        unschedulable=bool(spec.get("unschedulable")),
        allocatable=alloc,
        images=images,
        declared_features=tuple(str(f) for f in status.get("declaredFeatures") or ()),
    )


def _parses(name: str, q: Any) -> bool:
    try:
        parse_resource_list({name: q})
    except QuantityError:
        return False
    return True


class NodeInfo:
    """Aggregated state of one node. `node` is None for a node deleted while pods remain."""

    __slots__ = (
        "node",
        "pods",
        "_index",
        "_shared",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "non_zero_cpu",
        "non_zero_mem",
        "used_ports",
        "image_states",
        "pvc_ref_counts",
        "generation",
    )

    def __init__(self, node: ParsedNode | None = None) -> None:
        self.node = node
        self.pods: list[PodInfo] = []
        # uid -> position in pods, so nodes with many pods stay O(1); None until a clone needs it.
        self._index: dict[str, int] | None = {}
        self._shared = False  # pods is shared with a clone: copy it before the first change
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.requested: Resources = {}
        self.non_zero_cpu = 0
        self.non_zero_mem = 0
        self.used_ports: list[HostPort] = []
        self.image_states: dict[str, ImageStateSummary] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        self.generation = next_generation()

    @property
    def name(self) -> str:
        return self.node.name if self.node is not None else ""

    @property
    def labels(self) -> Mapping[str, str]:
        return self.node.labels if self.node is not None else {}

    @property
    def allocatable(self) -> Resources:
        return self.node.allocatable if self.node is not None else {}

    def set_node(self, node: ParsedNode) -> None:
        self.node = node
        self.generation = next_generation()

    def _own_pods(self) -> dict[str, int]:
        """Take a private pod list before changing it; returns the uid index, built if missing."""
        if self._shared:
            self.pods = list(self.pods)
            self._shared = False
        if self._index is None:
            self._index = {p.uid: i for i, p in enumerate(self.pods)}
        return self._index

    def add_pod(self, pod: PodInfo) -> None:
        self._own_pods()[pod.uid] = len(self.pods)
        self.pods.append(pod)
        if pod.has_affinity:
            self.pods_with_affinity.append(pod)
        if pod.required_anti_affinity_terms:
            self.pods_with_required_anti_affinity.append(pod)
        self._update(pod, 1)

    def remove_pod(self, pod: PodInfo) -> bool:
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            for i, p in enumerate(lst):
                if p.uid == pod.uid:
                    lst[i] = lst[-1]
                    lst.pop()
                    break
        index = self._own_pods()
        if pod.uid not in index:
            return False
        i = index.pop(pod.uid)
        p = self.pods[i]
        last = self.pods.pop()
        if i < len(self.pods):
            self.pods[i] = last
            index[last.uid] = i
        self._update(p, -1)
        return True

    def replace_pod(self, new: PodInfo) -> bool:
        """Swap in a new version of a pod whose requests did not change (a confirmed binding)."""
        i = self._own_pods().get(new.uid)
        if i is None:
            return False
        self.pods[i] = new
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            for j, p in enumerate(lst):
                if p.uid == new.uid:
                    lst[j] = new
        self.generation = next_generation()
        return True

    def _update(self, pod: PodInfo, sign: int) -> None:
        req = self.requested
        for k, v in pod.requests.items():
            req[k] = req.get(k, 0) + sign * v
        self.non_zero_cpu += sign * pod.non_zero_cpu
        self.non_zero_mem += sign * pod.non_zero_mem
        if pod.host_ports:
            if sign > 0:
                self.used_ports.extend(pod.host_ports)
            else:
                for hp in pod.host_ports:
                    self.used_ports.remove(hp)
        for claim in _pvc_keys(pod):
            n = self.pvc_ref_counts.get(claim, 0) + sign
            if n > 0:
                self.pvc_ref_counts[claim] = n
            else:
                self.pvc_ref_counts.pop(claim, None)
        self.generation = next_generation()

    def clone(self) -> NodeInfo:
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        # Copy-on-write: a node with thousands of pods is cloned into every snapshot it changes in.
        c.pods = self.pods
        c._index = None
        c._shared = self._shared = True
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.requested = dict(self.requested)
        c.non_zero_cpu = self.non_zero_cpu
        c.non_zero_mem = self.non_zero_mem
        c.used_ports = list(self.used_ports)
        c.image_states = self.image_states
        c.pvc_ref_counts = dict(self.pvc_ref_counts)
        c.generation = self.generation
        return c

    def __repr__(self) -> str:
        return f"NodeInfo(name={self.name!r}, pods={len(self.pods)}, requested={self.requested!r})"


def _pvc_keys(pod: PodInfo) -> list[str]:
    """Claims the pod uses, generic ephemeral ones included (named <pod>-<volume>), as "ns/name"."""
    return [f"{pod.namespace}/{name}" for name, _ in pod_claim_names(pod.obj)]
